/* contact/predicates.h — exact geometric predicates: orientation tests with an exact
 * sign (adaptive floating-point expansions) and the exact segment-triangle test.
 *
 * Method: each predicate first evaluates the determinant in plain double arithmetic and
 * compares it with a forward error bound (the classic static filter); only when the
 * result is too close to zero to trust its sign is it recomputed exactly with
 * floating-point expansions (two-sum, Dekker two-product, expansion sum and scale).
 * The sign is then exact for every finite input whose products neither overflow nor
 * underflow (|coordinate| within about 1e-90 .. 1e90). The code assumes IEEE double
 * arithmetic with round-to-nearest and no fused contraction (C11 mode, SSE2), which is
 * what the build uses.
 *
 * Non-finite input: orient2d/orient3d return NaN; cb_segment_triangle_intersect
 * returns 1 (it cannot prove the primitives disjoint, and 1 is the conservative
 * answer for collision detection).
 */
#ifndef CB_PREDICATES_H
#define CB_PREDICATES_H

#include <float.h>
#include <math.h>

/* Sign of det[a-d; b-d; c-d]: positive when d lies below the plane of a, b, c, where
 * "below" is the side from which a, b, c do NOT appear counter-clockwise (seen from
 * above they are counter-clockwise). The sign is exact; the magnitude approximates
 * 6 x the signed volume of the tetrahedron. */
double cb_orient3d(const double a[3], const double b[3], const double c[3], const double d[3]);

/* The static filter of cb_orient3d: |computed det - exact det| <= this * permanent
 * (Shewchuk's bound (7 + 56 u) u for the a-d, b-d, c-d evaluation, u = 2^-53). */
#define CB_ORIENT3D_FILTER ((7.0 + 56.0 * (DBL_EPSILON * 0.5)) * (DBL_EPSILON * 0.5))

/* The sign (-1, 0, +1) of cb_orient3d(a, b, c, d), always the exact one: the same double
 * evaluation and error bound as cb_orient3d's filter, inlined into hot loops; when the
 * bound cannot decide (or the input is not finite) it calls cb_orient3d, so the answer
 * is cb_orient3d's in every case. */
static inline int cb_orient3d_sign(const double a[3], const double b[3], const double c[3], const double d[3])
{
    const double adx = a[0] - d[0], ady = a[1] - d[1], adz = a[2] - d[2];
    const double bdx = b[0] - d[0], bdy = b[1] - d[1], bdz = b[2] - d[2];
    const double cdx = c[0] - d[0], cdy = c[1] - d[1], cdz = c[2] - d[2];
    const double bc1 = bdx * cdy, bc2 = bdy * cdx;
    const double ca1 = cdx * ady, ca2 = cdy * adx;
    const double ab1 = adx * bdy, ab2 = ady * bdx;
    const double det = adz * (bc1 - bc2) + bdz * (ca1 - ca2) + cdz * (ab1 - ab2);
    const double perm = (fabs(bc1) + fabs(bc2)) * fabs(adz) + (fabs(ca1) + fabs(ca2)) * fabs(bdz) +
                        (fabs(ab1) + fabs(ab2)) * fabs(cdz);
    int s = (det > 0.0) - (det < 0.0);
    if (__builtin_expect(!(fabs(det) > CB_ORIENT3D_FILTER * perm), 0)) {   /* undecided, or NaN */
        const double e = cb_orient3d(a, b, c, d);
        s = (e > 0.0) - (e < 0.0);
    }
    return s;
}

/* Sign of det[a-c; b-c]: positive when a, b, c are counter-clockwise. Exact sign;
 * magnitude approximates twice the signed area. */
double cb_orient2d(const double a[2], const double b[2], const double c[2]);

/* 1 if the closed segment pq and the closed triangle abc share a point (including
 * coplanar overlaps and touching), else 0. Exact. A degenerate (zero-area) triangle is
 * treated as the union of its three edges; a zero-length segment as a point. */
int cb_segment_triangle_intersect(const double p[3], const double q[3],
                                  const double a[3], const double b[3], const double c[3]);

/* 1 if the closed segments pq and rs (in 3D) share a point, else 0. Exact. */
int cb_segment_segment_intersect(const double p[3], const double q[3],
                                 const double r[3], const double s[3]);

#endif
