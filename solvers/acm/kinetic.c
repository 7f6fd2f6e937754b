/* solvers/acm/kinetic.c — k-DOP box exit times and vertex-collider certificates
 * (see kinetic.h). */
#include "solvers/acm/kinetic.h"

#include <math.h>
#include <stddef.h>

#include "core/vec3.h"

#define SHRINK 1e-9

double cb_acm_box_exit(const double (*dirs)[3], const double *len, int ndir, const double c[3], double rho,
                       const double x[3], const double v[3])
{
    double s = INFINITY;
    for (int j = 0; j < ndir; j++) {
        double half = rho * len[j] * (1.0 - SHRINK);
        double a = dirs[j][0] * (x[0] - c[0]) + dirs[j][1] * (x[1] - c[1]) + dirs[j][2] * (x[2] - c[2]);
        double b = cb_v3_dot(dirs[j], v);
        if (!(fabs(a) < half)) return 0.0;
        if (b > 0) s = fmin(s, (half - a) / b);
        else if (b < 0) s = fmin(s, (-half - a) / b);
    }
    return s > 0 ? s : 0.0;
}

double cb_acm_collider_certificate(const cb_collider *col, double t, const double x[3],
                                   const double v[3], double guard, double horizon)
{
    double n[3], vc[3], vr[3];
    double d = cb_collider_query(col, t, x, n, NULL);
    double scale = fmax(fmax(fabs(x[0]), fabs(x[1])), fabs(x[2])) + horizon * cb_v3_norm(v);
    double room = d - guard - 1e-10 * scale;
    if (!(room > 0)) return 0.0;
    cb_collider_velocity(col, t, x, vc);
    cb_v3_sub(vr, v, vc);
    double rate;
    if (col->type == CB_COLLIDER_PLANE) rate = -cb_v3_dot(vr, col->normal);
    else rate = cb_v3_norm(vr);
    if (!(rate > 0)) return horizon;
    return fmin(horizon, room / rate);
}
