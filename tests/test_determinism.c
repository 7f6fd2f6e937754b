/* tests/test_determinism.c — every registered solver is deterministic, and its results
 * are pinned by a reviewed table (as Box2D does): a small cloth (16 x 16 vertices) falls
 * onto a sphere for 50 steps, so the integrator, the collider contact and the self
 * contact code all run; the hash of the final positions and velocities (FNV-1a 64 over
 * their bytes) must be the same in two runs, with 1 and 2 threads where the solver has
 * parallel code (but one row, see there), and equal to the table.
 *
 * Parallel code: pbd/xpbd project a colour's constraints in parallel (OpenMP) when the
 * constraint count is large enough (stepping: paper, >= 4096 constraints: the 28 x 28
 * rows below); fms/newton give CHOLMOD and OpenBLAS the count of their `threads` key
 * around each call (the supernodal factorization, whose dense blocks go to BLAS).
 * newton's results then depend on that count (see its row).
 *
 * Any change of a solver's results is a deliberate change of this table: on a mismatch
 * the test prints the row, the expected and the actual hash. Update the row's hash in
 * `table` below (after checking that the change of results is intended) — also when
 * merging a branch that changes a solver on purpose (e.g. avgforce).
 * The hashes are the same in the plain (debugoptimized), the ASan+UBSan and the release
 * builds of this machine's compiler (gcc, -std=c11: no floating-point contraction, and
 * x86-64 without -march has no FMA; pbd/xpbd's SIMD path uses FMA explicitly, chosen at
 * run time: its rows also hold the scalar path's hash, expected on a CPU without AVX2);
 * another compiler, libm, CHOLMOD or OpenBLAS may give other bits, and then the table is
 * to be re-recorded for that platform. */
#include "cb_test.h"
#include "cb_sim.h"
#include "experiments/harness/registry.h"
#include "solvers/pbd_simd.h"

#ifdef _OPENMP
#include <omp.h>
#endif

static const char *const scene_fmt =
    "name: determinism\nduration: 1\ndt: 0.005\n"
    "cloth:\n  grid: {nx: %d, ny: %d, size: [0.4, 0.4], origin: [-0.2, -0.2, 0.5]}\n"
    "  density: 0.1\n  stretch: 1000\n  bend: 1.0e-4\n  thickness: 0.002\n"
    "colliders:\n  - {type: sphere, center: [0.03, -0.02, 0.3], radius: 0.15, friction: 0.3}\n"
    "  - {type: plane, point: [0, 0, 0], normal: [0, 0, 1]}\n";

#define STEPS 50

typedef struct row {
    const char *solver;
    const char *set[3];   /* up to three --set overrides (NULL: none) */
    int n;                /* grid n x n */
    int threads[2];       /* OpenMP threads of the two runs */
    uint64_t hash;        /* the reviewed result */
    uint64_t hash_scalar; /* pbd/xpbd with simd: auto, on a CPU without AVX2 (the scalar path's
                           * result, the rows with simd: off); 0: not such a row */
} row;

static const row table[] = {
    {"explicit", {NULL}, 16, {1, 1}, 0xff55735186087abeULL, 0},
    /* pbd/xpbd: the SIMD path (solvers/pbd_simd.h) differs from the scalar one by round-off;
     * the scalar path's results are those of before it (the simd: off rows below).
     * Every pbd/xpbd row changed when their collider friction took the constraint's push
     * as the normal impulse (issue 33, the spinning sphere: the draped sheet is pressed on
     * the sphere by its stretch constraints); before, these two were 0x08ae12b40f223608
     * (scalar 0x8e5774abe02381ee) and 0x89a15c39d86340c8 (0xe2ecb821a3819d37), the
     * paper-stepping rows below 0x095151e393493cce (0x34e6a18725374433), 0x8e1ba4f9760d95ff
     * (0xee8577775d0cdaa7), 0xff0dbe50d162af59 and 0x55e3f69a625845cd */
    {"pbd", {NULL}, 16, {1, 1}, 0x22d741f31c157bb3ULL, 0x3721f0229ea92fa4ULL},
    {"xpbd", {NULL}, 16, {1, 1}, 0x220450626692ae4fULL, 0x53234ab9283ed48cULL},
    /* fms and newton: bending quadratic (fms) and shells (newton) by default since issue 31
     * (before: bend springs; with friction in their solves since issue 32, fms was
     * 0x936a2b7804d4e420 and newton 0x716645a9fe4959b1: the bending: springs rows after
     * keep those, newton's until issue 35 (below); before issue 32 fms was 0x796939d2e7d45e44, newton 0xa8fd0034b649a049,
     * acm 0x7312d1d8af504d99, until collider friction entered their solves and acm's
     * collider layers moved to half the thickness) */
    {"fms", {NULL}, 16, {1, 1}, 0xa5df03adb33896b1ULL, 0},
    /* newton (shells) and ipc: the hinge Hessian's projection became an 8 x 8 QL problem
     * (issue 35; the same matrix to round-off, solvers/bending.c) and ipc's pair Hessians
     * are projected by QL instead of Jacobi; the drape's energies agree to 1e-15 and the
     * iterations per step are the same. Before: newton 0x66543b3d065248a0, ipc
     * 0x17ac90ef0029b17b, the supernodal newton row 0xdfe256d2d7764a95 */
    /* newton: 0x158c85b83f6a20a0 (the supernodal row 0x1664d4f1a1ba921f) until the
     * assembly reused a hinge's projected Hessian while its shape moved by less than
     * hinge_reuse = 0.01 of its edge (issue 35): another matrix, so other iterates, the
     * same tolerance (on the 12 x 12 drape through the impact the positions agree to
     * 3e-7 m with the same 247 iterations, tests/test_newton.c); bending: springs and
     * quadratic are bitwise unchanged (no hinge Hessian; a constant one). Then
     * 0x8b92666f92bbcc35 (supernodal 0xbc053f4611f3effb; bending: springs
     * 0x716645a9fe4959b1, quadratic 0x7051294a112aeb30) until a step the line search cut
     * kept its factor when the gradient still fell by half (CUT_KEEP_RATE, issue 35):
     * other factors, so other iterates to the same tolerance (the 20 x 20 drape to 0.3 s
     * stays 0.48 mm from the classic 1e-8 trajectory, 0.50 mm before). Then
     * 0xe70ae3983fe00b04 (supernodal 0xd0498dd722bcf36d; bending: springs
     * 0x35af01b251e1103b, quadratic 0x262291a4ba790ee2) until the iterations started from
     * y + h^2 times the last step's dv/dt (initial_guess: acceleration, issue 35): another
     * start, so other iterates to the same tolerance (the 20 x 20 drape to 0.3 s: 0.31 mm
     * from the classic trajectory; the 12 x 12 drape: 2e-4 m from initial_guess: inertial,
     * tests/test_newton.c) */
    {"newton", {NULL}, 16, {1, 1}, 0xd6cf0dfc1a6522e9ULL, 0},
    {"fms", {"solvers.fms.bending=springs"}, 16, {1, 1}, 0x9d90d2fd6078c66eULL, 0},
    {"newton", {"solvers.newton.bending=springs"}, 16, {1, 1}, 0x2a3954a3af34c166ULL, 0},
    {"newton", {"solvers.newton.bending=quadratic"}, 16, {1, 1}, 0xe9b6e5eadc941052ULL, 0},
    /* ipc: new with issue 34 (16 steps onto the sphere; its first version, without
     * friction, gave 0x2d2879047f89c508 with the closest vertex 1.02 mm from it, kept:
     * thickness/2 = 1 mm); with the collider friction and tolerance 1e-4 m/s, and the
     * collider CCD's gaps measured from the offset (rounding), 1 and 2 threads the same;
     * 0x17ac90ef0029b17b until the line search's parabola on linearly converging
     * iterations (one step here takes 40 iterations where it took 39) and the velocities'
     * momentum balance (a shift below the tolerance, solvers/ipc.c): a change of results
     * within the solver's tolerance, reviewed; 0xde7554738b8a0d3d until the hinge and pair
     * Hessians' projection by QL (round-off, issue 35; 0xeabd88e41d0944f2 for that alone);
     * 0xa63de0bbce10a7ab until sphere_edges became the default (the cloth's edges and
     * triangles kept off the sphere, once the assembly stopped wiping the springs' blocks
     * under the edge pairs'): another barrier, so other results, reviewed; with it the
     * friction takes the edges' and triangles' share of the load (0x14eee84ce389b509 with
     * the vertices' share only, which left a sheet on a spinning sphere nearly undragged);
     * 0x0e60a84dfdb7b7f1 until the springs' exact Hessian in ipc's Newton iterations (the
     * clamped one where H is not positive definite): the same minimiser to the tolerance
     * (over the 50 steps the energies agree to 1.2e-6 J, the smallest self separation to
     * 7e-8 m), reached in 238 iterations instead of 759, the worst step 17 instead of 150;
     * 0x34515ac69f0a7889 until the friction's bound Hessian after a slip reversal and the
     * line search's extension past an under-curved Newton step (solvers/ipc.c,
     * friction_reversals, extend_step): the same minimiser to the tolerance (over the 50
     * steps the positions agree to 4.7e-6 m, the energies to 1.5e-7 J, the smallest self
     * separation to 2.3e-8 m), 235 iterations instead of 238, the worst step 18;
     * 0x2f4331c769965458 until ipc reused a hinge's projected Hessian while its shape
     * moved by less than hinge_reuse = 0.01 of its edge (newton's cache,
     * cb_spring_solver_hinge_cache): another matrix, so other iterates; the convergence
     * test (the increment below the tolerance) is redone with every hinge evaluated, so
     * the same minimiser to the tolerance (tests/test_ipc.c test_hinge_reuse_same: 1.5e-7
     * m on the 10 x 10 drape over 40 steps, the same iterations; hinge_reuse 0 gives the
     * old bits); 0x2b7361237980eee3 until the CCD against the sphere took the exact
     * first time a pair comes within 0.1 of its gap (solvers/ipc.c, round_toi) instead of
     * conservative advancement capped at 200 advances, and the advancement's Lipschitz
     * bound the motion relative to the collider: longer accepted steps, so other iterates;
     * the same minimiser to the tolerance (over the 50 steps the positions agree to
     * 1.6e-6 m, the energies to 1.1e-7 J, the smallest self separation to 5.7e-9 m; no
     * crossing in the audit either way), 233 iterations instead of 235, the worst step 16
     * instead of 18; 0xf8f76d9fb7c0ccf1 until the hinges' exact (unprojected) Hessians in
     * the Newton iterations with the springs' exact one (the projected ones where that H
     * is not positive definite; solvers/spring_solver.h hinge_exact): another matrix, so
     * other iterates, the same minimiser to the tolerance (over the 50 steps the positions
     * agree to 9.6e-6 m, within 50 steps of tol * h = 2.5e-5 m, the energies to 7.0e-7 J,
     * the smallest self separation to 2.1e-8 m; no crossing in the audit either way), 214
     * iterations instead of 233, the worst step 14 instead of 16 (ipc's convergence tests
     * by CG on the factor at hand, cg_test, changed no bit) */
    {"ipc", {NULL}, 16, {1, 1}, 0xe9684481e15dc9bcULL, 0},
    {"avgforce", {NULL}, 16, {1, 1}, 0x887d6841240f08d7ULL, 0},
    /* acm: was 0x3fed7d49d5504434 until its step ran to t + dt while the harness set the
     * time to (n + 1) dt (a last-bit mismatch that left path knots past the step's end);
     * it now runs to cb_step_info.t_end = (n + 1) dt (issue 18) */
    /* acm: 0x078d49e3f62a1ff3 until its hinge clocks were capped at the springs' steps
     * (bend_clock: stretch, issue 33: the multistep resonance); bend_clock: element was the
     * scheme before, bitwise, until the renewals below */
    /* acm: 0xd11a1935178d97a1 and (bend_clock: element) 0x078d49e3f62a1ff3 until the
     * renewals after the elastic kicks of one time were made once, after all of them
     * (issue 35): with velocity_slack > 0 a vertex's allowance is now checked against its
     * velocity after all kicks of that time, not after each, so other renewals, other
     * certificate and layer times; the elastic events are the same. With velocity_slack 0
     * (the exact scheme) the run is bitwise the one before: the velocity_slack=0 row has
     * the hash of 9bebf9e */
    /* acm: 0x94c468e4888be1af, (bend_clock: element) 0xb9b20b408abc08b3 and
     * (velocity_slack: 0) 0x7c8bc571e0d4c5dc until the hinge events took their angle with
     * cb_atan2 (core/atan2.h, within 2 ulp of libm's atan2; issue 35): the angle, so the
     * hinge kicks, differ by round-off (tests/test_model.c), the clocks and the elastic
     * events are the same; reviewed */
    {"acm", {NULL}, 16, {1, 1}, 0xe594a6d8983a482dULL, 0},
    {"acm", {"solvers.acm.bend_clock=element"}, 16, {1, 1}, 0x28e481469c0798ecULL, 0},
    {"acm", {"solvers.acm.velocity_slack=0"}, 16, {1, 1}, 0x2d2f1c09eefd9187ULL, 0},
    /* the parallel paths, with 1 and 2 threads */
    /* pbd/xpbd sweep two mesh parts side by side (`parts`, a sweep order of its own); with
     * parts: 1 and simd: off they give the results of before both (a barrier per colour) */
    {"pbd", {"solvers.pbd.stepping=paper"}, 28, {1, 2}, 0x39452b949893da46ULL, 0x020a0eb54c589c31ULL},
    {"xpbd", {"solvers.xpbd.stepping=paper"}, 28, {1, 2}, 0xed4678d7de38d0ddULL, 0xe0a2f983f8cb8670ULL},
    {"pbd", {"solvers.pbd.stepping=paper", "solvers.pbd.simd=off", "solvers.pbd.parts=1"}, 28, {1, 2},
     0xaea98f9bd90df401ULL, 0},
    {"xpbd", {"solvers.xpbd.stepping=paper", "solvers.xpbd.simd=off", "solvers.xpbd.parts=1"}, 28, {1, 2},
     0x85f8676ea6ea4d0dULL, 0},
    {"fms", {"solvers.fms.threads=0", "solvers.fms.factor=supernodal"}, 16, {1, 2}, 0xa0452f995a4494f9ULL, 0},
    /* newton with the supernodal factor is deterministic for a given `threads` (its
     * OpenBLAS count), but not independent of it: 1 thread gives the default row's hash,
     * 2 threads another (threads: 0, one per core, gives the latter on a 2-core machine).
     * The OpenMP count does not matter. */
    {"newton", {"solvers.newton.threads=2", "solvers.newton.factor=supernodal"}, 16, {1, 2}, 0x22d582fdd73bf1cbULL, 0},
};

static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* Run row r with `threads` OpenMP threads; *hash of x then v after STEPS steps,
 * *gap the least distance of a vertex from the sphere's surface at the end. */
static int run_row(const row *r, int threads, uint64_t *hash, double *gap)
{
    /* OpenBLAS's count is the solver's (`threads`, solvers/cholmod_util.h) */
#ifdef _OPENMP
    omp_set_num_threads(threads);
#endif
    char text[2048];
    snprintf(text, sizeof text, scene_fmt, r->n, r->n);
    int nsets = r->set[2] ? 3 : r->set[1] ? 2 : r->set[0] ? 1 : 0;
    cb_sim s;
    int rc = cb_sim_open(&s, r->solver, NULL, text, ".", r->set, nsets);
    for (int k = 0; k < STEPS && !rc; k++) rc = cb_sim_step(&s);
    if (!rc) {
        size_t bytes = (size_t)s.w->nv * sizeof s.w->state.x[0];
        uint64_t h = fnv1a(0xcbf29ce484222325ULL, s.w->state.x, bytes);
        *hash = fnv1a(h, s.w->state.v, bytes);
        static const double c[3] = {0.03, -0.02, 0.3};
        *gap = INFINITY;
        for (int i = 0; i < s.w->nv; i++) *gap = fmin(*gap, sqrt(cb_v3_dist2(s.w->state.x[i], c)) - 0.15);
    }
    cb_sim_close(&s);
    return rc;
}

/* Every registered solver has a plain row, found by its name: for one without (a new
 * method), the test runs the plain row (with 1 and 2 threads: the two runs must agree
 * when the method claims CB_SOLVER_THREAD_INDEPENDENT) and fails, printing the row to
 * paste into `table` once its results are reviewed. */
static void test_table_covers_every_solver(void)
{
    for (int i = 0; i < cb_solver_count(); i++) {
        const cb_solver_class *cls = cb_solver_at(i);
        int found = 0;
        for (size_t k = 0; k < sizeof table / sizeof table[0]; k++)
            found |= !table[k].set[0] && !strcmp(table[k].solver, cls->name);
        if (found) continue;
        row r = {cls->name, {NULL}, 16, {1, 2}, 0, 0};
        uint64_t h[2] = {0, 0};
        double gap = INFINITY;
        for (int j = 0; j < 2; j++) CU_ASSERT_EQUAL_FATAL(run_row(&r, r.threads[j], &h[j], &gap), 0);
        if (cls->flags & CB_SOLVER_THREAD_INDEPENDENT) CU_ASSERT_EQUAL(h[0], h[1]);
        fprintf(stderr, "  no row for solver %s in tests/test_determinism.c; its results (1 and 2 threads: %s, "
                "closest to the sphere %.3g m) are, once reviewed, the row\n"
                "    {\"%s\", {NULL}, 16, {1, 1}, 0x%016llxULL, 0},\n", cls->name,
                h[0] == h[1] ? "the same" : "DIFFERENT", gap, cls->name, (unsigned long long)h[0]);
        CU_FAIL("a registered solver has no reviewed hash");
    }
}

static void test_bitwise_and_table(void)
{
    int mismatches = 0;
    for (size_t k = 0; k < sizeof table / sizeof table[0]; k++) {
        const row *r = &table[k];
        uint64_t h[2] = {0, 0};
        double gap = INFINITY;
        for (int j = 0; j < 2; j++) CU_ASSERT_EQUAL_FATAL(run_row(r, r->threads[j], &h[j], &gap), 0);
        CU_ASSERT(gap < 0.01); /* the cloth reached the sphere: the contact code ran */
        char what[256];
        snprintf(what, sizeof what, "%s%s%s%s%s (%d x %d)", r->solver, r->set[0] ? " " : "", r->set[0] ? r->set[0] : "",
                 r->set[1] ? " " : "", r->set[1] ? r->set[1] : "", r->n, r->n);
        if (h[0] != h[1])
            fprintf(stderr, "  %s: not deterministic: %d thread(s) 0x%016llxULL, %d thread(s) 0x%016llxULL\n", what,
                    r->threads[0], (unsigned long long)h[0], r->threads[1], (unsigned long long)h[1]);
        CU_ASSERT_EQUAL(h[0], h[1]);
        uint64_t want = r->hash_scalar && !cb_pbd_simd_width() ? r->hash_scalar : r->hash;
        if (h[0] != want) {
            mismatches++;
            fprintf(stderr, "  %s: expected 0x%016llxULL, got 0x%016llxULL\n", what,
                    (unsigned long long)want, (unsigned long long)h[0]);
        }
        CU_ASSERT_EQUAL(h[0], want);
    }
    if (mismatches)
        fprintf(stderr, "  the results of %d row(s) changed: if that is intended, put the new hashes in `table` "
                        "in tests/test_determinism.c (a reviewed change)\n", mismatches);
}

CB_TEST_MAIN("determinism",
             CB_TEST(test_table_covers_every_solver),
             CB_TEST(test_bitwise_and_table))
