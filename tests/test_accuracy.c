/* tests/test_accuracy.c — the order of accuracy of the integrators on a case with a known
 * answer (issue 20): one spring between two masses (data/scenes/single_spring.yaml,
 * k = 1000 N/m, 0.5 kg each, released 10% stretched), whose extension is exactly
 * e(t) = e0 cos(omega t), omega = sqrt(k / mu). The error at T = 0.3 s (about three
 * periods) is measured phase-free, sqrt(de^2 + (dv / omega)^2), at four step sizes and
 * its order fitted by least squares on log-log axes: velocity Verlet must give 2.0 +/- 0.1
 * and implicit Euler (newton, converged) 1.0 +/- 0.1, as their analysis says. */
#include "cb_test.h"
#include "cb_sim.h"

#include <hdf5.h>
#include <unistd.h>

#include "core/vec3.h"
#include "experiments/harness/h5attr.h"

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

/* A chain of four masses and three springs, released 10% stretched: several modes, no
 * closed form here; the answer is the same method at 1/64 of the largest step. Verlet's
 * order against it 2.0 +/- 0.1, implicit Euler's (converged, in its asymptotic range)
 * 1.0 +/- 0.1. */
static double chain_end_state(const char *solver, double dt, const char *extra, double out[4])
{
    static char scene[4096];
    const char *obj = cb_test_write_tmp("chain.obj", "v 0 0 0\nv 1 0 0\nv 2 0 0\nv 3 0 0\nl 1 2\nl 2 3\nl 3 4\n");
    snprintf(scene, sizeof scene, "name: chain\nduration: 10\ndt: 0.001\ngravity: [0, 0, 0]\n"
             "cloth:\n  mesh: %s\n  density: 1.0\n  line_density: 1.0\n  stretch: 1000.0\n  bend: 0.0\n"
             "  initial_stretch: 1.1\n", obj);
    char setdt[64];
    snprintf(setdt, sizeof setdt, "dt=%.17g", dt);
    const char *sets[] = {setdt, extra};
    cb_sim s;
    if (cb_sim_open(&s, solver, NULL, scene, ".", sets, extra ? 2 : 1)) {
        cb_sim_close(&s);
        return NAN;
    }
    long n = lround(T_END / dt);
    for (long k = 0; k < n; k++)
        if (cb_sim_step(&s)) {
            cb_sim_close(&s);
            return NAN;
        }
    for (int i = 0; i < 4; i++) out[i] = s.w->state.x[i][0];
    cb_sim_close(&s);
    return 0.0;
}

static double chain_order(const char *solver, const double *dt, const char *extra)
{
    double ref[4], x[4], err[3];
    if (chain_end_state(solver, dt[0] / 64.0, extra, ref)) return NAN;
    for (int k = 0; k < 3; k++) {
        if (chain_end_state(solver, dt[k], extra, x)) return NAN;
        double e2 = 0;
        for (int i = 0; i < 4; i++) e2 += (x[i] - ref[i]) * (x[i] - ref[i]);
        err[k] = sqrt(e2);
        fprintf(stderr, "  chain %-8s dt %.3g s: error %.4g m\n", solver, dt[k], err[k]);
    }
    return fitted_order(dt, err, 3);
}

static void test_chain_orders(void)
{
    const double dv[] = {2e-3, 1e-3, 5e-4};
    double pv = chain_order("explicit", dv, "solvers.explicit.substeps=1");
    const double dn[] = {1e-4, 5e-5, 2.5e-5};
    double pn = chain_order("newton", dn, "solvers.newton.tolerance=1e-12");
    fprintf(stderr, "  chain: Verlet order %.3f, implicit Euler order %.3f\n", pv, pn);
    CU_ASSERT(fabs(pv - 2.0) < 0.1);
    CU_ASSERT(fabs(pn - 1.0) < 0.1);
}

/* The fit itself, on errors made to order: exact for err = c dt^q. */
static void test_fit_recovers_a_known_order(void)
{
    const double dt[] = {1e-3, 5e-4, 2.5e-4};
    double err[3];
    for (int i = 0; i < 3; i++) err[i] = 7.0 * pow(dt[i], 1.5);
    CU_ASSERT(fabs(fitted_order(dt, err, 3) - 1.5) < 1e-12);
}

/* ---- reference trajectories and position_error (clothbench reference, run --reference) */

static char out[65536];
#define cb(...) cb_test_clothbench(out, sizeof out, 1, __VA_ARGS__)
#define SMALL "--set duration=0.3 --set cloth.grid.nx=10 --set cloth.grid.ny=10"

/* The series `name` of a run file (n values into e). */
static int read_series_named(const char *path, const char *name, double *e, int cap)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) return -1;
    char dname[128];
    snprintf(dname, sizeof dname, "/series/%s", name);
    hid_t ds = H5Dopen2(f, dname, H5P_DEFAULT), sp = H5Dget_space(ds);
    hsize_t n = 0;
    H5Sget_simple_extent_dims(sp, &n, NULL);
    if ((int)n > cap) n = (hsize_t)cap;
    hid_t mem = H5Screate_simple(1, &n, NULL);
    hsize_t start = 0;
    H5Sselect_hyperslab(sp, H5S_SELECT_SET, &start, NULL, &n, NULL);
    H5Dread(ds, H5T_NATIVE_DOUBLE, mem, sp, H5P_DEFAULT, e);
    H5Sclose(mem);
    H5Sclose(sp);
    H5Dclose(ds);
    H5Fclose(f);
    return (int)n;
}

/* A run file's frame times (/frames/time, whatever its rank) into t; their number, -1 when
 * more than cap or none. */
static int read_frame_times(const char *path, double *t, int cap)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) return -1;
    hid_t ds = H5Dopen2(f, "/frames/time", H5P_DEFAULT), sp = H5Dget_space(ds);
    hssize_t n = H5Sget_simple_extent_npoints(sp);
    int ok = n > 0 && n <= cap && H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, t) >= 0;
    H5Sclose(sp);
    H5Dclose(ds);
    H5Fclose(f);
    return ok ? (int)n : -1;
}

static int read_error_series(const char *path, double *e, int cap)
{
    return read_series_named(path, "position_error", e, cap);
}

static void test_reference_and_position_error(void)
{
    char ref[1024], a[1024], b[1024], same[1024];
    snprintf(ref, sizeof ref, "%s", cb_test_tmp_path("hang_ref.h5"));
    snprintf(a, sizeof a, "%s", cb_test_tmp_path("hang_a.h5"));
    snprintf(b, sizeof b, "%s", cb_test_tmp_path("hang_b.h5"));
    snprintf(same, sizeof same, "%s", cb_test_tmp_path("hang_same.h5"));
    /* the reference converged: the same at half its step differs by micrometres */
    CU_ASSERT_EQUAL_FATAL(cb("reference data/scenes/hanging.yaml -o %s --refine 720 " SMALL, ref), 0);
    double D = -1;
    const char *p = strstr(out, "differs by ");
    if (p) sscanf(p, "differs by %lf", &D);
    CU_ASSERT(D >= 0 && D < 1e-5);
    int refine = 0;
    p = strstr(out, "scene dt / ");
    if (p) sscanf(p, "scene dt / %d", &refine);
    CU_ASSERT_FATAL(refine >= 720);
    /* a free scene keeps velocity Verlet (the method attribute), and a run made exactly as
     * the reference was has error 0 at every frame (matching is exact: bit for bit) */
    char attr[512] = "";
    hid_t fr = H5Fopen(ref, H5F_ACC_RDONLY, H5P_DEFAULT);
    CU_ASSERT_FATAL(fr >= 0);
    cb_h5_read_string_attr(fr, "reference_method", attr, sizeof attr);
    H5Fclose(fr);
    CU_ASSERT_PTR_NOT_NULL(strstr(attr, "velocity Verlet"));
    char setdt[96];
    snprintf(setdt, sizeof setdt, "--set dt=%.17g", (1.0 / 60.0) / refine);
    CU_ASSERT_EQUAL(cb("run data/scenes/hanging.yaml --solver explicit -o %s -q " SMALL " %s --set "
                       "solvers.explicit.damping=0 --set solvers.explicit.substeps=1 --reference %s", same, setdt, ref), 0);
    static double e[65536];
    int n = read_error_series(same, e, 65536), frames = 0;
    for (int i = 0; i < n; i++)
        if (!isnan(e[i])) { /* rows between the reference's frames are NaN: unknown, not 0 */
            CU_ASSERT_EQUAL(e[i], 0.0);
            frames++;
        }
    CU_ASSERT(frames > 10);
    /* energy_error: 0 at the same frames for the same run, NaN between them */
    int ne = read_series_named(same, "energy_error", e, 65536), eframes = 0;
    CU_ASSERT_EQUAL(ne, n);
    for (int i = 0; i < ne; i++)
        if (!isnan(e[i])) {
            CU_ASSERT_EQUAL(e[i], 0.0);
            eframes++;
        }
    CU_ASSERT_EQUAL(eframes, frames);
    /* Verlet at two fixed steps below the stability limit: the error at the end falls 4x */
    /* steps that divide the frame interval (1/60 s), so the frames fall on the reference's */
    CU_ASSERT_EQUAL(cb("run data/scenes/hanging.yaml --solver explicit -o %s -q " SMALL " --set dt=%.17g --set "
                       "solvers.explicit.damping=0 --set solvers.explicit.substeps=1 --reference %s", a,
                       1.0 / 60.0 / 80.0, ref), 0);
    static double ea[65536], eb[65536];
    int na = read_error_series(a, ea, 65536);
    CU_ASSERT_EQUAL(cb("run data/scenes/hanging.yaml --solver explicit -o %s -q " SMALL " --set dt=%.17g --set "
                       "solvers.explicit.damping=0 --set solvers.explicit.substeps=1 --reference %s", b,
                       1.0 / 60.0 / 160.0, ref), 0);
    int nb = read_error_series(b, eb, 65536);
    CU_ASSERT_FATAL(na > 1 && nb > 1);
    double ratio = ea[na - 1] / eb[nb - 1]; /* the last row is a frame */
    fprintf(stderr, "  hanging 10 x 10, Verlet: position_error %.3g m (dt 1/4800 s), %.3g m (1/9600 s): ratio %.2f\n",
            ea[na - 1], eb[nb - 1], ratio);
    CU_ASSERT(ratio > 3.5 && ratio < 4.5);
    /* its energy error: finite at the frames, not 0, and smaller at the smaller step (the
     * largest |E - E_ref| over the frames: Verlet's energy error is O(dt^2), bounded) */
    double wa = 0, wb = 0;
    int fa = 0;
    na = read_series_named(a, "energy_error", ea, 65536);
    nb = read_series_named(b, "energy_error", eb, 65536);
    for (int i = 0; i < na; i++)
        if (!isnan(ea[i])) { wa = fmax(wa, fabs(ea[i])); fa++; }
    for (int i = 0; i < nb; i++)
        if (!isnan(eb[i])) wb = fmax(wb, fabs(eb[i]));
    fprintf(stderr, "  energy_error: largest %.3g J (dt 1/4800 s), %.3g J (1/9600 s) over %d frames\n", wa, wb, fa);
    CU_ASSERT(fa == frames && wa > 0 && wb > 0 && wb < 0.5 * wa);
    /* a reference that did not finish (status other than ok) is refused */
    char bad[1024];
    snprintf(bad, sizeof bad, "%s", cb_test_tmp_path("hang_unfinished.h5"));
    CU_ASSERT_EQUAL(cb_test_shell(out, sizeof out, "cp %s %s", a, bad), 0);
    hid_t fb = H5Fopen(bad, H5F_ACC_RDWR, H5P_DEFAULT);
    CU_ASSERT_FATAL(fb >= 0);
    hid_t ty = H5Tcopy(H5T_C_S1);
    H5Tset_size(ty, H5T_VARIABLE);
    hid_t sp0 = H5Screate(H5S_SCALAR);
    H5Adelete(fb, "status");
    hid_t at = H5Acreate2(fb, "status", ty, sp0, H5P_DEFAULT, H5P_DEFAULT);
    const char *running = "running";
    H5Awrite(at, ty, &running);
    H5Aclose(at);
    H5Sclose(sp0);
    H5Tclose(ty);
    H5Fclose(fb);
    CU_ASSERT_EQUAL(cb("run data/scenes/hanging.yaml --solver explicit -o %s -q " SMALL " --reference %s",
                       cb_test_tmp_path("z.h5"), bad), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "not a finished reference"));
    /* refused: a scene with colliders for velocity Verlet, a reference of another mesh */
    CU_ASSERT_EQUAL(cb("reference data/scenes/drape_sphere.yaml --method verlet -o %s", cb_test_tmp_path("x.h5")), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "contact-free"));
    CU_ASSERT_EQUAL(cb("reference data/scenes/drape_sphere.yaml --method rk4 -o %s", cb_test_tmp_path("x.h5")), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "--method must be auto, verlet or ipc"));
    CU_ASSERT_EQUAL(cb("run data/scenes/hanging.yaml --solver explicit -o %s -q --reference %s",
                       cb_test_tmp_path("y.h5"), ref), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "not the same scene"));
}

/* The number attribute `name` of the run file at path (NaN: none). */
static double double_attr(const char *path, const char *name)
{
    double v = NAN;
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) return v;
    if (H5Aexists(f, name) > 0) {
        hid_t a = H5Aopen(f, name, H5P_DEFAULT);
        if (H5Aread(a, H5T_NATIVE_DOUBLE, &v) < 0) v = NAN;
        H5Aclose(a);
    }
    H5Fclose(f);
    return v;
}

/* References with contact (issue 34): the drape (6 x 6, 0.25 s: the cloth reaches the
 * sphere at about 0.2 s) gets an ipc reference; its check D is finite, within the bound,
 * and the reference touched the sphere (its barrier energy, contact_energy, is > 0). An
 * fms run at the scene's dt (5 ms, whose frame interval 15 ms is not the scene's 1/60 s:
 * the reference takes the run's) logs a finite, nonzero position_error and a finite
 * energy_error at every frame. The same reference with a bound below its check's first
 * frame is refused, the frame's time and the bound named, and no file is left; a bound of
 * 0 is bad usage. */
#define DRAPE_SMALL "--set duration=0.25 --set cloth.grid.nx=6 --set cloth.grid.ny=6"
static void test_contact_reference(void)
{
    char ref[1024], run[1024], refused[1024];
    snprintf(ref, sizeof ref, "%s", cb_test_tmp_path("drape_ref.h5"));
    snprintf(run, sizeof run, "%s", cb_test_tmp_path("drape_fms.h5"));
    snprintf(refused, sizeof refused, "%s", cb_test_tmp_path("drape_refused.h5"));
    CU_ASSERT_EQUAL_FATAL(cb("reference data/scenes/drape_sphere.yaml -o %s --refine 8 " DRAPE_SMALL, ref), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "ipc (implicit Euler"));
    double D = double_attr(ref, "reference_difference"), bound = double_attr(ref, "reference_bound");
    char check[512] = "";
    hid_t f = H5Fopen(ref, H5F_ACC_RDONLY, H5P_DEFAULT);
    CU_ASSERT_FATAL(f >= 0);
    cb_h5_read_string_attr(f, "reference_check", check, sizeof check);
    H5Fclose(f);
    double Dtext = NAN;
    const char *p = strstr(check, "differs by ");
    if (p) sscanf(p, "differs by %lf", &Dtext);
    fprintf(stderr, "  drape 6 x 6, 0.25 s, ipc at dt / 8: check D %.3g m (bound %.3g m)\n", D, bound);
    CU_ASSERT(isfinite(D) && D > 0 && D <= bound);
    CU_ASSERT(isfinite(Dtext) && fabs(Dtext - D) <= 5e-3 * D); /* the text says the number (3 digits) */
    CU_ASSERT_EQUAL(bound, 1e-3);
    static double e[65536];
    int n = read_series_named(ref, "contact_energy", e, 65536); /* ipc: kappa sum b / h^2 over its active pairs */
    double most = 0;
    for (int i = 0; i < n; i++)
        if (e[i] > most) most = e[i];
    CU_ASSERT(most > 0); /* the reference is one with contact */
    CU_ASSERT_EQUAL_FATAL(cb("run data/scenes/drape_sphere.yaml --solver fms -o %s -q " DRAPE_SMALL " --reference %s",
                             run, ref), 0);
    n = read_series_named(run, "position_error", e, 65536);
    int frames = 0;
    double last = NAN;
    for (int i = 0; i < n; i++)
        if (!isnan(e[i])) {
            CU_ASSERT(isfinite(e[i]) && e[i] >= 0);
            frames++;
            last = e[i];
        }
    fprintf(stderr, "  fms against it: position_error %.3g m at the end, %d frames\n", last, frames);
    CU_ASSERT(frames >= 17); /* 0, 15, ..., 240 ms and the end */
    CU_ASSERT(last > 0);
    int ne = read_series_named(run, "energy_error", e, 65536), eframes = 0;
    for (int i = 0; i < ne; i++) eframes += isfinite(e[i]);
    CU_ASSERT_EQUAL(eframes, frames);
    /* a bound below the check's first frame: refused, the time and the bound named, nothing written */
    CU_ASSERT_EQUAL(cb("reference data/scenes/drape_sphere.yaml -o %s --refine 8 --max-check 1e-9 " DRAPE_SMALL,
                       refused), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "at t = 0.015 s, its first frame, above the bound 1e-09 m (--max-check)"));
    CU_ASSERT_EQUAL(access(refused, F_OK), -1);
    CU_ASSERT_EQUAL(cb("reference data/scenes/drape_sphere.yaml -o %s --max-check 0 " DRAPE_SMALL, refused), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "--max-check needs a distance > 0"));
}

/* A reference valid over a window: the drape (6 x 6) for 0.45 s at dt / 4 is not
 * converged in dt after the cloth has hit the sphere (at about 0.2 s; the two steps'
 * difference grows from 6e-4 m to centimetres: the drape's sensitivity, README "Accuracy
 * against a reference"). The reference is kept up to the last frame whose check is within
 * the bound (1 mm): its frames end there, reference_window says when, reference_exceeded_at
 * is the next frame (beyond the bound), the check's text names both, its D is within the
 * bound. An fms run of the whole 0.45 s against it has a finite position_error and
 * energy_error at every frame up to the window and NaN after it, and its attribute
 * `reference` names the window; `clothbench rerun --check` of the reference is identical
 * (its rerun ends at the window too). (Before the window the same reference was refused.) */
static void test_contact_reference_window(void)
{
    char ref[1024], run[1024];
    snprintf(ref, sizeof ref, "%s", cb_test_tmp_path("drape_window_ref.h5"));
    snprintf(run, sizeof run, "%s", cb_test_tmp_path("drape_window_fms.h5"));
    const char *small = "--set duration=0.45 --set cloth.grid.nx=6 --set cloth.grid.ny=6";
    CU_ASSERT_EQUAL_FATAL(cb("reference data/scenes/drape_sphere.yaml -o %s --refine 4 %s", ref, small), 0);
    double W = double_attr(ref, "reference_window"), over = double_attr(ref, "reference_exceeded_at");
    double D = double_attr(ref, "reference_difference"), bound = double_attr(ref, "reference_bound");
    fprintf(stderr, "  drape 6 x 6, 0.45 s, ipc at dt / 4: window 0 to %.4g s (beyond the bound at %.4g s), D %.3g m\n",
            W, over, D);
    CU_ASSERT(W > 0.2 && W < 0.45);                /* after the impact, before the end */
    CU_ASSERT(fabs(over - W - 0.015) < 1e-9);      /* the next frame (15 ms: the run's frame interval at 5 ms) */
    CU_ASSERT(isfinite(D) && D > 0 && D <= bound);
    char check[1024] = "", window[64];
    hid_t f = H5Fopen(ref, H5F_ACC_RDONLY, H5P_DEFAULT);
    CU_ASSERT_FATAL(f >= 0);
    cb_h5_read_string_attr(f, "reference_check", check, sizeof check);
    H5Fclose(f);
    snprintf(window, sizeof window, "ends at t = %.6g s", W);
    CU_ASSERT_PTR_NOT_NULL(strstr(check, window));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, window)); /* printed too */
    static double t[65536], e[65536], ee[65536];
    int n = read_frame_times(ref, t, 65536);
    CU_ASSERT(n > 0 && fabs(t[n - 1] - W) < 1e-9); /* the reference's frames end with its window */
    /* a rerun reproduces the window, bit for bit (before, it ran on to 0.45 s) */
    char again[1024];
    snprintf(again, sizeof again, "%s", cb_test_tmp_path("drape_window_ref.rerun.h5"));
    CU_ASSERT_EQUAL(cb("rerun %s -o %s --check -q", ref, again), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "identical\n"));
    n = read_frame_times(again, t, 65536);
    CU_ASSERT(n > 0 && fabs(t[n - 1] - W) < 1e-9);
    CU_ASSERT_EQUAL_FATAL(cb("run data/scenes/drape_sphere.yaml --solver fms -o %s -q %s --reference %s", run, small, ref),
                          0);
    n = read_series_named(run, "time", t, 65536);
    CU_ASSERT_EQUAL(read_series_named(run, "position_error", e, 65536), n);
    CU_ASSERT_EQUAL(read_series_named(run, "energy_error", ee, 65536), n);
    int inside = 0, outside = 0, finite_outside = 0;
    for (int i = 0; i < n; i++) {
        if (t[i] <= W + 1e-9) {
            if (isfinite(e[i])) {
                CU_ASSERT(isfinite(ee[i]));
                inside++;
            }
        } else {
            outside++;
            finite_outside += !isnan(e[i]) + !isnan(ee[i]);
        }
    }
    CU_ASSERT_EQUAL(inside, (int)lround(W / 0.015) + 1); /* every frame of the window, t = 0 included */
    CU_ASSERT(outside > 0);
    CU_ASSERT_EQUAL(finite_outside, 0);
    char attr[2048] = "";
    f = H5Fopen(run, H5F_ACC_RDONLY, H5P_DEFAULT);
    CU_ASSERT_FATAL(f >= 0);
    cb_h5_read_string_attr(f, "reference", attr, sizeof attr);
    H5Fclose(f);
    snprintf(window, sizeof window, "from 0 to %.6g s", W);
    CU_ASSERT_PTR_NOT_NULL(strstr(attr, window));
}

/* An experiment says how its missing reference is made, as clothbench reference's options:
 * reference_method, reference_refine and reference_max_check reach it (a bound of 1e-9 m
 * refuses the drape's reference at its first frame, the sweep's message naming its
 * refinement and that bound); a reference that ends early (the drape's 0.45 s at dt / 4)
 * is made and its window named; a bad value, or the keys without `reference`, are refused. */
static void test_sweep_reference_keys(void)
{
    char dir[1024], yaml[2048];
    snprintf(dir, sizeof dir, "%s", cb_test_tmp_path("acc_refkeys"));
    const char *head = "name: refkeys\nscenes: [data/scenes/drape_sphere.yaml]\nsolvers: [fms]\n"
                       "set: {duration: 0.25, cloth.grid.nx: 6, cloth.grid.ny: 6}\n";
    snprintf(yaml, sizeof yaml, "%sreference: %s/ref.h5\nreference_method: ipc\nreference_refine: 8\n"
             "reference_max_check: 1e-9\n", head, dir);
    const char *e = cb_test_write_tmp("refkeys.yaml", yaml);
    CU_ASSERT_EQUAL(cb("sweep %s -o %s", e, dir), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "--method ipc --refine 8 --max-check 1e-09"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "ipc at dt = scene dt / 8"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "above the bound 1e-09 m"));
    /* the drape's 0.45 s at dt / 4: a reference with a window, which the sweep names */
    snprintf(yaml, sizeof yaml, "name: refwin\nscenes: [data/scenes/drape_sphere.yaml]\nsolvers: [fms]\n"
             "set: {duration: 0.45, cloth.grid.nx: 6, cloth.grid.ny: 6}\nreference: %s/win.h5\n"
             "reference_refine: 4\n", dir);
    e = cb_test_write_tmp("refwin.yaml", yaml);
    CU_ASSERT_EQUAL(cb("sweep %s -o %s/win", e, dir), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "its window (position_error is NaN after it)"));
    snprintf(yaml, sizeof yaml, "%sreference: %s/ref.h5\nreference_method: rk4\n", head, dir);
    e = cb_test_write_tmp("refkeys.yaml", yaml);
    CU_ASSERT_EQUAL(cb("sweep %s -o %s", e, dir), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "reference_method: expected auto, verlet or ipc, got rk4"));
    snprintf(yaml, sizeof yaml, "%sreference_max_check: 0.002\n", head);
    e = cb_test_write_tmp("refkeys.yaml", yaml);
    CU_ASSERT_EQUAL(cb("sweep %s -o %s", e, dir), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "they need reference: PATH"));
}

/* `clothbench sweep` makes an experiment's missing reference itself (one command), from its
 * scene overrides, and every run logs position_error against it; a grid over a scene key
 * other than dt is refused (no one reference fits). compare.py --reference then gives
 * Verlet (one substep, below its stability limit) order 2 from the runs' files. */
static void test_sweep_makes_reference_and_compare_order(void)
{
    char dir[1024], ref[1100];
    snprintf(dir, sizeof dir, "%s", cb_test_tmp_path("acc_sweep"));
    snprintf(ref, sizeof ref, "%s/ref.h5", dir);
    char yaml[4096];
    snprintf(yaml, sizeof yaml,
             "name: acc\nreference: %s\nscenes: [data/scenes/hanging.yaml]\nsolvers: [explicit]\n"
             "set: {duration: 0.2, cloth.grid.nx: 8, cloth.grid.ny: 8, cloth.grid.plane: xy, "
             "solvers.explicit.damping: 0, solvers.explicit.substeps: 1}\n"
             "grid: {dt: [0.00041666666666666669, 0.00020833333333333335, 0.00010416666666666667]}\n", ref);
    const char *e = cb_test_write_tmp("acc.yaml", yaml);
    CU_ASSERT_EQUAL_FATAL(cb("sweep %s -o %s -q", e, dir), 0);
    CU_ASSERT_EQUAL(cb("sweep %s -o %s", e, dir), 0); /* quiet above: now it only reports */
    CU_ASSERT_PTR_NULL(strstr(out, "making the reference")); /* made once, kept */
    hid_t f = H5Fopen(ref, H5F_ACC_RDONLY, H5P_DEFAULT);
    CU_ASSERT_FATAL(f >= 0);
    CU_ASSERT(H5Aexists(f, "reference_check") > 0);
    H5Fclose(f);
    static double v[65536];
    char run[1200];
    snprintf(run, sizeof run, "%s/hanging__explicit__dt=0.00010416666666666667__r0.h5", dir);
    int n = read_error_series(run, v, 65536), finite = 0;
    for (int i = 0; i < n; i++) finite += !isnan(v[i]);
    CU_ASSERT(finite >= 12); /* frames at 60 Hz over 0.2 s */
    const char *py = getenv("CB_PYTHON");
    if (py && *py) {
        int rc = cb_test_shell(out, sizeof out, "%s analysis/compare.py %s --reference %s --no-plots -q && "
                               "%s -c \"import csv; rows = list(csv.DictReader(open('%s/table.csv'))); "
                               "print('orders', ' '.join(r['order'] for r in rows))\"", py, dir, ref, py, dir);
        CU_ASSERT_EQUAL(rc, 0);
        double q[3] = {0, 0, 0};
        const char *p = strstr(out, "orders ");
        CU_ASSERT_FATAL(p != NULL);
        CU_ASSERT_EQUAL(sscanf(p, "orders %lf %lf %lf", &q[0], &q[1], &q[2]), 3);
        fprintf(stderr, "  compare.py --reference: Verlet's order %.3f\n", q[0]);
        CU_ASSERT(fabs(q[0] - 2.0) < 0.1 && q[0] == q[1] && q[1] == q[2]);
        /* a reference of another mesh is refused by name */
        CU_ASSERT_NOT_EQUAL(cb_test_shell(out, sizeof out, "%s analysis/compare.py %s --reference %s --no-plots -q",
                                          py, dir, cb_test_tmp_path("hang_ref.h5")), 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "not the same scene"));
    }
    /* a grid that changes the scene: no single reference */
    snprintf(yaml, sizeof yaml,
             "name: acc2\nreference: %s/none.h5\nscenes: [data/scenes/hanging.yaml]\nsolvers: [explicit]\n"
             "set: {duration: 0.1, cloth.grid.nx: 6, cloth.grid.ny: 6}\ngrid: {cloth.stretch: [100, 1000]}\n", dir);
    e = cb_test_write_tmp("acc2.yaml", yaml);
    CU_ASSERT_EQUAL(cb("sweep %s -o %s/two -q", e, dir), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "the grid changes the scene (cloth.stretch)"));
}

/* One run of the issue-31 scene (hanging 12 x 12 in the xy plane, bending on, newton
 * tolerance 1e-10) for `dur` s at dt = 1/n with the extra --set `extra`, against ref:
 * position_error at the last frame; the run file's `model` into model. */
static double scene31_error(const char *solver, const char *extra, int n, double dur, const char *ref, char *model,
                            size_t msize)
{
    char path[1024];
    snprintf(path, sizeof path, "%s", cb_test_tmp_path("s31.h5"));
    if (cb("run data/scenes/hanging.yaml --solver %s -o %s -q --no-frames --set duration=%g --set cloth.grid.nx=12 "
           "--set cloth.grid.ny=12 --set cloth.grid.plane=xy --set solvers.%s.self_collision=false --set "
           "solvers.newton.tolerance=1e-10 --set dt=%.17g %s --reference %s",
           solver, path, dur, solver, 1.0 / n, extra, ref))
        return NAN;
    static double e[65536];
    int ne = read_error_series(path, e, 65536);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    model[0] = '\0';
    if (f >= 0) {
        cb_h5_read_string_attr(f, "model", model, msize);
        H5Fclose(f);
    }
    return ne > 0 ? e[ne - 1] : NAN;
}

/* Issue 31, reduced (0.1 s instead of 0.5 s): newton on the shared model (bending:
 * shells, its default) converges in dt against the reference, which bends by the same
 * discrete-shells energy: position_error falls by at least 25% at each halving of dt
 * (1/960 -> 1/1920 -> 1/3840 s; measured ~50%); newton with bend springs, another
 * energy, stops falling (a floor: less than 25% at the last halving). fms with quadratic
 * bending at 50 iterations lands within 20% of newton on the same energy at 1/960 s. Each
 * run file names its model. */
static void test_newton_shells_converges_to_reference(void)
{
    char ref[1024], model[256];
    snprintf(ref, sizeof ref, "%s", cb_test_tmp_path("s31_ref.h5"));
    CU_ASSERT_EQUAL_FATAL(cb("reference data/scenes/hanging.yaml -o %s --set duration=0.1 --set cloth.grid.nx=12 "
                             "--set cloth.grid.ny=12 --set cloth.grid.plane=xy", ref), 0);
    const int ns[3] = {960, 1920, 3840};
    double es[3], ep[3];
    for (int i = 0; i < 3; i++) {
        es[i] = scene31_error("newton", "", ns[i], 0.1, ref, model, sizeof model);
        CU_ASSERT_STRING_EQUAL(model, "stretch springs / bending shells / contact projection");
        ep[i] = scene31_error("newton", "--set solvers.newton.bending=springs", ns[i], 0.1, ref, model, sizeof model);
        CU_ASSERT_STRING_EQUAL(model, "stretch springs / bending springs / contact projection");
    }
    fprintf(stderr, "  newton shells:  %.3e %.3e %.3e m (dt 1/960, 1/1920, 1/3840 s)\n", es[0], es[1], es[2]);
    fprintf(stderr, "  newton springs: %.3e %.3e %.3e m\n", ep[0], ep[1], ep[2]);
    for (int i = 0; i < 2; i++) CU_ASSERT(es[i + 1] <= 0.75 * es[i]);
    CU_ASSERT(ep[2] > 0.75 * ep[1]); /* the floor of another model */
    double nq = scene31_error("newton", "--set solvers.newton.bending=quadratic", 960, 0.1, ref, model, sizeof model);
    CU_ASSERT_STRING_EQUAL(model, "stretch springs / bending quadratic / contact projection");
    double fq = scene31_error("fms", "--set solvers.fms.bending=quadratic --set solvers.fms.iterations=50", 960, 0.1, ref,
                              model, sizeof model);
    CU_ASSERT_STRING_EQUAL(model, "stretch springs / bending quadratic / contact projection");
    fprintf(stderr, "  dt 1/960 s: newton quadratic %.3e m, fms quadratic 50 iterations %.3e m\n", nq, fq);
    CU_ASSERT(fabs(fq - nq) <= 0.2 * nq);
}

CB_TEST_MAIN("accuracy",
             CB_TEST(test_fit_recovers_a_known_order),
             CB_TEST(test_verlet_second_order),
             CB_TEST(test_implicit_euler_first_order),
             CB_TEST(test_chain_orders),
             CB_TEST(test_reference_and_position_error),
             CB_TEST(test_contact_reference),
             CB_TEST(test_contact_reference_window),
             CB_TEST(test_sweep_reference_keys),
             CB_TEST(test_sweep_makes_reference_and_compare_order),
             CB_TEST(test_newton_shells_converges_to_reference))
