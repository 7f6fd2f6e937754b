/* tests/test_penetration.c — the smallest signed distance of a segment, a triangle and
 * a vertex path from each analytic collider (contact/penetration.h) against dense
 * sampling of the primitive, and the penetration metrics on a cloth whose vertices are
 * all outside a collider while its edges and triangles are not. */
#include "cb_test.h"

#include "contact/colliders.h"
#include "experiments/harness/metrics.h"
#include "contact/penetration.h"
#include "core/scene.h"
#include "core/vec3.h"
#include "core/world.h"

static uint64_t rng = 0x2545F4914F6CDD1DULL;
static double urand(void) { return cb_test_uniform(&rng); }

static cb_collider make(cb_collider_type type)
{
    cb_collider c = cb_test_collider(type);
    cb_v3_set(c.velocity, 0.3, -0.2, 0.1); /* queried at t = 0.7: the motion is part of the test */
    return c;
}

/* Smallest sampled distance over the primitive (n = 2: 4001 points; n = 3: a
 * barycentric grid of 300 divisions), and the sampling's spacing bound. */
static double sampled(const cb_collider *c, double t, int n, const double (*p)[3], double *spacing)
{
    double best = INFINITY, longest = 0;
    for (int i = 0; i < n; i++) longest = fmax(longest, cb_v3_dist(p[i], p[(i + 1) % n]));
    int N = n == 2 ? 4000 : 300;
    for (int i = 0; i <= N; i++)
        for (int j = 0; j <= (n == 2 ? 0 : N - i); j++) {
            double u = (double)i / N, v = (double)j / N, q[3];
            for (int k = 0; k < 3; k++)
                q[k] = n == 2 ? p[0][k] + u * (p[1][k] - p[0][k])
                              : p[0][k] + u * (p[1][k] - p[0][k]) + v * (p[2][k] - p[0][k]);
            best = fmin(best, cb_collider_query(c, t, q, NULL, NULL));
        }
    *spacing = longest / N;
    return best;
}

/* Random segments and triangles around each collider: where the exact value is
 * negative, no sample is deeper than it and the samples come within their spacing of
 * it; a primitive with every vertex outside is found inside where the samples say so. */
static void test_primitives_against_sampling(void)
{
    for (int type = CB_COLLIDER_PLANE; type <= CB_COLLIDER_CAPSULE; type++) {
        cb_collider c = make((cb_collider_type)type);
        int inside = 0, hidden = 0;
        for (int trial = 0; trial < 120; trial++) {
            int n = 2 + trial % 2;
            double p[3][3], t = 0.7;
            for (int i = 0; i < n; i++)
                for (int k = 0; k < 3; k++) p[i][k] = 2.4 * urand() - 1.2 + c.velocity[k] * t;
            double exact = cb_collider_primitive_distance(&c, t, n, (const double (*)[3])p), h;
            double s = sampled(&c, t, n, (const double (*)[3])p, &h);
            double vmin = INFINITY;
            for (int i = 0; i < n; i++) vmin = fmin(vmin, cb_collider_query(&c, t, p[i], NULL, NULL));
            CU_ASSERT(exact <= vmin + 1e-12);                 /* never above a vertex */
            if (s < -h) CU_ASSERT(exact < 0);               /* no penetration missed */
            if (exact < 0) {
                inside++;
                CU_ASSERT(s >= exact - 1e-12);               /* never deeper than a point */
                CU_ASSERT(s - exact <= h + 1e-12);           /* and attained */
                if (vmin > 0) hidden++;
            }
        }
        CU_ASSERT(inside > 20);
        if (type != CB_COLLIDER_PLANE) CU_ASSERT(hidden > 0); /* a plane's minimum is at a vertex */
    }
}

/* A vertex path through the collider with both ends outside (in the collider's moving
 * frame) is inside by the depth of the sphere's chord; the same straight path seen
 * from a collider moving along with it is not. */
static void test_vertex_path(void)
{
    cb_collider s = cb_default_collider(CB_COLLIDER_SPHERE);
    s.radius = 0.5;
    double a[3] = {-1, 0, 0.3}, b[3] = {1, 0, 0.3};
    CB_ASSERT_REL(cb_collider_path_distance(&s, 0.0, a, 0.1, b), 0.3 - 0.5, 1e-14);
    cb_v3_set(s.velocity, 20, 0, 0); /* the sphere moves with the vertex: it stays 1 m left of it */
    cb_v3_set(s.center, 1, 0, 0);
    double d = cb_collider_path_distance(&s, 0.0, a, 0.1, b);
    CB_ASSERT_REL(d, sqrt(4.0 + 0.09) - 0.5, 1e-12);
    CU_ASSERT(cb_collider_query(&s, 0.0, a, NULL, NULL) > 0 && cb_collider_query(&s, 0.1, b, NULL, NULL) > 0);
}

/* A coarse cloth draped over a sphere with every vertex on the surface or outside:
 * the vertex metric reads 0 while its flat triangles cut into the sphere. */
static void test_metrics_see_edges_and_faces(void)
{
    const char *text =
        "name: coarse\nduration: 0.01\ndt: 0.01\n"
        "cloth: {grid: {nx: 3, ny: 3, size: [0.8, 0.8], origin: [-0.4, -0.4, 0]}}\n"
        "colliders:\n  - {type: sphere, center: [0, 0, 0], radius: 0.5}\n";
    const char *path = cb_test_write_tmp("coarse.yaml", text);
    cb_scene *sc = NULL;
    cb_world *w = NULL;
    cb_error err;
    CU_ASSERT_FATAL(cb_scene_load(path, NULL, 0, &sc, &err) == 0);
    CU_ASSERT_FATAL(cb_world_create(sc, &w, &err) == 0);
    /* lift every vertex radially onto the sphere of radius 0.5 (+1 mm) */
    for (int i = 0; i < w->nv; i++) {
        double *x = w->state.x[i];
        double r = cb_v3_norm(x);
        if (r == 0) x[2] = 0.501;
        else
            for (int k = 0; k < 3; k++) x[k] *= 0.501 / r;
    }
    cb_metrics m;
    cb_metrics_compute(w, NULL, 0.01, 0.0, &m);
    CU_ASSERT(m.vertex_penetrations == 0);
    CU_ASSERT(m.vertex_max_depth == 0);
    CU_ASSERT(m.collider_penetrations > 0);
    CU_ASSERT(m.collider_max_depth > 0.01); /* the flat triangles' chords sag ~cm below the surface */
    /* a non-finite vertex counts for nothing */
    w->state.x[4][0] = NAN;
    cb_metrics_compute(w, NULL, 0.01, 0.0, &m);
    CU_ASSERT(isfinite(m.collider_penetrations) && isfinite(m.collider_max_depth));
    /* and the exact self-intersection count refuses it: NaN, not a count */
    cb_metrics_compute_expensive(w, NULL, &m);
    CU_ASSERT(isnan(m.self_intersections));
    cb_world_free(&w);
    cb_scene_free(&sc);
}

/* Moving primitives (every vertex on a straight line over [0.2, 0.7] while the collider
 * moves too, spinning about its axis where it can): against the exact distance at 401
 * times, cb_collider_swept_primitive_inside says 1 when a sampled time is inside deeper
 * than its stated bound (2^-11 of the largest relative displacement), and says 1 only
 * where some sampled time comes within the time spacing's reach of the inside. */
static void test_swept_primitives_against_sampling(void)
{
    for (int type = CB_COLLIDER_SPHERE; type <= CB_COLLIDER_CAPSULE; type++) {
        cb_collider c = make((cb_collider_type)type);
        if (type == CB_COLLIDER_CAPSULE) { /* a spin about its own segment keeps the shape */
            cb_v3_sub(c.angular_velocity, c.p1, c.p0);
            cb_v3_scale(c.angular_velocity, c.angular_velocity, 40.0);
        }
        int yes = 0, between = 0;
        for (int trial = 0; trial < 160; trial++) {
            int n = 2 + trial % 2;
            double p0[3][3], p1[3][3], t0 = 0.2, t1 = 0.7, speed = 0, worst = INFINITY;
            for (int i = 0; i < n; i++) {
                for (int k = 0; k < 3; k++) {
                    p0[i][k] = 2.4 * urand() - 1.2;
                    p1[i][k] = 2.4 * urand() - 1.2;
                }
                double d[3];
                for (int k = 0; k < 3; k++) d[k] = p1[i][k] - p0[i][k] - c.velocity[k] * (t1 - t0);
                speed = fmax(speed, cb_v3_norm(d));
            }
            int vertex_in = 0;
            for (int s = 0; s <= 400; s++) {
                double u = s / 400.0, q[3][3], t = t0 + u * (t1 - t0);
                for (int i = 0; i < n; i++) {
                    for (int k = 0; k < 3; k++) q[i][k] = p0[i][k] + u * (p1[i][k] - p0[i][k]);
                    vertex_in |= cb_collider_query(&c, t, q[i], NULL, NULL) < 0;
                }
                worst = fmin(worst, cb_collider_primitive_distance(&c, t, n, (const double (*)[3])q));
            }
            int got = cb_collider_swept_primitive_inside(&c, t0, t1, n, (const double (*)[3])p0,
                                                         (const double (*)[3])p1);
            if (worst < -speed * ldexp(1.0, -11) - 1e-12) CU_ASSERT_EQUAL(got, 1);
            if (got) CU_ASSERT(worst < speed / 800.0 + 1e-12);
            yes += got;
            between += got && !vertex_in;
        }
        CU_ASSERT(yes > 20);
        CU_ASSERT(between > 0); /* some went inside between their vertices only */
    }
}

CB_TEST_MAIN("penetration",
             CB_TEST(test_primitives_against_sampling),
             CB_TEST(test_vertex_path),
             CB_TEST(test_metrics_see_edges_and_faces),
             CB_TEST(test_swept_primitives_against_sampling))
