/* experiments/harness/run.c — the run loop (run.h): scene -> world -> solver steps -> metrics ->
 * run file. The only place that writes run files; solvers never do.
 *
 * Order per step: cb_solver_step (core/solver.h: arguments checked, timed, state.t
 * set to the exact (n+1) dt, non-finite state caught), the divergence check
 * (NaN/Inf or |x| beyond the scene's bound: the row and frame are logged), the health check
 * (experiments/harness/health.h: energy beyond its start plus the work of moving pins and colliders,
 * strain beyond a bound; a breach ends the run "diverged"), metrics row every
 * log_every steps and on frame steps, the expensive metrics on every
 * expensive_every-th frame, a frame every steps_per_frame steps (the file is
 * flushed then). On divergence, error or signal the run file keeps everything
 * logged so far and its status says what happened. A time limit (run.h,
 * cb_run_def.time_limit) ends the run like a signal: status "interrupted", the message
 * naming the limit.
 */
#define _DEFAULT_SOURCE /* realpath */
#include "experiments/harness/run.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "contact/colliders.h"
#include "experiments/harness/audit.h"
#include "experiments/harness/health.h"
#include "experiments/harness/metrics.h"
#include "experiments/harness/reference.h"
#include "experiments/harness/registry.h"
#include "experiments/harness/runlog.h"
#include "core/scene.h"
#include "core/files.h"
#include "core/solver.h"
#include "core/vec3.h"
#include "core/world.h"


static void on_signal(int sig)
{
    (void)sig;
    cb_interrupt_request();
}

void cb_run_install_signal_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int cb_run_interrupted(void) { return cb_interrupt_requested(); }

/* The time limit (cb_run_def.time_limit): SIGALRM raises the interrupt flag every long
 * loop polls, and this flag says why, so the run's message names the limit. */
static volatile sig_atomic_t g_timed_out;

static void on_alarm(int sig)
{
    (void)sig;
    g_timed_out = 1;
    cb_interrupt_request();
}

/* Arms the one-shot timer of `seconds` (> 0) and SIGALRM's handler; *old keeps the
 * handler it replaced. */
static void arm_time_limit(double seconds, struct sigaction *old)
{
    g_timed_out = 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, old);
    struct itimerval it;
    memset(&it, 0, sizeof it);
    double whole = floor(seconds);
    it.it_value.tv_sec = (time_t)whole;
    it.it_value.tv_usec = (suseconds_t)((seconds - whole) * 1e6);
    if (it.it_value.tv_sec == 0 && it.it_value.tv_usec == 0) it.it_value.tv_usec = 1;
    setitimer(ITIMER_REAL, &it, NULL);
}

/* The timer off, the old handler back; the interrupt flag the limit raised is lowered,
 * so a later run of the same process is not ended by it. */
static void disarm_time_limit(const struct sigaction *old)
{
    struct itimerval it;
    memset(&it, 0, sizeof it);
    setitimer(ITIMER_REAL, &it, NULL);
    sigaction(SIGALRM, old, NULL);
    if (g_timed_out) cb_interrupt_clear();
    g_timed_out = 0;
}

cb_run_def cb_default_run_def(void)
{
    cb_run_def d;
    memset(&d, 0, sizeof d);
    d.write_frames = 1;
    return d;
}

/* Index of the first vertex with a non-finite or out-of-bound position/velocity, -1 if none. */
static int find_divergence(const cb_world *w, double bound)
{
    for (int i = 0; i < w->nv; i++) {
        const double *x = w->state.x[i], *v = w->state.v[i];
        if (!cb_v3_isfinite(x) || !cb_v3_isfinite(v)) return i;
        if (fabs(x[0]) > bound || fabs(x[1]) > bound || fabs(x[2]) > bound) return i;
    }
    return -1;
}

static void progress(long step, long nsteps, double wall, int done)
{
    int width = 30;
    double frac = nsteps > 0 ? (double)step / (double)nsteps : 1.0;
    int fill = (int)(frac * width + 0.5);
    double eta = step > 0 ? wall / (double)step * (double)(nsteps - step) : 0.0;
    fprintf(stderr, "\r  [");
    for (int i = 0; i < width; i++) fputc(i < fill ? '#' : ' ', stderr);
    fprintf(stderr, "] %3.0f%%  step %ld/%ld  %.2f ms/step  ETA %.0fs   ", 100 * frac, step, nsteps,
            step > 0 ? 1e3 * wall / (double)step : 0.0, eta);
    if (done) fputc('\n', stderr);
    fflush(stderr);
}

/* The solver's path knots (cb_solver_class.set_path_knots) are the audited paths'. */
static void audit_path_knot(void *ctx, int vertex, double t, const double x[3], const double v[3])
{
    (void)v;
    cb_audit_knot(ctx, vertex, t, x);
}

/* Every `solvers.<name>` block names a registered solver: a misspelt block
 * (`solvers.pdb`) would otherwise be ignored and the run use the defaults. */
static int check_solver_blocks(const cb_scene *scene, cb_error *err)
{
    const cb_yaml *solvers = cb_yaml_get(scene->root, "solvers");
    if (!solvers || solvers->kind != CB_YAML_MAP) return 0;
    for (int i = 0; i < solvers->n; i++) {
        if (cb_solver_find(solvers->keys[i])) continue;
        char where[600];
        return CB_FAIL(err, CB_ERR_INPUT, "%s: solvers.%s: no solver is called '%s'; registered: %s",
                       cb_yaml_where(solvers->items[i], scene->path, where, sizeof where), solvers->keys[i],
                       solvers->keys[i], cb_solver_names());
    }
    return 0;
}

/* MemAvailable of /proc/meminfo in bytes; INFINITY when it cannot be read. */
static double mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) return INFINITY;
    char line[256];
    double kb = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lf kB", &kb) == 1) break;
    fclose(f);
    return kb >= 0 ? 1024.0 * kb : INFINITY;
}

/* The vertices of a generated cloth (grid, tet box) before it is made; 0 for one read
 * from a file (counted once read: the readers bound what they allocate by the file). */
static double scene_vertices(const cb_scene *s)
{
    const cb_cloth_def *c = &s->cloth;
    if (c->use_tets == 1) return (c->tet_box.n[0] + 1.0) * (c->tet_box.n[1] + 1.0) * (c->tet_box.n[2] + 1.0);
    if (c->use_tets == 0 && c->use_grid) return (double)c->grid.nx * (double)c->grid.ny;
    return 0.0;
}

/* Memory: a run needs at least a fixed part and the method's bytes per vertex (registry.h);
 * more than --max-memory, or MemAvailable, is refused as bad input before the cloth is
 * allocated: a grid of a million by twenty vertices grew until the kernel killed it,
 * leaving a file that said "running" (issue 29). The estimate is a lower bound, so a run
 * it lets through may still fail (out of memory: exit 1, status error). */
enum { BASE_MEMORY = 32 << 20 };

static int check_memory(const cb_run_def *def, const cb_solver_class *cls, double nv, const char *what,
                        cb_error *err)
{
    double per = cb_solver_memory_per_vertex(cls), need = BASE_MEMORY + nv * per;
    double have = def->max_memory > 0 ? def->max_memory : mem_available();
    if (need <= have) return 0;
    return CB_FAIL(err, CB_ERR_INPUT, "%s: %.0f vertices need about %.0f MB with %s (at least %.0f bytes per vertex), "
                   "more than the %.0f MB %s", what, nv, need / 1048576.0, cls->name, per, have / 1048576.0,
                   def->max_memory > 0 ? "of --max-memory" : "available (MemAvailable, /proc/meminfo; "
                   "--max-memory sets another limit)");
}

static void set_result(cb_run_result *r, const char *status, const char *msg)
{
    snprintf(r->status, sizeof r->status, "%s", status);
    snprintf(r->message, sizeof r->message, "%s", msg ? msg : "");
}

/* The state of one run between run_open and run_finish: what it owns (freed by
 * run_finish), the loop's counters since the last row, and how it ends. */
typedef struct run_state {
    const cb_run_def *def;
    cb_run_result *res;
    const cb_solver_class *cls;
    cb_scene *scene;
    cb_world *world;
    cb_reference *ref;
    void *solver;
    cb_runlog *log;
    cb_metrics_cache *mcache;
    cb_audit *audit;
    cb_health *health;
    cb_params_record *prec;  /* the effective parameters: every key the solver read, with the value used */
    char *ptext, *pgiven;    /* the parameters' text: effective, and the block as the scene gave it */
    char *scene_dir;
    cb_yaml *given_params;
    long nsteps, per_frame;
    long self_crossings, collider_crossings; /* the audit's, since the last row */
    long edge_crossings, face_crossings;     /* the audit's beyond the vertices, since the last row */
    double audit_since_row;
    cb_step_info info;
    double contact_energy0;  /* the method's contact potential at t = 0 (NaN: none) */
    const char *final_status;
    char msg[1024];
    int status_written;
    int progress_on;         /* the progress bar on stderr (a terminal) */
    int ended;               /* def->frame_hook ended the run (status ok, before its last step's row) */
} run_state;

/* The row's metrics after `info`'s step (NULL: row 0, the initial state, with the method's
 * contact potential there, r->contact_energy0, when it has one): the state's metrics, the work of moving pins and colliders, the errors against the reference, the
 * audit's counts since the last row, and the expensive metrics when `expensive`. */
static void row_metrics(run_state *r, const cb_step_info *info, double wall, int expensive, cb_metrics *m)
{
    cb_world *w = r->world;
    cb_metrics_compute(w, info, r->scene->dt, wall, m);
    m->external_work = info ? cb_health_external_work(r->health) : 0.0;
    if (!info) {
        for (int k = 0; k < 3; k++) m->external_impulse[k] = 0.0;
        if (isfinite(r->contact_energy0)) {
            m->contact_energy = r->contact_energy0;
            m->total_energy += r->contact_energy0;
        }
    }
    m->position_error = cb_reference_error(r->ref, w->state.t, (const double (*)[3])w->state.x, w->mass, w->nv);
    m->energy_error = cb_reference_energy_error(r->ref, w->state.t, m->total_energy);
    if (info && r->audit) {
        m->self_crossings_in_step = (double)r->self_crossings;
        m->collider_crossings_in_step = (double)r->collider_crossings;
        m->collider_edge_crossings_in_step = (double)r->edge_crossings;
        m->collider_face_crossings_in_step = (double)r->face_crossings;
        m->crossings_in_step = (double)(r->self_crossings + r->collider_crossings + r->edge_crossings + r->face_crossings);
        m->wall_audit_s = r->audit_since_row;
        r->self_crossings = r->collider_crossings = r->edge_crossings = r->face_crossings = 0;
        r->audit_since_row = 0.0;
    }
    if (expensive) cb_metrics_compute_expensive(w, r->mcache, m);
}

/* The text of the health breaches from the `from`-th on, joined by `sep`, after `prefix`. */
static void breaches_text(const cb_health *h, int from, const char *prefix, const char *sep, char *buf,
                          size_t size)
{
    int len = snprintf(buf, size, "%s", prefix);
    for (int k = from; k < cb_health_breach_count(h) && len < (int)size; k++) {
        char b[256];
        cb_health_breach_text(cb_health_breach_at(h, k), b, sizeof b);
        len += snprintf(buf + len, size - (size_t)len, "%s%s", k > from ? sep : "", b);
    }
}

/* Everything before the first step: the scene (with its overrides), the world, the
 * reference, the solver and its parameters' text, the run file, the metrics cache, the
 * audit, the health check, and row and frame 0. */
static int run_open(run_state *r, cb_error *err)
{
    const cb_run_def *def = r->def;
    const cb_solver_class *cls = r->cls;
    int rc = def->scene_text
                 ? cb_scene_load_string(def->scene_text, def->scene_path ? def->scene_path : "<run file>",
                                        def->scene_dir, def->sets, def->nsets, &r->scene, err)
                 : cb_scene_load(def->scene_path, def->sets, def->nsets, &r->scene, err);
    if (rc) return rc;
    cb_scene *scene = r->scene;
    if ((rc = check_solver_blocks(scene, err))) return rc;
    if ((rc = check_memory(def, cls, scene_vertices(scene), scene->path, err))) return rc;
    if ((rc = cb_world_create(scene, &r->world, err))) return rc;
    cb_world *world = r->world;
    if ((rc = check_memory(def, cls, world->nv, scene->path, err))) return rc;
    if (def->reference && (rc = cb_reference_open(def->reference, world->nv, &r->ref, err))) return rc;
    cb_params params = cb_scene_params(scene, cls->name);
    if (def->solver_parameters) {
        if ((rc = cb_yaml_load_string(def->solver_parameters, "parameters", &r->given_params, err))) return rc;
        params.block = r->given_params;
    }
    if ((rc = cb_params_record_create(&r->prec, err))) return rc;
    params.rec = r->prec;
    double tc = cb_wall_time();
    rc = cls->create(world, &params, &r->solver, err);
    r->res->create_s = cb_wall_time() - tc;
    if (rc) return rc;
    r->ptext = cb_params_record_text(r->prec);
    cb_params scene_params = cb_scene_params(scene, cls->name); /* as the scene gave it, also in a rerun */
    r->pgiven = cb_params_text(&scene_params);
    if (!r->ptext || !r->pgiven) return CB_FAIL(err, CB_ERR_NOMEM, "cb_run: out of memory for the parameters text");

    r->nsteps = cb_scene_steps(scene);
    if (def->max_steps > 0 && def->max_steps < r->nsteps) r->nsteps = def->max_steps;
    r->per_frame = cb_scene_steps_per_frame(scene);
    int expensive_every = scene->expensive_every;
    char note[256];
    if (expensive_every > 0)
        snprintf(note, sizeof note,
                 "self_intersections and min_separation are computed on every %d-th frame step "
                 "(every %ld-th step) and are NaN on other rows (min_separation there: the method's "
                 "own value where it measures one, ipc)", expensive_every,
                 (long)expensive_every * r->per_frame);
    else
        snprintf(note, sizeof note, "self_intersections and min_separation are not computed (NaN; "
                 "min_separation: the method's own value where it measures one, ipc)");

    r->res->started = 1;
    char refnote[1400];
    if (r->ref)
        snprintf(refnote, sizeof refnote, "%.1024s: its frames from 0 to %.6g s (its window: position_error and "
                 "energy_error are NaN after it)", def->reference, cb_reference_window(r->ref));
    if (def->output) {
        if ((rc = cb_mkdir_parent(def->output, err))) return rc;
        r->scene_dir = realpath(scene->dir, NULL);
        cb_runlog_def ld = {
            .path = def->output,
            .solver = cls->name,
            .scene_name = scene->name,
            .scene_text = scene->text,
            .parameters = r->ptext,
            .parameters_given = r->pgiven,
            .expensive_note = note,
            .self_collision = cb_solver_self_collision(cls, r->solver),
            .model = cb_solver_model(cls, r->solver),
            .scene_path = def->scene_path,
            .scene_dir = r->scene_dir ? r->scene_dir : scene->dir,
            .command_line = NULL,
            .files = (const char *const *)scene->files,
            .nfiles = scene->nfiles,
            .reference = r->ref ? refnote : NULL,
        };
        if ((rc = cb_runlog_open(&ld, world, &r->log, err))) return rc;
    }

    if (expensive_every > 0 && (rc = cb_metrics_cache_create(world, &r->mcache, err))) return rc;
    if (def->audit || scene->audit) {
        if ((rc = cb_audit_create(world, &r->audit, err))) return rc;
        if (cls->set_path_knots) cls->set_path_knots(r->solver, audit_path_knot, r->audit);
    }
    cb_step_info_reset(&r->info);
    /* row and frame 0: the initial state */
    cb_world_apply_pins(world, 0.0);
    cb_health_rule hrule = {.energy_factor = scene->health_energy_factor, .max_strain = scene->health_max_strain};
    /* the method's contact potential at the initial state (NaN: none), in row 0 and E0 */
    r->contact_energy0 = cb_solver_initial_contact_energy(cls, r->solver, world, scene->dt);
    if ((rc = cb_health_create(world, &hrule, r->contact_energy0, &r->health, err))) return rc;
    cb_metrics m;
    row_metrics(r, NULL, 0.0, expensive_every > 0, &m);
    if (r->log) {
        rc = cb_runlog_series(r->log, &m, err);
        if (!rc && def->write_frames) rc = cb_runlog_frame(r->log, 0.0, (const double (*)[3])world->state.x, err);
        if (rc) return rc;
    }
    r->res->frames = 1;
    return CB_OK;
}

/* Add the step's stage times to the run's totals (res->stage_*, /stages at the end). */
static void add_stages(cb_run_result *res, const cb_step_info *info, long step)
{
    for (int k = 0; k < info->nstages; k++) {
        int j = 0;
        while (j < res->nstages && strcmp(res->stage_name[j], info->stage[k].name)) j++;
        if (j == res->nstages) {
            if (res->nstages == (int)(sizeof res->stage_name / sizeof res->stage_name[0])) continue;
            res->stage_name[res->nstages] = info->stage[k].name;
            res->stage_seconds[res->nstages++] = 0.0;
        }
        res->stage_seconds[j] += info->stage[k].seconds;
        if (step == 0) res->stage_first_seconds[j] += info->stage[k].seconds;
    }
}

/* Step `step` (0-based) and what follows it: the audit, the divergence and health
 * checks, the row, the frame. 0: go on; otherwise the run ends (r->final_status and
 * r->msg say how when it is not "ok"). */
static int run_step(run_state *r, long step, cb_error *err)
{
    const cb_run_def *def = r->def;
    cb_run_result *res = r->res;
    cb_scene *scene = r->scene;
    cb_world *world = r->world;
    cb_step_info *info = &r->info;
    if (cb_interrupt_requested()) {
        r->final_status = "interrupted";
        if (g_timed_out)
            snprintf(r->msg, sizeof r->msg, "time limit of %g s reached at step %ld (t = %g s)", def->time_limit,
                     step, world->state.t);
        else
            snprintf(r->msg, sizeof r->msg, "interrupted by a signal at step %ld (t = %g s)", step, world->state.t);
        return CB_FAIL(err, CB_ERR_INTERRUPTED, "%s", r->msg);
    }
    /* the bar at once, not after a first step that may take minutes; drawn after the
     * flag's last look outside the step, so a signal after it lands inside the step
     * (tests/test_reliability.c waits for it) */
    if (r->progress_on && step == 0) progress(0, r->nsteps, 0.0, 0);
    if (r->audit) cb_audit_begin(r->audit, world);
    int rc = cb_solver_step(r->cls, r->solver, world, step, scene->dt, info, err);
    double wall = info->wall_step_s;
    res->wall_s += wall;
    if (step == 0) res->first_step_s = wall;
    /* a non-finite state (cb_solver_step's check) is logged below like one beyond the bound */
    if (rc == CB_ERR_NUMERIC && find_divergence(world, scene->bound) >= 0) rc = CB_OK;
    if (r->audit && !rc) {
        long sc = 0, cc = 0;
        double a0 = cb_wall_time();
        rc = cb_audit_end(r->audit, world, &sc, &cc, err);
        double spent = cb_wall_time() - a0;
        res->audit_s += spent;
        r->audit_since_row += spent;
        r->self_crossings += sc;
        r->collider_crossings += cc;
        long ec = 0, fc = 0;
        cb_audit_collider_primitives(r->audit, &ec, &fc);
        r->edge_crossings += ec;
        r->face_crossings += fc;
    }
    add_stages(res, info, step);
    if (rc) {
        r->final_status = rc == CB_ERR_NUMERIC ? "diverged" : rc == CB_ERR_INTERRUPTED ? "interrupted" : "error";
        cb_error_prefix(err, "step %ld (t = %g s): ", step + 1, world->state.t);
        if (rc == CB_ERR_INTERRUPTED && g_timed_out) cb_error_prefix(err, "time limit of %g s reached: ", def->time_limit);
        snprintf(r->msg, sizeof r->msg, "%.1000s", err ? err->message : "solver failed");
        return rc;
    }
    res->steps = step + 1;
    int bad = find_divergence(world, scene->bound);
    int breaches = cb_health_end(r->health, world, info, scene->dt, step + 1);
    int frame_step = ((step + 1) % r->per_frame == 0) || step + 1 == r->nsteps;
    if (frame_step && bad < 0 && !breaches && def->frame_hook) {
        int h = def->frame_hook(def->frame_ctx, world, step + 1, r->msg, sizeof r->msg, err);
        if (h < 0) { /* the hook's own failure is the run's error; a signal inside it, an interruption */
            r->final_status = h == CB_ERR_INTERRUPTED ? "interrupted" : "error";
            snprintf(r->msg, sizeof r->msg, "%.1000s", err ? err->message : "the frame hook failed");
            return h;
        }
        if (h > 0) { /* this step is not the file's: it ends at the frame before */
            res->steps = step;
            r->ended = 1;
            return CB_OK;
        }
    }
    if (bad >= 0 || breaches || frame_step || (step + 1) % scene->log_every == 0) {
        long frame_index = (step + 1) / r->per_frame;
        int expensive = frame_step && scene->expensive_every > 0 && frame_index % scene->expensive_every == 0;
        cb_metrics m;
        row_metrics(r, info, wall, expensive, &m);
        if (r->log && (rc = cb_runlog_series(r->log, &m, err))) return rc;
    }
    if (bad >= 0) {
        r->final_status = "diverged";
        snprintf(r->msg, sizeof r->msg,
                 "diverged at step %ld (t = %g s): vertex %d has position (%g, %g, %g), velocity (%g, %g, %g)%s",
                 step + 1, world->state.t, bad, world->state.x[bad][0], world->state.x[bad][1],
                 world->state.x[bad][2], world->state.v[bad][0], world->state.v[bad][1],
                 world->state.v[bad][2], isfinite(world->state.x[bad][0]) ? " beyond the scene bound" : "");
        rc = CB_FAIL(err, CB_ERR_NUMERIC, "%s", r->msg);
        if (r->log) cb_runlog_frame(r->log, world->state.t, (const double (*)[3])world->state.x, NULL);
        return rc;
    }
    if (breaches) { /* the health check (experiments/harness/health.h): the run is no longer the cloth's */
        r->final_status = "diverged";
        breaches_text(r->health, cb_health_breach_count(r->health) - breaches, "health check: ", "; ", r->msg,
                      sizeof r->msg);
        rc = CB_FAIL(err, CB_ERR_NUMERIC, "%s", r->msg);
        if (r->log) cb_runlog_frame(r->log, world->state.t, (const double (*)[3])world->state.x, NULL);
        return rc;
    }
    if (frame_step) {
        if (r->log && def->write_frames &&
            (rc = cb_runlog_frame(r->log, world->state.t, (const double (*)[3])world->state.x, err)))
            return rc;
        if (r->log && !def->write_frames && (rc = cb_runlog_flush(r->log, err))) return rc;
        res->frames++;
    }
    return CB_OK;
}

/* After the last step (rc: how the loop ended): the result, the run file's stages,
 * health and status; then everything the run owns is freed. Also after a failed
 * run_open (opened 0): a file already created says the run failed, not "running". */
static int run_finish(run_state *r, int opened, int rc, cb_error *err)
{
    cb_run_result *res = r->res;
    if (opened) {
        if (rc && !strcmp(r->final_status, "ok")) {
            r->final_status = "error";
            snprintf(r->msg, sizeof r->msg, "%.1000s", err ? err->message : "error");
        }
        res->breaches = cb_health_breach_count(r->health);
        res->mean_step_ms = res->steps > 0 ? 1e3 * res->wall_s / (double)res->steps : 0.0;
        set_result(res, r->final_status, r->msg);
    }
    if (r->log && opened) {
        cb_error e2;
        if (cb_runlog_stages(r->log, res->nstages, res->stage_name, res->stage_seconds, &e2) && !rc)
            rc = CB_FAIL(err, e2.status, "%s", e2.message);
        char hb[2048];
        breaches_text(r->health, 0, "", "\n", hb, sizeof hb);
        if (cb_runlog_health(r->log, cb_health_rule_text(r->health), cb_health_energy_ref(r->health), hb, &e2) && !rc)
            rc = CB_FAIL(err, e2.status, "%s", e2.message);
        if (cb_runlog_status(r->log, r->final_status, r->msg, &e2) && !rc)
            rc = CB_FAIL(err, e2.status, "%s", e2.message);
        r->status_written = 1;
    }
    if (r->log && rc && !r->status_written) {
        /* failed after the file was opened and before the loop ended normally (out of
         * memory building the first metrics, say): the file says so, not "running" */
        cb_error e2;
        cb_runlog_status(r->log, rc == CB_ERR_INTERRUPTED ? "interrupted" : rc == CB_ERR_NUMERIC ? "diverged" : "error",
                         err ? err->message : "the run failed", &e2);
    }
    if (r->log) {
        cb_error e2;
        int rc2 = cb_runlog_close(&r->log, &e2);
        if (rc2 && !rc) rc = CB_FAIL(err, rc2, "%s", e2.message);
    }
    if (r->solver) r->cls->destroy(r->solver);
    cb_metrics_cache_free(&r->mcache);
    cb_reference_free(&r->ref);
    cb_audit_free(&r->audit);
    cb_health_free(&r->health);
    free(r->ptext);
    free(r->scene_dir);
    cb_yaml_free(&r->given_params);
    free(r->pgiven);
    cb_params_record_free(&r->prec);
    cb_world_free(&r->world);
    cb_scene_free(&r->scene);
    return rc;
}

int cb_run(const cb_run_def *def, cb_run_result *res, cb_error *err)
{
    cb_run_result local;
    if (!res) res = &local;
    memset(res, 0, sizeof *res);
    set_result(res, "error", "");
    if (!def || !(def->scene_path || def->scene_text) || !def->solver)
        return CB_FAIL(err, CB_ERR_INPUT, "cb_run: a scene and a solver are required");
    const cb_solver_class *cls = cb_solver_find(def->solver);
    if (!cls)
        return CB_FAIL(err, CB_ERR_INPUT, "unknown solver '%s'; available: %s", def->solver, cb_solver_names());
    if (!(def->time_limit >= 0) || !isfinite(def->time_limit))
        return CB_FAIL(err, CB_ERR_INPUT, "cb_run: time_limit: expected seconds >= 0 (0: none), got %g",
                       def->time_limit);
    run_state r = {.def = def, .res = res, .cls = cls, .final_status = "ok",
                   .progress_on = def->progress && isatty(fileno(stderr))};
    struct sigaction old_alarm;
    if (def->time_limit > 0) arm_time_limit(def->time_limit, &old_alarm);
    int rc = run_open(&r, err), opened = rc == CB_OK;
    for (long step = 0; opened && step < r.nsteps && !rc && !r.ended; step++) {
        rc = run_step(&r, step, err);
        if (!rc && r.progress_on && (step % 16 == 0 || step + 1 == r.nsteps))
            progress(step + 1, r.nsteps, res->wall_s, 0);
    }
    if (opened && r.progress_on) progress(res->steps, r.nsteps, res->wall_s, 1);
    rc = run_finish(&r, opened, rc, err);
    if (def->time_limit > 0) disarm_time_limit(&old_alarm);
    return rc;
}
