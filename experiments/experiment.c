/* experiments/experiment.c — experiment files (sweep.h): the grid's encoding into run names, loading,
 * expansion into runs and each run's --set overrides. */
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

#define NAME_MAX_LEN 240

/* ---------------------------------------------------------------- encoding */

static int plain_char(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
}

static int upper_hex(unsigned char c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F'); }

int cb_sweep_encode(const char *text, char *out, size_t n, cb_error *err)
{
    if (!text || !out || n == 0) return CB_FAIL(err, CB_ERR_INPUT, "cb_sweep_encode: NULL argument");
    static const char hex[] = "0123456789ABCDEF";
    const unsigned char *s = (const unsigned char *)text;
    size_t k = 0, len = strlen(text);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = s[i];
        /* an underscore stays literal between plain characters, unless two upper-case hex
         * digits follow it (it would read as an escape) */
        int keep = plain_char(c) ||
                   (c == '_' && i > 0 && i + 1 < len && plain_char(s[i + 1]) &&
                    !(upper_hex(s[i + 1]) && i + 2 < len && upper_hex(s[i + 2])));
        if (keep) {
            if (k + 1 >= n) goto full;
            out[k++] = (char)c;
        } else {
            if (k + 3 >= n) goto full;
            out[k++] = '_';
            out[k++] = hex[c >> 4];
            out[k++] = hex[c & 15];
        }
    }
    out[k] = '\0';
    return CB_OK;
full:
    out[0] = '\0';
    return CB_FAIL(err, CB_ERR_INPUT, "'%.200s' is too long for a run name", text);
}

/* Labels only need to be file-name safe (they are the same for every run of one
 * scene and solver); keep '_' so "frame_rate" stays readable. */
static void label_safe(const char *text, char *out, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t k = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p && k + 4 < n; p++) {
        if (plain_char(*p) || *p == '_') {
            out[k++] = (char)*p;
        } else {
            out[k++] = '_';
            out[k++] = hex[*p >> 4];
            out[k++] = hex[*p & 15];
        }
    }
    out[k] = '\0';
}

/* ---------------------------------------------------------------- loading */

static void free_strs(char **v, int n)
{
    if (!v) return;
    for (int i = 0; i < n; i++) free(v[i]);
    free(v);
}

void cb_experiment_free(cb_experiment **pe)
{
    if (!pe || !*pe) return;
    cb_experiment *e = *pe;
    free(e->path);
    free(e->name);
    free(e->output);
    free(e->reference);
    free_strs(e->scenes, e->nscenes);
    free_strs(e->scene_stems, e->nscenes);
    free_strs(e->solvers, e->nsolvers);
    free_strs(e->sets, e->nsets);
    free_strs(e->set_solver, e->nsets);
    for (int k = 0; k < e->nkeys; k++) {
        free(e->keys[k].path);
        free(e->keys[k].solver);
        free(e->keys[k].label);
        free_strs(e->keys[k].values, e->keys[k].nvalues);
        free_strs(e->keys[k].set_values, e->keys[k].nvalues);
    }
    free(e->keys);
    for (long i = 0; i < e->nruns; i++) {
        free(e->runs[i].value);
        free(e->runs[i].name);
    }
    free(e->runs);
    free(e);
    *pe = NULL;
}

/* The value as text: the scalar, or flow YAML for lists and maps. */
char *cb_sweep_value_text(const cb_yaml *v)
{
    if (v->kind == CB_YAML_SCALAR) return cb_strdup(v->scalar ? v->scalar : "");
    return cb_yaml_emit_flow(v);
}

/* The value as --set text: quoted scalars stay strings. */
static char *value_set_text(const cb_yaml *v)
{
    if (v->kind != CB_YAML_SCALAR || !v->quoted) return cb_sweep_value_text(v);
    const char *s = v->scalar ? v->scalar : "";
    size_t n = strlen(s);
    char *out = cb_calloc(2 * n + 3, 1);
    if (!out) return NULL;
    size_t k = 0;
    out[k++] = '"';
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"' || s[i] == '\\') out[k++] = '\\';
        out[k++] = s[i];
    }
    out[k++] = '"';
    return out;
}

/* "solvers.X.rest" -> malloc'd "X"; NULL otherwise. */
static char *path_solver(const char *path)
{
    if (strncmp(path, "solvers.", 8) != 0) return NULL;
    const char *s = path + 8, *dot = strchr(s, '.');
    size_t n = dot ? (size_t)(dot - s) : strlen(s);
    if (n == 0) return NULL;
    char *out = cb_calloc(n + 1, 1);
    if (out) memcpy(out, s, n);
    return out;
}

static int push_str(char ***v, int *n, char *s)
{
    if (!s) return CB_ERR_NOMEM;
    char **nv = realloc(*v, (size_t)(*n + 1) * sizeof *nv);
    if (!nv) {
        free(s);
        return CB_ERR_NOMEM;
    }
    nv[(*n)++] = s;
    *v = nv;
    return CB_OK;
}

static char *path_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return cb_strdup(".");
    size_t n = (size_t)(slash - path);
    if (n == 0) n = 1;
    char *d = cb_calloc(n + 1, 1);
    if (d) memcpy(d, path, n);
    return d;
}

static char *path_stem(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    char *s = cb_strdup(base);
    if (!s) return NULL;
    char *dot = strrchr(s, '.');
    if (dot && dot != s) *dot = '\0';
    return s;
}

static int add_scene(cb_experiment *e, const cb_yaml *node, const char *dir, cb_error *err)
{
    char w[512];
    if (node->kind != CB_YAML_SCALAR || !node->scalar || !node->scalar[0])
        return CB_FAIL(err, CB_ERR_INPUT, "%s: scenes: expected a scene file path",
                       cb_yaml_where(node, e->path, w, sizeof w));
    const char *p = node->scalar;
    char *resolved = NULL;
    if (p[0] == '/' || access(p, R_OK) == 0) {
        resolved = cb_strdup(p);
    } else {
        size_t n = strlen(dir) + strlen(p) + 2;
        resolved = cb_calloc(n, 1);
        if (resolved) snprintf(resolved, n, "%s/%s", dir, p);
    }
    if (!resolved) return CB_FAIL(err, CB_ERR_NOMEM, "out of memory");
    if (access(resolved, R_OK) != 0) {
        free(resolved);
        return CB_FAIL(err, CB_ERR_INPUT, "%s: scene file '%s' not found (looked in the current folder and in %s)",
                       cb_yaml_where(node, e->path, w, sizeof w), p, dir);
    }
    char *stem = path_stem(resolved);
    for (int i = 0; stem && i < e->nscenes; i++)
        if (!strcmp(e->scene_stems[i], stem)) {
            int rc = CB_FAIL(err, CB_ERR_INPUT,
                             "%s: scenes: '%s' and '%s' have the same file name stem '%s', which would give "
                             "their runs the same names; rename one",
                             cb_yaml_where(node, e->path, w, sizeof w), e->scenes[i], resolved, stem);
            free(stem);
            free(resolved);
            return rc;
        }
    int nsc = e->nscenes;
    if (push_str(&e->scenes, &e->nscenes, resolved) || push_str(&e->scene_stems, &nsc, stem))
        return CB_FAIL(err, CB_ERR_NOMEM, "out of memory");
    return CB_OK;
}

static int add_solver(cb_experiment *e, const char *name, const cb_yaml *node, cb_error *err)
{
    char w[512];
    if (!cb_solver_find(name))
        return CB_FAIL(err, CB_ERR_INPUT, "%s: solvers: unknown solver '%s'; available: %s (or `solvers: all`)",
                       cb_yaml_where(node, e->path, w, sizeof w), name, cb_solver_names());
    for (int i = 0; i < e->nsolvers; i++)
        if (!strcmp(e->solvers[i], name))
            return CB_FAIL(err, CB_ERR_INPUT, "%s: solvers: '%s' is listed twice",
                           cb_yaml_where(node, e->path, w, sizeof w), name);
    if (push_str(&e->solvers, &e->nsolvers, cb_strdup(name))) return CB_FAIL(err, CB_ERR_NOMEM, "out of memory");
    return CB_OK;
}

static int add_set(cb_experiment *e, const char *path, const char *value, cb_error *err)
{
    size_t n = strlen(path) + strlen(value) + 2;
    char *s = cb_calloc(n, 1);
    if (!s) return CB_FAIL(err, CB_ERR_NOMEM, "out of memory");
    snprintf(s, n, "%s=%s", path, value);
    int ns = e->nsets;
    char *solver = path_solver(path);
    if (push_str(&e->sets, &e->nsets, s)) return CB_FAIL(err, CB_ERR_NOMEM, "out of memory");
    char **nv = realloc(e->set_solver, (size_t)(ns + 1) * sizeof *nv);
    if (!nv) {
        free(solver);
        return CB_FAIL(err, CB_ERR_NOMEM, "out of memory");
    }
    nv[ns] = solver;
    e->set_solver = nv;
    return CB_OK;
}

/* Last n dot-separated components of s (the whole of s if it has fewer). */
static const char *suffix_comps(const char *s, int n)
{
    const char *p = s + strlen(s);
    int seen = 0;
    while (p > s) {
        p--;
        if (*p == '.' && ++seen == n) return p + 1;
    }
    return s;
}

static int count_comps(const char *s)
{
    int n = 1;
    for (; *s; s++) n += *s == '.';
    return n;
}

/* The key path without a leading "solvers.X." */
static const char *key_tail(const cb_sweep_key *k)
{
    if (!k->solver) return k->path;
    const char *t = k->path + 8 + strlen(k->solver);
    return *t == '.' ? t + 1 : k->path;
}

static int make_labels(cb_experiment *e, cb_error *err)
{
    for (int i = 0; i < e->nkeys; i++) {
        cb_sweep_key *ki = &e->keys[i];
        const char *ti = key_tail(ki);
        const char *label = ki->path;
        int nc = count_comps(ti);
        for (int n = 1; n <= nc; n++) {
            const char *si = suffix_comps(ti, n);
            int clash = 0;
            for (int j = 0; j < e->nkeys && !clash; j++) {
                const cb_sweep_key *kj = &e->keys[j];
                if (j == i) continue;
                if (ki->solver && kj->solver && strcmp(ki->solver, kj->solver)) continue; /* never together */
                if (!strcmp(suffix_comps(key_tail(kj), n), si)) clash = 1;
            }
            if (!clash) {
                label = si;
                break;
            }
        }
        char buf[512];
        label_safe(label, buf, sizeof buf);
        ki->label = cb_strdup(buf);
        if (!ki->label) return CB_FAIL(err, CB_ERR_NOMEM, "out of memory");
    }
    return CB_OK;
}

static int key_applies(const cb_sweep_key *k, const char *solver)
{
    return !k->solver || !strcmp(k->solver, solver);
}

static int build_name(const cb_experiment *e, const cb_sweep_run *r, cb_error *err)
{
    char buf[4096], enc[2048];
    size_t k = 0;
    int rc = cb_sweep_encode(e->scene_stems[r->scene], enc, sizeof enc, err);
    if (rc) return rc;
    k += (size_t)snprintf(buf + k, sizeof buf - k, "%s", enc);
    if ((rc = cb_sweep_encode(e->solvers[r->solver], enc, sizeof enc, err))) return rc;
    k += (size_t)snprintf(buf + k, sizeof buf - k, "__%s", enc);
    for (int i = 0; i < e->nkeys && k < sizeof buf; i++) {
        if (r->value[i] < 0) continue;
        if ((rc = cb_sweep_encode(e->keys[i].values[r->value[i]], enc, sizeof enc, err))) return rc;
        k += (size_t)snprintf(buf + k, sizeof buf - k, "__%s=%s", e->keys[i].label, enc);
    }
    if (k < sizeof buf) k += (size_t)snprintf(buf + k, sizeof buf - k, "__r%d", r->repeat);
    if (k >= NAME_MAX_LEN)
        return CB_FAIL(err, CB_ERR_INPUT,
                       "%s: the run name '%.120s...' would be %zu characters long (at most %d): use shorter grid "
                       "values or keys", e->path, buf, k, NAME_MAX_LEN);
    ((cb_sweep_run *)r)->name = cb_strdup(buf);
    return r->name ? CB_OK : CB_FAIL(err, CB_ERR_NOMEM, "out of memory");
}

static int expand(cb_experiment *e, cb_error *err)
{
    long total = 0;
    for (int v = 0; v < e->nsolvers; v++) {
        long c = e->repeats;
        for (int k = 0; k < e->nkeys; k++)
            if (key_applies(&e->keys[k], e->solvers[v])) c *= e->keys[k].nvalues;
        total += c;
    }
    total *= e->nscenes;
    if (total > 10000000L) return CB_FAIL(err, CB_ERR_INPUT, "%s: the grid has %ld runs: too many", e->path, total);
    e->runs = cb_calloc((size_t)total + 1, sizeof *e->runs);
    if (!e->runs) return CB_FAIL(err, CB_ERR_NOMEM, "out of memory");
    int *odo = cb_calloc((size_t)e->nkeys + 1, sizeof *odo);
    if (!odo) return CB_FAIL(err, CB_ERR_NOMEM, "out of memory");
    long idx = 0;
    int rc = CB_OK;
    for (int s = 0; s < e->nscenes && !rc; s++)
        for (int v = 0; v < e->nsolvers && !rc; v++) {
            for (int k = 0; k < e->nkeys; k++) odo[k] = key_applies(&e->keys[k], e->solvers[v]) ? 0 : -1;
            for (;;) {
                for (int r = 0; r < e->repeats && !rc; r++) {
                    cb_sweep_run *run = &e->runs[idx];
                    run->index = idx;
                    run->scene = s;
                    run->solver = v;
                    run->repeat = r;
                    run->value = cb_calloc((size_t)e->nkeys + 1, sizeof *run->value);
                    e->nruns = ++idx;
                    if (!run->value) {
                        rc = CB_FAIL(err, CB_ERR_NOMEM, "out of memory");
                        break;
                    }
                    memcpy(run->value, odo, (size_t)e->nkeys * sizeof *odo);
                    rc = build_name(e, run, err);
                }
                if (rc) break;
                /* advance the odometer: the last applicable key fastest */
                int k = e->nkeys - 1;
                for (; k >= 0; k--) {
                    if (odo[k] < 0) continue;
                    if (++odo[k] < e->keys[k].nvalues) break;
                    odo[k] = 0;
                }
                if (k < 0) break;
            }
        }
    free(odo);
    return rc;
}

int cb_experiment_load(const char *path, const char *output, const char *const *extra_sets, int nextra,
                       cb_experiment **out, cb_error *err)
{
    if (!path || !out) return CB_FAIL(err, CB_ERR_INPUT, "cb_experiment_load: NULL argument");
    if (nextra > 0 && !extra_sets) return CB_FAIL(err, CB_ERR_INPUT, "cb_experiment_load: NULL extra_sets");
    *out = NULL;
    cb_yaml *root = NULL;
    int rc = cb_yaml_load_file(path, &root, err);
    if (rc) return rc;
    char w[512];
    cb_keys *keys = NULL;
    cb_experiment *e = cb_calloc(1, sizeof *e);
    char *dir = path_dir(path);
    if (!e || !dir) {
        rc = CB_FAIL(err, CB_ERR_NOMEM, "out of memory");
        goto done;
    }
    e->path = cb_strdup(path);
    if (!root || root->kind != CB_YAML_MAP) {
        rc = CB_FAIL(err, CB_ERR_INPUT, "%s: expected a map with scenes, solvers, set, grid, repeats",
                     cb_yaml_where(root, path, w, sizeof w));
        goto done;
    }
    /* the keys asked of the file's map are the allowed ones (core/params.h, cb_keys) */
    if ((rc = cb_keys_create(&keys, err))) goto done;
    cb_keys_ask(keys, root, "description"); /* free text for the reader, not used */

    const cb_yaml *n = cb_keys_ask(keys, root, "name");
    if (n && (n->kind != CB_YAML_SCALAR || !n->scalar || !n->scalar[0])) {
        rc = CB_FAIL(err, CB_ERR_INPUT, "%s: name: expected a name", cb_yaml_where(n, path, w, sizeof w));
        goto done;
    }
    e->name = n ? cb_strdup(n->scalar) : path_stem(path);
    const cb_yaml *o = cb_keys_ask(keys, root, "output");
    if (o && (o->kind != CB_YAML_SCALAR || !o->scalar || !o->scalar[0])) {
        rc = CB_FAIL(err, CB_ERR_INPUT, "%s: output: expected a folder", cb_yaml_where(o, path, w, sizeof w));
        goto done;
    }
    if (output) {
        e->output = cb_strdup(output);
    } else if (o) {
        e->output = cb_strdup(o->scalar);
    } else {
        char enc[512];
        label_safe(e->name ? e->name : "experiment", enc, sizeof enc);
        size_t len = strlen(enc) + 6;
        e->output = cb_calloc(len, 1);
        if (e->output) snprintf(e->output, len, "runs/%s", enc);
    }
    /* reference: a reference run file (relative to the working folder) every run logs
     * position_error against (run --reference) */
    const cb_yaml *rf = cb_keys_ask(keys, root, "reference");
    if (rf && (rf->kind != CB_YAML_SCALAR || !rf->scalar || !rf->scalar[0])) {
        rc = CB_FAIL(err, CB_ERR_INPUT, "%s: reference: expected a run file (clothbench reference)",
                     cb_yaml_where(rf, path, w, sizeof w));
        goto done;
    }
    if (rf && !(e->reference = cb_strdup(rf->scalar))) {
        rc = CB_FAIL(err, CB_ERR_NOMEM, "out of memory");
        goto done;
    }
    /* how the sweep makes a missing reference: clothbench reference's --method, --refine
     * and --max-check */
    const cb_yaml *rm = cb_keys_ask(keys, root, "reference_method");
    if (rm) {
        static const char *const methods[] = {"auto", "verlet", "ipc"};
        e->reference_method = -1;
        for (int k = 0; k < 3 && rm->kind == CB_YAML_SCALAR && rm->scalar; k++)
            if (!strcmp(rm->scalar, methods[k])) e->reference_method = k;
        if (e->reference_method < 0) {
            rc = CB_FAIL(err, CB_ERR_INPUT, "%s: reference_method: expected auto, verlet or ipc, got %s",
                         cb_yaml_where(rm, path, w, sizeof w), rm->scalar ? rm->scalar : "?");
            goto done;
        }
    }
    const cb_yaml *rq = cb_keys_ask(keys, root, "reference_refine");
    if (rq && (rc = cb_yaml_int(rq, path, "reference_refine", &e->reference_refine, err))) goto done;
    if (rq && e->reference_refine < 1) {
        rc = CB_FAIL(err, CB_ERR_INPUT, "%s: reference_refine: expected a whole number >= 1, got %s",
                     cb_yaml_where(rq, path, w, sizeof w), rq->scalar ? rq->scalar : "?");
        goto done;
    }
    const cb_yaml *rb = cb_keys_ask(keys, root, "reference_max_check");
    if (rb && (rc = cb_yaml_double(rb, path, "reference_max_check", &e->reference_max_check, err))) goto done;
    if (rb && !(e->reference_max_check > 0 && isfinite(e->reference_max_check))) {
        rc = CB_FAIL(err, CB_ERR_INPUT, "%s: reference_max_check: expected a distance > 0 in metres, got %s",
                     cb_yaml_where(rb, path, w, sizeof w), rb->scalar ? rb->scalar : "?");
        goto done;
    }
    if ((rm || rq || rb) && !rf) {
        rc = CB_FAIL(err, CB_ERR_INPUT, "%s: reference_method, reference_refine and reference_max_check say how the "
                     "sweep makes its reference: they need reference: PATH", path);
        goto done;
    }
    /* expect_diverged: true: a run that ends diverged is this experiment's result (a
     * stability map), finished like an ok one: not run again on resumption, not a
     * failure of the sweep's exit status */
    const cb_yaml *xd = cb_keys_ask(keys, root, "expect_diverged");
    if (xd && (rc = cb_yaml_bool(xd, path, "expect_diverged", &e->expect_diverged, err))) goto done;
    /* time_limit: S: the wall seconds one run may take (a stalled method ends
     * "interrupted", its message naming the limit, and the sweep goes on) */
    const cb_yaml *tl = cb_keys_ask(keys, root, "time_limit");
    if (tl && (rc = cb_yaml_double(tl, path, "time_limit", &e->time_limit, err))) goto done;
    if (tl && !(e->time_limit > 0 && e->time_limit < 1e9)) {
        rc = CB_FAIL(err, CB_ERR_INPUT, "%s: time_limit: expected seconds > 0, got %s",
                     cb_yaml_where(tl, path, w, sizeof w), tl->scalar ? tl->scalar : "?");
        goto done;
    }
    if (!e->name || !e->output || !e->path) {
        rc = CB_FAIL(err, CB_ERR_NOMEM, "out of memory");
        goto done;
    }

    /* scenes */
    const cb_yaml *sc = cb_keys_ask(keys, root, "scenes");
    if (!sc) {
        rc = CB_FAIL(err, CB_ERR_INPUT, "%s: missing key 'scenes' (a list of scene files)", path);
        goto done;
    }
    if (sc->kind == CB_YAML_SCALAR) {
        if ((rc = add_scene(e, sc, dir, err))) goto done;
    } else if (sc->kind == CB_YAML_SEQ && sc->n > 0) {
        for (int i = 0; i < sc->n; i++)
            if ((rc = add_scene(e, sc->items[i], dir, err))) goto done;
    } else {
        rc = CB_FAIL(err, CB_ERR_INPUT, "%s: scenes: expected a non-empty list of scene files",
                     cb_yaml_where(sc, path, w, sizeof w));
        goto done;
    }

    /* solvers */
    const cb_yaml *so = cb_keys_ask(keys, root, "solvers");
    if (!so) {
        rc = CB_FAIL(err, CB_ERR_INPUT, "%s: missing key 'solvers' (a list of solver names, or all)", path);
        goto done;
    }
    if (so->kind == CB_YAML_SCALAR && so->scalar && !strcmp(so->scalar, "all")) {
        for (int i = 0; i < cb_solver_count(); i++)
            if ((rc = add_solver(e, cb_solver_at(i)->name, so, err))) goto done;
    } else if (so->kind == CB_YAML_SCALAR && so->scalar && so->scalar[0]) {
        if ((rc = add_solver(e, so->scalar, so, err))) goto done;
    } else if (so->kind == CB_YAML_SEQ && so->n > 0) {
        for (int i = 0; i < so->n; i++) {
            const cb_yaml *it = so->items[i];
            if (it->kind != CB_YAML_SCALAR || !it->scalar) {
                rc = CB_FAIL(err, CB_ERR_INPUT, "%s: solvers: expected a solver name",
                             cb_yaml_where(it, path, w, sizeof w));
                goto done;
            }
            if ((rc = add_solver(e, it->scalar, it, err))) goto done;
        }
    } else {
        rc = CB_FAIL(err, CB_ERR_INPUT, "%s: solvers: expected a non-empty list of solver names, or all",
                     cb_yaml_where(so, path, w, sizeof w));
        goto done;
    }

    /* fixed overrides */
    const cb_yaml *st = cb_keys_ask(keys, root, "set");
    if (st && !(st->kind == CB_YAML_SCALAR && (!st->scalar || !st->scalar[0]))) {
        if (st->kind != CB_YAML_MAP) {
            rc = CB_FAIL(err, CB_ERR_INPUT, "%s: set: expected a map of KEY.PATH: value",
                         cb_yaml_where(st, path, w, sizeof w));
            goto done;
        }
        for (int i = 0; i < st->n; i++) {
            char *v = value_set_text(st->items[i]);
            if (!v) {
                rc = CB_FAIL(err, CB_ERR_NOMEM, "out of memory");
                goto done;
            }
            rc = add_set(e, st->keys[i], v, err);
            free(v);
            if (rc) goto done;
        }
    }
    for (int i = 0; i < nextra; i++) {
        const char *eq = extra_sets[i] ? strchr(extra_sets[i], '=') : NULL;
        if (!eq || eq == extra_sets[i]) {
            rc = CB_FAIL(err, CB_ERR_INPUT, "--set '%s': expected KEY.PATH=VALUE", extra_sets[i] ? extra_sets[i] : "");
            goto done;
        }
        char key[1024];
        snprintf(key, sizeof key, "%.*s", (int)(eq - extra_sets[i]), extra_sets[i]);
        if ((rc = add_set(e, key, eq + 1, err))) goto done;
    }

    /* grid */
    const cb_yaml *g = cb_keys_ask(keys, root, "grid");
    if (g && !(g->kind == CB_YAML_SCALAR && (!g->scalar || !g->scalar[0]))) {
        if (g->kind != CB_YAML_MAP) {
            rc = CB_FAIL(err, CB_ERR_INPUT, "%s: grid: expected a map of KEY.PATH: [values]",
                         cb_yaml_where(g, path, w, sizeof w));
            goto done;
        }
        e->keys = cb_calloc((size_t)g->n + 1, sizeof *e->keys);
        if (!e->keys) {
            rc = CB_FAIL(err, CB_ERR_NOMEM, "out of memory");
            goto done;
        }
        for (int i = 0; i < g->n; i++) {
            const cb_yaml *vals = g->items[i];
            cb_sweep_key *k = &e->keys[e->nkeys++];
            k->path = cb_strdup(g->keys[i]);
            k->solver = path_solver(g->keys[i]);
            if (vals->kind != CB_YAML_SEQ || vals->n == 0) {
                rc = CB_FAIL(err, CB_ERR_INPUT, "%s: grid: %s: expected a non-empty list of values",
                             cb_yaml_where(vals, path, w, sizeof w), g->keys[i]);
                goto done;
            }
            if (k->solver) {
                int found = 0;
                for (int v = 0; v < e->nsolvers; v++) found |= !strcmp(e->solvers[v], k->solver);
                if (!found) {
                    rc = CB_FAIL(err, CB_ERR_INPUT,
                                 "%s: grid: %s names solver '%s', which this experiment does not run (solvers: "
                                 "%s)", cb_yaml_where(vals, path, w, sizeof w), g->keys[i], k->solver,
                                 e->nsolvers ? e->solvers[0] : "");
                    goto done;
                }
            }
            k->values = cb_calloc((size_t)vals->n, sizeof *k->values);
            k->set_values = cb_calloc((size_t)vals->n, sizeof *k->set_values);
            if (!k->path || !k->values || !k->set_values) {
                rc = CB_FAIL(err, CB_ERR_NOMEM, "out of memory");
                goto done;
            }
            for (int j = 0; j < vals->n; j++) {
                k->values[j] = cb_sweep_value_text(vals->items[j]);
                k->set_values[j] = value_set_text(vals->items[j]);
                k->nvalues = j + 1;
                if (!k->values[j] || !k->set_values[j]) {
                    rc = CB_FAIL(err, CB_ERR_NOMEM, "out of memory");
                    goto done;
                }
                for (int q = 0; q < j; q++)
                    if (!strcmp(k->values[q], k->values[j])) {
                        rc = CB_FAIL(err, CB_ERR_INPUT, "%s: grid: %s: the value '%s' is listed twice",
                                     cb_yaml_where(vals->items[j], path, w, sizeof w), g->keys[i], k->values[j]);
                        goto done;
                    }
            }
        }
    }

    const cb_yaml *rp = cb_keys_ask(keys, root, "repeats");
    e->repeats = 1;
    if (rp) {
        if ((rc = cb_yaml_int(rp, path, "repeats", &e->repeats, err))) goto done;
        if (e->repeats < 1) {
            rc = CB_FAIL(err, CB_ERR_INPUT, "%s: repeats: expected an integer >= 1, got %d",
                         cb_yaml_where(rp, path, w, sizeof w), e->repeats);
            goto done;
        }
    }
    if ((rc = cb_keys_check(keys, root, path, "experiment", err))) goto done;
    if ((rc = make_labels(e, err))) goto done;
    rc = expand(e, err);

done:
    cb_keys_free(&keys);
    free(dir);
    cb_yaml_free(&root);
    if (rc) cb_experiment_free(&e);
    else *out = e;
    return rc;
}

void cb_sweep_free_sets(char ***sets, int nsets)
{
    if (!sets || !*sets) return;
    free_strs(*sets, nsets);
    *sets = NULL;
}

int cb_sweep_run_sets(const cb_experiment *e, const cb_sweep_run *r, char ***sets, int *nsets, cb_error *err)
{
    if (!e || !r || !sets || !nsets) return CB_FAIL(err, CB_ERR_INPUT, "cb_sweep_run_sets: NULL argument");
    *sets = NULL;
    *nsets = 0;
    const char *solver = e->solvers[r->solver];
    char **v = cb_calloc((size_t)(e->nsets + e->nkeys) + 1, sizeof *v);
    if (!v) return CB_FAIL(err, CB_ERR_NOMEM, "out of memory");
    int n = 0;
    for (int i = 0; i < e->nsets; i++) {
        if (e->set_solver[i] && strcmp(e->set_solver[i], solver)) continue;
        if (!(v[n++] = cb_strdup(e->sets[i]))) goto nomem;
    }
    for (int k = 0; k < e->nkeys; k++) {
        if (r->value[k] < 0) continue;
        const char *val = e->keys[k].set_values[r->value[k]];
        size_t len = strlen(e->keys[k].path) + strlen(val) + 2;
        if (!(v[n] = cb_calloc(len, 1))) goto nomem;
        snprintf(v[n++], len, "%s=%s", e->keys[k].path, val);
    }
    *sets = v;
    *nsets = n;
    return CB_OK;
nomem:
    free_strs(v, n);
    return CB_FAIL(err, CB_ERR_NOMEM, "out of memory");
}

cb_sweep_options cb_default_sweep_options(void)
{
    cb_sweep_options o;
    memset(&o, 0, sizeof o);
    o.jobs = 1;
    o.nshards = 1;
    o.write_frames = 1;
    o.progress = 1;
    return o;
}
