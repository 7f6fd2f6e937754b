/* solvers/cholmod_util.c — sparse SPD systems through CHOLMOD, every call checked
 * (cholmod_util.h). */
#include "solvers/cholmod_util.h"

#include <cholmod.h>
#include <stdio.h>
#include <cblas.h> /* OpenBLAS's: openblas_set_num_threads */
#ifdef _OPENMP
#include <omp.h>
#endif
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
    /* the factor copied for cb_chol_solve3 in supernodes: supernode s has the columns
     * sup[s] .. sup[s+1]-1 and the rows srow[rp[s] .. rp[s+1]-1] (its own columns
     * first, then the rows below, increasing); its values are a dense column-major
     * block of (rp[s+1]-rp[s]) x (sup[s+1]-sup[s]) doubles at sx[s] (entries above the
     * diagonal unused). From a supernodal factor these are CHOLMOD's supernodes; from a
     * simplicial one, the fundamental supernodes (runs of columns whose patterns nest
     * exactly, so no zero is stored). dinv = 1 / diagonal. From a supernodal factor
     * nothing is copied: vrow and vval point into CHOLMOD's own L->s and L->x (its
     * layout is this one), from a simplicial one at the copy srow, sv. */
    int nsup;
    int *sup, *rp, *srow, *perm;
    const int *vrow;         /* the rows the solves read: L->s or srow */
    const double *vval;      /* the values the solves read: L->x or sv */
    long *sx;
    double *sv, *dinv;
    cb_v4 *w;                /* [n] permuted right-hand side / solution (x, y, z, unused) */
    cb_v4 *t;                /* [tcap] the rows of one supernode (tri_solves' u) */
    long rcap, vcap;         /* capacity of srow, sv */
    int tcap;
    int copied;              /* the copy holds the current factor */
    int factorizations;
    int failed;
    int threads;             /* threads of CHOLMOD and BLAS in this system's calls (0: one per core) */
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
    free(c->sup);
    free(c->rp);
    free(c->srow);
    free(c->perm);
    free(c->sx);
    free(c->sv);
    free(c->dinv);
    free(c->t);
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
    c->threads = 1;
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
void cb_chol_set_threads(cb_chol *c, int threads)
{
    if (c) c->threads = threads >= 0 ? threads : 1;
}

/* The library thread state of one CHOLMOD call: the system's count is set before the
 * call and the caller's put back after it (threads_enter / threads_leave), so what a
 * call gets depends on its system alone, never on what ran before in the process. */
typedef struct threads_saved {
    int blas;   /* OpenBLAS's count (process-wide; nothing else in clothbench calls BLAS) */
    int levels; /* OpenMP's max-active-levels of this thread */
} threads_saved;

static threads_saved threads_enter(const cb_chol *c)
{
    threads_saved saved = {openblas_get_num_threads(), 0};
    int n = c->threads;
#ifdef _OPENMP
    if (n == 0) n = omp_get_num_procs();
    /* CHOLMOD's supernodal factorization opens its parallel regions with a compiled-in
     * num_threads clause (4 in Debian's build), which OMP_NUM_THREADS does not limit.
     * max-active-levels 0 makes every region the calling thread opens inactive (one
     * thread); it is a per-task ICV, so other threads and later regions keep theirs. */
    saved.levels = omp_get_max_active_levels();
    if (n == 1) omp_set_max_active_levels(0);
#else
    if (n == 0) n = saved.blas;
#endif
    /* the BLAS of the supernodal blocks and solves: OpenBLAS's own pthread pool (setting
     * the count is a store while it does not exceed the pool started at load) */
    if (n != saved.blas) openblas_set_num_threads(n);
    return saved;
}

static void threads_leave(const cb_chol *c, threads_saved saved)
{
    (void)c;
#ifdef _OPENMP
    omp_set_max_active_levels(saved.levels);
#endif
    if (openblas_get_num_threads() != saved.blas) openblas_set_num_threads(saved.blas);
}
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

/* Grow an array to hold need elements (contents not kept). */
static int grow(void **p, long *cap, long need, size_t size)
{
    if (need <= *cap) return 0;
    free(*p);
    *p = cb_calloc((size_t)need, size);
    *cap = *p ? need : 0;
    return *p ? 0 : -1;
}

/* Copy the numeric factor L (simplicial or supernodal, LL^T) into supernodes for
 * cb_chol_solve3 (see struct cb_chol), and the ordering into perm. Allocates only
 * when the factor grows. */
static int copy_factor(cb_chol *c, cb_error *err)
{
    const cholmod_factor *L = c->L;
    int n = c->n;
    if (!L->is_ll || L->xtype != CHOLMOD_REAL)
        return CB_FAIL(err, CB_ERR_INTERNAL, "%s: the factor is not a real LL^T factor", c->label);
    if (!c->sup) {
        c->sup = cb_calloc((size_t)n + 1, sizeof *c->sup);
        c->rp = cb_calloc((size_t)n + 1, sizeof *c->rp);
        c->sx = cb_calloc((size_t)n + 1, sizeof *c->sx);
        c->dinv = cb_calloc((size_t)n, sizeof *c->dinv);
        c->perm = cb_calloc((size_t)n, sizeof *c->perm);
        c->w = aligned_alloc(32, (size_t)n * sizeof *c->w);
        if (!c->sup || !c->rp || !c->sx || !c->dinv || !c->perm || !c->w)
            return CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", c->label);
    }
    const int *perm = L->Perm;
    for (int k = 0; k < n; k++) c->perm[k] = perm ? perm[k] : k;
    /* the supernode partition, row counts and value sizes */
    int ns = 0;
    long nrows = 0, nvals = 0;
    int maxrows = 1;
    const int *super = L->super, *pi = L->pi, *px = L->px;
    if (L->is_super) {
        ns = (int)L->nsuper;
        for (int s = 0; s < ns; s++) {
            int nc = super[s + 1] - super[s], nr = pi[s + 1] - pi[s];
            c->sup[s] = super[s];
            c->rp[s] = pi[s];
            c->sx[s] = px[s];
            nrows = pi[s + 1];
            nvals = (long)px[s] + (long)nr * nc;
            if (nr > maxrows) maxrows = nr;
        }
    } else {
        const int *p = L->p, *i = L->i, *nz = L->nz;
        for (int j = 0; j < n;) {
            int k2 = j + 1;
            /* column k2 joins when its pattern is column k2-1's without its diagonal */
            while (k2 < n && nz[k2] == nz[k2 - 1] - 1 && nz[k2] >= 1 &&
                   !memcmp(i + p[k2], i + p[k2 - 1] + 1, (size_t)nz[k2] * sizeof(int)))
                k2++;
            int nc = k2 - j, nr = nz[j];
            c->sup[ns] = j;
            c->rp[ns] = (int)nrows;
            c->sx[ns] = nvals;
            ns++;
            nrows += nr;
            nvals += (long)nr * nc;
            if (nr > maxrows) maxrows = nr;
            j = k2;
        }
    }
    c->sup[ns] = n;
    c->rp[ns] = (int)nrows;
    c->sx[ns] = nvals;
    c->nsup = ns;
    long tcap = c->tcap;
    if (!L->is_super && (grow((void **)&c->srow, &c->rcap, nrows, sizeof *c->srow) ||
                         grow((void **)&c->sv, &c->vcap, nvals, sizeof *c->sv)))
        return CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory for a factor of %ld entries", c->label, nvals);
    if (maxrows > c->tcap) {
        free(c->t);
        c->t = aligned_alloc(32, (size_t)maxrows * sizeof *c->t);
        tcap = c->t ? maxrows : 0;
        c->tcap = (int)tcap;
        if (!c->t) return CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", c->label);
    }
    double dmin = 1.0;
    if (L->is_super) { /* read in place: the 3-15 ms copy of a 6k-vertex factor was mostly page faults */
        c->vrow = L->s;
        c->vval = L->x;
        for (int s = 0; s < ns; s++) {
            int k1 = c->sup[s], nc = c->sup[s + 1] - k1, nr = c->rp[s + 1] - c->rp[s];
            const double *x = (const double *)L->x + px[s];
            for (int jj = 0; jj < nc; jj++) {
                double d = x[(long)jj * nr + jj];
                if (!(d > 0)) dmin = d;
                else c->dinv[k1 + jj] = 1.0 / d;
            }
        }
    } else {
        const int *p = L->p, *i = L->i, *nz = L->nz;
        const double *x = L->x;
        c->vrow = c->srow;
        c->vval = c->sv;
        for (int s = 0; s < ns; s++) {
            int k1 = c->sup[s], nc = c->sup[s + 1] - k1, nr = c->rp[s + 1] - c->rp[s];
            memcpy(c->srow + c->rp[s], i + p[k1], (size_t)nr * sizeof *c->srow);
            double *v = c->sv + c->sx[s];
            for (int jj = 0; jj < nc; jj++) {
                int j = k1 + jj;
                double *col = v + (long)jj * nr;
                for (int r = 0; r < jj; r++) col[r] = 0.0;
                memcpy(col + jj, x + p[j], (size_t)nz[j] * sizeof(double));
                if (nz[j] < 1 || i[p[j]] != j || !(x[p[j]] > 0)) dmin = nz[j] < 1 ? 0.0 : x[p[j]];
                else c->dinv[j] = 1.0 / x[p[j]];
            }
        }
    }
    if (!(dmin > 0))
        return CB_FAIL(err, CB_ERR_INTERNAL, "%s: the factor has a diagonal entry %g (not positive)", c->label, dmin);
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
    threads_saved saved = threads_enter(c);
    int ok = cholmod_factorize(c->A, c->L, &c->c);
    threads_leave(c, saved);
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
    threads_saved saved = threads_enter(c);
    int ok = cholmod_solve2(CHOLMOD_A, c->L, c->B, NULL, &c->X, NULL, &c->Y, &c->E, &c->c);
    threads_leave(c, saved);
    int rc = check(c, ok, "cholmod_solve2", err);
    if (rc) return rc;
    *x = c->X->x;
    return CB_OK;
}

/* The two triangular solves on w (n x 4, see struct cb_chol), supernode by supernode,
 * each factor entry read once per solve for the three coordinates and one row index
 * per row of a supernode, not per entry. Forward (L z = w): within the supernode's
 * columns a dense column-oriented solve; the rows below are accumulated in t (dense,
 * contiguous in the block's columns) and scattered into w once. Backward (L^T x = z):
 * the rows below are gathered into t once, then each column is one dense dot product,
 * last column first. Compiled twice where the compiler can (AVX2 + FMA and the
 * baseline), chosen at load time by the CPU. */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("avx2", "default")))
#endif
static void tri_solves(int ns, const int *restrict sup, const int *restrict rp, const int *restrict srow,
                       const long *restrict sx, const double *restrict sv, const double *restrict dinv,
                       cb_v4 *restrict w, cb_v4 *restrict u)
{
    const cb_v4 zero = {0, 0, 0, 0};
    for (int s = 0; s < ns; s++) {
        const int k1 = sup[s], nc = sup[s + 1] - k1, nr = rp[s + 1] - rp[s];
        const int *row = srow + rp[s];
        const double *v = sv + sx[s];
        /* u: the supernode's own unknowns, then the updates of the rows below */
        for (int r = 0; r < nc; r++) u[r] = w[k1 + r];
        for (int r = nc; r < nr; r++) u[r] = zero;
        int jj = 0;
        for (; jj + 4 <= nc; jj += 4) { /* four columns per sweep over the rows */
            const double *c0 = v + (long)jj * nr, *c1 = c0 + nr, *c2 = c1 + nr, *c3 = c2 + nr;
            cb_v4 z0 = u[jj] * dinv[k1 + jj];
            cb_v4 z1 = (u[jj + 1] - c0[jj + 1] * z0) * dinv[k1 + jj + 1];
            cb_v4 z2 = (u[jj + 2] - c0[jj + 2] * z0 - c1[jj + 2] * z1) * dinv[k1 + jj + 2];
            cb_v4 z3 = (u[jj + 3] - c0[jj + 3] * z0 - c1[jj + 3] * z1 - c2[jj + 3] * z2) * dinv[k1 + jj + 3];
            u[jj] = z0;
            u[jj + 1] = z1;
            u[jj + 2] = z2;
            u[jj + 3] = z3;
            for (int r = jj + 4; r < nr; r++) u[r] -= (c0[r] * z0 + c1[r] * z1) + (c2[r] * z2 + c3[r] * z3);
        }
        for (; jj < nc; jj++) {
            const double *c0 = v + (long)jj * nr;
            cb_v4 z0 = u[jj] * dinv[k1 + jj];
            u[jj] = z0;
            for (int r = jj + 1; r < nr; r++) u[r] -= c0[r] * z0;
        }
        for (int r = 0; r < nc; r++) w[k1 + r] = u[r];
        for (int r = nc; r < nr; r++) w[row[r]] += u[r];
    }
    for (int s = ns - 1; s >= 0; s--) {
        const int k1 = sup[s], nc = sup[s + 1] - k1, nr = rp[s + 1] - rp[s];
        const int *row = srow + rp[s];
        const double *v = sv + sx[s];
        /* u: the supernode's own right-hand side, then the solution of the rows below */
        for (int r = 0; r < nc; r++) u[r] = w[k1 + r];
        for (int r = nc; r < nr; r++) u[r] = w[row[r]];
        for (int jj = nc - 1; jj >= 0; jj--) {
            const double *col = v + (long)jj * nr;
            cb_v4 s0 = zero, s1 = zero, s2 = zero, s3 = zero;
            int r = jj + 1;
            for (; r + 4 <= nr; r += 4) {
                s0 += col[r] * u[r];
                s1 += col[r + 1] * u[r + 1];
                s2 += col[r + 2] * u[r + 2];
                s3 += col[r + 3] * u[r + 3];
            }
            for (; r < nr; r++) s0 += col[r] * u[r];
            u[jj] = (u[jj] - ((s0 + s1) + (s2 + s3))) * dinv[k1 + jj];
        }
        for (int r = 0; r < nc; r++) w[k1 + r] = u[r];
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
    tri_solves(c->nsup, c->sup, c->rp, c->vrow, c->sx, c->vval, c->dinv, w, c->t);
    for (int k = 0; k < n; k++) {
        double *t = b[perm[k]];
        t[0] = w[k][0];
        t[1] = w[k][1];
        t[2] = w[k][2];
    }
    return CB_OK;
}
