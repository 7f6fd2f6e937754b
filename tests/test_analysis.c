/* tests/test_analysis.c — the analysis scripts (run with the interpreter in CB_PYTHON)
 * on a tiny sweep: every script answers --help; compare.py writes table.csv/.md/.tex and
 * one plot per metric and swept parameter, and the numbers of table.csv match those
 * printed by `clothbench info` for the same run file; plot_runs.py and render.py
 * (single frame, contact sheet) write their pictures; a missing run file, an index
 * with runs not yet run and an unfinished (status running) run file are refused with
 * a message naming the file. The fms convergence figure script on a tiny version of
 * its experiment. table.tex compiled under pdflatex; --x with a bare parameter name
 * across solvers; the README's code blocks (tests/readme_check.py). The gauntlet's
 * scoreboard (analysis/figures/gauntlet.py): cells against the run files, unfinished and
 * refused cells drawn as such, the severity rules, its LaTeX compiled. */
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

/* Writes the experiment `text` as <tmp>/<name>.yaml and sweeps it quietly into
 * <tmp>/<name>_out (its path into dir[n]); the sweep's output is printed when it fails.
 * Returns the sweep's exit status. */
static int sweep_into(const char *name, const char *text, char *dir, size_t n)
{
    char file[256];
    snprintf(file, sizeof file, "%s.yaml", name);
    const char *e = cb_test_write_tmp(file, text);
    snprintf(dir, n, "%s/%s_out", cb_test_tmpdir(), name);
    int rc = sh("%s sweep %s -o %s -q", cb_test_program(), e, dir);
    if (rc) fprintf(stderr, "%s\n", out);
    return rc;
}

static char sweep_dir[1024];

static const char *tiny_sweep(void)
{
    if (sweep_dir[0]) return sweep_dir;
    int rc = sweep_into("tiny",
                        "name: tiny\n"
                        "scenes: [data/scenes/drape_sphere.yaml]\n"
                        "solvers: [explicit]\n"
                        "set: {duration: 0.1, cloth.grid.nx: 6, cloth.grid.ny: 6, "
                        "cloth.grid.origin: [-0.5, -0.5, 0.805], audit: true}\n"
                        "grid: {solvers.explicit.damping: [0.1, 0.5, 2.0]}\n",
                        sweep_dir, sizeof sweep_dir);
    CU_ASSERT_EQUAL(rc, 0);
    return sweep_dir;
}

static void test_python_available(void)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(py());
    CU_ASSERT_EQUAL(sh("%s -c 'import numpy, h5py, matplotlib, yaml'", py()), 0);
}

static void test_help(void)
{
    if (!py()) return;
    const char *scripts[] = {"plot_runs.py", "compare.py", "render.py", "tools/make_collider_meshes.py"};
    for (int i = 0; i < 4; i++) {
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
    CU_ASSERT_EQUAL(strcmp(line, "run,solver,scene,solvers.explicit.damping,status,self_collision,model,energy_drift,"
                                 "energy_peak,max_contact_depth_corrected,contact_work_added,max_penetration_depth,"
                                 "crossings,max_self_intersections,max_strain,mean_ms_per_step\n"), 0);
    int rows = 0;
    while (fgets(line, sizeof line, f)) {
        char *c[20];
        CU_ASSERT_EQUAL_FATAL(split(line, c, 20), 16);
        rows++;
        static char run[4096], info[1 << 18];
        snprintf(run, sizeof run, "%s/%s.h5", d, c[0]);
        CU_ASSERT_EQUAL_FATAL(sh("%s info %s", cb_test_program(), run), 0);
        snprintf(info, sizeof info, "%s", out);
        /* clothbench info prints %.4g (drift, strain, depth, ms) and %.3g (relative %, momentum) */
        CU_ASSERT_STRING_EQUAL(c[5], "none"); /* explicit has no self collision */
        CU_ASSERT_PTR_NOT_NULL(strstr(info, "self collision the method has none"));
        CU_ASSERT_STRING_EQUAL(c[6], "stretch springs / bending shells / contact projection");
        char mline[256];
        snprintf(mline, sizeof mline, "model      %s\n", c[6]); /* the model info prints */
        CU_ASSERT_PTR_NOT_NULL(strstr(info, mline));
        CB_ASSERT_REL(atof(c[7]), after(info, "energy ", "drift "), 1e-3);
        CB_ASSERT_REL(atof(c[8]), after(info, "energy ", "peak "), 1e-5);
        CB_ASSERT_REL(atof(c[9]), after(info, "contact ", "corrected up to "), 1e-3);
        CB_ASSERT_REL(atof(c[10]), after(info, "contact ", "added "), 1e-3);
        CB_ASSERT_REL(atof(c[11]), after(info, "collider ", "penetration "), 1e-3);
        CB_ASSERT_REL(atof(c[12]), after(info, "audit ", "crossings in steps: "), 1e-9);
        CB_ASSERT_REL(atof(c[14]), after(info, "strain ", "max "), 1e-3);
        CB_ASSERT_REL(atof(c[15]), after(info, "time ", "time       "), 1e-3);
        CU_ASSERT(!isnan(atof(c[10]))); /* explicit has a contact stage: its work is a number */
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
    /* the glob includes index.h5, which is not a run file: left out, with its name */
    if (rc) fprintf(stderr, "%s\n", out);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "index.h5: not a run file, left out"));
    CU_ASSERT_NOT_EQUAL(sh("%s analysis/plot_runs.py %s/index.h5", py(), d), 0); /* nothing else: an error */
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "no run files among"));
    rc = sh("%s analysis/plot_runs.py %s/*__r0.h5 -o %s", py(), d, outpng);
    if (rc) fprintf(stderr, "%s\n", out);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT(exists(d, "overlay.png"));
    CU_ASSERT(exists(d, "overlay.pdf"));
    CU_ASSERT(exists(d, "overlay.csv")); /* the plotted numbers, units in the header */
    CU_ASSERT_EQUAL(sh("head -1 %s/overlay.csv", d), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "total_energy [J]"));
    rc = sh("%s analysis/render.py %s/drape_sphere__explicit__damping=0.5__r0.h5 -o %s/frame.png", py(), d, d);
    if (rc) fprintf(stderr, "%s\n", out);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT(exists(d, "frame.png"));
    /* occlusion and framing (VTK, issue 17): seen from straight above, the cloth hangs over
     * the sphere, so the image centre is cloth (red front or blue back), not the grey sphere
     * that matplotlib's painter drew through it; the image border is background and the
     * picture is not empty */
    rc = sh("%s analysis/render.py %s/drape_sphere__explicit__damping=0.5__r0.h5 --frame 0 --elevation 89.9 "
            "-o %s/top.png && %s -c \"import matplotlib.image as m, numpy as np; a = m.imread('%s/top.png')[..., :3]; "
            "h, w, _ = a.shape; ax = a[int(0.08 * h):, :]; inside = np.argwhere(ax.min(axis=2) < 0.97); "
            "cy, cx = inside.mean(axis=0).astype(int); c = ax[cy, cx]; "
            "print('centre', c.round(2), 'spread', round(float(c.max() - c.min()), 2), "
            "'border', round(float(min(a[-1].min(), a[:, 0].min(), a[:, -1].min())), 2), 'ink', len(inside))\"",
            py(), d, d, py(), d);
    if (rc) fprintf(stderr, "%s\n", out);
    CU_ASSERT_EQUAL(rc, 0);
    double spread = 0, border = 0;
    long ink = 0;
    const char *q = strstr(out, "spread");
    CU_ASSERT_PTR_NOT_NULL_FATAL(q);
    CU_ASSERT_EQUAL(sscanf(q, "spread %lf border %lf ink %ld", &spread, &border, &ink), 3);
    CU_ASSERT(spread > 0.2);   /* coloured cloth, not grey (sphere r = g = b within 0.1) */
    CU_ASSERT(border > 0.95);  /* nothing cut at the edges */
    CU_ASSERT(ink > 1000);
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

/* The cantilever figure (analysis/figures/cantilever.py) on a coarse strip (10 cells along,
 * 2 across), explicit at Gamma 4, 8 and 16: the elastica's own 41.5 degree overhang is
 * 2.000 bending lengths, explicit's within 6% of it (the coarse strip's first-order error
 * makes it short: tests/test_elastica.c), every run at rest, and the CSVs are written. */
static void test_cantilever_figure(void)
{
    if (!py()) return;
    char d[1024];
    int rc = sweep_into("cant",
                        "name: cantilever\n"
                        "scenes: [data/scenes/cantilever.yaml]\n"
                        "solvers: [explicit]\n"
                        "set: {cloth.grid.nx: 12, cloth.grid.ny: 3, cloth.grid.size: [0.025663, 0.004666], "
                        "cloth.grid.origin: [-0.002333, -0.002333, 0]}\n"
                        "grid: {cloth.bend: [9.7515e-07, 4.87575e-07, 2.43788e-07]}\n",
                        d, sizeof d);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    rc = sh("%s analysis/figures/cantilever.py %s --clothbench %s", py(), d, cb_test_program());
    if (rc) fprintf(stderr, "%s\n", out);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    double ge = after(out, "elastica ", "L/c "), gx = after(out, "explicit ", "L/c ");
    CU_ASSERT(fabs(ge - 2.0) < 2e-3);
    CU_ASSERT(fabs(gx - 2.0) < 0.12);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "not at rest (chord moved >= 0.01 deg in the last 0.5 s): none"));
    CU_ASSERT(exists(d, "cantilever.png") && exists(d, "cantilever.pdf") && exists(d, "cantilever.csv"));
    CU_ASSERT(exists(d, "cantilever_crossing.csv"));
}

/* The fms convergence figure (analysis/figures/fms_convergence.py) on a tiny version
 * of its experiment (an 8 x 8 curtain, two repeats of every setting): one table row per
 * setting, not per repeat; fms's error falls with its iterations and Newton's too; the
 * pictures are written. */
static void test_fms_convergence_figure(void)
{
    if (!py()) return;
    char d[1024];
    int rc = sweep_into("conv",
                        "name: fms_convergence\n"
                        "scenes: [data/scenes/curtain.yaml]\n"
                        "solvers: [fms, newton]\n"
                        "set: {duration: 0.03333333333333333, cloth.grid.nx: 8, cloth.grid.ny: 8, "
                        "solvers.fms.self_collision: false, solvers.newton.self_collision: false, "
                        "solvers.newton.tolerance: 1.0e-12}\n"
                        "grid:\n"
                        "  solvers.fms.iterations: [1, 10, 100]\n"
                        "  solvers.newton.max_iterations: [1, 2, 30]\n"
                        "repeats: 2\n",
                        d, sizeof d);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL_FATAL(sh("%s analysis/figures/fms_convergence.py %s", py(), d), 0);
    CU_ASSERT(exists(d, "fms_convergence.csv"));
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

/* The contact accuracy figure (analysis/figures/contact_accuracy.py) on a tiny version of
 * its experiment (the drape at 4 x 4 for 0.25 s, fms and ipc at two steps): the sweep makes
 * the ipc reference itself; the script reads its check, writes one table row per run with
 * a finite, nonzero largest position_error and energy_error, the same numbers as the run
 * files' series, and the pictures. */
static void test_contact_accuracy_figure(void)
{
    if (!py()) return;
    char d[1024], yaml[2048];
    snprintf(yaml, sizeof yaml,
             "name: contact_accuracy\n"
             "reference: %s/cacc_out/reference.h5\n"
             "scenes: [data/scenes/drape_sphere.yaml]\n"
             "solvers: [fms, ipc]\n"
             "set: {duration: 0.25, cloth.grid.nx: 4, cloth.grid.ny: 4, frame_rate: 50, dt: 0.01}\n"
             "grid: {dt: [0.01, 0.005]}\n", cb_test_tmpdir());
    CU_ASSERT_EQUAL_FATAL(sweep_into("cacc", yaml, d, sizeof d), 0);
    int rc = sh("%s analysis/figures/contact_accuracy.py %s", py(), d);
    if (rc) fprintf(stderr, "%s\n", out);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "reference: ipc (implicit Euler"));
    CU_ASSERT(exists(d, "contact_accuracy.png") && exists(d, "contact_accuracy.pdf"));
    /* every run's row against its file: the largest finite position_error over the frames */
    const char *check = cb_test_write_tmp("cacc_check.py",
        "import csv, h5py, numpy as np, sys\n"
        "d = sys.argv[1]\n"
        "rows = list(csv.reader(open(d + '/contact_accuracy.csv')))\n"
        "n = 0\n"
        "for r in rows[1:]:\n"
        "    m, cost, err, de = r[0], float(r[2]), float(r[3]), float(r[4])\n"
        "    f = h5py.File('%s/drape_sphere__%s__dt=%s__r0.h5' % (d, m, r[1]), 'r')\n"
        "    e = f['series/position_error'][:]\n"
        "    e = e[np.isfinite(e)]\n"
        "    ok = np.isfinite(de) and cost > 0 and err > 0 and abs(err - e.max()) <= 1e-5 * err and len(e) == 14\n"
        "    print(m, r[1], err, de, 'agrees' if ok else 'DIFFERS')\n"
        "    n += ok\n"
        "print('rows', len(rows) - 1, 'agree', n)\n");
    rc = sh("%s %s %s", py(), check, d);
    if (rc) fprintf(stderr, "%s\n", out);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "rows 4 agree 4"));
}

/* pbd and xpbd with their own iteration keys (solvers.pbd.iterations,
 * solvers.xpbd.iterations): the per-solver keys of one parameter. */
static char iter_dir[1024];

static const char *iterations_sweep(void)
{
    if (iter_dir[0]) return iter_dir;
    int rc = sweep_into("iter",
                        "name: iter\n"
                        "scenes: [data/scenes/hanging.yaml]\n"
                        "solvers: [pbd, xpbd]\n"
                        "set: {duration: 0.05, cloth.grid.nx: 6, cloth.grid.ny: 6, "
                        "solvers.pbd.stepping: paper, solvers.xpbd.stepping: paper}\n"
                        "grid:\n"
                        "  solvers.pbd.iterations: [1, 5]\n"
                        "  solvers.xpbd.iterations: [2, 10]\n",
                        iter_dir, sizeof iter_dir);
    CU_ASSERT_EQUAL(rc, 0);
    return iter_dir;
}

static char *slurp(const char *dir, const char *name)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    static char buf[2][1 << 16];
    static int slot;
    char *b = buf[slot++ % 2];
    size_t n = fread(b, 1, sizeof buf[0] - 1, f);
    b[n] = '\0';
    fclose(f);
    return b;
}

/* The stability map on a tiny version of its experiment: Verlet with one substep is
 * stable only where dt is below its limit (about 2 sqrt(m / 4k) per vertex), fms (implicit
 * Euler) everywhere; a diverged run is a cell of the map, not a failure of the sweep. */
static void test_stability_map_figure(void)
{
    if (!py()) return;
    char d[1024];
    int rc = sweep_into("smap",
                        "name: stability_map\n"
                        "expect_diverged: true\n"
                        "scenes: [data/scenes/hanging.yaml]\n"
                        "solvers: [explicit, fms]\n"
                        "set: {duration: 0.3, frame_rate: 30, cloth.grid.nx: 6, cloth.grid.ny: 6, "
                        "cloth.grid.plane: xy, solvers.explicit.substeps: 1, solvers.explicit.damping: 0, "
                        "solvers.fms.self_collision: false}\n"
                        "grid:\n"
                        "  cloth.stretch: [100.0, 100000.0]\n"
                        "  dt: [0.033333333333333333, 0.00033333333333333335]\n",
                        d, sizeof d);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    rc = sh("%s analysis/figures/stability_map.py %s", py(), d);
    if (rc) fprintf(stderr, "%s\n", out);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT(exists(d, "stability_map.png") && exists(d, "stability_map.csv"));
    /* largest ok dt per stiffness (100, 1e5 N/m) */
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "explicit   0.000333, none"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "fms        0.0333, 0.0333"));
    char *csv = slurp(d, "stability_map.csv");
    CU_ASSERT_PTR_NOT_NULL_FATAL(csv);
    CU_ASSERT_PTR_NOT_NULL(strstr(csv, "explicit,100000,0.03333333333,diverged,"));
    CU_ASSERT_PTR_NOT_NULL(strstr(csv, "fms,100000,0.03333333333,ok,"));
}

/* The tiny gauntlet: experiments/gauntlet.yaml's two first methods' worth (explicit, fms)
 * on two of its scenes (projectile_50, twist_half) at 8 x 8 for 0.03 s, audit on. */
static char gauntlet_dir[1024];

static const char *tiny_gauntlet(void)
{
    if (gauntlet_dir[0]) return gauntlet_dir;
    int rc = sweep_into("gauntlet",
                        "name: gauntlet\n"
                        "scenes: [data/scenes/gauntlet/projectile_50.yaml, data/scenes/gauntlet/twist_half.yaml]\n"
                        "solvers: [explicit, fms]\n"
                        "set: {duration: 0.03, frame_rate: 100, cloth.grid.nx: 8, cloth.grid.ny: 8, audit: true}\n"
                        "time_limit: 600\n",
                        gauntlet_dir, sizeof gauntlet_dir);
    CU_ASSERT_EQUAL(rc, 0);
    return gauntlet_dir;
}

/* The line of dir/name that starts with `prefix` (static buffer), NULL when none. */
static const char *line_starting(const char *dir, const char *name, const char *prefix)
{
    static char line[8192];
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    const char *found = NULL;
    while (!found && fgets(line, sizeof line, f))
        if (!strncmp(line, prefix, strlen(prefix))) found = line;
    fclose(f);
    return found;
}

/* The scoreboard on the tiny gauntlet: every output written, one table row per method
 * and a column per scene, and every cell's numbers (audit counts summed, intersecting
 * pairs at the end, collider depth, strain, E - E0 - W_ext, status) equal to those
 * tests/gauntlet_check.py reads from the run files itself. --render draws each scene's
 * worst cell (or says it skipped, without VTK). */
static void test_gauntlet_scoreboard(void)
{
    if (!py()) return;
    const char *d = tiny_gauntlet();
    CU_ASSERT_EQUAL(sh("%s analysis/figures/gauntlet.py --help", py()), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "usage:"));
    int rc = sh("%s analysis/figures/gauntlet.py %s", py(), d);
    if (rc) fprintf(stderr, "%s\n", out);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    const char *files[] = {"gauntlet.png", "gauntlet.pdf", "gauntlet.csv", "gauntlet_table.csv",
                           "gauntlet_table.md", "gauntlet_table.tex"};
    for (int k = 0; k < 6; k++) CU_ASSERT(exists(d, files[k]));
    CU_ASSERT_PTR_NOT_NULL(line_starting(d, "gauntlet_table.md", "| method | projectile_50 | twist_half | promise kept |"));
    CU_ASSERT_PTR_NOT_NULL(line_starting(d, "gauntlet_table.md", "| explicit | **"));
    CU_ASSERT_PTR_NOT_NULL(line_starting(d, "gauntlet_table.md", "| fms | **"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "- fms: stable at large time steps"));
    rc = sh("%s tests/gauntlet_check.py values %s", py(), d);
    if (rc) fprintf(stderr, "%s\n", out);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "checked 4 cells, 0 mismatches"));
    rc = sh("%s analysis/figures/gauntlet.py %s --render -q", py(), d);
    if (rc) fprintf(stderr, "%s\n", out);
    CU_ASSERT_EQUAL(rc, 0);
    if (!strstr(out, "render: skipped: no VTK"))
        CU_ASSERT(exists(d, "gauntlet_worst_projectile_50.png") && exists(d, "gauntlet_worst_twist_half.png"));
}

/* A crafted index: a run ended by the time limit, one interrupted by a signal, one refused
 * (acm's message for a mesh collider), one pending, and a scene only one method has: each
 * is a cell drawn as such (status timeout / interrupted / n/a with the reason / missing),
 * none dropped; the timed-out and refused reasons are listed under the Markdown table. */
static void test_gauntlet_unfinished_cells(void)
{
    if (!py()) return;
    char dst[1200];
    snprintf(dst, sizeof dst, "%s_crafted", tiny_gauntlet());
    int rc = sh("%s tests/gauntlet_check.py craft %s %s", py(), tiny_gauntlet(), dst);
    if (rc) fprintf(stderr, "%s\n", out);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    rc = sh("%s analysis/figures/gauntlet.py %s -q", py(), dst);
    if (rc) fprintf(stderr, "%s\n", out);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    const char *l = line_starting(dst, "gauntlet.csv", "explicit,explicit,projectile_50,");
    CU_ASSERT(l && strstr(l, ",timeout,"));
    l = line_starting(dst, "gauntlet.csv", "fms,fms,projectile_50,");
    CU_ASSERT(l && strstr(l, ",interrupted,"));
    l = line_starting(dst, "gauntlet.csv", "explicit,explicit,twist_half,");
    CU_ASSERT(l && strstr(l, ",n/a,n/a,refused,not judged,"));
    l = line_starting(dst, "gauntlet.csv", "fms,fms,twist_half,");
    CU_ASSERT(l && strstr(l, ",missing,missing,missing,"));
    l = line_starting(dst, "gauntlet.csv", "explicit,explicit,gauntlet_extra,");
    CU_ASSERT(l && strstr(l, ",missing,missing,missing,") && strstr(l, "not in the index"));
    l = line_starting(dst, "gauntlet.csv", "fms,fms,gauntlet_extra,");
    CU_ASSERT(l && strstr(l, ",missing,missing,missing,"));
    char csv[1300];
    snprintf(csv, sizeof csv, "%s/gauntlet.csv", dst);
    CU_ASSERT_EQUAL(cb_test_count_lines(csv, ","), 7); /* header + 2 x 3 cells */
    CU_ASSERT_PTR_NOT_NULL(line_starting(dst, "gauntlet_table.md", "- explicit on projectile_50 (timeout): time limit of 600 s"));
    CU_ASSERT_PTR_NOT_NULL(line_starting(dst, "gauntlet_table.md", "- explicit on twist_half (n/a): acm: collider 0"));
    CU_ASSERT(exists(dst, "gauntlet.png"));
}

/* The severity and promise rules on synthetic cells (tests/gauntlet_check.py rules). */
static void test_gauntlet_rules(void)
{
    if (!py()) return;
    int rc = sh("%s tests/gauntlet_check.py rules", py());
    if (rc) fprintf(stderr, "%s\n", out);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    const char *want[] = {
        "rule clean: got green promise kept",
        "rule ball_through: got red promise kept",        /* fms: ok, depth 0, the audit saw the ball pass */
        "rule newton_ball_through: got red",
        "rule self_crossing: got red",
        "rule new_series: got red promise kept worst 3 crossings (edge_collider 3)", /* an audit series not known today */
        "rule between_vertices: got orange",              /* edges, faces through a collider, within t */
        "rule between_and_vertex: got red",               /* and a vertex through it */
        "rule between_deep: got red",                     /* deeper than the thickness */
        "rule pairs: got red",
        "rule shallow: got yellow",                       /* depth within the thickness */
        "rule deep: got red",                             /* depth beyond it */
        "rule energy: got yellow",
        "rule strain: got yellow",
        "rule diverged: got red promise broken",
        "rule timeout_clean: got unfinished promise unjudged",
        "rule timeout_crossed: got red promise unjudged",
        "rule refused: got n/a",
        "rule missing: got missing",
        "rule acm_crossing: got red promise broken",
        "rule acm_clean: got green promise kept",
        "rule pbd_ball_through: got red promise broken",
        "rule pbd_self: got red promise kept",            /* pbd promises nothing about self contact */
        "rule avgforce_pairs: got red promise broken",
        "rule newton_vertex_in: got yellow promise broken",
        "rule unknown_method: got green promise unjudged",
        "rule unmeasured_audit: got yellow promise kept worst no audit", /* a run without the audit is not clean */
        "rule no_audit_series: got yellow promise kept worst no audit",
    };
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        if (!strstr(out, want[k])) fprintf(stderr, "  missing: %s\n", want[k]);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, want[k]));
    }
}

/* The cells of one table row "a & b & c \\" (trimmed), into cells[]; returns their count. */
static int tex_cells(const char *line, char cells[][128], int max)
{
    int n = 0;
    char buf[4096];
    snprintf(buf, sizeof buf, "%.*s", (int)strcspn(line, "\n"), line); /* this line only */
    const char *p = buf;
    while (n < max) {
        const char *amp = strstr(p, " & ");
        const char *end = amp ? amp : strstr(p, " \\\\");
        if (!end) end = p + strcspn(p, "\n");
        size_t len = (size_t)(end - p);
        while (len && p[0] == ' ') p++, len--;
        while (len && p[len - 1] == ' ') len--;
        snprintf(cells[n++], 128, "%.*s", (int)len, p);
        if (!amp) break;
        p = amp + 3;
    }
    return n;
}

/* table.tex of dir: three header rows between \toprule and \midrule, one cell per
 * column of the tabular spec; every column's header (its two name lines) distinct;
 * every right-aligned (numeric) column has a unit "(...)" in the third row. Returns
 * the number of columns whose name is `want` (first line). */
static int check_tex_header(const char *dir, const char *want)
{
    char *tex = slurp(dir, "table.tex");
    CU_ASSERT_PTR_NOT_NULL_FATAL(tex);
    char spec[128] = "";
    const char *b = strstr(tex, "\\begin{tabular}{");
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    sscanf(b, "\\begin{tabular}{%127[^}]}", spec);
    int ncol = (int)strlen(spec);
    const char *top = strstr(tex, "\\toprule\n"), *mid = strstr(tex, "\\midrule");
    CU_ASSERT_FATAL(top && mid && top < mid);
    static char rows[3][64][128];
    const char *line = top + strlen("\\toprule\n");
    int nrows = 0;
    while (line < mid && nrows < 3) {
        CU_ASSERT_EQUAL(tex_cells(line, rows[nrows], 64), ncol);
        nrows++;
        line = strchr(line, '\n') + 1;
    }
    CU_ASSERT_EQUAL(nrows, 3);
    CU_ASSERT_PTR_EQUAL(line, mid);
    int found = 0;
    for (int c = 0; c < ncol; c++) {
        if (!strcmp(rows[0][c], want)) found++;
        for (int d = 0; d < c; d++) {
            int same = !strcmp(rows[0][c], rows[0][d]) && !strcmp(rows[1][c], rows[1][d]);
            if (same) fprintf(stderr, "  %s/table.tex: duplicated header '%s %s'\n", dir, rows[0][c], rows[1][c]);
            CU_ASSERT(!same);
        }
        if (spec[c] == 'r') {
            size_t l = strlen(rows[2][c]);
            if (!(l > 2 && rows[2][c][0] == '(' && rows[2][c][l - 1] == ')'))
                fprintf(stderr, "  %s/table.tex: column '%s' has no unit\n", dir, rows[0][c]);
            CU_ASSERT(l > 2 && rows[2][c][0] == '(' && rows[2][c][l - 1] == ')');
        }
    }
    return found;
}

/* Compiles a landscape A4 document that \\input's dir/table under pdflatex with booktabs and
 * the `packages` given: exit 0, no error and no overfull box in its log. */
static void check_tex_compiles(const char *dir, const char *doc_name, const char *packages, const char *table)
{
    char doc[2048];
    snprintf(doc, sizeof doc, "%s/%s.tex", dir, doc_name);
    FILE *f = fopen(doc, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fprintf(f, "\\documentclass{article}\n\\usepackage[a4paper,landscape,margin=2cm]{geometry}\n"
               "\\usepackage{booktabs}\n%s\\begin{document}\n\\begin{table}\n\\centering\\small\n"
               "\\input{%s}\n\\caption{clothbench table}\n\\end{table}\n\\end{document}\n", packages, table);
    fclose(f);
    int rc = sh("cd %s && pdflatex -interaction=nonstopmode -halt-on-error %s.tex", dir, doc_name);
    if (rc) fprintf(stderr, "%s\n", out);
    CU_ASSERT_EQUAL(rc, 0);
    char log_name[256], pdf_name[256];
    snprintf(log_name, sizeof log_name, "%s.log", doc_name);
    snprintf(pdf_name, sizeof pdf_name, "%s.pdf", doc_name);
    char *log = slurp(dir, log_name);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_PTR_NULL(strstr(log, "Overfull"));
    CU_ASSERT_PTR_NULL(strstr(log, "\n! "));
    CU_ASSERT_PTR_NULL(strstr(log, "Error"));
    CU_ASSERT(exists(dir, pdf_name));
}

/* table.tex compiles: a small landscape document \input's it under pdflatex (the one
 * CI installs through experiments/install-deps.sh; missing, the test fails), which
 * must exit 0 with no error and no overfull box in its log. Both the one-solver sweep
 * and the pbd/xpbd sweep whose two iteration keys used to give two "iterations"
 * columns. */
static void test_table_tex_compiles(void)
{
    if (!py()) return;
    int have = sh("command -v pdflatex");
    if (have)
        fprintf(stderr, "\n  pdflatex not found: install texlive-latex-base and texlive-latex-recommended "
                        "(bash experiments/install-deps.sh)\n");
    CU_ASSERT_EQUAL_FATAL(have, 0);
    const char *dirs[2] = {tiny_sweep(), iterations_sweep()};
    for (int k = 0; k < 2; k++) {
        const char *d = dirs[k];
        int rc = sh("%s analysis/compare.py %s --no-plots -q", py(), d);
        if (rc) fprintf(stderr, "%s\n", out);
        CU_ASSERT_EQUAL_FATAL(rc, 0);
        CU_ASSERT_EQUAL(check_tex_header(d, k ? "iterations" : "damping"), 1);
        check_tex_compiles(d, "doc", "", "table.tex");
    }
    /* the gauntlet's scoreboard (coloured cells: xcolor's table option), tiny and crafted */
    char crafted[1200];
    snprintf(crafted, sizeof crafted, "%s_crafted", tiny_gauntlet());
    const char *gdirs[2] = {tiny_gauntlet(), crafted};
    for (int k = 0; k < 2; k++) {
        const char *d = gdirs[k];
        int rc = k ? sh("%s tests/gauntlet_check.py craft %s %s && %s analysis/figures/gauntlet.py %s -q", py(),
                        tiny_gauntlet(), d, py(), d)
                   : sh("%s analysis/figures/gauntlet.py %s -q", py(), d);
        if (rc) fprintf(stderr, "%s\n", out);
        CU_ASSERT_EQUAL_FATAL(rc, 0);
        check_tex_compiles(d, "gdoc", "\\usepackage[table]{xcolor}\n", "gauntlet_table.tex");
    }
}

/* compare.py --x iterations: a bare parameter name puts pbd and xpbd on one axis, each
 * run at its own solver's value; table.md has one "iterations" column holding the
 * value of the run's own key (the number in its name); a name that is no parameter
 * is refused. */
static void test_compare_x_across_solvers(void)
{
    if (!py()) return;
    const char *d = iterations_sweep();
    int rc = sh("%s analysis/compare.py %s --x iterations --y max_strain -q", py(), d);
    if (rc) fprintf(stderr, "%s\n", out);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT(exists(d, "max_strain_vs_iterations.png"));
    /* the rows plotted against the bare key: both solvers, every run */
    rc = sh("cd analysis && %s -c \"import cbrun, compare; c, rows = cbrun.read_index('%s'); "
            "compare.bare_column('iterations', rows); "
            "print('solvers', ' '.join(sorted({r['solver'] for r in rows if r['iterations'] != ''})), "
            "sum(r['iterations'] != '' for r in rows))\"", py(), d);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "solvers pbd xpbd 4"));
    char *md = slurp(d, "table.md");
    CU_ASSERT_PTR_NOT_NULL_FATAL(md);
    CU_ASSERT_PTR_NOT_NULL(strstr(md, "| run | solver | iterations (count) | status |"));
    CU_ASSERT_PTR_NULL(strstr(md, "solvers.pbd.iterations"));
    int rows = 0;
    for (const char *p = strstr(md, "\n| hanging__"); p; p = strstr(p + 1, "\n| hanging__")) {
        int named = -1, shown = -2;
        char solver[16];
        CU_ASSERT_EQUAL(sscanf(p, "\n| hanging__%15[a-z]__iterations=%d__r0 | %*s | %d |", solver, &named, &shown), 3);
        CU_ASSERT_EQUAL(named, shown);
        rows++;
    }
    CU_ASSERT_EQUAL(rows, 4);
    CU_ASSERT_NOT_EQUAL(sh("%s analysis/compare.py %s --x bogus -q --no-plots", py(), d), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "--x bogus: not a swept parameter"));
}

/* One style for every figure (analysis/cbrun.py): the style applies constrained layout;
 * save() writes X.png, X.pdf and X.csv and refuses a figure without its data; a panel
 * whose values are all zero says so and draws no line; every figure script saves
 * through it and none lays out by hand (tight_layout) or saves on its own. */
static void test_figure_style_and_csv(void)
{
    if (!py()) return;
    const char *d = cb_test_tmpdir();
    const char *script = cb_test_write_tmp("style_check.py",
        "import sys, os, csv\n"
        "sys.path.insert(0, 'analysis')\n"
        "import cbrun\n"
        "plt = cbrun.use_agg()\n"
        "assert plt.rcParams['figure.constrained_layout.use']\n"
        "fig, ax = plt.subplots(1, 2)\n"
        "ax[0].plot([0, 1], [0, 0])\n"
        "zero = cbrun.empty_panel(ax[0], [0.0, 0.0, float('nan')], 'penetration')\n"
        "ax[1].plot([0, 1], [0, 2])\n"
        "data = cbrun.empty_panel(ax[1], [0.0, 2.0], 'strain')\n"
        "print('zero', zero, len(ax[0].get_lines()), [t.get_text() for t in ax[0].texts])\n"
        "print('data', data, len(ax[1].get_lines()))\n"
        "out = cbrun.save(fig, os.path.join(sys.argv[1], 'style_fig.png'), ['time [s]', 'depth [m]'],\n"
        "                 [[0.0, 0.0], [1.0, 0.5]])\n"
        "rows = list(csv.reader(open(out[2])))\n"
        "print('csv', rows[0], len(rows))\n"
        "try:\n"
        "    cbrun.save(fig, os.path.join(sys.argv[1], 'nodata.png'), [], [])\n"
        "    print('saved without data')\n"
        "except ValueError as e:\n"
        "    print('refused:', e)\n");
    int rc = sh("%s %s %s", py(), script, d);
    if (rc) fprintf(stderr, "%s\n", out);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "zero True 0 ['penetration: all zero']"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "data False 1"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "csv ['time [s]', 'depth [m]'] 3"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "refused: cbrun.save: a figure without its data table"));
    CU_ASSERT(exists(d, "style_fig.png") && exists(d, "style_fig.pdf") && exists(d, "style_fig.csv"));
    /* every script: saves through cbrun.save with a data table, never lays out or saves by hand */
    rc = sh("cd analysis && for f in figures/*.py plot_runs.py compare.py; do "
            "case $f in figures/acm_common.py) continue;; esac; "
            "grep -q 'cbrun.save(' $f || grep -q 'acm_compactor.main\\|work_precision.figure(' $f || echo \"no cbrun.save: $f\"; "
            "grep -n 'tight_layout\\|\\.savefig(' $f | sed \"s|^|$f:|\"; done");
    CU_ASSERT_EQUAL(rc, 0);
    if (out[0]) fprintf(stderr, "%s\n", out);
    CU_ASSERT_EQUAL(out[0], '\0');
}

/* The README's code blocks (tests/readme_check.py): its Python example runs against
 * the runs of a tiny default comparison, its clothbench command lines parse, its
 * options, scripts and files exist. The checker itself fails on a copy that names an
 * option or a file that does not exist, and a skip-test marker skips a block. The speed log the README points to
 * (experiments/bench-results/HISTORY.md) is held to the same: its command lines parse. */
static void test_readme(void)
{
    if (!py()) return;
    const char *t = cb_test_tmpdir();
    int rc = sh("%s tests/readme_check.py README.md --clothbench %s --work %s/readme", py(), cb_test_program(), t);
    if (rc) fprintf(stderr, "%s\n", out);
    CU_ASSERT_EQUAL(rc, 0);
    rc = sh("%s tests/readme_check.py experiments/bench-results/HISTORY.md --clothbench %s --work %s/history", py(),
            cb_test_program(), t);
    if (rc) fprintf(stderr, "%s\n", out);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "parses: clothbench bench --case fms_curtain"));
    rc = sh("%s tests/readme_check.py README.md --clothbench %s --work %s/readme", py(), cb_test_program(), t);
    if (rc) fprintf(stderr, "%s\n", out);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, " 0 failed"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "runs the Python block"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "parses: clothbench sweep"));
    /* an option that does not exist, in the synopsis and in a command line */
    CU_ASSERT_EQUAL(sh("sed 's/--dry-run/--dry-rum/; s/--index/--indx/' README.md > %s/bad1.md && "
                       "%s tests/readme_check.py %s/bad1.md --clothbench %s --work %s/readme", t, py(), t,
                       cb_test_program(), t), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "--dry-rum is not in `clothbench sweep --help`"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "unknown option '--indx'"));
    /* a run file name runs do not have, a script that does not exist */
    CU_ASSERT_EQUAL(sh("sed 's/drape_sphere__explicit__r0.h5/drape_sphere-explicit.h5/; "
                       "s|experiments/default.sh|experiments/defaults.sh|' README.md > %s/bad2.md && "
                       "%s tests/readme_check.py %s/bad2.md --clothbench %s --work %s/readme", t, py(), t,
                       cb_test_program(), t), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "the Python block fails"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "drape_sphere-explicit.h5"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "experiments/defaults.sh: no such file"));
    /* the same bad Python block behind a skip-test marker: skipped, passes */
    CU_ASSERT_EQUAL(sh("sed 's/drape_sphere__explicit__r0.h5/drape_sphere-explicit.h5/; "
                       "/^```python/i <!-- skip-test: checking the marker -->' README.md > %s/bad3.md && "
                       "%s tests/readme_check.py %s/bad3.md --clothbench %s --work %s/readme", t, py(), t,
                       cb_test_program(), t), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "checking the marker"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "1 blocks skipped"));
}

CB_TEST_MAIN("analysis",
    CB_TEST(test_python_available),
    CB_TEST(test_stability_map_figure),
    CB_TEST(test_help),
    CB_TEST(test_compare_matches_info),
    CB_TEST(test_plot_and_render),
    CB_TEST(test_missing_and_unfinished),
    CB_TEST(test_fms_convergence_figure),
    CB_TEST(test_contact_accuracy_figure),
    CB_TEST(test_cantilever_figure),
    CB_TEST(test_table_tex_compiles),
    CB_TEST(test_gauntlet_scoreboard),
    CB_TEST(test_gauntlet_unfinished_cells),
    CB_TEST(test_gauntlet_rules),
    CB_TEST(test_compare_x_across_solvers),
    CB_TEST(test_figure_style_and_csv),
    CB_TEST(test_readme))
