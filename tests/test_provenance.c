/* tests/test_provenance.c — what a run file says produced it, and `clothbench rerun`:
 * SHA-256 against the FIPS 180-4 examples, command-line quoting that a shell reads back,
 * the provenance attributes and `info`, the layout version (a newer file is refused),
 * rerun --check identical for every registered solver, and the check finding a changed
 * value (first row and metric) and a changed mesh file. */
#include "cb_test.h"

#include <hdf5.h>

#include "experiments/harness/h5attr.h"
#include "experiments/harness/provenance.h"
#include "core/sha256.h"
#include "core/solver.h"
#include "experiments/harness/registry.h"

static char out[65536];

#define cb(...) cb_test_clothbench(out, sizeof out, 1, __VA_ARGS__)

static void test_sha256_vectors(void)
{
    /* FIPS 180-4 examples (NIST CSRC "SHA256.pdf") and the empty message */
    struct { const char *msg; const char *hex; } v[] = {
        {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"}};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        cb_sha256 c;
        char hex[65];
        cb_sha256_init(&c);
        cb_sha256_update(&c, v[i].msg, strlen(v[i].msg));
        cb_sha256_hex(&c, hex);
        CU_ASSERT_STRING_EQUAL(hex, v[i].hex);
    }
    /* one million 'a', fed in pieces that straddle the 64-byte blocks */
    cb_sha256 c;
    char hex[65], chunk[1000];
    memset(chunk, 'a', sizeof chunk);
    cb_sha256_init(&c);
    for (int i = 0; i < 1000; i++) cb_sha256_update(&c, chunk, sizeof chunk);
    cb_sha256_hex(&c, hex);
    CU_ASSERT_STRING_EQUAL(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    /* the file digest equals the buffer digest, and a missing file names itself */
    const char *path = cb_test_write_tmp("sha.txt", "abc");
    cb_error err;
    CU_ASSERT_EQUAL(cb_sha256_file(path, hex, &err), 0);
    CU_ASSERT_STRING_EQUAL(hex, v[0].hex);
    CU_ASSERT_EQUAL(cb_sha256_file(cb_test_tmp_path("no-such-file"), hex, &err), CB_ERR_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "no-such-file"));
}

/* The quoted command line, given back to a shell, yields the same words. */
static void test_command_line_quoting(void)
{
    char *argv[] = {"clothbench", "run", "my scene.yaml", "--set", "name=it's", "a\"b", "", "$HOME"};
    int argc = (int)(sizeof argv / sizeof argv[0]);
    char *line = cb_provenance_command_line(argc, argv);
    CU_ASSERT_PTR_NOT_NULL_FATAL(line);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "for w in %s; do printf '[%%s]' \"$w\"; done", line);
    char got[4096];
    CU_ASSERT_EQUAL(cb_test_capture(cmd, got, sizeof got), 0);
    CU_ASSERT_STRING_EQUAL(got, "[clothbench][run][my scene.yaml][--set][name=it's][a\"b][][$HOME]");
    free(line);
}

static void attr(hid_t f, const char *name, char *buf, size_t n)
{
    int rc = cb_h5_read_string_attr(f, name, buf, n);
    if (rc) fprintf(stderr, "attribute %s missing\n", name);
    CU_ASSERT_EQUAL(rc, 0);
}

/* A run on a mesh scene records the build, the machine, the command and the digest of
 * the mesh file; `info` prints them. */
static void test_run_records_provenance(void)
{
    const char *path = cb_test_tmp_path("prov.h5");
    int rc = cb("run data/scenes/drape_mesh.yaml --solver explicit -o %s --set duration=0.01 --no-frames -q", path);
    if (rc) fprintf(stderr, "%s\n", out);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    H5Eset_auto(H5E_DEFAULT, NULL, NULL);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    CU_ASSERT_FATAL(f >= 0);
    int layout = 0;
    CU_ASSERT_EQUAL(cb_h5_read_int_attr(f, "layout_version", &layout), 0);
    CU_ASSERT_EQUAL(layout, CB_LAYOUT_VERSION);
    char buf[4096];
    cb_provenance pv;
    cb_provenance_get(&pv); /* this test binary is built from the same tree and flags */
    attr(f, "git_commit", buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, pv.git_commit);
    CU_ASSERT(strlen(buf) >= 40 || !strcmp(buf, "unknown"));
    attr(f, "build_type", buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, pv.build_type);
    attr(f, "build_flags", buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, pv.build_flags);
    attr(f, "libraries", buf, sizeof buf);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "CHOLMOD "));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "HDF5 1."));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "libyaml "));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "OpenBLAS"));
    attr(f, "host", buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, pv.host);
    attr(f, "command_line", buf, sizeof buf);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "run data/scenes/drape_mesh.yaml --solver explicit"));
    attr(f, "scene_dir", buf, sizeof buf);
    CU_ASSERT_EQUAL(buf[0], '/'); /* absolute, so a rerun from another folder finds the files */
    attr(f, "mesh_files", buf, sizeof buf);
    char hex[65], line[200];
    cb_error err;
    CU_ASSERT_EQUAL_FATAL(cb_sha256_file("data/meshes/blob.obj", hex, &err), 0);
    snprintf(line, sizeof line, "%s  /", hex);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, line));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "/meshes/blob.obj\n"));
    H5Fclose(f);
    CU_ASSERT_EQUAL(cb("info %s", path), 0);
    snprintf(line, sizeof line, "made by    commit %s", pv.git_commit);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, line));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "command: "));
}

static void set_int_attr(const char *path, const char *name, int value)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    CU_ASSERT_FATAL(f >= 0);
    if (H5Aexists(f, name) > 0) H5Adelete(f, name);
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(f, name, H5T_STD_I32LE, sp, H5P_DEFAULT, H5P_DEFAULT);
    CU_ASSERT(H5Awrite(a, H5T_NATIVE_INT, &value) >= 0);
    H5Aclose(a);
    H5Sclose(sp);
    H5Fclose(f);
}

/* A file from a newer layout is refused with both versions named; one without the
 * attribute is read as layout 1 and says its provenance was not recorded. */
static void test_layout_version(void)
{
    const char *path = cb_test_tmp_path("layout.h5");
    CU_ASSERT_EQUAL_FATAL(cb("run data/scenes/free_flight.yaml --solver explicit -o %s --set duration=0.01 -q", path), 0);
    set_int_attr(path, "layout_version", CB_LAYOUT_VERSION + 1);
    CU_ASSERT_EQUAL(cb("info %s", path), 2);
    char want[200];
    snprintf(want, sizeof want, "run file layout %d, but this clothbench reads layouts 1 to %d",
             CB_LAYOUT_VERSION + 1, CB_LAYOUT_VERSION);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, want));
    CU_ASSERT_EQUAL(cb("rerun %s -q", path), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, want));
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    H5Adelete(f, "layout_version");
    H5Fclose(f);
    CU_ASSERT_EQUAL(cb("info %s", path), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "not recorded (run file layout 1)"));
}

/* Every registered solver: a rerun from the file alone is bitwise identical. The scene
 * has contact (a sphere) and self collision where the solver has it. */
static void test_rerun_identical_every_solver(void)
{
    for (int i = 0; i < cb_solver_count(); i++) {
        const char *name = cb_solver_at(i)->name;
        char file[128];
        snprintf(file, sizeof file, "rr-%s.h5", name);
        const char *path = cb_test_tmp_path(file);
        int rc = cb("run data/scenes/drape_sphere.yaml --solver %s -o %s --set duration=0.1 "
                    "--set cloth.grid.nx=10 --set cloth.grid.ny=10 --set cloth.grid.origin=[-0.5,-0.5,0.81] -q",
                    name, path);
        if (rc) fprintf(stderr, "%s: %s\n", name, out);
        CU_ASSERT_EQUAL(rc, 0);
        rc = cb("rerun %s --check -q", path);
        if (rc || !strstr(out, "identical\n")) fprintf(stderr, "rerun %s:\n%s\n", name, out);
        CU_ASSERT_EQUAL(rc, 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "identical\n"));
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "same build"));
    }
}

/* Overwrite one element of /series/<name> (1-d) at row r. */
static void poke_series(const char *path, const char *name, long r, double v)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    CU_ASSERT_FATAL(f >= 0);
    char p[200];
    snprintf(p, sizeof p, "/series/%s", name);
    hid_t d = H5Dopen(f, p, H5P_DEFAULT);
    hid_t fs = H5Dget_space(d);
    hsize_t start[1] = {(hsize_t)r}, count[1] = {1};
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
    hid_t ms = H5Screate_simple(1, count, NULL);
    CU_ASSERT(H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, &v) >= 0);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Dclose(d);
    H5Fclose(f);
}

/* The check finds the first differing row and names the metric; wall times do not
 * count. The old file is poked (the rerun is clean), so the poked rows differ. */
static void test_check_finds_difference(void)
{
    const char *a = cb_test_tmp_path("cmp-a.h5"), *d = cb_test_tmp_path("cmp-d.h5");
    CU_ASSERT_EQUAL_FATAL(cb("run data/scenes/free_flight.yaml --solver explicit -o %s --set duration=0.05 -q", a), 0);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cp %s %s", a, d);
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    poke_series(d, "wall_step_s", 3, 123.0); /* a wall time is not a result */
    CU_ASSERT_EQUAL(cb("rerun %s -o %s --check -q", d, cb_test_tmp_path("cmp-e.h5")), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "identical\n"));
    poke_series(d, "kinetic_energy", 7, 1.5);
    poke_series(d, "total_energy", 9, 2.5);
    int rc = cb("rerun %s -o %s --check -q", d, cb_test_tmp_path("cmp-e.h5"));
    CU_ASSERT_EQUAL(rc, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "row 7: kinetic_energy old 1.5 new "));
    CU_ASSERT_PTR_NULL(strstr(out, "row 9"));      /* the first differing row only */
    CU_ASSERT_PTR_NULL(strstr(out, "wall_step_s"));
    CU_ASSERT_PTR_NULL(strstr(out, "identical"));
    /* a rerun never overwrites the run it reproduces */
    CU_ASSERT_EQUAL(cb("rerun %s -o %s -q", a, a), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "would overwrite"));
}

/* Replace the first `from` in the root string attribute `name` by `to`. */
static void edit_attr(const char *path, const char *name, const char *from, const char *to)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    CU_ASSERT_FATAL(f >= 0);
    char *old = cb_h5_string_attr(f, name);
    CU_ASSERT_PTR_NOT_NULL_FATAL(old);
    char *at = strstr(old, from);
    CU_ASSERT_PTR_NOT_NULL_FATAL(at);
    size_t n = strlen(old) + strlen(to) + 1;
    char *text = malloc(n);
    snprintf(text, n, "%.*s%s%s", (int)(at - old), old, to, at + strlen(from));
    H5Adelete(f, name);
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(f, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
    CU_ASSERT(H5Awrite(a, t, &text) >= 0);
    H5Aclose(a);
    H5Sclose(sp);
    H5Tclose(t);
    H5Fclose(f);
    free(text);
    free(old);
}

/* The rerun takes the solver's settings from the effective parameters, not from the
 * scene's block: a block that now says otherwise (as a changed default would) does not
 * change the rerun; the parameters themselves do. */
static void test_effective_parameters_win(void)
{
    const char *a = cb_test_tmp_path("eff-a.h5"), *b = cb_test_tmp_path("eff-b.h5");
    int rc = cb("run data/scenes/drape_sphere.yaml --solver explicit -o %s --set duration=0.05 "
                "--set solvers.explicit.damping=0.5 --set cloth.grid.nx=8 --set cloth.grid.ny=8 -q", a);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cp %s %s", a, b);
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    edit_attr(b, "scene_text", "damping: 0.5", "damping: 3");
    rc = cb("rerun %s -o %s --check -q", b, cb_test_tmp_path("eff-b2.h5"));
    if (rc) fprintf(stderr, "%s\n", out);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "identical"));
    edit_attr(b, "parameters", "damping: 0.5", "damping: 3");
    CU_ASSERT_EQUAL(cb("rerun %s -o %s --check -q", b, cb_test_tmp_path("eff-b3.h5")), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "series differ"));
}

/* A mesh file that changed since the run is named; the rerun goes on and differs. */
static void test_changed_mesh_file(void)
{
    char cmd[4096];
    const char *dir = cb_test_tmp_path("moved");
    snprintf(cmd, sizeof cmd, "mkdir -p %s/scenes %s/meshes && cp data/meshes/blob.obj %s/meshes/ && "
             "cp data/scenes/drape_mesh.yaml %s/scenes/", dir, dir, dir, dir);
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    const char *run = cb_test_tmp_path("mesh-run.h5");
    int rc = cb("run %s/scenes/drape_mesh.yaml --solver explicit -o %s --set duration=0.3 --set cloth.grid.origin=[-0.5,-0.5,0.75] "
                "--set cloth.grid.nx=12 --set cloth.grid.ny=12 --no-frames -q", dir, run);
    if (rc) fprintf(stderr, "%s\n", out);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    /* scale the blob by 1.1 (every vertex line) */
    snprintf(cmd, sizeof cmd, "awk '$1==\"v\"{printf \"v %%.9g %%.9g %%.9g\\n\", $2*1.1, $3*1.1, $4*1.1; next} {print}' "
             "%s/meshes/blob.obj > %s/blob.tmp && mv %s/blob.tmp %s/meshes/blob.obj", dir, dir, dir, dir);
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    rc = cb("rerun %s -o %s --check -q", run, cb_test_tmp_path("mesh-rerun.h5"));
    CU_ASSERT_EQUAL(rc, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "meshes/blob.obj changed since the run"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "series differ"));
    /* the files moved away: the rerun says which file it cannot read and how to point it */
    snprintf(cmd, sizeof cmd, "mv %s %s-gone", dir, dir);
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    rc = cb("rerun %s -o %s -q", run, cb_test_tmp_path("mesh-rerun2.h5"));
    CU_ASSERT_EQUAL(rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "blob.obj"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "--scene-dir"));
    snprintf(cmd, sizeof cmd, "%s-gone/scenes", dir);
    rc = cb("rerun %s -o %s --scene-dir %s -q", run, cb_test_tmp_path("mesh-rerun3.h5"), cmd);
    CU_ASSERT_EQUAL(rc, 0);
}

/* The column `name` of row `row` (0-based, after the header) of a CSV without quoted
 * commas in the fields read here; "" when absent. */
static void csv_cell(const char *path, int row, const char *name, char *cell, size_t n)
{
    cell[0] = '\0';
    FILE *f = fopen(path, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    static char line[65536];
    int col = -1;
    if (fgets(line, sizeof line, f)) {
        int k = 0;
        for (char *t = strtok(line, ",\n"); t; t = strtok(NULL, ",\n"), k++)
            if (!strcmp(t, name)) col = k;
    }
    for (int r = 0; col >= 0 && fgets(line, sizeof line, f); r++) {
        if (r != row) continue;
        char *p = line;
        for (int k = 0; k < col && p; k++) {
            p = strchr(p, ',');
            if (p) p++;
        }
        if (p) snprintf(cell, n, "%.*s", (int)strcspn(p, ",\n"), p);
        break;
    }
    fclose(f);
}

/* sweep --check over a folder: every run identical, the index says so with the commit
 * and the effective value of a swept solver key; a poked run differs; compare.py
 * refuses runs of two commits unless --mixed-builds. */
static void test_sweep_check_and_index(void)
{
    const char *dir = cb_test_tmp_path("sweepchk");
    char exp[4096], cwd[2048];
    CU_ASSERT_PTR_NOT_NULL_FATAL(getcwd(cwd, sizeof cwd));
    snprintf(exp, sizeof exp,
             "name: chk\noutput: %s\nscenes: [%s/data/scenes/drape_sphere.yaml]\nsolvers: [pbd, fms]\n"
             "set: {duration: 0.05, cloth.grid.nx: 8, cloth.grid.ny: 8}\ngrid:\n  solvers.pbd.iterations: [1, 3]\n",
             dir, cwd);
    const char *ef = cb_test_write_tmp("chk.yaml", exp);
    CU_ASSERT_EQUAL_FATAL(cb("sweep %s -q", ef), 0);
    int rc = cb("sweep %s --check", ef);
    if (rc) fprintf(stderr, "%s\n", out);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "3 identical, 0 differ"));
    char idx[4200], cell[512];
    snprintf(idx, sizeof idx, "%s/index.csv", dir);
    cb_provenance pv;
    cb_provenance_get(&pv);
    for (int r = 0; r < 3; r++) {
        csv_cell(idx, r, "checked", cell, sizeof cell);
        CU_ASSERT_STRING_EQUAL(cell, "identical");
        csv_cell(idx, r, "git_commit", cell, sizeof cell);
        CU_ASSERT_STRING_EQUAL(cell, pv.git_commit);
    }
    csv_cell(idx, 1, "effective:solvers.pbd.iterations", cell, sizeof cell);
    CU_ASSERT_STRING_EQUAL(cell, "3");
    /* a run whose file no longer matches what it would produce differs; the check names it */
    char run[4300];
    snprintf(run, sizeof run, "%s/drape_sphere__pbd__iterations=3__r0.h5", dir);
    poke_series(run, "max_strain", 4, 9.0);
    CU_ASSERT_EQUAL(cb("sweep %s --check -q", ef), 1);
    csv_cell(idx, 1, "checked", cell, sizeof cell);
    CU_ASSERT_STRING_EQUAL(cell, "differs: row 4 max_strain (same build)");
    const char *py = getenv("CB_PYTHON");
    if (!py || !*py) {
        CU_FAIL("CB_PYTHON is not set: compare.py cannot be tested");
        return;
    }
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "%s -c \"import csv,sys; p=sys.argv[1]; rows=list(csv.DictReader(open(p))); "
             "rows[0]['git_commit']='0'*40; w=csv.DictWriter(open(p,'w',newline=''),fieldnames=list(rows[0])); "
             "w.writeheader(); w.writerows(rows)\" %s", py, idx);
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    rc = cb_test_shell(out, sizeof out, "%s analysis/compare.py %s --no-plots -q", py, dir);
    CU_ASSERT_NOT_EQUAL(rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "made by 2 different builds"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "--mixed-builds"));
    rc = cb_test_shell(out, sizeof out, "%s analysis/compare.py %s --no-plots --mixed-builds", py, dir);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "Runs made by 2 different builds of clothbench (000000000000: 1 run"));
}

CB_TEST_MAIN("provenance",
             CB_TEST(test_sha256_vectors),
             CB_TEST(test_command_line_quoting),
             CB_TEST(test_run_records_provenance),
             CB_TEST(test_layout_version),
             CB_TEST(test_rerun_identical_every_solver),
             CB_TEST(test_check_finds_difference),
             CB_TEST(test_changed_mesh_file),
             CB_TEST(test_effective_parameters_win),
             CB_TEST(test_sweep_check_and_index))
