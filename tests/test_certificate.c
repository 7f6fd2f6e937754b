/* tests/test_certificate.c — kinetic separating-slab certificates: never later than the
 * first time the distance drops below eta (dense sampling plus golden-section
 * refinement), exact for a head-on approach, and the full horizon for pairs that do not
 * approach. */
#include "cb_test.h"

#include <stdint.h>

#include "contact/certificate.h"
#include "contact/distance.h"
#include "core/vec3.h"

static uint64_t rng_state = 0x94D049BB133111EBull;
static double rng_uniform(void) { return cb_test_uniform(&rng_state); }

typedef struct { int ee; double x[4][3], v[4][3]; } mpair;

static double mdist(const mpair *P, double t)
{
    double y[4][3];
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 3; k++) y[i][k] = P->x[i][k] + t * P->v[i][k];
    if (P->ee) return sqrt(cb_edge_edge_distance2(y[0], y[1], y[2], y[3], NULL, NULL, NULL, NULL));
    return sqrt(cb_point_triangle_distance2(y[0], y[1], y[2], y[3], NULL, NULL));
}

static double cert(const mpair *P, double eta, double horizon)
{
    if (P->ee)
        return cb_certificate_edge_edge(P->x[0], P->v[0], P->x[1], P->v[1], P->x[2], P->v[2], P->x[3], P->v[3], eta, horizon);
    return cb_certificate_vertex_triangle(P->x[0], P->v[0], P->x[1], P->v[1], P->x[2], P->v[2], P->x[3], P->v[3], eta, horizon);
}

/* First time in [0, horizon] with distance < eta: 400 samples, golden-section refinement
 * around every sampled local minimum, then bisection back to the first crossing. */
static double first_below(const mpair *P, double eta, double horizon)
{
    const int N = 400;
    double d[401], first = INFINITY;
    for (int i = 0; i <= N; i++) d[i] = mdist(P, horizon * i / N);
    for (int i = 0; i <= N; i++) {
        double t = horizon * i / N;
        if (t >= first) break;
        if (d[i] < eta) { first = t; break; }
        if (i > 0 && i < N && d[i] <= d[i - 1] && d[i] <= d[i + 1]) {
            double a = horizon * (i - 1) / N, b = horizon * (i + 1) / N, g = 0.5 * (sqrt(5.0) - 1);
            double c = b - g * (b - a), e = a + g * (b - a), fc = mdist(P, c), fe = mdist(P, e);
            for (int it = 0; it < 60; it++) {
                if (fc < fe) { b = e; e = c; fe = fc; c = b - g * (b - a); fc = mdist(P, c); }
                else { a = c; c = e; fc = fe; e = a + g * (b - a); fe = mdist(P, e); }
            }
            double tm = fc < fe ? c : e;
            if (fmin(fc, fe) < eta) { /* bisect back from tm to the first crossing after a */
                double lo = horizon * (i - 1) / N, hi = tm;
                for (int it = 0; it < 60; it++) {
                    double mid = 0.5 * (lo + hi);
                    if (mdist(P, mid) < eta) hi = mid; else lo = mid;
                }
                first = fmin(first, hi);
            }
        }
    }
    return first;
}

static void random_check(int ee)
{
    const int N = 20000;
    int late = 0, full = 0, zero = 0, contacts = 0;
    double sum = 0;
    for (int it = 0; it < N; it++) {
        mpair P;
        P.ee = ee;
        for (int i = 0; i < 4; i++)
            for (int k = 0; k < 3; k++) {
                P.x[i][k] = rng_uniform() + ((i == 0 || (ee && i == 1)) && k == 2 ? 0.3 : 0.0);
                P.v[i][k] = 2 * rng_uniform() - 1;
            }
        double eta = (it % 4 == 0) ? 0.0 : 0.05 * rng_uniform(), horizon = 0.5;
        double c = cert(&P, eta, horizon), f = first_below(&P, eta, horizon);
        CU_ASSERT(c >= 0.0 && c <= horizon);
        if (f <= horizon) contacts++;
        if (c > f) {
            if (late++ < 5) fprintf(stderr, "  certificate %.17g later than first contact %.17g (eta %g)\n", c, f, eta);
        }
        full += c == horizon;
        zero += c == 0.0;
        sum += c;
    }
    printf("\n    %s: %d pairs, %d reach eta within the horizon, %d certificates late, %d full horizon, "
           "%d zero, mean %.4f of 0.5\n", ee ? "edge-edge" : "vertex-triangle", N, contacts, late, full, zero, sum / N);
    CU_ASSERT_EQUAL(late, 0);
    CU_ASSERT(contacts > N / 50);
    CU_ASSERT(full > N / 10); /* the certificates are not trivially 0 */
}

static void test_certificate_random_vertex_triangle(void) { random_check(0); }
static void test_certificate_random_edge_edge(void) { random_check(1); }

static void test_certificate_analytic(void)
{
    /* head-on: vertex D above the triangle's interior, approaching at speed v; the slab
     * certificate is exact here: (D - eta) / v */
    double a[3] = {0, 0, 0}, b[3] = {1, 0, 0}, c[3] = {0, 1, 0}, zero[3] = {0, 0, 0};
    double p[3] = {0.2, 0.2, 0.5}, vp[3] = {0, 0, -2};
    CB_ASSERT_REL(cb_certificate_vertex_triangle(p, vp, a, zero, b, zero, c, zero, 0.1, 10.0), 0.2, 1e-8);
    /* moving apart or together in parallel: the full horizon */
    double up[3] = {0, 0, 1}, side[3] = {3, -1, 0.5};
    CU_ASSERT_EQUAL(cb_certificate_vertex_triangle(p, up, a, zero, b, zero, c, zero, 0.1, 10.0), 10.0);
    CU_ASSERT_EQUAL(cb_certificate_vertex_triangle(p, side, a, side, b, side, c, side, 0.1, 10.0), 10.0);
    /* already closer than eta, touching, bad input */
    CU_ASSERT_EQUAL(cb_certificate_vertex_triangle(p, up, a, zero, b, zero, c, zero, 0.6, 10.0), 0.0);
    double on[3] = {0.2, 0.2, 0};
    CU_ASSERT_EQUAL(cb_certificate_vertex_triangle(on, up, a, zero, b, zero, c, zero, 0.0, 10.0), 0.0);
    double nanv[3] = {NAN, 0, 0};
    CU_ASSERT_EQUAL(cb_certificate_vertex_triangle(p, nanv, a, zero, b, zero, c, zero, 0.0, 10.0), 0.0);
    CU_ASSERT_EQUAL(cb_certificate_vertex_triangle(p, up, a, zero, b, zero, c, zero, NAN, 10.0), 0.0);
    /* edges: crossing at distance 1, closing at relative speed 1 (both move): (1 - eta) / 1 */
    double e0[3] = {0, 0, 0}, e1[3] = {1, 0, 0}, f0[3] = {0.5, -1, 1}, f1[3] = {0.5, 1, 1};
    double vu[3] = {0, 0, 0.5}, vd[3] = {0, 0, -0.5};
    CB_ASSERT_REL(cb_certificate_edge_edge(e0, vu, e1, vu, f0, vd, f1, vd, 0.2, 5.0), 0.8, 1e-9);
    CU_ASSERT_EQUAL(cb_certificate_edge_edge(e0, vd, e1, vd, f0, vu, f1, vu, 0.2, 5.0), 5.0);
    CU_ASSERT_EQUAL(cb_certificate_edge_edge(e0, vd, e1, vd, f0, vu, f1, vu, 0.2, -1.0), 0.0);
}

CB_TEST_MAIN("certificate",
    CB_TEST(test_certificate_analytic),
    CB_TEST(test_certificate_random_vertex_triangle),
    CB_TEST(test_certificate_random_edge_edge))
