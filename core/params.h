/* core/params.h — typed access to a solver's parameter block (`solvers.<name>` in
 * the scene). Getters take a default and a valid range; a value of the wrong type
 * or out of range is an error naming file:line. A solver's create() reads its keys
 * and then calls cb_params_check(): an unknown key is an error naming the key and
 * the allowed keys. A NULL block means "all defaults". */
#ifndef CB_PARAMS_H
#define CB_PARAMS_H

#include "core/error.h"
#include "core/yamltree.h"

typedef struct cb_params {
    const char *label;      /* scene file, for messages */
    const char *solver;     /* the block's name */
    const cb_yaml *block;   /* a map, or NULL */
} cb_params;

int cb_params_double(const cb_params *p, const char *key, double def, double lo, double hi,
                     double *out, cb_error *err);
int cb_params_int(const cb_params *p, const char *key, int def, int lo, int hi, int *out, cb_error *err);
int cb_params_bool(const cb_params *p, const char *key, int def, int *out, cb_error *err);
/* One of `choices` (NULL-terminated); *out is the index of the choice. */
int cb_params_choice(const cb_params *p, const char *key, const char *const *choices, int def,
                     int *out, cb_error *err);
int cb_params_check(const cb_params *p, const char *const *allowed, cb_error *err);
/* The block as one line of text ("{iterations: 10}") for the run file; malloc'd. */
char *cb_params_text(const cb_params *p);

#endif
