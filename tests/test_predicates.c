/* tests/test_predicates.c — exact orientation predicates and the exact segment-triangle
 * test, checked against exact big-integer arithmetic and an independent rational
 * clipping reference. */
#include "cb_test.h"

#include <stdint.h>

#include "contact/predicates.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng_next(void) { return cb_test_xorshift64(&rng_state); }
static double rng_uniform(void) { return cb_test_uniform(&rng_state); }
static int rng_int(int lo, int hi) { return lo + (int)(rng_next() % (uint64_t)(hi - lo + 1)); }

/* ---- a small exact signed integer: base 2^32 limbs in __int128 ------------------ */
#define WL 10
typedef struct { __int128 l[WL]; } wide;
static const __int128 W_BASE = (__int128)1 << 32;

static void w_norm(wide *w)
{
    for (int i = 0; i < WL - 1; i++) {
        __int128 v = w->l[i];
        __int128 c = v >= 0 ? v / W_BASE : -((-v + W_BASE - 1) / W_BASE);
        w->l[i] = v - c * W_BASE;
        w->l[i + 1] += c;
    }
}
static wide w_from(int64_t v) { wide w; memset(&w, 0, sizeof w); w.l[0] = v; w_norm(&w); return w; }
static int w_sign(wide a);
static wide w_neg(wide a)
{
    for (int i = 0; i < WL; i++) a.l[i] = -a.l[i];
    w_norm(&a);
    return a;
}
/* Sign-magnitude product (limbs of a normalised negative number are not its magnitude). */
static wide w_mul(wide a, wide b)
{
    int sa = w_sign(a), sb = w_sign(b);
    if (sa < 0) a = w_neg(a);
    if (sb < 0) b = w_neg(b);
    wide c; memset(&c, 0, sizeof c);
    for (int i = 0; i < WL; i++)
        for (int j = 0; i + j < WL; j++) c.l[i + j] += a.l[i] * b.l[j];
    w_norm(&c);
    return sa * sb < 0 ? w_neg(c) : c;
}
static wide w_add(wide a, wide b, int sign)
{
    for (int i = 0; i < WL; i++) a.l[i] += sign * b.l[i];
    w_norm(&a);
    return a;
}
static int w_sign(wide a)
{
    if (a.l[WL - 1] != 0) return a.l[WL - 1] > 0 ? 1 : -1;
    for (int i = WL - 2; i >= 0; i--) if (a.l[i] != 0) return 1;
    return 0;
}

/* x * 2^58 as an exact integer (x must be a multiple of 2^-58 with |x| < 8). */
static int64_t fixed58(double x)
{
    double s = ldexp(x, 58);
    CU_ASSERT_FATAL(fabs(x) < 8.0 && s == floor(s));
    return (int64_t)s;
}

static int exact_orient3d_sign(const double a[3], const double b[3], const double c[3], const double d[3])
{
    wide m[3][3];
    const double *r[3] = {a, b, c};
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++) m[i][k] = w_from(fixed58(r[i][k]) - fixed58(d[k]));
    wide t1 = w_mul(m[0][2], w_add(w_mul(m[1][0], m[2][1]), w_mul(m[1][1], m[2][0]), -1));
    wide t2 = w_mul(m[1][2], w_add(w_mul(m[2][0], m[0][1]), w_mul(m[2][1], m[0][0]), -1));
    wide t3 = w_mul(m[2][2], w_add(w_mul(m[0][0], m[1][1]), w_mul(m[0][1], m[1][0]), -1));
    return w_sign(w_add(w_add(t1, t2, 1), t3, 1));
}

static int exact_orient2d_sign(const double a[2], const double b[2], const double c[2])
{
    wide acx = w_from(fixed58(a[0]) - fixed58(c[0])), acy = w_from(fixed58(a[1]) - fixed58(c[1]));
    wide bcx = w_from(fixed58(b[0]) - fixed58(c[0])), bcy = w_from(fixed58(b[1]) - fixed58(c[1]));
    return w_sign(w_add(w_mul(acx, bcy), w_mul(acy, bcx), -1));
}

static int sgn(double x) { return (x > 0) - (x < 0); }

static double naive_orient3d(const double a[3], const double b[3], const double c[3], const double d[3])
{
    double adx = a[0] - d[0], ady = a[1] - d[1], adz = a[2] - d[2];
    double bdx = b[0] - d[0], bdy = b[1] - d[1], bdz = b[2] - d[2];
    double cdx = c[0] - d[0], cdy = c[1] - d[1], cdz = c[2] - d[2];
    return adx * (bdy * cdz - bdz * cdy) + bdx * (cdy * adz - cdz * ady) + cdx * (ady * bdz - adz * bdy);
}

/* Small integers: exact by construction, including many exactly coplanar sets. */
static void test_orient3d_small_integers(void)
{
    int wrong = 0, zeros = 0;
    for (int it = 0; it < 200000; it++) {
        double p[4][3];
        for (int i = 0; i < 4; i++)
            for (int k = 0; k < 3; k++) p[i][k] = (double)rng_int(-4, 4);
        if (it % 2 == 0) /* force coplanar: d = a + i (b - a) + j (c - a) */
            for (int k = 0; k < 3; k++) {
                int i1 = rng_int(-2, 2), j1 = rng_int(-2, 2);
                p[3][k] = p[0][k] + i1 * (p[1][k] - p[0][k]) + j1 * (p[2][k] - p[0][k]);
            }
        int64_t m[3][3];
        for (int i = 0; i < 3; i++)
            for (int k = 0; k < 3; k++) m[i][k] = (int64_t)(p[i][k] - p[3][k]);
        int64_t det = m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]) +
                      m[1][2] * (m[2][0] * m[0][1] - m[2][1] * m[0][0]) +
                      m[2][2] * (m[0][0] * m[1][1] - m[0][1] * m[1][0]);
        int s = (det > 0) - (det < 0);
        zeros += s == 0;
        double o = cb_orient3d(p[0], p[1], p[2], p[3]);
        if (sgn(o) != s) wrong++;
        else if (s != 0 && fabs(o - (double)det) > 1e-9 * fabs((double)det)) wrong++;
    }
    printf("\n    orient3d small integers: %d exactly coplanar of 200000, %d wrong\n", zeros, wrong);
    CU_ASSERT(zeros > 5000);
    CU_ASSERT_EQUAL(wrong, 0);
}

/* A random triangle abc in [0.25, 3.75]^3 and the barycentric weights (s, t) of a point
 * on its plane. */
static void random_triangle(double a[3], double b[3], double c[3], double *s, double *t)
{
    for (int k = 0; k < 3; k++) {
        a[k] = 0.25 + 3.5 * rng_uniform();
        b[k] = 0.25 + 3.5 * rng_uniform();
        c[k] = 0.25 + 3.5 * rng_uniform();
    }
    *s = rng_uniform();
    *t = rng_uniform() * (1.0 - *s);
}

/* d = a + s (b - a) + t (c - a), moved off the plane by a uniform offset in [-0.5, 0.5)
 * per coordinate when `generic`, then by -2..2 ulps per coordinate. */
static void near_plane(const double a[3], const double b[3], const double c[3], double s, double t, int generic,
                       double d[3])
{
    for (int k = 0; k < 3; k++) {
        d[k] = a[k] + s * (b[k] - a[k]) + t * (c[k] - a[k]);
        if (generic) d[k] += rng_uniform() - 0.5;
        int ulps = rng_int(-2, 2);
        for (; ulps > 0; ulps--) d[k] = nextafter(d[k], INFINITY);
        for (; ulps < 0; ulps++) d[k] = nextafter(d[k], -INFINITY);
    }
}

/* Points perturbed off a plane by a few ulps: naive evaluation often gets the sign
 * wrong; ours must never. */
static void test_orient3d_near_degenerate(void)
{
    int naive_wrong = 0, ours_wrong = 0, n = 0;
    for (int it = 0; it < 60000; it++) {
        double a[3], b[3], c[3], d[3], s, t;
        random_triangle(a, b, c, &s, &t);
        if (it % 2) { s = 4.0 * s - 1.5; t = 4.0 * t - 1.5; } /* outside the triangle too */
        near_plane(a, b, c, s, t, 0, d);
        if (!(fabs(d[0]) >= 0.25 && fabs(d[0]) < 8 && fabs(d[1]) >= 0.25 && fabs(d[1]) < 8 &&
              fabs(d[2]) >= 0.25 && fabs(d[2]) < 8))
            continue;
        n++;
        int ex = exact_orient3d_sign(a, b, c, d);
        naive_wrong += sgn(naive_orient3d(a, b, c, d)) != ex;
        ours_wrong += sgn(cb_orient3d(a, b, c, d)) != ex;
        /* orientation is antisymmetric under a swap: the exact sign flips */
        ours_wrong += sgn(cb_orient3d(b, a, c, d)) != -ex;
    }
    printf("\n    orient3d near-degenerate: %d cases, naive wrong %d, ours wrong %d\n", n, naive_wrong, ours_wrong);
    CU_ASSERT(n > 20000);
    CU_ASSERT(naive_wrong > 100); /* the test really exercises the hard cases */
    CU_ASSERT_EQUAL(ours_wrong, 0);
}

/* cb_orient3d_sign (the inlined filter) gives the sign of cb_orient3d: on the
 * near-degenerate points above, where the filter is often undecided and falls back, on
 * exactly coplanar lattice points (sign 0) and on generic points. */
static void test_orient3d_sign_inline(void)
{
    int wrong = 0, zeros = 0;
    for (int it = 0; it < 60000; it++) {
        double a[3], b[3], c[3], d[3], s, t;
        random_triangle(a, b, c, &s, &t);
        if (it % 3 == 2) { /* lattice points: many exactly coplanar quadruples */
            for (int k = 0; k < 3; k++) {
                a[k] = rng_int(-3, 3) * 0.125;
                b[k] = rng_int(-3, 3) * 0.125;
                c[k] = rng_int(-3, 3) * 0.125;
                d[k] = rng_int(-3, 3) * 0.125;
            }
        } else {
            near_plane(a, b, c, s, t, it % 3 == 1, d);
        }
        int ref = sgn(cb_orient3d(a, b, c, d));
        zeros += ref == 0;
        wrong += cb_orient3d_sign(a, b, c, d) != ref;
        wrong += cb_orient3d_sign(b, a, c, d) != -ref;
    }
    double inf[3] = {INFINITY, 0, 0}, nan[3] = {NAN, 0, 0}, o[3] = {0, 0, 0}, e1[3] = {1, 0, 0}, e2[3] = {0, 1, 0};
    wrong += cb_orient3d_sign(o, e1, e2, inf) != 0;   /* non-finite: cb_orient3d gives NaN */
    wrong += cb_orient3d_sign(o, e1, e2, nan) != 0;
    CU_ASSERT(zeros > 1000);
    CU_ASSERT_EQUAL(wrong, 0);
}

/* The 2D grid around a degenerate line (0.5 + k 2^-52, ...) against far points. */
static void test_orient2d_near_degenerate(void)
{
    int naive_wrong = 0, ours_wrong = 0, n = 0;
    const double u = 0x1.0p-52;
    double q[2] = {3.0, 3.0}, r[2] = {6.0, 6.0};
    for (int i = 0; i < 256; i++)
        for (int j = 0; j < 256; j++) {
            double p[2] = {0.5 + i * u, 0.5 + j * u};
            int ex = exact_orient2d_sign(p, q, r);
            double naive = (p[0] - r[0]) * (q[1] - r[1]) - (p[1] - r[1]) * (q[0] - r[0]);
            naive_wrong += sgn(naive) != ex;
            ours_wrong += sgn(cb_orient2d(p, q, r)) != ex;
            ours_wrong += sgn(cb_orient2d(q, p, r)) != -ex;
            n++;
        }
    for (int it = 0; it < 50000; it++) { /* random near-collinear triples */
        double a[2], b[2], c[2];
        for (int k = 0; k < 2; k++) { a[k] = 0.25 + 3.5 * rng_uniform(); b[k] = 0.25 + 3.5 * rng_uniform(); }
        double s = 3.0 * rng_uniform() - 1.0;
        for (int k = 0; k < 2; k++) {
            c[k] = a[k] + s * (b[k] - a[k]);
            if (rng_next() & 1) c[k] = nextafter(c[k], (rng_next() & 1) ? 10.0 : 0.0);
        }
        if (!(c[0] >= 0.25 && c[0] < 8 && c[1] >= 0.25 && c[1] < 8)) continue;
        int ex = exact_orient2d_sign(a, b, c);
        double naive = (a[0] - c[0]) * (b[1] - c[1]) - (a[1] - c[1]) * (b[0] - c[0]);
        naive_wrong += sgn(naive) != ex;
        ours_wrong += sgn(cb_orient2d(a, b, c)) != ex;
        n++;
    }
    printf("\n    orient2d near-degenerate: %d cases, naive wrong %d, ours wrong %d\n", n, naive_wrong, ours_wrong);
    CU_ASSERT(naive_wrong > 100);
    CU_ASSERT_EQUAL(ours_wrong, 0);
}

static void test_orient_conventions(void)
{
    double a[3] = {0, 0, 0}, b[3] = {1, 0, 0}, c[3] = {0, 1, 0}, below[3] = {0.2, 0.2, -1};
    double above[3] = {0.2, 0.2, 2};
    /* a, b, c counter-clockwise seen from +z: a point below gives a positive value, 6 x volume */
    CB_ASSERT_REL(cb_orient3d(a, b, c, below), 1.0, 1e-15);
    CB_ASSERT_REL(cb_orient3d(a, b, c, above), -2.0, 1e-15);
    double p[2] = {0, 0}, q[2] = {2, 0}, r[2] = {0, 3};
    CB_ASSERT_REL(cb_orient2d(p, q, r), 6.0, 1e-15);
    CB_ASSERT_REL(cb_orient2d(q, p, r), -6.0, 1e-15);
    double nan3[3] = {NAN, 0, 0};
    CU_ASSERT(isnan(cb_orient3d(a, b, c, nan3)));
}

/* ---- segment-triangle ----------------------------------------------------------- */

/* Independent reference over small integer coordinates: clip the segment parameter
 * lambda in [0,1] against the plane equation and the three in-plane edge half-spaces,
 * with exact rational arithmetic. Triangle must be non-degenerate. */
typedef struct { __int128 num, den; } rat; /* den > 0 */
static int rat_less(rat a, rat b) { return a.num * b.den < b.num * a.den; }

static int ref_seg_tri(const int p[3], const int q[3], const int a[3], const int b[3], const int c[3])
{
    int64_t e0[3], e1[3], n[3], d[3], pa[3];
    for (int k = 0; k < 3; k++) { e0[k] = b[k] - a[k]; e1[k] = c[k] - a[k]; d[k] = q[k] - p[k]; pa[k] = p[k] - a[k]; }
    n[0] = e0[1] * e1[2] - e0[2] * e1[1];
    n[1] = e0[2] * e1[0] - e0[0] * e1[2];
    n[2] = e0[0] * e1[1] - e0[1] * e1[0];
    CU_ASSERT_FATAL(n[0] || n[1] || n[2]);
    rat lo = {0, 1}, hi = {1, 1};
    /* plane: n.(p - a) + lambda n.d == 0 */
    int64_t g = n[0] * pa[0] + n[1] * pa[1] + n[2] * pa[2], h = n[0] * d[0] + n[1] * d[1] + n[2] * d[2];
    if (h == 0) { if (g != 0) return 0; }
    else {
        rat l = {h > 0 ? -g : g, h > 0 ? h : -h};
        if (rat_less(l, lo) || rat_less(hi, l)) return 0;
        lo = hi = l;
    }
    /* edges: ((v1 - v0) x (x - v0)) . n >= 0 */
    const int *v[3] = {a, b, c};
    for (int i = 0; i < 3; i++) {
        const int *v0 = v[i], *v1 = v[(i + 1) % 3];
        int64_t e[3], w[3], cw[3], cd[3];
        for (int k = 0; k < 3; k++) { e[k] = v1[k] - v0[k]; w[k] = p[k] - v0[k]; }
        cw[0] = e[1] * w[2] - e[2] * w[1]; cw[1] = e[2] * w[0] - e[0] * w[2]; cw[2] = e[0] * w[1] - e[1] * w[0];
        cd[0] = e[1] * d[2] - e[2] * d[1]; cd[1] = e[2] * d[0] - e[0] * d[2]; cd[2] = e[0] * d[1] - e[1] * d[0];
        int64_t al = cw[0] * n[0] + cw[1] * n[1] + cw[2] * n[2];
        int64_t be = cd[0] * n[0] + cd[1] * n[1] + cd[2] * n[2];
        if (be == 0) { if (al < 0) return 0; continue; }
        rat l = {be > 0 ? -al : al, be > 0 ? be : -be};
        if (be > 0) { if (rat_less(lo, l)) lo = l; }
        else { if (rat_less(l, hi)) hi = l; }
        if (rat_less(hi, lo)) return 0;
    }
    return !rat_less(hi, lo);
}

static void test_segment_triangle_known(void)
{
    double a[3] = {0, 0, 0}, b[3] = {1, 0, 0}, c[3] = {0, 1, 0};
    struct { double p[3], q[3]; int want; const char *what; } cs[] = {
        {{0.2, 0.2, -1}, {0.2, 0.2, 1}, 1, "through interior"},
        {{0.5, 0.0, -1}, {0.5, 0.0, 1}, 1, "through edge"},
        {{0.5, 0.5, -1}, {0.5, 0.5, 1}, 1, "through hypotenuse"},
        {{1.0, 0.0, -1}, {1.0, 0.0, 1}, 1, "through vertex"},
        {{0.6, 0.6, -1}, {0.6, 0.6, 1}, 0, "just outside the hypotenuse"},
        {{-0.5, 0.2, 0}, {1.5, 0.2, 0}, 1, "coplanar crossing"},
        {{0.1, 0.1, 0}, {0.2, 0.1, 0}, 1, "coplanar inside"},
        {{2, 2, 0}, {3, 1, 0}, 0, "coplanar disjoint"},
        {{1, 1, 0}, {2, 0, 0}, 0, "coplanar disjoint, parallel to the hypotenuse"},
        {{0.5, 0.5, 0}, {2, 2, 0}, 1, "coplanar touching the hypotenuse at an endpoint"},
        {{0.2, 0.2, 1}, {0.4, 0.3, 1}, 0, "parallel above"},
        {{0.2, 0.2, 0}, {0.2, 0.2, 1}, 1, "endpoint touching the interior"},
        {{0.2, 0.2, 1e-300}, {0.2, 0.2, 1}, 0, "endpoint just above"},
        {{0, 0, 0}, {-1, -1, -1}, 1, "endpoint touching a vertex"},
        {{0.3, 0.3, 0.0}, {0.3, 0.3, 0.0}, 1, "degenerate segment inside"},
        {{0.3, 0.3, 0.1}, {0.3, 0.3, 0.1}, 0, "degenerate segment above"},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        int got = cb_segment_triangle_intersect(cs[i].p, cs[i].q, a, b, c);
        int got_rev = cb_segment_triangle_intersect(cs[i].q, cs[i].p, c, b, a);
        if (got != cs[i].want || got_rev != cs[i].want)
            fprintf(stderr, "  case '%s': got %d/%d want %d\n", cs[i].what, got, got_rev, cs[i].want);
        CU_ASSERT_EQUAL(got, cs[i].want);
        CU_ASSERT_EQUAL(got_rev, cs[i].want);
    }
    /* degenerate triangles: treated as their edges */
    double d0[3] = {0, 0, 0}, d1[3] = {1, 1, 1}, d2[3] = {2, 2, 2};
    double p[3] = {1, 0, 1}, q[3] = {1, 2, 1}, q2[3] = {1, 2, 1.5};
    CU_ASSERT_EQUAL(cb_segment_triangle_intersect(p, q, d0, d1, d2), 1);
    CU_ASSERT_EQUAL(cb_segment_triangle_intersect(p, q2, d0, d1, d2), 0);
    CU_ASSERT_EQUAL(cb_segment_triangle_intersect(p, q, d1, d1, d1), 1);  /* a point triangle */
    CU_ASSERT_EQUAL(cb_segment_triangle_intersect(p, q2, d1, d1, d1), 0);
    double e0[3] = {1, 1, 1}, e1[3] = {3, 3, 3}; /* collinear overlap */
    CU_ASSERT_EQUAL(cb_segment_triangle_intersect(e0, e1, d0, d1, d2), 1);
    double f0[3] = {2.5, 2.5, 2.5};
    CU_ASSERT_EQUAL(cb_segment_triangle_intersect(f0, e1, d0, d1, d2), 0);
    /* NaN: conservative 1, no crash */
    double bad[3] = {NAN, 0, 0};
    CU_ASSERT_EQUAL(cb_segment_triangle_intersect(bad, q, a, b, c), 1);
}

static void test_segment_triangle_random(void)
{
    int n = 0, hits = 0, coplanar = 0, wrong = 0;
    for (int it = 0; it < 300000; it++) {
        int P[5][3];
        int range = it % 2 ? 2 : 5;
        for (int i = 0; i < 5; i++)
            for (int k = 0; k < 3; k++) P[i][k] = rng_int(-range, range);
        if (it % 5 == 0) /* make the segment coplanar with the triangle */
            for (int k = 0; k < 3; k++) {
                int s1 = rng_int(-1, 2), t1 = rng_int(-1, 2), s2 = rng_int(-1, 2), t2 = rng_int(-1, 2);
                P[0][k] = P[2][k] + s1 * (P[3][k] - P[2][k]) + t1 * (P[4][k] - P[2][k]);
                P[1][k] = P[2][k] + s2 * (P[3][k] - P[2][k]) + t2 * (P[4][k] - P[2][k]);
            }
        int64_t e0[3], e1[3];
        for (int k = 0; k < 3; k++) { e0[k] = P[3][k] - P[2][k]; e1[k] = P[4][k] - P[2][k]; }
        if (e0[1] * e1[2] - e0[2] * e1[1] == 0 && e0[2] * e1[0] - e0[0] * e1[2] == 0 &&
            e0[0] * e1[1] - e0[1] * e1[0] == 0)
            continue; /* degenerate triangle: covered by the known cases */
        double D[5][3];
        for (int i = 0; i < 5; i++)
            for (int k = 0; k < 3; k++) D[i][k] = P[i][k];
        int want = ref_seg_tri(P[0], P[1], P[2], P[3], P[4]);
        int got = cb_segment_triangle_intersect(D[0], D[1], D[2], D[3], D[4]);
        n++;
        hits += want;
        coplanar += cb_orient3d(D[2], D[3], D[4], D[0]) == 0 && cb_orient3d(D[2], D[3], D[4], D[1]) == 0;
        if (got != want) {
            if (wrong < 5)
                fprintf(stderr, "  seg (%d %d %d)-(%d %d %d) tri (%d %d %d)(%d %d %d)(%d %d %d): got %d want %d\n",
                        P[0][0], P[0][1], P[0][2], P[1][0], P[1][1], P[1][2], P[2][0], P[2][1], P[2][2],
                        P[3][0], P[3][1], P[3][2], P[4][0], P[4][1], P[4][2], got, want);
            wrong++;
        }
    }
    printf("\n    segment-triangle random: %d cases, %d intersecting, %d coplanar, %d wrong\n", n, hits, coplanar, wrong);
    CU_ASSERT(hits > n / 20 && coplanar > n / 100);
    CU_ASSERT_EQUAL(wrong, 0);
}

/* Scaled, non-integer coordinates: scaling by a power of two and translating by a
 * representable offset must not change the exact answer. */
static void test_segment_triangle_scaled(void)
{
    int wrong = 0;
    for (int it = 0; it < 50000; it++) {
        int P[5][3];
        for (int i = 0; i < 5; i++)
            for (int k = 0; k < 3; k++) P[i][k] = rng_int(-3, 3);
        int64_t e0[3], e1[3];
        for (int k = 0; k < 3; k++) { e0[k] = P[3][k] - P[2][k]; e1[k] = P[4][k] - P[2][k]; }
        if (e0[1] * e1[2] - e0[2] * e1[1] == 0 && e0[2] * e1[0] - e0[0] * e1[2] == 0 &&
            e0[0] * e1[1] - e0[1] * e1[0] == 0)
            continue;
        double scale = ldexp(1.0, rng_int(-40, 20));
        double D[5][3];
        for (int i = 0; i < 5; i++)
            for (int k = 0; k < 3; k++) D[i][k] = P[i][k] * scale + 0.75 * scale * 64;
        wrong += cb_segment_triangle_intersect(D[0], D[1], D[2], D[3], D[4]) != ref_seg_tri(P[0], P[1], P[2], P[3], P[4]);
    }
    CU_ASSERT_EQUAL(wrong, 0);
}

CB_TEST_MAIN("predicates",
    CB_TEST(test_orient_conventions),
    CB_TEST(test_orient3d_small_integers),
    CB_TEST(test_orient3d_near_degenerate),
    CB_TEST(test_orient2d_near_degenerate),
    CB_TEST(test_segment_triangle_known),
    CB_TEST(test_segment_triangle_random),
    CB_TEST(test_segment_triangle_scaled),
    CB_TEST(test_orient3d_sign_inline))
