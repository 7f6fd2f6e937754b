/* solvers/pbd_contact.c — the pbd/xpbd solver's contact constraints (pbd_internal.h;
 * the method is described in solvers/pbd.c): collider constraints from continuous
 * entry of each vertex's substep path, self-contact constraints from the spatial hash
 * (small_steps: through a candidate cache kept across substeps and steps), the final
 * collider pass and the contact velocities (restitution, friction). */
#include "solvers/pbd_internal.h"
#include "solvers/pbd.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "contact/colliders.h"
#include "contact/spatial_hash.h"
#include "contact/contact_probe.h"
#include "core/solver.h"
#include "core/vec3.h"
#include "solvers/pbd_constraints.h"
#include "solvers/pbd_simd.h"

/* ------------------------------------------------------------ contact generation */

/* Signed distance of x + sigma (p - x) from collider c at time t0 + sigma h, minus offset;
 * with n, the point (pt) and the collider's normal there. Without it, the distance alone
 * (cb_collider_distance: the same value, bitwise, without the normal's cost). */
static double entry_fn(const cb_collider *c, const double x[3], const double p[3], double t0, double h,
                       double sigma, double offset, double pt[3], double n[3])
{
    for (int k = 0; k < 3; k++) pt[k] = x[k] + sigma * (p[k] - x[k]);
    if (!n) return cb_collider_distance(c, t0 + sigma * h, pt) - offset;
    return cb_collider_query(c, t0 + sigma * h, pt, n, NULL) - offset;
}

void cb_pbd_collider_constraints(pbd_solver *s, const cb_world *w, double t0, double h)
{
    s->ncc = 0;
    for (int i = 0; i < w->nv; i++) {
        if (s->w[i] == 0.0) continue;
        const double *x = w->state.x[i], *p = s->p[i];
        for (int c = 0; c < w->ncolliders; c++) {
            const cb_collider *col = &w->colliders[c];
            double pt[3];
            double f1 = entry_fn(col, x, p, t0, h, 1.0, s->offset, pt, NULL);
            if (f1 >= fmax(s->offset, 1e-9)) continue; /* clearly outside at the end (margin: offset) */
            double f0 = entry_fn(col, x, p, t0, h, 0.0, s->offset, pt, NULL);
            coll_con *k = &s->cc[s->ncc];
            if (f0 >= 0 && f1 < 0) {
                /* continuous: bisect for the entry point (f = 0) */
                double lo = 0, hi = 1;
                for (int it = 0; it < 40; it++) {
                    double mid = 0.5 * (lo + hi);
                    if (entry_fn(col, x, p, t0, h, mid, s->offset, pt, NULL) >= 0) lo = mid;
                    else hi = mid;
                }
                entry_fn(col, x, p, t0, h, lo, s->offset, k->q, k->n);
            } else {
                /* static: closest point of p (inside, or within the margin) */
                double cp[3];
                cb_collider_query(col, t0 + h, p, k->n, cp);
                for (int q = 0; q < 3; q++) k->q[q] = cp[q] + s->offset * k->n[q];
            }
            double vr[3];
            cb_collider_velocity(col, t0 + h, p, k->vc);
            cb_v3_sub(vr, s->vpred[i], k->vc);
            k->vn0 = cb_v3_dot(vr, k->n);
            k->v = i;
            k->col = c;
            k->push = 0.0;
            k->active = 0;
            s->ncc++;
        }
    }
}

/* A triangle (a, b, c) at one set of positions, for the side tests of its pairs (the
 * candidates come by triangle): its corner a, edges e1 = b - a, e2 = c - a, normal
 * N = e1 x e2 and |N|^2. */
typedef struct tri_frame { const double *a; double e1[3], e2[3], N[3], n2; } tri_frame;

static void tri_frame_set(tri_frame *t, const double a[3], const double b[3], const double c[3])
{
    t->a = a;
    cb_v3_sub(t->e1, b, a);
    cb_v3_sub(t->e2, c, a);
    cb_v3_cross(t->N, t->e1, t->e2);
    t->n2 = cb_v3_norm2(t->N);
}

/* Whether the projection of y on the plane of triangle t lies in the triangle
 * (barycentric tolerance tol); r = y - a. */
static int tri_inside(const double y[3], const tri_frame *t, double tol, double r[3])
{
    cb_v3_sub(r, y, t->a);
    if (!(t->n2 > 0)) return 0;
    double t1[3], t2[3];
    cb_v3_cross(t1, r, t->e2);
    cb_v3_cross(t2, t->e1, r);
    double u = cb_v3_dot(t1, t->N) / t->n2, v = cb_v3_dot(t2, t->N) / t->n2;
    return u >= -tol && v >= -tol && u + v <= 1.0 + tol;
}

/* The signed distance of y = a + r from the plane of triangle t (0 for a degenerate one). */
static double tri_side(const double r[3], const tri_frame *t)
{
    return t->n2 > 0 ? cb_v3_dot(r, t->N) / sqrt(t->n2) : 0.0;
}

/* ------------------------------------------------------------ self contact */

/* small_steps' candidate cache (the idea of fms's self_cache, solvers/step_contact.h,
 * applied across substeps). A substep's self-contact pairs are the (v, t), v not in t,
 * whose vertex at the prediction p lies within reach = self_thickness + self_margin of
 * the box of t (Euclidean distance to the box) and of each of its slabs along the
 * diagonals x +- y, x +- z, y +- z (dop_near): every pair within reach of each other
 * is one, and the far corner of a grid square, inside the box of the square's other
 * triangle on a cloth along the axes, is not. The spatial hash with its box filter at
 * reach + delta at positions pb finds every pair whose box gaps (per coordinate) are
 * at most reach + delta there. Each gap is a difference between a coordinate of v and
 * one of a vertex of t (or 0), so since pb it changed by at most hi_k - lo_k, the range
 * of p[.][k] - pb[.][k] over the vertices; with spread = max_k (hi_k - lo_k) / 2 a
 * box gap changed by at most 2 spread, and a diagonal's (the sum or difference of two
 * coordinates) by at most 4 spread. So while 2 spread < delta (a common translation
 * of the cloth counts nothing) the candidates of pb, the hash's pairs within
 * sqrt(2) reach + 2 delta of each diagonal slab there, hold every pair of p; each
 * substep takes, in the candidates' order (by triangle, then vertex), those passing
 * dop_near: the pairs of a query at reach, in its order. The tolerances cover the
 * rounding of the differences and sums and the hash's slack. delta: CACHE_SUBSTEPS x
 * the spread of this substep's motion (p - x), at least CACHE_MIN x reach, at most the
 * hash's cell (the query's cost grows with its distance); self_cache false: a query
 * every substep. The constants from the 60 x 60 drape (bench --case
 * drape_sphere_contact --size 60, CPU time per step, one thread): CACHE_MIN 1.25 4.9 ms,
 * 1 5.0 ms, 1.5 and 2 8.6 ms: from sqrt(2) reach + 2 delta > the edge (17 mm, reach
 * 4 mm) the far corners stay candidates, one per triangle, tested every substep
 * (their side tests were 3 ms of the step). With the box alone (no diagonals),
 * CACHE_SUBSTEPS 8 against 16 and CACHE_MIN 2 against 1 and 4 were measured over steps
 * 6..45: (8, 2) 16.5 ms, (16, 2) 17.8, (8, 1) 18.0, (8, 4) 19.5. tests/test_pbd_contact.c
 * checks every pair of a search at each substep is among the candidates, and the run
 * is that of self_cache false bit for bit. Before issue 35 small_steps searched once
 * per step at a distance grown by the step's expected motion and kept the pairs within
 * it (exact point-triangle distances): a vertex faster than expected could be missed,
 * and the search with its distance tests was most of the step (12 of 14.6 ms on that
 * drape). */
#define SQRT2 1.4142135623730951
#define CACHE_SUBSTEPS 8.0
#define CACHE_MIN 1.25

/* max over k of half the range of a[i][k] - b[i][k]; *maxabs (if not NULL) the largest |a[i][k]| */
static double motion_spread(const double (*a)[3], const double (*b)[3], int n, double *maxabs)
{
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY}, big = 0.0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) {
            double d = a[i][k] - b[i][k];
            if (d < lo[k]) lo[k] = d;
            if (d > hi[k]) hi[k] = d;
            if (fabs(a[i][k]) > big) big = fabs(a[i][k]);
        }
    if (maxabs) *maxabs = big;
    double r = 0.0;
    for (int k = 0; k < 3; k++) r = fmax(r, 0.5 * (hi[k] - lo[k]));
    return r;
}

/* A triangle's bounding slabs (an 18-DOP): [lo[d], hi[d]] the range of its vertices'
 * coordinate along direction d: the axes x, y, z, then the unnormalised diagonals
 * x + y, x - y, x + z, x - z, y + z, y - z; big, its largest |coordinate|. */
typedef struct tri_dop { double lo[9], hi[9], big; } tri_dop;

static void dop_coords(const double y[3], double c[9])
{
    c[0] = y[0];
    c[1] = y[1];
    c[2] = y[2];
    c[3] = y[0] + y[1];
    c[4] = y[0] - y[1];
    c[5] = y[0] + y[2];
    c[6] = y[0] - y[2];
    c[7] = y[1] + y[2];
    c[8] = y[1] - y[2];
}

static void tri_dop_set(tri_dop *t, const double a[3], const double b[3], const double c[3])
{
    double ca[9], cb[9], cc[9];
    dop_coords(a, ca);
    dop_coords(b, cb);
    dop_coords(c, cc);
    for (int d = 0; d < 9; d++) {
        t->lo[d] = ca[d] < cb[d] ? ca[d] : cb[d];
        t->hi[d] = ca[d] < cb[d] ? cb[d] : ca[d];
        if (cc[d] < t->lo[d]) t->lo[d] = cc[d];
        if (cc[d] > t->hi[d]) t->hi[d] = cc[d];
    }
    t->big = 0.0;
    for (int k = 0; k < 3; k++) t->big = fmax(t->big, fmax(fabs(a[k]), fmax(fabs(b[k]), fabs(c[k]))));
}

/* Whether y is within rd of each of the triangle's diagonal slabs (in the diagonals'
 * unnormalised coordinates), with a slack far above the rounding of the sums. */
static int diag_near(const double y[3], const tri_dop *t, double rd)
{
    double c[9];
    dop_coords(y, c);
    double big = fmax(t->big, fmax(fabs(y[0]), fmax(fabs(y[1]), fabs(y[2]))));
    rd += 16 * DBL_EPSILON * big;
    for (int d = 3; d < 9; d++)
        if (c[d] < t->lo[d] - rd || c[d] > t->hi[d] + rd) return 0;
    return 1;
}

/* A substep's pair: y within r of the triangle's box (Euclidean; each coordinate's gap
 * first) and within r of each diagonal slab (a diagonal's coordinate, x + y say, changes
 * by at most sqrt(2) |y - q| between two points: every point within r of the triangle
 * passes). The diagonals drop what the box alone keeps on a cloth along the axes: each
 * triangle's box holds the far corner of its grid square. */
static int dop_near(const double y[3], const tri_dop *t, double r)
{
    double g2 = 0.0;
    for (int k = 0; k < 3; k++) {
        double g = y[k] < t->lo[k] ? t->lo[k] - y[k] : y[k] > t->hi[k] ? y[k] - t->hi[k] : 0.0;
        if (g > r) return 0;
        g2 += g * g;
    }
    return g2 <= r * r && diag_near(y, t, SQRT2 * r * (1.0 + 1e-9));
}

/* the candidates for prediction p (x: the substep's start), searched again when the
 * cloth moved too far relative to itself since the last search */
static int self_candidates(pbd_solver *s, const double (*x)[3], const double (*p)[3], double reach, cb_error *err)
{
    const int nv = s->nv;
    s->cache_substeps++;
    if (s->cache_delta > 0) {
        double maxabs = 0.0, moved = motion_spread(p, (const double (*)[3])s->pb, nv, &maxabs);
        if (2.0 * moved + 1e-6 * s->cache_delta + 64 * DBL_EPSILON * maxabs < s->cache_delta) return CB_OK;
    }
    double delta = 0.0;
    if (s->self_cache) {
        delta = fmax(CACHE_SUBSTEPS * motion_spread(p, x, nv, NULL), CACHE_MIN * reach);
        if (s->cache_builds) delta = fmin(delta, cb_spatial_hash_cell_size(s->hash));
    }
    int rc = cb_spatial_hash_query(s->hash, s->mesh, p, reach + delta, err);
    if (rc) return rc;
    const cb_pair_list *pl = cb_spatial_hash_pairs(s->hash);
    if (pl->n > s->capcand) {
        int (*n)[2] = cb_realloc(s->cand, (size_t)pl->n * sizeof *n);
        if (!n) return CB_FAIL(err, CB_ERR_NOMEM, "pbd: out of memory for %ld self candidates", pl->n);
        s->cand = n;
        s->capcand = pl->n;
    }
    /* kept: the pairs that can pass dop_near(reach) while 2 spread < delta: each
     * diagonal's gap changes by at most 4 spread (two coordinates' ranges) */
    double rd = SQRT2 * reach * (1.0 + 1e-9) + 2.0 * delta * (1.0 + 1e-6);
    tri_dop dop;
    int last = -1;
    long n = 0;
    for (long k = 0; k < pl->n; k++) {
        int v = pl->p[k][0], t = pl->p[k][1];
        if (delta > 0) {
            const int *f = s->mesh->f[t];
            if (t != last) tri_dop_set(&dop, p[f[0]], p[f[1]], p[f[2]]);
            last = t;
            if (!diag_near(p[v], &dop, rd)) continue;
        }
        s->cand[n][0] = v;
        s->cand[n][1] = t;
        n++;
    }
    s->ncand = n;
    memcpy(s->pb, p, (size_t)nv * sizeof *s->pb);
    s->cache_delta = delta;
    s->cache_builds++;
    return CB_OK;
}

int cb_pbd_self_constraints(pbd_solver *s, const cb_world *w, cb_error *err)
{
    s->nsc = 0;
    const cb_mesh *m = s->mesh;
    const double (*x)[3] = (const double (*)[3])w->state.x;
    const double (*p)[3] = packed_p(s);
    double reach = s->self_h + s->self_margin;
    const int (*cand)[2];
    long npairs;
    if (s->stepping == STEP_PAPER) { /* every pair of the hash's cells */
        int rc = cb_spatial_hash_query(s->hash, m, p, reach, err);
        if (rc) return rc;
        const cb_pair_list *pl = cb_spatial_hash_pairs(s->hash);
        cand = (const int (*)[2])pl->p;
        npairs = pl->n;
    } else {
        int rc = self_candidates(s, x, p, reach, err);
        if (rc) return rc;
        cand = (const int (*)[2])s->cand;
        npairs = s->ncand;
    }
    const int boxed = s->stepping != STEP_PAPER;
    tri_frame t0, t1; /* of triangle `framed` at x and p */
    tri_dop dop = {{0}, {0}, 0};
    int framed = -1, last = -1, pinned = 0;
    for (long k = 0; k < npairs; k++) {
        int v = cand[k][0], t = cand[k][1];
        const int *f = m->f[t];
        if (t != last) { /* the candidates come by triangle */
            pinned = s->w[f[0]] == 0 && s->w[f[1]] == 0 && s->w[f[2]] == 0;
            if (boxed) tri_dop_set(&dop, p[f[0]], p[f[1]], p[f[2]]);
            last = t;
        }
        if (pinned && s->w[v] == 0) continue;
        if (boxed && !dop_near(p[v], &dop, reach)) continue;
        if (t != framed) {
            tri_frame_set(&t0, x[f[0]], x[f[1]], x[f[2]]);
            tri_frame_set(&t1, p[f[0]], p[f[1]], p[f[2]]);
            framed = t;
        }
        double r0[3], r1[3];
        int in1 = tri_inside(p[v], &t1, 0.02, r1), in0 = tri_inside(x[v], &t0, 0.02, r0);
        if (!in0 && !in1) continue;
        double s0 = tri_side(r0, &t0), s1 = tri_side(r1, &t1);
        double side = s0 > 0 ? 1.0 : s0 < 0 ? -1.0 : (s1 >= 0 ? 1.0 : -1.0);
        if (side * s1 >= reach) continue;
        if (s->nsc == s->capsc) {
            int cap = 2 * s->capsc;
            self_con *n = cb_realloc(s->sc, (size_t)cap * sizeof *n);
            if (!n) return CB_FAIL(err, CB_ERR_NOMEM, "pbd: out of memory for self contacts");
            s->sc = n;
            s->capsc = cap;
        }
        self_con *c = &s->sc[s->nsc++];
        c->v[0] = v;
        c->v[1] = f[0];
        c->v[2] = f[1];
        c->v[3] = f[2];
        c->side = side;
        c->active = 0;
    }
    if (s->self_hook) s->self_hook(s->self_hook_ctx, s);
    return CB_OK;
}

/* Anything still inside a collider after the sweeps is put on its surface (+offset). */
int cb_pbd_final_collider_pass(pbd_solver *s, const cb_world *w, double t1)
{
    int moved = 0;
    for (int i = 0; i < w->nv; i++) {
        if (s->w[i] == 0.0) continue;
        for (int c = 0; c < w->ncolliders; c++) {
            double n[3], cp[3];
            if (!(cb_collider_distance(&w->colliders[c], t1, s->p[i]) < 0)) continue;
            double d = cb_collider_query(&w->colliders[c], t1, s->p[i], n, cp);
            if (d < 0) {
                double mdp[3], vc[3];
                for (int q = 0; q < 3; q++) {
                    double to = cp[q] + s->offset * n[q];
                    mdp[q] = (to - s->p[i][q]) * w->mass[i];
                    s->jthr[0][q] += mdp[q];
                    s->p[i][q] = to;
                }
                cb_collider_velocity(&w->colliders[c], t1, s->p[i], vc);
                s->jthr[0][3] += cb_v3_dot(mdp, vc);
                moved++;
            }
        }
    }
    return moved;
}

/* Restitution and friction on the velocities of vertices whose collider constraint acted.
 * Coulomb's bound is mu times the collider's normal impulse per unit mass: the
 * constraint's push over the sweeps (push / h) plus restitution's change. Not the vertex's
 * net normal velocity change: where the stretch constraints press a vertex onto the
 * collider (a sheet hanging over a sphere or a rod), the push cancels their pull in it
 * and friction saw only the vertex's own weight (README "Contact distances and friction"). */
void cb_pbd_contact_velocities(pbd_solver *s, cb_world *w, double t1, double h)
{
    for (int c = 0; c < s->ncc; c++) {
        coll_con *k = &s->cc[c];
        if (!k->active) continue;
        const cb_collider *col = &w->colliders[k->col];
        double *v = w->state.v[k->v];
        double vc[3], vr[3], vt[3];
        cb_collider_velocity(col, t1, w->state.x[k->v], vc);
        cb_v3_sub(vr, v, vc);
        double vn = cb_v3_dot(vr, k->n);
        cb_v3_copy(vt, vr);
        cb_v3_axpy(vt, -vn, k->n);
        double vn_new = vn;
        if (k->vn0 < 0) vn_new = fmax(vn, -col->restitution * k->vn0);
        double dvn = vn_new - vn + k->push / h;
        double lt = cb_v3_norm(vt);
        double scale = lt > 0 ? fmax(0.0, 1.0 - col->friction * fmax(dvn, 0.0) / lt) : 0.0;
        for (int q = 0; q < 3; q++) {
            double to = vc[q] + vn_new * k->n[q] + scale * vt[q];
            s->ext[q] += w->mass[k->v] * (to - v[q]); /* restitution and friction */
            s->work += w->mass[k->v] * (to - v[q]) * vc[q];
            v[q] = to;
        }
    }
}

