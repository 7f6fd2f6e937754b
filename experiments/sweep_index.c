/* experiments/sweep_index.c — the sweep's index, index.csv and index.h5, rebuilt from the run
 * files and written to a temporary name then renamed (sweep_internal.h). */
#define _DEFAULT_SOURCE /* flock(2) */
#include "experiments/sweep_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <math.h>
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

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
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

enum { COL_STR, COL_INT, COL_NUM };
#define NUM_COLS 10
static const char *const num_names[NUM_COLS] = {"t_end", "energy_drift", "energy_drift_rel", "momentum_drift",
                                                "max_penetration_depth", "max_self_intersections",
                                                "min_separation", "max_strain", "mean_ms_per_step", NULL};

static void summary_nums(const run_state *st, double v[9])
{
    if (!st->have) {
        for (int i = 0; i < 9; i++) v[i] = NAN;
        return;
    }
    const cb_run_summary *s = &st->s;
    v[0] = s->t_end;
    v[1] = s->energy_drift;
    v[2] = s->energy_drift_rel;
    v[3] = s->momentum_drift;
    v[4] = s->max_penetration_depth;
    v[5] = s->max_self_intersections;
    v[6] = s->min_separation;
    v[7] = s->max_strain;
    v[8] = s->mean_ms_per_step;
}

/* The yardstick columns, after `created` (README "What the contact stage hides"). */
#define YARD_COLS 8
static const char *const yard_names[YARD_COLS] = {"energy_peak", "max_vertex_penetration_depth",
                                                  "max_contact_depth_corrected", "contact_work",
                                                  "contact_work_added", "self_crossings",
                                                  "collider_crossings", "audit_ms_per_step"};

static void yard_nums(const run_state *st, double v[YARD_COLS])
{
    const cb_run_summary *s = &st->s;
    double w[YARD_COLS] = {s->energy_peak, s->max_vertex_penetration_depth, s->max_contact_depth_corrected,
                           s->contact_work, s->contact_work_added, s->self_crossings, s->collider_crossings,
                           s->audit_ms_per_step};
    for (int i = 0; i < YARD_COLS; i++) v[i] = st->have ? w[i] : NAN;
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

/* Columns after self_collision and model: the commit that made the run, the check, and per key of
 * a solver's parameters (solvers.X.k) the value the run's solver used for k. */
static int n_effective(const cb_experiment *e)
{
    int n = 0;
    for (int k = 0; k < e->nkeys; k++) n += e->keys[k].solver != NULL;
    return n;
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
    FILE *f = fopen(tmp, "w");
    if (!f) return CB_FAIL(err, CB_ERR_IO, "%s: cannot write: %s", tmp, strerror(errno));
    fputs("run,file,scene,solver,repeat", f);
    for (int k = 0; k < e->nkeys; k++) {
        fputc(',', f);
        cb_csv_field(f, e->keys[k].path);
    }
    fputs(",status,message,steps", f);
    for (int i = 0; i < 9; i++) fprintf(f, ",%s", num_names[i]);
    fputs(",scene_path,frames,energy_start,energy_end,max_collider_penetrations,created", f);
    for (int i = 0; i < YARD_COLS; i++) fprintf(f, ",%s", yard_names[i]);
    fputs(",self_collision,model,git_commit,checked", f);
    for (int k = 0; k < e->nkeys; k++) {
        if (!e->keys[k].solver) continue;
        char name[600];
        snprintf(name, sizeof name, "effective:%s", e->keys[k].path);
        fputc(',', f);
        cb_csv_field(f, name);
    }
    fputc('\n', f);
    char b[64];
    for (long i = 0; i < e->nruns; i++) {
        const cb_sweep_run *r = &e->runs[i];
        const run_state *st = &states[i];
        fprintf(f, "%ld,", r->index);
        char file[600];
        snprintf(file, sizeof file, "%s.h5", r->name);
        cb_csv_field(f, file);
        fputc(',', f);
        cb_csv_field(f, e->scene_stems[r->scene]);
        fputc(',', f);
        cb_csv_field(f, e->solvers[r->solver]);
        fprintf(f, ",%d", r->repeat);
        for (int k = 0; k < e->nkeys; k++) {
            fputc(',', f);
            if (r->value[k] >= 0) cb_csv_field(f, e->keys[k].values[r->value[k]]);
        }
        fputc(',', f);
        cb_csv_field(f, cb_sweep_row_status(st));
        fputc(',', f);
        cb_csv_field(f, cb_sweep_row_message(st));
        if (st->have) fprintf(f, ",%ld", st->s.steps);
        else fputc(',', f);
        double v[9];
        summary_nums(st, v);
        for (int q = 0; q < 9; q++) {
            fputc(',', f);
            if (st->have) {
                fmt_num(v[q], b, sizeof b);
                fputs(b, f);
            }
        }
        fputc(',', f);
        cb_csv_field(f, e->scenes[r->scene]);
        if (st->have) {
            fprintf(f, ",%ld", st->s.frames);
            double w[3] = {st->s.energy_start, st->s.energy_end, st->s.max_collider_penetrations};
            for (int q = 0; q < 3; q++) {
                fmt_num(w[q], b, sizeof b);
                fprintf(f, ",%s", b);
            }
            fputc(',', f);
            cb_csv_field(f, st->s.created);
        } else {
            fputs(",,,,,", f);
        }
        double y[YARD_COLS];
        yard_nums(st, y);
        for (int q = 0; q < YARD_COLS; q++) {
            fputc(',', f);
            if (st->have) {
                fmt_num(y[q], b, sizeof b);
                fputs(b, f);
            }
        }
        fputc(',', f);
        if (st->have) cb_csv_field(f, st->s.self_collision);
        fputc(',', f);
        if (st->have) cb_csv_field(f, st->s.model);
        fputc(',', f);
        if (st->have) cb_csv_field(f, st->s.git_commit);
        fputc(',', f);
        cb_csv_field(f, st->checked);
        for (int k = 0; k < e->nkeys; k++) {
            if (!e->keys[k].solver) continue;
            char *v = effective_value(&e->keys[k], st);
            fputc(',', f);
            cb_csv_field(f, v ? v : "");
            free(v);
        }
        fputc('\n', f);
    }
    int bad = ferror(f);
    if (fclose(f) || bad) {
        remove(tmp);
        return CB_FAIL(err, CB_ERR_IO, "%s: write failed", tmp);
    }
    if (rename(tmp, path)) {
        int rc = CB_FAIL(err, CB_ERR_IO, "%s: cannot rename to %s: %s", tmp, path, strerror(errno));
        remove(tmp);
        return rc;
    }
    return CB_OK;
}

static const char *nonnull(const char *s) { return s ? s : ""; }

/* index.h5: one compound dataset /runs, every member 8 bytes (char *, int64 or
 * double) so the in-memory rows are naturally aligned. */
static int write_h5(const cb_experiment *e, const run_state *states, cb_error *err)
{
    char path[4096], tmp[4400];
    snprintf(path, sizeof path, "%s/index.h5", e->output);
    tmp_name(path, tmp, sizeof tmp);
    int neff = n_effective(e);
    int ncols = 5 + e->nkeys + 3 + 9 + 6 + YARD_COLS + 4 + neff;
    const char **names = cb_calloc((size_t)ncols, sizeof *names);
    int *kinds = cb_calloc((size_t)ncols, sizeof *kinds);
    size_t rowsize = 8 * (size_t)ncols;
    unsigned char *buf = cb_calloc((size_t)e->nruns * rowsize + 8, 1);
    char **owned = cb_calloc((size_t)e->nruns * (size_t)(1 + neff) + 1, sizeof *owned); /* "name.h5", values */
    char **effnames = cb_calloc((size_t)neff + 1, sizeof *effnames);
    int rc = CB_OK;
    if (!names || !kinds || !buf || !owned || !effnames) {
        rc = CB_FAIL(err, CB_ERR_NOMEM, "out of memory");
        goto out;
    }
    int c = 0;
    names[c] = "run"; kinds[c++] = COL_INT;
    names[c] = "file"; kinds[c++] = COL_STR;
    names[c] = "scene"; kinds[c++] = COL_STR;
    names[c] = "solver"; kinds[c++] = COL_STR;
    names[c] = "repeat"; kinds[c++] = COL_INT;
    for (int k = 0; k < e->nkeys; k++) { names[c] = e->keys[k].path; kinds[c++] = COL_STR; }
    names[c] = "status"; kinds[c++] = COL_STR;
    names[c] = "message"; kinds[c++] = COL_STR;
    names[c] = "steps"; kinds[c++] = COL_INT;
    for (int q = 0; q < 9; q++) { names[c] = num_names[q]; kinds[c++] = COL_NUM; }
    names[c] = "scene_path"; kinds[c++] = COL_STR;
    names[c] = "frames"; kinds[c++] = COL_INT;
    names[c] = "energy_start"; kinds[c++] = COL_NUM;
    names[c] = "energy_end"; kinds[c++] = COL_NUM;
    names[c] = "max_collider_penetrations"; kinds[c++] = COL_NUM;
    names[c] = "created"; kinds[c++] = COL_STR;
    for (int q = 0; q < YARD_COLS; q++) { names[c] = yard_names[q]; kinds[c++] = COL_NUM; }
    names[c] = "self_collision"; kinds[c++] = COL_STR;
    names[c] = "model"; kinds[c++] = COL_STR;
    names[c] = "git_commit"; kinds[c++] = COL_STR;
    names[c] = "checked"; kinds[c++] = COL_STR;
    for (int k = 0, j = 0; k < e->nkeys; k++) {
        if (!e->keys[k].solver) continue;
        size_t len = strlen(e->keys[k].path) + 11;
        if (!(effnames[j] = cb_calloc(len, 1))) {
            rc = CB_FAIL(err, CB_ERR_NOMEM, "out of memory");
            goto out;
        }
        snprintf(effnames[j], len, "effective:%s", e->keys[k].path);
        names[c] = effnames[j++]; kinds[c++] = COL_STR;
    }
    CB_ASSERT(c == ncols);

    static const char empty[] = "";
    for (long i = 0; i < e->nruns; i++) {
        const cb_sweep_run *r = &e->runs[i];
        const run_state *st = &states[i];
        unsigned char *row = buf + (size_t)i * rowsize;
        size_t len = strlen(r->name) + 4;
        char **mine = owned + (size_t)i * (size_t)(1 + neff); /* this row's strings */
        owned[(size_t)i * (size_t)(1 + neff)] = cb_calloc(len, 1);
        if (!mine[0]) {
            rc = CB_FAIL(err, CB_ERR_NOMEM, "out of memory");
            goto out;
        }
        snprintf(mine[0], len, "%s.h5", r->name);
        double v[9];
        summary_nums(st, v);
        int col = 0;
        int64_t iv;
        double dv;
        const char *sv;
#define PUT_I(x) do { iv = (int64_t)(x); memcpy(row + 8 * (size_t)col++, &iv, 8); } while (0)
#define PUT_D(x) do { dv = (x); memcpy(row + 8 * (size_t)col++, &dv, 8); } while (0)
#define PUT_S(x) do { sv = nonnull(x); memcpy(row + 8 * (size_t)col++, &sv, sizeof sv); } while (0)
        PUT_I(r->index);
        PUT_S(mine[0]);
        PUT_S(e->scene_stems[r->scene]);
        PUT_S(e->solvers[r->solver]);
        PUT_I(r->repeat);
        for (int k = 0; k < e->nkeys; k++) PUT_S(r->value[k] >= 0 ? e->keys[k].values[r->value[k]] : empty);
        PUT_S(cb_sweep_row_status(st));
        PUT_S(cb_sweep_row_message(st));
        PUT_I(st->have ? st->s.steps : -1);
        for (int q = 0; q < 9; q++) PUT_D(v[q]);
        PUT_S(e->scenes[r->scene]);
        PUT_I(st->have ? st->s.frames : -1);
        PUT_D(st->have ? st->s.energy_start : NAN);
        PUT_D(st->have ? st->s.energy_end : NAN);
        PUT_D(st->have ? st->s.max_collider_penetrations : NAN);
        PUT_S(st->have ? st->s.created : empty);
        double y[YARD_COLS];
        yard_nums(st, y);
        for (int q = 0; q < YARD_COLS; q++) PUT_D(y[q]);
        PUT_S(st->have ? st->s.self_collision : empty);
        PUT_S(st->have ? st->s.model : empty);
        PUT_S(st->have ? st->s.git_commit : empty);
        PUT_S(st->checked);
        for (int k = 0, j = 1; k < e->nkeys; k++) {
            if (!e->keys[k].solver) continue;
            if (!(mine[j] = effective_value(&e->keys[k], st))) {
                rc = CB_FAIL(err, CB_ERR_NOMEM, "out of memory");
                goto out;
            }
            PUT_S(mine[j++]);
        }
#undef PUT_I
#undef PUT_D
#undef PUT_S
    }
    H5Eset_auto(H5E_DEFAULT, NULL, NULL);
    hid_t strt = H5Tcopy(H5T_C_S1);
    H5Tset_size(strt, H5T_VARIABLE);
    H5Tset_cset(strt, H5T_CSET_UTF8);
    hid_t ct = H5Tcreate(H5T_COMPOUND, rowsize);
    for (int q = 0; q < ncols && ct >= 0; q++) {
        hid_t t = kinds[q] == COL_STR ? strt : kinds[q] == COL_INT ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE;
        if (H5Tinsert(ct, names[q], 8 * (size_t)q, t) < 0) {
            rc = CB_FAIL(err, CB_ERR_INPUT, "%s: index.h5: cannot add the column '%s' (a grid key with a "
                         "reserved name?)", e->path, names[q]);
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
        for (long i = 0; i < e->nruns * (long)(1 + neff); i++) free(owned[i]);
    free(owned);
    if (effnames)
        for (int j = 0; j < neff; j++) free(effnames[j]);
    free(effnames);
    free(buf);
    free(kinds);
    free(names);
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
