/* solvers/cholmod_util.h — a sparse symmetric positive definite system solved with
 * CHOLMOD (SuiteSparse), for the implicit solvers (fms, newton).
 *
 * The caller gives the pattern of the lower triangle once (compressed columns), then
 * fills the values and factors as often as needed: the fill-reducing ordering and the
 * symbolic analysis are computed on the first factorization only (cholmod_analyze),
 * every factorization after that is numeric only (cholmod_factorize; a supernodal
 * factor through cholmod_super_numeric on the permuted lower triangle P A P^T, whose
 * pattern and map from A are made once with the analysis, so a factorization copies
 * the values instead of cholmod_factorize's two transposes: the same factor bit for
 * bit, 5% of ipc's CPU time at 60 x 60 before). Solves use
 * cholmod_solve2 with a right-hand side, solution and workspace allocated once, so a
 * solve allocates nothing; cb_chol_solve3 (three interleaved right-hand sides, as fms
 * needs for x, y and z) uses our own supernodal forward/back substitution over the
 * factor instead, which reads the factor once for all three coordinates (the rows of a
 * column in the vector lanes, x, y and z apart: cholmod_util.c, tri_solves).
 *
 * Every CHOLMOD call is checked: a negative common.status is CB_ERR_INTERNAL, and
 * CHOLMOD_NOT_POSDEF — a warning in common.status, not a return value — is
 * CB_ERR_NUMERIC with a message naming the system (the label) and the unknown whose
 * pivot was not positive. One cholmod_common per object; CHOLMOD never prints.
 */
#ifndef CB_CHOLMOD_UTIL_H
#define CB_CHOLMOD_UTIL_H

#include "core/error.h"

typedef enum {
    CB_CHOL_AUTO = 0,        /* CHOLMOD decides (supernodal when flops / nnz(L) is high) */
    CB_CHOL_SIMPLICIAL = 1,  /* simplicial LL^T: up-looking, no BLAS */
    CB_CHOL_SUPERNODAL = 2   /* supernodal LL^T: BLAS on dense blocks */
} cb_chol_mode;

/* The arithmetic of cb_chol_solve3's triangular solves (the factorization is CHOLMOD's,
 * in double, either way): double (the default), or single: the factor's values copied to
 * float once per factorization (at the first solve after it; O(nnz(L)), its supernodes
 * padded to eight rows, chol_single.h) and the solves in float, the right-hand side and
 * the solution double at the interface (rounded to float on the way in). The solution
 * then carries float round-off (about 6e-8 times the condition number, relative).
 * cb_chol_solve (CHOLMOD's solve) is double whatever this says. */
typedef enum { CB_CHOL_DOUBLE = 0, CB_CHOL_SINGLE = 1 } cb_chol_precision;

typedef struct cb_chol cb_chol;

/* n x n system (n >= 1; n = 0 is an input error "empty system") with nrhs right-hand
 * sides (columns). colptr[n+1], rowidx[colptr[n]]: the lower triangle, diagonal
 * included, rows sorted within each column. label names the system in messages. */
int cb_chol_create(int n, const int *colptr, const int *rowidx, int nrhs, cb_chol_mode mode,
                   const char *label, cb_chol **out, cb_error *err);
void cb_chol_free(cb_chol **c);

int cb_chol_size(const cb_chol *c);
/* Threads of this system's CHOLMOD calls (factorization and CHOLMOD's solve), set before
 * each call and restored after it, so a call does not depend on what ran before in the
 * process. 1 (the default) runs it on the calling thread only: CHOLMOD's OpenMP regions
 * are made inactive around the call (max-active-levels 0, a per-task ICV: Debian's
 * CHOLMOD otherwise opens 4 threads whatever OMP_NUM_THREADS says, 1.2 M futex calls in
 * 80 newton steps) and OpenBLAS gets one thread. N > 1: CHOLMOD's regions active (with
 * their compiled-in count), OpenBLAS N threads; 0: likewise with one OpenBLAS thread per
 * core (omp_get_num_procs). The supernodal results depend on the OpenBLAS count.
 * Without OpenMP in the build the CHOLMOD part cannot be controlled (use factor:
 * simplicial, which has no parallel region). */
void cb_chol_set_threads(cb_chol *c, int threads);
/* The precision of the cb_chol_solve3 solves from the next one on (see cb_chol_precision);
 * CB_ERR_INPUT for another value. */
int cb_chol_set_precision(cb_chol *c, cb_chol_precision precision, cb_error *err);
cb_chol_precision cb_chol_get_precision(const cb_chol *c);
/* The values [colptr[n]], in the order of rowidx; the caller fills them before factoring. */
double *cb_chol_values(cb_chol *c);
/* Factor the current values (analysis on the first call). CB_ERR_NUMERIC when not
 * positive definite (cb_chol_failed_unknown tells which unknown). */
int cb_chol_factor(cb_chol *c, cb_error *err);
/* Numeric factorizations done so far (the first includes the analysis), those stopped by a
 * non-positive pivot (CB_ERR_NUMERIC) included: the work done, not the factors usable. */
int cb_chol_factorizations(const cb_chol *c);
/* The unknown (row of the original matrix) whose pivot failed in the last factor, -1 if none. */
int cb_chol_failed_unknown(const cb_chol *c);
/* Nonzeros in the factor (0 before the first factorization), and whether it is supernodal. */
double cb_chol_factor_nnz(const cb_chol *c);
int cb_chol_is_supernodal(const cb_chol *c);

/* y = A x (n doubles each) with the current values (the symmetric matrix whose lower
 * triangle they hold), whatever the factor holds: an iterative refinement of a solve for
 * values changed since the last factorization (ipc's convergence test, solvers/ipc.c). */
void cb_chol_multiply(const cb_chol *c, const double *x, double *y);

/* The right-hand side, column-major n x nrhs: fill it, then call cb_chol_solve. */
double *cb_chol_rhs(cb_chol *c);
/* Solve A X = B for the current factor; the solution (column-major n x nrhs) is
 * returned in *x (owned by c, valid until the next solve). */
int cb_chol_solve(cb_chol *c, const double **x, cb_error *err);
/* Solve A X = B for three right-hand sides stored interleaved (row-major n x 3: b[i]
 * is row i), in place, with our own triangular solves over the factor in supernodes:
 * a supernodal factor's own supernodes, read in place in CHOLMOD's arrays, or for a
 * simplicial factor a copy in its fundamental supernodes (runs of columns with nested
 * patterns, no zero stored), each a dense column-major block with one list of row
 * indices. Both triangular solves read each factor entry once for the three columns,
 * and the fill-reducing permutation is applied once on the way in and out. The first
 * solve after each factorization sets up the supernode tables (O(n); the simplicial
 * copy O(nnz(L)), allocating only when the factor grows); other solves allocate
 * nothing. The same solution as cb_chol_solve up to round-off. */
int cb_chol_solve3(cb_chol *c, double (*b)[3], cb_error *err);
/* cb_chol_solve3, with the solution X also added to base on its way out:
 * out[map[u]] = base[map[u]] + X[u] for every row u (map: n distinct indices into base
 * and out), in the same pass as the permutation back (fms: x = y + (x - y)). keep: b
 * holds X afterwards as in cb_chol_solve3; 0: b's contents are left undefined (no store
 * of X). */
int cb_chol_solve3_add(cb_chol *c, double (*b)[3], int keep, const int *map, const double (*base)[3],
                       double (*out)[3], cb_error *err);

#endif
