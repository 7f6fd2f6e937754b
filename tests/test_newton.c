/* tests/test_newton.c — the Newton reference (solvers/newton.c): fast (superlinear)
 * convergence of the relative gradient, its solution minimises g better than any
 * fms iterate, the projected Hessian keeps compressed cloth solvable, one
 * factorization per iteration, parameter errors. (Momentum, the single-spring decay
 * and the error messages of singular systems are checked for newton in test_fms.c.) */
#include "cb_test.h"
#include "cb_sim.h"

#include "core/scene.h"
#include "core/solver.h"
#include "core/vec3.h"
#include "core/world.h"
#include "solvers/springs.h"

/* scene file + world + solver: tests/cb_sim.h */
static int run_open(cb_sim *r, const char *solver, const char *path, const char *const *sets, int nsets)
{
    return cb_sim_open(r, solver, path, NULL, NULL, sets, nsets);
}

/* The residual after k iterations (k = 1..8) of the same step: decreasing, and
 * superlinear at the end (r_{k+1} <= 10 r_k^1.5 once r_k < 1e-3), reaching 1e-10. */
static void test_superlinear_convergence(void)
{
    double res[9];
    int last = 0;
    for (int k = 1; k <= 8; k++) {
        char it[64];
        snprintf(it, sizeof it, "solvers.newton.max_iterations=%d", k);
        const char *sets[] = {"cloth.grid.nx=15", "cloth.grid.ny=15", "solvers.newton.tolerance=1e-10", it,
                              "solvers.newton.refactor=always"};
        cb_sim r;
        CU_ASSERT_EQUAL_FATAL(run_open(&r, "newton", "data/scenes/hanging.yaml", sets, 5), CB_OK);
        CU_ASSERT_EQUAL_FATAL(cb_sim_step(&r), CB_OK);
        res[k] = r.info.residual;
        CU_ASSERT(r.info.iterations <= k);
        CU_ASSERT_EQUAL(r.info.factorizations, r.info.iterations);
        if (r.info.iterations < k && !last) last = r.info.iterations;
        cb_sim_close(&r);
    }
    fprintf(stderr, "  residuals:");
    for (int k = 1; k <= 8; k++) fprintf(stderr, " %.2e", res[k]);
    fprintf(stderr, "\n");
    CU_ASSERT(res[8] <= 1e-8);
    CU_ASSERT(last > 0 && last <= 7); /* converged before the cap */
    for (int k = 1; k < 8 && res[k] > 1e-10; k++) {
        CU_ASSERT(res[k + 1] < res[k]);
        if (res[k] < 1e-3 && res[k + 1] > 1e-9) CU_ASSERT(res[k + 1] <= 10 * pow(res[k], 1.5));
    }
}

/* Newton's answer minimises g: no fms iterate of the same step has a lower g. */
static void test_minimises_g(void)
{
    const char *base[] = {"cloth.grid.nx=12", "cloth.grid.ny=12", "cloth.pins=[{select: top}]", "cloth.grid.plane=xy",
                          "dt=0.03", "solvers.newton.self_collision=false", "solvers.fms.self_collision=false",
                          "solvers.newton.tolerance=1e-12"};
    cb_sim r;
    CU_ASSERT_EQUAL_FATAL(run_open(&r, "newton", "data/scenes/hanging.yaml", base, 8), CB_OK);
    for (int n = 0; n < 5; n++) CU_ASSERT_EQUAL_FATAL(cb_sim_step(&r), CB_OK);
    cb_world *w = r.w;
    double h = r.scene->dt;
    size_t bytes = (size_t)w->nv * sizeof(double[3]);
    double (*x0)[3] = malloc(bytes), (*v0)[3] = malloc(bytes), (*y)[3] = malloc(bytes);
    memcpy(x0, w->state.x, bytes);
    memcpy(v0, w->state.v, bytes);
    for (int i = 0; i < w->nv; i++)
        for (int k = 0; k < 3; k++) y[i][k] = x0[i][k] + h * v0[i][k];
    cb_spring_set sp;
    cb_error e;
    CU_ASSERT_EQUAL_FATAL(cb_springs_build(w, CB_SPRINGS_MODEL, &sp, &e), CB_OK);
    double t0 = w->state.t;
    CU_ASSERT_EQUAL_FATAL(cb_sim_step(&r), CB_OK);
    double gN = cb_springs_objective(&sp, w, (const double (*)[3])w->state.x, (const double (*)[3])y, h);
    const cb_solver_class *fms = cb_solver_find("fms");
    const int iters[] = {1, 10, 100, 400};
    for (int q = 0; q < 4; q++) {
        char it[64];
        snprintf(it, sizeof it, "solvers.fms.iterations=%d", iters[q]);
        cb_scene *sc = NULL;
        const char *sets[9];
        for (int i = 0; i < 8; i++) sets[i] = base[i];
        sets[8] = it;
        CU_ASSERT_EQUAL_FATAL(cb_scene_load("data/scenes/hanging.yaml", sets, 9, &sc, &e), CB_OK);
        cb_params p = cb_scene_params(sc, "fms");
        void *f = NULL;
        CU_ASSERT_EQUAL_FATAL(fms->create(w, &p, &f, &e), CB_OK);
        memcpy(w->state.x, x0, bytes);
        memcpy(w->state.v, v0, bytes);
        w->state.t = t0;
        cb_step_info info;
        cb_step_info_reset(&info);
        CU_ASSERT_EQUAL_FATAL(fms->step(f, w, h, &info, &e), CB_OK);
        double gF = cb_springs_objective(&sp, w, (const double (*)[3])w->state.x, (const double (*)[3])y, h);
        fprintf(stderr, "  fms %3d iterations: g - g_newton = %.3e (|g_newton| = %.3e)\n", iters[q], gF - gN, fabs(gN));
        CU_ASSERT(gF >= gN - 1e-14 * fabs(gN));
        fms->destroy(f);
        cb_scene_free(&sc);
    }
    cb_springs_release(&sp);
    free(x0);
    free(v0);
    free(y);
    cb_sim_close(&r);
}

/* A cloth compressed to 80% (springs in compression: their exact Hessians are
 * indefinite, an unprojected Newton matrix is not positive definite) is solved: the
 * projected Hessian factors every time, the first steps (far from rest) meet the
 * tolerance, and the cloth relaxes towards rest. (Near rest convergence becomes
 * linear — the projection changes the Hessian of slightly compressed springs — and
 * may take up to max_iterations.) */
static void test_compressed_cloth(void)
{
    const char *sets[] = {"cloth.grid.nx=10", "cloth.grid.ny=10", "cloth.initial_stretch=0.8", "gravity=[0, 0, 0]",
                          "cloth.pins=[]", "solvers.newton.tolerance=1e-9"};
    cb_sim r;
    CU_ASSERT_EQUAL_FATAL(run_open(&r, "newton", "data/scenes/hanging.yaml", sets, 6), CB_OK);
    double e0 = NAN;
    for (int n = 0; n < 20; n++) {
        CU_ASSERT_EQUAL_FATAL(cb_sim_step(&r), CB_OK);
        if (n == 0) e0 = r.info.solver_energy;
        if (n < 4) CU_ASSERT(r.info.residual <= 1e-9); /* far from rest: the tolerance is met */
    }
    fprintf(stderr, "  spring energy after 1 step %.3e J, after 20 steps %.3e J\n", e0, r.info.solver_energy);
    CU_ASSERT(r.info.solver_energy < e0);
    cb_sim_close(&r);
}

static void test_parameters_checked(void)
{
    const char *bad[] = {"solvers.newton.tolerance=0", "solvers.newton.max_iterations=0", "solvers.newton.iterations=3"};
    const char *needle[] = {"tolerance", "max_iterations", "unknown key 'iterations'"};
    for (int i = 0; i < 3; i++) {
        cb_sim r;
        CU_ASSERT_EQUAL(run_open(&r, "newton", "data/scenes/hanging.yaml", &bad[i], 1), CB_ERR_INPUT);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.e.message, needle[i]));
        CU_ASSERT_PTR_NULL(r.solver);
        cb_sim_close(&r);
    }
}

CB_TEST_MAIN("newton",
             CB_TEST(test_superlinear_convergence),
             CB_TEST(test_minimises_g),
             CB_TEST(test_compressed_cloth),
             CB_TEST(test_parameters_checked))
