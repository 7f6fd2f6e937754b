/* contact/ccd.h — continuous collision detection for linear trajectories over a
 * normalized step [0,1]: x(t) = x0 + t (x1 - x0). Vertex-triangle and edge-edge.
 *
 * Method (one path for every eta >= 0): conservative interval bisection on the
 * distance function d(t) between the two primitives. An interval [ta,tb] is discarded
 * only when one of three sufficient conditions proves d(t) > eta on all of it:
 *   1. Lipschitz cone: |d'(t)| <= L, the largest relative speed of the primitives'
 *      vertices (the relative velocity of any two points is a convex combination of
 *      vertex relative velocities), so d(t) >= (d(ta) + d(tb) - L (tb - ta)) / 2.
 *   2. Coplanarity cubic: V(t) = det[b-a, c-a, p-a] (edge-edge: det[q-p, s-r, r-p]) is
 *      a cubic whose Bernstein coefficients on [ta,tb] (de Casteljau subdivision) bound
 *      it; distance >= |V(t)| / |n(t)| with n the triangle (edge-pair) normal, whose
 *      norm is bounded by its degree-2 Bernstein coefficients. For eta = 0 this is the
 *      classic root isolation of the coplanarity cubic: intervals where the point cannot
 *      reach the triangle's plane (the edges cannot become coplanar) are discarded.
 *   3. Separating axis: the closest-point directions at ta and at tb, and their
 *      bisector, are used as axes; the swept primitives lie in the convex hull of their
 *      vertex positions at ta and tb, so a projected gap > eta along one proves
 *      separation.
 * An interval that survives is split at its midpoint, except that the first interval
 * over which the cubic changes sign is split at the cubic's root (regula falsi): a
 * crossing through the primitive is then confirmed by one distance evaluation, after
 * which only [ta, root - tol/2] remains to be cleared, and a near miss is closest there.
 * For eta = 0 this is the classic coplanarity-cubic method, with the distance test at
 * the root, wrapped in a search that stays provably conservative.
 * Intervals are processed in time order. A sample time with d(t) <= eta ends the search
 * at or before it: the earliest surviving interval that ends at such a time and is
 * narrower than tol gives toi = its start. A surviving interval that touches no
 * confirmed contact is refined further, down to tol_fine = 1e-3 tol, and then gives
 * toi = its start. Guarantees: no contact is ever missed (the three tests are bounds,
 * and every comparison carries a margin delta = 1e-10 x the largest coordinate
 * magnitude, which dominates the rounding error of positions, distances and
 * determinants); toi is never later than the true first time; toi is either within tol
 * of a time where d <= eta + delta, or within tol_fine of a time where
 * d <= eta + delta + L tol_fine / 2 (a near contact within ~1e-9 relative). The cubic
 * filter makes the common near miss cost a few hundred flops; a pair it cannot exclude
 * (nearly coplanar, as the neighbours of a flat cloth) whose distance at t = 0 exceeds
 * eta + L is free by test 1 after that one distance evaluation; true contacts take about
 * log2(1/tol) bisections.
 *
 * Bad input: any non-finite coordinate (or NaN eta) reports contact at toi = 0 (return
 * 1), the conservative answer; a negative eta is treated as 0. If o->max_iter intervals
 * are processed without a decision, contact is reported at the start of the earliest
 * undecided interval (conservative). `o` may be NULL (defaults).
 */
#ifndef CB_CCD_H
#define CB_CCD_H

typedef struct cb_ccd_opts {
    double eta;    /* contact distance (>= 0): report when the distance drops to eta */
    double tol;    /* time tolerance in normalized step time */
    int max_iter;  /* cap on intervals processed per query */
} cb_ccd_opts;

cb_ccd_opts cb_default_ccd_opts(void);   /* eta 0, tol 1e-6, max_iter 4096 */

/* Vertex p against triangle abc; suffix 0 = start, 1 = end of the step. Returns 1 and
 * *toi in [0,1] (no later than the earliest time the distance is <= eta), 0 if that never
 * happens in [0,1] (then *toi is set to 1). */
int cb_ccd_vertex_triangle(const double p0[3], const double p1[3],
                           const double a0[3], const double a1[3], const double b0[3],
                           const double b1[3], const double c0[3], const double c1[3],
                           const cb_ccd_opts *o, double *toi);

/* Edge (p,q) against edge (r,s); same contract. */
int cb_ccd_edge_edge(const double p0[3], const double p1[3], const double q0[3], const double q1[3],
                     const double r0[3], const double r1[3], const double s0[3], const double s1[3],
                     const cb_ccd_opts *o, double *toi);

#endif
