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
 * logged so far and its status says what happened.
 */
#define _DEFAULT_SOURCE /* realpath */
#include "experiments/harness/run.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* The solver's path kinks (cb_solver_class.set_path_hook) are the audited paths' knots. */
static void audit_kink(void *ctx, int vertex, double t, const double x[3], const double v[3])
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

static void set_result(cb_run_result *r, const char *status, const char *msg)
{
    snprintf(r->status, sizeof r->status, "%s", status);
    snprintf(r->message, sizeof r->message, "%s", msg ? msg : "");
}

int cb_run(const cb_run_def *def, cb_run_result *res, cb_error *err)
{
    int status_written = 0;
    cb_run_result local;
    if (!res) res = &local;
    memset(res, 0, sizeof *res);
    set_result(res, "error", "");
    if (!def || !(def->scene_path || def->scene_text) || !def->solver)
        return CB_FAIL(err, CB_ERR_INPUT, "cb_run: a scene and a solver are required");
    const cb_solver_class *cls = cb_solver_find(def->solver);
    if (!cls)
        return CB_FAIL(err, CB_ERR_INPUT, "unknown solver '%s'; available: %s", def->solver, cb_solver_names());

    cb_scene *scene = NULL;
    cb_world *world = NULL;
    cb_reference *ref = NULL;
    void *solver = NULL;
    cb_runlog *log = NULL;
    cb_metrics_cache *mcache = NULL;
    cb_audit *audit = NULL;
    cb_health *health = NULL;
    char *ptext = NULL, *pgiven = NULL;
    cb_params_record *prec = NULL;
    char *scene_dir = NULL;
    cb_yaml *given_params = NULL;
    int rc = def->scene_text
                 ? cb_scene_load_string(def->scene_text, def->scene_path ? def->scene_path : "<run file>",
                                        def->scene_dir, def->sets, def->nsets, &scene, err)
                 : cb_scene_load(def->scene_path, def->sets, def->nsets, &scene, err);
    if (rc) goto done;
    if ((rc = check_solver_blocks(scene, err))) goto done;
    rc = cb_world_create(scene, &world, err);
    if (rc) goto done;
    if (def->reference && (rc = cb_reference_open(def->reference, world->nv, &ref, err))) goto done;
    cb_params params = cb_scene_params(scene, cls->name);
    if (def->solver_parameters) {
        if ((rc = cb_yaml_load_string(def->solver_parameters, "parameters", &given_params, err))) goto done;
        params.block = given_params;
    }
    if ((rc = cb_params_record_create(&prec, err))) goto done;
    params.rec = prec; /* the effective parameters: every key the solver read, with the value used */
    double tc = cb_wall_time();
    rc = cls->create(world, &params, &solver, err);
    res->create_s = cb_wall_time() - tc;
    if (rc) goto done;
    ptext = cb_params_record_text(prec);
    cb_params scene_params = cb_scene_params(scene, cls->name); /* as the scene gave it, also in a rerun */
    pgiven = cb_params_text(&scene_params);
    if (!ptext || !pgiven) {
        rc = CB_FAIL(err, CB_ERR_NOMEM, "cb_run: out of memory for the parameters text");
        goto done;
    }

    long nsteps = cb_scene_steps(scene);
    if (def->max_steps > 0 && def->max_steps < nsteps) nsteps = def->max_steps;
    long per_frame = cb_scene_steps_per_frame(scene);
    int expensive_every = scene->expensive_every;
    char note[256];
    if (expensive_every > 0)
        snprintf(note, sizeof note,
                 "self_intersections and min_separation are computed on every %d-th frame step "
                 "(every %ld-th step) and are NaN on other rows", expensive_every,
                 (long)expensive_every * per_frame);
    else
        snprintf(note, sizeof note, "self_intersections and min_separation are not computed (NaN)");

    res->started = 1;
    if (def->output) {
        rc = cb_mkdir_parent(def->output, err);
        if (rc) goto done;
        scene_dir = realpath(scene->dir, NULL);
        cb_runlog_def ld = {def->output, cls->name, scene->name, scene->text, ptext, pgiven, note,
                            cb_solver_self_collision(cls, solver), cb_solver_model(cls, solver), def->scene_path,
                            scene_dir ? scene_dir : scene->dir, NULL,
                            (const char *const *)scene->files, scene->nfiles};
        rc = cb_runlog_open(&ld, world, &log, err);
        if (rc) goto done;
    }

    if (expensive_every > 0 && (rc = cb_metrics_cache_create(world, &mcache, err))) goto done;
    if (def->audit || scene->audit) {
        if ((rc = cb_audit_create(world, &audit, err))) goto done;
        if (cls->set_path_hook) cls->set_path_hook(solver, audit_kink, audit);
    }
    long self_crossings = 0, collider_crossings = 0; /* since the last row */
    double audit_since_row = 0.0;
    cb_metrics m;
    cb_step_info info;
    cb_step_info_reset(&info);
    /* row and frame 0: the initial state */
    cb_world_apply_pins(world, 0.0);
    cb_health_rule hrule = {scene->health_energy_factor, scene->health_max_strain};
    if ((rc = cb_health_create(world, &hrule, &health, err))) goto done;
    cb_metrics_compute(world, NULL, scene->dt, 0.0, &m);
    m.position_error = cb_reference_error(ref, world->state.t, (const double (*)[3])world->state.x, world->mass,
                                          world->nv);
    m.energy_error = cb_reference_energy_error(ref, world->state.t, m.total_energy);
    m.external_work = 0.0;
    for (int k = 0; k < 3; k++) m.external_impulse[k] = 0.0;
    if (expensive_every > 0) cb_metrics_compute_expensive(world, mcache, &m);
    if (log) {
        rc = cb_runlog_series(log, &m, err);
        if (!rc && def->write_frames) rc = cb_runlog_frame(log, 0.0, (const double (*)[3])world->state.x, err);
        if (rc) goto done;
    }
    res->frames = 1;

    /* per-stage wall-time totals over the run, written to /stages at the end */
    const char **stage_names = res->stage_name;
    double *stage_seconds = res->stage_seconds;
    int nstage = 0;
    const char *final_status = "ok";
    char msg[1024] = "";
    int progress_on = def->progress && isatty(fileno(stderr));
    long step;
    for (step = 0; step < nsteps; step++) {
        if (cb_interrupt_requested()) {
            final_status = "interrupted";
            snprintf(msg, sizeof msg, "interrupted by a signal at step %ld (t = %g s)", step, world->state.t);
            rc = CB_FAIL(err, CB_ERR_INTERRUPTED, "%s", msg);
            break;
        }
        if (audit) cb_audit_begin(audit, world);
        cb_health_begin(health, world);
        rc = cb_solver_step(cls, solver, world, step, scene->dt, &info, err);
        double wall = info.wall_step_s;
        res->wall_s += wall;
        if (step == 0) res->first_step_s = wall;
        /* a non-finite state (cb_solver_step's check) is logged below like one beyond the bound */
        if (rc == CB_ERR_NUMERIC && find_divergence(world, scene->bound) >= 0) rc = CB_OK;
        if (audit && !rc) {
            long sc = 0, cc = 0;
            double a0 = cb_wall_time();
            rc = cb_audit_end(audit, world, &sc, &cc, err);
            double spent = cb_wall_time() - a0;
            res->audit_s += spent;
            audit_since_row += spent;
            self_crossings += sc;
            collider_crossings += cc;
        }
        for (int k = 0; k < info.nstages; k++) {
            int j = 0;
            while (j < nstage && strcmp(stage_names[j], info.stage[k].name)) j++;
            if (j == nstage) {
                if (nstage == (int)(sizeof res->stage_name / sizeof res->stage_name[0])) continue;
                stage_names[nstage] = info.stage[k].name;
                stage_seconds[nstage++] = 0.0;
            }
            stage_seconds[j] += info.stage[k].seconds;
            if (step == 0) res->stage_first_seconds[j] += info.stage[k].seconds;
        }
        res->nstages = nstage;
        if (rc) {
            final_status = rc == CB_ERR_NUMERIC ? "diverged" : rc == CB_ERR_INTERRUPTED ? "interrupted" : "error";
            cb_error_prefix(err, "step %ld (t = %g s): ", step + 1, world->state.t);
            snprintf(msg, sizeof msg, "%.1000s", err ? err->message : "solver failed");
            break;
        }
        res->steps = step + 1;
        int bad = find_divergence(world, scene->bound);
        int breaches = cb_health_end(health, world, &info, scene->dt, step + 1);
        int frame_step = ((step + 1) % per_frame == 0) || step + 1 == nsteps;
        if (bad >= 0 || breaches || frame_step || (step + 1) % scene->log_every == 0) {
            cb_metrics_compute(world, &info, scene->dt, wall, &m);
            m.external_work = cb_health_external_work(health);
            m.position_error = cb_reference_error(ref, world->state.t, (const double (*)[3])world->state.x,
                                                  world->mass, world->nv);
            m.energy_error = cb_reference_energy_error(ref, world->state.t, m.total_energy);
            if (audit) {
                m.self_crossings_in_step = (double)self_crossings;
                m.collider_crossings_in_step = (double)collider_crossings;
                m.crossings_in_step = (double)(self_crossings + collider_crossings);
                m.wall_audit_s = audit_since_row;
                self_crossings = collider_crossings = 0;
                audit_since_row = 0.0;
            }
            long frame_index = (step + 1) / per_frame;
            if (frame_step && expensive_every > 0 && frame_index % expensive_every == 0)
                cb_metrics_compute_expensive(world, mcache, &m);
            if (log && (rc = cb_runlog_series(log, &m, err))) break;
        }
        if (bad >= 0) {
            final_status = "diverged";
            snprintf(msg, sizeof msg,
                     "diverged at step %ld (t = %g s): vertex %d has position (%g, %g, %g), velocity (%g, %g, %g)%s",
                     step + 1, world->state.t, bad, world->state.x[bad][0], world->state.x[bad][1],
                     world->state.x[bad][2], world->state.v[bad][0], world->state.v[bad][1],
                     world->state.v[bad][2], isfinite(world->state.x[bad][0]) ? " beyond the scene bound" : "");
            rc = CB_FAIL(err, CB_ERR_NUMERIC, "%s", msg);
            if (log) cb_runlog_frame(log, world->state.t, (const double (*)[3])world->state.x, NULL);
            break;
        }
        if (breaches) { /* the health check (experiments/harness/health.h): the run is no longer the cloth's */
            final_status = "diverged";
            int n = cb_health_breach_count(health), len = snprintf(msg, sizeof msg, "health check:");
            for (int k = n - breaches; k < n && len < (int)sizeof msg; k++) {
                char b[256];
                cb_health_breach_text(cb_health_breach_at(health, k), b, sizeof b);
                len += snprintf(msg + len, sizeof msg - (size_t)len, "%s %s", k > n - breaches ? ";" : "", b);
            }
            rc = CB_FAIL(err, CB_ERR_NUMERIC, "%s", msg);
            if (log) cb_runlog_frame(log, world->state.t, (const double (*)[3])world->state.x, NULL);
            break;
        }
        if (frame_step) {
            if (log && def->write_frames &&
                (rc = cb_runlog_frame(log, world->state.t, (const double (*)[3])world->state.x, err)))
                break;
            if (log && !def->write_frames && (rc = cb_runlog_flush(log, err))) break;
            res->frames++;
        }
        if (progress_on && (step % 16 == 0 || step + 1 == nsteps)) progress(step + 1, nsteps, res->wall_s, 0);
    }
    if (progress_on) progress(res->steps, nsteps, res->wall_s, 1);
    if (rc && !strcmp(final_status, "ok")) {
        final_status = "error";
        snprintf(msg, sizeof msg, "%.1000s", err ? err->message : "error");
    }
    res->breaches = cb_health_breach_count(health);
    res->mean_step_ms = res->steps > 0 ? 1e3 * res->wall_s / (double)res->steps : 0.0;
    set_result(res, final_status, msg);
    if (log) {
        cb_error e2;
        if (cb_runlog_stages(log, nstage, stage_names, stage_seconds, &e2) && !rc)
            rc = CB_FAIL(err, e2.status, "%s", e2.message);
        char hb[2048] = "";
        for (int k = 0, len = 0; k < cb_health_breach_count(health) && len < (int)sizeof hb; k++) {
            char b[256];
            cb_health_breach_text(cb_health_breach_at(health, k), b, sizeof b);
            len += snprintf(hb + len, sizeof hb - (size_t)len, "%s%s", k ? "\n" : "", b);
        }
        if (cb_runlog_health(log, cb_health_rule_text(health), cb_health_energy_ref(health), hb, &e2) && !rc)
            rc = CB_FAIL(err, e2.status, "%s", e2.message);
        if (cb_runlog_status(log, final_status, msg, &e2) && !rc) rc = CB_FAIL(err, e2.status, "%s", e2.message);
        status_written = 1;
    }

done:
    if (log && rc && !status_written) {
        /* failed after the file was opened and before the loop ended normally (out of
         * memory building the first metrics, say): the file says so, not "running" */
        cb_error e2;
        cb_runlog_status(log, rc == CB_ERR_INTERRUPTED ? "interrupted" : rc == CB_ERR_NUMERIC ? "diverged" : "error",
                         err ? err->message : "the run failed", &e2);
    }
    if (log) {
        cb_error e2;
        int rc2 = cb_runlog_close(&log, &e2);
        if (rc2 && !rc) rc = CB_FAIL(err, rc2, "%s", e2.message);
    }
    if (solver) cls->destroy(solver);
    cb_metrics_cache_free(&mcache);
    cb_reference_free(&ref);
    cb_audit_free(&audit);
    cb_health_free(&health);
    free(ptext);
    free(scene_dir);
    cb_yaml_free(&given_params);
    free(pgiven);
    cb_params_record_free(&prec);
    cb_world_free(&world);
    cb_scene_free(&scene);
    return rc;
}
