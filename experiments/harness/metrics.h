/* experiments/harness/metrics.h — the measurements (ARCHITECTURE.md "Measuring"), computed from the state
 * alone so that every solver is measured by the same yardstick. A metric that
 * cannot be computed is NaN, never 0. The table cb_metric_table lists every series
 * with its width; the run log writes exactly these. */
#ifndef CB_METRICS_H
#define CB_METRICS_H

#include <stddef.h>
#include "core/world.h"
#include "core/solver.h"

typedef struct cb_metrics {
    double time, dt;
    double kinetic_energy, gravity_energy, stretch_energy, bend_energy, total_energy;
    double solver_energy, contact_energy;
    double linear_momentum[3], angular_momentum[3], external_impulse[3];
    double pin_force_fixed[3], pin_force_moving[3];
    double collider_penetrations, collider_max_depth, vertex_penetrations, vertex_max_depth;
    double collider_cut_edges, collider_cut_faces;
    double contact_depth_corrected, contact_vertices_corrected, contact_work;
    double self_intersections, min_separation;
    double crossings_in_step, self_crossings_in_step, collider_crossings_in_step;
    double collider_edge_crossings_in_step, collider_face_crossings_in_step;
    double max_strain;
    double external_work;
    double position_error;   /* against the run's reference trajectory (experiments/harness/reference.h) */
    double energy_error;     /* total_energy minus the reference's, at its frame times */
    double iterations, residual, events, factorizations;
    double wall_step_s, wall_contact_s, wall_audit_s;
} cb_metrics;

typedef struct cb_metric_desc {
    const char *name;
    int width;           /* 1 or 3 */
    size_t offset;       /* into cb_metrics */
    const char *unit;
    const char *description;
} cb_metric_desc;

extern const cb_metric_desc cb_metric_table[];
extern const int cb_metric_count;

/* Everything but the expensive metrics (self_intersections NaN; min_separation the method's
 * own, info->min_separation, NaN where it has none).
 * info may be NULL (then the solver fields are NaN); wall_step_s is the step's time. */
void cb_metrics_compute(const cb_world *w, const cb_step_info *info, double dt,
                        double wall_step_s, cb_metrics *m);
/* total_energy exactly as cb_metrics_compute has it: kinetic + gravity + stretch + bend,
 * plus info's contact_energy when finite (info may be NULL). */
double cb_metrics_total_energy(const cb_world *w, const cb_step_info *info);
/* Reusable work space of the expensive metrics (a BVH over the cloth). */
typedef struct cb_metrics_cache cb_metrics_cache;
int cb_metrics_cache_create(const cb_world *w, cb_metrics_cache **out, cb_error *err);
void cb_metrics_cache_free(cb_metrics_cache **c);

/* The expensive metrics: self_intersections (exact edge-triangle count) and
 * min_separation (exact, vertex-triangle and edge-edge), through contact/selfcheck.
 * cache may be NULL (a one-shot computation). NaN where undefined (a mesh without
 * triangles, or without a non-adjacent pair) or on failure. */
void cb_metrics_compute_expensive(const cb_world *w, cb_metrics_cache *cache, cb_metrics *m);

#endif
