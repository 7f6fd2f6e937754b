/* tests/test_avgforce.c — the average-force solver (solvers/avgforce.c) against analytic
 * references: the Taylor spring's error order, the predictor's one-step error against the
 * exact harmonic solution, Coulomb friction on an inclined plane, the separating-axis
 * response's prescribed return to the plane, momentum in free flight, and a cloth
 * sliding off a sphere onto the floor without penetrations. */
#include "cb_test.h"
#include "cb_sim.h"

#include "contact/selfcheck.h"
#include "contact/testmesh.h"
#include "experiments/harness/metrics.h"
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

/* ------------------------------------------------------------------ self contact (issue 15) */

/* Write an OBJ (vertices, triangles) into the test's temporary folder; returns the folder. */
static const char *write_obj(const char *name, int nv, const double (*x)[3], int nf, const int (*f)[3])
{
    static char dir[512];
    const char *t = getenv("CB_TEST_TMP");
    snprintf(dir, sizeof dir, "%s", t && t[0] ? t : "/tmp");
    char path[700];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *fp = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
    for (int i = 0; i < nv; i++) fprintf(fp, "v %.17g %.17g %.17g\n", x[i][0], x[i][1], x[i][2]);
    for (int i = 0; i < nf; i++) fprintf(fp, "f %d %d %d\n", f[i][0] + 1, f[i][1] + 1, f[i][2] + 1);
    fclose(fp);
    return dir;
}

/* Quads of an nu x nw vertex sheet (first vertex `base`, vertex (i, j) = base + i + nu j)
 * as triangles into f; returns the new count. */
static int sheet_faces(int base, int nu, int nw, int nf, int (*f)[3])
{
    for (int j = 0; j + 1 < nw; j++)
        for (int i = 0; i + 1 < nu; i++) {
            int a = base + i + nu * j, b = a + 1, c = a + nu, d = c + 1;
            f[nf][0] = a; f[nf][1] = b; f[nf][2] = d; nf++;
            f[nf][0] = a; f[nf][1] = d; f[nf][2] = c; nf++;
        }
    return nf;
}

static long self_intersections_now(cb_sim *s)
{
    long n = -1;
    cb_error e;
    if (cb_self_intersections(s->w->mesh, (const double (*)[3])s->w->state.x, &n, &e) < 0) return -1;
    return n;
}

/* Self contact next to floor responses (issue 15, case 1): sheet A starts below the
 * floor, so every vertex of it is in a (long) floor response; sheet B, offset by half a
 * cell, falls onto it at 2 m/s while the responses last. B must end above A with no
 * intersection. NOTE: this scene does not reproduce the failure of the old code (B is
 * stopped by the floor before it reaches A, which is still below the floor); it is a
 * regression guard only. test_vertex_through_triangle_in_floor_response is the scene
 * that fails on the old code. */
static void test_self_contact_with_floor_response(void)
{
    enum { NA = 6, NB = 5 };
    double x[NA * NA + NB * NB][3];
    int f[2 * ((NA - 1) * (NA - 1) + (NB - 1) * (NB - 1))][3];
    const double ha = 0.02, hb = 0.02;
    for (int j = 0; j < NA; j++)
        for (int i = 0; i < NA; i++) cb_v3_set(x[i + NA * j], -0.05 + ha * i, -0.05 + ha * j, -0.002);
    for (int j = 0; j < NB; j++)
        for (int i = 0; i < NB; i++)
            cb_v3_set(x[NA * NA + i + NB * j], -0.04 + 0.3 * hb + hb * i, -0.04 + 0.6 * hb + hb * j, 0.008);
    int nf = sheet_faces(0, NA, NA, 0, f);
    nf = sheet_faces(NA * NA, NB, NB, nf, f);
    const char *dir = write_obj("avg_floor_response.obj", NA * NA + NB * NB, (const double (*)[3])x, nf,
                                (const int (*)[3])f);
    const char *text =
        "name: floor_response\nduration: 0.05\ndt: 0.001\ngravity: [0, 0, -9.81]\n"
        "cloth:\n  mesh: avg_floor_response.obj\n  density: 0.1\n  stretch: 1000\n  bend: 1.0e-4\n"
        "  thickness: 0.001\n"
        "colliders:\n  - {type: plane, point: [0, 0, 0], normal: [0, 0, 1], friction: 0.5}\n"
        "solvers:\n  avgforce: {response_time: 0.2}\n";
    cb_sim s;
    CU_ASSERT_EQUAL_FATAL(cb_sim_open(&s, "avgforce", NULL, text, dir, NULL, 0), CB_OK);
    for (int i = NA * NA; i < s.w->nv; i++) s.w->state.v[i][2] = -2.0;
    long worst = 0;
    double zb = INFINITY;
    for (int k = 0; k < 50; k++) {
        CU_ASSERT_EQUAL_FATAL(cb_sim_step(&s), CB_OK);
        long n = self_intersections_now(&s);
        if (n < 0 || n > worst) worst = n < 0 ? 1 << 30 : n;
    }
    for (int i = NA * NA; i < s.w->nv; i++) zb = fmin(zb, s.w->state.x[i][2]);
    double za = -INFINITY;
    for (int i = 0; i < NA * NA; i++) za = fmax(za, s.w->state.x[i][2]);
    fprintf(stderr, "  sheet on a sheet in floor responses: max self intersections %ld, lowest B %.2e m, "
                    "highest A %.2e m\n", worst, zb, za);
    CU_ASSERT_EQUAL(worst, 0);
    CU_ASSERT(zb > za); /* B rests on A */
    cb_sim_close(&s);
}

/* Issue 15, case 1 as the issue measured it (t = 0.732 s on the disc: a free vertex
 * passes a triangle one of whose vertices is in a floor response). Ramp A is one cell
 * wide: its lower row starts 3 mm below the floor, so every one of those vertices is in
 * a long (0.2 s) floor response, and every triangle of A has a vertex in that row; its
 * upper row is 43 mm up, free. Sheet B (3 x 3, 7 mm cells) falls at 1 m/s onto the
 * middle of the ramp, its vertices over the interiors of A's triangles, far from A's
 * upper row. In zero gravity nothing else moves: only the vertex-triangle pairs of B's
 * vertices against A's triangles (each with a vertex in a response) can stop B. The old
 * code skipped exactly those pairs and B went through the ramp. */
static void test_vertex_through_triangle_in_floor_response(void)
{
    enum { NU = 7, NBV = 3 };
    double x[2 * NU + NBV * NBV][3];
    int f[2 * (NU - 1) + 2 * (NBV - 1) * (NBV - 1)][3];
    for (int i = 0; i < NU; i++) {
        double y = -0.06 + 0.02 * i;
        cb_v3_set(x[i], 0.0, y, -0.003);     /* A: lower row, below the floor */
        cb_v3_set(x[NU + i], 0.04, y, 0.04); /* A: upper row */
    }
    for (int j = 0; j < NBV; j++)
        for (int i = 0; i < NBV; i++)
            cb_v3_set(x[2 * NU + i + NBV * j], 0.013 + 0.007 * i, -0.0043 + 0.007 * j, 0.03);
    int nf = sheet_faces(0, NU, 2, 0, f);
    nf = sheet_faces(2 * NU, NBV, NBV, nf, f);
    const char *dir = write_obj("avg_ramp.obj", 2 * NU + NBV * NBV, (const double (*)[3])x, nf,
                                (const int (*)[3])f);
    const char *text =
        "name: ramp\nduration: 0.05\ndt: 0.001\ngravity: [0, 0, 0]\n"
        "cloth:\n  mesh: avg_ramp.obj\n  density: 0.1\n  stretch: 1000\n  bend: 1.0e-4\n  thickness: 0.001\n"
        "colliders:\n  - {type: plane, point: [0, 0, 0], normal: [0, 0, 1], friction: 0.5}\n"
        "solvers:\n  avgforce: {response_time: 0.2}\n";
    cb_sim s;
    CU_ASSERT_EQUAL_FATAL(cb_sim_open(&s, "avgforce", NULL, text, dir, NULL, 0), CB_OK);
    for (int i = 2 * NU; i < s.w->nv; i++) s.w->state.v[i][2] = -1.0;
    long worst = 0;
    double above = INFINITY; /* lowest signed distance of a vertex of B above A's plane */
    const double *a0 = s.w->state.x[0], *a1 = s.w->state.x[1], *a2 = s.w->state.x[NU];
    int min_held = 1 << 30;
    for (int k = 0; k < 50; k++) {
        CU_ASSERT_EQUAL_FATAL(cb_sim_step(&s), CB_OK);
        long n = self_intersections_now(&s);
        if (n < 0 || n > worst) worst = n < 0 ? 1 << 30 : n;
        /* the premise: A's lower row is below the floor's offset, i.e. in its response */
        int held = 0;
        for (int i = 0; i < NU; i++) held += s.w->state.x[i][2] < 0.0005 - 1e-6;
        if (held < min_held) min_held = held;
        double u[3], v[3], nrm[3];
        cb_v3_sub(u, a1, a0);
        cb_v3_sub(v, a2, a0);
        cb_v3_cross(nrm, u, v);
        cb_v3_normalize(nrm);
        if (nrm[2] < 0) cb_v3_scale(nrm, nrm, -1.0);
        for (int i = 2 * NU; i < s.w->nv; i++) {
            double d[3];
            cb_v3_sub(d, s.w->state.x[i], a0);
            above = fmin(above, cb_v3_dot(d, nrm));
        }
    }
    fprintf(stderr, "  vertex through a triangle in a floor response: max self intersections %ld, lowest B "
                    "vertex above A's plane %.2e m, A's lower-row vertices below the floor offset throughout %d of %d\n",
            worst, above, min_held, NU);
    CU_ASSERT_EQUAL(min_held, NU);
    CU_ASSERT_EQUAL(worst, 0);
    CU_ASSERT(above > 0); /* B rests on the ramp */
    cb_sim_close(&s);
}

/* Two one-cell-wide ribbons, A in the plane y = 0 falling edge-first at 1 m/s onto B in
 * the plane x = 0, crossing edge on: no vertex of either ever reaches the other's plane
 * inside its triangles (their vertices sit at x = +-0.025 and y = +-0.025), so only
 * edge-edge events can keep them apart. */
static void test_ribbons_edge_on(void)
{
    enum { N = 4 };
    double x[4 * N][3];
    int f[4 * (N - 1)][3];
    const double u[N] = {-0.075, -0.025, 0.025, 0.075};
    for (int i = 0; i < N; i++) {
        cb_v3_set(x[i], u[i], 0, 0.005);          /* A: bottom edge */
        cb_v3_set(x[N + i], u[i], 0, 0.055);      /* A: top edge */
        cb_v3_set(x[2 * N + i], 0, u[i], -0.05);  /* B: bottom edge */
        cb_v3_set(x[3 * N + i], 0, u[i], 0.0);    /* B: top edge */
    }
    int nf = sheet_faces(0, N, 2, 0, f);
    nf = sheet_faces(2 * N, N, 2, nf, f);
    const char *dir = write_obj("avg_ribbons.obj", 4 * N, (const double (*)[3])x, nf, (const int (*)[3])f);
    const char *text =
        "name: ribbons\nduration: 0.1\ndt: 0.001\ngravity: [0, 0, 0]\n"
        "cloth:\n  mesh: avg_ribbons.obj\n  density: 0.1\n  stretch: 1000\n  bend: 1.0e-4\n  thickness: 0.001\n"
        "solvers:\n  avgforce: {}\n";
    cb_sim s;
    CU_ASSERT_EQUAL_FATAL(cb_sim_open(&s, "avgforce", NULL, text, dir, NULL, 0), CB_OK);
    for (int i = 0; i < 2 * N; i++) s.w->state.v[i][2] = -1.0;
    long worst = 0;
    for (int k = 0; k < 60; k++) {
        CU_ASSERT_EQUAL_FATAL(cb_sim_step(&s), CB_OK);
        long n = self_intersections_now(&s);
        if (n < 0 || n > worst) worst = n < 0 ? 1 << 30 : n;
    }
    double vb = 0.0;
    for (int i = 2 * N; i < 4 * N; i++) vb += s.w->state.v[i][2] / (2 * N);
    fprintf(stderr, "  ribbons edge on: max self intersections %ld, B's mean vertical velocity %.3f m/s\n", worst, vb);
    CU_ASSERT_EQUAL(worst, 0);
    CU_ASSERT(vb < -0.2); /* they met: A pushes B (free, in zero gravity) down */
    cb_sim_close(&s);
}

/* An irregular disc: rings of jittered points (ring k: 6k points, radius and angle
 * jittered), consecutive rings stitched by an angular merge, the centre a fan. */
static int make_disc(int rings, double R, double z, uint64_t seed, double (**xo)[3], int (**fo)[3], int *nfo)
{
    int nv = 1;
    for (int k = 1; k <= rings; k++) nv += 6 * k;
    double (*x)[3] = calloc((size_t)nv, sizeof *x);
    double *ang = calloc((size_t)nv, sizeof *ang);
    int (*f)[3] = calloc((size_t)(12 * nv), sizeof *f);
    uint64_t st = seed * 0x9E3779B97F4A7C15ull + 1;
    cb_v3_set(x[0], 0, 0, z);
    int start[64];
    start[0] = 0;
    int v = 1;
    double phase = 0.0;
    for (int k = 1; k <= rings; k++) {
        start[k] = v;
        int n = 6 * k;
        phase += 0.37;
        for (int i = 0; i < n; i++, v++) {
            double jr = k < rings ? 0.25 * (cb_testmesh_uniform(&st) - 0.5) : 0.0; /* boundary: round */
            double ja = 0.3 * (cb_testmesh_uniform(&st) - 0.5);
            double r = R * (k + jr) / rings, a = phase + 2 * M_PI * (i + ja) / n;
            ang[v] = a;
            cb_v3_set(x[v], r * cos(a), r * sin(a), z);
        }
    }
    int nf = 0;
    for (int i = 0; i < 6; i++) {
        f[nf][0] = 0; f[nf][1] = 1 + i; f[nf][2] = 1 + (i + 1) % 6; nf++;
    }
    for (int k = 1; k < rings; k++) {
        /* angles increase along a ring (the jitter is below half a spacing): unwrap both
         * rings from the inner ring's first point and merge them by angle */
        int n0 = 6 * k, n1 = 6 * (k + 1), j0 = 0, i = 0, j = 0;
        const double a0 = ang[start[k]], TWO_PI = 2 * M_PI;
        double best = INFINITY;
        for (int q = 0; q < n1; q++) {
            double d = fmod(ang[start[k + 1] + q] - a0 + 8 * TWO_PI, TWO_PI);
            if (d < best) { best = d; j0 = q; }
        }
        /* unwrapped angle of inner point i (0..n0) and outer point j (0..n1) */
#define TH(i_) (fmod(ang[start[k] + (i_) % n0] - a0 + 8 * TWO_PI, TWO_PI) + ((i_) == n0 ? TWO_PI : 0))
#define PH(j_) (fmod(ang[start[k + 1] + (j0 + (j_)) % n1] - a0 + 8 * TWO_PI, TWO_PI) + ((j_) == n1 ? TWO_PI : 0))
        while (i < n0 || j < n1) {
            int a = start[k] + i % n0, b = start[k + 1] + (j0 + j) % n1;
            if (j == n1 || (i < n0 && TH(i + 1) < PH(j + 1))) {
                f[nf][0] = a; f[nf][1] = start[k] + (i + 1) % n0; f[nf][2] = b; nf++; i++;
            } else {
                f[nf][0] = a; f[nf][1] = b; f[nf][2] = start[k + 1] + (j0 + j + 1) % n1; nf++; j++;
            }
        }
#undef TH
#undef PH
    }
    free(ang);
    *xo = x;
    *fo = f;
    *nfo = nf;
    return nv;
}

/* One disc drop: an irregular disc (make_disc(rings, R, zdrop, seed)) falls on a sphere
 * (centre c, radius r, friction mu) over a floor for `duration` s at dt 5 ms. Every 10
 * steps the self intersections (*worst: the most), the vertices inside a collider
 * (*vpen_max) and the lowest vertex (*zlow) are sampled; *end and *vpen are the self
 * intersections and vertex penetrations at the end. Returns the vertex count. */
typedef struct disc_result {
    int nv, nf;
    long end, worst;
    double vpen, vpen_max, zlow, zmin;
} disc_result;

static disc_result disc_run(int rings, double R, double zdrop, uint64_t seed, const double c[3], double r, double mu,
                            double duration)
{
    disc_result d = {0, 0, 1 << 30, 1 << 30, NAN, NAN, NAN, NAN};
    double (*x)[3];
    int (*f)[3];
    d.nv = make_disc(rings, R, zdrop, seed, &x, &f, &d.nf);
    /* not a grid: the valences differ */
    const char *dir = write_obj("avg_disc.obj", d.nv, (const double (*)[3])x, d.nf, (const int (*)[3])f);
    free(x);
    free(f);
    char text[1024];
    snprintf(text, sizeof text,
             "name: disc\nduration: %.17g\ndt: 0.005\ngravity: [0, 0, -9.81]\n"
             "cloth:\n  mesh: avg_disc.obj\n  density: 0.1\n  stretch: 1000\n  bend: 1.0e-4\n  thickness: 0.002\n"
             "colliders:\n  - {type: sphere, center: [%.17g, %.17g, %.17g], radius: %.17g, friction: %.17g}\n"
             "  - {type: plane, point: [0, 0, 0], normal: [0, 0, 1], friction: 0.5}\n"
             "solvers:\n  avgforce: {}\n", duration, c[0], c[1], c[2], r, mu);
    cb_sim s;
    if (cb_sim_open(&s, "avgforce", NULL, text, dir, NULL, 0)) {
        CU_FAIL("disc scene");
        cb_sim_close(&s);
        return d;
    }
    long steps = cb_scene_steps(s.scene), w = 0;
    double vmax = 0.0, zlow = INFINITY;
    cb_metrics m;
    for (long k = 0; k < steps; k++) {
        if (cb_sim_step(&s)) {
            CU_FAIL("disc step");
            cb_sim_close(&s);
            return d;
        }
        if (k % 10 == 9) {
            long n = self_intersections_now(&s);
            if (n < 0 || n > w) w = n < 0 ? 1 << 30 : n;
            cb_metrics_compute(s.w, &s.info, s.scene->dt, 0.0, &m);
            vmax = fmax(vmax, m.vertex_penetrations);
            for (int i = 0; i < s.w->nv; i++) zlow = fmin(zlow, s.w->state.x[i][2]);
        }
    }
    cb_metrics_compute(s.w, &s.info, s.scene->dt, 0.0, &m);
    d.end = self_intersections_now(&s);
    d.worst = w;
    d.vpen = m.vertex_penetrations;
    d.vpen_max = vmax;
    d.zlow = zlow;
    d.zmin = INFINITY;
    for (int i = 0; i < s.w->nv; i++) d.zmin = fmin(d.zmin, s.w->state.x[i][2]);
    cb_sim_close(&s);
    return d;
}

static void print_disc(const char *what, const disc_result *d)
{
    fprintf(stderr, "  irregular disc %s (%d vertices, %d triangles): self intersections at the end %ld, max sampled %ld;"
                    " vertex penetrations at the end %g, max sampled %g; lowest vertex z at the end %.4f m, sampled"
                    " %.4f m\n", what, d->nv, d->nf, d->end, d->worst, d->vpen, d->vpen_max, d->zmin, d->zlow);
}

/* Two drops of an irregular disc (not a grid: the valences differ). 1: 271 vertices on
 * a sphere over a floor; it stays on the sphere (a regression guard: the old code
 * passed it too). 2: the kind of case, 217 vertices, 384 triangles, off-centre
 * on a low-friction sphere: it slides off onto the floor and folds on itself there,
 * vertices in floor responses among the self contacts. The code before the fix
 * (af0f377) ended it with 51 intersecting pairs (71 at a sample). Known (the header's
 * sphere_slide note): vertices enter the floor transiently where a self response pushes
 * them (sampled: up to 7 vertices at once, 1.4 mm deep, taken back by their floor
 * responses; the old code: 1 vertex, 0.6 mm), so penetrations are asserted at the end
 * and the transient depth is bounded by the thickness. */
static void test_irregular_disc_on_sphere(void)
{
    const double c1[3] = {0.05, 0.03, 0.5}, c2[3] = {-0.3, 0.0, 0.3};
    disc_result d = disc_run(9, 0.45, 0.95, 7, c1, 0.3, 0.3, 1.5);
    print_disc("on a sphere", &d);
    CU_ASSERT_EQUAL(d.end, 0);
    CU_ASSERT_EQUAL(d.worst, 0);
    /* vertices: the flat triangles of a cloth resting on the sphere at contact_offset
     * still cut its curved surface (collider_penetrations counts them) */
    CU_ASSERT(d.vpen == 0);
    CU_ASSERT(d.zmin < 0.2); /* it did drape over the sphere */
    d = disc_run(8, 0.45, 0.7, 7, c2, 0.25, 0.05, 3.2);
    print_disc("sliding off onto the floor", &d);
    CU_ASSERT_EQUAL(d.end, 0);
    CU_ASSERT_EQUAL(d.worst, 0);
    CU_ASSERT(d.vpen == 0);
    CU_ASSERT(d.zlow > -0.002 - 1e-9); /* transient: at most one thickness below the floor */
    CU_ASSERT(d.zmin < 0.01);         /* it did reach the floor */
}

/* drape_sphere with an even number of cells (16 x 16; issue 15: |P_xy| and |L| below
 * 1e-9 over 1 s, peak energy within 1%). The checkerboard mesh (vertex coordinates
 * -0.5 + i/16, exact), the sphere and the floor are mirror-symmetric in x and in y.
 * Measured (this test, 2026-11): until the first contact (t = 0.2 s) the run is
 * mirror-exact, |P_xy| <= 5e-30 kg m/s. From the first contact step on the sums over a
 * vertex's springs and hinges (this solver's Jacobi sums and the shared bending forces of
 * core/model.c, both in mesh order) differ by round-off between mirrored vertices:
 * |P_xy| = 3e-16 at t = 0.225 s. The drape amplifies that: 6e-10 at 0.6 s, 1e-9 at
 * 0.9 s, 9e-8 at 1.0 s when the skirt reaches the floor (contact, stick or slip are yes/no
 * decisions that mirrored vertices then take differently); max |P_xy| 2.4e-7, |L| 1.4e-7.
 * The end level hardly depends on the size of the asymmetry: an added momentum-free
 * antisymmetric velocity seed of 1e-18, 1e-15 and 1e-12 kg m/s gave max |P_xy| 4.6e-7,
 * 1.5e-7, 9.8e-7. So 1e-9 at 1 s needs a seed far below one ulp of one vertex's
 * momentum (~1e-19 kg m/s), i.e. bitwise mirror-exact arithmetic in every accumulation,
 * the shared model's included; no tolerance in this solver reaches it. Asserted: exact
 * symmetry until the first contact, then the tightest bound that holds with a margin for
 * other compilers and sanitizers (the measured values vary by 4x with the seed): 2e-6
 * (kg m/s and kg m^2/s), 1e-5 of max |P_z|. The old Gauss-Seidel correction gave 1.1e-2
 * and a peak energy 40% above the start. */
static void test_symmetric_drape(void)
{
    const char *sets[] = {"cloth.grid.nx=17", "cloth.grid.ny=17", "duration=1.0"};
    cb_sim s;
    CU_ASSERT_EQUAL_FATAL(sim_open(&s, "data/scenes/drape_sphere.yaml", 0, sets, 3), CB_OK);
    long steps = cb_scene_steps(s.scene);
    cb_metrics m;
    cb_metrics_compute(s.w, &s.info, s.scene->dt, 0.0, &m);
    double e0 = m.total_energy, emax = e0, pxy = 0, lmax = 0, pz = 0;
    double pxy_free = NAN; /* max |P_xy| before the first contact */
    int touched = 0;
    for (long k = 0; k < steps; k++) {
        CU_ASSERT_EQUAL_FATAL(cb_sim_step(&s), CB_OK);
        double p[3] = {0, 0, 0}, L[3] = {0, 0, 0};
        for (int i = 0; i < s.w->nv; i++) {
            double xv[3];
            cb_v3_axpy(p, s.w->mass[i], s.w->state.v[i]);
            cb_v3_cross(xv, s.w->state.x[i], s.w->state.v[i]);
            cb_v3_axpy(L, s.w->mass[i], xv);
        }
        pxy = fmax(pxy, hypot(p[0], p[1]));
        if (s.info.contacts > 0) touched = 1;
        if (!touched) pxy_free = pxy;
        lmax = fmax(lmax, cb_v3_norm(L));
        pz = fmax(pz, fabs(p[2]));
        cb_metrics_compute(s.w, &s.info, s.scene->dt, 0.0, &m);
        emax = fmax(emax, m.total_energy);
    }
    fprintf(stderr, "  symmetric drape: max |P_xy| before the first contact %.2e, over 1 s %.2e; max |L| %.2e"
                    " (max |P_z| %.2e); energy %.4f -> peak %.4f J\n", pxy_free, pxy, lmax, pz, e0, emax);
    CU_ASSERT(pxy_free < 1e-15); /* it did fall freely first: exact up to round-off */
    CU_ASSERT(pxy < 2e-6);
    CU_ASSERT(lmax < 2e-6);
    CU_ASSERT(emax <= e0 * 1.01);
    cb_sim_close(&s);
}

CB_TEST_MAIN("avgforce",
    CB_TEST(test_taylor_spring_error_order),
    CB_TEST(test_average_force_halves_cubic_error),
    CB_TEST(test_friction_incline),
    CB_TEST(test_sat_response_returns_to_plane),
    CB_TEST(test_free_flight_momentum),
    CB_TEST(test_sphere_slide_no_penetration),
    CB_TEST(test_self_contact_with_floor_response),
    CB_TEST(test_vertex_through_triangle_in_floor_response),
    CB_TEST(test_ribbons_edge_on),
    CB_TEST(test_irregular_disc_on_sphere),
    CB_TEST(test_symmetric_drape))
