/* core/collider.h — collider descriptions: plane, sphere, box (axis-aligned or oriented),
 * capsule, and triangle meshes. An analytic collider is static or moves with a
 * constant linear velocity: its pose at time t is the pose at t = 0 translated by
 * velocity * t; a sphere, plane or capsule may also spin in place (angular_velocity). A triangle-mesh collider (CB_COLLIDER_MESH, contact/trimesh_collider.h)
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

typedef enum {
    CB_TRIMESH_STATIC = 0,
    CB_TRIMESH_VELOCITY,  /* constant velocity and angular velocity about the pivot */
    CB_TRIMESH_KEYFRAMES  /* piecewise-linear translation, slerped rotation */
} cb_trimesh_motion_kind;

typedef struct cb_trimesh_keyframe {
    double time;            /* s */
    double translation[3];  /* T_k (m) */
    double axis[3];         /* rotation axis R_k (any length > 0; ignored when angle is 0) */
    double angle;           /* rotation angle in RADIANS (the scene file gives degrees) */
} cb_trimesh_keyframe;

typedef struct cb_trimesh_motion {
    cb_trimesh_motion_kind kind;
    double velocity[3];          /* CB_TRIMESH_VELOCITY: m/s */
    double angular_velocity[3];  /* CB_TRIMESH_VELOCITY: rad/s about the pivot */
    int has_pivot;               /* 0: the pivot is the surface centroid */
    double pivot[3];
    int nkeys;                   /* CB_TRIMESH_KEYFRAMES: >= 1, copied at load */
    const cb_trimesh_keyframe *keys;
} cb_trimesh_motion;

/* A static motion (everything zero). */
cb_trimesh_motion cb_trimesh_default_motion(void);

struct cb_trimesh_collider; /* contact/trimesh_collider.h: the geometry, built by the contact layer */

typedef struct cb_collider {
    cb_collider_type type;
    double center[3];    /* plane: a point on it; sphere, box: centre; capsule: unused */
    double normal[3];    /* plane: unit normal (outside is where normal points) */
    double radius;       /* sphere, capsule */
    double half[3];      /* box half extents along its axes */
    double axes[3][3];   /* box: axes[k] is the k-th box axis (unit, orthonormal) */
    double p0[3], p1[3]; /* capsule segment */
    double velocity[3];  /* constant linear velocity (m/s) */
    double angular_velocity[3]; /* analytic: the surface spins in place at this rate (rad/s)
                                   about an axis through center (sphere, plane) or p0
                                   (capsule): its shape never changes, only its surface
                                   velocity v + omega x (x - c(t)), which drives friction.
                                   Allowed where the spin keeps the shape: a sphere about
                                   any axis, a plane about its normal, a capsule about
                                   its segment (the scene refuses the others) */
    double friction;     /* Coulomb coefficient */
    double restitution;  /* normal restitution coefficient in [0,1] */
    /* CB_COLLIDER_MESH only. The scene (this layer) holds the description: the OBJ
     * file, where the scene names it (for messages) and the motion (keys owned). The
     * geometry is built from it by the contact layer (cb_scene_load,
     * contact/colliders.h), which sets mesh and the function that frees it. */
    char *mesh_path, *mesh_where;
    cb_trimesh_motion mesh_motion;
    struct cb_trimesh_collider *mesh;
    void (*mesh_free)(struct cb_trimesh_collider **mesh);
    int line;            /* line in the scene file, for messages */
} cb_collider;

/* Defaults: static, friction 0, restitution 0, identity box axes. */
cb_collider cb_default_collider(cb_collider_type type);

/* Queries (distance, normal, velocity): contact/colliders.h. */

const char *cb_collider_type_name(cb_collider_type type);

/* Release what the collider owns (the mesh description and geometry). */
void cb_collider_release(cb_collider *c);

#endif
