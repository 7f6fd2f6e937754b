/* tests/test_avgforce.c — the average-force solver (solvers/avgforce.c) against analytic
 * references: the Taylor spring's error order, the predictor's one-step error against the
 * exact harmonic solution, Coulomb friction on an inclined plane, the separating-axis
 * response's prescribed return to the plane, momentum in free flight, and a cloth
 * sliding off a sphere onto the floor without penetrations. */
#include "cb_test.h"
#include "cb_sim.h"

#include "core/metrics.h"
#include "core/scene.h"
#include "core/solver.h"
#include "core/vec3.h"
#include "core/world.h"

/* scene (file or text, relative paths from data/scenes) + world + avgforce: tests/cb_sim.h */
static int sim_open(cb_sim *s, const char *path_or_text, int is_text, const char *const *sets, int nsets)
{
    return cb_sim_open(s, "avgforce", is_text ? NULL : path_or_text, is_text ? path_or_text : NULL, "data/scenes", sets,
                       nsets);
}

/* ------------------------------------------------------------------ springs */

/* One step of the instantaneous predictor from rest gives v = dt F / m exactly, so the
 * force of the single spring (rest length 1 m, k = 1000 N/m) at length r is read back. */
static double spring_force(const char *spring, double r)
{
    char set_spring[64], set_stretch[64];
    snprintf(set_spring, sizeof set_spring, "solvers.avgforce.spring=%s", spring);
    snprintf(set_stretch, sizeof set_stretch, "cloth.initial_stretch=%.17g", r);
    const char *sets[] = {set_spring, set_stretch, "solvers.avgforce.predictor=instantaneous",
                          "solvers.avgforce.correction_iterations=0"};
    cb_sim s;
    if (sim_open(&s, "data/scenes/single_spring.yaml", 0, sets, 4)) {
        cb_sim_close(&s);
        return NAN;
    }
    double len = cb_v3_dist(s.w->state.x[0], s.w->state.x[1]);
    CB_ASSERT_REL(len, r, 1e-14);
    double f = NAN;
    if (!cb_sim_step(&s)) {
        /* vertex 0 is pulled towards vertex 1 (+x) by a stretched spring */
        f = s.w->mass[0] * s.w->state.v[0][0] / s.scene->dt;
    }
    cb_sim_close(&s);
    return f;
}

static void test_taylor_spring_error_order(void)
{
    const double k = 1000.0, L = 1.0;
    /* at the rest length both forces vanish; the exact one is k (r - L) */
    CB_ASSERT_REL(spring_force("taylor", 1.0), 0.0, 1e-12);
    CB_ASSERT_REL(spring_force("exact", 1.1), k * 0.1, 1e-10);
    CB_ASSERT_REL(spring_force("exact", 0.95), -k * 0.05, 1e-10);
    /* error = k L d^2 / (r^2 + L^2): fit the exponent of |error| against |d| */
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    int n = 0;
    for (int sign = -1; sign <= 1; sign += 2)
        for (double d = 1e-3; d <= 0.1 * 1.0001; d *= 2.0) {
            double r = L + sign * d;
            double ft = spring_force("taylor", r), fe = spring_force("exact", r);
            double err = fabs(ft - fe);
            CB_ASSERT_REL(ft - fe, k * L * d * d / (r * r + L * L), 1e-6);
            double lx = log(d), ly = log(err);
            sx += lx; sy += ly; sxx += lx * lx; sxy += lx * ly; n++;
        }
    double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
    fprintf(stderr, "  Taylor spring error exponent %.4f over %d stretches\n", slope, n);
    CU_ASSERT(fabs(slope - 2.0) < 0.05);
}

/* ------------------------------------------------------------------ predictor */

/* One step of the two-mass spring from length L + d with the masses moving apart at
 * speed u each: the exact relative coordinate is L + d cos(wt) + (2u/w) sin(wt),
 * w^2 = 2k/m. Returns the one-step error of the length change. */
static double predictor_error(const char *predictor, double dt, double *exact_change)
{
    char set_pred[64];
    snprintf(set_pred, sizeof set_pred, "solvers.avgforce.predictor=%s", predictor);
    const char *sets[] = {set_pred, "solvers.avgforce.spring=exact", "cloth.initial_stretch=1.02",
                          "solvers.avgforce.correction_iterations=0"};
    cb_sim s;
    if (sim_open(&s, "data/scenes/single_spring.yaml", 0, sets, 4)) {
        cb_sim_close(&s);
        return NAN;
    }
    const double u = 0.3;
    s.w->state.v[0][0] = -u;
    s.w->state.v[1][0] = u;
    double m = s.w->mass[0], k = s.w->model.k_stretch, om = sqrt(2.0 * k / m);
    double r0 = cb_v3_dist(s.w->state.x[0], s.w->state.x[1]), d = r0 - 1.0;
    double err = NAN;
    if (!cb_sim_step_dt(&s, dt)) {
        double r1 = cb_v3_dist(s.w->state.x[0], s.w->state.x[1]);
        double exact = 1.0 + d * cos(om * dt) + 2.0 * u / om * sin(om * dt);
        *exact_change = exact - r0;
        err = fabs(r1 - exact);
    }
    cb_sim_close(&s);
    return err;
}

static void test_average_force_halves_cubic_error(void)
{
    /* omega = 63.2 rad/s: omega dt = 0.0016 .. 0.0063. The instantaneous prediction misses
     * dt^3 j / 6, the average-force one dt^3 j / 12 (header of solvers/avgforce.c), so the
     * ratio tends to 1/2 and each error scales as dt^3. */
    double prev_avg = NAN;
    for (double dt = 2.5e-5; dt <= 1e-4 * 1.0001; dt *= 2.0) {
        double change;
        double ea = predictor_error("average", dt, &change);
        double ei = predictor_error("instantaneous", dt, &change);
        fprintf(stderr, "  dt %.0e: |dr| %.3e, error average %.3e, instantaneous %.3e, ratio %.4f\n",
                dt, fabs(change), ea, ei, ea / ei);
        CU_ASSERT(fabs(ea / ei - 0.5) < 0.01);
        if (isfinite(prev_avg)) CU_ASSERT(fabs(log2(ea / prev_avg) - 3.0) < 0.05);
        prev_avg = ea;
    }
}

/* ------------------------------------------------------------------ friction */

static void incline_run(double mu, double T, double *disp, double *speed, double *normal_drift)
{
    char set_mu[64];
    snprintf(set_mu, sizeof set_mu, "colliders.0.friction=%.17g", mu);
    const char *sets[] = {set_mu};
    cb_sim s;
    *disp = *speed = *normal_drift = NAN;
    if (sim_open(&s, "data/scenes/incline.yaml", 0, sets, 1)) {
        cb_sim_close(&s);
        return;
    }
    const double th = M_PI / 6, down[3] = {cos(th), 0, -sin(th)}, n[3] = {sin(th), 0, cos(th)};
    int nv = s.w->nv;
    double (*x0)[3] = calloc((size_t)nv, sizeof *x0);
    memcpy(x0, s.w->state.x, (size_t)nv * sizeof *x0);
    long steps = lround(T / s.scene->dt);
    for (long k = 0; k < steps; k++)
        if (cb_sim_step(&s)) break;
    double dmin = INFINITY, dmax = -INFINITY, vmax = -INFINITY, vmin = INFINITY, nd = 0;
    for (int i = 0; i < nv; i++) {
        double dx[3];
        cb_v3_sub(dx, s.w->state.x[i], x0[i]);
        double a = cb_v3_dot(dx, down), b = cb_v3_dot(s.w->state.v[i], down);
        dmin = fmin(dmin, a); dmax = fmax(dmax, a);
        vmin = fmin(vmin, b); vmax = fmax(vmax, b);
        nd = fmax(nd, fabs(cb_v3_dot(dx, n)));
        /* nothing moves across the slope */
        CU_ASSERT(fabs(dx[1]) < 1e-12);
    }
    CB_ASSERT_REL(dmin, dmax, 1e-9); /* a rigid slide */
    CB_ASSERT_REL(vmin, vmax, 1e-9);
    *disp = dmax;
    *speed = vmax;
    *normal_drift = nd;
    free(x0);
    cb_sim_close(&s);
}

static void test_friction_incline(void)
{
    const double g = 9.81, th = M_PI / 6, T = 0.5;
    double disp, speed, nd;
    /* tan 30 = 0.577 < 0.7: static friction holds the patch */
    incline_run(0.7, T, &disp, &speed, &nd);
    fprintf(stderr, "  mu 0.7: displacement %.3e m, speed %.3e m/s, normal drift %.3e m\n", disp, speed, nd);
    CU_ASSERT(fabs(disp) < 1e-12);
    CU_ASSERT(fabs(speed) < 1e-12);
    CU_ASSERT(nd < 1e-12); /* the normal force is cancelled: it stays on the plane */
    /* 0.5 and 0.2 < 0.577: it slides with a = g (sin - mu cos) */
    const double mus[] = {0.5, 0.2};
    for (int k = 0; k < 2; k++) {
        double mu = mus[k], a = g * (sin(th) - mu * cos(th));
        incline_run(mu, T, &disp, &speed, &nd);
        double a_from_v = speed / T, a_from_x = 2.0 * disp / (T * T);
        fprintf(stderr, "  mu %.1f: acceleration from speed %.6f, from displacement %.6f, exact %.6f"
                        " m/s^2; normal drift %.3e m\n", mu, a_from_v, a_from_x, a, nd);
        CU_ASSERT(fabs(a_from_v / a - 1.0) < 0.01);
        CU_ASSERT(fabs(a_from_x / a - 1.0) < 0.01);
        CU_ASSERT(nd < 1e-12);
    }
}

/* ------------------------------------------------------------------ response */

/* A flat patch starting 10 mm below a floor (contact offset 1 mm): the separating-axis
 * response detected at the end of step 1 lifts every vertex over response_time back to
 * the plane at the offset, with the prescribed constant deceleration, and stops it. */
static const char *sink_scene =
    "name: sink\nduration: 1.0\ndt: 0.01\ngravity: [0, 0, %s]\n"
    "cloth:\n  grid: {nx: 5, ny: 5, size: [0.2, 0.2], origin: [-0.1, -0.1, -0.01]}\n"
    "  stretch: 1000\n  bend: 1.0e-4\n  thickness: 0.002\n"
    "colliders:\n  - {type: plane, point: [0, 0, 0], normal: [0, 0, 1]}\n"
    "solvers:\n  avgforce: {response_time: 0.05, substeps: 200}\n";

static void test_sat_response_returns_to_plane(void)
{
    const char *gravities[] = {"0", "-9.81"};
    for (int variant = 0; variant < 2; variant++) {
        char text[1024];
        snprintf(text, sizeof text, sink_scene, gravities[variant]);
        cb_sim s;
        CU_ASSERT_EQUAL_FATAL(sim_open(&s, text, 1, NULL, 0), CB_OK);
        const double dt = 0.01, tr = 0.05, off = 0.001, h = dt / 200; /* substep */
        /* substep 1: the patch is in contact (below the offset), so the normal force
         * (gravity) is cancelled and it does not move; then the response starts with
         * depth l = 0.011 m at t = h and lasts until h + tr */
        const double z1 = -0.01, l = off - z1;
        double maxerr = 0.0;
        for (int k = 1; k <= 6; k++) {
            CU_ASSERT_EQUAL_FATAL(cb_sim_step(&s), CB_OK);
            double sres = fmin(k * dt - h, tr);
            double z = z1 + 2.0 * l / tr * sres - l / (tr * tr) * sres * sres;
            double vz = 2.0 * l / tr - 2.0 * l / (tr * tr) * sres;
            for (int i = 0; i < s.w->nv; i++) {
                maxerr = fmax(maxerr, fabs(s.w->state.x[i][2] - z));
                maxerr = fmax(maxerr, fabs(s.w->state.v[i][2] - vz) * dt);
            }
        }
        /* after the response time: on the plane (at the offset), no normal velocity */
        double zend = -INFINITY, vend = 0.0;
        for (int i = 0; i < s.w->nv; i++) {
            zend = fmax(zend, fabs(s.w->state.x[i][2] - off));
            vend = fmax(vend, fabs(s.w->state.v[i][2]));
        }
        fprintf(stderr, "  gravity %s: depth %.4f m, max deviation from the prescribed motion %.2e m,"
                        " end |z - offset| %.2e m, |v_n| %.2e m/s\n", gravities[variant], l, maxerr, zend, vend);
        CU_ASSERT(maxerr < 1e-12);
        CU_ASSERT(zend < 1e-12);
        CU_ASSERT(vend < 1e-12);
        /* and it stays there: the contact cancels the normal force */
        for (int k = 0; k < 20; k++) CU_ASSERT_EQUAL_FATAL(cb_sim_step(&s), CB_OK);
        for (int i = 0; i < s.w->nv; i++) {
            CU_ASSERT(fabs(s.w->state.x[i][2] - off) < 1e-12);
            CU_ASSERT(fabs(s.w->state.v[i][2]) < 1e-12);
        }
        cb_sim_close(&s);
    }
}

/* ------------------------------------------------------------------ momentum */

static void test_free_flight_momentum(void)
{
    const char *variants[] = {"solvers.avgforce.spring=taylor", "solvers.avgforce.spring=exact"};
    for (int v = 0; v < 2; v++) {
        const char *sets[] = {variants[v], "cloth.initial_stretch=1.05", "solvers.avgforce.damping=0"};
        cb_sim s;
        CU_ASSERT_EQUAL_FATAL(sim_open(&s, "data/scenes/free_flight.yaml", 0, sets, 3), CB_OK);
        double p0[3] = {0, 0, 0}, pmag = 0;
        for (int i = 0; i < s.w->nv; i++) cb_v3_axpy(p0, s.w->mass[i], s.w->state.v[i]);
        for (int i = 0; i < s.w->nv; i++) pmag += s.w->mass[i] * cb_v3_norm(s.w->state.v[i]);
        double drift = 0, imp = 0, maxstrain = 0;
        for (int n = 0; n < 300; n++) {
            CU_ASSERT_EQUAL_FATAL(cb_sim_step(&s), CB_OK);
            double p[3] = {0, 0, 0};
            for (int i = 0; i < s.w->nv; i++) cb_v3_axpy(p, s.w->mass[i], s.w->state.v[i]);
            for (int k = 0; k < 3; k++) {
                drift = fmax(drift, fabs(p[k] - p0[k]));
                imp = fmax(imp, fabs(s.info.external_impulse[k]));
            }
            maxstrain = fmax(maxstrain, cb_model_max_strain(&s.w->model, (const double (*)[3])s.w->state.x));
        }
        fprintf(stderr, "  %s: momentum drift %.2e N s (scale %.2e), max |external impulse| %.2e\n",
                variants[v], drift, pmag, imp);
        CU_ASSERT(drift < 1e-14 * fmax(1.0, pmag) * 300);
        CU_ASSERT(imp < 1e-15);
        CU_ASSERT(isfinite(maxstrain) && maxstrain < 0.2); /* it did not blow up */
        cb_sim_close(&s);
    }
}

/* ------------------------------------------------------------------ sphere slide */

static void sphere_slide_run(const char *response, double *pen_end, double *self_end, double *pen_max,
                             double *zmin)
{
    char set[64];
    snprintf(set, sizeof set, "solvers.avgforce.response=%s", response);
    const char *sets[] = {set};
    cb_sim s;
    *pen_end = *self_end = *pen_max = *zmin = NAN;
    if (sim_open(&s, "data/scenes/sphere_slide.yaml", 0, sets, 1)) {
        cb_sim_close(&s);
        return;
    }
    long steps = cb_scene_steps(s.scene);
    double pmax = 0;
    cb_metrics m;
    for (long k = 0; k < steps; k++) {
        if (cb_sim_step(&s)) break;
        cb_metrics_compute(s.w, &s.info, s.scene->dt, 0.0, &m);
        pmax = fmax(pmax, m.collider_penetrations);
    }
    cb_metrics_compute(s.w, &s.info, s.scene->dt, 0.0, &m);
    cb_metrics_compute_expensive(s.w, NULL, &m);
    double z = INFINITY;
    for (int i = 0; i < s.w->nv; i++) z = fmin(z, s.w->state.x[i][2]);
    *pen_end = m.collider_penetrations;
    *self_end = m.self_intersections;
    *pen_max = pmax;
    *zmin = z;
    cb_sim_close(&s);
}

static void test_sphere_slide_no_penetration(void)
{
    double pen, self, pmax, zmin;
    sphere_slide_run("sat", &pen, &self, &pmax, &zmin);
    fprintf(stderr, "  response sat: final collider penetrations %g, self intersections %g, "
                    "max penetrations in a step %g, lowest vertex z %.4f m\n", pen, self, pmax, zmin);
    CU_ASSERT(pen == 0);
    CU_ASSERT(self == 0);
    /* it did slide off the sphere onto the floor */
    CU_ASSERT(zmin < 0.01 && zmin > -1e-6);
    /* without a response vertices enter the sphere (only their normal force is cancelled) */
    sphere_slide_run("none", &pen, &self, &pmax, &zmin);
    fprintf(stderr, "  response none: final collider penetrations %g, max in a step %g, lowest vertex z %.4f m\n",
            pen, pmax, zmin);
    CU_ASSERT(pmax > 0);
}

CB_TEST_MAIN("avgforce",
    CB_TEST(test_taylor_spring_error_order),
    CB_TEST(test_average_force_halves_cubic_error),
    CB_TEST(test_friction_incline),
    CB_TEST(test_sat_response_returns_to_plane),
    CB_TEST(test_free_flight_momentum),
    CB_TEST(test_sphere_slide_no_penetration))
