/* tests/test_spatial_hash.c — spatial hashing (contact/spatial_hash.h) against O(n^2)
 * brute force: candidates are a superset of the true vertex-triangle pairs within the
 * distance, exactly the pairs whose cells the inflated triangle box covers (hash
 * collisions filtered), no duplicates; cell size; reuse; bad input; the box filter
 * (exactly the vertices in the inflated triangle box, sorted, whatever the cell size). */
#include "cb_test.h"

#include <stdint.h>

#include "contact/distance.h"
#include "contact/spatial_hash.h"
#include "core/mesh.h"
#include "core/vec3.h"

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* Sorted keys v * nf + t of the hash's pairs; *dups = number of repeated keys. */
static long long *hash_keys(const cb_spatial_hash *h, int nf, long *n, long *dups)
{
    const cb_pair_list *l = cb_spatial_hash_pairs(h);
    long long *k = cb_calloc((size_t)l->n + 1, sizeof *k);
    for (long i = 0; i < l->n; i++) k[i] = (long long)l->p[i][0] * nf + l->p[i][1];
    qsort(k, (size_t)l->n, sizeof *k, cmp_ll);
    *n = l->n;
    *dups = 0;
    for (long i = 1; i < l->n; i++) *dups += k[i] == k[i - 1];
    return k;
}

static int has(const long long *k, long n, long long key)
{
    return bsearch(&key, k, (size_t)n, sizeof *k, cmp_ll) != NULL;
}

/* Cell range test: is vertex p's cell inside the cells of tri t's AABB inflated by r? */
static int in_cells(const double (*x)[3], const int *f, const double *p, double r, double cell)
{
    for (int k = 0; k < 3; k++) {
        double mn = fmin(x[f[0]][k], fmin(x[f[1]][k], x[f[2]][k])) - r;
        double mx = fmax(x[f[0]][k], fmax(x[f[1]][k], x[f[2]][k])) + r;
        double c = floor(p[k] / cell);
        if (c < floor(mn / cell) || c > floor(mx / cell)) return 0;
    }
    return 1;
}

/* Full check of one query: superset of true pairs within d, subset of the cell-covered
 * pairs (so hash collisions were filtered), no duplicates, no vertex of its triangle. */
static void check_query(const char *name, cb_spatial_hash *h, const cb_mesh *m, const double (*x)[3], double d)
{
    cb_error err = {0};
    int rc = cb_spatial_hash_query(h, m, x, d, &err);
    if (rc) fprintf(stderr, "  %s: %s\n", name, err.message);
    CU_ASSERT_FATAL(rc == 0);
    double cell = cb_spatial_hash_cell_size(h);
    long n, dups;
    long long *k = hash_keys(h, m->nf, &n, &dups);
    CU_ASSERT(dups == 0);
    long truth = 0, missing = 0, covered = 0, covered_missing = 0;
    for (int v = 0; v < m->nv; v++)
        for (int t = 0; t < m->nf; t++) {
            const int *f = m->f[t];
            if (v == f[0] || v == f[1] || v == f[2]) {
                if (has(k, n, (long long)v * m->nf + t)) missing += 1000000;  /* must never appear */
                continue;
            }
            int in = has(k, n, (long long)v * m->nf + t);
            double d2 = cb_point_triangle_distance2(x[v], x[f[0]], x[f[1]], x[f[2]], NULL, NULL);
            if (sqrt(d2) <= d) {
                truth++;
                missing += !in;
            }
            if (in_cells(x, f, x[v], d, cell)) {
                covered++;
                covered_missing += !in;
            }
        }
    /* every candidate lies within the cells of a slightly larger box */
    long beyond = 0;
    const cb_pair_list *l = cb_spatial_hash_pairs(h);
    for (long i = 0; i < l->n; i++) {
        int v = l->p[i][0], t = l->p[i][1];
        if (!in_cells(x, m->f[t], x[v], d * (1 + 1e-9) + 1e-9, cell)) beyond++;
    }
    if (missing || covered_missing || beyond || truth == 0)
        fprintf(stderr, "  %s: %ld candidates, %ld true (%ld missing), %ld covered (%ld missing), %ld beyond\n",
                name, n, truth, missing, covered, covered_missing, beyond);
    CU_ASSERT(truth > 0);
    CU_ASSERT(missing == 0);
    CU_ASSERT(covered_missing == 0);
    CU_ASSERT(beyond == 0);
    CU_ASSERT(n >= covered);
    free(k);
}

static double mean_edge(const cb_mesh *m, const double (*x)[3])
{
    double s = 0;
    for (int e = 0; e < m->ne; e++) s += cb_v3_dist(x[m->e[e][0]], x[m->e[e][1]]);
    return s / m->ne;
}

static void test_grid_flat(void)
{
    cb_mesh *m = cb_test_grid(20, 17, 1.0, CB_DIAG_ALTERNATE);
    cb_spatial_hash *h = NULL;
    CU_ASSERT_FATAL(cb_spatial_hash_create(1.0, &h, NULL) == 0);
    double e = mean_edge(m, (const double (*)[3])m->x);
    check_query("grid", h, m, (const double (*)[3])m->x, 0.8 * e);
    CU_ASSERT(fabs(cb_spatial_hash_cell_size(h) - e) <= 1e-12 * e);
    /* table size: a prime >= 2 nv */
    long p = cb_spatial_hash_table_size(h);
    CU_ASSERT(p >= 2L * m->nv);
    int prime = p > 1;
    for (long q = 2; q * q <= p; q++) if (p % q == 0) prime = 0;
    CU_ASSERT(prime);
    cb_spatial_hash_free(&h);
    CU_ASSERT(h == NULL);
    cb_mesh_free(&m);
}

static void test_crumpled_scales(void)
{
    cb_mesh *m = cb_test_grid(22, 22, 1.0, CB_DIAG_ALTERNATE);
    double (*x)[3] = cb_test_crumple(m, 17, 0.12);
    double e = mean_edge(m, (const double (*)[3])x);
    const double scales[] = {0.3, 1.0, 2.5};
    for (int i = 0; i < 3; i++) {
        cb_spatial_hash *h = NULL;
        CU_ASSERT_FATAL(cb_spatial_hash_create(scales[i], &h, NULL) == 0);
        check_query("crumpled", h, m, (const double (*)[3])x, 0.25 * e);
        CU_ASSERT(fabs(cb_spatial_hash_cell_size(h) - scales[i] * e) <= 1e-12 * e);
        check_query("crumpled-d0", h, m, (const double (*)[3])x, 0.0 + 1e-3 * e);
        cb_spatial_hash_free(&h);
    }
    free(x);
    cb_mesh_free(&m);
}

static void test_soup_negative_coordinates(void)
{
    /* shifted so cells have negative indices too (the hash must handle them) */
    cb_mesh *m = cb_test_soup(250, 0, 0.1, 4);
    double (*x)[3] = cb_calloc((size_t)m->nv, sizeof *x);
    for (int v = 0; v < m->nv; v++)
        for (int c = 0; c < 3; c++) x[v][c] = m->x[v][c] - 0.5 - 3.0 * (c == 1);
    cb_spatial_hash *h = NULL;
    CU_ASSERT_FATAL(cb_spatial_hash_create(1.0, &h, NULL) == 0);
    check_query("soup", h, m, (const double (*)[3])x, 0.02);
    cb_spatial_hash_free(&h);
    free(x);
    cb_mesh_free(&m);
}

/* A reused hash (other positions, a bigger then a smaller mesh) answers like a fresh one. */
static void test_reuse(void)
{
    cb_mesh *a = cb_test_grid(12, 12, 1.0, CB_DIAG_ALTERNATE), *b = cb_test_grid(25, 20, 1.0, CB_DIAG_ALTERNATE);
    double (*xa)[3] = cb_test_crumple(a, 1, 0.1), (*xb)[3] = cb_test_crumple(b, 2, 0.1);
    cb_spatial_hash *h = NULL, *fresh = NULL;
    CU_ASSERT_FATAL(cb_spatial_hash_create(1.0, &h, NULL) == 0);
    const cb_mesh *ms[4] = {a, a, b, a};
    const double (*xs[4])[3] = {(const double (*)[3])a->x, (const double (*)[3])xa, (const double (*)[3])xb,
                                (const double (*)[3])xa};
    for (int i = 0; i < 4; i++) {
        CU_ASSERT_FATAL(cb_spatial_hash_query(h, ms[i], xs[i], 0.01, NULL) == 0);
        CU_ASSERT_FATAL(cb_spatial_hash_create(1.0, &fresh, NULL) == 0);
        CU_ASSERT_FATAL(cb_spatial_hash_query(fresh, ms[i], xs[i], 0.01, NULL) == 0);
        const cb_pair_list *p = cb_spatial_hash_pairs(h), *q = cb_spatial_hash_pairs(fresh);
        CU_ASSERT(p->n > 0);
        CU_ASSERT(p->n == q->n);
        if (p->n == q->n) CU_ASSERT(memcmp(p->p, q->p, (size_t)p->n * sizeof p->p[0]) == 0);
        cb_spatial_hash_free(&fresh);
    }
    cb_spatial_hash_free(&h);
    free(xa);
    free(xb);
    cb_mesh_free(&a);
    cb_mesh_free(&b);
}

/* Box filter: the candidates are exactly the (v, t), v not in t, with x_v in t's box
 * inflated by d (up to the rounding slack), by triangle then vertex, the same list
 * for every cell size, and still every pair within d. */
static void test_box_filter(void)
{
    cb_mesh *m = cb_test_grid(16, 14, 1.0, CB_DIAG_ALTERNATE);
    double (*x)[3] = cb_test_crumple(m, 5, 0.12);
    const double d = 0.03;
    static const double scales[3] = {0.5, 1.0, 2.5};
    cb_pair_list first = {0};
    for (int s = 0; s < 3; s++) {
        cb_spatial_hash *h = NULL;
        CU_ASSERT_FATAL(cb_spatial_hash_create(scales[s], &h, NULL) == 0);
        cb_spatial_hash_set_box_filter(h, 1);
        CU_ASSERT_FATAL(cb_spatial_hash_query(h, m, (const double (*)[3])x, d, NULL) == 0);
        const cb_pair_list *l = cb_spatial_hash_pairs(h);
        long bad_order = 0, outside = 0, missing = 0, missing_true = 0, inside = 0;
        for (long i = 1; i < l->n; i++)
            bad_order += l->p[i][1] < l->p[i - 1][1] || (l->p[i][1] == l->p[i - 1][1] && l->p[i][0] <= l->p[i - 1][0]);
        long q = 0; /* walk the (sorted) list alongside the brute force */
        for (int t = 0; t < m->nf; t++) {
            const int *f = m->f[t];
            for (int v = 0; v < m->nv; v++) {
                int listed = q < l->n && l->p[q][1] == t && l->p[q][0] == v;
                q += listed;
                if (v == f[0] || v == f[1] || v == f[2]) {
                    outside += listed;
                    continue;
                }
                int in = 1, in_loose = 1;
                for (int k = 0; k < 3; k++) {
                    double mn = fmin(x[f[0]][k], fmin(x[f[1]][k], x[f[2]][k]));
                    double mx = fmax(x[f[0]][k], fmax(x[f[1]][k], x[f[2]][k]));
                    in &= x[v][k] >= mn - d && x[v][k] <= mx + d;
                    in_loose &= x[v][k] >= mn - d * (1 + 1e-9) - 1e-9 && x[v][k] <= mx + d * (1 + 1e-9) + 1e-9;
                }
                inside += in;
                missing += in && !listed;
                outside += listed && !in_loose;
                double d2 = cb_point_triangle_distance2(x[v], x[f[0]], x[f[1]], x[f[2]], NULL, NULL);
                missing_true += sqrt(d2) <= d && !listed;
            }
        }
        if (bad_order || outside || missing || missing_true || q != l->n)
            fprintf(stderr, "  scale %g: %ld pairs (%ld walked), %ld inside, order %ld, outside %ld, missing %ld/%ld\n",
                    scales[s], l->n, q, inside, bad_order, outside, missing, missing_true);
        CU_ASSERT(inside > 0);
        CU_ASSERT(q == l->n); /* every listed pair was met in (triangle, vertex) order */
        CU_ASSERT_EQUAL(bad_order, 0);
        CU_ASSERT_EQUAL(outside, 0);
        CU_ASSERT_EQUAL(missing, 0);
        CU_ASSERT_EQUAL(missing_true, 0);
        if (s == 0) {
            CU_ASSERT_FATAL(cb_pair_list_reserve(&first, l->n) == 0);
            memcpy(first.p, l->p, (size_t)l->n * sizeof *l->p);
            first.n = l->n;
        } else {
            CU_ASSERT(l->n == first.n);
            if (l->n == first.n) CU_ASSERT(memcmp(l->p, first.p, (size_t)l->n * sizeof *l->p) == 0);
        }
        cb_spatial_hash_free(&h);
    }
    cb_pair_list_release(&first);
    free(x);
    cb_mesh_free(&m);
}

static void test_bad_input(void)
{
    cb_error err = {0};
    cb_spatial_hash *h = NULL;
    CU_ASSERT(cb_spatial_hash_create(0.0, &h, &err) == CB_ERR_INPUT);
    CU_ASSERT(h == NULL);
    CU_ASSERT(cb_spatial_hash_create(NAN, &h, &err) == CB_ERR_INPUT);
    CU_ASSERT_FATAL(cb_spatial_hash_create(1.0, &h, &err) == 0);
    cb_mesh empty = {0};
    double dummy[1][3] = {{0, 0, 0}};
    CU_ASSERT(cb_spatial_hash_query(h, &empty, (const double (*)[3])dummy, 0.1, &err) == CB_ERR_INPUT);
    CU_ASSERT(strstr(err.message, "empty") != NULL);

    cb_mesh *m = cb_test_grid(6, 6, 1.0, CB_DIAG_ALTERNATE);
    double (*x)[3] = cb_calloc((size_t)m->nv, sizeof *x);
    memcpy(x, m->x, (size_t)m->nv * sizeof *x);
    CU_ASSERT(cb_spatial_hash_query(h, m, (const double (*)[3])x, -0.1, &err) == CB_ERR_INPUT);
    x[11][0] = NAN;
    CU_ASSERT(cb_spatial_hash_query(h, m, (const double (*)[3])x, 0.1, &err) == CB_ERR_INPUT);
    CU_ASSERT(strstr(err.message, "vertex 11") != NULL);
    x[11][0] = 1e300;  /* far beyond the grid's integer range */
    CU_ASSERT(cb_spatial_hash_query(h, m, (const double (*)[3])x, 0.1, &err) == CB_ERR_INPUT);
    CU_ASSERT(strstr(err.message, "too large") != NULL);
    /* zero-area triangles and a fully collapsed mesh still answer */
    memcpy(x, m->x, (size_t)m->nv * sizeof *x);
    cb_v3_copy(x[7], x[8]);
    check_query("collapsed-triangle", h, m, (const double (*)[3])x, 0.05);
    for (int v = 0; v < m->nv; v++) cb_v3_set(x[v], 0.25, 0.5, 0.75);
    CU_ASSERT(cb_spatial_hash_query(h, m, (const double (*)[3])x, 0.0, &err) == 0);
    CU_ASSERT(cb_spatial_hash_cell_size(h) == 1.0);
    /* every vertex touches every triangle it is not part of */
    long expect = 0;
    for (int t = 0; t < m->nf; t++) expect += m->nv - 3;
    CU_ASSERT(cb_spatial_hash_pairs(h)->n == expect);
    cb_spatial_hash_free(&h);
    cb_spatial_hash_free(&h);
    free(x);
    cb_mesh_free(&m);
}

CB_TEST_MAIN("spatial_hash",
    CB_TEST(test_grid_flat),
    CB_TEST(test_crumpled_scales),
    CB_TEST(test_soup_negative_coordinates),
    CB_TEST(test_reuse),
    CB_TEST(test_box_filter),
    CB_TEST(test_bad_input))
