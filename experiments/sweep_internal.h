/* experiments/sweep_internal.h — what the sweep's files share (not a public API):
 * the state of one run as read back from its folder, the index writer and the folder
 * lock. experiment.c: experiment files and their expansion (sweep.h); sweep_state.c:
 * reading a run's state back; sweep_index.c: index.csv and index.h5; sweep_lock.c:
 * the folder lock; sweep.c: the workers. */
#ifndef CB_SWEEP_INTERNAL_H
#define CB_SWEEP_INTERNAL_H

#include "core/error.h"
#include "core/yamltree.h"
#include "experiments/harness/run_summary.h"
#include "experiments/sweep.h"

typedef struct run_state {
    int have;                 /* summary read */
    cb_run_summary s;
    int has_note;             /* a .err note exists */
    char note_status[32];
    char note_msg[1024];
    int file_exists;
    int running;              /* the file is locked by the process writing it (another shard) */
    char read_error[512];     /* the run file exists but could not be read */
    char checked[512];        /* first line of <run>.check when newer than the run file, else "" */
} run_state;

/* A grid value as index text: a scalar as written, a list or map as flow YAML (malloc'd). */
char *cb_sweep_value_text(const cb_yaml *v);

/* <output>/<run name><ext> */
void cb_sweep_run_path(const cb_experiment *e, const cb_sweep_run *r, const char *ext, char *buf, size_t n);
/* Reads the run's file, .err note and .check back into st. */
void cb_sweep_refresh(const cb_experiment *e, const cb_sweep_run *r, run_state *st);
/* The status and message a row of the index shows for st. */
const char *cb_sweep_row_status(const run_state *st);
const char *cb_sweep_row_message(const run_state *st);
/* 1 when the run is finished ok with the scene text this run would produce (resumption). */
int cb_sweep_run_is_done(const cb_experiment *e, const cb_sweep_run *r, const run_state *st);
/* index.csv and index.h5 of these states (one per run of e), written atomically, under
 * the folder's index lock (<output>/.index-lock). */
int cb_sweep_write_index_states(const cb_experiment *e, const run_state *states, cb_error *err);
/* The same after reading every run's state from disk again, under the lock: what shards
 * that share a folder use, so the last index written is never staler than the files. */
int cb_sweep_write_index_fresh(const cb_experiment *e, run_state *states, cb_error *err);
/* The folder lock of shard o->shard of o->nshards (see sweep_lock.c). */
int cb_sweep_sweep_lock(const cb_experiment *e, const cb_sweep_options *o, cb_error *err);
void cb_sweep_sweep_unlock(const cb_experiment *e, const cb_sweep_options *o);

#endif
