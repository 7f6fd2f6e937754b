/* tests/test_pbd_contact.c — pbd/xpbd's self-contact candidate cache (small_steps,
 * solvers/pbd_contact.c): the candidates reused across substeps hold, at every substep,
 * every pair a search of that substep would find, and the run is the one of a search
 * every substep (self_cache: false), bit for bit. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cb_test.h"
#include "cb_sim.h"

#include "contact/spatial_hash.h"
#include "solvers/pbd_internal.h"

/* The folding drop of Mueller et al.'s Fig. 6 (data/scenes/pbd_folds.yaml) with the
 * default small steps: the cloth tips over onto the floor and lies down in folds, so
 * its layers come within the self-contact reach of each other. */
static const char *const folds_small[] = {"solvers.pbd.stepping=small_steps", "solvers.pbd.iterations=1",
                                          "solvers.xpbd.stepping=small_steps", "solvers.xpbd.iterations=1",
                                          "solvers.pbd.bend_stiffness=0.002", "cloth.grid.nx=16", "cloth.grid.ny=16"};
#define NFOLDS ((int)(sizeof folds_small / sizeof *folds_small))

static int pair_cmp(const void *a, const void *b)
{
    const int *p = a, *q = b;
    return p[1] != q[1] ? (p[1] > q[1]) - (p[1] < q[1]) : (p[0] > q[0]) - (p[0] < q[0]);
}

/* A substep's pairs, as solvers/pbd_contact.c defines them and written here again: the
 * vertex within r of the triangle's axis-aligned box (Euclidean distance) and of each of
 * its slabs along the diagonals x +- y, x +- z, y +- z (distance along the unit
 * diagonal). Every pair within r of each other passes. */
static int near_pair(const double y[3], const double *a, const double *b, const double *c, double r)
{
    static const double dir[9][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 0}, {1, -1, 0},
                                     {1, 0, 1}, {1, 0, -1}, {0, 1, 1}, {0, 1, -1}};
    double g2 = 0.0;
    for (int d = 0; d < 9; d++) {
        double len = sqrt(dir[d][0] * dir[d][0] + dir[d][1] * dir[d][1] + dir[d][2] * dir[d][2]);
        double cy = 0, lo = INFINITY, hi = -INFINITY;
        const double *q[3] = {a, b, c};
        for (int k = 0; k < 3; k++) cy += dir[d][k] * y[k] / len;
        for (int j = 0; j < 3; j++) {
            double cq = 0;
            for (int k = 0; k < 3; k++) cq += dir[d][k] * q[j][k] / len;
            lo = fmin(lo, cq);
            hi = fmax(hi, cq);
        }
        double g = fmax(0.0, fmax(lo - cy, cy - hi));
        if (d < 3) g2 += g * g;
        else if (g > r) return 0;
    }
    return g2 <= r * r;
}

/* The check after each substep: a fresh search at the substep's prediction (the spatial
 * hash with its box filter, at the self-contact reach, then near_pair just inside the
 * reach, so that rounding at the bound cannot decide) against the cached candidates. */
typedef struct check {
    cb_spatial_hash *hash;
    int (*sorted)[2];
    long cap;
    double (*x0)[3];
    long substeps, searched, missing, reuses, near_limit, close_pairs;
    int failed;
} check;

static double spread(const double (*a)[3], const double (*b)[3], int n)
{
    double r = 0.0;
    for (int k = 0; k < 3; k++) {
        double lo = INFINITY, hi = -INFINITY;
        for (int i = 0; i < n; i++) {
            lo = fmin(lo, a[i][k] - b[i][k]);
            hi = fmax(hi, a[i][k] - b[i][k]);
        }
        r = fmax(r, 0.5 * (hi - lo));
    }
    return r;
}

static void check_substep(void *ctx, const pbd_solver *s)
{
    check *c = ctx;
    const double (*p)[3] = (const double (*)[3])s->pk; /* the prediction as the contact library saw it */
    if (!c->x0) { /* the flat cloth of the first substep */
        c->x0 = malloc((size_t)s->nv * sizeof *c->x0);
        if (!c->x0) {
            c->failed = 1;
            return;
        }
        memcpy(c->x0, p, (size_t)s->nv * sizeof *c->x0);
    }
    double reach = s->self_h + s->self_margin;
    cb_error e;
    c->substeps++;
    if (cb_spatial_hash_query(c->hash, s->mesh, p, reach, &e) != CB_OK) {
        c->failed = 1;
        return;
    }
    const cb_pair_list *fresh = cb_spatial_hash_pairs(c->hash);
    if (s->ncand > c->cap) {
        free(c->sorted);
        c->cap = 2 * s->ncand;
        c->sorted = malloc((size_t)c->cap * sizeof *c->sorted);
        if (!c->sorted) {
            c->failed = 1;
            return;
        }
    }
    memcpy(c->sorted, s->cand, (size_t)s->ncand * sizeof *s->cand);
    qsort(c->sorted, (size_t)s->ncand, sizeof *c->sorted, pair_cmp);
    long found = 0;
    for (long k = 0; k < fresh->n; k++) {
        int key[2] = {fresh->p[k][0], fresh->p[k][1]};
        const int *t = s->mesh->f[key[1]];
        if (!near_pair(p[key[0]], p[t[0]], p[t[1]], p[t[2]], reach * (1.0 - 1e-9))) continue;
        found++;
        if (!bsearch(key, c->sorted, (size_t)s->ncand, sizeof *c->sorted, pair_cmp)) c->missing++;
        /* a vertex and a triangle far apart on the flat cloth: layers, not neighbours */
        const double *a = c->x0[key[0]], *b = c->x0[s->mesh->f[key[1]][0]];
        c->close_pairs += sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
                               (a[2] - b[2]) * (a[2] - b[2])) > 0.2;
    }
    c->searched += found;
    /* the cache served this substep from an earlier search (positions pb differ from p) */
    double moved = spread(p, (const double (*)[3])s->pb, s->nv);
    if (moved > 0) {
        c->reuses++;
        if (2.0 * moved > 0.5 * s->cache_delta) c->near_limit++;
    }
}

static void run_checked(const char *solver)
{
    cb_sim sim;
    CU_ASSERT_EQUAL_FATAL(cb_sim_open(&sim, solver, "data/scenes/pbd_folds.yaml", NULL, ".", folds_small, NFOLDS),
                          CB_OK);
    pbd_solver *s = sim.solver;
    check c = {0};
    cb_error e;
    CU_ASSERT_EQUAL_FATAL(cb_spatial_hash_create(1.0, &c.hash, &e), CB_OK);
    cb_spatial_hash_set_box_filter(c.hash, 1);
    s->self_hook = check_substep;
    s->self_hook_ctx = &c;
    long n = cb_scene_steps(sim.scene);
    for (long k = 0; k < n && !c.failed; k++) CU_ASSERT_EQUAL_FATAL(cb_sim_step(&sim), CB_OK);
    fprintf(stderr, "  %s folds: %ld substeps, %ld searches, %ld reuses (%ld past half the margin), %ld pairs "
            "within reach (%ld between layers), %ld missing\n", solver, c.substeps, s->cache_builds, c.reuses,
            c.near_limit, c.searched, c.close_pairs, c.missing);
    CU_ASSERT_FALSE(c.failed);
    CU_ASSERT_EQUAL(c.missing, 0);
    /* not vacuous: the cache was reused, near its limit too, and the layers met */
    CU_ASSERT(s->cache_builds > 0 && 4 * s->cache_builds < c.substeps);
    CU_ASSERT(c.near_limit > 0);
    CU_ASSERT(c.close_pairs > 0);
    cb_spatial_hash_free(&c.hash);
    free(c.sorted);
    free(c.x0);
    cb_sim_close(&sim);
}

/* At every substep the cached candidates contain every pair within the reach of a
 * triangle's box that a search at that substep's prediction finds. */
static void test_cache_holds_every_pair(void)
{
    run_checked("pbd");
    run_checked("xpbd");
}

/* The run with the cache is the run with a search every substep, bit for bit (the same
 * pairs in the same order), while it searches far less often. */
static void test_cache_same_run(void)
{
    const char *solvers[] = {"pbd", "xpbd"};
    for (int v = 0; v < 2; v++) {
        double (*x[2])[3] = {NULL, NULL}, (*vel[2])[3] = {NULL, NULL};
        long builds[2] = {0, 0}, contacts[2] = {0, 0};
        int nv = 0;
        for (int r = 0; r < 2; r++) {
            const char *sets[NFOLDS + 2];
            memcpy(sets, folds_small, sizeof folds_small);
            sets[NFOLDS] = r ? "solvers.pbd.self_cache=false" : "solvers.pbd.self_cache=true";
            sets[NFOLDS + 1] = r ? "solvers.xpbd.self_cache=false" : "solvers.xpbd.self_cache=true";
            cb_sim sim;
            CU_ASSERT_EQUAL_FATAL(cb_sim_open(&sim, solvers[v], "data/scenes/pbd_folds.yaml", NULL, ".", sets,
                                              NFOLDS + 2), CB_OK);
            long n = cb_scene_steps(sim.scene);
            for (long k = 0; k < n; k++) {
                CU_ASSERT_EQUAL_FATAL(cb_sim_step(&sim), CB_OK);
                contacts[r] += sim.info.contacts;
            }
            nv = sim.w->nv;
            x[r] = malloc((size_t)nv * sizeof *x[r]);
            vel[r] = malloc((size_t)nv * sizeof *vel[r]);
            CU_ASSERT_PTR_NOT_NULL_FATAL(x[r]);
            CU_ASSERT_PTR_NOT_NULL_FATAL(vel[r]);
            memcpy(x[r], sim.w->state.x, (size_t)nv * sizeof *x[r]);
            memcpy(vel[r], sim.w->state.v, (size_t)nv * sizeof *vel[r]);
            builds[r] = ((pbd_solver *)sim.solver)->cache_builds;
            cb_sim_close(&sim);
        }
        fprintf(stderr, "  %s: searches %ld cached, %ld uncached; contacts summed %ld / %ld\n", solvers[v], builds[0],
                builds[1], contacts[0], contacts[1]);
        CU_ASSERT(memcmp(x[0], x[1], (size_t)nv * sizeof *x[0]) == 0);
        CU_ASSERT(memcmp(vel[0], vel[1], (size_t)nv * sizeof *vel[0]) == 0);
        CU_ASSERT_EQUAL(contacts[0], contacts[1]);
        CU_ASSERT(4 * builds[0] < builds[1]);
        for (int r = 0; r < 2; r++) {
            free(x[r]);
            free(vel[r]);
        }
    }
}

CB_TEST_MAIN("pbd_contact",
             CB_TEST(test_cache_holds_every_pair),
             CB_TEST(test_cache_same_run))
