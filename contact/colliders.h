/* contact/colliders.h — what the contact layer adds to the scene's collider
 * descriptions (core/collider.h): signed distance, normal, closest point and surface
 * velocity of every collider type, the world's collider distance and contact
 * resolution, and the loaders that build the mesh colliders' geometry (a BVH per mesh,
 * contact/trimesh_collider.h) after parsing the scene.
 *
 * Load scenes with cb_scene_load / cb_scene_load_string (here): they parse
 * (cb_scene_parse*, core/scene.h) and build the geometry. A world built from a scene
 * that was only parsed refuses mesh colliders (cb_world_create). */
#ifndef CB_COLLIDERS_H
#define CB_COLLIDERS_H

#include "core/collider.h"
#include "core/error.h"
#include "core/scene.h"
#include "core/world.h"

/* Signed distance of x from the collider's surface at time t (negative inside),
 * outward unit normal at the closest point, and the closest surface point.
 * normal and closest may be NULL. */
double cb_collider_query(const cb_collider *c, double t, const double x[3],
                         double normal[3], double closest[3]);

/* Velocity of the collider surface at time t (constant for analytic colliders). */
void cb_collider_velocity(const cb_collider *c, double t, const double x[3], double v[3]);

/* Sum over colliders: the smallest signed distance of x at time t, with that
 * collider's index, normal and closest point (index -1 when there are none). */
double cb_world_collider_distance(const cb_world *w, double t, const double x[3], int *which,
                                  double normal[3], double closest[3]);

/* Project vertex i (position x, velocity v, at time t) out of every collider to a
 * distance of at least `offset`, and apply that collider's restitution and Coulomb
 * friction to v relative to the collider's velocity. Returns 1 if it was in contact,
 * and adds the impulse m dv to impulse[3] (may be NULL). Shared by explicit and any
 * solver that resolves collider contact by projection. */
int cb_world_resolve_collider_contact(const cb_world *w, int i, double t, double offset,
                                      double x[3], double v[3], double impulse[3]);

/* Build the geometry of every mesh collider of a parsed scene (errors name the scene
 * file, line and key, then the OBJ's problem). Idempotent. */
int cb_scene_load_colliders(cb_scene *s, cb_error *err);

/* Parse a scene (cb_scene_parse, cb_scene_parse_string: same arguments) and build its
 * colliders' geometry: what every program and test uses to load a scene. */
int cb_scene_load(const char *path, const char *const *sets, int nsets, cb_scene **out, cb_error *err);
int cb_scene_load_string(const char *text, const char *label, const char *dir,
                         const char *const *sets, int nsets, cb_scene **out, cb_error *err);

#endif
