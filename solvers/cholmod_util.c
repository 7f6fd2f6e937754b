/* solvers/cholmod_util.c — sparse SPD systems through CHOLMOD, every call checked
 * (cholmod_util.h). */
#include "solvers/cholmod_util.h"
#include "solvers/chol_single.h"

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
    /* supernodal: S = tril(P A P^T) (P the factor's ordering, rows sorted), the matrix
     * cholmod_factorize makes from A with two transposes per factorization, made here
     * once as a pattern; smap[k] is the entry of A that entry k of S copies */
    cholmod_sparse *S;
    int *smap;
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
    double *t;               /* [8 tcap] tri_solves' workspace (tcap: rows of the largest supernode) */
    long rcap, vcap;         /* capacity of srow, sv */
    int tcap;
    int copied;              /* the copy holds the current factor */
    cb_chol_precision precision; /* of cb_chol_solve3's triangular solves */
    cb_chol_single *fs;      /* CB_CHOL_SINGLE: the factor's values in float (chol_single.h) */
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
        cholmod_free_sparse(&c->S, &c->c);
        cholmod_free_dense(&c->B, &c->c);
        cholmod_free_dense(&c->X, &c->c);
        cholmod_free_dense(&c->Y, &c->c);
        cholmod_free_dense(&c->E, &c->c);
        cholmod_finish(&c->c);
    }
    free(c->smap);
    free(c->sup);
    free(c->rp);
    free(c->srow);
    free(c->perm);
    free(c->sx);
    free(c->sv);
    free(c->dinv);
    free(c->t);
    free(c->w);
    cb_chol_single_free(&c->fs);
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
int cb_chol_set_precision(cb_chol *c, cb_chol_precision precision, cb_error *err)
{
    if (!c) return CB_FAIL(err, CB_ERR_INPUT, "cb_chol_set_precision: NULL system");
    if (precision != CB_CHOL_DOUBLE && precision != CB_CHOL_SINGLE)
        return CB_FAIL(err, CB_ERR_INPUT, "%s: unknown precision %d", c->label, (int)precision);
    if (precision != c->precision) c->copied = 0; /* the next solve makes the copy it needs */
    c->precision = precision;
    return CB_OK;
}
cb_chol_precision cb_chol_get_precision(const cb_chol *c) { return c ? c->precision : CB_CHOL_DOUBLE; }
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
void cb_chol_multiply(const cb_chol *c, const double *x, double *y)
{
    CB_ASSERT(c && x && y);
    const int *cp = c->A->p, *ri = c->A->i;
    const double *a = c->A->x;
    memset(y, 0, (size_t)c->n * sizeof *y);
    for (int j = 0; j < c->n; j++) {
        double xj = x[j], yj = a[cp[j]] * xj; /* the diagonal first */
        for (int p = cp[j] + 1; p < cp[j + 1]; p++) {
            int i = ri[p];
            y[i] += a[p] * xj;
            yj += a[p] * x[i];
        }
        y[j] += yj;
    }
}

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
        c->t = aligned_alloc(32, (size_t)maxrows * 8 * sizeof *c->t);
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
    if (c->precision == CB_CHOL_SINGLE) {
        int rc = cb_chol_single_set(&c->fs, n, ns, c->sup, c->rp, c->vrow, c->sx, c->vval, c->label, err);
        if (rc) return rc;
    }
    c->copied = 1;
    return CB_OK;
}

/* The pattern of S = tril(P A P^T) for a supernodal factor and the map from its entries
 * to A's (struct cb_chol), in the layout cholmod_factorize gives it (a transpose to the
 * upper triangle, then back: columns in order, rows sorted), so the factor is bit for bit
 * the one cholmod_factorize computes. Two counting passes: the entries of A bucketed by
 * their row in S, then dealt out to their columns in row order. */
static int permuted_pattern(cb_chol *c, cb_error *err)
{
    int n = c->n, nnz = ((const int *)c->A->p)[n];
    const int *ap = c->A->p, *ai = c->A->i, *perm = c->L->Perm;
    int *pinv = cb_calloc((size_t)n, sizeof *pinv), *rcnt = cb_calloc((size_t)n + 1, sizeof *rcnt),
        *byrow = cb_calloc((size_t)nnz, sizeof *byrow), *acol = cb_calloc((size_t)nnz, sizeof *acol);
    c->smap = cb_calloc((size_t)nnz, sizeof *c->smap);
    c->S = cholmod_allocate_sparse((size_t)n, (size_t)n, (size_t)nnz, 1, 1, -1, CHOLMOD_REAL, &c->c);
    int rc = pinv && rcnt && byrow && acol && c->smap ? CB_OK : CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", c->label);
    if (!rc) rc = check(c, c->S != NULL, "cholmod_allocate_sparse", err);
    if (!rc) {
        int *sp = c->S->p, *si = c->S->i;
        for (int k = 0; k < n; k++) pinv[perm ? perm[k] : k] = k;
        /* entry (i, j) of A, i >= j, is entry (max, min) of P A P^T's lower triangle */
        for (int j = 0; j < n; j++)
            for (int q = ap[j]; q < ap[j + 1]; q++) {
                int a = pinv[ai[q]], b = pinv[j];
                acol[q] = j;
                rcnt[(a > b ? a : b) + 1]++;
            }
        for (int r = 0; r < n; r++) rcnt[r + 1] += rcnt[r];
        memset(sp, 0, (size_t)(n + 1) * sizeof *sp);
        for (int j = 0; j < n; j++)
            for (int q = ap[j]; q < ap[j + 1]; q++) {
                int a = pinv[ai[q]], b = pinv[j];
                byrow[rcnt[a > b ? a : b]++] = q;
                sp[(a < b ? a : b) + 1]++;
            }
        for (int k = 0; k < n; k++) sp[k + 1] += sp[k];
        memcpy(rcnt, sp, (size_t)n * sizeof *rcnt); /* the next free slot of each column */
        for (int e = 0; e < nnz; e++) { /* by row, increasing: sorted within each column */
            int q = byrow[e], a = pinv[ai[q]], b = pinv[acol[q]], col = a < b ? a : b;
            si[rcnt[col]] = a > b ? a : b;
            c->smap[rcnt[col]++] = q;
        }
    }
    free(pinv);
    free(rcnt);
    free(byrow);
    free(acol);
    return rc;
}

int cb_chol_factor(cb_chol *c, cb_error *err)
{
    if (!c) return CB_FAIL(err, CB_ERR_INPUT, "cb_chol_factor: NULL system");
    int rc;
    if (!c->L) {
        c->L = cholmod_analyze(c->A, &c->c);
        rc = check(c, c->L != NULL, "cholmod_analyze", err);
        if (rc) return rc;
        if (c->L->is_super && (rc = permuted_pattern(c, err))) return rc;
    }
    c->failed = -1;
    threads_saved saved = threads_enter(c);
    int ok;
    if (c->S) { /* cholmod_factorize's supernodal path without its transposes */
        const double *ax = c->A->x;
        double *sx = c->S->x, beta[2] = {0.0, 0.0};
        for (long k = 0, nz = ((const int *)c->S->p)[c->n]; k < nz; k++) sx[k] = ax[c->smap[k]];
        ok = cholmod_super_numeric(c->S, NULL, beta, c->L, &c->c);
    } else {
        ok = cholmod_factorize(c->A, c->L, &c->c);
    }
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

/* Four doubles at any 8-byte boundary (the columns of a block start anywhere), and the
 * lane selectors of __builtin_shuffle. */
typedef double cb_v4u __attribute__((vector_size(32), aligned(8), may_alias));
typedef long long cb_m4 __attribute__((vector_size(32)));

/* p[0 .. 3] = the rows 0 .. 3 of the x, y and z columns X, Y, Z (fourth lane zero). */
#define TRANSPOSE_ROWS4(p, X_, Y_, Z_)                                                                \
    do {                                                                                             \
        const cb_v4 X = (X_), Y = (Y_), Z = (Z_), O = {0, 0, 0, 0};                                  \
        const cb_v4 t0 = __builtin_shuffle(X, Y, (cb_m4){0, 4, 2, 6});                               \
        const cb_v4 t1 = __builtin_shuffle(X, Y, (cb_m4){1, 5, 3, 7});                               \
        const cb_v4 t2 = __builtin_shuffle(Z, O, (cb_m4){0, 4, 2, 6});                               \
        const cb_v4 t3 = __builtin_shuffle(Z, O, (cb_m4){1, 5, 3, 7});                               \
        (p)[0] = __builtin_shuffle(t0, t2, (cb_m4){0, 1, 4, 5});                                     \
        (p)[1] = __builtin_shuffle(t1, t3, (cb_m4){0, 1, 4, 5});                                     \
        (p)[2] = __builtin_shuffle(t0, t2, (cb_m4){2, 3, 6, 7});                                     \
        (p)[3] = __builtin_shuffle(t1, t3, (cb_m4){2, 3, 6, 7});                                     \
    } while (0)

/* w[row[r .. r+3]] -= the rows r .. r+3 of the x, y and z columns X, Y, Z. */
#define SUB_ROWS4(w, row, r, X, Y, Z)                                                                 \
    do {                                                                                             \
        cb_v4 p_[4];                                                                                 \
        TRANSPOSE_ROWS4(p_, X, Y, Z);                                                                \
        for (int k_ = 0; k_ < 4; k_++) (w)[(row)[(r) + k_]] -= p_[k_];                               \
    } while (0)

/* x += a X, y += a Y, q += a Z for the four doubles a at p. */
#define MADD3(p, x, y, q, X, Y, Z)                                                                   \
    do {                                                                                             \
        const cb_v4u a_ = *(const cb_v4u *)(p);                                                      \
        (x) += a_ * (X);                                                                             \
        (y) += a_ * (Y);                                                                             \
        (q) += a_ * (Z);                                                                             \
    } while (0)

static inline double hsum4(cb_v4u a) { return (a[0] + a[1]) + (a[2] + a[3]); }

/* The two triangular solves on w (n x 4, see struct cb_chol), supernode by supernode,
 * each factor entry read once per solve for the three coordinates and one row index
 * per row of a supernode, not per entry. A supernode's block is its diagonal triangle
 * (nc x nc) over the rows below (nb x nc, B). The solves are bound by the arithmetic and
 * its dependencies, not by reading the factor (on the 81 x 81 curtain, reading the
 * factor's values twice took 37 us, the former solves 270 us, these 190 us; one core, at a
 * load of 15), so the loops put the rows of a
 * column in the vector lanes, with x, y and z in separate registers, and keep many
 * independent sums in flight:
 * Forward (L z = w): the triangle four columns at a time, each block's four rows first
 * reduced by the columns before it (rows as lanes, two sets of sums), then its 4 x 4
 * triangle (x, y, z interleaved); then w[rows below] -= B z, sixteen rows by all the
 * block's columns in twelve registers, transposed back to x, y, z rows in registers.
 * Backward (L^T x = z): the rows below gathered into separate x, y, z arrays (transposed
 * four rows at a time), B^T u four columns at a time in twelve independent sums (the
 * former column-by-column dot products were one dependent chain per column), then the
 * triangle four columns at a time from the last, each block's solution subtracted from
 * the sums of the columns before it. Plain IEEE arithmetic (C11 mode contracts nothing
 * into fused multiply-adds) on the same 4-wide lanes in every compiled variant, so every
 * machine gets the same bits. Compiled three times where the compiler can (x86-64-v4:
 * the same vectors with 32 registers; AVX2; the baseline), chosen at load time by the
 * CPU. t: 8 doubles per row of the largest supernode, 32-byte aligned. */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#endif
static void tri_solves(int ns, const int *restrict sup, const int *restrict rp, const int *restrict srow,
                       const long *restrict sx, const double *restrict sv, const double *restrict dinv,
                       cb_v4 *restrict w, double *restrict t)
{
    for (int s = 0; s < ns; s++) {
        const int k1 = sup[s], nc = sup[s + 1] - k1, nr = rp[s + 1] - rp[s], nb = nr - nc;
        const int *row = srow + rp[s] + nc;
        const double *v = sv + sx[s];
        cb_v4 *restrict u = (cb_v4 *)t;                                                   /* [nc] */
        double *restrict zx = t + 4 * nc, *restrict zy = zx + nc, *restrict zz = zy + nc; /* [nc] each */
        int jj = 0;
        for (; jj + 4 <= nc; jj += 4) { /* four columns at a time: */
            /* their rows minus the columns before them (rows jj .. jj+3 as the lanes) */
            cb_v4u ax = {0, 0, 0, 0}, ay = ax, az = ax, ex = ax, ey = ax, ez = ax;
            const double *c = v + jj;
            int j = 0;
            for (; j + 2 <= jj; j += 2, c += 2 * nr) {
                const cb_v4u A = *(const cb_v4u *)c, E = *(const cb_v4u *)(c + nr);
                ax += A * zx[j];
                ay += A * zy[j];
                az += A * zz[j];
                ex += E * zx[j + 1];
                ey += E * zy[j + 1];
                ez += E * zz[j + 1];
            }
            if (j < jj) {
                const cb_v4u A = *(const cb_v4u *)c;
                ax += A * zx[j];
                ay += A * zy[j];
                az += A * zz[j];
            }
            cb_v4 p[4];
            TRANSPOSE_ROWS4(p, ax + ex, ay + ey, az + ez);
            /* then the 4 x 4 triangle */
            const double *c0 = v + (long)jj * nr, *c1 = c0 + nr, *c2 = c1 + nr;
            const double *d = dinv + k1 + jj;
            const cb_v4 z0 = (w[k1 + jj] - p[0]) * d[0];
            const cb_v4 z1 = (w[k1 + jj + 1] - p[1] - c0[jj + 1] * z0) * d[1];
            const cb_v4 z2 = (w[k1 + jj + 2] - p[2] - c0[jj + 2] * z0 - c1[jj + 2] * z1) * d[2];
            const cb_v4 z3 = (w[k1 + jj + 3] - p[3] - c0[jj + 3] * z0 - c1[jj + 3] * z1 - c2[jj + 3] * z2) * d[3];
            u[jj] = z0;
            u[jj + 1] = z1;
            u[jj + 2] = z2;
            u[jj + 3] = z3;
            for (int k = jj; k < jj + 4; k++) {
                zx[k] = u[k][0];
                zy[k] = u[k][1];
                zz[k] = u[k][2];
            }
        }
        for (; jj < nc; jj++) { /* the last columns one at a time */
            cb_v4 a = w[k1 + jj];
            const double *c = v + jj;
            for (int j = 0; j < jj; j++, c += nr) a -= *c * u[j];
            u[jj] = a * dinv[k1 + jj];
            zx[jj] = u[jj][0];
            zy[jj] = u[jj][1];
            zz[jj] = u[jj][2];
        }
        for (int r = 0; r < nc; r++) w[k1 + r] = u[r];
        /* the rows below: w[row] -= B z */
        const double *bv = v + nc;
        int r = 0;
        for (; r + 16 <= nb; r += 16) {
            cb_v4u x0 = {0, 0, 0, 0}, x1 = x0, x2 = x0, x3 = x0, y0 = x0, y1 = x0, y2 = x0, y3 = x0;
            cb_v4u q0 = x0, q1 = x0, q2 = x0, q3 = x0;
            const double *c = bv + r;
            for (int j = 0; j < nc; j++, c += nr) {
                const double X = zx[j], Y = zy[j], Z = zz[j];
                MADD3(c, x0, y0, q0, X, Y, Z);
                MADD3(c + 4, x1, y1, q1, X, Y, Z);
                MADD3(c + 8, x2, y2, q2, X, Y, Z);
                MADD3(c + 12, x3, y3, q3, X, Y, Z);
            }
            SUB_ROWS4(w, row, r, x0, y0, q0);
            SUB_ROWS4(w, row, r + 4, x1, y1, q1);
            SUB_ROWS4(w, row, r + 8, x2, y2, q2);
            SUB_ROWS4(w, row, r + 12, x3, y3, q3);
        }
        for (; r + 4 <= nb; r += 4) {
            cb_v4u x0 = {0, 0, 0, 0}, y0 = x0, q0 = x0;
            const double *c = bv + r;
            for (int j = 0; j < nc; j++, c += nr) {
                const cb_v4u a0 = *(const cb_v4u *)c;
                x0 += a0 * zx[j];
                y0 += a0 * zy[j];
                q0 += a0 * zz[j];
            }
            SUB_ROWS4(w, row, r, x0, y0, q0);
        }
        for (; r < nb; r++) {
            cb_v4 acc = {0, 0, 0, 0};
            const double *c = bv + r;
            for (int j = 0; j < nc; j++, c += nr) acc += *c * u[j];
            w[row[r]] -= acc;
        }
    }
    for (int s = ns - 1; s >= 0; s--) {
        const int k1 = sup[s], nc = sup[s + 1] - k1, nr = rp[s + 1] - rp[s], nb = nr - nc;
        const int *row = srow + rp[s] + nc;
        const double *v = sv + sx[s];
        cb_v4 *restrict u = (cb_v4 *)t, *restrict tt = u + nc; /* [nc] unknowns, [nc] their sums B^T u */
        double *restrict bx = t + 8 * nc, *restrict by = bx + nb, *restrict bz = by + nb; /* [nb] each */
        for (int r = 0; r < nc; r++) u[r] = w[k1 + r];
        int r = 0;
        for (; r + 4 <= nb; r += 4) {
            const cb_v4 p0 = w[row[r]], p1 = w[row[r + 1]], p2 = w[row[r + 2]], p3 = w[row[r + 3]];
            const cb_v4 t0 = __builtin_shuffle(p0, p1, (cb_m4){0, 4, 2, 6});
            const cb_v4 t1 = __builtin_shuffle(p0, p1, (cb_m4){1, 5, 3, 7});
            const cb_v4 t2 = __builtin_shuffle(p2, p3, (cb_m4){0, 4, 2, 6});
            const cb_v4 t3 = __builtin_shuffle(p2, p3, (cb_m4){1, 5, 3, 7});
            *(cb_v4u *)(bx + r) = __builtin_shuffle(t0, t2, (cb_m4){0, 1, 4, 5});
            *(cb_v4u *)(by + r) = __builtin_shuffle(t1, t3, (cb_m4){0, 1, 4, 5});
            *(cb_v4u *)(bz + r) = __builtin_shuffle(t0, t2, (cb_m4){2, 3, 6, 7});
        }
        for (; r < nb; r++) {
            const cb_v4 p = w[row[r]];
            bx[r] = p[0];
            by[r] = p[1];
            bz[r] = p[2];
        }
        /* tt = B^T u (the rows below), four columns at a time */
        int j = 0;
        for (; j + 4 <= nc; j += 4) {
            const double *c0 = v + (long)j * nr + nc, *c1 = c0 + nr, *c2 = c1 + nr, *c3 = c2 + nr;
            cb_v4u x0 = {0, 0, 0, 0}, x1 = x0, x2 = x0, x3 = x0, y0 = x0, y1 = x0, y2 = x0, y3 = x0;
            cb_v4u q0 = x0, q1 = x0, q2 = x0, q3 = x0;
            r = 0;
            for (; r + 4 <= nb; r += 4) {
                const cb_v4u X = *(const cb_v4u *)(bx + r), Y = *(const cb_v4u *)(by + r), Z = *(const cb_v4u *)(bz + r);
                MADD3(c0 + r, x0, y0, q0, X, Y, Z);
                MADD3(c1 + r, x1, y1, q1, X, Y, Z);
                MADD3(c2 + r, x2, y2, q2, X, Y, Z);
                MADD3(c3 + r, x3, y3, q3, X, Y, Z);
            }
            cb_v4 s0 = {hsum4(x0), hsum4(y0), hsum4(q0), 0}, s1 = {hsum4(x1), hsum4(y1), hsum4(q1), 0};
            cb_v4 s2 = {hsum4(x2), hsum4(y2), hsum4(q2), 0}, s3 = {hsum4(x3), hsum4(y3), hsum4(q3), 0};
            for (; r < nb; r++) {
                const cb_v4 p = {bx[r], by[r], bz[r], 0};
                s0 += c0[r] * p;
                s1 += c1[r] * p;
                s2 += c2[r] * p;
                s3 += c3[r] * p;
            }
            tt[j] = s0;
            tt[j + 1] = s1;
            tt[j + 2] = s2;
            tt[j + 3] = s3;
        }
        for (; j < nc; j++) {
            const double *c0 = v + (long)j * nr + nc;
            cb_v4u x0 = {0, 0, 0, 0}, y0 = x0, q0 = x0;
            r = 0;
            for (; r + 4 <= nb; r += 4) {
                const cb_v4u a = *(const cb_v4u *)(c0 + r);
                x0 += a * *(const cb_v4u *)(bx + r);
                y0 += a * *(const cb_v4u *)(by + r);
                q0 += a * *(const cb_v4u *)(bz + r);
            }
            cb_v4 s0 = {hsum4(x0), hsum4(y0), hsum4(q0), 0};
            for (; r < nb; r++) s0 += c0[r] * (cb_v4){bx[r], by[r], bz[r], 0};
            tt[j] = s0;
        }
        /* the triangle, four columns at a time from the last */
        int j1 = nc;
        for (; j1 >= 4; j1 -= 4) {
            const int j0 = j1 - 4;
            const double *c0 = v + (long)j0 * nr + j0, *c1 = c0 + nr, *c2 = c1 + nr;
            const double *d = dinv + k1 + j0;
            const cb_v4 u3 = (u[j0 + 3] - tt[j0 + 3]) * d[3];
            const cb_v4 u2 = (u[j0 + 2] - tt[j0 + 2] - c2[3] * u3) * d[2];
            const cb_v4 u1 = (u[j0 + 1] - tt[j0 + 1] - (c1[2] * u2 + c1[3] * u3)) * d[1];
            const cb_v4 u0 = (u[j0] - tt[j0] - (c0[1] * u1 + (c0[2] * u2 + c0[3] * u3))) * d[0];
            u[j0] = u0;
            u[j0 + 1] = u1;
            u[j0 + 2] = u2;
            u[j0 + 3] = u3;
            for (int jp = 0; jp < j0; jp++) {
                const double *c = v + (long)jp * nr + j0;
                tt[jp] += (c[0] * u0 + c[1] * u1) + (c[2] * u2 + c[3] * u3);
            }
        }
        for (int jj = j1 - 1; jj >= 0; jj--) {
            const double *col = v + (long)jj * nr;
            cb_v4 a = u[jj] - tt[jj];
            for (int q = jj + 1; q < j1; q++) a -= col[q] * u[q];
            u[jj] = a * dinv[k1 + jj];
        }
        for (int q = 0; q < nc; q++) w[k1 + q] = u[q];
    }
}

/* cb_chol_solve3 and cb_chol_solve3_add (map NULL: no addition). */
static int solve3(cb_chol *c, double (*b)[3], int keep, const int *map, const double (*base)[3], double (*out)[3],
                  cb_error *err)
{
    if (!c->L || c->failed >= 0 || !c->factorizations)
        return CB_FAIL(err, CB_ERR_INPUT, "%s: solve without a valid factorization", c->label);
    if (!c->copied) { /* the first solve after a factorization (newton never pays for it) */
        int rc = copy_factor(c, err);
        if (rc) return rc;
    }
    const int n = c->n, *perm = c->perm;
    if (c->precision == CB_CHOL_SINGLE) { /* the same steps on float rows (chol_single.h) */
        float (*f)[4] = cb_chol_single_rows(c->fs);
        for (int k = 0; k < n; k++) {
            const double *s = b[perm[k]];
            f[k][0] = (float)s[0];
            f[k][1] = (float)s[1];
            f[k][2] = (float)s[2];
            f[k][3] = 0.0f;
        }
        cb_chol_single_solve(c->fs);
        for (int k = 0; k < n; k++) {
            const int u = perm[k];
            if (!map || keep) {
                b[u][0] = f[k][0];
                b[u][1] = f[k][1];
                b[u][2] = f[k][2];
            }
            if (map) {
                const int i = map[u];
                out[i][0] = base[i][0] + f[k][0];
                out[i][1] = base[i][1] + f[k][1];
                out[i][2] = base[i][2] + f[k][2];
            }
        }
        return CB_OK;
    }
    cb_v4 *w = c->w;
    /* P A P^T = L L^T: w = P b, L z = w, L^T w = z, x = P^T w */
    for (int k = 0; k < n; k++) {
        const double *s = b[perm[k]];
        w[k] = (cb_v4){s[0], s[1], s[2], 0.0};
    }
    tri_solves(c->nsup, c->sup, c->rp, c->vrow, c->sx, c->vval, c->dinv, w, c->t);
    if (!map) {
        for (int k = 0; k < n; k++) {
            double *t = b[perm[k]];
            t[0] = w[k][0];
            t[1] = w[k][1];
            t[2] = w[k][2];
        }
        return CB_OK;
    }
    for (int k = 0; k < n; k++) {
        const int u = perm[k], i = map[u];
        if (keep) {
            b[u][0] = w[k][0];
            b[u][1] = w[k][1];
            b[u][2] = w[k][2];
        }
        out[i][0] = base[i][0] + w[k][0];
        out[i][1] = base[i][1] + w[k][1];
        out[i][2] = base[i][2] + w[k][2];
    }
    return CB_OK;
}

int cb_chol_solve3(cb_chol *c, double (*b)[3], cb_error *err)
{
    if (!c || !b) return CB_FAIL(err, CB_ERR_INPUT, "cb_chol_solve3: NULL argument");
    return solve3(c, b, 1, NULL, NULL, NULL, err);
}

int cb_chol_solve3_add(cb_chol *c, double (*b)[3], int keep, const int *map, const double (*base)[3],
                       double (*out)[3], cb_error *err)
{
    if (!c || !b || !map || !base || !out) return CB_FAIL(err, CB_ERR_INPUT, "cb_chol_solve3_add: NULL argument");
    return solve3(c, b, keep, map, base, out, err);
}
