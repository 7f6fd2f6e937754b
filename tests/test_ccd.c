/* tests/test_ccd.c — continuous collision detection: a corpus of configurations whose
 * time of impact is known by construction (each under random rigid motions and at unit,
 * tiny and huge scales), and 100k+ random pairs per primitive kind checked against a
 * dense-sampling reference (zero false negatives asserted, false-positive rate
 * reported). */
#include "cb_test.h"

#include <stdint.h>

#include "contact/ccd.h"
#include "contact/distance.h"
#include "core/vec3.h"

static uint64_t rng_state = 0xD1B54A32D192ED03ull;
static double rng_uniform(void) { return cb_test_uniform(&rng_state); }

/* A pair: 4 vertices at t=0 and t=1; ee selects edge-edge (else vertex 0 vs triangle 1,2,3). */
typedef struct { int ee; double x0[4][3], x1[4][3]; } pair;

static int run_ccd(const pair *P, double eta, double *toi)
{
    cb_ccd_opts o = cb_default_ccd_opts();
    o.eta = eta;
    if (P->ee)
        return cb_ccd_edge_edge(P->x0[0], P->x1[0], P->x0[1], P->x1[1], P->x0[2], P->x1[2], P->x0[3], P->x1[3], &o, toi);
    return cb_ccd_vertex_triangle(P->x0[0], P->x1[0], P->x0[1], P->x1[1], P->x0[2], P->x1[2], P->x0[3], P->x1[3], &o, toi);
}

static double dist_at(const pair *P, double t)
{
    double x[4][3];
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 3; k++) x[i][k] = P->x0[i][k] + t * (P->x1[i][k] - P->x0[i][k]);
    if (P->ee) return sqrt(cb_edge_edge_distance2(x[0], x[1], x[2], x[3], NULL, NULL, NULL, NULL));
    return sqrt(cb_point_triangle_distance2(x[0], x[1], x[2], x[3], NULL, NULL));
}

static double pair_scale(const pair *P)
{
    double S = 0;
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 3; k++) S = fmax(S, fmax(fabs(P->x0[i][k]), fabs(P->x1[i][k])));
    return S;
}

/* x -> s R x + T at both times, plus a common displacement V at t = 1 (keeps the toi). */
static void transform(pair *P, double s)
{
    double q[4], n = 0;
    for (int k = 0; k < 4; k++) { q[k] = rng_uniform() - 0.5; n += q[k] * q[k]; }
    n = sqrt(n);
    for (int k = 0; k < 4; k++) q[k] /= n;
    double w = q[0], x = q[1], y = q[2], z = q[3];
    double R[3][3] = {{1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)},
                      {2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)},
                      {2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)}};
    double T[3], V[3];
    for (int k = 0; k < 3; k++) { T[k] = s * (rng_uniform() - 0.5); V[k] = s * (rng_uniform() - 0.5); }
    for (int i = 0; i < 4; i++) {
        double a[3], b[3];
        for (int r = 0; r < 3; r++) {
            a[r] = s * (R[r][0] * P->x0[i][0] + R[r][1] * P->x0[i][1] + R[r][2] * P->x0[i][2]) + T[r];
            b[r] = s * (R[r][0] * P->x1[i][0] + R[r][1] * P->x1[i][1] + R[r][2] * P->x1[i][2]) + T[r] + V[r];
        }
        cb_v3_copy(P->x0[i], a);
        cb_v3_copy(P->x1[i], b);
    }
}

static pair make(int ee, const double x0[4][3], const double x1[4][3])
{
    pair P;
    P.ee = ee;
    memcpy(P.x0, x0, sizeof P.x0);
    memcpy(P.x1, x1, sizeof P.x1);
    return P;
}

typedef struct {
    const char *name;
    int ee;
    double x0[4][3], x1[4][3];
    double eta;   /* in units of the scene scale */
    int hit;
    double toi;   /* known first time (hit only) */
    double slack; /* extra earliness allowed: grazing contacts are only known to within the
                     time the distance stays within the 1e-10 relative margin of eta */
} ccd_case;

static const ccd_case corpus[] = {
    {"vt interior crossing", 0, {{0.2, 0.3, 0.3}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}},
     {{0.2, 0.3, -0.7}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, 0, 1, 0.3, 0},
    {"vt crossing, triangle moving up", 0, {{0.25, 0.25, 0.5}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}},
     {{0.25, 0.25, 0.5}, {0, 0, 1}, {1, 0, 1}, {0, 1, 1}}, 0, 1, 0.5, 0},
    {"vt crossing with eta 0.01", 0, {{0.2, 0.3, 0.3}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}},
     {{0.2, 0.3, -0.7}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, 0.01, 1, 0.29, 0},
    {"vt through an edge", 0, {{0.5, 0, 1}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}},
     {{0.5, 0, -1}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, 0, 1, 0.5, 0},
    {"vt through a vertex", 0, {{1, 0, 1}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}},
     {{1, 0, -1}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, 0, 1, 0.5, 0},
    {"vt near miss beside an edge", 0, {{0.5, -1e-3, 1}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}},
     {{0.5, -1e-3, -1}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, 0, 0, 0, 0},
    {"vt grazing at exactly eta", 0, {{0.5, -1e-3, -0.4}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}},
     {{0.5, -1e-3, 0.4}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, 1e-3, 1, 0.5, 2e-6},
    {"vt passing 1% above eta", 0, {{0.5, -1.01e-3, -0.4}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}},
     {{0.5, -1.01e-3, 0.4}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, 1e-3, 0, 0, 0},
    {"vt start in contact", 0, {{0.2, 0.2, 0}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}},
     {{0.2, 0.2, 1}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, 0, 1, 0, 0},
    {"vt end in contact", 0, {{0.2, 0.2, 0.5}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}},
     {{0.2, 0.2, 0}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, 0, 1, 1, 0},
    {"vt coplanar sliding into an edge", 0, {{0.3, -0.5, 0}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}},
     {{0.3, 0.5, 0}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, 0, 1, 0.5, 0},
    {"vt coplanar sliding past", 0, {{-0.1, -0.5, 0}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}},
     {{-0.1, 1.5, 0}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, 0, 0, 0, 0},
    {"vt parallel sliding above", 0, {{-0.5, 0.2, 1e-4}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}},
     {{1.5, 0.2, 1e-4}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, 0, 0, 0, 0},
    {"ee crossing", 1, {{0, 0, 0}, {1, 0, 0}, {0.4, -1, 0.5}, {0.4, 1, 0.5}},
     {{0, 0, 0}, {1, 0, 0}, {0.4, -1, -0.5}, {0.4, 1, -0.5}}, 0, 1, 0.5, 0},
    {"ee crossing with eta 0.1", 1, {{0, 0, 0}, {1, 0, 0}, {0.4, -1, 0.5}, {0.4, 1, 0.5}},
     {{0, 0, 0}, {1, 0, 0}, {0.4, -1, -0.5}, {0.4, 1, -0.5}}, 0.1, 1, 0.4, 0},
    {"ee near miss past an endpoint", 1, {{0, 0, 0}, {1, 0, 0}, {1.001, -1, 0.5}, {1.001, 1, 0.5}},
     {{0, 0, 0}, {1, 0, 0}, {1.001, -1, -0.5}, {1.001, 1, -0.5}}, 0, 0, 0, 0},
    {"ee parallel", 1, {{0, 0, 0}, {1, 0, 0}, {0.2, 0, 0.5}, {0.8, 0, 0.5}},
     {{0, 0, 0}, {1, 0, 0}, {0.2, 0, -0.5}, {0.8, 0, -0.5}}, 0, 1, 0.5, 0},
    {"ee near-parallel", 1, {{0, 0, 0}, {1, 0, 0}, {0.2, 0, 0.5}, {0.8, 0, 0.5 + 1e-9}},
     {{0, 0, 0}, {1, 0, 0}, {0.2, 0, -0.5}, {0.8, 0, -0.5 + 1e-9}}, 0, 1, 0.5, 0},
    {"ee parallel, offset sideways (miss)", 1, {{0, 0, 0}, {1, 0, 0}, {0.2, 1e-3, 0.5}, {0.8, 1e-3, 0.5}},
     {{0, 0, 0}, {1, 0, 0}, {0.2, 1e-3, -0.5}, {0.8, 1e-3, -0.5}}, 0, 0, 0, 0},
    {"ee coplanar sliding into contact", 1, {{0, 0, 0}, {1, 0, 0}, {0.5, 0.5, 0}, {0.5, 1.5, 0}},
     {{0, 0, 0}, {1, 0, 0}, {0.5, -0.5, 0}, {0.5, 0.5, 0}}, 0, 1, 0.5, 0},
    {"ee coplanar, collinear sliding apart", 1, {{0, 0, 0}, {1, 0, 0}, {1.5, 0, 0}, {2, 0, 0}},
     {{0, 0, 0}, {1, 0, 0}, {2.5, 0, 0}, {3, 0, 0}}, 0, 0, 0, 0},
    {"ee start in contact", 1, {{0, 0, 0}, {1, 0, 0}, {0.5, -1, 0}, {0.5, 1, 0}},
     {{0, 0, 0}, {1, 0, 0}, {0.5, -1, 1}, {0.5, 1, 1}}, 0, 1, 0, 0},
    {"ee end in contact", 1, {{0, 0, 0}, {1, 0, 0}, {0.5, -1, 1}, {0.5, 1, 1}},
     {{0, 0, 0}, {1, 0, 0}, {0.5, -1, 0}, {0.5, 1, 0}}, 0, 1, 1, 0},
};

static void test_ccd_corpus(void)
{
    const double scales[3] = {1.0, 1e-8, 1e4};
    const double tol = cb_default_ccd_opts().tol;
    int failures = 0, n = 0;
    for (size_t c = 0; c < sizeof corpus / sizeof corpus[0]; c++)
        for (int si = 0; si < 3; si++)
            for (int rep = 0; rep < 20; rep++) {
                const ccd_case *C = &corpus[c];
                double s = scales[si];
                pair P = make(C->ee, C->x0, C->x1);
                if (rep > 0) transform(&P, s);
                else for (int i = 0; i < 4; i++) { cb_v3_scale(P.x0[i], P.x0[i], s); cb_v3_scale(P.x1[i], P.x1[i], s); }
                double toi = -1, eta = C->eta * s;
                int hit = run_ccd(&P, eta, &toi);
                int ok = hit == C->hit;
                /* rounding of the transformed inputs moves the true toi by ~1e-15 relative */
                if (ok && hit) ok = toi >= 0 && toi <= 1 && toi <= C->toi + 1e-9 && toi >= C->toi - tol - C->slack - 1e-9;
                if (!ok && failures++ < 10)
                    fprintf(stderr, "  %s (scale %g, rep %d): hit %d toi %.17g, want %d %g\n", C->name, s,
                            rep, hit, toi, C->hit, C->toi);
                n++;
            }
    printf("\n    corpus: %d queries, %d wrong\n", n, failures);
    CU_ASSERT_EQUAL(failures, 0);
}

/* Reference: a time at which the pair is certainly in contact (distance below eta by a
 * margin far above rounding; for eta = 0, a root of the coplanarity cubic where the
 * distance is ~0), from 200 samples, a golden-section minimisation in every bracket with
 * a small sampled distance and, for eta = 0, bisection of every sign change of the
 * signed volume. Also returns the smallest distance seen. */
static double volume_at(const pair *P, double t)
{
    double x[4][3], u[3], v[3], w[3], n[3];
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 3; k++) x[i][k] = P->x0[i][k] + t * (P->x1[i][k] - P->x0[i][k]);
    if (P->ee) { cb_v3_sub(u, x[1], x[0]); cb_v3_sub(v, x[3], x[2]); cb_v3_sub(w, x[2], x[0]); }
    else { cb_v3_sub(u, x[2], x[1]); cb_v3_sub(v, x[3], x[1]); cb_v3_sub(w, x[0], x[1]); }
    cb_v3_cross(n, u, v);
    return cb_v3_dot(n, w);
}

static double reference(const pair *P, double eta, double *dmin)
{
    const int N = 200;
    double S = pair_scale(P), hit_d = eta > 0 ? eta - 1e-9 * S : 1e-13 * S;
    double d[201], first = INFINITY;
    *dmin = INFINITY;
    for (int i = 0; i <= N; i++) {
        d[i] = dist_at(P, (double)i / N);
        *dmin = fmin(*dmin, d[i]);
        if (d[i] <= hit_d && first > 1.0) first = (double)i / N;
    }
    for (int i = 0; i < N; i++) {
        double ta = (double)i / N, tb = (double)(i + 1) / N;
        if ((double)i / N >= first) break;
        if (eta == 0.0) {
            double va = volume_at(P, ta), vb = volume_at(P, tb);
            if ((va < 0) != (vb < 0)) {
                for (int it = 0; it < 60; it++) {
                    double tm = 0.5 * (ta + tb), vm = volume_at(P, tm);
                    if ((vm < 0) == (va < 0)) { ta = tm; va = vm; } else tb = tm;
                }
                double dr = dist_at(P, tb);
                *dmin = fmin(*dmin, dr);
                if (dr <= hit_d) first = fmin(first, tb);
            }
        }
        /* golden section on [t(i-1), t(i+1)] around a sampled local minimum */
        if (i > 0 && d[i] <= d[i - 1] && d[i] <= d[i + 1]) {
            double a = (double)(i - 1) / N, b = (double)(i + 1) / N, g = 0.5 * (sqrt(5.0) - 1);
            double c = b - g * (b - a), e = a + g * (b - a), fc = dist_at(P, c), fe = dist_at(P, e);
            for (int it = 0; it < 50; it++) {
                if (fc < fe) { b = e; e = c; fe = fc; c = b - g * (b - a); fc = dist_at(P, c); }
                else { a = c; c = e; fc = fe; e = a + g * (b - a); fe = dist_at(P, e); }
            }
            double tm = fc < fe ? c : e, dm = fmin(fc, fe);
            *dmin = fmin(*dmin, dm);
            if (dm <= hit_d) first = fmin(first, tm);
        }
    }
    return first;
}

static void random_pair(pair *P, int ee)
{
    P->ee = ee;
    double c[3], mv[3];
    for (int k = 0; k < 3; k++) { c[k] = rng_uniform(); mv[k] = rng_uniform() - 0.5; }
    for (int i = 0; i < 4; i++) {
        double r = (i == 0 || (ee && i == 1)) ? 0.6 : 0.5;
        for (int k = 0; k < 3; k++) {
            P->x0[i][k] = c[k] + r * (rng_uniform() - 0.5);
            /* side 1 moves together, plus a small deformation */
            P->x1[i][k] = P->x0[i][k] + ((i == 0 || (ee && i == 1)) ? mv[k] : 0.0) + 0.2 * (rng_uniform() - 0.5);
        }
    }
}

static void random_check(int ee)
{
    const int N = 100000;
    int contacts = 0, reported = 0, false_neg = 0, false_pos = 0, late = 0;
    for (int it = 0; it < N; it++) {
        pair P;
        random_pair(&P, ee);
        double eta = (it % 2) ? 0.0 : 0.02 * rng_uniform();
        double toi = -1, dmin;
        int hit = run_ccd(&P, eta, &toi);
        double ref = reference(&P, eta, &dmin);
        reported += hit;
        if (ref <= 1.0) {
            contacts++;
            if (!hit) {
                if (false_neg++ < 5) fprintf(stderr, "  false negative: ref toi %.17g eta %g\n", ref, eta);
            } else if (toi > ref + 1e-12) {
                if (late++ < 5) fprintf(stderr, "  late toi %.17g > ref %.17g\n", toi, ref);
            }
        } else if (hit && dmin > eta + 1e-6) {
            false_pos++;
        }
    }
    printf("\n    %s random: %d pairs, %d reference contacts, %d reported, %d false negatives, "
           "%d late, %d false positives (%.4f%%, distance > eta + 1e-6 on a 200-sample grid)\n",
           ee ? "edge-edge" : "vertex-triangle", N, contacts, reported, false_neg, late, false_pos,
           100.0 * false_pos / N);
    CU_ASSERT(contacts > N / 50);
    CU_ASSERT_EQUAL(false_neg, 0);
    CU_ASSERT_EQUAL(late, 0);
    CU_ASSERT(false_pos < N / 1000);
}

static void test_ccd_random_vertex_triangle(void) { random_check(0); }
static void test_ccd_random_edge_edge(void) { random_check(1); }

static void test_ccd_bad_input(void)
{
    double z[3] = {0, 0, 0}, x[3] = {1, 0, 0}, y[3] = {0, 1, 0}, p[3] = {0.2, 0.2, 1};
    double nanv[3] = {NAN, 0, 0}, infv[3] = {0, INFINITY, 0}, toi = -1;
    CU_ASSERT_EQUAL(cb_ccd_vertex_triangle(nanv, p, z, z, x, x, y, y, NULL, &toi), 1);
    CU_ASSERT_EQUAL(toi, 0.0);
    toi = -1;
    CU_ASSERT_EQUAL(cb_ccd_edge_edge(z, x, y, p, infv, p, z, y, NULL, &toi), 1);
    CU_ASSERT_EQUAL(toi, 0.0);
    cb_ccd_opts o = cb_default_ccd_opts();
    o.eta = NAN;
    CU_ASSERT_EQUAL(cb_ccd_vertex_triangle(p, p, z, z, x, x, y, y, &o, &toi), 1);
    /* a nonsense tolerance and iteration cap still terminate with a conservative answer */
    o = cb_default_ccd_opts();
    o.tol = -1;
    o.max_iter = 1;
    double q0[3] = {0.2, 0.2, 1}, q1[3] = {0.2, 0.2, -1};
    CU_ASSERT_EQUAL(cb_ccd_vertex_triangle(q0, q1, z, z, x, x, y, y, &o, &toi), 1);
    CU_ASSERT(toi <= 0.5);
    /* no contact: returns 0 and toi 1 */
    double far0[3] = {5, 5, 5}, far1[3] = {6, 5, 5};
    CU_ASSERT_EQUAL(cb_ccd_vertex_triangle(far0, far1, z, z, x, x, y, y, NULL, &toi), 0);
    CU_ASSERT_EQUAL(toi, 1.0);
}

CB_TEST_MAIN("ccd",
    CB_TEST(test_ccd_corpus),
    CB_TEST(test_ccd_random_vertex_triangle),
    CB_TEST(test_ccd_random_edge_edge),
    CB_TEST(test_ccd_bad_input))
