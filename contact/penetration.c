/* contact/penetration.c — smallest signed distance of a primitive or of a vertex's path
 * from a collider (penetration.h). */
#include "contact/penetration.h"

#include <math.h>
#include <stddef.h>

#include "contact/colliders.h"
#include "contact/distance.h"
#include "contact/predicates.h"
#include "core/vec3.h"

/* Squared distance between a segment s0 s1 and the primitive p (n = 1, 2, 3); 0 when a
 * segment crosses the triangle. */
static double segment_primitive_distance2(const double s0[3], const double s1[3], int n, const double (*p)[3])
{
    if (n == 1) return cb_point_segment_distance2(p[0], s0, s1, NULL, NULL);
    if (n == 2) return cb_edge_edge_distance2(s0, s1, p[0], p[1], NULL, NULL, NULL, NULL);
    if (cb_segment_triangle_intersect(s0, s1, p[0], p[1], p[2])) return 0.0;
    double d = fmin(cb_point_triangle_distance2(s0, p[0], p[1], p[2], NULL, NULL),
                    cb_point_triangle_distance2(s1, p[0], p[1], p[2], NULL, NULL));
    for (int k = 0; k < 3; k++)
        d = fmin(d, cb_edge_edge_distance2(s0, s1, p[k], p[(k + 1) % 3], NULL, NULL, NULL, NULL));
    return d;
}

static double point_primitive_distance2(const double c[3], int n, const double (*p)[3])
{
    if (n == 1) return cb_v3_dist2(c, p[0]);
    if (n == 2) return cb_point_segment_distance2(c, p[0], p[1], NULL, NULL);
    return cb_point_triangle_distance2(c, p[0], p[1], p[2], NULL, NULL);
}

/* The box's six face functions at a local point q: l_{2k} = q_k - h_k, l_{2k+1} = -q_k - h_k. */
static double box_f(const double half[3], const double q[3])
{
    double f = -INFINITY;
    for (int k = 0; k < 3; k++) f = fmax(f, fabs(q[k]) - half[k]);
    return f;
}

static double box_l(const double half[3], int j, const double q[3])
{
    int k = j / 2;
    return (j & 1 ? -q[k] : q[k]) - half[k];
}

/* Minimum of box_f over the simplex spanned by local points q[0..n-1] (n = 2 or 3). */
static double box_min(const double half[3], int n, const double (*q)[3])
{
    double best = INFINITY;
    for (int i = 0; i < n; i++) best = fmin(best, box_f(half, q[i]));
    /* on every edge: the points where two face functions are equal */
    for (int e = 0; e < (n == 2 ? 1 : 3); e++) {
        const double *a = q[e], *b = q[(e + 1) % n];
        for (int i = 0; i < 6; i++)
            for (int j = i + 1; j < 6; j++) {
                double da = box_l(half, i, a) - box_l(half, j, a);
                double db = box_l(half, i, b) - box_l(half, j, b);
                if (da == db || (da > 0) == (db > 0)) continue;
                double s = da / (da - db), x[3];
                for (int k = 0; k < 3; k++) x[k] = a[k] + s * (b[k] - a[k]);
                best = fmin(best, box_f(half, x));
            }
    }
    if (n == 3) { /* interior points where three are equal: x = q0 + u e1 + v e2 */
        double e1[3], e2[3];
        cb_v3_sub(e1, q[1], q[0]);
        cb_v3_sub(e2, q[2], q[0]);
        for (int i = 0; i < 6; i++)
            for (int j = i + 1; j < 6; j++)
                for (int k = j + 1; k < 6; k++) {
                    /* l_i - l_j = 0 and l_i - l_k = 0 are linear in (u, v) */
                    double o[3] = {0, 0, 0};
                    double g0 = box_l(half, i, q[0]) - box_l(half, j, q[0]);
                    double h0 = box_l(half, i, q[0]) - box_l(half, k, q[0]);
                    double x1[3], x2[3];
                    cb_v3_add(x1, q[0], e1);
                    cb_v3_add(x2, q[0], e2);
                    double gu = box_l(half, i, x1) - box_l(half, j, x1) - g0;
                    double gv = box_l(half, i, x2) - box_l(half, j, x2) - g0;
                    double hu = box_l(half, i, x1) - box_l(half, k, x1) - h0;
                    double hv = box_l(half, i, x2) - box_l(half, k, x2) - h0;
                    double det = gu * hv - gv * hu;
                    if (det == 0.0) continue;
                    double u = (-g0 * hv + gv * h0) / det, v = (-gu * h0 + g0 * hu) / det;
                    if (!(u >= 0 && v >= 0 && u + v <= 1)) continue;
                    for (int m = 0; m < 3; m++) o[m] = q[0][m] + u * e1[m] + v * e2[m];
                    best = fmin(best, box_f(half, o));
                }
    }
    return best;
}

/* Everything in the collider's frame at time 0: analytic colliders translate only. */
static double analytic_distance(const cb_collider *c, int n, const double (*p)[3])
{
    switch (c->type) {
    case CB_COLLIDER_PLANE: {
        double best = INFINITY;
        for (int i = 0; i < n; i++) {
            double d[3];
            cb_v3_sub(d, p[i], c->center);
            best = fmin(best, cb_v3_dot(d, c->normal));
        }
        return best;
    }
    case CB_COLLIDER_SPHERE:
        return sqrt(point_primitive_distance2(c->center, n, p)) - c->radius;
    case CB_COLLIDER_CAPSULE:
        return sqrt(segment_primitive_distance2(c->p0, c->p1, n, p)) - c->radius;
    case CB_COLLIDER_BOX: {
        double q[3][3];
        for (int i = 0; i < n; i++) {
            double d[3];
            cb_v3_sub(d, p[i], c->center);
            for (int k = 0; k < 3; k++) q[i][k] = cb_v3_dot(d, c->axes[k]);
        }
        double f = n == 1 ? box_f(c->half, q[0]) : box_min(c->half, n, (const double (*)[3])q);
        if (f < 0) return f;
        double best = INFINITY;
        for (int i = 0; i < n; i++) best = fmin(best, cb_collider_query(c, 0.0, p[i], NULL, NULL));
        return best;
    }
    default:
        return INFINITY;
    }
}

double cb_collider_primitive_distance(const cb_collider *c, double t, int n, const double (*p)[3])
{
    if (c->type == CB_COLLIDER_MESH || n == 1) {
        double best = INFINITY;
        for (int i = 0; i < n; i++) best = fmin(best, cb_collider_query(c, t, p[i], NULL, NULL));
        return best;
    }
    double q[3][3];
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) q[i][k] = p[i][k] - c->velocity[k] * t;
    return analytic_distance(c, n, (const double (*)[3])q);
}

double cb_collider_path_distance(const cb_collider *c, double t0, const double a[3], double t1,
                                 const double b[3])
{
    if (c->type == CB_COLLIDER_MESH)
        return fmin(cb_collider_query(c, t0, a, NULL, NULL), cb_collider_query(c, t1, b, NULL, NULL));
    double q[2][3];
    for (int k = 0; k < 3; k++) {
        q[0][k] = a[k] - c->velocity[k] * t0;
        q[1][k] = b[k] - c->velocity[k] * t1;
    }
    return analytic_distance(c, 2, (const double (*)[3])q);
}

/* A lower bound of the smallest distance of the primitive q (collider frame, n = 2 or 3)
 * from an analytic collider's surface, valid where the primitive is outside (the caller
 * has seen that no point of it is inside): exact for the sphere and the capsule; for
 * the box the largest over its six face planes of the primitive's smallest height above
 * that plane (the box lies below each of them, so the primitive is at least that far). */
static double outside_lower_bound(const cb_collider *c, int n, const double (*q)[3])
{
    switch (c->type) {
    case CB_COLLIDER_SPHERE:
    case CB_COLLIDER_CAPSULE:
    case CB_COLLIDER_PLANE:
        return analytic_distance(c, n, q);
    case CB_COLLIDER_BOX: {
        double l[3][3], best = -INFINITY;
        for (int i = 0; i < n; i++) {
            double d[3];
            cb_v3_sub(d, q[i], c->center);
            for (int k = 0; k < 3; k++) l[i][k] = cb_v3_dot(d, c->axes[k]);
        }
        for (int j = 0; j < 6; j++) {
            double lo = INFINITY;
            for (int i = 0; i < n; i++) lo = fmin(lo, box_l(c->half, j, l[i]));
            best = fmax(best, lo);
        }
        return best;
    }
    default:
        return -INFINITY;
    }
}

#define SWEPT_LEVELS 10

int cb_collider_swept_primitive_inside(const cb_collider *c, double t0, double t1, int n,
                                       const double (*p0)[3], const double (*p1)[3])
{
    if (c->type == CB_COLLIDER_MESH || n < 2 || n > 3) return 0;
    /* in the collider's frame every vertex moves on a straight line: q_i(s) = a_i + s d_i */
    double a[3][3], d[3][3], speed = 0;
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++) {
            a[i][k] = p0[i][k] - c->velocity[k] * t0;
            d[i][k] = p1[i][k] - c->velocity[k] * t1 - a[i][k];
        }
        speed = fmax(speed, cb_v3_norm(d[i]));
    }
    if (!isfinite(speed)) return 0;
    /* the intervals still to clear, as (start, level): depth-first in time order */
    double st[SWEPT_LEVELS + 2];
    int lv[SWEPT_LEVELS + 2], top = 0;
    st[0] = 0.0;
    lv[0] = 0;
    top = 1;
    while (top > 0) {
        top--;
        double s0 = st[top], h = ldexp(1.0, -lv[top]), sm = s0 + 0.5 * h, q[3][3];
        int level = lv[top];
        for (int i = 0; i < n; i++)
            for (int k = 0; k < 3; k++) q[i][k] = a[i][k] + sm * d[i][k];
        double f = analytic_distance(c, n, (const double (*)[3])q);
        if (f < 0) return 1; /* a point of it is inside at this time */
        /* every point of the primitive is within speed h / 2 of its place at sm (the
         * same barycentric point), and the signed distance is 1-Lipschitz */
        if (outside_lower_bound(c, n, (const double (*)[3])q) - 0.5 * speed * h >= 0) continue;
        if (level >= SWEPT_LEVELS) continue; /* not deeper than speed 2^-(levels+1) */
        st[top] = s0 + 0.5 * h;
        lv[top++] = level + 1;
        st[top] = s0;
        lv[top++] = level + 1;
    }
    return 0;
}

double cb_collider_primitive_lower_bound(const cb_collider *c, double t, int n, const double (*p)[3])
{
    if (c->type == CB_COLLIDER_MESH || n < 1 || n > 3) return -INFINITY;
    double q[3][3];
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) q[i][k] = p[i][k] - c->velocity[k] * t;
    double f = analytic_distance(c, n, (const double (*)[3])q);
    return f < 0 ? f : outside_lower_bound(c, n, (const double (*)[3])q);
}
