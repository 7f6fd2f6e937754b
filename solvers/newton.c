/* solvers/newton.c — implicit Euler on the shared cloth model (edge springs and the
 * discrete-shells hinge energy) solved by Newton's method; with the bending of fms
 * (quadratic or springs) the reference that fms converges to.
 *
 * Paper: the baseline of Liu et al. 2013 ("Fast Simulation of Mass-Spring Systems",
 * section 5: Newton's method with a direct solver); Nocedal & Wright, "Numerical
 * Optimization", ch. 3 (backtracking line search), 3.4 (Hessian modification) and
 * 17.1 (quadratic penalty); collider contact as the quadratic penalty of Projective
 * Dynamics' collision constraints (Bouaziz et al. 2014, sec. 5: 1/2 w dist(x, C)^2),
 * the same term fms minimises (solvers/spring_solver.h, cb_spring_contact_penalty),
 * with a line search that keeps vertices out of the colliders (the feasibility filter
 * of barrier methods, Li et al. 2020 "Incremental Potential Contact", sec. 4, applied to
 * the end points of the trial steps).
 *
 * Algorithm. The same objective as fms (solvers/springs.h),
 *     g(x) = 1/2 (x - y)^T M (x - y) + h^2 E(x) - h^2 x^T f_ext + P(x) + F(x),
 * y = q_n + (1 - damping) h v_n, the same spring set, P the contact penalty
 * sum_i 1/2 c m_i min(0, d_i)^2 (d_i: distance of vertex i from the nearest collider at
 * t + h minus contact_offset; P = 0 with contact: projection), F the lagged collider
 * friction of Incremental Potential Contact (Li et al. 2020, sec. 5; spring_solver.h,
 * cb_spring_friction: mu times the last step's penalty normal force times a smoothed
 * |tangential slip|, a convex C1 term of x whose gradient and PSD Hessian newton uses as
 * they are, tests/test_newton.c checks both by finite differences). E the edge springs
 * plus the bending term (`bending`, solvers/bending.h: shells by default). Starting from
 * the initial guess (below), each iteration solves H dx = -grad g(x) with H = M + h^2 (sum_i H_i + sum_j B_j)
 * + sum_i c m_i n_i n_i^T + hess F, B_j the 12 x 12 Hessian of hinge j's bending term
 * (shells: the exact one projected to positive semi-definite per hinge by its
 * eigen-decomposition, on the 8 x 8 complement of its four null vectors, solvers/bending.c
 * says why and how; quadratic: constant), and where the
 * 3x3 block of spring i, with u = (p_a - p_b)/l,
 *     H_i = k_i (u u^T + max(0, 1 - r_i/l) (I - u u^T))
 * is the spring Hessian with its transverse part clamped at 0 (a compressed spring's
 * Hessian is indefinite; the clamp projects it to positive semi-definite, so H is SPD),
 * and the contact block is P's Gauss-Newton Hessian (exact for planes; the curvature
 * term of a curved collider, negative semi-definite for a convex one, is left out).
 * H is 3m x 3m over the free vertices (pinned vertices are eliminated: fixed at their
 * targets), factored with CHOLMOD (the pattern and the fill-reducing ordering are
 * analysed once; one thread unless `threads` says more, cholmod_util.h).
 * Initial guess (initial_guess: acceleration, the default with refactor: auto;
 * inertial with always, so the classic reference is as before): x = y + h^2 a, a the last
 * step's (v_n - v_{n-1}) / h_{n-1} (after its contact stage), which is exact in free
 * fall (no iteration) and near it for a cloth that keeps accelerating as it did; a
 * vertex outside the colliders at y that the guess would put inside stays at y, and the
 * guess is taken only when g(guess) < g(y), else x = y (initial_guess: inertial, and the
 * first step, always). The tolerance stays relative to |grad g(y)|, so it asks for the
 * same |grad g| whatever the start. On the bench drape (steps 2..10) 3.0 -> 2.4
 * iterations per step at 20 x 20 and 5.2 -> 4.1 at 60 x 60 (factorizations 0.33 -> 0.33,
 * 1.44 -> 1.11); on the drape to 0.5 s at 20 x 20 8.7 -> 8.2 iterations (2.48 -> 2.47
 * factorizations), to 0.2 s at 60 x 60 10.6 -> 9.8 (2.49 -> 2.36).
 * Hinge reuse (hinge_reuse, default 0.01 with refactor: auto, 0 with always): the
 * projected 12 x 12 Hessian of a hinge is the assembly's dearest part (the 8 x 8 eigen-
 * problem, ~2.4 us per hinge: at 60 x 60 more than the factorization), so the assembly
 * keeps each hinge's block with the positions it was evaluated at and reuses it while
 * the hinge's shape moved by at most hinge_reuse times its edge length (each vertex's
 * offset from the hinge's first vertex; a translation reuses it exactly, a rotation or
 * bending by ~hinge_reuse radians changes the block by ~hinge_reuse of itself:
 * cb_spring_solver_hinge_cache). H is then the Hessian at the iterate up to those
 * blocks, which the modified Newton already accepts for the whole matrix (a reused
 * factor); the line search and the stopping test are on the exact g and its gradient,
 * so the tolerance means what it did. A fresh factor with reused blocks whose step the
 * line search rejects is redone with every hinge evaluated before newton gives up. On
 * the 20 x 20 drape to 0.5 s, 67% of the hinges are reused at 0.01 with the same
 * iterations per step (82% at 0.03, 1% more iterations); in the bench drape's first 10
 * steps nearly all.
 * Modified Newton (refactor: auto, the default): the factor of an earlier iterate — of
 * this step or of an earlier one — is reused while it converges: H is reassembled and
 * refactored after an iteration whose gradient fell by less than refactor_rate (default
 * 0.9), whose step the line search cut unless the gradient still fell by half
 * (CUT_KEEP_RATE: a cut where contacts appear is mostly followed by full steps of the
 * same factor; on the drape at 20 x 20 to 0.5 s and 60 x 60 to 0.2 s, 17% and 13% fewer
 * factorizations for 1% more iterations), or after which the tolerance is more than 15
 * iterations away at the rate just seen (a factorization costs ~15 solves: ~10 M
 * against ~0.7 M instructions at 20 x 20), and when dt changed. (With the clamped Hessian even a fresh
 * factor converges only linearly, ~x0.7 per iteration on the drape, so a reused factor
 * loses little per iteration and saves a factorization, ~20 solves.) refactor: always
 * is the classic method, one factorization per iteration (the tight reference of
 * analysis/figures/fms_convergence, with tolerance 1e-8 or below).
 * Backtracking (Armijo, c = 1e-4, halving) from the full step, trial points with a
 * vertex that was outside a collider's surface and would end inside rejected. Stops when |grad g| <=
 * tolerance |grad g(y)|, after max_iterations, or when the line search of a fresh factor
 * cannot decrease g any more (round-off; then, and when it only found a decrease at a
 * step below 1e-3, the full step is taken if it halves |grad g|, so the tolerance can go
 * down to round-off), or when |grad g| reaches its round-off floor 2e-16 |D y|, D =
 * diag(M + h^2 L) (a cloth at rest has grad g(y) ~ 0, where a relative test is
 * meaningless; the residual is then reported as the tolerance). The line search
 * evaluates g from x - y, without the large constant terms whose round-off would hide
 * the decrease near the solution.
 * Default tolerance 1e-4: on the 20 x 20 drape (drape_sphere.yaml, dt 5 ms) its
 * trajectory stays within 0.31 mm of the classic 1e-8 one through the impact (t <= 0.3
 * s, the frames' positions; fms with 10 iterations: 217 mm; tolerance 1e-3: 3.2 mm), at
 * 4.3 iterations and 1.73 factorizations per step (1e-8 with refactor: always: 8.2 and
 * 8.2). Re-measured 2026-11-26 (issue 35); before hinge_reuse, CUT_KEEP_RATE and the
 * initial guess: 0.49 mm, 5.25 and 1.82 per step (1e-3: 4.1 mm).
 *
 * The normal forces of F are lagged by a step (IPC's lagging with one update per step):
 * the first step of a run in which the penalty acts is solved twice, the second time
 * with the normal forces of the first (otherwise a cloth starting at rest on a slope
 * slides without friction for one step, 2.4 cm/s on the 30 degree incline).
 * Mapping from the shared cloth model and contact: edge springs k_stretch; bending
 * (`bending`): shells (the default) is the shared model's hinge energy k_bend w (theta -
 * theta0)^2 exactly, so newton solves the model the reference and explicit solve;
 * quadratic and springs are fms's bending terms (solvers/fms.c), for comparing fms
 * with the Newton solution of its own energy; `springs: classic` takes bending: springs
 * (its skip-one springs bend); gravity as f_ext, collider contact and friction in the
 * solve (contact: constraint) and then the end-of-step stage of solvers/step_contact.h
 * (self contact, and the collider projection with restitution and friction: the
 * vertices the penalty holds just inside the offset are in contact for it; its friction,
 * mu times the normal velocity it removes, is the Coulomb friction of the last 1/(1 + c)
 * of the normal impulse, see cb_spring_friction), solver_energy = E(x). Collider friction
 * meets Coulomb's threshold and sliding rate (tests/test_friction.c: the 30 degree
 * incline, 0.330 m in 1 s at mu 0.5 for 0.329, 0.6 mm at mu 0.7).
 * Self friction: after the solve only (step_contact.h: Coulomb, self_friction times the
 * normal velocity change of each self-contact pair; self contact is not in the solve, so
 * that stage carries the whole self normal impulse and its friction is Coulomb's).
 * external_impulse = attachments (h times the spring and bending forces from pinned
 * vertices on free ones at x_{n+1}) + damping + colliders (the penalty's and friction's,
 * -(1/h) grad (P + F)(x_{n+1}), and the projection's). external_work = each of those
 * impulses but damping times the velocity of what applies it: the pin's at t1, the
 * nearest collider's surface at x_i (the penalty; friction: its lagged collider), the
 * projection's collider (cb_spring_contact_work, cb_world_resolve_collider_contact).
 *
 * Cost: bending: shells takes about 2-3x the CPU per step of bending: springs on the
 * accuracy scene (12 x 12, dt 1/960 s, tolerance 1e-10: 0.20 s against 0.07 s of CPU for
 * 96 steps, 2026-11-26, load ~11; 0.56 s before the hinge projection became an 8 x 8
 * problem solved by QL, solvers/bending.c), most of it the projection of every hinge's
 * Hessian at each refactorization (an analytic eigen-system of the dihedral angle's
 * Hessian would cut it further; not done).
 * What it does not do: no trust region (the projected Hessian plus the line search is
 * globally convergent on this convex-plus-spring objective); no continuous collision
 * detection (the filter tests the end points of a trial step, enough for steps much
 * shorter than the colliders' radii of curvature); self contact is not in the solve
 * (after it, as before), and it is fms's stage: vertex-triangle pairs at the end of the
 * step only, no edge-edge pairs (solvers/step_contact.h); the penalty lets a vertex driven in sit up to delta/(1 + c)
 * inside the offset (c = contact_stiffness), the end-of-step projection then moves it
 * to the offset.
 *
 * Parameters (solvers.newton): tolerance (relative gradient, > 0, default 1e-4),
 * max_iterations (>= 1, default 50), refactor (auto | always, default auto),
 * refactor_rate (in [0, 1], default 0.9), hinge_reuse (in [0, 1], default 0.01 with
 * refactor: auto, 0 with always), initial_guess (acceleration | inertial, default
 * acceleration with refactor: auto, inertial with always), damping, springs, bending (shells |
 * quadratic | springs, default shells), self_collision,
 * self_friction, self_iterations, contact_offset, factor, self_cache, contact,
 * contact_stiffness, friction_velocity, threads — as fms (the parameters and the frame of the step are
 * shared with fms in solvers/spring_solver.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/solver.h"
#include "core/vec3.h"
#include "solvers/spring_solver.h"

/* The default relative tolerance (see the header comment and the report of issue 14). */
#define NEWTON_TOLERANCE 1e-4
/* A factorization costs about this many solves with it (3 x 400 unknowns: ~10 M
 * instructions against ~0.7 M, one thread) */
#define REFACTOR_WORTH 15.0
/* The default hinge_reuse of refactor: auto (see the header comment) */
#define NEWTON_HINGE_REUSE 0.01
/* A step the line search cut keeps the factor when it still took the gradient down by
 * this factor (see the header comment) */
#define CUT_KEEP_RATE 0.5

typedef struct newton_solver {
    double tolerance;
    int max_iterations;
    int refactor;          /* REFACTOR_* */
    double slow;           /* refactor when |grad g| falls by less than this factor */
    cb_spring_solver ss;   /* springs, unknowns, system (blocks 3 x 3), y, dx, contact */
    double (*xt)[3];       /* [nv] trial positions */
    double (*dxt)[3];      /* [nv] trial x - y */
    double (*hc)[3][3];    /* [nfree] contact Hessian blocks */
    double *dsurf;         /* [nv] distance of the current iterate from the colliders (contact: constraint) */
    double h_factored;     /* h of the current factor (0: none) */
    double (*vlast)[3];    /* [nv] velocities at the start of the last step */
    double h_last;         /* its h (0: no last step) */
    double (*guess)[3];    /* [nv] x - y of this step's initial guess: h^2 times the last step's dv/dt */
    int use_guess;         /* 1 while this step's guess is still to be tried */
    int guess_kind;        /* GUESS_* (initial_guess) */
} newton_solver;

enum { REFACTOR_AUTO = 0, REFACTOR_ALWAYS = 1 };
static const char *const refactor_names[] = {"auto", "always", NULL};
enum { GUESS_ACCELERATION = 0, GUESS_INERTIAL = 1 };
static const char *const guess_names[] = {"acceleration", "inertial", NULL};

static void newton_destroy(void *self)
{
    newton_solver *s = self;
    if (!s) return;
    cb_spring_solver_release(&s->ss);
    free(s->xt);
    free(s->dxt);
    free(s->hc);
    free(s->dsurf);
    free(s->vlast);
    free(s->guess);
    free(s);
}

static int newton_create(const cb_world *w, const cb_params *p, void **self, cb_error *err)
{
    if (!w || !self) return CB_FAIL(err, CB_ERR_INPUT, "newton: NULL argument");
    *self = NULL;
    newton_solver *s = cb_calloc(1, sizeof *s);
    if (!s) return CB_FAIL(err, CB_ERR_NOMEM, "newton: out of memory");
    cb_params q;
    int rc = cb_params_begin(p, &q, err);
    if (!rc) rc = cb_params_double(&q, "tolerance", NEWTON_TOLERANCE, 1e-300, 1.0, &s->tolerance,
                                   "stop when |grad g| falls below this", err);
    if (!rc) rc = cb_params_int(&q, "max_iterations", 50, 1, 1000000, &s->max_iterations,
                                "Newton iterations per step at most", err);
    if (!rc) rc = cb_params_choice(&q, "refactor", refactor_names, REFACTOR_AUTO, &s->refactor,
                                   "auto: reuse the factor while it converges; always: classic Newton", err);
    if (!rc) rc = cb_params_double(&q, "refactor_rate", 0.9, 0.0, 1.0, &s->slow,
                                   "refactor after an iteration whose gradient fell by less than this factor", err);
    if (!rc) rc = cb_params_choice(&q, "initial_guess", guess_names,
                                   s->refactor == REFACTOR_AUTO ? GUESS_ACCELERATION : GUESS_INERTIAL, &s->guess_kind,
                                   "acceleration: y + h^2 times the last step's dv/dt when that lowers g; inertial: y", err);
    double reuse = 0.0;
    if (!rc) rc = cb_params_double(&q, "hinge_reuse", s->refactor == REFACTOR_AUTO ? NEWTON_HINGE_REUSE : 0.0, 0.0, 1.0,
                                   &reuse, "reuse a hinge's Hessian while its shape changed by less than this fraction "
                                   "of its edge (0: every hinge at each factorization)", err);
    if (!rc) rc = cb_spring_solver_configure(&s->ss, "newton", w, &q, CB_BENDING_SHELLS, 1, err);
    rc = cb_params_end(p, &q, rc, err);
    if (rc) {
        if (rc != CB_ERR_NOMEM) cb_error_prefix(err, "newton: ");
        newton_destroy(s);
        return rc;
    }
    int nv = w->nv;
    s->xt = cb_calloc((size_t)nv, sizeof *s->xt);
    s->dxt = cb_calloc((size_t)nv, sizeof *s->dxt);
    s->hc = cb_calloc((size_t)nv + 1, sizeof *s->hc);
    s->dsurf = cb_calloc((size_t)nv + 1, sizeof *s->dsurf);
    s->vlast = cb_calloc((size_t)nv + 1, sizeof *s->vlast);
    s->guess = cb_calloc((size_t)nv + 1, sizeof *s->guess);
    rc = s->xt && s->dxt && s->hc && s->dsurf && s->vlast && s->guess
             ? CB_OK
             : CB_FAIL(err, CB_ERR_NOMEM, "newton: out of memory for %d vertices", nv);
    if (!rc) rc = cb_spring_solver_setup(&s->ss, w, 3, "newton: the Hessian M + h^2 H", err);
    if (!rc && reuse > 0) rc = cb_spring_solver_hinge_cache(&s->ss, reuse, err);
    if (rc) {
        newton_destroy(s);
        return rc;
    }
    *self = s;
    return CB_OK;
}

static int contact_on(const newton_solver *s) { return s->ss.contact_mode == CB_SPRING_CONTACT_CONSTRAINT; }

/* H = M + h^2 sum H_i (projected) + the contact blocks at x, and factor it. */
static int assemble_factor(newton_solver *s, const cb_world *w, const double (*x)[3], double h, double t1,
                           cb_error *err)
{
    if (contact_on(s)) {
        cb_spring_contact_penalty(&s->ss, w, t1, x, NULL, s->hc);
        cb_spring_friction(&s->ss, w, h, t1, x, NULL, s->hc, NULL);
    }
    cb_spring_solver_assemble(&s->ss, w, x, h, contact_on(s) ? (const double (*)[3][3])s->hc : NULL);
    s->h_factored = 0.0;
    int rc = cb_spring_solver_factor(&s->ss, w, h, err);
    if (!rc) s->h_factored = h;
    return rc;
}

/* Trial point x = y + (dx + alpha step) on the free vertices (pins stay put). */
static void trial(newton_solver *s, const double *step, double alpha)
{
    const cb_spring_solver *ss = &s->ss;
    for (int u = 0; u < ss->nfree; u++) {
        int i = ss->vert[u];
        for (int k = 0; k < 3; k++) {
            s->dxt[i][k] = ss->dx[i][k] + alpha * step[3 * u + k];
            s->xt[i][k] = ss->y[i][k] + s->dxt[i][k];
        }
    }
}

/* g(y + dx) - g(y) up to the constant h^2 E(y) (cb_spring_solver_objective), with the
 * contact penalty P(x) and the friction F(x). */
static double objective(const newton_solver *s, const cb_world *w, const double (*dx)[3], const double (*x)[3],
                        double h, double t1)
{
    double g = 0.0;
    if (contact_on(s))
        g += cb_spring_contact_penalty(&s->ss, w, t1, x, NULL, NULL) + cb_spring_friction(&s->ss, w, h, t1, x, NULL, NULL, NULL);
    return cb_spring_solver_objective(&s->ss, w, dx, x, h, g);
}

/* grad g(x) into ss->grad (springs, inertia, gravity and the contact penalty); |grad g|. */
static double gradient(newton_solver *s, const cb_world *w, const double (*x)[3], double h, double t1)
{
    cb_spring_solver *ss = &s->ss;
    double gn = cb_spring_solver_gradient(ss, w, x, h);
    if (!contact_on(s)) return gn;
    cb_spring_contact_penalty(ss, w, t1, x, ss->grad, NULL);
    cb_spring_friction(ss, w, h, t1, x, ss->grad, NULL, NULL);
    double n2 = 0.0;
    for (int u = 0; u < ss->nfree; u++) n2 += cb_v3_norm2(ss->grad[ss->vert[u]]);
    return sqrt(n2);
}

/* Distances of x's free vertices from the colliders (contact: constraint), into d. */
static void surface_distances(const newton_solver *s, const cb_world *w, const double (*x)[3], double t1, double *d)
{
    for (int u = 0; u < s->ss.nfree; u++) {
        int i = s->ss.vert[u];
        d[u] = cb_spring_contact_query(&s->ss, w, t1, x[i], NULL) + s->ss.contact_offset;
    }
}

/* 1 when the trial point keeps outside the colliders every vertex that is outside now
 * (distance >= 0 at the current iterate): the line search's feasibility filter. */
static int trial_outside(const newton_solver *s, const cb_world *w, double t1)
{
    for (int u = 0; u < s->ss.nfree; u++) {
        if (!(s->dsurf[u] >= 0)) continue;
        int i = s->ss.vert[u];
        if (cb_spring_contact_query(&s->ss, w, t1, s->xt[i], NULL) + s->ss.contact_offset < 0) return 0;
    }
    return 1;
}

/* The Newton iterations of a step from x = y (ss->dx = 0), or from the initial guess
 * when s->use_guess (the first solve of a step): x, ss->dx at the end; adds
 * its iterations and factorizations to *iters and *nfact; the relative gradient into
 * *residual. */
static int newton_solve(newton_solver *s, cb_world *w, double h, double t1, cb_step_info *info, cb_lap_timer *lap,
                        int *iters_p, int *nfact_p, double *residual, cb_error *err)
{
    cb_spring_solver *ss = &s->ss;
    const cb_spring_set *sp = &ss->sp;
    double (*x)[3] = w->state.x;
    const double (*cx)[3] = (const double (*)[3])x;
    int iters = 0, nfact = *nfact_p;
    double gn0 = gradient(s, w, cx, h, t1), gn = gn0;
    double g = objective(s, w, (const double (*)[3])ss->dx, cx, h, t1);
    if (contact_on(s)) surface_distances(s, w, cx, t1, s->dsurf);
    /* round-off floor of the gradient: its terms M (x - y) and h^2 k (l - r) are
     * computed from positions of size |y|, so |grad g| cannot go much below
     * eps |D y|, D = diag(M + h^2 L) */
    double *kdeg = (double *)s->xt; /* scratch, overwritten by the first trial */
    for (int i = 0; i < w->nv; i++) kdeg[i] = 0.0;
    for (int i = 0; i < sp->n; i++) {
        kdeg[sp->ij[i][0]] += sp->k[i];
        kdeg[sp->ij[i][1]] += sp->k[i];
    }
    double dy2 = 0.0;
    for (int u = 0; u < ss->nfree; u++) {
        int i = ss->vert[u];
        double dii = w->mass[i] + h * h * kdeg[i];
        dy2 += dii * dii * cb_v3_norm2(ss->y[i]);
    }
    memcpy(s->xt, x, (size_t)w->nv * sizeof *x);
    double floor_abs = 2e-16 * sqrt(dy2);
    /* the initial guess (initial_guess: acceleration): y + h^2 a, a = the last step's
     * (v_n - v_{n-1}) / h_{n-1}, a vertex outside the colliders at y kept at y when the
     * guess would put it inside; taken when it lowers g. The tolerance stays relative to
     * |grad g(y)|. */
    if (s->use_guess) {
        s->use_guess = 0;
        for (int u = 0; u < ss->nfree; u++) {
            int i = ss->vert[u];
            for (int k = 0; k < 3; k++) {
                s->dxt[i][k] = s->guess[i][k];
                s->xt[i][k] = ss->y[i][k] + s->dxt[i][k];
            }
            if (contact_on(s) && s->dsurf[u] >= 0 &&
                cb_spring_contact_query(ss, w, t1, s->xt[i], NULL) + ss->contact_offset < 0) {
                cb_v3_zero(s->dxt[i]);
                cb_v3_copy(s->xt[i], ss->y[i]);
            }
        }
        double g1 = objective(s, w, (const double (*)[3])s->dxt, (const double (*)[3])s->xt, h, t1);
        if (g1 < g) {
            memcpy(x, s->xt, (size_t)w->nv * sizeof *x);
            memcpy(ss->dx, s->dxt, (size_t)w->nv * sizeof *ss->dx);
            g = g1;
            gn = gradient(s, w, cx, h, t1);
            if (contact_on(s)) surface_distances(s, w, cx, t1, s->dsurf);
        } else {
            memcpy(s->xt, x, (size_t)w->nv * sizeof *x);
            gradient(s, w, cx, h, t1);
        }
    }
    /* modified Newton: the factor of an earlier iterate (of this or an earlier step)
     * is kept while it converges fast enough */
    int stale = s->refactor == REFACTOR_ALWAYS || s->h_factored != h;
    while (gn > s->tolerance * gn0 && gn > floor_abs && iters < s->max_iterations) {
        if (iters > 0 && cb_interrupt_requested()) {
            info->factorizations += nfact;
            return CB_FAIL(err, CB_ERR_INTERRUPTED, "newton: interrupted by a signal in iteration %d", iters);
        }
        cb_lap(lap, "setup");
        int fresh = 0;
        if (stale) {
            int rc = assemble_factor(s, w, cx, h, t1, err);
            nfact++;
            if (rc) {
                info->factorizations += nfact;
                return rc;
            }
            fresh = 1;
            stale = s->refactor == REFACTOR_ALWAYS;
        }
        double *B = cb_chol_rhs(ss->chol);
        for (int u = 0; u < ss->nfree; u++)
            for (int k = 0; k < 3; k++) B[3 * u + k] = -ss->grad[ss->vert[u]][k];
        cb_lap(lap, "assemble+factor");
        const double *dx;
        int rc = cb_chol_solve(ss->chol, &dx, err);
        if (rc) {
            info->factorizations += nfact;
            return rc;
        }
        cb_lap(lap, "solve");
        double slope = 0.0;
        for (int u = 0; u < ss->nfree; u++)
            for (int k = 0; k < 3; k++) slope -= dx[3 * u + k] * B[3 * u + k];
        iters++;
        /* backtracking line search (Armijo), keeping outside vertices outside */
        double alpha = 1.0, gt = INFINITY;
        int accepted = 0, feasible = 0;
        for (int ls = 0; ls < 40 && slope < 0; ls++) {
            trial(s, dx, alpha);
            if (!contact_on(s) || trial_outside(s, w, t1)) {
                feasible = 1;
                gt = objective(s, w, (const double (*)[3])s->dxt, (const double (*)[3])s->xt, h, t1);
                if (gt <= g + 1e-4 * alpha * slope) {
                    accepted = 1;
                    break;
                }
            }
            alpha *= 0.5;
        }
        if ((!accepted || alpha < 1e-3) && fresh && slope < 0 && feasible) {
            /* g cannot resolve the decrease any more (round-off; or only by noise at
             * a tiny step): take the full step if it halves the gradient, else stop */
            trial(s, dx, 1.0);
            if (!contact_on(s) || trial_outside(s, w, t1)) {
                double gnt = gradient(s, w, (const double (*)[3])s->xt, h, t1);
                if (gnt < 0.5 * gn) {
                    accepted = 1;
                    alpha = 1.0;
                    gt = objective(s, w, (const double (*)[3])s->dxt, (const double (*)[3])s->xt, h, t1);
                } else if (accepted) {
                    trial(s, dx, alpha); /* back to the Armijo point */
                }
            }
        }
        cb_lap(lap, "line_search");
        if (!accepted) {
            if (fresh && ss->hinge_reused == 0) break;
            if (fresh) cb_spring_solver_hinge_forget(ss); /* refactor with every hinge evaluated here */
            stale = 1; /* an old factor that no longer gives a descent: refactor */
            gradient(s, w, cx, h, t1);
            continue;
        }
        memcpy(x, s->xt, (size_t)w->nv * sizeof *x);
        memcpy(ss->dx, s->dxt, (size_t)w->nv * sizeof *ss->dx);
        g = gt;
        double gprev = gn;
        gn = gradient(s, w, cx, h, t1);
        if (contact_on(s)) surface_distances(s, w, cx, t1, s->dsurf);
        /* keep the factor only while its steps are full Newton-like steps: refactor
         * after an iteration (with a fresh factor or a reused one) whose gradient fell
         * by less than refactor_rate, or whose step the line search had to cut (far
         * from the solution, a contact that appeared, a fold: H changes quickly) unless
         * the gradient still fell by CUT_KEEP_RATE, or when at this rate the tolerance
         * is more than REFACTOR_WORTH iterations away */
        double rate = gn / gprev, target = fmax(s->tolerance * gn0, floor_abs);
        if (!(rate <= s->slow) || (alpha < 1.0 && !(rate <= CUT_KEEP_RATE)) ||
            (gn > target && log(target / gn) / log(rate) > REFACTOR_WORTH))
            stale = 1;
    }
    *residual = gn0 > 0 ? gn / gn0 : 0.0;
    *iters_p += iters;
    *nfact_p = nfact;
    return CB_OK;
}

static int newton_step(void *self, cb_world *w, double dt, cb_step_info *info, cb_error *err)
{
    newton_solver *s = self; /* arguments checked by cb_solver_step */
    cb_spring_solver *ss = &s->ss;
    double h = dt, t1 = w->state.t + h;
    double (*x)[3] = w->state.x;
    const double (*cx)[3] = (const double (*)[3])x;
    double imp[3] = {0, 0, 0}, work = 0.0;
    cb_lap_timer lap;
    cb_lap_start(&lap, info);
    /* the last step's change of velocity for this step's initial guess (newton_solve) */
    s->use_guess = s->guess_kind == GUESS_ACCELERATION && s->h_last > 0;
    for (int i = 0; i < w->nv; i++)
        for (int k = 0; k < 3; k++) {
            if (s->use_guess) s->guess[i][k] = h * h * (w->state.v[i][k] - s->vlast[i][k]) / s->h_last;
            s->vlast[i][k] = w->state.v[i][k];
        }
    s->h_last = h;
    cb_spring_solver_predict(ss, w, h, t1, imp);
    memcpy(s->xt, x, (size_t)w->nv * sizeof *x);
    int iters = 0, nfact = 0;
    double residual = NAN;
    if (ss->nfree > 0) {
        int rc = newton_solve(s, w, h, t1, info, &lap, &iters, &nfact, &residual, err);
        /* the first step in contact has no lagged normal forces for the friction
         * (cb_spring_friction): take them from this solve and solve again from y */
        if (!rc && contact_on(s) && !ss->lagged) {
            cb_spring_friction_lag(ss, w, h, t1, cx);
            if (ss->nfric > 0) {
                for (int u = 0; u < ss->nfree; u++) cb_v3_copy(x[ss->vert[u]], ss->y[ss->vert[u]]);
                memset(ss->dx, 0, (size_t)w->nv * sizeof *ss->dx);
                rc = newton_solve(s, w, h, t1, info, &lap, &iters, &nfact, &residual, err);
            }
        }
        if (rc) return rc;
    }
    /* attachment impulse: h times the spring and bending forces from pinned on free
     * vertices; its work: that impulse times the pin's velocity at t1 */
    cb_spring_solver_pin_impulse(ss, w, cx, h, t1, imp, &work);
    /* collider impulse of the contact penalty and friction: h times their force
     * -(1/h^2) grad (P + F) */
    if (contact_on(s) && ss->nfree > 0) {
        memset(s->xt, 0, (size_t)w->nv * sizeof *s->xt);
        cb_spring_contact_penalty(ss, w, t1, cx, s->xt, NULL);
        cb_spring_friction(ss, w, h, t1, cx, s->xt, NULL, NULL);
        for (int u = 0; u < ss->nfree; u++) cb_v3_axpy(imp, -1.0 / h, s->xt[ss->vert[u]]);
        work += cb_spring_contact_work(ss, w, h, t1, cx, s->xt);
    }
    int rc = cb_spring_solver_finish(ss, w, h, t1, imp, work, info, &lap, err);
    if (rc) return rc;
    info->iterations = iters;
    info->residual = residual;
    info->factorizations += nfact;
    return CB_OK;
}

static int newton_self_collision(const void *self)
{
    return cb_step_contact_self_active(((const newton_solver *)self)->ss.contact);
}

static const char *newton_model(const void *self) { return cb_spring_solver_model(&((const newton_solver *)self)->ss); }

const cb_solver_class cb_solver_newton = {
    .name = "newton",
    .summary = "implicit Euler on the shared model (springs + shells bending) by projected Newton + line search",
    .flags = CB_SOLVER_CONTACT_STAGE | CB_SOLVER_STAGE_TIMES | CB_SOLVER_TOLERANCE | CB_SOLVER_COLLIDER_FRICTION |
             CB_SOLVER_MOVING_COLLIDERS,
    .bytes_per_vertex = 11700,
    .create = newton_create,
    .step = newton_step,
    .destroy = newton_destroy,
    .self_collision = newton_self_collision,
    .model = newton_model,
};
