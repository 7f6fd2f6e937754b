/* tests/test_model.c — the shared cloth model: energies and their exact gradients
 * against central finite differences, the dihedral angle against known folds,
 * and the invariances (rigid motions) that make internal forces conserve momentum. */
#include <float.h>
#include <string.h>

#include "cb_test.h"

#include "core/mesh.h"
#include "core/model.h"
#include "core/vec3.h"

static uint64_t rng_state = 88172645463325252ULL;
static double urand(void) { return cb_test_uniform(&rng_state); } /* xorshift64, uniform in [0,1) */

typedef double (*energy_fn)(const cb_cloth_model *, const double (*)[3]);
typedef void (*force_fn)(const cb_cloth_model *, const double (*)[3], double (*)[3]);

/* Max relative error of -force against the central-difference gradient of energy,
 * over every coordinate, relative to the largest gradient entry. */
static double fd_error(const cb_cloth_model *m, double (*x)[3], int nv, energy_fn E, force_fn F)
{
    double (*f)[3] = calloc((size_t)nv, sizeof *f);
    F(m, (const double (*)[3])x, f);
    double gmax = 0, emax = 0;
    for (int i = 0; i < nv; i++)
        for (int k = 0; k < 3; k++) gmax = fmax(gmax, fabs(f[i][k]));
    for (int i = 0; i < nv; i++)
        for (int k = 0; k < 3; k++) {
            double h = 1e-6, x0 = x[i][k];
            x[i][k] = x0 + h;
            double ep = E(m, (const double (*)[3])x);
            x[i][k] = x0 - h;
            double em = E(m, (const double (*)[3])x);
            x[i][k] = x0;
            double g = (ep - em) / (2 * h);
            emax = fmax(emax, fabs(g + f[i][k]));
        }
    free(f);
    return emax / fmax(gmax, 1e-300);
}

static cb_mesh *grid(int nx, int ny)
{
    cb_grid_def d = cb_default_grid_def();
    d.nx = nx;
    d.ny = ny;
    cb_mesh *m = NULL;
    cb_mesh_grid(&d, &m, NULL);
    return m;
}

static void perturb(const cb_mesh *mesh, double (*x)[3], double amp)
{
    for (int i = 0; i < mesh->nv; i++)
        for (int k = 0; k < 3; k++) x[i][k] = mesh->x[i][k] + amp * (2 * urand() - 1);
}

static void test_stretch_gradient_fd(void)
{
    cb_mesh *mesh = grid(5, 4);
    cb_cloth_model m;
    CU_ASSERT_EQUAL_FATAL(cb_model_init(&m, mesh, 250.0, 0.0, 0.0, 0.1, NULL), CB_OK);
    double (*x)[3] = calloc((size_t)mesh->nv, sizeof *x);
    for (int trial = 0; trial < 20; trial++) {
        perturb(mesh, x, 0.08);
        double err = fd_error(&m, x, mesh->nv, cb_model_stretch_energy, cb_model_add_stretch_forces);
        if (!(err < 1e-6)) fprintf(stderr, "  trial %d: relative error %g\n", trial, err);
        CU_ASSERT(err < 1e-6);
    }
    free(x);
    cb_model_release(&m);
    cb_mesh_free(&mesh);
}

static void test_bend_gradient_fd(void)
{
    cb_mesh *mesh = grid(5, 4);
    cb_cloth_model m;
    CU_ASSERT_EQUAL_FATAL(cb_model_init(&m, mesh, 0.0, 0.01, 0.0, 0.1, NULL), CB_OK);
    double (*x)[3] = calloc((size_t)mesh->nv, sizeof *x);
    for (int trial = 0; trial < 20; trial++) {
        perturb(mesh, x, 0.06);
        double err = fd_error(&m, x, mesh->nv, cb_model_bend_energy, cb_model_add_bend_forces);
        if (!(err < 1e-6)) fprintf(stderr, "  trial %d: relative error %g\n", trial, err);
        CU_ASSERT(err < 1e-6);
    }
    /* also with non-zero rest angles: a curved rest mesh */
    cb_mesh *curved = grid(5, 4);
    for (int i = 0; i < curved->nv; i++) curved->x[i][2] = 0.3 * sin(3.0 * curved->x[i][0]) * curved->x[i][1];
    cb_cloth_model mc;
    CU_ASSERT_EQUAL_FATAL(cb_model_init(&mc, curved, 0.0, 0.01, 0.0, 0.1, NULL), CB_OK);
    int nonflat = 0;
    for (int i = 0; i < curved->nh; i++) nonflat += fabs(mc.hinge_rest_angle[i]) > 1e-3;
    CU_ASSERT(nonflat > 0);
    CU_ASSERT(cb_model_bend_energy(&mc, (const double (*)[3])curved->x) < 1e-20);
    for (int trial = 0; trial < 10; trial++) {
        perturb(curved, x, 0.05);
        double err = fd_error(&mc, x, curved->nv, cb_model_bend_energy, cb_model_add_bend_forces);
        CU_ASSERT(err < 1e-6);
    }
    cb_model_release(&mc);
    cb_mesh_free(&curved);
    free(x);
    cb_model_release(&m);
    cb_mesh_free(&mesh);
}

/* Asserts that gradient g matches the central differences of the angle (fast: 0 libm's
 * atan2, 1 cb_atan2) at x, to 1e-6 of its largest entry. */
static void check_dihedral_fd(double x[4][3], const double g[4][3], int fast)
{
    double gmax = 0, emax = 0;
    for (int v = 0; v < 4; v++)
        for (int k = 0; k < 3; k++) {
            double h = 1e-7, x0 = x[v][k];
            x[v][k] = x0 + h;
            double tp = cb_dihedral_angle_at(x[0], x[1], x[2], x[3], NULL, fast);
            x[v][k] = x0 - h;
            double tm = cb_dihedral_angle_at(x[0], x[1], x[2], x[3], NULL, fast);
            x[v][k] = x0;
            if (fabs(tp - tm) > 1.0) continue; /* across the +-pi branch cut */
            emax = fmax(emax, fabs((tp - tm) / (2 * h) - g[v][k]));
            gmax = fmax(gmax, fabs(g[v][k]));
        }
    CU_ASSERT(emax <= 1e-6 * fmax(gmax, 1.0));
}

/* The analytic gradient of the angle itself, vertex by vertex. */
static void test_dihedral_gradient_fd(void)
{
    for (int trial = 0; trial < 200; trial++) {
        double x[4][3], g[4][3];
        for (int v = 0; v < 4; v++)
            for (int k = 0; k < 3; k++) x[v][k] = 2 * urand() - 1;
        cb_dihedral_angle(x[0], x[1], x[2], x[3], g);
        check_dihedral_fd(x, (const double (*)[3])g, 0);
    }
}

/* Distance of a from b in units in the last place of b. */
static double ulps(double a, double b)
{
    if (a == b) return 0.0;
    return fabs(a - b) / (nextafter(fabs(b), INFINITY) - fabs(b));
}

/* cb_atan2 (core/atan2.h) against libm's atan2: within 2 ulp over every octant, at
 * small and large ratios, across the reduction's switch at z = 0.66 and the octant
 * boundary z = 1; signed zeros, the axes, infinities and NaN as atan2 gives them. */
static void test_fast_atan2(void)
{
    double worst = 0.0;
    for (int i = 0; i < 200000; i++) {
        double phi = (2 * urand() - 1) * M_PI, r = exp(40 * urand() - 20);
        double y = r * sin(phi), x = r * cos(phi);
        worst = fmax(worst, ulps(cb_atan2(y, x), atan2(y, x)));
    }
    /* the ratios where the branches meet, on both sides */
    double zs[] = {0.66, nextafter(0.66, 0), nextafter(0.66, 1), 1.0, nextafter(1.0, 0), 1e-300, 1e-8, 0.1};
    for (int i = 0; i < 8; i++)
        for (int q = 0; q < 8; q++) {
            double y = zs[i], x = 1.0;
            if (q & 1) y = -y;
            if (q & 2) x = -x;
            if (q & 4) {
                double t = x;
                x = y;
                y = t;
            }
            worst = fmax(worst, ulps(cb_atan2(y, x), atan2(y, x)));
        }
    fprintf(stderr, "  cb_atan2: worst %.2f ulp from atan2\n", worst);
    CU_ASSERT(worst <= 2.0);
    double sp[][2] = {{0.0, 1.0}, {-0.0, 1.0}, {0.0, -1.0}, {-0.0, -1.0}, {1.0, 0.0}, {-1.0, 0.0}, {0.0, 0.0},
                      {-0.0, -0.0}, {1.0, INFINITY}, {1.0, -INFINITY}, {INFINITY, 1.0}, {INFINITY, INFINITY}};
    for (int i = 0; i < 12; i++) {
        double a = cb_atan2(sp[i][0], sp[i][1]), b = atan2(sp[i][0], sp[i][1]);
        CU_ASSERT(a == b && signbit(a) == signbit(b));
    }
    CU_ASSERT(isnan(cb_atan2(NAN, 1.0)) && isnan(cb_atan2(1.0, NAN)));
}

/* The dihedral angle with cb_atan2 (acm's hinges) is the model's to round-off, and its
 * gradient is the model's bitwise (the same arithmetic) and the finite differences of
 * its own angle. */
static void test_dihedral_fast_angle(void)
{
    for (int trial = 0; trial < 2000; trial++) {
        double x[4][3], g[4][3], gf[4][3];
        for (int v = 0; v < 4; v++)
            for (int k = 0; k < 3; k++) x[v][k] = 2 * urand() - 1;
        double th = cb_dihedral_angle(x[0], x[1], x[2], x[3], g);
        double tf = cb_dihedral_angle_at(x[0], x[1], x[2], x[3], gf, 1);
        CU_ASSERT(fabs(tf - th) <= 4 * DBL_EPSILON * fmax(fabs(th), 1e-300) || ulps(tf, th) <= 2.0);
        CU_ASSERT(memcmp(g, gf, sizeof g) == 0);
        if (trial < 200) check_dihedral_fd(x, (const double (*)[3])gf, 1);
    }
}

static void test_dihedral_known_folds(void)
{
    /* edge along x; x2 at +y; x3 folded by angle phi out of the plane */
    double x0[3] = {0, 0, 0}, x1[3] = {1, 0, 0}, x2[3] = {0.5, 1, 0};
    double phis[] = {0.0, 0.3, M_PI / 2, -M_PI / 2, 2.5, -2.5};
    for (int i = 0; i < 6; i++) {
        double phi = phis[i];
        double x3[3] = {0.5, -cos(phi), sin(phi)};
        double theta = cb_dihedral_angle(x0, x1, x2, x3, NULL);
        CB_ASSERT_REL(fabs(theta), fabs(phi), 1e-12);
    }
    /* folding x3 up and folding x2 up bend the same way (same sign) */
    double up3[3] = {0.5, -1, 0.2}, up2[3] = {0.5, 1, 0.2}, flat3[3] = {0.5, -1, 0};
    double a = cb_dihedral_angle(x0, x1, x2, up3, NULL);
    double b = cb_dihedral_angle(x0, x1, up2, flat3, NULL);
    CU_ASSERT(a * b > 0);
}

static void test_energy_rigid_invariance(void)
{
    cb_mesh *mesh = grid(6, 5);
    cb_cloth_model m;
    CU_ASSERT_EQUAL_FATAL(cb_model_init(&m, mesh, 100.0, 0.01, 0.0, 0.1, NULL), CB_OK);
    /* zero at rest */
    CU_ASSERT(cb_model_stretch_energy(&m, (const double (*)[3])mesh->x) == 0.0);
    CU_ASSERT(cb_model_bend_energy(&m, (const double (*)[3])mesh->x) < 1e-25);
    double (*x)[3] = calloc((size_t)mesh->nv, sizeof *x), (*y)[3] = calloc((size_t)mesh->nv, sizeof *y);
    double (*f)[3] = calloc((size_t)mesh->nv, sizeof *f);
    perturb(mesh, x, 0.1);
    /* rotate by a random rotation (axis-angle) and translate */
    double ax[3] = {urand(), urand(), urand()}, ang = 1.234, tr[3] = {0.3, -2, 5};
    cb_v3_normalize(ax);
    for (int i = 0; i < mesh->nv; i++) {
        double v[3], c[3], r[3];
        cb_v3_copy(v, x[i]);
        cb_v3_cross(c, ax, v);
        double d = cb_v3_dot(ax, v);
        for (int k = 0; k < 3; k++) r[k] = v[k] * cos(ang) + c[k] * sin(ang) + ax[k] * d * (1 - cos(ang));
        cb_v3_add(y[i], r, tr);
    }
    CB_ASSERT_REL(cb_model_stretch_energy(&m, (const double (*)[3])x),
                  cb_model_stretch_energy(&m, (const double (*)[3])y), 1e-10);
    CB_ASSERT_REL(cb_model_bend_energy(&m, (const double (*)[3])x), cb_model_bend_energy(&m, (const double (*)[3])y),
                  1e-10);
    /* internal forces: zero net force and zero net torque */
    cb_model_add_stretch_forces(&m, (const double (*)[3])x, f);
    cb_model_add_bend_forces(&m, (const double (*)[3])x, f);
    double F[3] = {0, 0, 0}, T[3] = {0, 0, 0}, fmaxv = 0;
    for (int i = 0; i < mesh->nv; i++) {
        double c[3];
        cb_v3_add(F, F, f[i]);
        cb_v3_cross(c, x[i], f[i]);
        cb_v3_add(T, T, c);
        fmaxv = fmax(fmaxv, cb_v3_norm(f[i]));
    }
    CU_ASSERT(cb_v3_norm(F) < 1e-12 * fmaxv * mesh->nv);
    CU_ASSERT(cb_v3_norm(T) < 1e-12 * fmaxv * mesh->nv);
    free(x);
    free(y);
    free(f);
    cb_model_release(&m);
    cb_mesh_free(&mesh);
}

static void test_max_strain_and_weights(void)
{
    cb_mesh *mesh = grid(3, 3);
    cb_cloth_model m;
    CU_ASSERT_EQUAL_FATAL(cb_model_init(&m, mesh, 1.0, 1.0, 0.0, 0.1, NULL), CB_OK);
    double (*x)[3] = calloc((size_t)mesh->nv, sizeof *x);
    for (int i = 0; i < mesh->nv; i++) cb_v3_scale(x[i], mesh->x[i], 1.25);
    CB_ASSERT_REL(cb_model_max_strain(&m, (const double (*)[3])x), 0.25, 1e-12);
    /* hinge weight 3|e|^2/(A1+A2): unit grid cell of side 0.5, axis-aligned hinge: 3*0.25/0.25 = 3 */
    int found = 0;
    for (int i = 0; i < mesh->nh; i++) {
        const int *e = mesh->e[mesh->he[i]];
        double l = cb_v3_dist(mesh->x[e[0]], mesh->x[e[1]]);
        if (fabs(l - 0.5) < 1e-12) {
            CB_ASSERT_REL(m.hinge_weight[i], 3.0, 1e-12);
            found = 1;
        }
    }
    CU_ASSERT(found);
    cb_model_release(&m);
    cb_error e;
    CU_ASSERT_EQUAL(cb_model_init(&m, mesh, -1.0, 1.0, 0.0, 0.1, &e), CB_ERR_INPUT);
    CU_ASSERT_PTR_NULL(m.rest_length);
    free(x);
    cb_model_release(&m);
    cb_mesh_free(&mesh);
}

CB_TEST_MAIN("model",
             CB_TEST(test_stretch_gradient_fd),
             CB_TEST(test_bend_gradient_fd),
             CB_TEST(test_dihedral_gradient_fd),
             CB_TEST(test_fast_atan2),
             CB_TEST(test_dihedral_fast_angle),
             CB_TEST(test_dihedral_known_folds),
             CB_TEST(test_energy_rigid_invariance),
             CB_TEST(test_max_strain_and_weights))
