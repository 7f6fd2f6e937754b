/* contact/sat.h — separating-axis tests for triangles: overlap, penetration depth and
 * axis of least overlap between two triangles, and a vertex's depth below a triangle's
 * plane.
 *
 * Axes tested: the 2 face normals and the 9 edge-edge cross products (complete for
 * triangles in non-parallel planes), plus the 6 in-plane edge normals n x e (n the
 * normal of A, or of B when A is degenerate), which make the test complete for
 * coplanar triangles too. Axes shorter than 1e-12 (relative to the edges that span
 * them) are skipped. Every axis is a valid separating-direction candidate, so extra
 * axes only bring `depth` closer to the true penetration depth: it is the smallest
 * overlap over the tested axes, never below the true minimal translation distance.
 * When a triangle is degenerate (zero area) the axes are incomplete, so overlap is
 * decided by the exact segment-triangle test of every edge against the other triangle.
 * The decision is otherwise made in floating point: configurations touching to within
 * rounding may be reported either way (overlap with depth ~1e-16 or separated).
 */
#ifndef CB_SAT_H
#define CB_SAT_H

typedef struct cb_sat_result {
    int overlap;        /* 1 if the (closed) triangles intersect */
    double depth;       /* penetration depth along axis (least overlap), 0 if not overlapping */
    double axis[3];     /* unit separating axis of least overlap, oriented from tri A to tri B
                           (moving A by -depth*axis, or B by +depth*axis, separates them);
                           when not overlapping, a separating axis (B on its + side) */
} cb_sat_result;

/* a[i], b[i] are the vertices. Returns out->overlap (1 or 0); for non-finite input
 * out is {0, 0, {0,0,0}} and the return value is CB_ERR_NUMERIC (negative). */
int cb_sat_triangle_triangle(const double a[3][3], const double b[3][3], cb_sat_result *out);

/* Signed depth of p below the plane of triangle abc along its unit normal
 * ((b-a)x(c-a) normalised, written to `normal`, which may be NULL): positive when p is
 * on the back side. A degenerate triangle or non-finite input gives 0 and a zero
 * normal. */
double cb_sat_vertex_plane_depth(const double p[3], const double a[3], const double b[3],
                                 const double c[3], double normal[3]);

#endif
