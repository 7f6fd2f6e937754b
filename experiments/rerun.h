/* experiments/rerun.h — `clothbench rerun RUN.h5 [-o NEW.h5] [--check]`: run again
 * what a run file says produced it, and compare.
 *
 * The run is rebuilt from the file alone: the scene text (after the overrides it was
 * run with), the folder its relative paths resolve against (`scene_dir`), the solver,
 * and the effective solver parameters (`parameters`: every key the solver read, with
 * the value it used), which replace the scene's `solvers.<name>` block so that a
 * changed default cannot change the rerun. Before running, the SHA-256 of every file
 * the scene reads is compared with the one recorded (`mesh_files`); a changed file is
 * reported, and the rerun goes on. A contact reference with a window (`clothbench
 * reference`, experiments/reference.h: its run ended by its check at the frame
 * `reference_exceeded_at`) is rerun to that frame, where its run ended (the check itself
 * is not rerun).
 *
 * The check compares every /series dataset except the wall-clock ones (`wall_*`),
 * /frames/time, /frames/positions and /mesh bit for bit (NaN payloads included): it
 * is "identical", or names the first row that differs and every metric differing
 * there, with both values. It also says whether the build differs (commit, build
 * type, flags, compiler, libraries): a difference under another build is a finding
 * about the build, under the same build a bug (determinism is tested per solver). */
#ifndef CB_RERUN_H
#define CB_RERUN_H

#include <stdio.h>

#include "core/error.h"

typedef struct cb_rerun_def {
    const char *run_path;     /* the run file to reproduce */
    const char *output;       /* the new run file; NULL: <run>.rerun.h5 beside it */
    const char *scene_dir;    /* NULL: the recorded scene_dir (use when the files moved) */
    int check;                /* compare the new file with the old one */
    int quiet;                /* no progress bar */
} cb_rerun_def;

typedef struct cb_rerun_result {
    char output[4096];        /* the new run file */
    int changed_files;        /* files the scene reads whose SHA-256 changed since the run */
    int build_differs;        /* the provenance's build line differs */
    int identical;            /* check: every compared dataset is bitwise equal */
    long first_row;           /* check: the first differing series row (-1: none) */
    char first_metric[128];   /* check: a metric differing at first_row, or the dataset that differs */
} cb_rerun_result;

/* Runs and (with check) compares, writing what it finds to `out` (NULL: nothing).
 * Returns 0 when the run finished and, with check, the files are identical;
 * CB_WARN_DIFFERS (> 0) when they differ; < 0 on error (unreadable file, newer layout,
 * a rerun that failed). */
enum { CB_WARN_DIFFERS = 1 };
int cb_rerun(const cb_rerun_def *def, cb_rerun_result *res, FILE *out, cb_error *err);

/* The check alone, for two existing run files (used by cb_rerun and `sweep --check`). */
int cb_run_files_compare(const char *old_path, const char *new_path, cb_rerun_result *res, FILE *out,
                         cb_error *err);

#endif
