/* tests/test_cholmod_util.c — the CHOLMOD wrapper (solvers/cholmod_util.c): its error messages, its own triangular
 * solves against CHOLMOD's, a massless vertex reported as not positive definite. */
#include "cb_test.h"
#include "cb_sim.h"

#include <cblas.h> /* OpenBLAS's: openblas_get_num_threads */
#ifdef _OPENMP
#include <omp.h>
#endif
#include <unistd.h>

#include "contact/colliders.h"
#include "contact/distance.h"
#include "experiments/harness/metrics.h"
#include "core/scene.h"
#include "core/solver.h"
#include "core/vec3.h"
#include "core/world.h"
#include "experiments/harness/registry.h"
#include "solvers/cholmod_util.h"
#include "solvers/springs.h"
#include "solvers/step_contact.h"

/* scene (file or text) + world + solver: tests/cb_sim.h */
static int sim_open(cb_sim *s, const char *solver, const char *path_or_text, int is_text, const char *const *sets,
                    int nsets)
{
    return cb_sim_open(s, solver, is_text ? NULL : path_or_text, is_text ? path_or_text : NULL, ".", sets, nsets);
}

static void test_cholmod_errors(void)
{
    cb_error e;
    cb_chol *c = NULL;
    int cp0[1] = {0};
    CU_ASSERT_EQUAL(cb_chol_create(0, cp0, NULL, 1, CB_CHOL_AUTO, "test system", &c, &e), CB_ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.message, "empty system"));
    CU_ASSERT_PTR_NULL(c);
    /* [[1, 2], [2, 1]]: symmetric, indefinite (eigenvalues 3 and -1) */
    int colptr[3] = {0, 2, 3}, rowidx[3] = {0, 1, 1};
    CU_ASSERT_EQUAL_FATAL(cb_chol_create(2, colptr, rowidx, 1, CB_CHOL_AUTO, "test system", &c, &e), CB_OK);
    double *A = cb_chol_values(c);
    A[0] = 1;
    A[1] = 2;
    A[2] = 1;
    CU_ASSERT_EQUAL(cb_chol_factor(c, &e), CB_ERR_NUMERIC);
    fprintf(stderr, "  %s\n", e.message);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.message, "test system"));
    CU_ASSERT_PTR_NOT_NULL(strstr(e.message, "not positive definite"));
    CU_ASSERT_EQUAL(cb_chol_failed_unknown(c), 1);
    const double *x;
    CU_ASSERT_EQUAL(cb_chol_solve(c, &x, &e), CB_ERR_INPUT); /* no valid factor */
    /* now SPD: [[2, 1], [1, 2]] x = [3, 3] -> x = [1, 1] */
    A[0] = 2;
    A[1] = 1;
    A[2] = 2;
    CU_ASSERT_EQUAL_FATAL(cb_chol_factor(c, &e), CB_OK);
    cb_chol_rhs(c)[0] = 3;
    cb_chol_rhs(c)[1] = 3;
    CU_ASSERT_EQUAL_FATAL(cb_chol_solve(c, &x, &e), CB_OK);
    CB_ASSERT_REL(x[0], 1.0, 1e-14);
    CB_ASSERT_REL(x[1], 1.0, 1e-14);
    CU_ASSERT_EQUAL(cb_chol_factorizations(c), 2);
    cb_chol_free(&c);
    CU_ASSERT_PTR_NULL(c);
    /* a pattern without a diagonal entry */
    int bad_rows[3] = {1, 1, 1};
    CU_ASSERT_EQUAL(cb_chol_create(2, colptr, bad_rows, 1, CB_CHOL_AUTO, "test system", &c, &e), CB_ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.message, "diagonal"));
}

/* cb_chol_multiply against the dense product of the full symmetric matrix (both
 * triangles written out from the lower one), on a random sparse pattern, and the solve
 * it refines: A x for the x of a solve is the right-hand side to 1e-12. */
static void test_multiply(void)
{
    enum { n = 60 };
    static double D[n][n];
    memset(D, 0, sizeof D);
    unsigned seed = 777u;
    int colptr[n + 1], rowidx[n * n], nnz = 0;
    for (int j = 0; j < n; j++) {
        colptr[j] = nnz;
        rowidx[nnz++] = j;
        D[j][j] = n + 1.0;
        for (int i = j + 1; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            if ((seed >> 16) % 5 != 0) continue;
            rowidx[nnz++] = i;
            D[i][j] = D[j][i] = ((seed >> 8) % 1000) / 1000.0 - 0.5;
        }
    }
    colptr[n] = nnz;
    cb_error e;
    cb_chol *c = NULL;
    CU_ASSERT_EQUAL_FATAL(cb_chol_create(n, colptr, rowidx, 1, CB_CHOL_AUTO, "test system", &c, &e), CB_OK);
    double *A = cb_chol_values(c), x[n], y[n];
    for (int j = 0; j < n; j++)
        for (int p = colptr[j]; p < colptr[j + 1]; p++) A[p] = D[rowidx[p]][j];
    for (int i = 0; i < n; i++) x[i] = sin(1.0 + i);
    cb_chol_multiply(c, x, y);
    double worst = 0.0;
    for (int i = 0; i < n; i++) {
        double want = 0.0;
        for (int j = 0; j < n; j++) want += D[i][j] * x[j];
        worst = fmax(worst, fabs(y[i] - want));
    }
    CU_ASSERT(worst < 1e-12);
    /* diagonally dominant: positive definite */
    CU_ASSERT_EQUAL_FATAL(cb_chol_factor(c, &e), CB_OK);
    for (int i = 0; i < n; i++) cb_chol_rhs(c)[i] = cos(2.0 * i);
    const double *sol;
    CU_ASSERT_EQUAL_FATAL(cb_chol_solve(c, &sol, &e), CB_OK);
    cb_chol_multiply(c, sol, y);
    worst = 0.0;
    for (int i = 0; i < n; i++) worst = fmax(worst, fabs(y[i] - cos(2.0 * i)));
    CU_ASSERT(worst < 1e-12);
    cb_chol_free(&c);
}

/* Our own triangular solves (cb_chol_solve3, three interleaved right-hand sides)
 * against cholmod_solve2 (cb_chol_solve) on random sparse SPD systems, simplicial and
 * supernodal, and after a refactorization with new values: the same solution to
 * 1e-12 relative, and a small residual |A x - b| / |b| (an oracle independent of
 * either solve). With single precision (cb_chol_set_precision, chol_single.c) the same to
 * 1e-6 (float round-off, 6e-8, times these diagonally dominant systems' modest condition
 * numbers; ~1e-7 measured), and not to 1e-9 (the solves are float). */
static void test_solve3_matches_cholmod(void)
{
    const int n = 400;
    unsigned seed = 12345u;
    int *colptr = malloc((size_t)(n + 1) * sizeof *colptr), *rowidx = malloc((size_t)n * 8 * sizeof *rowidx);
    /* lower triangle: the diagonal, the next row, and up to 6 random rows below */
    int nnz = 0;
    for (int j = 0; j < n; j++) {
        colptr[j] = nnz;
        int rows[8], nr = 0;
        rows[nr++] = j;
        if (j + 1 < n) rows[nr++] = j + 1;
        for (int t = 0; t < 6 && j + 2 < n; t++) {
            seed = seed * 1103515245u + 12345u;
            int r = j + 2 + (int)((seed >> 8) % (unsigned)(n - j - 2));
            int dup = 0;
            for (int q = 0; q < nr; q++) dup |= rows[q] == r;
            if (!dup) rows[nr++] = r;
        }
        for (int a = 1; a < nr; a++) /* sort */
            for (int b = a; b > 1 && rows[b] < rows[b - 1]; b--) {
                int tmp = rows[b];
                rows[b] = rows[b - 1];
                rows[b - 1] = tmp;
            }
        for (int q = 0; q < nr; q++) rowidx[nnz++] = rows[q];
    }
    colptr[n] = nnz;
    double *rowsum = calloc((size_t)n, sizeof *rowsum), (*b)[3] = malloc((size_t)n * sizeof *b);
    for (int prec = CB_CHOL_DOUBLE; prec <= CB_CHOL_SINGLE; prec++)
    for (int mode = CB_CHOL_SIMPLICIAL; mode <= CB_CHOL_SUPERNODAL; mode++) {
        cb_chol *c = NULL;
        cb_error e;
        const double tol = prec == CB_CHOL_SINGLE ? 1e-6 : 1e-12;
        CU_ASSERT_EQUAL_FATAL(cb_chol_create(n, colptr, rowidx, 3, (cb_chol_mode)mode, "random", &c, &e), CB_OK);
        CU_ASSERT_EQUAL_FATAL(cb_chol_set_precision(c, (cb_chol_precision)prec, &e), CB_OK);
        CU_ASSERT_EQUAL(cb_chol_get_precision(c), prec);
        CU_ASSERT_EQUAL(cb_chol_solve3(c, b, &e), CB_ERR_INPUT); /* no factor yet */
        for (int round = 0; round < 2; round++) {
            double *A = cb_chol_values(c);
            for (int i = 0; i < n; i++) rowsum[i] = 0;
            for (int j = 0; j < n; j++)
                for (int p = colptr[j] + 1; p < colptr[j + 1]; p++) {
                    seed = seed * 1103515245u + 12345u;
                    A[p] = ((double)(seed >> 8) / 16777216.0 - 0.5) * (round + 1);
                    rowsum[j] += fabs(A[p]);
                    rowsum[rowidx[p]] += fabs(A[p]);
                }
            for (int j = 0; j < n; j++) A[colptr[j]] = rowsum[j] + 0.01 + 0.5 * (j % 7); /* SPD: dominant */
            CU_ASSERT_EQUAL_FATAL(cb_chol_factor(c, &e), CB_OK);
            CU_ASSERT_EQUAL(cb_chol_is_supernodal(c), mode == CB_CHOL_SUPERNODAL);
            double *B = cb_chol_rhs(c);
            for (int i = 0; i < n; i++)
                for (int k = 0; k < 3; k++) {
                    seed = seed * 1103515245u + 12345u;
                    b[i][k] = B[i + k * n] = (double)(seed >> 8) / 16777216.0 - 0.5 + (k == 2 ? 100.0 : 0.0);
                }
            const double *X;
            CU_ASSERT_EQUAL_FATAL(cb_chol_solve(c, &X, &e), CB_OK);
            CU_ASSERT_EQUAL_FATAL(cb_chol_solve3(c, b, &e), CB_OK);
            for (int k = 0; k < 3; k++) {
                double d2 = 0, x2 = 0, r2 = 0, b2 = 0;
                for (int i = 0; i < n; i++) {
                    d2 += (b[i][k] - X[i + k * n]) * (b[i][k] - X[i + k * n]);
                    x2 += X[i + k * n] * X[i + k * n];
                }
                /* residual A x - B (A symmetric, lower triangle stored) */
                double *r = calloc((size_t)n, sizeof *r);
                for (int j = 0; j < n; j++)
                    for (int p = colptr[j]; p < colptr[j + 1]; p++) {
                        int i = rowidx[p];
                        r[i] += A[p] * b[j][k];
                        if (i != j) r[j] += A[p] * b[i][k];
                    }
                for (int i = 0; i < n; i++) {
                    r2 += (r[i] - B[i + k * n]) * (r[i] - B[i + k * n]);
                    b2 += B[i + k * n] * B[i + k * n];
                }
                free(r);
                CU_ASSERT(x2 > 0);
                CU_ASSERT(sqrt(d2 / x2) < tol);
                CU_ASSERT(sqrt(r2 / b2) < tol);
                if (prec == CB_CHOL_SINGLE) CU_ASSERT(sqrt(d2 / x2) > 1e-9);
                if (!(sqrt(d2 / x2) < tol) || !(sqrt(r2 / b2) < tol) || (k == 0 && round == 0))
                    fprintf(stderr, "  %s mode %d round %d column %d: |x3 - x|/|x| = %.3e, |Ax3 - b|/|b| = %.3e\n",
                            prec == CB_CHOL_SINGLE ? "single" : "double", mode, round, k, sqrt(d2 / x2),
                            sqrt(r2 / b2));
            }
        }
        cb_chol_free(&c);
    }
    free(rowsum);
    free(b);
    free(colptr);
    free(rowidx);
}

/* cb_chol_solve3_add: out[map[u]] = base[map[u]] + X[u] with X cb_chol_solve3's solution
 * (bitwise: the same solve, one addition), b holding X when keep and base untouched,
 * rows of out outside map untouched; a NULL map, base or out refused. On a tridiagonal
 * SPD system with a map that reverses the rows into arrays one row longer, with double
 * and single precision; an unknown precision refused, naming the system. */
static void solve3_add_check(cb_chol_precision prec);
static void test_solve3_add(void)
{
    for (int prec = CB_CHOL_DOUBLE; prec <= CB_CHOL_SINGLE; prec++) solve3_add_check((cb_chol_precision)prec);
}

static void solve3_add_check(cb_chol_precision prec)
{
    enum { n = 60 };
    int colptr[n + 1], rowidx[2 * n];
    int nnz = 0;
    for (int j = 0; j < n; j++) {
        colptr[j] = nnz;
        rowidx[nnz++] = j;
        if (j + 1 < n) rowidx[nnz++] = j + 1;
    }
    colptr[n] = nnz;
    cb_chol *c = NULL;
    cb_error e;
    CU_ASSERT_EQUAL_FATAL(cb_chol_create(n, colptr, rowidx, 3, CB_CHOL_AUTO, "tridiagonal", &c, &e), CB_OK);
    CU_ASSERT_EQUAL(cb_chol_set_precision(c, (cb_chol_precision)2, &e), CB_ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.message, "tridiagonal"));
    CU_ASSERT_EQUAL_FATAL(cb_chol_set_precision(c, prec, &e), CB_OK);
    double *A = cb_chol_values(c);
    for (int j = 0; j < n; j++)
        for (int p = colptr[j]; p < colptr[j + 1]; p++) A[p] = rowidx[p] == j ? 2.5 + 0.1 * (j % 3) : -1.0;
    CU_ASSERT_EQUAL_FATAL(cb_chol_factor(c, &e), CB_OK);
    double b0[n][3], x[n][3], b1[n][3], base[n + 1][3], out[n + 1][3];
    int map[n];
    for (int u = 0; u < n; u++) {
        map[u] = n - u; /* row n - u: row 0 of out and base is outside the map */
        for (int k = 0; k < 3; k++) {
            b0[u][k] = sin(1.0 + u + 7.0 * k);
            base[u][k] = 10.0 * cos(2.0 * u + k);
        }
    }
    for (int k = 0; k < 3; k++) base[n][k] = -3.0 + k;
    memcpy(x, b0, sizeof x);
    CU_ASSERT_EQUAL_FATAL(cb_chol_solve3(c, x, &e), CB_OK);
    for (int keep = 0; keep < 2; keep++) {
        memcpy(b1, b0, sizeof b1);
        for (int i = 0; i <= n; i++)
            for (int k = 0; k < 3; k++) out[i][k] = 123.0;
        CU_ASSERT_EQUAL_FATAL(cb_chol_solve3_add(c, b1, keep, map, (const double (*)[3])base, out, &e), CB_OK);
        int same = 1, kept = 1;
        for (int u = 0; u < n; u++)
            for (int k = 0; k < 3; k++) {
                same &= out[map[u]][k] == base[map[u]][k] + x[u][k];
                kept &= b1[u][k] == x[u][k];
            }
        CU_ASSERT(same);
        if (keep) CU_ASSERT(kept);
        for (int k = 0; k < 3; k++) CU_ASSERT_EQUAL(out[0][k], 123.0);
    }
    CU_ASSERT_EQUAL(cb_chol_solve3_add(c, b1, 1, NULL, (const double (*)[3])base, out, &e), CB_ERR_INPUT);
    CU_ASSERT_EQUAL(cb_chol_solve3_add(c, b1, 1, map, NULL, out, &e), CB_ERR_INPUT);
    CU_ASSERT_EQUAL(cb_chol_solve3_add(c, b1, 1, map, (const double (*)[3])base, NULL, &e), CB_ERR_INPUT);
    cb_chol_free(&c);
}

/* A free vertex without mass (only on a spring, line_density 0) and without stiffness
 * (stretch 0) makes M + h^2 L singular: the step fails with a message naming the
 * matrix, the cause and the vertex. */
static void test_massless_vertex_not_posdef(void)
{
    char path[600];
    snprintf(path, sizeof path, "%s/massless.obj", cb_test_tmpdir());
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fprintf(f, "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nv 5 5 5\nf 1 2 3\nf 2 4 3\nl 4 5\n");
    fclose(f);
    char text[1024];
    snprintf(text, sizeof text, "name: m\nduration: 1\ndt: 0.01\ncloth:\n  mesh: %s\n  stretch: 0\n  bend: 0\n", path);
    const char *solvers[] = {"fms", "newton"};
    for (int c = 0; c < 2; c++) {
        cb_sim s;
        CU_ASSERT_EQUAL_FATAL(sim_open(&s, solvers[c], text, 1, NULL, 0), CB_OK);
        int rc = cb_solver_step(s.cls, s.solver, s.w, 0, 0.01, &s.info, &s.e);
        fprintf(stderr, "  %s: %s\n", solvers[c], s.e.message);
        CU_ASSERT_EQUAL(rc, CB_ERR_NUMERIC);
        CU_ASSERT_PTR_NOT_NULL(strstr(s.e.message, "not positive definite"));
        CU_ASSERT_PTR_NOT_NULL(strstr(s.e.message, "vertex 4"));
        CU_ASSERT_PTR_NOT_NULL(strstr(s.e.message, "mass"));
        cb_sim_close(&s);
    }
}

/* Positions and velocities after `steps` steps of the determinism test's drop onto a
 * sphere (16 x 16, the supernodal factor, whose blocks go to BLAS) with one --set. */
static int drop(const char *solver, const char *set, int steps, double (**xv)[3], int *nv)
{
    const char *scene =
        "name: drop\nduration: 1\ndt: 0.005\n"
        "cloth:\n  grid: {nx: 16, ny: 16, size: [0.4, 0.4], origin: [-0.2, -0.2, 0.5]}\n"
        "  density: 0.1\n  stretch: 1000\n  bend: 1.0e-4\n  thickness: 0.002\n"
        "colliders:\n  - {type: sphere, center: [0.03, -0.02, 0.3], radius: 0.15, friction: 0.3}\n"
        "  - {type: plane, point: [0, 0, 0], normal: [0, 0, 1]}\n";
    char factor[64];
    snprintf(factor, sizeof factor, "solvers.%s.factor=supernodal", solver);
    const char *sets[] = {factor, set};
    cb_sim s;
    int rc = sim_open(&s, solver, scene, 1, sets, 2);
    for (int k = 0; k < steps && !rc; k++) rc = cb_sim_step(&s);
    if (!rc && xv) {
        *nv = s.w->nv;
        *xv = malloc(2 * (size_t)s.w->nv * sizeof **xv);
        if (*xv) {
            memcpy(*xv, s.w->state.x, (size_t)s.w->nv * sizeof **xv);
            memcpy(*xv + s.w->nv, s.w->state.v, (size_t)s.w->nv * sizeof **xv);
        }
    }
    cb_sim_close(&s);
    return rc;
}

/* The thread count is the solver's `threads`, set around each CHOLMOD call and restored
 * after it: newton with threads: 0 (one BLAS thread per core) after fms with threads: 1
 * in the same process gives the bits newton gives on its own (fms used to leave OpenBLAS
 * at one thread for good, and newton's supernodal bits depend on that count), and
 * OpenBLAS's count is afterwards what it was before. On a one-core machine both counts
 * are 1 and this cannot tell. */
static void test_threads_are_the_solvers(void)
{
    /* OpenBLAS as a process starts with it, one thread per core (the suite's earlier
     * tests may have changed it) */
#ifdef _OPENMP
    int blas = omp_get_num_procs();
#else
    int blas = (int)sysconf(_SC_NPROCESSORS_ONLN);
#endif
    openblas_set_num_threads(blas);
    double (*alone)[3] = NULL, (*after)[3] = NULL;
    int nv = 0, nv2 = 0;
    CU_ASSERT_EQUAL_FATAL(drop("newton", "solvers.newton.threads=0", 50, &alone, &nv), 0);
    CU_ASSERT_EQUAL(openblas_get_num_threads(), blas);
    CU_ASSERT_EQUAL_FATAL(drop("fms", "solvers.fms.threads=1", 5, NULL, NULL), 0);
    CU_ASSERT_EQUAL(openblas_get_num_threads(), blas);
    CU_ASSERT_EQUAL_FATAL(drop("newton", "solvers.newton.threads=0", 50, &after, &nv2), 0);
    CU_ASSERT_EQUAL(openblas_get_num_threads(), blas);
    CU_ASSERT_PTR_NOT_NULL_FATAL(alone);
    CU_ASSERT_PTR_NOT_NULL_FATAL(after);
    CU_ASSERT_EQUAL_FATAL(nv, nv2);
    int same = !memcmp(alone, after, 2 * (size_t)nv * sizeof *alone);
    fprintf(stderr, "  newton threads: 0 after fms threads: 1: %s its results alone (OpenBLAS %d thread(s))\n",
            same ? "bitwise" : "NOT", blas);
    CU_ASSERT(same);
    free(alone);
    free(after);
}

CB_TEST_MAIN("cholmod_util",
             CB_TEST(test_cholmod_errors),
             CB_TEST(test_multiply),
             CB_TEST(test_solve3_matches_cholmod),
             CB_TEST(test_solve3_add),
             CB_TEST(test_massless_vertex_not_posdef),
             CB_TEST(test_threads_are_the_solvers))
