/* contact/predicates.c — exact orientation predicates (filtered double evaluation with an
 * exact floating-point-expansion fallback) and the exact segment-triangle and
 * segment-segment tests built on them. See predicates.h. */
#include "contact/predicates.h"

#include <float.h>
#include <math.h>

/* ---- error-free transformations -------------------------------------------------- */

#define CB_EPS (DBL_EPSILON * 0.5)        /* unit roundoff 2^-53 */
#define CB_SPLITTER 134217729.0           /* 2^27 + 1, Dekker's splitting constant */

/* Static filter bounds: |computed - exact| <= bound * permanent. */
#define CB_O2D_BOUND ((3.0 + 16.0 * CB_EPS) * CB_EPS)
#define CB_O3D_BOUND CB_ORIENT3D_FILTER

/* x + y == a + b exactly, x = fl(a + b). */
static inline void two_sum(double a, double b, double *x, double *y)
{
    double s = a + b;
    double bb = s - a;
    double aa = s - bb;
    *x = s;
    *y = (a - aa) + (b - bb);
}

/* x + y == a - b exactly, x = fl(a - b). */
static inline void two_diff(double a, double b, double *x, double *y)
{
    double s = a - b;
    double bb = a - s;
    double aa = s + bb;
    *x = s;
    *y = (a - aa) + (bb - b);
}

/* Same as two_sum, valid when |a| >= |b| (or a == 0). */
static inline void fast_two_sum(double a, double b, double *x, double *y)
{
    double s = a + b;
    *x = s;
    *y = b - (s - a);
}

/* a == hi + lo with hi, lo holding at most 26 significant bits each. */
static inline void split(double a, double *hi, double *lo)
{
    double c = CB_SPLITTER * a;
    double big = c - a;
    *hi = c - big;
    *lo = a - *hi;
}

/* x + y == a * b exactly, x = fl(a * b) (Dekker). */
static inline void two_product(double a, double b, double *x, double *y)
{
    double p = a * b;
    double ah, al, bh, bl;
    split(a, &ah, &al);
    split(b, &bh, &bl);
    double r = p - ah * bh;
    r -= al * bh;
    r -= ah * bl;
    *x = p;
    *y = al * bl - r;
}

/* ---- expansions: arrays of non-overlapping doubles in increasing magnitude --------- */
/* Every expansion has at least one component (possibly 0.0). */

/* h = e + b. h may alias e. Returns the length of h. */
static int grow_expansion(int elen, const double *e, double b, double *h)
{
    double q = b;
    int hn = 0;
    for (int i = 0; i < elen; i++) {
        double s, err;
        two_sum(q, e[i], &s, &err);
        q = s;
        if (err != 0.0) h[hn++] = err;
    }
    if (q != 0.0 || hn == 0) h[hn++] = q;
    return hn;
}

/* h = e + f; h must not alias f and has room for elen + flen. */
static int expansion_sum(int elen, const double *e, int flen, const double *f, double *h)
{
    int hn = elen;
    if (h != e)
        for (int i = 0; i < elen; i++) h[i] = e[i];
    for (int j = 0; j < flen; j++)
        if (f[j] != 0.0) hn = grow_expansion(hn, h, f[j], h);
    return hn;
}

/* h = b * e; h (room 2 elen) must not alias e. */
static int scale_expansion(int elen, const double *e, double b, double *h)
{
    int hn = 0;
    double q, hh;
    two_product(e[0], b, &q, &hh);
    if (hh != 0.0) h[hn++] = hh;
    for (int i = 1; i < elen; i++) {
        double p1, p0, sum;
        two_product(e[i], b, &p1, &p0);
        two_sum(q, p0, &sum, &hh);
        if (hh != 0.0) h[hn++] = hh;
        fast_two_sum(p1, sum, &q, &hh);
        if (hh != 0.0) h[hn++] = hh;
    }
    if (q != 0.0 || hn == 0) h[hn++] = q;
    return hn;
}

/* h = e * f; h has room for 2 elen flen; tmp for 2 elen + 2 elen flen. */
static int expansion_mul(int elen, const double *e, int flen, const double *f, double *h,
                         double *tmp)
{
    double *part = tmp, *acc = tmp + 2 * elen;
    int hn = 1;
    h[0] = 0.0;
    for (int j = 0; j < flen; j++) {
        if (f[j] == 0.0) continue;
        int pn = scale_expansion(elen, e, f[j], part);
        int an = expansion_sum(hn, h, pn, part, acc);
        for (int i = 0; i < an; i++) h[i] = acc[i];
        hn = an;
    }
    return hn;
}

static void negate(int n, double *e)
{
    for (int i = 0; i < n; i++) e[i] = -e[i];
}

/* An approximation of the expansion's value with the exact sign. */
static double estimate(int n, const double *e)
{
    double s = 0.0;
    for (int i = 0; i < n; i++) s += e[i];
    double top = e[n - 1];
    if ((s > 0.0) != (top > 0.0) || (s < 0.0) != (top < 0.0)) return top;
    return s;
}

/* The difference a - b as an exact expansion of one or two components. */
static int diff_expansion(double a, double b, double e[2])
{
    double x, y;
    two_diff(a, b, &x, &y);
    if (y == 0.0) { e[0] = x; return 1; }
    e[0] = y;
    e[1] = x;
    return 2;
}

/* ---- orient2d -------------------------------------------------------------------- */

static double orient2d_exact(const double a[2], const double b[2], const double c[2])
{
    double acx[2], acy[2], bcx[2], bcy[2];
    int nacx = diff_expansion(a[0], c[0], acx), nacy = diff_expansion(a[1], c[1], acy);
    int nbcx = diff_expansion(b[0], c[0], bcx), nbcy = diff_expansion(b[1], c[1], bcy);
    double l[8], r[8], tmp[16], det[16];
    int nl = expansion_mul(nacx, acx, nbcy, bcy, l, tmp);
    int nr = expansion_mul(nacy, acy, nbcx, bcx, r, tmp);
    negate(nr, r);
    int nd = expansion_sum(nl, l, nr, r, det);
    return estimate(nd, det);
}

double cb_orient2d(const double a[2], const double b[2], const double c[2])
{
    double detl = (a[0] - c[0]) * (b[1] - c[1]);
    double detr = (a[1] - c[1]) * (b[0] - c[0]);
    double det = detl - detr;
    double bound = CB_O2D_BOUND * (fabs(detl) + fabs(detr));
    if (det > bound || -det > bound) return det;
    if (!isfinite(det) || !isfinite(bound)) return (double)NAN;
    return orient2d_exact(a, b, c);
}

/* ---- orient3d -------------------------------------------------------------------- */

/* (x1 y2 - y1 x2) * z as an expansion; out has room for 64. */
static int cross_term(int n1, const double *x1, int n2, const double *y2, int n3,
                      const double *y1, int n4, const double *x2, int nz, const double *z,
                      double *out)
{
    double m1[8], m2[8], c[16], tmp[96]; /* tmp: 2n + 2nm for n = 16, m = 2 */
    int k1 = expansion_mul(n1, x1, n2, y2, m1, tmp);
    int k2 = expansion_mul(n3, y1, n4, x2, m2, tmp);
    negate(k2, m2);
    int kc = expansion_sum(k1, m1, k2, m2, c);
    return expansion_mul(kc, c, nz, z, out, tmp);
}

static double orient3d_exact(const double a[3], const double b[3], const double c[3],
                             const double d[3])
{
    double ad[3][2], bd[3][2], cd[3][2];
    int na[3], nb[3], nc[3];
    for (int k = 0; k < 3; k++) {
        na[k] = diff_expansion(a[k], d[k], ad[k]);
        nb[k] = diff_expansion(b[k], d[k], bd[k]);
        nc[k] = diff_expansion(c[k], d[k], cd[k]);
    }
    double t1[64], t2[64], t3[64], s12[128], det[192];
    /* adz (bdx cdy - bdy cdx) + bdz (cdx ady - cdy adx) + cdz (adx bdy - ady bdx) */
    int n1 = cross_term(nb[0], bd[0], nc[1], cd[1], nb[1], bd[1], nc[0], cd[0], na[2], ad[2], t1);
    int n2 = cross_term(nc[0], cd[0], na[1], ad[1], nc[1], cd[1], na[0], ad[0], nb[2], bd[2], t2);
    int n3 = cross_term(na[0], ad[0], nb[1], bd[1], na[1], ad[1], nb[0], bd[0], nc[2], cd[2], t3);
    int n12 = expansion_sum(n1, t1, n2, t2, s12);
    int nd = expansion_sum(n12, s12, n3, t3, det);
    return estimate(nd, det);
}

double cb_orient3d(const double a[3], const double b[3], const double c[3], const double d[3])
{
    double adx = a[0] - d[0], ady = a[1] - d[1], adz = a[2] - d[2];
    double bdx = b[0] - d[0], bdy = b[1] - d[1], bdz = b[2] - d[2];
    double cdx = c[0] - d[0], cdy = c[1] - d[1], cdz = c[2] - d[2];
    double bc1 = bdx * cdy, bc2 = bdy * cdx;
    double ca1 = cdx * ady, ca2 = cdy * adx;
    double ab1 = adx * bdy, ab2 = ady * bdx;
    double det = adz * (bc1 - bc2) + bdz * (ca1 - ca2) + cdz * (ab1 - ab2);
    double perm = (fabs(bc1) + fabs(bc2)) * fabs(adz) + (fabs(ca1) + fabs(ca2)) * fabs(bdz)
                + (fabs(ab1) + fabs(ab2)) * fabs(cdz);
    double bound = CB_O3D_BOUND * perm;
    if (det > bound || -det > bound) return det;
    if (!isfinite(det) || !isfinite(bound)) return (double)NAN;
    return orient3d_exact(a, b, c, d);
}

/* ---- segment tests ----------------------------------------------------------------- */

static int sgn(double x) { return (x > 0.0) - (x < 0.0); }

/* r inside the axis-aligned box of p, q (exact; used for collinear points). */
static int in_box2(const double p[2], const double q[2], const double r[2])
{
    return fmin(p[0], q[0]) <= r[0] && r[0] <= fmax(p[0], q[0]) &&
           fmin(p[1], q[1]) <= r[1] && r[1] <= fmax(p[1], q[1]);
}

static int seg_seg_2d(const double p[2], const double q[2], const double r[2], const double s[2])
{
    int o1 = sgn(cb_orient2d(p, q, r)), o2 = sgn(cb_orient2d(p, q, s));
    int o3 = sgn(cb_orient2d(r, s, p)), o4 = sgn(cb_orient2d(r, s, q));
    if (o1 * o2 < 0 && o3 * o4 < 0) return 1;
    if (o1 == 0 && in_box2(p, q, r)) return 1;
    if (o2 == 0 && in_box2(p, q, s)) return 1;
    if (o3 == 0 && in_box2(r, s, p)) return 1;
    if (o4 == 0 && in_box2(r, s, q)) return 1;
    return 0;
}

/* x in the closed 2D triangle abc (abc not degenerate). */
static int point_in_tri_2d(const double x[2], const double a[2], const double b[2], const double c[2])
{
    int s1 = sgn(cb_orient2d(a, b, x)), s2 = sgn(cb_orient2d(b, c, x)), s3 = sgn(cb_orient2d(c, a, x));
    int pos = s1 > 0 || s2 > 0 || s3 > 0, neg = s1 < 0 || s2 < 0 || s3 < 0;
    return !(pos && neg);
}

/* Drop coordinate `drop` (0, 1, 2). */
static void project(const double x[3], int drop, double o[2])
{
    int i = drop == 0 ? 1 : 0, j = drop == 2 ? 1 : 2;
    o[0] = x[i];
    o[1] = x[j];
}

static int all_finite(const double *const *pts, int n)
{
    for (int i = 0; i < n; i++)
        if (!isfinite(pts[i][0]) || !isfinite(pts[i][1]) || !isfinite(pts[i][2])) return 0;
    return 1;
}

int cb_segment_segment_intersect(const double p[3], const double q[3],
                                 const double r[3], const double s[3])
{
    const double *pts[4] = {p, q, r, s};
    if (!all_finite(pts, 4)) return 1;
    if (cb_orient3d(p, q, r, s) != 0.0) return 0;
    /* Coplanar: find a projection that is one-to-one on the common plane. */
    for (int drop = 0; drop < 3; drop++) {
        double P[4][2];
        for (int i = 0; i < 4; i++) project(pts[i], drop, P[i]);
        if (cb_orient2d(P[0], P[1], P[2]) != 0.0 || cb_orient2d(P[0], P[1], P[3]) != 0.0 ||
            cb_orient2d(P[0], P[2], P[3]) != 0.0 || cb_orient2d(P[1], P[2], P[3]) != 0.0)
            return seg_seg_2d(P[0], P[1], P[2], P[3]);
    }
    /* All four points collinear: compare intervals along an axis the line is not
     * perpendicular to (one where the points differ). */
    for (int k = 0; k < 3; k++) {
        if (p[k] == q[k] && q[k] == r[k] && r[k] == s[k]) continue;
        double lo1 = fmin(p[k], q[k]), hi1 = fmax(p[k], q[k]);
        double lo2 = fmin(r[k], s[k]), hi2 = fmax(r[k], s[k]);
        return lo1 <= hi2 && lo2 <= hi1;
    }
    return 1; /* all four points coincide */
}

int cb_segment_triangle_intersect(const double p[3], const double q[3],
                                  const double a[3], const double b[3], const double c[3])
{
    const double *pts[5] = {p, q, a, b, c};
    if (!all_finite(pts, 5)) return 1;
    /* The plane test first (most calls end here): when p and q are strictly on one side
     * of abc's plane, abc is not degenerate (for collinear a, b, c every orient3d(a, b,
     * c, .) is exactly 0), so the answer is 0 whichever branch below would be taken. */
    int sp = cb_orient3d_sign(a, b, c, p), sq = cb_orient3d_sign(a, b, c, q);
    if (sp * sq > 0) return 0;
    double A[3][2], B[3][2], C[3][2];
    int drop = -1;
    for (int k = 0; k < 3; k++) {
        project(a, k, A[k]);
        project(b, k, B[k]);
        project(c, k, C[k]);
        if (drop < 0 && cb_orient2d(A[k], B[k], C[k]) != 0.0) drop = k;
    }
    if (drop < 0) /* degenerate triangle: the union of its edges */
        return cb_segment_segment_intersect(p, q, a, b) || cb_segment_segment_intersect(p, q, b, c) ||
               cb_segment_segment_intersect(p, q, c, a);
    if (sp == 0 && sq == 0) { /* coplanar: 2D test in a projection where abc is not flat */
        double P[2], Q[2];
        project(p, drop, P);
        project(q, drop, Q);
        const double *a2 = A[drop], *b2 = B[drop], *c2 = C[drop];
        return point_in_tri_2d(P, a2, b2, c2) || point_in_tri_2d(Q, a2, b2, c2) ||
               seg_seg_2d(P, Q, a2, b2) || seg_seg_2d(P, Q, b2, c2) || seg_seg_2d(P, Q, c2, a2);
    }
    /* The segment meets the plane in exactly one point: is it inside the triangle? */
    int s1 = sgn(cb_orient3d(p, q, a, b)), s2 = sgn(cb_orient3d(p, q, b, c));
    int s3 = sgn(cb_orient3d(p, q, c, a));
    int pos = s1 > 0 || s2 > 0 || s3 > 0, neg = s1 < 0 || s2 < 0 || s3 < 0;
    return !(pos && neg);
}
