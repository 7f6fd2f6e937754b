/* contact/trimesh_collider.h — triangle-mesh colliders loaded from OBJ: static or
 * kinematic (constant linear + angular velocity, or keyframed rigid poses), with
 * signed distance, closest point, outward normal and inside/outside.
 *
 * Rest frame and pose. The OBJ gives the mesh in its rest frame. At time t the mesh
 * is placed by a rigid motion about a pivot p (default: the area-weighted centroid of
 * the surface):   x_world = p + T(t) + R(t) (x_rest - p).
 *   static      R = I, T = 0.
 *   velocity    T = v t, R = rotation by angle |w| t about w / |w| (w in rad/s).
 *   keyframes   keys (t_k, T_k, R_k) with strictly increasing t_k. Between two keys T is
 *               linear in t and R is the slerp of the two rotations (constant angular
 *               velocity, along the SHORTER arc: a turn of more than 180 degrees between
 *               two keys needs an intermediate key). Before the first key the mesh holds
 *               the first pose, after the last key the last pose (zero velocity).
 *               At a key time the velocity is that of the segment starting there.
 * A query transforms x into the rest frame (inverse pose), queries the rest mesh
 * through a BVH (contact/bvh.h, cb_bvh_closest) and transforms the closest point and
 * the normal back; the distance is invariant.
 *
 * Sign (closed meshes). A mesh is closed when every edge has exactly two triangles;
 * it must then be consistently oriented (every edge traversed once in each direction;
 * an inconsistent mesh is rejected naming the edge). A closed mesh whose enclosed
 * volume comes out negative (faces wound clockwise seen from outside) is accepted and
 * its orientation reversed. The sign of x - c, c the closest point, is taken against
 * the ANGLE-WEIGHTED PSEUDO-NORMAL (Baerentzen & Aanaes 2005) of the feature c lies
 * on: the face normal in a face interior, the sum of the two face normals on an edge,
 * the sum of the incident face normals weighted by their corner angles at a vertex.
 * For a closed, consistently oriented 2-manifold this sign is exact whatever feature
 * the closest point falls on, and it costs O(1) after the closest-point query, where
 * the generalized winding number costs O(n) per point (or an approximation
 * hierarchy). Known limits: meshes that intersect themselves and vertices whose
 * triangles form two fans (pinched "bow-tie" vertices) can get a wrong sign near the
 * defect; points within rounding of the surface get either sign.
 *
 * Open meshes (some edge has one triangle) have no inside: the distance is unsigned
 * (>= 0) and the normal points from the closest point towards x (x's side of the
 * surface), so a push along it moves x away from the surface on the side it is on.
 *
 * Normal. The unit vector sign * (x - c) / |x - c| (the gradient of the signed
 * distance, as for the analytic colliders); when x is on the surface (|x - c| at
 * rounding level) the pseudo-normal of the closest feature instead.
 */
#ifndef CB_TRIMESH_COLLIDER_H
#define CB_TRIMESH_COLLIDER_H

#include "core/collider.h"
#include "core/error.h"
#include "core/mesh.h"

/* cb_trimesh_motion, cb_trimesh_keyframe: the motion's description, core/collider.h. */

struct cb_trimesh_collider;
typedef struct cb_trimesh_collider cb_trimesh_collider;

/* Load the rest mesh from an OBJ file (cb_mesh_read_obj: errors name the file and
 * line) and set up its motion (motion NULL = static). Errors: OBJ problems, OBJ line
 * elements (a collider has no springs), an inconsistently oriented closed mesh,
 * non-finite or inconsistent motion data (keyframe times not strictly increasing,
 * a zero rotation axis with a non-zero angle). */
int cb_trimesh_collider_load(const char *path, const cb_trimesh_motion *motion,
                             cb_trimesh_collider **out, cb_error *err);
/* The same from arrays (copied and validated by cb_mesh_from_arrays); `label` names
 * the source in messages. */
int cb_trimesh_collider_from_arrays(int nv, const double (*x)[3], int nf, const int (*f)[3],
                                    const char *label, const cb_trimesh_motion *motion,
                                    cb_trimesh_collider **out, cb_error *err);
void cb_trimesh_collider_free(cb_trimesh_collider **m);

/* Signed distance of x from the surface at time t (negative inside a closed mesh;
 * unsigned for an open mesh), the unit normal (see above) and the closest surface
 * point, both in world coordinates at time t. normal and closest may be NULL.
 * Non-finite x or t: returns NaN, normal (0, 0, 1), closest = x. */
double cb_trimesh_collider_query(const cb_trimesh_collider *m, double t, const double x[3],
                                 double normal[3], double closest[3]);

/* Velocity at time t of the surface point (rigidly attached to the mesh) at world x:
 * T'(t) + omega(t) x (x - p - T(t)). */
void cb_trimesh_collider_velocity(const cb_trimesh_collider *m, double t, const double x[3],
                                  double v[3]);

/* The pose at time t: x_world = p + T + R (x_rest - p). Any output may be NULL. */
void cb_trimesh_collider_pose(const cb_trimesh_collider *m, double t, double R[3][3],
                              double T[3], double pivot[3]);

/* World positions at time t of the rest mesh's vertices ([nv] xyz, caller's storage),
 * e.g. to refit a BVH of the collider for a two-tree query. */
void cb_trimesh_collider_positions(const cb_trimesh_collider *m, double t, double (*x)[3]);

/* The rest mesh (owned by the collider) and whether it is closed. */
const cb_mesh *cb_trimesh_collider_mesh(const cb_trimesh_collider *m);
int cb_trimesh_collider_is_closed(const cb_trimesh_collider *m);

#endif
