/* solvers/acm/kinetic.h — the kinetic certificates of the asynchronous solver that are
 * not in contact/, all with a velocity allowance ("slack"):
 *
 *  Every certificate is computed for a vertex trajectory x + s v_ref whose actual
 *  velocity may differ from the reference v_ref by at most `slack` (m/s) at every time
 *  (acm.c recomputes a vertex's certificates only when a kick takes its velocity
 *  further than that from its reference): the actual position then stays within
 *  slack * s of the reference trajectory, and each certificate below is shortened to
 *  hold for every such trajectory. slack = 0 gives the exact certificates of linear
 *  trajectories.
 *
 *  - k-DOP box exit: vertex i owns a k-DOP box {y : |d_j . (y - c)| <= rho |d_j|} around a
 *    centre c (its position at the last broad-phase rebuild). While every vertex stays in
 *    its box, the broad-phase candidate set built from the boxes is complete (acm.c).
 *    The exit time of a trajectory is the first slab crossing, in closed form; a relative
 *    shrink of 1e-9 makes the returned time early, never late.
 *  - vertex-collider certificate: a lower bound on the time at which a vertex comes
 *    closer than `guard` to a collider translating with constant velocity.
 *    Plane: the signed distance is linear in time, solved exactly. Other shapes: the
 *    signed distance is 1-Lipschitz, so d(s) >= d(0) - s |v - v_collider|.
 *  - separating slab with slack (self pairs): the plane of contact/certificate.h (through
 *    the midpoint of the closest points, normal along their direction, moving with the
 *    mean reference velocity of the pair) — each vertex's signed distance to it is
 *    a + b s with the reference velocity, and >= a + (b - slack) s with the actual one;
 *    the certificate holds while every vertex stays >= guard/2 (+ a rounding margin of
 *    1e-10 x the coordinate scale) on its own side, so the convex hulls stay >= guard
 *    apart. With slack = 0 acm.c calls contact/certificate.h instead.
 */
#ifndef CB_ACM_KINETIC_H
#define CB_ACM_KINETIC_H

#include "core/collider.h"

/* Time s >= 0 until x + s v (+- slack s) leaves the box of half width rho around c, over
 * the ndir directions dirs of lengths len (INFINITY if never). 0 if already outside. */
double cb_acm_box_exit(const double (*dirs)[3], const double *len, int ndir, const double c[3], double rho,
                       const double x[3], const double v[3], double slack);

/* Vertex at x (time t) with velocity v (+- slack) against collider col; vnorm is |v|
 * (cb_v3_norm(v): acm keeps it with the reference velocity, for the vertex's certificates
 * against every collider). Returns s in [0, horizon]: the distance stays >= guard on
 * [t, t + s]; 0 if it is already below guard. */
double cb_acm_collider_certificate(const cb_collider *col, double t, const double x[3],
                                   const double v[3], double vnorm, double guard, double horizon, double slack);

/* Separating-slab certificate with slack of a vertex-triangle pair (edge_edge = 0: x[0]
 * the vertex, x[1..3] the triangle) or an edge-edge pair (edge_edge = 1: x[0..1] and
 * x[2..3]); v are the reference velocities. Returns s in [0, horizon] during which the
 * pair's distance stays >= guard; 0 if it is already below guard or degenerate. */
double cb_acm_slab_certificate(int edge_edge, const double x[4][3], const double v[4][3], double guard,
                               double horizon, double slack);

#endif
