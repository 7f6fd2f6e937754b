/* core/params.c — typed access to a solver's parameter block `solvers.<name>`
 * (see params.h): defaults, ranges and unknown-key checks, with file:line:col
 * messages that name the full key path (solvers.pbd.iterations), and the record of
 * the effective parameters (every key read, with the value used). */
#include "core/params.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cb_params_record {
    int n, cap;
    cb_param_entry *e;
};

static const char *plabel(const cb_params *p) { return p->label ? p->label : "<scene>"; }
static const char *pname(const cb_params *p) { return p->solver ? p->solver : "?"; }

/* Is the block absent or empty (`pbd:` with nothing after it)? */
static int block_empty(const cb_yaml *b)
{
    return !b || (b->kind == CB_YAML_SCALAR && !b->quoted &&
                  (b->scalar[0] == '\0' || strcmp(b->scalar, "~") == 0 || strcmp(b->scalar, "null") == 0));
}

/* Find the node for key: 0 with *node NULL when absent; error if the block is not a map. */
static int lookup(const cb_params *p, const char *key, const cb_yaml **node, char *what,
                  size_t wsize, cb_error *err)
{
    *node = NULL;
    if (!p || !key) return CB_FAIL(err, CB_ERR_INPUT, "cb_params: NULL parameters or key");
    snprintf(what, wsize, "solvers.%s.%s", pname(p), key);
    if (block_empty(p->block)) return 0;
    if (p->block->kind != CB_YAML_MAP) {
        char where[600];
        return CB_FAIL(err, CB_ERR_INPUT, "%s: solvers.%s: expected a map of parameters, got %s",
                       cb_yaml_where(p->block, plabel(p), where, sizeof where), pname(p),
                       p->block->kind == CB_YAML_SEQ ? "a list" : "a scalar");
    }
    *node = cb_yaml_get(p->block, key);
    return 0;
}

/* ---------------------------------------------------------------- the record */

int cb_params_record_create(cb_params_record **out, cb_error *err)
{
    if (!out) return CB_FAIL(err, CB_ERR_INPUT, "cb_params_record_create: out is NULL");
    *out = cb_calloc(1, sizeof **out);
    return *out ? 0 : CB_FAIL(err, CB_ERR_NOMEM, "cb_params_record_create: out of memory");
}

static void entry_release(cb_param_entry *e)
{
    free(e->key);
    free(e->doc);
    if (e->choices)
        for (int k = 0; e->choices[k]; k++) free(e->choices[k]);
    free(e->choices);
    memset(e, 0, sizeof *e);
}

void cb_params_record_free(cb_params_record **rec)
{
    if (!rec || !*rec) return;
    for (int i = 0; i < (*rec)->n; i++) entry_release(&(*rec)->e[i]);
    free((*rec)->e);
    free(*rec);
    *rec = NULL;
}

int cb_params_record_count(const cb_params_record *rec) { return rec ? rec->n : 0; }

const cb_param_entry *cb_params_record_at(const cb_params_record *rec, int i)
{
    return rec && i >= 0 && i < rec->n ? &rec->e[i] : NULL;
}

const cb_param_entry *cb_params_record_find(const cb_params_record *rec, const char *key)
{
    if (!rec || !key) return NULL;
    for (int i = 0; i < rec->n; i++)
        if (strcmp(rec->e[i].key, key) == 0) return &rec->e[i];
    return NULL;
}

/* Record e (its key, doc and choices are copied) in p->rec, replacing an entry of the
 * same key (a key read twice keeps its first place and its last value). */
static int record(const cb_params *p, const cb_param_entry *e, const char *const *choices, cb_error *err)
{
    cb_params_record *r = p->rec;
    if (!r) return 0;
    cb_param_entry c = *e;
    c.key = cb_strdup(e->key);
    c.doc = cb_strdup(e->doc ? e->doc : "");
    c.choices = NULL;
    int ok = c.key && c.doc;
    if (ok && choices) {
        int n = 0;
        while (choices[n]) n++;
        c.choices = cb_calloc((size_t)n + 1, sizeof *c.choices);
        ok = c.choices != NULL;
        for (int k = 0; ok && k < n; k++) ok = (c.choices[k] = cb_strdup(choices[k])) != NULL;
    }
    int at = r->n;
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->e[i].key, e->key) == 0) at = i;
    if (ok && at == r->n && r->n == r->cap) {
        int cap = r->cap ? 2 * r->cap : 16;
        cb_param_entry *grown = cb_realloc(r->e, (size_t)cap * sizeof *grown);
        if (grown) {
            r->e = grown;
            r->cap = cap;
        }
        ok = grown != NULL;
    }
    if (!ok) {
        entry_release(&c);
        return CB_FAIL(err, CB_ERR_NOMEM, "cb_params: out of memory recording %s", e->key);
    }
    if (at < r->n) entry_release(&r->e[at]);
    else r->n++;
    r->e[at] = c;
    return 0;
}

/* The shortest of %.15g, %.16g, %.17g that reads back to v. */
static void print_double(char *buf, size_t size, double v)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) return;
    }
}

/* A scalar YAML reads back as itself: plain when it is made of [A-Za-z0-9_.+-] only. */
static int plain_word(const char *w)
{
    if (!w[0]) return 0;
    for (const char *c = w; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_' ||
              *c == '.' || *c == '-' || *c == '+'))
            return 0;
    return strcmp(w, "null") != 0 && strcmp(w, "~") != 0;
}

const char *cb_param_entry_value_text(const cb_param_entry *e, int which, char *buf, size_t size)
{
    if (!buf || size == 0) return buf;
    buf[0] = '\0';
    if (!e) return buf;
    int iv = which ? e->idef : e->ivalue;
    switch (e->type) {
    case CB_PARAM_DOUBLE: print_double(buf, size, which ? e->def : e->value); break;
    case CB_PARAM_INT: snprintf(buf, size, "%d", iv); break;
    case CB_PARAM_BOOL: snprintf(buf, size, "%s", iv ? "true" : "false"); break;
    case CB_PARAM_CHOICE: {
        const char *c = e->choices ? e->choices[iv] : "";
        snprintf(buf, size, plain_word(c) ? "%s" : "\"%s\"", c);
        break;
    }
    }
    return buf;
}

char *cb_params_record_text(const cb_params_record *rec)
{
    size_t cap = 64, len = 0;
    char *out = cb_calloc(cap, 1);
    if (!out) return NULL;
    out[len++] = '{';
    for (int i = 0; rec && i < rec->n; i++) {
        char val[400], item[800];
        cb_param_entry_value_text(&rec->e[i], 0, val, sizeof val);
        int w = snprintf(item, sizeof item, "%s%s: %s", i ? ", " : "", rec->e[i].key, val);
        if (w < 0) continue;
        if (len + (size_t)w + 2 > cap) {
            while (len + (size_t)w + 2 > cap) cap *= 2;
            char *grown = cb_realloc(out, cap);
            if (!grown) {
                free(out);
                return NULL;
            }
            out = grown;
        }
        memcpy(out + len, item, (size_t)w);
        len += (size_t)w;
    }
    out[len++] = '}';
    out[len] = '\0';
    return out;
}

/* ---------------------------------------------------------------- getters */

int cb_params_double(const cb_params *p, const char *key, double def, double lo, double hi,
                     double *out, const char *doc, cb_error *err)
{
    const cb_yaml *node;
    char what[300], where[600];
    int rc;
    if (!out) return CB_FAIL(err, CB_ERR_INPUT, "cb_params_double: out is NULL");
    if ((rc = lookup(p, key, &node, what, sizeof what, err))) return rc;
    double v = def;
    if (node) {
        if ((rc = cb_yaml_double(node, plabel(p), what, &v, err))) return rc;
        if (v < lo || v > hi)
            return CB_FAIL(err, CB_ERR_INPUT, "%s: %s: expected a value in [%g, %g], got %s",
                           cb_yaml_where(node, plabel(p), where, sizeof where), what, lo, hi, node->scalar);
    }
    cb_param_entry e = {.key = (char *)key, .doc = (char *)doc, .type = CB_PARAM_DOUBLE, .given = node != NULL,
                        .value = v, .def = def, .lo = lo, .hi = hi};
    if ((rc = record(p, &e, NULL, err))) return rc;
    *out = v;
    return 0;
}

int cb_params_int(const cb_params *p, const char *key, int def, int lo, int hi, int *out,
                  const char *doc, cb_error *err)
{
    const cb_yaml *node;
    char what[300], where[600];
    int rc;
    if (!out) return CB_FAIL(err, CB_ERR_INPUT, "cb_params_int: out is NULL");
    if ((rc = lookup(p, key, &node, what, sizeof what, err))) return rc;
    int v = def;
    if (node) {
        if ((rc = cb_yaml_int(node, plabel(p), what, &v, err))) return rc;
        if (v < lo || v > hi)
            return CB_FAIL(err, CB_ERR_INPUT, "%s: %s: expected a value in [%d, %d], got %s",
                           cb_yaml_where(node, plabel(p), where, sizeof where), what, lo, hi, node->scalar);
    }
    cb_param_entry e = {.key = (char *)key, .doc = (char *)doc, .type = CB_PARAM_INT, .given = node != NULL,
                        .ivalue = v, .idef = def, .ilo = lo, .ihi = hi};
    if ((rc = record(p, &e, NULL, err))) return rc;
    *out = v;
    return 0;
}

int cb_params_bool(const cb_params *p, const char *key, int def, int *out, const char *doc, cb_error *err)
{
    const cb_yaml *node;
    char what[300];
    int rc;
    if (!out) return CB_FAIL(err, CB_ERR_INPUT, "cb_params_bool: out is NULL");
    if ((rc = lookup(p, key, &node, what, sizeof what, err))) return rc;
    int v = def ? 1 : 0;
    if (node && (rc = cb_yaml_bool(node, plabel(p), what, &v, err))) return rc;
    cb_param_entry e = {.key = (char *)key, .doc = (char *)doc, .type = CB_PARAM_BOOL, .given = node != NULL,
                        .ivalue = v, .idef = def ? 1 : 0, .ilo = 0, .ihi = 1};
    if ((rc = record(p, &e, NULL, err))) return rc;
    *out = v;
    return 0;
}

static void join(char *buf, size_t size, const char *const *words)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int k = 0; words[k]; k++) {
        int w = snprintf(buf + len, size - len, "%s%s", k ? ", " : "", words[k]);
        if (w < 0 || (size_t)w >= size - len) break;
        len += (size_t)w;
    }
}

int cb_params_choice(const cb_params *p, const char *key, const char *const *choices, int def,
                     int *out, const char *doc, cb_error *err)
{
    const cb_yaml *node;
    char what[300], where[600], list[400];
    int rc;
    if (!out || !choices) return CB_FAIL(err, CB_ERR_INPUT, "cb_params_choice: NULL argument");
    if ((rc = lookup(p, key, &node, what, sizeof what, err))) return rc;
    int nchoices = 0;
    while (choices[nchoices]) nchoices++;
    CB_ASSERT(def >= 0 && def < nchoices);
    int v = def;
    if (node) {
        join(list, sizeof list, choices);
        if (node->kind != CB_YAML_SCALAR)
            return CB_FAIL(err, CB_ERR_INPUT, "%s: %s: expected one of %s, got %s",
                           cb_yaml_where(node, plabel(p), where, sizeof where), what, list,
                           node->kind == CB_YAML_SEQ ? "a list" : "a map");
        v = -1;
        for (int k = 0; k < nchoices && v < 0; k++)
            if (strcmp(node->scalar, choices[k]) == 0) v = k;
        if (v < 0)
            return CB_FAIL(err, CB_ERR_INPUT, "%s: %s: expected one of %s, got '%s'",
                           cb_yaml_where(node, plabel(p), where, sizeof where), what, list, node->scalar);
    }
    cb_param_entry e = {.key = (char *)key, .doc = (char *)doc, .type = CB_PARAM_CHOICE, .given = node != NULL,
                        .ivalue = v, .idef = def, .ilo = 0, .ihi = nchoices - 1};
    if ((rc = record(p, &e, choices, err))) return rc;
    *out = v;
    return 0;
}

/* ---------------------------------------------------------------- the check */

int cb_params_check(const cb_params *p, cb_error *err)
{
    char what[300];
    if (!p || !p->rec) return CB_FAIL(err, CB_ERR_INPUT, "cb_params_check: no parameters or no record");
    if (block_empty(p->block)) return 0;
    snprintf(what, sizeof what, "solvers.%s", pname(p));
    const cb_params_record *r = p->rec;
    const char **allowed = cb_calloc((size_t)r->n + 1, sizeof *allowed);
    if (!allowed) return CB_FAIL(err, CB_ERR_NOMEM, "cb_params_check: out of memory");
    for (int i = 0; i < r->n; i++) allowed[i] = r->e[i].key;
    int rc = cb_yaml_check_keys(p->block, plabel(p), what, allowed, err);
    free(allowed);
    return rc;
}

int cb_params_begin(const cb_params *p, cb_params *q, cb_error *err)
{
    if (!p || !q) return CB_FAIL(err, CB_ERR_INPUT, "cb_params_begin: NULL argument");
    *q = *p;
    return p->rec ? 0 : cb_params_record_create(&q->rec, err);
}

int cb_params_end(const cb_params *p, cb_params *q, int rc, cb_error *err)
{
    if (!p || !q) return rc ? rc : CB_FAIL(err, CB_ERR_INPUT, "cb_params_end: NULL argument");
    if (!rc) rc = cb_params_check(q, err);
    if (q->rec != p->rec) cb_params_record_free(&q->rec);
    q->rec = p->rec;
    return rc;
}

char *cb_params_text(const cb_params *p)
{
    if (!p || block_empty(p->block)) return cb_strdup("{}");
    return cb_yaml_emit_flow(p->block);
}

/* ---------------------------------------------------------------- keys of other maps */

typedef struct cb_key_asked {
    const cb_yaml *map;
    const char *key;
} cb_key_asked;

struct cb_keys {
    cb_key_asked *a;
    int n, cap;
    int nomem;
};

int cb_keys_create(cb_keys **out, cb_error *err)
{
    if (!out) return CB_FAIL(err, CB_ERR_INPUT, "cb_keys_create: out is NULL");
    *out = cb_calloc(1, sizeof **out);
    return *out ? 0 : CB_FAIL(err, CB_ERR_NOMEM, "cb_keys_create: out of memory");
}

void cb_keys_free(cb_keys **k)
{
    if (!k || !*k) return;
    free((*k)->a);
    free(*k);
    *k = NULL;
}

const cb_yaml *cb_keys_ask(cb_keys *k, const cb_yaml *map, const char *key)
{
    if (!map || !key) return NULL;
    if (k) {
        int known = 0;
        for (int i = 0; i < k->n && !known; i++) known = k->a[i].map == map && !strcmp(k->a[i].key, key);
        if (!known && k->n == k->cap) {
            int cap = k->cap ? 2 * k->cap : 64;
            cb_key_asked *g = cb_realloc(k->a, (size_t)cap * sizeof *g);
            if (g) {
                k->a = g;
                k->cap = cap;
            } else {
                k->nomem = 1;
            }
        }
        if (!known && k->n < k->cap) k->a[k->n++] = (cb_key_asked){.map = map, .key = key};
    }
    return map->kind == CB_YAML_MAP ? cb_yaml_get(map, key) : NULL;
}

int cb_keys_check(const cb_keys *k, const cb_yaml *map, const char *label, const char *what, cb_error *err)
{
    if (!k) return CB_FAIL(err, CB_ERR_INPUT, "cb_keys_check: no keys record");
    if (k->nomem) return CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", label ? label : "keys");
    if (!map) return 0;
    const char **allowed = cb_calloc((size_t)k->n + 1, sizeof *allowed);
    if (!allowed) return CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", label ? label : "keys");
    int n = 0;
    for (int i = 0; i < k->n; i++)
        if (k->a[i].map == map) allowed[n++] = k->a[i].key;
    int rc = cb_yaml_check_keys(map, label, what, allowed, err);
    free(allowed);
    return rc;
}
