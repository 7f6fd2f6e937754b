/* experiments/harness/audit.h — the continuous audit: what crossed what during a step, even when the
 * state at the end of the step is clean.
 *
 * The metrics look at the state after a step; a vertex that passes through a thin
 * collider, or two pieces of cloth that pass through each other, within one step and
 * are apart again at its end leave no trace there. The audit (scene `audit: true` or
 * `clothbench run --audit`) follows every vertex on its path over the step:
 *   - by default the straight line from x_n to x_{n+1} (what the step's two states say);
 *   - for a solver that moves vertices on known piecewise-linear paths (acm: every kick
 *     is a path knot; ipc: every accepted Newton iterate, reached on a segment its CCD
 *     certified; reported through cb_solver_class.set_path_knots), the exact path through
 *     those knots, so that the audit never reports a crossing the method did not make
 *     and checks every piece of the path the method did take.
 * and counts, per step:
 *   self_crossings      vertex-triangle and edge-edge pairs of the cloth (sharing no
 *                       vertex) whose distance reaches 0 during the step: a conservative
 *                       CCD (contact/ccd.h, eta 0) on every piece, candidates from a BVH
 *                       of the swept triangles (contact/bvh.h); a piece that a distance
 *                       bound proves clear is not sent to the CCD (the piece bound,
 *                       below: the same counts);
 *   collider_crossings  vertices whose path goes inside a collider during the step (the
 *                       path's smallest signed distance, contact/penetration.h: exact for
 *                       analytic colliders, which translate; mesh colliders: the ends of
 *                       each piece, and a CCD of the path against the collider's
 *                       triangles, as for the edges below);
 * and beyond the vertices (cb_audit_collider_primitives):
 *   edges               whose segment goes inside a collider during the step although
 *                       neither vertex does (a blade or a wire thinner than the triangles
 *                       passing between them);
 *   triangles           that a collider pierces during the step although none of their
 *                       vertices and edges goes inside (a nail's tip, a blade's corner).
 *   Analytic colliders: cb_collider_swept_primitive_inside on every piece (a time
 *   bisection: counted means a point was inside at a sampled time; not counted means no
 *   point went deeper than 2^-11 of the largest vertex displacement relative to the
 *   collider), for the edges and triangles whose path box meets the collider's swept
 *   box; the plane needs nothing beyond the vertices (its height is linear). Mesh
 *   colliders: both BVHs refit with swept boxes (the collider's widened by its rotation's
 *   sagitta) and visited in pairs; conservative CCD (eta 0: touching the surface counts)
 *   of cloth edges against collider edges and of collider vertices against cloth
 *   triangles, plus their intersections at the start of the step: a crossing that starts
 *   inside the step begins with one of those contacts. The collider's vertices follow the
 *   chords between its poses at each piece's ends (exact for static and translating
 *   meshes; a rotation's arc is off its chord by at most R w^2 h^2 / 8).
 * A vertex with a non-finite position takes part in nothing; a pinned vertex (and an edge or
 * triangle of pinned vertices only) crosses no collider (it is a divergence, which
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

/* The last cb_audit_end's collider crossings beyond the vertices: edges that went inside
 * a collider although neither of their vertices did, and triangles that did although
 * none of their vertices and edges did (a blade's edge or a wire through the face).
 * NULL outputs are skipped. */
void cb_audit_collider_primitives(const cb_audit *a, long *edges, long *faces);

/* The piece bound (audit.c): a path of many pieces sends a pair's piece to the CCD only
 * where a bound on the pair's distance since its last checked configuration cannot clear
 * it; the counts are the same as with every piece checked. With `on` set, every piece
 * goes through the CCD (the reference tests/test_audit.c compares against).
 * cb_audit_pieces: the self pass's pieces checked by the CCD and spared by the bound
 * since the audit was created (NULL outputs are skipped). */
void cb_audit_set_exhaustive(cb_audit *a, int on);
void cb_audit_pieces(const cb_audit *a, long *checked, long *spared);

#endif
