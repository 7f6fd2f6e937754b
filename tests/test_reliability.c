/* tests/test_reliability.c — input the program used to accept or mishandle (issue 22):
 * step counts that overflowed into a run of 0 steps, solver blocks naming no solver,
 * --set text that is not UTF-8, pin errors without a place, TetGen headers whose counts
 * overflowed an int, YAML written back that did not read back as the same tree, and a
 * second sweep on an output folder in use. */
#include "cb_test.h"

#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "core/tetmesh.h"
#include "core/yamltree.h"
#include "experiments/harness/registry.h"

static char out[65536];

#define cb(...) cb_test_clothbench(out, sizeof out, 1, __VA_ARGS__)

/* Exit 2, no run file, and the message holds `want`. */
static void refused(const char *args, const char *want)
{
    const char *path = cb_test_tmp_path("refused.h5");
    remove(path);
    int rc = cb("run data/scenes/free_flight.yaml --solver explicit -o %s -q %s", path, args);
    if (rc != 2 || !strstr(out, want)) fprintf(stderr, "  %s -> %d: %s\n", args, rc, out);
    CU_ASSERT_EQUAL(rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, want));
    CU_ASSERT_NOT_EQUAL(access(path, F_OK), 0);
}

static void test_bad_input_refused(void)
{
    /* 1e300 and 1e19 steps: the count overflowed a long and the run did nothing, "ok" */
    refused("--set dt=1e-300", "duration / dt = 1e+300 steps, at most 1e+12");
    refused("--set duration=1e9 --set dt=1e-10", "duration / dt = 1e+19 steps");
    /* a misspelt solver block was ignored: the run used the defaults */
    refused("--set solvers.pdb.iterations=40", "solvers.pdb: no solver is called 'pdb'; registered: explicit");
    /* not UTF-8: stored in the scene text, the run file could not be read again */
    refused("--set 'name=a\xff'", "override 1 is not valid UTF-8 (byte 7)");
    refused("--set 'name=\xc0\xaf'", "not valid UTF-8"); /* an overlong '/' */
    /* a pin from --set named FILE:0 */
    refused("--set 'cloth.pins=[{indices: [99999]}]'", "--set cloth.pins: pins: vertex index 99999 out of range");
    /* and the valid ones still run */
    const char *path = cb_test_tmp_path("fine.h5");
    CU_ASSERT_EQUAL(cb("run data/scenes/free_flight.yaml --solver explicit -o %s -q --set duration=0.01 "
                       "--set 'name=caf\xc3\xa9' --set dt=1e-6", path), 0);
}

/* TetGen headers with counts beyond an int are refused cleanly (UBSan saw a signed
 * overflow computing the values per line from them). */
static void test_tetgen_header_overflow(void)
{
    const char *node = cb_test_write_tmp("big.node", "4 3 2147483647 0\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 0 0 1\n");
    cb_test_write_tmp("big.ele", "1 4 0\n0 0 1 2 3\n");
    cb_tetmesh *tm = NULL;
    cb_error err;
    CU_ASSERT_EQUAL(cb_tetmesh_read_tetgen(node, &tm, &err), CB_ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "number of attributes: expected 0 to 1000, got 2147483647"));
    cb_test_write_tmp("big.node", "4 3 0 0\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 0 0 1\n");
    cb_test_write_tmp("big.ele", "1 4 2147483646\n0 0 1 2 3\n");
    CU_ASSERT_EQUAL(cb_tetmesh_read_tetgen(node, &tm, &err), CB_ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "number of attributes"));
    cb_test_write_tmp("big.ele", "1 4 0\n0 0 1 2 3\n");
    CU_ASSERT_EQUAL(cb_tetmesh_read_tetgen(node, &tm, &err), 0);
    cb_tetmesh_free(&tm);
}

static int same_tree(const cb_yaml *a, const cb_yaml *b)
{
    if (a->kind != b->kind || a->n != b->n) return 0;
    if (a->kind == CB_YAML_SCALAR) return !strcmp(a->scalar, b->scalar);
    for (int i = 0; i < a->n; i++) {
        if (a->kind == CB_YAML_MAP && strcmp(a->keys[i], b->keys[i])) return 0;
        if (!same_tree(a->items[i], b->items[i])) return 0;
    }
    return 1;
}

/* Written back (block and flow), every tree reads back the same: keys and values with
 * YAML line breaks (U+0085, U+2028, U+2029), C1 controls, a BOM inside, and flow
 * values that start with '?' or ':'. */
static void test_yaml_round_trip(void)
{
    const char *texts[] = {
        "\"a\\Nb\": \"x\\Ly\"\n\"p\\Pq\": 1\n",
        "k: [\"?x\", \":y\", \"-z\", \"?\", \"a:b\", \"c\\u0085\"]\n",
        "m: {\"?k\": \":v\", \":k2\": \"?v2\"}\n",
        "\"\\u0080\\u009f\": \"\\ufeffbom\"\n",
        "plain: caf\xc3\xa9 \xe2\x82\xac\n",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        cb_yaml *a = NULL, *b = NULL, *c = NULL;
        cb_error err;
        int rc = cb_yaml_load_string(texts[i], "t", &a, &err);
        if (rc) fprintf(stderr, "  %s\n", err.message);
        CU_ASSERT_EQUAL_FATAL(rc, 0);
        char *block = cb_yaml_emit(a), *flow = cb_yaml_emit_flow(a);
        CU_ASSERT_PTR_NOT_NULL_FATAL(block);
        CU_ASSERT_PTR_NOT_NULL_FATAL(flow);
        rc = cb_yaml_load_string(block, "block", &b, &err);
        if (rc) fprintf(stderr, "  block %s: %s\n", block, err.message);
        CU_ASSERT_EQUAL(rc, 0);
        rc = cb_yaml_load_string(flow, "flow", &c, &err);
        if (rc) fprintf(stderr, "  flow %s: %s\n", flow, err.message);
        CU_ASSERT_EQUAL(rc, 0);
        if (b) CU_ASSERT(same_tree(a, b));
        if (c) CU_ASSERT(same_tree(a, c));
        if ((b && !same_tree(a, b)) || (c && !same_tree(a, c)))
            fprintf(stderr, "  text %zu: block <%s> flow <%s>\n", i, block, flow);
        free(block);
        free(flow);
        cb_yaml_free(&a);
        cb_yaml_free(&b);
        cb_yaml_free(&c);
    }
}

/* A second sweep on a folder in use is refused, naming the first (a lock held by this
 * live test process stands in for it); a disjoint shard runs; a lock left by a process
 * that is gone is taken over. */
static void test_sweep_folder_lock(void)
{
    const char *dir = cb_test_tmp_path("locked");
    char exp[4096], cwd[2048], lock[4200], host[256] = "";
    CU_ASSERT_PTR_NOT_NULL_FATAL(getcwd(cwd, sizeof cwd));
    gethostname(host, sizeof host - 1);
    snprintf(exp, sizeof exp,
             "name: lk\noutput: %s\nscenes: [%s/data/scenes/free_flight.yaml]\nsolvers: [explicit]\n"
             "set: {duration: 0.01}\ngrid:\n  solvers.explicit.damping: [0.1, 0.2]\n", dir, cwd);
    const char *ef = cb_test_write_tmp("lk.yaml", exp);
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", dir);
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    snprintf(lock, sizeof lock, "%s/.sweep-lock-0-of-2", dir);
    FILE *f = fopen(lock, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fprintf(f, "%ld %s 2026-01-01T00:00:00Z\n", (long)getpid(), host);
    fclose(f);
    char want[512];
    snprintf(want, sizeof want, "another sweep uses this output folder (shard 0/2, pid %ld on %s", (long)getpid(), host);
    CU_ASSERT_EQUAL(cb("sweep %s -q", ef), 2);             /* 0/1 shares every run with 0/2 */
    CU_ASSERT_PTR_NOT_NULL(strstr(out, want));
    CU_ASSERT_EQUAL(cb("sweep %s -q --shard 2/4", ef), 2); /* 2 = 0 mod gcd(2, 4) */
    CU_ASSERT_EQUAL(cb("sweep %s -q --shard 1/2", ef), 0); /* disjoint: runs */
    CU_ASSERT_EQUAL(access(lock, F_OK), 0);                /* and leaves the other's lock alone */
    /* a lock whose process is gone (a pid above the kernel's pid_max) is stale */
    f = fopen(lock, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fprintf(f, "99999999 %s 2026-01-01T00:00:00Z\n", host);
    fclose(f);
    CU_ASSERT_EQUAL(cb("sweep %s -q", ef), 0);
    CU_ASSERT_NOT_EQUAL(access(lock, F_OK), 0);
    snprintf(lock, sizeof lock, "%s/.sweep-lock-0-of-1", dir);
    CU_ASSERT_NOT_EQUAL(access(lock, F_OK), 0);            /* released at the end */
}

/* A signal inside a long step ends the run within a bounded time with status
 * interrupted (the flag was only read between steps: acm ran 14 minutes on after
 * SIGINT, pbd's self query at dt 0.5 s took minutes). One step of this scene takes
 * minutes for explicit (4.4 million substeps), acm (events) and pbd (2000 substeps), and
 * with a million iterations for fms. */
static void test_signal_inside_step(void)
{
    const char *scene = cb_test_write_tmp("stiff.yaml",
        "name: stiff\nduration: 1.0\ndt: 0.5\ngravity: [0, 0, -9.81]\n"
        "cloth:\n  grid: {nx: 30, ny: 30, size: [1, 1], origin: [0, 0, 1]}\n"
        "  density: 1.0e-3\n  stretch: 1.0e7\n  bend: 1.0e-4\n  thickness: 0.002\n");
    /* A method's step is made long by its capabilities (core/solver.h): dt 0.5 when it
     * substeps (explicit, acm, pbd, avgforce), else a million iterations when it runs
     * exactly its `iterations` (fms; the flag is read between them). newton reads it
     * between iterations too, but stops at its round-off floor within a few iterations
     * whatever max_iterations says, so no step of it lasts long enough to test here. */
    for (int s = 0; s < cb_solver_count(); s++) {
        const cb_solver_class *cls = cb_solver_at(s);
        char set[128];
        if (cls->flags & CB_SOLVER_SUBSTEPS)
            snprintf(set, sizeof set, "dt=0.5");
        else if (cls->flags & CB_SOLVER_FIXED_ITERATIONS)
            snprintf(set, sizeof set, "solvers.%s.iterations=1000000", cls->name);
        else {
            fprintf(stderr, "  %-8s left out: no step of it can be made long\n", cls->name);
            continue;
        }
        const char *const solvers[] = {cls->name}, *const set1[] = {set};
        int i = 0;
        char file[64];
        snprintf(file, sizeof file, "stiff-%s.h5", solvers[i]);
        const char *path = cb_test_tmp_path(file);
        remove(path);
        pid_t pid = fork();
        CU_ASSERT_FATAL(pid >= 0);
        if (pid == 0) {
            freopen("/dev/null", "w", stderr);
            execl(cb_test_program(), "clothbench", "run", scene, "--solver", solvers[i], "-o", path, "-q", "--set",
                  set1[i], (char *)NULL);
            _exit(127);
        }
        struct timespec pause = {1, 500000000};
        nanosleep(&pause, NULL);
        kill(pid, SIGINT);
        double t0 = cb_wall_time();
        int st = 0;
        pid_t got = 0;
        while ((got = waitpid(pid, &st, WNOHANG)) == 0 && cb_wall_time() - t0 < 20.0) {
            struct timespec tick = {0, 20000000};
            nanosleep(&tick, NULL);
        }
        double took = cb_wall_time() - t0;
        if (got == 0) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
        }
        fprintf(stderr, "  %-8s stopped %.2f s after SIGINT\n", solvers[i], took);
        CU_ASSERT(got == pid);
        CU_ASSERT(took < 5.0);
        CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 1);
        CU_ASSERT_EQUAL(cb("info %s", path), 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "status     interrupted"));
    }
}

/* A full disk (here the file-size limit, ulimit -f, which needs no root; SIGXFSZ
 * ignored so writes fail with EFBIG as on ENOSPC): no crash (HDF5's exit handler
 * segfaulted, exit 139), exit 1, no empty file when the run file cannot even be
 * created, and a readable file with status error and the rows so far when the disk
 * fills during the run (a half-written flush made the file unreadable). */
static void test_disk_full(void)
{
    const char *a = cb_test_tmp_path("full-a.h5"), *b = cb_test_tmp_path("full-b.h5");
    remove(a);
    remove(b);
    int rc = cb_test_shell(out, sizeof out, "sh -c 'ulimit -f 100; trap \"\" XFSZ; exec %s run "
                           "data/scenes/drape_sphere.yaml --solver explicit -o %s --set duration=0.5 -q'",
                           cb_test_program(), a);
    if (rc != 1) fprintf(stderr, "  %s\n", out);
    CU_ASSERT_EQUAL(rc, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "full-a.h5"));
    CU_ASSERT_NOT_EQUAL(access(a, F_OK), 0); /* nothing half-made is left */
    rc = cb_test_shell(out, sizeof out, "sh -c 'ulimit -f 1100; trap \"\" XFSZ; exec %s run "
                       "data/scenes/drape_sphere.yaml --solver explicit -o %s --set duration=20 "
                       "--set cloth.grid.nx=15 --set cloth.grid.ny=15 -q'", cb_test_program(), b);
    if (rc != 1) fprintf(stderr, "  %s\n", out);
    CU_ASSERT_EQUAL(rc, 1);
    CU_ASSERT_EQUAL(cb("info %s", b), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "status     error:"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "the disk is nearly full"));
}

CB_TEST_MAIN("reliability",
             CB_TEST(test_bad_input_refused),
             CB_TEST(test_tetgen_header_overflow),
             CB_TEST(test_yaml_round_trip),
             CB_TEST(test_sweep_folder_lock),
             CB_TEST(test_signal_inside_step),
             CB_TEST(test_disk_full))
