/* core/world.h — everything a solver steps: the mesh, the state, masses, pins,
 * colliders, gravity and the shared cloth model, built once from a scene.
 *
 * Hot per-vertex data (x, v, inv_mass) is kept in flat arrays; cold data (rest
 * data, pin definitions) lives elsewhere. A solver reads the world and writes only
 * w->state (x, v and t) — and nothing else.
 */
#ifndef CB_WORLD_H
#define CB_WORLD_H

#include "core/error.h"
#include "core/mesh.h"
#include "core/model.h"
#include "core/collider.h"
#include "core/scene.h"

typedef struct cb_state {
    double t;            /* simulated time */
    double (*x)[3];      /* [nv] positions */
    double (*v)[3];      /* [nv] velocities */
} cb_state;

typedef struct cb_world {
    const cb_scene *scene;   /* not owned */
    cb_mesh *mesh;           /* owned */
    cb_state state;
    int nv;
    double *mass;            /* [nv] lumped mass (kg), also for pinned vertices */
    double *inv_mass;        /* [nv] 0 for pinned vertices */
    unsigned char *pinned;   /* [nv] */
    double (*pin_origin)[3]; /* [nv] position of each pinned vertex at t = 0 */
    double (*pin_velocity)[3];/* [nv] scripted velocity of each pinned vertex (0: fixed) */
    double (*pin_omega)[3];  /* [nv] scripted angular velocity (rad/s) about pin_pivot (0: none) */
    double (*pin_pivot)[3];  /* [nv] a point of the rotation axis, at t = 0 (it moves with pin_velocity) */
    int npinned;
    double gravity[3];
    double thickness;        /* cloth thickness (m) */
    int ncolliders;
    const cb_collider *colliders; /* the scene's, not owned */
    cb_cloth_model model;
    int ntets;               /* tetrahedral bodies (cloth.tets): 0 for cloth */
    int (*tets)[4];          /* [ntets] vertex indices, positive orientation; the mesh is the
                                boundary surface, interior tet edges are its springs */
} cb_world;

/* Build the world from a scene: mesh (grid or OBJ), masses, pins, initial state. */
int cb_world_create(const cb_scene *s, cb_world **out, cb_error *err);
void cb_world_free(cb_world **w);

/* Target position of pinned vertex i at time t: pin_pivot + R(omega t)(pin_origin -
 * pin_pivot) + pin_velocity t, R the rotation by |omega| t about omega (none when
 * omega is 0: then exactly pin_origin + pin_velocity t). */
void cb_world_pin_target(const cb_world *w, int i, double t, double out[3]);
/* Its velocity at time t: pin_velocity + omega x R(omega t)(pin_origin - pin_pivot). */
void cb_world_pin_velocity(const cb_world *w, int i, double t, double out[3]);
/* Put every pinned vertex at its target at time t, with its scripted velocity. */
void cb_world_apply_pins(cb_world *w, double t);

/* Largest stable explicit step at rest: h with h omega_max = 2 safety, omega_max^2
 * bounded by Gershgorin's theorem on M^-1 K: for each free vertex i,
 * omega_i^2 <= (2 k_stretch deg_i + sum over its hinges of 8 k_bend w |grad theta_i|^2) / m_i.
 * *h is INFINITY when nothing is stiff. Used by the explicit substepping solvers. */
int cb_world_stable_step(const cb_world *w, double safety, double *h, cb_error *err);

/* The world's collider queries (distance, contact resolution): contact/colliders.h. */

#endif
