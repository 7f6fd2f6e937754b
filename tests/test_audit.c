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

/* The folded strip's upper layer on a path of knots over a 10 ms step from lift 0.02:
 * knot k at lift lifts[k] (times evenly inside the step), the end at `end`. The audit
 * with the piece bound on or off (exhaustive); -1 on error. */
static long self_crossings_on_path(cb_world *w, const double *lifts, int n, double end, int exhaustive)
{
    cb_error e;
    cb_audit *a = NULL;
    if (cb_audit_create(w, &a, &e)) return -1;
    cb_audit_set_exhaustive(a, exhaustive);
    fold(w, 0.02);
    w->state.t = 0;
    cb_audit_begin(a, w);
    for (int k = 0; k < n; k++) {
        fold(w, lifts[k]);
        for (int j = 0; j < 3; j++)
            for (int i = 5; i < 9; i++) cb_audit_knot(a, i + 9 * j, 0.01 * (k + 1) / (n + 1), w->state.x[i + 9 * j]);
    }
    fold(w, end);
    w->state.t = 0.01;
    long self = -1, coll = -1;
    int rc = cb_audit_end(a, w, &self, &coll, &e);
    cb_audit_free(&a);
    return rc ? -1 : self;
}

/* A crossing in a middle piece of a path only: the upper layer rises (piece 0), dives
 * through the lower one (piece 1), comes back up (piece 2) and rises again (piece 3);
 * neither the first and last pieces nor the chord from start to end cross. The path is
 * counted, with and without the piece bound alike; the chord, and the same path with
 * the dive stopping short of the lower layer, are not. */
static void test_crossing_in_a_middle_piece(void)
{
    cb_sim s;
    CU_ASSERT_FATAL(cb_sim_world(&s, NULL, strip, NULL, NULL, 0) == 0);
    const double dive[3] = {0.025, -0.02, 0.025}, shallow[3] = {0.025, 0.01, 0.025};
    long through = self_crossings_on_path(s.w, dive, 3, 0.03, 0);
    CU_ASSERT(through > 0);
    CU_ASSERT_EQUAL(self_crossings_on_path(s.w, dive, 3, 0.03, 1), through);
    CU_ASSERT_EQUAL(self_crossings_on_path(s.w, dive, 0, 0.03, 0), 0);    /* the chord */
    CU_ASSERT_EQUAL(self_crossings_on_path(s.w, shallow, 3, 0.03, 0), 0); /* no dive */
    /* the middle pieces alone cross as many pairs (the same pairs go through the lower
     * layer on the way down) */
    const double down[1] = {-0.02};
    CU_ASSERT_EQUAL(self_crossings_on_path(s.w, down, 1, 0.025, 0), through);
    cb_sim_close(&s);
}

static uint64_t path_rng = 0x2545f4914f6cdd1dULL;

/* The piece bound spares only pieces whose CCD finds nothing: on random paths of many
 * pieces (each vertex of the folded strip, both layers, with 0 to 8 knots at its own
 * times, acm's case, or at times all vertices share, ipc's; every knot and the end
 * jittered by up to 1.5 cm about the fold, so that some pairs cross in some pieces and
 * not others), the self crossings with the bound equal those of every piece through
 * the CCD. Skipping a piece can only lose a crossing, so equal counts mean that no
 * crossing pair was lost; the bound must also spare pieces (else it tests nothing). */
static void test_piece_bound_loses_no_crossing(void)
{
    cb_sim s;
    CU_ASSERT_FATAL(cb_sim_world(&s, NULL, strip, NULL, NULL, 0) == 0);
    cb_world *w = s.w;
    cb_audit *a[2] = {NULL, NULL};
    CU_ASSERT_FATAL(cb_audit_create(w, &a[0], &s.e) == 0 && cb_audit_create(w, &a[1], &s.e) == 0);
    cb_audit_set_exhaustive(a[1], 1);
    double (*base)[3] = calloc((size_t)w->nv, sizeof *base), (*end)[3] = calloc((size_t)w->nv, sizeof *end);
    CU_ASSERT_FATAL(base && end);
    long total = 0, differ = 0, runs = 40;
    for (long r = 0; r < runs; r++) {
        int shared = r % 2; /* odd runs: every vertex's knots at the same times */
        int nshared = 1 + (int)(8 * cb_test_uniform(&path_rng));
        fold(w, 0.02);
        memcpy(base, w->state.x, (size_t)w->nv * sizeof *base);
        w->state.t = 0;
        for (int q = 0; q < 2; q++) cb_audit_begin(a[q], w);
        for (int i = 0; i < w->nv; i++) {
            int n = shared ? nshared : (int)(9 * cb_test_uniform(&path_rng));
            double t = 0;
            for (int k = 0; k < n; k++) {
                t = shared ? 0.01 * (k + 1) / (n + 1) : t + (0.01 - t) * 0.5 * cb_test_uniform(&path_rng);
                double x[3];
                for (int c = 0; c < 3; c++) x[c] = base[i][c] + 0.015 * (2 * cb_test_uniform(&path_rng) - 1);
                for (int q = 0; q < 2; q++) cb_audit_knot(a[q], i, t, x);
            }
            for (int c = 0; c < 3; c++) end[i][c] = base[i][c] + 0.015 * (2 * cb_test_uniform(&path_rng) - 1);
        }
        memcpy(w->state.x, end, (size_t)w->nv * sizeof *end);
        w->state.t = 0.01;
        long self[2] = {-1, -1}, coll = -1;
        for (int q = 0; q < 2; q++) CU_ASSERT(cb_audit_end(a[q], w, &self[q], &coll, &s.e) == 0);
        total += self[1];
        differ += self[0] != self[1];
    }
    long checked[2], spared[2];
    for (int q = 0; q < 2; q++) cb_audit_pieces(a[q], &checked[q], &spared[q]);
    fprintf(stderr, "  %ld random paths: %ld self crossings, %ld runs differ; bound: %ld pieces checked, %ld spared "
            "(exhaustive: %ld checked)\n", runs, total, differ, checked[0], spared[0], checked[1]);
    CU_ASSERT(total > 0);
    CU_ASSERT_EQUAL(differ, 0);
    CU_ASSERT(spared[0] > 0 && spared[1] == 0);
    CU_ASSERT_EQUAL(checked[0] + spared[0], checked[1]);
    free(base);
    free(end);
    for (int q = 0; q < 2; q++) cb_audit_free(&a[q]);
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
    CU_ASSERT(strstr(out, "crossings in steps: 36 (self 0, colliders 36: vertices 36, edges 0, triangles 0)") != NULL);
    if (!strstr(out, "crossings in steps: 36")) fprintf(stderr, "%s\n", out);
    CU_ASSERT(cb_test_clothbench(out, sizeof out, 1, "run %s --solver explicit -q -o %s", scene, run) == 0);
    CU_ASSERT(cb_test_clothbench(out, sizeof out, 1, "info %s", run) == 0);
    CU_ASSERT(strstr(out, "crossings in steps: not audited") != NULL);
}

/* ---- edges and triangles that cross a collider between their vertices ---- */

/* A 2 x 2 grid: vertices 0 (i 0, j 0), 1 (1, 0), 2 (0, 1), 3 (1, 1), two triangles. */
/* one step of 10 ms without gravity */
#define STILL "duration: 0.01\ndt: 0.01\ngravity: [0, 0, 0]\n"
#define SQUARE "cloth: {grid: {nx: 2, ny: 2, size: [0.1, 0.1], origin: [0, 0, 0]}}\n"
/* a blade: 2 cm long in x, 1 cm thin in y and 1 cm tall, far thinner than the cloth's edges */
#define BLADE "{type: box, center: [0, 0, 0], size: [0.02, 0.01, 0.01]"

/* Counts of the audited step (10 ms from t = 0) that takes the cloth from `from` to `to`:
 * the collider pass's vertices, edges and triangles and the self crossings, in n[4];
 * 0 or the error. */
static int audited_move(cb_world *w, const double (*from)[3], const double (*to)[3], long n[4])
{
    cb_error e;
    cb_audit *a = NULL;
    int rc = cb_audit_create(w, &a, &e);
    if (rc) return rc;
    for (int i = 0; i < w->nv; i++) cb_v3_copy(w->state.x[i], from[i]);
    w->state.t = 0;
    cb_audit_begin(a, w);
    for (int i = 0; i < w->nv; i++) cb_v3_copy(w->state.x[i], to[i]);
    w->state.t = 0.01;
    rc = cb_audit_end(a, w, &n[3], &n[0], &e);
    cb_audit_collider_primitives(a, &n[1], &n[2]);
    cb_audit_free(&a);
    return rc;
}

/* The square's four vertices at (x, y) pairs xy[4][2], all at height z. */
static void square_at(double (*x)[3], const double xy[4][2], double z)
{
    for (int i = 0; i < 4; i++) cb_v3_set(x[i], xy[i][0], xy[i][1], z);
}

/* Edge 0-1 straddles the blade (y = -5 cm and +5 cm at x = 0); the rest of the cloth is
 * 20 cm away in x, so only that edge can meet the blade. */
static const double straddle[4][2] = {{0, -0.05}, {0, 0.05}, {0.2, -0.05}, {0.2, 0.05}};

static void counts_of_fall(const char *scene, const double xy[4][2], double z0, double z1, long n[4])
{
    cb_sim s;
    n[0] = n[1] = n[2] = n[3] = -1;
    if (cb_sim_world(&s, NULL, scene, NULL, NULL, 0)) return;
    double from[4][3], to[4][3];
    square_at(from, xy, z0);
    square_at(to, xy, z1);
    if (audited_move(s.w, (const double (*)[3])from, (const double (*)[3])to, n)) n[0] = n[1] = n[2] = n[3] = -1;
    cb_sim_close(&s);
}

/* The fall's collider counts (vertices, edges, triangles) are v, e, f. */
static void expect_fall(const char *scene, const double xy[4][2], double z0, double z1, long v, long e, long f)
{
    long n[4];
    counts_of_fall(scene, xy, z0, z1, n);
    CU_ASSERT_EQUAL(n[0], v);
    CU_ASSERT_EQUAL(n[1], e);
    CU_ASSERT_EQUAL(n[2], f);
    if (n[0] != v || n[1] != e || n[2] != f) fprintf(stderr, "  %s: %ld %ld %ld\n", scene, n[0], n[1], n[2]);
}

/* An edge falls through a blade: both its vertices miss the blade (the vertex count, all
 * the audit had, is 0), the edge passes through it. */
static void test_edge_through_a_blade(void)
{
    /* no vertex went inside, the one straddling edge did, its triangles count through
     * the edge only */
    expect_fall("name: e\n" STILL SQUARE "colliders:\n  - " BLADE "}\n", straddle, 0.1, -0.1, 0, 1, 0);
    /* a fall that stops 5 mm above the blade crosses nothing */
    expect_fall("name: e\n" STILL SQUARE "colliders:\n  - " BLADE "}\n", straddle, 0.1, 0.01, 0, 0, 0);
}

/* A triangle falls onto a nail (a vertical capsule, radius 5 mm, tip at the origin) that
 * is thinner than it: the vertices pass on every side, no edge comes within 1 cm of the
 * nail's axis, and the tip goes through the face. */
static void test_face_pierced_by_a_nail(void)
{
    static const double around[4][2] = {{-0.01, -0.07}, {0.09, -0.07}, {-0.01, 0.03}, {0.09, 0.03}};
    expect_fall("name: f\n" STILL SQUARE "colliders:\n  - {type: capsule, p0: [0, 0, -0.5], p1: [0, 0, 0], radius: 0.005}\n",
                around, 0.1, -0.1, 0, 0, 1); /* the one triangle over the nail */
}

/* A cloth resting on the blade (1 mm above its top, sliding 1 cm and settling 0.5 mm in
 * the step): nothing goes inside, nothing is counted. */
static void test_resting_on_a_blade_counts_nothing(void)
{
    static const double on[4][2] = {{-0.05, -0.05}, {0.05, -0.05}, {-0.05, 0.05}, {0.05, 0.05}};
    cb_sim s;
    CU_ASSERT_FATAL(cb_sim_world(&s, NULL, "name: r\n" STILL SQUARE "colliders:\n  - " BLADE "}\n",
                                 NULL, NULL, 0) == 0);
    double from[4][3], to[4][3];
    square_at(from, on, 0.0065);
    square_at(to, on, 0.006);
    for (int i = 0; i < 4; i++) to[i][0] += 0.01;
    long n[4];
    CU_ASSERT_FATAL(audited_move(s.w, (const double (*)[3])from, (const double (*)[3])to, n) == 0);
    CU_ASSERT(n[0] == 0 && n[1] == 0 && n[2] == 0 && n[3] == 0);
    cb_sim_close(&s);
}

/* Moving colliders: a blade rising at 20 m/s through a cloth at rest (it goes from 10 cm
 * below to 10 cm above within the step), and a spinning wire (a capsule turning about its
 * own axis) that an edge falls through. */
static void test_moving_and_spinning_colliders(void)
{
    expect_fall("name: m\n" STILL SQUARE "colliders:\n  - {type: box, center: [0, 0, -0.1], "
                "size: [0.02, 0.01, 0.01], velocity: [0, 0, 20]}\n", straddle, 0.0, 0.0, 0, 1, 0);
    /* the same blade at rest under the same cloth: nothing */
    expect_fall("name: m\n" STILL SQUARE "colliders:\n  - {type: box, center: [0, 0, -0.1], "
                "size: [0.02, 0.01, 0.01]}\n", straddle, 0.0, 0.0, 0, 0, 0);
    expect_fall("name: m\n" STILL SQUARE "colliders:\n  - {type: capsule, p0: [-0.01, 0, 0], "
                "p1: [0.01, 0, 0], radius: 0.003, angular_velocity: [50, 0, 0]}\n", straddle, 0.1, -0.1, 0, 1, 0);
}

/* Mesh colliders: a blade (an open quad in the plane y = 0) that an edge falls through
 * (edge-edge CCD against its top edge), and a needle (one thin triangle standing on its
 * base, apex at the origin) whose apex goes through a face (vertex-triangle CCD). */
static void test_mesh_colliders(void)
{
    const char *blade = cb_test_write_tmp("audit_blade.obj", "v -0.01 0 -0.05\nv 0.01 0 -0.05\nv 0.01 0 0.05\n"
                                                             "v -0.01 0 0.05\nf 1 2 3\nf 1 3 4\n");
    const char *needle = cb_test_write_tmp("audit_needle.obj", "v -0.002 0 -0.5\nv 0.002 0 -0.5\nv 0 0 0\nf 1 2 3\n");
    static const double around[4][2] = {{-0.01, -0.07}, {0.09, -0.07}, {-0.01, 0.03}, {0.09, 0.03}};
    char scene[2048];
    snprintf(scene, sizeof scene, "name: mb\n" STILL SQUARE "colliders:\n  - {type: mesh, file: %s}\n", blade);
    expect_fall(scene, straddle, 0.1, -0.1, 0, 1, 0);
    expect_fall(scene, straddle, 0.1, 0.06, 0, 0, 0); /* stops 1 cm above it */
    snprintf(scene, sizeof scene, "name: mn\n" STILL SQUARE "colliders:\n  - {type: mesh, file: %s}\n", needle);
    expect_fall(scene, around, 0.1, -0.1, 0, 0, 1);
}

/* A cloth hanging on a blade and one cut through by it must read differently. Hanging
 * (a penalty method's rest: one vertex 4 mm into the blade, the others below it on one
 * side): collider_max_depth 4 to 5 mm, no cut edge. Cut (the blade through the middle of an edge,
 * both vertices 5 cm to its sides): collider_max_depth 5 mm, the blade's half-thickness,
 * hardly different, but collider_cut_edges 1; and the audited fall that cut it counts
 * the edge, where the vertex count alone saw nothing. */
static void test_hanging_and_cut_read_differently(void)
{
    cb_sim s;
    CU_ASSERT_FATAL(cb_sim_world(&s, NULL, "name: c\n" STILL SQUARE "colliders:\n  - " BLADE "}\n",
                                 NULL, NULL, 0) == 0);
    cb_world *w = s.w;
    cb_metrics hang, cut;
    double hanging[4][3] = {{0, 0, 0.001}, {0, 0.05, -0.05}, {0.2, 0, 0.001}, {0.2, 0.05, -0.05}};
    for (int i = 0; i < 4; i++) cb_v3_copy(w->state.x[i], hanging[i]);
    cb_metrics_compute(w, NULL, 0.01, 0.0, &hang);
    double through[4][3];
    square_at(through, straddle, 0.0);
    for (int i = 0; i < 4; i++) cb_v3_copy(w->state.x[i], through[i]);
    cb_metrics_compute(w, NULL, 0.01, 0.0, &cut);
    CU_ASSERT(hang.collider_max_depth >= 0.004 && hang.collider_max_depth <= 0.005); /* its chords cut the corner */
    CB_ASSERT_REL(cut.collider_max_depth, 0.005, 1e-9);
    CU_ASSERT_EQUAL(hang.collider_cut_edges, 0);
    CU_ASSERT_EQUAL(cut.collider_cut_edges, 1);
    CU_ASSERT_EQUAL(hang.collider_cut_faces, 0);
    CU_ASSERT_EQUAL(cut.collider_cut_faces, 0);
    double above[4][3];
    square_at(above, straddle, 0.1);
    long n[4];
    CU_ASSERT_FATAL(audited_move(w, (const double (*)[3])above, (const double (*)[3])through, n) == 0);
    CU_ASSERT(n[0] == 0 && n[1] == 1);
    cb_sim_close(&s);
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
             CB_TEST(test_crossing_in_a_middle_piece),
             CB_TEST(test_piece_bound_loses_no_crossing),
             CB_TEST(test_interrupt_stops_the_audit),
             CB_TEST(test_signal_during_the_audit),
             CB_TEST(test_knots_and_nan),
             CB_TEST(test_program_reports_the_audit),
             CB_TEST(test_run_allocation_failures),
             CB_TEST(test_edge_through_a_blade),
             CB_TEST(test_face_pierced_by_a_nail),
             CB_TEST(test_resting_on_a_blade_counts_nothing),
             CB_TEST(test_moving_and_spinning_colliders),
             CB_TEST(test_mesh_colliders),
             CB_TEST(test_hanging_and_cut_read_differently))
