/* tests/test_material.c — measured fabrics (core/material.h): the files of data/materials/,
 * the scene's `cloth.material` (defaults that the cloth block's keys override, unknown
 * names refused with the known ones), and the stretch mapping k_stretch = 3/4 E t checked
 * against an isotropic membrane (E t = 4/3 k_stretch, Poisson's ratio 1/3) on a grid. */
#include "cb_test.h"

#include "core/material.h"
#include "core/model.h"
#include "core/scene.h"

static int parse(const char *cloth_extra, cb_scene **s, cb_error *err)
{
    char text[1024];
    snprintf(text, sizeof text, "name: m\nduration: 0.01\ndt: 0.005\n"
             "cloth:\n  grid: {nx: 4, ny: 4, size: [0.1, 0.1]}\n%s", cloth_extra);
    return cb_scene_parse_string(text, "m.yaml", "data/scenes", NULL, 0, s, err);
}

/* B = E t^3 / (12 (1 - nu^2)) from Penava et al.'s cotton, computed here by hand:
 * 0.821e6 * 0.318e-3^3 = 2.64011e-5; / (12 * (1 - 0.243^2) = 11.29141) = 2.33816e-6 N m. */
static void test_cotton(void)
{
    char dir[1024], path[1100];
    cb_material m;
    cb_error err;
    CU_ASSERT_EQUAL_FATAL(cb_material_load(cb_material_dir(dir, sizeof dir), "cotton", &m, path, sizeof path, &err), 0);
    CB_ASSERT_REL(m.areal_density, 0.1503, 1e-15);
    CB_ASSERT_REL(m.bending_stiffness / 2.33816e-6, 1.0, 1e-5);
    CB_ASSERT_REL(m.k_bend, m.bending_stiffness / 4.8, 1e-15);
    CB_ASSERT_REL(m.k_stretch, 0.75 * 0.821e6 * 0.318e-3, 1e-15);
    CU_ASSERT_PTR_NOT_NULL(strstr(path, "materials/cotton.yaml"));
    /* a fabric given by its areal density alone sets nothing else */
    CU_ASSERT_EQUAL_FATAL(cb_material_load(dir, "denim", &m, path, sizeof path, &err), 0);
    CB_ASSERT_REL(m.areal_density, 0.324, 1e-15);
    CU_ASSERT(isnan(m.k_bend) && isnan(m.k_stretch) && isnan(m.thickness));
}

static void test_scene_material(void)
{
    cb_scene *s = NULL;
    cb_error err;
    char dir[1024], path[1100];
    cb_material m;
    CU_ASSERT_EQUAL_FATAL(cb_material_load(cb_material_dir(dir, sizeof dir), "wool", &m, path, sizeof path, &err), 0);
    CU_ASSERT_EQUAL_FATAL(parse("  material: wool\n", &s, &err), 0);
    CB_ASSERT_REL(s->cloth.density, 0.2348, 1e-15);
    CB_ASSERT_REL(s->cloth.thickness, 0.568e-3, 1e-15);
    CB_ASSERT_REL(s->cloth.stretch, m.k_stretch, 1e-15);
    CB_ASSERT_REL(s->cloth.bend, m.k_bend, 1e-15);
    int noted = 0; /* the material file is one of the scene's files (its digest goes into run files) */
    for (int i = 0; i < s->nfiles; i++) noted |= strstr(s->files[i], "materials/wool.yaml") != NULL;
    CU_ASSERT(noted);
    cb_scene_free(&s);
    /* the cloth block's own keys override the material's */
    CU_ASSERT_EQUAL_FATAL(parse("  material: wool\n  bend: 1.0e-5\n  thickness: 0.001\n", &s, &err), 0);
    CB_ASSERT_REL(s->cloth.bend, 1e-5, 1e-15);
    CB_ASSERT_REL(s->cloth.thickness, 0.001, 1e-15);
    CB_ASSERT_REL(s->cloth.density, 0.2348, 1e-15);
    cb_scene_free(&s);
    /* density only: stretch and bend keep the scene defaults */
    CU_ASSERT_EQUAL_FATAL(parse("  material: gray_interlock\n", &s, &err), 0);
    CB_ASSERT_REL(s->cloth.density, 0.187, 1e-15);
    CB_ASSERT_REL(s->cloth.stretch, 1000.0, 1e-15);
    cb_scene_free(&s);
}

static void test_unknown_refused(void)
{
    cb_scene *s = NULL;
    cb_error err;
    const char *bad[] = { "  material: silk\n", "  material: ../scenes/hanging\n", "  material: ''\n",
                          "  material: [cotton]\n" };
    for (int k = 0; k < 4; k++) {
        CU_ASSERT_EQUAL(parse(bad[k], &s, &err), CB_ERR_INPUT);
        CU_ASSERT_PTR_NULL(s);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "m.yaml:6:"));
        CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "cloth.material"));
        if (k < 2) {
            CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "unknown material"));
            CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "known: cotton, denim, gray_interlock, polyester, wool, wool_lycra"));
        }
    }
    /* a tet body has no fabric */
    const char *tets = "name: m\nduration: 0.01\ndt: 0.005\ncloth:\n  tets: {box: {n: [1, 1, 1], size: [0.1, 0.1, 0.1]}}\n"
                       "  material: cotton\n";
    CU_ASSERT_EQUAL(cb_scene_parse_string(tets, "t.yaml", ".", NULL, 0, &s, &err), CB_ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "not a tet body"));
}

/* Material files are checked: a source is required, density needs thickness, E and nu
 * come together, values in range (files in a folder of our own). */
static void test_bad_files(void)
{
    static const struct { const char *name, *text, *want; } cases[] = {
        { "nosource", "areal_density: 0.1\n", "missing 'source'" },
        { "nothick", "source: x\ndensity: 400\n", "needs thickness" },
        { "both", "source: x\ndensity: 400\nareal_density: 0.1\nthickness: 1e-3\n", "exactly one of density" },
        { "halfe", "source: x\nareal_density: 0.1\nthickness: 1e-3\nyoungs_modulus: 1e6\n", "come together" },
        { "badnu", "source: x\nareal_density: 0.1\nthickness: 1e-3\nyoungs_modulus: 1e6\npoisson_ratio: 0.7\n",
          "poisson_ratio: expected a value in (0, 0.5)" },
        { "extra", "source: x\nareal_density: 0.1\ncolour: red\n", "colour" },
    };
    char path[1100];
    cb_material m;
    cb_error err;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char file[64];
        snprintf(file, sizeof file, "%s.yaml", cases[k].name);
        cb_test_write_tmp(file, cases[k].text);
        int rc = cb_material_load(cb_test_tmpdir(), cases[k].name, &m, path, sizeof path, &err);
        CU_ASSERT_EQUAL(rc, CB_ERR_INPUT);
        if (rc == CB_ERR_INPUT && !strstr(err.message, cases[k].want))
            fprintf(stderr, "  %s: '%s' lacks '%s'\n", cases[k].name, err.message, cases[k].want);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.message, cases[k].want));
    }
    cb_test_write_tmp("good.yaml", "source: x\ndensity: 500\nthickness: 2e-4\n");
    CU_ASSERT_EQUAL(cb_material_load(cb_test_tmpdir(), "good", &m, path, sizeof path, &err), 0);
    CB_ASSERT_REL(m.areal_density, 0.1, 1e-15);
}

/* The shared springs on square cells with alternating diagonals are, under an affine
 * strain, the isotropic membrane of E t = 4/3 k and nu = 1/3: energy per area
 * 1/2 E t / (1 - nu^2) (exx^2 + eyy^2 + 2 nu exx eyy) + E t / (1 + nu) exy^2. Edges on
 * the boundary count half (their cells lie half outside). */
static double membrane_energy(const cb_mesh *g, double k, double exx, double eyy, double exy, double size)
{
    cb_cloth_model m;
    CU_ASSERT_EQUAL_FATAL(cb_model_init(&m, g, k, 0.0, 0.0, 1.0, NULL), 0);
    double (*x)[3] = malloc((size_t)g->nv * sizeof *x);
    for (int i = 0; i < g->nv; i++) {
        const double *r = g->x[i];
        x[i][0] = r[0] + exx * r[0] + exy * r[1];
        x[i][1] = r[1] + exy * r[0] + eyy * r[1];
        x[i][2] = r[2];
    }
    double E = 0;
    for (int e = 0; e < g->ne; e++) {
        const double *a = g->x[g->e[e][0]], *b = g->x[g->e[e][1]];
        int boundary = 0;
        for (int c = 0; c < 2; c++)
            boundary |= (fabs(a[c]) < 1e-12 && fabs(b[c]) < 1e-12) ||
                        (fabs(a[c] - size) < 1e-12 && fabs(b[c] - size) < 1e-12);
        E += (boundary ? 0.5 : 1.0) * cb_model_edge_energy(&m, e, (const double (*)[3])x);
    }
    free(x);
    cb_model_release(&m);
    return E / (size * size);
}

static void test_stretch_mapping(void)
{
    const double k = 200.0, size = 1.0, eps = 1e-5, Et = 4.0 / 3.0 * k, nu = 1.0 / 3.0;
    cb_mesh *g = cb_test_grid(9, 9, size, CB_DIAG_ALTERNATE);
    const double cases[4][3] = { { eps, 0, 0 }, { 0, eps, 0 }, { eps, -0.5 * eps, 0 }, { 0, 0, eps } };
    for (int c = 0; c < 4; c++) {
        double exx = cases[c][0], eyy = cases[c][1], exy = cases[c][2];
        double want = 0.5 * Et / (1 - nu * nu) * (exx * exx + eyy * eyy + 2 * nu * exx * eyy) +
                      Et / (1 + nu) * exy * exy;
        CB_ASSERT_REL(membrane_energy(g, k, exx, eyy, exy, size) / want, 1.0, 1e-4);
    }
    /* uniaxial stress: the lateral strain that minimises the energy is -nu exx = -exx/3 */
    double e0 = membrane_energy(g, k, eps, -eps / 3, 0, size);
    CU_ASSERT(membrane_energy(g, k, eps, -eps / 3 + 0.02 * eps, 0, size) > e0);
    CU_ASSERT(membrane_energy(g, k, eps, -eps / 3 - 0.02 * eps, 0, size) > e0);
    CB_ASSERT_REL(e0 / (0.5 * Et * eps * eps), 1.0, 1e-4);
    CB_ASSERT_REL(cb_material_k_stretch(0.821e6, 0.318e-3) * 4.0 / 3.0, 0.821e6 * 0.318e-3, 1e-15);
    cb_mesh_free(&g);
}

CB_TEST_MAIN("material",
             CB_TEST(test_cotton),
             CB_TEST(test_scene_material),
             CB_TEST(test_unknown_refused),
             CB_TEST(test_bad_files),
             CB_TEST(test_stretch_mapping))
