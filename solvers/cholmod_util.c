/* solvers/cholmod_util.c — sparse SPD systems through CHOLMOD, every call checked
 * (cholmod_util.h). */
#include "solvers/cholmod_util.h"

#include <cholmod.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Four doubles in one vector (GCC/Clang vector extension): x, y, z of an unknown and
 * a pad, so one load serves the three coordinates. */
typedef double cb_v4 __attribute__((vector_size(32)));

struct cb_chol {
    cholmod_common c;
    int started;
    int n, nrhs;
    cholmod_sparse *A;
    cholmod_factor *L;
    cholmod_dense *B, *X, *Y, *E;
    /* the factor copied for cb_chol_solve3: its strictly lower part both by columns
     * (lp/li/lx, for the backward solve) and by rows (rp/ri/rx, for the forward
     * solve), rows/columns increasing, exact zeros of a supernodal factor's dense
     * blocks left out; dinv = 1 / diagonal */
    int *lp, *li, *rp, *ri, *perm;
    double *lx, *rx, *dinv;
    cb_v4 *w;                /* [n] permuted right-hand side / solution (x, y, z, unused) */
    long lcap;               /* capacity of li, lx, ri, rx */
    int copied;              /* the copy holds the current factor */
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
    free(c->lp);
    free(c->li);
    free(c->lx);
    free(c->rp);
    free(c->ri);
    free(c->rx);
    free(c->dinv);
    free(c->perm);
    free(c->w);
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

/* Copy the numeric factor L (simplicial or supernodal, LL^T) for cb_chol_solve3, by
 * columns and by rows, and the ordering into perm. Allocates only when the factor grows. */
static int copy_factor(cb_chol *c, cb_error *err)
{
    const cholmod_factor *L = c->L;
    int n = c->n;
    if (!L->is_ll || L->xtype != CHOLMOD_REAL)
        return CB_FAIL(err, CB_ERR_INTERNAL, "%s: the factor is not a real LL^T factor", c->label);
    long cap = L->is_super ? (long)L->xsize : 0;
    if (!L->is_super) {
        const int *nz = L->nz;
        for (int j = 0; j < n; j++) cap += nz[j];
    }
    if (!c->lp) {
        c->lp = cb_calloc((size_t)n + 1, sizeof *c->lp);
        c->rp = cb_calloc((size_t)n + 1, sizeof *c->rp);
        c->dinv = cb_calloc((size_t)n, sizeof *c->dinv);
        c->perm = cb_calloc((size_t)n, sizeof *c->perm);
        c->w = aligned_alloc(32, (size_t)n * sizeof *c->w);
        if (!c->lp || !c->rp || !c->dinv || !c->perm || !c->w)
            return CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", c->label);
    }
    if (cap > c->lcap) {
        free(c->li);
        free(c->lx);
        free(c->ri);
        free(c->rx);
        c->li = cb_calloc((size_t)cap, sizeof *c->li);
        c->lx = cb_calloc((size_t)cap, sizeof *c->lx);
        c->ri = cb_calloc((size_t)cap, sizeof *c->ri);
        c->rx = cb_calloc((size_t)cap, sizeof *c->rx);
        c->lcap = c->li && c->lx && c->ri && c->rx ? cap : 0;
        if (!c->lcap) return CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory for a factor of %ld entries", c->label, cap);
    }
    const int *perm = L->Perm;
    for (int k = 0; k < n; k++) c->perm[k] = perm ? perm[k] : k;
    long q = 0;
    double dmin = 1.0;
    if (L->is_super) {
        const int *super = L->super, *pi = L->pi, *px = L->px, *ls = L->s;
        const double *x = L->x;
        for (int s = 0; s < (int)L->nsuper; s++) {
            int k1 = super[s], k2 = super[s + 1], nsrow = pi[s + 1] - pi[s];
            for (int j = k1; j < k2; j++) {
                int jj = j - k1;
                const double *col = x + px[s] + (long)jj * nsrow;
                c->lp[j] = (int)q;
                if (!(col[jj] > 0)) dmin = col[jj];
                c->dinv[j] = 1.0 / col[jj];
                for (int ii = jj + 1; ii < nsrow; ii++)
                    if (col[ii] != 0.0) {
                        c->li[q] = ls[pi[s] + ii];
                        c->lx[q++] = col[ii];
                    }
            }
        }
    } else {
        const int *p = L->p, *i = L->i, *nz = L->nz;
        const double *x = L->x;
        for (int j = 0; j < n; j++) {
            c->lp[j] = (int)q;
            if (nz[j] < 1 || i[p[j]] != j || !(x[p[j]] > 0)) dmin = nz[j] < 1 ? 0.0 : x[p[j]];
            else c->dinv[j] = 1.0 / x[p[j]];
            for (int e = p[j] + 1; e < p[j] + nz[j]; e++) {
                c->li[q] = i[e];
                c->lx[q++] = x[e];
            }
        }
    }
    c->lp[n] = (int)q;
    if (!(dmin > 0))
        return CB_FAIL(err, CB_ERR_INTERNAL, "%s: the factor has a diagonal entry %g (not positive)", c->label, dmin);
    /* by rows: a counting transpose (rows come out with increasing columns) */
    for (int i = 0; i <= n; i++) c->rp[i] = 0;
    for (long e = 0; e < q; e++) c->rp[c->li[e] + 1]++;
    for (int i = 0; i < n; i++) c->rp[i + 1] += c->rp[i];
    for (int j = 0; j < n; j++)
        for (int e = c->lp[j]; e < c->lp[j + 1]; e++) {
            int dst = c->rp[c->li[e]]++;
            c->ri[dst] = j;
            c->rx[dst] = c->lx[e];
        }
    for (int i = n; i > 0; i--) c->rp[i] = c->rp[i - 1];
    c->rp[0] = 0;
    c->copied = 1;
    return CB_OK;
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
    c->copied = 0;
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

/* The two triangular solves on w (n x 4, see struct cb_chol); both are dot products
 * (L by rows forward, by columns backward): each factor entry is read once for the
 * three coordinates and only w[i] is written. Four partial sums per row break the
 * chain of additions. Compiled twice where the compiler can (AVX2 + FMA and the
 * baseline), chosen at load time by the CPU. */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("avx2", "default")))
#endif
static void tri_solves(int n, const int *restrict rp, const int *restrict ri, const double *restrict rx,
                       const int *restrict lp, const int *restrict li, const double *restrict lx,
                       const double *restrict dinv, cb_v4 *restrict w)
{
    for (int i = 0; i < n; i++) {
        cb_v4 s0 = {0, 0, 0, 0}, s1 = s0, s2 = s0, s3 = s0;
        int q = rp[i], e = rp[i + 1];
        for (; q + 4 <= e; q += 4) {
            s0 += rx[q] * w[ri[q]];
            s1 += rx[q + 1] * w[ri[q + 1]];
            s2 += rx[q + 2] * w[ri[q + 2]];
            s3 += rx[q + 3] * w[ri[q + 3]];
        }
        for (; q < e; q++) s0 += rx[q] * w[ri[q]];
        w[i] = (w[i] - ((s0 + s1) + (s2 + s3))) * dinv[i];
    }
    for (int j = n - 1; j >= 0; j--) {
        cb_v4 s0 = {0, 0, 0, 0}, s1 = s0, s2 = s0, s3 = s0;
        int q = lp[j], e = lp[j + 1];
        for (; q + 4 <= e; q += 4) {
            s0 += lx[q] * w[li[q]];
            s1 += lx[q + 1] * w[li[q + 1]];
            s2 += lx[q + 2] * w[li[q + 2]];
            s3 += lx[q + 3] * w[li[q + 3]];
        }
        for (; q < e; q++) s0 += lx[q] * w[li[q]];
        w[j] = (w[j] - ((s0 + s1) + (s2 + s3))) * dinv[j];
    }
}

int cb_chol_solve3(cb_chol *c, double (*b)[3], cb_error *err)
{
    if (!c || !b) return CB_FAIL(err, CB_ERR_INPUT, "cb_chol_solve3: NULL argument");
    if (!c->L || c->failed >= 0 || !c->factorizations)
        return CB_FAIL(err, CB_ERR_INPUT, "%s: solve without a valid factorization", c->label);
    if (!c->copied) { /* the first solve after a factorization (newton never pays for it) */
        int rc = copy_factor(c, err);
        if (rc) return rc;
    }
    const int n = c->n, *perm = c->perm;
    cb_v4 *w = c->w;
    /* P A P^T = L L^T: w = P b, L z = w, L^T w = z, x = P^T w */
    for (int k = 0; k < n; k++) {
        const double *s = b[perm[k]];
        w[k] = (cb_v4){s[0], s[1], s[2], 0.0};
    }
    tri_solves(n, c->rp, c->ri, c->rx, c->lp, c->li, c->lx, c->dinv, w);
    for (int k = 0; k < n; k++) {
        double *t = b[perm[k]];
        t[0] = w[k][0];
        t[1] = w[k][1];
        t[2] = w[k][2];
    }
    return CB_OK;
}
