/* solvers/pbd_contact.c — the pbd/xpbd solver's contact constraints (pbd_internal.h;
 * the method is described in solvers/pbd.c): collider constraints from continuous
 * entry of each vertex's substep path, self-contact constraints from the spatial hash,
 * the final collider pass and the contact velocities (restitution, friction). */
#include "solvers/pbd_internal.h"
#include "solvers/pbd.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "contact/colliders.h"
#include "contact/distance.h"
#include "contact/spatial_hash.h"
#include "contact/contact_probe.h"
#include "core/solver.h"
#include "core/vec3.h"
#include "solvers/pbd_constraints.h"
#include "solvers/pbd_simd.h"

/* ------------------------------------------------------------ contact generation */

/* Signed distance of x + sigma (p - x) from collider c at time t0 + sigma h, minus offset. */
static double entry_fn(const cb_collider *c, const double x[3], const double p[3], double t0, double h,
                       double sigma, double offset, double pt[3], double n[3])
{
    for (int k = 0; k < 3; k++) pt[k] = x[k] + sigma * (p[k] - x[k]);
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
            double pt[3], n[3];
            double f1 = entry_fn(col, x, p, t0, h, 1.0, s->offset, pt, n);
            if (f1 >= fmax(s->offset, 1e-9)) continue; /* clearly outside at the end (margin: offset) */
            double f0 = entry_fn(col, x, p, t0, h, 0.0, s->offset, pt, n);
            coll_con *k = &s->cc[s->ncc];
            if (f0 >= 0 && f1 < 0) {
                /* continuous: bisect for the entry point (f = 0) */
                double lo = 0, hi = 1;
                for (int it = 0; it < 40; it++) {
                    double mid = 0.5 * (lo + hi);
                    if (entry_fn(col, x, p, t0, h, mid, s->offset, pt, n) >= 0) lo = mid;
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

/* Signed distance of y from the plane of triangle (a, b, c) and whether its projection
 * lies in the triangle (barycentric tolerance tol). */
static double tri_side(const double y[3], const double a[3], const double b[3], const double c[3], double tol,
                       int *inside)
{
    double e1[3], e2[3], r[3], N[3];
    cb_v3_sub(e1, b, a);
    cb_v3_sub(e2, c, a);
    cb_v3_sub(r, y, a);
    cb_v3_cross(N, e1, e2);
    double n2 = cb_v3_norm2(N);
    *inside = 0;
    if (!(n2 > 0)) return 0.0;
    double t1[3], t2[3];
    cb_v3_cross(t1, r, e2);
    cb_v3_cross(t2, e1, r);
    double u = cb_v3_dot(t1, N) / n2, v = cb_v3_dot(t2, N) / n2;
    *inside = u >= -tol && v >= -tol && u + v <= 1.0 + tol;
    return cb_v3_dot(r, N) / sqrt(n2);
}

/* query > 0: hash the predicted positions again and collect the candidates within
 * `query` (>= self_h + self_margin); query = 0: reuse the candidates of the last query
 * (small_steps: one query per step, its distance covering the step's motion). */
int cb_pbd_self_constraints(pbd_solver *s, const cb_world *w, double query, cb_error *err)
{
    s->nsc = 0;
    const cb_mesh *m = s->mesh;
    const double (*x)[3] = (const double (*)[3])w->state.x;
    const double (*p)[3] = (const double (*)[3])s->p;
    const cb_pair_list *pl = NULL;
    if (query > 0) {
        int rc = cb_spatial_hash_query(s->hash, m, p, query, err);
        if (rc) return rc;
        pl = cb_spatial_hash_pairs(s->hash);
        if (s->stepping != STEP_PAPER) {
            /* kept for the whole step: only the pairs really within `query` (the
             * hash's cells hold many more), tested once instead of every substep */
            s->ncand = 0;
            for (long k = 0; k < pl->n; k++) {
                int v = pl->p[k][0];
                const int *f = m->f[pl->p[k][1]];
                if (cb_point_triangle_distance2(p[v], p[f[0]], p[f[1]], p[f[2]], NULL, NULL) > query * query)
                    continue;
                if (s->ncand == s->capcand) {
                    long cap = s->capcand ? 2 * s->capcand : 1024;
                    int (*n)[2] = cb_realloc(s->cand, (size_t)cap * sizeof *n);
                    if (!n) return CB_FAIL(err, CB_ERR_NOMEM, "pbd: out of memory for self candidates");
                    s->cand = n;
                    s->capcand = cap;
                }
                s->cand[s->ncand][0] = v;
                s->cand[s->ncand][1] = pl->p[k][1];
                s->ncand++;
            }
            pl = NULL;
        }
    }
    long npairs = pl ? pl->n : s->ncand;
    double reach = s->self_h + s->self_margin;
    for (long k = 0; k < npairs; k++) {
        int v = pl ? pl->p[k][0] : s->cand[k][0], t = pl ? pl->p[k][1] : s->cand[k][1];
        const int *f = m->f[t];
        if (s->w[v] == 0 && s->w[f[0]] == 0 && s->w[f[1]] == 0 && s->w[f[2]] == 0) continue;
        int in0, in1;
        double s0 = tri_side(x[v], x[f[0]], x[f[1]], x[f[2]], 0.02, &in0);
        double s1 = tri_side(p[v], p[f[0]], p[f[1]], p[f[2]], 0.02, &in1);
        if (!in0 && !in1) continue;
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

