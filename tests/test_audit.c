/* tests/test_audit.c — the continuous audit (experiments/harness/audit.h): a sheet that tunnels
 * through a thin box in one step leaves a clean end state but is counted; two layers
 * that pass through each other within a step are counted, a rigid motion of the same
 * cloth is not; a knot that takes a path around a collider clears the chord that goes
 * through it; a non-finite vertex counts for nothing; and the program reports it. */
#include "cb_test.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cb_sim.h"
#include "experiments/harness/audit.h"
#include "experiments/harness/metrics.h"
#include "experiments/harness/run.h"
#include "core/vec3.h"

/* A 6 x 6 sheet (0.2 m) 0.2 m above a 1 cm thick box, falling at 200 m/s, no gravity:
 * at dt = 2 ms it is 0.2 m below the box one step later. explicit with one substep
 * projects only at the end of its substep, so it tunnels. */
static const char *tunnel =
    "name: tunnel\nduration: 0.004\ndt: 0.002\ngravity: [0, 0, 0]\n"
    "cloth: {grid: {nx: 6, ny: 6, size: [0.2, 0.2], origin: [-0.1, -0.1, 0.2]}, velocity: [0, 0, -200]}\n"
    "colliders:\n  - {type: box, center: [0, 0, 0], size: [1, 1, 0.01]}\n"
    "solvers:\n  explicit: {substeps: 1}\n";

static void test_tunnelling_sheet_is_counted(void)
{
    cb_sim s;
    CU_ASSERT_FATAL(cb_sim_open(&s, "explicit", NULL, tunnel, NULL, NULL, 0) == 0);
    cb_audit *a = NULL;
    CU_ASSERT_FATAL(cb_audit_create(s.w, &a, &s.e) == 0);
    cb_audit_begin(a, s.w);
    CU_ASSERT_FATAL(cb_sim_step(&s) == 0);
    long self = -1, coll = -1;
    CU_ASSERT_FATAL(cb_audit_end(a, s.w, &self, &coll, &s.e) == 0);
    cb_metrics m;
    cb_metrics_compute(s.w, &s.info, s.scene->dt, 0.0, &m);
    CU_ASSERT(s.w->state.x[0][2] < -0.1);       /* it went through */
    CU_ASSERT(m.collider_penetrations == 0);    /* and the end state is clean */
    CU_ASSERT(coll == s.w->nv);                 /* every vertex crossed the box */
    CU_ASSERT(self == 0);                       /* a translating sheet never meets itself */
    cb_audit_free(&a);
    CU_ASSERT(a == NULL);
    cb_sim_close(&s);
}

/* A 9 x 3 strip folded in two: columns 5..8 lie over columns 3..0, 2 cm above, shifted
 * off the lower grid's lines (so no crossing is a degenerate touch). */
static const char *strip =
    "name: strip\nduration: 0.01\ndt: 0.01\ngravity: [0, 0, 0]\n"
    "cloth: {grid: {nx: 9, ny: 3, size: [0.8, 0.2], origin: [0, 0, 0]}}\n";

static void fold(cb_world *w, double lift)
{
    for (int j = 0; j < 3; j++)
        for (int i = 5; i < 9; i++) {
            double *x = w->state.x[i + 9 * j];
            x[0] = 0.1 * (8 - i) + 0.013; /* over column 8 - i */
            x[1] = 0.1 * j + 0.007;
            x[2] = lift;
        }
}

static long self_crossings_after(cb_world *w, double lift0, double lift1, const double shift[3])
{
    cb_error e;
    cb_audit *a = NULL;
    if (cb_audit_create(w, &a, &e)) return -1;
    fold(w, lift0);
    cb_audit_begin(a, w);
    fold(w, lift1);
    for (int i = 0; i < w->nv; i++) cb_v3_add(w->state.x[i], w->state.x[i], shift);
    w->state.t += 0.01;
    long self = -1, coll = -1;
    int rc = cb_audit_end(a, w, &self, &coll, &e);
    cb_audit_free(&a);
    for (int i = 0; i < w->nv; i++) cb_v3_sub(w->state.x[i], w->state.x[i], shift);
    return rc ? -1 : self;
}

static void test_layers_passing_through_each_other(void)
{
    cb_sim s;
    CU_ASSERT_FATAL(cb_sim_world(&s, NULL, strip, NULL, NULL, 0) == 0);
    double none[3] = {0, 0, 0}, far[3] = {3.0, -2.0, 5.0};
    long through = self_crossings_after(s.w, 0.02, -0.02, none);
    CU_ASSERT(through > 0);
    CU_ASSERT(self_crossings_after(s.w, 0.02, 0.03, none) == 0);  /* the layers part */
    CU_ASSERT(self_crossings_after(s.w, 0.02, 0.02, far) == 0);   /* a rigid jump */
    CU_ASSERT(self_crossings_after(s.w, 0.02, -0.02, far) == through); /* the same, seen moving */
    /* both ends clean: the upper layer ends under the lower one without intersecting it */
    fold(s.w, -0.02);
    cb_metrics m;
    cb_metrics_compute(s.w, NULL, 0.01, 0.0, &m);
    cb_metrics_compute_expensive(s.w, NULL, &m);
    CU_ASSERT(m.self_intersections == 0);
    cb_sim_close(&s);
}

/* A signal during the audit ends it with CB_ERR_INTERRUPTED, which the run loop turns
 * into the status `interrupted` (a `timeout` run went on auditing for 18 s and ended
 * `diverged`: issue 33); once the flag is cleared the same step is counted as before. */
static void test_interrupt_stops_the_audit(void)
{
    cb_sim s;
    CU_ASSERT_FATAL(cb_sim_world(&s, NULL, strip, NULL, NULL, 0) == 0);
    cb_audit *a = NULL;
    CU_ASSERT_FATAL(cb_audit_create(s.w, &a, &s.e) == 0);
    for (int flag = 1; flag >= 0; flag--) {
        fold(s.w, 0.02);
        s.w->state.t = 0;
        cb_audit_begin(a, s.w);
        fold(s.w, -0.02);
        s.w->state.t = 0.01;
        if (flag) cb_interrupt_request();
        long self = -1, coll = -1;
        cb_error e;
        cb_error_clear(&e);
        int rc = cb_audit_end(a, s.w, &self, &coll, &e);
        cb_interrupt_clear();
        CU_ASSERT_EQUAL(rc, flag ? CB_ERR_INTERRUPTED : 0);
        CU_ASSERT(flag ? strstr(e.message, "audit: interrupted by a signal") != NULL : self > 0);
    }
    cb_audit_free(&a);
    cb_sim_close(&s);
}

/* The same through the program: a signal while the audit works ends the run
 * `interrupted`. The one step of this scene is quick for the solver (every vertex is a
 * pin) and long for the audit: the pins turn the whole 120 x 120 sheet by one radian
 * within the step, so every triangle's swept box meets every other's (the old audit
 * spent minutes on it, then ended the one-step run `ok`). The test waits for an event,
 * not a time: the progress bar "step 0/1" is drawn after the run's last look at the flag
 * before the step, and the signal goes then; it lands in the short step or in the audit,
 * and only the audit can see it before the run ends. */
static void test_signal_during_the_audit(void)
{
    const char *scene = cb_test_write_tmp("spin_all.yaml",
        "name: spin_all\nduration: 0.01\ndt: 0.01\ngravity: [0, 0, 0]\naudit: true\n"
        "cloth:\n  grid: {nx: 120, ny: 120, size: [1, 1], origin: [-0.5, -0.5, 0]}\n"
        "  pins:\n    - {box: {min: [-1, -1, -1], max: [1, 1, 1]}, angular_velocity: [0, 0, 100]}\n");
    const char *path = cb_test_tmp_path("spin_all.h5");
    remove(path);
    const char *args[] = {"run", scene, "--solver", "explicit", "-o", path, NULL};
    int tty;
    pid_t pid = cb_test_spawn_tty(&tty, args);
    CU_ASSERT_FATAL(pid > 0);
    int in_step = cb_test_read_until(tty, "step 0/1");
    if (in_step) kill(pid, SIGINT);
    cb_test_read_until(tty, NULL);
    close(tty);
    int st = 0;
    CU_ASSERT_EQUAL(waitpid(pid, &st, 0), pid);
    CU_ASSERT(in_step);
    CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 1);
    static char out[16384];
    CU_ASSERT(cb_test_clothbench(out, sizeof out, 1, "info %s", path) == 0);
    const char *want = "status     interrupted: step 1 (t = 0.01 s): audit: interrupted by a signal";
    if (!strstr(out, want)) fprintf(stderr, "  %.600s\n", out);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, want));
}

static const char *ball =
    "name: ball\nduration: 0.01\ndt: 0.01\ngravity: [0, 0, 0]\n"
    "cloth: {grid: {nx: 2, ny: 2, size: [0.1, 0.1], origin: [-1, -1, 0]}}\n"
    "colliders:\n  - {type: sphere, center: [0, 0, 0], radius: 0.5}\n";

/* Vertex 0 goes from (-1, -1, 0) to (1, 1, 0): the chord passes the sphere's centre,
 * the path through the knot (1, -1, 0) stays outside. A NaN vertex is not counted. */
static void test_knots_and_nan(void)
{
    cb_sim s;
    CU_ASSERT_FATAL(cb_sim_world(&s, NULL, ball, NULL, NULL, 0) == 0);
    cb_world *w = s.w;
    cb_audit *a = NULL;
    CU_ASSERT_FATAL(cb_audit_create(w, &a, &s.e) == 0);
    for (int with_knot = 0; with_knot < 2; with_knot++) {
        cb_v3_set(w->state.x[0], -1, -1, 0);
        w->state.t = 0;
        cb_audit_begin(a, w);
        double k[3] = {1, -1, 0};
        if (with_knot) cb_audit_knot(a, 0, 0.005, k);
        cb_v3_set(w->state.x[0], 1, 1, 0);
        w->state.t = 0.01;
        long self = -1, coll = -1;
        CU_ASSERT(cb_audit_end(a, w, &self, &coll, &s.e) == 0);
        CU_ASSERT(coll == (with_knot ? 0 : 1));
    }
    cb_v3_set(w->state.x[0], -1, -1, 0);
    w->state.t = 0;
    cb_audit_begin(a, w);
    w->state.x[0][0] = NAN;
    w->state.t = 0.01;
    long self = -1, coll = -1;
    CU_ASSERT(cb_audit_end(a, w, &self, &coll, &s.e) == 0);
    CU_ASSERT(coll == 0 && self == 0);
    cb_audit_free(&a);
    cb_sim_close(&s);
}

/* The program: `run --audit` records the crossings and `info` reports them; without
 * the audit they are not computed (NaN) and `info` says so. */
static void test_program_reports_the_audit(void)
{
    const char *scene = cb_test_write_tmp("tunnel.yaml", tunnel);
    const char *run = cb_test_tmp_path("tunnel.h5");
    static char out[16384];
    CU_ASSERT(cb_test_clothbench(out, sizeof out, 1, "run %s --solver explicit --audit -q -o %s", scene, run) == 0);
    CU_ASSERT(cb_test_clothbench(out, sizeof out, 1, "info %s", run) == 0);
    CU_ASSERT(strstr(out, "crossings in steps: 36 (self 0, colliders 36)") != NULL);
    if (!strstr(out, "crossings in steps: 36")) fprintf(stderr, "%s\n", out);
    CU_ASSERT(cb_test_clothbench(out, sizeof out, 1, "run %s --solver explicit -q -o %s", scene, run) == 0);
    CU_ASSERT(cb_test_clothbench(out, sizeof out, 1, "info %s", run) == 0);
    CU_ASSERT(strstr(out, "crossings in steps: not audited") != NULL);
}

/* The harness allocates through core/error.h's hook (cb_malloc ...), so fault
 * injection reaches the run loop, the metrics and the audit: every allocation of a short
 * audited run (acm: path knots) fails in turn, and each run ends with 0 (a metric that
 * cannot be computed is NaN) or CB_ERR_NOMEM with a message, never a crash (and, under
 * ASan, no leak). The audit's and the metrics' allocations are among those counted. */
static void test_run_allocation_failures(void)
{
    const char *scene = cb_test_write_tmp("audit_oom.yaml",
        "name: oom\nduration: 0.01\ndt: 0.005\naudit: true\n"
        "cloth: {grid: {nx: 4, ny: 4, size: [0.2, 0.2], origin: [-0.1, -0.1, 0.01]}}\n"
        "colliders:\n  - {type: plane, point: [0, 0, 0], normal: [0, 0, 1]}\n");
    char path[1024];
    snprintf(path, sizeof path, "%s", scene);
    long total = -1, failed = 0, bad = 0;
    for (long n = 0; n < 100000; n++) {
        cb_run_def d = cb_default_run_def();
        d.scene_path = path;
        d.solver = "acm";
        cb_run_result res;
        cb_error e;
        cb_error_clear(&e);
        cb_alloc_count();
        cb_alloc_fail_after(n);
        int rc = cb_run(&d, &res, &e);
        long used = cb_alloc_count();
        cb_alloc_fail_after(-1);
        if (rc == 0 && used <= n) {
            total = used;
            break;
        }
        failed++;
        if (rc != 0 && (rc != CB_ERR_NOMEM || !e.message[0])) {
            bad++;
            fprintf(stderr, "  allocation %ld failing: %d: %s\n", n + 1, rc, e.message);
        }
    }
    fprintf(stderr, "  %ld allocations in the run, each failed in turn: %ld handled wrongly\n", total, bad);
    CU_ASSERT(total > 0);
    CU_ASSERT(failed == total);
    CU_ASSERT_EQUAL(bad, 0);
}

CB_TEST_MAIN("audit",
             CB_TEST(test_tunnelling_sheet_is_counted),
             CB_TEST(test_layers_passing_through_each_other),
             CB_TEST(test_interrupt_stops_the_audit),
             CB_TEST(test_signal_during_the_audit),
             CB_TEST(test_knots_and_nan),
             CB_TEST(test_program_reports_the_audit),
             CB_TEST(test_run_allocation_failures))
