/* solvers/acm/kinetic.c — k-DOP box exit times, vertex-collider certificates and
 * separating slabs with a velocity allowance (see kinetic.h). */
#include "solvers/acm/kinetic.h"

#include <math.h>
#include <stddef.h>

#include "contact/colliders.h"
#include "contact/distance.h"
#include "core/vec3.h"

#define SHRINK 1e-9

double cb_acm_box_exit(const double (*dirs)[3], const double *len, int ndir, const double c[3], double rho,
                       const double x[3], const double v[3], double slack)
{
    double s = INFINITY;
    for (int j = 0; j < ndir; j++) {
        double half = rho * len[j] * (1.0 - SHRINK);
        double a = dirs[j][0] * (x[0] - c[0]) + dirs[j][1] * (x[1] - c[1]) + dirs[j][2] * (x[2] - c[2]);
        double b = cb_v3_dot(dirs[j], v), e = slack * len[j];
        if (!(fabs(a) < half)) return 0.0;
        /* plain comparisons, not fmin (a library call here): same result, s is never NaN */
        if (b + e > 0) {
            double r = (half - a) / (b + e);
            if (r < s) s = r;
        }
        if (b - e < 0) {
            double r = (-half - a) / (b - e);
            if (r < s) s = r;
        }
    }
    return s > 0 ? s : 0.0;
}

double cb_acm_collider_certificate(const cb_collider *col, double t, const double x[3],
                                   const double v[3], double vnorm, double guard, double horizon, double slack)
{
    double vc[3], vr[3];
    double d = cb_collider_distance(col, t, x);
    /* comparisons instead of fmax/fmin (library calls here): the arguments are never NaN
       where it matters (fabs values; room / rate > 0 below), so the values are the same */
    double ax = fabs(x[0]), ay = fabs(x[1]), az = fabs(x[2]);
    double amax = ax >= ay ? ax : ay;
    amax = amax >= az ? amax : az;
    double scale = amax + horizon * (vnorm + slack);
    double room = d - guard - 1e-10 * scale;
    if (!(room > 0)) return 0.0;
    const double *cv = col->velocity, *om = col->angular_velocity;
    double vrnorm;
    if (col->type != CB_COLLIDER_MESH && cv[0] == 0.0 && cv[1] == 0.0 && cv[2] == 0.0 && om[0] == 0.0 &&
        om[1] == 0.0 && om[2] == 0.0) {
        /* a resting analytic collider: its velocity is 0, v - 0 is v bitwise (also for
           -0), so |v - v_c| is the caller's |v| */
        cb_v3_copy(vr, v);
        vrnorm = vnorm;
    } else {
        cb_collider_velocity(col, t, x, vc); /* rotating mesh, spinning sphere: per point */
        cb_v3_sub(vr, v, vc);
        vrnorm = col->type == CB_COLLIDER_PLANE ? 0.0 : cb_v3_norm(vr);
    }
    double rate;
    if (col->type == CB_COLLIDER_PLANE) rate = -cb_v3_dot(vr, col->normal) + slack;
    else rate = vrnorm + slack;
    if (!(rate > 0)) return horizon;
    double r = room / rate;
    return r < horizon ? r : horizon;
}

double cb_acm_slab_certificate(int edge_edge, const double x[4][3], const double v[4][3], double guard,
                               double horizon, double slack)
{
    double ca[3], cbp[3], n[3], d2;
    if (edge_edge)
        d2 = cb_edge_edge_distance2(x[0], x[1], x[2], x[3], NULL, NULL, ca, cbp);
    else {
        d2 = cb_point_triangle_distance2(x[0], x[1], x[2], x[3], NULL, cbp);
        cb_v3_copy(ca, x[0]);
    }
    double d = sqrt(d2);
    if (!(d > 0) || !(d > guard)) return 0.0;
    cb_v3_sub(n, ca, cbp);
    cb_v3_scale(n, n, 1.0 / d);
    double m[3], u[3] = {0, 0, 0}, scale = 0.0;
    for (int k = 0; k < 3; k++) m[k] = 0.5 * (ca[k] + cbp[k]);
    if (edge_edge)
        for (int j = 0; j < 4; j++) cb_v3_axpy(u, 0.25, v[j]);
    else {
        cb_v3_axpy(u, 0.5, v[0]);
        for (int j = 1; j < 4; j++) cb_v3_axpy(u, 1.0 / 6.0, v[j]);
    }
    for (int j = 0; j < 4; j++)
        for (int k = 0; k < 3; k++)
            scale = fmax(scale, fabs(x[j][k]) + horizon * (fabs(v[j][k]) + slack));
    double half = 0.5 * guard + 1e-10 * scale;
    int nside_a = edge_edge ? 2 : 1;
    double s = horizon;
    for (int j = 0; j < 4; j++) {
        double sign = j < nside_a ? 1.0 : -1.0, r[3], w[3];
        cb_v3_sub(r, x[j], m);
        cb_v3_sub(w, v[j], u);
        double a = sign * cb_v3_dot(n, r) - half;
        double b = sign * cb_v3_dot(n, w) - slack;
        if (!(a > 0)) return 0.0;
        if (b < 0) s = fmin(s, a / -b);
    }
    return s > 0 ? s : 0.0;
}
