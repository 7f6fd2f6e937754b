/* experiments/harness/run_summary.c — reads a run file back and summarises it (info.h). */
#include "experiments/harness/run_summary.h"

#include <hdf5.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/harness/h5attr.h"
#include "experiments/harness/provenance.h"

/* Reads /series/<name> (width 1 or 3) into a malloc'd array *out of at least `rows` rows
 * (rows < 0: as many as it has, for /series/time), its row count in *got. Returns 0 (with
 * *out NULL when the file has no such series: older layouts, the metric is NaN), or
 * CB_ERR_INPUT when it is there but not numbers, of another shape, or shorter than
 * /series/time: the summary indexes every series up to the time column's length, so a
 * short one would be read past its end (issue 29). */
/* A count an older run file did not record (NaN) as none, for sums. */
static double zero_nan(double v) { return isnan(v) ? 0.0 : v; }

/* The rank of dataset d (-1 when its space cannot be read) and, for ranks 1 to 3, its
 * extent into dims. */
static int dataset_extent(hid_t d, hsize_t dims[3])
{
    dims[0] = dims[1] = dims[2] = 0;
    hid_t sp = H5Dget_space(d);
    int nd = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
    if (nd >= 1 && nd <= 3) H5Sget_simple_extent_dims(sp, dims, NULL);
    if (sp >= 0) H5Sclose(sp);
    return nd;
}

static int read_series(hid_t file, const char *path, const char *name, int width, long rows, double **out,
                       long *got, cb_error *err)
{
    char ds[256];
    snprintf(ds, sizeof ds, "/series/%s", name);
    *out = NULL;
    *got = 0;
    if (H5Lexists(file, "/series", H5P_DEFAULT) <= 0 || H5Lexists(file, ds, H5P_DEFAULT) <= 0) return 0;
    hid_t d = H5Dopen(file, ds, H5P_DEFAULT);
    if (d < 0) return CB_FAIL(err, CB_ERR_INPUT, "%s: %s cannot be opened (a damaged run file)", path, ds);
    hid_t ty = H5Dget_type(d);
    H5T_class_t cls = ty >= 0 ? H5Tget_class(ty) : H5T_NO_CLASS;
    hsize_t dims[3];
    int nd = dataset_extent(d, dims);
    int rc = CB_ERR_INPUT;
    if (cls != H5T_FLOAT && cls != H5T_INTEGER)
        CB_FAIL(err, CB_ERR_INPUT, "%s: %s does not hold numbers (a damaged run file)", path, ds);
    else if (width == 1 ? nd != 1 : (nd != 2 || dims[1] != (hsize_t)width))
        CB_FAIL(err, CB_ERR_INPUT, "%s: %s has %d dimensions (%llu columns), expected %s (a damaged run file)", path,
                ds, nd, nd == 2 ? (unsigned long long)dims[1] : 1ULL, width == 1 ? "a column" : "rows of 3");
    else if (rows >= 0 && dims[0] < (hsize_t)rows)
        CB_FAIL(err, CB_ERR_INPUT, "%s: %s has %llu rows, /series/time %ld: a series shorter than the time column "
                "(a damaged run file); refusing to read past its end", path, ds, (unsigned long long)dims[0], rows);
    else {
        double *buf = calloc(dims[0] * (hsize_t)width + 1, sizeof *buf);
        if (!buf)
            rc = CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory reading %s (%llu rows)", path, ds,
                         (unsigned long long)dims[0]);
        else if (H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
            free(buf);
            CB_FAIL(err, CB_ERR_INPUT, "%s: %s cannot be read (a damaged run file)", path, ds);
        } else {
            rc = 0;
            *got = (long)dims[0];
            *out = buf;
        }
    }
    if (ty >= 0) H5Tclose(ty);
    H5Dclose(d);
    return rc;
}

/* Rows of /series/<name>, -1 when it is absent or has no extent. */
static long series_rows(hid_t file, const char *name)
{
    char ds[256];
    snprintf(ds, sizeof ds, "/series/%s", name);
    if (H5Lexists(file, ds, H5P_DEFAULT) <= 0) return -1;
    hid_t d = H5Dopen(file, ds, H5P_DEFAULT);
    if (d < 0) return -1;
    hsize_t dims[3];
    int nd = dataset_extent(d, dims);
    H5Dclose(d);
    return nd >= 1 && nd <= 3 ? (long)dims[0] : -1;
}

/* Fold x into *acc, skipping NaN rows; *acc stays NaN until a row has a value. */
static void nan_max(double *acc, double x) { if (!isnan(x)) *acc = isnan(*acc) ? x : fmax(*acc, x); }
static void nan_min(double *acc, double x) { if (!isnan(x)) *acc = isnan(*acc) ? x : fmin(*acc, x); }
static void nan_sum(double *acc, double x) { if (!isnan(x)) *acc = isnan(*acc) ? x : *acc + x; }

int cb_run_provenance_read(hid_t f, const char *path, cb_run_summary *s, cb_error *err)
{
    if (cb_h5_read_int_attr(f, "layout_version", &s->layout_version) != CB_OK) s->layout_version = 1;
    if (s->layout_version > CB_LAYOUT_VERSION || s->layout_version < 1) {
        char commit[96] = "";
        cb_h5_read_string_attr(f, "git_commit", commit, sizeof commit);
        return CB_FAIL(err, CB_ERR_INPUT,
                       "%s: run file layout %d, but this clothbench reads layouts 1 to %d; read it with the "
                       "build that wrote it (commit %s) or a newer one", path, s->layout_version,
                       CB_LAYOUT_VERSION, commit[0] ? commit : "unknown");
    }
    struct { const char *name; char *buf; size_t n; } a[] = {
        {"git_commit", s->git_commit, sizeof s->git_commit}, {"build_type", s->build_type, sizeof s->build_type},
        {"build_flags", s->build_flags, sizeof s->build_flags}, {"compiler", s->compiler, sizeof s->compiler},
        {"libraries", s->libraries, sizeof s->libraries}, {"threads", s->threads, sizeof s->threads},
        {"host", s->host, sizeof s->host}, {"cpu", s->cpu, sizeof s->cpu},
        {"command_line", s->command_line, sizeof s->command_line},
        {"parameters", s->parameters, sizeof s->parameters}};
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) cb_h5_read_string_attr(f, a[i].name, a[i].buf, a[i].n);
    return CB_OK;
}

int cb_run_summary_read(const char *path, cb_run_summary *s, cb_error *err)
{
    memset(s, 0, sizeof *s);
    H5Eset_auto(H5E_DEFAULT, NULL, NULL);
    FILE *probe = fopen(path, "rb");
    if (!probe) return CB_FAIL(err, CB_ERR_IO, "%s: cannot open run file", path);
    fclose(probe);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) return CB_FAIL(err, CB_ERR_INPUT, "%s: not an HDF5 run file (or still being written)", path);
    if (cb_h5_read_string_attr(f, "solver", s->solver, sizeof s->solver) < 0) {
        H5Fclose(f);
        return CB_FAIL(err, CB_ERR_INPUT, "%s: not a clothbench run file (no 'solver' attribute)", path);
    }
    int rc0 = cb_run_provenance_read(f, path, s, err);
    if (rc0) {
        H5Fclose(f);
        return rc0;
    }
    cb_h5_read_string_attr(f, "scene_name", s->scene, sizeof s->scene);
    cb_h5_read_string_attr(f, "status", s->status, sizeof s->status);
    cb_h5_read_string_attr(f, "message", s->message, sizeof s->message);
    cb_h5_read_string_attr(f, "created", s->created, sizeof s->created);
    cb_h5_read_string_attr(f, "health_rule", s->health_rule, sizeof s->health_rule);
    cb_h5_read_string_attr(f, "health_breaches", s->health_breaches, sizeof s->health_breaches);
    if (cb_h5_read_string_attr(f, "self_collision", s->self_collision, sizeof s->self_collision) < 0)
        snprintf(s->self_collision, sizeof s->self_collision, "unknown");
    if (cb_h5_read_string_attr(f, "model", s->model, sizeof s->model) < 0)
        snprintf(s->model, sizeof s->model, "unknown");
    double *t = NULL, *dt = NULL, *E = NULL, *depth = NULL, *pen = NULL, *si = NULL, *ms = NULL, *strain = NULL,
           *wall = NULL, *P = NULL, *J = NULL, *vdepth = NULL, *cdepth = NULL, *cwork = NULL, *scross = NULL, *ecross = NULL, *fcross = NULL, *cute = NULL, *cutf = NULL,
           *ccross = NULL, *awall = NULL, *xwork = NULL;
    long n = 0;
    int rc = read_series(f, path, "time", 1, -1, &t, &n, err);
    if (rc) goto out;
    const struct { const char *name; int width; double **to; } series[] = {
        {"dt", 1, &dt}, {"total_energy", 1, &E}, {"collider_max_depth", 1, &depth},
        {"collider_penetrations", 1, &pen}, {"self_intersections", 1, &si}, {"min_separation", 1, &ms},
        {"max_strain", 1, &strain}, {"wall_step_s", 1, &wall}, {"linear_momentum", 3, &P},
        {"external_impulse", 3, &J}, {"vertex_max_depth", 1, &vdepth}, {"contact_depth_corrected", 1, &cdepth},
        {"contact_work", 1, &cwork}, {"self_crossings_in_step", 1, &scross},
        {"collider_crossings_in_step", 1, &ccross}, {"wall_audit_s", 1, &awall}, {"external_work", 1, &xwork},
        {"collider_edge_crossings_in_step", 1, &ecross}, {"collider_face_crossings_in_step", 1, &fcross},
        {"collider_cut_edges", 1, &cute}, {"collider_cut_faces", 1, &cutf}};
    /* A run still going, or killed, is read up to the rows every series holds: a kill
     * inside a flush can leave the metrics written in part (HDF5 without SWMR orders
     * nothing between datasets; test_faults' kill saw /series/time at 3 rows and
     * collider_max_depth at 2). A finished run with a short series stays damaged. */
    if (strcmp(s->status, "running") == 0)
        for (size_t k = 0; k < sizeof series / sizeof series[0]; k++) {
            long r = series_rows(f, series[k].name);
            if (r >= 0 && r < n) n = r;
        }
    if (n < 1) {
        /* a run that failed after opening its file and before row 0 (out of memory
         * building the first metrics), or killed before its first flush: status and
         * message say what happened, the numbers are unknown */
        s->rows = s->steps = s->frames = 0;
        s->t_end = s->energy_start = s->energy_end = s->energy_drift = s->energy_drift_rel = NAN;
        s->external_work = s->max_penetration_depth = s->max_collider_penetrations = s->max_strain = NAN;
        s->max_self_intersections = s->min_separation = s->energy_peak = NAN;
        s->max_vertex_penetration_depth = s->max_contact_depth_corrected = s->contact_work = NAN;
        s->contact_work_added = s->self_crossings = s->collider_crossings = s->audit_ms_per_step = NAN;
        s->collider_edge_crossings = s->collider_face_crossings = s->max_collider_cut_edges = s->max_collider_cut_faces = NAN;
        s->mean_ms_per_step = s->momentum_drift = NAN;
        goto out;
    }
    for (size_t k = 0; k < sizeof series / sizeof series[0]; k++) {
        long got;
        if ((rc = read_series(f, path, series[k].name, series[k].width, n, series[k].to, &got, err))) goto out;
    }
    s->rows = n;
    s->t_end = t[n - 1];
    s->steps = dt && dt[n - 1] > 0 ? lround(t[n - 1] / dt[n - 1]) : n - 1;
    if (H5Lexists(f, "/frames/time", H5P_DEFAULT) > 0) {
        hid_t d = H5Dopen(f, "/frames/time", H5P_DEFAULT);
        hsize_t dims[3];
        if (d >= 0) {
            s->frames = dataset_extent(d, dims) >= 1 ? (long)dims[0] : 0;
            H5Dclose(d);
        }
    }
    s->energy_start = E ? E[0] : NAN;
    s->energy_end = E ? E[n - 1] : NAN;
    s->energy_drift = s->energy_end - s->energy_start;
    /* relative to the initial energy: dividing by the largest |E| hides an explosion */
    s->energy_drift_rel = s->energy_start != 0 ? s->energy_drift / fabs(s->energy_start) : NAN;
    s->external_work = xwork ? xwork[n - 1] : NAN;
    s->max_penetration_depth = 0;
    s->max_collider_penetrations = 0;
    s->max_strain = 0;
    /* the NaN-aware ones stay NaN when no row has a value */
    s->max_self_intersections = s->min_separation = NAN;
    s->energy_peak = s->max_vertex_penetration_depth = s->max_contact_depth_corrected = NAN;
    s->contact_work = s->contact_work_added = s->self_crossings = s->collider_crossings = NAN;
    s->audit_ms_per_step = NAN;
    /* files before these series: NaN (not measured) */
    s->collider_edge_crossings = s->collider_face_crossings = s->max_collider_cut_edges = s->max_collider_cut_faces = NAN;
    double wsum = 0, asum = 0;
    long wn = 0;
    for (long i = 0; i < n; i++) {
        if (depth) s->max_penetration_depth = fmax(s->max_penetration_depth, depth[i]);
        if (pen) s->max_collider_penetrations = fmax(s->max_collider_penetrations, pen[i]);
        if (strain) s->max_strain = fmax(s->max_strain, strain[i]);
        if (wall && i > 0) { wsum += wall[i]; wn++; }
        if (si) nan_max(&s->max_self_intersections, si[i]);
        if (ms) nan_min(&s->min_separation, ms[i]);
        if (E) nan_max(&s->energy_peak, E[i]);
        if (vdepth) nan_max(&s->max_vertex_penetration_depth, vdepth[i]);
        if (cdepth) nan_max(&s->max_contact_depth_corrected, cdepth[i]);
        if (cwork) {
            nan_sum(&s->contact_work, cwork[i]);
            if (!isnan(cwork[i])) nan_sum(&s->contact_work_added, fmax(cwork[i], 0.0));
        }
        if (scross) nan_sum(&s->self_crossings, scross[i]);
        if (ccross) nan_sum(&s->collider_crossings, ccross[i]);
        if (ecross) nan_sum(&s->collider_edge_crossings, ecross[i]);
        if (fcross) nan_sum(&s->collider_face_crossings, fcross[i]);
        if (cute) nan_max(&s->max_collider_cut_edges, cute[i]);
        if (cutf) nan_max(&s->max_collider_cut_faces, cutf[i]);
        if (awall && !isnan(awall[i])) asum += awall[i];
    }
    if (!isnan(s->self_crossings) && s->steps > 0) s->audit_ms_per_step = 1e3 * asum / (double)s->steps;
    s->mean_ms_per_step = wn ? 1e3 * wsum / (double)wn : NAN;
    s->momentum_drift = NAN;
    if (P && J) {
        double d[3], pmax = 1e-300;
        for (int k = 0; k < 3; k++) d[k] = P[3 * (n - 1) + k] - P[k];
        for (long i = 1; i < n; i++)
            for (int k = 0; k < 3; k++) d[k] -= J[3 * i + k];
        for (long i = 0; i < n; i++) pmax = fmax(pmax, sqrt(P[3 * i] * P[3 * i] + P[3 * i + 1] * P[3 * i + 1] + P[3 * i + 2] * P[3 * i + 2]));
        /* only meaningful when every step is logged (log_every 1) */
        if (s->steps == n - 1) s->momentum_drift = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) / pmax;
    }
out:
    free(t); free(dt); free(E); free(depth); free(pen); free(si); free(ms); free(strain); free(wall); free(P); free(J);
    free(vdepth); free(cdepth); free(cwork); free(scross); free(ccross); free(awall); free(xwork);
    free(ecross); free(fcross); free(cute); free(cutf);
    H5Fclose(f);
    return rc;
}

void cb_run_summary_print(const cb_run_summary *s, const char *path, FILE *out)
{
    fprintf(out, "run        %s\n", path);
    fprintf(out, "solver     %s\n", s->solver);
    fprintf(out, "model      %s\n", s->model);
    fprintf(out, "scene      %s\n", s->scene);
    fprintf(out, "status     %s%s%s\n", s->status, s->message[0] ? ": " : "", s->message);
    fprintf(out, "steps      %ld (t = %.6g s), %ld frames\n", s->steps, s->t_end, s->frames);
    fprintf(out, "energy     %.6g J -> %.6g J, drift %.4g J (%.3g%% of the initial energy), peak %.6g J (%+.4g J from "
            "the start)\n", s->energy_start, s->energy_end, s->energy_drift, 100.0 * s->energy_drift_rel, s->energy_peak,
            s->energy_peak - s->energy_start);
    if (!isnan(s->external_work) && s->external_work != 0)
        fprintf(out, "work       moving pins and colliders did %.4g J on the cloth\n", s->external_work);
    if (!isnan(s->momentum_drift))
        fprintf(out, "momentum   balance error %.3g (|dP - external impulse| / max |P|)\n", s->momentum_drift);
    fprintf(out, "collider   max penetration %.4g m (%g vertices, edges and triangles at most); vertices only %.4g m\n",
            s->max_penetration_depth, s->max_collider_penetrations, s->max_vertex_penetration_depth);
    if (!isnan(s->max_collider_cut_edges))
        fprintf(out, "collider   cut between vertices: %g edges, %g triangles at most (inside a collider, their vertices "
                "outside)\n", s->max_collider_cut_edges, s->max_collider_cut_faces);
    if (isnan(s->contact_work))
        fprintf(out, "contact    no contact stage after the integrator\n");
    else
        fprintf(out, "contact    the stage after the integrator corrected up to %.4g m, added %.4g J (net %.4g J)\n",
                s->max_contact_depth_corrected, s->contact_work_added, s->contact_work);
    if (isnan(s->self_crossings))
        fprintf(out, "audit      crossings in steps: not audited (run with --audit)\n");
    else
        fprintf(out, "audit      crossings in steps: %g (self %g, colliders %g: vertices %g, edges %g, triangles %g), "
                "%.3g ms per step (%.3g times the step)\n",
                s->self_crossings + s->collider_crossings + zero_nan(s->collider_edge_crossings) +
                    zero_nan(s->collider_face_crossings),
                s->self_crossings, s->collider_crossings + zero_nan(s->collider_edge_crossings) +
                    zero_nan(s->collider_face_crossings),
                s->collider_crossings, s->collider_edge_crossings, s->collider_face_crossings,
                s->audit_ms_per_step, s->mean_ms_per_step > 0 ? s->audit_ms_per_step / s->mean_ms_per_step : NAN);
    const char *sc = !strcmp(s->self_collision, "none") ? "the method has none" : s->self_collision;
    if (isnan(s->max_self_intersections)) fprintf(out, "self       not computed; self collision %s\n", sc);
    else fprintf(out, "self       max intersections %g, min separation %.4g m; self collision %s\n",
                 s->max_self_intersections, s->min_separation, sc);
    fprintf(out, "strain     max %.4g\n", s->max_strain);
    fprintf(out, "time       %.4g ms per step (mean)\n", s->mean_ms_per_step);
    /* last, so that the rule's words do not come before the lines they name */
    if (s->health_rule[0]) {
        fprintf(out, "health     %s\n", s->health_breaches[0] ? "BREACHED:" : "no breach");
        for (const char *p = s->health_breaches; *p;) {
            const char *nl = strchr(p, '\n');
            int len = nl ? (int)(nl - p) : (int)strlen(p);
            fprintf(out, "           %.*s\n", len, p);
            p += len + (nl ? 1 : 0);
        }
        fprintf(out, "           rule: %s\n", s->health_rule);
    }
    if (s->layout_version < 2) {
        fprintf(out, "made by    not recorded (run file layout %d)\n", s->layout_version);
        return;
    }
    fprintf(out, "made by    commit %s (%s build, %s)\n", s->git_commit, s->build_type, s->compiler);
    fprintf(out, "           flags %s\n", s->build_flags);
    fprintf(out, "           %s\n", s->libraries);
    fprintf(out, "           threads %s; host %s, %s\n", s->threads, s->host, s->cpu);
    fprintf(out, "           command: %s\n", s->command_line);
}
