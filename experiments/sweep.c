/* experiments/sweep.c — the sweep runner behind `clothbench sweep` (sweep.h): workers,
 * progress, resumption. Experiment files are read in experiment.c, the index written in
 * sweep_index.c, the folder locked in sweep_lock.c.
 *
 * Every run goes through cb_run in a child process of its own (fork), also with
 * -j 1: a crash of one solver (a segfault, an abort in a library) then ends only that
 * run, which is recorded as failed, and no global state (HDF5 caches, static solver
 * state, leaked memory) carries from one run into the next. A fork costs well under a
 * millisecond against runs of seconds.
 *
 * Resumption: a run whose file exists with status "ok" and whose stored scene text
 * equals the scene text this run would produce is skipped; every other run is
 * started afresh (its old run file, sidecar and .err are removed first). The index
 * (index.csv, index.h5) is rebuilt from the run files and .err notes after every
 * finished run and written to a temporary file that is then renamed, so a kill at
 * any moment leaves a complete index of what is on disk.
 */
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

/* ---------------------------------------------------------------- running */

static void write_note(const char *path, const char *status, const char *msg)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) return;
    char one[1024];
    snprintf(one, sizeof one, "%s", msg ? msg : "");
    for (char *p = one; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    fprintf(f, "%s\n%s\n", status, one);
    if (fclose(f) == 0) rename(tmp, path);
    else remove(tmp);
}

/* The child: one cb_run, then _exit (0 ok, 1 run failed, 2 could not start). */
static void child_main(const cb_experiment *e, const cb_sweep_run *r, const cb_sweep_options *o)
{
    char h5[4096], note[4096];
    cb_sweep_run_path(e, r, ".h5", h5, sizeof h5);
    cb_sweep_run_path(e, r, ".err", note, sizeof note);
    char **sets = NULL;
    int nsets = 0;
    cb_error err;
    cb_error_clear(&err);
    if (cb_sweep_run_sets(e, r, &sets, &nsets, &err)) {
        write_note(note, "error", err.message);
        _exit(2);
    }
    cb_run_def def = cb_default_run_def();
    def.scene_path = e->scenes[r->scene];
    def.solver = e->solvers[r->solver];
    def.output = h5;
    def.sets = (const char *const *)sets;
    def.nsets = nsets;
    def.progress = 0;
    def.write_frames = o->write_frames;
    def.reference = e->reference;
    def.time_limit = e->time_limit;
    cb_run_result res;
    int rc = cb_run(&def, &res, &err);
    cb_sweep_free_sets(&sets, nsets);
    if (rc && res.frames == 0) {
        write_note(note, "error", err.message);
        _exit(2);
    }
    _exit(rc ? 1 : 0);
}

/* The check child: rerun the run from its file into <run>.rerun.h5, compare, and write
 * <run>.check ("identical" | "differs: ..." | "error: ...", then the build note). An
 * identical rerun file is removed (it adds nothing); a differing one is kept. _exit(0)
 * identical, 1 differs, 2 error. */
static void child_check(const cb_experiment *e, const cb_sweep_run *r)
{
    char h5[4096], again[4096], check[4096];
    cb_sweep_run_path(e, r, ".h5", h5, sizeof h5);
    cb_sweep_run_path(e, r, ".rerun.h5", again, sizeof again);
    cb_sweep_run_path(e, r, ".check", check, sizeof check);
    cb_rerun_def d = {.run_path = h5, .output = again, .scene_dir = NULL, .check = 1, .quiet = 1};
    cb_rerun_result res;
    cb_error err;
    cb_error_clear(&err);
    char *detail = NULL;
    size_t dlen = 0;
    FILE *mem = open_memstream(&detail, &dlen);
    int rc = cb_rerun(&d, &res, mem, &err);
    if (mem) fclose(mem);
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", check);
    FILE *f = fopen(tmp, "w");
    if (f) {
        if (rc < 0) fprintf(f, "error: %s\n", err.message);
        else if (rc == 0) fprintf(f, "identical%s\n", res.build_differs ? " (other build)" : "");
        else if (res.first_row >= 0)
            fprintf(f, "differs: row %ld %s%s\n", res.first_row, res.first_metric,
                    res.build_differs ? " (other build)" : " (same build)");
        else fprintf(f, "differs: %s%s\n", res.first_metric, res.build_differs ? " (other build)" : " (same build)");
        if (detail) fputs(detail, f);
        if (fclose(f) == 0) rename(tmp, check);
    }
    free(detail);
    if (rc == 0) {
        remove(again);
        cb_sweep_run_path(e, r, ".rerun.xdmf", again, sizeof again);
        remove(again);
    }
    _exit(rc < 0 ? 2 : rc == 0 ? 0 : 1);
}

static void fmt_duration(double s, char *buf, size_t n)
{
    if (!(s >= 0) || s > 1e7) snprintf(buf, n, "?");
    else if (s < 60) snprintf(buf, n, "%.0fs", s);
    else if (s < 3600) snprintf(buf, n, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
    else snprintf(buf, n, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
}

static void draw_progress(const cb_sweep_stats *st, long done, int running, double eta)
{
    char e[32];
    fmt_duration(eta, e, sizeof e);
    fprintf(stderr, "\r  sweep: %ld/%ld done, %ld failed, %d running, time left %s      ", done, st->selected,
            st->failed, running, done == st->selected ? "0s" : e);
    fflush(stderr);
}

static void clear_progress(void)
{
    fprintf(stderr, "\r%79s\r", "");
    fflush(stderr);
}

/* Count a finished run of this shard by its index status: ok, diverged (a result with
 * expect_diverged), else failed. */
static void tally(const cb_experiment *e, cb_sweep_stats *stats, const char *status)
{
    if (!strcmp(status, "ok")) stats->ok++;
    else if (e->expect_diverged && !strcmp(status, "diverged")) stats->diverged++;
    else stats->failed++;
}

int cb_sweep_execute(const cb_experiment *e, const cb_sweep_options *o, FILE *out, cb_sweep_stats *stats,
                     cb_error *err)
{
    if (!e || !o || !stats) return CB_FAIL(err, CB_ERR_INPUT, "cb_sweep_execute: NULL argument");
    memset(stats, 0, sizeof *stats);
    if (o->jobs < 1) return CB_FAIL(err, CB_ERR_INPUT, "-j: expected a number of jobs >= 1, got %d", o->jobs);
    if (o->nshards < 1 || o->shard < 0 || o->shard >= o->nshards)
        return CB_FAIL(err, CB_ERR_INPUT, "--shard %d/%d: expected I/N with 0 <= I < N", o->shard, o->nshards);
    stats->total = e->nruns;
    run_state *states = cb_calloc((size_t)e->nruns + 1, sizeof *states);
    long *todo = cb_calloc((size_t)e->nruns + 1, sizeof *todo);
    pid_t *pids = cb_calloc((size_t)o->jobs, sizeof *pids);
    long *slot_run = cb_calloc((size_t)o->jobs, sizeof *slot_run);
    double *slot_t0 = cb_calloc((size_t)o->jobs, sizeof *slot_t0);
    int rc = CB_OK, locked = 0;
    if (!states || !todo || !pids || !slot_run || !slot_t0) {
        rc = CB_FAIL(err, CB_ERR_NOMEM, "out of memory");
        goto out;
    }
    for (long i = 0; i < e->nruns; i++) cb_sweep_refresh(e, &e->runs[i], &states[i]);
    if (o->index_only) {
        rc = cb_sweep_write_index_states(e, states, err);
        for (long i = 0; i < e->nruns; i++) {
            if (i % o->nshards != o->shard) continue;
            stats->selected++;
            const char *status = cb_sweep_row_status(&states[i]);
            if (strcmp(status, "running")) tally(e, stats, status); /* another shard's run in progress is no failure */
        }
        goto out;
    }
    long ntodo = 0;
    for (long i = 0; i < e->nruns; i++) {
        if (i % o->nshards != o->shard) continue;
        stats->selected++;
        const cb_sweep_run *r = &e->runs[i];
        if (o->check) { /* every run with a readable file, whatever its status */
            if (states[i].have) todo[ntodo++] = i;
            else stats->skipped++;
            if (o->dry_run && out)
                fprintf(out, "%6ld  %-5s  %s.h5\n", i, states[i].have ? "check" : "none", r->name);
            continue;
        }
        int done = cb_sweep_run_is_done(e, r, &states[i]);
        const char *action = done ? "skip"
                             : !strcmp(cb_sweep_row_status(&states[i]), "ok") ? "stale" /* scene or overrides changed */
                             : (states[i].file_exists || states[i].has_note) ? "rerun" : "run";
        if (done) {
            stats->skipped++;
            tally(e, stats, cb_sweep_row_status(&states[i])); /* ok, or diverged with expect_diverged */
        } else {
            todo[ntodo++] = i;
        }
        if (o->dry_run && out) {
            char **sets = NULL;
            int nsets = 0;
            fprintf(out, "%6ld  %-5s  %s.h5", i, action, r->name);
            if (cb_sweep_run_sets(e, r, &sets, &nsets, NULL) == CB_OK) {
                fprintf(out, "  %s", e->scenes[r->scene]);
                for (int q = 0; q < nsets; q++) fprintf(out, " --set %s", sets[q]);
                cb_sweep_free_sets(&sets, nsets);
            }
            if (strcmp(action, "run")) fprintf(out, "  (%s)", cb_sweep_row_status(&states[i]));
            fputc('\n', out);
        }
    }
    if (o->dry_run) {
        if (out)
            fprintf(out, "# %ld runs in %s (this shard: %ld; %ld finished, %ld to run) -> %s\n", e->nruns, e->path,
                    stats->selected, stats->skipped, ntodo, e->output);
        goto out;
    }
    if ((rc = cb_mkdir_p(e->output, err))) goto out;
    if ((rc = cb_sweep_sweep_lock(e, o, err))) goto out;
    locked = 1;
    if ((rc = cb_sweep_write_index_states(e, states, err))) goto out;

    int tty = o->progress && isatty(fileno(stderr));
    cb_run_install_signal_handlers();
    long next = 0, finished = 0;
    int active = 0, forwarded = 0;
    double busy_sum = 0;
    if (tty) draw_progress(stats, stats->skipped, 0, NAN);
    for (;;) {
        while (!cb_run_interrupted() && active < o->jobs && next < ntodo) {
            const cb_sweep_run *r = &e->runs[todo[next]];
            char p[4096];
            static const char *const exts[] = {".h5", ".xdmf", ".err"};
            static const char *const check_exts[] = {".check", ".rerun.h5", ".rerun.xdmf"};
            for (int q = 0; q < 3; q++) {
                cb_sweep_run_path(e, r, o->check ? check_exts[q] : exts[q], p, sizeof p);
                remove(p);
            }
            fflush(NULL);
            pid_t pid = fork();
            if (pid < 0) {
                rc = CB_FAIL(err, CB_ERR_INTERNAL, "fork failed: %s", strerror(errno));
                break;
            }
            if (pid == 0) {
                if (o->check) child_check(e, r);
                child_main(e, r, o);
            }
            int s = 0;
            while (pids[s]) s++;
            pids[s] = pid;
            slot_run[s] = todo[next];
            slot_t0[s] = cb_wall_time();
            active++;
            next++;
        }
        if (active == 0) break;
        int wst = 0;
        pid_t p = waitpid(-1, &wst, 0);
        if (p < 0) {
            if (errno != EINTR) {
                rc = CB_FAIL(err, CB_ERR_INTERNAL, "waitpid failed: %s", strerror(errno));
                break;
            }
            if (cb_run_interrupted() && !forwarded) {
                /* a terminal's Ctrl-C reaches the children already; a SIGTERM sent to us alone does not */
                for (int s = 0; s < o->jobs; s++)
                    if (pids[s]) kill(pids[s], SIGTERM);
                forwarded = 1;
            }
            continue;
        }
        int s = 0;
        while (s < o->jobs && pids[s] != p) s++;
        if (s == o->jobs) continue; /* not one of ours */
        pids[s] = 0;
        active--;
        long i = slot_run[s];
        const cb_sweep_run *r = &e->runs[i];
        double took = cb_wall_time() - slot_t0[s];
        busy_sum += took;
        finished++;
        char note[4096];
        cb_sweep_run_path(e, r, o->check ? ".check" : ".err", note, sizeof note);
        if (WIFSIGNALED(wst)) {
            char m[256];
            snprintf(m, sizeof m, "the run process was killed by signal %d (%s)", WTERMSIG(wst),
                     strsignal(WTERMSIG(wst)));
            write_note(note, "error", m);
        } else if (WIFEXITED(wst) && WEXITSTATUS(wst) > 2) {
            char m[256];
            snprintf(m, sizeof m, "the run process exited with status %d", WEXITSTATUS(wst));
            write_note(note, "error", m);
        }
        cb_sweep_refresh(e, r, &states[i]);
        const char *status = o->check ? (WIFEXITED(wst) && WEXITSTATUS(wst) == 0 ? "identical" : "differs")
                                      : cb_sweep_row_status(&states[i]);
        if (o->check && !(WIFEXITED(wst) && WEXITSTATUS(wst) <= 1)) status = "error";
        stats->ran++;
        if (!o->check) tally(e, stats, status);
        else if (!strcmp(status, "identical")) stats->ok++;
        else stats->failed++;
        cb_error ie;
        /* shards share the folder: read every run again under the index lock, so the last
         * index written is never staler than the run files */
        int wrc = o->nshards > 1 ? cb_sweep_write_index_fresh(e, states, &ie) : cb_sweep_write_index_states(e, states, &ie);
        if (wrc && !rc) rc = CB_FAIL(err, ie.status, "%s", ie.message);
        if (tty) clear_progress();
        if (out && !o->quiet) {
            const char *msg = o->check ? (strncmp(states[i].checked, "identical", 9) ? states[i].checked : "")
                                       : cb_sweep_row_message(&states[i]);
            fprintf(out, "  %-11s %s.h5 (%.1f s)%s%s\n", status, r->name, took, msg[0] ? ": " : "", msg);
            fflush(out);
        }
        if (tty) {
            double left = (double)(ntodo - finished);
            double eta = busy_sum / (double)finished * left / (double)(o->jobs < left ? o->jobs : (left > 0 ? left : 1));
            draw_progress(stats, stats->skipped + finished, active, eta);
        }
    }
    if (tty) clear_progress();
    stats->interrupted = cb_run_interrupted();
    if (stats->interrupted) stats->failed += ntodo - next; /* never started */
    /* other shards may have finished runs meanwhile: the final index reads every file again */
    {
        cb_error ie;
        if (cb_sweep_write_index_fresh(e, states, &ie) && !rc) rc = CB_FAIL(err, ie.status, "%s", ie.message);
    }
out:
    if (locked) cb_sweep_sweep_unlock(e, o);
    free(slot_t0);
    free(slot_run);
    free(pids);
    free(todo);
    free(states);
    return rc;
}
