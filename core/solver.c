/* core/solver.c — the solver registry: one table, one row per method. */
#include "core/solver.h"

#include <math.h>
#include <string.h>

extern const cb_solver_class cb_solver_explicit;
extern const cb_solver_class cb_solver_avgforce;
extern const cb_solver_class cb_solver_acm;
extern const cb_solver_class cb_solver_pbd;
extern const cb_solver_class cb_solver_xpbd;
extern const cb_solver_class cb_solver_fms;
extern const cb_solver_class cb_solver_newton;

static const cb_solver_class *const registry[] = {
    &cb_solver_explicit,
    &cb_solver_avgforce,
    &cb_solver_acm,
    &cb_solver_pbd,
    &cb_solver_xpbd,
    &cb_solver_fms,
    &cb_solver_newton,
};

int cb_solver_count(void) { return (int)(sizeof registry / sizeof registry[0]); }

const cb_solver_class *cb_solver_at(int i)
{
    return i >= 0 && i < cb_solver_count() ? registry[i] : NULL;
}

const cb_solver_class *cb_solver_find(const char *name)
{
    for (int i = 0; name && i < cb_solver_count(); i++)
        if (!strcmp(registry[i]->name, name)) return registry[i];
    return NULL;
}

const char *cb_solver_names(void)
{
    static char buf[512];
    buf[0] = '\0';
    for (int i = 0; i < cb_solver_count(); i++) {
        if (i) strncat(buf, ", ", sizeof buf - strlen(buf) - 1);
        strncat(buf, registry[i]->name, sizeof buf - strlen(buf) - 1);
    }
    return buf;
}

const char *cb_solver_self_collision(const cb_solver_class *cls, const void *self)
{
    if (!cls || !cls->self_collision) return "none";
    return cls->self_collision(self) ? "on" : "off";
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
}

void cb_step_info_stage(cb_step_info *info, const char *name, double seconds)
{
    for (int i = 0; i < info->nstages; i++)
        if (!strcmp(info->stage[i].name, name)) {
            info->stage[i].seconds += seconds;
            return;
        }
    if (info->nstages < CB_MAX_STAGES) {
        info->stage[info->nstages].name = name;
        info->stage[info->nstages].seconds = seconds;
        info->nstages++;
    }
}
