/* experiments/harness/reference.h — a reference trajectory (a run file's frames) and the
 * trajectory error of a run against it (issue 20's accuracy axis).
 *
 * position_error(t) = sqrt( sum_i m_i |x_i(t) - x_ref_i(t)|^2 / sum_i m_i ), the
 * mass-weighted RMS distance, at the times where the reference has a frame (matched to
 * 1e-9 of the frame spacing); between its frames the error is unknown (NaN): no
 * interpolation adds its own error. energy_error(t) = E(t) - E_ref(t), the run's
 * total_energy minus the reference's at the same frame times (signed: negative is energy
 * the method lost, i.e. numerical damping). `clothbench reference` writes reference files. */
#ifndef CB_REFERENCE_H
#define CB_REFERENCE_H

#include "core/error.h"
#include "core/world.h"

typedef struct cb_reference cb_reference;

/* Reads /frames/time and /frames/positions of a run file; nv must match the run's
 * vertex count (an error names both). A file whose status is not ok (a reference that
 * was interrupted or diverged) is refused. */
int cb_reference_open(const char *path, int nv, cb_reference **out, cb_error *err);
void cb_reference_free(cb_reference **r);
/* 1 when path is a run file with status ok and frames (what cb_reference_open takes). */
int cb_reference_usable(const char *path);
/* sqrt( sum_i m_i |x_i - y_i|^2 / sum_i m_i ): the mass-weighted RMS distance of two states (NaN
 * without mass). */
double cb_mass_rms_distance(const double (*x)[3], const double (*y)[3], const double *m, int nv);
/* The reference's last frame time: its window (a contact reference ends where its check
 * exceeded its bound, experiments/reference.h; position_error and energy_error are NaN after it). */
double cb_reference_window(const cb_reference *r);
/* position_error of state x (masses m, nv vertices) at time t; NaN when t is no frame time. */
double cb_reference_error(const cb_reference *r, double t, const double (*x)[3], const double *m, int nv);
/* energy_error of a state whose total_energy is E at time t; NaN when t is no frame time
 * or the reference has no series row there. */
double cb_reference_energy_error(const cb_reference *r, double t, double total_energy);

#endif
