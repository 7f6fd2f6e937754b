/* tests/test_analysis.c — the analysis scripts (run with the interpreter in CB_PYTHON)
 * on a tiny sweep: every script answers --help; compare.py writes table.csv/.md/.tex and
 * one plot per metric and swept parameter, and the numbers of table.csv match those
 * printed by `clothbench info` for the same run file; plot_runs.py and render.py
 * (single frame, contact sheet) write their pictures; a missing run file, an index
 * with runs not yet run and an unfinished (status running) run file are refused with
 * a message naming the file. The fms convergence figure script on a tiny version of
 * its experiment. */
#include "cb_test.h"

#include <hdf5.h>
#include <sys/stat.h>
#include <stdarg.h>
#include <sys/wait.h>

static char out[1 << 18];

/* Runs a shell command (stdout+stderr into out); returns the exit status. */
#define sh(...) cb_test_shell(out, sizeof out, __VA_ARGS__)

static const char *py(void)
{
    const char *p = getenv("CB_PYTHON");
    return p && *p ? p : NULL;
}

static int exists(const char *dir, const char *name)
{
    char path[2048];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return stat(path, &st) == 0 && st.st_size > 0;
}

static char sweep_dir[1024];

static const char *tiny_sweep(void)
{
    if (sweep_dir[0]) return sweep_dir;
    const char *e = cb_test_write_tmp("tiny.yaml",
                                      "name: tiny\n"
                                      "scenes: [data/scenes/drape_sphere.yaml]\n"
                                      "solvers: [explicit]\n"
                                      "set: {duration: 0.1, cloth.grid.nx: 6, cloth.grid.ny: 6, "
                                      "cloth.grid.origin: [-0.5, -0.5, 0.805], audit: true}\n"
                                      "grid: {solvers.explicit.damping: [0.1, 0.5, 2.0]}\n");
    snprintf(sweep_dir, sizeof sweep_dir, "%s/tiny_out", cb_test_tmpdir());
    int rc = sh("%s sweep %s -o %s -q", cb_test_program(), e, sweep_dir);
    if (rc) fprintf(stderr, "%s\n", out);
    CU_ASSERT_EQUAL(rc, 0);
    return sweep_dir;
}

static void test_python_available(void)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(py());
    CU_ASSERT_EQUAL(sh("%s -c 'import numpy, h5py, matplotlib'", py()), 0);
}

static void test_help(void)
{
    if (!py()) return;
    const char *scripts[] = {"plot_runs.py", "compare.py", "render.py"};
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(sh("%s analysis/%s --help", py(), scripts[i]), 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "usage:"));
    }
}

/* table.csv fields of one line, split on commas (the tiny sweep has no quoted cells). */
static int split(char *line, char *f[], int max)
{
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(line, ",\n", &save); t && n < max; t = strtok_r(NULL, ",\n", &save)) f[n++] = t;
    return n;
}

static double after(const char *text, const char *key, const char *lead)
{
    const char *p = strstr(text, key);
    if (!p || !(p = strstr(p, lead))) return NAN;
    double v = NAN;
    sscanf(p + strlen(lead), "%lf", &v);
    return v;
}

static void test_compare_matches_info(void)
{
    if (!py()) return;
    const char *d = tiny_sweep();
    int rc = sh("%s analysis/compare.py %s", py(), d);
    if (rc) fprintf(stderr, "%s\n", out);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "| run | solver |")); /* the Markdown table is printed */
    const char *files[] = {"table.csv", "table.md", "table.tex", "max_strain_vs_solvers.explicit.damping.png",
                           "max_strain_vs_solvers.explicit.damping.pdf", "energy_drift_vs_solvers.explicit.damping.png",
                           "mean_ms_per_step_vs_solvers.explicit.damping.png"};
    for (int i = 0; i < 7; i++) {
        if (!exists(d, files[i])) fprintf(stderr, "  missing %s/%s\n", d, files[i]);
        CU_ASSERT(exists(d, files[i]));
    }
    char path[2048];
    snprintf(path, sizeof path, "%s/table.tex", d);
    FILE *t = fopen(path, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    char tex[8192];
    size_t n = fread(tex, 1, sizeof tex - 1, t);
    tex[n] = '\0';
    fclose(t);
    CU_ASSERT_PTR_NOT_NULL(strstr(tex, "\\toprule"));
    CU_ASSERT_PTR_NOT_NULL(strstr(tex, "\\bottomrule"));

    snprintf(path, sizeof path, "%s/table.csv", d);
    FILE *f = fopen(path, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    char line[8192];
    CU_ASSERT_PTR_NOT_NULL_FATAL(fgets(line, sizeof line, f));
    CU_ASSERT_EQUAL(strcmp(line, "run,solver,scene,solvers.explicit.damping,status,self_collision,energy_drift,"
                                 "energy_peak,max_contact_depth_corrected,contact_work_added,max_penetration_depth,"
                                 "crossings,max_self_intersections,max_strain,mean_ms_per_step\n"), 0);
    int rows = 0;
    while (fgets(line, sizeof line, f)) {
        char *c[20];
        CU_ASSERT_EQUAL_FATAL(split(line, c, 20), 15);
        rows++;
        static char run[4096], info[1 << 18];
        snprintf(run, sizeof run, "%s/%s.h5", d, c[0]);
        CU_ASSERT_EQUAL_FATAL(sh("%s info %s", cb_test_program(), run), 0);
        snprintf(info, sizeof info, "%s", out);
        /* clothbench info prints %.4g (drift, strain, depth, ms) and %.3g (relative %, momentum) */
        CU_ASSERT_STRING_EQUAL(c[5], "none"); /* explicit has no self collision */
        CU_ASSERT_PTR_NOT_NULL(strstr(info, "self collision the method has none"));
        CB_ASSERT_REL(atof(c[6]), after(info, "energy ", "drift "), 1e-3);
        CB_ASSERT_REL(atof(c[7]), after(info, "energy ", "peak "), 1e-5);
        CB_ASSERT_REL(atof(c[8]), after(info, "contact ", "corrected up to "), 1e-3);
        CB_ASSERT_REL(atof(c[9]), after(info, "contact ", "added "), 1e-3);
        CB_ASSERT_REL(atof(c[10]), after(info, "collider ", "penetration "), 1e-3);
        CB_ASSERT_REL(atof(c[11]), after(info, "audit ", "crossings in steps: "), 1e-9);
        CB_ASSERT_REL(atof(c[13]), after(info, "strain ", "max "), 1e-3);
        CB_ASSERT_REL(atof(c[14]), after(info, "time ", "time       "), 1e-3);
        CU_ASSERT(!isnan(atof(c[9]))); /* explicit has a contact stage: its work is a number */
        CU_ASSERT_STRING_EQUAL(c[4], "ok");
    }
    fclose(f);
    CU_ASSERT_EQUAL(rows, 3);
}

static void test_plot_and_render(void)
{
    if (!py()) return;
    const char *d = tiny_sweep();
    char outpng[2048];
    snprintf(outpng, sizeof outpng, "%s/overlay.png", d);
    int rc = sh("%s analysis/plot_runs.py %s/*.h5 -o %s", py(), d, outpng);
    /* the glob includes index.h5, which is not a run file: refused with its name */
    CU_ASSERT_NOT_EQUAL(rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "index.h5"));
    rc = sh("%s analysis/plot_runs.py %s/*__r0.h5 -o %s", py(), d, outpng);
    if (rc) fprintf(stderr, "%s\n", out);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT(exists(d, "overlay.png"));
    CU_ASSERT(exists(d, "overlay.pdf"));
    rc = sh("%s analysis/render.py %s/drape_sphere__explicit__damping=0.5__r0.h5 -o %s/frame.png", py(), d, d);
    if (rc) fprintf(stderr, "%s\n", out);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT(exists(d, "frame.png"));
    rc = sh("%s analysis/render.py %s/drape_sphere__explicit__damping=0.5__r0.h5 --sheet --count 4 -o %s/sheet.png",
            py(), d, d);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT(exists(d, "sheet.png"));
    CU_ASSERT_NOT_EQUAL(sh("%s analysis/render.py %s/drape_sphere__explicit__damping=0.5__r0.h5 --frame 999", py(), d), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "--frame 999"));
}

static void test_missing_and_unfinished(void)
{
    if (!py()) return;
    const char *d = tiny_sweep();
    /* a missing run file */
    CU_ASSERT_NOT_EQUAL(sh("%s analysis/plot_runs.py %s/nothere.h5", py(), d), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "nothere.h5: missing run file"));
    CU_ASSERT_NOT_EQUAL(sh("%s analysis/render.py %s/nothere.h5", py(), d), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "nothere.h5: missing run file"));
    CU_ASSERT_NOT_EQUAL(sh("%s analysis/compare.py %s/nothere", py(), d), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "no index.csv"));
    /* an index whose runs have not run yet: --index writes it with status pending */
    char e[1024], o[1024];
    snprintf(e, sizeof e, "%s/tiny.yaml", cb_test_tmpdir());
    snprintf(o, sizeof o, "%s/pending_out", cb_test_tmpdir());
    CU_ASSERT_EQUAL(sh("%s sweep %s -o %s --index", cb_test_program(), e, o), 1);
    CU_ASSERT_NOT_EQUAL(sh("%s analysis/compare.py %s", py(), o), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "missing run file (status pending"));
    /* an unfinished run file: a copy of a finished one with its status set back to running */
    char src[2048], dst[2048];
    snprintf(src, sizeof src, "%s/drape_sphere__explicit__damping=0.1__r0.h5", d);
    snprintf(dst, sizeof dst, "%s/unfinished.h5", cb_test_tmpdir());
    CU_ASSERT_EQUAL_FATAL(sh("cp '%s' '%s'", src, dst), 0);
    H5Eset_auto(H5E_DEFAULT, NULL, NULL);
    hid_t f = H5Fopen(dst, H5F_ACC_RDWR, H5P_DEFAULT);
    CU_ASSERT_FATAL(f >= 0);
    H5Adelete(f, "status");
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    hid_t s = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(f, "status", t, s, H5P_DEFAULT, H5P_DEFAULT);
    const char *running = "running";
    CU_ASSERT(H5Awrite(a, t, &running) >= 0);
    H5Aclose(a);
    H5Sclose(s);
    H5Tclose(t);
    H5Fclose(f);
    CU_ASSERT_NOT_EQUAL(sh("%s analysis/plot_runs.py %s", py(), dst), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "unfinished.h5: unfinished run file"));
    CU_ASSERT_NOT_EQUAL(sh("%s analysis/render.py %s", py(), dst), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "unfinished run file"));
}

/* The fms convergence figure (analysis/figures/fms_convergence.py) on a tiny version
 * of its experiment (an 8 x 8 curtain, two repeats of every setting): one table row per
 * setting, not per repeat; fms's error falls with its iterations and Newton's too; the
 * pictures are written. */
static void test_fms_convergence_figure(void)
{
    if (!py()) return;
    const char *e = cb_test_write_tmp("conv.yaml",
                                      "name: fms_convergence\n"
                                      "scenes: [data/scenes/curtain.yaml]\n"
                                      "solvers: [fms, newton]\n"
                                      "set: {duration: 0.03333333333333333, cloth.grid.nx: 8, cloth.grid.ny: 8, "
                                      "solvers.fms.self_collision: false, solvers.newton.self_collision: false, "
                                      "solvers.newton.tolerance: 1.0e-12}\n"
                                      "grid:\n"
                                      "  solvers.fms.iterations: [1, 10, 100]\n"
                                      "  solvers.newton.max_iterations: [1, 2, 30]\n"
                                      "repeats: 2\n");
    char d[1024];
    snprintf(d, sizeof d, "%s/conv_out", cb_test_tmpdir());
    int rc = sh("%s sweep %s -o %s -q", cb_test_program(), e, d);
    if (rc) fprintf(stderr, "%s\n", out);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL_FATAL(sh("%s analysis/figures/fms_convergence.py %s", py(), d), 0);
    int rows[2] = {0, 0};
    double err[2][3];
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        char solver[16];
        int it;
        double ms, re;
        if (sscanf(line, "%15s %d %lf %lf", solver, &it, &ms, &re) != 4) continue;
        int k = !strcmp(solver, "newton");
        CU_ASSERT(ms > 0);
        if (rows[k] < 3) err[k][rows[k]] = re;
        rows[k]++;
    }
    CU_ASSERT_EQUAL(rows[0], 3); /* fms: 1, 10, 100 iterations, once each */
    CU_ASSERT_EQUAL(rows[1], 2); /* newton: 1 and 2 (30 is the reference) */
    if (rows[0] == 3) CU_ASSERT(err[0][2] < err[0][1] && err[0][1] < err[0][0]);
    if (rows[1] == 2) CU_ASSERT(err[1][1] < err[1][0]);
    CU_ASSERT(exists(d, "fms_convergence.png"));
    CU_ASSERT(exists(d, "fms_convergence.pdf"));
}

CB_TEST_MAIN("analysis",
    CB_TEST(test_python_available),
    CB_TEST(test_help),
    CB_TEST(test_compare_matches_info),
    CB_TEST(test_plot_and_render),
    CB_TEST(test_missing_and_unfinished),
    CB_TEST(test_fms_convergence_figure))
