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

#include <math.h>
#include <string.h>

#include "core/atan2.h"
#include "core/mesh.h"
#include "core/vec3.h"

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

/* cb_dihedral_angle, inline for a caller that evaluates one hinge per event (acm), with
 * `fast` 0 libm's atan2 (cb_dihedral_angle is this function with fast 0, so the same bits)
 * or 1 cb_atan2 (core/atan2.h: within 2 ulp of it, 2.3 times faster; the gradient's
 * arithmetic is the same either way). */
static inline double cb_dihedral_angle_at(const double x0[3], const double x1[3], const double x2[3],
                                          const double x3[3], double grad[4][3], int fast)
{
    double e[3], a[3], b[3], n1[3], n2[3], c[3];
    cb_v3_sub(e, x1, x0);
    cb_v3_sub(a, x2, x0);
    cb_v3_sub(b, x3, x0);
    cb_v3_cross(n1, e, a);
    cb_v3_cross(n2, b, e);
    double le = cb_v3_norm(e);
    cb_v3_cross(c, n1, n2);
    double ys = cb_v3_dot(c, e) / (le > 0 ? le : 1.0), xs = cb_v3_dot(n1, n2);
    double theta = fast ? cb_atan2(ys, xs) : atan2(ys, xs);
    if (grad) {
        double n1s = cb_v3_norm2(n1), n2s = cb_v3_norm2(n2), le2 = le * le;
        if (!(n1s > 0) || !(n2s > 0) || !(le2 > 0)) {
            memset(grad, 0, 4 * sizeof grad[0]);
            return theta;
        }
        cb_v3_scale(grad[2], n1, -le / n1s);
        cb_v3_scale(grad[3], n2, -le / n2s);
        double s2 = cb_v3_dot(a, e) / le2, s3 = cb_v3_dot(b, e) / le2;
        for (int k = 0; k < 3; k++) {
            grad[0][k] = -(1.0 - s2) * grad[2][k] - (1.0 - s3) * grad[3][k];
            grad[1][k] = -s2 * grad[2][k] - s3 * grad[3][k];
        }
    }
    return theta;
}

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
