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
#include "core/vec3.h"
#include "core/world.h"

/* Signed distance of x from the collider's surface at time t (negative inside),
 * outward unit normal at the closest point, and the closest surface point.
 * normal and closest may be NULL. */
double cb_collider_query(const cb_collider *c, double t, const double x[3],
                         double normal[3], double closest[3]);

/* The height of x (in the plane collider's own frame) above the plane: cb_collider_query's
 * plane distance, and cb_collider_distance's. */
static inline double cb_collider_plane_height(const cb_collider *c, const double x[3])
{
    double d[3];
    cb_v3_sub(d, x, c->center);
    return cb_v3_dot(d, c->normal);
}

/* cb_collider_query's signed distance alone, bitwise the same value (tests/test_collider.c),
 * without the normal and the closest point: inline for a plane and a sphere, the other
 * shapes through cb_collider_query. For hot callers (acm renews a vertex's collider
 * certificates after nearly every kick; the call, the normal's division and the closest
 * point were half of that cost). */
static inline double cb_collider_distance(const cb_collider *c, double t, const double x_in[3])
{
    double x[3], d[3];
    if (c->type != CB_COLLIDER_PLANE && c->type != CB_COLLIDER_SPHERE) return cb_collider_query(c, t, x_in, NULL, NULL);
    for (int k = 0; k < 3; k++) x[k] = x_in[k] - c->velocity[k] * t;
    if (c->type == CB_COLLIDER_PLANE) return cb_collider_plane_height(c, x);
    cb_v3_sub(d, x, c->center);
    return cb_v3_norm(d) - c->radius; /* as round_query (contact/colliders.c) */
}

/* Velocity of the collider surface at time t (constant for analytic colliders). */
void cb_collider_velocity(const cb_collider *c, double t, const double x[3], double v[3]);

/* Sum over colliders: the smallest signed distance of x at time t, with that
 * collider's index, normal and closest point (index -1 when there are none). */
double cb_world_collider_distance(const cb_world *w, double t, const double x[3], int *which,
                                  double normal[3], double closest[3]);

/* Project vertex i (position x, velocity v, at time t) out of every collider to a
 * distance of at least `offset`, and apply that collider's restitution and Coulomb
 * friction to v relative to the collider's velocity. Returns 1 if it was in contact,
 * adds the impulse m dv to impulse[3] (may be NULL) and its work m dv . u_c to *work
 * (may be NULL; u_c the collider's surface velocity at the projected point, so a fixed
 * collider adds exactly 0). With restitution <= 1 and friction >= 0 the kinetic energy
 * rises by at most that work (the change of 1/2 m |v|^2 is m dv . u_c plus the change of
 * 1/2 m |v - u_c|^2, which is <= 0). Shared by explicit and any solver that resolves
 * collider contact by projection. */
int cb_world_resolve_collider_contact(const cb_world *w, int i, double t, double offset,
                                      double x[3], double v[3], double impulse[3], double *work);

/* Build the geometry of every mesh collider of a parsed scene (errors name the scene
 * file, line and key, then the OBJ's problem). Idempotent. */
int cb_scene_load_colliders(cb_scene *s, cb_error *err);

/* Parse a scene (cb_scene_parse, cb_scene_parse_string: same arguments) and build its
 * colliders' geometry: what every program and test uses to load a scene. */
int cb_scene_load(const char *path, const char *const *sets, int nsets, cb_scene **out, cb_error *err);
int cb_scene_load_string(const char *text, const char *label, const char *dir,
                         const char *const *sets, int nsets, cb_scene **out, cb_error *err);

#endif
