/* solvers/pbd_simd.c — four pbd/xpbd constraint projections at a time (AVX2 + FMA).
 * What each kernel computes, and how it differs from the scalar kernels of
 * solvers/pbd_constraints.h, is in solvers/pbd_simd.h. The functions are compiled for
 * AVX2 + FMA with a target attribute, whatever the build's -march, and called only after
 * cb_pbd_simd_available() said the CPU has both. */
#include "solvers/pbd_simd.h"

#include "solvers/pbd_constraints.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>
#include <math.h>

#define AVX2 __attribute__((target("avx2,fma")))


typedef __m256d v4;

int cb_pbd_simd_available(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

static inline AVX2 v4 set1(double a) { return _mm256_set1_pd(a); }
static inline AVX2 v4 ld(const double *a) { return _mm256_loadu_pd(a); }
static inline AVX2 v4 add(v4 a, v4 b) { return _mm256_add_pd(a, b); }
static inline AVX2 v4 sub(v4 a, v4 b) { return _mm256_sub_pd(a, b); }
static inline AVX2 v4 mul(v4 a, v4 b) { return _mm256_mul_pd(a, b); }
static inline AVX2 v4 fma_(v4 a, v4 b, v4 c) { return _mm256_fmadd_pd(a, b, c); } /* a b + c */
static inline AVX2 v4 gt(v4 a, v4 b) { return _mm256_cmp_pd(a, b, _CMP_GT_OQ); }
/* yes where mask's sign bit is set (a comparison's true, or a negative number or -0) */
static inline AVX2 v4 sel(v4 mask, v4 yes, v4 no) { return _mm256_blendv_pd(no, yes, mask); }

/* Three coordinates of one vector of 4 points. */
typedef struct v4x3 { v4 x, y, z; } v4x3;

static inline AVX2 v4x3 vsub(v4x3 a, v4x3 b) { return (v4x3){sub(a.x, b.x), sub(a.y, b.y), sub(a.z, b.z)}; }
static inline AVX2 v4 vdot(v4x3 a, v4x3 b) { return fma_(a.x, b.x, fma_(a.y, b.y, mul(a.z, b.z))); }
static inline AVX2 v4x3 vcross(v4x3 a, v4x3 b)
{
    return (v4x3){_mm256_fmsub_pd(a.y, b.z, mul(a.z, b.y)), _mm256_fmsub_pd(a.z, b.x, mul(a.x, b.z)),
                  _mm256_fmsub_pd(a.x, b.y, mul(a.y, b.x))};
}
/* a + s u + t v */
static inline AVX2 v4x3 vaxpy2(v4x3 a, v4 s, v4x3 u, v4 t, v4x3 v)
{
    return (v4x3){fma_(s, u.x, fma_(t, v.x, a.x)), fma_(s, u.y, fma_(t, v.y, a.y)), fma_(s, u.z, fma_(t, v.z, a.z))};
}
static inline AVX2 v4x3 vaxpy(v4x3 a, v4 s, v4x3 u)
{
    return (v4x3){fma_(s, u.x, a.x), fma_(s, u.y, a.y), fma_(s, u.z, a.z)};
}

/* The points p[v[0..3]] into x, y, z vectors: (x, y) as 16 bytes and z as 8, exactly
 * the pieces store() writes, so a point stored by one batch and loaded by a later one
 * is forwarded from the store buffer (a wider load would stall on it). */
static inline AVX2 v4x3 load(double (*p)[3], const int v[4])
{
    v4 a = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(p[v[0]])), _mm_loadu_pd(p[v[2]]), 1);
    v4 b = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(p[v[1]])), _mm_loadu_pd(p[v[3]]), 1);
    __m128d zl = _mm_loadh_pd(_mm_load_sd(&p[v[0]][2]), &p[v[1]][2]);
    __m128d zh = _mm_loadh_pd(_mm_load_sd(&p[v[2]][2]), &p[v[3]][2]);
    return (v4x3){_mm256_unpacklo_pd(a, b), _mm256_unpackhi_pd(a, b),
                  _mm256_insertf128_pd(_mm256_castpd128_pd256(zl), zh, 1)};
}

/* p[v[l]] = lane l of q for the lanes l set in mask. */
static inline AVX2 void store(double (*p)[3], const int v[4], v4x3 q, int mask)
{
    v4 t0 = _mm256_unpacklo_pd(q.x, q.y), t1 = _mm256_unpackhi_pd(q.x, q.y); /* x0 y0 x2 y2 | x1 y1 x3 y3 */
    __m128d zl = _mm256_castpd256_pd128(q.z), zh = _mm256_extractf128_pd(q.z, 1);
    if (mask & 1) {
        _mm_storeu_pd(p[v[0]], _mm256_castpd256_pd128(t0));
        _mm_store_sd(&p[v[0]][2], zl);
    }
    if (mask & 2) {
        _mm_storeu_pd(p[v[1]], _mm256_castpd256_pd128(t1));
        _mm_storeh_pd(&p[v[1]][2], zl);
    }
    if (mask & 4) {
        _mm_storeu_pd(p[v[2]], _mm256_extractf128_pd(t0, 1));
        _mm_store_sd(&p[v[2]][2], zh);
    }
    if (mask & 8) {
        _mm_storeu_pd(p[v[3]], _mm256_extractf128_pd(t1, 1));
        _mm_storeh_pd(&p[v[3]][2], zh);
    }
}

/* atan2(y, x), four at a time. With a = min(|x|,|y|) / max(|x|,|y|) in [0, 1]:
 * atan(a) = atan(t) (+ pi/4 when a > tan(pi/8), then t = (a - 1)/(a + 1) computed as
 * (min - max)/(min + max)), |t| <= tan(pi/8); atan(t) = t + t z P(z), z = t^2, with P
 * of degree 10: a Chebyshev fit of (atan(sqrt z)/sqrt z - 1)/z on [0, tan^2(pi/8)]
 * made for this file (relative error of t + t z P below 1e-17 in exact arithmetic).
 * Then pi/2 - r when |y| > |x|, pi - r when x has its sign bit set, and y's sign:
 * atan2(+-0, +0) = +-0, atan2(+-0, -0) = +-pi as C's atan2. The result is a multiple of
 * pi/4 plus or minus atan(t), the multiple added as a double-double in one rounding. */
static inline AVX2 v4 vatan2(v4 y, v4 x)
{
    static const double P[11] = {-0.01917688711906226, 0.03923165829558719, -0.0508544973794026,
                                 0.0585814891280221,  -0.06664511447381948, 0.07692183190826087,
                                 -0.09090904578123903, 0.11111111015256361, -0.14285714284666542,
                                 0.1999999999999552,  -0.3333333333333333};
    const v4 signbit = set1(-0.0);
    v4 ax = _mm256_andnot_pd(signbit, x), ay = _mm256_andnot_pd(signbit, y);
    v4 mx = _mm256_max_pd(ax, ay), mn = _mm256_min_pd(ax, ay);
    v4 big = gt(mn, mul(mx, set1(0.41421356237309503))); /* tan(pi/8) */
    v4 num = sel(big, sub(mn, mx), mn), den = sel(big, add(mn, mx), mx);
    den = sel(_mm256_cmp_pd(den, set1(0.0), _CMP_EQ_OQ), set1(1.0), den); /* x = y = 0: t = 0 */
    v4 t = _mm256_div_pd(num, den), z = mul(t, t);
    /* q = sum_k P[10 - k] z^k by Estrin's scheme: a chain of 5 operations instead of
     * Horner's 10 (the kernels wait on this chain) */
    v4 z2 = mul(z, z), z4 = mul(z2, z2), z8 = mul(z4, z4);
#define PAIR(k) fma_(set1(P[9 - (k)]), z, set1(P[10 - (k)])) /* P[10-k] + P[9-k] z */
    v4 q = fma_(z2, PAIR(2), PAIR(0));
    q = fma_(z4, fma_(z2, PAIR(6), PAIR(4)), q);
    q = fma_(z8, fma_(z2, set1(P[0]), PAIR(8)), q);
#undef PAIR
    v4 at = fma_(mul(t, z), q, t); /* atan(t) */
    /* the angle is m pi/4 + atan(t) or m pi/4 - atan(t), m in 0..4: pi/4 when big, then
     * pi/2 - a when |y| > |x|, then pi - a when x is negative (its sign bit) */
    v4 swap = gt(ay, ax), m = _mm256_and_pd(big, set1(1.0));
    m = sel(swap, sub(set1(2.0), m), m);
    m = sel(x, sub(set1(4.0), m), m);
    at = _mm256_xor_pd(at, _mm256_xor_pd(_mm256_and_pd(swap, signbit), _mm256_and_pd(x, signbit)));
    /* m pi/4 as the double-double hi + lo, the product m hi exact inside the FMA */
    v4 r = fma_(m, set1(0.78539816339744828), fma_(m, set1(3.061616997868383e-17), at));
    return _mm256_or_pd(r, _mm256_and_pd(y, signbit));
}

AVX2 static void atan2_n(int n, const double *y, const double *x, double *out)
{
    int i = 0;
    for (; i + 4 <= n; i += 4) _mm256_storeu_pd(out + i, vatan2(ld(y + i), ld(x + i)));
    if (i < n) {
        double ty[4] = {0, 0, 0, 0}, tx[4] = {1, 1, 1, 1}, to[4];
        for (int j = 0; i + j < n; j++) {
            ty[j] = y[i + j];
            tx[j] = x[i + j];
        }
        _mm256_storeu_pd(to, vatan2(ld(ty), ld(tx)));
        for (int j = 0; i + j < n; j++) out[i + j] = to[j];
    }
}

int cb_pbd_simd_atan2(int n, const double *y, const double *x, double *out)
{
    if (!cb_pbd_simd_available()) return -1;
    atan2_n(n, y, x, out);
    return 0;
}

/* The multipliers' compliance alpha[c] * ih2 and lambda[c] of the lanes (0 for an empty
 * lane). */
static inline AVX2 void gather_xpbd(const int c[4], const double *alpha, double ih2, const double *lambda, v4 *at,
                                    v4 *lam)
{
    double a[4], l[4];
    for (int j = 0; j < 4; j++) {
        a[j] = c[j] >= 0 ? alpha[c[j]] * ih2 : 0.0;
        l[j] = c[j] >= 0 ? lambda[c[j]] : 0.0;
    }
    *at = ld(a);
    *lam = ld(l);
}

static inline AVX2 void scatter_lambda(const int c[4], v4 lam, int mask, double *lambda)
{
    double l[4];
    _mm256_storeu_pd(l, lam);
    for (int j = 0; j < 4; j++)
        if (mask >> j & 1) lambda[c[j]] = l[j];
}

/* ---- the kernels: load / evaluate / store. A bending batch is one long chain of
 * dependent operations (cross products, the atan2 division and polynomial, the
 * correction's division) that leaves the core waiting; the bending drivers load two
 * batches, evaluate both (inlined: the compiler places both chains in one stretch of
 * code, which the out-of-order core overlaps) and store both. A colour's batches touch
 * disjoint points, so the second's loads may come before the first's stores. On
 * points in L1 this took the dihedral kernel from 14.7 to 12.5 ns per hinge here. */
#define EVAL AVX2 __attribute__((always_inline))

typedef struct stretch4 {
    v4x3 p0, p1;
    v4 w0, w1;
} stretch4;

static inline AVX2 void stretch_load(double (*p)[3], const cb_pbd_batch2 *b, stretch4 *s)
{
    s->p0 = load(p, b->v[0]);
    s->p1 = load(p, b->v[1]);
    s->w0 = ld(b->w[0]);
    s->w1 = ld(b->w[1]);
}

/* The move of both points (in s), and the mask of lanes to store. */
static inline AVX2 int stretch_eval(const cb_pbd_batch2 *b, double k, const double *alpha, double ih2, double *lambda,
                                    stretch4 *s)
{
    v4 W = add(s->w0, s->w1);
    v4x3 d = vsub(s->p0, s->p1);
    v4 l = _mm256_sqrt_pd(vdot(d, d)), C = sub(l, ld(b->rest));
    v4 ok = _mm256_and_pd(gt(l, set1(0.0)), gt(W, set1(0.0))), f;
    int mask = _mm256_movemask_pd(ok);
    if (!lambda) {
        f = _mm256_div_pd(mul(set1(-k), C), mul(W, l));
    } else {
        v4 at, lam;
        gather_xpbd(b->c, alpha, ih2, lambda, &at, &lam);
        f = _mm256_div_pd(_mm256_fnmadd_pd(at, lam, sub(set1(0.0), C)), mul(add(W, at), l)); /* dlambda / l */
        scatter_lambda(b->c, fma_(f, l, lam), mask, lambda);
    }
    f = _mm256_and_pd(f, ok);
    s->p0 = vaxpy(s->p0, mul(f, s->w0), d);
    s->p1 = vaxpy(s->p1, sub(set1(0.0), mul(f, s->w1)), d);
    return mask;
}

AVX2 void cb_pbd_simd_stretch(double (*p)[3], const cb_pbd_batch2 *b, int nb, double k, const double *alpha,
                              double ih2, double *lambda)
{
    for (int i = 0; i < nb; i++) {
        stretch4 s;
        stretch_load(p, &b[i], &s);
        int mask = stretch_eval(&b[i], k, alpha, ih2, lambda, &s);
        store(p, b[i].v[0], s.p0, mask);
        store(p, b[i].v[1], s.p1, mask);
    }
}

/* A hinge's gradients g_j = u_j n1 + v_j n2 (solvers/pbd_constraints.h, "Hinge
 * gradients"): from (c2, c3, s2, s3) and x = n1 . n2, the sum S = sum_j w_j |g_j|^2 and
 * the move p_j += dl w_j g_j (dl is 0 in the lanes not to move). */
typedef struct hinge4 {
    v4x3 p[4];
    v4 w[4];
} hinge4;

static inline AVX2 void hinge_load(double (*p)[3], const cb_pbd_batch4 *b, hinge4 *h)
{
    for (int j = 0; j < 4; j++) {
        h->p[j] = load(p, b->v[j]);
        h->w[j] = ld(b->w[j]);
    }
}

static inline AVX2 v4 norm2_uv(v4 u, v4 v, v4 n1s, v4 n2s, v4 x)
{
    return fma_(mul(u, u), n1s, fma_(mul(add(u, u), v), x, mul(mul(v, v), n2s)));
}

/* S, then (once dl is known) the moved points, from the hinge's n1, n2 and coefficients. */
static inline AVX2 v4 hinge_S(const hinge4 *h, v4 c2, v4 c3, v4 s2, v4 s3, v4 n1s, v4 n2s, v4 x)
{
    v4 zero = set1(0.0);
    v4 u1 = sub(zero, mul(s2, c2)), v1 = sub(zero, mul(s3, c3));
    v4 u0 = sub(zero, add(u1, c2)), v0 = sub(zero, add(v1, c3));
    v4 S = mul(h->w[0], norm2_uv(u0, v0, n1s, n2s, x));
    S = fma_(h->w[1], norm2_uv(u1, v1, n1s, n2s, x), S);
    S = fma_(h->w[2], mul(mul(c2, c2), n1s), S);
    return fma_(h->w[3], mul(mul(c3, c3), n2s), S);
}

static inline AVX2 void hinge_move(hinge4 *h, v4x3 n1, v4x3 n2, v4 c2, v4 c3, v4 s2, v4 s3, v4 dl)
{
    v4 zero = set1(0.0);
    v4 u1 = sub(zero, mul(s2, c2)), v1 = sub(zero, mul(s3, c3));
    v4 u0 = sub(zero, add(u1, c2)), v0 = sub(zero, add(v1, c3));
    v4 d0 = mul(dl, h->w[0]), d1 = mul(dl, h->w[1]);
    h->p[0] = vaxpy2(h->p[0], mul(d0, u0), n1, mul(d0, v0), n2);
    h->p[1] = vaxpy2(h->p[1], mul(d1, u1), n1, mul(d1, v1), n2);
    h->p[2] = vaxpy(h->p[2], mul(mul(dl, h->w[2]), c2), n1);
    h->p[3] = vaxpy(h->p[3], mul(mul(dl, h->w[3]), c3), n2);
}

static inline AVX2 void hinge_store(double (*p)[3], const cb_pbd_batch4 *b, const hinge4 *h, int mask)
{
    for (int j = 0; j < 4; j++) store(p, b->v[j], h->p[j], mask);
}

static inline AVX2 v4 clamp(v4 kc, double cap)
{
    return _mm256_min_pd(_mm256_max_pd(kc, set1(-cap)), set1(cap));
}

/* The dihedral projection of the lanes of h; returns the lanes to store. The degenerate
 * lanes (mask *degenerate) are left to the scalar kernel. */
static inline EVAL int dihedral_eval(const cb_pbd_batch4 *b, double k, double cap, const double *alpha, double ih2,
                                     double *lambda, hinge4 *h, int *degenerate)
{
    v4x3 e = vsub(h->p[1], h->p[0]), a = vsub(h->p[2], h->p[0]), bb = vsub(h->p[3], h->p[0]);
    v4x3 n1 = vcross(e, a), n2 = vcross(bb, e);
    v4 zero = set1(0.0);
    v4 n1s = vdot(n1, n1), n2s = vdot(n2, n2), le2 = vdot(e, e);
    v4 real = gt(h->w[0], zero); /* every vertex of a batch is free; an empty lane has w = 0 */
    v4 fine = _mm256_and_pd(_mm256_and_pd(gt(n1s, zero), gt(n2s, zero)), gt(le2, zero));
    *degenerate = _mm256_movemask_pd(_mm256_andnot_pd(fine, real));
    v4 ok = _mm256_and_pd(fine, real);
    v4 le = _mm256_sqrt_pd(le2);
    v4 x = vdot(n1, n2), y = mul(sub(zero, vdot(n1, bb)), le);
    v4 C = sub(vatan2(y, x), ld(b->rest));
    v4 at = zero, lam = zero, num = sub(zero, C);
    if (lambda) {
        gather_xpbd(b->c, alpha, ih2, lambda, &at, &lam);
        num = _mm256_fnmadd_pd(at, lam, num);
    }
    v4 inv = _mm256_div_pd(set1(1.0), mul(mul(n1s, n2s), le2));
    v4 il2 = mul(mul(n1s, n2s), inv), sl = mul(sub(zero, mul(le, le2)), inv);
    v4 c2 = mul(sl, n2s), c3 = mul(sl, n1s), s2 = mul(vdot(a, e), il2), s3 = mul(vdot(bb, e), il2);
    v4 S = hinge_S(h, c2, c3, s2, s3, n1s, n2s, x), dl;
    if (!lambda) {
        ok = _mm256_and_pd(ok, gt(S, zero));
        dl = _mm256_div_pd(clamp(mul(set1(k), num), cap), S);
    } else {
        v4 den = add(S, at);
        ok = _mm256_and_pd(ok, gt(den, zero));
        dl = _mm256_div_pd(num, den);
        scatter_lambda(b->c, add(lam, dl), _mm256_movemask_pd(ok), lambda);
    }
    hinge_move(h, n1, n2, c2, c3, s2, s3, _mm256_and_pd(dl, ok));
    return _mm256_movemask_pd(ok);
}

/* A degenerate hinge: the scalar kernel (pbd: no move; xpbd: its multiplier moves). */
static void dihedral_scalar(double (*p)[3], const cb_pbd_batch4 *b, int l, double k, double cap, const double *alpha,
                            double ih2, double *lambda)
{
    double w[4] = {b->w[0][l], b->w[1][l], b->w[2][l], b->w[3][l]};
    int c = b->c[l];
    cb_pbd_project_bend_dihedral(p[b->v[0][l]], p[b->v[1][l]], p[b->v[2][l]], p[b->v[3][l]], w, b->rest[l], k,
                                 lambda ? alpha[c] * ih2 : -1.0, lambda ? &lambda[c] : NULL, cap);
}

/* n = 1 or 2 batches */
static inline AVX2 void dihedral_n(double (*p)[3], const cb_pbd_batch4 *b, int n, double k, double cap,
                                   const double *alpha, double ih2, double *lambda)
{
    hinge4 h[2];
    int mask[2], degenerate[2];
    for (int j = 0; j < n; j++) hinge_load(p, &b[j], &h[j]);
    for (int j = 0; j < n; j++) mask[j] = dihedral_eval(&b[j], k, cap, alpha, ih2, lambda, &h[j], &degenerate[j]);
    for (int j = 0; j < n; j++) {
        hinge_store(p, &b[j], &h[j], mask[j]);
        for (int l = 0; degenerate[j] && l < 4; l++)
            if (degenerate[j] >> l & 1) dihedral_scalar(p, &b[j], l, k, cap, alpha, ih2, lambda);
    }
}

AVX2 void cb_pbd_simd_bend_dihedral(double (*p)[3], const cb_pbd_batch4 *b, int nb, double k, double cap,
                                    const double *alpha, double ih2, double *lambda)
{
    int i = 0;
    for (; i + 2 <= nb; i += 2) dihedral_n(p, b + i, 2, k, cap, alpha, ih2, lambda);
    if (i < nb) dihedral_n(p, b + i, 1, k, cap, alpha, ih2, lambda);
}

static inline EVAL int paper_eval(const cb_pbd_batch4 *b, double k, double cap, hinge4 *h)
{
    v4x3 e = vsub(h->p[1], h->p[0]), a = vsub(h->p[2], h->p[0]), bb = vsub(h->p[3], h->p[0]);
    v4x3 n1 = vcross(e, a), n2 = vcross(e, bb);
    v4 zero = set1(0.0);
    v4 n1s = vdot(n1, n1), n2s = vdot(n2, n2), le2 = vdot(e, e);
    v4 det = vdot(n1, bb), n12 = mul(n1s, n2s);
    /* the scalar kernel's cases: a degenerate wing, or 1 - d^2 <= 1e-10 */
    v4 ok = _mm256_and_pd(_mm256_and_pd(gt(h->w[0], zero), gt(n1s, zero)), gt(n2s, zero));
    ok = _mm256_and_pd(ok, gt(mul(mul(det, det), le2), mul(set1(1e-10), n12)));
    v4 le = _mm256_sqrt_pd(le2), x = vdot(n1, n2);
    v4 absdet = _mm256_andnot_pd(set1(-0.0), det);
    v4 C = sub(vatan2(mul(absdet, le), x), ld(b->rest)); /* acos(n1.n2 / |n1||n2|) - phi0 */
    v4 inv = _mm256_div_pd(set1(1.0), mul(n12, le2)), il2 = mul(n12, inv);
    v4 sg = mul(mul(sel(gt(det, zero), le, sub(zero, le)), le2), inv);
    v4 c2 = sub(zero, mul(sg, n2s)), c3 = mul(sg, n1s), s2 = mul(vdot(a, e), il2), s3 = mul(vdot(bb, e), il2);
    v4 S = hinge_S(h, c2, c3, s2, s3, n1s, n2s, x);
    ok = _mm256_and_pd(ok, gt(S, zero));
    v4 dl = _mm256_div_pd(sub(zero, clamp(mul(set1(k), C), cap)), S);
    hinge_move(h, n1, n2, c2, c3, s2, s3, _mm256_and_pd(dl, ok));
    return _mm256_movemask_pd(ok);
}

static inline AVX2 void paper_n(double (*p)[3], const cb_pbd_batch4 *b, int n, double k, double cap)
{
    hinge4 h[2];
    int mask[2];
    for (int j = 0; j < n; j++) hinge_load(p, &b[j], &h[j]);
    for (int j = 0; j < n; j++) mask[j] = paper_eval(&b[j], k, cap, &h[j]);
    for (int j = 0; j < n; j++) hinge_store(p, &b[j], &h[j], mask[j]);
}

AVX2 void cb_pbd_simd_bend_paper(double (*p)[3], const cb_pbd_batch4 *b, int nb, double k, double cap)
{
    int i = 0;
    for (; i + 2 <= nb; i += 2) paper_n(p, b + i, 2, k, cap);
    if (i < nb) paper_n(p, b + i, 1, k, cap);
}

#else /* no x86-64: the scalar path only */

int cb_pbd_simd_available(void) { return 0; }

int cb_pbd_simd_atan2(int n, const double *y, const double *x, double *out)
{
    (void)n, (void)y, (void)x, (void)out;
    return -1;
}

void cb_pbd_simd_stretch(double (*p)[3], const cb_pbd_batch2 *b, int nb, double k, const double *alpha, double ih2,
                         double *lambda)
{
    (void)p, (void)b, (void)nb, (void)k, (void)alpha, (void)ih2, (void)lambda;
}

void cb_pbd_simd_bend_dihedral(double (*p)[3], const cb_pbd_batch4 *b, int nb, double k, double cap,
                               const double *alpha, double ih2, double *lambda)
{
    (void)p, (void)b, (void)nb, (void)k, (void)cap, (void)alpha, (void)ih2, (void)lambda;
}

void cb_pbd_simd_bend_paper(double (*p)[3], const cb_pbd_batch4 *b, int nb, double k, double cap)
{
    (void)p, (void)b, (void)nb, (void)k, (void)cap;
}

#endif
