/* tests/test_runlog.c — the HDF5 run file (experiments/harness/runlog.c): every field written is
 * read back with the HDF5 C API and compared with what went in; the file stays
 * readable when the writer is killed after a frame; the XDMF sidecar is balanced
 * XML that names only datasets (with their true shapes) that exist in the .h5;
 * error paths name the file. When CB_PYTHON is set, h5py reads every dataset. */
#include "cb_test.h"

#include <errno.h>
#include <hdf5.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>

#include "core/mesh.h"
#include "experiments/harness/metrics.h"
#include "experiments/harness/runlog.h"
#include "core/world.h"

#ifndef CB_VERSION
#define CB_VERSION "unknown"
#endif

/* ------------------------------------------------------------ fixture */

typedef struct fixture {
    cb_mesh *mesh;
    cb_world w;
    int ncols;             /* total columns of a series row */
} fixture;

static int fixture_init(fixture *fx)
{
    memset(fx, 0, sizeof *fx);
    cb_grid_def g = cb_default_grid_def();
    g.nx = 4;
    g.ny = 3;
    g.size[0] = 0.6;
    g.size[1] = 0.4;
    g.origin[2] = 1.0;
    cb_error err;
    cb_error_clear(&err);
    if (cb_mesh_grid(&g, &fx->mesh, &err) != 0) {
        fprintf(stderr, "cb_mesh_grid: %s\n", err.message);
        return -1;
    }
    fx->w.mesh = fx->mesh;
    fx->w.nv = fx->mesh->nv;
    fx->w.mass = calloc((size_t)fx->w.nv, sizeof *fx->w.mass);
    if (!fx->w.mass) return -1;
    cb_mesh_lumped_masses(fx->mesh, 0.1, 0.0, fx->w.mass);
    for (int i = 0; i < cb_metric_count; i++) fx->ncols += cb_metric_table[i].width;
    return 0;
}

static void fixture_free(fixture *fx)
{
    free(fx->w.mass);
    cb_mesh_free(&fx->mesh);
}

/* The value of column c of series row r: distinct, exactly representable, with
 * NaN and infinities sprinkled in (they must survive the round trip). */
static double row_value(long r, int c)
{
    if ((r + c) % 29 == 0) return NAN;
    if ((r + 2 * c) % 31 == 0) return -INFINITY;
    return (double)r * 64.0 + c + 0.125;
}

static void fill_metrics(long r, cb_metrics *m)
{
    memset(m, 0, sizeof *m);
    int c = 0;
    for (int i = 0; i < cb_metric_count; i++) {
        double *p = (double *)(void *)((char *)m + cb_metric_table[i].offset);
        for (int k = 0; k < cb_metric_table[i].width; k++) p[k] = row_value(r, c++);
    }
}

/* Positions of frame k: the rest positions moved by something that depends on k and i. */
static void frame_positions(const fixture *fx, int k, double (*x)[3])
{
    for (int i = 0; i < fx->w.nv; i++)
        for (int d = 0; d < 3; d++)
            x[i][d] = fx->mesh->x[i][d] + 0.001 * k * (d + 1) + 1e-7 * i * (k + 1);
}

static double frame_time(int k) { return 0.1 * k + 1.0 / 3.0; }

static int same_double(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }

static void make_path(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", cb_test_tmpdir(), name);
}

static cb_runlog_def make_def(const char *path, const char *scene_text)
{
    cb_runlog_def def;
    memset(&def, 0, sizeof def);
    def.path = path;
    def.solver = "pbd";
    def.scene_name = "drape_sphere";
    def.scene_text = scene_text;
    def.parameters = "{iterations: 10}";
    def.expensive_note = "self_intersections and min_separation computed on frame steps only; NaN elsewhere";
    return def;
}

/* Writes a run: `rows` series rows, a frame after every `every` rows (frame k
 * after row (k+1)*every - 1). Returns the number of frames, or -1. */
static int write_rows_and_frames(const fixture *fx, cb_runlog *log, long rows, long every)
{
    cb_error err;
    cb_error_clear(&err);
    cb_metrics m;
    double (*x)[3] = calloc((size_t)fx->w.nv, sizeof *x);
    int k = 0;
    for (long r = 0; r < rows; r++) {
        fill_metrics(r, &m);
        if (cb_runlog_series(log, &m, &err) != 0) goto fail;
        if ((r + 1) % every == 0) {
            frame_positions(fx, k, x);
            if (cb_runlog_frame(log, frame_time(k), (const double (*)[3])x, &err) != 0) goto fail;
            k++;
        }
    }
    free(x);
    return k;
fail:
    fprintf(stderr, "  runlog: %s (%s)\n", err.message, err.where);
    free(x);
    return -1;
}

/* ------------------------------------------------------------ HDF5 readers */

/* A string attribute of `obj` (NULL if missing); malloc'd. */
static char *read_str_attr(hid_t obj, const char *name)
{
    if (H5Aexists(obj, name) <= 0) return NULL;
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    hid_t ft = H5Aget_type(a);
    char *out = NULL;
    if (H5Tget_class(ft) == H5T_STRING && H5Tis_variable_str(ft) > 0) {
        hid_t mt = H5Tcopy(H5T_C_S1);
        H5Tset_size(mt, H5T_VARIABLE);
        H5Tset_cset(mt, H5Tget_cset(ft));
        char *s = NULL;
        if (H5Aread(a, mt, &s) >= 0 && s) {
            out = strdup(s);
            H5free_memory(s);
        }
        H5Tclose(mt);
    } else if (H5Tget_class(ft) == H5T_STRING) {
        size_t n = H5Tget_size(ft);
        out = calloc(n + 1, 1);
        if (out && H5Aread(a, ft, out) < 0) { free(out); out = NULL; }
    }
    H5Tclose(ft);
    H5Aclose(a);
    return out;
}

static int attr_is_utf8(hid_t obj, const char *name)
{
    if (H5Aexists(obj, name) <= 0) return 0;
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    hid_t t = H5Aget_type(a);
    int ok = H5Tget_class(t) == H5T_STRING && H5Tget_cset(t) == H5T_CSET_UTF8;
    H5Tclose(t);
    H5Aclose(a);
    return ok;
}

/* Rank and dims of a dataset; -1 if it does not exist. */
static int ds_shape(hid_t file, const char *name, hsize_t dims[4])
{
    if (H5Lexists(file, name, H5P_DEFAULT) <= 0) return -1;
    hid_t ds = H5Dopen2(file, name, H5P_DEFAULT);
    if (ds < 0) return -1;
    hid_t s = H5Dget_space(ds);
    int rank = H5Sget_simple_extent_ndims(s);
    if (rank > 4) rank = 4;
    H5Sget_simple_extent_dims(s, dims, NULL);
    H5Sclose(s);
    H5Dclose(ds);
    return rank;
}

/* Whole dataset as doubles (or ints when mem_type is native int), malloc'd. */
static void *read_all(hid_t file, const char *name, hid_t mem_type, size_t elem, size_t *count)
{
    hsize_t dims[4] = { 0, 0, 0, 0 };
    int rank = ds_shape(file, name, dims);
    if (rank < 0) return NULL;
    size_t n = 1;
    for (int k = 0; k < rank; k++) n *= (size_t)dims[k];
    void *buf = calloc(n ? n : 1, elem);
    hid_t ds = H5Dopen2(file, name, H5P_DEFAULT);
    if (n && H5Dread(ds, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
        free(buf);
        buf = NULL;
    }
    H5Dclose(ds);
    if (count) *count = n;
    return buf;
}

static int ds_type_is(hid_t file, const char *name, hid_t want)
{
    hid_t ds = H5Dopen2(file, name, H5P_DEFAULT);
    if (ds < 0) return 0;
    hid_t t = H5Dget_type(ds);
    int ok = H5Tequal(t, want) > 0;
    H5Tclose(t);
    H5Dclose(ds);
    return ok;
}

/* Checks every /series dataset: shape [rows] or [rows,3], unlimited first
 * dimension, chunked, units, and the exact values of row_value. */
static void check_series(hid_t file, long rows)
{
    int c0 = 0;
    for (int i = 0; i < cb_metric_count; i++) {
        const cb_metric_desc *d = &cb_metric_table[i];
        char name[256];
        snprintf(name, sizeof name, "/series/%s", d->name);
        hsize_t dims[4] = { 0, 0, 0, 0 };
        int rank = ds_shape(file, name, dims);
        CU_ASSERT_EQUAL_FATAL(rank, d->width == 3 ? 2 : 1);
        CU_ASSERT_EQUAL(dims[0], (hsize_t)rows);
        if (d->width == 3) CU_ASSERT_EQUAL(dims[1], 3);
        CU_ASSERT(ds_type_is(file, name, H5T_IEEE_F64LE));

        hid_t ds = H5Dopen2(file, name, H5P_DEFAULT);
        hid_t s = H5Dget_space(ds);
        hsize_t maxd[4];
        H5Sget_simple_extent_dims(s, dims, maxd);
        CU_ASSERT(maxd[0] == H5S_UNLIMITED);
        H5Sclose(s);
        hid_t dcpl = H5Dget_create_plist(ds);
        CU_ASSERT(H5Pget_layout(dcpl) == H5D_CHUNKED);
        H5Pclose(dcpl);
        char *unit = read_str_attr(ds, "unit"), *desc = read_str_attr(ds, "description");
        CU_ASSERT_PTR_NOT_NULL(unit);
        CU_ASSERT_PTR_NOT_NULL(desc);
        if (unit) CU_ASSERT_STRING_EQUAL(unit, d->unit);
        if (desc) CU_ASSERT_STRING_EQUAL(desc, d->description);
        free(unit);
        free(desc);
        H5Dclose(ds);

        size_t n = 0;
        double *v = read_all(file, name, H5T_NATIVE_DOUBLE, sizeof(double), &n);
        CU_ASSERT_EQUAL_FATAL(n, (size_t)rows * (size_t)d->width);
        CU_ASSERT_PTR_NOT_NULL_FATAL(v);
        int bad = 0;
        for (long r = 0; r < rows; r++)
            for (int k = 0; k < d->width; k++)
                if (!same_double(v[r * d->width + k], row_value(r, c0 + k))) {
                    if (bad++ < 3)
                        fprintf(stderr, "  %s[%ld][%d] = %.17g, wrote %.17g\n", name, r, k,
                                v[r * d->width + k], row_value(r, c0 + k));
                }
        CU_ASSERT_EQUAL(bad, 0);
        free(v);
        c0 += d->width;
    }
}

/* Checks /frames: K times and positions equal to what was written, and the chunking
 * and filters of /frames/positions. */
static void check_frames(hid_t file, const fixture *fx, int K)
{
    hsize_t dims[4] = { 0, 0, 0, 0 };
    CU_ASSERT_EQUAL_FATAL(ds_shape(file, "/frames/time", dims), 1);
    CU_ASSERT_EQUAL(dims[0], (hsize_t)K);
    CU_ASSERT_EQUAL_FATAL(ds_shape(file, "/frames/positions", dims), 3);
    CU_ASSERT_EQUAL(dims[0], (hsize_t)K);
    CU_ASSERT_EQUAL(dims[1], (hsize_t)fx->w.nv);
    CU_ASSERT_EQUAL(dims[2], 3);
    CU_ASSERT(ds_type_is(file, "/frames/time", H5T_IEEE_F64LE));
    CU_ASSERT(ds_type_is(file, "/frames/positions", H5T_IEEE_F64LE));

    size_t n = 0;
    double *t = read_all(file, "/frames/time", H5T_NATIVE_DOUBLE, sizeof(double), &n);
    CU_ASSERT_EQUAL_FATAL(n, (size_t)K);
    for (int k = 0; k < K; k++) CU_ASSERT_EQUAL(t[k], frame_time(k));
    free(t);
    double *x = read_all(file, "/frames/positions", H5T_NATIVE_DOUBLE, sizeof(double), &n);
    CU_ASSERT_EQUAL_FATAL(n, (size_t)K * fx->w.nv * 3);
    double (*want)[3] = calloc((size_t)fx->w.nv, sizeof *want);
    int bad = 0;
    for (int k = 0; k < K; k++) {
        frame_positions(fx, k, want);
        for (int i = 0; i < fx->w.nv; i++)
            for (int d = 0; d < 3; d++)
                if (x[((size_t)k * fx->w.nv + i) * 3 + d] != want[i][d]) bad++;
    }
    CU_ASSERT_EQUAL(bad, 0);
    free(want);
    free(x);

    hid_t ds = H5Dopen2(file, "/frames/positions", H5P_DEFAULT);
    hid_t dcpl = H5Dget_create_plist(ds);
    hsize_t chunk[3] = { 0, 0, 0 };
    CU_ASSERT_EQUAL(H5Pget_chunk(dcpl, 3, chunk), 3);
    CU_ASSERT_EQUAL(chunk[0], 1);
    CU_ASSERT_EQUAL(chunk[1], (hsize_t)fx->w.nv);
    CU_ASSERT_EQUAL(chunk[2], 3);
    int shuffle = 0, deflate = 0, nf = H5Pget_nfilters(dcpl);
    for (int i = 0; i < nf; i++) {
        unsigned flags, cd[8];
        size_t ncd = 8;
        char fname[64];
        H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, sizeof fname, fname, NULL);
        if (id == H5Z_FILTER_SHUFFLE) shuffle = 1;
        if (id == H5Z_FILTER_DEFLATE && ncd >= 1 && cd[0] == 4) deflate = 1;
    }
    CU_ASSERT(shuffle);
    CU_ASSERT(deflate);
    H5Pclose(dcpl);
    H5Dclose(ds);
}

static void check_mesh(hid_t file, const fixture *fx)
{
    const cb_mesh *m = fx->mesh;
    hsize_t dims[4] = { 0, 0, 0, 0 };
    CU_ASSERT_EQUAL_FATAL(ds_shape(file, "/mesh/faces", dims), 2);
    CU_ASSERT(dims[0] == (hsize_t)m->nf && dims[1] == 3);
    CU_ASSERT_EQUAL_FATAL(ds_shape(file, "/mesh/edges", dims), 2);
    CU_ASSERT(dims[0] == (hsize_t)m->ne && dims[1] == 2);
    CU_ASSERT_EQUAL_FATAL(ds_shape(file, "/mesh/rest_positions", dims), 2);
    CU_ASSERT(dims[0] == (hsize_t)m->nv && dims[1] == 3);
    CU_ASSERT_EQUAL_FATAL(ds_shape(file, "/mesh/masses", dims), 1);
    CU_ASSERT(dims[0] == (hsize_t)m->nv);
    CU_ASSERT(ds_type_is(file, "/mesh/faces", H5T_STD_I32LE));
    CU_ASSERT(ds_type_is(file, "/mesh/edges", H5T_STD_I32LE));
    CU_ASSERT(ds_type_is(file, "/mesh/rest_positions", H5T_IEEE_F64LE));
    CU_ASSERT(ds_type_is(file, "/mesh/masses", H5T_IEEE_F64LE));

    int *f = read_all(file, "/mesh/faces", H5T_NATIVE_INT, sizeof(int), NULL);
    int *e = read_all(file, "/mesh/edges", H5T_NATIVE_INT, sizeof(int), NULL);
    double *x = read_all(file, "/mesh/rest_positions", H5T_NATIVE_DOUBLE, sizeof(double), NULL);
    double *mass = read_all(file, "/mesh/masses", H5T_NATIVE_DOUBLE, sizeof(double), NULL);
    CU_ASSERT_FATAL(f && e && x && mass);
    CU_ASSERT(memcmp(f, m->f, (size_t)m->nf * sizeof *m->f) == 0);
    CU_ASSERT(memcmp(e, m->e, (size_t)m->ne * sizeof *m->e) == 0);
    CU_ASSERT(memcmp(x, m->x, (size_t)m->nv * sizeof *m->x) == 0);
    CU_ASSERT(memcmp(mass, fx->w.mass, (size_t)m->nv * sizeof *mass) == 0);
    free(f);
    free(e);
    free(x);
    free(mass);
}

static void check_attr(hid_t file, const char *name, const char *want)
{
    char *s = read_str_attr(file, name);
    CU_ASSERT_PTR_NOT_NULL(s);
    CU_ASSERT(attr_is_utf8(file, name));
    if (!s) return;
    int same = strcmp(s, want) == 0;
    if (!same) fprintf(stderr, "  attribute %s = '%.80s', expected '%.80s'\n", name, s, want);
    CU_ASSERT(same);
    free(s);
}

/* ------------------------------------------------------------ XDMF checks */

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = calloc((size_t)n + 1, 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) { free(s); s = NULL; }
    fclose(f);
    if (len) *len = (size_t)n;
    return s;
}

/* A small well-formedness check: balanced and properly nested tags, quoted
 * attributes, one root element, only known entities. Returns 1 if fine. */
static int xml_balanced(const char *s, char *why, size_t nwhy)
{
    char stack[64][64];
    int depth = 0, roots = 0;
    const char *p = s;
    while (*p) {
        if (*p != '<') {
            if (*p == '&') {
                static const char *const ent[] = { "&amp;", "&lt;", "&gt;", "&quot;", "&apos;" };
                int ok = 0;
                for (int i = 0; i < 5; i++) ok |= strncmp(p, ent[i], strlen(ent[i])) == 0;
                if (!ok) { snprintf(why, nwhy, "bad entity at offset %ld", (long)(p - s)); return 0; }
            } else if (*p == '>') {
                snprintf(why, nwhy, "stray '>' at offset %ld", (long)(p - s));
                return 0;
            } else if (depth == 0 && !(*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')) {
                snprintf(why, nwhy, "text outside the root element at offset %ld", (long)(p - s));
                return 0;
            }
            p++;
            continue;
        }
        if (strncmp(p, "<?", 2) == 0) {
            const char *q = strstr(p, "?>");
            if (!q) { snprintf(why, nwhy, "unterminated <?"); return 0; }
            p = q + 2;
            continue;
        }
        if (strncmp(p, "<!--", 4) == 0) {
            const char *q = strstr(p + 4, "-->");
            if (!q) { snprintf(why, nwhy, "unterminated comment"); return 0; }
            p = q + 3;
            continue;
        }
        int closing = p[1] == '/';
        const char *n0 = p + 1 + closing, *n1 = n0;
        while (*n1 && !strchr(" \t\r\n/>", *n1)) n1++;
        if (n1 == n0 || n1 - n0 >= 63) { snprintf(why, nwhy, "bad tag name at offset %ld", (long)(p - s)); return 0; }
        const char *q = n1;
        char quote = 0;
        while (*q && (quote || *q != '>')) {
            if (quote && *q == quote) quote = 0;
            else if (!quote && (*q == '"' || *q == '\'')) quote = *q;
            else if (!quote && *q == '<') break;
            q++;
        }
        if (*q != '>') { snprintf(why, nwhy, "unterminated tag at offset %ld", (long)(p - s)); return 0; }
        int selfclose = q[-1] == '/';
        if (closing) {
            if (depth == 0 || strncmp(stack[depth - 1], n0, (size_t)(n1 - n0)) != 0
                || stack[depth - 1][n1 - n0] != '\0') {
                snprintf(why, nwhy, "</%.*s> does not close <%s>", (int)(n1 - n0), n0,
                         depth ? stack[depth - 1] : "(nothing)");
                return 0;
            }
            depth--;
        } else {
            if (depth == 0) roots++;
            if (!selfclose) {
                if (depth == 64) { snprintf(why, nwhy, "too deep"); return 0; }
                memcpy(stack[depth], n0, (size_t)(n1 - n0));
                stack[depth][n1 - n0] = '\0';
                depth++;
            }
        }
        p = q + 1;
    }
    if (depth != 0) { snprintf(why, nwhy, "<%s> is never closed", stack[depth - 1]); return 0; }
    if (roots != 1) { snprintf(why, nwhy, "%d root elements", roots); return 0; }
    return 1;
}

/* The value of attribute `name` in the tag starting at `tag` (up to its '>'). */
static int tag_attr(const char *tag, const char *name, char *out, size_t n)
{
    const char *end = strchr(tag, '>');
    char key[64];
    snprintf(key, sizeof key, " %s=\"", name);
    const char *a = strstr(tag, key);
    if (!a || !end || a > end) return 0;
    a += strlen(key);
    const char *b = strchr(a, '"');
    if (!b || (size_t)(b - a) >= n) return 0;
    memcpy(out, a, (size_t)(b - a));
    out[b - a] = '\0';
    return 1;
}

static int parse_dims(const char *s, hsize_t *dims, int max)
{
    int r = 0;
    char *end;
    while (r < max) {
        unsigned long long v = strtoull(s, &end, 10);
        if (end == s) break;
        dims[r++] = (hsize_t)v;
        s = end;
    }
    return r;
}

/* Checks the sidecar of a run with K frames: well-formed, one uniform grid per frame
 * with its time, HDF references by basename to datasets that exist with exactly the
 * stated dimensions, and grid k's geometry the view /frames/xdmf/<k> holding frame k. */
static void check_xdmf(const char *xdmf, const char *h5path, const fixture *fx, int K)
{
    char *s = slurp(xdmf, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    char why[256] = "";
    int ok = xml_balanced(s, why, sizeof why);
    if (!ok) fprintf(stderr, "  %s: %s\n", xdmf, why);
    CU_ASSERT(ok);
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "<Xdmf Version=\"3.0\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "CollectionType=\"Temporal\""));

    const char *base = strrchr(h5path, '/');
    base = base ? base + 1 : h5path;
    hid_t file = H5Fopen(h5path, H5F_ACC_RDONLY, H5P_DEFAULT);
    CU_ASSERT_FATAL(file >= 0);

    int grids = 0, hdf_refs = 0, views = 0, bad = 0;
    for (const char *g = strstr(s, "GridType=\"Uniform\""); g; g = strstr(g + 1, "GridType=\"Uniform\"")) {
        const char *t = strstr(g, "<Time ");
        char val[64];
        if (!t || !tag_attr(t, "Value", val, sizeof val) || strtod(val, NULL) != frame_time(grids)) bad++;
        grids++;
    }
    for (const char *d = strstr(s, "<DataItem"); d; d = strstr(d + 1, "<DataItem")) {
        char fmt[16] = "", dimstr[64] = "";
        tag_attr(d, "Format", fmt, sizeof fmt);
        tag_attr(d, "Dimensions", dimstr, sizeof dimstr);
        const char *body = strchr(d, '>') + 1;
        if (strcmp(fmt, "HDF") == 0) {
            hdf_refs++;
            char ref[512];
            size_t n = strcspn(body, "<");
            CU_ASSERT_FATAL(n < sizeof ref);
            memcpy(ref, body, n);
            ref[n] = '\0';
            char *colon = strstr(ref, ":/");
            CU_ASSERT_PTR_NOT_NULL_FATAL(colon);
            *colon = '\0';
            if (strcmp(ref, base) != 0) { fprintf(stderr, "  reference to '%s'\n", ref); bad++; }
            hsize_t want[4] = { 0 }, have[4] = { 0 };
            int rw = parse_dims(dimstr, want, 4);
            int rh = ds_shape(file, colon + 1, have);
            if (rh < 0) { fprintf(stderr, "  %s names missing dataset %s\n", xdmf, colon + 1); bad++; }
            else if (rw != rh || memcmp(want, have, (size_t)rh * sizeof *want) != 0) {
                fprintf(stderr, "  %s: Dimensions=\"%s\" of %s do not match the file\n", xdmf, dimstr, colon + 1);
                bad++;
            }
            /* grid k's geometry is the view /frames/xdmf/<k>, holding exactly frame k */
            if (rh == 2 && strncmp(colon + 1, "/frames/xdmf/", 13) == 0) {
                if (strtol(colon + 14, NULL, 10) != views) bad++;
                size_t nview = 0, nall = 0;
                double *v = read_all(file, colon + 1, H5T_NATIVE_DOUBLE, sizeof(double), &nview);
                double *all = read_all(file, "/frames/positions", H5T_NATIVE_DOUBLE, sizeof(double), &nall);
                size_t per = (size_t)fx->w.nv * 3;
                if (!v || !all || nview != per || nall < (size_t)(views + 1) * per ||
                    memcmp(v, all + (size_t)views * per, per * sizeof *v) != 0) bad++;
                free(v);
                free(all);
                views++;
            }
        }
    }
    CU_ASSERT_EQUAL(grids, K);
    CU_ASSERT_EQUAL(views, K);
    CU_ASSERT_EQUAL(hdf_refs, 2 * K);
    CU_ASSERT_EQUAL(bad, 0);
    H5Fclose(file);
    free(s);
}

/* ------------------------------------------------------------ external programs */

static int find_on_path(const char *prog, char *out, size_t n)
{
    const char *path = getenv("PATH");
    if (!path) return 0;
    while (*path) {
        size_t len = strcspn(path, ":");
        snprintf(out, n, "%.*s/%s", (int)len, path, prog);
        if (len && access(out, X_OK) == 0) return 1;
        path += len + (path[len] == ':');
    }
    return 0;
}

/* Runs argv[0] with argv; returns its exit status (or -1). */
static int run_prog(char *const argv[])
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        execv(argv[0], argv);
        _exit(127);
    }
    int st = 0;
    if (waitpid(pid, &st, 0) < 0) return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void check_xmllint(const char *xdmf)
{
    char prog[1024];
    if (!find_on_path("xmllint", prog, sizeof prog)) return;
    char *argv[] = { prog, "--noout", (char *)xdmf, NULL };
    CU_ASSERT_EQUAL(run_prog(argv), 0);
}

/* h5py reads every dataset and attribute; the status and frame count are checked. */
static void check_h5py(const char *h5path, int K, const char *status)
{
    const char *py = getenv("CB_PYTHON");
    if (!py || !py[0] || access(py, X_OK) != 0) return;
    static const char script[] =
        "import sys, h5py\n"
        "f = h5py.File(sys.argv[1], 'r')\n"
        "seen = []\n"
        "def visit(name, obj):\n"
        "    if isinstance(obj, h5py.Dataset):\n"
        "        obj[()]\n"
        "        for k in obj.attrs: obj.attrs[k]\n"
        "        seen.append(name)\n"
        "f.visititems(visit)\n"
        "for k in ('mesh/faces', 'mesh/edges', 'mesh/rest_positions', 'mesh/masses',\n"
        "          'frames/time', 'frames/positions', 'series/time'):\n"
        "    assert k in seen, k\n"
        "assert isinstance(f.attrs['status'], str), type(f.attrs['status'])\n"
        "assert f.attrs['status'] == sys.argv[3], f.attrs['status']\n"
        "assert f['frames/positions'].shape[0] == int(sys.argv[2])\n"
        "assert f['frames/positions'].shape[1:] == (f['mesh/rest_positions'].shape[0], 3)\n"
        "for k in f.attrs: f.attrs[k]\n";
    char kbuf[32];
    snprintf(kbuf, sizeof kbuf, "%d", K);
    char *argv[] = { (char *)py, "-c", (char *)script, (char *)h5path, kbuf, (char *)status, NULL };
    int rc = run_prog(argv);
    if (rc != 0) fprintf(stderr, "  %s: h5py check exited with %d\n", h5path, rc);
    CU_ASSERT_EQUAL(rc, 0);
}

/* ------------------------------------------------------------ tests */

/* A full run, closed normally, read back field by field. 2500 rows cross the
 * in-memory block (1024 rows) several times; frames every 500 rows; 7 rows after
 * the last frame are written only by close. */
static void test_roundtrip(void)
{
    fixture fx;
    CU_ASSERT_FATAL(fixture_init(&fx) == 0);
    char path[600], xdmf[600];
    make_path(path, sizeof path, "roundtrip.h5");
    make_path(xdmf, sizeof xdmf, "roundtrip.xdmf");
    /* a long scene text with non-ASCII characters: must come back unchanged */
    size_t tl = 100000;
    char *text = calloc(tl + 64, 1);
    strcpy(text, "name: drape_sphere  # \xc3\xa9t\xc3\xa9 \xe2\x80\x94 caf\xc3\xa9\n");
    while (strlen(text) < tl) strcat(text, "cloth: {grid: {nx: 60, ny: 60}}\n");
    cb_runlog_def def = make_def(path, text);

    char before[32], after[32];
    time_t t0 = time(NULL);
    struct tm tm;
    strftime(before, sizeof before, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t0, &tm));
    cb_error err;
    cb_error_clear(&err);
    cb_runlog *log = NULL;
    int rc = cb_runlog_open(&def, &fx.w, &log, &err);
    if (rc) fprintf(stderr, "  %s\n", err.message);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    t0 = time(NULL);
    strftime(after, sizeof after, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t0, &tm));

    long rows = 2507;
    int K = write_rows_and_frames(&fx, log, rows, 500);
    CU_ASSERT_EQUAL(K, 5);
    CU_ASSERT_EQUAL(cb_runlog_status(log, "ok", "finished: 2507 steps", &err), 0);
    CU_ASSERT_EQUAL(cb_runlog_close(&log, &err), 0);
    CU_ASSERT_PTR_NULL(log);

    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    CU_ASSERT_FATAL(file >= 0);
    check_attr(file, "clothbench_version", CB_VERSION);
    check_attr(file, "solver", "pbd");
    check_attr(file, "scene_name", "drape_sphere");
    check_attr(file, "scene_text", text);
    check_attr(file, "parameters", "{iterations: 10}");
    check_attr(file, "expensive_metrics", def.expensive_note);
    check_attr(file, "status", "ok");
    check_attr(file, "message", "finished: 2507 steps");
    char *created = read_str_attr(file, "created");
    CU_ASSERT_PTR_NOT_NULL_FATAL(created);
    int Y, M, D, h, mi, sec;
    char z = 0;
    CU_ASSERT_EQUAL(strlen(created), 20);
    CU_ASSERT_EQUAL(sscanf(created, "%4d-%2d-%2dT%2d:%2d:%2d%c", &Y, &M, &D, &h, &mi, &sec, &z), 7);
    CU_ASSERT_EQUAL(z, 'Z');
    /* ISO 8601 UTC sorts like time: between the clock read before and after open */
    CU_ASSERT(strcmp(before, created) <= 0 && strcmp(created, after) <= 0);
    free(created);

    check_mesh(file, &fx);
    check_series(file, rows);
    check_frames(file, &fx, K);
    H5Fclose(file);

    check_xdmf(xdmf, path, &fx, K);
    check_xmllint(xdmf);
    check_h5py(path, K, "ok");
    free(text);
    fixture_free(&fx);
}

/* A second handle opened after a frame, before close, sees the data of that frame
 * and the series rows logged before it. */
static void test_readable_before_close(void)
{
    fixture fx;
    CU_ASSERT_FATAL(fixture_init(&fx) == 0);
    char path[600];
    make_path(path, sizeof path, "open.h5");
    cb_runlog_def def = make_def(path, "name: x\n");
    cb_error err;
    cb_error_clear(&err);
    cb_runlog *log = NULL;
    CU_ASSERT_EQUAL_FATAL(cb_runlog_open(&def, &fx.w, &log, &err), 0);
    CU_ASSERT_EQUAL(write_rows_and_frames(&fx, log, 30, 10), 3);

    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    CU_ASSERT_FATAL(file >= 0);
    check_attr(file, "status", "running");
    check_mesh(file, &fx);
    check_series(file, 30);
    check_frames(file, &fx, 3);
    H5Fclose(file);
    CU_ASSERT_EQUAL(cb_runlog_close(&log, &err), 0);
    fixture_free(&fx);
}

/* The writer is killed (SIGKILL) after its last frame, with series rows still
 * buffered: the file opens, its status is "running", it holds exactly the rows
 * logged up to the last frame (nothing is written per step) and every frame, and
 * the sidecar matches it. */
static void test_killed_after_frame(void)
{
    fixture fx;
    CU_ASSERT_FATAL(fixture_init(&fx) == 0);
    char path[600], xdmf[600];
    make_path(path, sizeof path, "killed.h5");
    make_path(xdmf, sizeof xdmf, "killed.xdmf");
    fflush(NULL);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        cb_runlog_def def = make_def(path, "name: killed\n");
        cb_error err;
        cb_runlog *log = NULL;
        if (cb_runlog_open(&def, &fx.w, &log, &err) != 0) _exit(3);
        /* 1200 rows: one full block (1024) is written on its own; frames after rows
         * 400, 800 and 1200; then 150 rows that stay in memory. */
        if (write_rows_and_frames(&fx, log, 1350, 400) != 3) _exit(4);
        raise(SIGKILL);
        _exit(5);
    }
    int st = 0;
    CU_ASSERT_FATAL(waitpid(pid, &st, 0) == pid);
    CU_ASSERT(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    if (WIFEXITED(st)) fprintf(stderr, "  child exited with %d\n", WEXITSTATUS(st));

    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    CU_ASSERT_FATAL(file >= 0);
    check_attr(file, "status", "running");
    check_attr(file, "solver", "pbd");
    check_mesh(file, &fx);
    check_series(file, 1200);
    check_frames(file, &fx, 3);
    H5Fclose(file);
    check_xdmf(xdmf, path, &fx, 3);
    check_h5py(path, 3, "running");
    fixture_free(&fx);
}

/* A run without frames flushes with cb_runlog_flush: killed after it, the file holds
 * every row logged up to the flush and no frame. */
static void test_killed_after_flush(void)
{
    fixture fx;
    CU_ASSERT_FATAL(fixture_init(&fx) == 0);
    char path[600];
    make_path(path, sizeof path, "flushed.h5");
    fflush(NULL);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        cb_runlog_def def = make_def(path, "name: flushed\n");
        cb_error err;
        cb_runlog *log = NULL;
        if (cb_runlog_open(&def, &fx.w, &log, &err) != 0) _exit(3);
        cb_metrics m;
        for (long r = 0; r < 130; r++) {
            fill_metrics(r, &m);
            if (cb_runlog_series(log, &m, &err) != 0) _exit(4);
            if (r + 1 == 100 && cb_runlog_flush(log, &err) != 0) _exit(5);
        }
        raise(SIGKILL);
        _exit(6);
    }
    int st = 0;
    CU_ASSERT_FATAL(waitpid(pid, &st, 0) == pid);
    CU_ASSERT(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    CU_ASSERT_FATAL(file >= 0);
    check_attr(file, "status", "running");
    check_series(file, 100);
    check_frames(file, &fx, 0);
    H5Fclose(file);
    cb_error err;
    CU_ASSERT_EQUAL(cb_runlog_flush(NULL, &err), CB_ERR_INPUT);
    fixture_free(&fx);
}

/* A second writer of a file that is still being written is refused, and the first
 * run's file is left intact. */
static void test_file_in_use(void)
{
    const char *lk = getenv("HDF5_USE_FILE_LOCKING");
    if (lk && (!strcmp(lk, "FALSE") || !strcmp(lk, "false"))) {
        fprintf(stderr, "  HDF5_USE_FILE_LOCKING=%s: writers hold no lock, nothing to check\n", lk);
        return;
    }
    fixture fx;
    CU_ASSERT_FATAL(fixture_init(&fx) == 0);
    char path[600];
    make_path(path, sizeof path, "inuse.h5");
    cb_runlog_def def = make_def(path, "name: inuse\n");
    cb_error err;
    cb_runlog *log = NULL, *log2 = NULL;
    CU_ASSERT_EQUAL_FATAL(cb_runlog_open(&def, &fx.w, &log, &err), 0);
    CU_ASSERT_EQUAL_FATAL(write_rows_and_frames(&fx, log, 20, 10), 2);
    CU_ASSERT_EQUAL(cb_runlog_open(&def, &fx.w, &log2, &err), CB_ERR_IO);
    CU_ASSERT_PTR_NULL(log2);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "being written by another process"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "inuse.h5"));
    CU_ASSERT_EQUAL(cb_runlog_status(log, "ok", "done", &err), 0);
    CU_ASSERT_EQUAL(cb_runlog_close(&log, &err), 0);
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    CU_ASSERT_FATAL(file >= 0);
    check_attr(file, "status", "ok");
    check_series(file, 20);
    check_frames(file, &fx, 2);
    H5Fclose(file);
    /* once closed, the same path can be written again */
    CU_ASSERT_EQUAL(cb_runlog_open(&def, &fx.w, &log2, &err), 0);
    CU_ASSERT_EQUAL(cb_runlog_close(&log2, &err), 0);
    fixture_free(&fx);
}

/* cb_runlog_status rewrites status and message, writes the buffered rows first,
 * and rejects a status outside the documented set. */
static void test_status_updates(void)
{
    fixture fx;
    CU_ASSERT_FATAL(fixture_init(&fx) == 0);
    char path[600];
    make_path(path, sizeof path, "status.h5");
    cb_runlog_def def = make_def(path, "name: s\n");
    cb_error err;
    cb_error_clear(&err);
    cb_runlog *log = NULL;
    CU_ASSERT_EQUAL_FATAL(cb_runlog_open(&def, &fx.w, &log, &err), 0);
    CU_ASSERT_EQUAL(write_rows_and_frames(&fx, log, 10, 1000), 0);

    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    CU_ASSERT_FATAL(file >= 0);
    check_attr(file, "status", "running");
    check_attr(file, "message", "");
    check_series(file, 0);   /* 10 rows, no frame yet: still in memory */
    CU_ASSERT_EQUAL(cb_runlog_status(log, "diverged", "step 10: |x| = 1e9 > bound 1000", &err), 0);
    check_attr(file, "status", "diverged");
    check_attr(file, "message", "step 10: |x| = 1e9 > bound 1000");
    check_series(file, 10);  /* the status change wrote them */
    CU_ASSERT_EQUAL(cb_runlog_status(log, "interrupted", NULL, &err), 0);
    check_attr(file, "status", "interrupted");
    check_attr(file, "message", "");

    cb_error_clear(&err);
    CU_ASSERT_EQUAL(cb_runlog_status(log, "finished", "x", &err), CB_ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "'finished'"));
    check_attr(file, "status", "interrupted");
    H5Fclose(file);

    CU_ASSERT_EQUAL(cb_runlog_status(log, "error", "solver failed", &err), 0);
    CU_ASSERT_EQUAL(cb_runlog_close(&log, &err), 0);
    file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    CU_ASSERT_FATAL(file >= 0);
    check_attr(file, "status", "error");
    check_attr(file, "message", "solver failed");
    H5Fclose(file);
    fixture_free(&fx);
}

/* Sidecar naming: "x.h5" -> "x.xdmf", other names get ".xdmf" appended; a stale
 * sidecar from an earlier run of the same name is removed at open; a run whose
 * path has XML-special characters still gives well-formed XML. */
static void test_xdmf_sidecar(void)
{
    fixture fx;
    CU_ASSERT_FATAL(fixture_init(&fx) == 0);
    char dir[600], path[700], xdmf[800];
    snprintf(dir, sizeof dir, "%s/a&b<c>", cb_test_tmpdir());
    CU_ASSERT_FATAL(mkdir(dir, 0777) == 0 || errno == EEXIST);
    snprintf(path, sizeof path, "%s/r&d \"1\".run", dir);
    snprintf(xdmf, sizeof xdmf, "%s.xdmf", path);
    FILE *stale = fopen(xdmf, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(stale);
    fputs("<Xdmf><stale/></Xdmf>\n", stale);
    fclose(stale);

    cb_runlog_def def = make_def(path, "name: x\n");
    cb_error err;
    cb_error_clear(&err);
    cb_runlog *log = NULL;
    CU_ASSERT_EQUAL_FATAL(cb_runlog_open(&def, &fx.w, &log, &err), 0);
    CU_ASSERT_NOT_EQUAL(access(xdmf, F_OK), 0);   /* stale one removed */
    CU_ASSERT_EQUAL(write_rows_and_frames(&fx, log, 4, 1), 4);
    CU_ASSERT_EQUAL(cb_runlog_close(&log, &err), 0);

    /* check_xdmf compares references with the file's basename, unescaped: read
     * the references through an unescaping copy */
    size_t n = 0;
    char *s = slurp(xdmf, &n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    char why[256] = "";
    int ok = xml_balanced(s, why, sizeof why);
    if (!ok) fprintf(stderr, "  %s: %s\n", xdmf, why);
    CU_ASSERT(ok);
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "r&amp;d &quot;1&quot;.run:/frames/xdmf/000000"));
    CU_ASSERT_PTR_NULL(strstr(s, "stale"));
    free(s);
    check_xmllint(xdmf);
    fixture_free(&fx);
}

/* A missing folder is an i/o error naming the path (the caller creates folders);
 * so is a "folder" that is a file. */
static void test_missing_folder(void)
{
    fixture fx;
    CU_ASSERT_FATAL(fixture_init(&fx) == 0);
    char path[600];
    make_path(path, sizeof path, "no/such/folder/run.h5");
    cb_runlog_def def = make_def(path, "name: x\n");
    cb_error err;
    cb_error_clear(&err);
    cb_runlog *log = (cb_runlog *)&err; /* must be reset to NULL */
    CU_ASSERT_EQUAL(cb_runlog_open(&def, &fx.w, &log, &err), CB_ERR_IO);
    CU_ASSERT_PTR_NULL(log);
    CU_ASSERT_EQUAL(err.status, CB_ERR_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, path));

    char file_as_dir[600];
    make_path(file_as_dir, sizeof file_as_dir, "plainfile");
    FILE *f = fopen(file_as_dir, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fclose(f);
    make_path(path, sizeof path, "plainfile/run.h5");
    def.path = path;
    cb_error_clear(&err);
    CU_ASSERT_EQUAL(cb_runlog_open(&def, &fx.w, &log, &err), CB_ERR_IO);
    CU_ASSERT_PTR_NULL(log);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, path));
    fixture_free(&fx);
}

/* An unwritable file (a directory in its place) fails inside HDF5: the message
 * names the path and HDF5's own reason, and nothing is printed by HDF5. */
static void test_hdf5_failure_message(void)
{
    fixture fx;
    CU_ASSERT_FATAL(fixture_init(&fx) == 0);
    char path[600];
    make_path(path, sizeof path, "isadir.h5");
    CU_ASSERT_FATAL(mkdir(path, 0777) == 0 || errno == EEXIST);
    cb_runlog_def def = make_def(path, "name: x\n");
    cb_error err;
    cb_error_clear(&err);
    cb_runlog *log = NULL;
    /* catch whatever is printed on stderr meanwhile */
    char errpath[600];
    make_path(errpath, sizeof errpath, "stderr.txt");
    fflush(stderr);
    int saved = dup(2);
    FILE *cap = fopen(errpath, "w");
    CU_ASSERT_FATAL(saved >= 0 && cap != NULL);
    dup2(fileno(cap), 2);
    int rc = cb_runlog_open(&def, &fx.w, &log, &err);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    fclose(cap);
    CU_ASSERT_EQUAL(rc, CB_ERR_IO);
    CU_ASSERT_PTR_NULL(log);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, path));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "HDF5: "));
    size_t printed = 0;
    char *text = slurp(errpath, &printed);
    if (printed) fprintf(stderr, "  printed: %.200s\n", text);
    CU_ASSERT_EQUAL(printed, 0);
    free(text);
    fixture_free(&fx);
}

static void test_bad_input(void)
{
    fixture fx;
    CU_ASSERT_FATAL(fixture_init(&fx) == 0);
    cb_error err;
    cb_runlog *log = NULL;
    char path[600];
    make_path(path, sizeof path, "bad.h5");
    cb_runlog_def def = make_def(path, "name: x\n");
    CU_ASSERT_EQUAL(cb_runlog_open(NULL, &fx.w, &log, &err), CB_ERR_INPUT);
    CU_ASSERT_EQUAL(cb_runlog_open(&def, NULL, &log, &err), CB_ERR_INPUT);
    CU_ASSERT_EQUAL(cb_runlog_open(&def, &fx.w, NULL, &err), CB_ERR_INPUT);
    def.path = NULL;
    CU_ASSERT_EQUAL(cb_runlog_open(&def, &fx.w, &log, &err), CB_ERR_INPUT);
    def.path = path;
    cb_world empty;
    memset(&empty, 0, sizeof empty);
    CU_ASSERT_EQUAL(cb_runlog_open(&def, &empty, &log, &err), CB_ERR_INPUT);
    CU_ASSERT_PTR_NULL(log);

    CU_ASSERT_EQUAL_FATAL(cb_runlog_open(&def, &fx.w, &log, &err), 0);
    cb_metrics m;
    fill_metrics(0, &m);
    CU_ASSERT_EQUAL(cb_runlog_series(NULL, &m, &err), CB_ERR_INPUT);
    CU_ASSERT_EQUAL(cb_runlog_series(log, NULL, &err), CB_ERR_INPUT);
    CU_ASSERT_EQUAL(cb_runlog_frame(log, 0.0, NULL, &err), CB_ERR_INPUT);
    CU_ASSERT_EQUAL(cb_runlog_status(log, NULL, "x", &err), CB_ERR_INPUT);
    CU_ASSERT_EQUAL(cb_runlog_close(NULL, &err), CB_ERR_INPUT);
    CU_ASSERT_EQUAL(cb_runlog_close(&log, &err), 0);
    CU_ASSERT_PTR_NULL(log);
    CU_ASSERT_EQUAL(cb_runlog_close(&log, &err), 0); /* closing NULL is a no-op */
    fixture_free(&fx);
}

/* The same run written twice gives the same bytes, except inside the `created`
 * timestamp (ARCHITECTURE.md: bitwise-identical runs, `clothbench rerun --check`). */
static void test_deterministic(void)
{
    fixture fx;
    CU_ASSERT_FATAL(fixture_init(&fx) == 0);
    char path[2][600];
    char *created[2] = { NULL, NULL };
    for (int j = 0; j < 2; j++) {
        /* a second apart, so anything else that depends on the clock (HDF5 object
         * timestamps) would show up as a difference */
        if (j == 1) sleep(1);
        make_path(path[j], sizeof path[j], j ? "det_b.h5" : "det_a.h5");
        cb_runlog_def def = make_def(path[j], "name: det\n");
        cb_error err;
        cb_runlog *log = NULL;
        CU_ASSERT_EQUAL_FATAL(cb_runlog_open(&def, &fx.w, &log, &err), 0);
        CU_ASSERT_EQUAL(write_rows_and_frames(&fx, log, 1100, 300), 3);
        CU_ASSERT_EQUAL(cb_runlog_status(log, "ok", "", &err), 0);
        CU_ASSERT_EQUAL(cb_runlog_close(&log, &err), 0);
        hid_t f = H5Fopen(path[j], H5F_ACC_RDONLY, H5P_DEFAULT);
        CU_ASSERT_FATAL(f >= 0);
        created[j] = read_str_attr(f, "created");
        H5Fclose(f);
        CU_ASSERT_PTR_NOT_NULL_FATAL(created[j]);
    }
    size_t na = 0, nb = 0;
    char *a = slurp(path[0], &na), *b = slurp(path[1], &nb);
    CU_ASSERT_FATAL(a && b);
    CU_ASSERT_EQUAL_FATAL(na, nb);
    /* where the timestamp sits in file a (the same offset in b) */
    size_t cl = strlen(created[0]), at = na;
    for (size_t i = 0; i + cl <= na; i++)
        if (memcmp(a + i, created[0], cl) == 0) { at = i; break; }
    CU_ASSERT_FATAL(at < na);
    CU_ASSERT(memcmp(b + at, created[1], cl) == 0);
    size_t diff = 0;
    for (size_t i = 0; i < na; i++)
        if (a[i] != b[i] && (i < at || i >= at + cl)) {
            if (diff++ < 3) fprintf(stderr, "  byte %zu differs\n", i);
        }
    CU_ASSERT_EQUAL(diff, 0);
    free(a);
    free(b);
    free(created[0]);
    free(created[1]);
    fixture_free(&fx);
}

CB_TEST_MAIN("runlog",
    CB_TEST(test_roundtrip),
    CB_TEST(test_readable_before_close),
    CB_TEST(test_killed_after_frame),
    CB_TEST(test_killed_after_flush),
    CB_TEST(test_file_in_use),
    CB_TEST(test_status_updates),
    CB_TEST(test_xdmf_sidecar),
    CB_TEST(test_missing_folder),
    CB_TEST(test_hdf5_failure_message),
    CB_TEST(test_bad_input),
    CB_TEST(test_deterministic))
