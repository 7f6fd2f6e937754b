/* solvers/pbd.h — helpers of the pbd/xpbd solvers (solvers/pbd.c) that tests call
 * directly. The solvers themselves are the registry entries cb_solver_pbd and
 * cb_solver_xpbd (core/solver.c). */
#ifndef CB_PBD_H
#define CB_PBD_H

#include "core/mesh.h"

/* Damping of Mueller et al. 2007 section 3.5 over the vertices with inv_mass > 0:
 * each velocity moves the fraction k in [0, 1] of the way from v_i to the rigid
 * motion v_cm + omega x r_i (omega = I^-1 L). k = 1 leaves a rigid motion; linear and
 * angular momentum are unchanged for every k. */
void cb_pbd_damp_velocities(int nv, const double *mass, const double *inv_mass, const double (*x)[3],
                            double (*v)[3], double k);

/* Six times the enclosed volume of a closed mesh, sum over triangles of
 * (x_a x x_b) . x_c (paper eq. 14); grad (may be NULL, [nv], overwritten) gets its
 * gradient (eq. 15). */
double cb_pbd_volume6(const cb_mesh *m, const double (*x)[3], double (*grad)[3]);

#endif
