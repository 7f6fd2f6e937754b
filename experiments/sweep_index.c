/* experiments/sweep_index.c — the sweep's index, index.csv and index.h5, rebuilt from the run
 * files and written to a temporary name then renamed (sweep_internal.h). */
#define _DEFAULT_SOURCE /* flock(2) */
#include "experiments/sweep_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "contact/colliders.h"
#include "experiments/harness/h5attr.h"
#include "experiments/harness/registry.h"
#include "experiments/harness/run.h"
#include "core/files.h"
#include "core/scene.h"
#include "core/solver.h"
#include "core/yamltree.h"
#include "experiments/harness/run_summary.h"
#include "experiments/rerun.h"

/* ---------------------------------------------------------------- index */

static void fmt_num(double v, char *buf, size_t n)
{
    if (isnan(v)) snprintf(buf, n, "nan");
    else if (isinf(v)) snprintf(buf, n, v > 0 ? "inf" : "-inf");
    else snprintf(buf, n, "%.17g", v);
}

/* The index's columns, one table for both writers (index.csv and index.h5), as
 * experiments/harness/metrics.c's cb_metric_table is for the series. A column is a
 * kind and where its value comes from: a field of the run's summary (read from its run
 * file; missing when the file could not be read: empty in the CSV, -1 / NaN / "" in the
 * HDF5 file), or the run itself. The experiment's grid keys follow `repeat`, and one
 * `effective:<key>` column per solver key ends the row. */
enum { COL_STR, COL_INT, COL_NUM };
typedef enum {
    SRC_SUMMARY,    /* the field at `off` of cb_run_summary */
    SRC_RUN, SRC_FILE, SRC_SCENE, SRC_SOLVER, SRC_REPEAT, SRC_STATUS, SRC_MESSAGE, SRC_SCENE_PATH, SRC_CHECKED,
    SRC_GRID,       /* the run's value of grid key `key` */
    SRC_EFFECTIVE,  /* the value the run's solver used for grid key `key` (a solvers.X.k key) */
} col_src;

typedef struct index_col {
    const char *name;
    int kind;
    col_src src;
    size_t off;     /* SRC_SUMMARY: offsetof(cb_run_summary, field) */
    int key;        /* SRC_GRID, SRC_EFFECTIVE: the experiment's key */
} index_col;

#define RUN_COL(n, k, s) {.name = n, .kind = k, .src = s}
#define SUM_NUM(f) {.name = #f, .kind = COL_NUM, .src = SRC_SUMMARY, .off = offsetof(cb_run_summary, f)}
#define SUM_INT(f) {.name = #f, .kind = COL_INT, .src = SRC_SUMMARY, .off = offsetof(cb_run_summary, f)}
#define SUM_STR(f) {.name = #f, .kind = COL_STR, .src = SRC_SUMMARY, .off = offsetof(cb_run_summary, f)}

static const index_col head_cols[] = { /* before the grid keys */
    RUN_COL("run", COL_INT, SRC_RUN),
    RUN_COL("file", COL_STR, SRC_FILE),
    RUN_COL("scene", COL_STR, SRC_SCENE),
    RUN_COL("solver", COL_STR, SRC_SOLVER),
    RUN_COL("repeat", COL_INT, SRC_REPEAT),
};

static const index_col body_cols[] = { /* after the grid keys, before the effective values */
    RUN_COL("status", COL_STR, SRC_STATUS),
    RUN_COL("message", COL_STR, SRC_MESSAGE),
    SUM_INT(steps),
    SUM_NUM(t_end),
    SUM_NUM(energy_drift),
    SUM_NUM(energy_drift_rel),
    SUM_NUM(momentum_drift),
    SUM_NUM(max_penetration_depth),
    SUM_NUM(max_self_intersections),
    SUM_NUM(min_separation),
    SUM_NUM(max_strain),
    SUM_NUM(mean_ms_per_step),
    RUN_COL("scene_path", COL_STR, SRC_SCENE_PATH),
    SUM_INT(frames),
    SUM_NUM(energy_start),
    SUM_NUM(energy_end),
    SUM_NUM(max_collider_penetrations),
    SUM_STR(created),
    /* the yardstick columns (README "What the contact stage hides") */
    SUM_NUM(energy_peak),
    SUM_NUM(max_vertex_penetration_depth),
    SUM_NUM(max_contact_depth_corrected),
    SUM_NUM(contact_work),
    SUM_NUM(contact_work_added),
    SUM_NUM(self_crossings),
    SUM_NUM(collider_crossings),
    SUM_NUM(audit_ms_per_step),
    SUM_NUM(collider_edge_crossings),
    SUM_NUM(collider_face_crossings),
    SUM_NUM(max_collider_cut_edges),
    SUM_NUM(max_collider_cut_faces),
    SUM_STR(self_collision),
    SUM_STR(model),
    SUM_STR(git_commit),
    RUN_COL("checked", COL_STR, SRC_CHECKED),
};

#define NCOLS(t) ((int)(sizeof t / sizeof t[0]))

/* The experiment's columns in order (cb_calloc'd, *n of them); the effective columns'
 * names are cb_calloc'd in *names (free_columns frees both). */
static int columns(const cb_experiment *e, index_col **out, int *n, char ***names, cb_error *err)
{
    int neff = 0;
    for (int k = 0; k < e->nkeys; k++) neff += e->keys[k].solver != NULL;
    int total = NCOLS(head_cols) + e->nkeys + NCOLS(body_cols) + neff;
    index_col *c = cb_calloc((size_t)total, sizeof *c);
    char **nm = cb_calloc((size_t)e->nkeys + 1, sizeof *nm); /* free_columns reads nkeys */
    *out = c;
    *names = nm;
    *n = 0;
    if (!c || !nm) return CB_FAIL(err, CB_ERR_NOMEM, "out of memory");
    int m = 0;
    for (int q = 0; q < NCOLS(head_cols); q++) c[m++] = head_cols[q];
    for (int k = 0; k < e->nkeys; k++)
        c[m++] = (index_col){.name = e->keys[k].path, .kind = COL_STR, .src = SRC_GRID, .key = k};
    for (int q = 0; q < NCOLS(body_cols); q++) c[m++] = body_cols[q];
    for (int k = 0, j = 0; k < e->nkeys; k++) {
        if (!e->keys[k].solver) continue;
        size_t len = strlen(e->keys[k].path) + 11;
        if (!(nm[j] = cb_calloc(len, 1))) return CB_FAIL(err, CB_ERR_NOMEM, "out of memory");
        snprintf(nm[j], len, "effective:%s", e->keys[k].path);
        c[m++] = (index_col){.name = nm[j++], .kind = COL_STR, .src = SRC_EFFECTIVE, .key = k};
    }
    *n = m;
    return CB_OK;
}

static void free_columns(const cb_experiment *e, index_col **c, char ***names)
{
    if (*names)
        for (int k = 0; k < e->nkeys; k++) free((*names)[k]); /* at most nkeys, NULL-padded */
    free(*names);
    free(*c);
    *names = NULL;
    *c = NULL;
}

/* One cell of the index: its value, or missing (a summary field of a run whose file
 * could not be read, a grid key the run does not set). `owned`: a string cb_malloc'd
 * for the cell (the file name, an effective value) that the caller frees. */
typedef struct cell {
    int missing;
    int64_t i;
    double d;
    const char *s;
    char *owned;
} cell;

static char *effective_value(const cb_sweep_key *k, const run_state *st);

static int cell_of(const cb_experiment *e, long i, const run_state *st, const index_col *c, cell *v, cb_error *err)
{
    const cb_sweep_run *r = &e->runs[i];
    memset(v, 0, sizeof *v);
    v->s = "";
    switch (c->src) {
    case SRC_SUMMARY: {
        const char *field = (const char *)&st->s + c->off;
        v->missing = !st->have;
        if (c->kind == COL_NUM) memcpy(&v->d, field, sizeof v->d);
        else if (c->kind == COL_INT) {
            long l;
            memcpy(&l, field, sizeof l);
            v->i = l;
        } else
            v->s = field;
        break;
    }
    case SRC_RUN: v->i = r->index; break;
    case SRC_FILE: {
        size_t len = strlen(r->name) + 4;
        if (!(v->owned = cb_malloc(len))) return CB_FAIL(err, CB_ERR_NOMEM, "out of memory");
        snprintf(v->owned, len, "%s.h5", r->name);
        v->s = v->owned;
        break;
    }
    case SRC_SCENE: v->s = e->scene_stems[r->scene]; break;
    case SRC_SOLVER: v->s = e->solvers[r->solver]; break;
    case SRC_REPEAT: v->i = r->repeat; break;
    case SRC_STATUS: v->s = cb_sweep_row_status(st); break;
    case SRC_MESSAGE: v->s = cb_sweep_row_message(st); break;
    case SRC_SCENE_PATH: v->s = e->scenes[r->scene]; break;
    case SRC_CHECKED: v->s = st->checked; break;
    case SRC_GRID:
        v->missing = r->value[c->key] < 0;
        if (!v->missing) v->s = e->keys[c->key].values[r->value[c->key]];
        break;
    case SRC_EFFECTIVE:
        if (!(v->owned = effective_value(&e->keys[c->key], st))) return CB_FAIL(err, CB_ERR_NOMEM, "out of memory");
        v->s = v->owned;
        break;
    }
    if (!v->s) v->s = "";
    if (v->missing) {
        v->i = -1;
        v->d = NAN;
        v->s = "";
    }
    return CB_OK;
}

/* A temporary name next to `path`, unique across the machines of a sharded sweep. */
static void tmp_name(const char *path, char *tmp, size_t n)
{
    char host[128] = "host";
    if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "host");
    host[sizeof host - 1] = '\0';
    for (char *p = host; *p; p++)
        if (*p == '/') *p = '_';
    snprintf(tmp, n, "%s.tmp.%s.%ld", path, host, (long)getpid());
}

/* The value of the last path component of key k in the run's effective parameters,
 * malloc'd ("" when the run's solver does not read it or the file has none). */
static char *effective_value(const cb_sweep_key *k, const run_state *st)
{
    if (!st->have || !st->s.parameters[0]) return cb_strdup("");
    const char *name = strrchr(k->path, '.');
    name = name ? name + 1 : k->path;
    cb_yaml *map = NULL;
    cb_error er;
    if (cb_yaml_load_string(st->s.parameters, "parameters", &map, &er)) return cb_strdup("");
    const cb_yaml *v = map && map->kind == CB_YAML_MAP ? cb_yaml_get(map, name) : NULL;
    char *out = v ? cb_sweep_value_text(v) : cb_strdup("");
    cb_yaml_free(&map);
    return out;
}

static int write_csv(const cb_experiment *e, const run_state *states, cb_error *err)
{
    char path[4096], tmp[4400];
    snprintf(path, sizeof path, "%s/index.csv", e->output);
    tmp_name(path, tmp, sizeof tmp);
    index_col *cols = NULL;
    char **names = NULL;
    int ncols = 0, rc = columns(e, &cols, &ncols, &names, err);
    FILE *f = rc ? NULL : fopen(tmp, "w");
    if (!rc && !f) rc = CB_FAIL(err, CB_ERR_IO, "%s: cannot write: %s", tmp, strerror(errno));
    if (rc) {
        free_columns(e, &cols, &names);
        return rc;
    }
    for (int q = 0; q < ncols; q++) {
        if (q) fputc(',', f);
        cb_csv_field(f, cols[q].name);
    }
    fputc('\n', f);
    for (long i = 0; i < e->nruns && !rc; i++) {
        for (int q = 0; q < ncols && !rc; q++) {
            cell v;
            if ((rc = cell_of(e, i, &states[i], &cols[q], &v, err))) break;
            if (q) fputc(',', f);
            char b[64];
            if (v.missing) {
                /* an empty field */
            } else if (cols[q].kind == COL_INT) {
                fprintf(f, "%" PRId64, v.i);
            } else if (cols[q].kind == COL_NUM) {
                fmt_num(v.d, b, sizeof b);
                fputs(b, f);
            } else {
                cb_csv_field(f, v.s);
            }
            free(v.owned);
        }
        fputc('\n', f);
    }
    free_columns(e, &cols, &names);
    int bad = ferror(f);
    if (fclose(f) || bad || rc) {
        remove(tmp);
        return rc ? rc : CB_FAIL(err, CB_ERR_IO, "%s: write failed", tmp);
    }
    if (rename(tmp, path)) {
        rc = CB_FAIL(err, CB_ERR_IO, "%s: cannot rename to %s: %s", tmp, path, strerror(errno));
        remove(tmp);
        return rc;
    }
    return CB_OK;
}

/* index.h5: one compound dataset /runs, every member 8 bytes (char *, int64 or
 * double) so the in-memory rows are naturally aligned. */
static int write_h5(const cb_experiment *e, const run_state *states, cb_error *err)
{
    char path[4096], tmp[4400];
    snprintf(path, sizeof path, "%s/index.h5", e->output);
    tmp_name(path, tmp, sizeof tmp);
    index_col *cols = NULL;
    char **names = NULL;
    int ncols = 0;
    int rc = columns(e, &cols, &ncols, &names, err);
    size_t rowsize = 8 * (size_t)ncols;
    unsigned char *buf = rc ? NULL : cb_calloc((size_t)e->nruns * rowsize + 8, 1);
    char **owned = rc ? NULL : cb_calloc((size_t)e->nruns * (size_t)ncols + 1, sizeof *owned); /* cells' strings */
    if (!rc && (!buf || !owned)) rc = CB_FAIL(err, CB_ERR_NOMEM, "out of memory");
    if (rc) goto out;
    for (long i = 0; i < e->nruns; i++) {
        unsigned char *row = buf + (size_t)i * rowsize;
        for (int q = 0; q < ncols; q++) {
            cell v;
            if ((rc = cell_of(e, i, &states[i], &cols[q], &v, err))) goto out;
            owned[(size_t)i * (size_t)ncols + (size_t)q] = v.owned;
            unsigned char *at = row + 8 * (size_t)q; /* every member 8 bytes */
            if (cols[q].kind == COL_INT) memcpy(at, &v.i, 8);
            else if (cols[q].kind == COL_NUM) memcpy(at, &v.d, 8);
            else memcpy(at, &v.s, sizeof v.s);
        }
    }
    H5Eset_auto(H5E_DEFAULT, NULL, NULL);
    hid_t strt = H5Tcopy(H5T_C_S1);
    H5Tset_size(strt, H5T_VARIABLE);
    H5Tset_cset(strt, H5T_CSET_UTF8);
    hid_t ct = H5Tcreate(H5T_COMPOUND, rowsize);
    for (int q = 0; q < ncols && ct >= 0; q++) {
        hid_t t = cols[q].kind == COL_STR ? strt : cols[q].kind == COL_INT ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE;
        if (H5Tinsert(ct, cols[q].name, 8 * (size_t)q, t) < 0) {
            rc = CB_FAIL(err, CB_ERR_INPUT, "%s: index.h5: cannot add the column '%s' (a grid key with a "
                         "reserved name?)", e->path, cols[q].name);
            break;
        }
    }
    if (!rc) {
        hid_t f = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        if (f < 0) {
            rc = CB_FAIL(err, CB_ERR_IO, "%s: cannot create", tmp);
        } else {
            hsize_t dims[1] = {(hsize_t)e->nruns};
            hid_t sp = H5Screate_simple(1, dims, NULL);
            hid_t d = H5Dcreate2(f, "runs", ct, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
            if (d < 0 || (e->nruns > 0 && H5Dwrite(d, ct, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0))
                rc = CB_FAIL(err, CB_ERR_INTERNAL, "%s: cannot write the index table", tmp);
            if (d >= 0) {
                hid_t as = H5Screate(H5S_SCALAR);
                const char *attrs[2][2] = {{"experiment", e->path}, {"name", e->name}};
                for (int q = 0; q < 2; q++) {
                    hid_t a = H5Acreate2(d, attrs[q][0], strt, as, H5P_DEFAULT, H5P_DEFAULT);
                    if (a >= 0) {
                        H5Awrite(a, strt, &attrs[q][1]);
                        H5Aclose(a);
                    }
                }
                H5Sclose(as);
                H5Dclose(d);
            }
            H5Sclose(sp);
            if (H5Fclose(f) < 0 && !rc) rc = CB_FAIL(err, CB_ERR_IO, "%s: cannot close", tmp);
            if (!rc && rename(tmp, path)) rc = CB_FAIL(err, CB_ERR_IO, "%s: cannot rename: %s", tmp, strerror(errno));
            if (rc) remove(tmp);
        }
    }
    if (ct >= 0) H5Tclose(ct);
    H5Tclose(strt);
out:
    if (owned)
        for (size_t k = 0; k < (size_t)e->nruns * (size_t)ncols; k++) free(owned[k]);
    free(owned);
    free(buf);
    free_columns(e, &cols, &names);
    return rc;
}

/* An exclusive flock on <output>/.index-lock (blocking: index writes are short), so two
 * shards writing the index at once are serialized. Returns the descriptor, -1 on error. */
static int lock_index(const cb_experiment *e, cb_error *err)
{
    char p[4400];
    snprintf(p, sizeof p, "%s/.index-lock", e->output);
    int fd = open(p, O_RDWR | O_CREAT, 0666);
    if (fd < 0) {
        CB_FAIL(err, CB_ERR_IO, "%s: cannot open the index lock: %s", p, strerror(errno));
        return -1;
    }
    while (flock(fd, LOCK_EX) != 0)
        if (errno != EINTR) {
            CB_FAIL(err, CB_ERR_IO, "%s: cannot lock: %s", p, strerror(errno));
            close(fd);
            return -1;
        }
    return fd;
}

static void unlock_index(int fd)
{
    flock(fd, LOCK_UN);
    close(fd);
}

static int write_locked(const cb_experiment *e, run_state *states, int fresh, cb_error *err)
{
    int rc = cb_mkdir_p(e->output, err);
    if (rc) return rc;
    int fd = lock_index(e, err);
    if (fd < 0) return err ? err->status : CB_ERR_IO;
    if (fresh)
        for (long i = 0; i < e->nruns; i++) cb_sweep_refresh(e, &e->runs[i], &states[i]);
    rc = write_csv(e, states, err);
    if (!rc) rc = write_h5(e, states, err);
    unlock_index(fd);
    return rc;
}

int cb_sweep_write_index_states(const cb_experiment *e, const run_state *states, cb_error *err)
{
    return write_locked(e, (run_state *)states, 0, err);
}

int cb_sweep_write_index_fresh(const cb_experiment *e, run_state *states, cb_error *err)
{
    return write_locked(e, states, 1, err);
}

int cb_sweep_write_index(const cb_experiment *e, cb_error *err)
{
    if (!e) return CB_FAIL(err, CB_ERR_INPUT, "cb_sweep_write_index: NULL experiment");
    run_state *states = cb_calloc((size_t)e->nruns + 1, sizeof *states);
    if (!states) return CB_FAIL(err, CB_ERR_NOMEM, "out of memory");
    for (long i = 0; i < e->nruns; i++) cb_sweep_refresh(e, &e->runs[i], &states[i]);
    int rc = cb_sweep_write_index_states(e, states, err);
    free(states);
    return rc;
}
