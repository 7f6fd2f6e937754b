/* tests/cb_sim.h — a scene, its world and one solver, stepped by hand: what the
 * solver suites share (the run loop without a run file, so a test can look at the
 * world between steps). Header-only, like cb_test.h.
 *
 *   cb_sim s;
 *   if (cb_sim_open(&s, "pbd", "data/scenes/hanging.yaml", NULL, NULL, sets, nsets)) ...
 *   for (...) cb_sim_step(&s);       // through cb_solver_step, as in the run loop
 *   cb_sim_close(&s);
 *
 * Scenes come from a file (path) or from text (text, with dir the folder relative
 * paths in it are resolved against). Failures print the message to stderr and keep
 * it in s->e.
 */
#ifndef CB_SIM_H
#define CB_SIM_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/scene.h"
#include "contact/colliders.h"
#include "core/solver.h"
#include "core/world.h"
#include "experiments/harness/registry.h"

typedef struct cb_sim {
    cb_scene *scene;
    cb_world *w;
    const cb_solver_class *cls;
    void *solver;
    cb_step_info info;
    cb_error e;
} cb_sim;

/* The scene and its world, no solver yet (cb_sim_solver creates it). */
static inline int cb_sim_world(cb_sim *s, const char *path, const char *text, const char *dir,
                               const char *const *sets, int nsets)
{
    memset(s, 0, sizeof *s);
    int rc = text ? cb_scene_load_string(text, "test.yaml", dir ? dir : ".", sets, nsets, &s->scene, &s->e)
                  : cb_scene_load(path, sets, nsets, &s->scene, &s->e);
    if (!rc) rc = cb_world_create(s->scene, &s->w, &s->e);
    if (rc) fprintf(stderr, "  %s\n", s->e.message);
    return rc;
}

static inline int cb_sim_solver(cb_sim *s, const char *solver)
{
    s->cls = cb_solver_find(solver);
    if (!s->cls) {
        fprintf(stderr, "  solver %s is not registered\n", solver);
        return -1;
    }
    cb_params p = cb_scene_params(s->scene, solver);
    int rc = s->cls->create(s->w, &p, &s->solver, &s->e);
    if (rc) fprintf(stderr, "  %s\n", s->e.message);
    return rc;
}

static inline int cb_sim_open(cb_sim *s, const char *solver, const char *path, const char *text, const char *dir,
                              const char *const *sets, int nsets)
{
    int rc = cb_sim_world(s, path, text, dir, sets, nsets);
    return rc ? rc : cb_sim_solver(s, solver);
}

/* One step of dt through the run loop's entry point (cb_solver_step): the time
 * becomes (n + 1) dt with n = t / dt rounded, so n dt exactly after n steps of one dt. */
static inline int cb_sim_step_dt(cb_sim *s, double dt)
{
    long n = dt > 0 ? lround(s->w->state.t / dt) : 0;
    int rc = cb_solver_step(s->cls, s->solver, s->w, n, dt, &s->info, &s->e);
    if (rc) fprintf(stderr, "  %s\n", s->e.message);
    return rc;
}

static inline int cb_sim_step(cb_sim *s) { return cb_sim_step_dt(s, s->scene->dt); }

static inline void cb_sim_close(cb_sim *s)
{
    if (s->solver && s->cls) s->cls->destroy(s->solver);
    s->solver = NULL;
    cb_world_free(&s->w);
    cb_scene_free(&s->scene);
}

/* A flat nx x ny grid world (size sx x sy at the origin, bend 1e-3), no solver: for the
 * tests of the pieces solvers share (springs, contact). Free the scene and the world. */
static inline cb_world *cb_sim_grid_world(int nx, int ny, double sx, double sy, cb_scene **sc)
{
    char text[512];
    snprintf(text, sizeof text,
             "name: grid\nduration: 1\ndt: 0.01\n"
             "cloth:\n  grid: {nx: %d, ny: %d, size: [%g, %g], origin: [0, 0, 0]}\n  bend: 1.0e-3\n",
             nx, ny, sx, sy);
    cb_error e;
    cb_world *w = NULL;
    if (cb_scene_load_string(text, "grid.yaml", ".", NULL, 0, sc, &e) || cb_world_create(*sc, &w, &e))
        fprintf(stderr, "  %s\n", e.message);
    return w;
}

#endif
