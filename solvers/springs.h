/* solvers/springs.h — the spring sets of the mass-spring solvers (fms, newton) and
 * their implicit-Euler objective g(x).
 *
 * A spring set is a list of springs (a, b, rest length r, stiffness k) with energy
 *   E(x) = sum_i 1/2 k_i (|x_a - x_b| - r_i)^2.
 * Two sets are built from the world (see springs.c for the derivation of the
 * stiffnesses from the shared cloth model):
 *   CB_SPRINGS_MODEL   the shared model's edge springs (k_stretch, rest length of the
 *                      edge) plus one bend spring across every hinge, between the two
 *                      opposite vertices h[2], h[3] (stiffness derived from k_bend);
 *   CB_SPRINGS_CLASSIC grids only: structural (grid neighbours), shear (both diagonals
 *                      of every cell) and bending (skip-one) springs, i.e.
 *                      2n(n-1) + 2(n-1)^2 + 2n(n-2) = 6n^2 - 10n + 2 for an n x n grid;
 *   CB_SPRINGS_STRETCH the edge springs of CB_SPRINGS_MODEL alone (the solver bends by a
 *                      hinge term instead, bending.h).
 *
 * The implicit-Euler step (Liu et al. 2013, eq. 5) minimises
 *   g(x) = 1/2 (x - y)^T M (x - y) + h^2 E(x) - h^2 x^T f_ext,
 * with f_ext = M gravity; the sum runs over free vertices only (pinned vertices are
 * fixed at their targets and only enter E).
 */
#ifndef CB_SPRINGS_H
#define CB_SPRINGS_H

#include "core/error.h"
#include "core/world.h"

typedef enum { CB_SPRINGS_MODEL = 0, CB_SPRINGS_CLASSIC = 1, CB_SPRINGS_STRETCH = 2 } cb_spring_kind;

typedef struct cb_spring_set {
    int n;              /* number of springs */
    int (*ij)[2];       /* [n] end points a, b */
    double *rest;       /* [n] rest lengths (m) */
    double *k;          /* [n] stiffnesses (N/m) */
    int nstretch;       /* springs [0, nstretch) carry stretch; the rest bending */
} cb_spring_set;

/* Build a set from the world's mesh, rest positions and shared model. Bend springs
 * with zero stiffness (k_bend = 0) are left out. CB_SPRINGS_CLASSIC on a mesh that
 * is not a grid is an input error. */
int cb_springs_build(const cb_world *w, cb_spring_kind kind, cb_spring_set *out, cb_error *err);
void cb_springs_release(cb_spring_set *s);

/* Stiffness of the bend spring of a hinge whose rest geometry is: common edge of
 * length e, opposite vertices at heights d1, d2 from the edge line and offset s
 * along it, hinge weight wgt = 3 e^2/(A1 + A2); see springs.c. */
double cb_springs_hinge_stiffness(double k_bend, double wgt, double d1, double d2, double s);

/* E(x) */
double cb_springs_energy(const cb_spring_set *s, const double (*x)[3]);
/* f -= dE/dx (adds the spring forces to f). */
void cb_springs_add_forces(const cb_spring_set *s, const double (*x)[3], double (*f)[3]);

/* g(x) of the step with inertial target y and step h, over the free vertices of w
 * (inv_mass > 0); f_ext = mass * w->gravity. */
double cb_springs_objective(const cb_spring_set *s, const cb_world *w, const double (*x)[3],
                            const double (*y)[3], double h);
/* grad g(x) into grad [nv][3] (zero on pinned vertices). Returns |grad g| (2-norm). */
double cb_springs_gradient(const cb_spring_set *s, const cb_world *w, const double (*x)[3],
                           const double (*y)[3], double h, double (*grad)[3]);

/* The sparsity pattern of M + h^2 (spring Hessian) over the unknowns: free vertex v
 * is unknown unk[v] (-1 when pinned), nunk unknowns, each a block of bs x bs scalars
 * (bs = 1: one matrix for x, y and z, as in fms; bs = 3: the full 3D Hessian, as in
 * newton). Output (malloc'd, caller frees): the lower triangle in compressed columns,
 * colptr[nunk bs + 1] and rowidx[nnz] (diagonal first in each column, rows sorted);
 * diag_pos[nunk bs^2]: position in rowidx of entry (r, c) of unknown u's diagonal
 * block at [u bs^2 + r bs + c] (for r < c the position of (c, r)); spring_pos[n bs^2]:
 * position of entry (r, c) of the off-diagonal block of spring i, row block the larger
 * unknown of its ends, or -1 when an end is pinned. Springs joining the same two
 * unknowns share entries. */
int cb_springs_pattern(const cb_spring_set *s, const int *unk, int nunk, int bs, int **colptr,
                       int **rowidx, int **diag_pos, int **spring_pos, cb_error *err);

#endif
