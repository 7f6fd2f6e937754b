/* contact/contact_probe.c — the contact-stage probe (contact_probe.h). */
#include "contact/contact_probe.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact/colliders.h"
#include "core/vec3.h"

struct cb_contact_probe {
    int nv;
    double t;
    double (*x)[3], (*v)[3]; /* [nv] the state at begin() */
    unsigned char *changed;  /* [nv] */
    int begun;
};

int cb_contact_probe_create(const cb_world *w, cb_contact_probe **out, cb_error *err)
{
    if (!w || !out) return CB_FAIL(err, CB_ERR_INPUT, "cb_contact_probe_create: NULL argument");
    *out = NULL;
    cb_contact_probe *p = cb_calloc(1, sizeof *p);
    size_t n = (size_t)(w->nv > 0 ? w->nv : 1);
    if (p) {
        p->nv = w->nv;
        p->x = cb_calloc(n, sizeof *p->x);
        p->v = cb_calloc(n, sizeof *p->v);
        p->changed = cb_calloc(n, 1);
    }
    if (!p || !p->x || !p->v || !p->changed) {
        cb_contact_probe_free(&p);
        return CB_FAIL(err, CB_ERR_NOMEM, "contact probe: out of memory (%d vertices)", w->nv);
    }
    *out = p;
    return CB_OK;
}

void cb_contact_probe_free(cb_contact_probe **pp)
{
    if (!pp || !*pp) return;
    cb_contact_probe *p = *pp;
    free(p->x);
    free(p->v);
    free(p->changed);
    free(p);
    *pp = NULL;
}

void cb_contact_probe_begin(cb_contact_probe *p, const cb_world *w, double t, const double (*x)[3],
                            const double (*v)[3])
{
    CB_ASSERT(p && w && x && v && w->nv == p->nv);
    memcpy(p->x, x, (size_t)p->nv * sizeof *p->x);
    memcpy(p->v, v, (size_t)p->nv * sizeof *p->v);
    p->t = t;
    p->begun = 1;
}

static int differs(const double a[3], const double b[3])
{
    return a[0] != b[0] || a[1] != b[1] || a[2] != b[2];
}

int cb_contact_probe_end(cb_contact_probe *p, const cb_world *w, const double (*x)[3], const double (*v)[3],
                         cb_step_info *info)
{
    CB_ASSERT(p && p->begun && w && x && v && info && w->nv == p->nv);
    p->begun = 0;
    const double (*x0)[3] = (const double (*)[3])p->x, (*v0)[3] = (const double (*)[3])p->v;
    int count = 0;
    double depth = 0.0, dE = 0.0;
    for (int i = 0; i < p->nv; i++) {
        p->changed[i] = differs(x0[i], x[i]) || differs(v0[i], v[i]);
        if (!p->changed[i]) continue;
        count++;
        double m = w->mass[i];
        dE += 0.5 * m * (cb_v3_norm2(v[i]) - cb_v3_norm2(v0[i]));
        dE -= m * (cb_v3_dot(w->gravity, x[i]) - cb_v3_dot(w->gravity, x0[i]));
        if (w->ncolliders) {
            double d = cb_world_collider_distance(w, p->t, x0[i], NULL, NULL, NULL);
            if (-d > depth) depth = -d;
        }
    }
    if (count) {
        const cb_mesh *mesh = w->mesh;
        const cb_cloth_model *mod = &w->model;
        for (int e = 0; e < mesh->ne; e++)
            if (p->changed[mesh->e[e][0]] || p->changed[mesh->e[e][1]])
                dE += cb_model_edge_energy(mod, e, x) - cb_model_edge_energy(mod, e, x0);
        for (int h = 0; h < mesh->nh; h++) {
            const int *hv = mesh->h[h];
            if (p->changed[hv[0]] || p->changed[hv[1]] || p->changed[hv[2]] || p->changed[hv[3]])
                dE += cb_model_hinge_energy(mod, h, x) - cb_model_hinge_energy(mod, h, x0);
        }
    }
    if (!(info->contact_depth_corrected >= depth)) info->contact_depth_corrected = depth; /* NaN too */
    if (info->contact_vertices_corrected < count) info->contact_vertices_corrected = count;
    info->contact_work = (isfinite(info->contact_work) ? info->contact_work : 0.0) + dE;
    return count;
}
