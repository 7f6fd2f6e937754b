/* tests/test_conformance.c — every registered solver held to the solver interface
 * (core/solver.h, ARCHITECTURE.md "The solver interface"). The tests loop over the
 * registry and ask a method's capabilities (core/solver.h, CB_SOLVER_*), never its
 * name, so a new method gets them without a line here:
 *
 *   - momentum balance: per step, P(t+dt) - P(t) = external_impulse + (free mass) g dt,
 *     with contact (a sphere and a floor) and an attachment (a pinned corner); the
 *     colliders and the pin are fixed, so the work the method reports is 0 exactly;
 *   - free fall: a cloth at rest shape with no colliders moves as one rigid body (every
 *     vertex the same displacement), its centre of mass within the method's O(dt) of
 *     x0 + v0 t + g t^2 / 2;
 *   - free flight: no gravity, a spinning stretched sheet keeps its linear momentum;
 *   - parameters: an unknown key is refused naming it;
 *   - time: a run's last row is at n dt exactly.
 */
#include "cb_test.h"
#include "cb_sim.h"

#include <hdf5.h>

#include "experiments/harness/registry.h"
#include "experiments/harness/run.h"
#include "core/vec3.h"

static const char *contact_scene =
    "name: conf\nduration: 0.2\ndt: 0.005\ngravity: [0, 0, -9.81]\n"
    "cloth:\n  grid: {nx: 8, ny: 8, size: [0.6, 0.6], origin: [-0.3, -0.3, 0.36]}\n"
    "  density: 0.1\n  stretch: 1000\n  bend: 1.0e-4\n  thickness: 0.002\n"
    "  pins: [{indices: [63]}]\n"
    "colliders:\n  - {type: sphere, center: [0, 0, 0.1], radius: 0.25, friction: 0.3}\n"
    "  - {type: plane, point: [0, 0, 0], normal: [0, 0, 1], friction: 0.5}\n";

/* The scene (text) with the solver; a failure fails the test and closes what opened. */
static int opened(cb_sim *sim, const char *solver, const char *scene, const char *const *sets, int nsets)
{
    if (cb_sim_open(sim, solver, NULL, scene, ".", sets, nsets) == 0) return 1;
    CU_FAIL("cannot open the scene");
    cb_sim_close(sim);
    return 0;
}

static double free_mass(const cb_world *w)
{
    double m = 0;
    for (int i = 0; i < w->nv; i++)
        if (w->inv_mass[i] > 0) m += w->mass[i];
    return m;
}

static void momentum(const cb_world *w, double p[3])
{
    p[0] = p[1] = p[2] = 0;
    for (int i = 0; i < w->nv; i++)
        for (int k = 0; k < 3; k++) p[k] += w->mass[i] * w->state.v[i][k];
}

/* Settings a solver needs for a property to hold to round-off, with the reason. Only
 * a solver whose default stops short of the answer on purpose needs one: a method that
 * iterates to a tolerance (CB_SOLVER_TOLERANCE) runs to a tight one. */
static int tight_settings(const cb_solver_class *cls, char *buf, size_t size, const char **sets)
{
    /* a truncated Newton solve leaves a net residual force: sum(grad) = dP - J - m g dt
     * exactly (1e-7 kg m/s here at newton's default tolerance 1e-4, reported per step as
     * the residual); converged, the balance shows whether the impulse is accounted for.
     * Not ipc: its step removes the net residual from the velocities (solvers/ipc.c,
     * momentum_balance: the balance then shows the accounting at any tolerance), and its
     * Newton, linear in contact, stalls near 3e-9 m/s here and ends the step with an error
     * rather than reach 1e-11 */
    if ((cls->flags & CB_SOLVER_TOLERANCE) && strcmp(cls->name, "ipc")) {
        snprintf(buf, size, "solvers.%s.tolerance=1e-11", cls->name);
        sets[0] = buf;
        return 1;
    }
    return 0;
}

/* The momentum a step adds equals the impulse the solver reports plus gravity on the
 * free vertices, to round-off, in contact and with a pin; the fixed colliders and pin do
 * no work (external_work 0 exactly, core/solver.h). */
static void test_momentum_balance(void)
{
    for (int s = 0; s < cb_solver_count(); s++) {
        const char *name = cb_solver_at(s)->name;
        cb_sim sim;
        const char *sets[4];
        char tight[128];
        int nsets = tight_settings(cb_solver_at(s), tight, sizeof tight, sets);
        if (!opened(&sim, name, contact_scene, sets, nsets)) continue;
        cb_world *w = sim.w;
        double mfree = free_mass(w), worst = 0, pmax = 0, contact_steps = 0;
        int worst_step = -1, working = 0;
        long steps = cb_scene_steps(sim.scene);
        for (long n = 0; n < steps; n++) {
            double p0[3], p1[3];
            momentum(w, p0);
            if (cb_sim_step(&sim)) {
                CU_FAIL("step failed");
                break;
            }
            momentum(w, p1);
            double d = 0, J = 0;
            for (int k = 0; k < 3; k++) {
                double r = p1[k] - p0[k] - sim.info.external_impulse[k] - mfree * w->gravity[k] * sim.scene->dt;
                d += r * r;
                J += sim.info.external_impulse[k] * sim.info.external_impulse[k];
                pmax = fmax(pmax, fabs(p1[k]));
            }
            d = sqrt(d);
            if (sim.info.external_work != 0.0) working++;
            if (!(d <= worst)) { worst = d; worst_step = (int)n; }
            if (sqrt(J) > 1e-12) contact_steps++;
        }
        fprintf(stderr, "  %-8s momentum balance: max |dP - J - m g dt| %.3g kg m/s (step %d), max |P| %.3g, "
                "%g steps with impulse\n", name, worst, worst_step, pmax, contact_steps);
        CU_ASSERT(contact_steps > 0);          /* the scene does exercise the impulse */
        CU_ASSERT(worst <= 1e-9 * fmax(pmax, 1e-3) + 1e-12);
        CU_ASSERT_EQUAL(working, 0);           /* fixed colliders and pin: no work */
        cb_sim_close(&sim);
    }
}

static void com(const cb_world *w, double c[3])
{
    double m = 0;
    c[0] = c[1] = c[2] = 0;
    for (int i = 0; i < w->nv; i++) {
        m += w->mass[i];
        for (int k = 0; k < 3; k++) c[k] += w->mass[i] * w->state.x[i][k];
    }
    for (int k = 0; k < 3; k++) c[k] /= m;
}

/* Free fall at rest shape: no force but gravity, so every vertex moves by the same
 * displacement (a solver that makes internal forces out of nothing, or treats
 * vertices unevenly, fails), and the centre of mass follows x0 + v0 t + g t^2/2 within
 * g t dt (the O(dt) of implicit Euler; Verlet and PBD are exact). */
static void test_free_fall(void)
{
    const char *scene =
        "name: fall\nduration: 0.25\ndt: 0.005\ngravity: [0, 0, -9.81]\n"
        "cloth:\n  grid: {nx: 7, ny: 5, size: [0.6, 0.4], origin: [0, 0, 1]}\n"
        "  density: 0.1\n  stretch: 1000\n  bend: 1.0e-4\n  thickness: 0.002\n  velocity: [0.3, -0.2, 1.0]\n";
    for (int s = 0; s < cb_solver_count(); s++) {
        const char *name = cb_solver_at(s)->name;
        cb_sim sim;
        if (!opened(&sim, name, scene, NULL, 0)) continue;
        cb_world *w = sim.w;
        double c0[3];
        com(w, c0);
        double (*xinit)[3] = malloc((size_t)w->nv * sizeof *xinit);
        CU_ASSERT_PTR_NOT_NULL_FATAL(xinit);
        memcpy(xinit, w->state.x, (size_t)w->nv * sizeof *xinit);
        long steps = cb_scene_steps(sim.scene);
        int ok = 1;
        for (long n = 0; n < steps && ok; n++) ok = cb_sim_step(&sim) == 0;
        CU_ASSERT(ok);
        double t = (double)steps * sim.scene->dt, c[3], spread = 0, err = 0;
        com(w, c);
        for (int i = 0; i < w->nv; i++) /* each vertex's displacement against vertex 0's */
            for (int k = 0; k < 3; k++)
                spread = fmax(spread, fabs((w->state.x[i][k] - xinit[i][k]) - (w->state.x[0][k] - xinit[0][k])));
        free(xinit);
        double v0[3] = {0.3, -0.2, 1.0};
        for (int k = 0; k < 3; k++) {
            double want = c0[k] + v0[k] * t + 0.5 * w->gravity[k] * t * t;
            err = fmax(err, fabs(c[k] - want));
        }
        fprintf(stderr, "  %-8s free fall: centre of mass off by %.3g m after %.3g s (bound g t dt = %.3g), "
                "displacements differ by %.3g m\n", name, err, t, 9.81 * t * sim.scene->dt, spread);
        CU_ASSERT(err <= 9.81 * t * sim.scene->dt);
        CU_ASSERT(spread <= 1e-12);
        cb_sim_close(&sim);
    }
}

/* Free flight: no gravity, no colliders, a stretched spinning sheet. Internal forces
 * only, so the linear momentum stays what it was to round-off (angular momentum is
 * printed: implicit Euler and truncated iterations do not keep it exactly). */
static void test_free_flight(void)
{
    const char *scene =
        "name: flight\nduration: 0.1\ndt: 0.005\ngravity: [0, 0, 0]\n"
        "cloth:\n  grid: {nx: 6, ny: 6, size: [0.5, 0.5], origin: [0, 0, 1]}\n"
        "  density: 0.1\n  stretch: 1000\n  bend: 1.0e-3\n  thickness: 0.002\n"
        "  velocity: [0.2, 0.1, -0.3]\n  angular_velocity: [1, 2, 5]\n  initial_stretch: 1.05\n";
    for (int s = 0; s < cb_solver_count(); s++) {
        const char *name = cb_solver_at(s)->name;
        cb_sim sim;
        if (!opened(&sim, name, scene, NULL, 0)) continue;
        double p0[3], p[3], drift = 0, scale = 0; /* scale: sum of m |v|, what round-off acts on */
        momentum(sim.w, p0);
        for (int i = 0; i < sim.w->nv; i++) scale += sim.w->mass[i] * cb_v3_norm(sim.w->state.v[i]);
        long steps = cb_scene_steps(sim.scene);
        for (long n = 0; n < steps; n++) {
            if (cb_sim_step(&sim)) {
                CU_FAIL("step failed");
                break;
            }
            momentum(sim.w, p);
            for (int k = 0; k < 3; k++) drift = fmax(drift, fabs(p[k] - p0[k]));
        }
        fprintf(stderr, "  %-8s free flight: |P - P0| at most %.3g kg m/s (sum m|v| %.3g)\n", name, drift, scale);
        CU_ASSERT(drift <= 1e-11 * scale); /* pbd: 400 substeps of round-off */
        cb_sim_close(&sim);
    }
}

/* Every solver names the model it solves (cb_solver_class.model, the run file's
 * attribute `model`): "<stretch> / bending <kind> / contact <kind>", and a parameter that
 * changes the model changes the name (fms and newton bending, pbd bending, avgforce
 * response). */
static void test_every_solver_names_its_model(void)
{
    const char *scene = "name: m\nduration: 0.1\ndt: 0.005\n"
                        "cloth:\n  grid: {nx: 4, ny: 4, size: [0.5, 0.5], origin: [0, 0, 1]}\n";
    for (int s = 0; s < cb_solver_count(); s++) {
        const cb_solver_class *cls = cb_solver_at(s);
        CU_ASSERT_PTR_NOT_NULL(cls->model);
        cb_sim sim;
        if (!opened(&sim, cls->name, scene, NULL, 0)) continue;
        const char *m = cb_solver_model(cls, sim.solver);
        fprintf(stderr, "  %-8s %s\n", cls->name, m);
        CU_ASSERT(strstr(m, " / bending ") != NULL && strstr(m, " / contact ") != NULL);
        CU_ASSERT(!strncmp(m, "stretch springs", 15) || !strncmp(m, "pbd dimensionless", 17));
        cb_sim_close(&sim);
    }
    const struct { const char *solver, *set, *model; } changes[] = {
        {"newton", NULL, "stretch springs / bending shells / contact projection"},
        {"newton", "solvers.newton.bending=springs", "stretch springs / bending springs / contact projection"},
        {"fms", NULL, "stretch springs / bending quadratic / contact projection"},
        {"pbd", "solvers.pbd.bending=dihedral", "pbd dimensionless / bending dihedral / contact constraints"},
        {"avgforce", "solvers.avgforce.response=none", "stretch springs / bending shells / contact none"},
    };
    for (size_t c = 0; c < sizeof changes / sizeof changes[0]; c++) {
        cb_sim sim;
        const char *sets[1] = {changes[c].set};
        if (!opened(&sim, changes[c].solver, scene, changes[c].set ? sets : NULL, changes[c].set ? 1 : 0)) continue;
        CU_ASSERT_STRING_EQUAL(cb_solver_model(sim.cls, sim.solver), changes[c].model);
        cb_sim_close(&sim);
    }
}

/* An unknown key in a solver's block is refused, naming the key. */
static void test_unknown_key_refused(void)
{
    for (int s = 0; s < cb_solver_count(); s++) {
        const char *name = cb_solver_at(s)->name;
        char set[128];
        snprintf(set, sizeof set, "solvers.%s.no_such_key=1", name);
        const char *sets[] = {set};
        cb_sim sim;
        int rc = cb_sim_world(&sim, NULL, contact_scene, ".", sets, 1);
        CU_ASSERT_EQUAL_FATAL(rc, 0);
        fprintf(stderr, "  %-8s ", name);
        rc = cb_sim_solver(&sim, name);
        CU_ASSERT_EQUAL(rc, CB_ERR_INPUT);
        CU_ASSERT_PTR_NOT_NULL(strstr(sim.e.message, "no_such_key"));
        cb_sim_close(&sim);
    }
}

/* Every numeric parameter a solver reads, set just outside its range, is refused with
 * the range in the message (the record of core/params.h lists the keys and ranges). */
static void test_out_of_range_refused(void)
{
    for (int s = 0; s < cb_solver_count(); s++) {
        const cb_solver_class *cls = cb_solver_at(s);
        cb_sim sim;
        CU_ASSERT_EQUAL_FATAL(cb_sim_world(&sim, NULL, contact_scene, ".", NULL, 0), 0);
        cb_params p = cb_scene_params(sim.scene, cls->name);
        cb_params_record *rec = NULL;
        cb_error e;
        CU_ASSERT_EQUAL_FATAL(cb_params_record_create(&rec, &e), 0);
        p.rec = rec;
        void *self = NULL;
        CU_ASSERT_EQUAL_FATAL(cls->create(sim.w, &p, &self, &e), 0);
        cls->destroy(self);
        cb_sim_close(&sim);
        int tried = 0;
        for (int i = 0; i < cb_params_record_count(rec); i++) {
            const cb_param_entry *en = cb_params_record_at(rec, i);
            char set[256];
            if (en->type == CB_PARAM_DOUBLE && isfinite(en->hi) && en->hi < 1e300)
                snprintf(set, sizeof set, "solvers.%s.%s=%.17g", cls->name, en->key, en->hi + fmax(1.0, fabs(en->hi)));
            else if (en->type == CB_PARAM_DOUBLE && isfinite(en->lo) && en->lo > -1e300)
                snprintf(set, sizeof set, "solvers.%s.%s=%.17g", cls->name, en->key, en->lo - fmax(1.0, fabs(en->lo)));
            else if (en->type == CB_PARAM_INT && en->ihi < 2147483647)
                snprintf(set, sizeof set, "solvers.%s.%s=%d", cls->name, en->key, en->ihi + 1);
            else if (en->type == CB_PARAM_INT && en->ilo > -2147483647)
                snprintf(set, sizeof set, "solvers.%s.%s=%d", cls->name, en->key, en->ilo - 1);
            else
                continue;
            const char *sets[] = {set};
            CU_ASSERT_EQUAL_FATAL(cb_sim_world(&sim, NULL, contact_scene, ".", sets, 1), 0);
            cb_params q = cb_scene_params(sim.scene, cls->name);
            self = NULL;
            int rc = cls->create(sim.w, &q, &self, &sim.e);
            if (rc == 0) cls->destroy(self);
            if (rc != CB_ERR_INPUT || !strstr(sim.e.message, "expected a value in ["))
                fprintf(stderr, "  %s: %s -> %d: %s\n", cls->name, set, rc, sim.e.message);
            CU_ASSERT_EQUAL(rc, CB_ERR_INPUT);
            CU_ASSERT_PTR_NOT_NULL(strstr(sim.e.message, "expected a value in ["));
            CU_ASSERT_PTR_NOT_NULL(strstr(sim.e.message, en->key));
            cb_sim_close(&sim);
            tried++;
        }
        fprintf(stderr, "  %-8s %d numeric parameters refused outside their range\n", cls->name, tried);
        CU_ASSERT(tried > 0);
        cb_params_record_free(&rec);
    }
}

/* The run loop: the last row of a run is at n dt exactly, whatever the solver. */
static void test_time_ends_at_n_dt(void)
{
    char scene[1024]; /* a copy: cb_test_tmp_path's slots are reused by the loop, one per solver */
    snprintf(scene, sizeof scene, "%s", cb_test_write_tmp("conf.yaml", contact_scene));
    for (int s = 0; s < cb_solver_count(); s++) {
        const char *name = cb_solver_at(s)->name;
        char file[64];
        snprintf(file, sizeof file, "conf-%s.h5", name);
        cb_run_def d = cb_default_run_def();
        d.scene_path = scene;
        d.solver = name;
        d.output = cb_test_tmp_path(file);
        const char *sets[] = {"duration=0.07", "dt=0.007"}; /* 0.07/0.007 is not 10 in binary */
        d.sets = sets;
        d.nsets = 2;
        d.write_frames = 0;
        cb_run_result res;
        cb_error e;
        int rc = cb_run(&d, &res, &e);
        if (rc) fprintf(stderr, "  %s: %s\n", name, e.message);
        CU_ASSERT_EQUAL(rc, 0);
        CU_ASSERT_EQUAL(res.steps, 10);
        hid_t f = H5Fopen(d.output, H5F_ACC_RDONLY, H5P_DEFAULT);
        CU_ASSERT_FATAL(f >= 0);
        hid_t ds = H5Dopen(f, "/series/time", H5P_DEFAULT);
        double t[64] = {0};
        hid_t sp = H5Dget_space(ds);
        hsize_t dims[1];
        H5Sget_simple_extent_dims(sp, dims, NULL);
        CU_ASSERT_EQUAL(dims[0], 11);
        if (dims[0] <= 64) H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, t);
        CU_ASSERT_EQUAL(t[10], 10 * 0.007); /* exactly, not a sum of ten dt */
        H5Sclose(sp);
        H5Dclose(ds);
        H5Fclose(f);
    }
}

/* The step contract (core/solver.h, cb_solver_step), for every registered solver: a
 * dt that is not a finite number > 0 and a NULL argument are refused before the method
 * runs (pbd and acm used to take an infinite dt); after a step the time is (n+1) dt,
 * the named stages lie inside the step's wall time and the contact stages make up
 * wall_contact_s exactly. */
static void test_step_contract(void)
{
    const double bad_dt[] = {0.0, -0.01, INFINITY, NAN};
    for (int s = 0; s < cb_solver_count(); s++) {
        const cb_solver_class *cls = cb_solver_at(s);
        cb_sim sim;
        if (!opened(&sim, cls->name, contact_scene, NULL, 0)) continue;
        cb_step_info info;
        cb_error e;
        double x0 = sim.w->state.x[0][0];
        for (size_t k = 0; k < sizeof bad_dt / sizeof bad_dt[0]; k++) {
            e.message[0] = '\0';
            CU_ASSERT_EQUAL(cb_solver_step(cls, sim.solver, sim.w, 0, bad_dt[k], &info, &e), CB_ERR_INPUT);
            CU_ASSERT_PTR_NOT_NULL(strstr(e.message, "dt must be a finite number > 0"));
            CU_ASSERT_PTR_NOT_NULL(strstr(e.message, cls->name));
        }
        CU_ASSERT_EQUAL(cb_solver_step(cls, NULL, sim.w, 0, 0.005, &info, &e), CB_ERR_INPUT);
        CU_ASSERT_EQUAL(cb_solver_step(cls, sim.solver, NULL, 0, 0.005, &info, &e), CB_ERR_INPUT);
        CU_ASSERT_EQUAL(cb_solver_step(cls, sim.solver, sim.w, 0, 0.005, NULL, &e), CB_ERR_INPUT);
        CU_ASSERT_EQUAL(sim.w->state.x[0][0], x0); /* the method did not run */
        CU_ASSERT_EQUAL(sim.w->state.t, 0.0);
        for (long n = 0; n < 3; n++) {
            int rc = cb_solver_step(cls, sim.solver, sim.w, n, 0.007, &info, &e);
            CU_ASSERT_EQUAL(rc, CB_OK);
            if (rc) {
                fprintf(stderr, "  %s: %s\n", cls->name, e.message);
                break;
            }
            CU_ASSERT_EQUAL(sim.w->state.t, (double)(n + 1) * 0.007);
            double sum = 0.0, contact = 0.0;
            for (int k = 0; k < info.nstages; k++) {
                CU_ASSERT(info.stage[k].seconds >= 0.0);
                sum += info.stage[k].seconds;
                if (info.stage[k].contact) contact += info.stage[k].seconds;
            }
            CU_ASSERT(info.nstages > 0 || !(cls->flags & CB_SOLVER_STAGE_TIMES));
            CU_ASSERT(sum <= info.wall_step_s * (1.0 + 1e-12) + 1e-9);
            CU_ASSERT_EQUAL(info.wall_contact_s, contact);
        }
        cb_sim_close(&sim);
    }
}

/* A test method that misbehaves on request, to hold cb_solver_step itself to the
 * contract: a NaN left in the state is caught and named; more stages than the info
 * holds is an error, not silently dropped time; an error from the method is passed on
 * and the time still set. */
typedef struct { int mode; } fake_solver;
static int fake_step(void *self, cb_world *w, double dt, cb_step_info *info, cb_error *err)
{
    (void)dt;
    fake_solver *f = self;
    static const char *const names[] = {"s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9",
                                        "s10", "s11", "s12", "s13", "s14", "s15", "s16", "s17"};
    cb_lap_timer lap;
    cb_lap_start(&lap, info);
    if (f->mode == 1) w->state.v[3][1] = NAN;
    if (f->mode == 2)
        for (int k = 0; k < 18; k++) cb_lap(&lap, names[k]);
    if (f->mode == 3) return CB_FAIL(err, CB_ERR_IO, "fake: failed on purpose");
    cb_lap(&lap, "work");
    cb_lap_contact(&lap, "contact");
    cb_lap_contact(&lap, "contact");
    return CB_OK;
}
static const cb_solver_class fake_class = {.name = "fake", .step = fake_step};

static void test_step_entry_checks(void)
{
    cb_sim sim;
    if (!opened(&sim, "explicit", contact_scene, NULL, 0)) return;
    fake_solver f = {0};
    cb_step_info info;
    cb_error e;
    CU_ASSERT_EQUAL(cb_solver_step(&fake_class, &f, sim.w, 4, 0.01, &info, &e), CB_OK);
    CU_ASSERT_EQUAL(sim.w->state.t, 5 * 0.01);
    CU_ASSERT_EQUAL(info.nstages, 2);
    CU_ASSERT_EQUAL(info.stage[1].contact, 1);
    CU_ASSERT_EQUAL(info.wall_contact_s, info.stage[1].seconds);
    f.mode = 1;
    CU_ASSERT_EQUAL(cb_solver_step(&fake_class, &f, sim.w, 5, 0.01, &info, &e), CB_ERR_NUMERIC);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.message, "vertex 3 "));
    CU_ASSERT_PTR_NOT_NULL(strstr(e.message, "nan"));
    sim.w->state.v[3][1] = 0.0;
    f.mode = 2;
    CU_ASSERT_EQUAL(cb_solver_step(&fake_class, &f, sim.w, 6, 0.01, &info, &e), CB_ERR_INTERNAL); /* the method's fault */
    CU_ASSERT_PTR_NOT_NULL(strstr(e.message, "more than 16 named stages (5 timings dropped)"));
    f.mode = 3;
    CU_ASSERT_EQUAL(cb_solver_step(&fake_class, &f, sim.w, 7, 0.01, &info, &e), CB_ERR_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.message, "failed on purpose"));
    CU_ASSERT_EQUAL(sim.w->state.t, 8 * 0.01);
    cb_sim_close(&sim);
}

/* What a method does not know is NaN in the run file, never a 0 that reads as a
 * measurement: `events` only for an event-based method (CB_SOLVER_EVENTS), the contact
 * stage's figures only for methods that have one (CB_SOLVER_CONTACT_STAGE), and a row 0
 * (before any step) with NaN solver figures for every method. */
static void test_unknown_metrics_are_nan(void)
{
    char scene[1024]; /* a copy: cb_test_tmp_path's slots are reused by the loop, one per solver */
    snprintf(scene, sizeof scene, "%s", cb_test_write_tmp("conf_nan.yaml", contact_scene));
    for (int s = 0; s < cb_solver_count(); s++) {
        const char *name = cb_solver_at(s)->name;
        int events = (cb_solver_at(s)->flags & CB_SOLVER_EVENTS) != 0;
        int stage = (cb_solver_at(s)->flags & CB_SOLVER_CONTACT_STAGE) != 0;
        char file[64];
        snprintf(file, sizeof file, "conf-nan-%s.h5", name);
        cb_run_def d = cb_default_run_def();
        d.scene_path = scene;
        d.solver = name;
        d.output = cb_test_tmp_path(file);
        const char *sets[] = {"duration=0.015"};
        d.sets = sets;
        d.nsets = 1;
        d.write_frames = 0;
        cb_run_result res;
        cb_error e;
        CU_ASSERT_EQUAL_FATAL(cb_run(&d, &res, &e), 0);
        hid_t f = H5Fopen(d.output, H5F_ACC_RDONLY, H5P_DEFAULT);
        CU_ASSERT_FATAL(f >= 0);
        const char *names[] = {"events", "contact_depth_corrected", "residual"};
        double v[3][4];
        for (int k = 0; k < 3; k++) {
            char path[64];
            snprintf(path, sizeof path, "/series/%s", names[k]);
            hid_t ds = H5Dopen(f, path, H5P_DEFAULT);
            CU_ASSERT_FATAL(ds >= 0);
            CU_ASSERT(H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v[k]) >= 0);
            H5Dclose(ds);
        }
        H5Fclose(f);
        for (int k = 0; k < 3; k++) CU_ASSERT(isnan(v[k][0])); /* row 0: no step yet */
        for (int r = 1; r < 4; r++) {
            CU_ASSERT_EQUAL(isnan(v[0][r]) != 0, !events); /* events */
            CU_ASSERT_EQUAL(isnan(v[1][r]) != 0, !stage);  /* the contact stage's depth */
            if ((isnan(v[0][r]) != 0) == !events && (isnan(v[1][r]) != 0) == !stage) continue;
            fprintf(stderr, "  %s row %d: events %g, contact_depth_corrected %g\n", name, r, v[0][r], v[1][r]);
        }
    }
}

/* Every allocation of create, then of the first steps, fails in turn (core/error.h's
 * hook; in create also each alone, cb_alloc_fail_only): each failure returns CB_ERR_NOMEM with a message, never crashes, and under
 * ASan leaks nothing (the suite runs with detect_leaks=1). */
static void test_allocation_failures(void)
{
    for (int s = 0; s < cb_solver_count(); s++) {
        const cb_solver_class *cls = cb_solver_at(s);
        cb_sim sim;
        CU_ASSERT_EQUAL_FATAL(cb_sim_world(&sim, NULL, contact_scene, ".", NULL, 0), 0);
        cb_params p = cb_scene_params(sim.scene, cls->name);
        long creates = 0, steps = 0, bad = 0;
        /* create: the n-th allocation fails and every later one too; then (alone) only the
         * n-th, so an unchecked one is not hidden by a checked one failing after it */
        for (int alone = 0; alone < 2; alone++)
            for (long n = 0;; n++) {
                const char *how = alone ? " alone" : "";
                void *self = NULL;
                cb_error e;
                cb_error_clear(&e);
                if (alone)
                    cb_alloc_fail_only(n);
                else
                    cb_alloc_fail_after(n);
                int rc = cls->create(sim.w, &p, &self, &e);
                long used = cb_alloc_count();
                cb_alloc_fail_after(-1);
                if (rc == 0) {
                    cls->destroy(self);
                    if (used <= n) break; /* every allocation succeeded: all paths tried */
                    bad++;                /* a failed allocation went unnoticed */
                    fprintf(stderr, "  %s: create succeeded although allocation %ld%s failed\n", cls->name, n + 1,
                            how);
                    continue;
                }
                creates += !alone;
                if (rc != CB_ERR_NOMEM || !e.message[0]) {
                    bad++;
                    fprintf(stderr, "  %s: create with allocation %ld%s failing returned %d: %s\n", cls->name, n + 1,
                            how, rc, e.message);
                }
                if (n > 100000) break;
            }
        for (long n = 0;; n++) { /* the first two steps: the n-th allocation fails */
            void *self = NULL;
            cb_error e;
            CU_ASSERT_EQUAL_FATAL(cls->create(sim.w, &p, &self, &e), 0);
            cb_world_apply_pins(sim.w, 0.0);
            cb_step_info info;
            cb_alloc_fail_after(n);
            int rc = 0;
            for (int k = 0; k < 2 && !rc; k++) {
                rc = cb_solver_step(cls, self, sim.w, k, sim.scene->dt, &info, &e);
            }
            long used = cb_alloc_count();
            cb_alloc_fail_after(-1);
            cls->destroy(self);
            /* the world is reused: put it back at rest */
            memcpy(sim.w->state.x, sim.w->mesh->x, (size_t)sim.w->nv * sizeof *sim.w->state.x);
            memset(sim.w->state.v, 0, (size_t)sim.w->nv * sizeof *sim.w->state.v);
            sim.w->state.t = 0;
            if (rc == 0 && used <= n) break;
            if (rc == 0) {
                bad++;
                fprintf(stderr, "  %s: step succeeded although allocation %ld failed\n", cls->name, n + 1);
                continue;
            }
            steps++;
            if (rc != CB_ERR_NOMEM || !e.message[0]) {
                bad++;
                fprintf(stderr, "  %s: step with allocation %ld failing returned %d: %s\n", cls->name, n + 1, rc,
                        e.message);
            }
            if (n > 100000) break;
        }
        fprintf(stderr, "  %-8s %ld allocation failures in create, %ld in the first steps; %ld handled wrongly\n",
                cls->name, creates, steps, bad);
        CU_ASSERT_EQUAL(bad, 0);
        cb_sim_close(&sim);
    }
}

CB_TEST_MAIN("conformance",
             CB_TEST(test_momentum_balance),
             CB_TEST(test_free_fall),
             CB_TEST(test_free_flight),
             CB_TEST(test_every_solver_names_its_model),
             CB_TEST(test_unknown_key_refused),
             CB_TEST(test_out_of_range_refused),
             CB_TEST(test_time_ends_at_n_dt),
             CB_TEST(test_step_contract),
             CB_TEST(test_step_entry_checks),
             CB_TEST(test_unknown_metrics_are_nan),
             CB_TEST(test_allocation_failures))
