/* contact/contact_probe.h — what a solver's contact stage hides: the probe that every
 * solver wraps around the stage that moves vertices out of colliders (or out of each
 * other) after its integrator has moved them.
 *
 * The run loop measures penetration on the state after the step, so a method that
 * ends its step by projecting vertices out of the colliders always reads 0 there.
 * The probe measures the stage itself, the same way for every solver:
 *
 *   cb_contact_probe_begin(p, w, t, x, v)   the state as the integrator left it
 *   ... the solver's projection / impulses ...
 *   cb_contact_probe_end(p, w, x, v, info)  the state after the contact stage
 *
 * end() compares the two states vertex by vertex. Over the vertices whose position
 * or velocity changed it reports, in cb_step_info:
 *   contact_depth_corrected    the deepest collider penetration among them before the
 *                              stage (m; max over the stages of the step)
 *   contact_vertices_corrected the number of them (max over the stages of the step:
 *                              explicit runs one stage per substep)
 *   contact_work               the change of the shared model's energy, kinetic +
 *                              gravity + stretch + bend, across the stage (J; summed
 *                              over the stages of the step). Positive: the contact
 *                              stage added energy the integrator did not produce;
 *                              negative: it dissipated (friction, inelastic impact).
 * The energy change is computed on the springs and hinges that touch a changed
 * vertex only, so the probe costs O(changed) plus one pass of flag tests over the
 * edges and hinges. A solver without such a stage (acm) never calls the probe and
 * its fields stay NaN / -1 ("no such stage").
 */
#ifndef CB_CONTACT_PROBE_H
#define CB_CONTACT_PROBE_H

#include "core/error.h"
#include "core/solver.h"
#include "core/world.h"

typedef struct cb_contact_probe cb_contact_probe;

int cb_contact_probe_create(const cb_world *w, cb_contact_probe **out, cb_error *err);
void cb_contact_probe_free(cb_contact_probe **p);

/* Remember x and v ([nv] each; the solver's own arrays, not necessarily w->state)
 * and the time t at which the colliders are queried for the depth. */
void cb_contact_probe_begin(cb_contact_probe *p, const cb_world *w, double t, const double (*x)[3],
                            const double (*v)[3]);
/* Compare with x and v now and add the stage's figures to info (see above).
 * Returns the number of vertices changed. */
int cb_contact_probe_end(cb_contact_probe *p, const cb_world *w, const double (*x)[3], const double (*v)[3],
                         cb_step_info *info);

#endif
