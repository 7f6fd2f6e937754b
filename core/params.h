/* core/params.h — typed access to a solver's parameter block (`solvers.<name>` in
 * the scene), and the record of the parameters a solver actually used.
 *
 * Getters take a default, a valid range (choices for a choice) and a one-line meaning
 * (`doc`); a value of the wrong type or out of range is an error naming file:line. A
 * NULL block means "all defaults". When p->rec is not NULL every getter records the
 * key, its type, the value used (given or default), the default, the range or the
 * choices and the meaning: the solver's effective parameters.
 *
 * A solver's create() reads its keys between cb_params_begin and cb_params_end:
 *
 *     cb_params q;
 *     int rc = cb_params_begin(p, &q, err);
 *     if (!rc) rc = cb_params_int(&q, "iterations", 10, 1, 1000, &s->it, "sweeps per step", err);
 *     ...
 *     rc = cb_params_end(p, &q, rc, err);
 *
 * begin gives q a record (p's own, or a temporary one when p has none); end checks that
 * every key of the block was asked for by a getter (an unknown key is an error naming
 * it and the allowed keys: those the getters were asked for) and frees a temporary
 * record. A key read only in some modes must therefore be read in every mode. */
#ifndef CB_PARAMS_H
#define CB_PARAMS_H

#include "core/error.h"
#include "core/yamltree.h"

typedef struct cb_params_record cb_params_record;

typedef struct cb_params {
    const char *label;      /* scene file, for messages */
    const char *solver;     /* the block's name */
    const cb_yaml *block;   /* a map, or NULL */
    cb_params_record *rec;  /* where the getters record what they read; NULL: nowhere */
} cb_params;

typedef enum { CB_PARAM_DOUBLE, CB_PARAM_INT, CB_PARAM_BOOL, CB_PARAM_CHOICE } cb_param_type;

/* One recorded parameter. Doubles use value/def/lo/hi; ints, bools and choices (the
 * index into choices) use ivalue/idef/ilo/ihi (bools: 0..1, choices: 0..n-1). */
typedef struct cb_param_entry {
    char *key, *doc;
    cb_param_type type;
    int given;              /* the block set it (else the default was used) */
    double value, def, lo, hi;
    int ivalue, idef, ilo, ihi;
    char **choices;         /* CB_PARAM_CHOICE: NULL-terminated copy */
} cb_param_entry;

int cb_params_double(const cb_params *p, const char *key, double def, double lo, double hi,
                     double *out, const char *doc, cb_error *err);
int cb_params_int(const cb_params *p, const char *key, int def, int lo, int hi, int *out,
                  const char *doc, cb_error *err);
int cb_params_bool(const cb_params *p, const char *key, int def, int *out, const char *doc, cb_error *err);
/* One of `choices` (NULL-terminated); *out is the index of the choice. */
int cb_params_choice(const cb_params *p, const char *key, const char *const *choices, int def,
                     int *out, const char *doc, cb_error *err);

/* See above. begin: *q = *p, with a new record when p->rec is NULL. end: when rc is 0,
 * the unknown-key check against q->rec; frees the record begin made; returns rc when
 * it is not 0, else the check's status. Call end on every path after begin. */
int cb_params_begin(const cb_params *p, cb_params *q, cb_error *err);
int cb_params_end(const cb_params *p, cb_params *q, int rc, cb_error *err);
/* Every key of the block must be one recorded in p->rec (not NULL). */
int cb_params_check(const cb_params *p, cb_error *err);

int cb_params_record_create(cb_params_record **out, cb_error *err);
void cb_params_record_free(cb_params_record **rec);
int cb_params_record_count(const cb_params_record *rec);
const cb_param_entry *cb_params_record_at(const cb_params_record *rec, int i);
const cb_param_entry *cb_params_record_find(const cb_params_record *rec, const char *key);
/* The effective parameters as one line of flow YAML, in the order they were read:
 * "{scheme: verlet, damping: 0, substeps: 0}"; doubles as the shortest of %.15g,
 * %.16g, %.17g that reads back to the same double (so they round-trip exactly), bools
 * true/false, choices by name. Fed back as the solver's block it gives the same
 * parameters (the contract of the run file's `parameters`). malloc'd; "{}" when empty. */
char *cb_params_record_text(const cb_params_record *rec);
/* One entry's value, or its default (which = 1), as that text; returns buf. */
const char *cb_param_entry_value_text(const cb_param_entry *e, int which, char *buf, size_t size);

/* The block as given, one line of text ("{iterations: 10}"); malloc'd; "{}" when absent. */
char *cb_params_text(const cb_params *p);

/* The same convention for the maps of scenes and experiment files, whose readers have
 * typed getters of their own (vectors, lists, nested maps, open ranges): every getter
 * notes the key it asks of a map (cb_keys_ask), and cb_keys_check then refuses a key of
 * that map no getter asked for, naming the keys asked (in asking order), exactly as
 * cb_params_end does for a solver's block. There are no hand-typed key lists: a key is
 * allowed because something reads it. */
typedef struct cb_keys cb_keys;
int cb_keys_create(cb_keys **out, cb_error *err);
void cb_keys_free(cb_keys **k);
/* map[key] (NULL when absent or map is NULL), noting key as asked of map. `key` must
 * outlive k (a string literal). Out of memory is reported by the next cb_keys_check. */
const cb_yaml *cb_keys_ask(cb_keys *k, const cb_yaml *map, const char *key);
/* Every key of map (a map, or NULL: nothing to check) was asked for; otherwise
 * "LABEL:LINE:COL: unknown key 'x' in WHAT; allowed keys: ...". */
int cb_keys_check(const cb_keys *k, const cb_yaml *map, const char *label, const char *what, cb_error *err);

#endif
