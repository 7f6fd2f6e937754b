/* solvers/acm/layers.c — discrete penalty layers: thicknesses, stiffnesses, clocks and
 * activation thresholds (see layers.h). Powers for the first layers are tabulated. */
#include "solvers/acm/layers.h"

#include <math.h>

#define TABLE 256

static double tab_eta[TABLE], tab_h[TABLE];
static int tab_ready;

static void init_tables(void)
{
    if (tab_ready) return;
    for (int l = 1; l < TABLE; l++) {
        tab_eta[l] = pow((double)l, -0.25);
        tab_h[l] = pow((double)l, -1.5);
    }
    tab_ready = 1;
}

double cb_acm_eta(double eta1, int l)
{
    init_tables();
    return eta1 * (l < TABLE ? tab_eta[l] : pow((double)l, -0.25));
}

double cb_acm_stiffness(double r1, int l)
{
    double dl = (double)l;
    return r1 * dl * dl * dl;
}

double cb_acm_step_scale(int l)
{
    init_tables();
    return l < TABLE ? tab_h[l] : pow((double)l, -1.5);
}

static double delta(double eta1, int l)
{
    return l <= 1 ? 0.25 * eta1 : 0.5 * (cb_acm_eta(eta1, l - 1) - cb_acm_eta(eta1, l));
}

double cb_acm_activation(double eta1, int l)
{
    return cb_acm_eta(eta1, l) + delta(eta1, l);
}

double cb_acm_guard(double eta1, int n)
{
    return cb_acm_eta(eta1, n + 1) + 0.5 * delta(eta1, n + 1);
}

double cb_acm_next_tick(double h, double t)
{
    double k = floor(t / h) + 1.0;
    double tk = k * h;
    while (tk <= t) tk = (++k) * h;
    return tk;
}

double cb_acm_layer_energy(double eta1, double r1, int n, double d)
{
    double e = 0.0;
    for (int l = 1; l <= n; l++) {
        double g = cb_acm_eta(eta1, l) - d;
        if (g > 0) e += 0.5 * cb_acm_stiffness(r1, l) * g * g;
    }
    return e;
}
