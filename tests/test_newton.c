/* tests/test_newton.c — the Newton reference (solvers/newton.c): fast (superlinear)
 * convergence of the relative gradient, its solution minimises g better than any
 * fms iterate, the projected Hessian keeps compressed cloth solvable, one
 * factorization per iteration, the contact penalty and the lagged collider friction
 * against finite differences, parameter errors. (Momentum, the single-spring decay
 * and the error messages of singular systems are checked for newton in test_fms.c.) */
#include "cb_test.h"
#include "cb_sim.h"

#include "contact/colliders.h"
#include "core/scene.h"
#include "core/solver.h"
#include "core/vec3.h"
#include "core/world.h"
#include "experiments/harness/registry.h"
#include "solvers/spring_solver.h"
#include "solvers/springs.h"

/* scene file + world + solver: tests/cb_sim.h */
static int run_open(cb_sim *r, const char *solver, const char *path, const char *const *sets, int nsets)
{
    return cb_sim_open(r, solver, path, NULL, NULL, sets, nsets);
}

/* The residual after k iterations (k = 1..8) of the same step: decreasing, and
 * superlinear at the end (r_{k+1} <= 10 r_k^1.5 once r_k < 1e-3), reaching 1e-10. */
static void test_superlinear_convergence(void)
{
    double res[9];
    int last = 0;
    for (int k = 1; k <= 8; k++) {
        char it[64];
        snprintf(it, sizeof it, "solvers.newton.max_iterations=%d", k);
        const char *sets[] = {"cloth.grid.nx=15", "cloth.grid.ny=15", "solvers.newton.tolerance=1e-10", it,
                              "solvers.newton.refactor=always"};
        cb_sim r;
        CU_ASSERT_EQUAL_FATAL(run_open(&r, "newton", "data/scenes/hanging.yaml", sets, 5), CB_OK);
        CU_ASSERT_EQUAL_FATAL(cb_sim_step(&r), CB_OK);
        res[k] = r.info.residual;
        CU_ASSERT(r.info.iterations <= k);
        CU_ASSERT_EQUAL(r.info.factorizations, r.info.iterations);
        if (r.info.iterations < k && !last) last = r.info.iterations;
        cb_sim_close(&r);
    }
    fprintf(stderr, "  residuals:");
    for (int k = 1; k <= 8; k++) fprintf(stderr, " %.2e", res[k]);
    fprintf(stderr, "\n");
    CU_ASSERT(res[8] <= 1e-8);
    CU_ASSERT(last > 0 && last <= 7); /* converged before the cap */
    for (int k = 1; k < 8 && res[k] > 1e-10; k++) {
        CU_ASSERT(res[k + 1] < res[k]);
        if (res[k] < 1e-3 && res[k + 1] > 1e-9) CU_ASSERT(res[k + 1] <= 10 * pow(res[k], 1.5));
    }
}

/* Newton's answer minimises g (bend springs, fms's energy): no fms iterate of the same
 * step has a lower g. */
static void test_minimises_g(void)
{
    const char *base[] = {"cloth.grid.nx=12", "cloth.grid.ny=12", "cloth.pins=[{select: top}]", "cloth.grid.plane=xy",
                          "dt=0.03", "solvers.newton.self_collision=false", "solvers.fms.self_collision=false",
                          "solvers.newton.tolerance=1e-12", "solvers.newton.bending=springs"};
    cb_sim r;
    CU_ASSERT_EQUAL_FATAL(run_open(&r, "newton", "data/scenes/hanging.yaml", base, 9), CB_OK);
    for (int n = 0; n < 5; n++) CU_ASSERT_EQUAL_FATAL(cb_sim_step(&r), CB_OK);
    cb_world *w = r.w;
    double h = r.scene->dt;
    size_t bytes = (size_t)w->nv * sizeof(double[3]);
    double (*x0)[3] = malloc(bytes), (*v0)[3] = malloc(bytes), (*y)[3] = malloc(bytes);
    memcpy(x0, w->state.x, bytes);
    memcpy(v0, w->state.v, bytes);
    for (int i = 0; i < w->nv; i++)
        for (int k = 0; k < 3; k++) y[i][k] = x0[i][k] + h * v0[i][k];
    cb_spring_set sp;
    cb_error e;
    CU_ASSERT_EQUAL_FATAL(cb_springs_build(w, CB_SPRINGS_MODEL, &sp, &e), CB_OK);
    double t0 = w->state.t;
    CU_ASSERT_EQUAL_FATAL(cb_sim_step(&r), CB_OK);
    double gN = cb_springs_objective(&sp, w, (const double (*)[3])w->state.x, (const double (*)[3])y, h);
    const cb_solver_class *fms = cb_solver_find("fms");
    const int iters[] = {1, 10, 100, 400};
    for (int q = 0; q < 4; q++) {
        char it[64];
        snprintf(it, sizeof it, "solvers.fms.iterations=%d", iters[q]);
        cb_scene *sc = NULL;
        const char *sets[10];
        for (int i = 0; i < 9; i++) sets[i] = base[i];
        sets[9] = it;
        CU_ASSERT_EQUAL_FATAL(cb_scene_load("data/scenes/hanging.yaml", sets, 10, &sc, &e), CB_OK);
        cb_params p = cb_scene_params(sc, "fms");
        void *f = NULL;
        CU_ASSERT_EQUAL_FATAL(fms->create(w, &p, &f, &e), CB_OK);
        memcpy(w->state.x, x0, bytes);
        memcpy(w->state.v, v0, bytes);
        w->state.t = t0;
        cb_step_info info;
        CU_ASSERT_EQUAL_FATAL(cb_solver_step(fms, f, w, lround(t0 / h), h, &info, &e), CB_OK);
        double gF = cb_springs_objective(&sp, w, (const double (*)[3])w->state.x, (const double (*)[3])y, h);
        fprintf(stderr, "  fms %3d iterations: g - g_newton = %.3e (|g_newton| = %.3e)\n", iters[q], gF - gN, fabs(gN));
        CU_ASSERT(gF >= gN - 1e-14 * fabs(gN));
        fms->destroy(f);
        cb_scene_free(&sc);
    }
    cb_springs_release(&sp);
    free(x0);
    free(v0);
    free(y);
    cb_sim_close(&r);
}

/* A cloth compressed to 80% (springs in compression: their exact Hessians are
 * indefinite, an unprojected Newton matrix is not positive definite) is solved: the
 * projected Hessian factors every time, the first steps (far from rest) meet the
 * tolerance, and the cloth relaxes towards rest. (Near rest convergence becomes
 * linear — the projection changes the Hessian of slightly compressed springs — and
 * may take up to max_iterations.) */
static void test_compressed_cloth(void)
{
    const char *sets[] = {"cloth.grid.nx=10", "cloth.grid.ny=10", "cloth.initial_stretch=0.8", "gravity=[0, 0, 0]",
                          "cloth.pins=[]", "solvers.newton.tolerance=1e-9"};
    cb_sim r;
    CU_ASSERT_EQUAL_FATAL(run_open(&r, "newton", "data/scenes/hanging.yaml", sets, 6), CB_OK);
    double e0 = NAN;
    for (int n = 0; n < 20; n++) {
        CU_ASSERT_EQUAL_FATAL(cb_sim_step(&r), CB_OK);
        if (n == 0) e0 = r.info.solver_energy;
        if (n < 4) CU_ASSERT(r.info.residual <= 1e-9); /* far from rest: the tolerance is met */
    }
    fprintf(stderr, "  spring energy after 1 step %.3e J, after 20 steps %.3e J\n", e0, r.info.solver_energy);
    CU_ASSERT(r.info.solver_energy < e0);
    cb_sim_close(&r);
}

/* A term of g with its gradient (added to grad) and Hessian blocks (added to hess[nfree]). */
typedef double (*g_term)(const cb_spring_solver *ss, const cb_world *w, const double (*x)[3], double (*grad)[3],
                         double (*hess)[3][3]);

/* The world of scene text and the spring-solver frame of newton on it (configured and
 * set up; release ss and close r). */
static int open_frame(cb_sim *r, const char *text, cb_spring_solver *ss)
{
    memset(ss, 0, sizeof *ss);
    if (cb_sim_world(r, NULL, text, ".", NULL, 0)) return -1;
    cb_params p = cb_scene_params(r->scene, "newton"), q;
    cb_error e;
    int rc = cb_params_begin(&p, &q, &e);
    if (!rc) rc = cb_params_end(&p, &q, cb_spring_solver_configure(ss, "newton", r->w, &q, CB_BENDING_SHELLS, 1, &e), &e);
    if (!rc) rc = cb_spring_solver_setup(ss, r->w, 3, "test", &e);
    if (rc) fprintf(stderr, "  %s\n", e.message);
    return rc;
}

/* Central differences (step 1e-7) of term at x: of its value against its gradient and of
 * its gradient against its Hessian blocks; the largest errors and entries into
 * err[4] = {gradient error, max |gradient|, Hessian error, max |Hessian|}. Returns the
 * term's value at x. */
static double fd_check(g_term term, const cb_spring_solver *ss, const cb_world *w, double (*x)[3], double err[4])
{
    int nv = w->nv;
    double (*g)[3] = calloc((size_t)nv, sizeof *g), (*gp)[3] = calloc((size_t)nv, sizeof *gp);
    double (*gm)[3] = calloc((size_t)nv, sizeof *gm), (*H)[3][3] = calloc((size_t)nv, sizeof *H);
    double v = term(ss, w, (const double (*)[3])x, g, H);
    const double eps = 1e-7;
    for (int k = 0; k < 4; k++) err[k] = 0.0;
    for (int u = 0; u < ss->nfree; u++) {
        int i = ss->vert[u];
        for (int k = 0; k < 3; k++) {
            double keep = x[i][k];
            x[i][k] = keep + eps;
            memset(gp, 0, (size_t)nv * sizeof *gp);
            double vp = term(ss, w, (const double (*)[3])x, gp, NULL);
            x[i][k] = keep - eps;
            memset(gm, 0, (size_t)nv * sizeof *gm);
            double vm = term(ss, w, (const double (*)[3])x, gm, NULL);
            x[i][k] = keep;
            err[0] = fmax(err[0], fabs((vp - vm) / (2 * eps) - g[i][k]));
            err[1] = fmax(err[1], fabs(g[i][k]));
            for (int r = 0; r < 3; r++) { /* column k of vertex i's block */
                err[2] = fmax(err[2], fabs((gp[i][r] - gm[i][r]) / (2 * eps) - H[u][r][k]));
                err[3] = fmax(err[3], fabs(H[u][r][k]));
            }
        }
    }
    free(g);
    free(gp);
    free(gm);
    free(H);
    return v;
}

static double penalty_term(const cb_spring_solver *ss, const cb_world *w, const double (*x)[3], double (*grad)[3],
                           double (*hess)[3][3])
{
    return cb_spring_contact_penalty(ss, w, 0.0, x, grad, hess);
}

/* A crumpled state (to free): w's positions plus uniform noise of width amp from seed. */
static double (*crumpled(const cb_world *w, unsigned seed, double amp))[3]
{
    double (*x)[3] = calloc((size_t)w->nv, sizeof *x);
    srand(seed);
    for (int i = 0; i < w->nv; i++)
        for (int k = 0; k < 3; k++) x[i][k] = w->state.x[i][k] + amp * (rand() / (double)RAND_MAX - 0.5);
    return x;
}

/* The extra pairs of cb_spring_solver_system (ipc's contact couplings) may name vertex
 * pairs the springs and hinges already couple (a point-triangle pair whose vertex is a
 * hinge's far vertex of one of the triangle's): cb_spring_solver_assemble zeroed the extra
 * blocks after the springs and hinges were added, wiping their coupling there (a matrix
 * no longer the model's Hessian, positive definite or not: ipc's linear convergence in
 * dense self contact). Every pair of a 4 x 4 grid as an extra pair must leave the
 * assembled values as without extras. */
static void test_extra_pairs_keep_model(void)
{
    const char *text = "name: c\nduration: 1\ndt: 0.01\n"
                       "cloth:\n  grid: {nx: 4, ny: 4, size: [0.2, 0.2], origin: [-0.1, -0.1, 0.0]}\n"
                       "  pins: []\n";
    cb_sim r;
    cb_spring_solver ss;
    CU_ASSERT_EQUAL_FATAL(open_frame(&r, text, &ss), CB_OK);
    cb_world *w = r.w;
    int nv = w->nv;
    double (*x)[3] = crumpled(w, 5, 0.02); /* every hinge bent, springs stretched */
    const double h = 0.01;
    /* every vertex pair of the grid */
    int np = 0, (*pairs)[2] = calloc((size_t)nv * nv, sizeof *pairs);
    for (int a = 0; a < nv; a++)
        for (int b = a + 1; b < nv; b++) {
            pairs[np][0] = a;
            pairs[np][1] = b;
            np++;
        }
    /* the springs' and hinges' blocks, read at their own positions, with every vertex
     * pair an extra pair and with none (the extra blocks are the caller's: zero there) */
    int nq = 9 * ss.sp.n + 54 * ss.bend.n;
    double *vals[2] = {calloc((size_t)nq, sizeof(double)), calloc((size_t)nq, sizeof(double))};
    for (int pass = 0; pass < 2; pass++) {
        cb_error e;
        CU_ASSERT_EQUAL_FATAL(cb_spring_solver_system(&ss, pass ? NULL : (const int (*)[2])pairs, pass ? 0 : np,
                                                      "test", &e), CB_OK);
        cb_spring_solver_assemble(&ss, w, (const double (*)[3])x, h, NULL);
        const double *A = cb_chol_values(ss.chol);
        for (int q = 0; q < nq; q++) vals[pass][q] = ss.spring_pos[q] >= 0 ? A[ss.spring_pos[q]] : 0.0;
    }
    double worst = 0.0, big = 0.0;
    for (int q = 0; q < nq; q++) {
        worst = fmax(worst, fabs(vals[0][q] - vals[1][q]));
        big = fmax(big, fabs(vals[1][q]));
    }
    fprintf(stderr, "  spring and hinge blocks with every pair an extra: max difference %.3e (max |entry| %.3e)\n",
            worst, big);
    CU_ASSERT(big > 0);
    CU_ASSERT(worst <= 1e-12 * big);
    free(vals[0]);
    free(vals[1]);
    free(pairs);
    free(x);
    cb_spring_solver_release(&ss);
    cb_sim_close(&r);
}

/* The assembled values of ss at x into out (a copy of the system's values). */
static void assemble_copy(cb_spring_solver *ss, const cb_world *w, const double (*x)[3], double *out, int nnz)
{
    cb_spring_solver_assemble(ss, w, x, 0.01, NULL);
    memcpy(out, cb_chol_values(ss->chol), (size_t)nnz * sizeof *out);
}

/* The hinge cache (cb_spring_solver_hinge_cache): the first assembly evaluates every
 * hinge and gives the uncached values bitwise; a rigid translation reuses every hinge (to
 * round-off the same matrix, the Hessians being translation invariant); a vertex moved by
 * more than reuse times its hinges' edges makes exactly the hinges around it evaluated
 * again, and the values are again bitwise those without a cache (the others did not
 * move); a motion below the bound reuses every hinge. */
static void test_hinge_cache(void)
{
    const char *text = "name: c\nduration: 1\ndt: 0.01\n"
                       "cloth:\n  grid: {nx: 5, ny: 5, size: [0.2, 0.2], origin: [-0.1, -0.1, 0.0]}\n"
                       "  bend: 1.0e-3\n  pins: []\n";
    cb_sim r;
    cb_spring_solver ss;
    CU_ASSERT_EQUAL_FATAL(open_frame(&r, text, &ss), CB_OK);
    cb_world *w = r.w;
    int nv = w->nv, nb = ss.bend.n, nnz = 0;
    CU_ASSERT_FATAL(nb > 0);
    for (int q = 0; q < 9 * ss.nfree; q++) nnz = ss.diag_pos[q] + 1 > nnz ? ss.diag_pos[q] + 1 : nnz;
    for (int q = 0; q < 9 * ss.sp.n + 54 * nb; q++) nnz = ss.spring_pos[q] + 1 > nnz ? ss.spring_pos[q] + 1 : nnz;
    double (*x)[3] = crumpled(w, 7, 0.01); /* every hinge bent */
    double *plain = calloc((size_t)nnz, sizeof(double)), *cached = calloc((size_t)nnz, sizeof(double));
    const double reuse = 0.01;
    cb_error e;
    /* uncached values at x, then the first cached assembly */
    assemble_copy(&ss, w, (const double (*)[3])x, plain, nnz);
    CU_ASSERT_EQUAL_FATAL(cb_spring_solver_hinge_cache(&ss, reuse, &e), CB_OK);
    assemble_copy(&ss, w, (const double (*)[3])x, cached, nnz);
    CU_ASSERT_EQUAL(ss.hinge_reused, 0);
    CU_ASSERT(memcmp(plain, cached, (size_t)nnz * sizeof(double)) == 0);
    /* a translation by 1 m: every hinge reused, the matrix the same to round-off */
    for (int i = 0; i < nv; i++) x[i][0] += 1.0;
    assemble_copy(&ss, w, (const double (*)[3])x, cached, nnz);
    CU_ASSERT_EQUAL(ss.hinge_reused, nb);
    cb_spring_solver_release(&ss);
    cb_sim_close(&r);
    CU_ASSERT_EQUAL_FATAL(open_frame(&r, text, &ss), CB_OK);
    w = r.w;
    assemble_copy(&ss, w, (const double (*)[3])x, plain, nnz);
    double worst = 0.0, big = 0.0;
    for (int q = 0; q < nnz; q++) {
        worst = fmax(worst, fabs(plain[q] - cached[q]));
        big = fmax(big, fabs(plain[q]));
    }
    fprintf(stderr, "  hinge cache after a translation: max difference %.3e (max |entry| %.3e)\n", worst, big);
    CU_ASSERT(worst <= 1e-9 * big);
    /* vertex 12 (the middle) moved by 3 reuse edge lengths: its hinges evaluated again */
    CU_ASSERT_EQUAL_FATAL(cb_spring_solver_hinge_cache(&ss, reuse, &e), CB_OK);
    assemble_copy(&ss, w, (const double (*)[3])x, cached, nnz);
    int around = 0;
    for (int i = 0; i < nb; i++)
        for (int j = 0; j < 4; j++) around += ss.bend.h[i][j] == 12;
    CU_ASSERT_FATAL(around > 0);
    x[12][2] += 3 * reuse * 0.05;
    assemble_copy(&ss, w, (const double (*)[3])x, cached, nnz);
    CU_ASSERT_EQUAL(ss.hinge_reused, nb - around);
    cb_spring_solver_hinge_forget(&ss); /* uncached: every hinge again */
    assemble_copy(&ss, w, (const double (*)[3])x, plain, nnz);
    CU_ASSERT_EQUAL(ss.hinge_reused, 0);
    CU_ASSERT(memcmp(plain, cached, (size_t)nnz * sizeof(double)) == 0);
    /* and by a tenth of the bound: every hinge reused */
    x[12][2] += 0.1 * reuse * 0.05 / sqrt(2.0);
    assemble_copy(&ss, w, (const double (*)[3])x, cached, nnz);
    CU_ASSERT_EQUAL(ss.hinge_reused, nb);
    free(x);
    free(plain);
    free(cached);
    cb_spring_solver_release(&ss);
    cb_sim_close(&r);
}

/* The friction test's step: h = 0.01 s ending at t1 = 0.01 s. */
static double friction_term(const cb_spring_solver *ss, const cb_world *w, const double (*x)[3], double (*grad)[3],
                            double (*hess)[3][3])
{
    return cb_spring_friction(ss, w, 0.01, 0.01, x, grad, hess, NULL);
}

/* The contact term of g (cb_spring_contact_penalty) against finite differences: its
 * gradient on a tilted plane and on a sphere (central differences of P), and its
 * Hessian blocks on the plane, where the Gauss-Newton block c m n n^T is exact
 * (central differences of the gradient). Vertices are scattered across the offset
 * band, some inside, some outside, none at the kink d = offset. */
static void test_contact_penalty_fd(void)
{
    static const char *fmt =
        "name: c\nduration: 1\ndt: 0.01\n"
        "cloth:\n  grid: {nx: 5, ny: 5, size: [0.2, 0.2], origin: [-0.1, -0.1, 0.0]}\n  thickness: 0.002\n"
        "colliders:\n  - %s\n";
    const char *cols[] = {"{type: plane, point: [0, 0, 0], normal: [0.3, -0.2, 1.0]}",
                          "{type: sphere, center: [0, 0, -0.3], radius: 0.3}"};
    for (int c = 0; c < 2; c++) {
        char text[1024];
        snprintf(text, sizeof text, fmt, cols[c]);
        cb_sim r;
        cb_spring_solver ss;
        CU_ASSERT_EQUAL_FATAL(open_frame(&r, text, &ss), CB_OK);
        cb_world *w = r.w;
        CU_ASSERT_EQUAL(ss.contact_mode, CB_SPRING_CONTACT_CONSTRAINT);
        int nv = w->nv;
        double (*x)[3] = calloc((size_t)nv, sizeof *x);
        srand(11);
        int inside = 0;
        for (int i = 0; i < nv; i++) {
            double n[3];
            cb_v3_copy(x[i], w->state.x[i]);
            double d = cb_spring_contact_query(&ss, w, 0.0, x[i], n);
            /* move along the normal to a distance in [-3, +1] mm from the offset, away from 0 */
            double target = -0.003 + 0.004 * rand() / (double)RAND_MAX;
            if (fabs(target) < 2e-4) target = -5e-4;
            cb_v3_axpy(x[i], target - d, n);
            inside += target < 0;
        }
        CU_ASSERT(inside > 3 && inside < nv); /* some of each */
        double err[4];
        double P = fd_check(penalty_term, &ss, w, x, err);
        CU_ASSERT(P > 0);
        fprintf(stderr, "  %s: P = %.3e, max |grad - fd| = %.2e (max |grad| %.2e), max |H - fd| = %.2e (max |H| %.2e)\n",
                c ? "sphere" : "plane", P, err[0], err[1], err[2], err[3]);
        CU_ASSERT(err[1] > 0 && err[0] <= 1e-6 * err[1]);
        if (c == 0) CU_ASSERT(err[3] > 0 && err[2] <= 1e-6 * err[3]);
        /* on the sphere the left-out curvature term is c m d / r (I - n n^T): small, not zero */
        if (c == 1) CU_ASSERT(err[2] <= 0.02 * err[3]);
        free(x);
        cb_spring_solver_release(&ss);
        cb_sim_close(&r);
    }
}

/* The lagged collider friction of g (cb_spring_friction, spring_solver.h) against finite
 * differences: its gradient (central differences of F) and its Hessian blocks (central
 * differences of the gradient) on a tilted plane moving along itself, with slips on both
 * sides of eps (the static and the sliding branch of f0; eps made large with
 * friction_velocity so the differences resolve it), and the Coulomb bound: where the
 * vertex slides faster than eps/h the force is mu times the lagged normal force. */
static void test_friction_fd(void)
{
    const char *text =
        "name: c\nduration: 1\ndt: 0.01\n"
        "cloth:\n  grid: {nx: 5, ny: 5, size: [0.2, 0.2], origin: [-0.1, -0.1, 0.0]}\n  thickness: 0.002\n"
        "colliders:\n  - {type: plane, point: [0, 0, -0.001], normal: [0.3, -0.2, 1.0], friction: 0.4,"
        " velocity: [0.05, 0.02, 0.006]}\n"
        "solvers:\n  newton: {friction_velocity: 0.2}\n";
    cb_sim r;
    cb_spring_solver ss;
    CU_ASSERT_EQUAL_FATAL(open_frame(&r, text, &ss), CB_OK);
    cb_world *w = r.w;
    const double h = 0.01; /* friction_term's step */
    int nv = w->nv;
    double (*x)[3] = calloc((size_t)nv, sizeof *x), (*g)[3] = calloc((size_t)nv, sizeof *g);
    /* lagged state: every vertex pressed on the plane with 2..7 times its weight */
    srand(5);
    ss.nfric = 0;
    for (int u = 0; u < ss.nfree; u++) {
        int i = ss.vert[u];
        cb_v3_copy(ss.x0[i], w->state.x[i]);
        ss.fn[i] = w->mass[i] * 9.81 * (2.0 + 5.0 * rand() / (double)RAND_MAX);
        ss.fcol[i] = 0;
        cb_v3_copy(ss.fnrm[i], w->colliders[0].normal);
        ss.nfric++;
    }
    /* slips of 0.1 to 3 eps (eps = friction_velocity h = 2 mm) in random directions, and a normal part */
    int slow = 0, fast = 0;
    for (int u = 0; u < ss.nfree; u++) {
        int i = ss.vert[u];
        double dir[3] = {rand() / (double)RAND_MAX - 0.5, rand() / (double)RAND_MAX - 0.5, rand() / (double)RAND_MAX - 0.5};
        double len = 0.002 * (0.1 + 2.9 * rand() / (double)RAND_MAX);
        if (fabs(len - 0.002) < 1e-4) len = 0.0015;
        const double *n = ss.fnrm[i];
        cb_v3_axpy(dir, -cb_v3_dot(dir, n), n);
        cb_v3_normalize(dir);
        cb_v3_copy(x[i], ss.x0[i]);
        cb_v3_axpy(x[i], h, w->colliders[0].velocity); /* moving with the plane: no slip */
        cb_v3_axpy(x[i], len, dir);
        cb_v3_axpy(x[i], 3e-4, n); /* a normal part, which F ignores */
        slow += len < 0.002;
        fast += len > 0.002;
    }
    CU_ASSERT(slow > 3 && fast > 3);
    double err[4];
    double F = fd_check(friction_term, &ss, w, x, err);
    CU_ASSERT(F > 0);
    /* sliding: |force| = mu f_i, i.e. |grad F| = mu h^2 f_i */
    friction_term(&ss, w, (const double (*)[3])x, g, NULL);
    double coulomb = 0;
    for (int u = 0; u < ss.nfree; u++) {
        int i = ss.vert[u];
        double ui[3];
        cb_v3_sub(ui, x[i], ss.x0[i]);
        cb_v3_axpy(ui, -h, w->colliders[0].velocity);
        cb_v3_axpy(ui, -cb_v3_dot(ui, ss.fnrm[i]), ss.fnrm[i]);
        if (cb_v3_norm(ui) > 0.002) coulomb = fmax(coulomb, fabs(cb_v3_norm(g[i]) / (0.4 * h * h * ss.fn[i]) - 1.0));
    }
    fprintf(stderr, "  F = %.3e, max |grad - fd| = %.2e (max |grad| %.2e), max |H - fd| = %.2e (max |H| %.2e), "
            "sliding |force| / (mu f) - 1 up to %.1e\n", F, err[0], err[1], err[2], err[3], coulomb);
    CU_ASSERT(err[1] > 0 && err[0] <= 1e-6 * err[1]);
    CU_ASSERT(err[3] > 0 && err[2] <= 1e-5 * err[3]);
    CU_ASSERT(coulomb < 1e-12);
    free(x);
    free(g);
    cb_spring_solver_release(&ss);
    cb_sim_close(&r);
}

/* Two 12 x 12 drapes through the impact (60 steps of 5 ms) stepped side by side: a with
 * newton's defaults, b with the one key `b_key` changed; each step must succeed. Their
 * iterations and factorizations summed, a's iterations of steps [1, 30) (free fall
 * before the impact), the largest residual, the largest distance between their
 * positions and the largest motion of a vertex from its rest position. */
typedef struct paired_drape {
    int ia, ib, fa, fb, falling, most_a;
    double res, worst, moved;
} paired_drape;

static paired_drape run_paired_drape(const char *b_key)
{
    const char *base[] = {"cloth.grid.nx=12", "cloth.grid.ny=12", "dt=0.005", b_key};
    paired_drape p = {0};
    cb_sim a, b;
    CU_ASSERT_EQUAL_FATAL(run_open(&a, "newton", "data/scenes/drape_sphere.yaml", base, 3), CB_OK);
    CU_ASSERT_EQUAL_FATAL(run_open(&b, "newton", "data/scenes/drape_sphere.yaml", base, 4), CB_OK);
    for (int n = 0; n < 60; n++) {
        CU_ASSERT_EQUAL_FATAL(cb_sim_step(&a), CB_OK);
        CU_ASSERT_EQUAL_FATAL(cb_sim_step(&b), CB_OK);
        if (n >= 1 && n < 30) p.falling += a.info.iterations; /* t in (0.005, 0.15] s: before the impact */
        p.ia += a.info.iterations;
        p.ib += b.info.iterations;
        p.fa += a.info.factorizations;
        p.fb += b.info.factorizations;
        p.most_a = a.info.iterations > p.most_a ? a.info.iterations : p.most_a;
        p.res = fmax(p.res, fmax(a.info.residual, b.info.residual));
        for (int i = 0; i < a.w->nv; i++) {
            p.worst = fmax(p.worst, cb_v3_dist(a.w->state.x[i], b.w->state.x[i]));
            p.moved = fmax(p.moved, cb_v3_dist(a.w->state.x[i], a.w->mesh->x[i]));
        }
    }
    cb_sim_close(&a);
    cb_sim_close(&b);
    return p;
}

/* Modified Newton (refactor: auto, the default) on the drape through the impact: fewer
 * factorizations than iterations, every step meets the default tolerance (or stops at the round-off floor), and
 * the steps end where refactor: always puts them within a small fraction of the cloth's motion. */
static void test_modified_newton_reuses_factor(void)
{
    paired_drape p = run_paired_drape("solvers.newton.refactor=always");
    fprintf(stderr, "  auto: %d factorizations, %d iterations; always: %d, %d; max |x_auto - x_always| %.2e m "
            "(motion %.2e m)\n", p.fa, p.ia, p.fb, p.ib, p.worst, p.moved);
    CU_ASSERT(p.most_a < 50);
    CU_ASSERT_EQUAL(p.fb, p.ib);
    CU_ASSERT(p.fa < p.ia);
    CU_ASSERT(p.fa < p.fb);
    CU_ASSERT(p.worst <= 0.01 * p.moved);
}

/* hinge_reuse (on by default with refactor: auto) against every hinge's Hessian evaluated at
 * each factorization (hinge_reuse: 0) on the drape through the impact: every step meets
 * the tolerance in both, the positions agree within a small fraction of the cloth's
 * motion, and the reuse costs at most a few iterations more in all. */
static void test_hinge_reuse_converges(void)
{
    paired_drape p = run_paired_drape("solvers.newton.hinge_reuse=0");
    fprintf(stderr, "  hinge_reuse 0.01: %d iterations; 0: %d; max |x_reuse - x_exact| %.2e m (motion %.2e m), "
            "max residual %.2e\n", p.ia, p.ib, p.worst, p.moved, p.res);
    CU_ASSERT(p.res <= 1e-4);
    CU_ASSERT(p.worst <= 0.01 * p.moved);
    CU_ASSERT(p.ia <= p.ib + p.ib / 10);
}

/* initial_guess: acceleration (the default) against inertial (x = y) on the drape:
 * in free fall (its first 0.15 s) every step after the first starts at the solution
 * (no iteration: the last step's change of velocity is gravity's); through the impact
 * every step meets the tolerance in both, and the positions agree within a small
 * fraction of the cloth's motion. */
static void test_initial_guess(void)
{
    paired_drape p = run_paired_drape("solvers.newton.initial_guess=inertial");
    fprintf(stderr, "  initial_guess acceleration: %d iterations (%d in free fall after the first step); inertial: %d; "
            "max |x_a - x_i| %.2e m (motion %.2e m), max residual %.2e\n", p.ia, p.falling, p.ib, p.worst, p.moved,
            p.res);
    CU_ASSERT_EQUAL(p.falling, 0);
    CU_ASSERT(p.res <= 1e-4);
    CU_ASSERT(p.worst <= 0.01 * p.moved);
    CU_ASSERT(p.ia < p.ib);
}

static void test_parameters_checked(void)
{
    const char *bad[] = {"solvers.newton.tolerance=0", "solvers.newton.max_iterations=0", "solvers.newton.iterations=3",
                         "solvers.newton.hinge_reuse=2"};
    const char *needle[] = {"tolerance", "max_iterations", "unknown key 'iterations'", "hinge_reuse"};
    for (int i = 0; i < 4; i++) {
        cb_sim r;
        CU_ASSERT_EQUAL(run_open(&r, "newton", "data/scenes/hanging.yaml", &bad[i], 1), CB_ERR_INPUT);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.e.message, needle[i]));
        CU_ASSERT_PTR_NULL(r.solver);
        cb_sim_close(&r);
    }
}

CB_TEST_MAIN("newton",
             CB_TEST(test_superlinear_convergence),
             CB_TEST(test_minimises_g),
             CB_TEST(test_compressed_cloth),
             CB_TEST(test_contact_penalty_fd),
             CB_TEST(test_friction_fd),
             CB_TEST(test_modified_newton_reuses_factor),
             CB_TEST(test_parameters_checked),
             CB_TEST(test_extra_pairs_keep_model),
             CB_TEST(test_hinge_cache),
             CB_TEST(test_hinge_reuse_converges),
             CB_TEST(test_initial_guess))
