/* solvers/acm/kinetic.h — the kinetic certificates that are not in contact/:
 *
 *  - k-DOP box exit: vertex i owns a k-DOP box {y : |d_j . (y - c)| <= rho |d_j|} around a
 *    centre c (its position at the last broad-phase rebuild). While every vertex stays in
 *    its box, the broad-phase candidate set built from the boxes is complete (acm.c).
 *    The exit time of a linear trajectory x + s v is the first slab crossing, in closed
 *    form; a relative shrink of 1e-9 makes the returned time early, never late.
 *  - vertex-collider certificate: a lower bound on the time at which a vertex moving
 *    linearly comes closer than `guard` to a collider translating with constant velocity.
 *    Plane: the signed distance is linear in time, solved exactly. Other shapes: the
 *    signed distance is 1-Lipschitz, so d(s) >= d(0) - s |v - v_collider|.
 */
#ifndef CB_ACM_KINETIC_H
#define CB_ACM_KINETIC_H

#include "core/collider.h"

/* Time s >= 0 until x + s v leaves the box of half width rho around c, over the ndir
 * directions dirs of lengths len (INFINITY if never). 0 if already outside. */
double cb_acm_box_exit(const double (*dirs)[3], const double *len, int ndir, const double c[3], double rho,
                       const double x[3], const double v[3]);

/* Vertex at x (time t) with velocity v against collider col. Returns s in [0, horizon]:
 * the distance stays >= guard on [t, t + s]; 0 if it is already below guard. */
double cb_acm_collider_certificate(const cb_collider *col, double t, const double x[3],
                                   const double v[3], double guard, double horizon);

#endif
