/* experiments/harness/metrics.c — the measurements of ARCHITECTURE.md "Measuring", from the state alone,
 * identical for every solver (metrics.h). */
#include "experiments/harness/metrics.h"

#include <math.h>
#include <stddef.h>

#include <stdlib.h>

#include "contact/colliders.h"
#include "contact/selfcheck.h"
#include "contact/penetration.h"
#include "core/vec3.h"

#define M(name, width, unit, desc) { #name, width, offsetof(cb_metrics, name), unit, desc }
const cb_metric_desc cb_metric_table[] = {
    M(time, 1, "s", "simulated time at the end of the step"),
    M(dt, 1, "s", "time step"),
    M(kinetic_energy, 1, "J", "1/2 sum m v^2"),
    M(gravity_energy, 1, "J", "-sum m g.x"),
    M(stretch_energy, 1, "J", "shared cloth model: sum over edges 1/2 k_stretch (l - L)^2"),
    M(bend_energy, 1, "J", "shared cloth model: discrete shells, k_bend 3|e|^2/(A1+A2) (theta - theta0)^2"),
    M(total_energy, 1, "J", "kinetic + gravity + stretch + bend (+ contact_energy when reported)"),
    M(solver_energy, 1, "J", "the method's own model energy; NaN where it has none"),
    M(contact_energy, 1, "J", "penalty energy reported by the method; NaN where it has none"),
    M(linear_momentum, 3, "kg m/s", "sum m v"),
    M(angular_momentum, 3, "kg m^2/s", "sum m x cross v, about the origin"),
    M(external_impulse, 3, "N s", "impulse of gravity (free vertices), colliders and attachments this step"),
    M(pin_force_fixed, 3, "N", "force the fixed pins exert on the cloth at the end of the step: sum over the pinned vertices without a scripted velocity of -(f_int + m g), f_int the shared model's stretch + bend force on the vertex (Newton's law: a pinned vertex does not accelerate); the tension of the end they hold"),
    M(pin_force_moving, 3, "N", "the same for the pins with a scripted velocity (constant, so they do not accelerate either)"),
    M(collider_penetrations, 1, "1", "vertices, edges and triangles with a point inside a collider (exact for analytic colliders; mesh colliders: vertices only)"),
    M(collider_max_depth, 1, "m", "depth of the deepest point of the cloth (vertex, edge or triangle) inside a collider (0 if none)"),
    M(collider_cut_edges, 1, "1", "edges with a point inside a collider although both their vertices are outside every collider: a blade or wire through the cloth between its vertices, which collider_max_depth (at most the blade's half-thickness) cannot tell from a cloth resting on it (analytic colliders; mesh colliders: not checked)"),
    M(collider_cut_faces, 1, "1", "triangles with a point inside a collider although none of their edges has one: a wire or a blade's edge through the face (analytic colliders; mesh colliders: not checked)"),
    M(vertex_penetrations, 1, "1", "vertices inside any collider (signed distance < 0): the collider_penetrations of earlier versions"),
    M(vertex_max_depth, 1, "m", "depth of the deepest vertex inside a collider (0 if none): the collider_max_depth of earlier versions"),
    M(contact_depth_corrected, 1, "m", "deepest collider penetration the solver's contact stage moved a vertex out of this step, measured before the move; NaN: no such stage"),
    M(contact_vertices_corrected, 1, "1", "vertices the solver's contact stage changed this step; NaN: no such stage"),
    M(contact_work, 1, "J", "change of kinetic + gravity + stretch + bend energy across the solver's contact stage this step; NaN: no such stage"),
    M(self_intersections, 1, "1", "edge-triangle pairs without a shared vertex that intersect (exact)"),
    M(min_separation, 1, "m", "smallest distance between non-adjacent primitives: exact on the rows of the expensive metrics; on the other rows the method's own value of the step where it measures one (cb_step_info.min_separation: ipc, over its self pairs within thickness + dhat), else NaN"),
    M(crossings_in_step, 1, "1", "continuous audit: self_crossings_in_step + collider_crossings_in_step + collider_edge_crossings_in_step + collider_face_crossings_in_step; NaN without the audit"),
    M(self_crossings_in_step, 1, "1", "continuous audit: vertex-triangle and edge-edge pairs of the cloth whose distance reached 0 on their paths during the steps since the previous row; NaN without the audit"),
    M(collider_crossings_in_step, 1, "1", "continuous audit: vertices whose path went inside a collider (mesh colliders: or touched its surface) during the steps since the previous row; NaN without the audit"),
    M(collider_edge_crossings_in_step, 1, "1", "continuous audit: edges whose segment went inside a collider (mesh colliders: touched its surface) during a step although neither of their vertices did (a blade or wire passing between the vertices), summed over the steps since the previous row; NaN without the audit"),
    M(collider_face_crossings_in_step, 1, "1", "continuous audit: triangles that a collider pierced during a step (a blade's edge, a wire, a mesh collider's edge or vertex through the face) although none of their vertices and edges went inside, summed over the steps since the previous row; NaN without the audit"),
    M(max_strain, 1, "1", "max over edges of |l - L| / L"),
    M(position_error, 1, "m", "mass-weighted RMS distance to the reference trajectory (run --reference) at a reference frame time; NaN without a reference or between its frames"),
    M(energy_error, 1, "J", "total_energy minus the reference's at the same frame time (run --reference; negative: energy lost against it); NaN without a reference or between its frames"),
    M(external_work, 1, "J", "work done on the cloth since t = 0 by moving pins and moving colliders, as the method applied it: the sum over steps of its collider impulses times the colliders' surface velocity and its attachment impulses times the pins' velocity (cb_step_info.external_work), plus the pinned vertices' scripted change of kinetic and gravity energy (experiments/harness/health.h); 0 with fixed pins and colliders; the health check allows total_energy to rise by this much"),
    M(iterations, 1, "1", "solver iterations this step"),
    M(residual, 1, "1", "solver residual after the step"),
    M(factorizations, 1, "1", "matrix factorizations this step (fms, newton; 0 for methods without a matrix)"),
    M(events, 1, "1", "asynchronous events processed this step (NaN for synchronous methods)"),
    M(wall_step_s, 1, "s", "wall time of the step"),
    M(wall_contact_s, 1, "s", "wall time of the step's contact work"),
    M(wall_audit_s, 1, "s", "wall time of the continuous audit of the steps since the previous row (not part of wall_step_s); NaN without the audit"),
};
#undef M
const int cb_metric_count = (int)(sizeof cb_metric_table / sizeof cb_metric_table[0]);

/* Vertices, then edges and triangles (exact, contact/penetration.h). The signed distance
 * is 1-Lipschitz, so a primitive whose vertices are all farther from every collider than
 * its longest edge cannot reach inside one and is skipped. A non-finite vertex counts for
 * nothing (the run loop reports it as divergence). The cuts: an edge inside with both
 * vertices outside, a triangle inside with all its edges outside (an edge with an inside
 * vertex is inside, so an edge outside marks nothing). */
static void collider_penetration(const cb_world *w, cb_metrics *m)
{
    m->collider_penetrations = m->collider_max_depth = m->vertex_penetrations = m->vertex_max_depth = 0.0;
    m->collider_cut_edges = m->collider_cut_faces = 0.0;
    if (!w->ncolliders) return;
    const double (*x)[3] = (const double (*)[3])w->state.x;
    const double t = w->state.t;
    const cb_mesh *mesh = w->mesh;
    double *d = cb_malloc((size_t)w->nv * sizeof *d);
    unsigned char *edge_inside = cb_calloc((size_t)(mesh->nf > 0 ? mesh->nf : 1), 1); /* per triangle */
    if (!d || !edge_inside) {
        free(d);
        free(edge_inside);
        m->collider_penetrations = m->collider_max_depth = m->vertex_penetrations = m->vertex_max_depth = NAN;
        m->collider_cut_edges = m->collider_cut_faces = NAN;
        return;
    }
    long pen = 0;
    double depth = 0;
    for (int i = 0; i < w->nv; i++) {
        d[i] = cb_v3_isfinite(x[i]) ? cb_world_collider_distance(w, t, x[i], NULL, NULL, NULL) : INFINITY;
        if (d[i] < 0) {
            pen++;
            depth = fmax(depth, -d[i]);
        }
    }
    m->vertex_penetrations = (double)pen;
    m->vertex_max_depth = depth;
    long cut[2] = {0, 0};
    for (int n = 2; n <= 3; n++) {
        int count = n == 2 ? mesh->ne : mesh->nf;
        for (int e = 0; e < count; e++) {
            const int *v = n == 2 ? mesh->e[e] : mesh->f[e];
            double p[3][3], near = INFINITY, reach = 0;
            for (int j = 0; j < n; j++) {
                cb_v3_copy(p[j], x[v[j]]);
                near = fmin(near, d[v[j]]);
                reach = fmax(reach, cb_v3_dist(x[v[j]], x[v[(j + 1) % n]]));
            }
            if (!(near <= reach) || !isfinite(reach)) continue; /* also: a non-finite vertex */
            double best = INFINITY;
            for (int c = 0; c < w->ncolliders; c++)
                best = fmin(best, cb_collider_primitive_distance(&w->colliders[c], t, n, (const double (*)[3])p));
            if (best < 0) {
                pen++;
                depth = fmax(depth, -best);
                if (n == 2) {
                    cut[0] += d[v[0]] >= 0 && d[v[1]] >= 0;
                    for (int s = 0; s < 2; s++)
                        if (mesh->ef[e][s] >= 0) edge_inside[mesh->ef[e][s]] = 1;
                } else {
                    cut[1] += !edge_inside[e];
                }
            }
        }
    }
    free(d);
    free(edge_inside);
    m->collider_cut_edges = (double)cut[0];
    m->collider_cut_faces = (double)cut[1];
    m->collider_penetrations = (double)pen;
    m->collider_max_depth = depth;
}

/* pin_force_fixed / pin_force_moving (the table above). A method whose own model differs
 * from the shared one (pbd's dimensionless stiffness) is measured through the shared
 * model's forces at its positions, like every other metric. */
static void pin_forces(const cb_world *w, cb_metrics *m)
{
    for (int k = 0; k < 3; k++) m->pin_force_fixed[k] = m->pin_force_moving[k] = 0.0;
    if (!w->npinned) return;
    double (*f)[3] = calloc((size_t)w->nv, sizeof *f);
    if (!f) {
        for (int k = 0; k < 3; k++) m->pin_force_fixed[k] = m->pin_force_moving[k] = NAN;
        return;
    }
    const double (*x)[3] = (const double (*)[3])w->state.x;
    cb_model_add_stretch_forces(&w->model, x, f);
    cb_model_add_bend_forces(&w->model, x, f);
    for (int i = 0; i < w->nv; i++) {
        if (!w->pinned[i]) continue;
        double *F = cb_v3_norm2(w->pin_velocity[i]) > 0.0 ? m->pin_force_moving : m->pin_force_fixed;
        for (int k = 0; k < 3; k++) F[k] -= f[i][k] + w->mass[i] * w->gravity[k];
    }
    free(f);
}

double cb_metrics_total_energy(const cb_world *w, const cb_step_info *info)
{
    const double (*x)[3] = (const double (*)[3])w->state.x;
    double ke = 0, ge = 0;
    for (int i = 0; i < w->nv; i++) {
        ke += w->mass[i] * cb_v3_norm2(w->state.v[i]);
        ge -= w->mass[i] * cb_v3_dot(w->gravity, x[i]);
    }
    double ce = info ? info->contact_energy : NAN;
    return 0.5 * ke + ge + cb_model_stretch_energy(&w->model, x) + cb_model_bend_energy(&w->model, x) +
           (isfinite(ce) ? ce : 0.0);
}

void cb_metrics_compute(const cb_world *w, const cb_step_info *info, double dt, double wall_step_s,
                        cb_metrics *m)
{
    const double (*x)[3] = (const double (*)[3])w->state.x;
    const double (*v)[3] = (const double (*)[3])w->state.v;
    m->time = w->state.t;
    m->dt = dt;
    double ke = 0, ge = 0, p[3] = {0, 0, 0}, L[3] = {0, 0, 0}, free_mass = 0;
    for (int i = 0; i < w->nv; i++) {
        double mi = w->mass[i], xv[3];
        ke += mi * cb_v3_norm2(v[i]);
        ge -= mi * cb_v3_dot(w->gravity, x[i]);
        cb_v3_axpy(p, mi, v[i]);
        cb_v3_cross(xv, x[i], v[i]);
        cb_v3_axpy(L, mi, xv);
        if (w->inv_mass[i] > 0) free_mass += mi;
    }
    m->kinetic_energy = 0.5 * ke;
    m->gravity_energy = ge;
    m->stretch_energy = cb_model_stretch_energy(&w->model, x);
    m->bend_energy = cb_model_bend_energy(&w->model, x);
    m->solver_energy = info ? info->solver_energy : NAN;
    m->contact_energy = info ? info->contact_energy : NAN;
    m->total_energy = m->kinetic_energy + m->gravity_energy + m->stretch_energy + m->bend_energy +
                      (isfinite(m->contact_energy) ? m->contact_energy : 0.0);
    cb_v3_copy(m->linear_momentum, p);
    cb_v3_copy(m->angular_momentum, L);
    for (int k = 0; k < 3; k++)
        m->external_impulse[k] = (info ? info->external_impulse[k] : NAN) + free_mass * w->gravity[k] * dt;
    pin_forces(w, m);
    collider_penetration(w, m);
    m->contact_depth_corrected = info ? info->contact_depth_corrected : NAN;
    m->contact_vertices_corrected =
        info && info->contact_vertices_corrected >= 0 ? (double)info->contact_vertices_corrected : NAN;
    m->contact_work = info ? info->contact_work : NAN;
    m->self_intersections = NAN;
    m->min_separation = info ? info->min_separation : NAN;
    m->crossings_in_step = m->self_crossings_in_step = m->collider_crossings_in_step = NAN;
    m->collider_edge_crossings_in_step = m->collider_face_crossings_in_step = NAN;
    m->max_strain = cb_model_max_strain(&w->model, x);
    m->external_work = NAN; /* the run loop's health check measures it */
    m->position_error = m->energy_error = NAN; /* the run loop sets them where the reference has a frame */
    m->iterations = info ? (double)info->iterations : NAN;
    m->residual = info ? info->residual : NAN;
    m->factorizations = info ? (double)info->factorizations : NAN;
    m->events = info && info->events >= 0 ? (double)info->events : NAN;
    m->wall_step_s = wall_step_s;
    m->wall_contact_s = info ? info->wall_contact_s : NAN;
    m->wall_audit_s = NAN;
}

struct cb_metrics_cache {
    cb_selfcheck *check;
};

int cb_metrics_cache_create(const cb_world *w, cb_metrics_cache **out, cb_error *err)
{
    *out = NULL;
    cb_metrics_cache *c = cb_calloc(1, sizeof *c);
    if (!c) return CB_FAIL(err, CB_ERR_NOMEM, "metrics: out of memory");
    if (w->mesh->nf > 0) {
        int rc = cb_selfcheck_create(w->mesh, CB_BV_DEFAULT, &c->check, err);
        if (rc < 0) {
            free(c);
            return rc;
        }
    }
    *out = c;
    return CB_OK;
}

void cb_metrics_cache_free(cb_metrics_cache **c)
{
    if (!c || !*c) return;
    cb_selfcheck_free(&(*c)->check);
    free(*c);
    *c = NULL;
}

void cb_metrics_compute_expensive(const cb_world *w, cb_metrics_cache *cache, cb_metrics *m)
{
    m->self_intersections = NAN;
    m->min_separation = NAN;
    if (w->mesh->nf == 0) return;
    cb_metrics_cache *own = NULL;
    if (!cache) {
        if (cb_metrics_cache_create(w, &own, NULL) < 0) return;
        cache = own;
    }
    const double (*x)[3] = (const double (*)[3])w->state.x;
    long count = 0;
    double d = NAN;
    if (cb_selfcheck_intersections(cache->check, x, &count, NULL) >= 0) m->self_intersections = (double)count;
    if (cb_selfcheck_min_separation(cache->check, x, &d, NULL, NULL, NULL, NULL) >= 0 && isfinite(d))
        m->min_separation = d;
    cb_metrics_cache_free(&own);
}
