/* contact/barrier.h — the log barrier of Incremental Potential Contact (Li et al. 2020,
 * "Incremental Potential Contact", sec. 4; with the thickness offset of Li, Kaufman and
 * Jiang 2021, "Codimensional Incremental Potential Contact", sec. 4) and the squared
 * distances it acts on, with their gradients and Hessians.
 *
 * Barrier. On a squared quantity s (a squared distance minus the squared thickness):
 *     b(s) = -(s - shat)^2 ln(s / shat)   for 0 < s < shat,   0 for s >= shat,
 * +INFINITY for s <= 0. b is C2 at shat (b, b', b'' all vanish there) and goes to
 * infinity at 0. With thickness xi, C-IPC measures s = d^2 - xi^2 against
 * shat = (xi + dhat)^2 - xi^2 = dhat^2 + 2 xi dhat: the barrier acts where the
 * distance d is below xi + dhat and keeps it above xi (cb_barrier_shat).
 *
 * Distances. The squared distance between a point and a triangle (or two edges) is a
 * piecewise function of the 12 coordinates: point-point, point-line or point-plane
 * (line-line for two edges), by the closest features. The pieces are chosen by
 * the closest points of contact/distance.h (a barycentric coordinate or a segment
 * parameter at 0 or 1 selects the boundary piece), then the chosen piece's value,
 * gradient and Hessian are computed in closed form by forward-mode second-order
 * differentiation (a value, a 12-gradient and a 12 x 12 Hessian carried through each
 * product and quotient; with H NULL the Hessian is not carried, about 12 times less
 * work, and the value and gradient are bitwise those of the call with H). The pieces
 * agree where they meet, so the squared distance is continuous and its gradient is too
 * (C1); the Hessian jumps across a boundary.
 *
 * Edge-edge mollifier (IPC sec. 4.3, supplement): nearly parallel edges make the
 * line-line piece ill-conditioned and the distance's gradient jump when the closest
 * features switch. The edge-edge barrier is multiplied by
 *     m(c) = (2 - c / eps_x) c / eps_x   for c < eps_x,   1 otherwise,
 * c = |(p1 - p0) x (q1 - q0)|^2, eps_x = 1e-3 |P1 - P0|^2 |Q1 - Q0|^2 of the rest
 * edges, so the term fades out as the edges become parallel (IPC's remedy).
 *
 * Variable order of every gradient and Hessian: the 4 points in argument order, x y z
 * each. Hessians are the exact ones (not projected; a caller projects them per pair).
 */
#ifndef CB_BARRIER_H
#define CB_BARRIER_H

/* b(s) for threshold shat > 0; *db = b'(s), *d2b = b''(s) (may be NULL). */
double cb_barrier(double s, double shat, double *db, double *d2b);

/* shat = (xi + dhat)^2 - xi^2, the squared threshold with thickness xi (C-IPC). */
double cb_barrier_shat(double xi, double dhat);

/* Squared distance point p - triangle abc, with its gradient g[12] and Hessian H[12][12]
 * (both may be NULL). *kind (may be NULL): 0 point-point, 1 point-edge, 2 point-plane. */
double cb_pt_distance2_d(const double p[3], const double a[3], const double b[3], const double c[3],
                         double g[12], double H[12][12], int *kind);

/* Squared distance segment p0p1 - segment q0q1, same contract; *kind: 0 point-point,
 * 1 point-edge, 3 line-line. */
double cb_ee_distance2_d(const double p0[3], const double p1[3], const double q0[3], const double q1[3],
                         double g[12], double H[12][12], int *kind);

/* The edge-edge mollifier m(c) above with its gradient and Hessian over the 12
 * coordinates (may be NULL); eps_x > 0. */
double cb_ee_mollifier_d(const double p0[3], const double p1[3], const double q0[3], const double q1[3],
                         double eps_x, double g[12], double H[12][12]);

/* The barrier of a pair: value of b(d^2 - xi^2) (times the mollifier m when eps_x > 0,
 * edge-edge only), its gradient and Hessian (may be NULL) over the 12 coordinates.
 * ee = 0: point p0 against triangle p1 q0 q1; ee = 1: edge p0p1 against edge q0q1.
 * *d2 (may be NULL) gets the squared distance. INFINITY when d <= xi. */
double cb_pair_barrier(int ee, const double p0[3], const double p1[3], const double q0[3], const double q1[3],
                       double xi, double shat, double eps_x, double g[12], double H[12][12], double *d2);

/* The barrier b(phi^2 - xi^2) of an edge ab (n = 2) or a triangle abc (n = 3) against a
 * sphere (center, radius r), phi = the primitive's distance from the center minus r (the
 * squared distance by the pieces above, with the center as the point); gradient and
 * Hessian over the 12 coordinates center, a, b, c (c's zero for an edge; may be NULL);
 * *phi (may be NULL). INFINITY when phi <= xi. */
double cb_sphere_barrier(int n, const double a[3], const double b[3], const double c[3], const double center[3],
                         double r, double xi, double shat, double g[12], double H[12][12], double *phi);

/* The barrier b(phi^2 - xi^2) of a pair (ee and the points as cb_pair_barrier) whose
 * second primitive is thickened by r: phi = d - r, d the pair's distance (a point or an
 * edge against a capsule's segment, r its radius; r = 0: a box's vertex or edge), times
 * the mollifier when ee and eps_x > 0; gradient and Hessian over the 12 coordinates (may
 * be NULL); *phi (may be NULL). INFINITY when phi <= xi. */
double cb_offset_pair_barrier(int ee, const double p0[3], const double p1[3], const double q0[3], const double q1[3],
                              double r, double xi, double shat, double eps_x, double g[12], double H[12][12],
                              double *phi);

#endif
