/* tests/test_gauntlet.c — what the contact gauntlet's scenes need (issue 33): pins that
 * follow a scripted rigid motion (a rotation about an axis through a point), checked
 * against the analytic motion. */
#include "cb_test.h"

#include "cb_sim.h"
#include "core/vec3.h"

/* A 1 x 0.5 sheet in the plane z = 1; its left and right columns twisted in opposite
 * senses about the x axis through (0, 0.25, 1), the right one also carried along x. */
static const char *twist =
    "name: twist\nduration: 0.01\ndt: 0.001\ngravity: [0, 0, 0]\n"
    "cloth:\n  grid: {nx: 9, ny: 5, size: [1, 0.5], origin: [0, 0, 1]}\n"
    "  pins:\n"
    "    - {select: left, angular_velocity: [3, 0, 0], pivot: [0, 0.25, 1]}\n"
    "    - {select: right, angular_velocity: [-3, 0, 0], pivot: [1, 0.25, 1], velocity: [0.1, 0, 0]}\n";

/* After a period 2 pi / omega every pin is back at its start (plus the translation);
 * after half a period it is mirrored through the axis; its velocity is the derivative
 * of its path (central differences) and the initial state has it. */
static void test_rotating_pins_follow_the_rotation(void)
{
    cb_sim s;
    CU_ASSERT_FATAL(cb_sim_world(&s, NULL, twist, NULL, NULL, 0) == 0);
    cb_world *w = s.w;
    CU_ASSERT_EQUAL(w->npinned, 10);
    double T = 2.0 * M_PI / 3.0;
    int checked = 0;
    for (int i = 0; i < w->nv; i++) {
        if (!w->pinned[i]) continue;
        const double *x0 = w->pin_origin[i], *v = w->pin_velocity[i];
        double p[3], q[3], axis[3] = {x0[0], 0.25, 1.0}, want[3], dv[3], vel[3], a[3], b[3];
        cb_world_pin_target(w, i, T, p);
        for (int k = 0; k < 3; k++) want[k] = x0[k] + v[k] * T;
        CU_ASSERT(cb_v3_dist(p, want) < 1e-12);
        cb_world_pin_target(w, i, 0.5 * T, q);
        for (int k = 0; k < 3; k++) want[k] = 2.0 * axis[k] - x0[k];
        want[0] = x0[0] + v[0] * 0.5 * T;
        CU_ASSERT(cb_v3_dist(q, want) < 1e-12);
        double t = 0.3, h = 1e-6;
        cb_world_pin_target(w, i, t + h, a);
        cb_world_pin_target(w, i, t - h, b);
        for (int k = 0; k < 3; k++) dv[k] = (a[k] - b[k]) / (2 * h);
        cb_world_pin_velocity(w, i, t, vel);
        CU_ASSERT(cb_v3_dist(vel, dv) < 1e-7);
        /* the initial state: at the origin, moving with omega x r */
        CU_ASSERT(cb_v3_dist(w->state.x[i], x0) == 0.0);
        double r[3], wr[3];
        cb_v3_sub(r, x0, axis);
        cb_v3_cross(wr, w->pin_omega[i], r);
        cb_v3_add(wr, wr, v);
        CU_ASSERT(cb_v3_dist(w->state.v[i], wr) < 1e-15);
        checked++;
    }
    CU_ASSERT_EQUAL(checked, 10);
    cb_sim_close(&s);
}

/* The solvers put pinned vertices on their rotating targets: after a run of steps with
 * each method, every pin is where the analytic motion says. */
static void test_solvers_follow_rotating_pins(void)
{
    const char *methods[] = {"explicit", "avgforce", "acm", "pbd", "xpbd", "fms", "newton"};
    for (size_t m = 0; m < sizeof methods / sizeof methods[0]; m++) {
        cb_sim s;
        CU_ASSERT_FATAL(cb_sim_open(&s, methods[m], NULL, twist, NULL, NULL, 0) == 0);
        int bad = 0;
        for (int n = 0; n < 10; n++) CU_ASSERT_EQUAL(cb_sim_step(&s), 0);
        for (int i = 0; i < s.w->nv; i++) {
            if (!s.w->pinned[i]) continue;
            double p[3], v[3];
            cb_world_pin_target(s.w, i, s.w->state.t, p);
            cb_world_pin_velocity(s.w, i, s.w->state.t, v);
            bad += cb_v3_dist(p, s.w->state.x[i]) > 1e-12 || cb_v3_dist(v, s.w->state.v[i]) > 1e-9;
        }
        if (bad) fprintf(stderr, "  %s: %d pins off their rotating targets\n", methods[m], bad);
        CU_ASSERT_EQUAL(bad, 0);
        cb_sim_close(&s);
    }
}

CB_TEST_MAIN("gauntlet",
             CB_TEST(test_rotating_pins_follow_the_rotation),
             CB_TEST(test_solvers_follow_rotating_pins))
