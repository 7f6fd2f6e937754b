/* experiments/sweep_state.c — a run's state read back from the output folder: its run file's
 * summary, its .err note and .check (sweep_internal.h). */
#define _DEFAULT_SOURCE /* flock(2) */
#include "experiments/sweep_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "contact/colliders.h"
#include "experiments/harness/h5attr.h"
#include "experiments/harness/registry.h"
#include "experiments/harness/run.h"
#include "core/files.h"
#include "core/scene.h"
#include "core/solver.h"
#include "core/yamltree.h"
#include "experiments/harness/run_summary.h"
#include "experiments/rerun.h"

void cb_sweep_run_path(const cb_experiment *e, const cb_sweep_run *r, const char *ext, char *buf, size_t n)
{
    snprintf(buf, n, "%s/%s%s", e->output, r->name, ext);
}

/* 1 when another process holds the run file's lock: HDF5 takes an exclusive flock while
 * a run writes its file, so a run of another shard in progress is "running", not a file
 * that cannot be read. */
static int held_by_writer(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) return 0;
    int busy = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    if (!busy) flock(fd, LOCK_UN);
    close(fd);
    return busy;
}

void cb_sweep_refresh(const cb_experiment *e, const cb_sweep_run *r, run_state *st)
{
    char p[4096];
    memset(st, 0, sizeof *st);
    cb_sweep_run_path(e, r, ".err", p, sizeof p);
    FILE *f = fopen(p, "r");
    if (f) {
        st->has_note = 1;
        if (!fgets(st->note_status, sizeof st->note_status, f)) snprintf(st->note_status, sizeof st->note_status, "error");
        if (!fgets(st->note_msg, sizeof st->note_msg, f)) st->note_msg[0] = '\0';
        st->note_status[strcspn(st->note_status, "\r\n")] = '\0';
        st->note_msg[strcspn(st->note_msg, "\r\n")] = '\0';
        fclose(f);
    }
    cb_sweep_run_path(e, r, ".h5", p, sizeof p);
    struct stat sh, sc;
    char cp[4096];
    cb_sweep_run_path(e, r, ".check", cp, sizeof cp);
    if (stat(p, &sh) == 0 && stat(cp, &sc) == 0 && sc.st_mtime >= sh.st_mtime && (f = fopen(cp, "r"))) {
        if (!fgets(st->checked, sizeof st->checked, f)) st->checked[0] = '\0';
        st->checked[strcspn(st->checked, "\r\n")] = '\0';
        fclose(f);
    }
    if (access(p, F_OK) == 0) {
        st->file_exists = 1;
        cb_error er;
        cb_error_clear(&er);
        if (cb_run_summary_read(p, &st->s, &er) == CB_OK) st->have = 1;
        else if (held_by_writer(p)) st->running = 1;
        else snprintf(st->read_error, sizeof st->read_error, "%.500s", er.message);
    }
}

const char *cb_sweep_row_status(const run_state *st)
{
    if (st->has_note) return st->note_status;
    if (st->have) return st->s.status;
    if (st->running) return "running";
    if (st->file_exists) return "error";
    return "pending";
}

const char *cb_sweep_row_message(const run_state *st)
{
    if (st->has_note) return st->note_msg;
    if (st->have) return st->s.message;
    if (st->running) return "being written by another process";
    if (st->file_exists) return st->read_error;
    return "";
}

/* Reads the string attribute `name` of an HDF5 file (malloc'd), NULL if absent. */
static char *read_str_attr(const char *path, const char *name)
{
    H5Eset_auto(H5E_DEFAULT, NULL, NULL);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) return NULL;
    char *out = cb_h5_string_attr(f, name);
    H5Fclose(f);
    return out;
}

/* 1 when the run is finished with status ok and its file holds the scene text this
 * run would produce now (same scene file, same overrides). */
int cb_sweep_run_is_done(const cb_experiment *e, const cb_sweep_run *r, const run_state *st)
{
    if (st->has_note || !st->have) return 0;
    if (strcmp(st->s.status, "ok") && !(e->expect_diverged && !strcmp(st->s.status, "diverged"))) return 0;
    char **sets = NULL;
    int nsets = 0;
    cb_error er;
    if (cb_sweep_run_sets(e, r, &sets, &nsets, &er)) return 0;
    cb_scene *scene = NULL;
    int rc = cb_scene_load(e->scenes[r->scene], (const char *const *)sets, nsets, &scene, &er);
    cb_sweep_free_sets(&sets, nsets);
    if (rc) return 0;
    char p[4096];
    cb_sweep_run_path(e, r, ".h5", p, sizeof p);
    char *text = read_str_attr(p, "scene_text");
    int same = text && !strcmp(text, scene->text);
    free(text);
    cb_scene_free(&scene);
    return same;
}
