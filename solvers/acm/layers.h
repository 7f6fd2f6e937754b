/* solvers/acm/layers.h — discrete penalty layers (Harmon et al. 2009, section 3).
 *
 * Layer l >= 1 of a pair at distance d has thickness eta(l) = eta1 l^(-1/4), stiffness
 * r(l) = r1 l^3 and potential V_l = 1/2 r(l) (d - eta(l))^2 for d < eta(l), 0 beyond.
 * The sum over layers diverges as d -> 0 (sum of l^3 (eta1 l^-1/4)^2 ...), so a pair can
 * never be pushed through. Each layer has its own regular clock of step
 * h(l) = h(1) l^(-3/2) (its stability limit scales as 1/sqrt(r(l))), ticking at k h(l).
 *
 * Activation bookkeeping (our choice, documented in acm.c): layer l is activated when the
 * pair comes closer than A(l) = eta(l) + delta(l), where delta(1) = eta1/4 and
 * delta(l) = (eta(l-1) - eta(l)) / 2 (the midpoint between two layers); a pair with n
 * active layers carries a separating-slab certificate for distance
 * C(n) = eta(n+1) + delta(n+1)/2, so a certificate failure always leaves a gap of
 * delta(n+1)/2 before layer n+1 would act (early activation is safe, late is not).
 */
#ifndef CB_ACM_LAYERS_H
#define CB_ACM_LAYERS_H

double cb_acm_eta(double eta1, int l);          /* eta(l) */
double cb_acm_stiffness(double r1, int l);      /* r(l) */
double cb_acm_step_scale(int l);                /* h(l) / h(1) = l^(-3/2) */
double cb_acm_activation(double eta1, int l);   /* A(l) */
double cb_acm_guard(double eta1, int n);        /* C(n) */
/* The first tick k h > t of a clock with step h (k integer >= 1). */
double cb_acm_next_tick(double h, double t);
/* Sum over layers 1..n of the layer potentials at distance d. */
double cb_acm_layer_energy(double eta1, double r1, int n, double d);

#endif
