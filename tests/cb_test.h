/* tests/cb_test.h — the small harness every CUnit suite shares.
 *
 * A suite file defines its tests as static functions and ends with
 *
 *     CB_TEST_MAIN("model",
 *         CB_TEST(test_stretch_gradient_fd),
 *         CB_TEST(test_bend_gradient_fd))
 *
 * which runs them in CUnit's basic mode and exits non-zero on any failure.
 * Tests run from the source root (meson sets workdir), so data/ paths work;
 * CLOTHBENCH names the built program and CB_PYTHON an interpreter with numpy/h5py.
 *
 * Helpers shared by the suites (use these rather than a copy of your own):
 *  - a temporary folder and files in it: cb_test_tmpdir, cb_test_tmp_path,
 *    cb_test_write_tmp;
 *  - a deterministic xorshift64 random generator: cb_test_xorshift64, cb_test_uniform;
 *  - running a shell command or the clothbench program with its output and exit
 *    status captured: cb_test_capture, cb_test_shell, cb_test_clothbench;
 *  - the lines of a file holding a text: cb_test_count_lines;
 *  - clothbench on a pseudo-terminal, and waiting for a text of its output (its
 *    progress bar: an event, never a sleep): cb_test_spawn_tty, cb_test_read_until;
 *  - the grids, crumpled cloths and triangle soups of contact/testmesh.h, failing the
 *    test on error: cb_test_grid, cb_test_crumple, cb_test_soup;
 *  - one fixed, non-trivial collider of each analytic kind (an oblique plane, an
 *    off-centre sphere, a box turned about two axes, a slanted capsule): cb_test_collider.
 */
#ifndef CB_TEST_H
#define CB_TEST_H

#include <CUnit/Basic.h>
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "contact/testmesh.h"
#include "core/collider.h"
#include "core/vec3.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

typedef struct cb_test_entry { const char *name; CU_TestFunc fn; } cb_test_entry;
#define CB_TEST(fn) { #fn, fn }

/* |a - b| <= tol * max(1, |a|, |b|) with a message naming the values. */
#define CB_ASSERT_REL(a, b, tol) do { \
        double cb_a_ = (a), cb_b_ = (b); \
        double cb_s_ = fmax(1.0, fmax(fabs(cb_a_), fabs(cb_b_))); \
        if (!(fabs(cb_a_ - cb_b_) <= (tol) * cb_s_)) \
            fprintf(stderr, "  %s:%d: %s = %.17g vs %s = %.17g (tol %g)\n", \
                    __FILE__, __LINE__, #a, cb_a_, #b, cb_b_, (double)(tol)); \
        CU_ASSERT(fabs(cb_a_ - cb_b_) <= (tol) * cb_s_); \
    } while (0)

/* A fresh temporary directory for the suite's files (not removed: left for inspection
 * on failure; under build/ so it never pollutes the source tree). */
static inline const char *cb_test_tmpdir(void)
{
    static char dir[512];
    if (!dir[0]) {
        const char *base = getenv("CB_TEST_TMP");
        snprintf(dir, sizeof dir, "%s/cbtestXXXXXX", base ? base : "/tmp");
        if (!mkdtemp(dir)) { perror("mkdtemp"); exit(2); }
    }
    return dir;
}

/* The path of `name` in cb_test_tmpdir(). The result lives in one of 8 static slots
 * used in turn: valid until the 8th call after it. */
static inline const char *cb_test_tmp_path(const char *name)
{
    static char paths[8][1024];
    static int k = 0;
    char *p = paths[k++ % 8];
    snprintf(p, sizeof paths[0], "%s/%s", cb_test_tmpdir(), name);
    return p;
}

/* Writes `text` to the file `name` in cb_test_tmpdir() (replacing it) and returns its
 * path (as cb_test_tmp_path); a file that cannot be created fails the test. */
static inline const char *cb_test_write_tmp(const char *name, const char *text)
{
    const char *path = cb_test_tmp_path(name);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* xorshift64 (Marsaglia 2003, shifts 13, 7, 17): the next state of *state (which must
 * not be 0), stored and returned. Each suite keeps its own state with its own seed. */
static inline uint64_t cb_test_xorshift64(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *state = x;
}

/* Uniform in [0, 1) from the top 53 bits of the next xorshift64 state. */
static inline double cb_test_uniform(uint64_t *state)
{
    return (double)(cb_test_xorshift64(state) >> 11) * (1.0 / 9007199254740992.0);
}

/* Runs the shell command `cmd` and captures its standard output (at most cap - 1
 * bytes, NUL-terminated) in out. Returns its exit status, -1 if it could not be
 * started or did not exit normally (killed by a signal). */
static inline int cb_test_capture(const char *cmd, char *out, size_t cap)
{
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The clothbench program under test: $CLOTHBENCH, else build/clothbench. */
static inline const char *cb_test_program(void)
{
    const char *exe = getenv("CLOTHBENCH");
    return exe ? exe : "build/clothbench";
}

/* Runs the shell command made from fmt and its arguments (printf style) with its
 * standard error joined to its output, captured in out[cap] (cb_test_capture). */
static inline int cb_test_shell(char *out, size_t cap, const char *fmt, ...)
{
    char cmd[16384], full[16500];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    snprintf(full, sizeof full, "%s 2>&1", cmd);
    return cb_test_capture(full, out, cap);
}

/* Runs `clothbench ARGS` (ARGS made from fmt, printf style), its output captured in
 * out[cap] (cb_test_capture); its standard error joined to the output when
 * with_stderr, else dropped. Returns the exit status. */
static inline int cb_test_clothbench(char *out, size_t cap, int with_stderr, const char *fmt, ...)
{
    char args[16384], cmd[16640];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "%s %s %s", cb_test_program(), args, with_stderr ? "2>&1" : "2>/dev/null");
    return cb_test_capture(cmd, out, cap);
}

/* The lines of the file at path that hold needle ("" counts every line); -1 when it
 * cannot be read. */
static inline int cb_test_count_lines(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[8192];
    int n = 0;
    while (fgets(line, sizeof line, f)) n += strstr(line, needle) != NULL;
    fclose(f);
    return n;
}

/* Starts the clothbench program with the arguments args[] (NULL-terminated, args[0] the
 * first argument after the program) on a pseudo-terminal of its own, its output and
 * error on it, so that a run draws its progress bar (only drawn on a terminal): the bar
 * is the event the signal and kill tests wait for instead of a sleep that assumes the
 * machine's speed. The run draws "step 0/N" once its file holds row and frame 0, just
 * before the first step and after its last look at the interrupt flag outside a step,
 * and "step K/N" after step K (every 16th; its row and frame, if it is a frame step,
 * flushed). Returns the pid (-1 on failure) and the terminal's master side in *fd,
 * to read with cb_test_read_until. (/dev/ptmx and its ioctls, as glibc's posix_openpt
 * does: the tests build with _POSIX_C_SOURCE, which does not declare it.) */
static inline pid_t cb_test_spawn_tty(int *fd, const char *const *args)
{
    *fd = open("/dev/ptmx", O_RDWR | O_NOCTTY);
    int unlock = 0;
    unsigned int n = 0;
    if (*fd < 0 || ioctl(*fd, TIOCSPTLCK, &unlock) != 0 || ioctl(*fd, TIOCGPTN, &n) != 0) {
        fprintf(stderr, "  cannot open a pseudo-terminal (/dev/ptmx)\n");
        if (*fd >= 0) close(*fd);
        return -1;
    }
    char slave[64];
    snprintf(slave, sizeof slave, "/dev/pts/%u", n);
    const char *argv[64] = {"clothbench"};
    int k = 1;
    while (k < 63 && args[k - 1]) {
        argv[k] = args[k - 1];
        k++;
    }
    argv[k] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        setsid();
        int t = open(slave, O_RDWR);
        if (t < 0) _exit(126);
        dup2(t, 1);
        dup2(t, 2);
        close(t);
        close(*fd);
        execv(cb_test_program(), (char *const *)argv);
        _exit(127);
    }
    if (pid < 0) close(*fd);
    return pid;
}

/* Reads the program's terminal (cb_test_spawn_tty) until `needle` has appeared in its
 * output (1) or the program closed the terminal, i.e. ended, without it (0; needle NULL:
 * read to the end). Waits as long as the program keeps its terminal open: an event, not
 * a time (a program that hangs is stopped by meson's test timeout). */
static inline int cb_test_read_until(int fd, const char *needle)
{
    char tail[512] = "", buf[4096];
    size_t len = 0, nl = needle ? strlen(needle) : 0;
    for (;;) {
        ssize_t got = read(fd, buf, sizeof buf);
        if (got <= 0) return 0; /* EIO once the last holder of the terminal closed it */
        if (!needle) continue;
        for (ssize_t i = 0; i < got; i++) {
            if (len + 1 >= sizeof tail) { /* keep the last nl bytes */
                memmove(tail, tail + len - nl, nl);
                len = nl;
            }
            tail[len++] = buf[i];
            tail[len] = '\0';
            if (len >= nl && !memcmp(tail + len - nl, needle, nl)) return 1;
        }
    }
}

/* An nx x ny vertex grid of size x size in the xy plane at the origin, diagonals diag
 * (contact/testmesh.h); an error fails the test. */
static inline cb_mesh *cb_test_grid(int nx, int ny, double size, cb_diagonal diag)
{
    cb_mesh *m = NULL;
    cb_error err = {0};
    int rc = cb_testmesh_grid(nx, ny, size, diag, &m, &err);
    if (rc) fprintf(stderr, "grid: %s\n", err.message);
    CU_ASSERT_FATAL(rc == 0);
    return m;
}

/* The crumpled positions of grid m (contact/testmesh.h) from the generator state
 * cb_testmesh_seed(seed); malloc'd, the caller frees them. An error fails the test. */
static inline double (*cb_test_crumple(const cb_mesh *m, uint64_t seed, double amp))[3]
{
    double (*x)[3] = NULL;
    uint64_t state = cb_testmesh_seed(seed);
    cb_error err = {0};
    int rc = cb_testmesh_crumple(m, amp, &state, &x, &err);
    if (rc) fprintf(stderr, "crumple: %s\n", err.message);
    CU_ASSERT_FATAL(rc == 0);
    return x;
}

/* A triangle soup (contact/testmesh.h) from the generator state cb_testmesh_seed(seed).
 * An error fails the test. */
static inline cb_mesh *cb_test_soup(int nf, int shared, double spread, uint64_t seed)
{
    cb_mesh *m = NULL;
    uint64_t state = cb_testmesh_seed(seed);
    cb_error err = {0};
    int rc = cb_testmesh_soup(nf, shared, spread, &state, &m, &err);
    if (rc) fprintf(stderr, "soup: %s\n", err.message);
    CU_ASSERT_FATAL(rc == 0);
    return m;
}

/* A function of 12 coordinates (four points) with its gradient and Hessian (g, H may be
 * NULL). */
typedef double (*cb_test_fn12)(const double x[12], double g[12], double H[12][12], void *ctx);

/* Central differences of f's value against its gradient and of its gradient against
 * its Hessian at x, step `step`, over the coordinates of the points not in `fixed` (bit
 * a: point a held); the worst errors relative to the largest entry into *eg, *eh. */
static inline void cb_test_fd12(cb_test_fn12 f, const double x[12], void *ctx, double step, unsigned fixed,
                                double *eg, double *eh)
{
    double g[12], H[12][12], gp[12], gm[12], xp[12];
    f(x, g, H, ctx);
    double gmax = 0.0, hmax = 0.0;
    for (int i = 0; i < 12; i++) {
        gmax = fmax(gmax, fabs(g[i]));
        for (int j = 0; j < 12; j++) hmax = fmax(hmax, fabs(H[i][j]));
    }
    *eg = *eh = 0.0;
    for (int i = 0; i < 12; i++) {
        if (fixed >> (i / 3) & 1) continue;
        memcpy(xp, x, sizeof xp);
        xp[i] = x[i] + step;
        double fp = f(xp, gp, NULL, ctx);
        xp[i] = x[i] - step;
        double fm = f(xp, gm, NULL, ctx);
        if (gmax > 0) *eg = fmax(*eg, fabs((fp - fm) / (2 * step) - g[i]) / gmax);
        for (int j = 0; j < 12; j++)
            if (!(fixed >> (j / 3) & 1)) *eh = fmax(*eh, fabs((gp[j] - gm[j]) / (2 * step) - H[j][i]) / hmax);
    }
}

/* The rotation matrix of the quaternion (qw, qx, qy, qz), normalised first (not 0). */
static inline void cb_test_quat_rotation(double qw, double qx, double qy, double qz, double R[3][3])
{
    double n = sqrt(qw * qw + qx * qx + qy * qy + qz * qz);
    qw /= n, qx /= n, qy /= n, qz /= n;
    double r[3][3] = {{1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - qz * qw), 2 * (qx * qz + qy * qw)},
                      {2 * (qx * qy + qz * qw), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - qx * qw)},
                      {2 * (qx * qz - qy * qw), 2 * (qy * qz + qx * qw), 1 - 2 * (qx * qx + qy * qy)}};
    memcpy(R, r, sizeof r);
}

static inline int cb_test_run(const char *suite, const cb_test_entry *tests, int n)
{
    if (CU_initialize_registry() != CUE_SUCCESS) return 2;
    CU_pSuite s = CU_add_suite(suite, NULL, NULL);
    for (int i = 0; i < n; i++) CU_add_test(s, tests[i].name, tests[i].fn);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    int failed = (int)CU_get_number_of_tests_failed() + (int)CU_get_number_of_failures();
    CU_cleanup_registry();
    return failed ? 1 : 0;
}

#define CB_TEST_MAIN(suite, ...) \
    int main(void) { \
        static const cb_test_entry cb_tests_[] = { __VA_ARGS__ }; \
        return cb_test_run(suite, cb_tests_, (int)(sizeof cb_tests_ / sizeof cb_tests_[0])); \
    }

/* One fixed collider of each analytic type, static, friction 0. */
static inline cb_collider cb_test_collider(cb_collider_type type)
{
    cb_collider c = cb_default_collider(type);
    switch (type) {
    case CB_COLLIDER_PLANE:
        cb_v3_set(c.center, 0.1, 0.2, 0.3);
        cb_v3_set(c.normal, 1, 2, 2);
        cb_v3_normalize(c.normal);
        break;
    case CB_COLLIDER_SPHERE:
        cb_v3_set(c.center, 0.2, -0.1, 0.5);
        c.radius = 0.7;
        break;
    case CB_COLLIDER_BOX: {
        cb_v3_set(c.center, 0.3, 0.1, -0.2);
        cb_v3_set(c.half, 0.5, 0.3, 0.8);
        double a = 0.6, b = 0.3; /* turned about z, then about x */
        cb_v3_set(c.axes[0], cos(a), sin(a), 0);
        cb_v3_set(c.axes[1], -sin(a) * cos(b), cos(a) * cos(b), sin(b));
        cb_v3_cross(c.axes[2], c.axes[0], c.axes[1]);
        break;
    }
    case CB_COLLIDER_CAPSULE:
        cb_v3_set(c.p0, -0.5, 0, 0);
        cb_v3_set(c.p1, 0.5, 0.3, 0.2);
        c.radius = 0.25;
        break;
    default:
        break;
    }
    return c;
}

#endif
