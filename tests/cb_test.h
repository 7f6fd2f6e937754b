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
 */
#ifndef CB_TEST_H
#define CB_TEST_H

#include <CUnit/Basic.h>
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

#endif
