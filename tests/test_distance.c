/* tests/test_distance.c — point-triangle and segment-segment distances against a
 * brute-force oracle (dense sampling of the parameter domain plus local pattern-search
 * refinement) on random, parallel and degenerate configurations. */
#include "cb_test.h"

#include <stdint.h>

#include "contact/distance.h"
#include "core/vec3.h"

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static double rng_uniform(void) { return cb_test_uniform(&rng_state); }
static void rng_point(double x[3], double lo, double hi)
{
    for (int k = 0; k < 3; k++) x[k] = lo + (hi - lo) * rng_uniform();
}

/* ---- oracles ------------------------------------------------------------------- */

static double tri_point_d2(const double p[3], const double a[3], const double b[3], const double c[3],
                           double u, double v)
{
    double x[3];
    for (int k = 0; k < 3; k++) x[k] = (1.0 - u - v) * a[k] + u * b[k] + v * c[k];
    double d[3];
    cb_v3_sub(d, p, x);
    return cb_v3_dot(d, d);
}

/* min over the triangle by a 200x200 barycentric grid, then pattern search. */
static double oracle_point_triangle(const double p[3], const double a[3], const double b[3], const double c[3])
{
    const int N = 200;
    double best = INFINITY, bu = 0, bv = 0;
    for (int i = 0; i <= N; i++)
        for (int j = 0; i + j <= N; j++) {
            double u = (double)i / N, v = (double)j / N, d = tri_point_d2(p, a, b, c, u, v);
            if (d < best) { best = d; bu = u; bv = v; }
        }
    static const double dirs[8][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}, {1, -1}, {-1, 1}, {1, 1}, {-1, -1}};
    for (double h = 1.0 / N; h > 1e-15; h *= 0.5)
        for (int improved = 1; improved;) {
            improved = 0;
            for (int k = 0; k < 8; k++) {
                double u = bu + h * dirs[k][0], v = bv + h * dirs[k][1];
                if (u < 0 || v < 0 || u + v > 1) continue;
                double d = tri_point_d2(p, a, b, c, u, v);
                if (d < best) { best = d; bu = u; bv = v; improved = 1; }
            }
        }
    return best;
}

static double seg_d2(const double p0[3], const double p1[3], const double q0[3], const double q1[3],
                     double s, double t)
{
    double d[3];
    for (int k = 0; k < 3; k++) d[k] = (p0[k] + s * (p1[k] - p0[k])) - (q0[k] + t * (q1[k] - q0[k]));
    return cb_v3_dot(d, d);
}

static double oracle_edge_edge(const double p0[3], const double p1[3], const double q0[3], const double q1[3])
{
    const int N = 200;
    double best = INFINITY, bs = 0, bt = 0;
    for (int i = 0; i <= N; i++)
        for (int j = 0; j <= N; j++) {
            double s = (double)i / N, t = (double)j / N, d = seg_d2(p0, p1, q0, q1, s, t);
            if (d < best) { best = d; bs = s; bt = t; }
        }
    static const double dirs[8][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}, {1, -1}, {-1, 1}, {1, 1}, {-1, -1}};
    for (double h = 1.0 / N; h > 1e-15; h *= 0.5)
        for (int improved = 1; improved;) {
            improved = 0;
            for (int k = 0; k < 8; k++) {
                double s = bs + h * dirs[k][0], t = bt + h * dirs[k][1];
                if (s < 0 || t < 0 || s > 1 || t > 1) continue;
                double d = seg_d2(p0, p1, q0, q1, s, t);
                if (d < best) { best = d; bs = s; bt = t; improved = 1; }
            }
        }
    return best;
}

/* ---- checks -------------------------------------------------------------------- */

static int check_pt(const double p[3], const double a[3], const double b[3], const double c[3], int verbose)
{
    double bary[3], cl[3];
    double d2 = cb_point_triangle_distance2(p, a, b, c, bary, cl);
    double ref = oracle_point_triangle(p, a, b, c);
    int bad = 0;
    /* never above the oracle (an upper bound on the true minimum) and close to it */
    double scale = 1.0 + cb_v3_norm2(p) + cb_v3_norm2(a) + cb_v3_norm2(b) + cb_v3_norm2(c);
    bad |= !(d2 <= ref + 1e-13 * scale);
    bad |= !(ref - d2 <= 1e-9 * scale);
    /* bary valid, closest = bary combination, returned value consistent */
    bad |= !(bary[0] >= 0 && bary[1] >= 0 && bary[2] >= 0 && fabs(bary[0] + bary[1] + bary[2] - 1) < 1e-12);
    double x[3], dd[3];
    for (int k = 0; k < 3; k++) x[k] = bary[0] * a[k] + bary[1] * b[k] + bary[2] * c[k];
    bad |= !(cb_v3_dist(x, cl) <= 1e-12 * sqrt(scale));
    cb_v3_sub(dd, p, cl);
    bad |= !(fabs(cb_v3_dot(dd, dd) - d2) <= 1e-14 * scale);
    if (bad && verbose)
        fprintf(stderr, "  point-triangle: got %.17g oracle %.17g bary %g %g %g\n", d2, ref, bary[0], bary[1], bary[2]);
    return bad;
}

static int check_ee(const double p0[3], const double p1[3], const double q0[3], const double q1[3], int verbose)
{
    double s, t, cp[3], cq[3];
    double d2 = cb_edge_edge_distance2(p0, p1, q0, q1, &s, &t, cp, cq);
    double ref = oracle_edge_edge(p0, p1, q0, q1);
    double scale = 1.0 + cb_v3_norm2(p0) + cb_v3_norm2(p1) + cb_v3_norm2(q0) + cb_v3_norm2(q1);
    int bad = 0;
    bad |= !(d2 <= ref + 1e-13 * scale);
    bad |= !(ref - d2 <= 1e-9 * scale);
    bad |= !(s >= 0 && s <= 1 && t >= 0 && t <= 1);
    double dd[3];
    cb_v3_sub(dd, cp, cq);
    bad |= !(cb_v3_dot(dd, dd) == d2);
    double x[3], y[3];
    for (int k = 0; k < 3; k++) { x[k] = p0[k] + s * (p1[k] - p0[k]); y[k] = q0[k] + t * (q1[k] - q0[k]); }
    bad |= !(cb_v3_dist(x, cp) <= 1e-12 * sqrt(scale) && cb_v3_dist(y, cq) <= 1e-12 * sqrt(scale));
    if (bad && verbose)
        fprintf(stderr, "  edge-edge: got %.17g oracle %.17g s %g t %g\n", d2, ref, s, t);
    return bad;
}

static void test_point_triangle_random(void)
{
    int bad = 0;
    for (int it = 0; it < 2000; it++) {
        double p[3], a[3], b[3], c[3];
        rng_point(a, -1, 1); rng_point(b, -1, 1); rng_point(c, -1, 1); rng_point(p, -2, 2);
        if (it % 4 == 0) { /* point just above the interior */
            double n[3], e0[3], e1[3];
            cb_v3_sub(e0, b, a); cb_v3_sub(e1, c, a); cb_v3_cross(n, e0, e1); cb_v3_normalize(n);
            for (int k = 0; k < 3; k++) p[k] = (a[k] + b[k] + c[k]) / 3 + 1e-3 * n[k];
        }
        bad += check_pt(p, a, b, c, bad < 5);
    }
    CU_ASSERT_EQUAL(bad, 0);
}

static void test_point_triangle_analytic(void)
{
    double a[3] = {0, 0, 0}, b[3] = {2, 0, 0}, c[3] = {0, 2, 0}, bary[3], cl[3];
    double p1[3] = {0.5, 0.5, 3};   /* above the interior: distance 3, bary (0.5, .25, .25) */
    CB_ASSERT_REL(cb_point_triangle_distance2(p1, a, b, c, bary, cl), 9.0, 1e-15);
    CB_ASSERT_REL(bary[1], 0.25, 1e-15);
    CB_ASSERT_REL(bary[2], 0.25, 1e-15);
    double p2[3] = {-1, -1, 0};     /* nearest vertex a: distance^2 2 */
    CB_ASSERT_REL(cb_point_triangle_distance2(p2, a, b, c, bary, NULL), 2.0, 1e-15);
    CB_ASSERT_REL(bary[0], 1.0, 1e-15);
    double p3[3] = {2, 2, 1};       /* nearest the hypotenuse midpoint (1,1,0): 1+1+1 */
    CB_ASSERT_REL(cb_point_triangle_distance2(p3, a, b, c, NULL, cl), 3.0, 1e-15);
    CB_ASSERT_REL(cl[0], 1.0, 1e-15);
    CB_ASSERT_REL(cl[1], 1.0, 1e-15);
}

static void test_point_triangle_degenerate(void)
{
    int bad = 0;
    for (int it = 0; it < 600; it++) {
        double p[3], a[3], b[3], c[3], d[3];
        rng_point(a, -1, 1); rng_point(b, -1, 1); rng_point(p, -2, 2);
        switch (it % 4) {
        case 0: cb_v3_sub(d, b, a); for (int k = 0; k < 3; k++) c[k] = a[k] + 2.5 * d[k]; break; /* collinear */
        case 1: cb_v3_copy(c, b); break;                      /* two coincident vertices */
        case 2: cb_v3_copy(b, a); cb_v3_copy(c, a); break;    /* all three coincide */
        default: /* a sliver: c 1e-9 off the line ab */
            cb_v3_sub(d, b, a);
            for (int k = 0; k < 3; k++) c[k] = a[k] + 0.4 * d[k] + (k == 2 ? 1e-9 : 0);
        }
        bad += check_pt(p, a, b, c, bad < 5);
    }
    CU_ASSERT_EQUAL(bad, 0);
    double z[3] = {1, 1, 1}, p[3] = {1, 1, 4};
    CB_ASSERT_REL(cb_point_triangle_distance2(p, z, z, z, NULL, NULL), 9.0, 1e-15);
}

static void test_edge_edge_random(void)
{
    int bad = 0;
    for (int it = 0; it < 2000; it++) {
        double p0[3], p1[3], q0[3], q1[3];
        rng_point(p0, -1, 1); rng_point(p1, -1, 1); rng_point(q0, -1, 1); rng_point(q1, -1, 1);
        bad += check_ee(p0, p1, q0, q1, bad < 5);
    }
    CU_ASSERT_EQUAL(bad, 0);
}

static void test_edge_edge_parallel_degenerate(void)
{
    int bad = 0;
    for (int it = 0; it < 1000; it++) {
        double p0[3], p1[3], q0[3], q1[3], d[3], o[3];
        rng_point(p0, -1, 1); rng_point(p1, -1, 1); rng_point(o, -0.5, 0.5);
        cb_v3_sub(d, p1, p0);
        double s0 = 3 * rng_uniform() - 1, s1 = 3 * rng_uniform() - 1;
        for (int k = 0; k < 3; k++) { q0[k] = p0[k] + s0 * d[k] + o[k]; q1[k] = p0[k] + s1 * d[k] + o[k]; }
        switch (it % 5) {
        case 0: break;                                         /* exactly parallel */
        case 1: q1[0] += 1e-10; break;                          /* nearly parallel */
        case 2: cb_v3_sub(o, o, o); for (int k = 0; k < 3; k++) { q0[k] = p0[k] + s0 * d[k]; q1[k] = p0[k] + s1 * d[k]; } break; /* collinear */
        case 3: cb_v3_copy(q1, q0); break;                      /* zero-length edge */
        default: cb_v3_copy(q1, q0); cb_v3_copy(p1, p0); break; /* two points */
        }
        bad += check_ee(p0, p1, q0, q1, bad < 5);
        bad += check_ee(q1, q0, p1, p0, bad < 5);
    }
    CU_ASSERT_EQUAL(bad, 0);
    /* analytic: parallel unit segments 2 apart, overlapping in x */
    double a0[3] = {0, 0, 0}, a1[3] = {1, 0, 0}, b0[3] = {0.5, 2, 0}, b1[3] = {1.5, 2, 0};
    CB_ASSERT_REL(cb_edge_edge_distance2(a0, a1, b0, b1, NULL, NULL, NULL, NULL), 4.0, 1e-15);
    /* skew: x-axis segment and a z-offset y-direction segment crossing above it */
    double c0[3] = {0.3, -1, 0.7}, c1[3] = {0.3, 1, 0.7};
    double s, t;
    CB_ASSERT_REL(cb_edge_edge_distance2(a0, a1, c0, c1, &s, &t, NULL, NULL), 0.49, 1e-15);
    CB_ASSERT_REL(s, 0.3, 1e-15);
    CB_ASSERT_REL(t, 0.5, 1e-15);
}

static void test_distance_nan(void)
{
    double a[3] = {0, 0, 0}, b[3] = {1, 0, 0}, c[3] = {0, 1, 0}, bad[3] = {0, NAN, 0}, bary[3], cl[3], s;
    CU_ASSERT(isnan(cb_point_triangle_distance2(bad, a, b, c, bary, cl)));
    CU_ASSERT(isnan(bary[0]) && isnan(cl[0]));
    CU_ASSERT(isnan(cb_edge_edge_distance2(a, b, c, bad, &s, NULL, NULL, NULL)));
    CU_ASSERT(isnan(s));
}

/* cb_hull_distance_lb never exceeds the distance (point-triangle, triangle-point and
 * segment-segment, by the functions above, which the oracles check) on random pairs at
 * every scale of separation, touching and crossing ones, degenerate ones and far from
 * the origin; and it is informative: a point 1 above a unit triangle's plane, 3 to its
 * side, gets at least half its distance, as do two parallel segments 1 apart. Half the
 * random pairs with the early return of the axis gap (need 0.1), half without. */
static void test_hull_lower_bound(void)
{
    int bad = 0, pos = 0;
    for (int it = 0; it < 6000; it++) {
        double x[4][3], off[3], sep = it % 3 == 0 ? 0.0 : pow(10.0, -6.0 + 7.0 * rng_uniform());
        rng_point(off, -1, 1);
        double shift = it % 5 == 0 ? 1e3 : 0.0;
        for (int i = 0; i < 4; i++) {
            rng_point(x[i], -1, 1);
            for (int k = 0; k < 3; k++) x[i][k] += shift;
        }
        int n1 = 1 + it % 3;
        for (int i = n1; i < 4; i++) /* the second side moved away by sep along off */
            for (int k = 0; k < 3; k++) x[i][k] += sep * off[k];
        if (it % 7 == 0) cb_v3_copy(x[3], x[2]); /* degenerate: two points coincide */
        const double *pts[4] = {x[0], x[1], x[2], x[3]};
        double d2 = n1 == 1 ? cb_point_triangle_distance2(x[0], x[1], x[2], x[3], NULL, NULL)
                  : n1 == 3 ? cb_point_triangle_distance2(x[3], x[0], x[1], x[2], NULL, NULL)
                            : cb_edge_edge_distance2(x[0], x[1], x[2], x[3], NULL, NULL, NULL, NULL);
        double lb = cb_hull_distance_lb(pts, n1, it % 2 ? INFINITY : 0.1);
        pos += lb > 0;
        if (!(lb <= sqrt(d2))) {
            if (bad < 5) fprintf(stderr, "  hull bound %.17g above the distance %.17g (n1 %d)\n", lb, sqrt(d2), n1);
            bad++;
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(pos > 1000); /* far pairs get a positive bound */
    double p[3] = {4, 0.2, 1}, a[3] = {0, 0, 0}, b[3] = {1, 0, 0}, c[3] = {0, 1, 0};
    const double *vt[4] = {p, a, b, c};
    double d = sqrt(cb_point_triangle_distance2(p, a, b, c, NULL, NULL)), lb = cb_hull_distance_lb(vt, 1, INFINITY);
    CU_ASSERT(lb >= 0.5 * d && lb <= d);
    double q0[3] = {0, 0, 1}, q1[3] = {1, 0, 1};
    const double *ee[4] = {a, b, q0, q1};
    CU_ASSERT(cb_hull_distance_lb(ee, 2, INFINITY) >= 0.5 && cb_hull_distance_lb(ee, 2, INFINITY) <= 1.0);
    double nan3[3] = {NAN, 0, 0};
    const double *bad4[4] = {nan3, a, b, c};
    CU_ASSERT_EQUAL(cb_hull_distance_lb(bad4, 1, INFINITY), 0.0);
    CU_ASSERT_EQUAL(cb_hull_distance_lb(vt, 0, INFINITY), 0.0);
}

CB_TEST_MAIN("distance",
    CB_TEST(test_hull_lower_bound),
    CB_TEST(test_point_triangle_analytic),
    CB_TEST(test_point_triangle_random),
    CB_TEST(test_point_triangle_degenerate),
    CB_TEST(test_edge_edge_random),
    CB_TEST(test_edge_edge_parallel_degenerate),
    CB_TEST(test_distance_nan))
