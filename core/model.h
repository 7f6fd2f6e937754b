/* core/model.h — the shared cloth model (ARCHITECTURE.md "The shared cloth model").
 *
 *   stretch: one spring per mesh edge, E = 1/2 k_stretch (l - L)^2
 *   bending: one hinge per interior edge (discrete shells),
 *            E = k_bend * w * (theta - theta0)^2,  w = 3 |e0|^2 / (A1 + A2)
 *            with |e0|, A1, A2 the rest edge length and rest areas.
 *
 * theta is the signed dihedral angle of hinge (x0, x1; x2, x3) (see mesh.h):
 *   n1 = (x1 - x0) x (x2 - x0),  n2 = (x3 - x0) x (x1 - x0),
 *   theta = atan2(((n1 x n2) . e) / |e|, n1 . n2) / normalised: 0 when flat.
 * Gradients are exact and checked against finite differences in tests/test_model.c.
 * Used by the metrics (for every solver), by explicit and by newton.
 */
#ifndef CB_MODEL_H
#define CB_MODEL_H

#include "core/mesh.h"

typedef struct cb_cloth_model {
    double k_stretch;        /* N/m */
    double k_bend;           /* N*m */
    double thickness;        /* m */
    double density;          /* kg/m^2 */
    const cb_mesh *mesh;     /* not owned */
    double *rest_length;     /* [ne] */
    double *hinge_weight;    /* [nh] 3 |e0|^2 / (A1 + A2) */
    double *hinge_rest_angle;/* [nh] theta0 */
} cb_cloth_model;

/* Rest data from the mesh's rest positions. */
int cb_model_init(cb_cloth_model *m, const cb_mesh *mesh, double k_stretch, double k_bend,
                  double thickness, double density, cb_error *err);
void cb_model_release(cb_cloth_model *m);

/* Signed dihedral angle of hinge with vertices x0..x3 and, if grad is not NULL,
 * its gradient d theta / d x_k in grad[k]. */
double cb_dihedral_angle(const double x0[3], const double x1[3], const double x2[3],
                         const double x3[3], double grad[4][3]);

double cb_model_stretch_energy(const cb_cloth_model *m, const double (*x)[3]);
/* The stretch energy of edge e and the bending energy of hinge i alone (the terms of
 * the two sums above). */
double cb_model_edge_energy(const cb_cloth_model *m, int e, const double (*x)[3]);
double cb_model_hinge_energy(const cb_cloth_model *m, int i, const double (*x)[3]);
double cb_model_bend_energy(const cb_cloth_model *m, const double (*x)[3]);
/* Adds -dE/dx to f (forces) for stretch and bend respectively. */
void cb_model_add_stretch_forces(const cb_cloth_model *m, const double (*x)[3], double (*f)[3]);
void cb_model_add_bend_forces(const cb_cloth_model *m, const double (*x)[3], double (*f)[3]);
/* max over edges of |l - L| / L */
double cb_model_max_strain(const cb_cloth_model *m, const double (*x)[3]);

#endif
