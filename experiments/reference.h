/* experiments/reference.h — `clothbench reference SCENE`: a converged trajectory of a
 * contact-free scene to measure other runs against (run --reference, the series
 * position_error; experiments/harness/reference.h).
 *
 * Method: velocity Verlet (the explicit solver, scheme verlet, damping 0, one substep)
 * at dt_ref = dt / refine, refine raised until dt_ref is at most a quarter of the
 * stability limit 2 / omega_max (Gershgorin bound, cb_world_stable_step), with the scene's frame rate, so its frames fall on the frame
 * times of every run at the scene's dt. The shared cloth model has no damping of its own:
 * the reference is the undamped model, and a run that damps (explicit's default 0.5 1/s,
 * pbd's damping, fms/newton's) is measured with that damping as error. Check: the same
 * at dt_ref / 2; their difference D (largest mass-weighted RMS over the frames) is
 * stored and printed; for a second-order method the reference's own error is about
 * 4 D / 3 (Richardson). Scenes with colliders are refused: contact makes trajectories
 * chaotic, and convergence in dt is then not expected. */
#ifndef CB_REFERENCE_CMD_H
#define CB_REFERENCE_CMD_H

#include <stdio.h>

#include "core/error.h"

/* The default refinement (clothbench reference without --refine or --dt). */
#define CB_REFERENCE_REFINE 16

typedef struct cb_reference_def {
    const char *scene_path;
    const char *output;            /* REF.h5 */
    int refine;                    /* dt_ref = scene dt / refine (>= 1; raised to stay below a quarter of the stability limit) */
    const char *const *sets;
    int nsets;
    int quiet;
} cb_reference_def;

/* Writes the reference and its check; prints the check to out. *difference gets D (m). */
int cb_reference_make(const cb_reference_def *d, FILE *out, double *difference, cb_error *err);

struct cb_experiment;
/* An experiment's `reference:` made when it is missing (or not a finished reference), so
 * `clothbench sweep X.yaml` is one command: from its only scene with its fixed scene
 * overrides (not the solvers' ones, at the scene's dt: a grid over dt is allowed, any
 * other scene key in the grid is an error, as are several scenes). Written under a
 * temporary name and renamed; what it does goes to out (NULL: quiet). */
int cb_reference_for_experiment(const struct cb_experiment *e, FILE *out, cb_error *err);

#endif
