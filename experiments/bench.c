/* experiments/bench.c — the standard timing table (bench.h).
 *
 * Cases and sizes are the table below; the rules after it give the rows that run other
 * than the defaults (fewer steps where a step takes seconds, the health check off where
 * a method's defaults break it, not timed), each saying why in the row's message; each
 * solver's scaling exponent over a case's sizes is a column and a progress line at the
 * end of the case. Each row runs in a forked child, so
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

/* Rows of the standard cases that do not run as the defaults, each with its reason,
 * which the row's message gives (README "Benchmarks"): from min_vertices to
 * max_vertices, a rule takes at most `steps` steps and `repeats` repeats (0: the
 * table's); `unjudged` turns the run health check off (the overrides the named case
 * pbd_bend sets), so the row is timed, not judged; `skip` leaves the row untimed. Every
 * rule that matches a row applies. case NULL: every standard case (not the named
 * comparison cases, which state their own settings). The budgets come from the table's
 * own measurements on the hanging cloth (README "Benchmarks"). */
typedef struct bench_rule {
    const char *case_name, *solver;
    long min_vertices, max_vertices; /* max 0: no bound */
    int steps, repeats, unjudged, skip;
    const char *why;
} bench_rule;

static const char *const health_off[] = {"health.energy_factor=1e9", "health.max_strain=1e6"};

#define PBD_DIVERGES                                                                                      \
    "timed, not judged: the defaults break the health rule here (strain above 1 at step 6 from 128 x 128: " \
    "one Gauss-Seidel sweep per 0.25 ms substep is too few for the resolution, README Benchmarks)"
#define SLOW "3 steps, 1 repeat: a step takes seconds or more at this size"

static const bench_rule rules[] = {
    {"hanging", "pbd", 16384, 0, 0, 0, 1, 0, PBD_DIVERGES},
    {"hanging", "xpbd", 16384, 0, 0, 0, 1, 0, PBD_DIVERGES},
    {NULL, "pbd", 16384, 65535, 10, 1, 0, 0, "1 repeat: self collision is most of a step at this size (0.14-0.16 s on the hanging cloth)"},
    {NULL, "xpbd", 16384, 65535, 10, 1, 0, 0, "1 repeat: self collision is most of a step at this size (0.14-0.16 s on the hanging cloth)"},
    {NULL, "pbd", 65536, 0, 3, 1, 0, 0, SLOW},
    {NULL, "xpbd", 65536, 0, 3, 1, 0, 0, SLOW},
    {NULL, "explicit", 16384, 0, 3, 1, 0, 0, SLOW " (automatic stability substeps, more the finer the grid)"},
    {NULL, "avgforce", 16384, 0, 3, 1, 0, 0, SLOW},
    {NULL, "acm", 16384, 65535, 3, 1, 0, 0, SLOW " (about 3 s on the hanging cloth, more than half of it renewals)"},
    {NULL, "acm", 65536, 0, 0, 0, 0, 1,
     "not timed: a step took about 3 s at 128 x 128; at 256 x 256 the first three took 23 then 179 then 455 s "
     "(578 M events each): the row alone would take longer than the rest of the table"},
    {NULL, "newton", 65536, 0, 0, 1, 0, 0, "1 repeat: seconds per step at this size"},
    {NULL, "ipc", 16384, 65535, 0, 1, 0, 0, "1 repeat: seconds per step at this size"},
    {NULL, "ipc", 65536, 0, 3, 1, 0, 0, SLOW " (most of it the factorization)"},
};

cb_bench_options cb_default_bench_options(void)
{
    cb_bench_options o;
    memset(&o, 0, sizeof o);
    o.data_dir = "data";
    return o;
}

/* What the rules make of a row: its steps and repeats, whether it is judged, and the
 * reasons, joined by "; " (empty: the row runs as the table's defaults). */
typedef struct row_plan {
    int steps, repeats, unjudged, skip;
    char why[1024];
} row_plan;

static row_plan plan_row(const bench_case *bc, const char *solver, long nv, int steps, int repeats)
{
    row_plan r = {steps, repeats, 0, 0, ""};
    if (bc->solver) return r;
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        const bench_rule *u = &rules[i];
        if ((u->case_name && strcmp(u->case_name, bc->name)) || strcmp(u->solver, solver) || nv < u->min_vertices ||
            (u->max_vertices > 0 && nv > u->max_vertices))
            continue;
        if (u->steps > 0 && u->steps < r.steps) r.steps = u->steps;
        if (u->repeats > 0 && u->repeats < r.repeats) r.repeats = u->repeats;
        r.unjudged |= u->unjudged;
        r.skip |= u->skip;
        size_t len = strlen(r.why);
        snprintf(r.why + len, sizeof r.why - len, "%s%s", len ? "; " : "", u->why);
    }
    return r;
}

/* A point of the fit: both values positive and finite. */
static int fit_point(double vertices, double ms)
{
    return vertices > 0.0 && ms > 0.0 && isfinite(vertices) && isfinite(ms);
}

double cb_bench_scaling_exponent(const double *vertices, const double *ms, int n)
{
    if (!vertices || !ms) return NAN;
    double mx = 0.0, my = 0.0, first = NAN;
    int k = 0, distinct = 0;
    for (int i = 0; i < n; i++) {
        if (!fit_point(vertices[i], ms[i])) continue;
        if (k == 0) first = vertices[i];
        distinct |= vertices[i] != first;
        mx += log(vertices[i]);
        my += log(ms[i]);
        k++;
    }
    if (!distinct) return NAN; /* no two sizes: no slope */
    mx /= k;
    my /= k;
    double sxx = 0.0, sxy = 0.0; /* about the means (two passes: no cancellation) */
    for (int i = 0; i < n; i++) {
        if (!fit_point(vertices[i], ms[i])) continue;
        double dx = log(vertices[i]) - mx;
        sxx += dx * dx;
        sxy += dx * (log(ms[i]) - my);
    }
    return sxy / sxx;
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

/* Runs child_row in a forked child; its reply (NUL-terminated) and wait status out. */
static int fork_row(const char *scene, const char *solver, const char *const *sets, int nsets, int steps,
                    int repeats, char *reply, size_t size, int *wstatus, cb_error *err)
{
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
    size_t got = 0;
    for (;;) {
        ssize_t k = read(fds[0], reply + got, size - 1 - got);
        if (k > 0) got += (size_t)k;
        else if (k < 0 && errno == EINTR) continue;
        else break;
        if (got >= size - 1) break;
    }
    reply[got] = '\0';
    close(fds[0]);
    *wstatus = 0;
    while (waitpid(pid, wstatus, 0) < 0 && errno == EINTR) {}
    return CB_OK;
}

/* The rows of one solver in the case being run, for its scaling exponent. */
typedef struct fit_rows {
    double vertices[CB_BENCH_MAX_SIZES], ms[CB_BENCH_MAX_SIZES];
    int n;
} fit_rows;

/* "bench: scaling hanging fms: n^1.23 from 1024 to 65536 vertices (4 sizes, least squares)" */
static void scaling_line(FILE *p, const char *name, const char *solver, const fit_rows *f)
{
    if (!p || f->n < 2) return;
    fprintf(p, "bench: scaling %s %s: n^%.3g from %.0f to %.0f vertices (%d sizes, least-squares slope of log "
               "median ms/step on log vertices)\n",
            name, solver, cb_bench_scaling_exponent(f->vertices, f->ms, f->n), f->vertices[0], f->vertices[f->n - 1],
            f->n);
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
    int nsolvers = cb_solver_count();
    fit_rows *fits = cb_calloc((size_t)(nsolvers > 0 ? nsolvers : 1), sizeof *fits);
    if (!fits) return CB_FAIL(err, CB_ERR_NOMEM, "bench: out of memory");
    fprintf(out, "name,scene,solver,nx,vertices,steps,repeats,median_ms_per_step,min_ms_per_step,max_ms_per_step,"
                 "peak_rss_mb,create_ms,first_step_ms,stage_ms_per_step,scaling_exponent,status,message\n");
    fflush(out);
    int rc = CB_OK, failed = 0, row = 0, nrows = count_rows(o), tty = progress && isatty(fileno(progress));
    for (int c = 0; c < ncases && !rc; c++) {
        const bench_case *bc = &cases[c];
        if (!case_selected(bc, o)) continue;
        char scene[4096];
        snprintf(scene, sizeof scene, "%s/scenes/%s", o->data_dir ? o->data_dir : "data", bc->scene);
        if (access(scene, R_OK)) {
            rc = CB_FAIL(err, CB_ERR_INPUT, "%s: bench scene not found (set CLOTHBENCH_DATA)", scene);
            break;
        }
        memset(fits, 0, (size_t)nsolvers * sizeof *fits);
        int nsizes = 0;
        while (nsizes < 4 && bc->sizes[nsizes] > 0) nsizes++;
        if (o->nsizes > 0) nsizes = o->nsizes;
        for (int si = 0; si < nsizes && !rc; si++) {
            int nx = o->nsizes > 0 ? o->sizes[si] : bc->sizes[si];
            long nv = (long)nx * nx;
            if (o->quick && o->nsizes == 0 && nv > 1024) continue;
            for (int v = 0; v < nsolvers; v++) {
                const char *solver = cb_solver_at(v)->name;
                if (!solver_selected(bc, solver, o)) continue;
                row_plan plan = plan_row(bc, solver, nv, steps, repeats);
                int capped = o->max_vertices > 0 && nv > o->max_vertices;
                if (plan.skip || capped) plan.steps = plan.repeats = 0; /* the columns say what ran */
                char head[512];
                snprintf(head, sizeof head, "%s,%s,%s,%d,%ld,%d,%d", bc->name, bc->scene, solver, nx, nv, plan.steps,
                         plan.repeats);
                row++;
                if (plan.skip) {
                    progress_line(progress, tty, row, nrows, bc->name, solver, nv, "not timed");
                    fprintf(out, "%s,nan,nan,nan,nan,nan,nan,-,nan,skipped,", head);
                    cb_csv_field(out, plan.why);
                    fputc('\n', out);
                    fflush(out);
                    continue;
                }
                if (capped) {
                    char why[64];
                    snprintf(why, sizeof why, "skipped (above the cap of %d)", o->max_vertices);
                    progress_line(progress, tty, row, nrows, bc->name, solver, nv, why);
                    fprintf(out, "%s,nan,nan,nan,nan,nan,nan,-,nan,skipped,above the size cap of %d vertices (--max-vertices)\n",
                            head, o->max_vertices);
                    fflush(out);
                    continue;
                }
                const char *sets[14 + CB_BENCH_MAX_SETS];
                int nsets = 0;
                char sx[64], sy[64];
                snprintf(sx, sizeof sx, "cloth.grid.nx=%d", nx);
                snprintf(sy, sizeof sy, "cloth.grid.ny=%d", nx);
                sets[nsets++] = sx;
                sets[nsets++] = sy;
                for (int q = 0; q < 8 && bc->sets[q]; q++) sets[nsets++] = bc->sets[q];
                for (int q = 0; plan.unjudged && q < 2; q++) sets[nsets++] = health_off[q];
                for (int q = 0; q < o->nsets && q < CB_BENCH_MAX_SETS; q++) sets[nsets++] = o->sets[q];
                if (tty) progress_line(progress, tty, row, nrows, bc->name, solver, nv, "...");
                char reply[2048] = "";
                int st = 0;
                if ((rc = fork_row(scene, solver, sets, nsets, plan.steps, plan.repeats, reply, sizeof reply, &st, err)))
                    break;
                double med, mn, mx;
                long kb;
                double cms, fms;
                char status[32] = "error", msg[2048] = "", stages[512] = "-";
                int ok = sscanf(reply, "ok %lf %lf %lf %ld %lf %lf %511s", &med, &mn, &mx, &kb, &cms, &fms, stages) == 7;
                if (ok) {
                    fit_rows *f = &fits[v];
                    f->vertices[f->n] = (double)nv;
                    f->ms[f->n++] = med;
                    fprintf(out, "%s,%.6g,%.6g,%.6g,%.1f,%.6g,%.6g,%s,%.4g,ok,", head, med, mn, mx, kb / 1024.0, cms,
                            fms, stages, cb_bench_scaling_exponent(f->vertices, f->ms, f->n));
                    cb_csv_field(out, plan.why);
                    fputc('\n', out);
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
                    if (plan.why[0]) {
                        size_t len = strlen(msg);
                        snprintf(msg + len, sizeof msg - len, "; %s", plan.why);
                    }
                    fprintf(out, "%s,nan,nan,nan,nan,nan,nan,-,nan,", head);
                    cb_csv_field(out, status);
                    fputc(',', out);
                    cb_csv_field(out, msg);
                    fputc('\n', out);
                    failed++;
                }
                fflush(out);
                char what[128];
                if (ok) snprintf(what, sizeof what, "%.3g ms/step, %.0f MB%s", med, kb / 1024.0,
                                 plan.unjudged ? ", timed, not judged" : "");
                else snprintf(what, sizeof what, "%s", status);
                progress_line(progress, tty, row, nrows, bc->name, solver, nv, what);
            }
        }
        for (int v = 0; v < nsolvers && !rc; v++) scaling_line(progress, bc->name, cb_solver_at(v)->name, &fits[v]);
    }
    free(fits);
    if (nfailed) *nfailed = failed;
    return rc;
}
