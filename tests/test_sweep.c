/* tests/test_sweep.c — `clothbench sweep` end to end: grid expansion (sizes, order,
 * solver-restricted keys), run names (readable, file-name safe, and decoded back to
 * their values by an independent decoder for adversarial and random values), sharding
 * covering every run exactly once, the index (columns, rows, statuses, numbers against
 * `clothbench info`, index.h5), failed runs recorded without stopping the sweep,
 * resumption after a SIGKILL, stale runs, and bad experiment files (exit 2, file:line). */
#include "cb_test.h"

#include <fcntl.h>
#include <hdf5.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <time.h>

static char out[1 << 20];

/* Runs `clothbench ARGS` (stdout+stderr into out); returns the exit status. */
#define cb(...) cb_test_clothbench(out, sizeof out, 1, __VA_ARGS__)

static int count_solvers(void)
{
    CU_ASSERT_EQUAL(cb("list"), 0);
    int n = 0;
    const char *p = strstr(out, "solvers:\n");
    if (!p) return 0;
    p += 9;
    while (!strncmp(p, "  ", 2)) {
        n++;
        p = strchr(p, '\n');
        if (!p) break;
        p++;
    }
    return n;
}

static char actions[4096][32];

/* Dry-run lines "index action file ..." -> arrays (actions[] too); returns the count. */
static int parse_dry(long *idx, char names[][512], int max)
{
    int n = 0;
    char *save = NULL;
    static char copy[1 << 20];
    snprintf(copy, sizeof copy, "%s", out);
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        long i;
        char action[32], name[512];
        if (line[0] == '#' || n >= max) continue;
        if (sscanf(line, "%ld %31s %511s", &i, action, name) == 3) {
            idx[n] = i;
            snprintf(names[n], 512, "%s", name);
            snprintf(actions[n], sizeof actions[n], "%s", action);
            n++;
        }
    }
    return n;
}

static void test_expansion_sizes_and_order(void)
{
    int ns = count_solvers();
    CU_ASSERT_FATAL(ns >= 1);
    const char *e = cb_test_write_tmp("grid.yaml",
                              "name: grid\n"
                              "scenes: [data/scenes/hanging.yaml, data/scenes/free_flight.yaml]\n"
                              "solvers: all\n"
                              "set: {duration: 0.05}\n"
                              "grid:\n"
                              "  solvers.explicit.damping: [0.1, 0.2, 0.3]\n"
                              "  cloth.stretch: [100, 200]\n"
                              "repeats: 2\n");
    CU_ASSERT_EQUAL_FATAL(cb("sweep %s --dry-run -o %s", e, cb_test_tmp_path("grid_out")), 0);
    static long idx[4096];
    static char names[4096][512];
    int n = parse_dry(idx, names, 4096);
    /* explicit: 3 x 2 values; every other solver: 2 (the damping key is explicit's only) */
    int expect = 2 /* scenes */ * (3 * 2 + (ns - 1) * 2) * 2 /* repeats */;
    CU_ASSERT_EQUAL(n, expect);
    for (int i = 0; i < n; i++) CU_ASSERT_EQUAL(idx[i], i);
    /* scenes outermost, explicit first (registry order), last key fastest, repeats innermost */
    CU_ASSERT_STRING_EQUAL(names[0], "hanging__explicit__damping=0.1__stretch=100__r0.h5");
    CU_ASSERT_STRING_EQUAL(names[1], "hanging__explicit__damping=0.1__stretch=100__r1.h5");
    CU_ASSERT_STRING_EQUAL(names[2], "hanging__explicit__damping=0.1__stretch=200__r0.h5");
    CU_ASSERT_STRING_EQUAL(names[4], "hanging__explicit__damping=0.2__stretch=100__r0.h5");
    CU_ASSERT_STRING_EQUAL(names[n / 2], "free_flight__explicit__damping=0.1__stretch=100__r0.h5");
    /* the damping value is not part of the other solvers' names, nor their --set list */
    if (ns > 1) {
        CU_ASSERT_PTR_NULL(strstr(names[12], "damping"));
        char *line = strstr(out, names[12]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(line);
        char *eol = strchr(line, '\n');
        *eol = '\0';
        CU_ASSERT_PTR_NULL(strstr(line, "solvers.explicit.damping"));
        CU_ASSERT_PTR_NOT_NULL(strstr(line, "--set cloth.stretch=100"));
        CU_ASSERT_PTR_NOT_NULL(strstr(line, "--set duration=0.05"));
    }
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) CU_ASSERT(strcmp(names[i], names[j]) != 0);
}

/* Independent decoder of the name encoding: "_HH" (upper-case hex) -> byte, others themselves. */
static int decode(const char *s, size_t len, char *outb, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < len; i++) {
        if (k + 1 >= n) return -1;
        if (s[i] == '_' && i + 2 < len && strchr("0123456789ABCDEF", s[i + 1]) && s[i + 1] &&
            strchr("0123456789ABCDEF", s[i + 2]) && s[i + 2]) {
            unsigned v;
            if (sscanf(s + i + 1, "%2X", &v) != 1) return -1;
            outb[k++] = (char)v;
            i += 2;
        } else {
            outb[k++] = s[i];
        }
    }
    outb[k] = '\0';
    return 0;
}

/* The value of key `label` in a run name, decoded. */
static int value_of(const char *name, const char *label, char *val, size_t n)
{
    char pat[128];
    snprintf(pat, sizeof pat, "__%s=", label);
    const char *p = strstr(name, pat);
    if (!p) return -1;
    p += strlen(pat);
    const char *end = strstr(p, "__");
    if (!end) return -1;
    return decode(p, (size_t)(end - p), val, n);
}

static void test_names_injective(void)
{
    /* values that a naive sanitiser would map together, plus random printable strings */
    static const char *tricky[] = {"a b", "a_b", "a/b", "a__b", "_20", "a_20b", "a.b", "a=b", "a-b", "A B",
                                   "a\\b", "a\"b", "a:b", "__", "_", "x__r0", "1e3", "1E3", "0.10", "0.1",
                                   "a_5F", "a_5Fb", "a_5", "_a", "a_", "a_AB", "a_ab", "a_A_", "a_ _b"};
    int nt = (int)(sizeof tricky / sizeof tricky[0]);
    enum { NR = 120 };
    static char vals[NR + 32][64];
    int nv = 0;
    for (int i = 0; i < nt; i++) snprintf(vals[nv++], 64, "%s", tricky[i]);
    srand(12345);
    while (nv < nt + NR) {
        int len = 1 + rand() % 12;
        char *v = vals[nv];
        for (int k = 0; k < len; k++) v[k] = (char)(32 + rand() % 95);
        v[len] = '\0';
        int dup = 0;
        for (int j = 0; j < nv; j++) dup |= !strcmp(vals[j], v);
        if (!dup) nv++;
    }
    /* single-quoted YAML scalars: '' stands for ' */
    static char yaml[65536];
    size_t k = (size_t)snprintf(yaml, sizeof yaml, "name: names\nscenes: [data/scenes/hanging.yaml]\n"
                                                   "solvers: [explicit]\ngrid:\n  cloth.label: [");
    for (int i = 0; i < nv; i++) {
        k += (size_t)snprintf(yaml + k, sizeof yaml - k, "%s'", i ? ", " : "");
        for (const char *p = vals[i]; *p; p++) {
            if (*p == '\'') yaml[k++] = '\'';
            yaml[k++] = *p;
        }
        yaml[k++] = '\'';
    }
    k += (size_t)snprintf(yaml + k, sizeof yaml - k, "]\n  frame_rate: [30, 60]\n");
    const char *e = cb_test_write_tmp("names.yaml", yaml);
    int rc = cb("sweep %s --dry-run -o %s", e, cb_test_tmp_path("names_out"));
    if (rc) fprintf(stderr, "%s\n", out);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    static long idx[1024];
    static char names[1024][512];
    int n = parse_dry(idx, names, 1024);
    CU_ASSERT_EQUAL_FATAL(n, 2 * nv);
    for (int i = 0; i < n; i++) {
        for (const char *p = names[i]; *p; p++)
            CU_ASSERT(strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._=-", *p) != NULL);
        char v[256], fr[64];
        CU_ASSERT_EQUAL_FATAL(value_of(names[i], "label", v, sizeof v), 0);
        CU_ASSERT_EQUAL_FATAL(value_of(names[i], "frame_rate", fr, sizeof fr), 0);
        /* order: label outer, frame_rate inner */
        if (strcmp(v, vals[i / 2])) fprintf(stderr, "  name %s decodes to '%s', expected '%s'\n", names[i], v, vals[i / 2]);
        CU_ASSERT_STRING_EQUAL(v, vals[i / 2]);
        CU_ASSERT_STRING_EQUAL(fr, i % 2 ? "60" : "30");
        for (int j = 0; j < i; j++) CU_ASSERT(strcmp(names[i], names[j]) != 0);
    }
}

static void test_shards_cover_every_run_once(void)
{
    const char *e = cb_test_write_tmp("shard.yaml",
                              "name: shard\n"
                              "scenes: [data/scenes/hanging.yaml]\n"
                              "solvers: [explicit]\n"
                              "set: {duration: 0.02, cloth.grid.nx: 5, cloth.grid.ny: 5}\n"
                              "grid:\n"
                              "  solvers.explicit.damping: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]\n");
    const char *o = cb_test_tmp_path("shard_out");
    for (int N = 1; N <= 4; N++) {
        int seen[7] = {0};
        for (int I = 0; I < N; I++) {
            CU_ASSERT_EQUAL_FATAL(cb("sweep %s --dry-run -o %s --shard %d/%d", e, o, I, N), 0);
            long idx[16];
            static char names[16][512];
            int n = parse_dry(idx, names, 16);
            for (int q = 0; q < n; q++) {
                CU_ASSERT(idx[q] % N == I);
                if (idx[q] >= 0 && idx[q] < 7) seen[idx[q]]++;
            }
        }
        for (int q = 0; q < 7; q++) CU_ASSERT_EQUAL(seen[q], 1);
    }
    /* real runs: three shards, one after the other, then every run is in the index once */
    for (int I = 0; I < 3; I++) CU_ASSERT_EQUAL(cb("sweep %s -o %s --shard %d/3 -q", e, o, I), 0);
    char path[1200];
    snprintf(path, sizeof path, "%s/index.csv", o);
    FILE *f = fopen(path, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    char line[4096];
    int rows = 0, ok = 0;
    CU_ASSERT_PTR_NOT_NULL(fgets(line, sizeof line, f));
    while (fgets(line, sizeof line, f)) {
        rows++;
        ok += strstr(line, ",ok,") != NULL;
    }
    fclose(f);
    CU_ASSERT_EQUAL(rows, 7);
    CU_ASSERT_EQUAL(ok, 7);
    CU_ASSERT_EQUAL(cb("sweep %s -o %s --dry-run", e, o), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "7 finished, 0 to run"));
    CU_ASSERT_EQUAL(cb("sweep %s --shard 3/3", e), 2);
    CU_ASSERT_EQUAL(cb("sweep %s --shard 1", e), 2);
}

/* CSV line -> fields (handles quotes); returns the count. */
static int csv_split(const char *line, char f[][1100], int max)
{
    int n = 0;
    const char *p = line;
    while (n < max) {
        size_t k = 0;
        if (*p == '"') {
            p++;
            while (*p && !(*p == '"' && p[1] != '"')) {
                if (*p == '"') p++;
                if (k < 1099) f[n][k++] = *p;
                p++;
            }
            if (*p == '"') p++;
        } else {
            while (*p && *p != ',' && *p != '\n' && *p != '\r') {
                if (k < 1099) f[n][k++] = *p;
                p++;
            }
        }
        f[n++][k] = '\0';
        if (*p != ',') break;
        p++;
    }
    return n;
}

static double info_number(const char *key, const char *fmt_after)
{
    const char *p = strstr(out, key);
    if (!p) return NAN;
    double v = NAN;
    p = strstr(p, fmt_after);
    if (!p || sscanf(p + strlen(fmt_after), "%lf", &v) != 1) return NAN;
    return v;
}

static void test_index_contents_and_failures(void)
{
    const char *e = cb_test_write_tmp("index.yaml",
                              "name: index\n"
                              "scenes: [data/scenes/hanging.yaml]\n"
                              "solvers: [explicit]\n"
                              "set: {duration: 0.05, cloth.grid.nx: 6, cloth.grid.ny: 6}\n"
                              "grid:\n"
                              "  cloth.stretch: [100, -5, 300]\n");
    const char *o = cb_test_tmp_path("index_out");
    int rc = cb("sweep %s -o %s", e, o);
    CU_ASSERT_EQUAL(rc, 1); /* stretch -5 is rejected: one run fails, the sweep goes on */
    char path[1200];
    snprintf(path, sizeof path, "%s/index.csv", o);
    FILE *f = fopen(path, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    char line[8192];
    static char fld[64][1100];
    CU_ASSERT_PTR_NOT_NULL_FATAL(fgets(line, sizeof line, f));
    const char *head = "run,file,scene,solver,repeat,cloth.stretch,status,message,steps,t_end,energy_drift,"
                       "energy_drift_rel,momentum_drift,max_penetration_depth,max_self_intersections,"
                       "min_separation,max_strain,mean_ms_per_step";
    CU_ASSERT_EQUAL(strncmp(line, head, strlen(head)), 0);
    int rows = 0;
    while (fgets(line, sizeof line, f)) {
        int n = csv_split(line, fld, 64);
        CU_ASSERT_FATAL(n >= 18);
        CU_ASSERT_EQUAL(atoi(fld[0]), rows);
        CU_ASSERT_STRING_EQUAL(fld[2], "hanging");
        CU_ASSERT_STRING_EQUAL(fld[3], "explicit");
        if (!strcmp(fld[5], "-5")) {
            CU_ASSERT_STRING_EQUAL(fld[6], "error");
            CU_ASSERT_PTR_NOT_NULL(strstr(fld[7], "stretch"));
            CU_ASSERT_STRING_EQUAL(fld[8], "");
        } else {
            CU_ASSERT_STRING_EQUAL(fld[6], "ok");
            char run[1200];
            snprintf(run, sizeof run, "%s/%s", o, fld[1]);
            CU_ASSERT_EQUAL_FATAL(cb("info %s", run), 0);
            /* "steps      N (t = ...": steps; "strain     max X"; "time       X ms per step" */
            CU_ASSERT_EQUAL(atol(fld[8]), (long)info_number("steps", " "));
            CB_ASSERT_REL(atof(fld[16]), info_number("strain", "max "), 1e-3);
            CB_ASSERT_REL(atof(fld[12]), info_number("momentum", "error "), 1e-2);
            CB_ASSERT_REL(atof(fld[9]), info_number("steps", "t = "), 1e-6);
        }
        rows++;
    }
    fclose(f);
    CU_ASSERT_EQUAL(rows, 3);
    /* index.h5: one compound row per run */
    snprintf(path, sizeof path, "%s/index.h5", o);
    H5Eset_auto(H5E_DEFAULT, NULL, NULL);
    hid_t h = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    CU_ASSERT_FATAL(h >= 0);
    hid_t d = H5Dopen(h, "runs", H5P_DEFAULT);
    CU_ASSERT_FATAL(d >= 0);
    hid_t sp = H5Dget_space(d);
    hsize_t dims[1] = {0};
    H5Sget_simple_extent_dims(sp, dims, NULL);
    CU_ASSERT_EQUAL(dims[0], 3);
    hid_t t = H5Dget_type(d);
    CU_ASSERT(H5Tget_member_index(t, "max_strain") >= 0);
    CU_ASSERT(H5Tget_member_index(t, "cloth.stretch") >= 0);
    hid_t mt = H5Tcreate(H5T_COMPOUND, sizeof(double));
    H5Tinsert(mt, "t_end", 0, H5T_NATIVE_DOUBLE);
    double tend[3];
    CU_ASSERT(H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, tend) >= 0);
    CB_ASSERT_REL(tend[0], 0.05, 1e-9);
    CU_ASSERT(isnan(tend[1]));
    H5Tclose(mt);
    H5Tclose(t);
    H5Sclose(sp);
    H5Dclose(d);
    H5Fclose(h);
}

static long file_mtime_ns(const char *path)
{
    struct stat st;
    if (stat(path, &st)) return -1;
    return (long)st.st_mtim.tv_sec * 1000000000L + st.st_mtim.tv_nsec;
}

static int count_in_index(const char *dir, const char *what)
{
    char path[1200], line[8192];
    snprintf(path, sizeof path, "%s/index.csv", dir);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    int n = 0;
    while (fgets(line, sizeof line, f)) n += strstr(line, what) != NULL;
    fclose(f);
    return n;
}

static void test_resume_after_kill(void)
{
    const char *e = cb_test_write_tmp("resume.yaml",
                              "name: resume\n"
                              "scenes: [data/scenes/hanging.yaml]\n"
                              "solvers: [explicit]\n"
                              "set: {duration: 0.4, cloth.grid.nx: 14, cloth.grid.ny: 14}\n"
                              "grid:\n"
                              "  solvers.explicit.damping: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]\n");
    const char *o = cb_test_tmp_path("resume_out");
    const char *exe = cb_test_program();
    fflush(NULL);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        setpgid(0, 0);
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 1);
        dup2(devnull, 2);
        execl(exe, "clothbench", "sweep", e, "-o", o, (char *)NULL);
        _exit(127);
    }
    setpgid(pid, pid);
    /* wait for two finished runs (an event: the index says so; the 600 s bound only keeps
     * a broken sweep from hanging the suite), then kill the sweep and its worker outright */
    double t0 = (double)time(NULL);
    while (count_in_index(o, ",ok,") < 2 && (double)time(NULL) - t0 < 600) {
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, NULL);
    }
    kill(-pid, SIGKILL);
    int st;
    waitpid(pid, &st, 0);
    int done_before = count_in_index(o, ",ok,");
    CU_ASSERT_FATAL(done_before >= 2);
    CU_ASSERT(done_before < 6);
    /* the index holds every run: finished ones ok, the rest pending or running */
    CU_ASSERT_EQUAL(count_in_index(o, ",ok,") + count_in_index(o, ",pending,") + count_in_index(o, ",running,"), 6);
    static char files[6][8704];
    long mt[6];
    CU_ASSERT_EQUAL_FATAL(cb("sweep %s -o %s --dry-run", e, o), 0);
    static long idx[16];
    static char names[16][512];
    CU_ASSERT_EQUAL_FATAL(parse_dry(idx, names, 16), 6);
    int skip = 0;
    for (int i = 0; i < 6; i++) {
        snprintf(files[i], sizeof files[i], "%s/%s", o, names[i]);
        mt[i] = file_mtime_ns(files[i]);
        skip += !strcmp(actions[i], "skip");
    }
    CU_ASSERT_EQUAL(skip, done_before);
    CU_ASSERT_EQUAL(cb("sweep %s -o %s -q", e, o), 0);
    CU_ASSERT_EQUAL(count_in_index(o, ",ok,"), 6);
    int untouched = 0;
    for (int i = 0; i < 6; i++) {
        long m = file_mtime_ns(files[i]);
        CU_ASSERT(m > 0);
        untouched += m == mt[i];
    }
    CU_ASSERT_EQUAL(untouched, done_before); /* finished runs were not run again */
    /* a third sweep runs nothing; changing a fixed override makes every run stale */
    CU_ASSERT_EQUAL(cb("sweep %s -o %s --dry-run", e, o), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "6 finished, 0 to run"));
    CU_ASSERT_EQUAL(cb("sweep %s -o %s --dry-run --set duration=0.3", e, o), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "0 finished, 6 to run"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, " stale "));
}

/* A run being written by another process (another shard on the same folder) shows as
 * `running` in the index, not as a file that cannot be read (`error`, issue 21): the
 * writer holds HDF5's lock on its file, and the index writer sees it. Here the writer is
 * a long `clothbench run` on the file a shard would write; `--index` rebuilds the index
 * while it runs. */
static void test_index_shows_other_writer_running(void)
{
    const char *e = cb_test_write_tmp("busy.yaml",
                              "name: busy\n"
                              "scenes: [data/scenes/hanging.yaml]\n"
                              "solvers: [explicit]\n"
                              "set: {duration: 0.05, cloth.grid.nx: 6, cloth.grid.ny: 6}\n"
                              "grid:\n"
                              "  solvers.explicit.damping: [0.1, 0.2]\n");
    const char *o = cb_test_tmp_path("busy_out");
    CU_ASSERT_EQUAL_FATAL(cb("sweep %s -o %s -q --shard 0/2", e, o), 0);
    CU_ASSERT_EQUAL_FATAL(cb("sweep %s -o %s --dry-run", e, o), 0);
    static long idx[4];
    static char names[4][512];
    CU_ASSERT_EQUAL_FATAL(parse_dry(idx, names, 4), 2);
    char busy[1200];
    snprintf(busy, sizeof busy, "%s/%s", o, names[1]);
    /* the writer holds its file (HDF5's lock) from its creation on; its bar's "step 0/"
     * comes after that (an event: a 0.3 s sleep assumed it got that far) */
    const char *args[] = {"run", "data/scenes/hanging.yaml", "--solver", "fms", "-o", busy, "--set", "duration=600",
                          NULL};
    int tty;
    pid_t pid = cb_test_spawn_tty(&tty, args);
    CU_ASSERT_FATAL(pid > 0);
    CU_ASSERT(cb_test_read_until(tty, "step 0/"));
    CU_ASSERT_EQUAL(cb("sweep %s -o %s --index", e, o), 0);
    CU_ASSERT_EQUAL(count_in_index(o, ",running,being written by another process,"), 1);
    CU_ASSERT_EQUAL(count_in_index(o, ",error,"), 0);
    CU_ASSERT_EQUAL(count_in_index(o, ",ok,"), 1);
    kill(pid, SIGKILL);
    close(tty);
    int st;
    waitpid(pid, &st, 0);
}

static void test_parallel_jobs(void)
{
    const char *e = cb_test_write_tmp("jobs.yaml",
                              "name: jobs\n"
                              "scenes: [data/scenes/hanging.yaml]\n"
                              "solvers: [explicit]\n"
                              "set: {duration: 0.05, cloth.grid.nx: 6, cloth.grid.ny: 6}\n"
                              "grid: {cloth.density: [0.1, 0.2, 0.3, 0.4, 0.5]}\n"
                              "repeats: 2\n");
    const char *o = cb_test_tmp_path("jobs_out");
    CU_ASSERT_EQUAL(cb("sweep %s -o %s -j 3", e, o), 0);
    CU_ASSERT_EQUAL(count_in_index(o, ",ok,"), 10);
    /* both repeats of one combination give the same physics (determinism through the sweep) */
    char a[1200], b[1200];
    snprintf(a, sizeof a, "info %s/hanging__explicit__density=0.3__r0.h5", o);
    snprintf(b, sizeof b, "info %s/hanging__explicit__density=0.3__r1.h5", o);
    CU_ASSERT_EQUAL(cb("%s", a), 0);
    double s0 = info_number("strain", "max ");
    CU_ASSERT_EQUAL(cb("%s", b), 0);
    CB_ASSERT_REL(info_number("strain", "max "), s0, 1e-12);
    CU_ASSERT(!isnan(s0));
}

static void test_bad_experiment_files(void)
{
    const char *e1 = cb_test_write_tmp("bad1.yaml", "name: bad\nscenes: [data/scenes/hanging.yaml]\nsolvers: all\ngird: {}\n");
    CU_ASSERT_EQUAL(cb("sweep %s", e1), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "bad1.yaml:4"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "gird"));
    const char *e2 = cb_test_write_tmp("bad2.yaml", "scenes: [data/scenes/hanging.yaml]\nsolvers: [explicit, nosuch]\n");
    CU_ASSERT_EQUAL(cb("sweep %s", e2), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "bad2.yaml:2"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "nosuch"));
    const char *e3 = cb_test_write_tmp("bad3.yaml", "scenes: [data/scenes/nothere.yaml]\nsolvers: all\n");
    CU_ASSERT_EQUAL(cb("sweep %s", e3), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "bad3.yaml:1"));
    const char *e4 = cb_test_write_tmp("bad4.yaml", "scenes: [data/scenes/hanging.yaml]\nsolvers: all\n"
                                            "grid:\n  cloth.stretch: [1, 2, 1]\n");
    CU_ASSERT_EQUAL(cb("sweep %s", e4), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "bad4.yaml:4"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "listed twice"));
    const char *e5 = cb_test_write_tmp("bad5.yaml", "scenes: [data/scenes/hanging.yaml, data/scenes/../scenes/hanging.yaml]\n"
                                            "solvers: all\n");
    CU_ASSERT_EQUAL(cb("sweep %s", e5), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "same file name stem"));
    const char *e6 = cb_test_write_tmp("bad6.yaml", "scenes: [data/scenes/hanging.yaml]\nsolvers: [explicit]\n"
                                            "grid: {solvers.nosuch.iterations: [1, 2]}\n");
    CU_ASSERT_EQUAL(cb("sweep %s", e6), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "bad6.yaml:3"));
    CU_ASSERT_EQUAL(cb("sweep %s", cb_test_tmp_path("missing.yaml")), 2);
    CU_ASSERT_EQUAL(cb("sweep"), 2);
    CU_ASSERT_EQUAL(cb("sweep %s -j 0", e2), 2);
}

/* time_limit: a run past its wall seconds ends "interrupted", recorded in the index with a
 * message naming the limit (a result, not a missing run), the sweep exits 1 and goes on
 * to the next run; a limit far above the run's time changes nothing; a limit that is no
 * positive number is refused naming the line. (1 us: reading the scene alone takes
 * longer on any machine.) */
static void test_time_limit(void)
{
    const char *body = "scenes: [data/scenes/hanging.yaml]\n"
                       "solvers: [explicit, pbd]\n"
                       "set: {duration: 0.5, cloth.grid.nx: 6, cloth.grid.ny: 6}\n";
    char text[1024];
    snprintf(text, sizeof text, "name: tl\ntime_limit: 0.000001\n%s", body);
    const char *e = cb_test_write_tmp("tl.yaml", text);
    const char *o = cb_test_tmp_path("tl_out");
    CU_ASSERT_EQUAL(cb("sweep %s -o %s", e, o), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "0 ok (0 already done), 2 failed"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "  interrupted hanging__explicit__r0.h5"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "  interrupted hanging__pbd__r0.h5"));
    char path[1024];
    snprintf(path, sizeof path, "%s/index.csv", o);
    CU_ASSERT_EQUAL(cb_test_count_lines(path, ",interrupted,time limit of 1e-06 s reached"), 2);
    cb("info %s/hanging__explicit__r0.h5", o);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "time limit of 1e-06 s reached"));
    snprintf(text, sizeof text, "name: tl\ntime_limit: 1000\n%s", body);
    e = cb_test_write_tmp("tl_long.yaml", text);
    CU_ASSERT_EQUAL(cb("sweep %s -o %s", e, o), 0); /* the same runs, run again, end ok */
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "2 ok (0 already done), 0 failed"));
    snprintf(text, sizeof text, "name: tl\ntime_limit: -5\n%s", body);
    e = cb_test_write_tmp("tl_bad.yaml", text);
    CU_ASSERT_EQUAL(cb("sweep %s -o %s", e, o), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "tl_bad.yaml:2"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "time_limit: expected seconds > 0"));
}

/* expect_diverged: a run that diverges is the experiment's result (a stability map): the
 * sweep exits 0, counts it apart, and on resumption keeps it; without the key the same
 * sweep exits 1 and runs it again. */
static void test_expect_diverged(void)
{
    const char *body = "scenes: [data/scenes/hanging.yaml]\n"
                       "solvers: [explicit]\n"
                       "set: {duration: 0.2, cloth.grid.nx: 6, cloth.grid.ny: 6, cloth.grid.plane: xy, "
                       "solvers.explicit.substeps: 1}\n"
                       "grid:\n  dt: [0.033333333333333333, 0.0001]\n";
    char text[1024];
    snprintf(text, sizeof text, "name: xd\nexpect_diverged: true\n%s", body);
    const char *e = cb_test_write_tmp("xd.yaml", text);
    snprintf(text, sizeof text, "name: xd\n%s", body);
    const char *plain = cb_test_write_tmp("xd_plain.yaml", text);
    const char *o = cb_test_tmp_path("xd_out");
    CU_ASSERT_EQUAL(cb("sweep %s -o %s", plain, o), 1); /* Verlet at 1/30 s, one substep: diverged */
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "1 ok (0 already done), 1 failed"));
    CU_ASSERT_EQUAL(cb("sweep %s -o %s", e, o), 0);      /* the diverged run is a result: kept */
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "1 ok (2 already done), 1 diverged (expected: expect_diverged), 0 failed"));
    CU_ASSERT_EQUAL(cb("sweep %s -o %s", plain, o), 1);  /* without the key it is a failure, run again */
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "1 ok (1 already done), 1 failed"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "  diverged    hanging__explicit__dt=0.033333333333333333__r0.h5"));
    CU_ASSERT_EQUAL(cb("sweep %s -o %s --index", e, o), 0);
    CU_ASSERT_EQUAL(cb("sweep %s -o %s --index", plain, o), 1);
    const char *bad = cb_test_write_tmp("xd_bad.yaml", "name: xd\nexpect_diverged: maybe\n"
                                                       "scenes: [data/scenes/hanging.yaml]\nsolvers: [explicit]\n");
    CU_ASSERT_EQUAL(cb("sweep %s -o %s", bad, o), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "xd_bad.yaml:2"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "expect_diverged: expected true or false"));
    /* read as every boolean key (cb_yaml_bool): yes/no, on/off too */
    const char *yes = cb_test_write_tmp("xd_yes.yaml", "name: xd\nexpect_diverged: yes\n"
                                                       "scenes: [data/scenes/hanging.yaml]\nsolvers: [explicit]\n");
    int rc = cb("sweep %s -o %s --dry-run", yes, o);
    if (rc) fprintf(stderr, "%s\n", out);
    CU_ASSERT_EQUAL(rc, 0);
}

/* An experiment with more grid keys than solver keys + 1 writes its index: the names of
 * the effective columns were allocated for the solver keys only and freed over every grid
 * key, reading past their end (a segmentation fault with five grid keys; ASan's
 * heap-buffer-overflow in free_columns with two). */
static void test_index_many_grid_keys(void)
{
    const char *e = cb_test_write_tmp("xg.yaml", "name: xg\nscenes: [data/scenes/hanging.yaml]\n"
                                                 "solvers: [explicit]\nset: {cloth.grid.nx: 4, cloth.grid.ny: 4}\n"
                                                 "grid:\n  cloth.stretch: [100.0]\n  dt: [0.001]\n"
                                                 "  duration: [0.01]\n  cloth.bend: [0.001]\n  frame_rate: [30]\n");
    const char *o = cb_test_tmp_path("xg_out");
    int rc = cb("sweep %s -o %s", e, o);
    if (rc) fprintf(stderr, "%s\n", out);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_EQUAL(cb_test_count_lines(cb_test_tmp_path("xg_out/index.csv"), "hanging__explicit"), 1);
}

/* An experiment file's keys are those the reader asks for (core/params.h, cb_keys): an
 * unknown one is refused naming it and the allowed ones. */
static void test_unknown_experiment_key(void)
{
    const char *bad = cb_test_write_tmp("xk.yaml", "name: xk\nscenes: [data/scenes/hanging.yaml]\n"
                                                   "solvers: [explicit]\ncolour: red\n");
    CU_ASSERT_EQUAL(cb("sweep %s --dry-run", bad), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "xk.yaml:4:1: unknown key 'colour' in experiment; allowed keys: description, "
                                       "name, output, reference, reference_method, reference_refine, "
                                       "reference_max_check, expect_diverged, time_limit, scenes, solvers, set, grid, "
                                       "repeats"));
}

CB_TEST_MAIN("sweep",
    CB_TEST(test_expansion_sizes_and_order),
    CB_TEST(test_names_injective),
    CB_TEST(test_shards_cover_every_run_once),
    CB_TEST(test_index_contents_and_failures),
    CB_TEST(test_resume_after_kill),
    CB_TEST(test_index_shows_other_writer_running),
    CB_TEST(test_parallel_jobs),
    CB_TEST(test_bad_experiment_files),
    CB_TEST(test_expect_diverged),
    CB_TEST(test_time_limit),
    CB_TEST(test_unknown_experiment_key),
    CB_TEST(test_index_many_grid_keys))
