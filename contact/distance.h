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

#endif
