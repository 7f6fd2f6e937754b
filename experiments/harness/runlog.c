/* experiments/harness/runlog.c — the run file (HDF5) in the layout of the README's "The run file",
 * and its XDMF sidecar so ParaView opens the animation directly.
 *
 *   /  attributes: layout_version (int32, CB_LAYOUT_VERSION) and variable-length
 *      UTF-8 strings: clothbench_version, solver, scene_name, scene_text, parameters
 *      (effective), parameters_given,
 *      created, status, message, expensive_metrics, self_collision; and the
 *      provenance (experiments/harness/provenance.h): scene_path, scene_dir, mesh_files (sha256sum
 *      lines of every file the scene read), command_line, git_commit, build_type,
 *      build_flags, compiler, libraries, threads, host, cpu
 *   /mesh/faces int32 [F,3], /mesh/edges int32 [E,2],
 *   /mesh/rest_positions float64 [N,3], /mesh/masses float64 [N]
 *   /series/<metric> float64 [T] or [T,3] (one per cb_metric_table entry),
 *      chunked and extendible, attributes unit and description
 *   /frames/time float64 [K], /frames/positions float64 [K,N,3]
 *      (one frame per chunk, shuffle + deflate 4)
 *   /frames/xdmf/<k, 6 digits> float64 [N,3]: HDF5 virtual datasets, frame k of
 *      /frames/positions (no data of their own), for the XDMF sidecar: ParaView's XDMF3
 *      readers do not take the HyperSlab DataItem the legacy reader needs, and every
 *      reader takes a plain dataset (layout 3)
 *
 * Cost per step: cb_runlog_series only copies one row into a memory block; the
 * block is written (one H5Dwrite per metric) when it is full, at every frame, on a
 * status change and at close.
 *
 * Crash safety: the file is flushed (H5Fflush) after every frame and after every
 * block of series rows, and no HDF5 call touches the file between those points, so
 * a process killed between two frames leaves the file as it was at the last flush:
 * readable, status "running". The series rows logged since the last flush are lost
 * then; that is accepted (they are at most one frame's worth, or one block). A kill
 * in the middle of a write itself can still damage the file (HDF5 without SWMR
 * gives no guarantee there), but that window is short. A kill inside flush_series can
 * leave some series extended and others not: readers take a `running` file up to the
 * rows every series holds (run_summary.c, analysis/cbrun.py).
 *
 * The sidecar is written after the flush, to a temporary file renamed over the old
 * one, so it never refers to a frame that is not on disk yet. It references the
 * .h5 by its basename, so the pair can be moved together.
 *
 * Object modification times are not stored (H5Pset_obj_track_times off), so the
 * same run gives the same bytes apart from the `created` attribute and wall times.
 * HDF5's automatic error printing is turned off (process-wide); failures become
 * CB_ERR_IO / CB_ERR_INTERNAL messages naming the file, the object and HDF5's own
 * innermost error description.
 */
#define _DEFAULT_SOURCE /* flock(2) */
#include "experiments/harness/runlog.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "experiments/harness/provenance.h"
#include "core/sha256.h"

#ifndef CB_VERSION
#define CB_VERSION "unknown"
#endif

enum {
    SERIES_BLOCK = 1024,      /* rows buffered in memory, and the chunk length on disk */
    FRAME_TIME_CHUNK = 256,
    DEFLATE_LEVEL = 4
};

struct cb_runlog {
    char *path;               /* the .h5 file */
    char *xdmf_path;          /* the sidecar */
    char *h5_ref;             /* basename of path, XML-escaped, for the sidecar */
    hid_t file;
    int nv, nf;
    /* series */
    int nmetrics;
    hid_t *series;            /* [nmetrics] open /series datasets */
    int *col;                 /* [nmetrics] first column of each metric in a buffered row */
    int ncols;
    double *buf;              /* [SERIES_BLOCK][ncols] rows not yet in the file */
    double *gather;           /* [SERIES_BLOCK * 3] one metric's block, contiguous */
    int nbuf;
    hsize_t nrows;            /* rows already in the file */
    /* frames */
    hid_t frame_time, frame_pos;
    hsize_t nframes;
    double *times;            /* [cap_times] frame times, for the sidecar */
    size_t cap_times;
};

/* ---------------------------------------------------------------- errors */

typedef struct h5_desc { char text[512]; } h5_desc;

static herr_t h5_walk(unsigned n, const H5E_error2_t *e, void *data)
{
    h5_desc *d = data;
    if (n == 0 && e && e->desc) snprintf(d->text, sizeof d->text, "%s", e->desc);
    return 0;
}

/* Fill err with "<path>: <what>: <HDF5's innermost error>". Must be called right
 * after the failing HDF5 call, before any other HDF5 call resets the error stack. */
static int h5_fail_at(cb_error *err, int status, const char *src, int line, const char *path,
                      const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static int h5_fail_at(cb_error *err, int status, const char *src, int line, const char *path,
                      const char *fmt, ...)
{
    h5_desc d = { "" };
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, h5_walk, &d);
    H5Eclear2(H5E_DEFAULT);
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return cb_error_set(err, status, src, line, "%s: %s%s%s", path, what,
                        d.text[0] ? ": HDF5: " : "", d.text);
}
#define H5_FAIL(err, status, path, ...) h5_fail_at((err), (status), __FILE__, __LINE__, (path), __VA_ARGS__)

static void h5_quiet(void)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

/* ---------------------------------------------------------------- helpers */

static int is_valid_status(const char *s)
{
    static const char *const ok[] = { "running", "ok", "diverged", "interrupted", "error" };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (strcmp(s, ok[i]) == 0) return 1;
    return 0;
}

/* The sidecar path: "x.h5" -> "x.xdmf", anything else -> "<path>.xdmf". */
static char *xdmf_path_of(const char *path)
{
    size_t n = strlen(path);
    char *out = cb_calloc(n + 6, 1);
    if (!out) return NULL;
    memcpy(out, path, n);
    if (n > 3 && strcmp(path + n - 3, ".h5") == 0) n -= 3;
    memcpy(out + n, ".xdmf", 6);
    return out;
}

int cb_runlog_remove(const char *path)
{
    if (!path) return -1;
    char *x = xdmf_path_of(path);
    int rc = remove(path);
    if (x) remove(x);
    free(x);
    return rc;
}

static char *xml_escape(const char *s)
{
    size_t n = 0;
    for (const char *p = s; *p; p++) n += (*p == '&') ? 5 : (*p == '<' || *p == '>') ? 4
                                         : (*p == '"' || *p == '\'') ? 6 : 1;
    char *out = cb_calloc(n + 1, 1), *o = out;
    if (!out) return NULL;
    for (const char *p = s; *p; p++) {
        const char *r = NULL;
        switch (*p) {
        case '&': r = "&amp;"; break;
        case '<': r = "&lt;"; break;
        case '>': r = "&gt;"; break;
        case '"': r = "&quot;"; break;
        case '\'': r = "&apos;"; break;
        default: *o++ = *p; continue;
        }
        size_t k = strlen(r);
        memcpy(o, r, k);
        o += k;
    }
    *o = '\0';
    return out;
}

/* Fails with a clear message when the folder of `path` does not exist. */
static int check_folder(const char *path, cb_error *err)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return 0;
    size_t n = (size_t)(slash - path);
    if (n == 0) return 0; /* "/x.h5" */
    char *dir = cb_calloc(n + 1, 1);
    if (!dir) return CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", path);
    memcpy(dir, path, n);
    struct stat st;
    int rc = 0;
    if (stat(dir, &st) != 0)
        rc = CB_FAIL(err, CB_ERR_IO, "cannot create run file '%s': folder '%s': %s", path, dir,
                     strerror(errno));
    else if (!S_ISDIR(st.st_mode))
        rc = CB_FAIL(err, CB_ERR_IO, "cannot create run file '%s': '%s' is not a folder", path, dir);
    free(dir);
    return rc;
}

/* Create or overwrite a scalar variable-length UTF-8 string attribute. */
static int write_str_attr(const char *path, hid_t obj, const char *objname, const char *name,
                          const char *value, cb_error *err)
{
    int rc = 0;
    hid_t type = -1, space = -1, attr = -1;
    const char *v = value ? value : "";
    type = H5Tcopy(H5T_C_S1);
    if (type < 0 || H5Tset_size(type, H5T_VARIABLE) < 0 || H5Tset_cset(type, H5T_CSET_UTF8) < 0) {
        rc = H5_FAIL(err, CB_ERR_INTERNAL, path, "cannot make the string type for attribute %s/%s",
                     objname, name);
        goto done;
    }
    htri_t exists = H5Aexists(obj, name);
    if (exists < 0) {
        rc = H5_FAIL(err, CB_ERR_IO, path, "cannot look up attribute %s/%s", objname, name);
        goto done;
    }
    if (exists) {
        attr = H5Aopen(obj, name, H5P_DEFAULT);
    } else {
        space = H5Screate(H5S_SCALAR);
        if (space < 0) {
            rc = H5_FAIL(err, CB_ERR_INTERNAL, path, "cannot make a scalar dataspace");
            goto done;
        }
        attr = H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    }
    if (attr < 0) {
        rc = H5_FAIL(err, CB_ERR_IO, path, "cannot create attribute %s/%s", objname, name);
        goto done;
    }
    if (H5Awrite(attr, type, &v) < 0)
        rc = H5_FAIL(err, CB_ERR_IO, path, "cannot write attribute %s/%s", objname, name);
done:
    if (attr >= 0) H5Aclose(attr);
    if (space >= 0) H5Sclose(space);
    if (type >= 0) H5Tclose(type);
    return rc;
}

static hid_t make_group(const char *path, hid_t file, const char *name, cb_error *err)
{
    hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
    if (gcpl < 0 || H5Pset_obj_track_times(gcpl, 0) < 0) {
        H5_FAIL(err, CB_ERR_INTERNAL, path, "cannot make a group property list for %s", name);
        if (gcpl >= 0) H5Pclose(gcpl);
        return -1;
    }
    hid_t g = H5Gcreate2(file, name, H5P_DEFAULT, gcpl, H5P_DEFAULT);
    if (g < 0) H5_FAIL(err, CB_ERR_IO, path, "cannot create group %s", name);
    H5Pclose(gcpl);
    return g;
}

/* A fixed-size dataset written in one go (the /mesh arrays). */
static int write_fixed(const char *path, hid_t file, const char *name, hid_t file_type,
                       hid_t mem_type, int rank, const hsize_t *dims, const void *data,
                       cb_error *err)
{
    int rc = 0;
    hid_t space = -1, dcpl = -1, ds = -1;
    space = H5Screate_simple(rank, dims, NULL);
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (space < 0 || dcpl < 0 || H5Pset_obj_track_times(dcpl, 0) < 0) {
        rc = H5_FAIL(err, CB_ERR_INTERNAL, path, "cannot make the dataspace of %s", name);
        goto done;
    }
    ds = H5Dcreate2(file, name, file_type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (ds < 0) {
        rc = H5_FAIL(err, CB_ERR_IO, path, "cannot create dataset %s", name);
        goto done;
    }
    if (dims[0] > 0 && data && H5Dwrite(ds, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
        rc = H5_FAIL(err, CB_ERR_IO, path, "cannot write dataset %s", name);
done:
    if (ds >= 0) H5Dclose(ds);
    if (dcpl >= 0) H5Pclose(dcpl);
    if (space >= 0) H5Sclose(space);
    return rc;
}

/* An empty float64 dataset extendible along its first dimension. */
static hid_t make_extendible(const char *path, hid_t file, const char *name, int rank,
                             const hsize_t *tail, const hsize_t *chunk, int compress,
                             cb_error *err)
{
    hsize_t dims[3] = { 0, 0, 0 }, maxdims[3] = { H5S_UNLIMITED, 0, 0 };
    for (int k = 1; k < rank; k++) dims[k] = maxdims[k] = tail[k - 1];
    hid_t space = -1, dcpl = -1, ds = -1;
    space = H5Screate_simple(rank, dims, maxdims);
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (space < 0 || dcpl < 0 || H5Pset_obj_track_times(dcpl, 0) < 0
        || H5Pset_chunk(dcpl, rank, chunk) < 0) {
        H5_FAIL(err, CB_ERR_INTERNAL, path, "cannot set up the layout of %s", name);
        goto done;
    }
    if (compress) {
        if (H5Zfilter_avail(H5Z_FILTER_SHUFFLE) <= 0 || H5Zfilter_avail(H5Z_FILTER_DEFLATE) <= 0) {
            CB_FAIL(err, CB_ERR_INTERNAL, "%s: this HDF5 library has no shuffle/deflate filter "
                    "(needed for %s)", path, name);
            goto done;
        }
        if (H5Pset_shuffle(dcpl) < 0 || H5Pset_deflate(dcpl, DEFLATE_LEVEL) < 0) {
            H5_FAIL(err, CB_ERR_INTERNAL, path, "cannot set the filters of %s", name);
            goto done;
        }
    }
    ds = H5Dcreate2(file, name, H5T_IEEE_F64LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (ds < 0) H5_FAIL(err, CB_ERR_IO, path, "cannot create dataset %s", name);
done:
    if (dcpl >= 0) H5Pclose(dcpl);
    if (space >= 0) H5Sclose(space);
    return ds;
}

/* Append `n` rows (row shape `tail`, rank-1 dims) from `data` to an extendible dataset
 * holding `have` rows. */
static int append_rows(const char *path, hid_t ds, const char *name, int rank, hsize_t have,
                       hsize_t n, const hsize_t *tail, const double *data, cb_error *err)
{
    int rc = 0;
    hsize_t dims[3] = { have + n, 0, 0 }, start[3] = { have, 0, 0 }, count[3] = { n, 0, 0 };
    for (int k = 1; k < rank; k++) dims[k] = count[k] = tail[k - 1];
    hid_t fs = -1, ms = -1;
    if (H5Dset_extent(ds, dims) < 0) {
        rc = H5_FAIL(err, CB_ERR_IO, path, "cannot extend dataset %s to %llu rows", name,
                     (unsigned long long)dims[0]);
        goto done;
    }
    fs = H5Dget_space(ds);
    ms = H5Screate_simple(rank, count, NULL);
    if (fs < 0 || ms < 0 || H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) < 0) {
        rc = H5_FAIL(err, CB_ERR_INTERNAL, path, "cannot select rows of dataset %s", name);
        goto done;
    }
    if (H5Dwrite(ds, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, data) < 0)
        rc = H5_FAIL(err, CB_ERR_IO, path, "cannot write dataset %s", name);
done:
    if (ms >= 0) H5Sclose(ms);
    if (fs >= 0) H5Sclose(fs);
    return rc;
}

/* HDF5 truncates a file before it tries to lock it, so creating a run file that
 * another process is still writing would wipe that run. Its writer holds an flock(2)
 * lock (HDF5's file locking): refuse if the lock is taken. */
static int check_not_in_use(const char *path, cb_error *err)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) return 0; /* no file yet (or unreadable: H5Fcreate will say) */
    int busy = flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    close(fd); /* releases our lock, if we got it */
    if (busy)
        return CB_FAIL(err, CB_ERR_IO,
                       "%s: the file is being written by another process (a run still going?); "
                       "not overwriting it", path);
    return 0;
}

/* Room on disk: a write that fails half way leaves an HDF5 file whose superblock
 * claims more than is on disk, which no reader opens again. So before writing `bytes`
 * more, the run stops cleanly (the file as of its last flush, status "error") when
 * the file system, or the process's file-size limit (ulimit -f), has less than twice
 * that plus a margin for the status and the metadata left. */
enum { DISK_MARGIN = 128 * 1024 };

static int check_room(const cb_runlog *log, double bytes, cb_error *err)
{
    double need = 2.0 * bytes + DISK_MARGIN, have = INFINITY;
    struct statvfs fs;
    if (statvfs(log->path, &fs) == 0) have = (double)fs.f_bavail * (double)fs.f_frsize;
    struct rlimit rl;
    struct stat st;
    if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && stat(log->path, &st) == 0)
        have = fmin(have, (double)rl.rlim_cur - (double)st.st_size);
    if (have >= need) return 0;
    return CB_FAIL(err, CB_ERR_IO, "%s: the disk is nearly full (%.0f kB left for this file, the next write needs "
                   "about %.0f kB): the run stops here so that its file stays readable", log->path, have / 1024.0,
                   need / 1024.0);
}

/* Bytes the buffered series rows take on disk. HDF5 allocates a whole chunk
 * (SERIES_BLOCK rows of every metric) when the first row lands in it, at the next flush:
 * the first row of a run file costs SERIES_BLOCK * ncols * 8 bytes (about 400 kB), not
 * one row's worth. Counting rows only let that flush fail on a nearly full disk with the
 * status still "running" (issue 29). */
static double pending_series_bytes(const cb_runlog *log)
{
    if (log->nbuf == 0) return 0.0;
    hsize_t first = log->nrows / SERIES_BLOCK, last = (log->nrows + (hsize_t)log->nbuf - 1) / SERIES_BLOCK;
    hsize_t chunks = last - first + (log->nrows % SERIES_BLOCK == 0 ? 1 : 0);
    return (double)chunks * SERIES_BLOCK * 8.0 * (double)log->ncols;
}

static int flush_file(cb_runlog *log, cb_error *err)
{
    if (H5Fflush(log->file, H5F_SCOPE_GLOBAL) < 0)
        return H5_FAIL(err, CB_ERR_IO, log->path, "cannot flush the file");
    return 0;
}

/* Write the buffered series rows (one H5Dwrite per metric). The buffer is emptied
 * even on failure, so one bad write is not repeated at every later call. */
static int flush_series(cb_runlog *log, cb_error *err)
{
    if (log->nbuf == 0) return 0;
    int rc = check_room(log, pending_series_bytes(log), err);
    if (rc) {
        log->nbuf = 0;
        return rc;
    }
    hsize_t n = (hsize_t)log->nbuf;
    for (int i = 0; i < log->nmetrics && rc == 0; i++) {
        const cb_metric_desc *d = &cb_metric_table[i];
        int w = d->width;
        for (int r = 0; r < log->nbuf; r++)
            for (int k = 0; k < w; k++)
                log->gather[(size_t)r * w + k] = log->buf[(size_t)r * log->ncols + log->col[i] + k];
        char name[256];
        snprintf(name, sizeof name, "/series/%s", d->name);
        hsize_t tail[1] = { 3 };
        rc = append_rows(log->path, log->series[i], name, w == 3 ? 2 : 1, log->nrows, n, tail,
                         log->gather, err);
    }
    log->nbuf = 0;
    if (rc == 0) log->nrows += n;
    return rc;
}

/* The sidecar: an XDMF 3 temporal collection with one uniform grid per frame, its
 * geometry the frame's view /frames/xdmf/<k> (every ParaView XDMF reader takes it). */
static int write_xdmf(cb_runlog *log, cb_error *err)
{
    size_t n = strlen(log->xdmf_path);
    char *tmp = cb_calloc(n + 5, 1);
    if (!tmp) return CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", log->xdmf_path);
    memcpy(tmp, log->xdmf_path, n);
    memcpy(tmp + n, ".tmp", 5);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        int rc = CB_FAIL(err, CB_ERR_IO, "cannot write XDMF sidecar '%s': %s", tmp, strerror(errno));
        free(tmp);
        return rc;
    }
    const char *h5 = log->h5_ref;
    unsigned long long K = (unsigned long long)log->nframes;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<!-- clothbench run: the data is in %s -->\n"
               "<Xdmf Version=\"3.0\">\n"
               "  <Domain>\n"
               "    <Grid Name=\"cloth\" GridType=\"Collection\" CollectionType=\"Temporal\">\n", h5);
    for (unsigned long long k = 0; k < K; k++) {
        fprintf(f, "      <Grid Name=\"frame_%llu\" GridType=\"Uniform\">\n"
                   "        <Time Value=\"%.17g\"/>\n"
                   "        <Topology TopologyType=\"Triangle\" NumberOfElements=\"%d\">\n"
                   "          <DataItem Dimensions=\"%d 3\" NumberType=\"Int\" Precision=\"4\" "
                   "Format=\"HDF\">%s:/mesh/faces</DataItem>\n"
                   "        </Topology>\n"
                   "        <Geometry GeometryType=\"XYZ\">\n"
                   "          <DataItem Dimensions=\"%d 3\" NumberType=\"Float\" Precision=\"8\" "
                   "Format=\"HDF\">%s:/frames/xdmf/%06llu</DataItem>\n"
                   "        </Geometry>\n"
                   "      </Grid>\n",
                k, log->times[k], log->nf, log->nf, h5, log->nv, h5, k);
    }
    fprintf(f, "    </Grid>\n"
               "  </Domain>\n"
               "</Xdmf>\n");
    int bad = ferror(f);
    if (fclose(f) != 0) bad = 1;
    int rc = 0;
    if (bad) {
        rc = CB_FAIL(err, CB_ERR_IO, "cannot write XDMF sidecar '%s': %s", tmp, strerror(errno));
        unlink(tmp);
    } else if (rename(tmp, log->xdmf_path) != 0) {
        rc = CB_FAIL(err, CB_ERR_IO, "cannot rename '%s' to '%s': %s", tmp, log->xdmf_path,
                     strerror(errno));
        unlink(tmp);
    }
    free(tmp);
    return rc;
}

static void release(cb_runlog *log)
{
    if (!log) return;
    for (int i = 0; log->series && i < log->nmetrics; i++)
        if (log->series[i] >= 0) H5Dclose(log->series[i]);
    if (log->frame_time >= 0) H5Dclose(log->frame_time);
    if (log->frame_pos >= 0) H5Dclose(log->frame_pos);
    if (log->file >= 0) H5Fclose(log->file);
    free(log->series);
    free(log->col);
    free(log->buf);
    free(log->gather);
    free(log->times);
    free(log->path);
    free(log->xdmf_path);
    free(log->h5_ref);
    free(log);
}

/* ---------------------------------------------------------------- public */

/* The integer attribute `name` of the root group. */
static int write_int_attr(const char *path, hid_t file, const char *name, int value, cb_error *err)
{
    hid_t space = H5Screate(H5S_SCALAR);
    if (space < 0) return H5_FAIL(err, CB_ERR_INTERNAL, path, "cannot make a scalar dataspace");
    hid_t attr = H5Acreate2(file, name, H5T_STD_I32LE, space, H5P_DEFAULT, H5P_DEFAULT);
    int rc = 0;
    if (attr < 0 || H5Awrite(attr, H5T_NATIVE_INT, &value) < 0)
        rc = H5_FAIL(err, CB_ERR_IO, path, "cannot write attribute /%s", name);
    if (attr >= 0) H5Aclose(attr);
    H5Sclose(space);
    return rc;
}

/* "<sha256>  <path>" per file read by the scene (the format of sha256sum), malloc'd. */
static char *file_digests(const cb_runlog_def *def, cb_error *err)
{
    size_t cap = 1;
    for (int i = 0; i < def->nfiles; i++) cap += strlen(def->files[i]) + 68 + PATH_MAX;
    char *out = cb_malloc(cap);
    if (!out) {
        CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", def->path);
        return NULL;
    }
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < def->nfiles; i++) {
        char hex[65];
        if (cb_sha256_file(def->files[i], hex, err)) {
            free(out);
            return NULL;
        }
        char *abs = realpath(def->files[i], NULL);
        len += (size_t)snprintf(out + len, cap - len, "%s  %s\n", hex, abs ? abs : def->files[i]);
        free(abs);
    }
    return out;
}

static int write_root_attrs(cb_runlog *log, const cb_runlog_def *def, cb_error *err)
{
    char created[32];
    time_t now = time(NULL);
    struct tm tm;
    if (!gmtime_r(&now, &tm) || strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(created, sizeof created, "unknown");
    cb_provenance pv;
    cb_provenance_get(&pv);
    char *digests = file_digests(def, err);
    if (!digests) return err ? err->status : CB_ERR_IO;
    const char *names[] = { "clothbench_version", "solver", "scene_name", "scene_text", "parameters",
                            "parameters_given", "created", "status", "message", "expensive_metrics",
                            "self_collision", "model", "scene_path", "scene_dir", "mesh_files", "command_line",
                            "git_commit", "build_type", "build_flags", "compiler", "libraries", "threads",
                            "host", "cpu" };
    const char *values[] = { CB_VERSION, def->solver, def->scene_name, def->scene_text,
                             def->parameters, def->parameters_given ? def->parameters_given : "{}",
                             created, "running", "", def->expensive_note,
                             def->self_collision ? def->self_collision : "unknown",
                             def->model ? def->model : "unknown",
                             def->scene_path ? def->scene_path : "", def->scene_dir ? def->scene_dir : "",
                             digests, def->command_line ? def->command_line : cb_provenance_get_command_line(),
                             pv.git_commit, pv.build_type, pv.build_flags, pv.compiler, pv.libraries, pv.threads,
                             pv.host, pv.cpu };
    int rc = write_int_attr(log->path, log->file, "layout_version", CB_LAYOUT_VERSION, err);
    for (size_t i = 0; !rc && i < sizeof names / sizeof names[0]; i++)
        rc = write_str_attr(log->path, log->file, "", names[i], values[i], err);
    if (!rc && def->reference) rc = write_str_attr(log->path, log->file, "", "reference", def->reference, err);
    free(digests);
    return rc;
}

static int write_mesh(cb_runlog *log, const cb_world *w, cb_error *err)
{
    const cb_mesh *m = w->mesh;
    hid_t g = make_group(log->path, log->file, "/mesh", err);
    if (g < 0) return err ? err->status : CB_ERR_IO;
    H5Gclose(g);
    hsize_t df[2] = { (hsize_t)m->nf, 3 }, de[2] = { (hsize_t)m->ne, 2 };
    hsize_t dx[2] = { (hsize_t)m->nv, 3 }, dm[1] = { (hsize_t)w->nv };
    int rc = write_fixed(log->path, log->file, "/mesh/faces", H5T_STD_I32LE, H5T_NATIVE_INT, 2, df,
                         m->f, err);
    if (!rc) rc = write_fixed(log->path, log->file, "/mesh/edges", H5T_STD_I32LE, H5T_NATIVE_INT, 2,
                              de, m->e, err);
    if (!rc) rc = write_fixed(log->path, log->file, "/mesh/rest_positions", H5T_IEEE_F64LE,
                              H5T_NATIVE_DOUBLE, 2, dx, m->x, err);
    if (!rc) rc = write_fixed(log->path, log->file, "/mesh/masses", H5T_IEEE_F64LE,
                              H5T_NATIVE_DOUBLE, 1, dm, w->mass, err);
    return rc;
}

static int make_series(cb_runlog *log, cb_error *err)
{
    hid_t g = make_group(log->path, log->file, "/series", err);
    if (g < 0) return err ? err->status : CB_ERR_IO;
    H5Gclose(g);
    for (int i = 0; i < log->nmetrics; i++) {
        const cb_metric_desc *d = &cb_metric_table[i];
        char name[256];
        snprintf(name, sizeof name, "/series/%s", d->name);
        hsize_t tail[1] = { 3 }, chunk[2] = { SERIES_BLOCK, 3 };
        log->series[i] = make_extendible(log->path, log->file, name, d->width == 3 ? 2 : 1, tail,
                                         chunk, 0, err);
        if (log->series[i] < 0) return err ? err->status : CB_ERR_IO;
        int rc = write_str_attr(log->path, log->series[i], name, "unit", d->unit, err);
        if (!rc) rc = write_str_attr(log->path, log->series[i], name, "description", d->description, err);
        if (rc) return rc;
    }
    return 0;
}

static int make_frames(cb_runlog *log, cb_error *err)
{
    hid_t g = make_group(log->path, log->file, "/frames", err);
    if (g < 0) return err ? err->status : CB_ERR_IO;
    H5Gclose(g);
    hsize_t tchunk[1] = { FRAME_TIME_CHUNK };
    log->frame_time = make_extendible(log->path, log->file, "/frames/time", 1, NULL, tchunk, 0, err);
    if (log->frame_time < 0) return err ? err->status : CB_ERR_IO;
    hsize_t tail[2] = { (hsize_t)log->nv, 3 }, pchunk[3] = { 1, (hsize_t)log->nv, 3 };
    log->frame_pos = make_extendible(log->path, log->file, "/frames/positions", 3, tail, pchunk, 1, err);
    if (log->frame_pos < 0) return err ? err->status : CB_ERR_IO;
    g = make_group(log->path, log->file, "/frames/xdmf", err);
    if (g < 0) return err ? err->status : CB_ERR_IO;
    H5Gclose(g);
    return 0;
}

/* /frames/xdmf/<k>: a virtual dataset [N,3] that is frame k of /frames/positions (in
 * this file: source file "."), for the sidecar. */
static int add_frame_view(cb_runlog *log, unsigned long long k, cb_error *err)
{
    char name[64];
    snprintf(name, sizeof name, "/frames/xdmf/%06llu", k);
    hsize_t n = (hsize_t)log->nv;
    hsize_t vdims[2] = { n, 3 }, sdims[3] = { (hsize_t)k + 1, n, 3 }, smax[3] = { H5S_UNLIMITED, n, 3 };
    hsize_t start[3] = { (hsize_t)k, 0, 0 }, count[3] = { 1, n, 3 };
    hid_t vspace = H5Screate_simple(2, vdims, NULL), sspace = H5Screate_simple(3, sdims, smax);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE), ds = -1;
    int rc = 0;
    if (vspace < 0 || sspace < 0 || dcpl < 0 || H5Pset_obj_track_times(dcpl, 0) < 0 ||
        H5Sselect_hyperslab(sspace, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
        H5Pset_virtual(dcpl, vspace, ".", "/frames/positions", sspace) < 0)
        rc = H5_FAIL(err, CB_ERR_INTERNAL, log->path, "cannot set up the frame view %s", name);
    if (!rc && (ds = H5Dcreate2(log->file, name, H5T_IEEE_F64LE, vspace, H5P_DEFAULT, dcpl, H5P_DEFAULT)) < 0)
        rc = H5_FAIL(err, CB_ERR_IO, log->path, "cannot create the frame view %s", name);
    if (ds >= 0) H5Dclose(ds);
    if (dcpl >= 0) H5Pclose(dcpl);
    if (sspace >= 0) H5Sclose(sspace);
    if (vspace >= 0) H5Sclose(vspace);
    return rc;
}

int cb_runlog_open(const cb_runlog_def *def, const cb_world *w, cb_runlog **out, cb_error *err)
{
    if (out) *out = NULL;
    if (!def || !w || !out)
        return CB_FAIL(err, CB_ERR_INPUT, "cb_runlog_open: def, w and out must not be NULL");
    if (!def->path || !def->path[0])
        return CB_FAIL(err, CB_ERR_INPUT, "cb_runlog_open: no run file path given");
    if (!w->mesh || !w->mass || w->nv <= 0 || w->mesh->nv != w->nv || w->mesh->nf < 0
        || w->mesh->ne < 0 || !w->mesh->x || (w->mesh->nf > 0 && !w->mesh->f)
        || (w->mesh->ne > 0 && !w->mesh->e))
        return CB_FAIL(err, CB_ERR_INPUT, "%s: the world has no valid mesh and masses", def->path);
    for (int i = 0; i < cb_metric_count; i++)
        if (cb_metric_table[i].width != 1 && cb_metric_table[i].width != 3)
            return CB_FAIL(err, CB_ERR_INTERNAL, "metric %s has width %d (1 or 3 expected)",
                           cb_metric_table[i].name, cb_metric_table[i].width);
    int rc = check_folder(def->path, err);
    if (rc) return rc;
    rc = check_not_in_use(def->path, err);
    if (rc) return rc;

    h5_quiet();
    cb_runlog *log = cb_calloc(1, sizeof *log);
    if (!log) return CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", def->path);
    log->file = log->frame_time = log->frame_pos = -1;
    log->nv = w->nv;
    log->nf = w->mesh->nf;
    log->nmetrics = cb_metric_count;
    log->path = cb_strdup(def->path);
    log->xdmf_path = xdmf_path_of(def->path);
    const char *slash = strrchr(def->path, '/');
    log->h5_ref = xml_escape(slash ? slash + 1 : def->path);
    log->series = cb_calloc((size_t)log->nmetrics, sizeof *log->series);
    log->col = cb_calloc((size_t)log->nmetrics, sizeof *log->col);
    log->gather = cb_calloc((size_t)SERIES_BLOCK * 3, sizeof *log->gather);
    if (!log->path || !log->xdmf_path || !log->h5_ref || !log->series || !log->col || !log->gather) {
        release(log);
        return CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", def->path);
    }
    for (int i = 0; i < log->nmetrics; i++) {
        log->series[i] = -1;
        log->col[i] = log->ncols;
        log->ncols += cb_metric_table[i].width;
    }
    log->buf = cb_calloc((size_t)SERIES_BLOCK * (size_t)(log->ncols > 0 ? log->ncols : 1),
                         sizeof *log->buf);
    if (!log->buf) {
        release(log);
        return CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", def->path);
    }

    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
    if (fcpl < 0) {
        rc = H5_FAIL(err, CB_ERR_INTERNAL, def->path, "cannot make a file property list");
        release(log);
        return rc;
    }
    log->file = H5Fcreate(def->path, H5F_ACC_TRUNC, fcpl, H5P_DEFAULT);
    if (log->file < 0) {
        rc = H5_FAIL(err, CB_ERR_IO, def->path, "cannot create run file");
        H5Pclose(fcpl);
        release(log);
        remove(def->path); /* an empty or half-written file (a full disk) is of no use to anyone */
        return rc;
    }
    H5Pclose(fcpl);

    /* A sidecar left by an earlier run of the same name would describe frames that
     * the truncated file no longer has. */
    if (unlink(log->xdmf_path) != 0 && errno != ENOENT) {
        rc = CB_FAIL(err, CB_ERR_IO, "cannot remove old XDMF sidecar '%s': %s", log->xdmf_path,
                     strerror(errno));
        release(log);
        return rc;
    }
    rc = write_root_attrs(log, def, err);
    if (!rc) rc = write_mesh(log, w, err);
    if (!rc) rc = make_series(log, err);
    if (!rc) rc = make_frames(log, err);
    if (!rc) rc = flush_file(log, err);
    /* the margin for the status and its message must be there before the run starts: a
     * run whose header took the last of the room could not say why it stopped */
    if (!rc) rc = check_room(log, 0.0, err);
    if (rc) {
        release(log);
        remove(def->path); /* nothing was run yet: no half-written file is left behind */
        return rc;
    }
    *out = log;
    return 0;
}

int cb_runlog_series(cb_runlog *log, const cb_metrics *m, cb_error *err)
{
    if (!log || !m) return CB_FAIL(err, CB_ERR_INPUT, "cb_runlog_series: log and m must not be NULL");
    double *row = log->buf + (size_t)log->nbuf * (size_t)log->ncols;
    for (int i = 0; i < log->nmetrics; i++) {
        const cb_metric_desc *d = &cb_metric_table[i];
        const double *src = (const double *)(const void *)((const char *)m + d->offset);
        for (int k = 0; k < d->width; k++) row[log->col[i] + k] = src[k];
    }
    log->nbuf++;
    if (log->nbuf == SERIES_BLOCK) {
        int rc = flush_series(log, err);
        if (!rc) rc = flush_file(log, err);
        return rc;
    }
    return 0;
}

int cb_runlog_flush(cb_runlog *log, cb_error *err)
{
    if (!log) return CB_FAIL(err, CB_ERR_INPUT, "cb_runlog_flush: log must not be NULL");
    int rc = flush_series(log, err);
    if (!rc) rc = flush_file(log, err);
    return rc;
}

int cb_runlog_frame(cb_runlog *log, double t, const double (*x)[3], cb_error *err)
{
    if (!log || !x) return CB_FAIL(err, CB_ERR_INPUT, "cb_runlog_frame: log and x must not be NULL");
    if (log->nframes == log->cap_times) {
        size_t cap = log->cap_times ? 2 * log->cap_times : 64;
        double *nt = cb_realloc(log->times, cap * sizeof *nt);
        if (!nt) return CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", log->path);
        log->times = nt;
        log->cap_times = cap;
    }
    /* the frame (its chunk is one frame), a new chunk of /frames/time, the rows not yet
     * written and the frame's view (metadata) */
    double time_chunk = log->nframes % FRAME_TIME_CHUNK == 0 ? 8.0 * FRAME_TIME_CHUNK : 0.0;
    int rc = check_room(log, 24.0 * (double)log->nv + time_chunk + pending_series_bytes(log) + 4096.0, err);
    if (!rc) rc = flush_series(log, err);
    if (rc) return rc;
    rc = append_rows(log->path, log->frame_time, "/frames/time", 1, log->nframes, 1, NULL, &t, err);
    if (rc) return rc;
    hsize_t tail[2] = { (hsize_t)log->nv, 3 };
    rc = append_rows(log->path, log->frame_pos, "/frames/positions", 3, log->nframes, 1, tail,
                     &x[0][0], err);
    if (!rc) rc = add_frame_view(log, (unsigned long long)log->nframes, err);
    if (rc) return rc;
    log->times[log->nframes++] = t;
    /* Flush first, so the sidecar never names a frame that is not on disk. */
    rc = flush_file(log, err);
    if (rc) return rc;
    return write_xdmf(log, err);
}

int cb_runlog_stages(cb_runlog *log, int n, const char *const *names, const double *seconds, cb_error *err)
{
    if (!log || n < 0 || (n > 0 && (!names || !seconds)))
        return CB_FAIL(err, CB_ERR_INPUT, "cb_runlog_stages: invalid arguments");
    const char *where = "/stages";
    if (H5Lexists(log->file, "/stages", H5P_DEFAULT) > 0 && H5Ldelete(log->file, "/stages", H5P_DEFAULT) < 0)
        return H5_FAIL(err, CB_ERR_IO, log->path, "cannot replace /stages");
    hid_t g = H5Gcreate2(log->file, "/stages", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (g < 0) return H5_FAIL(err, CB_ERR_IO, log->path, "cannot create /stages");
    hsize_t dims[1] = {(hsize_t)n};
    hid_t sp = H5Screate_simple(1, dims, NULL);
    hid_t st = H5Tcopy(H5T_C_S1);
    H5Tset_size(st, H5T_VARIABLE);
    H5Tset_cset(st, H5T_CSET_UTF8);
    int rc = 0;
    hid_t dn = H5Dcreate2(g, "names", st, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t ds = H5Dcreate2(g, "seconds", H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (dn < 0 || ds < 0 || (n > 0 && (H5Dwrite(dn, st, H5S_ALL, H5S_ALL, H5P_DEFAULT, names) < 0 ||
                                       H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, seconds) < 0)))
        rc = H5_FAIL(err, CB_ERR_IO, log->path, where);
    if (dn >= 0) H5Dclose(dn);
    if (ds >= 0) H5Dclose(ds);
    H5Tclose(st);
    H5Sclose(sp);
    H5Gclose(g);
    return rc;
}

int cb_runlog_status(cb_runlog *log, const char *status, const char *message, cb_error *err)
{
    if (!log || !status)
        return CB_FAIL(err, CB_ERR_INPUT, "cb_runlog_status: log and status must not be NULL");
    if (!is_valid_status(status))
        return CB_FAIL(err, CB_ERR_INPUT, "%s: status '%s' is not one of running, ok, diverged, "
                       "interrupted, error", log->path, status);
    /* The series rows go first; the status is written even if that fails, and the
     * first error is reported. */
    cb_error e2;
    cb_error_clear(&e2);
    int rc = flush_series(log, err);
    int rc2 = write_str_attr(log->path, log->file, "", "status", status, rc ? &e2 : err);
    if (!rc2) rc2 = write_str_attr(log->path, log->file, "", "message", message, rc ? &e2 : err);
    if (!rc2) rc2 = flush_file(log, rc ? &e2 : err);
    return rc ? rc : rc2;
}

int cb_runlog_close(cb_runlog **plog, cb_error *err)
{
    if (!plog) return CB_FAIL(err, CB_ERR_INPUT, "cb_runlog_close: plog must not be NULL");
    cb_runlog *log = *plog;
    if (!log) return 0;
    *plog = NULL;
    int rc = flush_series(log, err);
    /* Datasets are closed before the file, so H5Fclose writes everything out. */
    for (int i = 0; i < log->nmetrics; i++) {
        if (log->series[i] >= 0) H5Dclose(log->series[i]);
        log->series[i] = -1;
    }
    if (log->frame_time >= 0) H5Dclose(log->frame_time);
    if (log->frame_pos >= 0) H5Dclose(log->frame_pos);
    log->frame_time = log->frame_pos = -1;
    if (H5Fclose(log->file) < 0 && rc == 0)
        rc = H5_FAIL(err, CB_ERR_IO, log->path, "cannot close the file");
    log->file = -1;
    release(log);
    return rc;
}

int cb_runlog_health(cb_runlog *log, const char *rule, double energy_ref, const char *breaches, cb_error *err)
{
    if (!log || !rule || !breaches)
        return CB_FAIL(err, CB_ERR_INPUT, "cb_runlog_health: log, rule and breaches must not be NULL");
    int rc = write_str_attr(log->path, log->file, "", "health_rule", rule, err);
    if (!rc) rc = write_str_attr(log->path, log->file, "", "health_breaches", breaches, err);
    if (!rc) {
        hid_t space = H5Screate(H5S_SCALAR);
        if (H5Aexists(log->file, "health_energy_ref") > 0) H5Adelete(log->file, "health_energy_ref");
        hid_t attr = H5Acreate2(log->file, "health_energy_ref", H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT);
        if (attr < 0 || H5Awrite(attr, H5T_NATIVE_DOUBLE, &energy_ref) < 0)
            rc = H5_FAIL(err, CB_ERR_IO, log->path, "cannot write attribute /health_energy_ref");
        if (attr >= 0) H5Aclose(attr);
        H5Sclose(space);
    }
    return rc;
}
