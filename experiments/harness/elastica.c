/* experiments/harness/elastica.c — the self-weighted cantilever elastica (see elastica.h). */
#include "experiments/harness/elastica.h"

#include <math.h>

static const double HALF_PI = 1.57079632679489661923;

/* The state integrated from the tip (tau = 1 - sigma = 0) to the clamp (tau = 1):
 * theta, q = d theta / d sigma, and the distances x, drop from the tip. */
enum { TH, Q, X, Z, NS };

static void rhs(double gamma, double tau, const double y[NS], double d[NS])
{
    double c = cos(y[TH]);
    d[TH] = -y[Q];             /* d theta / d tau = -d theta / d sigma */
    d[Q] = gamma * tau * c;    /* -theta''(sigma) */
    d[X] = c;
    d[Z] = sin(y[TH]);
}

/* Integrate from the tip with theta(L) = alpha, theta'(L) = 0; y holds the clamp's state. */
static void integrate(double gamma, double alpha, int steps, double y[NS])
{
    double h = 1.0 / steps, k1[NS], k2[NS], k3[NS], k4[NS], t[NS];
    y[TH] = alpha;
    y[Q] = y[X] = y[Z] = 0.0;
    for (int n = 0; n < steps; n++) {
        double tau = n * h;
        rhs(gamma, tau, y, k1);
        for (int i = 0; i < NS; i++) t[i] = y[i] + 0.5 * h * k1[i];
        rhs(gamma, tau + 0.5 * h, t, k2);
        for (int i = 0; i < NS; i++) t[i] = y[i] + 0.5 * h * k2[i];
        rhs(gamma, tau + 0.5 * h, t, k3);
        for (int i = 0; i < NS; i++) t[i] = y[i] + h * k3[i];
        rhs(gamma, tau + h, t, k4);
        for (int i = 0; i < NS; i++) y[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
    }
}

static double clamp_angle(double gamma, double alpha, int steps)
{
    double y[NS];
    integrate(gamma, alpha, steps, y);
    return y[TH];
}

int cb_elastica_solve(double gamma, int steps, cb_elastica *out, cb_error *err)
{
    if (!out) return CB_FAIL(err, CB_ERR_INPUT, "cb_elastica_solve: out is NULL");
    if (!(gamma > 0.0 && gamma <= 1e3))
        return CB_FAIL(err, CB_ERR_INPUT, "elastica: Gamma = rho_A g L^3 / B must be in (0, 1e3] (beyond, the tip is within 1e-13 rad of vertical), got %g", gamma);
    if (steps == 0) steps = CB_ELASTICA_STEPS;
    if (steps < 10) return CB_FAIL(err, CB_ERR_INPUT, "elastica: steps must be >= 10 (or 0), got %d", steps);
    /* The clamp's angle is pi/2 for alpha = pi/2 (the vertical line solves the equation)
     * and negative for alpha = 0. Leave vertical, delta = pi/2 - alpha rising from 1e-13
     * by factors of 10^(1/4): the first delta whose clamp angle is < 0 closes the bracket
     * of the root nearest vertical (beyond Gamma ~ 200 there are also roots further down,
     * curled shapes that are not the clamped strip's). */
    double lo = 0.0, hi = HALF_PI; /* alpha with clamp angle < 0 and >= 0 */
    if (!(clamp_angle(gamma, 0.0, steps) < 0.0))
        return CB_FAIL(err, CB_ERR_NUMERIC, "elastica: no bracket at Gamma %g (clamp angle >= 0 at a flat tip)", gamma);
    for (double delta = 1e-13; delta < HALF_PI; delta *= 1.7782794100389228) {
        double a = HALF_PI - delta;
        if (clamp_angle(gamma, a, steps) < 0.0) { lo = a; break; }
        hi = a;
    }
    for (int it = 0; it < 200 && hi - lo > 1e-15; it++) {
        double mid = 0.5 * (lo + hi);
        if (clamp_angle(gamma, mid, steps) >= 0.0) hi = mid;
        else lo = mid;
    }
    double alpha = 0.5 * (lo + hi), y[NS];
    integrate(gamma, alpha, steps, y);
    out->gamma = gamma;
    out->root_curvature = y[Q];
    out->tip_slope = alpha;
    out->tip_x = y[X];
    out->tip_drop = y[Z];
    out->chord = atan2(y[Z], y[X]);
    if (!isfinite(out->chord) || fabs(y[TH]) > 1e-6)
        return CB_FAIL(err, CB_ERR_NUMERIC, "elastica: the shooting did not converge at Gamma %g "
                       "(clamp angle %g rad)", gamma, y[TH]);
    return 0;
}

int cb_elastica_gamma_for_chord(double chord, cb_elastica *out, cb_error *err)
{
    if (!out) return CB_FAIL(err, CB_ERR_INPUT, "cb_elastica_gamma_for_chord: out is NULL");
    if (!(chord > 0.0 && chord < HALF_PI))
        return CB_FAIL(err, CB_ERR_INPUT, "elastica: chord angle must be in (0, pi/2) rad, got %g", chord);
    /* regula falsi (Illinois) on chord(log Gamma) - chord, bracketed by [1e-6, 1e3] */
    double a = log(1e-6), b = log(1e3), fa, fb;
    cb_elastica e;
    int rc, side = 0;
    if ((rc = cb_elastica_solve(exp(a), 0, &e, err))) return rc;
    fa = e.chord - chord;
    if ((rc = cb_elastica_solve(exp(b), 0, &e, err))) return rc;
    fb = e.chord - chord;
    if (!(fa < 0.0 && fb >= 0.0))
        return CB_FAIL(err, CB_ERR_INPUT, "elastica: chord angle %g rad is outside Gamma in [1e-6, 1e3]", chord);
    for (int it = 0; it < 200 && b - a > 1e-12; it++) {
        double c = (a * fb - b * fa) / (fb - fa);
        if ((rc = cb_elastica_solve(exp(c), 0, &e, err))) return rc;
        double fc = e.chord - chord;
        if (fc == 0.0) { a = b = c; break; }
        if (fc < 0.0) {
            a = c, fa = fc;
            if (side == -1) fb *= 0.5;
            side = -1;
        } else {
            b = c, fb = fc;
            if (side == 1) fa *= 0.5;
            side = 1;
        }
        if (fabs(fc) < 1e-14) { a = b = c; break; }
    }
    return cb_elastica_solve(exp(0.5 * (a + b)), 0, out, err);
}

double cb_bending_length(double B, double rho_a, double g)
{
    if (!(B > 0.0 && rho_a > 0.0 && g > 0.0)) return NAN;
    return cbrt(B / (rho_a * g));
}
