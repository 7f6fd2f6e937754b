/* solvers/ipc_friction.h — the lagged smoothed Coulomb friction of Incremental Potential
 * Contact (Li et al. 2020, sec. 5) on contact pairs of four points: a point against a
 * triangle or an edge against an edge, of the cloth with itself, of the cloth with a
 * static triangle-mesh collider (whose points do not move), or of the cloth's edges and
 * triangles with a box's edges and vertices or a capsule's segment and ends (whose points
 * move with the collider's surface velocity at the contact, vc). solvers/ipc.c lags and
 * sums them; the vertex-against-analytic-collider friction is cb_spring_friction's
 * (solvers/spring_solver.h).
 *
 * Lagged at a state x^t (the start of the step, or the last solve of the first step):
 * the pair's closest points, p on its first primitive and q on its second, give the
 * slots' weights w (point-triangle: 1, -b1, -b2, -b3 with b the barycentric coordinates
 * of q; edge-edge: 1 - s, s, -(1 - t), -t with s, t the segments' parameters), the unit
 * normal n = (p - q) / |p - q| (IPC's tangent basis T spans its orthogonal complement:
 * T T^T = P = I - n n^T), and the normal force lambda (cb_ipc_fpair_force: the
 * barrier's kappa |b'(s) 2 phi| / h^2, phi the distance less a capsule's radius, times the
 * mollifier for an edge-edge pair). With them fixed, the relative tangential displacement
 * of the closest points over the step is
 *     u(x) = P sum_a w_a (x_a - x^t_a)     (IPC's u_k = T_k^T (x - x^t), in 3D),
 * a collider's slots displaced by h vc (0 for a static mesh: a rigid collider's points
 * move together, and its weights sum to -1 or 1, so u is the cloth's closest point's
 * displacement less h vc, as cb_spring_friction's slip of a vertex),
 * and the pair's term of g (h^2 times an energy) is
 *     D(x) = mu Lambda f0(|u|),   Lambda = h^2 lambda,
 * f0 the smoothed Coulomb profile of cb_friction_f0 with eps = eps_v h (eps_v the
 * `friction_velocity`). Its gradient on slot a is w_a mu Lambda f1(y) u / y (y = |u|) and
 * its Hessian block (a, b) is w_a w_b M with
 *     M = mu Lambda (f1'(y) u u^T / y^2 + f1(y) / y (P - u u^T / y^2)),
 * positive semi-definite (f1 >= 0, f1' >= 0: IPC's projection of the 2 x 2 inner matrix
 * is not needed) and so is the 12 x 12 Hessian w w^T (x) M. tests/test_ipc_friction.c
 * checks both against finite differences. */
#ifndef CB_IPC_FRICTION_H
#define CB_IPC_FRICTION_H

typedef struct cb_ipc_fpair {
    int v[4];     /* the cloth vertex of each slot, -1 for a fixed collider point */
    double w[4];  /* the slots' weights of the closest points' relative displacement */
    double n[3];  /* the lagged unit normal */
    double ml;    /* mu Lambda: the coefficient times h^2 times the lagged normal force */
    double vc[3]; /* the collider's surface velocity at the contact (its slots move by h vc;
                   * 0 for self pairs and static meshes) */
} cb_ipc_fpair;

/* The lagged closest points of the four points pt (ee = 0: point pt[0] against
 * triangle pt[1..3]; ee = 1: edge pt[0]pt[1] against edge pt[2]pt[3]) into f->w and
 * f->n. 0, or -1 when the points touch (no normal). */
int cb_ipc_fpair_lag(int ee, const double *const pt[4], cb_ipc_fpair *f);

/* Lambda of the pair of the four points pt (ee as cb_ipc_fpair_lag) with the barrier
 * b(s), s = phi^2 - xi^2 (contact/barrier.h): kappa |b'(s) 2 phi|, phi = d - r, d the
 * pair's distance (r: a capsule's radius, 0 for the other pairs, whose s is then d^2 -
 * xi^2 from the squared distance), times the edge-edge mollifier when ee and eps_x > 0:
 * the barrier's force along the normal (h^2 times the normal force: g is h^2 times an
 * energy). 0 outside the barrier's range. */
double cb_ipc_fpair_force(int ee, const double *const pt[4], double r, double xi, double shat, double kappa,
                          double eps_x);

/* D of pair f for the slots' displacements dx[a] = x_a - x^t_a (NULL: a fixed point)
 * with eps > 0; g[12] (may be NULL) gets its gradient over the four slots; M (may be
 * NULL) the 3 x 3 matrix whose w_a w_b multiple is the Hessian block of slots a, b. */
double cb_ipc_fpair_energy(const cb_ipc_fpair *f, const double *const dx[4], double eps, double g[12],
                           double M[3][3]);

#endif
