/* tests/test_explicit.c — the baseline against analytic references: free fall,
 * one spring's period, momentum conservation in free flight, attachments. */
#include "cb_test.h"
#include "cb_sim.h"

#include "contact/colliders.h"
#include "core/scene.h"
#include "core/solver.h"
#include "core/vec3.h"
#include "core/world.h"
#include "experiments/harness/registry.h"

/* scene (file or text) + world + the explicit solver: tests/cb_sim.h */
static int sim_open(cb_sim *s, const char *path_or_text, int is_text, const char *const *sets, int nsets)
{
    return cb_sim_open(s, "explicit", is_text ? NULL : path_or_text, is_text ? path_or_text : NULL, ".", sets, nsets);
}

static const char *fall_scene =
    "name: fall\nduration: 1.0\ndt: 0.01\ngravity: [0.5, 0, -9.81]\n"
    "cloth:\n  grid: {nx: 4, ny: 4, size: [0.3, 0.3], origin: [0, 0, 2]}\n"
    "  stretch: 0\n  bend: 0\n  velocity: [0.1, 0.2, 3.0]\n";

static void test_free_fall_exact(void)
{
    const char *schemes[] = {"solvers.explicit.substeps=1", "solvers.explicit.substeps=7"};
    for (int variant = 0; variant < 2; variant++) {
        cb_sim s;
        CU_ASSERT_EQUAL_FATAL(sim_open(&s, fall_scene, 1, &schemes[variant], 1), CB_OK);
        double (*x0)[3] = calloc((size_t)s.w->nv, sizeof *x0);
        memcpy(x0, s.w->state.x, (size_t)s.w->nv * sizeof *x0);
        double err = 0;
        for (int n = 0; n < 100; n++) {
            CU_ASSERT_EQUAL_FATAL(cb_sim_step(&s), CB_OK);
            double t = s.w->state.t;
            for (int i = 0; i < s.w->nv; i++)
                for (int k = 0; k < 3; k++) {
                    double exact = x0[i][k] + s.scene->cloth.velocity[k] * t + 0.5 * s.w->gravity[k] * t * t;
                    err = fmax(err, fabs(s.w->state.x[i][k] - exact));
                }
        }
        if (!(err < 1e-13)) fprintf(stderr, "  free fall error %g m\n", err);
        CU_ASSERT(err < 1e-13); /* round-off only: positions are O(1) m */
        free(x0);
        cb_sim_close(&s);
    }
    /* with stiff springs in the rest shape the cloth still falls exactly (to round-off) */
    const char *set = "cloth.stretch=1000";
    cb_sim s;
    CU_ASSERT_EQUAL_FATAL(sim_open(&s, fall_scene, 1, &set, 1), CB_OK);
    double z0 = s.w->state.x[5][2];
    for (int n = 0; n < 100; n++) cb_sim_step(&s);
    double t = s.w->state.t;
    CU_ASSERT(fabs(s.w->state.x[5][2] - (z0 + 3.0 * t - 0.5 * 9.81 * t * t)) < 1e-9);
    cb_sim_close(&s);
}

/* One spring between two masses: period 2 pi / sqrt(k / mu) within 0.5% over 10 periods. */
static void test_single_spring_period(void)
{
    const char *sets[] = {"solvers.explicit.substeps=1"};
    cb_sim s;
    CU_ASSERT_EQUAL_FATAL(sim_open(&s, "data/scenes/single_spring.yaml", 0, sets, 1), CB_OK);
    CU_ASSERT_EQUAL_FATAL(s.w->nv, 2);
    double k = s.scene->cloth.stretch, m0 = s.w->mass[0], m1 = s.w->mass[1];
    double mu = m0 * m1 / (m0 + m1), omega = sqrt(k / mu), T = 2 * M_PI / omega;
    double L = s.w->model.rest_length[0];
    double prev = cb_v3_dist(s.w->state.x[0], s.w->state.x[1]) - L, tprev = 0;
    double crossings[64];
    int nc = 0;
    while (nc < 12 && s.w->state.t < 20 * T) {
        CU_ASSERT_EQUAL_FATAL(cb_sim_step(&s), CB_OK);
        double ext = cb_v3_dist(s.w->state.x[0], s.w->state.x[1]) - L;
        if (prev < 0 && ext >= 0) /* upward zero crossing, linearly interpolated */
            crossings[nc++] = tprev + (s.w->state.t - tprev) * (-prev) / (ext - prev);
        prev = ext;
        tprev = s.w->state.t;
    }
    CU_ASSERT_FATAL(nc >= 11);
    double measured = (crossings[nc - 1] - crossings[0]) / (nc - 1);
    fprintf(stderr, "  period %.6f s, analytic %.6f s, relative error %.2e over %d periods\n", measured, T,
            measured / T - 1, nc - 1);
    CB_ASSERT_REL(measured / T, 1.0, 0.005);
    cb_sim_close(&s);
}

static void momenta(const cb_world *w, double P[3], double Lm[3])
{
    cb_v3_zero(P);
    cb_v3_zero(Lm);
    for (int i = 0; i < w->nv; i++) {
        double c[3];
        cb_v3_axpy(P, w->mass[i], w->state.v[i]);
        cb_v3_cross(c, w->state.x[i], w->state.v[i]);
        cb_v3_axpy(Lm, w->mass[i], c);
    }
}

static void test_free_flight_conservation(void)
{
    cb_sim s;
    CU_ASSERT_EQUAL_FATAL(sim_open(&s, "data/scenes/free_flight.yaml", 0, NULL, 0), CB_OK);
    double P0[3], L0[3], P[3], L[3];
    momenta(s.w, P0, L0);
    double E0 = 0;
    for (int n = 0; n < 1000; n++) CU_ASSERT_EQUAL_FATAL(cb_sim_step(&s), CB_OK);
    momenta(s.w, P, L);
    double dP[3], dL[3];
    cb_v3_sub(dP, P, P0);
    cb_v3_sub(dL, L, L0);
    fprintf(stderr, "  after 1000 steps: |dP|/|P| = %.2e, |dL|/|L| = %.2e\n", cb_v3_norm(dP) / cb_v3_norm(P0),
            cb_v3_norm(dL) / cb_v3_norm(L0));
    CU_ASSERT(cb_v3_norm(dP) <= 1e-12 * cb_v3_norm(P0));
    CU_ASSERT(cb_v3_norm(dL) <= 1e-9 * cb_v3_norm(L0));
    /* the cloth did deform (the test is not vacuous) */
    CU_ASSERT(cb_model_max_strain(&s.w->model, (const double (*)[3])s.w->state.x) > 1e-4);
    (void)E0;
    cb_sim_close(&s);
}

static void test_attachments_follow_script(void)
{
    const char *text =
        "name: pins\nduration: 1\ndt: 0.01\n"
        "cloth:\n  grid: {nx: 8, ny: 8, size: [0.5, 0.5], origin: [0, 0, 1], plane: xz}\n"
        "  pins: [{select: corners_top}, {indices: [0], velocity: [0.2, 0, 0.1]}]\n";
    cb_sim s;
    CU_ASSERT_EQUAL_FATAL(sim_open(&s, text, 1, NULL, 0), CB_OK);
    int top_left = 8 * 7, top_right = 8 * 8 - 1;
    double a0[3], b0[3], c0[3], n0[3];
    cb_v3_copy(n0, s.w->state.x[1]);
    cb_v3_copy(a0, s.w->state.x[top_left]);
    cb_v3_copy(b0, s.w->state.x[top_right]);
    cb_v3_copy(c0, s.w->state.x[0]);
    for (int n = 0; n < 50; n++) CU_ASSERT_EQUAL_FATAL(cb_sim_step(&s), CB_OK);
    double t = s.w->state.t;
    CU_ASSERT(cb_v3_dist(s.w->state.x[top_left], a0) == 0.0);
    CU_ASSERT(cb_v3_dist(s.w->state.x[top_right], b0) == 0.0);
    CB_ASSERT_REL(s.w->state.x[0][0], c0[0] + 0.2 * t, 1e-12);
    CB_ASSERT_REL(s.w->state.x[0][2], c0[2] + 0.1 * t, 1e-12);
    /* the free neighbour of the scripted pin was dragged along */
    CU_ASSERT(s.w->state.x[1][0] - n0[0] > 0.05);
    cb_sim_close(&s);
}

static void test_parameters_checked(void)
{
    const char *bad[] = {"solvers.explicit.scheme=leapfrog", "solvers.explicit.damping=-1",
                         "solvers.explicit.substep=3"};
    const char *needle[] = {"scheme", "damping", "unknown key 'substep'"};
    for (int i = 0; i < 3; i++) {
        cb_scene *sc = NULL;
        cb_world *w = NULL;
        void *solver = NULL;
        cb_error e;
        CU_ASSERT_EQUAL_FATAL(cb_scene_load_string(fall_scene, "t.yaml", ".", &bad[i], 1, &sc, &e), CB_OK);
        CU_ASSERT_EQUAL_FATAL(cb_world_create(sc, &w, &e), CB_OK);
        cb_params p = cb_scene_params(sc, "explicit");
        CU_ASSERT_EQUAL(cb_solver_find("explicit")->create(w, &p, &solver, &e), CB_ERR_INPUT);
        if (!strstr(e.message, needle[i])) fprintf(stderr, "  message: %s\n", e.message);
        CU_ASSERT_PTR_NOT_NULL(strstr(e.message, needle[i]));
        CU_ASSERT_PTR_NULL(solver);
        cb_world_free(&w);
        cb_scene_free(&sc);
    }
}

CB_TEST_MAIN("explicit",
             CB_TEST(test_free_fall_exact),
             CB_TEST(test_single_spring_period),
             CB_TEST(test_free_flight_conservation),
             CB_TEST(test_attachments_follow_script),
             CB_TEST(test_parameters_checked))
