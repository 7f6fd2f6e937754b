/* tests/test_acm.c — asynchronous contact mechanics (solvers/acm): the paper's falling
 * particle walkthrough (event sequence and resting contact, with exact rescheduling and
 * with the velocity allowance), safety in every shipped acm scene (no crossing with
 * good and deliberately bad parameters, checked by CCD between steps), exact momentum
 * conservation in a sheet-sheet collision, bounded energy error over 10^4 periods,
 * energy of a spinning pinned sheet (no multistep resonance of the hinge clocks),
 * the refusal of triangle-mesh colliders,
 * asynchrony on a graded mesh, determinism. */
#include "cb_test.h"
#include "cb_sim.h"

#include "contact/bvh.h"
#include "contact/ccd.h"
#include "contact/colliders.h"
#include "contact/distance.h"
#include "contact/selfcheck.h"
#include "core/scene.h"
#include "core/solver.h"
#include "core/vec3.h"
#include "core/world.h"
#include "experiments/harness/metrics.h"
#include "experiments/harness/registry.h"
#include "solvers/acm/acm.h"
#include "solvers/acm/layers.h"
#include "solvers/acm/queue.h"

/* scene file + world + acm: tests/cb_sim.h */
static int sim_open(cb_sim *s, const char *path, const char *const *sets, int nsets)
{
    return cb_sim_open(s, "acm", path, NULL, NULL, sets, nsets);
}

/* ------------------------------------------------------------------ walkthrough */

/* Figure 6 of the paper: one particle falls on a fixed floor. Gravity events, a
 * certificate failure that activates layer 1 (never late: the distance is still >=
 * eta(1)), layer-1 impulses, and resting contact in which layer 1 alone carries the
 * weight (impulses over a window = m g T), with no deeper layer ever activated.
 * slack = 0 is the paper's exact rescheduling after every kick: the certificate fails
 * exactly when the guard is crossed. With a velocity allowance the certificates are
 * shorter (they may fail before the guard is reached, activating nothing), so the
 * event-sequence checks (b) are made in exact mode and the rest in both modes. */
static void walkthrough(double slack)
{
    cb_mesh mesh;
    memset(&mesh, 0, sizeof mesh);
    double rest[1][3] = {{0, 0, 0.03}};
    mesh.nv = 1;
    mesh.x = rest;
    double x[1][3] = {{0, 0, 0.03}}, v[1][3] = {{0, 0, 0}};
    double mass = 1e-3, inv_mass = 1e3;
    unsigned char pinned = 0;
    cb_collider floor = cb_default_collider(CB_COLLIDER_PLANE);
    cb_v3_set(floor.center, 0, 0, 0);
    cb_v3_set(floor.normal, 0, 0, 1);
    floor.restitution = 0.0;
    cb_world w;
    memset(&w, 0, sizeof w);
    w.mesh = &mesh;
    w.nv = 1;
    w.state.x = x;
    w.state.v = v;
    w.mass = &mass;
    w.inv_mass = &inv_mass;
    w.pinned = &pinned;
    cb_v3_set(w.gravity, 0, 0, -9.81);
    w.thickness = 0.01;
    w.ncolliders = 1;
    w.colliders = &floor;
    w.model.mesh = &mesh;

    cb_scene *sc = NULL;
    cb_error e;
    int rc;
    const char *text = "name: p\nduration: 1\ndt: 0.01\ncloth:\n  grid: {nx: 2, ny: 2, size: [1, 1]}\n"
                       "solvers:\n  acm: {stiffness: 3000, gravity_step: 0.001}\n";
    char set[64];
    snprintf(set, sizeof set, "solvers.acm.velocity_slack=%.17g", slack);
    const char *sets[] = {set};
    rc = cb_scene_load_string(text, "p.yaml", ".", sets, 1, &sc, &e);
    if (rc) fprintf(stderr, "  %s\n", e.message);
    CU_ASSERT_EQUAL_FATAL(rc, CB_OK);
    cb_params p = cb_scene_params(sc, "acm");
    const cb_solver_class *cls = cb_solver_find("acm");
    CU_ASSERT_PTR_NOT_NULL_FATAL(cls);
    void *solver = NULL;
    rc = cls->create(&w, &p, &solver, &e);
    if (rc) fprintf(stderr, "  %s\n", e.message);
    CU_ASSERT_EQUAL_FATAL(rc, CB_OK);
    long cap = 400000, n = 0;
    cb_acm_trace_entry *tr = calloc((size_t)cap, sizeof *tr);
    cb_acm_set_trace(solver, tr, cap, &n);
    /* eta(1) of the vertex-collider pair: half the default eta (the thickness, 0.01):
     * the mid-surface keeps half the thickness from colliders (README, contact distances) */
    double dt = 0.01, eta1 = 0.5 * 0.01;
    for (int k = 0; k < 100; k++) {
        cb_step_info info;
        CU_ASSERT_EQUAL_FATAL(cb_solver_step(cls, solver, &w, k, dt, &info, &e), CB_OK);
    }
    CU_ASSERT_FATAL(n > 0 && n <= cap);
    /* (a) the first event is gravity at t = 0 */
    CU_ASSERT_EQUAL(tr[0].kind, CB_ACM_EV_GRAVITY);
    CU_ASSERT_EQUAL(tr[0].t, 0.0);
    /* (b) the first certificate failure activates layer 1, not late, not deeper */
    long first_cert = -1, first_layer = -1, first_impulse = -1;
    for (long i = 0; i < n; i++) {
        if (tr[i].kind == CB_ACM_EV_CERT && first_cert < 0) first_cert = i;
        if (tr[i].kind == CB_ACM_EV_LAYER && first_layer < 0) first_layer = i;
        if (tr[i].kind == CB_ACM_EV_LAYER && tr[i].impulse > 0 && first_impulse < 0) first_impulse = i;
    }
    CU_ASSERT_FATAL(first_cert > 0 && first_layer > first_cert && first_impulse >= first_layer);
    fprintf(stderr, "  velocity_slack %g:\n", slack);
    if (slack > 0) {
        /* every certificate failure before the first layer tick found the particle still
           above A(1) (nothing to do but renew the certificate) or activated layer 1 */
        for (long i = first_cert; i < first_layer; i++)
            if (tr[i].kind == CB_ACM_EV_CERT)
                CU_ASSERT(tr[i].layers == 0 ? tr[i].distance >= cb_acm_activation(eta1, 1)
                                            : tr[i].layers == 1 && tr[i].distance >= eta1);
        goto resting;
    }
    fprintf(stderr, "  certificate failure at t = %.6f s, d = %.6g m (eta1 %g, A1 %g), first impulse t = %.6f\n",
            tr[first_cert].t, tr[first_cert].distance, eta1, cb_acm_activation(eta1, 1), tr[first_impulse].t);
    CU_ASSERT_EQUAL(tr[first_cert].layers, 1);
    CU_ASSERT(tr[first_cert].distance >= eta1);
    CU_ASSERT(tr[first_cert].distance < cb_acm_activation(eta1, 1));
    /* the free fall up to the failure is the leapfrog trajectory of gravity kicks:
       it crosses the guard C(0) within one gravity step of the analytic free-fall time */
    double tfall = sqrt(2.0 * (0.03 - cb_acm_guard(eta1, 0)) / 9.81);
    CU_ASSERT(fabs(tr[first_cert].t - tfall) < 2e-3);
    /* before the failure only gravity kicks and k-DOP box exits happen */
    for (long i = 0; i < first_cert; i++)
        CU_ASSERT(tr[i].kind == CB_ACM_EV_GRAVITY || tr[i].kind == CB_ACM_EV_KDOP);
resting:;
    /* (c) layer 1 alone: no deeper layer, distance between eta(2) and eta(1) at the end */
    cb_acm_stats st;
    cb_acm_get_stats(solver, &st);
    CU_ASSERT_EQUAL(st.max_layers, 1);
    double z = w.state.x[0][2];
    fprintf(stderr, "  resting at z = %.9f (eta1 - z = %.3g, m g / r1 = %.3g), v = %.3g, %ld events\n", z, eta1 - z,
            mass * 9.81 / 3000, w.state.v[0][2], n);
    CU_ASSERT(z > cb_acm_eta(eta1, 2) && z < eta1);
    /* (d) resting contact: layer-1 impulses over the last 0.5 s balance the weight */
    double Jsum = 0;
    for (long i = 0; i < n; i++)
        if (tr[i].kind == CB_ACM_EV_LAYER && tr[i].t > 0.5) Jsum += tr[i].impulse;
    fprintf(stderr, "  layer impulse over the last 0.5 s = %.6g N s, m g T = %.6g N s\n", Jsum, mass * 9.81 * 0.5);
    CB_ASSERT_REL(Jsum / (mass * 9.81 * 0.5), 1.0, 0.02);
    CU_ASSERT(fabs(w.state.v[0][2]) < 0.05);
    cls->destroy(solver);
    cb_scene_free(&sc);
    free(tr);
}

static void test_walkthrough_falling_particle(void)
{
    walkthrough(0.0);
    walkthrough(0.05);
}

/* ------------------------------------------------------------------ safety */

/* Count vertex-triangle and edge-edge pairs (no shared vertex) whose linear trajectories
 * from x0 to x1 touch (CCD with eta = 0). */
static long ccd_crossings(const cb_mesh *m, cb_bvh *b, cb_bvh_result *r, const double (*x0)[3],
                          const double (*x1)[3])
{
    cb_error e;
    if (cb_bvh_refit_swept(b, x0, x1, 0.0, &e) || cb_bvh_self_query(b, CB_BVH_VT | CB_BVH_EE, r, &e)) return -1;
    long hits = 0;
    cb_ccd_opts o = cb_default_ccd_opts();
    for (long k = 0; k < r->vt.n; k++) {
        int v = r->vt.p[k][0], t = r->vt.p[k][1];
        const int *f = m->f[t];
        double toi;
        hits += cb_ccd_vertex_triangle(x0[v], x1[v], x0[f[0]], x1[f[0]], x0[f[1]], x1[f[1]], x0[f[2]], x1[f[2]],
                                       &o, &toi);
    }
    for (long k = 0; k < r->ee.n; k++) {
        const int *a = m->e[r->ee.p[k][0]], *c = m->e[r->ee.p[k][1]];
        double toi;
        hits += cb_ccd_edge_edge(x0[a[0]], x1[a[0]], x0[a[1]], x1[a[1]], x0[c[0]], x1[c[0]], x0[c[1]], x1[c[1]], &o,
                                 &toi);
    }
    return hits;
}

/* ---- exact check over the real trajectories.
 * Between two knots (velocity changes, reported by cb_acm_set_path_knots) a vertex moves
 * on a straight line, so the trajectory of a step [t0, t1] is the polyline through its
 * knots: (t0, x at t0), every knot, (t1, x at t1). A primitive pair moves linearly
 * between consecutive knot times of its four vertices (merged), so CCD over each of
 * those sub-intervals is exact. Candidates: an AABB self query over each vertex's box
 * of its knots (the polyline is in the box), complete; a pair is skipped when its
 * distance at t0 exceeds the sum of the path lengths that can reduce it (the distance
 * is 1-Lipschitz in the point and in the largest motion of the other side's vertices),
 * which is also complete. The knots are checked against the lines they claim: every
 * knot lies on the previous segment (within 1e-10 m). */

typedef struct knot {
    int i;
    double t, x[3], v[3];
} knot;

typedef struct knot_log {
    knot *k;
    long n, cap;
    int oom;
} knot_log;

static void log_knot(void *ctx, int i, double t, const double x[3], const double v[3])
{
    knot_log *L = ctx;
    if (L->n == L->cap) {
        long nc = L->cap ? 2 * L->cap : 4096;
        knot *k = realloc(L->k, (size_t)nc * sizeof *k);
        if (!k) {
            L->oom = 1;
            return;
        }
        L->k = k;
        L->cap = nc;
    }
    knot *k = &L->k[L->n++];
    k->i = i;
    k->t = t;
    cb_v3_copy(k->x, x);
    cb_v3_copy(k->v, v);
}

typedef struct exact_ws {
    int nv;
    long *off, *fill, cap;   /* knots of vertex i: off[i] .. off[i+1]-1 */
    double *kt, (*kx)[3], (*kv)[3]; /* knot times, positions, velocities after */
    double *kc;              /* path length from t0 to each knot */
    double (*lo)[3], (*hi)[3], *path;
    double *mt;              /* merged times of one pair */
    long mcap;
    cb_bvh *b;
    cb_bvh_result *r;
    /* results */
    long pairs_checked, subintervals, inconsistent;
    double worst_gap;        /* largest knot distance from the previous segment */
    int first_kind, first_a, first_b;
    double first_t, first_d0;
} exact_ws;

static int exact_init(exact_ws *W, const cb_mesh *m)
{
    memset(W, 0, sizeof *W);
    cb_error e;
    W->nv = m->nv;
    W->off = calloc((size_t)m->nv + 1, sizeof *W->off);
    W->fill = calloc((size_t)m->nv, sizeof *W->fill);
    W->lo = calloc((size_t)m->nv, sizeof *W->lo);
    W->hi = calloc((size_t)m->nv, sizeof *W->hi);
    W->path = calloc((size_t)m->nv, sizeof *W->path);
    if (!W->off || !W->fill || !W->lo || !W->hi || !W->path) return 1;
    if (cb_bvh_create(m, CB_BV_AABB, &W->b, &e) || cb_bvh_result_create(&W->r, &e)) return 1;
    return cb_bvh_build(W->b, (const double (*)[3])m->x, 0.0, &e) != 0;
}

static void exact_free(exact_ws *W)
{
    free(W->off);
    free(W->fill);
    free(W->kt);
    free(W->kx);
    free(W->kv);
    free(W->kc);
    free(W->lo);
    free(W->hi);
    free(W->path);
    free(W->mt);
    cb_bvh_free(&W->b);
    cb_bvh_result_free(&W->r);
}

/* Position of vertex i at time t (t0 <= t <= t1) on its polyline (out may be NULL) and
 * the path length from t0 to t; *c is a cursor into its knots, advanced monotonically. */
static double knot_pos(const exact_ws *W, int i, long *c, double t, double out[3])
{
    long j = *c, end = W->off[i + 1] - 1;
    while (j + 1 < end && W->kt[j + 1] <= t) j++;
    *c = j;
    double ta = W->kt[j], tb = W->kt[j + 1];
    double u = tb > ta ? (t - ta) / (tb - ta) : 1.0;
    if (t == ta) u = 0.0;
    if (t == tb) u = 1.0;
    if (out)
        for (int k = 0; k < 3; k++) out[k] = W->kx[j][k] + u * (W->kx[j + 1][k] - W->kx[j][k]);
    return W->kc[j] + u * (W->kc[j + 1] - W->kc[j]);
}

/* Distance of the pair's primitives (vertex-triangle: ee = 0) and the largest decrease
 * of it that paths of lengths L can cause. */
static double pair_dist(int ee, const double x[4][3])
{
    return sqrt(ee ? cb_edge_edge_distance2(x[0], x[1], x[2], x[3], NULL, NULL, NULL, NULL)
                   : cb_point_triangle_distance2(x[0], x[1], x[2], x[3], NULL, NULL));
}

static double pair_reach(int ee, const double L[4])
{
    return ee ? fmax(L[0], L[1]) + fmax(L[2], L[3]) : L[0] + fmax(L[1], fmax(L[2], L[3]));
}

/* Exact CCD of one step: x0, v0 the state at t0, x1 at t1, L the knots in between.
 * Returns the number of touching pairs (-1 on error); W gets the diagnostics. */
static long exact_crossings(exact_ws *W, const cb_mesh *m, double t0, double t1, const double (*x0)[3],
                            const double (*v0)[3], const double (*x1)[3], const knot_log *L)
{
    int nv = W->nv;
    long need = L->n + 2L * nv;
    if (need > W->cap) {
        free(W->kt);
        free(W->kx);
        free(W->kv);
        free(W->kc);
        W->kc = malloc((size_t)need * sizeof *W->kc);
        W->kt = malloc((size_t)need * sizeof *W->kt);
        W->kx = malloc((size_t)need * sizeof *W->kx);
        W->kv = malloc((size_t)need * sizeof *W->kv);
        if (!W->kt || !W->kx || !W->kv || !W->kc) return -1;
        W->cap = need;
    }
    for (int i = 0; i <= nv; i++) W->off[i] = 0;
    for (long k = 0; k < L->n; k++) W->off[L->k[k].i + 1]++;
    for (int i = 0; i < nv; i++) W->off[i + 1] += W->off[i] + 2;
    for (int i = 0; i < nv; i++) {
        W->fill[i] = W->off[i] + 1;
        W->kt[W->off[i]] = t0;
        cb_v3_copy(W->kx[W->off[i]], x0[i]);
        W->kt[W->off[i + 1] - 1] = t1;
        cb_v3_copy(W->kx[W->off[i + 1] - 1], x1[i]);
    }
    for (long k = 0; k < L->n; k++) {
        const knot *q = &L->k[k];
        long j = W->fill[q->i]++;
        W->kt[j] = q->t;
        cb_v3_copy(W->kx[j], q->x);
    }
    /* boxes and path lengths of the polylines */
    for (int i = 0; i < nv; i++) {
        cb_v3_copy(W->lo[i], W->kx[W->off[i]]);
        cb_v3_copy(W->hi[i], W->kx[W->off[i]]);
        W->path[i] = 0;
        W->kc[W->off[i]] = 0;
        for (long j = W->off[i] + 1; j < W->off[i + 1]; j++) {
            W->path[i] += cb_v3_dist(W->kx[j - 1], W->kx[j]);
            W->kc[j] = W->path[i];
            for (int c = 0; c < 3; c++) {
                W->lo[i][c] = fmin(W->lo[i][c], W->kx[j][c]);
                W->hi[i][c] = fmax(W->hi[i][c], W->kx[j][c]);
            }
        }
    }
    /* consistency: every knot lies on the line of the previous segment (its start
       knot's velocity: v0 for the first, then each knot's), times ordered in [t0, t1] */
    for (int i = 0; i < nv; i++) W->fill[i] = W->off[i] + 1;
    for (int i = 0; i < nv; i++) cb_v3_copy(W->kv[W->off[i]], v0[i]);
    for (long k = 0; k < L->n; k++) cb_v3_copy(W->kv[W->fill[L->k[k].i]++], L->k[k].v);
    for (int i = 0; i < nv; i++)
        for (long j = W->off[i] + 1; j < W->off[i + 1]; j++) {
            double pred[3];
            if (W->kt[j] < W->kt[j - 1] || W->kt[j] < t0 || W->kt[j] > t1) W->inconsistent++;
            for (int c = 0; c < 3; c++) pred[c] = W->kx[j - 1][c] + (W->kt[j] - W->kt[j - 1]) * W->kv[j - 1][c];
            double gap = cb_v3_dist(pred, W->kx[j]);
            if (gap > W->worst_gap) W->worst_gap = gap;
            if (!(gap <= 1e-10)) W->inconsistent++;
        }
    cb_error e;
    if (cb_bvh_refit_swept(W->b, (const double (*)[3])W->lo, (const double (*)[3])W->hi, 0.0, &e) ||
        cb_bvh_self_query(W->b, CB_BVH_VT | CB_BVH_EE, W->r, &e))
        return -1;
    long hits = 0;
    cb_ccd_opts o = cb_default_ccd_opts();
    for (int pass = 0; pass < 2; pass++) {
        const cb_pair_list *P = pass == 0 ? &W->r->vt : &W->r->ee;
        for (long c = 0; c < P->n; c++) {
            int v[4];
            if (pass == 0) {
                v[0] = P->p[c][0];
                for (int k = 0; k < 3; k++) v[k + 1] = m->f[P->p[c][1]][k];
            } else {
                v[0] = m->e[P->p[c][0]][0];
                v[1] = m->e[P->p[c][0]][1];
                v[2] = m->e[P->p[c][1]][0];
                v[3] = m->e[P->p[c][1]][1];
            }
            double xs[4][3], Ls[4];
            for (int k = 0; k < 4; k++) {
                cb_v3_copy(xs[k], x0[v[k]]);
                Ls[k] = W->path[v[k]];
            }
            double d0 = pair_dist(pass, (const double (*)[3])xs), reach = pair_reach(pass, Ls);
            if (d0 > reach * (1 + 1e-9) + 1e-12) continue;
            W->pairs_checked++;
            long nt = 0;
            for (int k = 0; k < 4; k++) nt += W->off[v[k] + 1] - W->off[v[k]];
            if (nt > W->mcap) {
                free(W->mt);
                W->mt = malloc((size_t)nt * sizeof *W->mt);
                if (!W->mt) return -1;
                W->mcap = nt;
            }
            /* merge the four sorted knot-time lists, without repeats */
            long cm[4];
            for (int k = 0; k < 4; k++) cm[k] = W->off[v[k]];
            nt = 0;
            for (;;) {
                double tmin = INFINITY;
                for (int k = 0; k < 4; k++)
                    if (cm[k] < W->off[v[k] + 1] && W->kt[cm[k]] < tmin) tmin = W->kt[cm[k]];
                if (tmin == INFINITY) break;
                for (int k = 0; k < 4; k++)
                    while (cm[k] < W->off[v[k] + 1] && W->kt[cm[k]] == tmin) cm[k]++;
                W->mt[nt++] = tmin;
            }
            /* conservative advancement: from each time ta, skip every merged time up to
               which the path lengths cannot close the distance at ta; CCD on the first
               sub-interval that cannot be skipped */
            long ca[4], cs[4], cb[4];
            for (int k = 0; k < 4; k++) ca[k] = cs[k] = cb[k] = W->off[v[k]];
            int hit = 0;
            long j = 0;
            while (j + 1 < nt && !hit) {
                double ta = W->mt[j], xa[4][3], La[4], Lb[4];
                for (int k = 0; k < 4; k++) La[k] = knot_pos(W, v[k], &ca[k], ta, xa[k]);
                double d = pair_dist(pass, (const double (*)[3])xa);
                long jj = j;
                while (jj + 1 < nt) {
                    for (int k = 0; k < 4; k++) Lb[k] = knot_pos(W, v[k], &cs[k], W->mt[jj + 1], NULL) - La[k];
                    if (!(pair_reach(pass, Lb) * (1 + 1e-9) + 1e-15 < d)) break;
                    jj++;
                }
                if (jj > j) {
                    j = jj;
                    continue;
                }
                double tb = W->mt[j + 1], xb[4][3], toi;
                for (int k = 0; k < 4; k++) knot_pos(W, v[k], &cb[k], tb, xb[k]);
                W->subintervals++;
                hit = pass == 0 ? cb_ccd_vertex_triangle(xa[0], xb[0], xa[1], xb[1], xa[2], xb[2], xa[3], xb[3], &o, &toi)
                                : cb_ccd_edge_edge(xa[0], xb[0], xa[1], xb[1], xa[2], xb[2], xa[3], xb[3], &o, &toi);
                if (hit && hits == 0) {
                    W->first_kind = pass;
                    W->first_a = P->p[c][0];
                    W->first_b = P->p[c][1];
                    W->first_t = ta + toi * (tb - ta);
                    W->first_d0 = d0;
                }
                j++;
            }
            hits += hit;
        }
    }
    return hits;
}

enum {
    SAFE_EXACT = 1,        /* also check the exact piecewise-linear trajectories */
    SAFE_CHORD_REPORT = 2  /* only report the straight-line (chord) check, do not assert it */
};

/* Run a scene and check at every step: no vertex inside a collider, no self
 * intersection, no CCD crossing along the chord since the previous step and (SAFE_EXACT)
 * none along the exact trajectories. Returns events processed. */
static long run_safely_opts(const char *path, const char *const *sets, int nsets, int steps, int flags,
                            long *close_pairs)
{
    cb_sim s;
    if (sim_open(&s, path, sets, nsets)) {
        CU_FAIL("scene did not open");
        return -1;
    }
    cb_error e;
    cb_bvh *b = NULL;
    cb_bvh_result *r = NULL;
    cb_selfcheck *sc = NULL;
    CU_ASSERT_FATAL(!cb_bvh_create(s.w->mesh, CB_BV_DEFAULT, &b, &e) && !cb_bvh_result_create(&r, &e) &&
                    !cb_selfcheck_create(s.w->mesh, CB_BV_DEFAULT, &sc, &e));
    CU_ASSERT_FATAL(!cb_bvh_build(b, (const double (*)[3])s.w->state.x, 0.0, &e));
    exact_ws W;
    knot_log K = {0};
    if (flags & SAFE_EXACT) {
        CU_ASSERT_FATAL(exact_init(&W, s.w->mesh) == 0);
        cb_acm_set_path_knots(s.solver, log_knot, &K);
    }
    size_t bytes = (size_t)s.w->nv * sizeof(double[3]);
    double (*prev)[3] = malloc(bytes), (*prevv)[3] = malloc(bytes);
    memcpy(prev, s.w->state.x, bytes);
    memcpy(prevv, s.w->state.v, bytes);
    long events = 0, crossings = 0, inters = 0, inside = 0, exact_steps = 0, exact_pairs = 0, knots = 0;
    double min_dist = INFINITY;
    int ok = 1, first_exact_step = -1;
    for (int k = 0; k < steps && ok; k++) {
        double t0 = s.w->state.t;
        K.n = 0;
        if (cb_sim_step(&s)) {
            ok = 0;
            break;
        }
        events += s.info.events;
        const double (*x)[3] = (const double (*)[3])s.w->state.x;
        for (int i = 0; i < s.w->nv; i++) {
            double d = cb_world_collider_distance(s.w, s.w->state.t, x[i], NULL, NULL, NULL);
            if (d <= 0) inside++;
            if (d < min_dist) min_dist = d;
        }
        long c = ccd_crossings(s.w->mesh, b, r, (const double (*)[3])prev, x);
        long ni = 0;
        cb_selfcheck_intersections(sc, x, &ni, &e);
        crossings += c != 0;
        inters += ni;
        if (flags & SAFE_EXACT) {
            CU_ASSERT_FATAL(!K.oom);
            knots += K.n;
            long h = exact_crossings(&W, s.w->mesh, t0, s.w->state.t, (const double (*)[3])prev,
                                     (const double (*)[3])prevv, x, &K);
            CU_ASSERT(h >= 0);
            if (h > 0 && first_exact_step < 0) {
                first_exact_step = k;
                fprintf(stderr, "  exact crossing in step %d: %s pair (%d, %d) at t = %.9g, distance %.3g at the step "
                                "start\n",
                        k, W.first_kind ? "edge-edge" : "vertex-triangle", W.first_a, W.first_b, W.first_t, W.first_d0);
            }
            exact_steps += h > 0;
            exact_pairs += h > 0 ? h : 0;
        }
        memcpy(prev, x, bytes);
        memcpy(prevv, s.w->state.v, bytes);
    }
    fprintf(stderr, "  %s: %ld events, %ld inside colliders, %ld self intersections, %ld steps with chord CCD crossings, "
                    "min collider distance %.3g\n",
            path, events, inside, inters, crossings, min_dist);
    if (flags & SAFE_EXACT) {
        fprintf(stderr, "  exact: %ld knots, %ld pairs checked over %ld sub-intervals, %ld steps (%ld pairs) with "
                        "crossings, %ld inconsistent knots (largest gap %.3g m)\n",
                knots, W.pairs_checked, W.subintervals, exact_steps, exact_pairs, W.inconsistent, W.worst_gap);
        CU_ASSERT_EQUAL(exact_pairs, 0);
        CU_ASSERT_EQUAL(W.inconsistent, 0);
        if (close_pairs) *close_pairs = W.pairs_checked; /* close pairs whose trajectories were examined */
        exact_free(&W);
        free(K.k);
    }
    CU_ASSERT(ok);
    CU_ASSERT_EQUAL(inside, 0);
    CU_ASSERT_EQUAL(inters, 0);
    if (!(flags & SAFE_CHORD_REPORT)) CU_ASSERT_EQUAL(crossings, 0);
    free(prev);
    free(prevv);
    cb_selfcheck_free(&sc);
    cb_bvh_result_free(&r);
    cb_bvh_free(&b);
    cb_sim_close(&s);
    return events;
}

static long run_safely(const char *path, const char *const *sets, int nsets, int steps, int *min_ok)
{
    (void)min_ok;
    return run_safely_opts(path, sets, nsets, steps, SAFE_EXACT, NULL);
}

static void test_safety_shipped_scenes(void)
{
    const char *drape[] = {"duration=0.6"};
    run_safely("data/scenes/acm_drape_small.yaml", drape, 1, 120, NULL);
    run_safely("data/scenes/acm_two_sheets.yaml", NULL, 0, 300, NULL);
    /* the figure scenes, shortened and coarsened so that contact starts early: walls at
       1 m/s crushing the sheets, a coarse cloth on the nails, the fast ball, the ribbons
       pulled apart at 0.5 m/s (they meet after about 0.08 s). For the ribbons the chord
       check (straight line from step to step) is only reported: over 40 such steps it
       reports crossings in 5 of them while the exact check over the real
       piecewise-linear trajectories (7.1e6 knots) finds none, i.e. chords cutting
       across paths that went around the other ribbon; 24 steps keep the suite fast. */
    const char *ribbons[] = {"cloth.pins.0.velocity=[-0.5,0,0]", "cloth.pins.1.velocity=[0.5,0,0]"};
    long close_pairs = 0;
    run_safely_opts("data/scenes/acm_interlocked_ribbons.yaml", ribbons, 2, 24, SAFE_EXACT | SAFE_CHORD_REPORT,
                    &close_pairs);
    CU_ASSERT(close_pairs > 0); /* the ribbons did come close: the exact check had work to do */
    const char *compactor[] = {"colliders.1.velocity=[1,0,0]", "colliders.2.velocity=[-1,0,0]"};
    run_safely("data/scenes/acm_compactor.yaml", compactor, 2, 40, NULL);
    const char *nails[] = {"cloth.grid.nx=14", "cloth.grid.ny=14"};
    run_safely("data/scenes/acm_nails.yaml", nails, 2, 40, NULL);
    const char *curtain[] = {"cloth.grid.nx=14", "cloth.grid.ny=14", "colliders.0.velocity=[0,8,0]"};
    run_safely("data/scenes/acm_curtains.yaml", curtain, 3, 20, NULL);
}

/* Deliberately bad parameters: tiny eta(1), tiny r(1), a huge impact velocity. Still no
 * crossing; only more events per simulated second. */
static void test_safety_bad_parameters(void)
{
    const char *base[] = {"duration=0.3", "cloth.grid.nx=10", "cloth.grid.ny=10"};
    long ev_good = run_safely("data/scenes/acm_drape_small.yaml", base, 3, 60, NULL);
    const char *tiny_eta[] = {"duration=0.3", "cloth.grid.nx=10", "cloth.grid.ny=10", "solvers.acm.eta=1e-5"};
    long ev_eta = run_safely("data/scenes/acm_drape_small.yaml", tiny_eta, 4, 60, NULL);
    const char *soft[] = {"duration=0.3", "cloth.grid.nx=10", "cloth.grid.ny=10", "solvers.acm.stiffness=1e-2"};
    long ev_soft = run_safely("data/scenes/acm_drape_small.yaml", soft, 4, 60, NULL);
    fprintf(stderr, "  events over 0.3 s: normal %ld, eta 1e-5 %ld, stiffness 1e-2 %ld\n", ev_good, ev_eta, ev_soft);
    const char *fast[] = {"duration=0.05", "cloth.grid.nx=10", "cloth.grid.ny=10", "cloth.velocity=[0,0,-30]"};
    long ev_fast = run_safely("data/scenes/acm_drape_small.yaml", fast, 4, 10, NULL);
    fprintf(stderr, "  events: normal %ld (20 steps), 30 m/s impact %ld (10 steps)\n", ev_good, ev_fast);
}

/* ------------------------------------------------------------------ conservation */

static void momentum(const cb_world *w, double P[3], double *scale)
{
    cb_v3_zero(P);
    *scale = 0;
    for (int i = 0; i < w->nv; i++) {
        cb_v3_axpy(P, w->mass[i], w->state.v[i]);
        *scale += w->mass[i] * cb_v3_norm(w->state.v[i]);
    }
}

/* Two sheets thrown at each other without gravity: linear momentum is conserved to
 * round-off through the collision (which really happens: layers are activated). */
static void test_two_sheets_momentum(void)
{
    cb_sim s;
    CU_ASSERT_EQUAL_FATAL(cb_sim_world(&s, "data/scenes/acm_two_sheets.yaml", NULL, NULL, NULL, 0), 0);
    int half = s.w->nv / 2;
    for (int i = 0; i < s.w->nv; i++) s.w->state.v[i][2] += i < half ? -0.6 : 0.6;
    CU_ASSERT_EQUAL_FATAL(cb_sim_solver(&s, "acm"), CB_OK);
    double P0[3], P[3], scale;
    momentum(s.w, P0, &scale);
    double worst = 0, PA0 = 0, PA = 0;
    for (int i = 0; i < half; i++) PA0 += s.w->mass[i] * s.w->state.v[i][2];
    for (int k = 0; k < 300; k++) {
        CU_ASSERT_EQUAL_FATAL(cb_sim_step(&s), CB_OK);
        if (k == 59)
            for (int i = 0; i < half; i++) PA += s.w->mass[i] * s.w->state.v[i][2];
        momentum(s.w, P, &scale);
        double d[3];
        cb_v3_sub(d, P, P0);
        worst = fmax(worst, cb_v3_norm(d));
    }
    cb_acm_stats st;
    cb_acm_get_stats(s.solver, &st);
    double sep;
    cb_error e;
    CU_ASSERT_EQUAL(cb_min_separation(s.w->mesh, (const double (*)[3])s.w->state.x, &sep, &e), CB_OK);
    fprintf(stderr, "  |dP| max %.3g (scale %.3g), layer events %ld, max layers %d, final min separation %.4g, z "
                    "momentum of sheet A %.3g -> %.3g at t = 0.06 s\n",
            worst, scale, st.events[CB_ACM_EV_LAYER], st.max_layers, sep, PA0, PA);
    CU_ASSERT(st.events[CB_ACM_EV_LAYER] > 0 && st.max_layers >= 1);
    CU_ASSERT(worst <= 1e-14 * scale);
    CU_ASSERT(sep > 0);
    CU_ASSERT(PA - PA0 > 0.2 * fabs(PA0)); /* the contact impulse pushed sheet A back */
    cb_sim_close(&s);
}

/* One spring, 10^4 periods: the energy error stays bounded and does not drift. */
static void test_spring_energy_long_run(void)
{
    const char *sets[] = {"dt=0.01", "duration=1000", "solvers.acm.safety=0.1"};
    cb_sim s;
    CU_ASSERT_EQUAL_FATAL(sim_open(&s, "data/scenes/single_spring.yaml", sets, 3), 0);
    double k = s.scene->cloth.stretch, L = s.w->model.rest_length[0];
    double mu = s.w->mass[0] * s.w->mass[1] / (s.w->mass[0] + s.w->mass[1]);
    double T = 2 * M_PI / sqrt(k / mu);
    long nsteps = (long)ceil(1e4 * T / 0.01);
    double E0 = NAN, maxdev = 0, maxdev_early = 0, st = 0, se = 0, stt = 0, ste = 0;
    for (long n = 0; n < nsteps; n++) {
        CU_ASSERT_EQUAL_FATAL(cb_sim_step(&s), CB_OK);
        const cb_world *w = s.w;
        double l = cb_v3_dist(w->state.x[0], w->state.x[1]);
        double E = 0.5 * k * (l - L) * (l - L);
        for (int i = 0; i < 2; i++) E += 0.5 * w->mass[i] * cb_v3_norm2(w->state.v[i]);
        if (n == 0) E0 = E;
        double t = w->state.t;
        maxdev = fmax(maxdev, fabs(E - E0));
        if (n < nsteps / 10) maxdev_early = maxdev;
        st += t;
        se += E - E0;
        stt += t * t;
        ste += t * (E - E0);
    }
    double N = (double)nsteps, tend = s.w->state.t;
    double slope = (N * ste - st * se) / (N * stt - st * st);
    fprintf(stderr, "  %ld steps over %.0f periods: max |E - E0| / E0 = %.3g (first tenth %.3g), fitted drift over the "
                    "run %.3g E0\n",
            nsteps, tend / T, maxdev / E0, maxdev_early / E0, slope * tend / E0);
    /* E uses the AVI's staggered (half-step) velocities: an O(omega h) oscillation */
    CU_ASSERT(maxdev / E0 < 0.25);
    CU_ASSERT(maxdev < 1.25 * maxdev_early); /* bounded: no growth after the first tenth */
    CU_ASSERT(fabs(slope * tend) < 0.01 * maxdev + 1e-6 * E0);
    cb_sim_close(&s);
}

/* Multistep resonance (acm.c, bend_clock): a 12 x 12 sheet held still at its left and
 * right edges, set spinning about the axis through both grips at 4 rad/s, no gravity,
 * no contact: the pins do no work, so the energy must stay at its start up to the
 * oscillation of the AVI's staggered velocities. With the hinges' own clocks (14 times
 * the springs' steps, beyond the springs' half period) the hinge kicks pump the
 * stretch modes and the energy climbs (issue 33: the twisted sheet's gain); with
 * bend_clock: stretch no hinge ticks slower than the springs at its vertices. Returns
 * the largest |E - E0| / E0 over 1.5 s. */
static double spin_energy_drift(const char *bend_clock)
{
    const char *text = "name: spin\nduration: 1.5\ndt: 0.002\ngravity: [0, 0, 0]\n"
                       "cloth:\n  grid: {nx: 12, ny: 12, size: [1.0, 1.0], origin: [-0.5, -0.5, 1.0]}\n"
                       "  density: 0.1\n  stretch: 1000.0\n  bend: 1.0e-4\n  thickness: 0.002\n"
                       "  angular_velocity: [4, 0, 0]\n  pins:\n    - {select: left}\n    - {select: right}\n";
    char set[64];
    snprintf(set, sizeof set, "solvers.acm.bend_clock=%s", bend_clock);
    const char *sets[] = {set};
    cb_sim s;
    if (cb_sim_open(&s, "acm", NULL, text, NULL, sets, 1)) {
        CU_FAIL("spin scene did not open");
        return NAN;
    }
    double E0 = NAN, worst = 0;
    for (int k = 0; k < 750; k++) {
        if (cb_sim_step(&s)) {
            CU_FAIL("acm step failed");
            break;
        }
        double E = cb_metrics_total_energy(s.w, &s.info);
        if (k == 0) E0 = E;
        worst = fmax(worst, fabs(E - E0) / E0);
    }
    cb_acm_stats st;
    cb_acm_get_stats(s.solver, &st);
    fprintf(stderr, "  bend_clock %s: max |E - E0| / E0 = %.4f over 1.5 s (E0 %.4g J), %ld elastic events\n",
            bend_clock, worst, E0, st.events[CB_ACM_EV_STRETCH] + st.events[CB_ACM_EV_BEND]);
    cb_sim_close(&s);
    return worst;
}

static void test_bend_clock_resonance(void)
{
    double capped = spin_energy_drift("stretch"), own = spin_energy_drift("element");
    /* the staggered velocities alone: well under 2% here (an O(omega h) oscillation) */
    CU_ASSERT(capped < 0.02);
    /* the reduced case does show the resonance: the hinges' own clocks drift beyond it */
    CU_ASSERT(own > 0.02);
}

/* A triangle-mesh collider, static here, is refused at create with a message that names
 * the collider and the reason (acm.c: what supporting them takes), not run unsafely. */
static void test_mesh_collider_refused(void)
{
    cb_sim s;
    CU_ASSERT_EQUAL_FATAL(cb_sim_world(&s, "data/scenes/drape_mesh.yaml", NULL, NULL, NULL, 0), 0);
    CU_ASSERT_EQUAL(s.w->colliders[0].type, CB_COLLIDER_MESH);
    CU_ASSERT_EQUAL(cb_sim_solver(&s, "acm"), CB_ERR_INPUT);
    CU_ASSERT_PTR_NULL(s.solver);
    CU_ASSERT_PTR_NOT_NULL(strstr(s.e.message, "collider 0 (line"));
    CU_ASSERT_PTR_NOT_NULL(strstr(s.e.message, "triangle-mesh collider, which acm does not support, static or moving"));
    CU_ASSERT_PTR_NOT_NULL(strstr(s.e.message, "per cloth vertex"));
    cb_sim_close(&s);
}

/* ------------------------------------------------------------------ asynchrony */

/* A strip whose cells grow geometrically (ratio 8 from one end to the other): every
 * element ticks at its own rate (ticks = elapsed / step), and the small elements take
 * proportionally more steps. */
static void test_asynchrony_graded_mesh(void)
{
    const char *dir = cb_test_tmpdir();
    char path[600];
    snprintf(path, sizeof path, "%s/graded.obj", dir);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    int nx = 12, ny = 4;
    double xs[12], q = pow(8.0, 1.0 / 10.0), x = 0, h = 0.01;
    for (int i = 0; i < nx; i++) {
        xs[i] = x;
        if (i < nx - 1) x += h * pow(q, i);
    }
    for (int j = 0; j < ny; j++)
        for (int i = 0; i < nx; i++) fprintf(f, "v %.9f %.9f 0\n", xs[i], 0.01 * j);
    for (int j = 0; j < ny - 1; j++)
        for (int i = 0; i < nx - 1; i++) {
            int a = 1 + i + nx * j, b = a + 1, c = a + nx + 1, d = a + nx;
            fprintf(f, "f %d %d %d\nf %d %d %d\n", a, b, c, a, c, d);
        }
    fclose(f);
    const char *text = "name: graded\nduration: 0.05\ndt: 0.001\ngravity: [0, 0, 0]\n"
                       "cloth:\n  mesh: graded.obj\n  density: 0.1\n  stretch: 100\n  bend: 1e-5\n"
                       "  initial_stretch: 1.02\n";
    cb_sim s;
    CU_ASSERT_EQUAL_FATAL(cb_sim_world(&s, NULL, text, dir, NULL, 0), 0);
    CU_ASSERT_EQUAL_FATAL(cb_sim_solver(&s, "acm"), CB_OK);
    for (int k = 0; k < 50; k++) CU_ASSERT_EQUAL_FATAL(cb_sim_step(&s), CB_OK);
    const cb_mesh *m = s.w->mesh;
    double tend = s.w->state.t, hmin = INFINITY, hmax = 0, fine_ticks = 0, coarse_ticks = 0;
    int nfine = 0, ncoarse = 0, bad = 0;
    for (int e = 0; e < m->ne; e++) {
        double he = cb_acm_element_step(s.solver, CB_ACM_EV_STRETCH, e);
        long ticks = cb_acm_element_ticks(s.solver, CB_ACM_EV_STRETCH, e);
        long expect = (long)floor(tend / he) + 1; /* ticks at 0, h, 2h, ... <= tend */
        if (labs(ticks - expect) > 1) bad++;
        hmin = fmin(hmin, he);
        hmax = fmax(hmax, he);
        /* horizontal edges of the finest and the coarsest column */
        int a = m->e[e][0] % nx, b = m->e[e][1] % nx;
        if (a + b == 1 && a != b) { fine_ticks += (double)ticks; nfine++; }
        if (a + b == 2 * nx - 3 && a != b) { coarse_ticks += (double)ticks; ncoarse++; }
    }
    fine_ticks /= nfine;
    coarse_ticks /= ncoarse;
    fprintf(stderr, "  stretch steps %.3g .. %.3g s; mean ticks: finest column %.1f, coarsest %.1f (ratio %.2f)\n",
            hmin, hmax, fine_ticks, coarse_ticks, fine_ticks / coarse_ticks);
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(hmax / hmin > 3.0);
    /* masses scale with the cell width (ratio 8 end to end), steps with sqrt(mass):
       the finest column must tick at least twice as often as the coarsest */
    CU_ASSERT(fine_ticks > 2.0 * coarse_ticks);
    cb_sim_close(&s);
}

/* ------------------------------------------------------------------ determinism */

static void test_determinism(void)
{
    const char *sets[] = {"duration=0.4", "cloth.grid.nx=12", "cloth.grid.ny=12"};
    double (*xa)[3] = NULL;
    long ev[2] = {0, 0};
    int same = 1;
    for (int run = 0; run < 2; run++) {
        cb_sim s;
        CU_ASSERT_EQUAL_FATAL(sim_open(&s, "data/scenes/acm_drape_small.yaml", sets, 3), 0);
        size_t bytes = (size_t)s.w->nv * sizeof(double[3]);
        if (!xa) xa = calloc(80, bytes);
        for (int k = 0; k < 80; k++) {
            CU_ASSERT_EQUAL_FATAL(cb_sim_step(&s), CB_OK);
            ev[run] += s.info.events;
            if (run == 0) memcpy(xa[(size_t)k * (size_t)s.w->nv], s.w->state.x, bytes);
            else if (memcmp(xa[(size_t)k * (size_t)s.w->nv], s.w->state.x, bytes)) same = 0;
        }
        cb_sim_close(&s);
    }
    fprintf(stderr, "  events %ld and %ld, frames identical: %d\n", ev[0], ev[1], same);
    CU_ASSERT_EQUAL(ev[0], ev[1]);
    CU_ASSERT(same);
    free(xa);
}

/* The event queue's due times (solvers/acm/queue.h): entries given with
 * cb_acm_queue_defer sit in the heap no later than their due time, and the owner moves
 * one that comes up early to its due time (as acm's run loop does). Random sets, defers
 * and removals on 60 ids, with ties in time: the ids must come out in the order of
 * (due time, key), exactly as a plain sorted list of the last times given says. */
static void test_queue_due_order(void)
{
    enum { IDS = 60 };
    cb_acm_queue q = {0};
    CU_ASSERT_EQUAL_FATAL(cb_acm_queue_reserve(&q, IDS), 0);
    double due[IDS];
    int queued[IDS] = {0}, mismatches = 0, pops = 0, early = 0;
    unsigned st = 99;
    for (int op = 0; op < 20000; op++) {
        st = st * 1103515245u + 12345u;
        int id = (int)(st >> 16) % IDS, what = (int)(st >> 8) % 8;
        double t = (double)((st >> 4) % 50); /* few distinct times: ties by key */
        uint64_t key = cb_acm_qkey(id % 3, id);
        if (what < 3) {
            cb_acm_queue_set(&q, id, t, key);
            due[id] = t;
            queued[id] = 1;
        } else if (what < 6) {
            cb_acm_queue_defer(&q, id, t, key);
            due[id] = t;
            queued[id] = 1;
        } else if (what == 6 && queued[id]) {
            cb_acm_queue_remove(&q, id);
            queued[id] = 0;
        } else if (!cb_acm_queue_empty(&q)) {
            const cb_acm_qentry *top = cb_acm_queue_top(&q);
            int tid = top->id;
            if (top->t < q.slot[tid].due) { /* early: to its due time, not processed */
                cb_acm_queue_set(&q, tid, q.slot[tid].due, top->key);
                early++;
                continue;
            }
            /* the expected next: the least (due, key) among the queued ids */
            int want = -1;
            for (int j = 0; j < IDS; j++) {
                if (!queued[j]) continue;
                uint64_t kj = cb_acm_qkey(j % 3, j), kw = want < 0 ? 0 : cb_acm_qkey(want % 3, want);
                if (want < 0 || due[j] < due[want] || (due[j] == due[want] && kj < kw)) want = j;
            }
            cb_acm_qentry e = cb_acm_queue_pop(&q);
            mismatches += e.id != want || e.t != due[want];
            queued[e.id] = 0;
            pops++;
        }
    }
    fprintf(stderr, "  %d pops, %d entries moved to their due time, %d out of order\n", pops, early, mismatches);
    CU_ASSERT(pops > 1000);
    CU_ASSERT(early > 100);
    CU_ASSERT_EQUAL(mismatches, 0);
    cb_acm_queue_release(&q);
}

CB_TEST_MAIN("acm",
    CB_TEST(test_walkthrough_falling_particle),
    CB_TEST(test_two_sheets_momentum),
    CB_TEST(test_asynchrony_graded_mesh),
    CB_TEST(test_determinism),
    CB_TEST(test_spring_energy_long_run),
    CB_TEST(test_bend_clock_resonance),
    CB_TEST(test_mesh_collider_refused),
    CB_TEST(test_safety_shipped_scenes),
    CB_TEST(test_safety_bad_parameters),
    CB_TEST(test_queue_due_order))
