/* solvers/fms.c — Fast Simulation of Mass-Spring Systems.
 *
 * Paper: T. Liu, A. W. Bargteil, J. F. O'Brien, L. Kavan, "Fast Simulation of
 * Mass-Spring Systems", ACM Trans. Graph. 32(6) (SIGGRAPH Asia 2013), sections 3-4
 * (notes: /work/shared/papers/fast-mass-spring-liu2013-notes-zh.txt).
 *
 * Algorithm. Implicit Euler is the minimisation of
 *     g(x) = 1/2 (x - y)^T M (x - y) + h^2 E(x) - h^2 x^T f_ext,
 *     y = q_n + (1 - damping) (q_n - q_{n-1}) = q_n + (1 - damping) h v_n,
 * with E the spring energy sum 1/2 k_i (|p_a - p_b| - r_i)^2. Writing each spring's
 * energy as min over |d_i| = r_i of 1/2 k_i |p_a - p_b - d_i|^2, g becomes a function
 * of (x, d) minimised by block-coordinate descent, starting from x = y:
 *   local step:  d_i = r_i (p_a - p_b) / |p_a - p_b|                (every spring)
 *   global step: (M + h^2 L) x = h^2 J d + M y + h^2 f_ext          (one linear solve)
 * L = sum k_i A_i A_i^T and J = sum k_i A_i S_i^T (A_i = e_a - e_b) act the same on x,
 * y and z, so the m x m matrix (M + h^2 L) serves all three coordinates: it is factored
 * once with CHOLMOD and each global step is one solve with an m x 3 right-hand side.
 * Neither step can increase g, so g decreases monotonically and fms converges to the
 * implicit-Euler solution (the `newton` solver computes it directly). The matrix is
 * refactored only when dt changes (stiffnesses and pins are fixed for a run);
 * cb_step_info.factorizations counts it.
 *
 * Pinned vertices are eliminated: the unknowns are the free vertices only; a spring
 * from free vertex a to pinned vertex b adds k to L_aa and k x_b(t+h) to the
 * right-hand side, so scripted attachments never trigger a refactorization.
 * The global step is solved for the increment x - y, (M + h^2 L)(x - y) =
 * h^2 (J d - L y + f_ext): the same solution, but the round-off of the solve is
 * relative to |x - y| instead of |x|, which keeps linear momentum exact to round-off
 * (solving for x directly drifts by ~1e-9 relative over 1000 steps).
 * After the iterations v = (x - q_n)/h, then contact (solvers/step_contact.h): self
 * collision (vertex-triangle, spatial hash from contact/, pushed apart to the cloth
 * thickness, inelastic with friction) and collider projection with restitution and
 * friction; its wall time is wall_contact_s.
 *
 * Mapping from the shared cloth model (solvers/springs.c): the edge springs are the
 * shared stretch term exactly (k_stretch); bending is represented by a spring across
 * each hinge between its opposite vertices, with stiffness chosen so that spring and
 * hinge store the same energy at a right-angle fold. `springs: classic` (grids only)
 * uses the classic structural/shear/bend set instead (6n^2 - 10n + 2 springs for
 * n x n). The spring energy E is the method's own model energy (solver_energy).
 * Gravity is f_ext = M g; lumped masses as in the world.
 *
 * Performance. The global step is one cb_chol_solve3 (cholmod_util.h): CHOLMOD gives
 * the fill-reducing ordering and the numeric factor, the triangular solves are our own
 * over a copy of the factor in supernodes (dense column blocks with one row list each,
 * so one index per row of a supernode instead of one per entry, and a single copy
 * serves both triangular solves), with x, y and z interleaved so each factor entry is
 * read once per solve for the three coordinates (the solves are bound by reading the
 * factor). The local step and the right-hand side are one branch-free pass over a
 * flat spring array sorted by first vertex (ends, their right-hand-side rows, rest
 * length, stiffness). Self contact reuses its candidate pairs while the cloth moves
 * little (step_contact.h: exactly the same pairs as a query every step). Nothing is
 * allocated per step.
 *
 * Reported: iterations, residual = |grad g(x)| / |grad g(y)| after the iterations
 * (before contact; the relative gradient newton stops on), solver_energy = E(x) at
 * the end of the step, external_impulse = attachments (h times the spring forces
 * k (d_i - (p_a - p_b)) on the free ends of springs to pinned vertices, exact even
 * before convergence since the global step balances them) + damping
 * (-damping sum m v_n) + colliders. Stages: factor, local, global, contact.
 *
 * What it does not do: bending is only as good as bend springs (no small-angle
 * stiffness); no continuous collision detection — a vertex that passes a triangle by
 * more than the thickness within a step is pushed back only if still within the
 * thickness; a fixed iteration count, no convergence test (the paper's choice).
 *
 * Parameters (solvers.fms): iterations (>= 1, default 10), damping (in [0,1], default
 * 0), springs (model | classic), self_collision (bool, default true), self_friction
 * (>= 0, default 0.1), self_iterations (>= 1, default 2), contact_offset (>= 0, m;
 * default thickness/2: distance kept from colliders), factor (auto | simplicial |
 * supernodal: the CHOLMOD factorization kind), self_cache (bool, default true: the
 * self-contact candidate cache, same results either way). Everything but `iterations`, and the
 * frame of the step (unknowns, predictor, velocity update, contact), is shared with
 * newton in solvers/spring_solver.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/solver.h"
#include "core/vec3.h"
#include "solvers/spring_solver.h"

/* A spring as the iterations use it: ends, the rows of their unknowns in the
 * right-hand side (a pinned end writes to a scratch row nfree, so the loop has no
 * branch), rest length and stiffness, in one record so the local step streams
 * through memory. The records are sorted by their smaller end, so consecutive
 * springs touch nearby vertices. */
typedef struct fms_spring {
    int a, b, ua, ub;
    double rest, k;
} fms_spring;

static int spring_cmp(const void *pa, const void *pb)
{
    const fms_spring *p = pa, *q = pb;
    int lp = p->a < p->b ? p->a : p->b, lq = q->a < q->b ? q->a : q->b;
    int hp = p->a ^ p->b ^ lp, hq = q->a ^ q->b ^ lq; /* the other end */
    if (lp != lq) return lp < lq ? -1 : 1;
    return (hp > hq) - (hp < hq);
}

typedef struct fms_solver {
    int iterations;
    cb_spring_solver ss;   /* springs, unknowns, system (blocks 1 x 1), y, dx, contact */
    double h_factored;     /* dt of the current factor (0: none) */
    fms_spring *spr;       /* [nsprings] */
    double (*d)[3];        /* [nsprings] auxiliary directions, in the order of spr */
    double (*c)[3];        /* [nfree] constant part of the right-hand side, h^2 (f_ext - L y) */
    double (*b)[3];        /* [nfree + 1] right-hand side / solution, interleaved x, y, z; row
                            * nfree is scratch for the pinned ends of springs */
} fms_solver;

static const char *const own_keys[] = {"iterations", NULL};

static void fms_destroy(void *self)
{
    fms_solver *s = self;
    if (!s) return;
    cb_spring_solver_release(&s->ss);
    free(s->spr);
    free(s->d);
    free(s->c);
    free(s->b);
    free(s);
}

static int fms_create(const cb_world *w, const cb_params *p, void **self, cb_error *err)
{
    if (!w || !self) return CB_FAIL(err, CB_ERR_INPUT, "fms: NULL argument");
    *self = NULL;
    fms_solver *s = cb_calloc(1, sizeof *s);
    if (!s) return CB_FAIL(err, CB_ERR_NOMEM, "fms: out of memory");
    int rc = cb_params_int(p, "iterations", 10, 1, 1000000, &s->iterations, err);
    if (!rc) rc = cb_spring_solver_configure(&s->ss, "fms", w, p, own_keys, err);
    if (rc) {
        if (rc != CB_ERR_NOMEM) cb_error_prefix(err, "fms: ");
        fms_destroy(s);
        return rc;
    }
    int nv = w->nv, ns = s->ss.sp.n;
    s->d = cb_calloc((size_t)(ns > 0 ? ns : 1), sizeof *s->d);
    s->c = cb_calloc((size_t)nv, sizeof *s->c);
    s->b = cb_calloc((size_t)nv + 1, sizeof *s->b);
    s->spr = cb_calloc((size_t)(ns > 0 ? ns : 1), sizeof *s->spr);
    rc = s->d && s->c && s->b && s->spr ? CB_OK : CB_FAIL(err, CB_ERR_NOMEM, "fms: out of memory for %d vertices", nv);
    if (!rc) rc = cb_spring_solver_setup(&s->ss, w, 1, "fms: the global matrix M + h^2 L", err);
    if (rc) {
        fms_destroy(s);
        return rc;
    }
    for (int i = 0; i < ns; i++) {
        fms_spring *q = &s->spr[i];
        q->a = s->ss.sp.ij[i][0];
        q->b = s->ss.sp.ij[i][1];
        q->ua = s->ss.unk[q->a];
        q->ub = s->ss.unk[q->b];
        if (q->ua < 0) q->ua = s->ss.nfree;
        if (q->ub < 0) q->ub = s->ss.nfree;
        q->rest = s->ss.sp.rest[i];
        q->k = s->ss.sp.k[i];
    }
    qsort(s->spr, (size_t)ns, sizeof *s->spr, spring_cmp);
    /* directions of the rest shape, used when a spring has zero length */
    for (int i = 0; i < ns; i++) {
        cb_v3_sub(s->d[i], w->mesh->x[s->spr[i].a], w->mesh->x[s->spr[i].b]);
        cb_v3_normalize(s->d[i]);
        cb_v3_scale(s->d[i], s->d[i], s->spr[i].rest);
    }
    *self = s;
    return CB_OK;
}

/* Assemble M + h^2 L over the free vertices and factor it. */
static int factor(fms_solver *s, const cb_world *w, double h, cb_error *err)
{
    const cb_spring_solver *ss = &s->ss;
    double *A = cb_chol_values(ss->chol), h2 = h * h;
    for (int u = 0; u < ss->nfree; u++) A[ss->diag_pos[u]] = w->mass[ss->vert[u]];
    for (int i = 0; i < ss->sp.n; i++) {
        double kh = h2 * ss->sp.k[i];
        int ua = ss->unk[ss->sp.ij[i][0]], ub = ss->unk[ss->sp.ij[i][1]];
        if (ua >= 0) A[ss->diag_pos[ua]] += kh;
        if (ub >= 0) A[ss->diag_pos[ub]] += kh;
        if (ss->spring_pos[i] >= 0) A[ss->spring_pos[i]] = 0.0;
    }
    for (int i = 0; i < ss->sp.n; i++)
        if (ss->spring_pos[i] >= 0) A[ss->spring_pos[i]] -= h2 * ss->sp.k[i];
    int rc = cb_spring_solver_factor(&s->ss, w, h, err);
    if (!rc) s->h_factored = h;
    return rc;
}

/* Local step and right-hand side in one pass over the springs:
 * d_i = r_i (p_a - p_b)/|p_a - p_b| for every spring, and b = c + h^2 J d,
 * interleaved nfree x 3 (the system for x - y). */
static void local_step_rhs(fms_solver *s, const double (*x)[3], double h2)
{
    const int ns = s->ss.sp.n;
    const fms_spring *spr = s->spr;
    double (*d)[3] = s->d, (*b)[3] = s->b;
    memcpy(b, s->c, (size_t)s->ss.nfree * sizeof *b);
    for (int i = 0; i < ns; i++) {
        const fms_spring *q = &spr[i];
        const double *pa = x[q->a], *pb = x[q->b];
        double e0 = pa[0] - pb[0], e1 = pa[1] - pb[1], e2 = pa[2] - pb[2];
        double l2 = e0 * e0 + e1 * e1 + e2 * e2;
        if (l2 > 0) { /* else keep the previous direction */
            double sc = q->rest / sqrt(l2);
            d[i][0] = sc * e0;
            d[i][1] = sc * e1;
            d[i][2] = sc * e2;
        }
        double kh = h2 * q->k, f0 = kh * d[i][0], f1 = kh * d[i][1], f2 = kh * d[i][2];
        b[q->ua][0] += f0;
        b[q->ua][1] += f1;
        b[q->ua][2] += f2;
        b[q->ub][0] -= f0;
        b[q->ub][1] -= f1;
        b[q->ub][2] -= f2;
    }
}

static int fms_step(void *self, cb_world *w, double dt, cb_step_info *info, cb_error *err)
{
    fms_solver *s = self;
    if (!s || !w || !info) return CB_FAIL(err, CB_ERR_INPUT, "fms: NULL argument");
    if (!(dt > 0) || !isfinite(dt)) return CB_FAIL(err, CB_ERR_INPUT, "fms: dt must be > 0 (got %g)", dt);
    cb_spring_solver *ss = &s->ss;
    const cb_spring_set *sp = &ss->sp;
    double h = dt, h2 = h * h, t1 = w->state.t + h;
    double (*x)[3] = w->state.x;
    const double (*cx)[3] = (const double (*)[3])x, (*cy)[3] = (const double (*)[3])ss->y;
    double imp[3] = {0, 0, 0};
    double c0 = cb_wall_time();
    if (ss->chol && s->h_factored != h) {
        int rc = factor(s, w, h, err);
        if (rc) return rc;
        info->factorizations++;
    }
    double c1 = cb_wall_time();
    /* inertial target, start positions, constant right-hand side
     * c = h^2 (f_ext - L y) with the pinned vertices at their targets in y */
    cb_spring_solver_predict(ss, w, h, t1, imp);
    for (int u = 0; u < ss->nfree; u++)
        for (int k = 0; k < 3; k++) s->c[u][k] = h2 * w->mass[ss->vert[u]] * w->gravity[k];
    for (int i = 0; i < sp->n; i++) {
        int a = sp->ij[i][0], b = sp->ij[i][1], ua = ss->unk[a], ub = ss->unk[b];
        double kh = h2 * sp->k[i], e[3];
        cb_v3_sub(e, ss->y[b], ss->y[a]);
        if (ua >= 0) cb_v3_axpy(s->c[ua], kh, e);
        if (ub >= 0) cb_v3_axpy(s->c[ub], -kh, e);
    }
    double gnorm0 = ss->nfree ? cb_springs_gradient(sp, w, cx, cy, h, ss->grad) : 0.0;
    double tl = 0.0, tg = 0.0;
    int iters = 0;
    if (ss->nfree > 0) {
        for (int it = 0; it < s->iterations; it++) {
            double a0 = cb_wall_time();
            local_step_rhs(s, cx, h2);
            double a1 = cb_wall_time();
            int rc = cb_chol_solve3(ss->chol, s->b, err);
            if (rc) return rc;
            const double (*X)[3] = (const double (*)[3])s->b;
            for (int u = 0; u < ss->nfree; u++) {
                int i = ss->vert[u];
                for (int k = 0; k < 3; k++) {
                    ss->dx[i][k] = X[u][k];
                    x[i][k] = ss->y[i][k] + X[u][k];
                }
            }
            double a2 = cb_wall_time();
            tl += a1 - a0;
            tg += a2 - a1;
            iters++;
        }
    }
    /* attachment impulse: h k (d_i - (p_a - p_b)) on the free end of springs to pins */
    for (int i = 0; i < sp->n; i++) {
        const fms_spring *q = &s->spr[i];
        int fa = q->ua < ss->nfree, fb = q->ub < ss->nfree;
        if (fa == fb) continue;
        double e[3];
        cb_v3_sub(e, s->d[i], x[q->a]);
        cb_v3_add(e, e, x[q->b]);
        cb_v3_axpy(imp, (fa ? 1.0 : -1.0) * h * q->k, e);
    }
    double residual = NAN;
    if (ss->nfree > 0) {
        double gn = cb_springs_gradient(sp, w, cx, cy, h, ss->grad);
        residual = gnorm0 > 0 ? gn / gnorm0 : 0.0;
    }
    double tc = 0.0;
    int rc = cb_spring_solver_finish(ss, w, h, t1, imp, info, &tc, err);
    if (rc) return rc;
    double c4 = cb_wall_time();
    info->iterations = iters;
    info->residual = residual;
    cb_step_info_stage(info, "factor", c1 - c0);
    cb_step_info_stage(info, "local", tl);
    cb_step_info_stage(info, "global", tg);
    cb_step_info_stage(info, "setup", (c4 - c1) - tl - tg - tc);
    cb_step_info_stage(info, "contact", tc);
    return CB_OK;
}

const cb_solver_class cb_solver_fms = {
    .name = "fms",
    .summary = "fast mass-spring (Liu et al. 2013): local/global iterations on implicit Euler, one prefactored solve",
    .create = fms_create,
    .step = fms_step,
    .destroy = fms_destroy,
};
