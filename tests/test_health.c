/* tests/test_health.c — the run health check (experiments/harness/health.h) through cb_run and the
 * program: exploding runs of different solvers end "diverged" by the shared rule, a
 * healthy run has no breach, a pin that lifts the cloth (work done on it) is not
 * flagged, the thresholds come from the scene (bad keys refused with file:line), and
 * `info` reports the drift relative to the initial energy. */
#include "cb_test.h"

#include <hdf5.h>

#include "experiments/harness/h5attr.h"
#include "experiments/harness/run.h"

static char out[65536];
#define cb(...) cb_test_clothbench(out, sizeof out, 1, __VA_ARGS__)

/* A 20 x 20 hanging cloth (the bundled scene's material) with extra lines. */
static const char *scene(const char *name, const char *extra)
{
    char text[4096];
    snprintf(text, sizeof text,
             "name: %s\nduration: 0.5\ndt: 0.01\n%s"
             "cloth:\n"
             "  grid: {nx: 20, ny: 20, size: [1.0, 1.0], origin: [-0.5, 0.0, 0.0], plane: xz}\n"
             "  density: 0.1\n  stretch: 1000.0\n  bend: 1.0e-4\n  thickness: 0.002\n"
             "  pins: [{select: corners_top}]\n",
             name, extra);
    char file[256];
    snprintf(file, sizeof file, "%s.yaml", name);
    return cb_test_write_tmp(file, text);
}

static int run(const char *scene_path, const char *solver, const char *const *sets, int nsets, const char *h5,
               cb_run_result *res)
{
    cb_run_def d = cb_default_run_def();
    d.scene_path = scene_path;
    d.solver = solver;
    d.output = cb_test_tmp_path(h5);
    d.sets = sets;
    d.nsets = nsets;
    d.write_frames = 0;
    cb_error err;
    cb_error_clear(&err);
    return cb_run(&d, res, &err);
}

static void read_attr(const char *h5, const char *name, char *buf, size_t size)
{
    buf[0] = '\0';
    hid_t f = H5Fopen(cb_test_tmp_path(h5), H5F_ACC_RDONLY, H5P_DEFAULT);
    CU_ASSERT_FATAL(f >= 0);
    CU_ASSERT(cb_h5_read_string_attr(f, name, buf, size) >= 0);
    H5Fclose(f);
}

/* E_ref as the run file's health_rule states it. */
static double e_ref(const char *h5)
{
    char buf[2048];
    read_attr(h5, "health_rule", buf, sizeof buf);
    const char *p = strstr(buf, "E_ref = ");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    double e = atof(p + 8);
    CU_ASSERT(e > 0);
    return e;
}

/* Rows of a 1-wide series (malloc'd, caller frees). */
static double *read_series(const char *h5, const char *name, long *n)
{
    char path[128];
    snprintf(path, sizeof path, "/series/%s", name);
    hid_t f = H5Fopen(cb_test_tmp_path(h5), H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = H5Dopen(f, path, H5P_DEFAULT);
    hid_t s = H5Dget_space(d);
    hsize_t dims[1] = {0};
    H5Sget_simple_extent_dims(s, dims, NULL);
    double *buf = calloc(dims[0] + 1, sizeof *buf);
    H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
    H5Sclose(s);
    H5Dclose(d);
    H5Fclose(f);
    *n = (long)dims[0];
    return buf;
}

/* pbd with the paper's stepping and one sweep: the cloth stretches without bound and
 * its energy rises with it; the shared rule ends the run, the run file says so. */
static void test_pbd_explosion_diverged(void)
{
    const char *sc = scene("h_pbd", "");
    const char *sets[] = {"solvers.pbd.stepping=paper", "solvers.pbd.iterations=1"};
    cb_run_result r;
    CU_ASSERT_EQUAL(run(sc, "pbd", sets, 2, "h_pbd.h5", &r), CB_ERR_NUMERIC);
    CU_ASSERT_STRING_EQUAL(r.status, "diverged");
    CU_ASSERT(r.breaches >= 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.message, "health check"));
    CU_ASSERT(r.steps < 50); /* stopped at the breach, not at the end */
    char buf[2048];
    read_attr("h_pbd.h5", "status", buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "diverged");
    read_attr("h_pbd.h5", "health_breaches", buf, sizeof buf);
    CU_ASSERT(buf[0] != '\0');
    CU_ASSERT_PTR_NOT_NULL(strstr(r.message, buf)); /* the message names the breach recorded */
    read_attr("h_pbd.h5", "health_rule", buf, sizeof buf);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "max strain > 1"));
    /* the last row is the breach: its energy rise or strain is above the bound, the row
     * before is below both (fixed pins: W_ext = 0) */
    long n;
    double er = e_ref("h_pbd.h5");
    double *s = read_series("h_pbd.h5", "max_strain", &n), *E = read_series("h_pbd.h5", "total_energy", &n);
    CU_ASSERT(n >= 2 && (s[n - 1] > 1.0 || E[n - 1] - E[0] > er));
    CU_ASSERT(n >= 2 && s[n - 2] <= 1.0 && E[n - 2] - E[0] <= er);
    free(s);
    free(E);
}

/* explicit with one substep at 20 x its stable step: the energy grows geometrically; the
 * energy rule catches it long before a position leaves the scene's bound. */
static void test_explicit_explosion_diverged(void)
{
    const char *sc = scene("h_exp", "");
    const char *sets[] = {"solvers.explicit.substeps=1", "dt=0.002", "health.max_strain=1e6"};
    cb_run_result r;
    CU_ASSERT_EQUAL(run(sc, "explicit", sets, 3, "h_exp.h5", &r), CB_ERR_NUMERIC);
    CU_ASSERT_STRING_EQUAL(r.status, "diverged");
    CU_ASSERT_PTR_NOT_NULL(strstr(r.message, "health check"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.message, "energy"));
    CU_ASSERT_PTR_NULL(strstr(r.message, "beyond the scene bound"));
    long n;
    double *E = read_series("h_exp.h5", "total_energy", &n);
    CU_ASSERT(n >= 2 && E[n - 1] - E[0] > e_ref("h_exp.h5"));
    CU_ASSERT(isfinite(E[n - 1]));
    free(E);
}

/* The same rule applies to fms: a healthy run has no breach; a bound below its strain
 * (about 3%) makes the same run diverge. */
static void test_fms_healthy_and_bound(void)
{
    const char *sc = scene("h_fms", "");
    cb_run_result r;
    CU_ASSERT_EQUAL(run(sc, "fms", NULL, 0, "h_fms.h5", &r), 0);
    CU_ASSERT_STRING_EQUAL(r.status, "ok");
    CU_ASSERT_EQUAL(r.breaches, 0);
    char buf[2048];
    read_attr("h_fms.h5", "health_breaches", buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "");
    long n;
    double *s = read_series("h_fms.h5", "max_strain", &n), smax = 0;
    for (long i = 0; i < n; i++) smax = fmax(smax, s[i]);
    free(s);
    CU_ASSERT(smax > 0.005 && smax < 1.0);
    char set[64];
    snprintf(set, sizeof set, "health.max_strain=%g", 0.5 * smax);
    const char *sets[] = {set};
    CU_ASSERT_EQUAL(run(sc, "fms", sets, 1, "h_fms2.h5", &r), CB_ERR_NUMERIC);
    CU_ASSERT_STRING_EQUAL(r.status, "diverged");
    CU_ASSERT_PTR_NOT_NULL(strstr(r.message, "strain"));
}

/* Pins lifting the cloth at 3 m/s for 0.5 s raise its energy by about M g 1.5 m + 1/2 M v^2
 * = 1.9 J, more than E_ref (~1.55 J): the pins' work is counted, so the run is not
 * flagged. Jerking a mass to the pins' speed takes M v^2, half of which the motion
 * keeps and half fms's implicit Euler damps away: W_ext = rise + kinetic energy. */
static void test_moving_pin_not_flagged(void)
{
    const char *sc = scene("h_lift", "");
    const char *sets[] = {"cloth.pins.0.velocity=[0, 0, 3]"};
    cb_run_result r;
    CU_ASSERT_EQUAL(run(sc, "fms", sets, 1, "h_lift.h5", &r), 0);
    CU_ASSERT_STRING_EQUAL(r.status, "ok");
    CU_ASSERT_EQUAL(r.breaches, 0);
    long n;
    double *E = read_series("h_lift.h5", "total_energy", &n);
    double *W = read_series("h_lift.h5", "external_work", &n);
    double *K = read_series("h_lift.h5", "kinetic_energy", &n);
    double rise = E[n - 1] - E[0];
    CU_ASSERT(rise > e_ref("h_lift.h5")); /* without W_ext the energy rule would flag it */
    CU_ASSERT(W[0] == 0.0);
    CU_ASSERT(fabs(W[n - 1] - rise - K[n - 1]) < 0.1 * K[n - 1] + 0.02 * rise);
    free(E);
    free(K);
    free(W);
    /* the same lift with the pins fixed does no work */
    cb_run_result r2;
    CU_ASSERT_EQUAL(run(sc, "fms", NULL, 0, "h_still.h5", &r2), 0);
    W = read_series("h_still.h5", "external_work", &n);
    CU_ASSERT(W[n - 1] == 0.0);
    free(W);
}

/* info: the drift relative to the initial energy, the rule and the breaches. */
static void test_info_relative_drift(void)
{
    CU_ASSERT_EQUAL(cb("info %s", cb_test_tmp_path("h_fms.h5")), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "of the initial energy"));
    CU_ASSERT_PTR_NULL(strstr(out, "of max |E|"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "no breach"));
    long n;
    double *E = read_series("h_fms.h5", "total_energy", &n);
    char want[64];
    snprintf(want, sizeof want, "(%.3g%% of the initial energy)", 100.0 * (E[n - 1] - E[0]) / fabs(E[0]));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, want));
    free(E);
    CU_ASSERT_EQUAL(cb("info %s", cb_test_tmp_path("h_pbd.h5")), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "BREACHED"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "strain"));
}

/* Unknown or out-of-range health keys: bad input (exit 2) naming the file and line. */
static void test_bad_health_keys(void)
{
    const char *sc = scene("h_bad1", "health: {energy_factr: 2}\n");
    CU_ASSERT_EQUAL(cb("run %s --solver fms -o %s", sc, cb_test_tmp_path("h_bad1.h5")), 2);
    char needle[1100];
    snprintf(needle, sizeof needle, "%s:4", sc);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, needle));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "energy_factr"));
    sc = scene("h_bad2", "health:\n  max_strain: -1\n");
    CU_ASSERT_EQUAL(cb("run %s --solver fms -o %s", sc, cb_test_tmp_path("h_bad2.h5")), 2);
    snprintf(needle, sizeof needle, "%s:5", sc);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, needle));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "health.max_strain"));
    sc = scene("h_bad3", "health: 3\n");
    CU_ASSERT_EQUAL(cb("run %s --solver fms -o %s", sc, cb_test_tmp_path("h_bad3.h5")), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "health"));
}

CB_TEST_MAIN("health",
             CB_TEST(test_pbd_explosion_diverged),
             CB_TEST(test_explicit_explosion_diverged),
             CB_TEST(test_fms_healthy_and_bound),
             CB_TEST(test_moving_pin_not_flagged),
             CB_TEST(test_info_relative_drift),
             CB_TEST(test_bad_health_keys))
