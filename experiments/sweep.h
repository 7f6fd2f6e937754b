/* experiments/sweep.h — experiment files and `clothbench sweep`.
 *
 * An experiment file (YAML) names scenes, solvers, fixed --set overrides, a grid of
 * --set paths with lists of values, and a number of repeats:
 *
 *     name: pbd_iterations                   # default output folder runs/<name>
 *     output: runs/figures/pbd_iterations    # optional
 *     scenes: [data/scenes/hanging.yaml]     # one or more (or one string)
 *     solvers: [pbd, xpbd]                   # one or more, or `all` (every registered solver)
 *     set: {duration: 1.0, cloth.grid.nx: 30}
 *     grid:
 *       solvers.pbd.iterations: [5, 10, 40]
 *     repeats: 1
 *     description: free text                 # optional, ignored
 *
 * A `set` or `grid` path that names a solver block (solvers.X....) applies only to
 * runs of solver X. Scene paths are taken relative to the current folder when the
 * file exists there, else relative to the experiment file's folder.
 *
 * Expansion order (the run index): scenes, then solvers, then the grid values in the
 * order of the file (the last key varies fastest), then repeats. A run is named
 *
 *     <scene stem>__<solver>[__<label>=<value>]...__r<repeat>.h5
 *
 * where the label is the shortest dotted suffix of the key's path that tells it apart
 * from the other keys of the same run, and scene stem, solver and value are encoded
 * injectively: [A-Za-z0-9.-] stand for themselves, so does '_' between two such
 * characters unless two upper-case hex digits follow it, and every other byte b
 * becomes "_HH" (two upper-case hex digits). Decoding: "_" followed by two upper-case
 * hex digits is an escape, any other "_" is itself. An encoded text never contains
 * "__" and never ends with '_', so a name splits uniquely at its "__" separators and
 * two different runs of one experiment never share a name (two scenes with the same
 * file stem are rejected).
 *
 * The output folder holds one run file per run, `<name>.err` for a run that failed
 * before it could write a run file (bad parameter value) or crashed, and the index:
 * index.csv (columns in the order of cbrun.py's HEAD/TAIL and the README, then extra columns) and index.h5
 * (one compound dataset /runs with the same columns), both rewritten after each
 * finished run through a temporary file and rename. Index statuses: those of the run
 * file (ok, diverged, interrupted, error, running), "error" from a .err note, and
 * "pending" for a run without a file yet.
 *
 * Optional keys: `reference: PATH` (runs log position_error and energy_error against
 * it; the sweep makes it when missing, experiments/reference.h, as `clothbench reference`
 * with `reference_method: auto|verlet|ipc`, `reference_refine: Q` and
 * `reference_max_check: D` when given), `expect_diverged:
 * true` (a diverged run is a result: kept like an ok one, not a failure) and
 * `time_limit: S` (wall seconds per run, setup included: a run past it ends
 * "interrupted" with the message "time limit of S s reached ..." (run.h), is recorded
 * like any failed run and run again by the next sweep).
 *
 * Resumption: a run is skipped when its file has status ok (or diverged, with
 * expect_diverged) and holds exactly the scene text (after overrides) this run would produce; --dry-run shows per run
 * "run" (no file yet), "skip", "rerun" (failed or unfinished) or "stale" (ok, but
 * the scene file or the overrides changed since).
 */
#ifndef CB_SWEEP_H
#define CB_SWEEP_H

#include <stdio.h>
#include "core/error.h"

typedef struct cb_sweep_key {
    char *path;        /* the --set path, e.g. "solvers.pbd.iterations" */
    char *solver;      /* the solver it is restricted to (solvers.X...), NULL: every run */
    char *label;       /* short readable label used in run names (file-name safe) */
    int nvalues;
    char **values;     /* value as written (scalars) or flow YAML (lists, maps) */
    char **set_values; /* the same as --set value text (quoted scalars stay strings) */
} cb_sweep_key;

typedef struct cb_sweep_run {
    long index;        /* position in the expansion */
    int scene;         /* index into scenes */
    int solver;        /* index into solvers */
    int repeat;
    int *value;        /* per key: index into keys[k].values, -1 when the key does not apply */
    char *name;        /* file stem (no .h5) */
} cb_sweep_run;

typedef struct cb_experiment {
    char *path;        /* the experiment file */
    char *name;
    char *output;      /* output folder */
    char *reference;   /* reference run file for position_error (NULL: none) */
    int reference_method;      /* how the sweep makes it when missing (experiments/reference.h): CB_REFERENCE_AUTO (0), ... */
    int reference_refine;      /* its dt / Q (0: CB_REFERENCE_REFINE) */
    double reference_max_check; /* its check's bound, m (0: CB_REFERENCE_MAX_CHECK) */
    int expect_diverged; /* a diverged run is a result (stability maps), not a failure */
    double time_limit; /* wall seconds per run (cb_run_def.time_limit); 0: none */
    int nscenes;
    char **scenes;     /* resolved scene paths */
    char **scene_stems;
    int nsolvers;
    char **solvers;
    int nsets;
    char **sets;       /* fixed "path=value" overrides */
    char **set_solver; /* per fixed override: the solver it is restricted to, or NULL */
    int nkeys;
    cb_sweep_key *keys;
    int repeats;
    long nruns;
    cb_sweep_run *runs;
} cb_experiment;

/* Load and expand an experiment file. `output` (may be NULL) overrides the output
 * folder; `extra_sets` are more fixed overrides (from the command line). Errors in
 * the file name file:line:col. */
int cb_experiment_load(const char *path, const char *output, const char *const *extra_sets, int nextra,
                       cb_experiment **out, cb_error *err);
void cb_experiment_free(cb_experiment **e);

/* The --set overrides of one run (fixed ones, then grid values); *sets is a
 * malloc'd array of malloc'd strings, free with cb_sweep_free_sets. */
int cb_sweep_run_sets(const cb_experiment *e, const cb_sweep_run *r, char ***sets, int *nsets, cb_error *err);
void cb_sweep_free_sets(char ***sets, int nsets);

/* Encode text with the injective file-name encoding above into out (size n);
 * returns CB_ERR_INPUT when it does not fit. */
int cb_sweep_encode(const char *text, char *out, size_t n, cb_error *err);

typedef struct cb_sweep_options {
    int jobs;          /* worker processes (>= 1) */
    int shard, nshards;/* run only runs with index % nshards == shard (nshards >= 1) */
    int dry_run;       /* list the runs of this shard and what would happen; run nothing */
    int index_only;    /* rewrite the index from the run files; run nothing */
    int check;         /* rerun every finished run of this shard from its file and compare
                          (experiments/rerun.h): <run>.check says identical or what differs;
                          the index's `checked` column shows it. Runs nothing new. */
    int write_frames;  /* 1: run files keep /frames */
    int progress;      /* progress line on stderr (only drawn when it is a terminal) */
    int quiet;         /* no line per finished run on `out` */
} cb_sweep_options;

cb_sweep_options cb_default_sweep_options(void);

typedef struct cb_sweep_stats {
    long total;        /* runs in the experiment */
    long selected;     /* runs in this shard */
    long skipped;      /* already finished with status ok */
    long ran;          /* run now */
    long ok;           /* selected runs with status ok at the end (skipped included) */
    long failed;       /* selected runs that did not end ok (nor diverged, with expect_diverged) */
    long diverged;     /* with expect_diverged: selected runs that ended diverged (not failed) */
    int interrupted;   /* the sweep was stopped by SIGINT/SIGTERM */
} cb_sweep_stats;

/* Runs the experiment (see cb_sweep_options), writing `out` lines (dry-run list, one
 * line per finished run). Returns 0 when the sweep could be carried out (check
 * stats->failed and stats->interrupted), a negative status for bad input or I/O. */
int cb_sweep_execute(const cb_experiment *e, const cb_sweep_options *o, FILE *out, cb_sweep_stats *stats,
                     cb_error *err);

/* Rewrite index.csv and index.h5 of the output folder from the run files. */
int cb_sweep_write_index(const cb_experiment *e, cb_error *err);

#endif
