/* solvers/chol_single.c — the single-precision copy of a supernodal factor and its
 * triangular solves for three right-hand sides (chol_single.h). */
#include "solvers/chol_single.h"

#include <stdlib.h>
#include <string.h>

/* A row of the right-hand side (x, y, z, unused), eight rows of one coordinate as the
 * lanes of a vector (aligned: the copy's blocks and columns start at multiples of eight
 * floats), and the lane selectors of __builtin_shuffle. */
typedef float cb_f4 __attribute__((vector_size(16)));
typedef float cb_f8 __attribute__((vector_size(32)));
typedef int cb_i4 __attribute__((vector_size(16)));
typedef int cb_i8 __attribute__((vector_size(32)));

/* The helpers of solves() inlined in each of its compiled variants (an out-of-line
 * helper would be compiled for the baseline only: 1.7x slower on the 81 x 81 curtain). */
#define CB_INLINE static inline __attribute__((always_inline))

struct cb_chol_single {
    int n, ns;
    int *sup;        /* [ns + 1] the first column of each supernode */
    long *fx;        /* [ns + 1] where each supernode's block starts in fv (a multiple of 8) */
    int *fr;         /* [ns + 1] where its rows below start in frow */
    float *fv;       /* the blocks (chol_single.h) */
    int *frow;       /* rows below of each supernode, padded with n */
    cb_f4 *w;        /* [n + 1] right-hand side / solution; row n is scratch (the padding's) */
    float *t;        /* workspace: 3 ld + 24 floats of the largest supernode */
    long vcap, rcap, tcap;
    int ncap;
};

static inline int round8(int k) { return (k + 7) & ~7; }

/* x = the inverse of the m x m lower triangle of the column-major block t (leading
 * dimension ld; m <= 8): x[i][k] for i >= k. 1 when a diagonal entry is not positive. */
static int invert_lower(const double *t, int ld, int m, double x[8][8])
{
    for (int k = 0; k < m; k++) {
        const double tkk = t[(long)k * ld + k];
        if (!(tkk > 0)) return 1;
        x[k][k] = 1.0 / tkk;
        for (int i = k + 1; i < m; i++) {
            double a = 0.0;
            for (int j = k; j < i; j++) a += t[(long)j * ld + i] * x[j][k];
            x[i][k] = -a / t[(long)i * ld + i];
        }
    }
    return 0;
}

void cb_chol_single_free(cb_chol_single **pcs)
{
    if (!pcs || !*pcs) return;
    cb_chol_single *cs = *pcs;
    free(cs->sup);
    free(cs->fx);
    free(cs->fr);
    free(cs->fv);
    free(cs->frow);
    free(cs->w);
    free(cs->t);
    free(cs);
    *pcs = NULL;
}

/* *p holds at least need elements of size bytes, 32-byte aligned (contents not kept). */
static int grow_aligned(void **p, long *cap, long need, size_t size)
{
    if (need <= *cap) return 0;
    free(*p);
    size_t bytes = ((size_t)need * size + 31) & ~(size_t)31;
    *p = aligned_alloc(32, bytes);
    *cap = *p ? need : 0;
    return *p ? 0 : -1;
}

int cb_chol_single_set(cb_chol_single **pcs, int n, int ns, const int *sup, const int *rp, const int *row,
                       const long *sx, const double *val, const char *label, cb_error *err)
{
    if (!label) label = "sparse system";
    if (!pcs || n < 1 || ns < 1 || !sup || !rp || !row || !sx || !val)
        return CB_FAIL(err, CB_ERR_INPUT, "%s: cb_chol_single_set: bad argument", label);
    cb_chol_single *cs = *pcs;
    if (!cs) {
        cs = cb_calloc(1, sizeof *cs);
        if (!cs) return CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", label);
        *pcs = cs;
    }
    if (n > cs->ncap || ns > cs->ncap) { /* ns <= n */
        free(cs->sup);
        free(cs->fx);
        free(cs->fr);
        free(cs->w);
        cs->sup = cb_calloc((size_t)n + 1, sizeof *cs->sup);
        cs->fx = cb_calloc((size_t)n + 1, sizeof *cs->fx);
        cs->fr = cb_calloc((size_t)n + 1, sizeof *cs->fr);
        cs->w = aligned_alloc(32, ((size_t)(n + 1) * sizeof *cs->w + 31) & ~(size_t)31);
        cs->ncap = cs->sup && cs->fx && cs->fr && cs->w ? n : 0;
        if (!cs->ncap) return CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", label);
    }
    cs->n = n;
    cs->ns = ns;
    long nv = 0, nrow = 0, tneed = 8;
    for (int s = 0; s < ns; s++) {
        int nc = sup[s + 1] - sup[s], nb = rp[s + 1] - rp[s] - nc, ncp = round8(nc), ld = ncp + round8(nb);
        cs->sup[s] = sup[s];
        cs->fx[s] = nv;
        cs->fr[s] = (int)nrow;
        nv += (long)ld * nc;
        nrow += ld - ncp;
        if (3L * ld + 24 > tneed) tneed = 3L * ld + 24;
    }
    cs->sup[ns] = n;
    cs->fx[ns] = nv;
    cs->fr[ns] = (int)nrow;
    if (grow_aligned((void **)&cs->fv, &cs->vcap, nv > 0 ? nv : 1, sizeof *cs->fv) ||
        grow_aligned((void **)&cs->frow, &cs->rcap, nrow > 0 ? nrow : 1, sizeof *cs->frow) ||
        grow_aligned((void **)&cs->t, &cs->tcap, tneed, sizeof *cs->t))
        return CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory for a single-precision factor of %ld entries", label, nv);
    for (int s = 0; s < ns; s++) {
        const int k1 = sup[s], nc = sup[s + 1] - k1, nr = rp[s + 1] - rp[s], nb = nr - nc;
        const int ncp = round8(nc), nbp = round8(nb), ld = ncp + nbp;
        const double *v = val + sx[s];
        float *f = cs->fv + cs->fx[s];
        for (int j = 0; j < nc; j++, f += ld) {
            const double *col = v + (long)j * nr;
            for (int i = 0; i < ncp; i++) f[i] = i >= j && i < nc ? (float)col[i] : 0.0f;
            for (int i = 0; i < nbp; i++) f[ncp + i] = i < nb ? (float)col[nc + i] : 0.0f;
        }
        int *fr = cs->frow + cs->fr[s];
        for (int i = 0; i < nbp; i++) fr[i] = i < nb ? row[rp[s] + nc + i] : n;
        /* the diagonal blocks of eight columns: their inverses instead (in double from
         * the double factor, then rounded) */
        for (int j0 = 0; j0 < nc; j0 += 8) {
            const int m = nc - j0 < 8 ? nc - j0 : 8;
            double x[8][8];
            if (invert_lower(v + (long)j0 * nr + j0, nr, m, x))
                return CB_FAIL(err, CB_ERR_INTERNAL, "%s: the factor has a diagonal entry that is not positive (column %d)",
                               label, k1 + j0);
            float *d = cs->fv + cs->fx[s] + (long)j0 * ld + j0;
            for (int k = 0; k < m; k++) /* the inverse below the diagonal, its transpose above */
                for (int i = 0; i < 8; i++) d[(long)k * ld + i] = i >= m ? 0.0f : (float)(i >= k ? x[i][k] : x[k][i]);
        }
    }
    return CB_OK;
}

long cb_chol_single_entries(const cb_chol_single *cs) { return cs ? cs->fx[cs->ns] : 0; }

float (*cb_chol_single_rows(cb_chol_single *cs))[4] { return cs ? (float (*)[4])cs->w : NULL; }

#define SHUF(a, b, ...) __builtin_shuffle(a, b, (cb_i8){__VA_ARGS__})
#define SHUF4(a, b, ...) __builtin_shuffle(a, b, (cb_i4){__VA_ARGS__})
#define LO(a) __builtin_shufflevector(a, a, 0, 1, 2, 3)
#define HI(a) __builtin_shufflevector(a, a, 4, 5, 6, 7)

/* p[0 .. 7] = the rows 0 .. 7 of the x, y and z columns X, Y, Z (fourth lane zero):
 * within each 128-bit half, the 4 x 4 transpose of (X, Y, Z, 0). */
CB_INLINE void rows8(cb_f4 p[8], cb_f8 X, cb_f8 Y, cb_f8 Z)
{
    const cb_f8 O = {0, 0, 0, 0, 0, 0, 0, 0};
    const cb_f8 t0 = SHUF(X, Y, 0, 8, 1, 9, 4, 12, 5, 13), t1 = SHUF(X, Y, 2, 10, 3, 11, 6, 14, 7, 15);
    const cb_f8 t2 = SHUF(Z, O, 0, 8, 1, 9, 4, 12, 5, 13), t3 = SHUF(Z, O, 2, 10, 3, 11, 6, 14, 7, 15);
    const cb_f8 q0 = SHUF(t0, t2, 0, 1, 8, 9, 4, 5, 12, 13), q1 = SHUF(t0, t2, 2, 3, 10, 11, 6, 7, 14, 15);
    const cb_f8 q2 = SHUF(t1, t3, 0, 1, 8, 9, 4, 5, 12, 13), q3 = SHUF(t1, t3, 2, 3, 10, 11, 6, 7, 14, 15);
    p[0] = LO(q0);
    p[1] = LO(q1);
    p[2] = LO(q2);
    p[3] = LO(q3);
    p[4] = HI(q0);
    p[5] = HI(q1);
    p[6] = HI(q2);
    p[7] = HI(q3);
}

/* *X, *Y, *Z = the first three lanes of the rows p0 .. p7 (the inverse of rows8):
 * within each 128-bit half, the 4 x 4 transpose of (p0, p1, p2, p3) and of (p4, .., p7). */
CB_INLINE void cols8(cb_f8 *X, cb_f8 *Y, cb_f8 *Z, cb_f4 p0, cb_f4 p1, cb_f4 p2, cb_f4 p3, cb_f4 p4, cb_f4 p5,
                         cb_f4 p6, cb_f4 p7)
{
    const cb_f8 q0 = __builtin_shufflevector(p0, p4, 0, 1, 2, 3, 4, 5, 6, 7);
    const cb_f8 q1 = __builtin_shufflevector(p1, p5, 0, 1, 2, 3, 4, 5, 6, 7);
    const cb_f8 q2 = __builtin_shufflevector(p2, p6, 0, 1, 2, 3, 4, 5, 6, 7);
    const cb_f8 q3 = __builtin_shufflevector(p3, p7, 0, 1, 2, 3, 4, 5, 6, 7);
    const cb_f8 t0 = SHUF(q0, q1, 0, 8, 1, 9, 4, 12, 5, 13), t1 = SHUF(q0, q1, 2, 10, 3, 11, 6, 14, 7, 15);
    const cb_f8 t2 = SHUF(q2, q3, 0, 8, 1, 9, 4, 12, 5, 13), t3 = SHUF(q2, q3, 2, 10, 3, 11, 6, 14, 7, 15);
    *X = SHUF(t0, t2, 0, 1, 8, 9, 4, 5, 12, 13);
    *Y = SHUF(t0, t2, 2, 3, 10, 11, 6, 7, 14, 15);
    *Z = SHUF(t1, t3, 0, 1, 8, 9, 4, 5, 12, 13);
}

/* w[row[r .. r+7]] -= the rows r .. r+7 of the x, y and z columns X, Y, Z. */
#define SUB_ROWS8(w, row, r, X, Y, Z)                                                                 \
    do {                                                                                             \
        cb_f4 p_[8];                                                                                 \
        rows8(p_, X, Y, Z);                                                                          \
        for (int k_ = 0; k_ < 8; k_++) (w)[(row)[(r) + k_]] -= p_[k_];                               \
    } while (0)

/* x += a X, y += a Y, q += a Z for the eight floats a at p. */
#define MADD3(p, x, y, q, X, Y, Z)                                                                   \
    do {                                                                                             \
        const cb_f8 a_ = *(const cb_f8 *)(p);                                                        \
        (x) += a_ * (X);                                                                             \
        (y) += a_ * (Y);                                                                             \
        (q) += a_ * (Z);                                                                             \
    } while (0)

static const cb_f8 zero8 = {0, 0, 0, 0, 0, 0, 0, 0};

/* X, Y, Z = T times the lanes x, y, z (8 floats each), T the lower (upper = 0) or upper
 * (upper = 1) triangle of the symmetric m x m block at d (m <= 8; columns at d + k ld,
 * aligned; zero past m, the lanes of x, y, z too): column k of T is column k of the
 * block with the lanes above (below) k cleared. Two sums per coordinate. */
CB_INLINE void block_times(const float *restrict d, int ld, int m, int upper, const float *restrict x,
                               const float *restrict y, const float *restrict z, cb_f8 *X, cb_f8 *Y, cb_f8 *Z)
{
    const cb_i8 iota = {0, 1, 2, 3, 4, 5, 6, 7};
    cb_f8 x0 = {0, 0, 0, 0, 0, 0, 0, 0}, x1 = x0, y0 = x0, y1 = x0, z0 = x0, z1 = x0;
#pragma GCC unroll 8
    for (int k = 0; k < 8; k += 2) {
        const cb_i8 kk = {k, k, k, k, k, k, k, k}, k1 = kk + 1;
        /* the columns past m are not stored: zero */
        const cb_f8 *ca = k < m ? (const cb_f8 *)(d + (long)k * ld) : &zero8;
        const cb_f8 *cb = k + 1 < m ? (const cb_f8 *)(d + (long)(k + 1) * ld) : &zero8;
        const cb_f8 a = (cb_f8)((cb_i8)*ca & (upper ? iota <= kk : iota >= kk));
        const cb_f8 b = (cb_f8)((cb_i8)*cb & (upper ? iota <= k1 : iota >= k1));
        x0 += a * x[k];
        y0 += a * y[k];
        z0 += a * z[k];
        x1 += b * x[k + 1];
        y1 += b * y[k + 1];
        z1 += b * z[k + 1];
    }
    *X = x0 + x1;
    *Y = y0 + y1;
    *Z = z0 + z1;
}

/* {sum of X's lanes, of Y's, of Z's, 0} */
CB_INLINE cb_f4 hsum3(cb_f8 X, cb_f8 Y, cb_f8 Z)
{
    const cb_f4 x = LO(X) + HI(X), y = LO(Y) + HI(Y), z = LO(Z) + HI(Z), o = {0, 0, 0, 0};
    const cb_f4 a = SHUF4(x, y, 0, 4, 1, 5) + SHUF4(x, y, 2, 6, 3, 7); /* x0+x2 y0+y2 x1+x3 y1+y3 */
    const cb_f4 b = SHUF4(z, o, 0, 4, 1, 5) + SHUF4(z, o, 2, 6, 3, 7); /* z0+z2 0 z1+z3 0 */
    return SHUF4(a, b, 0, 1, 4, 5) + SHUF4(a, b, 2, 3, 6, 7);
}

/* The sums of the rows [r0, ld) of the four columns at c (leading dimension ld) times
 * those rows of the solution (x, y, z as separate arrays): s[0 .. 3] += them. */
CB_INLINE void dot4(const float *restrict c, int r0, int ld, const float *restrict ux, const float *restrict uy,
                        const float *restrict uz, cb_f4 *s)
{
    const float *c0 = c, *c1 = c0 + ld, *c2 = c1 + ld, *c3 = c2 + ld;
    cb_f8 x0 = {0, 0, 0, 0, 0, 0, 0, 0}, x1 = x0, x2 = x0, x3 = x0, y0 = x0, y1 = x0, y2 = x0, y3 = x0;
    cb_f8 q0 = x0, q1 = x0, q2 = x0, q3 = x0;
    for (int r = r0; r < ld; r += 8) {
        const cb_f8 X = *(const cb_f8 *)(ux + r), Y = *(const cb_f8 *)(uy + r), Z = *(const cb_f8 *)(uz + r);
        MADD3(c0 + r, x0, y0, q0, X, Y, Z);
        MADD3(c1 + r, x1, y1, q1, X, Y, Z);
        MADD3(c2 + r, x2, y2, q2, X, Y, Z);
        MADD3(c3 + r, x3, y3, q3, X, Y, Z);
    }
    s[0] += hsum3(x0, y0, q0);
    s[1] += hsum3(x1, y1, q1);
    s[2] += hsum3(x2, y2, q2);
    s[3] += hsum3(x3, y3, q3);
}

/* The same for one column. */
CB_INLINE cb_f4 dot1(const float *restrict c, int r0, int ld, const float *restrict ux, const float *restrict uy,
                         const float *restrict uz)
{
    cb_f8 x0 = {0, 0, 0, 0, 0, 0, 0, 0}, y0 = x0, q0 = x0;
    for (int r = r0; r < ld; r += 8)
        MADD3(c + r, x0, y0, q0, *(const cb_f8 *)(ux + r), *(const cb_f8 *)(uy + r), *(const cb_f8 *)(uz + r));
    return hsum3(x0, y0, q0);
}

/* Forward, the block of m <= 8 columns from jj of a supernode (v, ld; its rows of the
 * right-hand side at w): the block's rows minus the columns before it (rows jj .. jj+7
 * as lanes, two sets of sums), times the block's inverse; the solution into w and, as
 * x, y, z lanes, into zx, zy, zz. r: 24 floats of workspace (aligned). */
CB_INLINE void fwd_block(const float *restrict v, int ld, int jj, int m, cb_f4 *restrict w, float *restrict zx,
                             float *restrict zy, float *restrict zz, float *restrict r)
{
    cb_f8 ax = {0, 0, 0, 0, 0, 0, 0, 0}, ay = ax, az = ax, ex = ax, ey = ax, ez = ax;
    const float *c = v + jj;
    for (int j = 0; j < jj; j += 2, c += 2 * ld) {
        const cb_f8 A = *(const cb_f8 *)c, E = *(const cb_f8 *)(c + ld);
        ax += A * zx[j];
        ay += A * zy[j];
        az += A * zz[j];
        ex += E * zx[j + 1];
        ey += E * zy[j + 1];
        ez += E * zz[j + 1];
    }
    cb_f4 p[8];
    for (int i = 0; i < 8; i++) p[i] = i < m ? w[jj + i] : (cb_f4){0, 0, 0, 0}; /* lanes past m zero */
    cb_f8 X, Y, Z;
    cols8(&X, &Y, &Z, p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]);
    *(cb_f8 *)r = X - (ax + ex);
    *(cb_f8 *)(r + 8) = Y - (ay + ey);
    *(cb_f8 *)(r + 16) = Z - (az + ez);
    block_times(v + (long)jj * ld + jj, ld, m, 0, r, r + 8, r + 16, &X, &Y, &Z);
    *(cb_f8 *)(zx + jj) = X;
    *(cb_f8 *)(zy + jj) = Y;
    *(cb_f8 *)(zz + jj) = Z;
    rows8(p, X, Y, Z);
    for (int i = 0; i < m; i++) w[jj + i] = p[i];
}

/* Backward, the block of m <= 8 columns from j0: its columns dotted with the rows after
 * it (the solved rows of the triangle and the rows below, as x, y, z lanes in ux, uy,
 * uz), the block's rows of w minus them times the block's transposed inverse; the
 * solution into w and into ux, uy, uz (for the blocks before it). */
CB_INLINE void bwd_block(const float *restrict v, int ld, int j0, int m, cb_f4 *restrict w, float *restrict ux,
                             float *restrict uy, float *restrict uz, float *restrict r)
{
    cb_f4 sum[8];
    const float *c = v + (long)j0 * ld;
    int k = 0;
    for (; k < 8; k++) sum[k] = (cb_f4){0, 0, 0, 0};
    for (k = 0; k + 4 <= m; k += 4) dot4(c + (long)k * ld, j0 + 8, ld, ux, uy, uz, sum + k);
    for (; k < m; k++) sum[k] = dot1(c + (long)k * ld, j0 + 8, ld, ux, uy, uz);
    cb_f4 p[8];
    for (int i = 0; i < 8; i++) p[i] = i < m ? w[j0 + i] - sum[i] : (cb_f4){0, 0, 0, 0};
    cb_f8 X, Y, Z;
    cols8((cb_f8 *)r, (cb_f8 *)(r + 8), (cb_f8 *)(r + 16), p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]);
    block_times(c + j0, ld, m, 1, r, r + 8, r + 16, &X, &Y, &Z);
    *(cb_f8 *)(ux + j0) = X;
    *(cb_f8 *)(uy + j0) = Y;
    *(cb_f8 *)(uz + j0) = Z;
    rows8(p, X, Y, Z);
    for (int i = 0; i < m; i++) w[j0 + i] = p[i];
}

/* The two triangular solves on w, supernode by supernode; the structure of the double
 * solves (cholmod_util.c, tri_solves) with eight rows in a vector's lanes:
 * Forward (L z = w): the diagonal triangle eight columns at a time (fwd_block: the
 * block's rows reduced by the columns before it, then multiplied by the block's stored
 * inverse, so no chain of dependent substitutions); then w[rows below] -= B z, 32, 16 or
 * 8 rows by all the supernode's columns, transposed back to rows in registers.
 * Backward (L^T x = z): the rows below gathered into separate x, y, z arrays after the
 * solved rows of the triangle, then the triangle eight columns at a time from the last
 * (bwd_block: each block's columns dotted with every row after the block, the
 * triangle's solved rows and the rows below in one loop, then the block's transposed
 * inverse). The substitution in the 8 x 8 blocks, a chain of dependent operations per
 * column, took a quarter of the solves' time before the inverses (143 -> ~128 us per
 * pair of solves on the 81 x 81 curtain). Plain IEEE float arithmetic (no fused multiply-adds: C11 mode contracts nothing) on the
 * same 8-wide lanes in every compiled variant, so every machine gets the same bits.
 * Compiled three times where the compiler can (x86-64-v4: the same vectors with 32
 * registers; AVX2; the baseline), chosen at load time by the CPU. */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#endif
static void solves(int ns, const int *restrict sup, const long *restrict fx, const int *restrict fr,
                   const float *restrict fv, const int *restrict frow, cb_f4 *restrict w,
                   float *restrict t)
{
    for (int s = 0; s < ns; s++) {
        const int k1 = sup[s], nc = sup[s + 1] - k1, ncp = round8(nc), ld = ncp + (fr[s + 1] - fr[s]);
        const float *v = fv + fx[s];
        const int *row = frow + fr[s];
        float *restrict zx = t, *restrict zy = zx + ncp, *restrict zz = zy + ncp; /* [ncp] each */
        float *restrict rx = zz + ncp;                                            /* [24] */
        for (int jj = 0; jj < nc; jj += 8) {
            if (nc - jj >= 8) fwd_block(v, ld, jj, 8, w + k1, zx, zy, zz, rx);
            else fwd_block(v, ld, jj, nc - jj, w + k1, zx, zy, zz, rx);
        }
        /* the rows below: w[row] -= B z */
        const float *bv = v + ncp;
        const int nbp = ld - ncp;
        int r = 0;
        for (; r + 32 <= nbp; r += 32) {
            cb_f8 x0 = {0, 0, 0, 0, 0, 0, 0, 0}, x1 = x0, x2 = x0, x3 = x0, y0 = x0, y1 = x0, y2 = x0, y3 = x0;
            cb_f8 q0 = x0, q1 = x0, q2 = x0, q3 = x0;
            const float *c = bv + r;
            for (int j = 0; j < nc; j++, c += ld) {
                const float X = zx[j], Y = zy[j], Z = zz[j];
                MADD3(c, x0, y0, q0, X, Y, Z);
                MADD3(c + 8, x1, y1, q1, X, Y, Z);
                MADD3(c + 16, x2, y2, q2, X, Y, Z);
                MADD3(c + 24, x3, y3, q3, X, Y, Z);
            }
            SUB_ROWS8(w, row, r, x0, y0, q0);
            SUB_ROWS8(w, row, r + 8, x1, y1, q1);
            SUB_ROWS8(w, row, r + 16, x2, y2, q2);
            SUB_ROWS8(w, row, r + 24, x3, y3, q3);
        }
        if (r + 16 <= nbp) {
            cb_f8 x0 = {0, 0, 0, 0, 0, 0, 0, 0}, x1 = x0, y0 = x0, y1 = x0, q0 = x0, q1 = x0;
            const float *c = bv + r;
            for (int j = 0; j < nc; j++, c += ld) {
                const float X = zx[j], Y = zy[j], Z = zz[j];
                MADD3(c, x0, y0, q0, X, Y, Z);
                MADD3(c + 8, x1, y1, q1, X, Y, Z);
            }
            SUB_ROWS8(w, row, r, x0, y0, q0);
            SUB_ROWS8(w, row, r + 8, x1, y1, q1);
            r += 16;
        }
        if (r < nbp) { /* eight rows left */
            cb_f8 x0 = {0, 0, 0, 0, 0, 0, 0, 0}, y0 = x0, q0 = x0;
            const float *c = bv + r;
            for (int j = 0; j < nc; j++, c += ld) MADD3(c, x0, y0, q0, zx[j], zy[j], zz[j]);
            SUB_ROWS8(w, row, r, x0, y0, q0);
        }
    }
    for (int s = ns - 1; s >= 0; s--) {
        const int k1 = sup[s], nc = sup[s + 1] - k1, ncp = round8(nc), ld = ncp + (fr[s + 1] - fr[s]);
        const float *v = fv + fx[s];
        const int *row = frow + fr[s];
        float *restrict ux = t, *restrict uy = ux + ld, *restrict uz = uy + ld; /* [ld] each: solved rows, rows below */
        float *restrict rx = uz + ld;                                           /* [24] */
        for (int r = ncp; r < ld; r += 8) { /* the rows below, transposed eight at a time */
            const int *q = row + (r - ncp);
            cols8((cb_f8 *)(ux + r), (cb_f8 *)(uy + r), (cb_f8 *)(uz + r), w[q[0]], w[q[1]], w[q[2]], w[q[3]], w[q[4]],
                  w[q[5]], w[q[6]], w[q[7]]);
        }
        for (int j0 = (nc - 1) & ~7; j0 >= 0; j0 -= 8) {
            if (nc - j0 >= 8) bwd_block(v, ld, j0, 8, w + k1, ux, uy, uz, rx);
            else bwd_block(v, ld, j0, nc - j0, w + k1, ux, uy, uz, rx);
        }
    }
}

void cb_chol_single_solve(cb_chol_single *cs)
{
    if (!cs) return;
    cs->w[cs->n] = (cb_f4){0, 0, 0, 0}; /* the padding's row */
    solves(cs->ns, cs->sup, cs->fx, cs->fr, cs->fv, cs->frow, cs->w, cs->t);
}
