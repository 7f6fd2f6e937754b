/* core/solver.h — the solver interface.
 *
 * Design
 * ------
 * clothbench compares methods, so a method must not be able to change how it is
 * measured. Every method is a cb_solver_class: create() reads the world (the shared
 * cloth model, masses, pins, colliders) and its own parameters, step() advances
 * w->state from t to exactly t + dt, destroy() frees it. The run loop (core/run.c)
 * owns everything else: it sets up the world from the scene, calls step(), computes
 * the metrics from the state alone (core/metrics.c, identical for every solver),
 * detects divergence, writes the run file and handles signals. Solvers never write
 * files and never print.
 *
 * A solver derives its own parameters from the shared model and documents the
 * mapping in its header comment. What only the solver knows it reports in
 * cb_step_info: iterations, residual, its own energy, contact counts, the impulse
 * colliders and attachments applied, and wall time per named stage.
 *
 * Status convention: 0 ok, negative error (cb_error filled), as everywhere.
 * Adding a method: one file in solvers/, one row in the table in core/solver.c,
 * one test suite in tests/.
 */
#ifndef CB_SOLVER_H
#define CB_SOLVER_H

#include "core/error.h"
#include "core/params.h"
#include "core/world.h"

#define CB_MAX_STAGES 8

typedef struct cb_stage_time {
    const char *name;     /* static string, e.g. "local", "global", "contact" */
    double seconds;
} cb_stage_time;

typedef struct cb_step_info {
    int iterations;           /* solver iterations this step (0 if not iterative) */
    double residual;          /* final residual (NaN if none) */
    double solver_energy;     /* the method's own model energy (NaN if none) */
    double contact_energy;    /* penalty energy (NaN if none) */
    int contacts;             /* active contacts this step */
    int factorizations;       /* matrix factorizations this step */
    long events;              /* asynchronous events processed this step (-1: not event-based) */
    double external_impulse[3]; /* impulse applied by colliders and attachments this
                                   step (the run loop adds gravity); NaN if unknown */
    double wall_contact_s;    /* wall time of contact work this step */
    /* what the contact stage after the integrator did (core/contact_probe.h); NaN / -1
       where the method has no such stage */
    double contact_depth_corrected; /* deepest collider penetration it moved a vertex out of (m) */
    int contact_vertices_corrected; /* vertices it changed */
    double contact_work;      /* change of the shared model's energy across it (J) */
    int nstages;
    cb_stage_time stage[CB_MAX_STAGES];
} cb_step_info;

/* Reset to "nothing known": zero counts, NaN energies and residual, zero impulse,
 * events -1, contact probe fields NaN / -1. */
void cb_step_info_reset(cb_step_info *info);
/* Add seconds to the named stage (created on first use). */
void cb_step_info_stage(cb_step_info *info, const char *name, double seconds);

/* A knot of a vertex's path inside a step: at time t it was at x and its velocity
 * became v (see cb_solver_class.set_path_hook). */
typedef void (*cb_path_knot_fn)(void *ctx, int vertex, double t, const double x[3], const double v[3]);

typedef struct cb_solver_class {
    const char *name;      /* "explicit", "pbd", "xpbd", "fms", "newton", "avgforce", "acm" */
    const char *summary;   /* one line for `clothbench list` */
    int  (*create) (const cb_world *w, const cb_params *p, void **self, cb_error *err);
    int  (*step)   (void *self, cb_world *w, double dt, cb_step_info *info, cb_error *err);
    void (*destroy)(void *self);
    /* 1 when this solver resolves contact of the cloth with itself in this run (its
     * parameters may switch it off), 0 when not; NULL: the method has no self contact.
     * Recorded in the run file (attribute self_collision), so a comparison says per run
     * whether it was on. */
    int  (*self_collision)(const void *self);
    /* Optional, for a method whose vertices move on piecewise-linear paths it knows
     * (acm): call fn(ctx, ...) at every kink of a free vertex's path (fn NULL: stop).
     * The continuous audit (core/audit.h) then follows the exact paths; without it a
     * vertex is taken to move in a straight line from one step state to the next. */
    void (*set_path_hook)(void *self, cb_path_knot_fn fn, void *ctx);
} cb_solver_class;

int cb_solver_count(void);
const cb_solver_class *cb_solver_at(int i);
const cb_solver_class *cb_solver_find(const char *name);
/* "on", "off" or "none" (cb_solver_class.self_collision). */
const char *cb_solver_self_collision(const cb_solver_class *cls, const void *self);
/* Comma-separated names of all solvers (static buffer), for messages. */
const char *cb_solver_names(void);

#endif
