/* core/collider.h — colliders: plane, sphere, box (axis-aligned or oriented),
 * capsule, and triangle meshes. An analytic collider is static or moves with a
 * constant linear velocity: its pose at time t is the pose at t = 0 translated by
 * velocity * t. A triangle-mesh collider (CB_COLLIDER_MESH, contact/trimesh_collider.h)
 * may also rotate at a constant angular velocity about a pivot or follow keyframes.
 * Queries give the signed distance (negative inside; unsigned for open meshes), the
 * outward normal and the closest surface point. */
#ifndef CB_COLLIDER_H
#define CB_COLLIDER_H

typedef enum {
    CB_COLLIDER_PLANE = 0,
    CB_COLLIDER_SPHERE,
    CB_COLLIDER_BOX,
    CB_COLLIDER_CAPSULE,
    CB_COLLIDER_MESH
} cb_collider_type;

struct cb_trimesh_collider; /* contact/trimesh_collider.h */

typedef struct cb_collider {
    cb_collider_type type;
    double center[3];    /* plane: a point on it; sphere, box: centre; capsule: unused */
    double normal[3];    /* plane: unit normal (outside is where normal points) */
    double radius;       /* sphere, capsule */
    double half[3];      /* box half extents along its axes */
    double axes[3][3];   /* box: axes[k] is the k-th box axis (unit, orthonormal) */
    double p0[3], p1[3]; /* capsule segment */
    double velocity[3];  /* constant linear velocity (m/s) */
    double friction;     /* Coulomb coefficient */
    double restitution;  /* normal restitution coefficient in [0,1] */
    struct cb_trimesh_collider *mesh; /* CB_COLLIDER_MESH only; owned */
    int line;            /* line in the scene file, for messages */
} cb_collider;

/* Defaults: static, friction 0, restitution 0, identity box axes. */
cb_collider cb_default_collider(cb_collider_type type);

/* Signed distance of x from the collider's surface at time t (negative inside),
 * outward unit normal at the closest point, and the closest surface point.
 * normal and closest may be NULL. */
double cb_collider_query(const cb_collider *c, double t, const double x[3],
                         double normal[3], double closest[3]);

/* Velocity of the collider surface at time t (constant for analytic colliders). */
void cb_collider_velocity(const cb_collider *c, double t, const double x[3], double v[3]);

const char *cb_collider_type_name(cb_collider_type type);

/* Release what the collider owns (mesh data). */
void cb_collider_release(cb_collider *c);

#endif
