/* solvers/ipc_friction.c — IPC's lagged friction on point-triangle and edge-edge pairs
 * (ipc_friction.h says what and why). */
#include "solvers/ipc_friction.h"

#include <math.h>

#include "contact/barrier.h"
#include "contact/distance.h"
#include "core/vec3.h"
#include "solvers/spring_solver.h"

int cb_ipc_fpair_lag(int ee, const double *const pt[4], cb_ipc_fpair *f)
{
    double cp[3], cq[3];
    if (ee) {
        double s = 0.0, t = 0.0;
        cb_edge_edge_distance2(pt[0], pt[1], pt[2], pt[3], &s, &t, cp, cq);
        f->w[0] = 1.0 - s;
        f->w[1] = s;
        f->w[2] = -(1.0 - t);
        f->w[3] = -t;
    } else {
        double b[3] = {0, 0, 0};
        cb_point_triangle_distance2(pt[0], pt[1], pt[2], pt[3], b, cq);
        cb_v3_copy(cp, pt[0]);
        f->w[0] = 1.0;
        for (int k = 0; k < 3; k++) f->w[1 + k] = -b[k];
    }
    cb_v3_sub(f->n, cp, cq);
    double d = cb_v3_norm(f->n);
    if (!(d > 0)) return -1;
    cb_v3_scale(f->n, f->n, 1.0 / d);
    return 0;
}

double cb_ipc_fpair_force(int ee, const double *const pt[4], double r, double xi, double shat, double kappa,
                          double eps_x)
{
    double d2 = ee ? cb_edge_edge_distance2(pt[0], pt[1], pt[2], pt[3], NULL, NULL, NULL, NULL)
                   : cb_point_triangle_distance2(pt[0], pt[1], pt[2], pt[3], NULL, NULL);
    double phi = sqrt(d2) - r, db = 0.0;
    if (!(phi > xi)) return 0.0;
    cb_barrier(r > 0 ? phi * phi - xi * xi : d2 - xi * xi, shat, &db, NULL);
    double lam = kappa * fabs(2.0 * phi * db);
    if (ee && eps_x > 0) lam *= cb_ee_mollifier_d(pt[0], pt[1], pt[2], pt[3], eps_x, NULL, NULL);
    return lam;
}

double cb_ipc_fpair_energy(const cb_ipc_fpair *f, const double *const dx[4], double eps, double g[12],
                           double M[3][3])
{
    double u[3] = {0, 0, 0}, gu[3];
    for (int a = 0; a < 4; a++)
        if (dx[a]) cb_v3_axpy(u, f->w[a], dx[a]);
    cb_v3_axpy(u, -cb_v3_dot(u, f->n), f->n); /* its tangential part */
    double e = cb_friction_slip(f->ml, eps, f->n, u, g ? gu : NULL, M);
    if (g)
        for (int a = 0; a < 4; a++) cb_v3_scale(g + 3 * a, gu, f->w[a]);
    return e;
}
