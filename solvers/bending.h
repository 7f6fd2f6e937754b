/* solvers/bending.h — the bending terms of the implicit solvers fms and newton, beside
 * their spring sets (springs.h): one term per hinge of the mesh (mesh.h), the
 * energy, its gradient and its Hessian.
 *
 *   CB_BENDING_SHELLS     the shared model's discrete-shells hinge energy exactly
 *                         (core/model.h): E_i = k_bend w_i (theta_i - theta0_i)^2.
 *                         Nonlinear: newton only (its 12 x 12 Hessian per hinge,
 *                         projected to positive semi-definite).
 *   CB_BENDING_QUADRATIC  Bergou et al. 2006, "A quadratic bending model for
 *                         inextensible surfaces": E_i = 1/2 |sum_j q_ij x_j|^2, a
 *                         constant 4-vertex stencil q_i per hinge, so the Hessian
 *                         (q_i q_i^T, the same for x, y and z) is constant: fms puts it
 *                         into its prefactored matrix. Needs a flat rest state.
 *   CB_BENDING_SPRINGS    no term here: a bend spring per hinge in the spring set
 *                         (springs.c; Liu et al. 2013's representation).
 *
 * Vertex j of hinge i is mesh->h[i][j]; 12 x 12 matrices are indexed 3 j + k (vertex j
 * of the hinge, coordinate k).
 */
#ifndef CB_BENDING_H
#define CB_BENDING_H

#include "core/error.h"
#include "core/world.h"

typedef enum { CB_BENDING_SHELLS = 0, CB_BENDING_QUADRATIC = 1, CB_BENDING_SPRINGS = 2 } cb_bending_kind;

/* "shells", "quadratic", "springs" (NULL-terminated; index = cb_bending_kind). */
extern const char *const cb_bending_names[];

typedef struct cb_bending {
    int kind;              /* cb_bending_kind */
    int n;                 /* hinges with a term: mesh->nh, or 0 (springs, or k_bend = 0) */
    const int (*h)[4];     /* [n] the mesh's hinges (not owned) */
    double *kw;            /* [n] shells: k_bend w_i */
    double *theta0;        /* [n] shells: rest angles */
    double (*q)[4];        /* [n] quadratic: the stencil */
} cb_bending;

/* The terms of kind over w's mesh and shared model. Quadratic on a rest state that is
 * not flat (a hinge's rest angle above 1e-6 rad) is an input error naming the hinge.
 * b must be zeroed; release it with cb_bending_release also on error. */
int cb_bending_init(cb_bending *b, const cb_world *w, cb_bending_kind kind, cb_error *err);
void cb_bending_release(cb_bending *b);
/* 1 when every hinge of w's mesh is flat at rest (rest angle at most 1e-6 rad), the
 * rest states CB_BENDING_QUADRATIC accepts; 0 otherwise. */
int cb_bending_rest_flat(const cb_world *w);

/* The stencil of Bergou et al. for a hinge whose rest vertices are X0..X3, scaled so
 * that 1/2 (q . u)^2, u the displacements normal to the flat hinge, is the shells
 * energy k_bend w theta^2 to second order: q = sqrt(6 k_bend / (A1 + A2)) K with K
 * the cotangent weights (cot a1 + cot b1, cot a0 + cot b0, -(cot a0 + cot a1),
 * -(cot b0 + cot b1)), a_j (b_j) the angle at X_j in the triangle of X2 (X3). A
 * degenerate triangle gives q = 0. */
void cb_bending_stencil(const double X0[3], const double X1[3], const double X2[3], const double X3[3],
                        double k_bend, double q[4]);

/* Sum of the terms at x. */
double cb_bending_energy(const cb_bending *b, const double (*x)[3]);
/* grad += scale * dE/dx. */
void cb_bending_add_gradient(const cb_bending *b, const double (*x)[3], double scale, double (*grad)[3]);
/* imp += h times the force of the terms on the free vertices (unk[v] >= 0) of the
 * hinges that also have a pinned one (unk[v] < 0): the impulse the pins pass on through
 * bending (the terms' forces sum to zero over a hinge); *work += the pins' work, minus h
 * times the force of the term on each pinned vertex dotted with that pin's velocity at
 * time t (cb_world_pin_velocity of w). */
void cb_bending_add_pin_impulse(const cb_bending *b, const double (*x)[3], const int *unk, double h, double imp[3],
                                const cb_world *w, double t, double *work);
/* The Hessian of term i at x, 12 x 12, positive semi-definite (shells: projected). */
void cb_bending_hinge_hessian(const cb_bending *b, int i, const double (*x)[3], double H[12][12]);
/* The same unprojected: shells' exact Hessian 2 k_bend w (g g^T + (theta - theta0) H_theta),
 * indefinite where the hinge is bent away from its rest angle and curves the wrong way
 * (ipc's Newton iterations, solvers/ipc.c); quadratic's (already PSD) as above. */
void cb_bending_hinge_hessian_exact(const cb_bending *b, int i, const double (*x)[3], double H[12][12]);

/* The exact Hessian of the signed dihedral angle (cb_dihedral_angle, core/model.h) at
 * x0..x3, 12 x 12 and symmetric, by forward differentiation of its gradient formula;
 * zero where the gradient is (a degenerate triangle or edge). Returns theta; its
 * gradient into g when not NULL. */
double cb_dihedral_hessian(const double x0[3], const double x1[3], const double x2[3], const double x3[3],
                           double g[4][3], double H[12][12]);

/* Project H, the Hessian of a function of hinge x0..x3 that is invariant under
 * translations and under the stretch along the edge e = x1 - x0 that moves each vertex by
 * its coordinate along e (x_j -> x_j + t s_j e, s_j = (x_j - x0).e / e.e: the dihedral
 * angle, and so the shells term), to positive semi-definite: the same matrix as
 * cb_psd_project(12, H) up to round-off, in a quarter of the time. Those four directions
 * are null vectors of H (the translations, and the stretch (0, e, s2 e, s3 e), which moves
 * no triangle out of its plane and changes none of the gradient's ratios), so an orthogonal
 * change of basis (a Hadamard transform of the 4 vertices, then a Householder reflection)
 * leaves their block zero and the eigen-decomposition runs on the 8 x 8 rest. A zero-length
 * edge falls back to cb_psd_project(12, H). */
void cb_hinge_psd_project(const double x0[3], const double x1[3], const double x2[3], const double x3[3],
                          double H[12][12]);

/* Project the symmetric n x n matrix A (row-major, n <= 12) to positive
 * semi-definite: eigen-decomposition by cyclic Jacobi rotations, negative eigenvalues
 * set to 0; off-diagonal entries below 1e-16 |A|_F are round-off, set to 0. Returns the
 * smallest eigenvalue before the projection; the number of sweeps into *sweeps (when
 * not NULL; at most 50). */
double cb_psd_project(int n, double *A, int *sweeps);
/* The same projection (to round-off) by Householder tridiagonalization and the implicit
 * QL method (Golub & Van Loan 8.3), about a tenth of the operations of the Jacobi sweeps
 * for n = 8 to 12: the one the solvers use. A zero matrix, or one with a NaN or
 * infinite entry, is left as it is (returns 0, NaN); when QL does not converge in 30 iterations per
 * eigenvalue, cb_psd_project does the work. Returns the smallest eigenvalue. */
double cb_psd_project_ql(int n, double *A);

#endif
