/* tests/test_faults.c — every registered solver through the same fault table, the
 * program as a user runs it (issue 22):
 *   SIGKILL mid-run   the file stays readable with status running and the rows up to
 *                     the last flush; `info` says so (exit 0)
 *   full disk         (the file-size limit, ulimit -f) exit 1, no crash; the file, when
 *                     it could be created, is readable with status error
 *   out of memory     (the address-space limit, ulimit -v) at create: exit 1 with a
 *                     message, no crash, never status ok; left out under AddressSanitizer,
 *                     which reserves terabytes of address space at start
 * (SIGINT inside a long step is in tests/test_reliability.c for every solver whose step
 * can be made long.) */
#include "cb_test.h"

#include <signal.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "experiments/harness/registry.h"

static char out[65536];

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

#define cb(...) cb_test_clothbench(out, sizeof out, 1, __VA_ARGS__)

static void test_sigkill_then_reopen(void)
{
    for (int s = 0; s < cb_solver_count(); s++) {
        const char *name = cb_solver_at(s)->name;
        char file[64];
        snprintf(file, sizeof file, "kill-%s.h5", name);
        const char *path = cb_test_tmp_path(file);
        remove(path);
        fflush(NULL);
        pid_t pid = fork();
        CU_ASSERT_FATAL(pid >= 0);
        if (pid == 0) {
            if (!freopen("/dev/null", "w", stderr)) _exit(126);
            execl(cb_test_program(), "clothbench", "run", "data/scenes/drape_sphere.yaml", "--solver", name, "-o",
                  path, "-q", "--set", "duration=1000", "--set", "frame_rate=200", "--set", "cloth.grid.nx=12",
                  "--set", "cloth.grid.ny=12", (char *)NULL);
            _exit(127);
        }
        struct timespec pause = {1, 500000000};
        nanosleep(&pause, NULL);
        kill(pid, SIGKILL);
        int st;
        waitpid(pid, &st, 0);
        CU_ASSERT(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
        int rc = cb("info %s", path);
        if (rc) fprintf(stderr, "  %s: %s\n", name, out);
        CU_ASSERT_EQUAL(rc, 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "status     running"));
        long steps = -1;
        const char *r = strstr(out, "\nsteps");
        if (r) sscanf(r + 1, "steps %ld", &steps);
        fprintf(stderr, "  %-8s killed: status running, %ld steps readable\n", name, steps);
        if (!(steps > 0)) fprintf(stderr, "  %s: %s\n", name, out);
        CU_ASSERT(steps > 0); /* the rows up to the last flush */
    }
}

static void test_full_disk(void)
{
    for (int s = 0; s < cb_solver_count(); s++) {
        const char *name = cb_solver_at(s)->name;
        char file[64];
        snprintf(file, sizeof file, "full-%s.h5", name);
        const char *path = cb_test_tmp_path(file);
        remove(path);
        int rc = cb_test_shell(out, sizeof out, "sh -c 'ulimit -f 200; trap \"\" XFSZ; exec %s run "
                               "data/scenes/drape_sphere.yaml --solver %s -o %s --set duration=2 -q' 2>&1",
                               cb_test_program(), name, path);
        if (rc != 1) fprintf(stderr, "  %s: exit %d: %s\n", name, rc, out);
        CU_ASSERT_EQUAL(rc, 1);
        if (access(path, F_OK) == 0) {
            CU_ASSERT_EQUAL(cb("info %s", path), 0);
            CU_ASSERT_PTR_NOT_NULL(strstr(out, "status     error"));
        }
    }
}

static void test_out_of_memory_at_create(void)
{
    if (UNDER_ASAN) {
        printf("\n  left out under AddressSanitizer (its shadow memory needs the address space)\n");
        return;
    }
    for (int s = 0; s < cb_solver_count(); s++) {
        const char *name = cb_solver_at(s)->name;
        char file[64];
        snprintf(file, sizeof file, "oom-%s.h5", name);
        const char *path = cb_test_tmp_path(file);
        remove(path);
        /* 1.5 GB of address space; a 1500 x 1500 cloth needs more than that to create */
        int rc = cb_test_shell(out, sizeof out, "sh -c 'ulimit -v 1500000; OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 "
                               "exec %s run data/scenes/hanging.yaml --solver %s -o %s --set cloth.grid.nx=1500 "
                               "--set cloth.grid.ny=1500 --set duration=0.02 -q' 2>&1", cb_test_program(), name, path);
        if (rc != 1) fprintf(stderr, "  %s: exit %d: %s\n", name, rc, out);
        CU_ASSERT_EQUAL(rc, 1);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "memory"));
        if (access(path, F_OK) == 0) {
            CU_ASSERT_EQUAL(cb("info %s", path), 0);
            CU_ASSERT_PTR_NULL(strstr(out, "status     ok"));
            CU_ASSERT_PTR_NULL(strstr(out, "status     running"));
        }
    }
}

CB_TEST_MAIN("faults",
             CB_TEST(test_sigkill_then_reopen),
             CB_TEST(test_full_disk),
             CB_TEST(test_out_of_memory_at_create))
