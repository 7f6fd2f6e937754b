/* experiments/harness/elastica.h — the inextensible elastica of a cantilever under its own
 * weight (Peirce's cantilever, the fabric test ASTM D1388): the answer the `cantilever`
 * scene's runs are measured against, computed here rather than taken from a table.
 *
 * A strip of overhang L, bending stiffness B (N m per unit width) and areal density rho_A,
 * clamped horizontally at s = 0, free at s = L, loaded by gravity g. With theta(s) the
 * angle of the centre line below the horizontal and the moment of the overhang beyond s,
 *
 *   theta'' = -(rho_A g / B) (L - s) cos theta,   theta(0) = 0,  theta'(L) = 0,
 *
 * which in sigma = s / L depends on one number, Gamma = rho_A g L^3 / B:
 * theta'' = -Gamma (1 - sigma) cos theta. Solved by shooting from the tip: the tip angle
 * alpha = theta(L) (theta'(L) = 0 there) is bisected until the clamp's angle is 0, each
 * trial a fixed-step RK4 integration from the tip to the clamp that also integrates the
 * shape (x, drop). The clamped strip is the root nearest 90 degrees (up to Gamma ~ 160 the
 * only one; beyond, curled shapes also solve the equation): the bracket is found by a
 * scan that leaves 90 degrees on a log scale from 1e-13 rad.
 *
 * Angles, precisely: `tip_slope` is theta(L), the slope of the strip at its tip. `chord`
 * is the angle below the horizontal of the straight line from the clamp edge to the tip,
 * atan(drop / x): the angle Peirce (1930) and ASTM D1388 read (the tip touches a line
 * inclined at 41.5 degrees from the platform edge). Peirce's bending length is
 * c = (B / (rho_A g))^(1/3) = L / Gamma^(1/3); the elastica puts the 41.5 degree chord at
 * Gamma = 8.00, i.e. L = 2c (his closed form c = L (cos(chord/2) / (8 tan chord))^(1/3)
 * is an approximation of it: at 41.5 degrees it gives L = 1.96 c).
 *
 * Small deflection (Gamma -> 0): theta'(0) L = Gamma / 2, tip_slope = Gamma / 6,
 * drop / L = Gamma / 8 (w_tip = rho_A g L^4 / (8 B)). tests/test_elastica.c checks these,
 * the 41.5 degrees at L = 2c, and the explicit solver's cantilever against the solution.
 */
#ifndef CB_ELASTICA_H
#define CB_ELASTICA_H

#include "core/error.h"

typedef struct cb_elastica {
    double gamma;          /* rho_A g L^3 / B */
    double root_curvature; /* theta'(0) L (= M(0) L / B) */
    double tip_slope;      /* theta(L), rad below the horizontal */
    double tip_x;          /* horizontal distance clamp -> tip, / L */
    double tip_drop;       /* vertical drop clamp -> tip, / L */
    double chord;          /* atan(tip_drop / tip_x), rad: Peirce's / ASTM D1388's angle */
} cb_elastica;

/* Default RK4 steps over the strip (halving them changes the answers by < 1e-9 for
 * Gamma <= 100). */
#define CB_ELASTICA_STEPS 2000

/* Solve for 0 < gamma <= 1e3 (the tip within 1e-8 rad of vertical there) with `steps` RK4 steps (>= 10; 0 = the default). */
int cb_elastica_solve(double gamma, int steps, cb_elastica *out, cb_error *err);

/* The Gamma whose chord angle is `chord` (rad, in (0, pi/2)), and its solution in *out
 * (regula falsi in log Gamma over [1e-6, 1e3], chord below 87.3 degrees, to 1e-12 relative or a chord within 1e-14 rad). */
int cb_elastica_gamma_for_chord(double chord, cb_elastica *out, cb_error *err);

/* Peirce's bending length c = (B / (rho_A g))^(1/3), m (B in N m, rho_A in kg/m^2, g in
 * m/s^2; NaN unless all > 0). */
double cb_bending_length(double B, double rho_a, double g);

#endif
