/* experiments/sweep.c — experiment files, their expansion into runs, and the sweep
 * runner behind `clothbench sweep` (sweep.h).
 *
 * Every run goes through cb_run in a child process of its own (fork), also with
 * -j 1: a crash of one solver (a segfault, an abort in a library) then ends only that
 * run, which is recorded as failed, and no global state (HDF5 caches, static solver
 * state, leaked memory) carries from one run into the next. A fork costs well under a
 * millisecond against runs of seconds.
 *
 * Resumption: a run whose file exists with status "ok" and whose stored scene text
 * equals the scene text this run would produce is skipped; every other run is
 * started afresh (its old run file, sidecar and .err are removed first). The index
 * (index.csv, index.h5) is rebuilt from the run files and .err notes after every
 * finished run and written to a temporary file that is then renamed, so a kill at
 * any moment leaves a complete index of what is on disk.
 */
#include "experiments/sweep.h"

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
static char *value_text(const cb_yaml *v)
{
    if (v->kind == CB_YAML_SCALAR) return cb_strdup(v->scalar ? v->scalar : "");
    return cb_yaml_emit_flow(v);
}

/* The value as --set text: quoted scalars stay strings. */
static char *value_set_text(const cb_yaml *v)
{
    if (v->kind != CB_YAML_SCALAR || !v->quoted) return value_text(v);
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
    static const char *const allowed[] = {"name", "output", "description", "scenes", "solvers",
                                          "set", "grid", "repeats", NULL};
    if ((rc = cb_yaml_check_keys(root, path, "experiment", allowed, err))) goto done;

    const cb_yaml *n = cb_yaml_get(root, "name");
    if (n && (n->kind != CB_YAML_SCALAR || !n->scalar || !n->scalar[0])) {
        rc = CB_FAIL(err, CB_ERR_INPUT, "%s: name: expected a name", cb_yaml_where(n, path, w, sizeof w));
        goto done;
    }
    e->name = n ? cb_strdup(n->scalar) : path_stem(path);
    const cb_yaml *o = cb_yaml_get(root, "output");
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
    if (!e->name || !e->output || !e->path) {
        rc = CB_FAIL(err, CB_ERR_NOMEM, "out of memory");
        goto done;
    }

    /* scenes */
    const cb_yaml *sc = cb_yaml_get(root, "scenes");
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
    const cb_yaml *so = cb_yaml_get(root, "solvers");
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
    const cb_yaml *st = cb_yaml_get(root, "set");
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
    const cb_yaml *g = cb_yaml_get(root, "grid");
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
                k->values[j] = value_text(vals->items[j]);
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

    const cb_yaml *rp = cb_yaml_get(root, "repeats");
    e->repeats = 1;
    if (rp) {
        if ((rc = cb_yaml_int(rp, path, "repeats", &e->repeats, err))) goto done;
        if (e->repeats < 1) {
            rc = CB_FAIL(err, CB_ERR_INPUT, "%s: repeats: expected an integer >= 1, got %d",
                         cb_yaml_where(rp, path, w, sizeof w), e->repeats);
            goto done;
        }
    }
    if ((rc = make_labels(e, err))) goto done;
    rc = expand(e, err);

done:
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

/* ---------------------------------------------------------------- run state */

typedef struct run_state {
    int have;                 /* summary read */
    cb_run_summary s;
    int has_note;             /* a .err note exists */
    char note_status[32];
    char note_msg[1024];
    int file_exists;
    char read_error[512];     /* the run file exists but could not be read */
    char checked[512];        /* first line of <run>.check when newer than the run file, else "" */
} run_state;

static void run_path(const cb_experiment *e, const cb_sweep_run *r, const char *ext, char *buf, size_t n)
{
    snprintf(buf, n, "%s/%s%s", e->output, r->name, ext);
}

static void refresh(const cb_experiment *e, const cb_sweep_run *r, run_state *st)
{
    char p[4096];
    memset(st, 0, sizeof *st);
    run_path(e, r, ".err", p, sizeof p);
    FILE *f = fopen(p, "r");
    if (f) {
        st->has_note = 1;
        if (!fgets(st->note_status, sizeof st->note_status, f)) snprintf(st->note_status, sizeof st->note_status, "error");
        if (!fgets(st->note_msg, sizeof st->note_msg, f)) st->note_msg[0] = '\0';
        st->note_status[strcspn(st->note_status, "\r\n")] = '\0';
        st->note_msg[strcspn(st->note_msg, "\r\n")] = '\0';
        fclose(f);
    }
    run_path(e, r, ".h5", p, sizeof p);
    struct stat sh, sc;
    char cp[4096];
    run_path(e, r, ".check", cp, sizeof cp);
    if (stat(p, &sh) == 0 && stat(cp, &sc) == 0 && sc.st_mtime >= sh.st_mtime && (f = fopen(cp, "r"))) {
        if (!fgets(st->checked, sizeof st->checked, f)) st->checked[0] = '\0';
        st->checked[strcspn(st->checked, "\r\n")] = '\0';
        fclose(f);
    }
    if (access(p, F_OK) == 0) {
        st->file_exists = 1;
        cb_error er;
        cb_error_clear(&er);
        if (cb_run_summary_read(p, &st->s, &er) == CB_OK) st->have = 1;
        else snprintf(st->read_error, sizeof st->read_error, "%.500s", er.message);
    }
}

static const char *row_status(const run_state *st)
{
    if (st->has_note) return st->note_status;
    if (st->have) return st->s.status;
    if (st->file_exists) return "error";
    return "pending";
}

static const char *row_message(const run_state *st)
{
    if (st->has_note) return st->note_msg;
    if (st->have) return st->s.message;
    if (st->file_exists) return st->read_error;
    return "";
}

/* Reads the string attribute `name` of an HDF5 file (malloc'd), NULL if absent. */
static char *read_str_attr(const char *path, const char *name)
{
    H5Eset_auto(H5E_DEFAULT, NULL, NULL);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) return NULL;
    char *out = cb_h5_string_attr(f, name);
    H5Fclose(f);
    return out;
}

/* 1 when the run is finished with status ok and its file holds the scene text this
 * run would produce now (same scene file, same overrides). */
static int run_is_done(const cb_experiment *e, const cb_sweep_run *r, const run_state *st)
{
    if (st->has_note || !st->have || strcmp(st->s.status, "ok")) return 0;
    char **sets = NULL;
    int nsets = 0;
    cb_error er;
    if (cb_sweep_run_sets(e, r, &sets, &nsets, &er)) return 0;
    cb_scene *scene = NULL;
    int rc = cb_scene_load(e->scenes[r->scene], (const char *const *)sets, nsets, &scene, &er);
    cb_sweep_free_sets(&sets, nsets);
    if (rc) return 0;
    char p[4096];
    run_path(e, r, ".h5", p, sizeof p);
    char *text = read_str_attr(p, "scene_text");
    int same = text && !strcmp(text, scene->text);
    free(text);
    cb_scene_free(&scene);
    return same;
}

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

/* Columns after self_collision: the commit that made the run, the check, and per key of
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
    char *out = v ? value_text(v) : cb_strdup("");
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
    fputs(",self_collision,git_commit,checked", f);
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
        cb_csv_field(f, row_status(st));
        fputc(',', f);
        cb_csv_field(f, row_message(st));
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
    int ncols = 5 + e->nkeys + 3 + 9 + 6 + YARD_COLS + 3 + neff;
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
        PUT_S(row_status(st));
        PUT_S(row_message(st));
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

static int write_index_states(const cb_experiment *e, const run_state *states, cb_error *err)
{
    int rc = cb_mkdir_p(e->output, err);
    if (!rc) rc = write_csv(e, states, err);
    if (!rc) rc = write_h5(e, states, err);
    return rc;
}

int cb_sweep_write_index(const cb_experiment *e, cb_error *err)
{
    if (!e) return CB_FAIL(err, CB_ERR_INPUT, "cb_sweep_write_index: NULL experiment");
    run_state *states = cb_calloc((size_t)e->nruns + 1, sizeof *states);
    if (!states) return CB_FAIL(err, CB_ERR_NOMEM, "out of memory");
    for (long i = 0; i < e->nruns; i++) refresh(e, &e->runs[i], &states[i]);
    int rc = write_index_states(e, states, err);
    free(states);
    return rc;
}

/* ---------------------------------------------------------------- running */

static void write_note(const char *path, const char *status, const char *msg)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) return;
    char one[1024];
    snprintf(one, sizeof one, "%s", msg ? msg : "");
    for (char *p = one; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    fprintf(f, "%s\n%s\n", status, one);
    if (fclose(f) == 0) rename(tmp, path);
    else remove(tmp);
}

/* ---------------------------------------------------------------- folder lock */

/* A sweep holds <output>/.sweep-lock-I-of-N (shard I of N) while it runs, holding
 * "pid host start-time". Two sweeps whose shards share a run (I = J mod gcd(N, M)) on
 * one folder deleted each other's files in progress; the second is refused, naming the
 * first. A lock whose process is gone (same host, no such pid) is stale and taken over;
 * one from another host is trusted (its process cannot be asked). Disjoint shards, on
 * one host or many, run side by side as before. */
static long gcd_long(long a, long b)
{
    while (b) {
        long t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static void lock_path(const cb_experiment *e, int shard, int nshards, char *buf, size_t n)
{
    snprintf(buf, n, "%s/.sweep-lock-%d-of-%d", e->output, shard, nshards);
}

static int sweep_lock(const cb_experiment *e, const cb_sweep_options *o, cb_error *err)
{
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) != 0) snprintf(host, sizeof host, "unknown");
    DIR *d = opendir(e->output);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        int j, m;
        char tail;
        if (sscanf(de->d_name, ".sweep-lock-%d-of-%d%c", &j, &m, &tail) != 2 || m < 1) continue;
        if ((o->shard - j) % gcd_long(o->nshards, m) != 0) continue; /* disjoint runs */
        char p[4400], text[512] = "";
        snprintf(p, sizeof p, "%s/%s", e->output, de->d_name);
        FILE *f = fopen(p, "r");
        if (f) {
            if (!fgets(text, sizeof text, f)) text[0] = '\0';
            fclose(f);
        }
        long pid = 0;
        char lhost[256] = "", since[64] = "";
        sscanf(text, "%ld %255s %63s", &pid, lhost, since);
        if (!strcmp(lhost, host) && pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
            remove(p); /* its sweep is gone: a crash or SIGKILL left the lock behind */
            continue;
        }
        closedir(d);
        return CB_FAIL(err, CB_ERR_INPUT, "%s: another sweep uses this output folder (shard %d/%d, pid %ld on %s, "
                       "since %s); wait for it, pick a shard it does not run, or remove %s if that process is "
                       "gone", e->output, j, m, pid, lhost[0] ? lhost : "?", since[0] ? since : "?", p);
    }
    if (d) closedir(d);
    char p[4400];
    lock_path(e, o->shard, o->nshards, p, sizeof p);
    int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0)
        return CB_FAIL(err, errno == EEXIST ? CB_ERR_INPUT : CB_ERR_IO, "%s: cannot take the sweep lock: %s",
                       p, strerror(errno));
    char text[512], since[64];
    time_t now = time(NULL);
    struct tm tm;
    if (!gmtime_r(&now, &tm) || !strftime(since, sizeof since, "%Y-%m-%dT%H:%M:%SZ", &tm)) snprintf(since, sizeof since, "?");
    int len = snprintf(text, sizeof text, "%ld %s %s\n", (long)getpid(), host, since);
    int bad = write(fd, text, (size_t)len) != len;
    close(fd);
    if (bad) {
        remove(p);
        return CB_FAIL(err, CB_ERR_IO, "%s: cannot write the sweep lock", p);
    }
    return CB_OK;
}

static void sweep_unlock(const cb_experiment *e, const cb_sweep_options *o)
{
    char p[4400];
    lock_path(e, o->shard, o->nshards, p, sizeof p);
    remove(p);
}

/* The child: one cb_run, then _exit (0 ok, 1 run failed, 2 could not start). */
static void child_main(const cb_experiment *e, const cb_sweep_run *r, const cb_sweep_options *o)
{
    char h5[4096], note[4096];
    run_path(e, r, ".h5", h5, sizeof h5);
    run_path(e, r, ".err", note, sizeof note);
    char **sets = NULL;
    int nsets = 0;
    cb_error err;
    cb_error_clear(&err);
    if (cb_sweep_run_sets(e, r, &sets, &nsets, &err)) {
        write_note(note, "error", err.message);
        _exit(2);
    }
    cb_run_def def = cb_default_run_def();
    def.scene_path = e->scenes[r->scene];
    def.solver = e->solvers[r->solver];
    def.output = h5;
    def.sets = (const char *const *)sets;
    def.nsets = nsets;
    def.progress = 0;
    def.write_frames = o->write_frames;
    cb_run_result res;
    int rc = cb_run(&def, &res, &err);
    cb_sweep_free_sets(&sets, nsets);
    if (rc && res.frames == 0) {
        write_note(note, "error", err.message);
        _exit(2);
    }
    _exit(rc ? 1 : 0);
}

/* The check child: rerun the run from its file into <run>.rerun.h5, compare, and write
 * <run>.check ("identical" | "differs: ..." | "error: ...", then the build note). An
 * identical rerun file is removed (it adds nothing); a differing one is kept. _exit(0)
 * identical, 1 differs, 2 error. */
static void child_check(const cb_experiment *e, const cb_sweep_run *r)
{
    char h5[4096], again[4096], check[4096];
    run_path(e, r, ".h5", h5, sizeof h5);
    run_path(e, r, ".rerun.h5", again, sizeof again);
    run_path(e, r, ".check", check, sizeof check);
    cb_rerun_def d = {h5, again, NULL, 1, 1};
    cb_rerun_result res;
    cb_error err;
    cb_error_clear(&err);
    char *detail = NULL;
    size_t dlen = 0;
    FILE *mem = open_memstream(&detail, &dlen);
    int rc = cb_rerun(&d, &res, mem, &err);
    if (mem) fclose(mem);
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", check);
    FILE *f = fopen(tmp, "w");
    if (f) {
        if (rc < 0) fprintf(f, "error: %s\n", err.message);
        else if (rc == 0) fprintf(f, "identical%s\n", res.build_differs ? " (other build)" : "");
        else if (res.first_row >= 0)
            fprintf(f, "differs: row %ld %s%s\n", res.first_row, res.first_metric,
                    res.build_differs ? " (other build)" : " (same build)");
        else fprintf(f, "differs: %s%s\n", res.first_metric, res.build_differs ? " (other build)" : " (same build)");
        if (detail) fputs(detail, f);
        if (fclose(f) == 0) rename(tmp, check);
    }
    free(detail);
    if (rc == 0) {
        remove(again);
        run_path(e, r, ".rerun.xdmf", again, sizeof again);
        remove(again);
    }
    _exit(rc < 0 ? 2 : rc == 0 ? 0 : 1);
}

static void fmt_duration(double s, char *buf, size_t n)
{
    if (!(s >= 0) || s > 1e7) snprintf(buf, n, "?");
    else if (s < 60) snprintf(buf, n, "%.0fs", s);
    else if (s < 3600) snprintf(buf, n, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
    else snprintf(buf, n, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
}

static void draw_progress(const cb_sweep_stats *st, long done, int running, double eta)
{
    char e[32];
    fmt_duration(eta, e, sizeof e);
    fprintf(stderr, "\r  sweep: %ld/%ld done, %ld failed, %d running, time left %s      ", done, st->selected,
            st->failed, running, done == st->selected ? "0s" : e);
    fflush(stderr);
}

static void clear_progress(void)
{
    fprintf(stderr, "\r%79s\r", "");
    fflush(stderr);
}

int cb_sweep_execute(const cb_experiment *e, const cb_sweep_options *o, FILE *out, cb_sweep_stats *stats,
                     cb_error *err)
{
    if (!e || !o || !stats) return CB_FAIL(err, CB_ERR_INPUT, "cb_sweep_execute: NULL argument");
    memset(stats, 0, sizeof *stats);
    if (o->jobs < 1) return CB_FAIL(err, CB_ERR_INPUT, "-j: expected a number of jobs >= 1, got %d", o->jobs);
    if (o->nshards < 1 || o->shard < 0 || o->shard >= o->nshards)
        return CB_FAIL(err, CB_ERR_INPUT, "--shard %d/%d: expected I/N with 0 <= I < N", o->shard, o->nshards);
    stats->total = e->nruns;
    run_state *states = cb_calloc((size_t)e->nruns + 1, sizeof *states);
    long *todo = cb_calloc((size_t)e->nruns + 1, sizeof *todo);
    pid_t *pids = cb_calloc((size_t)o->jobs, sizeof *pids);
    long *slot_run = cb_calloc((size_t)o->jobs, sizeof *slot_run);
    double *slot_t0 = cb_calloc((size_t)o->jobs, sizeof *slot_t0);
    int rc = CB_OK, locked = 0;
    if (!states || !todo || !pids || !slot_run || !slot_t0) {
        rc = CB_FAIL(err, CB_ERR_NOMEM, "out of memory");
        goto out;
    }
    for (long i = 0; i < e->nruns; i++) refresh(e, &e->runs[i], &states[i]);
    if (o->index_only) {
        rc = write_index_states(e, states, err);
        for (long i = 0; i < e->nruns; i++) {
            if (i % o->nshards != o->shard) continue;
            stats->selected++;
            if (!strcmp(row_status(&states[i]), "ok")) stats->ok++;
            else stats->failed++;
        }
        goto out;
    }
    long ntodo = 0;
    for (long i = 0; i < e->nruns; i++) {
        if (i % o->nshards != o->shard) continue;
        stats->selected++;
        const cb_sweep_run *r = &e->runs[i];
        if (o->check) { /* every run with a readable file, whatever its status */
            if (states[i].have) todo[ntodo++] = i;
            else stats->skipped++;
            if (o->dry_run && out)
                fprintf(out, "%6ld  %-5s  %s.h5\n", i, states[i].have ? "check" : "none", r->name);
            continue;
        }
        int done = run_is_done(e, r, &states[i]);
        const char *action = done ? "skip"
                             : !strcmp(row_status(&states[i]), "ok") ? "stale" /* scene or overrides changed */
                             : (states[i].file_exists || states[i].has_note) ? "rerun" : "run";
        if (done) {
            stats->skipped++;
            stats->ok++;
        } else {
            todo[ntodo++] = i;
        }
        if (o->dry_run && out) {
            char **sets = NULL;
            int nsets = 0;
            fprintf(out, "%6ld  %-5s  %s.h5", i, action, r->name);
            if (cb_sweep_run_sets(e, r, &sets, &nsets, NULL) == CB_OK) {
                fprintf(out, "  %s", e->scenes[r->scene]);
                for (int q = 0; q < nsets; q++) fprintf(out, " --set %s", sets[q]);
                cb_sweep_free_sets(&sets, nsets);
            }
            if (strcmp(action, "run")) fprintf(out, "  (%s)", row_status(&states[i]));
            fputc('\n', out);
        }
    }
    if (o->dry_run) {
        if (out)
            fprintf(out, "# %ld runs in %s (this shard: %ld; %ld finished, %ld to run) -> %s\n", e->nruns, e->path,
                    stats->selected, stats->skipped, ntodo, e->output);
        goto out;
    }
    if ((rc = cb_mkdir_p(e->output, err))) goto out;
    if ((rc = sweep_lock(e, o, err))) goto out;
    locked = 1;
    if ((rc = write_index_states(e, states, err))) goto out;

    int tty = o->progress && isatty(fileno(stderr));
    cb_run_install_signal_handlers();
    long next = 0, finished = 0;
    int active = 0, forwarded = 0;
    double busy_sum = 0;
    if (tty) draw_progress(stats, stats->skipped, 0, NAN);
    for (;;) {
        while (!cb_run_interrupted() && active < o->jobs && next < ntodo) {
            const cb_sweep_run *r = &e->runs[todo[next]];
            char p[4096];
            static const char *const exts[] = {".h5", ".xdmf", ".err"};
            static const char *const check_exts[] = {".check", ".rerun.h5", ".rerun.xdmf"};
            for (int q = 0; q < 3; q++) {
                run_path(e, r, o->check ? check_exts[q] : exts[q], p, sizeof p);
                remove(p);
            }
            fflush(NULL);
            pid_t pid = fork();
            if (pid < 0) {
                rc = CB_FAIL(err, CB_ERR_INTERNAL, "fork failed: %s", strerror(errno));
                break;
            }
            if (pid == 0) {
                if (o->check) child_check(e, r);
                child_main(e, r, o);
            }
            int s = 0;
            while (pids[s]) s++;
            pids[s] = pid;
            slot_run[s] = todo[next];
            slot_t0[s] = cb_wall_time();
            active++;
            next++;
        }
        if (active == 0) break;
        int wst = 0;
        pid_t p = waitpid(-1, &wst, 0);
        if (p < 0) {
            if (errno != EINTR) {
                rc = CB_FAIL(err, CB_ERR_INTERNAL, "waitpid failed: %s", strerror(errno));
                break;
            }
            if (cb_run_interrupted() && !forwarded) {
                /* a terminal's Ctrl-C reaches the children already; a SIGTERM sent to us alone does not */
                for (int s = 0; s < o->jobs; s++)
                    if (pids[s]) kill(pids[s], SIGTERM);
                forwarded = 1;
            }
            continue;
        }
        int s = 0;
        while (s < o->jobs && pids[s] != p) s++;
        if (s == o->jobs) continue; /* not one of ours */
        pids[s] = 0;
        active--;
        long i = slot_run[s];
        const cb_sweep_run *r = &e->runs[i];
        double took = cb_wall_time() - slot_t0[s];
        busy_sum += took;
        finished++;
        char note[4096];
        run_path(e, r, o->check ? ".check" : ".err", note, sizeof note);
        if (WIFSIGNALED(wst)) {
            char m[256];
            snprintf(m, sizeof m, "the run process was killed by signal %d (%s)", WTERMSIG(wst),
                     strsignal(WTERMSIG(wst)));
            write_note(note, "error", m);
        } else if (WIFEXITED(wst) && WEXITSTATUS(wst) > 2) {
            char m[256];
            snprintf(m, sizeof m, "the run process exited with status %d", WEXITSTATUS(wst));
            write_note(note, "error", m);
        }
        refresh(e, r, &states[i]);
        const char *status = o->check ? (WIFEXITED(wst) && WEXITSTATUS(wst) == 0 ? "identical" : "differs")
                                      : row_status(&states[i]);
        if (o->check && !(WIFEXITED(wst) && WEXITSTATUS(wst) <= 1)) status = "error";
        stats->ran++;
        if (!strcmp(status, o->check ? "identical" : "ok")) stats->ok++;
        else stats->failed++;
        cb_error ie;
        if (write_index_states(e, states, &ie) && !rc) rc = CB_FAIL(err, ie.status, "%s", ie.message);
        if (tty) clear_progress();
        if (out && !o->quiet) {
            const char *msg = o->check ? (strncmp(states[i].checked, "identical", 9) ? states[i].checked : "")
                                       : row_message(&states[i]);
            fprintf(out, "  %-11s %s.h5 (%.1f s)%s%s\n", status, r->name, took, msg[0] ? ": " : "", msg);
            fflush(out);
        }
        if (tty) {
            double left = (double)(ntodo - finished);
            double eta = busy_sum / (double)finished * left / (double)(o->jobs < left ? o->jobs : (left > 0 ? left : 1));
            draw_progress(stats, stats->skipped + finished, active, eta);
        }
    }
    if (tty) clear_progress();
    stats->interrupted = cb_run_interrupted();
    if (stats->interrupted) stats->failed += ntodo - next; /* never started */
    /* other shards may have finished runs meanwhile: the final index reads every file again */
    for (long i = 0; i < e->nruns; i++) refresh(e, &e->runs[i], &states[i]);
    {
        cb_error ie;
        if (write_index_states(e, states, &ie) && !rc) rc = CB_FAIL(err, ie.status, "%s", ie.message);
    }
out:
    if (locked) sweep_unlock(e, o);
    free(slot_t0);
    free(slot_run);
    free(pids);
    free(todo);
    free(states);
    return rc;
}
