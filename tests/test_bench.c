/* tests/test_bench.c — `clothbench bench`: the CSV header and one row per registered
 * solver and size, consistent timings (min <= median <= max, all positive), vertex
 * counts equal nx^2, a plausible peak memory, the size cap (rows above it "skipped"),
 * -o FILE equal in shape to stdout, bad options (exit 2), the contact-library
 * tables (every CCD corpus classified as constructed: no `error` line), the scaling
 * exponent (a known power law; the column against the rows' own times) and the rows the
 * rules of bench.c time, not judged, or leave untimed, saying why. */
#include "cb_test.h"

#include "experiments/bench.h"

#include <stdarg.h>
#include <sys/wait.h>

static char out[1 << 18];

/* Runs `clothbench ARGS` (stdout into out, stderr dropped); returns the exit status. */
#define cb(...) cb_test_clothbench(out, sizeof out, 0, __VA_ARGS__)

static int count_solvers(void)
{
    if (cb("list")) return 0;
    int n = 0;
    const char *p = strstr(out, "solvers:\n");
    if (!p) return 0;
    p += 9;
    while (!strncmp(p, "  ", 2) && (p = strchr(p, '\n'))) {
        n++;
        p++;
    }
    return n;
}

static const char *HEAD = "name,scene,solver,nx,vertices,steps,repeats,median_ms_per_step,min_ms_per_step,"
                          "max_ms_per_step,peak_rss_mb,create_ms,first_step_ms,stage_ms_per_step,scaling_exponent,status,message\n";

static void test_quick_table(void)
{
    int ns = count_solvers();
    CU_ASSERT_FATAL(ns >= 1);
    int rc = cb("bench --quick --case hanging --steps 2 --repeats 3");
    CU_ASSERT(rc == 0 || rc == 1);
    CU_ASSERT_EQUAL_FATAL(strncmp(out, HEAD, strlen(HEAD)), 0);
    int rows = 0, ok = 0;
    char *save = NULL;
    for (char *line = strtok_r(out + strlen(HEAD), "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char name[64], scene[64], solver[64], status[32];
        int nx, steps, reps;
        long nv;
        double med, mn, mx, mb, cms, fst, expo;
        char stages[512];
        int n = sscanf(line, "%63[^,],%63[^,],%63[^,],%d,%ld,%d,%d,%lf,%lf,%lf,%lf,%lf,%lf,%511[^,],%lf,%31[^,]", name,
                       scene, solver, &nx, &nv, &steps, &reps, &med, &mn, &mx, &mb, &cms, &fst, stages, &expo, status);
        CU_ASSERT_EQUAL_FATAL(n, 16);
        CU_ASSERT(isnan(expo)); /* one size: no exponent */
        rows++;
        CU_ASSERT_STRING_EQUAL(name, "hanging");
        CU_ASSERT_EQUAL(nv, (long)nx * nx);
        CU_ASSERT(nv <= 1024); /* --quick: the 1k size only */
        CU_ASSERT_EQUAL(steps, 2);
        CU_ASSERT_EQUAL(reps, 3);
        if (!strcmp(status, "ok")) {
            ok++;
            CU_ASSERT(mn > 0 && mn <= med && med <= mx);
            CU_ASSERT(mb > 1.0 && mb < 4096.0); /* MB: more than nothing, less than the machine */
            CU_ASSERT(cms >= 0.0 && cms < 1e4);
            CU_ASSERT(fst > 0.0 && fst < 1e5);
            /* stage times are "name=ms;..." of the fastest repeat: timed inside its
             * steps, so together they take no longer than its mean step (min_ms_per_step) */
            if (strcmp(stages, "-")) {
                double total = 0.0;
                for (char *q = stages; q && *q;) {
                    char *eq = strchr(q, '=');
                    CU_ASSERT_PTR_NOT_NULL_FATAL(eq);
                    double v = strtod(eq + 1, NULL);
                    CU_ASSERT(v >= 0.0);
                    total += v;
                    q = strchr(eq, ';');
                    if (q) q++;
                }
                CU_ASSERT(total <= mn * (1 + 1e-3) + 1e-3);
            }
        } else {
            fprintf(stderr, "  bench row not ok: %s\n", line);
        }
    }
    CU_ASSERT_EQUAL(rows, ns);
    CU_ASSERT(ok >= 1);
    CU_ASSERT_EQUAL(rc, ok == rows ? 0 : 1);
}

static void test_cap_and_output_file(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/bench.csv", cb_test_tmpdir());
    CU_ASSERT_EQUAL(cb("bench --quick --solver explicit --max-vertices 500 -o %s", path), 0);
    CU_ASSERT_STRING_EQUAL(out, ""); /* the table went to the file */
    FILE *f = fopen(path, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    char line[2048];
    CU_ASSERT_PTR_NOT_NULL(fgets(line, sizeof line, f));
    CU_ASSERT_STRING_EQUAL(line, HEAD);
    int rows = 0;
    while (fgets(line, sizeof line, f)) {
        rows++;
        CU_ASSERT_PTR_NOT_NULL(strstr(line, ",explicit,"));
        CU_ASSERT_PTR_NOT_NULL(strstr(line, ",skipped,above the size cap of 500 vertices"));
        CU_ASSERT_PTR_NOT_NULL(strstr(line, ",1024,0,0,nan,")); /* steps and repeats: none ran */
    }
    fclose(f);
    CU_ASSERT_EQUAL(rows, 3); /* three cases, one quick size each */
}

/* --size replaces the standard sizes and --set reaches the scene: a curtain with the
 * classic spring set at 10 x 10 (fms reports its stages: local, global, contact). */
static void test_size_and_set(void)
{
    CU_ASSERT_EQUAL_FATAL(cb("bench --case curtain --solver fms --size 10 --size 12 --steps 2 --repeats 1 "
                             "--set solvers.fms.iterations=3"), 0);
    int rows = 0;
    for (const char *p = strstr(out, "\ncurtain,"); p; p = strstr(p + 1, "\ncurtain,")) {
        int nx = 0;
        long nv = 0;
        CU_ASSERT_EQUAL(sscanf(p, "\ncurtain,curtain.yaml,fms,%d,%ld,", &nx, &nv), 2);
        CU_ASSERT(nx == 10 + 2 * rows);
        CU_ASSERT_EQUAL(nv, (long)nx * nx);
        rows++;
    }
    CU_ASSERT_EQUAL(rows, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "global="));
    /* a --set the scene rejects fails the row with the scene's message (exit 1) */
    CU_ASSERT_EQUAL(cb("bench --case curtain --solver fms --size 10 --steps 1 --repeats 1 --set solvers.fms.nosuch=1"), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "nosuch"));
    CU_ASSERT_EQUAL(cb("bench --size 1"), 2);
    CU_ASSERT_EQUAL(cb("bench --set novalue"), 2);
}

static void test_bad_options(void)
{
    CU_ASSERT_EQUAL(cb("bench --solver nosuch --quick"), 2);
    CU_ASSERT_EQUAL(cb("bench --case nosuch --quick"), 2);
    CU_ASSERT_EQUAL(cb("bench --steps 0"), 2);
    CU_ASSERT_EQUAL(cb("bench frobnicate"), 2);
}

static void test_contact_tables(void)
{
    CU_ASSERT_EQUAL_FATAL(cb("bench ccd --quick"), 0);
    CU_ASSERT_EQUAL(strncmp(out, "name,queries,seconds,queries_per_s\n", 35), 0);
    const char *names[] = {"ccd_near_miss_vertex_triangle", "ccd_near_miss_edge_edge", "ccd_crossing_vertex_triangle",
                           "ccd_crossing_edge_edge"};
    for (int i = 0; i < 4; i++) {
        const char *p = strstr(out, names[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        long q = 0;
        double s = -1, qps = -1;
        CU_ASSERT_EQUAL(sscanf(p + strlen(names[i]), ",%ld,%lf,%lf", &q, &s, &qps), 3);
        CU_ASSERT(q > 0 && s >= 0);
    }
    CU_ASSERT_PTR_NULL(strstr(out, "\nerror,"));
    CU_ASSERT_EQUAL_FATAL(cb("bench bvh --quick"), 0);
    CU_ASSERT_EQUAL(strncmp(out, "name,triangles,bv,seconds\n", 26), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "self_intersections,"));
}

/* The named comparison cases (experiments/refbench/) run only when --case names them and
 * only for their own solver; the per-step columns are the steady state (steps 2..N) and
 * first_step_ms the first step: for fms at 40 x 40 it holds the first factorization, so
 * it is longer than a later step (create + first step: the prefactorization). */
static void test_named_cases_and_first_step(void)
{
    CU_ASSERT_EQUAL_FATAL(cb("bench --case fms_classic --size 40 --steps 4 --repeats 1"), 0);
    char *line = strstr(out, "\nfms_classic,hanging.yaml,fms,40,1600,4,1,");
    CU_ASSERT_PTR_NOT_NULL_FATAL(line);
    double med, mn, mx, mb, cms, fst;
    CU_ASSERT_EQUAL(sscanf(line, "\nfms_classic,hanging.yaml,fms,40,1600,4,1,%lf,%lf,%lf,%lf,%lf,%lf,", &med, &mn, &mx,
                           &mb, &cms, &fst), 6);
    fprintf(stderr, "  fms_classic 40 x 40: first step %.3g ms, later steps %.3g ms\n", fst, mn);
    CU_ASSERT(fst > mn);
    CU_ASSERT_PTR_NULL(strstr(line + 1, "\nfms_classic")); /* one row: fms only */
    CU_ASSERT_EQUAL(cb("bench --case pbd_bend --solver fms --size 8 --steps 1 --repeats 1"), 0);
    CU_ASSERT_PTR_NULL(strstr(out, "\npbd_bend")); /* pbd's case has no fms row */
    CU_ASSERT_EQUAL(cb("bench --quick --solver explicit --steps 1 --repeats 1"), 0);
    CU_ASSERT_PTR_NULL(strstr(out, "pbd_bend")); /* the default table leaves named cases out */
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\ncurtain,"));
    CU_ASSERT_EQUAL(cb_test_clothbench(out, sizeof out, 1, "bench --case nosuch"), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "pbd_bend, fms_curtain, fms_classic"));
}

/* experiments/refbench/run.sh (the comparison with the reference implementations, whose
 * sources the user provides): bad arguments are refused with a message naming what is
 * wrong, before anything is built. */
static void test_refbench_arguments(void)
{
    int rc = cb_test_shell(out, sizeof out, "bash experiments/refbench/run.sh 2>&1");
    CU_ASSERT_EQUAL(rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "expected two folders, PBD_SRC and FMS_SRC"));
    rc = cb_test_shell(out, sizeof out, "bash experiments/refbench/run.sh /nonexistent-pbd data 2>&1");
    CU_ASSERT_EQUAL(rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "PBD_SRC: '/nonexistent-pbd' is not a folder"));
    /* a folder that is not the PositionBasedDynamics sources: the missing files named */
    rc = cb_test_shell(out, sizeof out, "bash experiments/refbench/run.sh data data 2>&1");
    CU_ASSERT_EQUAL(rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "PositionBasedDynamics/PositionBasedDynamics.cpp"));
    rc = cb_test_shell(out, sizeof out, "bash experiments/refbench/run.sh data data --rounds 0 2>&1");
    CU_ASSERT_EQUAL(rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "--rounds: expected a positive integer"));
}

/* The exponent of a known power law, from the function the table uses: exact for
 * t = c n^p, the least-squares slope when the points scatter, the points that cannot be
 * fitted left out, NaN without two sizes. */
static void test_scaling_exponent(void)
{
    double n[5] = {1024, 4096, 16384, 65536, 262144}, t[5];
    const double powers[] = {1.0, 1.5, 0.5, 2.0, 0.0, -0.25};
    for (size_t k = 0; k < sizeof powers / sizeof powers[0]; k++) {
        for (int i = 0; i < 5; i++) t[i] = 0.37 * pow(n[i], powers[k]);
        CU_ASSERT_DOUBLE_EQUAL(cb_bench_scaling_exponent(n, t, 5), powers[k], 1e-12);
        CU_ASSERT_DOUBLE_EQUAL(cb_bench_scaling_exponent(n, t, 2), powers[k], 1e-12); /* the endpoints */
    }
    /* scattered: times 1, 2, 2, 4 ms at n = 1, 2, 4, 8: x = log2 n = 0..3, y = log2 t = 0, 1, 1, 2,
     * slope = sum (x - 1.5)(y - 1) / sum (x - 1.5)^2 = 3 / 5 (in log2 units both sides) */
    double n4[4] = {1, 2, 4, 8}, t4[4] = {1, 2, 2, 4};
    CU_ASSERT_DOUBLE_EQUAL(cb_bench_scaling_exponent(n4, t4, 4), 0.6, 1e-12);
    /* a row that was not timed (NaN), a zero and a negative time are left out */
    double n6[6] = {1024, 2048, 4096, 8192, 16384, 0}, t6[6] = {2.0, NAN, 8.0, 0.0, 32.0, 5.0};
    CU_ASSERT_DOUBLE_EQUAL(cb_bench_scaling_exponent(n6, t6, 6), 1.0, 1e-12);
    t6[2] = -8.0;
    CU_ASSERT_DOUBLE_EQUAL(cb_bench_scaling_exponent(n6, t6, 6), 1.0, 1e-12); /* 1024 and 16384 */
    CU_ASSERT(isnan(cb_bench_scaling_exponent(n, t, 1)));
    CU_ASSERT(isnan(cb_bench_scaling_exponent(n, t, 0)));
    double same[3] = {4096, 4096, 4096};
    CU_ASSERT(isnan(cb_bench_scaling_exponent(same, t, 3))); /* one size three times */
    CU_ASSERT(isnan(cb_bench_scaling_exponent(NULL, t, 3)));
}

/* The CSV's scaling_exponent of a row is the least-squares slope over its solver's rows of
 * the case so far (this size and the smaller ones), from their median_ms_per_step. */
static void test_scaling_column(void)
{
    CU_ASSERT_EQUAL_FATAL(cb("bench --case hanging --solver fms --size 8 --size 12 --size 16 --steps 3 --repeats 1"), 0);
    double nv[3], ms[3];
    int rows = 0;
    for (const char *p = strstr(out, "\nhanging,"); p && rows < 3; p = strstr(p + 1, "\nhanging,")) {
        long v;
        double med, expo;
        char stages[512];
        CU_ASSERT_EQUAL_FATAL(sscanf(p, "\nhanging,hanging.yaml,fms,%*d,%ld,3,1,%lf,%*f,%*f,%*f,%*f,%*f,%511[^,],%lf,ok,",
                                     &v, &med, stages, &expo), 4);
        nv[rows] = (double)v;
        ms[rows] = med;
        rows++;
        if (rows == 1) {
            CU_ASSERT(isnan(expo));
        } else {
            /* the column has 4 digits, the medians 6: the slope from them agrees to 1e-3 */
            double want = cb_bench_scaling_exponent(nv, ms, rows);
            CU_ASSERT(fabs(expo - want) <= 1e-3 * fabs(want) + 1e-3);
        }
    }
    CU_ASSERT_EQUAL(rows, 3);
}

/* The rules of bench.c: pbd's defaults break the health rule on the hanging cloth from
 * 128 x 128 (strain above 1 at step 6: the method, README "Benchmarks"), so that row is
 * timed with the check off and its message says so; with the check put back (a --set
 * comes after the rule's) the same row ends diverged, naming the strain and the rule's
 * reason. Self collision off: it does not change the strain and costs most of the time. */
static void test_timed_not_judged(void)
{
    const char *args = "bench --case hanging --solver pbd --size 128 --steps 7 --repeats 1 "
                       "--set solvers.pbd.self_collision=false";
    CU_ASSERT_EQUAL_FATAL(cb("%s", args), 0);
    const char *p = strstr(out, "\nhanging,hanging.yaml,pbd,128,16384,7,1,");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_PTR_NOT_NULL(strstr(p, ",ok,\"timed, not judged: "));
    CU_ASSERT_EQUAL(cb("%s --set health.max_strain=1 --set health.energy_factor=1", args), 1);
    p = strstr(out, "\nhanging,hanging.yaml,pbd,128,16384,7,1,");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_PTR_NOT_NULL(strstr(p, ",diverged,\"health check: step 6"));
    CU_ASSERT_PTR_NOT_NULL(strstr(p, "strain"));
    CU_ASSERT_PTR_NOT_NULL(strstr(p, "; timed, not judged: "));
    /* a row the rules leave untimed costs nothing and says why: acm at 256 x 256 */
    CU_ASSERT_EQUAL_FATAL(cb("bench --case hanging --solver acm --size 256"), 0);
    p = strstr(out, "\nhanging,hanging.yaml,acm,256,65536,0,0,nan,");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_PTR_NOT_NULL(strstr(p, ",nan,skipped,not timed: a step took about"));
    /* below the rule's size the row is judged and says nothing */
    CU_ASSERT_EQUAL_FATAL(cb("bench --case hanging --solver pbd --size 12 --steps 2 --repeats 1"), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, ",ok,\n"));
    CU_ASSERT_PTR_NULL(strstr(out, "timed, not judged"));
}

CB_TEST_MAIN("bench",
    CB_TEST(test_scaling_exponent),
    CB_TEST(test_scaling_column),
    CB_TEST(test_timed_not_judged),
             CB_TEST(test_named_cases_and_first_step),
    CB_TEST(test_quick_table),
    CB_TEST(test_cap_and_output_file),
    CB_TEST(test_size_and_set),
    CB_TEST(test_bad_options),
    CB_TEST(test_contact_tables),
    CB_TEST(test_refbench_arguments))
