/* experiments/main.c — the clothbench program.
 *
 *   clothbench list                               solvers and bundled scenes
 *   clothbench run SCENE --solver NAME [-o RUN.h5] [--set k=v]... [--quiet] [--no-frames]
 *   clothbench info RUN.h5                        one-screen summary of a run
 *
 * Exit status: 0 ok, 1 run failed (diverged, error, interrupted), 2 bad input.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/run.h"
#include "core/scene.h"
#include "core/solver.h"
#include "experiments/info.h"

#ifndef CB_DATA_DIR
#define CB_DATA_DIR "data"
#endif

static const char *usage =
    "usage: clothbench <command> [options]\n"
    "\n"
    "commands:\n"
    "  list                                  solvers and bundled scenes\n"
    "  run SCENE --solver NAME [options]     run one scene with one solver, write a run file\n"
    "      -o, --output RUN.h5               run file (default runs/<scene>-<solver>.h5)\n"
    "      --set KEY.PATH=VALUE              override a scene value (repeatable)\n"
    "      --no-frames                       do not write /frames (series only)\n"
    "      -q, --quiet                       no progress bar, no summary\n"
    "  info RUN.h5                           one-screen summary of a run file\n"
    "\n"
    "exit status: 0 ok, 1 run failed (diverged, error, interrupted), 2 bad input\n";

static int bad_usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "clothbench: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n\n%s", usage);
    return 2;
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

static int cmd_list(void)
{
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
    if (argc != 1) return bad_usage("info takes exactly one run file%s", "");
    cb_run_summary s;
    cb_error e;
    int rc = cb_run_summary_read(argv[0], &s, &e);
    if (rc) {
        print_error(&e);
        return 2;
    }
    cb_run_summary_print(&s, argv[0], stdout);
    return 0;
}

static int cmd_run(int argc, char **argv)
{
    cb_run_def def = cb_default_run_def();
    const char **sets = calloc((size_t)argc + 1, sizeof *sets);
    int quiet = 0;
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
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = 1;
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
    if (rc && res.frames == 0) { /* failed before the run started: bad scene, solver, parameters or path */
        print_error(&e);
        return 2;
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

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("clothbench %s\n", CB_VERSION);
        return 0;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "list")) return cmd_list();
    if (!strcmp(cmd, "run")) return cmd_run(argc - 2, argv + 2);
    if (!strcmp(cmd, "info")) return cmd_info(argc - 2, argv + 2);
    return bad_usage("unknown command '%s'", cmd);
}
