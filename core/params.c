/* core/params.c — typed access to a solver's parameter block `solvers.<name>`
 * (see params.h): defaults, ranges and unknown-key checks, with file:line:col
 * messages that name the full key path (solvers.pbd.iterations). */
#include "core/params.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int cb_params_double(const cb_params *p, const char *key, double def, double lo, double hi,
                     double *out, cb_error *err)
{
    const cb_yaml *node;
    char what[300], where[600];
    int rc;
    if (!out) return CB_FAIL(err, CB_ERR_INPUT, "cb_params_double: out is NULL");
    if ((rc = lookup(p, key, &node, what, sizeof what, err))) return rc;
    if (!node) { *out = def; return 0; }
    double v;
    if ((rc = cb_yaml_double(node, plabel(p), what, &v, err))) return rc;
    if (v < lo || v > hi)
        return CB_FAIL(err, CB_ERR_INPUT, "%s: %s: expected a value in [%g, %g], got %s",
                       cb_yaml_where(node, plabel(p), where, sizeof where), what, lo, hi, node->scalar);
    *out = v;
    return 0;
}

int cb_params_int(const cb_params *p, const char *key, int def, int lo, int hi, int *out, cb_error *err)
{
    const cb_yaml *node;
    char what[300], where[600];
    int rc;
    if (!out) return CB_FAIL(err, CB_ERR_INPUT, "cb_params_int: out is NULL");
    if ((rc = lookup(p, key, &node, what, sizeof what, err))) return rc;
    if (!node) { *out = def; return 0; }
    int v;
    if ((rc = cb_yaml_int(node, plabel(p), what, &v, err))) return rc;
    if (v < lo || v > hi)
        return CB_FAIL(err, CB_ERR_INPUT, "%s: %s: expected a value in [%d, %d], got %s",
                       cb_yaml_where(node, plabel(p), where, sizeof where), what, lo, hi, node->scalar);
    *out = v;
    return 0;
}

int cb_params_bool(const cb_params *p, const char *key, int def, int *out, cb_error *err)
{
    const cb_yaml *node;
    char what[300];
    int rc;
    if (!out) return CB_FAIL(err, CB_ERR_INPUT, "cb_params_bool: out is NULL");
    if ((rc = lookup(p, key, &node, what, sizeof what, err))) return rc;
    if (!node) { *out = def ? 1 : 0; return 0; }
    return cb_yaml_bool(node, plabel(p), what, out, err);
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
                     int *out, cb_error *err)
{
    const cb_yaml *node;
    char what[300], where[600], list[400];
    int rc;
    if (!out || !choices) return CB_FAIL(err, CB_ERR_INPUT, "cb_params_choice: NULL argument");
    if ((rc = lookup(p, key, &node, what, sizeof what, err))) return rc;
    int nchoices = 0;
    while (choices[nchoices]) nchoices++;
    CB_ASSERT(def >= 0 && def < nchoices);
    if (!node) { *out = def; return 0; }
    join(list, sizeof list, choices);
    if (node->kind != CB_YAML_SCALAR)
        return CB_FAIL(err, CB_ERR_INPUT, "%s: %s: expected one of %s, got %s",
                       cb_yaml_where(node, plabel(p), where, sizeof where), what, list,
                       node->kind == CB_YAML_SEQ ? "a list" : "a map");
    for (int k = 0; k < nchoices; k++)
        if (strcmp(node->scalar, choices[k]) == 0) { *out = k; return 0; }
    return CB_FAIL(err, CB_ERR_INPUT, "%s: %s: expected one of %s, got '%s'",
                   cb_yaml_where(node, plabel(p), where, sizeof where), what, list, node->scalar);
}

int cb_params_check(const cb_params *p, const char *const *allowed, cb_error *err)
{
    char what[300];
    if (!p || !allowed) return CB_FAIL(err, CB_ERR_INPUT, "cb_params_check: NULL argument");
    if (block_empty(p->block)) return 0;
    snprintf(what, sizeof what, "solvers.%s", pname(p));
    return cb_yaml_check_keys(p->block, plabel(p), what, allowed, err);
}

char *cb_params_text(const cb_params *p)
{
    if (!p || block_empty(p->block)) return cb_strdup("{}");
    return cb_yaml_emit_flow(p->block);
}
