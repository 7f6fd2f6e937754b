/* contact/penetration.h — how deep a cloth primitive (vertex, edge or triangle) is inside a
 * collider, and how deep a vertex's straight path over a step went: the geometry behind
 * the penetration metrics (experiments/harness/metrics.h) and the continuous audit (experiments/harness/audit.h).
 *
 * The value is the smallest signed distance from the collider's surface over the whole
 * closed primitive (negative: some point of it is inside; -value is the depth of its
 * deepest point). Exact, up to round-off, for the analytic colliders:
 *   plane    the smallest over the vertices (the distance is linear);
 *   sphere   distance from the centre to the primitive minus the radius;
 *   capsule  distance from its segment to the primitive minus the radius (segment-
 *            segment, or segment-triangle with an exact intersection test);
 *   box      inside, the signed distance is max_j l_j(x) over the six face planes, a
 *            convex piecewise-linear function; its minimum over a segment or a triangle
 *            lies at a vertex of the arrangement (an end point, a point of an edge where
 *            two l_j are equal, or an interior point where three are), all of which are
 *            evaluated. Outside (value >= 0) the result is the smallest vertex distance,
 *            an upper bound of the true one: only the negative part is exact.
 *   mesh     the smallest over the vertices only: edges and triangles against mesh
 *            colliders are not checked (a known limit; their vertices are).
 */
#ifndef CB_PENETRATION_H
#define CB_PENETRATION_H

#include "core/collider.h"

/* n = 1 (a point), 2 (a segment) or 3 (a triangle): p[0..n-1] at time t. */
double cb_collider_primitive_distance(const cb_collider *c, double t, int n, const double (*p)[3]);

/* A vertex moving in a straight line from a (time t0) to b (time t1): in the frame of an
 * analytic collider (which translates with a constant velocity) its path is a segment,
 * and this is that segment's smallest signed distance. Mesh colliders (which may rotate
 * or follow keyframes): the smaller of the two end distances only. */
double cb_collider_path_distance(const cb_collider *c, double t0, const double a[3], double t1,
                                 const double b[3]);

/* A lower bound of the primitive's (n = 1, 2, 3 points p at time t) smallest signed
 * distance from an analytic collider: cb_collider_primitive_distance where that is
 * negative or exact (sphere, capsule, plane); outside a box, the largest over its face
 * planes of the primitive's smallest height above the plane. Mesh colliders: -inf. */
double cb_collider_primitive_lower_bound(const cb_collider *c, double t, int n, const double (*p)[3]);

/* A primitive (n = 2: an edge, 3: a triangle) whose vertices move in straight lines from
 * p0[i] (time t0) to p1[i] (time t1), against an analytic collider (in whose frame, as it
 * translates and at most spins about a symmetry axis, the vertices still move in straight
 * lines): 1 if some point of the primitive is strictly inside the collider at some time
 * of [t0, t1], else 0. Bisection of the time interval: at the middle time of an interval
 * the exact negative distance of cb_collider_primitive_distance proves a point inside (a
 * counted primitive did go inside, up to round-off); an interval is cleared when a lower
 * bound of the distance there (exact for sphere, capsule and plane, the face planes' for
 * a box) exceeds the largest distance a vertex moves in half the interval. After 10
 * halvings an interval is cleared too, so a primitive reported 0 never went deeper than
 * 2^-11 of its largest vertex displacement (relative to the collider) over [t0, t1].
 * At most 2^11 distance evaluations, as many only for a primitive that grazes the
 * surface over the whole interval. Mesh colliders and non-finite input: 0. */
int cb_collider_swept_primitive_inside(const cb_collider *c, double t0, double t1, int n,
                                       const double (*p0)[3], const double (*p1)[3]);

#endif
