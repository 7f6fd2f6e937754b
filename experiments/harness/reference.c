/* experiments/harness/reference.c — reference trajectories (reference.h). */
#include "experiments/harness/reference.h"

#include <hdf5.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/harness/h5attr.h"

struct cb_reference {
    int nv;
    long nframes;
    double *t;            /* [nframes] */
    double (*x)[3];       /* [nframes * nv] */
    double *e;            /* [nframes]: total_energy at the frame's time (NaN: no series row there) */
};

/* A dataset of doubles, whole; dims of rank <= 3 into dims. Returns the element count, -1. */
static long read_doubles(hid_t f, const char *name, double **out, hsize_t dims[3], int *rank)
{
    hid_t ds = H5Dopen2(f, name, H5P_DEFAULT);
    if (ds < 0) return -1;
    hid_t sp = H5Dget_space(ds);
    *rank = H5Sget_simple_extent_ndims(sp);
    long n = -1;
    if (*rank >= 1 && *rank <= 3) {
        H5Sget_simple_extent_dims(sp, dims, NULL);
        n = 1;
        for (int k = 0; k < *rank; k++) n *= (long)dims[k];
        *out = cb_malloc((size_t)(n > 0 ? n : 1) * sizeof **out);
        if (!*out || (n > 0 && H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, *out) < 0)) {
            free(*out);
            *out = NULL;
            n = -1;
        }
    }
    H5Sclose(sp);
    H5Dclose(ds);
    return n;
}

/* The tolerance that matches a time to a frame time: 1e-9 of the frame spacing of t[n]. */
static double time_tol(const double *t, long n)
{
    double spacing = n > 1 ? (t[n - 1] - t[0]) / (double)(n - 1) : 1.0;
    return 1e-9 * (spacing > 0 ? spacing : 1.0);
}

/* 1 when the open file's status attribute is "ok" (into status[64] either way). */
static int status_ok(hid_t f, char status[64])
{
    return !cb_h5_read_string_attr(f, "status", status, 64) && !strcmp(status, "ok");
}

/* r->e: the series total_energy at each frame's time (series rows at frame steps exist by
 * the run loop's rule; a reference without /series, or a frame without its row, has NaN). */
static int frame_energies(hid_t f, cb_reference *r, long nt, const char *path, cb_error *err)
{
    r->e = cb_malloc((size_t)nt * sizeof *r->e);
    if (!r->e) return CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", path);
    for (long k = 0; k < nt; k++) r->e[k] = NAN;
    double *st = NULL, *se = NULL;
    hsize_t d1[3], d2[3];
    int r1 = 0, r2 = 0;
    H5E_BEGIN_TRY {
        long ns = read_doubles(f, "/series/time", &st, d1, &r1);
        long ne = ns < 1 ? -1 : read_doubles(f, "/series/total_energy", &se, d2, &r2);
        if (ns >= 1 && ne == ns) {
            long j = 0;
            const double tol = time_tol(r->t, nt);
            for (long k = 0; k < nt; k++) {
                while (j < ns && st[j] < r->t[k] - tol) j++;
                if (j < ns && fabs(st[j] - r->t[k]) <= tol) r->e[k] = se[j];
            }
        }
    } H5E_END_TRY;
    free(st);
    free(se);
    return CB_OK;
}

int cb_reference_open(const char *path, int nv, cb_reference **out, cb_error *err)
{
    if (!path || !out) return CB_FAIL(err, CB_ERR_INPUT, "%s:%d: cb_reference_open: NULL argument", __FILE__, __LINE__);
    *out = NULL;
    H5Eset_auto(H5E_DEFAULT, NULL, NULL);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) return CB_FAIL(err, CB_ERR_INPUT, "%s: cannot open the reference (not an HDF5 run file?)", path);
    char status[64];
    if (!status_ok(f, status)) {
        H5Fclose(f);
        return CB_FAIL(err, CB_ERR_INPUT, "%s: status '%s', not ok: not a finished reference (make it again with "
                       "clothbench reference)", path, status);
    }
    cb_reference *r = cb_calloc(1, sizeof *r);
    hsize_t dt[3], dx[3];
    int rt = 0, rx = 0;
    int rc = CB_OK;
    if (!r) rc = CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", path);
    long nt = rc ? -1 : read_doubles(f, "/frames/time", &r->t, dt, &rt);
    long nx = nt < 0 ? -1 : read_doubles(f, "/frames/positions", (double **)&r->x, dx, &rx);
    if (nt >= 1 && nx >= 0) rc = frame_energies(f, r, nt, path, err);
    H5Fclose(f);
    if (!rc && (nt < 1 || nx < 0 || rx != 3 || (long)dx[0] != nt || dx[2] != 3))
        rc = CB_FAIL(err, CB_ERR_INPUT, "%s: no frames to compare with (a reference needs /frames; "
                     "write it with clothbench reference)", path);
    if (!rc && (long)dx[1] != nv)
        rc = CB_FAIL(err, CB_ERR_INPUT, "%s: the reference has %ld vertices, the run %d: not the same scene",
                     path, (long)dx[1], nv);
    if (rc) {
        cb_reference_free(&r);
        return rc;
    }
    r->nv = nv;
    r->nframes = nt;
    *out = r;
    return CB_OK;
}

int cb_reference_usable(const char *path)
{
    if (!path) return 0;
    H5Eset_auto(H5E_DEFAULT, NULL, NULL);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) return 0;
    char status[64];
    int ok = status_ok(f, status) && H5Lexists(f, "/frames", H5P_DEFAULT) > 0;
    H5Fclose(f);
    return ok;
}

void cb_reference_free(cb_reference **r)
{
    if (!r || !*r) return;
    free((*r)->t);
    free((*r)->x);
    free((*r)->e);
    free(*r);
    *r = NULL;
}

/* The frame whose time matches t (binary search), -1 when none. */
static long frame_at(const cb_reference *r, double t)
{
    long lo = 0, hi = r->nframes - 1;
    while (lo < hi) {
        long mid = (lo + hi) / 2;
        if (r->t[mid] < t) lo = mid + 1;
        else hi = mid;
    }
    double tol = time_tol(r->t, r->nframes);
    for (long k = lo - 1; k <= lo; k++)
        if (k >= 0 && k < r->nframes && fabs(r->t[k] - t) <= tol) return k;
    return -1;
}

double cb_mass_rms_distance(const double (*x)[3], const double (*y)[3], const double *m, int nv)
{
    double s = 0.0, mt = 0.0;
    for (int i = 0; i < nv; i++) {
        double d0 = x[i][0] - y[i][0], d1 = x[i][1] - y[i][1], d2 = x[i][2] - y[i][2];
        s += m[i] * (d0 * d0 + d1 * d1 + d2 * d2);
        mt += m[i];
    }
    return mt > 0 ? sqrt(s / mt) : NAN;
}

double cb_reference_window(const cb_reference *r)
{
    return r && r->nframes > 0 ? r->t[r->nframes - 1] : NAN;
}

double cb_reference_error(const cb_reference *r, double t, const double (*x)[3], const double *m, int nv)
{
    if (!r || nv != r->nv) return NAN;
    long k = frame_at(r, t);
    if (k < 0) return NAN;
    return cb_mass_rms_distance(x, (const double (*)[3])r->x + (size_t)k * (size_t)nv, m, nv);
}

double cb_reference_energy_error(const cb_reference *r, double t, double total_energy)
{
    if (!r) return NAN;
    long k = frame_at(r, t);
    return k < 0 ? NAN : total_energy - r->e[k];
}
