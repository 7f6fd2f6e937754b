/* tests/test_springs.c — the spring sets fms and newton share (solvers/springs.c): the global matrix's pattern and the
 * spring counts against brute-force oracles, the bending spring against the hinge model at a right
 * angle, the energy against the sum of its terms, a zero-length spring refused. */
#include "cb_test.h"
#include "cb_sim.h"

#include "contact/colliders.h"
#include "contact/distance.h"
#include "experiments/harness/metrics.h"
#include "core/scene.h"
#include "core/solver.h"
#include "core/vec3.h"
#include "core/world.h"
#include "experiments/harness/registry.h"
#include "solvers/cholmod_util.h"
#include "solvers/springs.h"
#include "solvers/springs_local.h"
#include "solvers/step_contact.h"

/* scene (file or text) + world + solver: tests/cb_sim.h */
static int sim_open(cb_sim *s, const char *solver, const char *path_or_text, int is_text, const char *const *sets,
                    int nsets)
{
    return cb_sim_open(s, solver, is_text ? NULL : path_or_text, is_text ? path_or_text : NULL, ".", sets, nsets);
}

/* The pattern of the global matrix (cb_springs_pattern) against a dense oracle built
 * from its definition: model and classic springs on a 7 x 6 grid with every fifth
 * vertex pinned, blocks 1 x 1 (fms) and 3 x 3 (newton). Columns start at their
 * diagonal, rows strictly increase (sorted, no duplicates), the stored set is exactly
 * the diagonal blocks' lower triangles plus the free springs' off-diagonal blocks, and
 * diag_pos / spring_pos point at the entries they name (-1 for springs to pins). */
static void test_springs_pattern(void)
{
    cb_scene *sc = NULL;
    cb_world *w = cb_sim_grid_world(7, 6, 0.6, 0.5, &sc);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    int *unk = cb_calloc((size_t)w->nv, sizeof *unk), nunk = 0;
    for (int v = 0; v < w->nv; v++) unk[v] = v % 5 == 0 ? -1 : nunk++;
    for (int kind = 0; kind < 2; kind++)
        for (int bs = 1; bs <= 3; bs += 2) {
            cb_spring_set s;
            cb_error e;
            CU_ASSERT_EQUAL_FATAL(cb_springs_build(w, (cb_spring_kind)kind, &s, &e), CB_OK);
            int *cp = NULL, *ri = NULL, *dp = NULL, *sp = NULL;
            CU_ASSERT_EQUAL_FATAL(cb_springs_pattern(&s, unk, nunk, bs, &cp, &ri, &dp, &sp, &e), CB_OK);
            const int N = nunk * bs, b2 = bs * bs;
            char *want = cb_calloc((size_t)N * N, 1);
            for (int u = 0; u < nunk; u++)
                for (int r = 0; r < bs; r++)
                    for (int c = 0; c <= r; c++) want[(long)(u * bs + r) * N + u * bs + c] = 1;
            for (int i = 0; i < s.n; i++) {
                int ua = unk[s.ij[i][0]], ub = unk[s.ij[i][1]];
                if (ua < 0 || ub < 0 || ua == ub) continue;
                int lo = ua < ub ? ua : ub, hi = ua ^ ub ^ lo;
                for (int r = 0; r < bs; r++)
                    for (int c = 0; c < bs; c++) want[(long)(hi * bs + r) * N + lo * bs + c] = 1;
            }
            long nwant = 0, bad = 0;
            for (long q = 0; q < (long)N * N; q++) nwant += want[q];
            CU_ASSERT_EQUAL(cp[0], 0);
            CU_ASSERT_EQUAL(cp[N], nwant);
            for (int j = 0; j < N; j++) {
                if (cp[j + 1] <= cp[j] || ri[cp[j]] != j) bad++;
                for (int q = cp[j]; q < cp[j + 1]; q++)
                    if (ri[q] < j || ri[q] >= N || !want[(long)ri[q] * N + j] || (q > cp[j] && ri[q] <= ri[q - 1]))
                        bad++;
            }
            /* the entry at pos is (row, col): rowidx says row, colptr brackets col */
            for (int u = 0; u < nunk; u++)
                for (int r = 0; r < bs; r++)
                    for (int c = 0; c < bs; c++) {
                        int pos = dp[u * b2 + r * bs + c], hr = r > c ? r : c, col = u * bs + (r ^ c ^ hr);
                        if (pos < cp[col] || pos >= cp[col + 1] || ri[pos] != u * bs + hr) bad++;
                    }
            for (int i = 0; i < s.n; i++) {
                int ua = unk[s.ij[i][0]], ub = unk[s.ij[i][1]];
                for (int r = 0; r < bs; r++)
                    for (int c = 0; c < bs; c++) {
                        int pos = sp[i * b2 + r * bs + c];
                        if (ua < 0 || ub < 0 || ua == ub) {
                            bad += pos != -1;
                            continue;
                        }
                        int lo = ua < ub ? ua : ub, hi = ua ^ ub ^ lo, col = lo * bs + c;
                        if (pos < cp[col] || pos >= cp[col + 1] || ri[pos] != hi * bs + r) bad++;
                    }
            }
            if (bad) fprintf(stderr, "  kind %d, bs %d: %ld wrong entries of %ld\n", kind, bs, bad, nwant);
            CU_ASSERT_EQUAL(bad, 0);
            free(want);
            free(cp);
            free(ri);
            free(dp);
            free(sp);
            cb_springs_release(&s);
        }
    free(unk);
    cb_world_free(&w);
    cb_scene_free(&sc);
}

/* Classic set: 6n^2 - 10n + 2 springs for n x n, and exactly the vertex pairs at rest
 * distance a, a sqrt(2) (diagonals) and 2a along a grid line, found by brute force. */
static void test_classic_spring_counts(void)
{
    const int sizes[][2] = {{2, 2}, {3, 3}, {5, 5}, {12, 12}, {60, 60}, {4, 7}};
    for (unsigned c = 0; c < sizeof sizes / sizeof sizes[0]; c++) {
        int nx = sizes[c][0], ny = sizes[c][1];
        double a = 0.1; /* square cells */
        cb_scene *sc = NULL;
        cb_world *w = cb_sim_grid_world(nx, ny, a * (nx - 1), a * (ny - 1), &sc);
        CU_ASSERT_PTR_NOT_NULL_FATAL(w);
        cb_spring_set s;
        cb_error e;
        CU_ASSERT_EQUAL_FATAL(cb_springs_build(w, CB_SPRINGS_CLASSIC, &s, &e), CB_OK);
        if (nx == ny) CU_ASSERT_EQUAL(s.n, 6 * nx * nx - 10 * nx + 2);
        /* brute-force oracle over all vertex pairs */
        long oracle = 0;
        const double (*X)[3] = (const double (*)[3])w->mesh->x;
        for (int i = 0; i < w->nv; i++)
            for (int j = i + 1; j < w->nv; j++) {
                double d = cb_v3_dist(X[i], X[j]);
                int straight = fabs(X[i][0] - X[j][0]) < 1e-12 || fabs(X[i][1] - X[j][1]) < 1e-12;
                if (fabs(d - a) < 1e-9 || fabs(d - a * sqrt(2.0)) < 1e-9 || (straight && fabs(d - 2 * a) < 1e-9))
                    oracle++;
            }
        CU_ASSERT_EQUAL(s.n, oracle);
        /* every spring is one of those pairs, with its rest length */
        int bad = 0;
        for (int i = 0; i < s.n; i++) {
            double d = cb_v3_dist(X[s.ij[i][0]], X[s.ij[i][1]]);
            if (fabs(d - s.rest[i]) > 1e-12 || !(fabs(d - a) < 1e-9 || fabs(d - a * sqrt(2.0)) < 1e-9 ||
                                                  fabs(d - 2 * a) < 1e-9))
                bad++;
        }
        CU_ASSERT_EQUAL(bad, 0);
        cb_springs_release(&s);
        /* model set: one spring per edge plus one per hinge */
        CU_ASSERT_EQUAL_FATAL(cb_springs_build(w, CB_SPRINGS_MODEL, &s, &e), CB_OK);
        CU_ASSERT_EQUAL(s.n, w->mesh->ne + w->mesh->nh);
        CU_ASSERT_EQUAL(s.nstretch, w->mesh->ne);
        cb_springs_release(&s);
        cb_world_free(&w);
        cb_scene_free(&sc);
    }
}

/* The bend-spring stiffness stores the hinge's energy at a right-angle fold: fold a
 * two-triangle hinge by 90 degrees and compare 1/2 k (l - r)^2 with cb_model_bend_energy. */
static void test_bend_spring_matches_hinge_at_right_angle(void)
{
    const double X[4][3] = {{0, 0, 0}, {0.3, 0, 0}, {0.1, 0.2, 0}, {0.25, -0.15, 0}};
    const int F[2][3] = {{0, 1, 2}, {1, 0, 3}};
    cb_error e;
    cb_mesh *m = NULL;
    CU_ASSERT_EQUAL_FATAL(cb_mesh_from_arrays(4, X, 2, F, "hinge", &m, &e), CB_OK);
    CU_ASSERT_EQUAL_FATAL(m->nh, 1);
    cb_cloth_model model;
    CU_ASSERT_EQUAL_FATAL(cb_model_init(&model, m, 0.0, 2e-3, 0.0, 1.0, &e), CB_OK);
    cb_world w;
    memset(&w, 0, sizeof w);
    w.mesh = m;
    w.nv = 4;
    w.model = model;
    cb_spring_set s;
    CU_ASSERT_EQUAL_FATAL(cb_springs_build(&w, CB_SPRINGS_MODEL, &s, &e), CB_OK);
    CU_ASSERT_EQUAL_FATAL(s.n, m->ne + 1);
    /* rotate the vertex opposite to the edge in the second face by 90 degrees about the x axis */
    int v3 = m->h[0][3];
    double x[4][3];
    memcpy(x, X, sizeof x);
    x[v3][2] = -x[v3][1]; /* (x, y, 0) -> (x, 0, -y): y < 0 so z > 0 */
    x[v3][1] = 0.0;
    x[v3][2] = fabs(x[v3][2]);
    double theta = cb_dihedral_angle(x[m->h[0][0]], x[m->h[0][1]], x[m->h[0][2]], x[m->h[0][3]], NULL);
    CB_ASSERT_REL(fabs(theta), M_PI / 2, 1e-12);
    double hinge = cb_model_bend_energy(&model, (const double (*)[3])x);
    int b = s.n - 1;
    double l = cb_v3_dist(x[s.ij[b][0]], x[s.ij[b][1]]) - s.rest[b];
    CB_ASSERT_REL(0.5 * s.k[b] * l * l, hinge, 1e-12);
    CU_ASSERT(hinge > 0);
    cb_springs_release(&s);
    cb_model_release(&model);
    cb_mesh_free(&m);
}

/* cb_springs_energy (square roots two springs at a time) equals the plain sum over the
 * springs in order, for an even and an odd number of springs. */
static void test_springs_energy_matches_sum(void)
{
    cb_scene *sc = NULL;
    cb_world *w = cb_sim_grid_world(7, 6, 0.6, 0.5, &sc);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    cb_spring_set sp;
    cb_error e;
    CU_ASSERT_EQUAL_FATAL(cb_springs_build(w, CB_SPRINGS_MODEL, &sp, &e), CB_OK);
    srand(11);
    for (int i = 0; i < w->nv; i++)
        for (int k = 0; k < 3; k++) w->state.x[i][k] += 0.03 * ((double)rand() / RAND_MAX - 0.5);
    const double (*x)[3] = (const double (*)[3])w->state.x;
    int n = sp.n;
    for (int c = 0; c < 2; c++, sp.n--) {
        long double sum = 0;
        for (int i = 0; i < sp.n; i++) {
            const double *a = x[sp.ij[i][0]], *b = x[sp.ij[i][1]];
            long double l = sqrtl((long double)(a[0] - b[0]) * (a[0] - b[0]) + (long double)(a[1] - b[1]) * (a[1] - b[1]) +
                                  (long double)(a[2] - b[2]) * (a[2] - b[2])) - sp.rest[i];
            sum += 0.5L * sp.k[i] * l * l;
        }
        double en = cb_springs_energy(&sp, x);
        fprintf(stderr, "  %d springs: E = %.17g, oracle %.17Lg\n", sp.n, en, sum);
        CU_ASSERT(sum > 0);
        CU_ASSERT(fabsl(en - sum) <= 1e-12L * sum);
    }
    sp.n = n;
    cb_springs_release(&sp);
    cb_world_free(&w);
    cb_scene_free(&sc);
}

/* A spring of zero length (two free vertices at the same point): its direction is
 * undefined, fms takes one of length r (any is a minimiser of the local step), so the
 * step stays finite and still lowers g below g(y). */
static void test_zero_length_spring(void)
{
    const char *sets[] = {"cloth.grid.nx=8", "cloth.grid.ny=8", "solvers.fms.self_collision=false"};
    cb_sim s;
    CU_ASSERT_EQUAL_FATAL(sim_open(&s, "fms", "data/scenes/hanging.yaml", 0, sets, 3), CB_OK);
    cb_world *w = s.w;
    int a = 3 + 8 * 4, b = a + 1; /* neighbours in the middle of the cloth, both free */
    CU_ASSERT_FATAL(w->inv_mass[a] > 0 && w->inv_mass[b] > 0);
    cb_v3_copy(w->state.x[b], w->state.x[a]);
    double h = s.scene->dt;
    double (*y)[3] = calloc((size_t)w->nv, sizeof *y);
    CU_ASSERT_FATAL(y != NULL);
    for (int i = 0; i < w->nv; i++)
        for (int k = 0; k < 3; k++) y[i][k] = w->state.x[i][k] + h * w->state.v[i][k];
    cb_spring_set sp;
    cb_error e;
    CU_ASSERT_EQUAL_FATAL(cb_springs_build(w, CB_SPRINGS_MODEL, &sp, &e), CB_OK);
    double gy = cb_springs_objective(&sp, w, (const double (*)[3])y, (const double (*)[3])y, h);
    CU_ASSERT_EQUAL_FATAL(cb_sim_step(&s), CB_OK);
    int finite = 1;
    for (int i = 0; i < w->nv; i++)
        for (int k = 0; k < 3; k++) finite &= isfinite(w->state.x[i][k]) && isfinite(w->state.v[i][k]);
    double gx = cb_springs_objective(&sp, w, (const double (*)[3])w->state.x, (const double (*)[3])y, h);
    fprintf(stderr, "  g(y) = %.10g, g(x) = %.10g, |x_a - x_b| = %.3e, residual %.3e\n", gy, gx,
            cb_v3_dist(w->state.x[a], w->state.x[b]), s.info.residual);
    CU_ASSERT(finite);
    CU_ASSERT(isfinite(s.info.residual));
    CU_ASSERT(gx < gy);
    CU_ASSERT(cb_v3_dist(w->state.x[a], w->state.x[b]) > 0); /* the spring pushed them apart */
    cb_springs_release(&sp);
    free(y);
    cb_sim_close(&s);
}

/* fms's local step (solvers/springs_local.h) at every width equals the one-spring-at-a-
 * time pass bit for bit, and that pass equals the definition (long double) to round-off:
 * spring counts that are no multiple of the width (the remainders), springs of zero
 * length (their rest direction) inside vectors, rows repeated within and across vectors
 * in both orders (springs sorted by their end a as fms sorts them, and shuffled), and
 * the scratch row of pinned ends. */
static void test_local_step_widths(void)
{
    enum { NV = 40, NMAX = 1001 };
    static const int counts[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 11, 15, 16, 17, 23, 33, 100, NMAX};
    int ia[NMAX], ib[NMAX], ua[NMAX], ub[NMAX];
    double rest[NMAX], kh[NMAX], d0[NMAX][3], x[NV][3], b1[NV + 1][3], bw[NV + 1][3];
    long double ref[NV + 1][3];
    uint64_t rng = 0x5eed1234abcdULL;
    int unk[NV], nf = 0;
    for (int v = 0; v < NV; v++) unk[v] = v % 9 == 4 ? -1 : nf++; /* every 9th pinned: scratch row nf */
    fprintf(stderr, "  this CPU: width %d\n", cb_springs_local_width());
    int mismatches = 0, zero_len = 0;
    double worst = 0.0;
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
        for (int sorted = 0; sorted < 2; sorted++) {
            int ns = counts[c];
            for (int v = 0; v < NV; v++)
                for (int k = 0; k < 3; k++) x[v][k] = cb_test_uniform(&rng) - 0.5;
            for (int i = 0; i < ns; i++) {
                int a = (int)(cb_test_xorshift64(&rng) % NV), bb = (int)(cb_test_xorshift64(&rng) % (NV - 1));
                bb += bb >= a;
                ia[i] = a;
                ib[i] = bb;
                rest[i] = 0.01 + cb_test_uniform(&rng);
                kh[i] = 1e-3 + cb_test_uniform(&rng);
                for (int k = 0; k < 3; k++) d0[i][k] = cb_test_uniform(&rng) - 0.5;
            }
            if (sorted) /* by end a, as fms orders its springs (runs of one row) */
                for (int i = 1; i < ns; i++)
                    for (int j = i; j > 0 && ia[j - 1] > ia[j]; j--) {
                        int t = ia[j]; ia[j] = ia[j - 1]; ia[j - 1] = t;
                        t = ib[j]; ib[j] = ib[j - 1]; ib[j - 1] = t;
                    }
            for (int i = 0; i < ns; i++) {
                ua[i] = unk[ia[i]] < 0 ? nf : unk[ia[i]];
                ub[i] = unk[ib[i]] < 0 ? nf : unk[ib[i]];
            }
            /* zero-length springs: vertex 7 on vertex 3 */
            for (int k = 0; k < 3; k++) x[7][k] = x[3][k];
            for (int i = 0; i < ns; i++) zero_len += (ia[i] == 3 && ib[i] == 7) || (ia[i] == 7 && ib[i] == 3);
            for (int r = 0; r <= nf; r++)
                for (int k = 0; k < 3; k++) b1[r][k] = ref[r][k] = cb_test_uniform(&rng);
            memcpy(bw, b1, sizeof b1);
            cb_springs_local_rhs(1, (const double (*)[3])x, ns, ia, ib, ua, ub, rest, kh, (const double (*)[3])d0, b1);
            for (int i = 0; i < ns; i++) {
                long double e[3], l2 = 0;
                for (int k = 0; k < 3; k++) {
                    e[k] = (long double)x[ia[i]][k] - x[ib[i]][k];
                    l2 += e[k] * e[k];
                }
                for (int k = 0; k < 3; k++) {
                    long double f = kh[i] * (l2 > 0 ? rest[i] * e[k] / sqrtl(l2) : (long double)d0[i][k]);
                    ref[ua[i]][k] += f;
                    ref[ub[i]][k] -= f;
                }
            }
            for (int r = 0; r < nf; r++) /* not the scratch row: its sums cancel */
                for (int k = 0; k < 3; k++)
                    worst = fmax(worst, fabs((double)(b1[r][k] - ref[r][k])) / (1.0 + fabs((double)ref[r][k])));
            for (int width = 2; width <= 8; width *= 2) {
                double bt[NV + 1][3];
                memcpy(bt, bw, sizeof bt);
                cb_springs_local_rhs(width, (const double (*)[3])x, ns, ia, ib, ua, ub, rest, kh,
                                     (const double (*)[3])d0, bt);
                if (memcmp(bt, b1, (size_t)(nf + 1) * sizeof bt[0])) {
                    mismatches++;
                    fprintf(stderr, "  width %d, %d springs (%s): not the scalar pass's bits\n", width, ns,
                            sorted ? "sorted" : "shuffled");
                }
            }
        }
    fprintf(stderr, "  %d zero-length springs; scalar pass against long double: %.2e relative\n", zero_len, worst);
    CU_ASSERT(zero_len > 0);
    CU_ASSERT_EQUAL(mismatches, 0);
    CU_ASSERT(worst < 1e-13);
}

CB_TEST_MAIN("springs",
             CB_TEST(test_springs_pattern),
             CB_TEST(test_classic_spring_counts),
             CB_TEST(test_bend_spring_matches_hinge_at_right_angle),
             CB_TEST(test_springs_energy_matches_sum),
             CB_TEST(test_zero_length_spring),
             CB_TEST(test_local_step_widths))
