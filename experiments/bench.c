/* experiments/bench.c — the standard timing table (bench.h).
 *
 * Cases and sizes are the table below; a per-solver cap keeps a solver that cannot
 * handle a size in reasonable time out of it. Each row runs in a forked child, so
 * its peak memory (VmHWM of /proc/self/status, or ru_maxrss) is its own and a crash
 * costs one row. The child reports through a pipe: "ok median min max peak_kb" or
 * "fail status message".
 */
#include "experiments/bench.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "experiments/harness/registry.h"
#include "experiments/harness/run.h"
#include "core/files.h"
#include "core/solver.h"

typedef struct bench_case {
    const char *name;
    const char *scene;          /* under <data>/scenes */
    const char *sets[8];        /* extra overrides, NULL-terminated */
    int sizes[4];               /* grid nx = ny; 0 ends */
    const char *solver;         /* NULL: every solver; else a named comparison case of one
                                 * solver, run only when --case names it */
} bench_case;

static const bench_case cases[] = {
    {"hanging", "hanging.yaml", {NULL}, {32, 64, 128, 256}, NULL},
    /* the cloth starts 5 mm above the sphere's top, so contact work is timed from the first steps */
    {"drape_sphere_contact", "drape_sphere.yaml", {"cloth.grid.origin=[-0.5, -0.5, 0.805]", NULL},
     {32, 64, 128, 256}, NULL},
    /* Liu et al. 2013's curtain (81 x 81 at its own size): top edge pinned, swinging down */
    {"curtain", "curtain.yaml", {NULL}, {32, 81, 128, 256}, NULL},
    /* The comparison cases of experiments/refbench/ (issue 19), each one solver as the
     * reference implementation runs it. pbd_bend: the hanging cloth in the xy plane (two
     * corners pinned, it falls and swings, so bending does work; in the shipped xz plane
     * the cloth stays flat and bending costs nothing), the paper's stepping (one step of
     * 1/60 s, 10 Gauss-Seidel sweeps), distance + dihedral constraints. */
    {"pbd_bend", "hanging.yaml",
     {"cloth.grid.plane=xy", "solvers.pbd.stepping=paper", "solvers.pbd.iterations=10",
      "solvers.pbd.bending=dihedral", "solvers.pbd.self_collision=false",
      /* timed, not judged: 10 sweeps leave the 60 x 60 cloth strained (the health check
       * would end it at about step 11, README "Run health") */
      "health.energy_factor=1e9", "health.max_strain=1e6", NULL},
     {60}, "pbd"},
    /* fms_curtain: the curtain with fms's self contact on, 10 iterations */
    {"fms_curtain", "curtain.yaml", {"solvers.fms.iterations=10", "solvers.fms.self_collision=true", NULL}, {81},
     "fms"},
    /* fms_classic: the classic structural/shear/bend springs of Liu et al. on the hanging cloth */
    {"fms_classic", "hanging.yaml", {"solvers.fms.springs=classic", "solvers.fms.iterations=10", NULL}, {60}, "fms"},
};

/* Largest vertex count per solver (solvers not listed: no cap). */
static const struct { const char *solver; int max_vertices; } caps[] = {
    {"explicit", 16384},   /* auto substeps make it ~1 s per step at 64k */
};

cb_bench_options cb_default_bench_options(void)
{
    cb_bench_options o;
    memset(&o, 0, sizeof o);
    o.data_dir = "data";
    return o;
}

static int cap_for(const char *solver)
{
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++)
        if (!strcmp(caps[i].solver, solver)) return caps[i].max_vertices;
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static long peak_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (f) {
        char line[256];
        long kb = -1;
        while (fgets(line, sizeof line, f))
            if (!strncmp(line, "VmHWM:", 6)) kb = strtol(line + 6, NULL, 10);
        fclose(f);
        if (kb > 0) return kb;
    }
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0) return ru.ru_maxrss;
    return -1;
}

static void child_row(int fd, const char *scene, const char *solver, const char *const *sets, int nsets, int steps,
                      int repeats)
{
    FILE *w = fdopen(fd, "w");
    if (!w) _exit(3);
    double ms[64], create_ms = 0.0, first_ms = 0.0, fastest = 0.0;
    char stages[512] = "";
    if (repeats > 64) repeats = 64;
    for (int r = 0; r < repeats; r++) {
        cb_run_def def = cb_default_run_def();
        def.scene_path = scene;
        def.solver = solver;
        def.output = NULL;
        def.sets = sets;
        def.nsets = nsets;
        def.max_steps = steps;
        cb_run_result res;
        cb_error err;
        cb_error_clear(&err);
        int rc = cb_run(&def, &res, &err);
        if (rc) {
            char m[1024];
            snprintf(m, sizeof m, "%s", res.message[0] ? res.message : err.message);
            for (char *p = m; *p; p++)
                if (*p == '\n') *p = ' ';
            fprintf(w, "fail %s %s\n", res.status[0] ? res.status : "error", m);
            fclose(w);
            _exit(1);
        }
        /* the steady state: steps 2..N (the first step holds one-off work, fms's and
         * newton's first factorization: first_step_ms), or the one step there is */
        int later = res.steps >= 2;
        double nlater = later ? (double)(res.steps - 1) : 1.0;
        ms[r] = later ? 1e3 * (res.wall_s - res.first_step_s) / nlater : res.mean_step_ms;
        /* create and the first step: the least of the repeats (like min_ms_per_step, the least noisy) */
        if (r == 0 || 1e3 * res.create_s < create_ms) create_ms = 1e3 * res.create_s;
        if (r == 0 || 1e3 * res.first_step_s < first_ms) first_ms = 1e3 * res.first_step_s;
        /* ms per step of each named stage over the same steps, from the fastest repeat, so
         * that they add up to about min_ms_per_step (the column one quotes) */
        if (r > 0 && !(ms[r] < fastest)) continue;
        fastest = ms[r];
        stages[0] = '\0';
        for (int k = 0; k < res.nstages && res.steps > 0; k++) {
            size_t len = strlen(stages);
            double sec = later ? res.stage_seconds[k] - res.stage_first_seconds[k] : res.stage_seconds[k];
            snprintf(stages + len, sizeof stages - len, "%s%s=%.4g", k ? ";" : "", res.stage_name[k], 1e3 * sec / nlater);
        }
    }
    qsort(ms, (size_t)repeats, sizeof ms[0], cmp_double);
    double med = repeats % 2 ? ms[repeats / 2] : 0.5 * (ms[repeats / 2 - 1] + ms[repeats / 2]);
    fprintf(w, "ok %.17g %.17g %.17g %ld %.17g %.17g %s\n", med, ms[0], ms[repeats - 1], peak_kb(), create_ms,
            first_ms, stages[0] ? stages : "-");
    fclose(w);
    _exit(0);
}

static int selected(const char *name, const char *const *list, int n)
{
    if (n == 0) return 1;
    for (int i = 0; i < n; i++)
        if (!strcmp(list[i], name)) return 1;
    return 0;
}

/* A case runs when --case names it, or when no --case is given and it is no named
 * comparison case. */
static int case_selected(const bench_case *bc, const cb_bench_options *o)
{
    if (bc->solver && o->ncases == 0) return 0;
    return selected(bc->name, o->cases, o->ncases);
}

/* The solver runs in case bc: selected by --solver, and the case's own if it has one. */
static int solver_selected(const bench_case *bc, const char *solver, const cb_bench_options *o)
{
    return (!bc->solver || !strcmp(bc->solver, solver)) && selected(solver, o->solvers, o->nsolvers);
}

/* Number of rows the table will have (skipped rows included), for the progress lines. */
static int count_rows(const cb_bench_options *o)
{
    int n = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        if (!case_selected(&cases[c], o)) continue;
        int nsizes = 0;
        while (nsizes < 4 && cases[c].sizes[nsizes] > 0) nsizes++;
        if (o->nsizes > 0) nsizes = o->nsizes;
        for (int si = 0; si < nsizes; si++) {
            long nx = o->nsizes > 0 ? o->sizes[si] : cases[c].sizes[si];
            if (o->quick && o->nsizes == 0 && nx * nx > 1024) continue;
            for (int v = 0; v < cb_solver_count(); v++) n += solver_selected(&cases[c], cb_solver_at(v)->name, o);
        }
    }
    return n;
}

/* "bench: 3/12 hanging pbd 1024 vertices" + what happened; on a terminal the line is
 * first drawn with "..." while the row runs, then overwritten. */
static void progress_line(FILE *p, int tty, int row, int nrows, const char *name, const char *solver, long nv,
                          const char *what)
{
    if (!p) return;
    fprintf(p, "%sbench: %d/%d %s %s %ld vertices %s%s", tty ? "\r" : "", row, nrows, name, solver, nv, what,
            tty && !strcmp(what, "...") ? "" : "\n");
    fflush(p);
}

int cb_bench_run(const cb_bench_options *o, FILE *out, FILE *progress, int *nfailed, cb_error *err)
{
    if (!o || !out) return CB_FAIL(err, CB_ERR_INPUT, "cb_bench_run: NULL argument");
    if (nfailed) *nfailed = 0;
    int steps = o->steps > 0 ? o->steps : o->quick ? 5 : 10;
    int repeats = o->repeats > 0 ? o->repeats : o->quick ? 3 : 5;
    if (repeats > 64) return CB_FAIL(err, CB_ERR_INPUT, "--repeats: at most 64, got %d", repeats);
    for (int i = 0; i < o->nsolvers; i++)
        if (!cb_solver_find(o->solvers[i]))
            return CB_FAIL(err, CB_ERR_INPUT, "--solver: unknown solver '%s'; available: %s", o->solvers[i],
                           cb_solver_names());
    int ncases = (int)(sizeof cases / sizeof cases[0]);
    for (int i = 0; i < o->ncases; i++) {
        int found = 0;
        for (int c = 0; c < ncases; c++) found |= !strcmp(cases[c].name, o->cases[i]);
        if (!found) {
            char names[512] = "";
            for (int c = 0; c < ncases; c++) {
                size_t len = strlen(names);
                snprintf(names + len, sizeof names - len, "%s%s", c ? ", " : "", cases[c].name);
            }
            return CB_FAIL(err, CB_ERR_INPUT, "--case: unknown case '%s'; available: %s", o->cases[i], names);
        }
    }
    fprintf(out, "name,scene,solver,nx,vertices,steps,repeats,median_ms_per_step,min_ms_per_step,max_ms_per_step,"
                 "peak_rss_mb,create_ms,first_step_ms,stage_ms_per_step,status,message\n");
    fflush(out);
    int failed = 0, row = 0, nrows = count_rows(o), tty = progress && isatty(fileno(progress));
    for (int c = 0; c < ncases; c++) {
        const bench_case *bc = &cases[c];
        if (!case_selected(bc, o)) continue;
        char scene[4096];
        snprintf(scene, sizeof scene, "%s/scenes/%s", o->data_dir ? o->data_dir : "data", bc->scene);
        if (access(scene, R_OK))
            return CB_FAIL(err, CB_ERR_INPUT, "%s: bench scene not found (set CLOTHBENCH_DATA)", scene);
        int nsizes = 0;
        while (nsizes < 4 && bc->sizes[nsizes] > 0) nsizes++;
        if (o->nsizes > 0) nsizes = o->nsizes;
        for (int si = 0; si < nsizes; si++) {
            int nx = o->nsizes > 0 ? o->sizes[si] : bc->sizes[si];
            long nv = (long)nx * nx;
            if (o->quick && o->nsizes == 0 && nv > 1024) continue;
            for (int v = 0; v < cb_solver_count(); v++) {
                const char *solver = cb_solver_at(v)->name;
                if (!solver_selected(bc, solver, o)) continue;
                int cap = cap_for(solver);
                if (o->max_vertices > 0 && (cap == 0 || o->max_vertices < cap)) cap = o->max_vertices;
                char head[512];
                snprintf(head, sizeof head, "%s,%s,%s,%d,%ld,%d,%d", bc->name, bc->scene, solver, nx, nv, steps,
                         repeats);
                row++;
                if (cap > 0 && nv > cap) {
                    char why[64];
                    snprintf(why, sizeof why, "skipped (above the cap of %d)", cap);
                    progress_line(progress, tty, row, nrows, bc->name, solver, nv, why);
                    fprintf(out, "%s,nan,nan,nan,nan,nan,nan,-,skipped,above the size cap of %d vertices for %s\n", head, cap,
                            solver);
                    fflush(out);
                    continue;
                }
                const char *sets[12 + CB_BENCH_MAX_SETS];
                int nsets = 0;
                char sx[64], sy[64];
                snprintf(sx, sizeof sx, "cloth.grid.nx=%d", nx);
                snprintf(sy, sizeof sy, "cloth.grid.ny=%d", nx);
                sets[nsets++] = sx;
                sets[nsets++] = sy;
                for (int q = 0; q < 8 && bc->sets[q]; q++) sets[nsets++] = bc->sets[q];
                for (int q = 0; q < o->nsets && q < CB_BENCH_MAX_SETS; q++) sets[nsets++] = o->sets[q];
                if (tty) progress_line(progress, tty, row, nrows, bc->name, solver, nv, "...");
                int fds[2];
                if (pipe(fds)) return CB_FAIL(err, CB_ERR_INTERNAL, "pipe failed: %s", strerror(errno));
                fflush(NULL);
                pid_t pid = fork();
                if (pid < 0) {
                    close(fds[0]);
                    close(fds[1]);
                    return CB_FAIL(err, CB_ERR_INTERNAL, "fork failed: %s", strerror(errno));
                }
                if (pid == 0) {
                    close(fds[0]);
                    child_row(fds[1], scene, solver, sets, nsets, steps, repeats);
                }
                close(fds[1]);
                char reply[2048] = "";
                size_t got = 0;
                for (;;) {
                    ssize_t k = read(fds[0], reply + got, sizeof reply - 1 - got);
                    if (k > 0) got += (size_t)k;
                    else if (k < 0 && errno == EINTR) continue;
                    else break;
                    if (got >= sizeof reply - 1) break;
                }
                reply[got] = '\0';
                close(fds[0]);
                int st = 0;
                while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
                double med, mn, mx;
                long kb;
                double cms, fms;
                char status[32] = "error", msg[1024] = "", stages[512] = "-";
                int ok = sscanf(reply, "ok %lf %lf %lf %ld %lf %lf %511s", &med, &mn, &mx, &kb, &cms, &fms, stages) == 7;
                if (ok) {
                    fprintf(out, "%s,%.6g,%.6g,%.6g,%.1f,%.6g,%.6g,%s,ok,\n", head, med, mn, mx, kb / 1024.0, cms, fms,
                            stages);
                } else {
                    if (!strncmp(reply, "fail ", 5)) {
                        sscanf(reply + 5, "%31s", status);
                        const char *m = strchr(reply + 5, ' ');
                        snprintf(msg, sizeof msg, "%s", m ? m + 1 : "");
                        msg[strcspn(msg, "\n")] = '\0';
                    } else if (WIFSIGNALED(st)) {
                        snprintf(msg, sizeof msg, "the bench process was killed by signal %d", WTERMSIG(st));
                    } else {
                        snprintf(msg, sizeof msg, "the bench process reported nothing");
                    }
                    fprintf(out, "%s,nan,nan,nan,nan,nan,nan,-,", head);
                    cb_csv_field(out, status);
                    fputc(',', out);
                    cb_csv_field(out, msg);
                    fputc('\n', out);
                    failed++;
                }
                fflush(out);
                char what[128];
                if (ok) snprintf(what, sizeof what, "%.3g ms/step, %.0f MB", med, kb / 1024.0);
                else snprintf(what, sizeof what, "%s", status);
                progress_line(progress, tty, row, nrows, bc->name, solver, nv, what);
            }
        }
    }
    if (nfailed) *nfailed = failed;
    return CB_OK;
}
