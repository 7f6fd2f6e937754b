/* contact/selfcheck.h — the two expensive self-contact metrics (ARCHITECTURE.md "Measuring"):
 *
 *   self_intersections: the number of (edge, triangle) pairs sharing no vertex whose
 *     closed segment and closed triangle intersect — exact (BVH broad phase, then
 *     cb_segment_triangle_intersect, an exact predicate).
 *   min_separation: the smallest distance between non-adjacent primitives: vertex v vs
 *     triangle t with v not in t, and edge vs edge sharing no vertex — the exact minimum
 *     of cb_point_triangle_distance2 / cb_edge_edge_distance2 over those pairs, found by
 *     branch and bound on the BVH (a pair of nodes is skipped only when a lower bound on
 *     the distance between their volumes exceeds the best distance found so far).
 *     Note: this is the vertex-triangle / edge-edge separation used by contact methods;
 *     where the mesh intersects itself it is usually small but need not be 0 (an edge
 *     piercing a triangle's interior keeps its vertices and edges apart from the
 *     triangle's). A mesh with no non-adjacent pair (one triangle) gives +INFINITY.
 *
 * Only triangle primitives take part: edges and vertices that belong to no triangle
 * (spring-only edges from OBJ `l` records, cb_mesh.s) are ignored by both metrics.
 *
 * Each call rebuilds the BVH (median split, no allocation) at the given positions, so
 * the result does not depend on earlier calls. Volumes are inflated by a few ulps of
 * the coordinate magnitude, so rounding in the volumes never hides a pair.
 *
 * Status: 0; CB_ERR_INPUT for an empty mesh or NaN/Inf coordinates (naming the vertex);
 * CB_WARN (> 0) when a triangle has zero area at these positions (its edge cross
 * product is exactly 0): the result is still computed and valid (a degenerate triangle
 * counts as its edges), the message names the triangle.
 *
 * Keep a cb_selfcheck between frames to avoid reallocating (a metric on meshes up to
 * 100k triangles); cb_self_intersections / cb_min_separation are one-shot wrappers.
 */
#ifndef CB_SELFCHECK_H
#define CB_SELFCHECK_H

#include "contact/bvh.h"
#include "core/error.h"
#include "core/mesh.h"

typedef struct cb_selfcheck cb_selfcheck;

/* A reusable context for mesh m (which must outlive it), with volumes of `kind`
 * (CB_BV_DEFAULT is a good choice). */
int cb_selfcheck_create(const cb_mesh *m, cb_bv_kind kind, cb_selfcheck **out, cb_error *err);
void cb_selfcheck_free(cb_selfcheck **s);

int cb_selfcheck_intersections(cb_selfcheck *s, const double (*x)[3], long *count, cb_error *err);
/* *dist as above; pair_kind (may be NULL) gets 0 for a vertex-triangle minimum
 * (a = vertex, b = triangle), 1 for an edge-edge one (a, b = edges), -1 if none;
 * a and b may be NULL. */
int cb_selfcheck_min_separation(cb_selfcheck *s, const double (*x)[3], double *dist, int *pair_kind,
                                int *a, int *b, cb_error *err);

int cb_self_intersections(const cb_mesh *m, const double (*x)[3], long *count, cb_error *err);
int cb_min_separation(const cb_mesh *m, const double (*x)[3], double *dist, cb_error *err);

#endif
