/* experiments/reference.h — `clothbench reference SCENE`: a converged trajectory to
 * measure other runs against (run --reference, the series position_error and
 * energy_error; experiments/harness/reference.h).
 *
 * Two methods, one protocol. A scene without colliders: velocity Verlet (the explicit
 * solver, scheme verlet, damping 0, one substep) at dt_ref = dt / refine, refine raised
 * until dt_ref is at most a quarter of the stability limit 2 / omega_max (Gershgorin
 * bound, cb_world_stable_step). A scene with colliders (or any scene with method ipc, for
 * self contact): ipc (solvers/ipc.c: implicit Euler with IPC's log barrier on the shared
 * model, damping 0, Newton to |p|_inf / h < CB_REFERENCE_IPC_TOLERANCE) at dt / refine; no
 * stability limit (implicit). The shared cloth model has no damping of its own: the
 * reference is the undamped model (ipc: with implicit Euler's numerical damping at
 * dt_ref), and a run that damps is measured with that damping as error. The frames: the
 * scene's frame interval as a run at the scene's dt has it (a whole number of its steps;
 * frame_rate is overridden when 1 / frame_rate is not a multiple of dt), so the
 * reference's frames fall on the frame times of every run at the scene's dt. Check: the
 * same at dt_ref / 2, without a run file, advanced beside the reference (the run loop's
 * frame_hook, experiments/harness/run.h) to each of its frames and compared there
 * (mass-weighted RMS). The window: the reference keeps the frames whose difference is
 * within the bound (max_check, default CB_REFERENCE_MAX_CHECK); at the first frame beyond
 * it the reference ends (status ok, that frame not written), so a scene that is converged
 * in dt for a while and not after (the drape once its folds form on the sphere: README
 * "Accuracy against a reference") has a reference of that while, and runs measured against
 * it have position_error and energy_error up to its last frame only. Stored: root
 * attributes reference_method, reference_dt, reference_check (the text, naming the window
 * when the reference ended early), and the numbers reference_difference (D, m: the largest
 * difference over the window's frames), reference_bound (m), reference_window (s: its last
 * frame time) and reference_exceeded_at (s: the frame beyond the bound; NaN when none);
 * the reference's own error is about 4 D / 3 for Verlet (second order, Richardson) and 2 D
 * for ipc (first order). A reference whose first frame after the start is already beyond
 * the bound is refused and not written (the message names that frame's time and its
 * difference). With method verlet, colliders are refused. */
#ifndef CB_REFERENCE_CMD_H
#define CB_REFERENCE_CMD_H

#include <stdio.h>

#include "core/error.h"

/* The default refinement (clothbench reference without --refine or --dt). */
#define CB_REFERENCE_REFINE 16
/* The default bound on the check (m): the reference ends at the first frame above it. */
#define CB_REFERENCE_MAX_CHECK 1e-3
/* ipc's Newton tolerance for a reference (m/s, on |p|_inf / h; its default is 1e-4). */
#define CB_REFERENCE_IPC_TOLERANCE 1e-6

/* The method: auto (0) is ipc when the scene has colliders, velocity Verlet otherwise. */
enum { CB_REFERENCE_AUTO = 0, CB_REFERENCE_VERLET = 1, CB_REFERENCE_IPC = 2 };

typedef struct cb_reference_def {
    const char *scene_path;
    const char *output;            /* REF.h5 */
    int refine;                    /* dt_ref = scene dt / refine (>= 1; raised to stay below a quarter of the stability limit) */
    const char *const *sets;
    int nsets;
    int quiet;
    int method;                    /* CB_REFERENCE_AUTO (0), _VERLET, _IPC */
    double max_check;              /* the check's bound (m): the window ends before the first frame above it;
                                      0: CB_REFERENCE_MAX_CHECK */
} cb_reference_def;

/* Writes the reference (its window) and its check; prints the check to out. *difference
 * gets D (m); when the reference is refused (CB_ERR_INPUT, nothing left at d->output), the
 * difference at its first frame. *window_end (may be NULL) gets the last frame time when the
 * check ended the reference early, INFINITY when it held to the end. */
int cb_reference_make(const cb_reference_def *d, FILE *out, double *difference, double *window_end, cb_error *err);

struct cb_experiment;
/* An experiment's `reference:` made when it is missing (or not a finished reference), so
 * `clothbench sweep X.yaml` is one command: from its only scene with its fixed scene
 * overrides (not the solvers' ones, at the scene's dt: a grid over dt is allowed, any
 * other scene key in the grid is an error, as are several scenes). Written under a
 * temporary name and renamed; what it does goes to out (NULL: quiet). */
int cb_reference_for_experiment(const struct cb_experiment *e, FILE *out, cb_error *err);

#endif
