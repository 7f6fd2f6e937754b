/* experiments/harness/run.h — the run loop: scene -> world -> solver steps -> metrics -> run file.
 * Shared by `clothbench run`, sweeps and benchmarks. */
#ifndef CB_RUN_H
#define CB_RUN_H

#include <stddef.h>
#include <stdio.h>
#include "core/error.h"
#include "core/world.h"

typedef struct cb_run_def {
    const char *scene_path;
    const char *solver;
    const char *output;        /* run file; NULL: no file (bench) */
    const char *const *sets;   /* --set overrides */
    int nsets;
    int progress;              /* draw a progress bar on stderr */
    int write_frames;          /* 1 (default): write /frames */
    long max_steps;            /* > 0: stop after this many steps (bench) */
    int audit;                 /* 1: the continuous audit (experiments/harness/audit.h) even if the scene has none */
    /* reruns and provenance (all optional, NULL by default) */
    const char *scene_text;    /* non-NULL: load the scene from this text (scene_path then only
                                  names it in messages), resolving files against scene_dir */
    const char *scene_dir;
    const char *solver_parameters; /* non-NULL: YAML map that replaces solvers.<solver> */
    const char *reference;     /* non-NULL: a reference run file; the series position_error compares
                                  with it at its frame times (experiments/harness/reference.h) */
    double max_memory;         /* > 0: the memory (bytes) the run may use; 0: MemAvailable of
                                  /proc/meminfo. A scene whose estimate exceeds it is refused
                                  (CB_ERR_INPUT) before the cloth is allocated */
    double time_limit;         /* > 0: the wall seconds the run may take, setup included; past
                                  them (SIGALRM) the run ends like one interrupted by a signal,
                                  status "interrupted", its message starting "time limit of S s
                                  reached". The timer is disarmed and SIGALRM's handler restored
                                  before cb_run returns. 0: no limit */
    /* optional: called after every step that ends on a frame time (the first frame, t = 0,
     * aside), before that row and frame are written, with the world and the steps done.
     * 0: go on; > 0: the run ends there with status "ok" and its message from why[size]
     * (that step's row and frame are not written: the file ends at the frame before); < 0:
     * an error (err set) that ends the run with status "error" ("interrupted" for
     * CB_ERR_INTERRUPTED: the hook polls the interrupt flag in its loops). `clothbench reference`
     * advances its check beside the reference with it (experiments/reference.h). */
    int (*frame_hook)(void *ctx, const cb_world *w, long steps, char *why, size_t size, cb_error *err);
    void *frame_ctx;
} cb_run_def;

cb_run_def cb_default_run_def(void);

typedef struct cb_run_result {
    char status[16];           /* "ok" | "diverged" | "interrupted" | "error" */
    char message[1024];
    int started;               /* the inputs were read and the solver created: a failure from
                                  here on is the run's (exit 1), not bad input (exit 2) */
    long steps;                /* steps completed */
    long frames;
    double wall_s;             /* total wall time of solver steps */
    double first_step_s;       /* wall time of the first step (fms, newton: it holds the first
                                  factorization, the rest of the prefactorization) */
    double mean_step_ms;
    double create_s;           /* wall time of the solver's create (e.g. prefactorization) */
    double audit_s;            /* wall time of the continuous audit (0 without one) */
    int breaches;              /* breaches of the health check (experiments/harness/health.h); > 0: "diverged" */
    int nstages;               /* per-stage wall-time totals over the run (as in /stages) */
    const char *stage_name[32];    /* static strings owned by the solver class */
    double stage_seconds[32];
    double stage_first_seconds[32]; /* the same stages' times in the first step alone */
} cb_run_result;

/* Runs to completion. Returns 0 when the run finished with status "ok";
 * CB_ERR_INPUT for bad input (no file is written); CB_ERR_NUMERIC (diverged),
 * CB_ERR_INTERRUPTED or another error when the run failed — the run file is then
 * still valid and its status says what happened. */
int cb_run(const cb_run_def *def, cb_run_result *res, cb_error *err);

/* Install SIGINT/SIGTERM handlers that make cb_run stop cleanly with "interrupted". */
void cb_run_install_signal_handlers(void);
int cb_run_interrupted(void);

#endif
