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
#include "core/world.h"
#include "experiments/harness/reference.h"
#include "experiments/harness/run.h"
#include "experiments/harness/runlog.h"
#include "experiments/sweep.h"

static int put_attr(hid_t f, const char *name, const char *value)
{
    hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, H5T_VARIABLE);
    H5Tset_cset(type, H5T_CSET_UTF8);
    hid_t space = H5Screate(H5S_SCALAR);
    if (H5Aexists(f, name) > 0) H5Adelete(f, name);
    hid_t a = H5Acreate2(f, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    int ok = a >= 0 && H5Awrite(a, type, &value) >= 0;
    if (a >= 0) H5Aclose(a);
    H5Sclose(space);
    H5Tclose(type);
    return ok ? 0 : -1;
}

/* One explicit Verlet run at dt into path. */
static int verlet_run(const cb_reference_def *d, double dt, const char *path, cb_error *err)
{
    const char **sets = cb_calloc((size_t)d->nsets + 5, sizeof *sets);
    if (!sets) return CB_FAIL(err, CB_ERR_NOMEM, "out of memory");
    char setdt[64];
    snprintf(setdt, sizeof setdt, "dt=%.17g", dt);
    int n = 0;
    for (int i = 0; i < d->nsets; i++) sets[n++] = d->sets[i];
    sets[n++] = setdt;
    sets[n++] = "solvers.explicit.scheme=verlet";
    sets[n++] = "solvers.explicit.damping=0";
    sets[n++] = "solvers.explicit.substeps=1";
    cb_run_def def = cb_default_run_def();
    def.scene_path = d->scene_path;
    def.solver = "explicit";
    def.output = path;
    def.sets = sets;
    def.nsets = n;
    def.progress = !d->quiet;
    cb_run_result res;
    int rc = cb_run(&def, &res, err);
    free(sets);
    return rc;
}

int cb_reference_make(const cb_reference_def *d, FILE *out, double *difference, cb_error *err)
{
    if (!d || !d->scene_path || !d->output || d->refine < 1)
        return CB_FAIL(err, CB_ERR_INPUT, "%s:%d: cb_reference_make: bad arguments", __FILE__, __LINE__);
    cb_scene *s = NULL;
    int rc = cb_scene_load(d->scene_path, d->sets, d->nsets, &s, err);
    if (rc) return rc;
    double dt = s->dt, h_stable = INFINITY;
    int nc = s->ncolliders;
    if (nc > 0) {
        cb_scene_free(&s);
        return CB_FAIL(err, CB_ERR_INPUT, "%s: %d collider(s): a reference needs smooth, contact-free motion "
                       "(contact makes trajectories chaotic); remove them, e.g. --set colliders=[]", d->scene_path, nc);
    }
    cb_world *w = NULL;
    rc = cb_world_create(s, &w, err);
    if (!rc) rc = cb_world_stable_step(w, 1.0, &h_stable, err);
    cb_world_free(&w);
    cb_scene_free(&s);
    if (rc) return rc;
    /* far below the stability limit 2 / omega_max: at most a quarter of it */
    int refine = d->refine;
    if (isfinite(h_stable) && dt / refine > 0.25 * h_stable) refine = (int)ceil(dt / (0.25 * h_stable));
    double h = dt / refine;
    size_t n = strlen(d->output);
    char *check = cb_malloc(n + 16);
    if (!check) return CB_FAIL(err, CB_ERR_NOMEM, "out of memory");
    snprintf(check, n + 16, "%s.check.h5", d->output);
    if ((rc = verlet_run(d, h, d->output, err)) || (rc = verlet_run(d, 0.5 * h, check, err))) {
        free(check);
        return rc;
    }
    /* the check run's frames against the reference's */
    cb_reference *ref = NULL;
    hid_t f = H5Fopen(d->output, H5F_ACC_RDONLY, H5P_DEFAULT);
    hsize_t dims[3] = {0, 0, 0};
    if (f >= 0) {
        hid_t ds = H5Dopen2(f, "/frames/positions", H5P_DEFAULT), sp = H5Dget_space(ds);
        H5Sget_simple_extent_dims(sp, dims, NULL);
        H5Sclose(sp);
        H5Dclose(ds);
        H5Fclose(f);
    }
    double D = NAN;
    int nf = 0;
    rc = cb_reference_open(d->output, (int)dims[1], &ref, err);
    if (!rc) rc = cb_reference_compare_file(ref, check, &D, &nf, err);
    cb_reference_free(&ref);
    cb_runlog_remove(check);
    free(check);
    if (rc) return rc;
    char method[256], sdt[64], txt[512];
    snprintf(method, sizeof method, "velocity Verlet (explicit solver, scheme verlet, damping 0, one substep) at "
             "dt = scene dt / %d (the stability limit 2 / omega_max is %.3g s)", refine, h_stable);
    snprintf(sdt, sizeof sdt, "%.17g", h);
    snprintf(txt, sizeof txt, "the same at dt / 2 differs by %.3g m (largest mass-weighted RMS over %d frames); "
             "the reference's own error is about %.3g m", D, nf, 4.0 * D / 3.0);
    f = H5Fopen(d->output, H5F_ACC_RDWR, H5P_DEFAULT);
    if (f < 0 || put_attr(f, "reference_method", method) || put_attr(f, "reference_dt", sdt) ||
        put_attr(f, "reference_check", txt))
        rc = CB_FAIL(err, CB_ERR_IO, "%s: cannot record the reference's method and check", d->output);
    if (f >= 0) H5Fclose(f);
    if (!rc && out && !d->quiet)
        fprintf(out, "reference %s: %s, dt_ref = %.6g s; %s\n", d->output, method, h, txt);
    if (difference) *difference = D;
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
        fprintf(out, ")\n");
        fflush(out);
    }
    cb_reference_def d = {e->scenes[0], tmp, CB_REFERENCE_REFINE, sets, nsets, 1};
    double D = NAN;
    rc = cb_reference_make(&d, NULL, &D, err);
    if (!rc && rename(tmp, e->reference))
        rc = CB_FAIL(err, CB_ERR_IO, "%s: cannot rename %s to it: %s", e->reference, tmp, strerror(errno));
    /* what is left under the temporary name: its sidecar (it names the temporary file),
     * and the file itself when it was not renamed */
    cb_runlog_remove(tmp);
    free(tmp);
    free(sets);
    if (!rc && out) fprintf(out, "sweep %s: reference made; the same at half its step differs by %.3g m\n", e->name, D);
    return rc;
}
