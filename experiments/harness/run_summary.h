/* experiments/harness/run_summary.h — the one-screen summary of a run file (`clothbench info`). */
#ifndef CB_INFO_H
#define CB_INFO_H

#include <hdf5.h>
#include <stdio.h>
#include "core/error.h"

typedef struct cb_run_summary {
    char solver[64], scene[128], status[32], message[1024], created[64];
    char self_collision[16];    /* on | off | none (the method has none) | unknown (older files) */
    char model[128];            /* the model the solver solved (cb_solver_model); unknown (older files) */
    long steps;                 /* steps completed (from the last logged time and dt) */
    long rows, frames;
    double t_end;
    double energy_start, energy_end;
    double energy_drift;        /* total_energy end - start (J) */
    double energy_drift_rel;    /* drift / |total_energy at t = 0| (NaN when that is 0) */
    double external_work;       /* last external_work (J): work of moving pins and colliders; NaN: older file */
    char health_rule[1024];     /* the health check's rule (experiments/harness/health.h); "" in older files */
    char health_breaches[2048]; /* one line per breach; "" when none */
    double max_penetration_depth; /* max collider_max_depth (m) */
    double max_collider_penetrations;
    double max_self_intersections;  /* NaN if never computed */
    double min_separation;          /* NaN if never computed */
    double max_strain;
    double mean_ms_per_step;        /* mean wall_step_s over the logged steps */
    double momentum_drift;          /* |P_end - P_start - sum external_impulse| / max(|P|, tiny) */
    /* the honest yardstick (README "What the contact stage hides") */
    double energy_peak;             /* max total_energy */
    double max_vertex_penetration_depth; /* max vertex_max_depth (vertices only) */
    double max_contact_depth_corrected;  /* max contact_depth_corrected; NaN: no such stage */
    double contact_work;            /* sum of contact_work over the logged rows (J); NaN: no such stage */
    double contact_work_added;      /* the same, positive rows only: energy the stage added */
    double self_crossings, collider_crossings; /* sums of the audit's counts; NaN: not audited */
    double collider_edge_crossings, collider_face_crossings; /* the audit's edges and triangles beyond the
                                                                vertices; NaN: not audited (or an older file) */
    double max_collider_cut_edges, max_collider_cut_faces;   /* max collider_cut_edges/_faces; NaN: older file */
    double audit_ms_per_step;       /* mean wall_audit_s per step; NaN: not audited */
    /* provenance (experiments/harness/provenance.h); "" in files older than layout 2 */
    int layout_version;             /* 1 for files without the attribute */
    char git_commit[96], build_type[32], build_flags[512], compiler[128], libraries[512], threads[128];
    char host[128], cpu[256], command_line[1024];
    char parameters[4096];          /* the effective solver parameters (flow YAML map) */
} cb_run_summary;

/* Reads a run file of layout 1 to CB_LAYOUT_VERSION; a newer layout is refused
 * (CB_ERR_INPUT, naming both versions). */
int cb_run_summary_read(const char *path, cb_run_summary *s, cb_error *err);
/* Only the layout check and the provenance attributes of an open file. */
int cb_run_provenance_read(hid_t file, const char *path, cb_run_summary *s, cb_error *err);
void cb_run_summary_print(const cb_run_summary *s, const char *path, FILE *out);

#endif
