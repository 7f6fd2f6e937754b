/* solvers/pbd_constraints.h — the constraint functions of Position Based Dynamics
 * (Mueller et al. 2007) and their projection, shared by the `pbd` and `xpbd` solvers
 * (solvers/pbd.c) and tested one by one in tests/test_pbd.c.
 *
 * Each constraint is a function C(p_1..p_n) with its exact gradient g_i = dC/dp_i.
 * All of them are invariant under rigid motions (translation, rotation), so the
 * gradients satisfy sum_i g_i = 0 and sum_i p_i x g_i = 0, and a mass-weighted
 * correction dp_i = dlambda w_i g_i conserves linear and angular momentum (paper
 * section 3.3, eq. 1-2).
 *
 *   stretch      C = |p0 - p1| - L                              (paper section 4.1)
 *   bend (paper) C = acos(n1 . n2) - phi0, n1 = unit(e x (p2-p0)), n2 = unit(e x (p3-p0)),
 *                e = p1 - p0: the paper's angle between the face normals as oriented in its
 *                Figure 4 / appendix A, pi for a flat hinge. The gradient is the appendix's:
 *                with d = n1 . n2 and (p0 at the origin)
 *                  q2 = (e x n2 + (n1 x e) d) / |e x p2|,  q3 = (e x n1 + (n2 x e) d) / |e x p3|,
 *                  q1 = -(p2 x n2 + (n1 x p2) d) / |e x p2| - (p3 x n1 + (n2 x p3) d) / |e x p3|,
 *                  q0 = -q1 - q2 - q3,   dC/dp_i = q_i / sqrt(1 - d^2)
 *                (the q_i are -dd/dp_i, so the paper's correction
 *                dp_i = -w_i sqrt(1-d^2) C q_i / sum_j w_j |q_j|^2 is eq. 9 exactly).
 *                It depends on the normals only, so it is independent of stretching.
 *   bend (dihedral) C = theta - theta0 with theta the shared model's signed dihedral angle
 *                (core/model.h, cb_dihedral_angle, exact gradient): what xpbd uses so that
 *                its constraint energy is the shared model's hinge energy.
 *   tet volume   C = 6 (V - V0), 6V = (p1 - p0) x (p2 - p0) . (p3 - p0)
 *   self contact C = s (q - p1) . n - h, n = unit((p2 - p1) x (p3 - p1)), s = +-1 the side
 *                q came from (paper eq. 12-13), h the cloth thickness.
 *
 * The correction of one constraint (paper eq. 8-9 and XPBD):
 *   pbd:  dlambda = -k' C / sum_j w_j |g_j|^2
 *   xpbd: dlambda = (-C - at lambda) / (sum_j w_j |g_j|^2 + at), lambda += dlambda,
 *         at = alpha / dt^2 (alpha the compliance)
 * and p_i += dlambda w_i g_i. Both are pbd_correction() below (at < 0 selects pbd).
 *
 * Static inline so the solver's inner loops inline them (like core/vec3.h).
 */
#ifndef CB_PBD_CONSTRAINTS_H
#define CB_PBD_CONSTRAINTS_H

#include <math.h>
#include <string.h>

#include "core/model.h"
#include "core/vec3.h"

/* C = |p0 - p1| - L and its gradient (g may be NULL). */
static inline double cb_pbd_stretch(const double p0[3], const double p1[3], double rest, double g[2][3])
{
    double d[3];
    cb_v3_sub(d, p0, p1);
    double l = cb_v3_norm(d);
    if (g) {
        if (l > 0) cb_v3_scale(g[0], d, 1.0 / l);
        else cb_v3_zero(g[0]);
        cb_v3_scale(g[1], g[0], -1.0);
    }
    return l - rest;
}

/* The vectors of hinge (p0, p1; p2, p3) every bending kernel starts from: the edge
 * e = p1 - p0, a = p2 - p0, b = p3 - p0 and the first wing's normal n1 = e x a (each
 * kernel takes the second normal in its own orientation). */
static inline void cb_pbd_hinge_vectors(const double p0[3], const double p1[3], const double p2[3],
                                        const double p3[3], double e[3], double a[3], double b[3], double n1[3])
{
    cb_v3_sub(e, p1, p0);
    cb_v3_sub(a, p2, p0);
    cb_v3_sub(b, p3, p0);
    cb_v3_cross(n1, e, a);
}

/* The paper's bending angle acos(n1 . n2) of hinge (p0, p1; p2, p3) (pi when flat). */
static inline double cb_pbd_bend_paper_angle(const double p0[3], const double p1[3], const double p2[3],
                                             const double p3[3])
{
    double e[3], a[3], b[3], n1[3], n2[3];
    cb_pbd_hinge_vectors(p0, p1, p2, p3, e, a, b, n1);
    cb_v3_cross(n2, e, b);
    double l1 = cb_v3_norm(n1), l2 = cb_v3_norm(n2);
    if (!(l1 > 0) || !(l2 > 0)) return M_PI;
    double d = cb_v3_dot(n1, n2) / (l1 * l2);
    d = d > 1.0 ? 1.0 : d < -1.0 ? -1.0 : d;
    return acos(d);
}

/* C = acos(n1 . n2) - phi0 with the appendix-A gradient (g may be NULL). Where the
 * gradient is singular (d = +-1, a degenerate triangle) g is set to 0. */
static inline double cb_pbd_bend_paper(const double p0[3], const double p1[3], const double p2[3],
                                       const double p3[3], double phi0, double g[4][3])
{
    double e[3], a[3], b[3], n1[3], n2[3];
    cb_pbd_hinge_vectors(p0, p1, p2, p3, e, a, b, n1);
    cb_v3_cross(n2, e, b);
    double l1 = cb_v3_norm(n1), l2 = cb_v3_norm(n2);
    if (!(l1 > 0) || !(l2 > 0)) {
        if (g) memset(g, 0, 4 * sizeof g[0]);
        return 0.0;
    }
    cb_v3_scale(n1, n1, 1.0 / l1);
    cb_v3_scale(n2, n2, 1.0 / l2);
    double d = cb_v3_dot(n1, n2);
    d = d > 1.0 ? 1.0 : d < -1.0 ? -1.0 : d;
    double C = acos(d) - phi0;
    if (!g) return C;
    double s2 = 1.0 - d * d;
    if (!(s2 > 1e-10)) { /* nearly flat or folded: the gradient is 0/0 there */
        memset(g, 0, 4 * sizeof g[0]);
        return C;
    }
    /* q_i = d d / d p_i (appendix A, with p0 at the origin: e = p2, a = p3, b = p4 there) */
    double q[4][3], t[3], u[3];
    cb_v3_cross(t, e, n2);
    cb_v3_cross(u, n1, e);
    for (int k = 0; k < 3; k++) q[2][k] = (t[k] + u[k] * d) / l1;
    cb_v3_cross(t, e, n1);
    cb_v3_cross(u, n2, e);
    for (int k = 0; k < 3; k++) q[3][k] = (t[k] + u[k] * d) / l2;
    double t2[3], u2[3];
    cb_v3_cross(t, a, n2);
    cb_v3_cross(u, n1, a);
    cb_v3_cross(t2, b, n1);
    cb_v3_cross(u2, n2, b);
    for (int k = 0; k < 3; k++) {
        q[1][k] = -(t[k] + u[k] * d) / l1 - (t2[k] + u2[k] * d) / l2;
        q[0][k] = -q[1][k] - q[2][k] - q[3][k];
    }
    double f = 1.0 / sqrt(s2); /* the appendix's q_i are -dd/dp_i */
    for (int i = 0; i < 4; i++) cb_v3_scale(g[i], q[i], f);
    return C;
}

/* C = theta - theta0 with the shared model's signed dihedral angle (g may be NULL). */
static inline double cb_pbd_bend_dihedral(const double p0[3], const double p1[3], const double p2[3],
                                          const double p3[3], double theta0, double g[4][3])
{
    return cb_dihedral_angle(p0, p1, p2, p3, g) - theta0;
}

/* C = 6 V - V6rest with 6V = (p1 - p0) x (p2 - p0) . (p3 - p0) (g may be NULL). */
static inline double cb_pbd_tet_volume(const double p0[3], const double p1[3], const double p2[3],
                                       const double p3[3], double v6rest, double g[4][3])
{
    double a[3], b[3], c[3], bc[3];
    cb_v3_sub(a, p1, p0);
    cb_v3_sub(b, p2, p0);
    cb_v3_sub(c, p3, p0);
    cb_v3_cross(bc, b, c);
    double v6 = cb_v3_dot(a, bc);
    if (g) {
        cb_v3_copy(g[1], bc);          /* d/da a.(b x c) */
        cb_v3_cross(g[2], c, a);       /* d/db = c x a */
        cb_v3_cross(g[3], a, b);       /* d/dc = a x b */
        for (int k = 0; k < 3; k++) g[0][k] = -g[1][k] - g[2][k] - g[3][k];
    }
    return v6 - v6rest;
}

/* C = side (q - p1) . unit((p2 - p1) x (p3 - p1)) - h, exact gradient in g[0] (q),
 * g[1..3] (p1..p3); g may be NULL. A degenerate triangle gives C = 0 and g = 0. */
static inline double cb_pbd_self(const double q[3], const double p1[3], const double p2[3],
                                 const double p3[3], double side, double h, double g[4][3])
{
    double e1[3], e2[3], N[3], r[3];
    cb_v3_sub(e1, p2, p1);
    cb_v3_sub(e2, p3, p1);
    cb_v3_sub(r, q, p1);
    cb_v3_cross(N, e1, e2);
    double ln = cb_v3_norm(N);
    if (!(ln > 0)) {
        if (g) memset(g, 0, 4 * sizeof g[0]);
        return 0.0;
    }
    double n[3];
    cb_v3_scale(n, N, 1.0 / ln);
    double dist = cb_v3_dot(r, n);
    if (g) {
        double u[3]; /* d(r . N/|N|)/dN = (r - (r.n) n) / |N| */
        for (int k = 0; k < 3; k++) u[k] = side * (r[k] - dist * n[k]) / ln;
        cb_v3_scale(g[0], n, side);
        cb_v3_cross(g[2], e2, u);
        cb_v3_cross(g[3], u, e1);
        for (int k = 0; k < 3; k++) g[1][k] = -g[0][k] - g[2][k] - g[3][k];
    }
    return side * dist - h;
}

/* The correction factor dlambda of one constraint with value C, n gradients g and
 * inverse masses w: pbd when at < 0 (k the effective stiffness k'), xpbd otherwise
 * (then *lambda is updated). Returns 0 when no vertex can move. */
static inline double cb_pbd_dlambda(double C, const double (*g)[3], const double *w, int n, double k,
                                    double at, double *lambda)
{
    double S = 0.0;
    for (int i = 0; i < n; i++) S += w[i] * cb_v3_norm2(g[i]);
    if (at < 0.0) return S > 0.0 ? -k * C / S : 0.0;
    double den = S + at;
    if (!(den > 0.0)) return 0.0;
    double dl = (-C - at * *lambda) / den;
    *lambda += dl;
    return dl;
}

/* ---- fused projections: the solver's inner loops ------------------------------------
 * Each one is "evaluate C and g, cb_pbd_dlambda, p_i += dlambda w_i g_i" for one
 * constraint, with the points updated in place, and only what the correction needs:
 * no gradient array, no work for vertices with w_i = 0, nothing at all when the
 * correction is 0. tests/test_pbd.c checks each against the reference functions above.
 * w are the inverse masses of the points (gathered at create). */

/* Stretch, pbd: p_i += -k C / (w0 + w1) w_i g_i, g_0 = -g_1 = d / l (one division). */
static inline void cb_pbd_project_stretch(double *p0, double *p1, double w0, double w1, double rest, double k)
{
    double d[3];
    cb_v3_sub(d, p0, p1);
    double l = cb_v3_norm(d), W = w0 + w1;
    if (!(l > 0) || W == 0.0) return;
    double f = -k * (l - rest) / (W * l);
    if (w0 > 0) cb_v3_axpy(p0, f * w0, d);
    if (w1 > 0) cb_v3_axpy(p1, -f * w1, d);
}

/* Stretch, xpbd with at = alpha / h^2 and the multiplier *lambda. */
static inline void cb_pbd_project_stretch_x(double *p0, double *p1, double w0, double w1, double rest, double at,
                                            double *lambda)
{
    double d[3];
    cb_v3_sub(d, p0, p1);
    double l = cb_v3_norm(d), W = w0 + w1;
    if (!(l > 0) || W == 0.0) return;
    double inv = 1.0 / ((W + at) * l), num = -(l - rest) - at * *lambda;
    double f = num * inv; /* dlambda / l */
    *lambda += f * l;
    if (w0 > 0) cb_v3_axpy(p0, f * w0, d);
    if (w1 > 0) cb_v3_axpy(p1, -f * w1, d);
}

/* Hinge gradients of the form g2 = c2 n1, g3 = c3 n2, g1 = -s2 g2 - s3 g3,
 * g0 = -g1 - g2 - g3 (both bending constraints): g_j = u_j n1 + v_j n2 with
 * (u, v) = ((s2 - 1) c2, (s3 - 1) c3), (-s2 c2, -s3 c3), (c2, 0), (0, c3). Scalars only:
 * a gradient array (or struct) would be stored piecewise and reloaded as vectors. */
static inline double cb_pbd_hinge_norm2(double u, double v, const double n1[3], const double n2[3])
{
    double gx = u * n1[0] + v * n2[0], gy = u * n1[1] + v * n2[1], gz = u * n1[2] + v * n2[2];
    return gx * gx + gy * gy + gz * gz;
}

static inline void cb_pbd_hinge_add(double *p, double a, double b, const double n1[3], const double n2[3])
{
    p[0] += a * n1[0] + b * n2[0];
    p[1] += a * n1[1] + b * n2[1];
    p[2] += a * n1[2] + b * n2[2];
}

/* sum_j w_j |g_j|^2 */
static inline double cb_pbd_hinge_S(double c2, double c3, double s2, double s3, const double n1[3],
                                    const double n2[3], const double w[4])
{
    double u1 = -s2 * c2, v1 = -s3 * c3;
    return w[0] * cb_pbd_hinge_norm2(-(u1 + c2), -(v1 + c3), n1, n2) + w[1] * cb_pbd_hinge_norm2(u1, v1, n1, n2) +
           w[2] * c2 * c2 * cb_v3_norm2(n1) + w[3] * c3 * c3 * cb_v3_norm2(n2);
}

/* p_j += dl w_j g_j for w_j > 0 */
static inline void cb_pbd_hinge_move(double *p0, double *p1, double *p2, double *p3, double c2, double c3,
                                     double s2, double s3, const double n1[3], const double n2[3],
                                     const double w[4], double dl)
{
    double u1 = -s2 * c2, v1 = -s3 * c3;
    if (w[0] > 0) cb_pbd_hinge_add(p0, -dl * w[0] * (u1 + c2), -dl * w[0] * (v1 + c3), n1, n2);
    if (w[1] > 0) cb_pbd_hinge_add(p1, dl * w[1] * u1, dl * w[1] * v1, n1, n2);
    if (w[2] > 0) cb_v3_axpy(p2, dl * w[2] * c2, n1);
    if (w[3] > 0) cb_v3_axpy(p3, dl * w[3] * c3, n2);
}

/* The linearised angle change k C of one pbd bending projection, limited to +-cap
 * (radians; cap = INFINITY: the paper's full step). Far from the rest angle (a hinge
 * folded flat onto itself) the linearisation overshoots by up to the triangle size,
 * which soft stretch cannot pull back: the run diverges. Limiting the step scales the
 * whole correction, so momentum is still conserved. */
static inline double cb_pbd_clamp_step(double kc, double cap)
{
    return kc > cap ? cap : kc < -cap ? -cap : kc;
}

/* The paper's bending constraint acos(d) - phi0 projected with pbd stiffness k.
 * The correction is the one of cb_pbd_bend_paper's appendix-A gradient; that gradient
 * is evaluated here in its equal closed form (fewer operations, no 0/0 near flat): with
 * e = p1 - p0, a = p2 - p0, b = p3 - p0, n1 = e x a, n2 = e x b and
 * sigma = sign((e x a) . b) (the side the hinge is folded to),
 *   g2 = -sigma |e| n1 / |n1|^2,   g3 = sigma |e| n2 / |n2|^2,
 *   g1 = -s2 g2 - s3 g3,  g0 = -(1 - s2) g2 - (1 - s3) g3,  s2 = a.e/|e|^2, s3 = b.e/|e|^2
 * (the appendix's q_i / sqrt(1 - d^2): acos(d) = pi - |theta| with theta the signed
 * dihedral angle, whose gradient this is, see core/model.c). Same cases as the
 * reference: nothing for a degenerate triangle or 1 - d^2 <= 1e-10 (the reference's
 * gradient is set to 0 there), and acos is only evaluated past that test. */
static inline void cb_pbd_project_bend_paper(double *p0, double *p1, double *p2, double *p3, const double w[4],
                                             double phi0, double k, double cap)
{
    double e[3], a[3], b[3], n1[3], n2[3];
    cb_pbd_hinge_vectors(p0, p1, p2, p3, e, a, b, n1);
    cb_v3_cross(n2, e, b);
    double n1s = cb_v3_norm2(n1), n2s = cb_v3_norm2(n2);
    if (!(n1s > 0) || !(n2s > 0)) return;
    /* 1 - d^2 = |n1 x n2|^2 / (|n1|^2 |n2|^2) and n1 x n2 = det e, det = (e x a) . b: the
     * reference's "1 - d^2 <= 1e-10: gradient 0" without a square root or a division */
    double det = cb_v3_dot(n1, b), le2 = cb_v3_norm2(e);
    if (!(det * det * le2 > 1e-10 * n1s * n2s)) return;
    double d = cb_v3_dot(n1, n2) / sqrt(n1s * n2s);
    d = d > 1.0 ? 1.0 : d < -1.0 ? -1.0 : d;
    double C = acos(d) - phi0;
    if (C == 0.0) return;
    double le = sqrt(le2), inv = 1.0 / (n1s * n2s * le2), il2 = n1s * n2s * inv;
    double sg = (det > 0 ? le : -le) * le2 * inv;
    double c2 = -sg * n2s, c3 = sg * n1s, s2 = cb_v3_dot(a, e) * il2, s3 = cb_v3_dot(b, e) * il2;
    double S = cb_pbd_hinge_S(c2, c3, s2, s3, n1, n2, w);
    if (!(S > 0)) return;
    cb_pbd_hinge_move(p0, p1, p2, p3, c2, c3, s2, s3, n1, n2, w, -cb_pbd_clamp_step(k * C, cap) / S);
}

/* Any 4-point constraint already evaluated (C, g): the generic correction (k, at, lambda
 * as in cb_pbd_dlambda). */
static inline void cb_pbd_apply4(double *p0, double *p1, double *p2, double *p3, const double w[4], double C,
                                 const double (*g)[3], double k, double at, double *lambda)
{
    double dl = cb_pbd_dlambda(C, g, w, 4, k, at, lambda);
    if (dl == 0.0) return;
    double *p[4] = {p0, p1, p2, p3};
    for (int j = 0; j < 4; j++)
        if (w[j] > 0) cb_v3_axpy(p[j], dl * w[j], g[j]);
}

/* The shared model's signed dihedral angle theta - theta0 projected with
 * cb_pbd_dlambda's k, at, lambda (xpbd; pbd with `bending: dihedral`): cb_dihedral_angle's
 * angle and gradient (core/model.c: g2 = -|e| n1/|n1|^2, g3 = -|e| n2/|n2|^2 with
 * n2 = b x e here), with n1 x n2 = -det e (det = (e x a) . b) for its sine, one division
 * for 1/|n1|^2, 1/|n2|^2, 1/|e|^2, atan2 skipped for a flat hinge (atan2(+-0, x > 0) =
 * +-0 exactly) and the gradient only when the correction is not 0. */
static inline void cb_pbd_project_bend_dihedral(double *p0, double *p1, double *p2, double *p3, const double w[4],
                                                double theta0, double k, double at, double *lambda, double cap)
{
    double e[3], a[3], b[3], n1[3], n2[3];
    cb_pbd_hinge_vectors(p0, p1, p2, p3, e, a, b, n1);
    cb_v3_cross(n2, b, e);
    double n1s = cb_v3_norm2(n1), n2s = cb_v3_norm2(n2), le2 = cb_v3_norm2(e);
    if (!(n1s > 0) || !(n2s > 0) || !(le2 > 0)) { /* degenerate: g = 0 (xpbd still moves lambda) */
        double g0[4][3] = {{0}};
        cb_pbd_apply4(p0, p1, p2, p3, w, cb_dihedral_angle(p0, p1, p2, p3, NULL) - theta0,
                      (const double (*)[3])g0, k, at, lambda);
        return;
    }
    double le = sqrt(le2);
    double y = -cb_v3_dot(n1, b) * le, x = cb_v3_dot(n1, n2);
    double C = (y == 0.0 && x > 0.0 ? y : atan2(y, x)) - theta0;
    double num = at < 0.0 ? -C : -C - at * *lambda; /* dlambda = num / (S or S + at) */
    if (num == 0.0) return;
    double inv = 1.0 / (n1s * n2s * le2), il2 = n1s * n2s * inv, sl = -le * le2 * inv;
    double c2 = sl * n2s, c3 = sl * n1s, s2 = cb_v3_dot(a, e) * il2, s3 = cb_v3_dot(b, e) * il2;
    double S = cb_pbd_hinge_S(c2, c3, s2, s3, n1, n2, w), dl;
    if (at < 0.0) {
        if (!(S > 0.0)) return;
        dl = cb_pbd_clamp_step(k * num, cap) / S;
    } else {
        double den = S + at;
        if (!(den > 0.0)) return;
        dl = num / den;
        *lambda += dl;
    }
    cb_pbd_hinge_move(p0, p1, p2, p3, c2, c3, s2, s3, n1, n2, w, dl);
}

#endif
