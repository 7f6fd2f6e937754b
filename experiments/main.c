/* experiments/main.c — the clothbench program.
 *
 *   clothbench list [--params [SOLVER]]           solvers and bundled scenes; every solver parameter
 *   clothbench run SCENE --solver NAME [-o RUN.h5] [--set k=v]... [--quiet] [--no-frames] [--max-memory SIZE]
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
#include <sys/stat.h>
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

/* ---- options: one table per command is both its parser and its help ---- */

typedef enum { OPT_FLAG, OPT_STR, OPT_INT, OPT_LIST } opt_kind;

/* One option of a command: its spellings, its value's name in the help (a flag: what
 * may follow it, shown only), its help (lines after the first are indented under it),
 * what it takes (a flag, a string, an integer >= lo, a string per use) . A command's
 * options are an array indexed by its own enum, so the command reads them by name. A
 * value follows as the next argument, or after '=' (--solver=fms), or joined to a
 * one-letter option (-j2). */
typedef struct option {
    const char *shrt;  /* "-o", or NULL */
    const char *lng;   /* "--output" */
    const char *arg;
    const char *help;
    opt_kind kind;
    int lo;            /* OPT_INT: the least value */
} option;

/* What the command line gave an option: how often, the value (OPT_STR: the last one),
 * the integer (OPT_INT), every value in order (OPT_LIST; cb_calloc'd, free_options). */
typedef struct opt_value {
    int given;
    const char *s;
    int i;
    const char **list;
    int n;
} opt_value;

/* One subcommand: its name, a one-line synopsis and summary for the overview, its help
 * (`clothbench NAME --help`, `clothbench help NAME`: the usage lines, then its options
 * from its table, then the tail) and the function that runs it. Every command takes
 * -h/--help: it parses the other arguments first (an unknown option is still an error,
 * exit 2), then prints the help and returns 0. A new subcommand is one row of
 * `commands` below. */
typedef struct command {
    const char *name;
    const char *synopsis; /* arguments, for the overview */
    const char *summary;  /* what it does, for the overview */
    const char *usage;    /* "usage: ..." and what it does */
    const option *opts;
    int nopts;
    const char *tail;     /* after the options (the exit status), or NULL */
    int (*fn)(int argc, char **argv);
} command;

#define OPT_COUNT(t) (sizeof t / sizeof t[0])
#define OPTS(t) t, (int)OPT_COUNT(t)

static const command *current; /* the subcommand being run (for its usage), or NULL */

static void print_usage(FILE *f);

/* The help of a command: its usage, its options from the table, -h/--help, its tail. */
static void print_help(const command *c, FILE *f)
{
    fputs(c->usage, f);
    fputs("\noptions:\n", f);
    for (int k = 0; k <= c->nopts; k++) {
        const option help = {"-h", "--help", NULL, "this help", OPT_FLAG, 0};
        const option *o = k < c->nopts ? &c->opts[k] : &help;
        char names[128];
        snprintf(names, sizeof names, "%s%s%s%s%s", o->shrt ? o->shrt : "", o->shrt ? ", " : "", o->lng,
                 o->arg ? " " : "", o->arg ? o->arg : "");
        fprintf(f, "  %-33s ", names);
        for (const char *p = o->help; *p; p++) {
            fputc(*p, f);
            if (*p == '\n') fprintf(f, "%36s", "");
        }
        fputc('\n', f);
    }
    if (c->tail) fprintf(f, "\n%s", c->tail);
}

static int bad_usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "clothbench%s%s: ", current ? " " : "", current ? current->name : "");
    fprintf(stderr, fmt, arg);
    fputs("\n\n", stderr);
    if (current) print_help(current, stderr);
    else print_usage(stderr);
    return 2;
}

static int is_help(const char *a) { return !strcmp(a, "-h") || !strcmp(a, "--help"); }

/* The help of the current subcommand on stdout; exit status 0. */
static int show_help(void)
{
    print_help(current, stdout);
    return 0;
}

static void print_error(const cb_error *e)
{
    fprintf(stderr, "clothbench: error: %s\n", e->message);
    if (getenv("CB_DEBUG")) fprintf(stderr, "  (reported at %s)\n", e->where);
}

/* A number in (lo, hi) (hi_open: below hi, else up to hi) from an option's value; -1 if it is not. */
static int parse_range(const char *text, double lo, double hi, int hi_open, double *out)
{
    char *end = NULL;
    double v = strtod(text, &end);
    if (end == text || *end || !(v > lo) || !(hi_open ? v < hi : v <= hi)) return -1;
    *out = v;
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

/* The option of the table that `a` spells (*val: a value given with it), -1 if none. */
static int match_option(const option *opts, int nopts, const char *a, const char **val)
{
    *val = NULL;
    for (int k = 0; k < nopts; k++) {
        const option *o = &opts[k];
        size_t n = strlen(o->lng);
        if (!strcmp(a, o->lng) || (o->shrt && !strcmp(a, o->shrt))) return k;
        if (o->kind != OPT_FLAG && !strncmp(a, o->lng, n) && a[n] == '=') {
            *val = a + n + 1;
            return k;
        }
        if (o->kind != OPT_FLAG && o->shrt && !strncmp(a, o->shrt, 2) && a[2]) {
            *val = a + 2;
            return k;
        }
    }
    return -1;
}

static void free_options(opt_value *v, int nopts)
{
    for (int k = 0; k < nopts; k++) free(v[k].list);
}

/* Parses argv by the current command's table into v (one per option) and at most
 * maxpos positional arguments into pos (*npos of them); -h/--help sets *help. An unknown
 * option, a missing or bad value, or one positional argument too many is a usage error,
 * also with --help. Returns 0 or the exit status of the usage error (v is then freed). */
static int parse_options(int argc, char **argv, opt_value *v, const char **pos, int maxpos, int *npos, int *help)
{
    const command *c = current;
    memset(v, 0, (size_t)c->nopts * sizeof *v);
    *npos = 0;
    *help = 0;
    int rc = 0;
    char msg[256];
    for (int i = 0; i < argc && !rc; i++) {
        const char *a = argv[i], *val = NULL;
        if (is_help(a)) {
            *help = 1;
            continue;
        }
        if (a[0] != '-' || !a[1]) {
            if (*npos < maxpos) pos[(*npos)++] = a;
            else rc = bad_usage("unexpected argument '%s'", a);
            continue;
        }
        int k = match_option(c->opts, c->nopts, a, &val);
        if (k < 0) {
            rc = bad_usage("unknown option '%s'", a);
            continue;
        }
        const option *o = &c->opts[k];
        v[k].given++;
        if (o->kind == OPT_FLAG) continue;
        if (!val && i + 1 < argc) val = argv[++i];
        if (!val) {
            snprintf(msg, sizeof msg, "%s needs %s", a, o->arg);
            rc = bad_usage("%s", msg);
        } else if (o->kind == OPT_STR) {
            v[k].s = val;
        } else if (o->kind == OPT_INT) {
            if (parse_int(val, o->lo, &v[k].i)) {
                snprintf(msg, sizeof msg, "%s needs %s, an integer >= %d (got '%.100s')", a, o->arg, o->lo, val);
                rc = bad_usage("%s", msg);
            }
        } else {
            if (!v[k].list && !(v[k].list = cb_calloc((size_t)argc + 1, sizeof *v[k].list)))
                rc = bad_usage("out of memory%s", "");
            else
                v[k].list[v[k].n++] = val;
        }
    }
    if (rc) free_options(v, c->nopts);
    return rc;
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

enum { LIST_PARAMS };
static const option list_options[] = {
    [LIST_PARAMS] = {NULL, "--params", "[SOLVER]", "every parameter of every solver (or of SOLVER): type,\n"
                                                    "default, range or choices, meaning", OPT_FLAG, 0},
};

/* The .yaml files of dir/sub (sub "" or "name/") into names[n..max), as "sub" + file
 * name, and those of its subfolders one level down (data/scenes/gauntlet/). The new n. */
static int scene_names(const char *dir, const char *sub, char **names, int n, int max)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, sub);
    DIR *d = opendir(path);
    if (!d) return n;
    struct dirent *de;
    while ((de = readdir(d)) && n < max) {
        size_t l = strlen(de->d_name);
        char name[1024];
        snprintf(name, sizeof name, "%s%s", sub, de->d_name);
        if (l > 5 && !strcmp(de->d_name + l - 5, ".yaml")) {
            char *copy = strdup(name);
            if (copy) names[n++] = copy;
        } else if (!*sub && de->d_name[0] != '.') {
            struct stat st;
            snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
            if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
                snprintf(name, sizeof name, "%s/", de->d_name);
                n = scene_names(dir, name, names, n, max);
            }
        }
    }
    closedir(d);
    return n;
}

static int cmd_list(int argc, char **argv)
{
    opt_value v[1];
    const char *only = NULL;
    int npos, help, rc = parse_options(argc, argv, v, &only, 1, &npos, &help);
    if (rc) return rc;
    int params = v[LIST_PARAMS].given;
    free_options(v, current->nopts);
    if (npos && !params) return bad_usage("unexpected argument '%s'", only);
    if (help) return show_help();
    if (params) return list_params(npos ? only : NULL);
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
    closedir(d);
    char *names[512];
    int n = scene_names(dir, "", names, 0, 512);
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
    opt_value v[1];
    const char *path = NULL;
    int npos, help, rc = parse_options(argc, argv, v, &path, 1, &npos, &help);
    if (rc) return rc;
    if (help) return show_help();
    if (!path) return bad_usage("info takes exactly one run file%s", "");
    cb_run_summary s;
    cb_error e;
    rc = cb_run_summary_read(path, &s, &e);
    if (rc) {
        print_error(&e);
        return 2;
    }
    cb_run_summary_print(&s, path, stdout);
    return 0;
}

/* "1.5G", "300M", "4096": bytes (suffixes k, M, G, T are powers of 1024); -1 if not a size. */
static double parse_bytes(const char *text)
{
    char *end = NULL;
    double v = strtod(text, &end);
    if (end == text || !isfinite(v)) return -1;
    const char *units = "kMGT";
    const char *u = *end ? strchr(units, *end) : NULL;
    if (u) {
        v *= pow(1024.0, (double)(u - units + 1));
        end++;
    }
    return *end ? -1 : v;
}

enum { RUN_SOLVER, RUN_OUTPUT, RUN_SET, RUN_NO_FRAMES, RUN_AUDIT, RUN_REFERENCE, RUN_MAX_MEMORY, RUN_QUIET };
static const option run_options[] = {
    [RUN_SOLVER] = {"-s", "--solver", "NAME", "the solver (see clothbench list); required", OPT_STR, 0},
    [RUN_OUTPUT] = {"-o", "--output", "RUN.h5", "run file (default runs/<scene>-<solver>.h5)", OPT_STR, 0},
    [RUN_SET] = {NULL, "--set", "KEY.PATH=VALUE", "override a scene value (repeatable)", OPT_LIST, 0},
    [RUN_NO_FRAMES] = {NULL, "--no-frames", NULL, "do not write /frames (series only)", OPT_FLAG, 0},
    [RUN_AUDIT] = {NULL, "--audit", NULL, "count crossings inside every step (= --set audit=true)", OPT_FLAG, 0},
    [RUN_REFERENCE] = {NULL, "--reference", "REF.h5", "the series position_error against this reference\n"
                                                      "(clothbench reference) at its frame times", OPT_STR, 0},
    [RUN_MAX_MEMORY] = {NULL, "--max-memory", "SIZE", "refuse a scene whose memory estimate exceeds SIZE\n"
                                                     "(bytes; k, M, G, T: powers of 1024); default: the\n"
                                                     "MemAvailable of /proc/meminfo", OPT_STR, 0},
    [RUN_QUIET] = {"-q", "--quiet", NULL, "no progress bar, no summary", OPT_FLAG, 0},
};

static int cmd_run(int argc, char **argv)
{
    opt_value v[OPT_COUNT(run_options)];
    const char *scene = NULL;
    int npos, help, rc = parse_options(argc, argv, v, &scene, 1, &npos, &help);
    if (rc) return rc;
    cb_run_def def = cb_default_run_def();
    def.scene_path = scene;
    def.solver = v[RUN_SOLVER].s;
    def.output = v[RUN_OUTPUT].s;
    def.write_frames = !v[RUN_NO_FRAMES].given;
    def.reference = v[RUN_REFERENCE].s;
    int quiet = v[RUN_QUIET].given;
    const char *max_memory = v[RUN_MAX_MEMORY].s;
    if (max_memory) def.max_memory = parse_bytes(max_memory);
    /* the --set values, then --audit as one more (recorded in the run file's scene text) */
    const char **sets = cb_calloc((size_t)v[RUN_SET].n + 2, sizeof *sets);
    if (!sets) rc = bad_usage("out of memory%s", "");
    else if (help) rc = show_help();
    else if (max_memory && !(def.max_memory > 0))
        rc = bad_usage("--max-memory needs a size in bytes > 0 (a suffix k, M, G or T: powers of 1024), got '%s'",
                       max_memory);
    else if (!def.scene_path) rc = bad_usage("run needs a scene file%s", "");
    else if (!def.solver) rc = bad_usage("run needs --solver NAME (see clothbench list)%s", "");
    if (rc || help) {
        free(sets);
        free_options(v, current->nopts);
        return rc;
    }
    for (int k = 0; k < v[RUN_SET].n; k++) sets[def.nsets++] = v[RUN_SET].list[k];
    if (v[RUN_AUDIT].given) sets[def.nsets++] = "audit=true";
    free_options(v, current->nopts);
    def.sets = sets;
    def.progress = !quiet;
    char outbuf[4096];
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
    rc = cb_run(&def, &res, &e);
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

enum { RERUN_OUTPUT, RERUN_CHECK, RERUN_SCENE_DIR, RERUN_QUIET };
static const option rerun_options[] = {
    [RERUN_OUTPUT] = {"-o", "--output", "NEW.h5", "the new run file (default RUN.rerun.h5)", OPT_STR, 0},
    [RERUN_CHECK] = {NULL, "--check", NULL, "compare with the old file: identical, or the first\n"
                                            "differing row and metric, and whether the build differs", OPT_FLAG, 0},
    [RERUN_SCENE_DIR] = {NULL, "--scene-dir", "DIR", "resolve the scene's files against DIR (they moved)", OPT_STR, 0},
    [RERUN_QUIET] = {"-q", "--quiet", NULL, "no progress bar", OPT_FLAG, 0},
};

/* Exit status: 0 identical (or ran, without --check), 1 differs or the rerun failed,
 * 2 bad input. */
static int cmd_rerun(int argc, char **argv)
{
    opt_value v[OPT_COUNT(rerun_options)];
    cb_rerun_def def = {0};
    int npos, help, rc = parse_options(argc, argv, v, &def.run_path, 1, &npos, &help);
    if (rc) return rc;
    def.output = v[RERUN_OUTPUT].s;
    def.scene_dir = v[RERUN_SCENE_DIR].s;
    def.check = v[RERUN_CHECK].given > 0;
    def.quiet = v[RERUN_QUIET].given > 0;
    free_options(v, current->nopts);
    if (help) return show_help();
    if (!def.run_path) return bad_usage("rerun needs a run file%s", "");
    cb_run_install_signal_handlers();
    cb_rerun_result res;
    cb_error e;
    cb_error_clear(&e);
    rc = cb_rerun(&def, &res, stdout, &e);
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

enum { SWEEP_JOBS, SWEEP_SHARD, SWEEP_DRY_RUN, SWEEP_OUTPUT, SWEEP_SET, SWEEP_INDEX, SWEEP_CHECK, SWEEP_NO_FRAMES,
       SWEEP_QUIET };
static const option sweep_options[] = {
    [SWEEP_JOBS] = {"-j", "--jobs", "N", "N worker processes (default 1)", OPT_INT, 1},
    [SWEEP_SHARD] = {NULL, "--shard", "I/N", "only runs whose index mod N is I (0 <= I < N)", OPT_STR, 0},
    [SWEEP_DRY_RUN] = {"-n", "--dry-run", NULL, "list the runs (and whether each would run), run nothing", OPT_FLAG, 0},
    [SWEEP_OUTPUT] = {"-o", "--output", "DIR", "output folder (default: the file's output, or runs/<name>)", OPT_STR, 0},
    [SWEEP_SET] = {NULL, "--set", "KEY.PATH=VALUE", "one more fixed override for every run (repeatable)", OPT_LIST, 0},
    [SWEEP_INDEX] = {NULL, "--index", NULL, "only rewrite index.csv and index.h5 from the run files", OPT_FLAG, 0},
    [SWEEP_CHECK] = {NULL, "--check", NULL, "rerun every run from its file and compare (as rerun\n"
                                            "--check); <run>.check and the index column checked\n"
                                            "say identical or what differs; runs nothing new", OPT_FLAG, 0},
    [SWEEP_NO_FRAMES] = {NULL, "--no-frames", NULL, "run files without /frames", OPT_FLAG, 0},
    [SWEEP_QUIET] = {"-q", "--quiet", NULL, "no line per finished run, no progress", OPT_FLAG, 0},
};

static int cmd_sweep(int argc, char **argv)
{
    opt_value v[OPT_COUNT(sweep_options)];
    const char *path = NULL;
    int npos, help, rc = parse_options(argc, argv, v, &path, 1, &npos, &help);
    if (rc) return rc;
    cb_sweep_options o = cb_default_sweep_options();
    const char *output = v[SWEEP_OUTPUT].s, **sets = v[SWEEP_SET].list;
    int nsets = v[SWEEP_SET].n;
    if (v[SWEEP_JOBS].given) o.jobs = v[SWEEP_JOBS].i;
    o.dry_run = v[SWEEP_DRY_RUN].given > 0;
    o.index_only = v[SWEEP_INDEX].given > 0;
    o.check = v[SWEEP_CHECK].given > 0;
    if (v[SWEEP_NO_FRAMES].given) o.write_frames = 0;
    if (v[SWEEP_QUIET].given) {
        o.quiet = 1;
        o.progress = 0;
    }
    if (v[SWEEP_SHARD].given && parse_shard(v[SWEEP_SHARD].s, &o.shard, &o.nshards)) {
        rc = bad_usage("--shard needs I/N with 0 <= I < N (got '%s')", v[SWEEP_SHARD].s);
        goto out;
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
    free_options(v, current->nopts);
    return rc;
}


enum { SUBMIT_SLURM, SUBMIT_TASKS, SUBMIT_SBATCH_ARGS, SUBMIT_DRY_RUN, SUBMIT_OUTPUT, SUBMIT_SET };
static const option submit_options[] = {
    [SUBMIT_SLURM] = {NULL, "--slurm", NULL, "submit with sbatch (required: the only scheduler)", OPT_FLAG, 0},
    [SUBMIT_TASKS] = {NULL, "--tasks", "N", "array tasks = shards (default: runs, at most 16)", OPT_INT, 1},
    [SUBMIT_SBATCH_ARGS] = {NULL, "--sbatch-args", "\"...\"", "extra sbatch options for both jobs, split on blanks",
                            OPT_STR, 0},
    [SUBMIT_DRY_RUN] = {"-n", "--dry-run", NULL, "write the scripts, print the sbatch commands, submit nothing",
                        OPT_FLAG, 0},
    [SUBMIT_OUTPUT] = {"-o", "--output", "DIR", "output folder (default: the file's output, or runs/<name>)", OPT_STR, 0},
    [SUBMIT_SET] = {NULL, "--set", "KEY.PATH=VALUE", "one more fixed override for every run (repeatable)", OPT_LIST, 0},
};

static int cmd_submit(int argc, char **argv)
{
    opt_value v[OPT_COUNT(submit_options)];
    const char *path = NULL;
    int npos, help, rc = parse_options(argc, argv, v, &path, 1, &npos, &help);
    if (rc) return rc;
    cb_submit_options o = {0};
    const char *output = v[SUBMIT_OUTPUT].s, **sets = v[SUBMIT_SET].list;
    int nsets = v[SUBMIT_SET].n, slurm = v[SUBMIT_SLURM].given > 0;
    o.tasks = v[SUBMIT_TASKS].i;
    o.sbatch_args = v[SUBMIT_SBATCH_ARGS].s;
    o.dry_run = v[SUBMIT_DRY_RUN].given > 0;
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
    free_options(v, current->nopts);
    return rc;
}

enum { REF_REFINE, REF_DT, REF_METHOD, REF_MAX_CHECK, REF_OUTPUT, REF_SET, REF_QUIET };
static const option reference_options[] = {
    [REF_REFINE] = {NULL, "--refine", "Q", "dt_ref = scene dt / Q (default 16)", OPT_INT, 1},
    [REF_DT] = {NULL, "--dt", "DT", "dt_ref = DT (must divide the scene's dt)", OPT_STR, 0},
    [REF_METHOD] = {NULL, "--method", "M", "auto (default: ipc with colliders, else verlet), verlet or ipc\n"
                                           "(ipc also for self contact without colliders)", OPT_STR, 0},
    [REF_MAX_CHECK] = {NULL, "--max-check", "D", "end the reference at the first frame where it and the same at\n"
                                                 "half its step differ by more than D m (default 1e-3): its\n"
                                                 "window; refused when that is its first frame", OPT_STR, 0},
    [REF_OUTPUT] = {"-o", "--output", "REF.h5", "the reference (default runs/<scene>-reference.h5)", OPT_STR, 0},
    [REF_SET] = {NULL, "--set", "KEY.PATH=VALUE", "override a scene value (repeatable)", OPT_LIST, 0},
    [REF_QUIET] = {"-q", "--quiet", NULL, "no progress, no summary", OPT_FLAG, 0},
};

static int cmd_reference(int argc, char **argv)
{
    opt_value v[OPT_COUNT(reference_options)];
    const char *path = NULL;
    int npos, help, rc = parse_options(argc, argv, v, &path, 1, &npos, &help);
    if (rc) return rc;
    cb_reference_def d = {0};
    const char **sets = v[REF_SET].list;
    int nsets = v[REF_SET].n;
    double dtref = 0;
    d.refine = v[REF_REFINE].given ? v[REF_REFINE].i : CB_REFERENCE_REFINE;
    d.output = v[REF_OUTPUT].s;
    d.quiet = v[REF_QUIET].given > 0;
    if (v[REF_DT].given) {
        if (parse_range(v[REF_DT].s, 0.0, INFINITY, 0, &dtref)) {
            rc = bad_usage("--dt needs a step > 0 in seconds (got '%s')", v[REF_DT].s);
            goto out;
        }
    }
    if (v[REF_METHOD].given) {
        static const char *const methods[] = {"auto", "verlet", "ipc"};
        d.method = -1;
        for (int k = 0; k < 3; k++)
            if (!strcmp(v[REF_METHOD].s, methods[k])) d.method = k;
        if (d.method < 0) {
            rc = bad_usage("--method must be auto, verlet or ipc (got '%s')", v[REF_METHOD].s);
            goto out;
        }
    }
    if (v[REF_MAX_CHECK].given && parse_range(v[REF_MAX_CHECK].s, 0.0, INFINITY, 0, &d.max_check)) {
        rc = bad_usage("--max-check needs a distance > 0 in metres (got '%s')", v[REF_MAX_CHECK].s);
        goto out;
    }
    if (help) {
        rc = show_help();
        goto out;
    }
    rc = 2;
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
    int e = cb_reference_make(&d, stdout, &D, NULL, &err);
    if (e) {
        print_error(&err);
        rc = e == CB_ERR_INPUT ? 2 : 1;
    } else {
        rc = 0;
    }
out:
    free_options(v, current->nopts);
    return rc;
}

enum { BENCH_QUICK, BENCH_OUTPUT, BENCH_SOLVER, BENCH_CASE, BENCH_STEPS, BENCH_REPEATS, BENCH_MAX_VERTICES,
       BENCH_SIZE, BENCH_SET, BENCH_QUIET };
static const option bench_options[] = {
    [BENCH_QUICK] = {NULL, "--quick", NULL, "1k vertices only, fewer steps", OPT_FLAG, 0},
    [BENCH_OUTPUT] = {"-o", "--output", "FILE", "write the CSV to FILE (default stdout)", OPT_STR, 0},
    [BENCH_SOLVER] = {"-s", "--solver", "NAME", "only this solver (repeatable)", OPT_LIST, 0},
    [BENCH_CASE] = {NULL, "--case", "NAME", "only this case: hanging, drape_sphere_contact, curtain (repeatable)",
                    OPT_LIST, 0},
    [BENCH_STEPS] = {NULL, "--steps", "N", "steps per run", OPT_INT, 1},
    [BENCH_REPEATS] = {NULL, "--repeats", "N", "runs per row (the median is reported)", OPT_INT, 1},
    [BENCH_MAX_VERTICES] = {NULL, "--max-vertices", "N", "skip larger sizes", OPT_INT, 1},
    [BENCH_SIZE] = {NULL, "--size", "N", "grid N x N instead of the standard sizes (repeatable)", OPT_LIST, 0},
    [BENCH_SET] = {NULL, "--set", "KEY.PATH=VALUE", "override a scene value in every row (repeatable)", OPT_LIST, 0},
    [BENCH_QUIET] = {"-q", "--quiet", NULL, "no progress lines on stderr", OPT_FLAG, 0},
};

static int cmd_bench(int argc, char **argv)
{
    opt_value v[OPT_COUNT(bench_options)];
    const char *what = NULL;
    int npos, help, rc = parse_options(argc, argv, v, &what, 1, &npos, &help);
    if (rc) return rc;
    cb_bench_options o = cb_default_bench_options();
    o.data_dir = data_dir();
    o.quick = v[BENCH_QUICK].given > 0;
    const char *output = v[BENCH_OUTPUT].s;
    static const char *const none[1] = {NULL};
    const char **solvers = v[BENCH_SOLVER].list ? v[BENCH_SOLVER].list : (const char **)none;
    const char **cases = v[BENCH_CASE].list ? v[BENCH_CASE].list : (const char **)none;
    const char **sets = v[BENCH_SET].list ? v[BENCH_SET].list : (const char **)none;
    o.nsolvers = v[BENCH_SOLVER].n;
    o.ncases = v[BENCH_CASE].n;
    o.nsets = v[BENCH_SET].n;
    int quiet = v[BENCH_QUIET].given > 0;
    if (v[BENCH_STEPS].given) o.steps = v[BENCH_STEPS].i;
    if (v[BENCH_REPEATS].given) o.repeats = v[BENCH_REPEATS].i;
    if (v[BENCH_MAX_VERTICES].given) o.max_vertices = v[BENCH_MAX_VERTICES].i;
    if (v[BENCH_SIZE].n > CB_BENCH_MAX_SIZES || v[BENCH_SET].n > CB_BENCH_MAX_SETS) {
        rc = bad_usage("at most 16 --size and 16 --set options%s", "");
        goto out;
    }
    for (int k = 0; k < v[BENCH_SIZE].n; k++)
        if (parse_int(v[BENCH_SIZE].list[k], 2, &o.sizes[o.nsizes++])) {
            rc = bad_usage("--size needs a grid size >= 2 (got '%s')", v[BENCH_SIZE].list[k]);
            goto out;
        }
    for (int k = 0; k < o.nsets; k++)
        if (!strchr(sets[k], '=')) {
            rc = bad_usage("--set needs KEY.PATH=VALUE (got '%s')", sets[k]);
            goto out;
        }
    if (what && strcmp(what, "contact") && strcmp(what, "ccd") && strcmp(what, "bvh")) {
        rc = bad_usage("unexpected argument '%s' (bench [contact|ccd|bvh] [options])", what);
        goto out;
    }
    if (help) {
        rc = show_help();
        goto out;
    }
    rc = 2;
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
    free_options(v, current->nopts);
    return rc;
}

static int cmd_help(int argc, char **argv);

/* `clothbench elastica`: the self-weighted cantilever's elastica (experiments/harness/elastica.h)
 * as CSV over log-spaced Gamma, or the Gamma of one chord angle. */
enum { ELASTICA_MIN, ELASTICA_MAX, ELASTICA_POINTS, ELASTICA_CHORD, ELASTICA_OUTPUT };
static const option elastica_options[] = {
    [ELASTICA_MIN] = {NULL, "--min", "G", "the least Gamma of the range, log-spaced (default 0.1)", OPT_STR, 0},
    [ELASTICA_MAX] = {NULL, "--max", "G", "the largest Gamma (default 100; at most 1000)", OPT_STR, 0},
    [ELASTICA_POINTS] = {NULL, "--points", "N", "rows (default 61)", OPT_INT, 2},
    [ELASTICA_CHORD] = {NULL, "--chord", "DEG", "instead: the Gamma whose chord angle is DEG, and\n"
                                                "overhang / bending length = Gamma^(1/3) (41.5: ASTM)", OPT_STR, 0},
    [ELASTICA_OUTPUT] = {"-o", "--output", "FILE", "write to FILE (default stdout)", OPT_STR, 0},
};

static int cmd_elastica(int argc, char **argv)
{
    opt_value v[OPT_COUNT(elastica_options)];
    const char *none = NULL;
    int npos, help, rc = parse_options(argc, argv, v, &none, 0, &npos, &help);
    if (rc) return rc;
    double gmin = 0.1, gmax = 100.0, chord = NAN;
    int points = v[ELASTICA_POINTS].given ? v[ELASTICA_POINTS].i : 61;
    const char *output = v[ELASTICA_OUTPUT].s;
    free_options(v, current->nopts);
    if (v[ELASTICA_MIN].s && parse_range(v[ELASTICA_MIN].s, 0.0, 1e3, 0, &gmin))
        return bad_usage("--min needs a Gamma in (0, 1000], got '%s'", v[ELASTICA_MIN].s);
    if (v[ELASTICA_MAX].s && parse_range(v[ELASTICA_MAX].s, 0.0, 1e3, 0, &gmax))
        return bad_usage("--max needs a Gamma in (0, 1000], got '%s'", v[ELASTICA_MAX].s);
    if (v[ELASTICA_CHORD].s && parse_range(v[ELASTICA_CHORD].s, 0.0, 90.0, 1, &chord))
        return bad_usage("--chord needs an angle in (0, 90) degrees, got '%s'", v[ELASTICA_CHORD].s);
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
     "  the registered solvers and the bundled scenes (CLOTHBENCH_DATA or ./data)\n",
     OPTS(list_options), NULL, cmd_list},
    {"run", "run SCENE --solver NAME [options]", "run one scene with one solver, write a run file",
     "usage: clothbench run SCENE --solver NAME [options]\n"
     "  run one scene with one solver and write a run file (HDF5, with an XDMF sidecar)\n",
     OPTS(run_options), "exit status: 0 ok, 1 the run failed (diverged, error, interrupted), 2 bad input\n", cmd_run},
    {"info", "info RUN.h5", "one-screen summary of a run file, with what made it",
     "usage: clothbench info RUN.h5\n"
     "  one-screen summary of a run file: solver, scene, status, energy, momentum,\n"
     "  penetration, the contact stage, the audit, self intersections, strain, time,\n"
     "  and what made it (commit, build, libraries, host)\n",
     NULL, 0, NULL, cmd_info},
    {"rerun", "rerun RUN.h5 [options]", "run again from what the run file records",
     "usage: clothbench rerun RUN.h5 [options]\n"
     "  run again from what the run file records (scene text, effective parameters);\n"
     "  report changed mesh files\n",
     OPTS(rerun_options), "exit status: 0 identical (or ran, without --check), 1 differs or the rerun failed, 2 bad input\n",
     cmd_rerun},
    {"sweep", "sweep EXPERIMENT.yaml [options]", "every run of an experiment file (resumable)",
     "usage: clothbench sweep EXPERIMENT.yaml [options]\n"
     "  every run of an experiment file, one run file each, and index.csv / index.h5\n"
     "  (resumable: runs already finished with the same scene are skipped)\n",
     OPTS(sweep_options), "exit status: 0 every run (of this shard) ok, 1 a run failed, 2 bad input\n", cmd_sweep},
    {"reference", "reference SCENE [options]", "a converged trajectory to measure runs against",
     "usage: clothbench reference SCENE [options]\n"
     "  a converged trajectory (velocity Verlet without colliders, ipc with them; damping 0,\n"
     "  at the scene's dt / refine), checked against the same at half that step at every frame\n"
     "  and kept up to the last frame where they differ by at most --max-check (its window);\n"
     "  runs measure their position_error and energy_error against it with run --reference\n",
     OPTS(reference_options), "exit status: 0 written, 1 a run failed, 2 bad input or refused (the check above its\n"
     "bound at the first frame, colliders with --method verlet)\n",
     cmd_reference},
    {"submit", "submit EXPERIMENT.yaml --slurm [options]", "a sweep as a Slurm job array plus a merge job",
     "usage: clothbench submit EXPERIMENT.yaml --slurm [options]\n"
     "  a sweep as a Slurm job array (task I runs sweep --shard I/N) and a merge job that\n"
     "  rebuilds the index after every task has ended (afterany); the scripts and the logs\n"
     "  go into <output>/slurm/, with N fixed in them (resubmit one task: sbatch --array=K)\n",
     OPTS(submit_options), "exit status: 0 submitted (or written, with --dry-run), 1 sbatch failed, 2 bad input\n",
     cmd_submit},
    {"bench", "bench [contact|ccd|bvh] [options]", "standard timing table (CSV)",
     "usage: clothbench bench [options]\n"
     "       clothbench bench contact|ccd|bvh [--quick] [-o FILE]\n"
     "  the standard timing table (CSV): every solver on the standard scenes at 1k..64k\n"
     "  vertices, one line per finished row on stderr; or the CCD and BVH timings of the\n"
     "  contact library\n",
     OPTS(bench_options), "exit status: 0 every row ok, 1 a row failed, 2 bad input\n", cmd_bench},
    {"elastica", "elastica [options]", "the cantilever's elastica under its own weight (CSV)",
     "usage: clothbench elastica [options]\n"
     "  the inextensible elastica of a strip clamped horizontally and bent by its own weight\n"
     "  (Peirce's cantilever, ASTM D1388), solved by shooting, against Gamma = rho_A g L^3 / B:\n"
     "  CSV gamma, root_curvature (theta'(0) L), tip_slope_deg, chord_deg (clamp-to-tip chord\n"
     "  below the horizontal: Peirce's and ASTM's angle), tip_x and tip_drop (over L)\n",
     OPTS(elastica_options), "exit status: 0 written, 1 no solution, 2 bad input\n", cmd_elastica},
    {"help", "help [COMMAND]", "the options of a command (= clothbench COMMAND --help)",
     "usage: clothbench help [COMMAND]\n"
     "  the options of COMMAND; without one, every command\n",
     NULL, 0, NULL, cmd_help},
};

static const command *find_command(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(commands[i].name, name)) return &commands[i];
    return NULL;
}

static int cmd_help(int argc, char **argv)
{
    opt_value v[1];
    const char *name = NULL;
    int npos, help, rc = parse_options(argc, argv, v, &name, 1, &npos, &help);
    if (rc) return rc;
    const command *about = name ? find_command(name) : NULL;
    if (name && !about) return bad_usage("unknown command '%s'", name);
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

int main(int argc, char **argv)
{
    /* No HDF5 cleanup at exit: after a failed write (a full disk) HDF5 1.10's own atexit
     * handler crashed closing the file again (exit 139); files are closed explicitly. */
    H5dont_atexit();
    /* OpenBLAS (behind CHOLMOD) is given its count by the solver around each call
     * (solvers/cholmod_util.h, the `threads` key of fms and newton), never here. pbd's
     * parallel sweeps take OpenMP's: one thread unless OMP_NUM_THREADS asks for more
     * (their results do not depend on the count); a sweep runs its workers side by side. */
#ifdef _OPENMP
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

