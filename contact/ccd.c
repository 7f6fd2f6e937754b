/* contact/ccd.c — conservative continuous collision detection by interval bisection on
 * the distance function with cone, coplanarity-cubic and separating-axis exclusion
 * (see ccd.h for the method and its guarantees). */
#include "contact/ccd.h"

#include <float.h>
#include <math.h>
#include <stddef.h>

#include "contact/distance.h"
#include "core/error.h"
#include "core/vec3.h"

#define CB_CCD_REL_MARGIN 1e-10   /* delta = this x largest |coordinate| */
#define CB_CCD_FINE 1e-3        /* unconfirmed near contacts are refined to tol x this */
#define CB_CCD_STACK 160

typedef struct ccd_pair {
    int ee;              /* 0: vertex p vs triangle (x[1],x[2],x[3]); 1: edge (x0,x1) vs (x2,x3) */
    double x0[4][3], x1[4][3], dx[4][3];
} ccd_pair;

typedef struct ccd_ival {
    double ta, tb, da, db;
    double na[3], nb[3];  /* closest-point directions (side 2 -> side 1) at ta, tb */
    double B[4];          /* Bernstein coefficients of the coplanarity cubic on [ta,tb] */
} ccd_ival;

cb_ccd_opts cb_default_ccd_opts(void)
{
    cb_ccd_opts o = {0.0, 1e-6, 4096};
    return o;
}

/* Inputs are checked finite, so plain comparisons suffice (fmin/fmax are library calls). */
static inline double dmin(double a, double b) { return a < b ? a : b; }
static inline double dmax(double a, double b) { return a > b ? a : b; }

static void position(const ccd_pair *P, int i, double t, double out[3])
{
    if (t == 1.0) { cb_v3_copy(out, P->x1[i]); return; }
    for (int k = 0; k < 3; k++) out[k] = P->x0[i][k] + t * P->dx[i][k];
}

/* Distance at time t and the unit direction from side 2 (triangle / edge rs) to side 1. */
static double distance_at(const ccd_pair *P, double t, double n[3])
{
    double x[4][3], d2, c1[3], c2[3];
    for (int i = 0; i < 4; i++) position(P, i, t, x[i]);
    if (P->ee) {
        d2 = cb_edge_edge_distance2(x[0], x[1], x[2], x[3], NULL, NULL, c1, c2);
    } else {
        d2 = cb_point_triangle_distance2(x[0], x[1], x[2], x[3], NULL, c2);
        cb_v3_copy(c1, x[0]);
    }
    double d = sqrt(d2);
    cb_v3_sub(n, c1, c2);
    if (d > 0.0) cb_v3_scale(n, n, 1.0 / cb_v3_norm(n));
    else cb_v3_zero(n);
    return d;
}

/* Separation along unit axis n of the swept primitives over [ta,tb], given the vertex
 * positions at ta (xa) and tb (xb): side 1 is vertex 0 (vertex-triangle) or vertices 0,1
 * (edge-edge); each side's sweep lies in the convex hull of its positions at ta and tb. */
static int axis_separates(int ee, const double xa[4][3], const double xb[4][3], const double n[3],
                          double gap)
{
    if (n[0] == 0.0 && n[1] == 0.0 && n[2] == 0.0) return 0;
    int n1 = ee ? 2 : 1;
    double lo1 = INFINITY, hi2 = -INFINITY;
    for (int i = 0; i < 4; i++) {
        double pa = cb_v3_dot(xa[i], n), pb = cb_v3_dot(xb[i], n);
        if (i < n1) lo1 = dmin(lo1, dmin(pa, pb));
        else hi2 = dmax(hi2, dmax(pa, pb));
    }
    return lo1 - hi2 > gap;
}

static double triple(const double x[3], const double y[3], const double z[3])
{
    double c[3];
    cb_v3_cross(c, x, y);
    return cb_v3_dot(c, z);
}

/* Bernstein coefficients on [0,1] of V(t) = (u x v) . w with u, v, w linear in t, the
 * bound Nmax >= |u(t) x v(t)| and the rounding bound on the coefficients. */
static void coplanarity_cubic(const double u0[3], const double u1[3], const double v0[3],
                              const double v1[3], const double w0[3], const double w1[3],
                              double B[4], double *nmax, double *err)
{
    B[0] = triple(u0, v0, w0);
    B[1] = (triple(u1, v0, w0) + triple(u0, v1, w0) + triple(u0, v0, w1)) / 3.0;
    B[2] = (triple(u1, v1, w0) + triple(u1, v0, w1) + triple(u0, v1, w1)) / 3.0;
    B[3] = triple(u1, v1, w1);
    double n0[3], n1[3], na[3], nb[3], n2[3];
    cb_v3_cross(n0, u0, v0);
    cb_v3_cross(na, u0, v1);
    cb_v3_cross(nb, u1, v0);
    cb_v3_add(n1, na, nb);
    cb_v3_scale(n1, n1, 0.5);
    cb_v3_cross(n2, u1, v1);
    *nmax = dmax(cb_v3_norm(n0), dmax(cb_v3_norm(n1), cb_v3_norm(n2))) * (1.0 + 1e-9);
    double mu = dmax(cb_v3_norm(u0), cb_v3_norm(u1)), mv = dmax(cb_v3_norm(v0), cb_v3_norm(v1));
    double mw = dmax(cb_v3_norm(w0), cb_v3_norm(w1));
    *err = 1e-12 * mu * mv * mw;
}

static int bernstein_signed(const double B[4], double thr)
{
    return (B[0] > thr && B[1] > thr && B[2] > thr && B[3] > thr) ||
           (B[0] < -thr && B[1] < -thr && B[2] < -thr && B[3] < -thr);
}

/* de Casteljau subdivision at local parameter s: L on [0,s], R on [s,1]. L may alias B. */
static void bernstein_split_at(const double B[4], double s, double L[4], double R[4])
{
    double r = 1.0 - s;
    double b01 = r * B[0] + s * B[1], b12 = r * B[1] + s * B[2], b23 = r * B[2] + s * B[3];
    double b012 = r * b01 + s * b12, b123 = r * b12 + s * b23;
    double m = r * b012 + s * b123, b0 = B[0], b3 = B[3];
    L[0] = b0; L[1] = b01; L[2] = b012; L[3] = m;
    R[0] = m; R[1] = b123; R[2] = b23; R[3] = b3;
}


/* Value at local parameter s in [0,1] of a cubic in Bernstein form. */
static double bernstein_eval(const double B[4], double s)
{
    double r = 1.0 - s;
    double b01 = r * B[0] + s * B[1], b12 = r * B[1] + s * B[2], b23 = r * B[2] + s * B[3];
    double b012 = r * b01 + s * b12, b123 = r * b12 + s * b23;
    return r * b012 + s * b123;
}

/* A root in (0,1) of a cubic whose end values have strictly opposite signs: regula falsi
 * with the Illinois modification (keeps a bracket, converges superlinearly). */
static double bernstein_root(const double B[4])
{
    double lo = 0.0, hi = 1.0, flo = B[0], fhi = B[3];
    int side = 0;
    for (int i = 0; i < 60 && hi - lo > 1e-13; i++) {
        double m = (lo * fhi - hi * flo) / (fhi - flo);
        if (!(m > lo && m < hi)) m = 0.5 * (lo + hi);
        double fm = bernstein_eval(B, m);
        if (fm == 0.0) return m;
        if ((fm < 0.0) == (flo < 0.0)) {
            lo = m; flo = fm;
            if (side == -1) fhi *= 0.5;
            side = -1;
        } else {
            hi = m; fhi = fm;
            if (side == 1) flo *= 0.5;
            side = 1;
        }
    }
    return 0.5 * (lo + hi);
}

/* J ends at a confirmed contact (J.tb == *found); nothing later matters. Replaces the
 * stack with [tc, J.tb], tc = J.tb - tol/2 (it yields toi = tc), under [J.ta, tc], which
 * is searched first. Returns the new stack size. */
static int push_before_contact(const ccd_pair *P, ccd_ival J, double tol, double reach,
                               double *found, ccd_ival *stack)
{
    double w = J.tb - J.ta, tc = J.tb - 0.5 * tol;
    if (w <= tol || !(tc > J.ta)) { stack[0] = J; return 1; }
    ccd_ival A = J, C = J;
    double nc[3], dc = distance_at(P, tc, nc);
    bernstein_split_at(J.B, (tc - J.ta) / w, A.B, C.B);
    A.tb = tc; A.db = dc; cb_v3_copy(A.nb, nc);
    C.ta = tc; C.da = dc; cb_v3_copy(C.na, nc);
    if (!(dc > reach)) { /* in contact at tc too: plain bisection of [J.ta, tc] */
        *found = tc;
        stack[0] = A;
        return 1;
    }
    stack[0] = C;
    stack[1] = A;
    return 2;
}

static int ccd_run(ccd_pair *P, const cb_ccd_opts *opts, double *toi)
{
    cb_ccd_opts o = opts ? *opts : cb_default_ccd_opts();
    *toi = 0.0;
    double S = 0.0;
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 3; k++) {
            if (!isfinite(P->x0[i][k]) || !isfinite(P->x1[i][k])) return 1;
            S = dmax(S, dmax(fabs(P->x0[i][k]), fabs(P->x1[i][k])));
            P->dx[i][k] = P->x1[i][k] - P->x0[i][k];
        }
    if (isnan(o.eta)) return 1;
    double eta = o.eta > 0.0 ? o.eta : 0.0;
    double tol = o.tol > 4.0 * DBL_EPSILON ? o.tol : 4.0 * DBL_EPSILON; /* also catches NaN */
    double tol_fine = fmax(tol * CB_CCD_FINE, 4.0 * DBL_EPSILON);
    int max_iter = o.max_iter > 0 ? o.max_iter : cb_default_ccd_opts().max_iter;
    double reach = eta + CB_CCD_REL_MARGIN * S; /* "in contact" threshold */
    if (!isfinite(reach)) return 1;

    /* Lipschitz constant of d(t): the largest relative speed of a side-1 and a side-2 vertex. */
    int n1 = P->ee ? 2 : 1;
    double L = 0.0;
    for (int i = 0; i < n1; i++)
        for (int j = n1; j < 4; j++) {
            double r[3];
            cb_v3_sub(r, P->dx[i], P->dx[j]);
            L = dmax(L, cb_v3_norm(r));
        }
    L *= 1.0 + 1e-9;

    /* Coplanarity cubic. */
    double u0[3], u1[3], v0[3], v1[3], w0[3], w1[3], nmax, errv;
    ccd_ival I;
    if (P->ee) {
        cb_v3_sub(u0, P->x0[1], P->x0[0]); cb_v3_sub(u1, P->x1[1], P->x1[0]);
        cb_v3_sub(v0, P->x0[3], P->x0[2]); cb_v3_sub(v1, P->x1[3], P->x1[2]);
        cb_v3_sub(w0, P->x0[2], P->x0[0]); cb_v3_sub(w1, P->x1[2], P->x1[0]);
    } else {
        cb_v3_sub(u0, P->x0[2], P->x0[1]); cb_v3_sub(u1, P->x1[2], P->x1[1]);
        cb_v3_sub(v0, P->x0[3], P->x0[1]); cb_v3_sub(v1, P->x1[3], P->x1[1]);
        cb_v3_sub(w0, P->x0[0], P->x0[1]); cb_v3_sub(w1, P->x1[0], P->x1[1]);
    }
    coplanarity_cubic(u0, u1, v0, v1, w0, w1, I.B, &nmax, &errv);
    double thr = reach * nmax * (1.0 + 1e-9) + errv;
    if (!isfinite(thr)) thr = INFINITY; /* overflow: never exclude by the cubic */

    /* The cubic alone often proves the whole step free (no distance evaluation needed). */
    if (bernstein_signed(I.B, thr)) { *toi = 1.0; return 0; }
    I.ta = 0.0;
    I.tb = 1.0;
    I.da = distance_at(P, 0.0, I.na);
    if (!(I.da > reach)) return 1; /* in contact at the start (or NaN) */
    /* d(t) >= d(0) - L t: a pair farther apart than its relative motion is free, the
     * answer the first interval's Lipschitz test below would give after a second
     * distance evaluation (most of the candidates of a swept BVH over a slowly moving,
     * nearly flat cloth, whose coplanarity cubic cannot exclude them) */
    if (I.da - L > reach) { *toi = 1.0; return 0; }
    I.db = distance_at(P, 1.0, I.nb);
    double found = I.db <= reach ? 1.0 : -1.0;

    ccd_ival stack[CB_CCD_STACK];
    int sp = 0, iter = 0, root_tries = 1; /* a failed try means a near miss or a graze */
    stack[sp++] = I;
    while (sp > 0) {
        ccd_ival J = stack[--sp];
        if (++iter > max_iter) { *toi = J.ta; return 1; }
        double w = J.tb - J.ta;
        if (0.5 * (J.da + J.db - L * w) > reach) continue;
        if (bernstein_signed(J.B, thr)) continue;
        {   /* separating axes: the closest-point directions at both ends and their
             * bisector (a point passing beside an edge while crossing the plane is often
             * separated along it) */
            double xa[4][3], xb[4][3], nab[3];
            for (int i = 0; i < 4; i++) {
                position(P, i, J.ta, xa[i]);
                position(P, i, J.tb, xb[i]);
            }
            if (axis_separates(P->ee, xa, xb, J.na, reach) || axis_separates(P->ee, xa, xb, J.nb, reach))
                continue;
            cb_v3_add(nab, J.na, J.nb);
            double l = cb_v3_norm(nab);
            if (l > 1e-3) {
                cb_v3_scale(nab, nab, 1.0 / l);
                if (axis_separates(P->ee, xa, xb, nab, reach)) continue;
            }
        }
        /* Narrower than tol and ending at a found contact: within tol of it. Otherwise
         * (a near contact that has not been confirmed) refine to tol_fine first. */
        double tm = 0.5 * (J.ta + J.tb);
        if ((w <= tol && J.tb == found) || w <= tol_fine || !(tm > J.ta && tm < J.tb) ||
            sp + 2 > CB_CCD_STACK) {
            *toi = J.ta;
            return 1;
        }
        /* Split point: where the coplanarity cubic changes sign, once per query, try its
         * root (a crossing through the primitive is then confirmed in one distance
         * evaluation, and a near miss is closest there); else the midpoint. */
        if (root_tries > 0 && J.tb != found &&
            ((J.B[0] < 0.0 && J.B[3] > 0.0) || (J.B[0] > 0.0 && J.B[3] < 0.0))) {
            root_tries--;
            double s = bernstein_root(J.B);
            if (s > 0.01 && s < 0.99) tm = J.ta + w * s;
        }
        ccd_ival A = J, C = J;
        double nm[3];
        double dm = distance_at(P, tm, nm);
        bernstein_split_at(J.B, (tm - J.ta) / w, A.B, C.B);
        A.tb = tm; A.db = dm; cb_v3_copy(A.nb, nm);
        C.ta = tm; C.da = dm; cb_v3_copy(C.na, nm);
        if (!(dm > reach)) { /* contact at tm: only earlier times matter now */
            found = tm;
            sp = push_before_contact(P, A, tol, reach, &found, stack);
            continue;
        }
        stack[sp++] = C;
        stack[sp++] = A;
    }
    if (found >= 0.0) { *toi = found; return 1; }
    *toi = 1.0;
    return 0;
}

static void load(ccd_pair *P, int i, const double x0[3], const double x1[3])
{
    CB_ASSERT(x0 && x1);
    cb_v3_copy(P->x0[i], x0);
    cb_v3_copy(P->x1[i], x1);
}

int cb_ccd_vertex_triangle(const double p0[3], const double p1[3],
                           const double a0[3], const double a1[3], const double b0[3],
                           const double b1[3], const double c0[3], const double c1[3],
                           const cb_ccd_opts *o, double *toi)
{
    CB_ASSERT(toi);
    ccd_pair P;
    P.ee = 0;
    load(&P, 0, p0, p1);
    load(&P, 1, a0, a1);
    load(&P, 2, b0, b1);
    load(&P, 3, c0, c1);
    return ccd_run(&P, o, toi);
}

int cb_ccd_edge_edge(const double p0[3], const double p1[3], const double q0[3], const double q1[3],
                     const double r0[3], const double r1[3], const double s0[3], const double s1[3],
                     const cb_ccd_opts *o, double *toi)
{
    CB_ASSERT(toi);
    ccd_pair P;
    P.ee = 1;
    load(&P, 0, p0, p1);
    load(&P, 1, q0, q1);
    load(&P, 2, r0, r1);
    load(&P, 3, s0, s1);
    return ccd_run(&P, o, toi);
}
