/* experiments/harness/runlog.h — the run file (HDF5), exactly the layout of the README's "The run file", plus the
 * XDMF sidecar that lets ParaView open the animation. The file is flushed after
 * every frame, so a crash, a kill or a divergence leaves a readable file whose
 * `status` attribute says what happened. */
#ifndef CB_RUNLOG_H
#define CB_RUNLOG_H

#include "core/error.h"
#include "experiments/harness/metrics.h"
#include "core/world.h"

typedef struct cb_runlog cb_runlog;

typedef struct cb_runlog_def {
    const char *path;        /* the .h5 file; the sidecar is the same path with .xdmf */
    const char *solver;
    const char *scene_name;
    const char *scene_text;
    const char *parameters;  /* the effective parameters: every key the solver read and the value it
                              * used, one flow map (cb_params_record_text) */
    const char *parameters_given; /* the scene's solver block as given (cb_params_text); NULL: "{}" */
    const char *expensive_note; /* how often the expensive metrics run, stored as an attribute */
    const char *self_collision; /* "on" | "off" | "none" (the method has none); NULL: "unknown" */
    const char *model;          /* the model the solver solves (cb_solver_model); NULL: "unknown" */
    const char *reference;      /* NULL, or the reference position_error and energy_error are measured
                                 * against and its window: the attribute `reference` */
    /* provenance (NULL: ""); the build and machine are asked of experiments/harness/provenance.h */
    const char *scene_path;     /* the scene file as given */
    const char *scene_dir;      /* absolute folder its relative paths resolve against */
    const char *command_line;   /* NULL: the process's (cb_provenance_set_command_line) */
    const char *const *files;   /* files the scene read: their SHA-256 go to `mesh_files` */
    int nfiles;
} cb_runlog_def;

/* Create the file (truncating), write the attributes (status "running") and /mesh. */
int cb_runlog_open(const cb_runlog_def *def, const cb_world *w, cb_runlog **out, cb_error *err);
/* Append one row to every /series dataset. */
int cb_runlog_series(cb_runlog *log, const cb_metrics *m, cb_error *err);
/* Append a frame (time, positions), rewrite the XDMF sidecar and flush the file. */
int cb_runlog_frame(cb_runlog *log, double t, const double (*x)[3], cb_error *err);
/* Write the buffered series rows and flush the file, without a frame (runs that write
 * no frames call it where a frame would be, so a crash loses at most one frame's rows). */
int cb_runlog_flush(cb_runlog *log, cb_error *err);
/* Write the run's per-stage wall-time totals as /stages/names (strings) and
 * /stages/seconds (float64) [n], replacing earlier ones. Called once at the end of a
 * run (a crash loses them; the series keep wall_step_s). */
int cb_runlog_stages(cb_runlog *log, int n, const char *const *names, const double *seconds, cb_error *err);
/* Set the status ("running" | "ok" | "diverged" | "interrupted" | "error") and message; flushes. */
int cb_runlog_status(cb_runlog *log, const char *status, const char *message, cb_error *err);
/* The run health check (experiments/harness/health.h): attributes health_rule (the rule and its
 * thresholds), health_energy_ref (float64, J: the rule's energy scale E_ref, the unit
 * analysis scripts measure an energy rise in) and health_breaches (one line per breach,
 * "" when none). */
int cb_runlog_health(cb_runlog *log, const char *rule, double energy_ref, const char *breaches, cb_error *err);
/* Remove a run file and its XDMF sidecar (either may be missing); remove()'s result for
 * the file. For run files that are not kept (a refused reference, a temporary one). */
int cb_runlog_remove(const char *path);
/* Close (flushes). *log is set to NULL. */
int cb_runlog_close(cb_runlog **log, cb_error *err);

#endif
