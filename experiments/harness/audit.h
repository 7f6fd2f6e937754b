/* experiments/harness/audit.h — the continuous audit: what crossed what during a step, even when the
 * state at the end of the step is clean.
 *
 * The metrics look at the state after a step; a vertex that passes through a thin
 * collider, or two pieces of cloth that pass through each other, within one step and
 * are apart again at its end leave no trace there. The audit (scene `audit: true` or
 * `clothbench run --audit`) follows every vertex on its path over the step:
 *   - by default the straight line from x_n to x_{n+1} (what the step's two states say);
 *   - for a solver that moves vertices on known piecewise-linear paths (acm: every kick
 *     is a path knot, reported through cb_solver_class.set_path_knots), the exact path through those knots, so
 *     that the audit never reports a crossing the method did not make.
 * and counts, per step:
 *   self_crossings      vertex-triangle and edge-edge pairs of the cloth (sharing no
 *                       vertex) whose distance reaches 0 during the step: a conservative
 *                       CCD (contact/ccd.h, eta 0) on every piece, candidates from a BVH
 *                       of the swept triangles (contact/bvh.h);
 *   collider_crossings  vertices whose path goes inside a collider during the step (the
 *                       path's smallest signed distance, contact/penetration.h: exact for
 *                       analytic colliders, which translate; mesh colliders: the ends of
 *                       each piece only).
 * A vertex with a non-finite position takes part in nothing (it is a divergence, which
 * the run loop reports). Cost: one swept refit, one self query and the CCD of the
 * candidates per step; `clothbench info` reports the audit's mean time per step and its
 * ratio to the solver's. The long loops read the interrupt flag (core/error.h) and
 * cb_audit_end then returns CB_ERR_INTERRUPTED (the run ends `interrupted`).
 */
#ifndef CB_AUDIT_H
#define CB_AUDIT_H

#include "core/error.h"
#include "core/world.h"

typedef struct cb_audit cb_audit;

int cb_audit_create(const cb_world *w, cb_audit **out, cb_error *err);
void cb_audit_free(cb_audit **a);

/* Before a step: the state at its start, time t0. Forgets the knots of the last step. */
void cb_audit_begin(cb_audit *a, const cb_world *w);
/* A knot of vertex i's path inside the step: it was at x at time t (t within the step,
 * nondecreasing per vertex). Without knots a vertex moves on a straight line. */
void cb_audit_knot(cb_audit *a, int i, double t, const double x[3]);
/* After the step (w->state at its end, time t1): count the crossings. 0 or an error
 * (out of memory). */
int cb_audit_end(cb_audit *a, const cb_world *w, long *self_crossings, long *collider_crossings,
                 cb_error *err);

#endif
