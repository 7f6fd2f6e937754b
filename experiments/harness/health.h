/* experiments/harness/health.h — the run health check: one rule for every solver, applied by the run
 * loop (experiments/harness/run.c) after every step, from the state alone.
 *
 * The rule (thresholds from the scene's `health` block, core/scene.h):
 *   energy      E(t) - E(0) - W_ext(t) > energy_factor * E_ref
 *   strain      max over edges |l - L| / L > max_strain
 *   non_finite  the total energy or the max strain is NaN or infinite
 * E is the run file's total_energy (kinetic + gravity + stretch + bend + the solver's
 * penalty energy, experiments/harness/metrics.h). W_ext(t) is the work done on the cloth since t = 0 by
 * moving pins and moving colliders (the series external_work):
 *   pins: per step, F . (x_n+1 - x_n) for every pinned vertex, F the force the pin
 *     exerts, from Newton's law on that vertex: F = m (v_n+1 - v_n)/dt - f_int - m g,
 *     f_int the shared model's stretch + bend force averaged over x_n and x_n+1
 *     (trapezoid; a fixed pin does no work and costs nothing);
 *   moving colliders: per step, F . u_c dt for every free vertex within
 *     2 thickness + |u_c| dt of a collider whose surface moves (u_c its velocity there),
 *     F the same Newton residual. For a kinematic collider F . u_c is the work it does
 *     minus what friction and inelastic contact dissipate, so it bounds the energy a
 *     collider can put in from above: a rise it explains is never flagged.
 * E_ref = the kinetic and elastic energy at t = 0 plus M |g| D (M the cloth's mass,
 * D the diagonal of its bounding box at t = 0) plus the stretch energy of every edge at
 * a 1% strain (sum 1/2 k_stretch (0.01 L)^2): the energy scale of the scene, which does
 * not depend on where the origin of the gravity potential is, and is not ~0 for a scene
 * without gravity that starts at rest (pins pulling ribbons apart: without the last term
 * E_ref was 1e-7 J there and the contact of the initial state flagged every solver).
 */
#ifndef CB_HEALTH_H
#define CB_HEALTH_H

#include "core/error.h"
#include "core/solver.h"
#include "core/world.h"

typedef struct cb_health_rule {
    double energy_factor;    /* > 0: energy rise beyond W_ext allowed, in units of E_ref */
    double max_strain;       /* > 0: the largest edge strain allowed */
} cb_health_rule;

/* CB_HEALTH_ENERGY_FACTOR, CB_HEALTH_MAX_STRAIN: the defaults, in core/scene.h (the scene reads them). */

typedef struct cb_health_breach {
    long step;               /* the step after which the breach was seen (1-based) */
    double t;
    const char *metric;      /* "energy" | "strain" | "non_finite" (static strings) */
    double value, bound;     /* energy: E - E0 - W_ext and energy_factor E_ref (J) */
} cb_health_breach;

typedef struct cb_health cb_health;

/* w must hold the initial state (pins applied); E(0) has no solver penalty energy (no
 * solver has reported one before its first step). */
int cb_health_create(const cb_world *w, const cb_health_rule *rule, cb_health **out, cb_error *err);
void cb_health_free(cb_health **h);
/* Before a step: keeps x_n, v_n where work must be measured. */
void cb_health_begin(cb_health *h, const cb_world *w);
/* After step `step` (1-based) of length dt: adds the step's external work and checks the
 * rule. Returns the number of breaches found at this step (each kept). */
int cb_health_end(cb_health *h, const cb_world *w, const cb_step_info *info, double dt, long step);
/* E_ref of the rule (J). */
double cb_health_energy_ref(const cb_health *h);
/* W_ext since t = 0 (J). */
double cb_health_external_work(const cb_health *h);
/* The rule as one line, with its thresholds and E_ref. */
const char *cb_health_rule_text(const cb_health *h);
int cb_health_breach_count(const cb_health *h);
const cb_health_breach *cb_health_breach_at(const cb_health *h, int i);
/* "step 12 (t = 0.2 s): strain 42.3 > 1" for breach i, into buf. */
void cb_health_breach_text(const cb_health_breach *b, char *buf, size_t size);

#endif
