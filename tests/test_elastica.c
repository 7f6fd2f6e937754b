/* tests/test_elastica.c — the self-weighted cantilever's elastica (experiments/harness/elastica.h)
 * against answers from outside: the small-deflection beam (tip slope Gamma/6, drop Gamma/8,
 * root moment Gamma/2), Peirce's approximation and ASTM D1388's 41.5 degrees at L = 2c;
 * then the explicit and newton solvers' cantilever on a coarse strip against the elastica. */
#include "cb_test.h"
#include "cb_sim.h"

#include "core/material.h"
#include "experiments/harness/elastica.h"

static const double DEG = 180.0 / M_PI;

/* Gamma -> 0: theta'' = -Gamma (1 - s) gives theta'(0) = Gamma/2, theta(1) = Gamma/6,
 * w(1) = Gamma/8; the corrections are O(Gamma^3), relative O(Gamma^2). */
static void test_small_deflection(void)
{
    const double gammas[] = { 1e-4, 1e-3, 1e-2 };
    for (int k = 0; k < 3; k++) {
        double g = gammas[k];
        cb_elastica e;
        CU_ASSERT_EQUAL_FATAL(cb_elastica_solve(g, 0, &e, NULL), 0);
        double tol = 5.0 * g * g + 1e-9;
        CB_ASSERT_REL(e.root_curvature / g, 0.5, tol);
        CB_ASSERT_REL(e.tip_slope / g, 1.0 / 6.0, tol);
        CB_ASSERT_REL(e.tip_drop / g, 1.0 / 8.0, tol);
        CB_ASSERT_REL(tan(e.chord) / g, 1.0 / 8.0, tol); /* chord = drop / x, x -> 1 */
    }
}

/* ASTM D1388 reads the overhang at which the clamp-to-tip chord is 41.5 degrees as twice
 * the bending length: Gamma = (L / c)^3 = 8. Peirce's closed form c = L (cos(chord/2) /
 * (8 tan chord))^(1/3) approximates the elastica: exact as the chord -> 0, 1.9% short at
 * 41.5 degrees (it gives L = 1.964 c). */
static void test_peirce(void)
{
    cb_elastica e;
    CU_ASSERT_EQUAL_FATAL(cb_elastica_gamma_for_chord(41.5 / DEG, &e, NULL), 0);
    CB_ASSERT_REL(e.chord * DEG, 41.5, 1e-9);
    double ratio = cbrt(e.gamma); /* L / c */
    fprintf(stderr, "  chord 41.5 deg at Gamma %.6f: L = %.5f c\n", e.gamma, ratio);
    CU_ASSERT(fabs(ratio - 2.0) < 2e-3);
    const double chords[] = { 1.0, 10.0, 25.0, 41.5, 45.0 };
    for (int k = 0; k < 5; k++) {
        double th = chords[k] / DEG;
        CU_ASSERT_EQUAL_FATAL(cb_elastica_gamma_for_chord(th, &e, NULL), 0);
        double c_over_l = cbrt(cos(th / 2) / (8.0 * tan(th)));    /* Peirce */
        double exact = 1.0 / cbrt(e.gamma);                          /* c / L of the elastica */
        double rel = fabs(c_over_l / exact - 1.0);
        if (chords[k] <= 1.0) CU_ASSERT(rel < 1e-4);
        CU_ASSERT(rel < 0.025);
    }
}

/* The RK4 shooting has converged: halving its steps changes nothing that matters; and the
 * branch is the clamped strip's: the chord rises with Gamma over the whole range. */
static void test_converged_and_monotone(void)
{
    const double gammas[] = { 0.1, 8.0, 100.0, 1000.0 };
    for (int k = 0; k < 4; k++) {
        cb_elastica a, b;
        CU_ASSERT_EQUAL_FATAL(cb_elastica_solve(gammas[k], 1000, &a, NULL), 0);
        CU_ASSERT_EQUAL_FATAL(cb_elastica_solve(gammas[k], 2000, &b, NULL), 0);
        CU_ASSERT(fabs(a.chord - b.chord) < 1e-9);
        CU_ASSERT(fabs(a.tip_drop - b.tip_drop) < 1e-9);
        CU_ASSERT(fabs(a.root_curvature - b.root_curvature) < 1e-6 * b.root_curvature);
    }
    double prev = 0;
    for (double g = 0.05; g <= 1000.0; g *= 1.5) {
        cb_elastica e;
        CU_ASSERT_EQUAL_FATAL(cb_elastica_solve(g, 0, &e, NULL), 0);
        CU_ASSERT(e.chord > prev);
        CU_ASSERT(e.tip_slope >= e.chord && e.tip_slope < M_PI / 2 + 1e-12);
        prev = e.chord;
    }
}

static void test_bad_input(void)
{
    cb_elastica e;
    cb_error err;
    CU_ASSERT_EQUAL(cb_elastica_solve(0.0, 0, &e, &err), CB_ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "Gamma"));
    CU_ASSERT_EQUAL(cb_elastica_solve(2e3, 0, &e, &err), CB_ERR_INPUT);
    CU_ASSERT_EQUAL(cb_elastica_solve(NAN, 0, &e, &err), CB_ERR_INPUT);
    CU_ASSERT_EQUAL(cb_elastica_solve(1.0, 5, &e, &err), CB_ERR_INPUT);
    CU_ASSERT_EQUAL(cb_elastica_solve(1.0, 0, NULL, &err), CB_ERR_INPUT);
    CU_ASSERT_EQUAL(cb_elastica_gamma_for_chord(0.0, &e, &err), CB_ERR_INPUT);
    CU_ASSERT_EQUAL(cb_elastica_gamma_for_chord(M_PI / 2, &e, &err), CB_ERR_INPUT);
    CU_ASSERT_EQUAL(cb_elastica_gamma_for_chord(89.0 / DEG, &e, &err), CB_ERR_INPUT); /* beyond Gamma 1e3 */
    CU_ASSERT(isnan(cb_bending_length(0.0, 0.15, 9.81)));
    CB_ASSERT_REL(cb_bending_length(8.0, 1.0, 1.0), 2.0, 1e-15);
}

/* The clamp-to-tip chord of the strip now (clamp: the vertices at rest x = 0; tip: the
 * column at the largest rest x), degrees below the horizontal. */
static double strip_chord(const cb_world *w)
{
    double xmax = -INFINITY, c[3] = {0}, t[3] = {0};
    int nc = 0, nt = 0;
    for (int i = 0; i < w->nv; i++) xmax = fmax(xmax, w->mesh->x[i][0]);
    for (int i = 0; i < w->nv; i++) {
        double rx = w->mesh->x[i][0];
        if (fabs(rx) < 1e-9) { for (int k = 0; k < 3; k++) c[k] += w->state.x[i][k]; nc++; }
        if (fabs(rx - xmax) < 1e-9) { for (int k = 0; k < 3; k++) t[k] += w->state.x[i][k]; nt++; }
    }
    CU_ASSERT_FATAL(nc > 0 && nt > 0);
    return atan2(-(t[2] / nt - c[2] / nc), t[0] / nt - c[0] / nc) * DEG;
}

/* data/scenes/cantilever.yaml's cotton strip (Gamma 8.007, chord 41.50 degrees) at half its
 * resolution: 20 square cells along the overhang (h = 1.17 mm), 4 across, the explicit
 * solver damped to rest. Run at 10 cells too: the discretisation error (first order in h:
 * the clamped cells cannot take the hinges' non-affine relaxation, README) must fall,
 * and at 20 cells be within 4% of the elastica's chord (measured: +7.2% at 10 cells, +3.4%
 * at 20; the scene's strip, 8 cells across: +3.0% at 20, +1.1% at 40, +0.6% at 80). With k_bend = B/6 (the affine continuum limit, without the
 * relaxation) the chord is 47 degrees: this test fails. `solver` is explicit (damping 14/s)
 * or newton (damping 0.068 per 5 ms step, the same 14/s), both on the shared hinges. */
static double cantilever_chord(const char *solver, int cells, double *drift)
{
    const double L = 0.02333, h = L / cells;
    char text[1024], origin[128], size[128], nx[32];
    snprintf(text, sizeof text,
             "name: cantilever_test\nduration: 1.6\ndt: 0.005\n"
             "cloth:\n  material: cotton\n  grid: {nx: 2, ny: 5, size: [1, 1]}\n"
             "  pins: [{box: {min: [-1, -1, -1], max: [1.0e-6, 1, 1]}}]\n"
             "solvers: {explicit: {damping: 14}, newton: {damping: 0.068}}\n");
    snprintf(origin, sizeof origin, "cloth.grid.origin=[%.17g,%.17g,0]", -h, -2 * h);
    snprintf(size, sizeof size, "cloth.grid.size=[%.17g,%.17g]", (cells + 1) * h, 4 * h);
    snprintf(nx, sizeof nx, "cloth.grid.nx=%d", cells + 2);
    const char *sets[] = { origin, size, nx };
    cb_sim s;
    CU_ASSERT_EQUAL_FATAL(cb_sim_open(&s, solver, NULL, text, "data/scenes", sets, 3), 0);
    long n = cb_scene_steps(s.scene), before = n - lround(0.2 / s.scene->dt);
    double at_before = NAN;
    for (long k = 0; k < n; k++) {
        CU_ASSERT_EQUAL_FATAL(cb_sim_step(&s), 0);
        if (k + 1 == before) at_before = strip_chord(s.w);
    }
    double chord = strip_chord(s.w);
    *drift = fabs(chord - at_before);
    cb_sim_close(&s);
    return chord;
}

/* The strip's chord at 10 and 20 cells for `solver`: at rest, within 4% of the elastica's
 * at 20 cells, and converging with h. */
static void check_cantilever(const char *solver)
{
    /* the strip's Gamma from the material, independently of the scene parser */
    char dir[1024], path[1100];
    cb_material m;
    CU_ASSERT_EQUAL_FATAL(cb_material_load(cb_material_dir(dir, sizeof dir), "cotton", &m, path, sizeof path, NULL), 0);
    double B = m.youngs_modulus * pow(m.thickness, 3) / (12.0 * (1.0 - m.poisson_ratio * m.poisson_ratio));
    double gamma = m.areal_density * 9.81 * pow(0.02333, 3) / B;
    cb_elastica e;
    CU_ASSERT_EQUAL_FATAL(cb_elastica_solve(gamma, 0, &e, NULL), 0);
    double want = e.chord * DEG, d10, d20;
    double c10 = cantilever_chord(solver, 10, &d10), c20 = cantilever_chord(solver, 20, &d20);
    fprintf(stderr, "  Gamma %.4f: elastica %.3f deg; %s 10 cells %.3f, 20 cells %.3f "
            "(last 0.2 s moved %.2g, %.2g deg)\n", gamma, want, solver, c10, c20, d10, d20);
    CU_ASSERT(d10 < 0.01 && d20 < 0.01);               /* at rest */
    CU_ASSERT(fabs(c20 - want) < 0.04 * want);
    CU_ASSERT(fabs(c20 - want) < 0.6 * fabs(c10 - want)); /* converging */
}

static void test_explicit_cantilever(void)
{
    check_cantilever("explicit");
}

/* newton on the shared discrete-shells bending (its default, issue 31) meets the elastica
 * like explicit (measured 42.93 and 44.51 degrees at 20 and 10 cells, explicit's to 0.01).
 * With `bending: springs` (the bend springs it solved before) the chord is 81.7 degrees at
 * 20 cells and 77.9 at 10: this test fails. */
static void test_newton_cantilever(void)
{
    check_cantilever("newton");
}

CB_TEST_MAIN("elastica",
             CB_TEST(test_small_deflection),
             CB_TEST(test_peirce),
             CB_TEST(test_converged_and_monotone),
             CB_TEST(test_bad_input),
             CB_TEST(test_explicit_cantilever),
             CB_TEST(test_newton_cantilever))
