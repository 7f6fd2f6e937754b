/* experiments/harness/health.c — the run health check (health.h): one rule for every solver. */
#include "experiments/harness/health.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/harness/metrics.h"
#include "core/model.h"
#include "core/vec3.h"

#define MAX_BREACHES 16

struct cb_health {
    cb_health_rule rule;
    double e0, e_ref, work;
    double e_pin;                /* the pinned vertices' kinetic + gravity energy now */
    char text[512];
    int nbreach;
    cb_health_breach breach[MAX_BREACHES];
};

/* The kinetic and gravity energy of the pinned vertices: their script moves them, so its
 * change is work the pins do (0 exactly for fixed pins: the same state, the same sum). */
static double pinned_energy(const cb_world *w)
{
    double e = 0.0;
    if (!w->npinned) return e;
    for (int i = 0; i < w->nv; i++)
        if (w->pinned[i])
            e += 0.5 * w->mass[i] * cb_v3_norm2(w->state.v[i]) - w->mass[i] * cb_v3_dot(w->gravity, w->state.x[i]);
    return e;
}

int cb_health_create(const cb_world *w, const cb_health_rule *rule, double contact_energy0, cb_health **out,
                     cb_error *err)
{
    if (!w || !rule || !out) return CB_FAIL(err, CB_ERR_INPUT, "cb_health_create: NULL argument");
    *out = NULL;
    if (!(rule->energy_factor > 0) || !(rule->max_strain > 0))
        return CB_FAIL(err, CB_ERR_INPUT, "health: energy_factor and max_strain must be > 0 (got %g, %g)",
                       rule->energy_factor, rule->max_strain);
    cb_health *h = cb_calloc(1, sizeof *h);
    if (!h) return CB_FAIL(err, CB_ERR_NOMEM, "health: out of memory");
    h->rule = *rule;
    const double (*x)[3] = (const double (*)[3])w->state.x;
    double M = 0, ke = 0, lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int i = 0; i < w->nv; i++) {
        M += w->mass[i];
        ke += 0.5 * w->mass[i] * cb_v3_norm2(w->state.v[i]);
        for (int k = 0; k < 3; k++) {
            lo[k] = fmin(lo[k], x[i][k]);
            hi[k] = fmax(hi[k], x[i][k]);
        }
    }
    double D = w->nv > 0 ? sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                                (hi[2] - lo[2]) * (hi[2] - lo[2]))
                         : 0.0;
    h->e0 = cb_metrics_total_energy(w, NULL) + (isfinite(contact_energy0) ? contact_energy0 : 0.0);
    h->e_pin = pinned_energy(w);
    /* the stretch energy of every edge at a 1% strain: the scale of scenes without gravity */
    double e_strain = 0;
    for (int e = 0; e < w->mesh->ne; e++) {
        double dl = 0.01 * w->model.rest_length[e];
        e_strain += 0.5 * w->model.k_stretch * dl * dl;
    }
    h->e_ref = ke + cb_model_stretch_energy(&w->model, x) + cb_model_bend_energy(&w->model, x) +
               M * cb_v3_norm(w->gravity) * D + e_strain;
    if (!(h->e_ref > 0)) h->e_ref = 1e-12; /* no gravity, no motion, no strain: any rise counts */
    snprintf(h->text, sizeof h->text,
             "diverged when E - E0 - W_ext > %g x E_ref (E_ref = %.6g J: kinetic + elastic energy at t = 0 "
             "+ M |g| D + the stretch energy of a 1%% strain), max strain > %g, or a non-finite energy or strain; W_ext: work of moving pins "
             "and moving colliders as the method applied their impulses (series external_work)",
             rule->energy_factor, h->e_ref, rule->max_strain);
    *out = h;
    return CB_OK;
}

void cb_health_free(cb_health **h)
{
    if (!h || !*h) return;
    free(*h);
    *h = NULL;
}

static void add_breach(cb_health *h, long step, double t, const char *metric, double value, double bound)
{
    if (h->nbreach >= MAX_BREACHES) return;
    h->breach[h->nbreach++] = (cb_health_breach){step, t, metric, value, bound};
}

int cb_health_end(cb_health *h, const cb_world *w, const cb_step_info *info, double dt, long step)
{
    if (!h || !w || !(dt > 0)) return 0;
    double e_pin = pinned_energy(w), W = (info ? info->external_work : 0.0) + (e_pin - h->e_pin);
    h->e_pin = e_pin;
    if (isfinite(W)) h->work += W;
    int before = h->nbreach;
    double E = cb_metrics_total_energy(w, info);
    double strain = cb_model_max_strain(&w->model, (const double (*)[3])w->state.x);
    double t = w->state.t;
    if (!isfinite(E)) add_breach(h, step, t, "non_finite", E, NAN);
    else if (E - h->e0 - h->work > h->rule.energy_factor * h->e_ref)
        add_breach(h, step, t, "energy", E - h->e0 - h->work, h->rule.energy_factor * h->e_ref);
    if (!isfinite(strain)) add_breach(h, step, t, "non_finite", strain, NAN);
    else if (strain > h->rule.max_strain) add_breach(h, step, t, "strain", strain, h->rule.max_strain);
    return h->nbreach - before;
}

double cb_health_energy_ref(const cb_health *h)
{
    return h ? h->e_ref : NAN;
}

double cb_health_external_work(const cb_health *h) { return h ? h->work : NAN; }
const char *cb_health_rule_text(const cb_health *h) { return h ? h->text : ""; }
int cb_health_breach_count(const cb_health *h) { return h ? h->nbreach : 0; }

const cb_health_breach *cb_health_breach_at(const cb_health *h, int i)
{
    return h && i >= 0 && i < h->nbreach ? &h->breach[i] : NULL;
}

void cb_health_breach_text(const cb_health_breach *b, char *buf, size_t size)
{
    if (!b) {
        snprintf(buf, size, "none");
        return;
    }
    if (!strcmp(b->metric, "energy"))
        snprintf(buf, size, "step %ld (t = %g s): energy E - E0 - W_ext = %.6g J > %.6g J", b->step, b->t,
                 b->value, b->bound);
    else if (!strcmp(b->metric, "strain"))
        snprintf(buf, size, "step %ld (t = %g s): strain %.6g > %g", b->step, b->t, b->value, b->bound);
    else
        snprintf(buf, size, "step %ld (t = %g s): non_finite energy or strain (%g)", b->step, b->t, b->value);
}
