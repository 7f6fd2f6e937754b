/* experiments/harness/reference.h — a reference trajectory (a run file's frames) and the
 * trajectory error of a run against it (issue 20's accuracy axis).
 *
 * position_error(t) = sqrt( sum_i m_i |x_i(t) - x_ref_i(t)|^2 / sum_i m_i ), the
 * mass-weighted RMS distance, at the times where the reference has a frame (matched to
 * 1e-9 of the frame spacing); between its frames the error is unknown (NaN): no
 * interpolation adds its own error. `clothbench reference` writes reference files. */
#ifndef CB_REFERENCE_H
#define CB_REFERENCE_H

#include "core/error.h"
#include "core/world.h"

typedef struct cb_reference cb_reference;

/* Reads /frames/time and /frames/positions of a run file; nv must match the run's
 * vertex count (an error names both). */
int cb_reference_open(const char *path, int nv, cb_reference **out, cb_error *err);
void cb_reference_free(cb_reference **r);
/* position_error of state x (masses m, nv vertices) at time t; NaN when t is no frame time. */
double cb_reference_error(const cb_reference *r, double t, const double (*x)[3], const double *m, int nv);
/* The largest position_error of run file `path` against the reference over its frames
 * at reference times (masses from /mesh/masses); the number of frames compared in *n. */
int cb_reference_compare_file(const cb_reference *r, const char *path, double *max_err, int *n, cb_error *err);

#endif
