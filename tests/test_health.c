/* tests/test_health.c — the run health check (experiments/harness/health.h) through cb_run and the
 * program: exploding runs of different solvers end "diverged" by the shared rule, a
 * healthy run has no breach, a pin that lifts the cloth (work done on it) is not
 * flagged, the work methods report is exact on a plane pushing a free cloth and on a
 * rotating grip (every method), the thresholds come from the scene (bad keys refused
 * with file:line),
 * `info` reports the drift relative to the initial energy, and E0 and the t = 0 row hold a
 * method's contact potential at the start (ipc's barrier). */
#include "cb_test.h"

#include <hdf5.h>

#include "cb_sim.h"
#include "experiments/harness/h5attr.h"
#include "experiments/harness/health.h"
#include "experiments/harness/metrics.h"
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

/* A method's contact potential at the initial state (core/solver.h,
 * initial_contact_energy) is in the t = 0 row and in E0. The bundled capstan strip
 * starts 0.05 mm outside the collider offset; with ipc's dhat at 2 mm (the thickness,
 * the default without the scene's 0.05 mm) it starts deep in the barrier's range, whose
 * push throws the strip off the capsule in the first step (a few mJ of kinetic energy).
 * The barrier's energy at the start pays for it: the run is healthy, row 0's
 * contact_energy is that energy (> 0) and its total_energy holds it. Before, row 0 had
 * no contact_energy and ipc reported kappa sum b (h^2 times its energy): the run ended
 * `diverged` by the energy rule at step 1 (2.8 mJ above E0, the bound 2.6 mJ). A method
 * without a contact potential (explicit) keeps NaN there. */
static void test_initial_contact_energy(void)
{
    const char *sets[] = {"duration=0.002", "solvers.ipc.dhat=0.002"};
    cb_run_result r;
    CU_ASSERT_EQUAL(run("data/scenes/capstan_90.yaml", "ipc", sets, 2, "h_ipc0.h5", &r), 0);
    CU_ASSERT_STRING_EQUAL(r.status, "ok");
    CU_ASSERT_EQUAL(r.breaches, 0);
    long n;
    double *C = read_series("h_ipc0.h5", "contact_energy", &n), *E = read_series("h_ipc0.h5", "total_energy", &n);
    double *K = read_series("h_ipc0.h5", "kinetic_energy", &n), *S = read_series("h_ipc0.h5", "stretch_energy", &n);
    double *B = read_series("h_ipc0.h5", "bend_energy", &n), *G = read_series("h_ipc0.h5", "gravity_energy", &n);
    fprintf(stderr, "\n  ipc, capstan_90 at dhat 2 mm: row 0 contact_energy %.4g J, total %.4g J; row 1 kinetic %.4g J\n",
            C[0], E[0], n > 1 ? K[1] : NAN);
    CU_ASSERT(n == 11);
    CU_ASSERT(C[0] > 1e-3);                  /* the barrier's energy, not h^2 of it (7e-10) */
    CU_ASSERT(n > 1 && K[1] > 1e-3 && K[1] < C[0]); /* the push, paid by it */
    CU_ASSERT(fabs(E[0] - (K[0] + G[0] + S[0] + B[0] + C[0])) <= 1e-12 * fabs(E[0]));
    free(C);
    free(E);
    free(K);
    free(S);
    free(B);
    free(G);
    const char *one[] = {"duration=0.0002"};
    CU_ASSERT_EQUAL(run("data/scenes/capstan_90.yaml", "explicit", one, 1, "h_exp0.h5", &r), 0);
    C = read_series("h_exp0.h5", "contact_energy", &n);
    CU_ASSERT(n == 2 && isnan(C[0]));
    free(C);
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

/* What a method's run ends with, stepped as the run loop steps it (cb_sim.h) with the
 * health check of the default rule after every step. */
typedef struct work_run {
    double e0, e1;     /* total energy at the start and the end */
    double w_method;   /* the sum of the steps' external_work */
    double w_health;   /* the health check's W_ext (adds the pinned vertices' energy change) */
    double p[3];       /* the cloth's momentum at the end */
    double mass;       /* the free vertices' mass */
    int breaches, ok;
    int refused;       /* the method refused the scene at create; why: */
    char why[1100];
} work_run;

static void run_work(const char *solver, const char *text, int steps, work_run *r)
{
    memset(r, 0, sizeof *r);
    cb_sim s;
    cb_health *h = NULL;
    cb_health_rule rule = {CB_HEALTH_ENERGY_FACTOR, CB_HEALTH_MAX_STRAIN};
    if (cb_sim_open(&s, solver, NULL, text, ".", NULL, 0) || cb_health_create(s.w, &rule, NAN, &h, &s.e)) {
        r->refused = 1;
        snprintf(r->why, sizeof r->why, "%s", s.e.message);
        cb_sim_close(&s);
        return;
    }
    r->e0 = cb_metrics_total_energy(s.w, NULL);
    int rc = 0;
    for (int n = 0; n < steps && !rc; n++) {
        rc = cb_sim_step(&s);
        if (rc) break;
        r->w_method += s.info.external_work;
        r->breaches += cb_health_end(h, s.w, &s.info, s.scene->dt, n + 1);
    }
    r->ok = rc == 0;
    r->e1 = cb_metrics_total_energy(s.w, &s.info);
    r->w_health = cb_health_external_work(h);
    for (int i = 0; i < s.w->nv; i++) {
        cb_v3_axpy(r->p, s.w->mass[i], s.w->state.v[i]);
        if (!s.w->pinned[i]) r->mass += s.w->mass[i];
    }
    cb_health_free(&h);
    cb_sim_close(&s);
}

/* A free cloth at rest, no gravity, hit by a frictionless, inelastic plane moving at a
 * constant u = 1 m/s: its only outside force is the plane's, whose impulses all act at
 * the velocity u, so the work the method reports is exactly P . u (P the momentum the
 * plane gave): M u^2 once the plane carries all of the cloth, of which the cloth keeps
 * 1/2 M u^2 (a perfectly inelastic collision loses half). Every method: W = P . u to
 * round-off, the cloth carried (P . u > 0.9 M u^2), E - E0 - W <= 0 (contact may lose
 * energy, never create it) and no breach of the default rule. (pbd and xpbd send the
 * cloth off at 2 u, a bounce despite restitution 0, and acm at 1.55 u: E - E0 - W is
 * 0 and -0.2 W there, never above.) */
static const char plane_push[] =
    "name: plane_push\nduration: 0.03\ndt: 0.001\ngravity: [0, 0, 0]\n"
    "cloth:\n"
    "  grid: {nx: 8, ny: 8, size: [0.2, 0.2], origin: [-0.1, -0.1, 0.006]}\n"
    "  density: 0.1\n  stretch: 1000.0\n  bend: 1.0e-4\n  thickness: 0.002\n"
    "colliders:\n"
    "  - {type: plane, point: [0, 0, 0], normal: [0, 0, 1], friction: 0, restitution: 0, velocity: [0, 0, 1]}\n";

/* The plane's checks on one scene for every method: a method without the capability
 * refuses it, saying why; the others report W = P . u (to 1e-9 of M u^2, or 1e-5 for a
 * method that solves to a tolerance, whose momentum balance holds to that tolerance) and
 * E - E0 - W <= 0. single: also the one-sheet checks (the cloth carried, no breach, the
 * health rule's W the method's alone). */
static void plane_work_checks(const char *text, int single)
{
    for (int m = 0; m < cb_solver_count(); m++) {
        const cb_solver_class *cls = cb_solver_at(m);
        work_run r;
        run_work(cls->name, text, 30, &r);
        if (!(cls->flags & CB_SOLVER_MOVING_COLLIDERS)) { /* refused, saying why */
            CU_ASSERT(r.refused && strstr(r.why, "does not support moving colliders"));
            continue;
        }
        double mu2 = r.mass; /* M u^2, u = 1 m/s */
        double tol = single || !(cls->flags & CB_SOLVER_TOLERANCE) ? 1e-9 : 1e-5;
        CU_ASSERT(r.ok);
        CU_ASSERT(fabs(r.w_method - r.p[2]) <= tol * mu2);
        if (fabs(r.w_method - r.p[2]) > tol * mu2)
            printf("\n  %s: reported work %.9g J, P . u %.9g J\n", cls->name, r.w_method, r.p[2]);
        CU_ASSERT(r.e1 - r.e0 - r.w_health <= 1e-9 * mu2);
        if (!single) continue;
        CU_ASSERT(r.w_health == r.w_method); /* no pins: the method's work alone */
        CU_ASSERT(r.p[2] > 0.9 * mu2);
        CU_ASSERT_EQUAL(r.breaches, 0);
    }
}

static void test_plane_work_every_method(void) { plane_work_checks(plane_push, 1); }

/* The same plane pushing two sheets lying on each other (3 mm apart, self collision on
 * where the method has it): the plane now pushes the upper sheet through the lower one,
 * and a method that resolves the layers after its collider pass (fms, newton: the held
 * vertex's share of a pair's impulse is the plane's, solvers/step_contact.c) must count
 * that share's work too. Every method: W = P . u to round-off (a method that solves to a
 * tolerance, newton: to 1e-5 of M u^2, its momentum balance holding to that tolerance)
 * and E - E0 - W <= 0. */
static const char plane_push_layers[] =
    "name: plane_push_layers\nduration: 0.03\ndt: 0.001\ngravity: [0, 0, 0]\n"
    "cloth:\n"
    "  density: 0.1\n  stretch: 1000.0\n  bend: 1.0e-4\n  thickness: 0.002\n"
    "  pieces:\n"
    "    - {grid: {nx: 8, ny: 8, size: [0.2, 0.2], origin: [-0.1, -0.1, 0.006]}}\n"
    "    - {grid: {nx: 8, ny: 8, size: [0.2, 0.2], origin: [-0.1, -0.1, 0.009]}, translation: [0.004, 0.007, 0]}\n"
    "colliders:\n"
    "  - {type: plane, point: [0, 0, 0], normal: [0, 0, 1], friction: 0, restitution: 0, velocity: [0, 0, 1]}\n";

static void test_plane_work_layers(void) { plane_work_checks(plane_push_layers, 0); }

/* A sheet hanging from its top edge in gravity, the edge's pins swung about a horizontal
 * axis 35 cm above it (angular_velocity 4 rad/s for 0.25 s: one radian), lifting and
 * swinging the cloth. explicit conserves energy, so E - E0 = W to the integrator's error
 * (measured 2e-7 W; 1e-4 W allowed): the check of the rotating pins' work against the
 * energy change. Every method: E - E0 - W <= 3% of W (none creates energy beyond the work
 * the grip did; each is at most 0 here). The Newton-residual estimate this replaced
 * (run files of be3fc2c on the same scene) missed half the grip's work for pbd
 * (E - E0 - W = 1.01 W) and 43% for avgforce, and was off by 3e-4 W for explicit. */
static const char swing[] =
    "name: swing\nduration: 0.25\ndt: 0.001\n"
    "cloth:\n"
    "  grid: {nx: 10, ny: 10, size: [0.3, 0.3], origin: [-0.15, 0.0, 0.0], plane: xz}\n"
    "  density: 0.1\n  stretch: 1000.0\n  bend: 1.0e-4\n  thickness: 0.002\n"
    "  pins: [{select: top, angular_velocity: [4, 0, 0], pivot: [0, 0, 0.35]}]\n";

static void test_rotating_pin_work(void)
{
    for (int m = 0; m < cb_solver_count(); m++) {
        const char *name = cb_solver_at(m)->name;
        work_run r;
        run_work(name, swing, 250, &r);
        CU_ASSERT(r.ok);
        CU_ASSERT(r.w_health > 0);
        CU_ASSERT(r.e1 - r.e0 - r.w_health <= 0.03 * r.w_health);
        if (!strcmp(name, "explicit")) CU_ASSERT(fabs(r.e1 - r.e0 - r.w_health) <= 1e-4 * r.w_health);
        CU_ASSERT_EQUAL(r.breaches, 0);
    }
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
             CB_TEST(test_plane_work_every_method),
             CB_TEST(test_plane_work_layers),
             CB_TEST(test_rotating_pin_work),
             CB_TEST(test_info_relative_drift),
             CB_TEST(test_initial_contact_energy),
             CB_TEST(test_bad_health_keys))
