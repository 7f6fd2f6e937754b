/* contact/distance.c — point-segment, point-triangle and segment-segment closest points
 * (see distance.h for the method and its guarantees). */
#include "contact/distance.h"

#include <math.h>

#include "core/vec3.h"

/* The 2x2 systems below are trusted without a boundary check when their determinant
 * exceeds this fraction of the product of the diagonal (sin^2 of the angle between the
 * two directions). */
#define CB_WELL_CONDITIONED 1e-8

static double dist2_pts(const double a[3], const double b[3])
{
    double d[3];
    cb_v3_sub(d, a, b);
    return cb_v3_dot(d, d);
}

static void fill_nan(double *v, int n)
{
    for (int i = 0; i < n; i++) v[i] = (double)NAN;
}

/* Closest point of segment ab to p; returns the squared distance. */
static double point_segment(const double p[3], const double a[3], const double b[3], double *t,
                            double x[3])
{
    double d[3], w[3];
    cb_v3_sub(d, b, a);
    cb_v3_sub(w, p, a);
    double l2 = cb_v3_dot(d, d), tt = 0.0;
    if (l2 > 0.0) {
        tt = cb_v3_dot(w, d) / l2;
        tt = tt < 0.0 ? 0.0 : (tt > 1.0 ? 1.0 : tt);
    }
    if (tt == 1.0) cb_v3_copy(x, b);
    else { cb_v3_copy(x, a); cb_v3_axpy(x, tt, d); }
    *t = tt;
    return dist2_pts(p, x);
}

double cb_point_segment_distance2(const double p[3], const double a[3], const double b[3],
                                  double *t, double closest[3])
{
    double tt, x[3];
    if (!cb_v3_isfinite(p) || !cb_v3_isfinite(a) || !cb_v3_isfinite(b)) {
        if (t) *t = (double)NAN;
        if (closest) fill_nan(closest, 3);
        return (double)NAN;
    }
    double d2 = point_segment(p, a, b, &tt, x);
    if (t) *t = tt;
    if (closest) cb_v3_copy(closest, x);
    return d2;
}

double cb_point_triangle_distance2(const double p[3], const double a[3], const double b[3],
                                   const double c[3], double bary[3], double closest[3])
{
    if (!cb_v3_isfinite(p) || !cb_v3_isfinite(a) || !cb_v3_isfinite(b) || !cb_v3_isfinite(c)) {
        if (bary) fill_nan(bary, 3);
        if (closest) fill_nan(closest, 3);
        return (double)NAN;
    }
    double e0[3], e1[3], w[3];
    cb_v3_sub(e0, b, a);
    cb_v3_sub(e1, c, a);
    cb_v3_sub(w, p, a);
    double d00 = cb_v3_dot(e0, e0), d01 = cb_v3_dot(e0, e1), d11 = cb_v3_dot(e1, e1);
    double d20 = cb_v3_dot(w, e0), d21 = cb_v3_dot(w, e1);
    double det = d00 * d11 - d01 * d01;
    double best = INFINITY, bb[3] = {1.0, 0.0, 0.0}, bx[3];
    cb_v3_copy(bx, a);
    if (det > 0.0) {
        double v = (d11 * d20 - d01 * d21) / det, ww = (d00 * d21 - d01 * d20) / det;
        double u = 1.0 - v - ww;
        if (u >= 0.0 && v >= 0.0 && ww >= 0.0) {
            double x[3];
            cb_v3_copy(x, a);
            cb_v3_axpy(x, v, e0);
            cb_v3_axpy(x, ww, e1);
            best = dist2_pts(p, x);
            cb_v3_set(bb, u, v, ww);
            cb_v3_copy(bx, x);
            if (det > CB_WELL_CONDITIONED * d00 * d11) goto done;
        }
    }
    {   /* boundary: the three edges */
        const double *ea[3] = {a, b, c}, *eb[3] = {b, c, a};
        for (int k = 0; k < 3; k++) {
            double t, x[3];
            double d2 = point_segment(p, ea[k], eb[k], &t, x);
            if (d2 < best) {
                best = d2;
                cb_v3_copy(bx, x);
                bb[k] = 1.0 - t;
                bb[(k + 1) % 3] = t;
                bb[(k + 2) % 3] = 0.0;
            }
        }
    }
done:
    if (bary) cb_v3_copy(bary, bb);
    if (closest) cb_v3_copy(closest, bx);
    return best;
}

double cb_edge_edge_distance2(const double p0[3], const double p1[3], const double q0[3],
                              const double q1[3], double *s, double *t, double cp[3], double cq[3])
{
    if (!cb_v3_isfinite(p0) || !cb_v3_isfinite(p1) || !cb_v3_isfinite(q0) || !cb_v3_isfinite(q1)) {
        if (s) *s = (double)NAN;
        if (t) *t = (double)NAN;
        if (cp) fill_nan(cp, 3);
        if (cq) fill_nan(cq, 3);
        return (double)NAN;
    }
    double d1[3], d2[3], r[3];
    cb_v3_sub(d1, p1, p0);
    cb_v3_sub(d2, q1, q0);
    cb_v3_sub(r, p0, q0);
    double a = cb_v3_dot(d1, d1), e = cb_v3_dot(d2, d2), b = cb_v3_dot(d1, d2);
    double c = cb_v3_dot(d1, r), f = cb_v3_dot(d2, r);
    double denom = a * e - b * b;
    double best = INFINITY, bs = 0.0, bt = 0.0, bp[3], bq[3];
    cb_v3_copy(bp, p0);
    cb_v3_copy(bq, q0);
    if (denom > 0.0) {
        double ss = (b * f - c * e) / denom, tt = (a * f - b * c) / denom;
        if (ss >= 0.0 && ss <= 1.0 && tt >= 0.0 && tt <= 1.0) {
            double x[3], y[3];
            cb_v3_copy(x, p0);
            cb_v3_axpy(x, ss, d1);
            cb_v3_copy(y, q0);
            cb_v3_axpy(y, tt, d2);
            best = dist2_pts(x, y);
            bs = ss;
            bt = tt;
            cb_v3_copy(bp, x);
            cb_v3_copy(bq, y);
            if (denom > CB_WELL_CONDITIONED * a * e) goto done;
        }
    }
    {   /* boundary: each endpoint against the other segment */
        const double *pt[4] = {p0, p1, q0, q1};
        for (int k = 0; k < 4; k++) {
            double u, x[3];
            double d2v = k < 2 ? point_segment(pt[k], q0, q1, &u, x) : point_segment(pt[k], p0, p1, &u, x);
            if (d2v < best) {
                best = d2v;
                if (k < 2) { bs = (double)k; bt = u; cb_v3_copy(bp, pt[k]); cb_v3_copy(bq, x); }
                else { bs = u; bt = (double)(k - 2); cb_v3_copy(bp, x); cb_v3_copy(bq, pt[k]); }
            }
        }
    }
done:
    if (s) *s = bs;
    if (t) *t = bt;
    if (cp) cb_v3_copy(cp, bp);
    if (cq) cb_v3_copy(cq, bq);
    return best;
}

double cb_hull_distance_lb(const double *const pts[4], int n1, double need)
{
    if (n1 < 1 || n1 > 3) return 0.0;
    double c[2][3], lo[2][3], hi[2][3], gap = 0.0, big = 0.0;
    for (int sd = 0; sd < 2; sd++) {
        int a = sd ? n1 : 0, b = sd ? 4 : n1;
        double inv = b - a == 1 ? 1.0 : b - a == 2 ? 0.5 : 1.0 / 3.0;
        for (int k = 0; k < 3; k++) {
            double y = pts[a][k], sum = y;
            lo[sd][k] = hi[sd][k] = y;
            for (int i = a + 1; i < b; i++) {
                y = pts[i][k];
                sum += y;
                lo[sd][k] = y < lo[sd][k] ? y : lo[sd][k];
                hi[sd][k] = y > hi[sd][k] ? y : hi[sd][k];
            }
            c[sd][k] = sum * inv;
            double m = fabs(lo[sd][k]) > fabs(hi[sd][k]) ? fabs(lo[sd][k]) : fabs(hi[sd][k]);
            big = m > big ? m : big;
        }
    }
    if (!isfinite(c[0][0] + c[0][1] + c[0][2] + c[1][0] + c[1][1] + c[1][2])) return 0.0; /* no bound */
    for (int k = 0; k < 3; k++) {
        double g = lo[1][k] - hi[0][k] > lo[0][k] - hi[1][k] ? lo[1][k] - hi[0][k] : lo[0][k] - hi[1][k];
        gap = g > gap ? g : gap;
    }
    double margin = 1e-12 * big, lb = gap * (1.0 - 1e-9) - margin;
    if (lb >= need) return lb; /* enough already: no ball */
    double r[2] = {0.0, 0.0};
    for (int sd = 0; sd < 2; sd++) {
        int a = sd ? n1 : 0, b = sd ? 4 : n1;
        if (b - a == 1) continue; /* a point: radius 0 */
        double r2 = 0.0;
        for (int i = a; i < b; i++) {
            double d2 = dist2_pts(pts[i], c[sd]);
            r2 = d2 > r2 ? d2 : r2;
        }
        r[sd] = sqrt(r2);
    }
    double ball = (sqrt(dist2_pts(c[0], c[1])) - r[0] - r[1]) * (1.0 - 1e-9) - margin;
    return ball > lb ? ball : lb;
}
