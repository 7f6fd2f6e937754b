/* core/solver.c — helpers of the solver interface (solver.h). The registry of
 * methods is above the solvers, in experiments/harness/registry.c. */
#include "core/solver.h"

#include <math.h>
#include <string.h>

#include "core/vec3.h"

const char *cb_solver_model(const cb_solver_class *cls, const void *self)
{
    if (!cls || !cls->model || !self) return "unknown";
    const char *m = cls->model(self);
    return m && *m ? m : "unknown";
}

const char *cb_solver_self_collision(const cb_solver_class *cls, const void *self)
{
    if (!cls || !cls->self_collision) return "none";
    return cls->self_collision(self) ? "on" : "off";
}

double cb_solver_initial_contact_energy(const cb_solver_class *cls, void *self, const cb_world *w, double dt)
{
    if (!cls || !cls->initial_contact_energy || !self || !w || !(dt > 0)) return NAN;
    return cls->initial_contact_energy(self, w, dt);
}

void cb_step_info_reset(cb_step_info *info)
{
    memset(info, 0, sizeof *info);
    info->residual = NAN;
    info->solver_energy = NAN;
    info->contact_energy = NAN;
    info->events = -1; /* not an event-based method */
    info->contact_depth_corrected = NAN;
    info->contact_vertices_corrected = -1;
    info->contact_work = NAN;
    info->min_separation = NAN;
}

void cb_step_info_stage(cb_step_info *info, const char *name, double seconds, int contact)
{
    for (int i = 0; i < info->nstages; i++)
        if (!strcmp(info->stage[i].name, name)) {
            info->stage[i].seconds += seconds;
            return;
        }
    if (info->nstages == CB_MAX_STAGES) {
        info->stages_dropped++;
        return;
    }
    info->stage[info->nstages].name = name;
    info->stage[info->nstages].seconds = seconds;
    info->stage[info->nstages].contact = contact;
    info->nstages++;
}

void cb_lap_start(cb_lap_timer *lap, cb_step_info *info)
{
    lap->info = info;
    lap->t = cb_wall_time();
}

static void lap(cb_lap_timer *l, const char *stage, int contact)
{
    double now = cb_wall_time();
    cb_step_info_stage(l->info, stage, now - l->t, contact);
    l->t = now;
}

void cb_lap(cb_lap_timer *l, const char *stage) { lap(l, stage, 0); }
void cb_lap_contact(cb_lap_timer *l, const char *stage) { lap(l, stage, 1); }

int cb_solver_step(const cb_solver_class *cls, void *self, cb_world *w, long step, double dt,
                   cb_step_info *info, cb_error *err)
{
    if (!cls || !cls->step || !self || !w || !info)
        return CB_FAIL(err, CB_ERR_INPUT, "cb_solver_step: NULL argument (class %p, solver %p, world %p, "
                       "info %p)", (const void *)cls, self, (void *)w, (void *)info);
    if (!(dt > 0) || !isfinite(dt))
        return CB_FAIL(err, CB_ERR_INPUT, "%s: dt must be a finite number > 0 (got %g)", cls->name, dt);
    if (step < 0) return CB_FAIL(err, CB_ERR_INPUT, "%s: step index %ld < 0", cls->name, step);
    cb_step_info_reset(info);
    info->t_end = (double)(step + 1) * dt;
    double t0 = cb_wall_time();
    int rc = cls->step(self, w, dt, info, err);
    info->wall_step_s = cb_wall_time() - t0;
    w->state.t = info->t_end;
    for (int k = 0; k < info->nstages; k++)
        if (info->stage[k].contact) info->wall_contact_s += info->stage[k].seconds;
    if (rc) return rc;
    if (info->stages_dropped)
        return CB_FAIL(err, CB_ERR_INTERNAL, "%s: the step reported more than %d named stages (%d timings dropped): "
                       "raise CB_MAX_STAGES in core/solver.h", cls->name, CB_MAX_STAGES, info->stages_dropped);
    for (int i = 0; i < w->nv; i++) {
        const double *x = w->state.x[i], *v = w->state.v[i];
        if (!cb_v3_isfinite(x) || !cb_v3_isfinite(v))
            return CB_FAIL(err, CB_ERR_NUMERIC, "vertex %d has position (%g, %g, %g), velocity (%g, %g, %g)",
                           i, x[0], x[1], x[2], v[0], v[1], v[2]);
    }
    return CB_OK;
}
