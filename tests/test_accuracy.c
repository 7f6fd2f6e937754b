/* tests/test_accuracy.c — the order of accuracy of the integrators on a case with a known
 * answer (issue 20): one spring between two masses (data/scenes/single_spring.yaml,
 * k = 1000 N/m, 0.5 kg each, released 10% stretched), whose extension is exactly
 * e(t) = e0 cos(omega t), omega = sqrt(k / mu). The error at T = 0.3 s (about three
 * periods) is measured phase-free, sqrt(de^2 + (dv / omega)^2), at four step sizes and
 * its order fitted by least squares on log-log axes: velocity Verlet must give 2.0 +/- 0.1
 * and implicit Euler (newton, converged) 1.0 +/- 0.1, as their analysis says. */
#include "cb_test.h"
#include "cb_sim.h"

#include "core/vec3.h"

#define T_END 0.3

/* Phase-free error of one run at T_END with step dt; NaN when it cannot run. */
static double spring_error(const char *solver, double dt, const char *extra1, const char *extra2)
{
    char setdt[64];
    snprintf(setdt, sizeof setdt, "dt=%.17g", dt);
    const char *sets[] = {setdt, "duration=10", extra1, extra2};
    cb_sim s;
    if (cb_sim_open(&s, solver, "data/scenes/single_spring.yaml", NULL, ".", sets, extra2 ? 4 : 3)) {
        cb_sim_close(&s);
        return NAN;
    }
    double m0 = s.w->mass[0], m1 = s.w->mass[1], mu = m0 * m1 / (m0 + m1);
    double omega = sqrt(s.w->model.k_stretch / mu), L = s.w->model.rest_length[0];
    double e0 = cb_v3_dist(s.w->state.x[0], s.w->state.x[1]) - L;
    long n = lround(T_END / dt);
    for (long k = 0; k < n; k++)
        if (cb_sim_step(&s)) {
            cb_sim_close(&s);
            return NAN;
        }
    double d[3], dv[3];
    cb_v3_sub(d, s.w->state.x[1], s.w->state.x[0]);
    cb_v3_sub(dv, s.w->state.v[1], s.w->state.v[0]);
    double len = cb_v3_norm(d), e = len - L, edot = cb_v3_dot(dv, d) / len;
    double t = s.w->state.t;
    double ee = e0 * cos(omega * t), ev = -e0 * omega * sin(omega * t);
    cb_sim_close(&s);
    return sqrt((e - ee) * (e - ee) + (edot - ev) * (edot - ev) / (omega * omega));
}

/* Least-squares slope of log(err) against log(dt). */
static double fitted_order(const double *dt, const double *err, int n)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++) {
        double x = log(dt[i]), y = log(err[i]);
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
    }
    return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

static double order_of(const char *solver, const double *dt, int n, const char *extra1, const char *extra2)
{
    double err[8];
    for (int i = 0; i < n; i++) {
        err[i] = spring_error(solver, dt[i], extra1, extra2);
        fprintf(stderr, "  %-8s dt %.3g s: error %.4g\n", solver, dt[i], err[i]);
        if (!(err[i] > 0)) return NAN;
    }
    return fitted_order(dt, err, n);
}

static void test_verlet_second_order(void)
{
    const double dt[] = {2e-3, 1e-3, 5e-4, 2.5e-4};
    double p = order_of("explicit", dt, 4, "solvers.explicit.substeps=1", "solvers.explicit.damping=0");
    fprintf(stderr, "  velocity Verlet: fitted order %.3f\n", p);
    CU_ASSERT(fabs(p - 2.0) < 0.1);
}

static void test_implicit_euler_first_order(void)
{
    const double dt[] = {1.25e-4, 6.25e-5, 3.125e-5, 1.5625e-5}; /* omega dt <= 0.008: the asymptotic range */
    double p = order_of("newton", dt, 4, "solvers.newton.tolerance=1e-12", NULL);
    fprintf(stderr, "  implicit Euler (newton): fitted order %.3f\n", p);
    CU_ASSERT(fabs(p - 1.0) < 0.1);
}

/* The fit itself, on errors made to order: exact for err = c dt^q. */
static void test_fit_recovers_a_known_order(void)
{
    const double dt[] = {1e-3, 5e-4, 2.5e-4};
    double err[3];
    for (int i = 0; i < 3; i++) err[i] = 7.0 * pow(dt[i], 1.5);
    CU_ASSERT(fabs(fitted_order(dt, err, 3) - 1.5) < 1e-12);
}

CB_TEST_MAIN("accuracy",
             CB_TEST(test_fit_recovers_a_known_order),
             CB_TEST(test_verlet_second_order),
             CB_TEST(test_implicit_euler_first_order))
