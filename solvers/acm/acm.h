/* solvers/acm/acm.h — introspection of the asynchronous contact mechanics solver
 * (the solver itself is cb_solver_acm, registered in core/solver.c; its algorithm is
 * described at the top of acm.c). These calls let tests and benchmarks see what only
 * the solver knows: per-element step counts, the event trace, counters. `solver` is the
 * pointer returned by cb_solver_acm.create. */
#ifndef CB_ACM_H
#define CB_ACM_H

#include "core/solver.h"

enum {
    CB_ACM_EV_GRAVITY = 0,
    CB_ACM_EV_STRETCH = 1,
    CB_ACM_EV_BEND = 2,
    CB_ACM_EV_LAYER = 3,   /* a penalty-layer tick of a contact pair */
    CB_ACM_EV_CERT = 4,    /* a separating-slab (or collider) certificate failure */
    CB_ACM_EV_KDOP = 5,    /* a vertex left its k-DOP box: broad-phase rebuild */
    CB_ACM_EV_KINDS = 6
};

enum { CB_ACM_PAIR_VT = 0, CB_ACM_PAIR_EE = 1, CB_ACM_PAIR_VC = 2 };

typedef struct cb_acm_trace_entry {
    double t;
    int kind;          /* CB_ACM_EV_* */
    int index;         /* element index, pair id or vertex */
    int pair_kind;     /* CB_ACM_PAIR_* for LAYER and CERT events, else -1 */
    int a, b;          /* the pair's primitives (VC: vertex, collider) */
    int layers;        /* active layers of the pair after the event */
    double distance;   /* pair distance at the event (NaN for other events) */
    double impulse;    /* normal impulse applied (N s), 0 if none */
} cb_acm_trace_entry;

typedef struct cb_acm_stats {
    long events[CB_ACM_EV_KINDS];  /* processed, by kind */
    long rebuilds;
    int live_pairs, active_pairs, max_layers;
    double min_stretch_dt, max_stretch_dt;
} cb_acm_stats;

/* Record every processed event into buf (capacity cap; entries beyond it are counted
 * in *n but not stored). buf = NULL stops tracing. */
void cb_acm_set_trace(void *solver, cb_acm_trace_entry *buf, long cap, long *n);
/* Debug hook for exact trajectory checks: fn(ctx, i, t, x, v) is called each time the
 * velocity of free vertex i changes (every kick, every gravity tick), with x its position
 * at t, the time of its last update, and v its new velocity. Between two calls for the
 * same vertex (and from the state at the start of a step to the first call, and from
 * the last call to the state at its end) the vertex moves exactly on the straight line
 * x + (t' - t) v: the calls are the path knots of its piecewise-linear trajectory. Pinned
 * vertices never call it: they move on their prescribed path (cb_world_pin_target: a
 * line, or an arc for a rotating pin, which the audit follows by its chord over the
 * step). Several calls at the same t are possible (the
 * last one gives the velocity). fn = NULL stops the calls. */
/* (core/solver.h: the class's set_path_knots) */
void cb_acm_set_path_knots(void *solver, cb_path_knot_fn fn, void *ctx);
void cb_acm_get_stats(const void *solver, cb_acm_stats *out);
/* Ticks taken so far and clock step of an element (kind CB_ACM_EV_STRETCH: edge index,
 * CB_ACM_EV_BEND: hinge index); -1 / NaN for a bad kind or index. */
long cb_acm_element_ticks(const void *solver, int kind, int index);
double cb_acm_element_step(const void *solver, int kind, int index);

#endif
