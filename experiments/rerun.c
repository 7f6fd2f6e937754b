/* experiments/rerun.c — reproduce a run from its file and compare (rerun.h). */
#include "experiments/rerun.h"

#include <hdf5.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact/colliders.h"
#include "experiments/harness/h5attr.h"
#include "experiments/harness/provenance.h"
#include "experiments/harness/run.h"
#include "core/scene.h"
#include "core/sha256.h"
#include "experiments/harness/run_summary.h"

/* ------------------------------------------------------------ comparison */

/* One dataset of both files, compared row by row (a row: everything after the
 * first dimension). */
typedef struct dset_diff {
    int present_old, present_new;
    long rows_old, rows_new;
    long first_row;            /* first differing row within the common rows, -1: none */
    double old_value, new_value; /* the first differing element, as double (floating data) */
    int shape_differs;         /* other dimensions or element type differ */
} dset_diff;

static int open_dataset(hid_t f, const char *path, hid_t *d)
{
    *d = -1;
    /* every group on the way must exist for H5Lexists not to fail */
    char part[512];
    for (const char *p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
        snprintf(part, sizeof part, "%.*s", (int)(p - path), path);
        if (H5Lexists(f, part, H5P_DEFAULT) <= 0) return 0;
    }
    if (H5Lexists(f, path, H5P_DEFAULT) <= 0) return 0;
    *d = H5Dopen(f, path, H5P_DEFAULT);
    return *d >= 0;
}

/* Rows [r0, r0 + n) of d into buf (row_bytes each) in the native form of `mem`. */
static int read_rows(hid_t d, hid_t mem, int rank, const hsize_t *dims, long r0, long n, void *buf)
{
    hsize_t start[4] = {0, 0, 0, 0}, count[4];
    for (int k = 0; k < rank; k++) count[k] = dims[k];
    start[0] = (hsize_t)r0;
    count[0] = (hsize_t)n;
    hid_t fs = H5Dget_space(d);
    hid_t ms = H5Screate_simple(rank, count, NULL);
    int ok = fs >= 0 && ms >= 0 && H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) >= 0 &&
             H5Dread(d, mem, ms, fs, H5P_DEFAULT, buf) >= 0;
    if (ms >= 0) H5Sclose(ms);
    if (fs >= 0) H5Sclose(fs);
    return ok ? 0 : -1;
}

static int compare_dataset(hid_t fa, hid_t fb, const char *path, dset_diff *r)
{
    memset(r, 0, sizeof *r);
    r->first_row = -1;
    hid_t da, db;
    r->present_old = open_dataset(fa, path, &da);
    r->present_new = open_dataset(fb, path, &db);
    int rc = 0;
    hid_t ta = -1, tb = -1, ma = -1;
    hid_t sa = -1, sb = -1;
    void *ba = NULL, *bb = NULL;
    if (!r->present_old || !r->present_new) goto done;
    sa = H5Dget_space(da);
    sb = H5Dget_space(db);
    hsize_t dimsa[4] = {0}, dimsb[4] = {0};
    int rank = H5Sget_simple_extent_ndims(sa);
    if (rank < 1 || rank > 4 || H5Sget_simple_extent_ndims(sb) != rank) { r->shape_differs = 1; goto done; }
    H5Sget_simple_extent_dims(sa, dimsa, NULL);
    H5Sget_simple_extent_dims(sb, dimsb, NULL);
    r->rows_old = (long)dimsa[0];
    r->rows_new = (long)dimsb[0];
    for (int k = 1; k < rank; k++)
        if (dimsa[k] != dimsb[k]) r->shape_differs = 1;
    ta = H5Dget_type(da);
    tb = H5Dget_type(db);
    if (H5Tget_class(ta) != H5Tget_class(tb) || H5Tget_size(ta) != H5Tget_size(tb)) r->shape_differs = 1;
    if (r->shape_differs) goto done;
    ma = H5Tget_native_type(ta, H5T_DIR_ASCEND);
    int floating = H5Tget_class(ta) == H5T_FLOAT && H5Tget_size(ma) == sizeof(double);
    size_t row_bytes = H5Tget_size(ma);
    for (int k = 1; k < rank; k++) row_bytes *= (size_t)dimsa[k];
    long rows = r->rows_old < r->rows_new ? r->rows_old : r->rows_new;
    long block = row_bytes > 0 ? (long)(((size_t)8 << 20) / row_bytes) : 1;
    if (block < 1) block = 1;
    ba = malloc(row_bytes * (size_t)block + 1);
    bb = malloc(row_bytes * (size_t)block + 1);
    if (!ba || !bb) { rc = CB_ERR_NOMEM; goto done; }
    for (long r0 = 0; r0 < rows && r->first_row < 0; r0 += block) {
        long n = rows - r0 < block ? rows - r0 : block;
        if (read_rows(da, ma, rank, dimsa, r0, n, ba) || read_rows(db, ma, rank, dimsb, r0, n, bb)) {
            rc = CB_ERR_IO;
            goto done;
        }
        for (long i = 0; i < n; i++) {
            const unsigned char *pa = (const unsigned char *)ba + (size_t)i * row_bytes;
            const unsigned char *pb = (const unsigned char *)bb + (size_t)i * row_bytes;
            if (!memcmp(pa, pb, row_bytes)) continue;
            r->first_row = r0 + i;
            if (floating) {
                size_t e = 0;
                while (memcmp(pa + e, pb + e, sizeof(double)) == 0) e += sizeof(double);
                memcpy(&r->old_value, pa + e, sizeof(double));
                memcpy(&r->new_value, pb + e, sizeof(double));
            }
            break;
        }
    }
done:
    free(ba);
    free(bb);
    if (ma >= 0) H5Tclose(ma);
    if (ta >= 0) H5Tclose(ta);
    if (tb >= 0) H5Tclose(tb);
    if (sa >= 0) H5Sclose(sa);
    if (sb >= 0) H5Sclose(sb);
    if (r->present_old && da >= 0) H5Dclose(da);
    if (r->present_new && db >= 0) H5Dclose(db);
    return rc;
}

static int differs(const dset_diff *d)
{
    return d->present_old != d->present_new || d->shape_differs || d->first_row >= 0 ||
           d->rows_old != d->rows_new;
}

/* Names of the datasets in /series of f, appended to *names (skipping duplicates). */
typedef struct name_list { char **v; int n; } name_list;

static herr_t add_name(hid_t g, const char *name, const H5L_info_t *info, void *data)
{
    (void)g; (void)info;
    name_list *l = data;
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->v[i], name)) return 0;
    char **grown = realloc(l->v, (size_t)(l->n + 1) * sizeof *grown);
    if (!grown) return -1;
    l->v = grown;
    if (!(l->v[l->n] = cb_strdup(name))) return -1;
    l->n++;
    return 0;
}

static void list_series(hid_t f, name_list *l)
{
    if (H5Lexists(f, "/series", H5P_DEFAULT) <= 0) return;
    hid_t g = H5Gopen(f, "/series", H5P_DEFAULT);
    if (g < 0) return;
    H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, NULL, add_name, l);
    H5Gclose(g);
}

static void build_line(hid_t f, char *buf, size_t n)
{
    cb_run_summary s;
    memset(&s, 0, sizeof s);
    cb_error e;
    cb_run_provenance_read(f, "", &s, &e);
    snprintf(buf, n, "commit %s, %s build [%s], %s; %s", s.git_commit[0] ? s.git_commit : "not recorded",
             s.build_type, s.build_flags, s.compiler, s.libraries);
}

int cb_run_files_compare(const char *old_path, const char *new_path, cb_rerun_result *res, FILE *out,
                         cb_error *err)
{
    if (!old_path || !new_path || !res) return CB_FAIL(err, CB_ERR_INPUT, "cb_run_files_compare: NULL argument");
    res->identical = 0;
    res->first_row = -1;
    res->first_metric[0] = '\0';
    H5Eset_auto(H5E_DEFAULT, NULL, NULL);
    hid_t fa = H5Fopen(old_path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (fa < 0) return CB_FAIL(err, CB_ERR_INPUT, "%s: not an HDF5 run file (or still being written)", old_path);
    hid_t fb = H5Fopen(new_path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (fb < 0) {
        H5Fclose(fa);
        return CB_FAIL(err, CB_ERR_INPUT, "%s: not an HDF5 run file (or still being written)", new_path);
    }
    char la[2048], lb[2048];
    build_line(fa, la, sizeof la);
    build_line(fb, lb, sizeof lb);
    res->build_differs = strcmp(la, lb) != 0;

    name_list names = {NULL, 0};
    list_series(fa, &names);
    list_series(fb, &names);
    int rc = 0, nbad = 0;
    long first = -1;
    /* pass 1: the first differing row over every series; pass 2: report the metrics there */
    dset_diff *dd = calloc((size_t)names.n + 1, sizeof *dd);
    if (!dd) { rc = CB_FAIL(err, CB_ERR_NOMEM, "out of memory"); goto done; }
    for (int i = 0; i < names.n; i++) {
        if (!strncmp(names.v[i], "wall_", 5)) continue; /* wall-clock times never repeat */
        char path[300];
        snprintf(path, sizeof path, "/series/%s", names.v[i]);
        if (compare_dataset(fa, fb, path, &dd[i])) {
            rc = CB_FAIL(err, CB_ERR_IO, "%s, %s: cannot read %s", old_path, new_path, path);
            goto done;
        }
        if (!differs(&dd[i])) continue;
        nbad++;
        long r = dd[i].first_row;
        if (r < 0 && dd[i].present_old && dd[i].present_new && !dd[i].shape_differs)
            r = dd[i].rows_old < dd[i].rows_new ? dd[i].rows_old : dd[i].rows_new; /* one is longer */
        if (r >= 0 && (first < 0 || r < first)) first = r;
        if (r < 0 && first < 0 && !res->first_metric[0]) snprintf(res->first_metric, sizeof res->first_metric, "%s", names.v[i]);
    }
    if (nbad && out) fprintf(out, "series differ (%d of %d metrics)\n", nbad, names.n);
    for (int i = 0; i < names.n; i++) {
        if (!differs(&dd[i]) || !strncmp(names.v[i], "wall_", 5)) continue;
        const dset_diff *d = &dd[i];
        if (!d->present_old || !d->present_new) {
            if (out) fprintf(out, "  %s: only in the %s file\n", names.v[i], d->present_old ? "old" : "new");
        } else if (d->shape_differs) {
            if (out) fprintf(out, "  %s: shape or type differs\n", names.v[i]);
        } else if (d->first_row == first && first >= 0) {
            if (!res->first_metric[0]) snprintf(res->first_metric, sizeof res->first_metric, "%s", names.v[i]);
            if (out) fprintf(out, "  row %ld: %s old %.17g new %.17g\n", first, names.v[i], d->old_value, d->new_value);
        } else if (d->first_row < 0 && d->rows_old != d->rows_new) {
            if (!res->first_metric[0]) snprintf(res->first_metric, sizeof res->first_metric, "%s (length)", names.v[i]);
            if (out) fprintf(out, "  %s: %ld rows old, %ld new (equal on the common rows)\n", names.v[i],
                             d->rows_old, d->rows_new);
        }
    }
    res->first_row = first;
    static const char *const others[] = {"/frames/time", "/frames/positions", "/mesh/faces", "/mesh/edges",
                                         "/mesh/rest_positions", "/mesh/masses"};
    for (size_t k = 0; k < sizeof others / sizeof others[0]; k++) {
        dset_diff d;
        if (compare_dataset(fa, fb, others[k], &d)) {
            rc = CB_FAIL(err, CB_ERR_IO, "%s, %s: cannot read %s", old_path, new_path, others[k]);
            goto done;
        }
        if (!differs(&d)) continue;
        nbad++;
        if (!res->first_metric[0]) snprintf(res->first_metric, sizeof res->first_metric, "%s", others[k]);
        if (!out) continue;
        if (d.present_old != d.present_new) fprintf(out, "%s: only in the %s file\n", others[k], d.present_old ? "old" : "new");
        else if (d.first_row >= 0) fprintf(out, "%s: first differs at index %ld (old %.17g, new %.17g)\n", others[k],
                                           d.first_row, d.old_value, d.new_value);
        else fprintf(out, "%s: %ld rows old, %ld new\n", others[k], d.rows_old, d.rows_new);
    }
    res->identical = nbad == 0;
    if (out) {
        if (res->identical) fprintf(out, "identical\n");
        if (res->build_differs) fprintf(out, "build differs:\n  old: %s\n  new: %s\n", la, lb);
        else fprintf(out, "same build (%s)\n", la);
    }
done:
    for (int i = 0; i < names.n; i++) free(names.v[i]);
    free(names.v);
    free(dd);
    H5Fclose(fa);
    H5Fclose(fb);
    return rc ? rc : (res->identical ? 0 : CB_WARN_DIFFERS);
}

/* ------------------------------------------------------------ rerun */

/* Compares the recorded digests ("<hex>  <path>" lines) with the files the scene reads
 * now; returns how many differ (or are missing or extra). */
static int check_files(const cb_scene *sc, const char *recorded, FILE *out)
{
    int changed = 0, k = 0;
    const char *line = recorded ? recorded : "";
    for (; *line; k++) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char then[65] = "", path[4096] = "";
        if (len > 66) {
            memcpy(then, line, 64);
            snprintf(path, sizeof path, "%.*s", (int)(len - 66), line + 66);
        }
        if (k >= sc->nfiles) {
            if (out) fprintf(out, "rerun: the run read %s, which the scene no longer reads\n", path);
            changed++;
        } else {
            char now[65];
            cb_error e;
            if (cb_sha256_file(sc->files[k], now, &e)) {
                if (out) fprintf(out, "rerun: %s\n", e.message);
                changed++;
            } else if (strcmp(now, then)) {
                if (out)
                    fprintf(out, "rerun: %s changed since the run (sha256 then %.12s..., now %.12s...); the "
                                 "results may differ for that reason\n", sc->files[k], then, now);
                changed++;
            }
        }
        line += len + (end ? 1 : 0);
    }
    for (; k < sc->nfiles; k++) {
        if (out) fprintf(out, "rerun: the scene reads %s, which the run did not record\n", sc->files[k]);
        changed++;
    }
    return changed;
}

/* cb_run_def.frame_hook of the rerun of a reference with a window
 * (experiments/reference.c): the reference's run was ended by its check at the frame
 * *ctx, reference_exceeded_at (that frame not written), so the rerun ends there too. */
static int window_end(void *ctx, const cb_world *w, long steps, char *why, size_t size, cb_error *err)
{
    (void)steps;
    (void)err;
    double t_over = *(const double *)ctx;
    if (w->state.t < t_over) return 0;
    snprintf(why, size, "ended at t = %.6g s as the reference it reproduces (its window: its check exceeded its "
             "bound there)", w->state.t);
    return 1;
}

int cb_rerun(const cb_rerun_def *def, cb_rerun_result *res, FILE *out, cb_error *err)
{
    if (!def || !def->run_path || !res) return CB_FAIL(err, CB_ERR_INPUT, "cb_rerun: NULL argument");
    memset(res, 0, sizeof *res);
    res->first_row = -1;
    H5Eset_auto(H5E_DEFAULT, NULL, NULL);
    FILE *probe = fopen(def->run_path, "rb");
    if (!probe) return CB_FAIL(err, CB_ERR_IO, "%s: cannot open run file", def->run_path);
    fclose(probe);
    hid_t f = H5Fopen(def->run_path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) return CB_FAIL(err, CB_ERR_INPUT, "%s: not an HDF5 run file (or still being written)", def->run_path);
    cb_run_summary s;
    memset(&s, 0, sizeof s);
    int rc = cb_run_provenance_read(f, def->run_path, &s, err);
    char *solver = cb_h5_string_attr(f, "solver"), *text = cb_h5_string_attr(f, "scene_text");
    char *params = cb_h5_string_attr(f, "parameters"), *dir = cb_h5_string_attr(f, "scene_dir");
    char *spath = cb_h5_string_attr(f, "scene_path"), *digests = cb_h5_string_attr(f, "mesh_files");
    int frames = H5Lexists(f, "/frames", H5P_DEFAULT) > 0;
    double t_over = NAN; /* a reference ended by its check there (its window), else NaN */
    if (cb_h5_read_double_attr(f, "reference_exceeded_at", &t_over)) t_over = NAN;
    H5Fclose(f);
    cb_scene *sc = NULL;
    if (rc) goto done;
    if (!solver || !text) {
        rc = CB_FAIL(err, CB_ERR_INPUT, "%s: not a clothbench run file (no solver or scene_text attribute)",
                     def->run_path);
        goto done;
    }
    const char *use_dir = def->scene_dir ? def->scene_dir : (dir && dir[0] ? dir : ".");
    if (s.layout_version < 2 && out)
        fprintf(out, "rerun: %s has layout %d: its parameters are the ones the scene gave, not the effective "
                     "ones, and no build or file digests were recorded; defaults may have changed since\n",
                def->run_path, s.layout_version);
    /* the files the scene reads, against their recorded digests */
    char label[4200];
    snprintf(label, sizeof label, "%s (scene of %s)", spath && spath[0] ? spath : "<scene>", def->run_path);
    if ((rc = cb_scene_load_string(text, label, use_dir, NULL, 0, &sc, err))) {
        if (!def->scene_dir) cb_error_prefix(err, "rerun (give --scene-dir DIR if the scene's files moved): ");
        goto done;
    }
    if (s.layout_version >= 2) res->changed_files = check_files(sc, digests, out);
    cb_scene_free(&sc);

    if (def->output) {
        snprintf(res->output, sizeof res->output, "%s", def->output);
    } else {
        size_t n = strlen(def->run_path);
        int h5 = n > 3 && !strcmp(def->run_path + n - 3, ".h5");
        snprintf(res->output, sizeof res->output, "%.*s.rerun.h5", (int)(h5 ? n - 3 : n), def->run_path);
    }
    if (!strcmp(res->output, def->run_path)) {
        rc = CB_FAIL(err, CB_ERR_INPUT, "%s: rerun would overwrite the run it reproduces; give -o NEW.h5",
                     def->run_path);
        goto done;
    }
    cb_run_def rd = cb_default_run_def();
    rd.scene_path = spath && spath[0] ? spath : label;
    rd.scene_text = text;
    rd.scene_dir = use_dir;
    rd.solver = solver;
    rd.solver_parameters = s.layout_version >= 2 ? params : NULL;
    rd.output = res->output;
    rd.write_frames = frames;
    rd.progress = !def->quiet;
    if (isfinite(t_over)) { /* before, the rerun went on to the scene's duration */
        rd.frame_hook = window_end;
        rd.frame_ctx = &t_over;
    }
    cb_run_result rr;
    rc = cb_run(&rd, &rr, err);
    if (rc && rr.frames == 0) goto done; /* failed before the first step */
    if (out) fprintf(out, "rerun: %s -> %s: %s%s%s\n", def->run_path, res->output, rr.status,
                     rr.message[0] ? ": " : "", rr.message);
    rc = 0; /* a run that ends diverged is compared like any other */
    if (def->check) rc = cb_run_files_compare(def->run_path, res->output, res, out, err);
done:
    cb_scene_free(&sc);
    free(solver); free(text); free(params); free(dir); free(spath); free(digests);
    return rc;
}
