/* core/yamltree.c — a YAML document tree over libyaml's event parser (see yamltree.h).
 *
 * Every node and every map key keeps its 1-based line and column; anchors, aliases
 * and tags are rejected; duplicate keys are errors. Values given with --set are
 * parsed as YAML and carry an `origin` ("--set KEY") that replaces file:line:col in
 * messages. The emitter writes block YAML (flow style for lists of plain scalars)
 * that re-parses to the same tree.
 */
#include "core/yamltree.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#define MAX_DEPTH 256 /* nesting limit: keeps the recursive builder off the stack limit */

/* ---------------------------------------------------------------- nodes */

static cb_yaml *node_new(cb_yaml_kind kind, int line, int col)
{
    cb_yaml *n = cb_calloc(1, sizeof *n);
    if (!n) return NULL;
    n->kind = kind;
    n->line = line;
    n->col = col;
    return n;
}

void cb_yaml_free(cb_yaml **node)
{
    if (!node || !*node) return;
    cb_yaml *n = *node;
    for (int i = 0; i < n->n; i++) {
        if (n->items) cb_yaml_free(&n->items[i]);
        if (n->keys) free(n->keys[i]);
    }
    free(n->items);
    free(n->keys);
    free(n->key_line);
    free(n->key_col);
    free(n->scalar);
    free(n->origin);
    free(n);
    *node = NULL;
}

/* Arrays grow in powers of two; the capacity for n children is max(4, 2^ceil(log2 n)),
 * so a grow is needed exactly when n == 0 or n is a power of two >= 4. */
static size_t capacity_for(int n)
{
    size_t c = 4;
    while (c < (size_t)n) c *= 2;
    return c;
}

static int needs_grow(int n) { return n == 0 || (n >= 4 && (n & (n - 1)) == 0); }

static int grow(void **p, int n, size_t elem)
{
    if (!needs_grow(n)) return 0;
    size_t cap = capacity_for(n + 1);
    if (cap > SIZE_MAX / elem) return -1;
    void *q = cb_realloc(*p, cap * elem);
    if (!q) return -1;
    *p = q;
    return 0;
}

static int seq_append(cb_yaml *s, cb_yaml *item)
{
    if (grow((void **)&s->items, s->n, sizeof *s->items)) return -1;
    s->items[s->n++] = item;
    return 0;
}

/* Takes ownership of key and value only on success. */
static int map_append(cb_yaml *m, char *key, int kline, int kcol, cb_yaml *value)
{
    if (grow((void **)&m->items, m->n, sizeof *m->items) ||
        grow((void **)&m->keys, m->n, sizeof *m->keys) ||
        grow((void **)&m->key_line, m->n, sizeof *m->key_line) ||
        grow((void **)&m->key_col, m->n, sizeof *m->key_col))
        return -1;
    m->items[m->n] = value;
    m->keys[m->n] = key;
    m->key_line[m->n] = kline;
    m->key_col[m->n] = kcol;
    m->n++;
    return 0;
}

static int map_find(const cb_yaml *map, const char *key)
{
    if (!map || map->kind != CB_YAML_MAP || !key) return -1;
    for (int i = 0; i < map->n; i++)
        if (strcmp(map->keys[i], key) == 0) return i;
    return -1;
}

cb_yaml *cb_yaml_get(const cb_yaml *map, const char *key)
{
    int i = map_find(map, key);
    return i < 0 ? NULL : map->items[i];
}

cb_yaml *cb_yaml_clone(const cb_yaml *node)
{
    if (!node) return NULL;
    cb_yaml *c = node_new(node->kind, node->line, node->col);
    if (!c) return NULL;
    c->quoted = node->quoted;
    if ((node->scalar && !(c->scalar = cb_strdup(node->scalar))) ||
        (node->origin && !(c->origin = cb_strdup(node->origin))))
        goto fail;
    for (int i = 0; i < node->n; i++) {
        cb_yaml *item = cb_yaml_clone(node->items[i]);
        if (!item) goto fail;
        if (node->kind == CB_YAML_MAP) {
            char *key = cb_strdup(node->keys[i]);
            if (!key || map_append(c, key, node->key_line[i], node->key_col[i], item)) {
                free(key);
                cb_yaml_free(&item);
                goto fail;
            }
        } else if (seq_append(c, item)) {
            cb_yaml_free(&item);
            goto fail;
        }
    }
    return c;
fail:
    cb_yaml_free(&c);
    return NULL;
}

const char *cb_yaml_where(const cb_yaml *node, const char *label, char *buf, size_t size)
{
    if (!buf || size == 0) return "";
    if (!label) label = "<yaml>";
    if (node && node->origin) snprintf(buf, size, "%s", node->origin);
    else if (node && node->line > 0) snprintf(buf, size, "%s:%d:%d", label, node->line, node->col);
    else snprintf(buf, size, "%s", label);
    return buf;
}

/* Where key i of a map is: its own position, or the origin of a value set by --set. */
static const char *key_where(const cb_yaml *map, int i, const char *label, char *buf, size_t size)
{
    if (map->key_line[i] > 0) {
        snprintf(buf, size, "%s:%d:%d", label ? label : "<yaml>", map->key_line[i], map->key_col[i]);
        return buf;
    }
    return cb_yaml_where(map->items[i]->origin ? map->items[i] : map, label, buf, size);
}

static int set_origin(cb_yaml *node, const char *origin)
{
    if (!node) return 0;
    free(node->origin);
    node->origin = cb_strdup(origin);
    if (!node->origin) return -1;
    node->line = node->col = 0;
    for (int i = 0; i < node->n; i++) {
        if (set_origin(node->items[i], origin)) return -1;
        if (node->kind == CB_YAML_MAP) node->key_line[i] = node->key_col[i] = 0;
    }
    return 0;
}

/* ---------------------------------------------------------------- parsing */

typedef struct reader {
    yaml_parser_t parser;
    const char *label;
    const char *value; /* --set value: syntax errors quote it instead of line:col */
    cb_error *err;
} reader;

static int syntax_error(reader *r)
{
    const yaml_parser_t *p = &r->parser;
    if (p->error == YAML_MEMORY_ERROR)
        return CB_FAIL(r->err, CB_ERR_NOMEM, "%s: out of memory while parsing YAML", r->label);
    const yaml_mark_t *m = &p->problem_mark;
    const char *problem = p->problem ? p->problem : "malformed YAML";
    if (r->value)
        return CB_FAIL(r->err, CB_ERR_INPUT, "%s: YAML syntax error in the value '%s': %s%s%s",
                       r->label, r->value, problem, p->context ? ", " : "",
                       p->context ? p->context : "");
    if (p->context)
        return CB_FAIL(r->err, CB_ERR_INPUT, "%s:%zu:%zu: YAML syntax error: %s (%s at line %zu)",
                       r->label, m->line + 1, m->column + 1, problem, p->context,
                       p->context_mark.line + 1);
    return CB_FAIL(r->err, CB_ERR_INPUT, "%s:%zu:%zu: YAML syntax error: %s", r->label,
                   m->line + 1, m->column + 1, problem);
}

static int next_event(reader *r, yaml_event_t *ev)
{
    if (!yaml_parser_parse(&r->parser, ev)) return syntax_error(r);
    return 0;
}

static int reject_anchor_tag(reader *r, const yaml_event_t *ev, const yaml_char_t *anchor,
                             const yaml_char_t *tag)
{
    int line = (int)ev->start_mark.line + 1, col = (int)ev->start_mark.column + 1;
    if (anchor)
        return CB_FAIL(r->err, CB_ERR_INPUT,
                       "%s:%d:%d: YAML anchors (&%s) are not supported: write the value out",
                       r->label, line, col, (const char *)anchor);
    if (tag)
        return CB_FAIL(r->err, CB_ERR_INPUT, "%s:%d:%d: YAML tags (%s) are not supported",
                       r->label, line, col, (const char *)tag);
    return 0;
}

static int nomem(reader *r)
{
    return CB_FAIL(r->err, CB_ERR_NOMEM, "%s: out of memory while parsing YAML", r->label);
}

/* Build the node that starts with event `ev` (owned by the caller). */
static int parse_node(reader *r, const yaml_event_t *ev, int depth, cb_yaml **out)
{
    int line = (int)ev->start_mark.line + 1, col = (int)ev->start_mark.column + 1;
    int rc;
    *out = NULL;
    if (depth > MAX_DEPTH)
        return CB_FAIL(r->err, CB_ERR_INPUT, "%s:%d:%d: YAML nested deeper than %d levels",
                       r->label, line, col, MAX_DEPTH);
    switch (ev->type) {
    case YAML_ALIAS_EVENT:
        return CB_FAIL(r->err, CB_ERR_INPUT,
                       "%s:%d:%d: YAML aliases (*%s) are not supported: write the value out",
                       r->label, line, col, (const char *)ev->data.alias.anchor);
    case YAML_SCALAR_EVENT: {
        if ((rc = reject_anchor_tag(r, ev, ev->data.scalar.anchor, ev->data.scalar.tag))) return rc;
        cb_yaml *n = node_new(CB_YAML_SCALAR, line, col);
        if (!n) return nomem(r);
        n->scalar = cb_strdup((const char *)ev->data.scalar.value);
        if (!n->scalar) { cb_yaml_free(&n); return nomem(r); }
        n->quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
        *out = n;
        return 0;
    }
    case YAML_SEQUENCE_START_EVENT: {
        if ((rc = reject_anchor_tag(r, ev, ev->data.sequence_start.anchor,
                                    ev->data.sequence_start.tag)))
            return rc;
        cb_yaml *n = node_new(CB_YAML_SEQ, line, col);
        if (!n) return nomem(r);
        for (;;) {
            yaml_event_t child;
            if ((rc = next_event(r, &child))) { cb_yaml_free(&n); return rc; }
            if (child.type == YAML_SEQUENCE_END_EVENT) { yaml_event_delete(&child); break; }
            cb_yaml *item = NULL;
            rc = parse_node(r, &child, depth + 1, &item);
            yaml_event_delete(&child);
            if (!rc && seq_append(n, item)) { cb_yaml_free(&item); rc = nomem(r); }
            if (rc) { cb_yaml_free(&n); return rc; }
        }
        *out = n;
        return 0;
    }
    case YAML_MAPPING_START_EVENT: {
        if ((rc = reject_anchor_tag(r, ev, ev->data.mapping_start.anchor,
                                    ev->data.mapping_start.tag)))
            return rc;
        cb_yaml *n = node_new(CB_YAML_MAP, line, col);
        if (!n) return nomem(r);
        for (;;) {
            yaml_event_t kev, vev;
            if ((rc = next_event(r, &kev))) { cb_yaml_free(&n); return rc; }
            if (kev.type == YAML_MAPPING_END_EVENT) { yaml_event_delete(&kev); break; }
            int kline = (int)kev.start_mark.line + 1, kcol = (int)kev.start_mark.column + 1;
            if (kev.type != YAML_SCALAR_EVENT) {
                yaml_event_type_t ktype = kev.type;
                yaml_event_delete(&kev);
                cb_yaml_free(&n);
                if (ktype == YAML_ALIAS_EVENT)
                    return CB_FAIL(r->err, CB_ERR_INPUT,
                                   "%s:%d:%d: YAML aliases are not supported", r->label, kline, kcol);
                return CB_FAIL(r->err, CB_ERR_INPUT,
                               "%s:%d:%d: a map key must be a plain word, not a list or a map",
                               r->label, kline, kcol);
            }
            rc = reject_anchor_tag(r, &kev, kev.data.scalar.anchor, kev.data.scalar.tag);
            char *key = rc ? NULL : cb_strdup((const char *)kev.data.scalar.value);
            yaml_event_delete(&kev);
            if (!rc && !key) rc = nomem(r);
            if (!rc) {
                int dup = map_find(n, key);
                if (dup >= 0)
                    rc = CB_FAIL(r->err, CB_ERR_INPUT,
                                 "%s:%d:%d: duplicate key '%s' (first defined at line %d, again at line %d)",
                                 r->label, kline, kcol, key, n->key_line[dup], kline);
            }
            if (rc) { free(key); cb_yaml_free(&n); return rc; }
            if ((rc = next_event(r, &vev))) { free(key); cb_yaml_free(&n); return rc; }
            cb_yaml *value = NULL;
            rc = parse_node(r, &vev, depth + 1, &value);
            yaml_event_delete(&vev);
            if (!rc && map_append(n, key, kline, kcol, value)) {
                cb_yaml_free(&value);
                rc = nomem(r);
            }
            if (rc) { free(key); cb_yaml_free(&n); return rc; }
        }
        *out = n;
        return 0;
    }
    default:
        return CB_FAIL(r->err, CB_ERR_INTERNAL, "%s:%d:%d: unexpected YAML event %d", r->label,
                       line, col, (int)ev->type);
    }
}

/* Parse one document. An empty stream (or a document that is only "---" / "~"
 * / nothing) is an error, except for a --set value (set_value), where it gives an
 * empty plain scalar. */
static int parse_text(const char *text, size_t len, const char *label, int set_value,
                      cb_yaml **out, cb_error *err)
{
    reader r = { .label = label, .value = set_value ? text : NULL, .err = err };
    int allow_empty = set_value;
    cb_yaml *root = NULL;
    yaml_event_t ev;
    int rc = 0;
    int state = 0; /* 0: before document, 1: after it */

    *out = NULL;
    if (!yaml_parser_initialize(&r.parser))
        return CB_FAIL(err, CB_ERR_NOMEM, "%s: cannot initialise the YAML parser", label);
    yaml_parser_set_input_string(&r.parser, (const unsigned char *)text, len);
    for (;;) {
        if ((rc = next_event(&r, &ev))) break;
        yaml_event_type_t t = ev.type;
        if (t == YAML_STREAM_END_EVENT) { yaml_event_delete(&ev); break; }
        if (t == YAML_DOCUMENT_START_EVENT && state == 1) {
            rc = CB_FAIL(err, CB_ERR_INPUT,
                         "%s:%zu:%zu: more than one YAML document: only one is allowed", label,
                         ev.start_mark.line + 1, ev.start_mark.column + 1);
            yaml_event_delete(&ev);
            break;
        }
        if (t == YAML_DOCUMENT_END_EVENT) state = 1;
        if (t == YAML_SCALAR_EVENT || t == YAML_SEQUENCE_START_EVENT ||
            t == YAML_MAPPING_START_EVENT || t == YAML_ALIAS_EVENT) {
            rc = parse_node(&r, &ev, 0, &root);
            yaml_event_delete(&ev);
            if (rc) break;
            continue;
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&r.parser);
    if (rc) {
        cb_yaml_free(&root);
        return rc;
    }
    int empty = !root || (root->kind == CB_YAML_SCALAR && !root->quoted &&
                          (root->scalar[0] == '\0' || strcmp(root->scalar, "~") == 0 ||
                           strcmp(root->scalar, "null") == 0));
    if (empty && !allow_empty) {
        cb_yaml_free(&root);
        return CB_FAIL(err, CB_ERR_INPUT, "%s: empty YAML document", label);
    }
    if (!root) {
        root = node_new(CB_YAML_SCALAR, 1, 1);
        if (root) root->scalar = cb_strdup("");
        if (!root || !root->scalar) {
            cb_yaml_free(&root);
            return CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", label);
        }
    }
    *out = root;
    return 0;
}

int cb_yaml_load_string(const char *text, const char *label, cb_yaml **out, cb_error *err)
{
    if (!out) return CB_FAIL(err, CB_ERR_INPUT, "cb_yaml_load_string: out is NULL");
    *out = NULL;
    if (!label) label = "<string>";
    if (!text) return CB_FAIL(err, CB_ERR_INPUT, "%s: no YAML text", label);
    return parse_text(text, strlen(text), label, 0, out, err);
}

int cb_yaml_load_file(const char *path, cb_yaml **out, cb_error *err)
{
    if (!out) return CB_FAIL(err, CB_ERR_INPUT, "cb_yaml_load_file: out is NULL");
    *out = NULL;
    if (!path || !path[0]) return CB_FAIL(err, CB_ERR_INPUT, "cb_yaml_load_file: no file name");
    FILE *f = fopen(path, "rb");
    if (!f) return CB_FAIL(err, CB_ERR_IO, "%s: cannot read: %s", path, strerror(errno));
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int rc = 0;
    for (;;) {
        if (cap - len < 4096) {
            size_t ncap = cap ? 2 * cap : 16384;
            char *nb = cb_realloc(buf, ncap + 1);
            if (!nb) { rc = CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", path); break; }
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) {
            if (ferror(f)) rc = CB_FAIL(err, CB_ERR_IO, "%s: cannot read: %s", path, strerror(errno));
            break;
        }
    }
    fclose(f);
    if (!rc) {
        buf[len] = '\0';
        rc = parse_text(buf, len, path, 0, out, err);
    }
    free(buf);
    return rc;
}

/* ---------------------------------------------------------------- --set */

static int is_index(const char *s, long *idx)
{
    if (!s[0]) return 0;
    for (const char *p = s; *p; p++)
        if (!isdigit((unsigned char)*p)) return 0;
    errno = 0;
    long v = strtol(s, NULL, 10);
    if (errno || v > INT_MAX) return 0;
    *idx = v;
    return 1;
}

static int is_null_scalar(const cb_yaml *n)
{
    return n && n->kind == CB_YAML_SCALAR && !n->quoted &&
           (n->scalar[0] == '\0' || strcmp(n->scalar, "~") == 0 || strcmp(n->scalar, "null") == 0);
}

static const char *kind_name(cb_yaml_kind k)
{
    return k == CB_YAML_MAP ? "a map" : k == CB_YAML_SEQ ? "a list" : "a scalar";
}

/* Turn an empty (null) scalar into an empty map or list in place, so --set can fill it. */
static void null_to_collection(cb_yaml *n, cb_yaml_kind kind)
{
    free(n->scalar);
    n->scalar = NULL;
    n->kind = kind;
    n->quoted = 0;
}

/* A new empty map, or list when the next path component is an index, made by --set. */
static cb_yaml *new_container(const char *next_component, const char *origin)
{
    long idx;
    cb_yaml *n = node_new(is_index(next_component, &idx) ? CB_YAML_SEQ : CB_YAML_MAP, 0, 0);
    if (n && !(n->origin = cb_strdup(origin))) cb_yaml_free(&n);
    return n;
}

long cb_utf8_invalid_at(const char *text)
{
    const unsigned char *s = (const unsigned char *)text;
    for (long i = 0; s[i];) {
        unsigned c = s[i];
        int n = c < 0x80 ? 0 : (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2 : (c & 0xF8) == 0xF0 ? 3 : -1;
        if (n < 0) return i;
        unsigned cp = n == 0 ? c : n == 1 ? c & 0x1F : n == 2 ? c & 0x0F : c & 0x07;
        for (int k = 1; k <= n; k++) {
            if ((s[i + k] & 0xC0) != 0x80) return i;
            cp = cp << 6 | (s[i + k] & 0x3F);
        }
        static const unsigned least[4] = {0, 0x80, 0x800, 0x10000};
        if (cp < least[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
        i += n + 1;
    }
    return -1;
}

int cb_yaml_set(cb_yaml *root, const char *assignment, const char *label, cb_error *err)
{
    if (!assignment) return CB_FAIL(err, CB_ERR_INPUT, "--set: no assignment given");
    if (!root) return CB_FAIL(err, CB_ERR_INPUT, "--set %s: no document to apply it to", assignment);
    if (!label) label = "<yaml>";
    const char *eq = strchr(assignment, '=');
    if (!eq)
        return CB_FAIL(err, CB_ERR_INPUT, "--set: malformed assignment '%s': expected KEY=VALUE "
                       "(for example dt=0.001 or cloth.grid.nx=40)", assignment);
    size_t klen = (size_t)(eq - assignment);
    /* the key becomes a map key of the tree, written into the run file's scene text: not
     * UTF-8, that text could not be read again (the value is libyaml's to check) */
    long bad = cb_utf8_invalid_at(assignment);
    if (bad >= 0 && (size_t)bad < klen)
        return CB_FAIL(err, CB_ERR_INPUT, "--set: the key of the assignment is not valid UTF-8 (byte %ld)", bad + 1);
    char *path = cb_malloc(klen + 1);
    char *origin = cb_malloc(klen + 7);
    if (!path || !origin) {
        free(path);
        free(origin);
        return CB_FAIL(err, CB_ERR_NOMEM, "--set: out of memory");
    }
    memcpy(path, assignment, klen);
    path[klen] = '\0';
    snprintf(origin, klen + 7, "--set %s", path);

    int rc = 0;
    cb_yaml *value = NULL;
    char *copy = NULL;
    int bad_path = klen == 0 || path[0] == '.' || path[klen - 1] == '.' || strstr(path, "..");
    for (size_t i = 0; i < klen && !bad_path; i++)
        if (isspace((unsigned char)path[i])) bad_path = 1;
    if (bad_path) {
        rc = CB_FAIL(err, CB_ERR_INPUT, "--set: malformed assignment '%s': the key must be "
                     "a dotted path like cloth.grid.nx", assignment);
        goto done;
    }
    if ((rc = parse_text(eq + 1, strlen(eq + 1), origin, 1, &value, err))) goto done;
    if (set_origin(value, origin)) { rc = CB_FAIL(err, CB_ERR_NOMEM, "--set: out of memory"); goto done; }

    copy = cb_strdup(path);
    if (!copy) { rc = CB_FAIL(err, CB_ERR_NOMEM, "--set: out of memory"); goto done; }
    cb_yaml *cur = root;
    char where[600];
    char *save = NULL;
    char *comp = strtok_r(copy, ".", &save);
    /* prefix length, to name the parent path in messages */
    while (comp) {
        char *nextc = strtok_r(NULL, ".", &save);
        size_t plen = (size_t)(comp - copy);
        const char *parent = plen ? path : "the document";
        int parent_len = plen ? (int)(plen - 1) : (int)strlen(parent);
        long idx;
        if (is_null_scalar(cur) && cur != root)
            null_to_collection(cur, is_index(comp, &idx) ? CB_YAML_SEQ : CB_YAML_MAP);
        if (cur->kind == CB_YAML_SCALAR) {
            rc = CB_FAIL(err, CB_ERR_INPUT, "%s: cannot set '%s' inside %.*s: it is a scalar (%s), "
                         "not a map or a list", origin, comp, parent_len, parent,
                         cb_yaml_where(cur, label, where, sizeof where));
            goto done;
        }
        cb_yaml *child = NULL;
        if (cur->kind == CB_YAML_SEQ) {
            if (!is_index(comp, &idx)) {
                rc = CB_FAIL(err, CB_ERR_INPUT, "%s: %.*s is a list (%s): '%s' is not an index",
                             origin, parent_len, parent,
                             cb_yaml_where(cur, label, where, sizeof where), comp);
                goto done;
            }
            if (idx > cur->n) {
                rc = CB_FAIL(err, CB_ERR_INPUT, "%s: index %ld out of range: %.*s (%s) has %d item%s",
                             origin, idx, parent_len, parent,
                             cb_yaml_where(cur, label, where, sizeof where), cur->n,
                             cur->n == 1 ? "" : "s");
                goto done;
            }
            if (!nextc) {
                if (idx == cur->n) {
                    if (seq_append(cur, value)) { rc = CB_FAIL(err, CB_ERR_NOMEM, "--set: out of memory"); goto done; }
                } else {
                    cb_yaml_free(&cur->items[idx]);
                    cur->items[idx] = value;
                }
                value = NULL;
                break;
            }
            if (idx == cur->n) { /* one past the end: a new element */
                child = new_container(nextc, origin);
                if (!child || seq_append(cur, child)) {
                    cb_yaml_free(&child);
                    rc = CB_FAIL(err, CB_ERR_NOMEM, "--set: out of memory");
                    goto done;
                }
            } else {
                child = cur->items[idx];
            }
        } else {
            int i = map_find(cur, comp);
            if (!nextc) {
                if (i >= 0) {
                    cb_yaml_free(&cur->items[i]);
                    cur->items[i] = value;
                } else {
                    char *key = cb_strdup(comp);
                    if (!key || map_append(cur, key, 0, 0, value)) {
                        free(key);
                        rc = CB_FAIL(err, CB_ERR_NOMEM, "--set: out of memory");
                        goto done;
                    }
                }
                value = NULL;
                break;
            }
            if (i >= 0) {
                child = cur->items[i];
            } else {
                child = new_container(nextc, origin);
                char *key = cb_strdup(comp);
                if (!child || !key || map_append(cur, key, 0, 0, child)) {
                    free(key);
                    cb_yaml_free(&child);
                    rc = CB_FAIL(err, CB_ERR_NOMEM, "--set: out of memory");
                    goto done;
                }
            }
        }
        cur = child;
        comp = nextc;
    }
done:
    cb_yaml_free(&value);
    free(copy);
    free(path);
    free(origin);
    return rc;
}

/* ---------------------------------------------------------------- emitting */

typedef struct sbuf { char *s; size_t n, cap; int oom; } sbuf;

static void sb_add(sbuf *b, const char *s, size_t len)
{
    if (b->oom) return;
    if (b->n + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + len + 1) cap *= 2;
        char *p = cb_realloc(b->s, cap);
        if (!p) { b->oom = 1; return; }
        b->s = p;
        b->cap = cap;
    }
    memcpy(b->s + b->n, s, len);
    b->n += len;
    b->s[b->n] = '\0';
}

static void sb_str(sbuf *b, const char *s) { sb_add(b, s, strlen(s)); }

static void sb_indent(sbuf *b, int n)
{
    for (int i = 0; i < n; i++) sb_add(b, " ", 1);
}

static char *sb_finish(sbuf *b)
{
    if (!b->oom && !b->s) sb_add(b, "", 0);
    if (b->oom) { free(b->s); return NULL; }
    return b->s;
}

/* The code point of the UTF-8 sequence at p (its length in *n), or -1 when p starts no
 * valid sequence (then *n is 1). */
static long utf8_at(const unsigned char *p, int *n)
{
    unsigned c = p[0];
    int k = c < 0x80 ? 0 : (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2 : (c & 0xF8) == 0xF0 ? 3 : -1;
    *n = 1;
    if (k < 0) return -1;
    long cp = k == 0 ? c : k == 1 ? c & 0x1F : k == 2 ? c & 0x0F : c & 0x07;
    for (int i = 1; i <= k; i++) {
        if ((p[i] & 0xC0) != 0x80) return -1;
        cp = cp << 6 | (p[i] & 0x3F);
    }
    *n = k + 1;
    return cp;
}

/* Characters YAML reads as line breaks (U+0085, U+2028, U+2029) or refuses as
 * non-printable (C1 controls, the BOM inside text, U+FFFE, U+FFFF): written escaped. */
static int needs_escape(long cp)
{
    return (cp >= 0x80 && cp <= 0x9F) || cp == 0x2028 || cp == 0x2029 || cp == 0xFEFF || cp == 0xFFFE ||
           cp == 0xFFFF;
}

/* Can s be written as a plain scalar (in flow context if flow) and read back as s? */
static int plain_safe(const char *s, int flow)
{
    size_t len = strlen(s);
    if (len == 0) return 0;
    /* '?' and ':' open keys and values: libyaml reads "?x" and ":x" differently in flow */
    if (s[0] == '?' || s[0] == ':') return 0;
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        int n;
        if (needs_escape(utf8_at(p, &n))) return 0;
        p += n;
    }
    if (isspace((unsigned char)s[0]) || isspace((unsigned char)s[len - 1])) return 0;
    if (strchr("[]{},#&*!|>'\"%@`", s[0])) return 0;
    if (strchr("-?:", s[0]) && (s[1] == '\0' || s[1] == ' ' || s[1] == '\t' || (flow && strchr(",[]{}", s[1]))))
        return 0;
    if (strncmp(s, "---", 3) == 0 || strncmp(s, "...", 3) == 0) return 0;
    if (s[len - 1] == ':') return 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f) return 0; /* inner tabs are fine */
        if (c == ':' && (s[i + 1] == ' ' || s[i + 1] == '\t')) return 0;
        if (c == '#' && i > 0 && (s[i - 1] == ' ' || s[i - 1] == '\t')) return 0;
        if (flow && strchr(",[]{}", c)) return 0;
        /* libyaml ends a plain scalar at ':' before a flow indicator and refuses one
         * before '?' in flow ("found unexpected ':'"): "s:?1.obj" (issue 29) */
        if (flow && c == ':' && i + 1 < len && strchr(",?[]{}", s[i + 1])) return 0;
    }
    return 1;
}

static void emit_quoted(sbuf *b, const char *s)
{
    sb_add(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char esc[8];
        switch (*p) {
        case '"': sb_str(b, "\\\""); break;
        case '\\': sb_str(b, "\\\\"); break;
        case '\n': sb_str(b, "\\n"); break;
        case '\t': sb_str(b, "\\t"); break;
        case '\r': sb_str(b, "\\r"); break;
        default:
            if (*p < 0x20 || *p == 0x7f) {
                snprintf(esc, sizeof esc, "\\x%02x", *p);
                sb_str(b, esc);
            } else if (*p >= 0x80) {
                int n;
                long cp = utf8_at(p, &n);
                if (needs_escape(cp)) {
                    snprintf(esc, sizeof esc, "\\u%04lx", (unsigned long)cp);
                    sb_str(b, esc);
                } else {
                    sb_add(b, (const char *)p, (size_t)n);
                }
                p += n - 1;
            } else {
                sb_add(b, (const char *)p, 1);
            }
        }
    }
    sb_add(b, "\"", 1);
}

static void emit_key(sbuf *b, const char *key)
{
    if (plain_safe(key, 0)) sb_str(b, key);
    else emit_quoted(b, key);
}

/* A scalar as written inside a flow sequence: plain when it reads back the same. */
static int flow_item_ok(const cb_yaml *n)
{
    return n->kind == CB_YAML_SCALAR && (n->quoted || plain_safe(n->scalar, 1));
}

/* Is the node written on the same line as its key / dash? */
static int is_inline(const cb_yaml *n)
{
    if (n->kind == CB_YAML_SCALAR) return 1;
    if (n->n == 0) return 1;
    if (n->kind == CB_YAML_MAP) return 0;
    for (int i = 0; i < n->n; i++)
        if (!flow_item_ok(n->items[i])) return 0;
    return 1;
}

static void emit_inline(sbuf *b, const cb_yaml *n)
{
    if (n->kind == CB_YAML_SCALAR) {
        if (n->quoted || (n->scalar[0] && !plain_safe(n->scalar, 0))) emit_quoted(b, n->scalar);
        else sb_str(b, n->scalar);
        return;
    }
    if (n->kind == CB_YAML_MAP) { sb_str(b, "{}"); return; }
    sb_add(b, "[", 1);
    for (int i = 0; i < n->n; i++) {
        if (i) sb_str(b, ", ");
        const cb_yaml *it = n->items[i];
        if (it->quoted) emit_quoted(b, it->scalar);
        else sb_str(b, it->scalar);
    }
    sb_add(b, "]", 1);
}

/* Write a block map or sequence at `indent`; when first_done, the first line's
 * indentation (a "- " prefix) is already written. */
static void emit_block(sbuf *b, const cb_yaml *n, int indent, int first_done)
{
    for (int i = 0; i < n->n; i++) {
        const cb_yaml *it = n->items[i];
        if (i > 0 || !first_done) sb_indent(b, indent);
        if (n->kind == CB_YAML_MAP) {
            emit_key(b, n->keys[i]);
            sb_add(b, ":", 1);
            if (is_inline(it)) {
                if (!(it->kind == CB_YAML_SCALAR && !it->quoted && !it->scalar[0])) {
                    sb_add(b, " ", 1);
                    emit_inline(b, it);
                }
                sb_add(b, "\n", 1);
            } else {
                sb_add(b, "\n", 1);
                emit_block(b, it, indent + 2, 0);
            }
        } else {
            if (is_inline(it)) {
                if (it->kind == CB_YAML_SCALAR && !it->quoted && !it->scalar[0]) {
                    sb_str(b, "-\n");
                } else {
                    sb_str(b, "- ");
                    emit_inline(b, it);
                    sb_add(b, "\n", 1);
                }
            } else {
                sb_str(b, "- ");
                emit_block(b, it, indent + 2, 1);
            }
        }
    }
}

char *cb_yaml_emit(const cb_yaml *node)
{
    sbuf b = { 0 };
    if (node) {
        if (is_inline(node)) {
            emit_inline(&b, node);
            sb_add(&b, "\n", 1);
        } else {
            emit_block(&b, node, 0, 0);
        }
    }
    return sb_finish(&b);
}

static void emit_flow(sbuf *b, const cb_yaml *n)
{
    if (n->kind == CB_YAML_SCALAR) {
        if (n->quoted || (n->scalar[0] && !plain_safe(n->scalar, 1))) emit_quoted(b, n->scalar);
        else sb_str(b, n->scalar[0] ? n->scalar : "~");
        return;
    }
    int map = n->kind == CB_YAML_MAP;
    sb_str(b, map ? "{" : "[");
    for (int i = 0; i < n->n; i++) {
        if (i) sb_str(b, ", ");
        if (map) {
            if (plain_safe(n->keys[i], 1)) sb_str(b, n->keys[i]);
            else emit_quoted(b, n->keys[i]);
            sb_str(b, ": ");
        }
        emit_flow(b, n->items[i]);
    }
    sb_str(b, map ? "}" : "]");
}

char *cb_yaml_emit_flow(const cb_yaml *node)
{
    sbuf b = { 0 };
    if (node) emit_flow(&b, node);
    else sb_str(&b, "{}");
    return sb_finish(&b);
}

/* ---------------------------------------------------------------- typed reads */

static int expect_scalar(const cb_yaml *node, const char *label, const char *what,
                         const char *expected, cb_error *err)
{
    char where[600];
    if (!what) what = "value";
    if (!node)
        return CB_FAIL(err, CB_ERR_INPUT, "%s: %s: expected %s, got nothing", label ? label : "<yaml>",
                       what, expected);
    if (node->kind != CB_YAML_SCALAR)
        return CB_FAIL(err, CB_ERR_INPUT, "%s: %s: expected %s, got %s",
                       cb_yaml_where(node, label, where, sizeof where), what, expected,
                       kind_name(node->kind));
    return 0;
}

int cb_yaml_double(const cb_yaml *node, const char *label, const char *what, double *out, cb_error *err)
{
    char where[600];
    int rc;
    if (!out) return CB_FAIL(err, CB_ERR_INPUT, "cb_yaml_double: out is NULL");
    if ((rc = expect_scalar(node, label, what, "a number", err))) return rc;
    if (!what) what = "value";
    const char *s = node->scalar;
    char *end = NULL;
    errno = 0;
    double v = (!node->quoted && s[0] && !isspace((unsigned char)s[0])) ? strtod(s, &end) : 0.0;
    if (!end || end == s || *end != '\0')
        return CB_FAIL(err, CB_ERR_INPUT, "%s: %s: expected a number, got %s'%s'",
                       cb_yaml_where(node, label, where, sizeof where), what,
                       node->quoted ? "the quoted string " : "", s);
    if (!isfinite(v))
        return CB_FAIL(err, CB_ERR_INPUT, "%s: %s: expected a finite number, got '%s'",
                       cb_yaml_where(node, label, where, sizeof where), what, s);
    *out = v;
    return 0;
}

int cb_yaml_int(const cb_yaml *node, const char *label, const char *what, int *out, cb_error *err)
{
    char where[600];
    int rc;
    if (!out) return CB_FAIL(err, CB_ERR_INPUT, "cb_yaml_int: out is NULL");
    if ((rc = expect_scalar(node, label, what, "an integer", err))) return rc;
    if (!what) what = "value";
    const char *s = node->scalar;
    char *end = NULL;
    errno = 0;
    long v = (!node->quoted && s[0] && !isspace((unsigned char)s[0])) ? strtol(s, &end, 10) : 0;
    if (!end || end == s || *end != '\0')
        return CB_FAIL(err, CB_ERR_INPUT, "%s: %s: expected an integer, got %s'%s'",
                       cb_yaml_where(node, label, where, sizeof where), what,
                       node->quoted ? "the quoted string " : "", s);
    if (errno == ERANGE || v < INT_MIN || v > INT_MAX)
        return CB_FAIL(err, CB_ERR_INPUT, "%s: %s: integer '%s' is out of range",
                       cb_yaml_where(node, label, where, sizeof where), what, s);
    *out = (int)v;
    return 0;
}

int cb_yaml_bool(const cb_yaml *node, const char *label, const char *what, int *out, cb_error *err)
{
    static const char *const yes[] = { "true", "yes", "on" }, *const no[] = { "false", "no", "off" };
    char where[600];
    int rc;
    if (!out) return CB_FAIL(err, CB_ERR_INPUT, "cb_yaml_bool: out is NULL");
    if ((rc = expect_scalar(node, label, what, "true or false", err))) return rc;
    if (!what) what = "value";
    if (!node->quoted) {
        for (int i = 0; i < 3; i++) {
            if (strcasecmp(node->scalar, yes[i]) == 0) { *out = 1; return 0; }
            if (strcasecmp(node->scalar, no[i]) == 0) { *out = 0; return 0; }
        }
    }
    return CB_FAIL(err, CB_ERR_INPUT, "%s: %s: expected true or false (or yes/no, on/off), got '%s'",
                   cb_yaml_where(node, label, where, sizeof where), what, node->scalar);
}

int cb_yaml_vec(const cb_yaml *node, const char *label, const char *what, int n, double *out,
                cb_error *err)
{
    char where[600];
    if (!out || n < 1) return CB_FAIL(err, CB_ERR_INPUT, "cb_yaml_vec: bad arguments");
    if (!what) what = "value";
    if (!node)
        return CB_FAIL(err, CB_ERR_INPUT, "%s: %s: expected a list of %d numbers, got nothing",
                       label ? label : "<yaml>", what, n);
    if (node->kind != CB_YAML_SEQ)
        return CB_FAIL(err, CB_ERR_INPUT, "%s: %s: expected a list of %d numbers like [%s], got %s%s%s%s",
                       cb_yaml_where(node, label, where, sizeof where), what, n,
                       n == 3 ? "0, 0, 1" : n == 2 ? "1, 1" : "...", kind_name(node->kind),
                       node->kind == CB_YAML_SCALAR ? " '" : "",
                       node->kind == CB_YAML_SCALAR ? node->scalar : "",
                       node->kind == CB_YAML_SCALAR ? "'" : "");
    if (node->n != n)
        return CB_FAIL(err, CB_ERR_INPUT, "%s: %s: expected a list of %d numbers, got %d",
                       cb_yaml_where(node, label, where, sizeof where), what, n, node->n);
    double tmp[16];
    double *v = n <= 16 ? tmp : NULL;
    for (int i = 0; i < n; i++) {
        char item[300];
        double x;
        snprintf(item, sizeof item, "%s[%d]", what, i);
        int rc = cb_yaml_double(node->items[i], label, item, &x, err);
        if (rc) return rc;
        if (v) v[i] = x;
        else out[i] = x;
    }
    if (v) memcpy(out, v, (size_t)n * sizeof *out);
    return 0;
}

int cb_yaml_check_keys(const cb_yaml *map, const char *label, const char *what,
                       const char *const *allowed, cb_error *err)
{
    char where[600];
    if (!allowed) return CB_FAIL(err, CB_ERR_INPUT, "cb_yaml_check_keys: allowed is NULL");
    if (!what) what = "this map";
    if (!map) return 0;
    if (map->kind != CB_YAML_MAP)
        return CB_FAIL(err, CB_ERR_INPUT, "%s: %s: expected a map of keys, got %s",
                       cb_yaml_where(map, label, where, sizeof where), what, kind_name(map->kind));
    for (int i = 0; i < map->n; i++) {
        int ok = 0;
        for (int k = 0; allowed[k] && !ok; k++) ok = strcmp(map->keys[i], allowed[k]) == 0;
        if (ok) continue;
        char list[700];
        size_t len = 0;
        list[0] = '\0';
        for (int k = 0; allowed[k]; k++) {
            int w = snprintf(list + len, sizeof list - len, "%s%s", k ? ", " : "", allowed[k]);
            if (w < 0 || (size_t)w >= sizeof list - len) break;
            len += (size_t)w;
        }
        return CB_FAIL(err, CB_ERR_INPUT, "%s: unknown key '%s' in %s; allowed keys: %s",
                       key_where(map, i, label, where, sizeof where), map->keys[i], what,
                       allowed[0] ? list : "(none)");
    }
    return 0;
}
