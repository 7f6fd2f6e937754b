/* tests/test_program.c — the clothbench program end to end: exit status and
 * messages for bad input, the run file read back field by field, determinism,
 * divergence and interruption leaving a valid file, `info`, the file read by
 * h5py with its XDMF sidecar checked, every subcommand's --help, bench's progress
 * lines and what sweep --shard I/N says it runs. */
#include "cb_test.h"

#include <hdf5.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "experiments/harness/h5attr.h"
#include "core/mesh.h"

static char out[65536];

/* Runs `clothbench ARGS` (stdout+stderr into out); returns the exit status. */
#define cb(...) cb_test_clothbench(out, sizeof out, 1, __VA_ARGS__)

/* Dataset dims (returns rank) and, if data is non-NULL, its contents as doubles or ints. */
static int ds_dims(hid_t f, const char *path, hsize_t dims[3])
{
    if (H5Lexists(f, path, H5P_DEFAULT) <= 0) return -1;
    hid_t d = H5Dopen(f, path, H5P_DEFAULT);
    hid_t s = H5Dget_space(d);
    int r = H5Sget_simple_extent_dims(s, dims, NULL);
    H5Sclose(s);
    H5Dclose(d);
    return r;
}

static void *ds_read(hid_t f, const char *path, hid_t type, size_t elem, size_t *count)
{
    hsize_t dims[3] = {1, 1, 1};
    int r = ds_dims(f, path, dims);
    if (r < 0) return NULL;
    size_t n = 1;
    for (int i = 0; i < r; i++) n *= dims[i];
    void *buf = calloc(n + 1, elem);
    hid_t d = H5Dopen(f, path, H5P_DEFAULT);
    H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
    H5Dclose(d);
    if (count) *count = n;
    return buf;
}

static void test_list(void)
{
    CU_ASSERT_EQUAL(cb("list"), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "explicit"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "hanging.yaml"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "drape_sphere.yaml"));
    CU_ASSERT_EQUAL(cb(""), 2);
    CU_ASSERT_EQUAL(cb("frobnicate"), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "unknown command 'frobnicate'"));
}

/* A short free-flight run, read back field by field. */
static void test_run_file_layout(void)
{
    const char *path = cb_test_tmp_path("ff.h5");
    int rc = cb("run data/scenes/free_flight.yaml --solver explicit -o %s --set duration=0.05 -q", path);
    if (rc) fprintf(stderr, "%s\n", out);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    H5Eset_auto(H5E_DEFAULT, NULL, NULL);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    CU_ASSERT_FATAL(f >= 0);
    char buf[4096];
    const char *attrs[] = {"clothbench_version", "solver", "scene_name", "scene_text", "parameters",
                           "created", "status", "message"};
    for (int i = 0; i < 8; i++) CU_ASSERT_EQUAL(cb_h5_read_string_attr(f, attrs[i], buf, sizeof buf), 0);
    cb_h5_read_string_attr(f, "solver", buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "explicit");
    cb_h5_read_string_attr(f, "status", buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "ok");
    cb_h5_read_string_attr(f, "scene_name", buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "free_flight");
    cb_h5_read_string_attr(f, "scene_text", buf, sizeof buf);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "duration: 0.05")); /* the override is recorded */
    cb_h5_read_string_attr(f, "created", buf, sizeof buf);
    CU_ASSERT(strlen(buf) >= 19 && buf[4] == '-' && buf[10] == 'T');

    /* mesh: the 20 x 20 grid of the scene */
    cb_grid_def g = cb_default_grid_def();
    g.nx = g.ny = 20;
    g.size[0] = g.size[1] = 0.5;
    g.origin[0] = g.origin[1] = -0.25;
    g.origin[2] = 1.0;
    cb_mesh *m = NULL;
    CU_ASSERT_EQUAL_FATAL(cb_mesh_grid(&g, &m, NULL), CB_OK);
    hsize_t dims[3];
    CU_ASSERT_EQUAL(ds_dims(f, "/mesh/faces", dims), 2);
    CU_ASSERT(dims[0] == (hsize_t)m->nf && dims[1] == 3);
    int *faces = ds_read(f, "/mesh/faces", H5T_NATIVE_INT, sizeof(int), NULL);
    CU_ASSERT(faces && !memcmp(faces, m->f, sizeof(int) * 3 * (size_t)m->nf));
    free(faces);
    int *edges = ds_read(f, "/mesh/edges", H5T_NATIVE_INT, sizeof(int), NULL);
    CU_ASSERT(edges && !memcmp(edges, m->e, sizeof(int) * 2 * (size_t)m->ne));
    free(edges);
    double *rest = ds_read(f, "/mesh/rest_positions", H5T_NATIVE_DOUBLE, sizeof(double), NULL);
    CU_ASSERT(rest && !memcmp(rest, m->x, sizeof(double) * 3 * (size_t)m->nv));
    free(rest);
    size_t nm = 0;
    double *masses = ds_read(f, "/mesh/masses", H5T_NATIVE_DOUBLE, sizeof(double), &nm);
    double msum = 0;
    for (size_t i = 0; masses && i < nm; i++) msum += masses[i];
    CU_ASSERT_EQUAL(nm, (size_t)m->nv);
    CB_ASSERT_REL(msum, 0.1 * 0.25, 1e-12);
    free(masses);

    /* series: 50 steps + the initial row, every metric of cb_metric_table */
    const char *scalars[] = {"time", "dt", "kinetic_energy", "gravity_energy", "stretch_energy", "bend_energy",
                             "total_energy", "solver_energy", "collider_penetrations", "collider_max_depth",
                             "self_intersections", "min_separation", "max_strain", "iterations", "residual",
                             "wall_step_s", "wall_contact_s"};
    for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; i++) {
        char p[128];
        snprintf(p, sizeof p, "/series/%s", scalars[i]);
        int r = ds_dims(f, p, dims);
        if (r != 1 || dims[0] != 51) fprintf(stderr, "  %s: rank %d rows %llu\n", p, r, (unsigned long long)dims[0]);
        CU_ASSERT(r == 1 && dims[0] == 51);
    }
    const char *vectors[] = {"linear_momentum", "angular_momentum", "external_impulse"};
    for (int i = 0; i < 3; i++) {
        char p[128];
        snprintf(p, sizeof p, "/series/%s", vectors[i]);
        CU_ASSERT(ds_dims(f, p, dims) == 2 && dims[0] == 51 && dims[1] == 3);
    }
    double *t = ds_read(f, "/series/time", H5T_NATIVE_DOUBLE, sizeof(double), NULL);
    CU_ASSERT(t && t[0] == 0.0 && fabs(t[50] - 0.05) < 1e-15);
    free(t);
    /* free flight: total energy nearly conserved, momentum exactly */
    double *E = ds_read(f, "/series/total_energy", H5T_NATIVE_DOUBLE, sizeof(double), NULL);
    CU_ASSERT(E && fabs(E[50] - E[0]) < 1e-3 * fabs(E[0]));
    free(E);
    /* per-stage totals: explicit's stages, each within the total step time */
    CU_ASSERT(ds_dims(f, "/stages/seconds", dims) == 1 && dims[0] == 3);
    size_t ns = 0, nw = 0;
    double *stage = ds_read(f, "/stages/seconds", H5T_NATIVE_DOUBLE, sizeof(double), &ns);
    double *wall = ds_read(f, "/series/wall_step_s", H5T_NATIVE_DOUBLE, sizeof(double), &nw);
    double ssum = 0, wsum = 0;
    for (size_t i = 0; stage && i < ns; i++) {
        CU_ASSERT(stage[i] >= 0);
        ssum += stage[i];
    }
    for (size_t i = 0; wall && i < nw; i++) wsum += wall[i];
    CU_ASSERT(ssum > 0 && ssum <= wsum * 1.0001);
    free(stage);
    free(wall);
    double *ev = ds_read(f, "/series/events", H5T_NATIVE_DOUBLE, sizeof(double), NULL);
    CU_ASSERT(ev && isnan(ev[1])); /* explicit is not event-based */
    free(ev);
    /* frames: 0, 17, 34, 50 (frame_rate 60 at dt 1e-3 -> every 17 steps, and the last step) */
    CU_ASSERT(ds_dims(f, "/frames/positions", dims) == 3 && dims[0] == 4 && dims[1] == 400 && dims[2] == 3);
    double *ft = ds_read(f, "/frames/time", H5T_NATIVE_DOUBLE, sizeof(double), NULL);
    CU_ASSERT(ft && ft[0] == 0.0 && fabs(ft[1] - 0.017) < 1e-15 && fabs(ft[3] - 0.05) < 1e-15);
    free(ft);
    H5Fclose(f);
    cb_mesh_free(&m);

    /* info agrees */
    CU_ASSERT_EQUAL(cb("info %s", path), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "explicit"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "steps      50"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "ms per step"));
    CU_ASSERT_EQUAL(cb("info %s", cb_test_tmp_path("missing.h5")), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "missing.h5"));
}

static int datasets_equal(hid_t a, hid_t b, const char *path)
{
    size_t na = 0, nb = 0;
    double *x = ds_read(a, path, H5T_NATIVE_DOUBLE, sizeof(double), &na);
    double *y = ds_read(b, path, H5T_NATIVE_DOUBLE, sizeof(double), &nb);
    int eq = x && y && na == nb && !memcmp(x, y, na * sizeof(double));
    free(x);
    free(y);
    return eq;
}

static void test_determinism(void)
{
    const char *a = cb_test_tmp_path("det_a.h5"), *b = cb_test_tmp_path("det_b.h5");
    const char *args = "data/scenes/drape_sphere.yaml --solver explicit -q --set duration=0.1 "
                       "--set cloth.grid.nx=12 --set cloth.grid.ny=12";
    CU_ASSERT_EQUAL_FATAL(cb("run %s -o %s", args, a), 0);
    CU_ASSERT_EQUAL_FATAL(cb("run %s -o %s", args, b), 0);
    hid_t fa = H5Fopen(a, H5F_ACC_RDONLY, H5P_DEFAULT), fb = H5Fopen(b, H5F_ACC_RDONLY, H5P_DEFAULT);
    CU_ASSERT_FATAL(fa >= 0 && fb >= 0);
    const char *same[] = {"/series/time", "/series/kinetic_energy", "/series/total_energy",
                          "/series/linear_momentum", "/series/angular_momentum", "/series/external_impulse",
                          "/series/collider_penetrations", "/series/max_strain", "/series/iterations",
                          "/frames/time", "/frames/positions"};
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        int eq = datasets_equal(fa, fb, same[i]);
        if (!eq) fprintf(stderr, "  %s differs between identical runs\n", same[i]);
        CU_ASSERT(eq);
    }
    /* the run did something: the cloth fell onto the sphere */
    size_t n = 0;
    double *pen = ds_read(fa, "/series/collider_penetrations", H5T_NATIVE_DOUBLE, sizeof(double), &n);
    for (size_t i = 0; pen && i < n; i++) CU_ASSERT(pen[i] == 0.0);
    free(pen);
    H5Fclose(fa);
    H5Fclose(fb);
}

static void test_bad_input_exit_2(void)
{
    CU_ASSERT_EQUAL(cb("run %s --solver explicit", cb_test_tmp_path("nope.yaml")), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "nope.yaml"));
    CU_ASSERT_EQUAL(cb("run data/scenes/hanging.yaml --solver warp9"), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "unknown solver 'warp9'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "explicit"));
    CU_ASSERT_EQUAL(cb("run data/scenes/hanging.yaml"), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "--solver"));
    CU_ASSERT_EQUAL(cb("run data/scenes/hanging.yaml --solver explicit --bogus"), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "--bogus"));

    const char *bad = cb_test_write_tmp("badkey.yaml", "name: x\nduration: 1\ndt: 0.01\ncloth:\n"
                                               "  grid: {nx: 3, ny: 3, size: [1, 1], origin: [0, 0, 0]}\n"
                                               "  densty: 0.2\n");
    CU_ASSERT_EQUAL(cb("run %s --solver explicit -o %s", bad, cb_test_tmp_path("badkey.h5")), 2);
    char needle[1100];
    snprintf(needle, sizeof needle, "%s:6", bad);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, needle));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "densty"));
    CU_ASSERT_EQUAL(access(cb_test_tmp_path("badkey.h5"), F_OK), -1); /* no file for bad input */

    CU_ASSERT_EQUAL(cb("run data/scenes/hanging.yaml --solver explicit --set dt=-1 -o %s", cb_test_tmp_path("neg.h5")), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "dt"));
    CU_ASSERT_EQUAL(cb("run data/scenes/hanging.yaml --solver explicit --set nonsense -o %s", cb_test_tmp_path("ns.h5")), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "nonsense"));

    /* a scene whose OBJ mesh is non-manifold: the message names the OBJ and its line */
    cb_test_write_tmp("nm.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 -1 0\nv 0 0 1\nf 1 2 3\nf 2 1 4\nf 1 2 5\n");
    const char *sc = cb_test_write_tmp("nm.yaml", "name: nm\nduration: 1\ndt: 0.01\ncloth:\n  mesh: nm.obj\n");
    CU_ASSERT_EQUAL(cb("run %s --solver explicit -o %s", sc, cb_test_tmp_path("nm.h5")), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "nm.obj:8"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "non-manifold"));
}

/* Every rejected input of the foundation issue through the program: exit status 2,
 * the message naming the offending file and line, and no run file. */
static void test_bad_input_table(void)
{
    static const struct { const char *obj, *scene, *needle_file, *needle; } cases[] = {
        {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 1 2\n", NULL, "bad.obj:4", "degenerate"},
        {"v 0 0 0\nv 1 0 0\nv 2 0 0\nf 1 2 3\n", NULL, "bad.obj:4", "zero area"},
        {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\nf 2 3 1\n", NULL, "bad.obj:5", "repeats"},
        {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 9\n", NULL, "bad.obj:4", "out of range"},
        {"v 0 0 0\nv 1 0 nan\nv 0 1 0\nf 1 2 3\n", NULL, "bad.obj:2", "not finite"},
        {"# empty\n", NULL, "bad.obj", "empty mesh"},
        {NULL, "name: x\nduration: 1\ndt: 0.01\ncloth:\n  mesh: missing.obj\n", "missing.obj", "cannot read"},
        {NULL, "name: x\nduration: 1\ndt: abc\ncloth:\n  grid: {nx: 3, ny: 3, size: [1, 1]}\n", "bad.yaml:3",
         "expected a number"},
        {NULL, "name: x\nduration: 1\ndt: 0\ncloth:\n  grid: {nx: 3, ny: 3, size: [1, 1]}\n", "bad.yaml:3", "dt"},
        {NULL, "name: x\nduration: 1\ndt: 0.01\ncloth:\n  grid: {nx: 3, ny: 3, size: [1, 1]}\n  density: -2\n",
         "bad.yaml:6", "density"},
        {NULL, "name: x\nduration: 1\ndt: 0.01\ncloth:\n  grid: {nx: 3, ny: 3, size: [1, 1]}\n"
               "solvers:\n  explicit: {iterations: 3}\n", "bad.yaml:7", "unknown key 'iterations'"},
        {NULL, "name: x\nduration: 1\ndt: 0.01\ncloth:\n  grid: {nx: 3, ny: 3, size: [1, 1]}\n"
               "  pins: [{indices: [99]}]\n", "bad.yaml:6", "out of range"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (cases[i].obj) cb_test_write_tmp("bad.obj", cases[i].obj);
        const char *scene = cb_test_write_tmp("bad.yaml", cases[i].scene ? cases[i].scene
                                                                  : "name: x\nduration: 1\ndt: 0.01\ncloth:\n  mesh: bad.obj\n");
        const char *run = cb_test_tmp_path("bad_case.h5");
        unlink(run);
        int rc = cb("run %s --solver explicit -q -o %s", scene, run);
        int ok = rc == 2 && strstr(out, cases[i].needle_file) && strstr(out, cases[i].needle);
        if (!ok) fprintf(stderr, "  case %zu: exit %d, output: %s", i, rc, out);
        CU_ASSERT(ok);
        CU_ASSERT_EQUAL(access(run, F_OK), -1);
    }
}

static void check_status(const char *path, const char *status, const char *needle)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    CU_ASSERT_FATAL(f >= 0);
    char buf[2048];
    cb_h5_read_string_attr(f, "status", buf, sizeof buf);
    if (strcmp(buf, status)) fprintf(stderr, "  status '%s', expected '%s'\n", buf, status);
    CU_ASSERT_STRING_EQUAL(buf, status);
    cb_h5_read_string_attr(f, "message", buf, sizeof buf);
    if (needle && !strstr(buf, needle)) fprintf(stderr, "  message '%s' lacks '%s'\n", buf, needle);
    if (needle) CU_ASSERT_PTR_NOT_NULL(strstr(buf, needle));
    hsize_t dims[3];
    CU_ASSERT(ds_dims(f, "/series/time", dims) == 1 && dims[0] >= 1);
    CU_ASSERT(ds_dims(f, "/frames/positions", dims) == 3 && dims[0] >= 1);
    H5Fclose(f);
}

static void test_divergence_exit_1(void)
{
    const char *path = cb_test_tmp_path("div.h5");
    int rc = cb("run data/scenes/hanging.yaml --solver explicit -q -o %s --set dt=0.01 --set duration=2 "
                "--set solvers.explicit.substeps=1 --set cloth.grid.nx=10 --set cloth.grid.ny=10 "
                "--set health.energy_factor=1e300 --set health.max_strain=1e300", path); /* the bound, not the health check */
    CU_ASSERT_EQUAL(rc, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "diverged"));
    check_status(path, "diverged", "diverged at step ");
}

static void test_sigint_leaves_valid_file(void)
{
    const char *path = cb_test_tmp_path("int.h5");
    /* interrupt once the run file holds row and frame 0: the bar's "step 0/" says so
     * (an event; a sleep assumed the run got that far in 0.5 s) */
    const char *args[] = {"run", "data/scenes/hanging.yaml", "--solver", "explicit", "-o", path, "--set",
                          "duration=1000", NULL};
    int tty;
    pid_t pid = cb_test_spawn_tty(&tty, args);
    CU_ASSERT_FATAL(pid > 0);
    CU_ASSERT(cb_test_read_until(tty, "step 0/"));
    kill(pid, SIGINT);
    cb_test_read_until(tty, NULL);
    close(tty);
    int st = 0;
    waitpid(pid, &st, 0);
    CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 1);
    check_status(path, "interrupted", "interrupted");
}

static void test_h5py_and_xdmf(void)
{
    const char *py = getenv("CB_PYTHON");
    if (!py || !*py) {
        fprintf(stderr, "  CB_PYTHON not set: h5py check skipped\n");
        return;
    }
    const char *path = cb_test_tmp_path("py.h5");
    CU_ASSERT_EQUAL_FATAL(cb("run data/scenes/hanging.yaml --solver explicit -q -o %s --set duration=0.05 "
                             "--set cloth.grid.nx=8 --set cloth.grid.ny=8", path), 0);
    const char *script = cb_test_write_tmp("check.py",
        "import sys, h5py, xml.etree.ElementTree as ET, os\n"
        "p = sys.argv[1]\n"
        "f = h5py.File(p, 'r')\n"
        "n = 0\n"
        "def visit(name, obj):\n"
        "    global n\n"
        "    if isinstance(obj, h5py.Dataset):\n"
        "        obj[()]; n += 1\n"
        "f.visititems(visit)\n"
        "assert n >= 25, n\n"
        "assert f.attrs['status'] in ('ok', b'ok'), f.attrs['status']\n"
        "x = os.path.splitext(p)[0] + '.xdmf'\n"
        "root = ET.parse(x).getroot()\n"
        "refs = [e.text.strip() for e in root.iter('DataItem') if e.get('Format') == 'HDF']\n"
        "assert refs, 'no HDF DataItems'\n"
        "for r in refs:\n"
        "    fn, ds = r.split(':', 1)\n"
        "    assert os.path.basename(fn) == os.path.basename(p), r\n"
        "    assert ds in f, r\n"
        "print('checked', n, 'datasets,', len(refs), 'xdmf references')\n");
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s %s %s", py, script, path);
    int st = system(cmd);
    CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* Every subcommand takes --help and -h: exit 0, its own usage on stdout naming every
 * option its parser takes; each option so named is accepted by the parser (with
 * --help appended nothing runs); an unknown option still fails, also before --help. */
static void test_subcommand_help(void)
{
    static const struct {
        const char *cmd;
        const char *opts[12][2]; /* option and a value for it (NULL: a flag) */
    } cmds[] = {
        {"list", {{NULL, NULL}}},
        {"run", {{"--solver", "explicit"}, {"-s", "pbd"}, {"--output", "x.h5"}, {"-o", "x.h5"}, {"--set", "dt=0.01"},
                 {"--no-frames", NULL}, {"--audit", NULL}, {"--quiet", NULL}, {"-q", NULL}}},
        {"info", {{NULL, NULL}}},
        {"rerun", {{"--output", "new.h5"}, {"-o", "new.h5"}, {"--check", NULL}, {"--scene-dir", "d"},
                   {"--quiet", NULL}, {"-q", NULL}}},
        {"sweep", {{"--jobs", "2"}, {"-j", "2"}, {"--shard", "0/2"}, {"--dry-run", NULL}, {"-n", NULL},
                   {"--output", "d"}, {"--set", "dt=0.01"}, {"--index", NULL}, {"--check", NULL},
                   {"--no-frames", NULL}, {"--quiet", NULL}}},
        {"bench", {{"--quick", NULL}, {"--output", "b.csv"}, {"--solver", "fms"}, {"--case", "hanging"},
                   {"--steps", "2"}, {"--repeats", "2"}, {"--max-vertices", "100"}, {"--size", "8"},
                   {"--set", "dt=0.01"}, {"--quiet", NULL}, {"-q", NULL}}},
        {"help", {{NULL, NULL}}},
    };
    for (size_t c = 0; c < sizeof cmds / sizeof cmds[0]; c++) {
        const char *cmd = cmds[c].cmd;
        char head[64];
        snprintf(head, sizeof head, "usage: clothbench %s", cmd);
        for (int h = 0; h < 2; h++) {
            int rc = cb("%s %s", cmd, h ? "-h" : "--help");
            if (rc || strncmp(out, head, strlen(head))) fprintf(stderr, "  %s --help: exit %d\n%s\n", cmd, rc, out);
            CU_ASSERT_EQUAL(rc, 0);
            CU_ASSERT_EQUAL(strncmp(out, head, strlen(head)), 0);
            CU_ASSERT_PTR_NOT_NULL(strstr(out, "--help"));
        }
        static char help[sizeof out];
        cb("%s --help", cmd);
        snprintf(help, sizeof help, "%s", out);
        for (int k = 0; k < 12 && cmds[c].opts[k][0]; k++) {
            const char *o = cmds[c].opts[k][0], *v = cmds[c].opts[k][1];
            char w1[64], w2[64]; /* "  -q, --quiet": the option as a word of the help */
            snprintf(w1, sizeof w1, " %s,", o);
            snprintf(w2, sizeof w2, " %s ", o);
            if (!strstr(help, w1) && !strstr(help, w2)) fprintf(stderr, "  %s --help does not name %s\n", cmd, o);
            CU_ASSERT(strstr(help, w1) || strstr(help, w2));
            int rc = cb("%s %s %s --help", cmd, o, v ? v : "");
            if (rc) fprintf(stderr, "  clothbench %s %s %s --help: exit %d\n%s\n", cmd, o, v ? v : "", rc, out);
            CU_ASSERT_EQUAL(rc, 0);
        }
        /* an unknown option fails with its name, before or after --help */
        CU_ASSERT_EQUAL(cb("%s --bogus --help", cmd), 2);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "unknown option '--bogus'"));
        CU_ASSERT_EQUAL(cb("%s --help --bogus", cmd), 2);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "unknown option '--bogus'"));
        /* the overview names the subcommand; help CMD is CMD --help */
        CU_ASSERT_EQUAL(cb("--help"), 0);
        snprintf(head, sizeof head, "\n  %s ", cmd);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, head));
        CU_ASSERT_EQUAL(cb("help %s", cmd), 0);
        CU_ASSERT_STRING_EQUAL(out, help);
    }
    CU_ASSERT_EQUAL(cb("help frobnicate"), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "unknown command 'frobnicate'"));
    CU_ASSERT_EQUAL(cb("run data/scenes/hanging.yaml --solver explicit --bogus"), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "clothbench run: unknown option '--bogus'"));
}

/* bench writes one progress line per finished row to stderr when it is not a terminal
 * (here a pipe), numbered k/n; -q writes none. The CSV stays on stdout. */
static void test_bench_progress_lines(void)
{
    int rc = cb_test_shell(out, sizeof out, "( %s bench --quick --case hanging --solver explicit --solver pbd --steps 1 "
                                            "--repeats 1 2>&1 >/dev/null )", cb_test_program());
    CU_ASSERT_EQUAL(rc, 0);
    const char *first = strstr(out, "bench: 1/2 hanging explicit 1024 vertices ");
    const char *second = strstr(out, "bench: 2/2 hanging pbd 1024 vertices ");
    if (!first || !second) fprintf(stderr, "  bench stderr:\n%s\n", out);
    CU_ASSERT_PTR_NOT_NULL(first);
    CU_ASSERT_PTR_NOT_NULL(second);
    CU_ASSERT(first && second && first < second);
    double ms = 0;
    CU_ASSERT(first && sscanf(first, "bench: 1/2 hanging explicit 1024 vertices %lf ms/step", &ms) == 1 && ms > 0);
    CU_ASSERT_PTR_NULL(strchr(out, '\r'));
    rc = cb_test_shell(out, sizeof out, "( %s bench --quick --case hanging --solver explicit --steps 1 --repeats 1 -q "
                                        "2>&1 >/dev/null )", cb_test_program());
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_PTR_NULL(strstr(out, "bench:"));
}

/* "shard I/N: runs a, b, c, ..., z (K of M runs: ...)" against the runs the dry run
 * lists for that shard: the same count, first runs and last run. */
static void check_shard_line(const char *exp, int I, int N, int total)
{
    CU_ASSERT_EQUAL_FATAL(cb("sweep %s --dry-run --shard %d/%d", exp, I, N), 0);
    long listed[64];
    int nl = 0;
    char copy[sizeof out];
    snprintf(copy, sizeof copy, "%s", out);
    for (char *save = NULL, *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        long i;
        char action[16];
        if (line[0] != '#' && sscanf(line, "%ld %15s", &i, action) == 2 && nl < 64) listed[nl++] = i;
    }
    char key[64];
    snprintf(key, sizeof key, "# shard %d/%d: ", I, N);
    const char *p = strstr(out, key);
    if (!p) fprintf(stderr, "  no '%s' in:\n%s\n", key, out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    p += strlen(key);
    long shown[8];
    int ns = 0, dots = 0;
    if (!strncmp(p, "no runs", 7)) p += 7;
    else p += strncmp(p, "runs ", 5) ? 4 : 5;
    while (*p && *p != '(') {
        char *end;
        long v = strtol(p, &end, 10);
        if (end != p) {
            if (ns < 8) shown[ns++] = v;
            p = end;
        } else {
            dots += !strncmp(p, "...", 3);
            p += strncmp(p, "...", 3) ? 1 : 3;
        }
    }
    long count = -1, of = -1;
    CU_ASSERT_EQUAL(sscanf(p, "(%ld of %ld runs", &count, &of), 2);
    CU_ASSERT_EQUAL(count, nl);
    CU_ASSERT_EQUAL(of, total);
    CU_ASSERT_EQUAL(ns, nl <= 4 ? nl : 4);
    CU_ASSERT_EQUAL(dots, nl > 4);
    for (int k = 0; k < ns && k < 3; k++) CU_ASSERT_EQUAL(shown[k], listed[k]);
    if (nl > 3 && ns == 4) CU_ASSERT_EQUAL(shown[3], listed[nl - 1]);
}

static void test_sweep_says_what_its_shard_is(void)
{
    const char *e = cb_test_write_tmp("shard12.yaml",
                                      "name: shard12\n"
                                      "scenes: [data/scenes/hanging.yaml]\n"
                                      "solvers: [explicit]\n"
                                      "set: {duration: 0.05, cloth.grid.nx: 4, cloth.grid.ny: 4}\n"
                                      "grid: {solvers.explicit.damping: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, "
                                      "1.0, 1.1, 1.2]}\n");
    const int shards[][2] = {{1, 4}, {0, 2}, {4, 5}, {2, 3}, {3, 8}, {11, 12}, {13, 20}};
    for (size_t k = 0; k < sizeof shards / sizeof shards[0]; k++) check_shard_line(e, shards[k][0], shards[k][1], 12);
    /* one shard: nothing to say */
    CU_ASSERT_EQUAL(cb("sweep %s --dry-run", e), 0);
    CU_ASSERT_PTR_NULL(strstr(out, "# shard"));
    /* a real sweep prints the same line at start */
    CU_ASSERT_EQUAL(cb("sweep %s --dry-run --shard 1/4", e), 0);
    char expect[512];
    const char *p = strstr(out, "# shard 1/4: ");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    snprintf(expect, sizeof expect, "%.*s", (int)strcspn(p + 2, "\n"), p + 2);
    CU_ASSERT_EQUAL(cb("sweep %s --shard 1/4 -o %s", e, cb_test_tmp_path("shard12_out")), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, expect));
}

CB_TEST_MAIN("program",
             CB_TEST(test_list),
             CB_TEST(test_run_file_layout),
             CB_TEST(test_determinism),
             CB_TEST(test_bad_input_exit_2),
             CB_TEST(test_bad_input_table),
             CB_TEST(test_divergence_exit_1),
             CB_TEST(test_sigint_leaves_valid_file),
             CB_TEST(test_h5py_and_xdmf),
             CB_TEST(test_subcommand_help),
             CB_TEST(test_bench_progress_lines),
             CB_TEST(test_sweep_says_what_its_shard_is))
