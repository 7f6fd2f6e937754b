/* tests/test_collider.c — analytic colliders: signed distance against known values,
 * closest points on the surface, the normal against the finite-difference gradient
 * of the distance, moving colliders, and the contact response (projection,
 * restitution, Coulomb friction). */
#include "cb_test.h"

#include "contact/colliders.h"
#include "core/collider.h"
#include "core/scene.h"
#include "core/vec3.h"
#include "core/world.h"

static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static double urand(void) { return cb_test_uniform(&rng); }

static cb_collider make(cb_collider_type type) { return cb_test_collider(type); }

static void test_known_values(void)
{
    cb_collider s = cb_default_collider(CB_COLLIDER_SPHERE);
    s.radius = 1.0;
    double x[3] = {0, 0, 2}, n[3], cp[3];
    CB_ASSERT_REL(cb_collider_query(&s, 0, x, n, cp), 1.0, 1e-15);
    CB_ASSERT_REL(n[2], 1.0, 1e-15);
    CB_ASSERT_REL(cp[2], 1.0, 1e-15);
    double in[3] = {0.5, 0, 0};
    CB_ASSERT_REL(cb_collider_query(&s, 0, in, n, cp), -0.5, 1e-15);
    CB_ASSERT_REL(n[0], 1.0, 1e-15);

    cb_collider p = cb_default_collider(CB_COLLIDER_PLANE); /* z = 0, normal +z */
    double below[3] = {3, 4, -0.25};
    CB_ASSERT_REL(cb_collider_query(&p, 0, below, n, cp), -0.25, 1e-15);
    CB_ASSERT_REL(cp[0], 3.0, 1e-15);
    CB_ASSERT_REL(cp[2], 0.0, 1e-15);

    cb_collider b = cb_default_collider(CB_COLLIDER_BOX);
    cb_v3_set(b.half, 1, 2, 3);
    double corner[3] = {2, 3, 3}; /* outside near the edge: distance sqrt(1+1) */
    CB_ASSERT_REL(cb_collider_query(&b, 0, corner, n, cp), sqrt(2.0), 1e-15);
    double inside[3] = {0.9, 0, 0};
    CB_ASSERT_REL(cb_collider_query(&b, 0, inside, n, cp), -0.1, 1e-14);
    CB_ASSERT_REL(n[0], 1.0, 1e-15);
    CB_ASSERT_REL(cp[0], 1.0, 1e-15);

    cb_collider c = cb_default_collider(CB_COLLIDER_CAPSULE);
    cb_v3_set(c.p1, 0, 0, 1);
    c.radius = 0.5;
    double side[3] = {1, 0, 0.5}, top[3] = {0, 0, 2};
    CB_ASSERT_REL(cb_collider_query(&c, 0, side, n, cp), 0.5, 1e-15);
    CB_ASSERT_REL(cb_collider_query(&c, 0, top, n, cp), 0.5, 1e-15);
    CB_ASSERT_REL(n[2], 1.0, 1e-15);
}

/* For random points: |x - closest| == |d|, closest lies on the surface, and the
 * normal is the gradient of d wherever d is differentiable. */
static void test_distance_properties(void)
{
    for (int type = CB_COLLIDER_PLANE; type <= CB_COLLIDER_CAPSULE; type++) {
        cb_collider c = make((cb_collider_type)type);
        int checked = 0;
        for (int i = 0; i < 2000; i++) {
            double x[3] = {3 * urand() - 1.5, 3 * urand() - 1.5, 3 * urand() - 1.5}, n[3], cp[3];
            double d = cb_collider_query(&c, 0, x, n, cp);
            CB_ASSERT_REL(cb_v3_norm(n), 1.0, 1e-12);
            CB_ASSERT_REL(cb_v3_dist(x, cp), fabs(d), 1e-12);
            CU_ASSERT(fabs(cb_collider_query(&c, 0, cp, NULL, NULL)) < 1e-12);
            double g[3], h = 1e-7;
            for (int k = 0; k < 3; k++) {
                double xp[3], xm[3];
                cb_v3_copy(xp, x);
                cb_v3_copy(xm, x);
                xp[k] += h;
                xm[k] -= h;
                g[k] = (cb_collider_query(&c, 0, xp, NULL, NULL) - cb_collider_query(&c, 0, xm, NULL, NULL)) / (2 * h);
            }
            /* skip the medial axis, where d has a kink (|grad| < 1) */
            if (fabs(cb_v3_norm(g) - 1.0) > 1e-6) continue;
            checked++;
            double diff[3];
            cb_v3_sub(diff, g, n);
            CU_ASSERT(cb_v3_norm(diff) < 1e-6);
        }
        CU_ASSERT(checked > 1000);
    }
}

/* A moving collider answers as the resting one at the point carried back by its motion;
 * cb_collider_distance gives the query's distance bitwise, for every analytic shape. */
static void test_moving_collider(void)
{
    for (int type = CB_COLLIDER_PLANE; type <= CB_COLLIDER_CAPSULE; type++) {
        cb_collider c = make((cb_collider_type)type);
        cb_v3_set(c.velocity, 0.3, -0.2, 1.1);
        for (int i = 0; i < 50; i++) {
            double x[3] = {urand(), urand(), urand()}, t = 2 * urand(), xs[3], n1[3], n2[3], cp1[3], cp2[3];
            for (int k = 0; k < 3; k++) xs[k] = x[k] - c.velocity[k] * t;
            cb_collider s = c;
            cb_v3_zero(s.velocity);
            double d1 = cb_collider_query(&c, t, x, n1, cp1);
            double d2 = cb_collider_query(&s, 0, xs, n2, cp2);
            CB_ASSERT_REL(d1, d2, 1e-12);
            for (int k = 0; k < 3; k++) CB_ASSERT_REL(cp1[k], cp2[k] + c.velocity[k] * t, 1e-12);
            /* the distance alone (acm's certificates) is bitwise the query's */
            double d3 = cb_collider_distance(&c, t, x);
            CU_ASSERT(memcmp(&d3, &d1, sizeof d1) == 0);
        }
    }
}

/* Contact response through a world with one free vertex above a floor. */
static cb_world *floor_world(cb_scene **sp, double friction, double restitution)
{
    char text[1024];
    snprintf(text, sizeof text,
             "name: floor\nduration: 1\ndt: 0.01\ngravity: [0, 0, -9.81]\n"
             "cloth:\n  grid: {nx: 2, ny: 2, size: [1, 1], origin: [0, 0, 0.5]}\n"
             "colliders:\n  - {type: plane, point: [0, 0, 0], normal: [0, 0, 1], friction: %g, restitution: %g}\n",
             friction, restitution);
    cb_error e;
    int rc = cb_scene_load_string(text, "floor.yaml", ".", NULL, 0, sp, &e);
    if (rc) fprintf(stderr, "  %s\n", e.message);
    CU_ASSERT_EQUAL_FATAL(rc, CB_OK);
    cb_world *w = NULL;
    CU_ASSERT_EQUAL_FATAL(cb_world_create(*sp, &w, &e), CB_OK);
    return w;
}

static void test_contact_response(void)
{
    cb_scene *s = NULL;
    cb_world *w = floor_world(&s, 0.5, 0.25);
    double x[3] = {0.2, 0.3, -0.01}, v[3] = {1.0, 0.0, -2.0}, imp[3] = {0, 0, 0};
    int hit = cb_world_resolve_collider_contact(w, 0, 0.0, 0.001, x, v, imp, NULL);
    CU_ASSERT_EQUAL(hit, 1);
    CB_ASSERT_REL(x[2], 0.001, 1e-15);           /* projected to the offset */
    CB_ASSERT_REL(v[2], 0.5, 1e-15);             /* restitution 0.25 of 2 m/s */
    /* friction: tangential speed reduced by mu * dvn = 0.5 * 2.5 = 1.25 > 1: stops */
    CB_ASSERT_REL(v[0], 0.0, 1e-15);
    CB_ASSERT_REL(imp[2], w->mass[0] * 2.5, 1e-12);
    /* sliding: tangential 3 m/s, reduced by 1.25 */
    double x2[3] = {0.2, 0.3, -0.01}, v2[3] = {3.0, 0.0, -2.0};
    cb_world_resolve_collider_contact(w, 0, 0.0, 0.0, x2, v2, NULL, NULL);
    CB_ASSERT_REL(v2[0], 1.75, 1e-14);
    /* separating vertex inside: projected, velocity untouched */
    double x3[3] = {0.2, 0.3, -0.01}, v3[3] = {1.0, 0.0, 2.0};
    cb_world_resolve_collider_contact(w, 0, 0.0, 0.0, x3, v3, NULL, NULL);
    CB_ASSERT_REL(v3[0], 1.0, 1e-15);
    CB_ASSERT_REL(v3[2], 2.0, 1e-15);
    /* a vertex above the offset is untouched */
    double x4[3] = {0.2, 0.3, 0.1}, v4[3] = {0, 0, -1};
    CU_ASSERT_EQUAL(cb_world_resolve_collider_contact(w, 0, 0.0, 0.001, x4, v4, NULL, NULL), 0);
    CB_ASSERT_REL(v4[2], -1.0, 1e-15);
    cb_world_free(&w);
    cb_scene_free(&s);
}

CB_TEST_MAIN("collider",
             CB_TEST(test_known_values),
             CB_TEST(test_distance_properties),
             CB_TEST(test_moving_collider),
             CB_TEST(test_contact_response))
