/* solvers/pbd_simd_eval.h — the pbd/xpbd SIMD kernels written once for any vector width
 * (solvers/pbd_simd.h says what they compute). Included by solvers/pbd_simd.c (AVX2, 4
 * lanes) and solvers/pbd_simd512.c (AVX-512, 8 lanes: two batches), each of which first
 * defines the vector type V, the mask type M, the attribute KERNEL (its target) and the
 * primitives below; everything here is static to that file.
 *
 * Primitives: set1, ldu, stu, add, sub, mul, vdiv, vsqrt, fma_ (a b + c), fms_ (a b - c),
 * fnma_ (c - a b),
 * vmin, vmax, vabs, gt (a > b, ordered), eq0 (a == 0), sel (m ? yes : no), signm (the
 * lanes whose sign bit is set), m_and, m_andnot (!a & b), m_xor, m_bits (the lane mask
 * as an int), zero_unless (a where m, else +0), or_sign (a with the sign bit of b added),
 * neg (flip the sign bit), and LANES.
 * Every lane sees the same IEEE operations in the same order at every width (fused
 * multiply-adds, correctly rounded division and square root), so the two files give
 * bitwise the same results (tests/test_pbd.c checks it). */

/* Three coordinates of one vector of points. */
typedef struct V3 { V x, y, z; } V3;

static inline KERNEL V3 vsub3(V3 a, V3 b) { return (V3){sub(a.x, b.x), sub(a.y, b.y), sub(a.z, b.z)}; }
static inline KERNEL V vdot3(V3 a, V3 b) { return fma_(a.x, b.x, fma_(a.y, b.y, mul(a.z, b.z))); }
static inline KERNEL V3 vcross3(V3 a, V3 b)
{
    return (V3){fms_(a.y, b.z, mul(a.z, b.y)), fms_(a.z, b.x, mul(a.x, b.z)), fms_(a.x, b.y, mul(a.y, b.x))};
}
/* a + s u + t v */
static inline KERNEL V3 vaxpy2(V3 a, V s, V3 u, V t, V3 v)
{
    return (V3){fma_(s, u.x, fma_(t, v.x, a.x)), fma_(s, u.y, fma_(t, v.y, a.y)), fma_(s, u.z, fma_(t, v.z, a.z))};
}
static inline KERNEL V3 vaxpy(V3 a, V s, V3 u) { return (V3){fma_(s, u.x, a.x), fma_(s, u.y, a.y), fma_(s, u.z, a.z)}; }

/* atan2(y, x). With a = min(|x|,|y|) / max(|x|,|y|) in [0, 1]: atan(a) = atan(t)
 * (+ pi/4 when a > tan(pi/8), then t = (a - 1)/(a + 1) computed as (min - max)/(min +
 * max)), |t| <= tan(pi/8); atan(t) = t + t z P(z), z = t^2, with P of degree 10: a
 * Chebyshev fit of (atan(sqrt z)/sqrt z - 1)/z on [0, tan^2(pi/8)] made for this file
 * (relative error of t + t z P below 1e-17 in exact arithmetic). Then pi/2 - r when
 * |y| > |x|, pi - r when x has its sign bit set, and y's sign: atan2(+-0, +0) = +-0,
 * atan2(+-0, -0) = +-pi as C's atan2. The result is a multiple of pi/4 plus or minus
 * atan(t), the multiple added as a double-double in one rounding. */
static inline KERNEL V vatan2(V y, V x)
{
    static const double P[11] = {-0.01917688711906226, 0.03923165829558719, -0.0508544973794026,
                                 0.0585814891280221,  -0.06664511447381948, 0.07692183190826087,
                                 -0.09090904578123903, 0.11111111015256361, -0.14285714284666542,
                                 0.1999999999999552,  -0.3333333333333333};
    V ax = vabs(x), ay = vabs(y);
    V mx = vmax(ax, ay), mn = vmin(ax, ay);
    M big = gt(mn, mul(mx, set1(0.41421356237309503))); /* tan(pi/8) */
    V num = sel(big, sub(mn, mx), mn), den = sel(big, add(mn, mx), mx);
    den = sel(eq0(den), set1(1.0), den); /* x = y = 0: t = 0 */
    V t = vdiv(num, den), z = mul(t, t);
    /* q = sum_k P[10 - k] z^k by Estrin's scheme: a chain of 5 operations instead of
     * Horner's 10 (the kernels wait on this chain) */
    V z2 = mul(z, z), z4 = mul(z2, z2), z8 = mul(z4, z4);
#define PAIR(k) fma_(set1(P[9 - (k)]), z, set1(P[10 - (k)])) /* P[10-k] + P[9-k] z */
    V q = fma_(z2, PAIR(2), PAIR(0));
    q = fma_(z4, fma_(z2, PAIR(6), PAIR(4)), q);
    q = fma_(z8, fma_(z2, set1(P[0]), PAIR(8)), q);
#undef PAIR
    V at = fma_(mul(t, z), q, t); /* atan(t) */
    /* the angle is m pi/4 + atan(t) or m pi/4 - atan(t), m in 0..4: pi/4 when big, then
     * pi/2 - a when |y| > |x|, then pi - a when x is negative (its sign bit) */
    M swap = gt(ay, ax);
    V m = sel(big, set1(1.0), set1(0.0));
    m = sel(swap, sub(set1(2.0), m), m);
    m = sel(signm(x), sub(set1(4.0), m), m);
    at = sel(m_xor(swap, signm(x)), neg(at), at);
    /* m pi/4 as the double-double hi + lo, the product m hi exact inside the FMA */
    V r = fma_(m, set1(0.78539816339744828), fma_(m, set1(3.061616997868383e-17), at));
    return or_sign(r, y);
}

/* The multipliers' compliance alpha[c] * ih2 and lambda[c] of the lanes (0 for an empty
 * lane, c = -1). */
static inline KERNEL void gather_xpbd(const int *c, const double *alpha, double ih2, const double *lambda, V *at,
                                      V *lam)
{
    double a[LANES], l[LANES];
    for (int j = 0; j < LANES; j++) {
        a[j] = c[j] >= 0 ? alpha[c[j]] * ih2 : 0.0;
        l[j] = c[j] >= 0 ? lambda[c[j]] : 0.0;
    }
    *at = ldu(a);
    *lam = ldu(l);
}

static inline KERNEL void scatter_lambda(const int *c, V lam, int mask, double *lambda)
{
    double l[LANES];
    stu(l, lam);
    for (int j = 0; j < LANES; j++)
        if (mask >> j & 1) lambda[c[j]] = l[j];
}

/* ---- stretch: the move of both points; returns the lanes to store */
static inline KERNEL int stretch_eval(V3 *p0, V3 *p1, V w0, V w1, V rest, const int *c, double k,
                                      const double *alpha, double ih2, double *lambda)
{
    V W = add(w0, w1);
    V3 d = vsub3(*p0, *p1);
    V l = vsqrt(vdot3(d, d)), C = sub(l, rest);
    M ok = m_and(gt(l, set1(0.0)), gt(W, set1(0.0)));
    int mask = m_bits(ok);
    V f;
    if (!lambda) {
        f = vdiv(mul(set1(-k), C), mul(W, l));
    } else {
        V at, lam;
        gather_xpbd(c, alpha, ih2, lambda, &at, &lam);
        f = vdiv(fnma_(at, lam, sub(set1(0.0), C)), mul(add(W, at), l)); /* dlambda / l */
        scatter_lambda(c, fma_(f, l, lam), mask, lambda);
    }
    f = zero_unless(f, ok);
    *p0 = vaxpy(*p0, mul(f, w0), d);
    *p1 = vaxpy(*p1, sub(set1(0.0), mul(f, w1)), d);
    return mask;
}

/* ---- hinges. A hinge's gradients g_j = u_j n1 + v_j n2 (solvers/pbd_constraints.h,
 * "Hinge gradients"): from (c2, c3, s2, s3) and x = n1 . n2, the sum S = sum_j w_j
 * |g_j|^2 and the move p_j += dl w_j g_j (dl is 0 in the lanes not to move). */
typedef struct hingeV {
    V3 p[4];
    V w[4]; /* the inverse masses (the points' fourth coordinates), 0 in the empty lanes */
} hingeV;

static inline KERNEL V norm2_uv(V u, V v, V n1s, V n2s, V x)
{
    return fma_(mul(u, u), n1s, fma_(mul(add(u, u), v), x, mul(mul(v, v), n2s)));
}

static inline KERNEL V hinge_S(const hingeV *h, V c2, V c3, V s2, V s3, V n1s, V n2s, V x)
{
    V zero = set1(0.0);
    V u1 = sub(zero, mul(s2, c2)), v1 = sub(zero, mul(s3, c3));
    V u0 = sub(zero, add(u1, c2)), v0 = sub(zero, add(v1, c3));
    V S = mul(h->w[0], norm2_uv(u0, v0, n1s, n2s, x));
    S = fma_(h->w[1], norm2_uv(u1, v1, n1s, n2s, x), S);
    S = fma_(h->w[2], mul(mul(c2, c2), n1s), S);
    return fma_(h->w[3], mul(mul(c3, c3), n2s), S);
}

static inline KERNEL void hinge_move(hingeV *h, V3 n1, V3 n2, V c2, V c3, V s2, V s3, V dl)
{
    V zero = set1(0.0);
    V u1 = sub(zero, mul(s2, c2)), v1 = sub(zero, mul(s3, c3));
    V u0 = sub(zero, add(u1, c2)), v0 = sub(zero, add(v1, c3));
    V d0 = mul(dl, h->w[0]), d1 = mul(dl, h->w[1]);
    h->p[0] = vaxpy2(h->p[0], mul(d0, u0), n1, mul(d0, v0), n2);
    h->p[1] = vaxpy2(h->p[1], mul(d1, u1), n1, mul(d1, v1), n2);
    h->p[2] = vaxpy(h->p[2], mul(mul(dl, h->w[2]), c2), n1);
    h->p[3] = vaxpy(h->p[3], mul(mul(dl, h->w[3]), c3), n2);
}

static inline KERNEL V clamp(V kc, double cap) { return vmin(vmax(kc, set1(-cap)), set1(cap)); }

/* The shared model's signed dihedral angle: the projection of the lanes of h; returns
 * the lanes to store. The degenerate lanes (mask *degenerate) are left to the scalar
 * kernel. */
static inline EVAL int dihedral_eval(hingeV *h, V rest, const int *c, double k, double cap, const double *alpha,
                                     double ih2, double *lambda, int *degenerate)
{
    V3 e = vsub3(h->p[1], h->p[0]), a = vsub3(h->p[2], h->p[0]), bb = vsub3(h->p[3], h->p[0]);
    V3 n1 = vcross3(e, a), n2 = vcross3(bb, e);
    V zero = set1(0.0);
    V n1s = vdot3(n1, n1), n2s = vdot3(n2, n2), le2 = vdot3(e, e);
    M real = gt(h->w[0], zero); /* every vertex of a batch is free; an empty lane has w = 0 */
    M fine = m_and(m_and(gt(n1s, zero), gt(n2s, zero)), gt(le2, zero));
    *degenerate = m_bits(m_andnot(fine, real));
    M ok = m_and(fine, real);
    V le = vsqrt(le2);
    V x = vdot3(n1, n2), y = mul(sub(zero, vdot3(n1, bb)), le);
    V C = sub(vatan2(y, x), rest);
    V at = zero, lam = zero, num = sub(zero, C);
    if (lambda) {
        gather_xpbd(c, alpha, ih2, lambda, &at, &lam);
        num = fnma_(at, lam, num);
    }
    V inv = vdiv(set1(1.0), mul(mul(n1s, n2s), le2));
    V il2 = mul(mul(n1s, n2s), inv), sl = mul(sub(zero, mul(le, le2)), inv);
    V c2 = mul(sl, n2s), c3 = mul(sl, n1s), s2 = mul(vdot3(a, e), il2), s3 = mul(vdot3(bb, e), il2);
    V S = hinge_S(h, c2, c3, s2, s3, n1s, n2s, x), dl;
    if (!lambda) {
        ok = m_and(ok, gt(S, zero));
        dl = vdiv(clamp(mul(set1(k), num), cap), S);
    } else {
        V den = add(S, at);
        ok = m_and(ok, gt(den, zero));
        dl = vdiv(num, den);
        scatter_lambda(c, add(lam, dl), m_bits(ok), lambda);
    }
    hinge_move(h, n1, n2, c2, c3, s2, s3, zero_unless(dl, ok));
    return m_bits(ok);
}

/* The paper's bending constraint acos(n1 . n2) - phi0, as the scalar kernel (the cases
 * it skips are skipped). */
static inline EVAL int paper_eval(hingeV *h, V rest, double k, double cap)
{
    V3 e = vsub3(h->p[1], h->p[0]), a = vsub3(h->p[2], h->p[0]), bb = vsub3(h->p[3], h->p[0]);
    V3 n1 = vcross3(e, a), n2 = vcross3(e, bb);
    V zero = set1(0.0);
    V n1s = vdot3(n1, n1), n2s = vdot3(n2, n2), le2 = vdot3(e, e);
    V det = vdot3(n1, bb), n12 = mul(n1s, n2s);
    /* the scalar kernel's cases: a degenerate wing, or 1 - d^2 <= 1e-10 */
    M ok = m_and(m_and(gt(h->w[0], zero), gt(n1s, zero)), gt(n2s, zero));
    ok = m_and(ok, gt(mul(mul(det, det), le2), mul(set1(1e-10), n12)));
    V le = vsqrt(le2), x = vdot3(n1, n2);
    V C = sub(vatan2(mul(vabs(det), le), x), rest); /* acos(n1.n2 / |n1||n2|) - phi0 */
    V inv = vdiv(set1(1.0), mul(n12, le2)), il2 = mul(n12, inv);
    V sg = mul(mul(sel(gt(det, zero), le, sub(zero, le)), le2), inv);
    V c2 = sub(zero, mul(sg, n2s)), c3 = mul(sg, n1s), s2 = mul(vdot3(a, e), il2), s3 = mul(vdot3(bb, e), il2);
    V S = hinge_S(h, c2, c3, s2, s3, n1s, n2s, x);
    ok = m_and(ok, gt(S, zero));
    V dl = vdiv(sub(zero, clamp(mul(set1(k), C), cap)), S);
    hinge_move(h, n1, n2, c2, c3, s2, s3, zero_unless(dl, ok));
    return m_bits(ok);
}

/* A degenerate hinge: the scalar kernel (pbd: no move; xpbd: its multiplier moves). */
static void dihedral_scalar(double (*p)[4], const cb_pbd_batch4 *b, int l, double k, double cap, const double *alpha,
                            double ih2, double *lambda)
{
    double w[4] = {p[b->v[0][l]][3], p[b->v[1][l]][3], p[b->v[2][l]][3], p[b->v[3][l]][3]};
    int c = b->c[l];
    cb_pbd_project_bend_dihedral(p[b->v[0][l]], p[b->v[1][l]], p[b->v[2][l]], p[b->v[3][l]], w, b->rest[l], k,
                                 lambda ? alpha[c] * ih2 : -1.0, lambda ? &lambda[c] : NULL, cap);
}

/* ---- drivers. A vector holds GROUP batches (LANES / 4); the bending drivers evaluate NG
 * vectors side by side (NG_BEND, set by the including file): a hinge's evaluation is one
 * long chain of dependent operations (cross products, the atan2 division and
 * polynomial, the correction's division) that leaves the core waiting, and two chains
 * inlined into one stretch of code overlap. The loops over the NG vectors are unrolled
 * (pragma): left as loops, GCC kept them as loops over arrays on the stack, and the
 * chains ran one after the other (pbd_bend's bending sweeps 0.655 -> 0.59 ms at 8 lanes,
 * 1.02 -> 0.95 at 4). A colour's batches touch disjoint points, so the later batches'
 * loads may come before the earlier ones' stores. An odd last batch fills the upper
 * lanes with empty ones (c = -1: masses 0, never stored). */
#define GROUP (LANES / 4)

static const int empty_c[4] = {-1, -1, -1, -1};

/* the batches of vector g of b[0..nb) (b1 NULL: none) */
static inline void group_of(const cb_pbd_batch4 *b, int nb, int g, const cb_pbd_batch4 **b0,
                            const cb_pbd_batch4 **b1)
{
    *b0 = &b[g * GROUP];
    *b1 = GROUP == 2 && g * GROUP + 1 < nb ? &b[g * GROUP + 1] : NULL;
}

static inline KERNEL void hinge_load(double (*p)[4], const cb_pbd_batch4 *b0, const cb_pbd_batch4 *b1, hingeV *h,
                                     V *rest, int *c)
{
    const cb_pbd_batch4 *up = b1 ? b1 : b0;
    for (int l = 0; l < 4; l++) c[l] = b0->c[l];
    for (int l = 4; l < LANES; l++) c[l] = b1 ? b1->c[l - 4] : empty_c[l - 4];
    M real = real_lanes(b0->c, b1 ? b1->c : empty_c);
    for (int j = 0; j < 4; j++) {
        h->p[j] = vload(p, b0->v[j], up->v[j], &h->w[j]);
        h->w[j] = zero_unless(h->w[j], real);
    }
    *rest = vld(b0->rest, up->rest);
}

static inline KERNEL void hinge_store(double (*p)[4], const cb_pbd_batch4 *b0, const cb_pbd_batch4 *b1,
                                      const hingeV *h, int mask)
{
    /* the stored lanes are real ones: their w as loaded */
    for (int j = 0; j < 4; j++) vstore(p, b0->v[j], b1 ? b1->v[j] : b0->v[j], h->p[j], h->w[j], mask);
}

/* ng (1..NG_BEND) vectors of hinges from b[0..nb) */
static inline EVAL void dihedral_vectors(double (*p)[4], const cb_pbd_batch4 *b, int nb, int ng, double k,
                                         double cap, const double *alpha, double ih2, double *lambda)
{
    hingeV h[NG_BEND];
    V rest[NG_BEND];
    int c[NG_BEND][LANES], mask[NG_BEND], degenerate[NG_BEND];
    const cb_pbd_batch4 *b0[NG_BEND], *b1[NG_BEND];
#pragma GCC unroll 4
    for (int g = 0; g < ng; g++) {
        group_of(b, nb, g, &b0[g], &b1[g]);
        hinge_load(p, b0[g], b1[g], &h[g], &rest[g], c[g]);
    }
#pragma GCC unroll 4
    for (int g = 0; g < ng; g++)
        mask[g] = dihedral_eval(&h[g], rest[g], c[g], k, cap, alpha, ih2, lambda, &degenerate[g]);
#pragma GCC unroll 4
    for (int g = 0; g < ng; g++) {
        hinge_store(p, b0[g], b1[g], &h[g], mask[g]);
        for (int l = 0; degenerate[g] && l < LANES; l++)
            if (degenerate[g] >> l & 1) dihedral_scalar(p, l < 4 ? b0[g] : b1[g], l % 4, k, cap, alpha, ih2, lambda);
    }
}

static inline EVAL void paper_vectors(double (*p)[4], const cb_pbd_batch4 *b, int nb, int ng, double k, double cap)
{
    hingeV h[NG_BEND];
    V rest[NG_BEND];
    int c[NG_BEND][LANES], mask[NG_BEND];
    const cb_pbd_batch4 *b0[NG_BEND], *b1[NG_BEND];
#pragma GCC unroll 4
    for (int g = 0; g < ng; g++) {
        group_of(b, nb, g, &b0[g], &b1[g]);
        hinge_load(p, b0[g], b1[g], &h[g], &rest[g], c[g]);
    }
#pragma GCC unroll 4
    for (int g = 0; g < ng; g++) mask[g] = paper_eval(&h[g], rest[g], k, cap);
#pragma GCC unroll 4
    for (int g = 0; g < ng; g++) hinge_store(p, b0[g], b1[g], &h[g], mask[g]);
}

/* the vectors of the whole range, NG_BEND at a time (a constant count, so the evaluations
 * are unrolled side by side) */
#define EACH_VECTORS(call)                                                                                            \
    do {                                                                                                               \
        const int per = GROUP * NG_BEND;                                                                               \
        int i = 0;                                                                                                     \
        for (; i + per <= nb; i += per) call(b + i, per, NG_BEND);                                                     \
        for (; i < nb; i += GROUP) call(b + i, nb - i, 1);                                                             \
    } while (0)

static inline KERNEL void dihedral_run(double (*p)[4], const cb_pbd_batch4 *b, int nb, double k, double cap,
                                const double *alpha, double ih2, double *lambda)
{
    /* pbd's loop compiled apart from xpbd's (lambda a constant NULL in it): none of the
     * multipliers' work, not even the lanes' indices c copied for them (-2% on pbd_bend) */
#define CALL(bb, n, ng) dihedral_vectors(p, bb, n, ng, k, cap, alpha, ih2, lambda)
#define CALL_PBD(bb, n, ng) dihedral_vectors(p, bb, n, ng, k, cap, NULL, 0.0, NULL)
    if (lambda) EACH_VECTORS(CALL);
    else EACH_VECTORS(CALL_PBD);
#undef CALL
#undef CALL_PBD
}

static inline KERNEL void paper_run(double (*p)[4], const cb_pbd_batch4 *b, int nb, double k, double cap)
{
#define CALL(bb, n, ng) paper_vectors(p, bb, n, ng, k, cap)
    EACH_VECTORS(CALL);
#undef CALL
}

static inline KERNEL void stretch_run(double (*p)[4], const cb_pbd_batch2 *b, int nb, double k, const double *alpha,
                               double ih2, double *lambda)
{
    for (int i = 0; i < nb; i += GROUP) {
        const cb_pbd_batch2 *b0 = &b[i], *b1 = GROUP == 2 && i + 1 < nb ? &b[i + 1] : NULL, *up = b1 ? b1 : b0;
        int c[LANES];
        for (int l = 0; l < 4; l++) c[l] = b0->c[l];
        for (int l = 4; l < LANES; l++) c[l] = b1 ? b1->c[l - 4] : empty_c[l - 4];
        V w0, w1;
        V3 p0 = vload(p, b0->v[0], up->v[0], &w0), p1 = vload(p, b0->v[1], up->v[1], &w1);
        M real = real_lanes(b0->c, b1 ? b1->c : empty_c);
        w0 = zero_unless(w0, real), w1 = zero_unless(w1, real); /* a stored lane is real: its w as loaded */
        int mask = stretch_eval(&p0, &p1, w0, w1, vld(b0->rest, up->rest), c, k, alpha, ih2, lambda);
        vstore(p, b0->v[0], up->v[0], p0, w0, mask);
        vstore(p, b0->v[1], up->v[1], p1, w1, mask);
    }
}

/* The pbd stretch residual of the batches' lanes on the positions x (xyz triples):
 * max(r, |(|x0 - x1| - rest)| / rest) over the real lanes with rest > 0, as pbd_step's
 * scalar loop computes it (the same operations, unfused: (dx^2 + dy^2) + dz^2, no
 * FMA); a NaN term is dropped as there. r holds the running maximum of each lane. */
static inline KERNEL V stretch_residual_run(const double (*x)[3], const cb_pbd_batch2 *b, int nb, V r)
{
    V zero = set1(0.0);
    for (int i = 0; i < nb; i += GROUP) {
        const cb_pbd_batch2 *b0 = &b[i], *b1 = GROUP == 2 && i + 1 < nb ? &b[i + 1] : NULL, *up = b1 ? b1 : b0;
        V3 d = vsub3(xload(x, b0->v[0], up->v[0]), xload(x, b0->v[1], up->v[1]));
        V rest = vld(b0->rest, up->rest);
        V l = vsqrt(add(add(mul(d.x, d.x), mul(d.y, d.y)), mul(d.z, d.z)));
        M ok = m_and(real_lanes(b0->c, b1 ? b1->c : empty_c), gt(rest, zero));
        /* max(a, r) is a > r ? a : r per lane, as max_kept (a NaN a is dropped) */
        r = vmax(zero_unless(vdiv(vabs(sub(l, rest)), rest), ok), r);
    }
    return r;
}

static inline KERNEL void atan2_run(int n, const double *y, const double *x, double *out)
{
    for (int i = 0; i < n; i += LANES) {
        double ty[LANES], tx[LANES], to[LANES];
        for (int j = 0; j < LANES; j++) {
            ty[j] = i + j < n ? y[i + j] : 0.0;
            tx[j] = i + j < n ? x[i + j] : 1.0;
        }
        stu(to, vatan2(ldu(ty), ldu(tx)));
        for (int j = 0; j < LANES && i + j < n; j++) out[i + j] = to[j];
    }
}
