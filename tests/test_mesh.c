/* tests/test_mesh.c — grid generation, OBJ reading, topology, masses, and every
 * rejected input with the file and line in the message. */
#include "cb_test.h"

#include "core/mesh.h"
#include "core/vec3.h"

/* Expect an OBJ to be rejected with status and a message containing `needle`. */
static void expect_obj_error(const char *name, const char *text, int status, const char *needle)
{
    const char *path = cb_test_write_tmp(name, text);
    cb_mesh *m = NULL;
    cb_error e;
    cb_error_clear(&e);
    int rc = cb_mesh_read_obj(path, &m, &e);
    CU_ASSERT_EQUAL(rc, status);
    CU_ASSERT_PTR_NULL(m);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.message, path));
    if (!strstr(e.message, needle)) fprintf(stderr, "  message '%s' lacks '%s'\n", e.message, needle);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.message, needle));
    cb_mesh_free(&m);
}

static void test_grid_counts_and_topology(void)
{
    int sizes[][2] = {{2, 2}, {3, 5}, {10, 7}};
    for (int c = 0; c < 3; c++)
        for (int diag = 0; diag < 3; diag++) {
            cb_grid_def d = cb_default_grid_def();
            d.nx = sizes[c][0];
            d.ny = sizes[c][1];
            d.diagonal = (cb_diagonal)diag;
            cb_mesh *m = NULL;
            CU_ASSERT_EQUAL_FATAL(cb_mesh_grid(&d, &m, NULL), CB_OK);
            int nx = d.nx, ny = d.ny;
            CU_ASSERT_EQUAL(m->nv, nx * ny);
            CU_ASSERT_EQUAL(m->nf, 2 * (nx - 1) * (ny - 1));
            CU_ASSERT_EQUAL(m->ne, (nx - 1) * ny + nx * (ny - 1) + (nx - 1) * (ny - 1));
            CU_ASSERT_EQUAL(m->nh, m->ne - 2 * (nx - 1) - 2 * (ny - 1));
            CU_ASSERT_EQUAL(m->nv - m->ne + m->nf, 1); /* a disc */
            /* hinge orientation: h2 is opposite in the face where the edge runs h0 -> h1 */
            for (int i = 0; i < m->nh; i++) {
                const int *h = m->h[i];
                int e = m->he[i], f0 = m->ef[e][0], ok = 0;
                for (int k = 0; k < 3; k++)
                    ok |= m->f[f0][k] == h[0] && m->f[f0][(k + 1) % 3] == h[1] && m->f[f0][(k + 2) % 3] == h[2];
                CU_ASSERT(ok);
                CU_ASSERT_EQUAL(cb_mesh_find_edge(m, h[1], h[0]), e);
            }
            int nb = 0;
            for (int i = 0; i < m->nv; i++) nb += m->boundary[i];
            CU_ASSERT_EQUAL(nb, 2 * (nx - 1) + 2 * (ny - 1));
            /* lumped masses sum to density * area */
            double *mass = calloc((size_t)m->nv, sizeof *mass), sum = 0;
            cb_mesh_lumped_masses(m, 0.3, 0.0, mass);
            for (int i = 0; i < m->nv; i++) sum += mass[i];
            CB_ASSERT_REL(sum, 0.3 * d.size[0] * d.size[1], 1e-12);
            free(mass);
            cb_mesh_free(&m);
            CU_ASSERT_PTR_NULL(m);
        }
}

static void test_grid_planes_and_normals(void)
{
    cb_grid_def d = cb_default_grid_def();
    d.nx = 4;
    d.ny = 3;
    d.size[0] = 2.0;
    d.size[1] = 1.0;
    cb_v3_set(d.origin, 1, 2, 3);
    for (int p = 0; p < 3; p++) {
        d.plane = (cb_plane)p;
        cb_mesh *m = NULL;
        CU_ASSERT_EQUAL_FATAL(cb_mesh_grid(&d, &m, NULL), CB_OK);
        int ua = p == 2 ? 1 : 0, va = p == 0 ? 1 : 2;
        const double *last = m->x[m->nv - 1];
        CB_ASSERT_REL(last[ua], d.origin[ua] + 2.0, 1e-15);
        CB_ASSERT_REL(last[va], d.origin[va] + 1.0, 1e-15);
        /* every face has the same orientation (normal along +u x v) */
        for (int t = 0; t < m->nf; t++) {
            double a[3], b[3], n[3];
            cb_v3_sub(a, m->x[m->f[t][1]], m->x[m->f[t][0]]);
            cb_v3_sub(b, m->x[m->f[t][2]], m->x[m->f[t][0]]);
            cb_v3_cross(n, a, b);
            int w = 3 - ua - va;
            CU_ASSERT(n[w] * (p == 1 ? -1.0 : 1.0) > 0);
        }
        cb_mesh_free(&m);
    }
}

static void test_grid_bad_input(void)
{
    cb_grid_def d = cb_default_grid_def();
    cb_mesh *m = NULL;
    cb_error e;
    d.nx = 1;
    CU_ASSERT_EQUAL(cb_mesh_grid(&d, &m, &e), CB_ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.message, "nx and ny"));
    d.nx = 4;
    d.size[0] = -1;
    CU_ASSERT_EQUAL(cb_mesh_grid(&d, &m, &e), CB_ERR_INPUT);
    d.size[0] = 1;
    d.origin[1] = NAN;
    CU_ASSERT_EQUAL(cb_mesh_grid(&d, &m, &e), CB_ERR_INPUT);
    CU_ASSERT_PTR_NULL(m);
}

static void test_obj_disc(void)
{
    cb_mesh *m = NULL;
    cb_error e;
    int rc = cb_mesh_read_obj("data/meshes/disc.obj", &m, &e);
    if (rc) fprintf(stderr, "  %s\n", e.message);
    CU_ASSERT_EQUAL_FATAL(rc, CB_OK);
    CU_ASSERT_EQUAL(m->nv, 91);
    CU_ASSERT_EQUAL(m->nv - m->ne + m->nf, 1);
    CU_ASSERT_EQUAL(m->grid_nx, 0);
    double area = 0;
    for (int t = 0; t < m->nf; t++) area += cb_triangle_area((const double (*)[3])m->x, m->f[t]);
    /* inscribed 30-gon of radius 0.3 */
    CB_ASSERT_REL(area, 0.5 * 30 * 0.09 * sin(2 * M_PI / 30), 1e-5);
    cb_mesh_free(&m);
}

static void test_obj_forms(void)
{
    const char *path = cb_test_write_tmp("forms.obj",
                                  "# comment\n"
                                  "o thing\n"
                                  "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\n"
                                  "vn 0 0 1\nvt 0 0\n"
                                  "f 1//1 2//1 3//1\n"
                                  "f -4/1/1 -2/1/1 -1/1/1\n"
                                  "v 2 0 0\nv 2 1 0\n"
                                  "f 2/1 5/1 6/1 3/1   # a quad\n");
    cb_mesh *m = NULL;
    cb_error e;
    int rc = cb_mesh_read_obj(path, &m, &e);
    if (rc) fprintf(stderr, "  %s\n", e.message);
    CU_ASSERT_EQUAL_FATAL(rc, CB_OK);
    CU_ASSERT_EQUAL(m->nv, 6);
    CU_ASSERT_EQUAL(m->nf, 4);
    CU_ASSERT_EQUAL(m->f[1][0], 0);
    CU_ASSERT_EQUAL(m->f[1][1], 2);
    CU_ASSERT_EQUAL(m->f[1][2], 3);
    CU_ASSERT_EQUAL(m->f[3][0], 1);
    CU_ASSERT_EQUAL(m->f[3][2], 2);
    cb_mesh_free(&m);
}

static void test_obj_springs(void)
{
    cb_mesh *m = NULL;
    CU_ASSERT_EQUAL_FATAL(cb_mesh_read_obj("data/meshes/spring.obj", &m, NULL), CB_OK);
    CU_ASSERT_EQUAL(m->nf, 0);
    CU_ASSERT_EQUAL(m->ne, 1);
    CU_ASSERT_EQUAL(m->nh, 0);
    CU_ASSERT_EQUAL(m->ef[0][0], -1);
    double mass[2];
    cb_mesh_lumped_masses(m, 1.0, 2.0, mass);
    CB_ASSERT_REL(mass[0], 1.0, 1e-15);
    CB_ASSERT_REL(mass[1], 1.0, 1e-15);
    cb_mesh_free(&m);
    /* a spring along a triangle edge does not duplicate the edge */
    const char *path = cb_test_write_tmp("tri_spring.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\nl 1 2\n");
    CU_ASSERT_EQUAL_FATAL(cb_mesh_read_obj(path, &m, NULL), CB_OK);
    CU_ASSERT_EQUAL(m->ne, 3);
    cb_mesh_free(&m);
}

static void test_obj_rejects_nonmanifold(void)
{
    expect_obj_error("nonmanifold.obj",
                     "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 -1 0\nv 0 0 1\n"
                     "f 1 2 3\nf 2 1 4\nf 1 2 5\n",
                     CB_ERR_INPUT, ":8: triangle 2");
    const char *path = cb_test_write_tmp("nm2.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 -1 0\nv 0 0 1\n"
                                              "f 1 2 3\nf 2 1 4\nf 1 2 5\n");
    cb_mesh *m = NULL;
    cb_error e;
    cb_mesh_read_obj(path, &m, &e);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.message, "non-manifold edge (0, 1)"));
}

static void test_obj_rejects_degenerate(void)
{
    expect_obj_error("repeat_index.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\nf 1 1 2\n", CB_ERR_INPUT,
                     ":5: triangle 1");
    expect_obj_error("zero_area.obj", "v 0 0 0\nv 1 0 0\nv 2 0 0\nv 0 1 0\nf 1 2 4\nf 1 2 3\n", CB_ERR_INPUT,
                     ":6: triangle 1 (0 1 2) is degenerate: zero area");
    expect_obj_error("repeated_tri.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\n# again\nf 1 2 3\nf 3 1 2\n",
                     CB_ERR_INPUT, ":6: triangle 1 repeats triangle 0");
}

static void test_obj_rejects_bad_indices_and_numbers(void)
{
    expect_obj_error("range.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n", CB_ERR_INPUT,
                     ":4: face corner 3: vertex index 4 out of range");
    expect_obj_error("zero_index.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n", CB_ERR_INPUT, ":4:");
    expect_obj_error("nan.obj", "v 0 0 0\nv 1 nan 0\nv 0 1 0\nf 1 2 3\n", CB_ERR_INPUT,
                     ":2: vertex coordinate 2 is not finite");
    expect_obj_error("inf.obj", "v 0 0 0\nv 1 0 inf\nv 0 1 0\nf 1 2 3\n", CB_ERR_INPUT, ":2:");
    expect_obj_error("word.obj", "v 0 0 0\nv 1 abc 0\nv 0 1 0\nf 1 2 3\n", CB_ERR_INPUT,
                     ":2: vertex coordinate 2 is not a number");
    expect_obj_error("short.obj", "v 0 0\n", CB_ERR_INPUT, ":1: vertex needs 3 coordinates");
    expect_obj_error("twoface.obj", "v 0 0 0\nv 1 0 0\nf 1 2\n", CB_ERR_INPUT, ":3: face needs at least 3");
    expect_obj_error("unused.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 5 5 5\nf 1 2 3\n", CB_ERR_INPUT,
                     "vertex 3 belongs to no triangle");
}

static void test_obj_rejects_empty_and_unreadable(void)
{
    expect_obj_error("empty.obj", "# nothing here\n", CB_ERR_INPUT, "empty mesh");
    expect_obj_error("verts_only.obj", "v 0 0 0\nv 1 0 0\n", CB_ERR_INPUT, "empty mesh");
    cb_mesh *m = NULL;
    cb_error e;
    CU_ASSERT_EQUAL(cb_mesh_read_obj("/nonexistent/folder/x.obj", &m, &e), CB_ERR_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.message, "/nonexistent/folder/x.obj: cannot read"));
}

static void test_from_arrays_rejects(void)
{
    double x[3][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
    int f[1][3] = {{0, 1, 3}};
    cb_mesh *m = NULL;
    cb_error e;
    CU_ASSERT_EQUAL(cb_mesh_from_arrays(3, (const double (*)[3])x, 1, (const int (*)[3])f, "arr", &m, &e),
                    CB_ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.message, "arr: triangle 0: vertex index 3 out of range"));
    CU_ASSERT_EQUAL(cb_mesh_from_arrays(0, NULL, 0, NULL, "arr", &m, &e), CB_ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.message, "empty mesh"));
}

CB_TEST_MAIN("mesh",
             CB_TEST(test_grid_counts_and_topology),
             CB_TEST(test_grid_planes_and_normals),
             CB_TEST(test_grid_bad_input),
             CB_TEST(test_obj_disc),
             CB_TEST(test_obj_forms),
             CB_TEST(test_obj_springs),
             CB_TEST(test_obj_rejects_nonmanifold),
             CB_TEST(test_obj_rejects_degenerate),
             CB_TEST(test_obj_rejects_bad_indices_and_numbers),
             CB_TEST(test_obj_rejects_empty_and_unreadable),
             CB_TEST(test_from_arrays_rejects))
