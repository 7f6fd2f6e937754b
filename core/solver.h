/* core/solver.h — the solver interface.
 *
 * Design
 * ------
 * clothbench compares methods, so a method must not be able to change how it is
 * measured. Every method is a cb_solver_class: create() reads the world (the shared
 * cloth model, masses, pins, colliders) and its own parameters, step() advances
 * w->state from t to exactly t + dt, destroy() frees it. The run loop (experiments/harness/run.c)
 * owns everything else: it sets up the world from the scene, calls step(), computes
 * the metrics from the state alone (experiments/harness/metrics.c, identical for every solver),
 * detects divergence, writes the run file and handles signals. Solvers never write
 * files and never print.
 *
 * A solver derives its own parameters from the shared model and documents the
 * mapping in its header comment. What only the solver knows it reports in
 * cb_step_info: iterations, residual, its own energy, contact counts, the impulse
 * colliders and attachments applied, and wall time per named stage.
 *
 * The step contract. Every caller (the run loop, the tests' cb_sim.h, bench) steps
 * a method through cb_solver_step, never through cls->step: it checks the arguments
 * once (so the methods do not), resets cb_step_info, times the step, sets the time to
 * exactly (n + 1) dt, sums the contact stages into wall_contact_s and checks the state
 * for non-finite values. Inside step() a method times its named stages with a lap
 * timer (cb_lap_*): each lap ends one stage, so the stages add up to the step.
 *
 * Capabilities. What a method can do is in its class (`flags`, CB_SOLVER_*, and the
 * optional hooks), so a test that judges every method loops over the registry and asks
 * these, never a method's name or the number of methods.
 *
 * Status convention: 0 ok, negative error (cb_error filled), as everywhere; a method
 * that breaks the step contract is CB_ERR_INTERNAL (its fault), bad input CB_ERR_INPUT.
 * Adding a method (ARCHITECTURE.md "How to add a method"): its file in solvers/, one
 * row in the registry (experiments/harness/registry.c), one line in solvers/meson.build,
 * its own test suite (tests/test_<name>.c and its name in tests/meson.build) and one
 * reviewed hash in tests/test_determinism.c, which asks for it by name. The
 * cross-method suites (conformance, contact probe, reliability, faults) then hold it to
 * this contract with no edit.
 */
#ifndef CB_SOLVER_H
#define CB_SOLVER_H

#include "core/error.h"
#include "core/params.h"
#include "core/world.h"

#define CB_MAX_STAGES 16

typedef struct cb_stage_time {
    const char *name;     /* static string, e.g. "local", "global", "contact" */
    double seconds;
    int contact;          /* 1: contact work (summed into wall_contact_s) */
} cb_stage_time;

typedef struct cb_step_info {
    int iterations;           /* solver iterations this step (0 if not iterative) */
    double residual;          /* final residual (NaN if none) */
    double solver_energy;     /* the method's own model energy (NaN if none) */
    double contact_energy;    /* penalty energy (NaN if none) */
    int contacts;             /* active contacts this step */
    int factorizations;       /* matrix factorizations this step */
    long events;              /* asynchronous events processed this step (-1: not event-based) */
    double external_impulse[3]; /* impulse applied by colliders, attachments and drag this
                                   step (the run loop adds gravity); reset to zero, every
                                   method adds it where they act (the conformance suite
                                   checks the momentum balance, so it is never unknown) */
    double external_work;     /* work (J) the moving colliders and pins did on the cloth this
                                 step through the collider and attachment impulses of
                                 external_impulse: each impulse j times the velocity of what
                                 applied it, j . u_c for a collider (cb_collider_velocity at the
                                 contact point), j . u_pin for an attachment (the pin's scripted
                                 velocity), summed where the method applies them; drag is not
                                 in it. A fixed collider or pin adds j . 0 = 0 exactly. The
                                 pinned vertices' own kinetic and gravity energy, which their
                                 script changes, is the health check's to add
                                 (experiments/harness/health.h) */
    double t_end;             /* input: the time the step ends at, exactly (n + 1) dt (set by
                                 cb_solver_step); a method that schedules by absolute time
                                 (acm) runs to it, not to t + dt, which may differ in the last bit */
    double wall_step_s;       /* wall time of the step (set by cb_solver_step) */
    double wall_contact_s;    /* the contact stages' wall time (set by cb_solver_step) */
    /* what the contact stage after the integrator did (contact/contact_probe.h); NaN / -1
       where the method has no such stage */
    double contact_depth_corrected; /* deepest collider penetration it moved a vertex out of (m) */
    int contact_vertices_corrected; /* vertices it changed */
    double contact_work;      /* change of the shared model's energy across it (J) */
    double min_separation;    /* the smallest distance between non-adjacent primitives of the
                                 cloth (vertex-triangle, edge-edge) at the step's end as the
                                 method measured it (m); NaN where it does not (ipc: its
                                 self pairs within thickness + dhat; NaN when none is) */
    int nstages;
    int stages_dropped;       /* stages beyond CB_MAX_STAGES: cb_solver_step fails */
    cb_stage_time stage[CB_MAX_STAGES];
} cb_step_info;

/* Reset to "nothing known": zero counts, NaN energies, residual and min_separation, zero
 * impulse, events -1, contact probe fields NaN / -1. */
void cb_step_info_reset(cb_step_info *info);
/* Add seconds to the named stage (created on first use); contact: 1 for contact work. */
void cb_step_info_stage(cb_step_info *info, const char *name, double seconds, int contact);

/* The lap timer of a step's stages: cb_lap_start at the start of the work, then one
 * cb_lap / cb_lap_contact at the end of each stage adds the time since the previous
 * lap to that stage. A stage may be lapped several times (its times add up). */
typedef struct cb_lap_timer {
    cb_step_info *info;
    double t;
} cb_lap_timer;
void cb_lap_start(cb_lap_timer *lap, cb_step_info *info);
void cb_lap(cb_lap_timer *lap, const char *stage);
void cb_lap_contact(cb_lap_timer *lap, const char *stage);

/* A knot of a vertex's path inside a step: at time t it was at x and its velocity
 * became v (see cb_solver_class.set_path_knots). */
typedef void (*cb_path_knot_fn)(void *ctx, int vertex, double t, const double x[3], const double v[3]);

/* Capabilities (cb_solver_class.flags), what the cross-method tests ask instead of names.
 * Self contact and exact paths are the optional hooks self_collision and set_path_knots. */
enum {
    /* a contact stage after the integrator that moves vertices (projection, impulses,
     * friction), bracketed by the contact probe (contact/contact_probe.h), so its
     * contact_* figures are known; without it they are NaN / -1 */
    CB_SOLVER_CONTACT_STAGE = 1 << 0,
    /* laps named stages (cb_lap) in every step; without it, stages only when profiling */
    CB_SOLVER_STAGE_TIMES = 1 << 1,
    /* event-based: reports cb_step_info.events (without it events is -1) */
    CB_SOLVER_EVENTS = 1 << 2,
    /* iterates to a `tolerance` key of its block (a truncated solve leaves a residual force) */
    CB_SOLVER_TOLERANCE = 1 << 3,
    /* runs exactly its `iterations` key's iterations per step (no early stop) */
    CB_SOLVER_FIXED_ITERATIONS = 1 << 4,
    /* by default splits a step into substeps or events no longer than a bound (stability,
     * a fixed length, the next event): a longer dt is more work inside one step */
    CB_SOLVER_SUBSTEPS = 1 << 5,
    /* bitwise the same results whatever the OpenMP / BLAS thread count */
    CB_SOLVER_THREAD_INDEPENDENT = 1 << 6,
    /* Coulomb friction against the colliders (their `friction`): tests/test_friction.c
     * holds it to the incline's threshold and sliding rate, the stopping distance */
    CB_SOLVER_COLLIDER_FRICTION = 1 << 7,
    /* takes analytic colliders that translate (velocity); without it such a scene is
     * refused at create with "does not support moving colliders" (tests/test_health.c) */
    CB_SOLVER_MOVING_COLLIDERS = 1 << 8,
};

typedef struct cb_solver_class {
    const char *name;      /* e.g. "explicit": the block solvers.<name>, --solver <name> */
    const char *summary;   /* one line for `clothbench list` */
    unsigned flags;        /* CB_SOLVER_* capabilities */
    /* The resident memory per cloth vertex the method needs at least (bytes), for the
     * run's memory estimate before it allocates (experiments/harness/run.c): the slope
     * of the peak resident size of `run data/scenes/hanging.yaml --no-frames` over one
     * step between a 100 x 100 and a 200 x 200 grid, rounded down. 0: not measured (the
     * estimate takes the least of the measured methods). */
    double bytes_per_vertex;
    int  (*create) (const cb_world *w, const cb_params *p, void **self, cb_error *err);
    int  (*step)   (void *self, cb_world *w, double dt, cb_step_info *info, cb_error *err);
    void (*destroy)(void *self);
    /* 1 when this solver resolves contact of the cloth with itself in this run (its
     * parameters may switch it off), 0 when not; NULL: the method has no self contact.
     * Recorded in the run file (attribute self_collision), so a comparison says per run
     * whether it was on. */
    int  (*self_collision)(const void *self);
    /* The model this run solves, one line "stretch ... / bending ... / contact ..."
     * (e.g. "stretch springs / bending shells / contact penalty"; pbd: "pbd
     * dimensionless ..."): recorded in the run file (attribute model), so a comparison
     * can tell runs that solved different models apart. Required. */
    const char *(*model)(const void *self);
    /* Optional, for a method whose vertices move on piecewise-linear paths it knows
     * (acm): call fn(ctx, ...) at every path knot of a free vertex's path (fn NULL: stop).
     * The continuous audit (experiments/harness/audit.h) then follows the exact paths; without it a
     * vertex is taken to move in a straight line from one step state to the next. */
    void (*set_path_knots)(void *self, cb_path_knot_fn fn, void *ctx);
    /* Optional, for a method with a contact potential whose value it reports as
     * cb_step_info.contact_energy after each step (ipc: kappa times its barriers over h^2): that
     * potential at the world's state before the first step of dt, the initial state (the
     * run's t = 0 row and the health check's E0 include it, so a push of the potential at
     * the start is not read as energy gained). Called once, after create and before the
     * first step; it must not change the world nor what the steps compute. NULL: the t = 0
     * row's contact_energy is NaN (every method but ipc: acm reports a penalty energy after
     * its steps but has no such hook, see ARCHITECTURE.md). */
    double (*initial_contact_energy)(void *self, const cb_world *w, double dt);
} cb_solver_class;

/* The registry of methods (cb_solver_find, ...): experiments/harness/registry.h. */

/* cb_solver_class.model, or "unknown" when the class has none. */
const char *cb_solver_model(const cb_solver_class *cls, const void *self);

/* cb_solver_class.initial_contact_energy at w's state, or NaN when the class has none. */
double cb_solver_initial_contact_energy(const cb_solver_class *cls, void *self, const cb_world *w, double dt);

/* "on", "off" or "none" (cb_solver_class.self_collision). */
const char *cb_solver_self_collision(const cb_solver_class *cls, const void *self);

/* The one entry point of a step (see "The step contract" above). step is the number of
 * steps done before this one: the time becomes (step + 1) dt exactly. Errors:
 * CB_ERR_INPUT for a NULL argument or a dt that is not a finite number > 0 (before
 * the method runs), the method's own error, CB_ERR_NUMERIC naming the first vertex
 * whose position or velocity is not finite after the step (its values in the
 * message), CB_ERR_INTERNAL when the method broke the contract (it reported more than
 * CB_MAX_STAGES stages: a fault of the method, not of the input). */
int cb_solver_step(const cb_solver_class *cls, void *self, cb_world *w, long step, double dt,
                   cb_step_info *info, cb_error *err);

#endif
