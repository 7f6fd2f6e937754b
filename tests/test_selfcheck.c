/* tests/test_selfcheck.c — self-intersection count and minimum separation
 * (contact/selfcheck.h): against O(n^2) brute force on soups, grids and a crumpled
 * cloth for every volume kind, against analytic values on constructed cases, context
 * reuse, and bad input (empty mesh, NaN, zero-area triangles). */
#include "cb_test.h"

#include <stdint.h>

#include "contact/distance.h"
#include "contact/predicates.h"
#include "contact/selfcheck.h"
#include "core/mesh.h"
#include "core/vec3.h"

static const cb_bv_kind kinds[4] = {CB_BV_AABB, CB_BV_KDOP14, CB_BV_KDOP18, CB_BV_KDOP26};

/* Edges that belong to a triangle (spring-only edges are not part of the checks). */
static unsigned char *triangle_edges(const cb_mesh *m)
{
    unsigned char *in = cb_calloc((size_t)m->ne, 1);
    for (int t = 0; t < m->nf; t++)
        for (int k = 0; k < 3; k++) in[cb_mesh_find_edge(m, m->f[t][k], m->f[t][(k + 1) % 3])] = 1;
    return in;
}

static long brute_intersections(const cb_mesh *m, const double (*x)[3])
{
    unsigned char *in = triangle_edges(m);
    long n = 0;
    for (int e = 0; e < m->ne; e++) {
        if (!in[e]) continue;
        int p = m->e[e][0], q = m->e[e][1];
        for (int t = 0; t < m->nf; t++) {
            const int *f = m->f[t];
            if (p == f[0] || p == f[1] || p == f[2] || q == f[0] || q == f[1] || q == f[2]) continue;
            n += cb_segment_triangle_intersect(x[p], x[q], x[f[0]], x[f[1]], x[f[2]]) != 0;
        }
    }
    free(in);
    return n;
}

static double brute_min_separation(const cb_mesh *m, const double (*x)[3])
{
    unsigned char *in = triangle_edges(m), *vin = cb_calloc((size_t)m->nv, 1);
    for (int t = 0; t < m->nf; t++)
        for (int k = 0; k < 3; k++) vin[m->f[t][k]] = 1;
    double best = INFINITY;
    for (int v = 0; v < m->nv; v++) {
        if (!vin[v]) continue;
        for (int t = 0; t < m->nf; t++) {
            const int *f = m->f[t];
            if (v == f[0] || v == f[1] || v == f[2]) continue;
            best = fmin(best, cb_point_triangle_distance2(x[v], x[f[0]], x[f[1]], x[f[2]], NULL, NULL));
        }
    }
    for (int a = 0; a < m->ne; a++) {
        if (!in[a]) continue;
        for (int b = a + 1; b < m->ne; b++) {
            const int *p = m->e[a], *q = m->e[b];
            if (!in[b] || p[0] == q[0] || p[0] == q[1] || p[1] == q[0] || p[1] == q[1]) continue;
            best = fmin(best, cb_edge_edge_distance2(x[p[0]], x[p[1]], x[q[0]], x[q[1]], NULL, NULL, NULL, NULL));
        }
    }
    free(in);
    free(vin);
    return sqrt(best);
}

/* Every kind: count and separation equal the brute force. */
static void check_all_kinds(const char *name, const cb_mesh *m, const double (*x)[3], int expect_intersections)
{
    long bn = brute_intersections(m, x);
    double bd = brute_min_separation(m, x);
    if (expect_intersections) {
        CU_ASSERT(bn > 0);
    } else {
        CU_ASSERT(bn == 0);
    }
    CU_ASSERT(isfinite(bd) && bd > 0);
    for (int ki = 0; ki < 4; ki++) {
        cb_selfcheck *s = NULL;
        cb_error err = {0};
        CU_ASSERT_FATAL(cb_selfcheck_create(m, kinds[ki], &s, &err) == 0);
        long n = -2;
        double d = NAN;
        int kind = -5, a = -5, b = -5;
        CU_ASSERT(cb_selfcheck_intersections(s, x, &n, &err) == 0);
        CU_ASSERT(cb_selfcheck_min_separation(s, x, &d, &kind, &a, &b, &err) == 0);
        if (n != bn || !(fabs(d - bd) <= 1e-12 * bd))
            fprintf(stderr, "  %s %s: intersections %ld (brute %ld), min separation %.17g (brute %.17g)\n", name,
                    cb_bv_name(kinds[ki]), n, bn, d, bd);
        CU_ASSERT(n == bn);
        CB_ASSERT_REL(d, bd, 1e-12);
        /* the reported pair attains the distance */
        CU_ASSERT(kind == 0 || kind == 1);
        double pd = NAN;
        if (kind == 0) {
            const int *f = m->f[b];
            CU_ASSERT(a != f[0] && a != f[1] && a != f[2]);
            pd = sqrt(cb_point_triangle_distance2(x[a], x[f[0]], x[f[1]], x[f[2]], NULL, NULL));
        } else if (kind == 1) {
            const int *p = m->e[a], *q = m->e[b];
            CU_ASSERT(p[0] != q[0] && p[0] != q[1] && p[1] != q[0] && p[1] != q[1]);
            pd = sqrt(cb_edge_edge_distance2(x[p[0]], x[p[1]], x[q[0]], x[q[1]], NULL, NULL, NULL, NULL));
        }
        CB_ASSERT_REL(pd, d, 1e-12);
        cb_selfcheck_free(&s);
        CU_ASSERT(s == NULL);
    }
    /* the one-shot wrappers agree */
    long n;
    double d;
    CU_ASSERT(cb_self_intersections(m, x, &n, NULL) == 0);
    CU_ASSERT(n == bn);
    CU_ASSERT(cb_min_separation(m, x, &d, NULL) == 0);
    CB_ASSERT_REL(d, bd, 1e-12);
}

static void test_soup(void)
{
    cb_mesh *m = cb_test_soup(400, 1, 0.0, 31);
    check_all_kinds("soup", m, (const double (*)[3])m->x, 1);
    cb_mesh_free(&m);
}

static void test_grid(void)
{
    cb_mesh *m = cb_test_grid(17, 13, 1.0, CB_DIAG_ALTERNATE);
    check_all_kinds("grid", m, (const double (*)[3])m->x, 0);
    /* a smooth, non-intersecting bend */
    double (*x)[3] = cb_calloc((size_t)m->nv, sizeof *x);
    for (int v = 0; v < m->nv; v++) cb_v3_set(x[v], m->x[v][0], m->x[v][1], 0.2 * sin(3 * m->x[v][0]));
    check_all_kinds("bent grid", m, (const double (*)[3])x, 0);
    free(x);
    cb_mesh_free(&m);
}

static void test_crumpled(void)
{
    for (int s = 0; s < 3; s++) {
        cb_mesh *m = cb_test_grid(24, 22, 1.0, s == 1 ? CB_DIAG_LEFT : CB_DIAG_ALTERNATE);
        double (*x)[3] = cb_test_crumple(m, 40 + s, 0.12);
        check_all_kinds("crumpled", m, (const double (*)[3])x, 1);
        free(x);
        cb_mesh_free(&m);
    }
}

/* A crumpled cloth snapped to a coarse lattice (multiples of 1/32): many vertices lie
 * exactly on other triangles' planes, edges touch triangles, zero-area triangles occur,
 * so the count's shortcuts (shared plane signs, box rejection, the inlined orient3d
 * filter) meet their undecided and degenerate cases; the count must still equal the
 * brute force over cb_segment_triangle_intersect. */
static void test_lattice_crumpled(void)
{
    for (int s = 0; s < 3; s++) {
        cb_mesh *m = cb_test_grid(20, 18, 1.0, s == 1 ? CB_DIAG_LEFT : CB_DIAG_ALTERNATE);
        double (*x)[3] = cb_test_crumple(m, 50 + s, 0.15);
        for (int v = 0; v < m->nv; v++)
            for (int k = 0; k < 3; k++) x[v][k] = round(x[v][k] * (s == 2 ? 16 : 32)) / (s == 2 ? 16 : 32);
        long bn = brute_intersections(m, (const double (*)[3])x);
        CU_ASSERT(bn > 0);
        for (int ki = 0; ki < 4; ki++) {
            cb_selfcheck *c = NULL;
            long n = -2;
            CU_ASSERT_FATAL(cb_selfcheck_create(m, kinds[ki], &c, NULL) == 0);
            CU_ASSERT(cb_selfcheck_intersections(c, (const double (*)[3])x, &n, NULL) >= 0);
            if (n != bn) fprintf(stderr, "  lattice %d %s: %ld (brute %ld)\n", s, cb_bv_name(kinds[ki]), n, bn);
            CU_ASSERT(n == bn);
            cb_selfcheck_free(&c);
        }
        free(x);
        cb_mesh_free(&m);
    }
}

/* Flat grid of hx x hy cells, every cell split the same way: the closest non-adjacent
 * pair is a vertex against the triangle across a cell diagonal, at hx hy / |(hx, hy)|
 * (the height of the right triangle); edge-edge pairs are at least min(hx, hy) apart. */
static void test_flat_grid_analytic(void)
{
    const double hx = 0.1, hy = 0.8 / 6;
    cb_mesh *m = cb_test_grid(9, 7, 0.8, CB_DIAG_RIGHT);  /* 8 x 6 cells over 0.8 x 0.8 */
    double d;
    long n;
    CU_ASSERT(cb_min_separation(m, (const double (*)[3])m->x, &d, NULL) == 0);
    CB_ASSERT_REL(d, hx * hy / sqrt(hx * hx + hy * hy), 1e-12);
    CU_ASSERT(cb_self_intersections(m, (const double (*)[3])m->x, &n, NULL) == 0);
    CU_ASSERT(n == 0);
    cb_mesh_free(&m);
}

/* Two parallel squares 0.1 apart (each a 3x3-vertex grid of side 1, shifted in xy):
 * separation exactly 0.1 (a vertex above the other square's interior); a triangle
 * piercing a square: 3 intersecting edge-triangle pairs by construction. */
static void test_constructed(void)
{
    double x[18][3];
    int f[16][3], nf = 0;
    for (int s = 0; s < 2; s++)
        for (int j = 0; j < 3; j++)
            for (int i = 0; i < 3; i++)
                cb_v3_set(x[9 * s + 3 * j + i], 0.5 * i + 0.13 * s, 0.5 * j + 0.07 * s, 0.1 * s);
    for (int s = 0; s < 2; s++)
        for (int j = 0; j < 2; j++)
            for (int i = 0; i < 2; i++) {
                int v = 9 * s + 3 * j + i;
                f[nf][0] = v; f[nf][1] = v + 1; f[nf][2] = v + 4; nf++;
                f[nf][0] = v; f[nf][1] = v + 4; f[nf][2] = v + 3; nf++;
            }
    cb_mesh *m = NULL;
    CU_ASSERT_FATAL(cb_mesh_from_arrays(18, (const double (*)[3])x, nf, (const int (*)[3])f, "squares", &m, NULL) == 0);
    double d;
    long n;
    CU_ASSERT(cb_min_separation(m, (const double (*)[3])m->x, &d, NULL) == 0);
    CB_ASSERT_REL(d, 0.1, 1e-12);
    CU_ASSERT(cb_self_intersections(m, (const double (*)[3])m->x, &n, NULL) == 0);
    CU_ASSERT(n == 0);
    cb_mesh_free(&m);

    /* square [-1,1]^2 at z=0 split along (-1,-1)-(1,1); triangle a=(-0.3,0,-1),
     * b=(0.3,0,-1), c=(0,0.1,1): edge ac crosses z=0 at (-0.15,0.05) (upper-left
     * triangle), edge bc at (0.15,0.05) (lower-right triangle), and the diagonal
     * crosses the pierced triangle at (0.05,0.05,0): 3 pairs. */
    double y[7][3] = {{-1, -1, 0}, {1, -1, 0}, {1, 1, 0}, {-1, 1, 0}, {-0.3, 0, -1}, {0.3, 0, -1}, {0, 0.1, 1}};
    int g[3][3] = {{0, 1, 2}, {0, 2, 3}, {4, 5, 6}};
    CU_ASSERT_FATAL(cb_mesh_from_arrays(7, (const double (*)[3])y, 3, (const int (*)[3])g, "pierce", &m, NULL) == 0);
    CU_ASSERT(cb_self_intersections(m, (const double (*)[3])m->x, &n, NULL) == 0);
    CU_ASSERT(n == 3);
    CU_ASSERT(brute_intersections(m, (const double (*)[3])m->x) == 3);
    cb_mesh_free(&m);

    /* a single triangle has no non-adjacent pair */
    double z[3][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
    int h[1][3] = {{0, 1, 2}};
    CU_ASSERT_FATAL(cb_mesh_from_arrays(3, (const double (*)[3])z, 1, (const int (*)[3])h, "one", &m, NULL) == 0);
    CU_ASSERT(cb_min_separation(m, (const double (*)[3])m->x, &d, NULL) == 0);
    CU_ASSERT(isinf(d) && d > 0);
    CU_ASSERT(cb_self_intersections(m, (const double (*)[3])m->x, &n, NULL) == 0);
    CU_ASSERT(n == 0);
    cb_mesh_free(&m);
}

/* Two sheets (each an 11 x 11 grid, spacing 0.1, within-sheet minimum 0.1 / sqrt 2),
 * the upper one tilted so that the gap is smallest (just below the within-sheet
 * minimum) at the far corner, which the traversal reaches last: the minimum lies
 * between two separate volumes, so branch and bound must not prune by more than the
 * best distance found. */
static void test_stacked_sheets(void)
{
    const int n = 11;
    const double h = 0.1, s = 0.95 * h / sqrt(2.0);
    int nv = 2 * n * n, nf = 4 * (n - 1) * (n - 1), t = 0;
    double (*x)[3] = cb_calloc((size_t)nv, sizeof *x);
    int (*f)[3] = cb_calloc((size_t)nf, sizeof *f);
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++)
                cb_v3_set(x[k * n * n + j * n + i], h * i + 0.031 * k, h * j + 0.017 * k,
                          k * (s + 0.004 * (2.0 - (double)(i + j) / (n - 1))));
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < n - 1; j++)
            for (int i = 0; i < n - 1; i++) {
                int v = k * n * n + j * n + i;
                f[t][0] = v; f[t][1] = v + 1; f[t][2] = v + n + 1; t++;
                f[t][0] = v; f[t][1] = v + n + 1; f[t][2] = v + n; t++;
            }
    cb_mesh *m = NULL;
    CU_ASSERT_FATAL(cb_mesh_from_arrays(nv, (const double (*)[3])x, nf, (const int (*)[3])f, "sheets", &m, NULL) == 0);
    double bd = brute_min_separation(m, (const double (*)[3])m->x);
    CU_ASSERT(bd > s && bd < h / sqrt(2.0));   /* between the sheets */
    for (int ki = 0; ki < 4; ki++) {
        cb_selfcheck *c = NULL;
        double d;
        CU_ASSERT_FATAL(cb_selfcheck_create(m, kinds[ki], &c, NULL) == 0);
        CU_ASSERT(cb_selfcheck_min_separation(c, (const double (*)[3])m->x, &d, NULL, NULL, NULL, NULL) == 0);
        CB_ASSERT_REL(d, bd, 1e-12);
        cb_selfcheck_free(&c);
    }
    free(x);
    free(f);
    cb_mesh_free(&m);
}

/* A context reused over changing positions answers like fresh one-shot calls. */
static void test_reuse(void)
{
    cb_mesh *m = cb_test_grid(20, 20, 1.0, CB_DIAG_ALTERNATE);
    cb_selfcheck *s = NULL;
    CU_ASSERT_FATAL(cb_selfcheck_create(m, CB_BV_DEFAULT, &s, NULL) == 0);
    for (int i = 0; i < 4; i++) {
        double (*x)[3] = cb_test_crumple(m, 90 + i, 0.03 * (i + 1));
        long n1, n2;
        double d1, d2;
        CU_ASSERT(cb_selfcheck_intersections(s, (const double (*)[3])x, &n1, NULL) == 0);
        CU_ASSERT(cb_selfcheck_min_separation(s, (const double (*)[3])x, &d1, NULL, NULL, NULL, NULL) == 0);
        CU_ASSERT(cb_self_intersections(m, (const double (*)[3])x, &n2, NULL) == 0);
        CU_ASSERT(cb_min_separation(m, (const double (*)[3])x, &d2, NULL) == 0);
        CU_ASSERT(n1 == n2);
        CU_ASSERT(d1 == d2);
        CU_ASSERT(n1 == brute_intersections(m, (const double (*)[3])x));
        free(x);
    }
    cb_selfcheck_free(&s);
    cb_mesh_free(&m);
}

static void test_bad_input(void)
{
    cb_error err = {0};
    long n = 5;
    double d = 5;
    cb_mesh empty = {0};
    double dummy[1][3] = {{0, 0, 0}};
    CU_ASSERT(cb_self_intersections(&empty, (const double (*)[3])dummy, &n, &err) == CB_ERR_INPUT);
    CU_ASSERT(strstr(err.message, "empty") != NULL);
    CU_ASSERT(cb_min_separation(&empty, (const double (*)[3])dummy, &d, &err) == CB_ERR_INPUT);
    CU_ASSERT(cb_min_separation(NULL, (const double (*)[3])dummy, &d, &err) == CB_ERR_INPUT);

    cb_mesh *m = cb_test_grid(8, 8, 1.0, CB_DIAG_ALTERNATE);
    double (*x)[3] = cb_calloc((size_t)m->nv, sizeof *x);
    memcpy(x, m->x, (size_t)m->nv * sizeof *x);
    x[20][2] = NAN;
    CU_ASSERT(cb_self_intersections(m, (const double (*)[3])x, &n, &err) == CB_ERR_INPUT);
    CU_ASSERT(strstr(err.message, "vertex 20") != NULL);
    CU_ASSERT(cb_min_separation(m, (const double (*)[3])x, &d, &err) == CB_ERR_INPUT);
    CU_ASSERT(strstr(err.message, "vertex 20") != NULL);
    CU_ASSERT(isnan(d));
    x[20][2] = -INFINITY;
    CU_ASSERT(cb_min_separation(m, (const double (*)[3])x, &d, &err) == CB_ERR_INPUT);

    /* zero-area triangles: a warning naming the triangle, results still exact */
    double (*y)[3] = cb_test_crumple(m, 5, 0.1);
    cb_v3_copy(y[10], y[11]);   /* collapses the triangles with edge (10, 11) */
    cb_error_clear(&err);
    CU_ASSERT(cb_self_intersections(m, (const double (*)[3])y, &n, &err) == CB_WARN);
    CU_ASSERT(strstr(err.message, "zero area") != NULL);
    int t0 = -1;
    for (int t = 0; t < m->nf && t0 < 0; t++) {
        int has10 = 0, has11 = 0;
        for (int k = 0; k < 3; k++) { has10 |= m->f[t][k] == 10; has11 |= m->f[t][k] == 11; }
        if (has10 && has11) t0 = t;
    }
    char want[64];
    snprintf(want, sizeof want, "triangle %d ", t0);
    CU_ASSERT(strstr(err.message, want) != NULL);
    CU_ASSERT(n == brute_intersections(m, (const double (*)[3])y));
    CU_ASSERT(cb_min_separation(m, (const double (*)[3])y, &d, &err) == CB_WARN);
    CB_ASSERT_REL(d, brute_min_separation(m, (const double (*)[3])y), 1e-12);
    /* all vertices at one point */
    for (int v = 0; v < m->nv; v++) cb_v3_set(y[v], 1, 2, 3);
    CU_ASSERT(cb_self_intersections(m, (const double (*)[3])y, &n, &err) == CB_WARN);
    CU_ASSERT(n == brute_intersections(m, (const double (*)[3])y));
    CU_ASSERT(n > 0);
    CU_ASSERT(cb_min_separation(m, (const double (*)[3])y, &d, &err) == CB_WARN);
    CU_ASSERT(d == 0.0);
    free(y);
    free(x);
    cb_mesh_free(&m);
}

CB_TEST_MAIN("selfcheck",
    CB_TEST(test_soup),
    CB_TEST(test_grid),
    CB_TEST(test_crumpled),
    CB_TEST(test_lattice_crumpled),
    CB_TEST(test_flat_grid_analytic),
    CB_TEST(test_constructed),
    CB_TEST(test_stacked_sheets),
    CB_TEST(test_reuse),
    CB_TEST(test_bad_input))
