/* experiments/reference.c — `clothbench reference` (reference.h). */
#include "experiments/reference.h"

#include <errno.h>
#include <hdf5.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "contact/colliders.h"
#include "core/scene.h"
#include "core/solver.h"
#include "core/world.h"
#include "experiments/harness/reference.h"
#include "experiments/harness/registry.h"
#include "experiments/harness/run.h"
#include "experiments/harness/runlog.h"
#include "experiments/sweep.h"

/* The root attribute `name` of f (replaced when there), of HDF5 type `type`, from *value. */
static int put_attr(hid_t f, const char *name, hid_t type, const void *value)
{
    hid_t space = H5Screate(H5S_SCALAR);
    if (H5Aexists(f, name) > 0) H5Adelete(f, name);
    hid_t a = H5Acreate2(f, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    int ok = a >= 0 && H5Awrite(a, type, value) >= 0;
    if (a >= 0) H5Aclose(a);
    H5Sclose(space);
    return ok ? 0 : -1;
}

static int put_string_attr(hid_t f, const char *name, const char *value)
{
    hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, H5T_VARIABLE);
    H5Tset_cset(type, H5T_CSET_UTF8);
    int rc = put_attr(f, name, type, &value);
    H5Tclose(type);
    return rc;
}

/* How a reference is made: its solver and the overrides after the caller's and dt
 * (the frame rate's, when the scene needs one, last). */
typedef struct ref_method {
    const char *solver;
    const char *sets[4];
    int nsets;
    char frame_rate[64];     /* "" or "frame_rate=..." */
} ref_method;

/* The overrides of a run of the method at dt: the caller's, dt, the method's and the frame
 * rate's; *sets (freed by the caller) holds *n of them, dtbuf[64] the dt's text. */
static int method_sets(const cb_reference_def *d, const ref_method *m, double dt, char dtbuf[64], const char ***sets,
                       int *n, cb_error *err)
{
    *sets = cb_calloc((size_t)d->nsets + 6, sizeof **sets);
    if (!*sets) return CB_FAIL(err, CB_ERR_NOMEM, "out of memory");
    snprintf(dtbuf, 64, "dt=%.17g", dt);
    *n = 0;
    for (int i = 0; i < d->nsets; i++) (*sets)[(*n)++] = d->sets[i];
    (*sets)[(*n)++] = dtbuf;
    for (int i = 0; i < m->nsets; i++) (*sets)[(*n)++] = m->sets[i];
    if (m->frame_rate[0]) (*sets)[(*n)++] = m->frame_rate;
    return CB_OK;
}

/* The check: the same method at half the reference's step, without a run file, advanced
 * beside the reference by the run loop's frame hook to each of its frame times and
 * compared there (mass-weighted RMS distance). The window ends at the last frame within
 * the bound: at the first frame beyond it the hook ends the reference, whose file then
 * holds the frames of the window only. */
typedef struct ref_check {
    cb_scene *scene;
    cb_world *world;
    const cb_solver_class *cls;
    void *solver;
    long steps;           /* the check's steps done */
    double bound;
    double D;             /* the largest difference over the window's frames */
    int nf;               /* frames compared within the window (t = 0 aside) */
    double window;        /* the last frame time within the bound */
    double t_over, d_over;/* the first frame beyond it and its difference (NaN: none) */
} ref_check;

static void check_free(ref_check *c)
{
    if (c->solver) c->cls->destroy(c->solver);
    c->solver = NULL;
    cb_world_free(&c->world);
    cb_scene_free(&c->scene);
}

static int check_create(const cb_reference_def *d, const ref_method *m, double h, double bound, ref_check *c,
                        cb_error *err)
{
    memset(c, 0, sizeof *c);
    c->bound = bound;
    c->t_over = c->d_over = NAN;
    const char **sets = NULL;
    char dtbuf[64];
    int n = 0, rc = method_sets(d, m, 0.5 * h, dtbuf, &sets, &n, err);
    if (!rc) rc = cb_scene_load(d->scene_path, sets, n, &c->scene, err);
    free(sets);
    if (!rc) rc = cb_world_create(c->scene, &c->world, err);
    if (!rc) {
        c->cls = cb_solver_find(m->solver);
        cb_params p = cb_scene_params(c->scene, m->solver);
        rc = c->cls->create(c->world, &p, &c->solver, err);
    }
    if (rc) {
        cb_error_prefix(err, "the check at dt_ref / 2: ");
        check_free(c);
        return rc;
    }
    cb_world_apply_pins(c->world, 0.0);
    return CB_OK;
}

/* cb_run_def.frame_hook: the check to the reference's frame (2 steps per step of the
 * reference), their difference there; ends the reference at the first frame beyond the
 * bound. */
static int check_frame(void *ctx, const cb_world *w, long steps, char *why, size_t size, cb_error *err)
{
    ref_check *c = ctx;
    while (c->steps < 2 * steps) {
        if (cb_interrupt_requested())
            return CB_FAIL(err, CB_ERR_INTERRUPTED, "the check at dt_ref / 2: interrupted at t = %g s",
                           c->world->state.t);
        cb_step_info info;
        int rc = cb_solver_step(c->cls, c->solver, c->world, c->steps, c->scene->dt, &info, err);
        if (rc) {
            cb_error_prefix(err, "the check at dt_ref / 2, step %ld: ", c->steps + 1);
            return rc;
        }
        c->steps++;
    }
    double dist = cb_mass_rms_distance((const double (*)[3])w->state.x, (const double (*)[3])c->world->state.x,
                                       w->mass, w->nv);
    if (dist <= c->bound) {
        c->D = c->nf ? fmax(c->D, dist) : dist;
        c->nf++;
        c->window = w->state.t;
        return 0;
    }
    c->t_over = w->state.t;
    c->d_over = isnan(dist) ? INFINITY : dist;
    snprintf(why, size, "ended at t = %.6g s by the reference's check: the same at half the step differs by %.3g m "
             "there, above its bound %.3g m; the reference's window is 0 to %.6g s", c->t_over, dist, c->bound,
             c->window);
    return 1;
}

/* The reference at dt into d->output, its check beside it (c). */
static int method_run(const cb_reference_def *d, const ref_method *m, double dt, ref_check *c, cb_error *err)
{
    const char **sets = NULL;
    char dtbuf[64];
    int n = 0, rc = method_sets(d, m, dt, dtbuf, &sets, &n, err);
    if (rc) return rc;
    cb_run_def def = cb_default_run_def();
    def.scene_path = d->scene_path;
    def.solver = m->solver;
    def.output = d->output;
    def.sets = sets;
    def.nsets = n;
    def.progress = !d->quiet;
    def.frame_hook = check_frame;
    def.frame_ctx = c;
    cb_run_result res;
    rc = cb_run(&def, &res, err);
    free(sets);
    return rc;
}

/* The largest value of the series `name` of the run file at path (NaN: none). */
static double series_max(const char *path, const char *name)
{
    double worst = NAN;
    H5E_BEGIN_TRY {
        hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
        char full[128];
        snprintf(full, sizeof full, "/series/%s", name);
        hid_t ds = f < 0 ? -1 : H5Dopen2(f, full, H5P_DEFAULT);
        if (ds >= 0) {
            hid_t sp = H5Dget_space(ds);
            hssize_t n = H5Sget_simple_extent_npoints(sp);
            double *v = n > 0 ? cb_malloc((size_t)n * sizeof *v) : NULL;
            if (v && H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0)
                for (hssize_t k = 0; k < n; k++)
                    if (isfinite(v[k])) worst = isnan(worst) ? v[k] : fmax(worst, v[k]);
            free(v);
            H5Sclose(sp);
            H5Dclose(ds);
        }
        if (f >= 0) H5Fclose(f);
    } H5E_END_TRY;
    return worst;
}

int cb_reference_make(const cb_reference_def *d, FILE *out, double *difference, double *window_end, cb_error *err)
{
    if (!d || !d->scene_path || !d->output || d->refine < 1 || d->method < CB_REFERENCE_AUTO ||
        d->method > CB_REFERENCE_IPC || d->max_check < 0 || isnan(d->max_check))
        return CB_FAIL(err, CB_ERR_INPUT, "%s:%d: cb_reference_make: bad arguments", __FILE__, __LINE__);
    double bound = d->max_check > 0 ? d->max_check : CB_REFERENCE_MAX_CHECK;
    cb_scene *s = NULL;
    int rc = cb_scene_load(d->scene_path, d->sets, d->nsets, &s, err);
    if (rc) return rc;
    double dt = s->dt, h_stable = INFINITY;
    int nc = s->ncolliders;
    int ipc = d->method == CB_REFERENCE_IPC || (d->method == CB_REFERENCE_AUTO && nc > 0);
    if (!ipc && nc > 0) {
        cb_scene_free(&s);
        return CB_FAIL(err, CB_ERR_INPUT, "%s: %d collider(s): a velocity Verlet reference needs smooth, contact-free "
                       "motion; make it with ipc (--method ipc or auto), or remove them, e.g. --set colliders=[]",
                       d->scene_path, nc);
    }
    /* the run's frame interval (a whole number of its steps) as the reference's, so the
     * reference's frames fall on the run's frame times when 1 / frame_rate is not a
     * multiple of dt */
    ref_method m = {0};
    long per_frame = cb_scene_steps_per_frame(s);
    if (fabs((double)per_frame * dt * s->frame_rate - 1.0) > 1e-12)
        snprintf(m.frame_rate, sizeof m.frame_rate, "frame_rate=%.17g", 1.0 / ((double)per_frame * dt));
    cb_world *w = NULL;
    if (!ipc) { /* far below the stability limit 2 / omega_max: at most a quarter of it */
        rc = cb_world_create(s, &w, err);
        if (!rc) rc = cb_world_stable_step(w, 1.0, &h_stable, err);
        cb_world_free(&w);
    }
    cb_scene_free(&s);
    if (rc) return rc;
    int refine = d->refine;
    if (isfinite(h_stable) && dt / refine > 0.25 * h_stable) refine = (int)ceil(dt / (0.25 * h_stable));
    double h = dt / refine;
    char tol[64];
    snprintf(tol, sizeof tol, "solvers.ipc.tolerance=%.17g", CB_REFERENCE_IPC_TOLERANCE);
    if (ipc) {
        m.solver = "ipc";
        m.sets[0] = tol;
        m.sets[1] = "solvers.ipc.damping=0";
        m.nsets = 2;
    } else {
        m.solver = "explicit";
        m.sets[0] = "solvers.explicit.scheme=verlet";
        m.sets[1] = "solvers.explicit.damping=0";
        m.sets[2] = "solvers.explicit.substeps=1";
        m.nsets = 3;
    }
    ref_check c;
    if ((rc = check_create(d, &m, h, bound, &c, err))) return rc;
    rc = method_run(d, &m, h, &c, err);
    check_free(&c);
    if (rc) return rc;
    double D = c.nf ? c.D : NAN, window = c.window;
    int cut = !isnan(c.t_over);
    if (difference) *difference = cut && !c.nf ? c.d_over : D;
    if (window_end) *window_end = cut ? c.window : INFINITY;
    if (!c.nf) { /* no frame after the start within the bound (or none at all) */
        cb_runlog_remove(d->output);
        if (!cut)
            return CB_FAIL(err, CB_ERR_INPUT, "%s: refused: no frame after the start to check the reference at; no "
                           "reference written to %s", d->scene_path, d->output);
        return CB_FAIL(err, CB_ERR_INPUT, "%s: refused: %s at dt = scene dt / %d and the same at half that step differ "
                       "by %.3g m (mass-weighted RMS) at t = %.6g s, its first frame, above the bound %.3g m "
                       "(--max-check): the trajectory has not converged in dt even there; a larger --refine or another "
                       "--max-check; no reference written to %s",
                       d->scene_path, m.solver, refine, c.d_over, c.t_over, bound, d->output);
    }
    char method[384], sdt[64], txt[768], win[256] = "";
    if (cut)
        snprintf(win, sizeof win, "; the reference ends at t = %.6g s, its window: at %.6g s the two differ by %.3g m "
                 "(above the bound: the trajectory is not converged in dt after that; runs have position_error and "
                 "energy_error up to t = %.6g s only)", window, c.t_over, c.d_over, window);
    if (ipc) {
        double res = series_max(d->output, "residual");
        snprintf(method, sizeof method, "ipc (implicit Euler with IPC's log barrier on the shared model, damping 0, "
                 "Newton to |p|_inf / h < %.3g m/s) at dt = scene dt / %d", CB_REFERENCE_IPC_TOLERANCE, refine);
        snprintf(txt, sizeof txt, "the same at dt / 2 differs by %.3g m (largest mass-weighted RMS over %d frames, "
                 "bound %.3g m); for a first-order method the reference's own error is about %.3g m; largest Newton "
                 "increment at the end of a step %.3g m/s%s", D, c.nf, bound, 2.0 * D, res, win);
    } else {
        snprintf(method, sizeof method, "velocity Verlet (explicit solver, scheme verlet, damping 0, one substep) at "
                 "dt = scene dt / %d (the stability limit 2 / omega_max is %.3g s)", refine, h_stable);
        snprintf(txt, sizeof txt, "the same at dt / 2 differs by %.3g m (largest mass-weighted RMS over %d frames, "
                 "bound %.3g m); the reference's own error is about %.3g m%s", D, c.nf, bound, 4.0 * D / 3.0, win);
    }
    snprintf(sdt, sizeof sdt, "%.17g", h);
    hid_t f = H5Fopen(d->output, H5F_ACC_RDWR, H5P_DEFAULT);
    if (f < 0 || put_string_attr(f, "reference_method", method) || put_string_attr(f, "reference_dt", sdt) ||
        put_string_attr(f, "reference_check", txt) || put_attr(f, "reference_difference", H5T_NATIVE_DOUBLE, &D) ||
        put_attr(f, "reference_bound", H5T_NATIVE_DOUBLE, &bound) ||
        put_attr(f, "reference_window", H5T_NATIVE_DOUBLE, &window) ||
        put_attr(f, "reference_exceeded_at", H5T_NATIVE_DOUBLE, &c.t_over))
        rc = CB_FAIL(err, CB_ERR_IO, "%s: cannot record the reference's method and check", d->output);
    if (f >= 0) H5Fclose(f);
    if (!rc && out && !d->quiet)
        fprintf(out, "reference %s: %s, dt_ref = %.6g s; %s\n", d->output, method, h, txt);
    return rc;
}
/* The experiment's fixed scene overrides (not solvers.X..., not restricted to a solver),
 * or an error when a grid key changes the scene other than its dt (then no single
 * reference fits every run). */
static int experiment_scene_sets(const cb_experiment *e, const char ***sets, int *n, cb_error *err)
{
    for (int k = 0; k < e->nkeys; k++)
        if (!e->keys[k].solver && strcmp(e->keys[k].path, "dt"))
            return CB_FAIL(err, CB_ERR_INPUT, "%s: reference %s is missing and the grid changes the scene (%s): "
                           "make it with clothbench reference", e->path, e->reference, e->keys[k].path);
    if (e->nscenes != 1)
        return CB_FAIL(err, CB_ERR_INPUT, "%s: reference %s is missing and the experiment has %d scenes: make it "
                       "with clothbench reference", e->path, e->reference, e->nscenes);
    *sets = cb_calloc((size_t)e->nsets + 1, sizeof **sets);
    if (!*sets) return CB_FAIL(err, CB_ERR_NOMEM, "out of memory");
    *n = 0;
    for (int i = 0; i < e->nsets; i++)
        if (!e->set_solver[i] && strncmp(e->sets[i], "solvers.", 8)) (*sets)[(*n)++] = e->sets[i];
    return CB_OK;
}

int cb_reference_for_experiment(const cb_experiment *e, FILE *out, cb_error *err)
{
    if (!e) return CB_FAIL(err, CB_ERR_INPUT, "%s:%d: cb_reference_for_experiment: NULL argument", __FILE__, __LINE__);
    if (!e->reference || cb_reference_usable(e->reference)) return CB_OK;
    const char **sets = NULL;
    int nsets = 0;
    int rc = experiment_scene_sets(e, &sets, &nsets, err);
    if (rc) return rc;
    /* made under a temporary name and renamed, so an interrupted one is never taken for a reference */
    size_t len = strlen(e->reference) + 32;
    char *tmp = cb_malloc(len);
    if (!tmp) {
        free(sets);
        return CB_FAIL(err, CB_ERR_NOMEM, "out of memory");
    }
    snprintf(tmp, len, "%s.tmp%ld.h5", e->reference, (long)getpid());
    if (out) {
        fprintf(out, "sweep %s: making the reference %s (clothbench reference %s", e->name, e->reference, e->scenes[0]);
        for (int i = 0; i < nsets; i++) fprintf(out, " --set %s", sets[i]);
        static const char *const methods[] = {"auto", "verlet", "ipc"};
        if (e->reference_method) fprintf(out, " --method %s", methods[e->reference_method]);
        if (e->reference_refine) fprintf(out, " --refine %d", e->reference_refine);
        if (e->reference_max_check > 0) fprintf(out, " --max-check %g", e->reference_max_check);
        fprintf(out, ")\n");
        fflush(out);
    }
    cb_reference_def d = {e->scenes[0], tmp, e->reference_refine > 0 ? e->reference_refine : CB_REFERENCE_REFINE,
                          sets, nsets, 1, e->reference_method, e->reference_max_check};
    double D = NAN, W = NAN;
    rc = cb_reference_make(&d, NULL, &D, &W, err);
    if (!rc && rename(tmp, e->reference))
        rc = CB_FAIL(err, CB_ERR_IO, "%s: cannot rename %s to it: %s", e->reference, tmp, strerror(errno));
    /* what is left under the temporary name: its sidecar (it names the temporary file),
     * and the file itself when it was not renamed */
    cb_runlog_remove(tmp);
    free(tmp);
    free(sets);
    if (!rc && out) {
        fprintf(out, "sweep %s: reference made; the same at half its step differs by %.3g m", e->name, D);
        if (isfinite(W)) fprintf(out, " up to t = %.6g s, its window (position_error is NaN after it)", W);
        fprintf(out, "\n");
    }
    return rc;
}
