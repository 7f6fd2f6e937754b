/* experiments/main.c — the clothbench program.
 *
 *   clothbench list [--params [SOLVER]]           solvers and bundled scenes; every solver parameter
 *   clothbench run SCENE --solver NAME [-o RUN.h5] [--set k=v]... [--quiet] [--no-frames]
 *   clothbench info RUN.h5                        one-screen summary of a run
 *   clothbench rerun RUN.h5 [-o NEW.h5] [--check] run again from the file, compare (rerun.h)
 *   clothbench sweep EXPERIMENT [-j N] [--shard I/N] [--dry-run] ...   (experiments/sweep.h)
 *   clothbench bench [--quick] [-o FILE] ...      standard timing table (experiments/bench.h)
 *   clothbench bench contact|ccd|bvh [--quick]    contact-library timings
 *   clothbench help [COMMAND]                     a command's options (= COMMAND --help)
 *
 * Every command takes -h/--help (its own options; `clothbench help COMMAND` too).
 * Exit status: 0 ok, 1 run failed (diverged, error, interrupted), 2 bad input.
 */
#include <dirent.h>
#include <hdf5.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/params.h"
#include "contact/colliders.h"
#include "experiments/harness/elastica.h"
#include "experiments/harness/provenance.h"
#include "experiments/harness/registry.h"
#include "experiments/harness/run.h"
#include "core/scene.h"
#include "core/solver.h"
#include "core/world.h"
#include "experiments/bench.h"
#include "experiments/harness/run_summary.h"
#include "experiments/rerun.h"
#include "experiments/reference.h"
#include "experiments/submit.h"
#include "experiments/sweep.h"

#ifndef CB_DATA_DIR
#define CB_DATA_DIR "data"
#endif

/* One subcommand: its name, a one-line synopsis for the overview, its full help
 * (`clothbench NAME --help`, `clothbench help NAME`) and the function that runs it. Every command's parser
 * takes -h/--help: it parses the other arguments first (an unknown option is still an
 * error, exit 2), then prints the help and returns 0. A new subcommand is one row of
 * `commands` below. */
typedef struct command {
    const char *name;
    const char *synopsis; /* arguments, for the overview */
    const char *summary;  /* what it does, for the overview */
    const char *usage;
    int (*fn)(int argc, char **argv);
} command;

static const command *current; /* the subcommand being run (for its usage), or NULL */

static void print_usage(FILE *f);

static int bad_usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "clothbench%s%s: ", current ? " " : "", current ? current->name : "");
    fprintf(stderr, fmt, arg);
    if (current) fprintf(stderr, "\n\n%s", current->usage);
    else {
        fputs("\n\n", stderr);
        print_usage(stderr);
    }
    return 2;
}

static int is_help(const char *a) { return !strcmp(a, "-h") || !strcmp(a, "--help"); }

/* The help of the current subcommand on stdout; exit status 0. */
static int show_help(void)
{
    fputs(current->usage, stdout);
    return 0;
}

static void print_error(const cb_error *e)
{
    fprintf(stderr, "clothbench: error: %s\n", e->message);
    if (getenv("CB_DEBUG")) fprintf(stderr, "  (reported at %s)\n", e->where);
}

static const char *data_dir(void)
{
    const char *env = getenv("CLOTHBENCH_DATA");
    if (env) return env;
    if (access("data/scenes", R_OK) == 0) return "data";
    return CB_DATA_DIR;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Two small built-in scenes that differ in every physical value a default can derive
 * from (thickness, stretch stiffness, edge length, dt): a default that differs between
 * them depends on the scene and is marked with *. The first one's value is shown. */
static const char *const params_scene[2] = {
    "name: params_a\nduration: 0.01\ndt: 0.005\n"
    "cloth:\n  grid: {nx: 8, ny: 8, size: [0.2, 0.2], origin: [-0.1, -0.1, 0.5]}\n"
    "  thickness: 0.002\n  stretch: 1000\n"
    "colliders:\n  - {type: sphere, center: [0, 0, 0.3], radius: 0.1}\n",
    "name: params_b\nduration: 0.01\ndt: 0.002\n"
    "cloth:\n  grid: {nx: 8, ny: 8, size: [0.3, 0.3], origin: [-0.15, -0.15, 0.5]}\n"
    "  thickness: 0.004\n  stretch: 500\n"
    "colliders:\n  - {type: sphere, center: [0, 0, 0.3], radius: 0.1}\n",
};

/* Create the solver on built-in scene k with the recorder on; *rec holds its parameters. */
static int solver_params(const cb_solver_class *cls, int k, cb_params_record **rec, cb_error *err)
{
    cb_scene *sc = NULL;
    cb_world *w = NULL;
    void *self = NULL;
    int rc = cb_scene_load_string(params_scene[k], "<built-in scene>", ".", NULL, 0, &sc, err);
    if (!rc) rc = cb_world_create(sc, &w, err);
    if (!rc) rc = cb_params_record_create(rec, err);
    if (!rc) {
        cb_params p = cb_scene_params(sc, cls->name);
        p.rec = *rec;
        rc = cls->create(w, &p, &self, err);
    }
    if (self) cls->destroy(self);
    cb_world_free(&w);
    cb_scene_free(&sc);
    return rc;
}

static const char *const param_type_name[] = {"double", "int", "bool", "choice"};

/* clothbench list --params [SOLVER]: one block per solver, one line per key. */
static int list_params(const char *only)
{
    if (only && !cb_solver_find(only))
        return bad_usage("list --params: unknown solver '%s'", only);
    printf("solver parameters (solvers.<name> in a scene): key, type, default, range or choices, meaning\n"
           "(* a default that depends on the scene; shown for an 8 x 8 cloth of 0.2 m, thickness 2 mm,\n"
           "stretch 1000 N/m, dt 5 ms)\n");
    for (int i = 0; i < cb_solver_count(); i++) {
        const cb_solver_class *cls = cb_solver_at(i);
        if (only && strcmp(only, cls->name)) continue;
        cb_params_record *rec[2] = {NULL, NULL};
        cb_error e;
        int rc = solver_params(cls, 0, &rec[0], &e);
        if (!rc) rc = solver_params(cls, 1, &rec[1], &e);
        if (rc) {
            print_error(&e);
            cb_params_record_free(&rec[0]);
            cb_params_record_free(&rec[1]);
            return 1;
        }
        printf("\n%s:\n", cls->name);
        for (int j = 0; j < cb_params_record_count(rec[0]); j++) {
            const cb_param_entry *en = cb_params_record_at(rec[0], j);
            const cb_param_entry *other = cb_params_record_find(rec[1], en->key);
            char def[64], def2[64], range[256];
            cb_param_entry_value_text(en, 1, def, sizeof def);
            cb_param_entry_value_text(other, 1, def2, sizeof def2);
            if (en->type == CB_PARAM_DOUBLE) snprintf(def, sizeof def, "%.6g", en->def); /* for reading */
            if (strcmp(def, def2)) snprintf(def + strlen(def), sizeof def - strlen(def), "*");
            switch (en->type) {
            case CB_PARAM_DOUBLE: snprintf(range, sizeof range, "[%g, %g]", en->lo, en->hi); break;
            case CB_PARAM_INT: snprintf(range, sizeof range, "[%d, %d]", en->ilo, en->ihi); break;
            case CB_PARAM_BOOL: snprintf(range, sizeof range, "true|false"); break;
            case CB_PARAM_CHOICE:
                range[0] = '\0';
                for (int k = 0; en->choices[k]; k++)
                    snprintf(range + strlen(range), sizeof range - strlen(range), "%s%s", k ? "|" : "",
                             en->choices[k]);
                break;
            }
            printf("  %-22s %-6s %-12s %-30s %s\n", en->key, param_type_name[en->type], def, range, en->doc);
        }
        cb_params_record_free(&rec[0]);
        cb_params_record_free(&rec[1]);
    }
    return 0;
}

/* The tail every command's option loop shares: --help, an unknown option, the one
 * positional argument. Returns 0 when taken, else the exit status of the usage error. */
static int common_arg(const char *a, const char **path, int *help)
{
    if (is_help(a)) {
        *help = 1;
        return 0;
    }
    if (a[0] == '-' && a[1]) return bad_usage("unknown option '%s'", a);
    if (!*path) {
        *path = a;
        return 0;
    }
    return bad_usage("unexpected argument '%s'", a);
}

static int cmd_list(int argc, char **argv)
{
    int help = 0, params = 0;
    const char *only = NULL;
    for (int i = 0; i < argc; i++) {
        if (is_help(argv[i])) help = 1;
        else if (!strcmp(argv[i], "--params")) params = 1;
        else if (argv[i][0] == '-' && argv[i][1]) return bad_usage("unknown option '%s'", argv[i]);
        else if (params && !only) only = argv[i];
        else return bad_usage("unexpected argument '%s'", argv[i]);
    }
    if (help) return show_help();
    if (params) return list_params(only);
    printf("solvers:\n");
    for (int i = 0; i < cb_solver_count(); i++)
        printf("  %-10s %s\n", cb_solver_at(i)->name, cb_solver_at(i)->summary);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/scenes", data_dir());
    printf("\nscenes (%s):\n", dir);
    DIR *d = opendir(dir);
    if (!d) {
        printf("  (folder not found)\n");
        return 0;
    }
    char *names[512];
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) && n < 512) {
        size_t l = strlen(de->d_name);
        if (l > 5 && !strcmp(de->d_name + l - 5, ".yaml")) names[n++] = strdup(de->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], cmp_str);
    for (int i = 0; i < n; i++) {
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        cb_scene *s = NULL;
        cb_error e;
        if (cb_scene_load(path, NULL, 0, &s, &e) == CB_OK) {
            printf("  %-28s %s: %.3g s at dt %.3g s\n", path, s->name, s->duration, s->dt);
            cb_scene_free(&s);
        } else {
            printf("  %-28s (does not load: %s)\n", path, e.message);
        }
        free(names[i]);
    }
    return 0;
}

static int cmd_info(int argc, char **argv)
{
    const char *path = NULL;
    int help = 0;
    for (int i = 0; i < argc; i++) {
        if (is_help(argv[i])) help = 1;
        else if (argv[i][0] == '-' && argv[i][1]) return bad_usage("unknown option '%s'", argv[i]);
        else if (!path) path = argv[i];
        else return bad_usage("info takes exactly one run file, got also '%s'", argv[i]);
    }
    if (help) return show_help();
    if (!path) return bad_usage("info takes exactly one run file%s", "");
    cb_run_summary s;
    cb_error e;
    int rc = cb_run_summary_read(path, &s, &e);
    if (rc) {
        print_error(&e);
        return 2;
    }
    cb_run_summary_print(&s, path, stdout);
    return 0;
}

static int cmd_run(int argc, char **argv)
{
    cb_run_def def = cb_default_run_def();
    const char **sets = calloc((size_t)argc + 1, sizeof *sets);
    int quiet = 0, help = 0;
    char outbuf[4096];
    if (!sets) return 2;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--solver") || !strcmp(a, "-s")) {
            if (++i >= argc) { free(sets); return bad_usage("%s needs a solver name", a); }
            def.solver = argv[i];
        } else if (!strncmp(a, "--solver=", 9)) {
            def.solver = a + 9;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (++i >= argc) { free(sets); return bad_usage("%s needs a file name", a); }
            def.output = argv[i];
        } else if (!strcmp(a, "--set")) {
            if (++i >= argc) { free(sets); return bad_usage("%s needs KEY.PATH=VALUE", a); }
            sets[def.nsets++] = argv[i];
        } else if (!strncmp(a, "--set=", 6)) {
            sets[def.nsets++] = a + 6;
        } else if (!strcmp(a, "--no-frames")) {
            def.write_frames = 0;
        } else if (!strcmp(a, "--audit")) {
            sets[def.nsets++] = "audit=true"; /* recorded in the run file's scene text */
        } else if (!strcmp(a, "--reference")) {
            if (++i >= argc) { free(sets); return bad_usage("%s needs a reference run file", a); }
            def.reference = argv[i];
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (is_help(a)) {
            help = 1;
        } else if (a[0] == '-' && a[1]) {
            free(sets);
            return bad_usage("unknown option '%s'", a);
        } else if (!def.scene_path) {
            def.scene_path = a;
        } else {
            free(sets);
            return bad_usage("unexpected argument '%s'", a);
        }
    }
    if (help) {
        free(sets);
        return show_help();
    }
    if (!def.scene_path) { free(sets); return bad_usage("run needs a scene file%s", ""); }
    if (!def.solver) { free(sets); return bad_usage("run needs --solver NAME (see clothbench list)%s", ""); }
    def.sets = sets;
    def.progress = !quiet;
    if (!def.output) {
        /* default: runs/<scene file stem>-<solver>.h5 */
        const char *base = strrchr(def.scene_path, '/');
        base = base ? base + 1 : def.scene_path;
        char stem[256];
        snprintf(stem, sizeof stem, "%s", base);
        char *dot = strrchr(stem, '.');
        if (dot) *dot = '\0';
        snprintf(outbuf, sizeof outbuf, "runs/%s-%s.h5", stem, def.solver);
        def.output = outbuf;
    }
    cb_run_install_signal_handlers();
    cb_run_result res;
    cb_error e;
    cb_error_clear(&e);
    int rc = cb_run(&def, &res, &e);
    free(sets);
    if (rc && res.frames == 0) { /* failed before the first frame was on disk */
        print_error(&e);
        /* bad scene, solver, parameters, or a file that cannot be read: 2; out of
         * memory, a full disk, a signal...: the run failed (1) */
        return !res.started && (rc == CB_ERR_INPUT || rc == CB_ERR_IO) ? 2 : 1;
    }
    if (!quiet) {
        cb_run_summary s;
        cb_error e2;
        if (cb_run_summary_read(def.output, &s, &e2) == CB_OK) cb_run_summary_print(&s, def.output, stdout);
    }
    if (rc) {
        fprintf(stderr, "clothbench: run %s: %s\n", res.status, res.message[0] ? res.message : e.message);
        fprintf(stderr, "clothbench: the run file %s keeps everything logged until then\n", def.output);
        return 1;
    }
    return 0;
}

/* Exit status: 0 identical (or ran, without --check), 1 differs or the rerun failed,
 * 2 bad input. */
static int cmd_rerun(int argc, char **argv)
{
    cb_rerun_def def = {0};
    int help = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (is_help(a)) {
            help = 1;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (++i >= argc) return bad_usage("%s needs a file name", a);
            def.output = argv[i];
        } else if (!strcmp(a, "--scene-dir")) {
            if (++i >= argc) return bad_usage("%s needs a folder", a);
            def.scene_dir = argv[i];
        } else if (!strcmp(a, "--check")) {
            def.check = 1;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            def.quiet = 1;
        } else if (a[0] == '-' && a[1]) {
            return bad_usage("unknown option '%s'", a);
        } else if (!def.run_path) {
            def.run_path = a;
        } else {
            return bad_usage("unexpected argument '%s'", a);
        }
    }
    if (help) return show_help();
    if (!def.run_path) return bad_usage("rerun needs a run file%s", "");
    cb_run_install_signal_handlers();
    cb_rerun_result res;
    cb_error e;
    cb_error_clear(&e);
    int rc = cb_rerun(&def, &res, stdout, &e);
    if (rc < 0) {
        print_error(&e);
        return rc == CB_ERR_INPUT || rc == CB_ERR_IO ? 2 : 1;
    }
    return rc == 0 ? 0 : 1;
}

/* What --shard I/N means for this sweep, numbers filled in, e.g.
 * "shard 1/4: runs 1, 5, 9, ..., 45 (12 of 48 runs: every run whose index mod 4 is 1)". */
static void print_shard(FILE *f, const char *prefix, int shard, int n, long nruns)
{
    long count = nruns > shard ? (nruns - shard + n - 1) / n : 0;
    fprintf(f, "%sshard %d/%d: ", prefix, shard, n);
    if (count == 0) fprintf(f, "no runs");
    else fprintf(f, "run%s", count > 1 ? "s" : "");
    for (long k = 0; k < count && k < 3; k++) fprintf(f, "%s%ld", k ? ", " : " ", shard + k * n);
    if (count > 4) fprintf(f, ", ...");
    if (count > 3) fprintf(f, ", %ld", shard + (count - 1) * n);
    fprintf(f, " (%ld of %ld runs: every run whose index mod %d is %d)\n", count, nruns, n, shard);
}

/* "I/N" -> shard, nshards; 0 on success. */
static int parse_shard(const char *s, int *shard, int *n)
{
    char *end;
    long i = strtol(s, &end, 10);
    if (end == s || *end != '/') return -1;
    const char *q = end + 1;
    long m = strtol(q, &end, 10);
    if (end == q || *end || m < 1 || i < 0 || i >= m || m > 1000000) return -1;
    *shard = (int)i;
    *n = (int)m;
    return 0;
}

static int parse_int(const char *s, int lo, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v < lo || v > 1000000000L) return -1;
    *out = (int)v;
    return 0;
}

static int cmd_sweep(int argc, char **argv)
{
    cb_sweep_options o = cb_default_sweep_options();
    const char *path = NULL, *output = NULL;
    const char **sets = calloc((size_t)argc + 1, sizeof *sets);
    int nsets = 0, rc = 2, help = 0;
    if (!sets) return 2;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-j") || !strcmp(a, "--jobs")) {
            if (++i >= argc || parse_int(argv[i], 1, &o.jobs)) { rc = bad_usage("%s needs a number of jobs >= 1", a); goto out; }
        } else if (!strncmp(a, "-j", 2) && a[2]) {
            if (parse_int(a + 2, 1, &o.jobs)) { rc = bad_usage("'%s': expected -jN with N >= 1", a); goto out; }
        } else if (!strcmp(a, "--shard")) {
            if (++i >= argc || parse_shard(argv[i], &o.shard, &o.nshards)) {
                rc = bad_usage("--shard needs I/N with 0 <= I < N (got '%s')", i < argc ? argv[i] : "");
                goto out;
            }
        } else if (!strcmp(a, "--dry-run") || !strcmp(a, "-n")) {
            o.dry_run = 1;
        } else if (!strcmp(a, "--index")) {
            o.index_only = 1;
        } else if (!strcmp(a, "--check")) {
            o.check = 1;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (++i >= argc) { rc = bad_usage("%s needs a folder", a); goto out; }
            output = argv[i];
        } else if (!strcmp(a, "--set")) {
            if (++i >= argc) { rc = bad_usage("%s needs KEY.PATH=VALUE", a); goto out; }
            sets[nsets++] = argv[i];
        } else if (!strncmp(a, "--set=", 6)) {
            sets[nsets++] = a + 6;
        } else if (!strcmp(a, "--no-frames")) {
            o.write_frames = 0;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            o.quiet = 1;
            o.progress = 0;
        } else {
            int u = common_arg(a, &path, &help);
            if (u) {
                rc = u;
                goto out;
            }
        }
    }
    if (help) {
        rc = show_help();
        goto out;
    }
    if (!path) { rc = bad_usage("sweep needs an experiment file%s", ""); goto out; }
    cb_experiment *e = NULL;
    cb_error err;
    cb_error_clear(&err);
    if (cb_experiment_load(path, output, sets, nsets, &e, &err)) {
        print_error(&err);
        rc = 2;
        goto out;
    }
    if (!o.quiet && !o.dry_run && !o.index_only) fprintf(stdout, "sweep %s: %ld runs -> %s\n", e->name, e->nruns, e->output);
    if (!o.quiet && !o.index_only && o.nshards > 1) print_shard(stdout, o.dry_run ? "# " : "", o.shard, o.nshards, e->nruns);
    fflush(stdout);
    cb_sweep_stats st;
    int erc = 0;
    if (!o.dry_run && !o.index_only && !o.check)
        erc = cb_reference_for_experiment(e, o.quiet ? NULL : stdout, &err);
    if (!erc) erc = cb_sweep_execute(e, &o, stdout, &st, &err);
    if (erc) {
        print_error(&err);
        rc = erc == CB_ERR_INPUT ? 2 : 1;
    } else {
        if (!o.quiet && !o.dry_run && o.check)
            printf("sweep %s --check: %ld runs in this shard: %ld identical, %ld differ or failed, %ld without a "
                   "run file%s; index: %s/index.csv (column checked)\n", e->name, st.selected, st.ok, st.failed,
                   st.skipped, st.interrupted ? ", interrupted" : "", e->output);
        else if (!o.quiet && !o.dry_run)
        {
            char dv[96] = "";
            if (e->expect_diverged) snprintf(dv, sizeof dv, ", %ld diverged (expected: expect_diverged)", st.diverged);
            printf("sweep %s: %ld runs in this shard: %ld ok (%ld already done)%s, %ld failed%s; index: %s/index.csv\n",
                   e->name, st.selected, st.ok, st.skipped, dv, st.failed, st.interrupted ? ", interrupted" : "",
                   e->output);
        }
        rc = o.dry_run ? 0 : (st.failed || st.interrupted) ? 1 : 0;
    }
    cb_experiment_free(&e);
out:
    free(sets);
    return rc;
}

static int cmd_submit(int argc, char **argv)
{
    cb_submit_options o = {0};
    const char *path = NULL, *output = NULL;
    const char **sets = calloc((size_t)argc + 1, sizeof *sets);
    int nsets = 0, rc = 2, help = 0, slurm = 0;
    if (!sets) return 2;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--slurm")) {
            slurm = 1;
        } else if (!strcmp(a, "--tasks")) {
            if (++i >= argc || parse_int(argv[i], 1, &o.tasks)) { rc = bad_usage("%s needs a number >= 1", a); goto out; }
        } else if (!strcmp(a, "--sbatch-args")) {
            if (++i >= argc) { rc = bad_usage("%s needs the options, e.g. \"--partition=short --time=1:00:00\"", a); goto out; }
            o.sbatch_args = argv[i];
        } else if (!strcmp(a, "--dry-run") || !strcmp(a, "-n")) {
            o.dry_run = 1;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (++i >= argc) { rc = bad_usage("%s needs a folder", a); goto out; }
            output = argv[i];
        } else if (!strcmp(a, "--set")) {
            if (++i >= argc) { rc = bad_usage("%s needs KEY.PATH=VALUE", a); goto out; }
            sets[nsets++] = argv[i];
        } else {
            int u = common_arg(a, &path, &help);
            if (u) {
                rc = u;
                goto out;
            }
        }
    }
    if (help) {
        rc = show_help();
        goto out;
    }
    if (!path) { rc = bad_usage("submit needs an experiment file%s", ""); goto out; }
    if (!slurm) { rc = bad_usage("submit needs a scheduler: --slurm (the only one so far)%s", ""); goto out; }
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) { rc = bad_usage("cannot find this program's path (/proc/self/exe)%s", ""); goto out; }
    exe[n] = '\0';
    o.program = exe;
    o.experiment = path;
    o.sets = sets;
    o.nsets = nsets;
    cb_experiment *e = NULL;
    cb_error err;
    cb_error_clear(&err);
    if (cb_experiment_load(path, output, sets, nsets, &e, &err)) {
        print_error(&err);
        rc = 2;
        goto out;
    }
    int src = cb_submit_slurm(e, &o, stdout, &err);
    if (src) {
        print_error(&err);
        rc = src == CB_ERR_INPUT ? 2 : 1;
    } else {
        rc = 0;
    }
    cb_experiment_free(&e);
out:
    free(sets);
    return rc;
}

static int cmd_reference(int argc, char **argv)
{
    cb_reference_def d = {0};
    const char *path = NULL;
    const char **sets = calloc((size_t)argc + 1, sizeof *sets);
    int nsets = 0, rc = 2, help = 0;
    double dtref = 0;
    d.refine = CB_REFERENCE_REFINE;
    if (!sets) return 2;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--refine")) {
            if (++i >= argc || parse_int(argv[i], 1, &d.refine)) { rc = bad_usage("%s needs an integer >= 1", a); goto out; }
        } else if (!strcmp(a, "--dt")) {
            char *end = NULL;
            if (++i >= argc || !((dtref = strtod(argv[i], &end)) > 0) || *end) {
                rc = bad_usage("%s needs a step > 0 in seconds", a);
                goto out;
            }
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (++i >= argc) { rc = bad_usage("%s needs a file name", a); goto out; }
            d.output = argv[i];
        } else if (!strcmp(a, "--set")) {
            if (++i >= argc) { rc = bad_usage("%s needs KEY.PATH=VALUE", a); goto out; }
            sets[nsets++] = argv[i];
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            d.quiet = 1;
        } else {
            int u = common_arg(a, &path, &help);
            if (u) {
                rc = u;
                goto out;
            }
        }
    }
    if (help) {
        rc = show_help();
        goto out;
    }
    if (!path) { rc = bad_usage("reference needs a scene file%s", ""); goto out; }
    d.scene_path = path;
    d.sets = sets;
    d.nsets = nsets;
    char outbuf[4096];
    if (!d.output) {
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        char stem[256];
        snprintf(stem, sizeof stem, "%s", base);
        char *dot = strrchr(stem, '.');
        if (dot) *dot = '\0';
        snprintf(outbuf, sizeof outbuf, "runs/%s-reference.h5", stem);
        d.output = outbuf;
    }
    cb_error err;
    cb_error_clear(&err);
    if (dtref > 0) { /* --dt: the refinement it means, which must be a whole number */
        cb_scene *s = NULL;
        if (cb_scene_load(path, sets, nsets, &s, &err)) {
            print_error(&err);
            goto out;
        }
        double q = s->dt / dtref;
        cb_scene_free(&s);
        if (!(fabs(q - round(q)) < 1e-9 * q) || q < 1) {
            char why[160];
            snprintf(why, sizeof why, "%.6g (dt / DT = %.6g)", dtref, q);
            rc = bad_usage("--dt must divide the scene's dt a whole number of times, got %s", why);
            goto out;
        }
        d.refine = (int)lround(q);
    }
    cb_run_install_signal_handlers();
    double D = NAN;
    int e = cb_reference_make(&d, stdout, &D, &err);
    if (e) {
        print_error(&err);
        rc = e == CB_ERR_INPUT ? 2 : 1;
    } else {
        rc = 0;
    }
out:
    free(sets);
    return rc;
}

static int cmd_bench(int argc, char **argv)
{
    cb_bench_options o = cb_default_bench_options();
    o.data_dir = data_dir();
    const char *output = NULL, *what = NULL;
    const char **solvers = calloc((size_t)argc + 1, sizeof *solvers);
    const char **cases = calloc((size_t)argc + 1, sizeof *cases);
    const char **sets = calloc((size_t)argc + 1, sizeof *sets);
    int rc = 2, help = 0, quiet = 0;
    if (!solvers || !cases || !sets) goto out;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--quick")) {
            o.quick = 1;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (++i >= argc) { rc = bad_usage("%s needs a file name", a); goto out; }
            output = argv[i];
        } else if (!strcmp(a, "--solver") || !strcmp(a, "-s")) {
            if (++i >= argc) { rc = bad_usage("%s needs a solver name", a); goto out; }
            solvers[o.nsolvers++] = argv[i];
        } else if (!strcmp(a, "--case")) {
            if (++i >= argc) { rc = bad_usage("%s needs a case name", a); goto out; }
            cases[o.ncases++] = argv[i];
        } else if (!strcmp(a, "--size")) {
            int n = 0;
            if (++i >= argc || parse_int(argv[i], 2, &n)) { rc = bad_usage("%s needs a grid size >= 2", a); goto out; }
            if (o.nsizes == CB_BENCH_MAX_SIZES) { rc = bad_usage("at most 16 --size options%s", ""); goto out; }
            o.sizes[o.nsizes++] = n;
        } else if (!strcmp(a, "--set")) {
            if (++i >= argc || !strchr(argv[i], '=')) { rc = bad_usage("%s needs KEY.PATH=VALUE", a); goto out; }
            if (o.nsets == CB_BENCH_MAX_SETS) { rc = bad_usage("at most 16 --set options%s", ""); goto out; }
            sets[o.nsets++] = argv[i];
        } else if (!strcmp(a, "--steps") || !strcmp(a, "--repeats") || !strcmp(a, "--max-vertices")) {
            int *dst = !strcmp(a, "--steps") ? &o.steps : !strcmp(a, "--repeats") ? &o.repeats : &o.max_vertices;
            if (++i >= argc || parse_int(argv[i], 1, dst)) { rc = bad_usage("%s needs a number >= 1", a); goto out; }
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (is_help(a)) {
            help = 1;
        } else if (a[0] == '-' && a[1]) {
            rc = bad_usage("unknown option '%s'", a);
            goto out;
        } else if (!what && (!strcmp(a, "contact") || !strcmp(a, "ccd") || !strcmp(a, "bvh"))) {
            what = a;
        } else {
            rc = bad_usage("unexpected argument '%s' (bench [contact|ccd|bvh] [options])", a);
            goto out;
        }
    }
    if (help) {
        rc = show_help();
        goto out;
    }
    o.solvers = solvers;
    o.cases = cases;
    o.sets = sets;
    FILE *f = stdout;
    if (output && !(f = fopen(output, "w"))) {
        fprintf(stderr, "clothbench: error: %s: cannot write\n", output);
        rc = 2;
        goto out;
    }
    if (what) {
        if (strcmp(what, "bvh")) {
            if (!strcmp(what, "contact")) fprintf(f, "name,queries,seconds,queries_per_s\n");
            else fprintf(f, "name,queries,seconds,queries_per_s\n");
            cb_bench_ccd(f, o.quick);
        }
        if (!strcmp(what, "contact")) fprintf(f, "\n");
        if (strcmp(what, "ccd")) cb_bench_bvh(f, o.quick);
        rc = 0;
    } else {
        cb_error err;
        cb_error_clear(&err);
        int nfailed = 0;
        if (cb_bench_run(&o, f, quiet ? NULL : stderr, &nfailed, &err)) {
            print_error(&err);
            rc = 2;
        } else {
            rc = nfailed ? 1 : 0;
        }
    }
    if (f != stdout && fclose(f)) {
        fprintf(stderr, "clothbench: error: %s: write failed\n", output);
        rc = 2;
    }
out:
    free(solvers);
    free(cases);
    free(sets);
    return rc;
}

static int cmd_help(int argc, char **argv);

/* `clothbench elastica`: the self-weighted cantilever's elastica (experiments/harness/elastica.h)
 * as CSV over log-spaced Gamma, or the Gamma of one chord angle. */
static int cmd_elastica(int argc, char **argv)
{
    double gmin = 0.1, gmax = 100.0, chord = NAN;
    int points = 61, help = 0;
    const char *output = NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        char *end = NULL;
        if (is_help(a)) help = 1;
        else if (!strcmp(a, "--points")) {
            if (++i >= argc || parse_int(argv[i], 2, &points)) return bad_usage("%s needs an integer >= 2", a);
        } else if (!strcmp(a, "--min") || !strcmp(a, "--max")) {
            double v;
            if (++i >= argc || !((v = strtod(argv[i], &end)) > 0 && v <= 1e3) || *end)
                return bad_usage("%s needs a Gamma in (0, 1000]", a);
            *(a[3] == 'i' ? &gmin : &gmax) = v;
        } else if (!strcmp(a, "--chord")) {
            if (++i >= argc || !((chord = strtod(argv[i], &end)) > 0 && chord < 90) || *end)
                return bad_usage("%s needs an angle in (0, 90) degrees", a);
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (++i >= argc) return bad_usage("%s needs a file name", a);
            output = argv[i];
        } else return bad_usage("unknown argument '%s'", a);
    }
    if (help) return show_help();
    if (!(gmin < gmax)) return bad_usage("--min must be below --max%s", "");
    const double deg = 180.0 / 3.14159265358979323846;
    cb_error e;
    cb_elastica el;
    FILE *f = output ? fopen(output, "w") : stdout;
    if (!f) {
        fprintf(stderr, "clothbench: error: cannot write %s\n", output);
        return 2;
    }
    int rc = 0;
    if (!isnan(chord)) {
        if (!(rc = cb_elastica_gamma_for_chord(chord / deg, &el, &e)))
            fprintf(f, "chord %.6g deg: Gamma %.9g, overhang / bending length %.9g, tip slope %.6g deg\n", chord,
                    el.gamma, cbrt(el.gamma), el.tip_slope * deg);
    } else {
        fprintf(f, "gamma,root_curvature,tip_slope_deg,chord_deg,tip_x,tip_drop\n");
        for (int k = 0; k < points && !rc; k++) {
            double g = gmin * pow(gmax / gmin, (double)k / (points - 1));
            if (!(rc = cb_elastica_solve(g, 0, &el, &e)))
                fprintf(f, "%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n", g, el.root_curvature, el.tip_slope * deg,
                        el.chord * deg, el.tip_x, el.tip_drop);
        }
    }
    if (output && fclose(f) != 0 && !rc) {
        fprintf(stderr, "clothbench: error: cannot write %s\n", output);
        return 1;
    }
    if (rc) {
        print_error(&e);
        return 1;
    }
    return 0;
}

static const command commands[] = {
    {"list", "list [--params [SOLVER]]", "solvers and bundled scenes; every solver parameter",
     "usage: clothbench list [--params [SOLVER]]\n"
     "  the registered solvers and the bundled scenes (CLOTHBENCH_DATA or ./data)\n"
     "\n"
     "options:\n"
     "  --params [SOLVER]                 every parameter of every solver (or of SOLVER): type,\n"
     "                                    default, range or choices, meaning\n"
     "  -h, --help                        this help\n",
     cmd_list},
    {"run", "run SCENE --solver NAME [options]", "run one scene with one solver, write a run file",
     "usage: clothbench run SCENE --solver NAME [options]\n"
     "  run one scene with one solver and write a run file (HDF5, with an XDMF sidecar)\n"
     "\n"
     "options:\n"
     "  -s, --solver NAME                 the solver (see clothbench list); required\n"
     "  -o, --output RUN.h5               run file (default runs/<scene>-<solver>.h5)\n"
     "  --set KEY.PATH=VALUE              override a scene value (repeatable)\n"
     "  --no-frames                       do not write /frames (series only)\n"
     "  --audit                           count crossings inside every step (= --set audit=true)\n"
     "  --reference REF.h5                the series position_error against this reference\n"
     "                                    (clothbench reference) at its frame times\n"
     "  -q, --quiet                       no progress bar, no summary\n"
     "  -h, --help                        this help\n"
     "\n"
     "exit status: 0 ok, 1 the run failed (diverged, error, interrupted), 2 bad input\n",
     cmd_run},
    {"info", "info RUN.h5", "one-screen summary of a run file, with what made it",
     "usage: clothbench info RUN.h5\n"
     "  one-screen summary of a run file: solver, scene, status, energy, momentum,\n"
     "  penetration, the contact stage, the audit, self intersections, strain, time,\n"
     "  and what made it (commit, build, libraries, host)\n"
     "\n"
     "options:\n"
     "  -h, --help                        this help\n",
     cmd_info},
    {"rerun", "rerun RUN.h5 [options]", "run again from what the run file records",
     "usage: clothbench rerun RUN.h5 [options]\n"
     "  run again from what the run file records (scene text, effective parameters);\n"
     "  report changed mesh files\n"
     "\n"
     "options:\n"
     "  -o, --output NEW.h5               the new run file (default RUN.rerun.h5)\n"
     "  --check                           compare with the old file: identical, or the first\n"
     "                                    differing row and metric, and whether the build differs\n"
     "  --scene-dir DIR                   resolve the scene's files against DIR (they moved)\n"
     "  -q, --quiet                       no progress bar\n"
     "  -h, --help                        this help\n"
     "\n"
     "exit status: 0 identical (or ran, without --check), 1 differs or the rerun failed, 2 bad input\n",
     cmd_rerun},
    {"sweep", "sweep EXPERIMENT.yaml [options]", "every run of an experiment file (resumable)",
     "usage: clothbench sweep EXPERIMENT.yaml [options]\n"
     "  every run of an experiment file, one run file each, and index.csv / index.h5\n"
     "  (resumable: runs already finished with the same scene are skipped)\n"
     "\n"
     "options:\n"
     "  -j, --jobs N                      N worker processes (default 1)\n"
     "  --shard I/N                       only runs whose index mod N is I (0 <= I < N)\n"
     "  -n, --dry-run                     list the runs (and whether each would run), run nothing\n"
     "  -o, --output DIR                  output folder (default: the file's output, or runs/<name>)\n"
     "  --set KEY.PATH=VALUE              one more fixed override for every run (repeatable)\n"
     "  --index                           only rewrite index.csv and index.h5 from the run files\n"
     "  --check                           rerun every run from its file and compare (as rerun\n"
     "                                    --check); <run>.check and the index column checked\n"
     "                                    say identical or what differs; runs nothing new\n"
     "  --no-frames                       run files without /frames\n"
     "  -q, --quiet                       no line per finished run, no progress\n"
     "  -h, --help                        this help\n"
     "\n"
     "exit status: 0 every run (of this shard) ok, 1 a run failed, 2 bad input\n",
     cmd_sweep},
    {"reference", "reference SCENE [options]", "a converged trajectory to measure runs against",
     "usage: clothbench reference SCENE [options]\n"
     "  a converged trajectory of a contact-free scene (velocity Verlet, damping 0, at the\n"
     "  scene's dt / refine), checked against the same at half that step; runs measure\n"
     "  their position_error against it with run --reference\n"
     "\n"
     "options:\n"
     "  --refine Q                        dt_ref = scene dt / Q (default 16)\n"
     "  --dt DT                           dt_ref = DT (must divide the scene's dt)\n"
     "  -o, --output REF.h5               the reference (default runs/<scene>-reference.h5)\n"
     "  --set KEY.PATH=VALUE              override a scene value (repeatable)\n"
     "  -q, --quiet                       no progress, no summary\n"
     "  -h, --help                        this help\n"
     "\n"
     "exit status: 0 written, 1 a run failed, 2 bad input (a scene with colliders, say)\n",
     cmd_reference},
    {"submit", "submit EXPERIMENT.yaml --slurm [options]", "a sweep as a Slurm job array plus a merge job",
     "usage: clothbench submit EXPERIMENT.yaml --slurm [options]\n"
     "  a sweep as a Slurm job array (task I runs sweep --shard I/N) and a merge job that\n"
     "  rebuilds the index after every task has ended (afterany); the scripts and the logs\n"
     "  go into <output>/slurm/, with N fixed in them (resubmit one task: sbatch --array=K)\n"
     "\n"
     "options:\n"
     "  --slurm                           submit with sbatch (required: the only scheduler)\n"
     "  --tasks N                         array tasks = shards (default: runs, at most 16)\n"
     "  --sbatch-args \"...\"              extra sbatch options for both jobs, split on blanks\n"
     "  -n, --dry-run                     write the scripts, print the sbatch commands, submit nothing\n"
     "  -o, --output DIR                  output folder (default: the file's output, or runs/<name>)\n"
     "  --set KEY.PATH=VALUE              one more fixed override for every run (repeatable)\n"
     "  -h, --help                        this help\n"
     "\n"
     "exit status: 0 submitted (or written, with --dry-run), 1 sbatch failed, 2 bad input\n",
     cmd_submit},
    {"bench", "bench [contact|ccd|bvh] [options]", "standard timing table (CSV)",
     "usage: clothbench bench [options]\n"
     "       clothbench bench contact|ccd|bvh [--quick] [-o FILE]\n"
     "  the standard timing table (CSV): every solver on the standard scenes at 1k..64k\n"
     "  vertices, one line per finished row on stderr; or the CCD and BVH timings of the\n"
     "  contact library\n"
     "\n"
     "options:\n"
     "  --quick                           1k vertices only, fewer steps\n"
     "  -o, --output FILE                 write the CSV to FILE (default stdout)\n"
     "  -s, --solver NAME                 only this solver (repeatable)\n"
     "  --case NAME                       only this case: hanging, drape_sphere_contact, curtain (repeatable)\n"
     "  --steps N                         steps per run\n"
     "  --repeats N                       runs per row (the median is reported)\n"
     "  --max-vertices N                  skip larger sizes\n"
     "  --size N                          grid N x N instead of the standard sizes (repeatable)\n"
     "  --set KEY.PATH=VALUE              override a scene value in every row (repeatable)\n"
     "  -q, --quiet                       no progress lines on stderr\n"
     "  -h, --help                        this help\n"
     "\n"
     "exit status: 0 every row ok, 1 a row failed, 2 bad input\n",
     cmd_bench},
    {"elastica", "elastica [options]", "the cantilever's elastica under its own weight (CSV)",
     "usage: clothbench elastica [options]\n"
     "  the inextensible elastica of a strip clamped horizontally and bent by its own weight\n"
     "  (Peirce's cantilever, ASTM D1388), solved by shooting, against Gamma = rho_A g L^3 / B:\n"
     "  CSV gamma, root_curvature (theta'(0) L), tip_slope_deg, chord_deg (clamp-to-tip chord\n"
     "  below the horizontal: Peirce's and ASTM's angle), tip_x and tip_drop (over L)\n"
     "\n"
     "options:\n"
     "  --min G, --max G                  the Gamma range, log-spaced (default 0.1, 100)\n"
     "  --points N                        rows (default 61)\n"
     "  --chord DEG                       instead: the Gamma whose chord angle is DEG, and\n"
     "                                    overhang / bending length = Gamma^(1/3) (41.5: ASTM)\n"
     "  -o, --output FILE                 write to FILE (default stdout)\n"
     "  -h, --help                        this help\n"
     "\n"
     "exit status: 0 written, 1 no solution, 2 bad input\n",
     cmd_elastica},
    {"help", "help [COMMAND]", "the options of a command (= clothbench COMMAND --help)",
     "usage: clothbench help [COMMAND]\n"
     "  the options of COMMAND; without one, every command\n"
     "\n"
     "options:\n"
     "  -h, --help                        this help\n",
     cmd_help},
};

static const command *find_command(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(commands[i].name, name)) return &commands[i];
    return NULL;
}

static int cmd_help(int argc, char **argv)
{
    const command *about = NULL;
    int help = 0;
    for (int i = 0; i < argc; i++) {
        if (is_help(argv[i])) help = 1;
        else if (argv[i][0] == '-' && argv[i][1]) return bad_usage("unknown option '%s'", argv[i]);
        else if (about) return bad_usage("unexpected argument '%s'", argv[i]);
        else if (!(about = find_command(argv[i]))) return bad_usage("unknown command '%s'", argv[i]);
    }
    if (help) return show_help();
    if (!about) {
        print_usage(stdout);
        return 0;
    }
    current = about;
    return show_help();
}

/* The overview: every subcommand with its synopsis. */
static void print_usage(FILE *f)
{
    fprintf(f, "usage: clothbench <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-36s %s\n", commands[i].synopsis, commands[i].summary);
    fprintf(f, "\n`clothbench COMMAND --help` lists a command's options.\n"
               "exit status: 0 ok, 1 run failed (diverged, error, interrupted), 2 bad input\n");
}

/* OpenBLAS (behind CHOLMOD) starts one thread per core by default; clothbench compares
 * methods single-threaded, and BLAS threads spinning beside a sweep's workers cost more
 * than they give. CLOTHBENCH_BLAS_THREADS=N overrides. */
void openblas_set_num_threads(int num_threads);

int main(int argc, char **argv)
{
    /* No HDF5 cleanup at exit: after a failed write (a full disk) HDF5 1.10's own atexit
     * handler crashed closing the file again (exit 139); files are closed explicitly. */
    H5dont_atexit();
    const char *bt = getenv("CLOTHBENCH_BLAS_THREADS");
    openblas_set_num_threads(bt && atoi(bt) > 0 ? atoi(bt) : 1);
#ifdef _OPENMP
    /* likewise one OpenMP thread unless asked (results do not depend on the count) */
    if (!getenv("OMP_NUM_THREADS")) omp_set_num_threads(1);
#endif
    if (argc < 2) {
        print_usage(stderr);
        return 2;
    }
    if (is_help(argv[1])) {
        print_usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("clothbench %s\n", CB_VERSION);
        return 0;
    }
    cb_provenance_set_command_line(argc, argv);
    if (!(current = find_command(argv[1]))) return bad_usage("unknown command '%s'", argv[1]);
    return current->fn(argc - 2, argv + 2);
}
