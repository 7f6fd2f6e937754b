/* solvers/cholmod_util.c — sparse SPD systems through CHOLMOD, every call checked
 * (cholmod_util.h). */
#include "solvers/cholmod_util.h"

#include <cholmod.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cb_chol {
    cholmod_common c;
    int started;
    int n, nrhs;
    cholmod_sparse *A;
    cholmod_factor *L;
    cholmod_dense *B, *X, *Y, *E;
    int factorizations;
    int failed;
    char label[128];
};

static const char *status_text(int status)
{
    switch (status) {
    case CHOLMOD_OK: return "ok";
    case CHOLMOD_NOT_INSTALLED: return "method not installed";
    case CHOLMOD_OUT_OF_MEMORY: return "out of memory";
    case CHOLMOD_TOO_LARGE: return "integer overflow (problem too large)";
    case CHOLMOD_INVALID: return "invalid input";
    case CHOLMOD_GPU_PROBLEM: return "GPU problem";
    case CHOLMOD_NOT_POSDEF: return "matrix not positive definite";
    case CHOLMOD_DSMALL: return "diagonal entry of the factor tiny";
    default: return "unknown status";
    }
}

/* After a CHOLMOD call: a negative status (or a failed call) is an internal error. */
static int check(cb_chol *c, int ok, const char *call, cb_error *err)
{
    if (c->c.status < 0 || !ok) {
        int rc = c->c.status == CHOLMOD_OUT_OF_MEMORY ? CB_ERR_NOMEM : CB_ERR_INTERNAL;
        return CB_FAIL(err, rc, "%s: %s failed: CHOLMOD status %d (%s)", c->label, call, c->c.status,
                       status_text(c->c.status));
    }
    return CB_OK;
}

void cb_chol_free(cb_chol **pc)
{
    if (!pc || !*pc) return;
    cb_chol *c = *pc;
    if (c->started) {
        cholmod_free_sparse(&c->A, &c->c);
        cholmod_free_factor(&c->L, &c->c);
        cholmod_free_dense(&c->B, &c->c);
        cholmod_free_dense(&c->X, &c->c);
        cholmod_free_dense(&c->Y, &c->c);
        cholmod_free_dense(&c->E, &c->c);
        cholmod_finish(&c->c);
    }
    free(c);
    *pc = NULL;
}

int cb_chol_create(int n, const int *colptr, const int *rowidx, int nrhs, cb_chol_mode mode,
                   const char *label, cb_chol **out, cb_error *err)
{
    if (!out) return CB_FAIL(err, CB_ERR_INPUT, "cb_chol_create: NULL output");
    *out = NULL;
    if (!label) label = "sparse system";
    if (n <= 0) return CB_FAIL(err, CB_ERR_INPUT, "%s: empty system (%d unknowns): nothing to factor", label, n);
    if (!colptr || !rowidx) return CB_FAIL(err, CB_ERR_INPUT, "%s: NULL pattern", label);
    if (nrhs < 1) return CB_FAIL(err, CB_ERR_INPUT, "%s: %d right-hand sides (need >= 1)", label, nrhs);
    if (mode < CB_CHOL_AUTO || mode > CB_CHOL_SUPERNODAL)
        return CB_FAIL(err, CB_ERR_INPUT, "%s: unknown factorization mode %d", label, (int)mode);
    /* the pattern: lower triangle, sorted, diagonal present */
    if (colptr[0] != 0) return CB_FAIL(err, CB_ERR_INPUT, "%s: colptr[0] = %d (must be 0)", label, colptr[0]);
    for (int j = 0; j < n; j++) {
        if (colptr[j + 1] <= colptr[j])
            return CB_FAIL(err, CB_ERR_INPUT, "%s: column %d is empty (no diagonal entry)", label, j);
        if (rowidx[colptr[j]] != j)
            return CB_FAIL(err, CB_ERR_INPUT, "%s: column %d does not start with its diagonal entry", label, j);
        for (int p = colptr[j] + 1; p < colptr[j + 1]; p++)
            if (rowidx[p] <= rowidx[p - 1] || rowidx[p] >= n)
                return CB_FAIL(err, CB_ERR_INPUT, "%s: column %d: row %d out of order or out of range", label, j,
                               rowidx[p]);
    }
    cb_chol *c = cb_calloc(1, sizeof *c);
    if (!c) return CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", label);
    snprintf(c->label, sizeof c->label, "%s", label);
    c->n = n;
    c->nrhs = nrhs;
    c->failed = -1;
    int rc = CB_OK;
    if (!cholmod_start(&c->c)) {
        rc = CB_FAIL(err, CB_ERR_INTERNAL, "%s: cholmod_start failed", label);
        free(c);
        return rc;
    }
    c->started = 1;
    c->c.print = 0;            /* never print: errors come back through cb_error */
    c->c.error_handler = NULL;
    c->c.final_ll = 1;         /* keep LL^T (no conversion to LDL^T after a simplicial factor) */
    c->c.supernodal = mode == CB_CHOL_SIMPLICIAL ? CHOLMOD_SIMPLICIAL
                    : mode == CB_CHOL_SUPERNODAL ? CHOLMOD_SUPERNODAL : CHOLMOD_AUTO;
    int nnz = colptr[n];
    c->A = cholmod_allocate_sparse((size_t)n, (size_t)n, (size_t)nnz, 1, 1, -1, CHOLMOD_REAL, &c->c);
    rc = check(c, c->A != NULL, "cholmod_allocate_sparse", err);
    if (!rc) {
        memcpy(c->A->p, colptr, (size_t)(n + 1) * sizeof(int));
        memcpy(c->A->i, rowidx, (size_t)nnz * sizeof(int));
        memset(c->A->x, 0, (size_t)nnz * sizeof(double));
        c->B = cholmod_zeros((size_t)n, (size_t)nrhs, CHOLMOD_REAL, &c->c);
        rc = check(c, c->B != NULL, "cholmod_zeros", err);
    }
    if (rc) {
        cb_chol_free(&c);
        return rc;
    }
    *out = c;
    return CB_OK;
}

int cb_chol_size(const cb_chol *c) { return c ? c->n : 0; }
double *cb_chol_values(cb_chol *c) { return c ? (double *)c->A->x : NULL; }
double *cb_chol_rhs(cb_chol *c) { return c ? (double *)c->B->x : NULL; }
int cb_chol_factorizations(const cb_chol *c) { return c ? c->factorizations : 0; }
int cb_chol_failed_unknown(const cb_chol *c) { return c ? c->failed : -1; }
int cb_chol_is_supernodal(const cb_chol *c) { return c && c->L ? c->L->is_super : 0; }

double cb_chol_factor_nnz(const cb_chol *c)
{
    if (!c || !c->L) return 0.0;
    if (c->L->is_super) return (double)c->L->xsize;
    const int *colp = c->L->p, *cnt = c->L->nz;
    double nz = 0.0;
    for (int j = 0; j < c->n; j++) nz += cnt ? cnt[j] : colp[j + 1] - colp[j];
    return nz;
}

int cb_chol_factor(cb_chol *c, cb_error *err)
{
    if (!c) return CB_FAIL(err, CB_ERR_INPUT, "cb_chol_factor: NULL system");
    int rc;
    if (!c->L) {
        c->L = cholmod_analyze(c->A, &c->c);
        rc = check(c, c->L != NULL, "cholmod_analyze", err);
        if (rc) return rc;
    }
    c->failed = -1;
    int ok = cholmod_factorize(c->A, c->L, &c->c);
    rc = check(c, ok, "cholmod_factorize", err);
    if (rc) return rc;
    c->factorizations++;
    if (c->c.status == CHOLMOD_NOT_POSDEF) {
        int col = (int)c->L->minor;
        const int *perm = c->L->Perm;
        c->failed = perm && col >= 0 && col < c->n ? perm[col] : col;
        return CB_FAIL(err, CB_ERR_NUMERIC,
                       "%s is not positive definite (CHOLMOD_NOT_POSDEF): the pivot of unknown %d "
                       "(column %d of %d in the fill-reducing order) is not positive",
                       c->label, c->failed, col, c->n);
    }
    if (c->c.status != CHOLMOD_OK && c->c.status != CHOLMOD_DSMALL)
        return CB_FAIL(err, CB_ERR_INTERNAL, "%s: cholmod_factorize: CHOLMOD status %d (%s)", c->label,
                       c->c.status, status_text(c->c.status));
    return CB_OK;
}

int cb_chol_solve(cb_chol *c, const double **x, cb_error *err)
{
    if (!c || !x) return CB_FAIL(err, CB_ERR_INPUT, "cb_chol_solve: NULL argument");
    if (!c->L || c->failed >= 0 || !c->factorizations)
        return CB_FAIL(err, CB_ERR_INPUT, "%s: solve without a valid factorization", c->label);
    int ok = cholmod_solve2(CHOLMOD_A, c->L, c->B, NULL, &c->X, NULL, &c->Y, &c->E, &c->c);
    int rc = check(c, ok, "cholmod_solve2", err);
    if (rc) return rc;
    *x = c->X->x;
    return CB_OK;
}
