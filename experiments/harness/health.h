/* experiments/harness/health.h — the run health check: one rule for every solver, applied by the run
 * loop (experiments/harness/run.c) after every step, from the state and the work the method reports.
 *
 * The rule (thresholds from the scene's `health` block, core/scene.h):
 *   energy      E(t) - E(0) - W_ext(t) > energy_factor * E_ref
 *   strain      max over edges |l - L| / L > max_strain
 *   non_finite  the total energy or the max strain is NaN or infinite
 * E is the run file's total_energy (kinetic + gravity + stretch + bend + the solver's
 * penalty energy, experiments/harness/metrics.h). W_ext(t) is the work done on the cloth since t = 0 by
 * moving pins and moving colliders (the series external_work), as each method applied it:
 *   per step, cb_step_info.external_work (core/solver.h): every collider impulse j the
 *     method applied times the collider's surface velocity u_c at the contact point
 *     (cb_collider_velocity), every attachment impulse times its pin's scripted velocity,
 *     summed by the method where it applies them (the same impulses as external_impulse,
 *     whose sum the conformance suite holds to the momentum change), drag left out;
 *   plus the change of the pinned vertices' own kinetic and gravity energy, which their
 *     script sets (these vertices are in E).
 * A fixed collider or pin adds exactly 0. A kinematic collider's impulse raises the kinetic
 * energy by at most j . u_c (1/2 m |v|^2 changes by j . u_c plus the change of
 * 1/2 m |v - u_c|^2, which contact with restitution <= 1 and friction does not raise), so
 * a correct method's E - E0 - W_ext does not grow with the work a collider delivers
 * (tests/test_health.c: a plane pushing a free cloth, every method).
 * Until issue 33 W_ext was estimated from the state alone: a Newton residual
 * F = m (v1 - v0)/dt - f_int - m g on pinned vertices and on free vertices near a moving
 * collider. That is the force of whatever moved the vertex, not what the method applied
 * (acm's vertices move on their own clocks, projections move positions without a force,
 * pbd's constraints are not the shared model's forces): on a grip swung about an axis it
 * missed half the work for pbd and 43% for avgforce, and on a free cloth hit by a ball at
 * 20 m/s it read 86.5 J for xpbd where the ball did 42.8 J (u . the momentum it gave),
 * hiding up to 4.5 J xpbd created. It was dropped rather than kept as a cross-check: it does
 * not check the methods' bookkeeping (its error is of the size of the work), and the
 * momentum balance already holds the impulses to the momentum change. (acm's free cloth
 * under that ball is flagged at step 25 either way: 2.2 J created in one step as the
 * cloth folds onto itself, gone with restitution 0: acm's self contact, not the rule.)
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

/* w must hold the initial state (pins applied); E(0) includes the method's contact
 * potential there when finite (contact_energy0: cb_solver_initial_contact_energy, NaN
 * where the method has none), as E after a step includes the one it reports. */
int cb_health_create(const cb_world *w, const cb_health_rule *rule, double contact_energy0, cb_health **out,
                     cb_error *err);
void cb_health_free(cb_health **h);
/* After step `step` (1-based) of length dt: adds the step's external work
 * (info->external_work, NULL: 0, plus the pinned vertices' energy change) and checks the
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
