/* contact/certificate.c — kinetic separating-slab certificates (see certificate.h). */
#include "contact/certificate.h"

#include <math.h>
#include <stddef.h>

#include "contact/distance.h"
#include "core/vec3.h"

#define CB_CERT_REL_MARGIN 1e-10

/* x[0..n1-1] are side 1 (the + side of the plane), x[n1..3] side 2. c1, c2 closest points. */
static double slab_time(const double *const x[4], const double *const v[4], int n1,
                        const double c1[3], const double c2[3], const double w[3],
                        double eta, double horizon)
{
    double S = 0.0, V = 0.0;
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 3; k++) {
            S = fmax(S, fabs(x[i][k]));
            V = fmax(V, fabs(v[i][k]));
        }
    if (isfinite(horizon)) S += horizon * V;
    double half = 0.5 * eta + CB_CERT_REL_MARGIN * S;
    double n[3], m[3];
    cb_v3_sub(n, c1, c2);
    double d = cb_v3_norm(n);
    if (!(d > 2.0 * half)) return 0.0; /* closer than eta (+ margin), touching or NaN */
    cb_v3_scale(n, n, 1.0 / d);
    cb_v3_add(m, c1, c2);
    cb_v3_scale(m, m, 0.5);
    double t = horizon;
    for (int i = 0; i < 4; i++) {
        double dx[3], dv[3];
        cb_v3_sub(dx, x[i], m);
        cb_v3_sub(dv, v[i], w);
        double sd = cb_v3_dot(dx, n), rate = cb_v3_dot(dv, n);
        if (i >= n1) { sd = -sd; rate = -rate; }
        double room = sd - half;
        if (!(room > 0.0)) return 0.0;
        if (rate < 0.0) t = fmin(t, room / -rate);
    }
    return t > 0.0 ? t : 0.0;
}

static int args_ok(const double *const x[4], const double *const v[4], double eta, double horizon)
{
    for (int i = 0; i < 4; i++)
        if (!cb_v3_isfinite(x[i]) || !cb_v3_isfinite(v[i])) return 0;
    return !isnan(eta) && horizon > 0.0;
}

double cb_certificate_vertex_triangle(const double p[3], const double vp[3],
                                      const double a[3], const double va[3], const double b[3],
                                      const double vb[3], const double c[3], const double vc[3],
                                      double eta, double horizon)
{
    const double *x[4] = {p, a, b, c}, *v[4] = {vp, va, vb, vc};
    if (!args_ok(x, v, eta, horizon)) return 0.0;
    if (eta < 0.0) eta = 0.0;
    double cl[3], w[3];
    cb_point_triangle_distance2(p, a, b, c, NULL, cl);
    for (int k = 0; k < 3; k++) w[k] = 0.5 * (vp[k] + (va[k] + vb[k] + vc[k]) / 3.0);
    return slab_time(x, v, 1, p, cl, w, eta, horizon);
}

double cb_certificate_edge_edge(const double p[3], const double vp[3], const double q[3],
                                const double vq[3], const double r[3], const double vr[3],
                                const double s[3], const double vs[3], double eta, double horizon)
{
    const double *x[4] = {p, q, r, s}, *v[4] = {vp, vq, vr, vs};
    if (!args_ok(x, v, eta, horizon)) return 0.0;
    if (eta < 0.0) eta = 0.0;
    double c1[3], c2[3], w[3];
    cb_edge_edge_distance2(p, q, r, s, NULL, NULL, c1, c2);
    for (int k = 0; k < 3; k++) w[k] = 0.25 * (vp[k] + vq[k] + vr[k] + vs[k]);
    return slab_time(x, v, 2, c1, c2, w, eta, horizon);
}
