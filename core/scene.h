/* core/scene.h — scene files (YAML, see the README's "Scene files").
 *
 * A scene gives the physical parameters once; every solver derives its own
 * parameters from them. Loading applies `--set path=value` overrides to the YAML
 * tree first, then interprets it. Unknown keys, wrong types and out-of-range
 * values are errors naming file:line:col and the allowed keys or range.
 */
#ifndef CB_SCENE_H
#define CB_SCENE_H

#include "core/error.h"
#include "core/mesh.h"
#include "core/tetmesh.h"
#include "core/collider.h"
#include "core/params.h"
#include "core/yamltree.h"

/* Defaults of the run health check (experiments/harness/health.h applies it). */
#define CB_HEALTH_ENERGY_FACTOR 1.0
#define CB_HEALTH_MAX_STRAIN 1.0

typedef enum {
    CB_PIN_INDICES = 0,   /* indices: [..] */
    CB_PIN_CORNERS,       /* the four grid corners */
    CB_PIN_CORNERS_TOP,   /* grid corners (0, ny-1) and (nx-1, ny-1) */
    CB_PIN_CORNERS_BOTTOM,/* grid corners (0, 0) and (nx-1, 0) */
    CB_PIN_SIDE_TOP,      /* grid row j = ny-1 */
    CB_PIN_SIDE_BOTTOM,   /* grid row j = 0 */
    CB_PIN_SIDE_LEFT,     /* grid column i = 0 */
    CB_PIN_SIDE_RIGHT,    /* grid column i = nx-1 */
    CB_PIN_BOX            /* every vertex whose rest position is inside box {min, max} */
} cb_pin_kind;

typedef struct cb_pin_def {
    cb_pin_kind kind;
    int *indices; int nindices;       /* CB_PIN_INDICES */
    double box_min[3], box_max[3];    /* CB_PIN_BOX */
    double velocity[3];               /* scripted motion: x(t) = x(0) + velocity t ... */
    double angular_velocity[3];       /* ... + a rotation by |omega| t about the axis omega
                                         through pivot (rad/s; 0: none) */
    double pivot[3];
    char where[256];         /* file:line:col of the pin (or the --set that gave it), for messages */
} cb_pin_def;

/* One piece of a cloth made of several (cloth.pieces): its own grid or mesh, moved by
 * translation, its own initial velocity and spin (about its own centroid) and pins (grid
 * selectors and indices refer to the piece). The pieces share the cloth's material and
 * become one mesh, the solvers see one cloth. */
typedef struct cb_cloth_piece {
    int use_grid;            /* 1: grid, 0: mesh file */
    cb_grid_def grid;
    char *mesh_path;
    double translation[3];   /* added to the piece's rest positions (m) */
    double velocity[3];
    double angular_velocity[3];
    int npins; cb_pin_def *pins;
} cb_cloth_piece;

typedef struct cb_cloth_def {
    int use_grid;            /* 1: grid, 0: mesh file */
    cb_grid_def grid;
    char *mesh_path;         /* resolved against the scene file's folder */
    int use_tets;            /* cloth.tets, a soft body: 1 procedural box, 2 TetGen files, else 0
                                (then use_grid = 0 and mesh_path = NULL) */
    cb_tet_box_def tet_box;  /* use_tets == 1 */
    char *tets_path;         /* use_tets == 2: TetGen base name (.node/.ele), resolved like mesh_path */
    double volume_density;   /* kg/m^3, > 0 (default 1000): tet bodies' lumped mass */
    double density;          /* kg/m^2, > 0 */
    double line_density;     /* kg/m, >= 0 (default 0): mass of springs without a triangle */
    double stretch;          /* k_stretch, N/m, >= 0 */
    double bend;             /* k_bend, N*m, >= 0 */
    double thickness;        /* m, >= 0 */
    double velocity[3];      /* initial velocity of every vertex */
    double angular_velocity[3]; /* initial spin about the rest centroid (rad/s) */
    double initial_stretch;  /* initial positions: centroid + s (rest - centroid); default 1 */
    int npins; cb_pin_def *pins;
    int npieces;             /* cloth.pieces: > 0 replaces grid/mesh, velocity, */
    cb_cloth_piece *pieces;  /* angular_velocity, initial_stretch and pins above */
} cb_cloth_def;

typedef struct cb_scene {
    char *path;              /* the file loaded ("<string>" for in-memory scenes) */
    char *dir;               /* its folder, for relative paths */
    char *name;
    char *text;              /* the whole YAML after overrides (for the run file) */
    cb_yaml *root;           /* the tree after overrides */
    double duration;         /* s, > 0 */
    double dt;               /* s, > 0 */
    double frame_rate;       /* frames written per simulated second, > 0 */
    double gravity[3];
    int log_every;           /* series row every n steps (>= 1, default 1) */
    double bound;            /* divergence: |x| beyond this (m) is "diverged" (default 1e3) */
    int expensive_every;     /* self_intersections/min_separation every n-th frame
                                (0 = never, default 1 = every frame) */
    int audit;               /* 1: the continuous audit of every step (experiments/harness/audit.h); default 0 */
    double health_energy_factor; /* health: {energy_factor, max_strain} (experiments/harness/health.h) */
    double health_max_strain;
    cb_cloth_def cloth;
    int ncolliders;
    cb_collider *colliders;
    char **files;            /* every file the scene reads (meshes, TetGen .node/.ele), */
    int nfiles;              /* resolved against dir, in reading order */
} cb_scene;

/* Parse a scene file, applying overrides ("a.b=value", may be NULL when nsets = 0).
 * Mesh colliders are described (file, motion), not built: programs and tests load
 * scenes with cb_scene_load (contact/colliders.h), which also builds their geometry. */
int cb_scene_parse(const char *path, const char *const *sets, int nsets, cb_scene **out, cb_error *err);
/* The same from text; `label` names it in messages, `dir` resolves relative paths. */
int cb_scene_parse_string(const char *text, const char *label, const char *dir,
                          const char *const *sets, int nsets, cb_scene **out, cb_error *err);
void cb_scene_free(cb_scene **s);

/* The parameter block solvers.<solver> (block NULL when absent). */
cb_params cb_scene_params(const cb_scene *s, const char *solver);

/* The most steps a scene may ask for (duration / dt); more is bad input. */
#define CB_SCENE_MAX_STEPS 1e12

/* Number of steps: round(duration / dt). Steps per frame: max(1, round(1/(frame_rate dt))). */
long cb_scene_steps(const cb_scene *s);
long cb_scene_steps_per_frame(const cb_scene *s);

#endif
