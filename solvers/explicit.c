/* solvers/explicit.c — the baseline: explicit symplectic integration of the shared
 * cloth model. It is the yardstick every other method is compared to.
 *
 * Paper: none — the textbook method (Hairer, Lubich & Wanner, "Geometric Numerical
 * Integration", ch. I.1 and VI.3).
 *
 * Algorithm. scheme "verlet" (default) is the Stoermer-Verlet / velocity Verlet
 * form of symplectic Euler: a half kick v += dt/2 a(x_n), a drift x += dt v, a half
 * kick v += dt/2 a(x_{n+1}). It is symplectic and second order, and integrates
 * constant acceleration exactly, so free fall matches x0 + v0 t + g t^2/2 to
 * round-off. scheme "euler" is plain symplectic (semi-implicit) Euler,
 * v += dt a(x_n), x += dt v, first order (it misses free fall by g dt t / 2).
 * One force evaluation per step either way (forces are cached across steps).
 *
 * Mapping from the shared cloth model: forces are exactly -grad of the shared
 * stretch and bending energies (core/model.c), so the solver has no model energy of
 * its own (solver_energy = NaN). Lumped masses and gravity as in the world.
 * Mass-proportional damping `damping` (1/s) multiplies velocities by
 * exp(-damping dt/2) in each half kick (exact for a = -damping v).
 * Pinned vertices follow their scripted targets. Colliders: after the drift each
 * free vertex closer than `contact_offset` (default thickness/2) to a collider is
 * projected out along the collider normal, and its velocity relative to the collider
 * gets the collider's restitution and Coulomb friction (core/world.c).
 * external_work: the projections' impulses times the collider's surface velocity, the
 * attachments' impulse (minus the internal force on the pinned vertex, per half kick)
 * times the pin's velocity at the kick's time: the trapezoid of the pin's power.
 *
 * What it does not do: no self collision (the metric still counts self
 * intersections), no implicit stiffness handling — a dt above the stability limit
 * ~ 2 sqrt(m/k) diverges, and the run loop stops the run with status "diverged".
 *
 * Substeps. The scene's dt is shared by every method and is usually far above an
 * explicit method's stability limit, so by default (substeps: 0 = auto) each step is
 * split into n equal substeps with h = dt/n <= safety * 2/omega_max, where omega_max
 * is bounded by Gershgorin's theorem on M^-1 K at rest (cb_world_stable_step): for
 * vertex i, omega_i^2 <= (2 k_stretch deg_i + sum over its hinges of 8 k_bend w |grad theta|^2) / m_i.
 * safety defaults to 0.8 (1.0 was still stable on hanging.yaml in a 1 s undamped
 * run). substeps: N forces N substeps (1 = the plain method, which is how the
 * divergence test runs it). cb_step_info.iterations reports the substeps taken.
 *
 * Parameters (solvers.explicit): scheme (verlet|euler), damping (>= 0, 1/s),
 * contact_offset (>= 0, m; default thickness/2), substeps (>= 0; 0 = auto),
 * safety (0 < s <= 1, for auto substeps).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact/contact_probe.h"
#include "contact/colliders.h"
#include "core/solver.h"
#include "core/vec3.h"

typedef struct explicit_solver {
    int scheme;            /* 0 verlet, 1 euler */
    double damping;
    double offset;
    int substeps;          /* 0: auto */
    double safety;
    double h_stable;       /* auto substep bound (s) */
    int have_force;
    double (*f)[3];        /* internal forces at the current positions */
    cb_contact_probe *probe; /* measures the collider projection (contact_probe.h) */
} explicit_solver;

static const char *const scheme_names[] = {"verlet", "euler", NULL};

static void compute_forces(explicit_solver *s, const cb_world *w)
{
    memset(s->f, 0, (size_t)w->nv * sizeof *s->f);
    cb_model_add_stretch_forces(&w->model, (const double (*)[3])w->state.x, s->f);
    cb_model_add_bend_forces(&w->model, (const double (*)[3])w->state.x, s->f);
}

static int explicit_create(const cb_world *w, const cb_params *p, void **self, cb_error *err)
{
    if (!w || !self) return CB_FAIL(err, CB_ERR_INPUT, "explicit: NULL argument");
    explicit_solver *s = cb_calloc(1, sizeof *s);
    if (!s) return CB_FAIL(err, CB_ERR_NOMEM, "explicit: out of memory");
    cb_params q;
    int rc = cb_params_begin(p, &q, err);
    if (!rc) rc = cb_params_choice(&q, "scheme", scheme_names, 0, &s->scheme,
                                   "time integration: velocity Verlet or symplectic Euler", err);
    if (!rc) rc = cb_params_double(&q, "damping", 0.0, 0.0, 1e6, &s->damping,
                                   "velocity damping rate (1/s): v *= exp(-damping h) per substep", err);
    if (!rc) rc = cb_params_double(&q, "contact_offset", 0.5 * w->thickness, 0.0, 1e3, &s->offset,
                                   "distance kept from the colliders (m; default half the cloth thickness)", err);
    if (!rc) rc = cb_params_int(&q, "substeps", 0, 0, 100000000, &s->substeps,
                                "substeps per step (0: automatic, from the stability bound times safety)", err);
    if (!rc) rc = cb_params_double(&q, "safety", 0.8, 1e-6, 1.0, &s->safety,
                                   "fraction of the stability bound the automatic substep uses", err);
    rc = cb_params_end(p, &q, rc, err);
    if (!rc) rc = cb_world_stable_step(w, s->safety, &s->h_stable, err);
    if (!rc) {
        s->f = cb_calloc((size_t)w->nv, sizeof *s->f);
        if (!s->f) rc = CB_FAIL(err, CB_ERR_NOMEM, "explicit: out of memory");
    }
    if (!rc && w->ncolliders) rc = cb_contact_probe_create(w, &s->probe, err);
    if (rc) {
        cb_contact_probe_free(&s->probe);
        free(s->f);
        free(s);
        return rc;
    }
    *self = s;
    return CB_OK;
}

/* v += h (f/m + g) for free vertices, then the damping factor. Accumulates into imp
 * the impulse of damping (an external force) and of the attachments (minus the
 * internal force on pinned vertices), and into *work the attachments' work: their
 * impulse times the pin's velocity at time t (0 for a fixed pin). */
static void kick(explicit_solver *s, cb_world *w, double t, double h, double imp[3], double *work)
{
    double decay = exp(-s->damping * h);
    for (int i = 0; i < w->nv; i++) {
        double *v = w->state.v[i];
        if (w->inv_mass[i] == 0.0) {
            double u[3];
            cb_v3_axpy(imp, -h, s->f[i]);
            cb_world_pin_velocity(w, i, t, u);
            *work -= h * cb_v3_dot(s->f[i], u);
            continue;
        }
        for (int k = 0; k < 3; k++) v[k] += h * (s->f[i][k] * w->inv_mass[i] + w->gravity[k]);
        if (decay != 1.0) {
            for (int k = 0; k < 3; k++) {
                double before = v[k];
                v[k] *= decay;
                imp[k] += w->mass[i] * (v[k] - before);
            }
        }
    }
}

/* One substep of length dt from time t0. */
static void substep(explicit_solver *s, cb_world *w, double t0, double dt, double imp[3], double *work,
                    cb_step_info *info)
{
    double t1 = t0 + dt;
    cb_lap_timer lap;
    cb_lap_start(&lap, info);
    if (!s->have_force) {
        compute_forces(s, w);
        s->have_force = 1;
    }
    cb_lap(&lap, "force");
    double first = s->scheme == 0 ? 0.5 * dt : dt;
    kick(s, w, t0, first, imp, work);
    for (int i = 0; i < w->nv; i++)
        if (w->inv_mass[i] > 0.0) cb_v3_axpy(w->state.x[i], dt, w->state.v[i]);
    cb_world_apply_pins(w, t1);
    cb_lap(&lap, "integrate");
    int contacts = 0;
    if (w->ncolliders) {
        const double (*x)[3] = (const double (*)[3])w->state.x, (*v)[3] = (const double (*)[3])w->state.v;
        cb_contact_probe_begin(s->probe, w, t1, x, v);
        for (int i = 0; i < w->nv; i++)
            contacts += cb_world_resolve_collider_contact(w, i, t1, s->offset, w->state.x[i],
                                                          w->state.v[i], imp, work);
        cb_contact_probe_end(s->probe, w, x, v, info);
    }
    cb_lap_contact(&lap, "contact");
    compute_forces(s, w);
    cb_lap(&lap, "force");
    if (s->scheme == 0) kick(s, w, t1, 0.5 * dt, imp, work); /* euler: the new forces act next step */
    cb_lap(&lap, "integrate");
    info->contacts += contacts;
}

static int explicit_step(void *self, cb_world *w, double dt, cb_step_info *info, cb_error *err)
{
    explicit_solver *s = self; /* arguments checked by cb_solver_step */
    long n = s->substeps;
    if (n == 0) {
        double q = dt / s->h_stable;
        n = q < 1.0 ? 1 : (long)ceil(q);
        if (n > 100000000L)
            return CB_FAIL(err, CB_ERR_INPUT, "explicit: dt %g needs more than 1e8 substeps", dt);
    }
    double h = dt / (double)n, imp[3] = {0, 0, 0}, work = 0;
    for (long k = 0; k < n; k++) {
        if ((k & 1023) == 1023 && cb_interrupt_requested()) /* a stiff, light cloth can need millions */
            return CB_FAIL(err, CB_ERR_INTERRUPTED, "explicit: interrupted by a signal in substep %ld of %ld", k, n);
        substep(s, w, w->state.t + (double)k * h, h, imp, &work, info);
    }
    for (int k = 0; k < 3; k++) info->external_impulse[k] = imp[k];
    info->external_work = work;
    info->iterations = (int)n; /* substeps taken */
    return CB_OK;
}

static void explicit_destroy(void *self)
{
    explicit_solver *s = self;
    if (!s) return;
    cb_contact_probe_free(&s->probe);
    free(s->f);
    free(s);
}

static const char *explicit_model(const void *self)
{
    (void)self;
    return "stretch springs / bending shells / contact projection";
}

const cb_solver_class cb_solver_explicit = {
    .name = "explicit",
    .summary = "symplectic (velocity Verlet) integration of the shared cloth model; the baseline",
    .flags = CB_SOLVER_MOVING_COLLIDERS | CB_SOLVER_CONTACT_STAGE | CB_SOLVER_STAGE_TIMES | CB_SOLVER_SUBSTEPS |
             CB_SOLVER_THREAD_INDEPENDENT | CB_SOLVER_COLLIDER_FRICTION,
    .bytes_per_vertex = 950,
    .create = explicit_create,
    .step = explicit_step,
    .destroy = explicit_destroy,
    .model = explicit_model,
};
