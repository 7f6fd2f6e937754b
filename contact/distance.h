/* contact/distance.h — closest points and squared distances between the primitives of
 * a triangle mesh: point-segment, point-triangle and segment-segment.
 *
 * Method: the unconstrained minimiser (projection onto the triangle's plane, or the
 * closest points of the two lines) is accepted when it lies inside the primitive and
 * the 2x2 system is well conditioned; otherwise the minimum is taken over that interior
 * candidate (when inside) and every boundary candidate (the point against each edge;
 * each endpoint against the other segment). A convex quadratic on a triangle or square
 * attains its minimum inside or on the boundary, so this is exact in exact arithmetic
 * and stays robust for parallel edges and degenerate (collinear, coincident-vertex,
 * zero-length) primitives. The returned value is always the squared distance between
 * the two returned points, so it is never below the true minimum by more than rounding;
 * for slivers with angles below ~1e-4 rad it can exceed it by O(eps / angle) relative.
 *
 * Non-finite input gives NaN outputs.
 */
#ifndef CB_DISTANCE_H
#define CB_DISTANCE_H

/* Squared distance from p to the closed segment ab; *t in [0,1] is the parameter of the
 * closest point a + t (b - a) (0 for a zero-length segment). t/closest may be NULL. */
double cb_point_segment_distance2(const double p[3], const double a[3], const double b[3],
                                  double *t, double closest[3]);

/* Squared distance from p to the closed triangle abc; bary (sum 1, all >= 0) are the
 * barycentric coordinates of the closest point `closest`. bary/closest may be NULL. */
double cb_point_triangle_distance2(const double p[3], const double a[3], const double b[3],
                                   const double c[3], double bary[3], double closest[3]);

/* Squared distance between the closed segments p0p1 and q0q1; cp = p0 + s (p1 - p0) and
 * cq = q0 + t (q1 - q0), s, t in [0,1], are closest points, and the return value equals
 * |cp - cq|^2. Outputs may be NULL. */
double cb_edge_edge_distance2(const double p0[3], const double p1[3], const double q0[3],
                              const double q1[3], double *s, double *t, double cp[3], double cq[3]);

/* A lower bound on the distance between the convex hulls of pts[0 .. n1-1] and
 * pts[n1 .. 3] (n1 = 1: a point and a triangle; 2: two segments; 3: a triangle and a
 * point), without their closest points: the larger of the widest gap between the two
 * sides' coordinate ranges along an axis, and the distance between the sides' centroids
 * less each side's farthest point from its centroid (a hull lies in that ball), less a
 * margin (1e-9 of it and 1e-12 of the largest coordinate) far above the round-off of
 * the bound and of the distances above, so that a pair this bound puts beyond a
 * threshold is beyond it by cb_point_triangle_distance2 and cb_edge_edge_distance2 too.
 * Used to skip the distances of pairs far out of range (solvers/ipc.c: self_lb; on the
 * 60 x 60 drape in contact it settles 80% of the gather's candidates and 86% of the
 * CCD's). It may be negative (no information); 0 for n1 outside 1..3 or non-finite
 * input. The axis gap is tried first: when it already reaches `need` it is returned
 * without the balls (INFINITY: always the larger of the two). */
double cb_hull_distance_lb(const double *const pts[4], int n1, double need);

#endif
