/* contact/sat.c — separating-axis test for triangle pairs and vertex-plane depth
 * (see sat.h). */
#include "contact/sat.h"

#include <math.h>

#include "contact/predicates.h"
#include "core/error.h"
#include "core/vec3.h"

#define CB_SAT_MIN_AXIS2 1e-24   /* skip axes with |u x v|^2 <= this |u|^2 |v|^2 */

static int tri_finite(const double t[3][3])
{
    return cb_v3_isfinite(t[0]) && cb_v3_isfinite(t[1]) && cb_v3_isfinite(t[2]);
}

/* Axis u x v if not degenerate; returns 0 when skipped. */
static int make_axis(double axis[3], const double u[3], const double v[3])
{
    cb_v3_cross(axis, u, v);
    double n2 = cb_v3_norm2(axis), ref = cb_v3_norm2(u) * cb_v3_norm2(v);
    if (!(n2 > CB_SAT_MIN_AXIS2 * ref) || n2 == 0.0) return 0;
    cb_v3_scale(axis, axis, 1.0 / sqrt(n2));
    return 1;
}

static void project(const double t[3][3], const double n[3], double *lo, double *hi)
{
    double p0 = cb_v3_dot(t[0], n), p1 = cb_v3_dot(t[1], n), p2 = cb_v3_dot(t[2], n);
    *lo = fmin(p0, fmin(p1, p2));
    *hi = fmax(p0, fmax(p1, p2));
}

static int exact_overlap(const double a[3][3], const double b[3][3])
{
    for (int i = 0; i < 3; i++) {
        int j = (i + 1) % 3;
        if (cb_segment_triangle_intersect(a[i], a[j], b[0], b[1], b[2])) return 1;
        if (cb_segment_triangle_intersect(b[i], b[j], a[0], a[1], a[2])) return 1;
    }
    return 0;
}

int cb_sat_triangle_triangle(const double a[3][3], const double b[3][3], cb_sat_result *out)
{
    CB_ASSERT(a && b && out);
    out->overlap = 0;
    out->depth = 0.0;
    cb_v3_zero(out->axis);
    if (!tri_finite(a) || !tri_finite(b)) return CB_ERR_NUMERIC;

    double ea[3][3], eb[3][3];
    for (int i = 0; i < 3; i++) {
        cb_v3_sub(ea[i], a[(i + 1) % 3], a[i]);
        cb_v3_sub(eb[i], b[(i + 1) % 3], b[i]);
    }
    double axes[17][3];
    int na = 0;
    double nA[3], nB[3];
    int okA = make_axis(nA, ea[0], ea[1]), okB = make_axis(nB, eb[0], eb[1]);
    if (okA) cb_v3_copy(axes[na++], nA);
    if (okB) cb_v3_copy(axes[na++], nB);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            na += make_axis(axes[na], ea[i], eb[j]);
    if (okA || okB) {
        const double *n = okA ? nA : nB;
        for (int i = 0; i < 3; i++) {
            na += make_axis(axes[na], n, ea[i]);
            na += make_axis(axes[na], n, eb[i]);
        }
    }
    double best = INFINITY, best_axis[3] = {0.0, 0.0, 0.0};
    for (int k = 0; k < na; k++) {
        double loA, hiA, loB, hiB;
        project(a, axes[k], &loA, &hiA);
        project(b, axes[k], &loB, &hiB);
        if (hiA < loB || hiB < loA) { /* separating axis found */
            if (hiB < loA) cb_v3_scale(out->axis, axes[k], -1.0);
            else cb_v3_copy(out->axis, axes[k]);
            return 0;
        }
        double o1 = hiA - loB, o2 = hiB - loA;
        if (o1 <= o2 && o1 < best) { best = o1; cb_v3_copy(best_axis, axes[k]); }
        else if (o2 < o1 && o2 < best) { best = o2; cb_v3_scale(best_axis, axes[k], -1.0); }
    }
    if ((!okA || !okB) && !exact_overlap(a, b)) return 0;
    out->overlap = 1;
    out->depth = isfinite(best) ? best : 0.0;
    cb_v3_copy(out->axis, best_axis);
    return 1;
}

double cb_sat_vertex_plane_depth(const double p[3], const double a[3], const double b[3],
                                 const double c[3], double normal[3])
{
    double n[3] = {0.0, 0.0, 0.0}, u[3], v[3], w[3], depth = 0.0;
    if (cb_v3_isfinite(p) && cb_v3_isfinite(a) && cb_v3_isfinite(b) && cb_v3_isfinite(c)) {
        cb_v3_sub(u, b, a);
        cb_v3_sub(v, c, a);
        if (make_axis(n, u, v)) {
            cb_v3_sub(w, p, a);
            depth = -cb_v3_dot(w, n);
        } else {
            cb_v3_zero(n);
        }
    }
    if (normal) cb_v3_copy(normal, n);
    return depth;
}
