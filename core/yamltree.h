/* core/yamltree.h — a small document tree over libyaml, with the line and column
 * of every node, so every scene error can name file:line:col. Supports what scene
 * and experiment files use: maps, sequences and scalars (block and flow style),
 * no anchors or tags. Overrides (--set a.b.c=value) edit the tree before the scene
 * is interpreted, and the tree is written back as YAML for the run file. */
#ifndef CB_YAMLTREE_H
#define CB_YAMLTREE_H

#include <stdio.h>
#include "core/error.h"

typedef enum { CB_YAML_SCALAR, CB_YAML_SEQ, CB_YAML_MAP } cb_yaml_kind;

typedef struct cb_yaml {
    cb_yaml_kind kind;
    int line, col;          /* 1-based position in the source (0 for --set values) */
    char *scalar;           /* CB_YAML_SCALAR: the text */
    int quoted;             /* scalar was quoted in the source (a string, never a number) */
    int n;                  /* SEQ/MAP: number of children */
    char **keys;            /* MAP: keys[i] */
    int *key_line;          /* MAP: line of keys[i] */
    struct cb_yaml **items; /* SEQ/MAP: children */
    int *key_col;           /* MAP: column of keys[i] (0 for keys added by --set) */
    char *origin;           /* "--set KEY" for nodes that came from an override, else NULL */
} cb_yaml;

/* Parse a file / a string. `label` names the source in messages. */
int cb_yaml_load_file(const char *path, cb_yaml **out, cb_error *err);
int cb_yaml_load_string(const char *text, const char *label, cb_yaml **out, cb_error *err);
void cb_yaml_free(cb_yaml **node);

/* Lookup in a map; NULL if absent or node is not a map. */
cb_yaml *cb_yaml_get(const cb_yaml *map, const char *key);
/* Apply "a.b.c=value": value is parsed as YAML (so lists like [1,2] work); missing
 * maps along the path are created; a list element is addressed by its index (the
 * index one past the end appends a new element). */
int cb_yaml_set(cb_yaml *root, const char *assignment, const char *label, cb_error *err);
/* Byte offset of the first byte of text that is not part of valid UTF-8 (overlong forms,
 * surrogates and code points above U+10FFFF included), or -1 when all of it is. */
long cb_utf8_invalid_at(const char *text);
/* Emit as YAML text (malloc'd). Re-parsing gives the same tree. */
char *cb_yaml_emit(const cb_yaml *node);
/* The node as one line of flow YAML ("{iterations: 10, mode: fast}"); malloc'd. */
char *cb_yaml_emit_flow(const cb_yaml *node);
cb_yaml *cb_yaml_clone(const cb_yaml *node);

/* Typed scalar reads with messages "label:line:col: key: expected ..." */
int cb_yaml_double(const cb_yaml *node, const char *label, const char *what, double *out, cb_error *err);
int cb_yaml_int(const cb_yaml *node, const char *label, const char *what, int *out, cb_error *err);
int cb_yaml_bool(const cb_yaml *node, const char *label, const char *what, int *out, cb_error *err);
int cb_yaml_vec(const cb_yaml *node, const char *label, const char *what, int n, double *out, cb_error *err);
/* Where a node is, for messages: "label:line:col", or its origin ("--set KEY")
 * for override values; "label" alone when node is NULL. Returns buf. */
const char *cb_yaml_where(const cb_yaml *node, const char *label, char *buf, size_t size);
/* Check that every key of a map is in `allowed` (NULL-terminated); the message
 * names the unknown key, its line and the allowed keys. */
int cb_yaml_check_keys(const cb_yaml *map, const char *label, const char *what,
                       const char *const *allowed, cb_error *err);

#endif
