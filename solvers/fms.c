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
 * supernodal: the CHOLMOD factorization kind).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/solver.h"
#include "core/vec3.h"
#include "solvers/cholmod_util.h"
#include "solvers/springs.h"
#include "solvers/step_contact.h"

typedef struct fms_solver {
    int iterations;
    double damping;
    cb_spring_set sp;
    int nfree;
    int *unk;              /* [nv] unknown of each vertex, -1 when pinned */
    int *vert;             /* [nfree] vertex of each unknown */
    int *diag_pos;         /* [nfree] */
    int *spring_pos;       /* [nsprings], -1 when an end is pinned */
    cb_chol *chol;         /* NULL when every vertex is pinned */
    double h_factored;     /* dt of the current factor (0: none) */
    double (*d)[3];        /* [nsprings] auxiliary directions */
    double (*c)[3];        /* [nfree] constant part of the right-hand side, h^2 (f_ext - L y) */
    double (*x0)[3];       /* [nv] positions at the start of the step */
    double (*y)[3];        /* [nv] inertial target */
    double (*grad)[3];     /* [nv] scratch for the residual */
    double (*dx)[3];       /* [nfree] x - y from the last global step */
    cb_step_contact *contact;
} fms_solver;

static const char *const spring_names[] = {"model", "classic", NULL};
static const char *const factor_names[] = {"auto", "simplicial", "supernodal", NULL};
static const char *const allowed_keys[] = {"iterations", "damping", "springs", "self_collision",
                                           "self_friction", "self_iterations", "contact_offset",
                                           "factor", NULL};

static void fms_destroy(void *self)
{
    fms_solver *s = self;
    if (!s) return;
    cb_springs_release(&s->sp);
    cb_chol_free(&s->chol);
    cb_step_contact_free(&s->contact);
    free(s->unk);
    free(s->vert);
    free(s->diag_pos);
    free(s->spring_pos);
    free(s->d);
    free(s->c);
    free(s->x0);
    free(s->y);
    free(s->grad);
    free(s->dx);
    free(s);
}

static int fms_create(const cb_world *w, const cb_params *p, void **self, cb_error *err)
{
    if (!w || !self) return CB_FAIL(err, CB_ERR_INPUT, "fms: NULL argument");
    *self = NULL;
    fms_solver *s = cb_calloc(1, sizeof *s);
    if (!s) return CB_FAIL(err, CB_ERR_NOMEM, "fms: out of memory");
    int kind = 0, factor = 0;
    cb_step_contact_def cd;
    int rc = cb_params_int(p, "iterations", 10, 1, 1000000, &s->iterations, err);
    if (!rc) rc = cb_params_double(p, "damping", 0.0, 0.0, 1.0, &s->damping, err);
    if (!rc) rc = cb_params_choice(p, "springs", spring_names, 0, &kind, err);
    if (!rc) rc = cb_params_bool(p, "self_collision", 1, &cd.self_collision, err);
    if (!rc) rc = cb_params_double(p, "self_friction", 0.1, 0.0, 1e3, &cd.self_friction, err);
    if (!rc) rc = cb_params_int(p, "self_iterations", 2, 1, 1000, &cd.self_iterations, err);
    if (!rc) rc = cb_params_double(p, "contact_offset", 0.5 * w->thickness, 0.0, 1e3, &cd.collider_offset, err);
    if (!rc) rc = cb_params_choice(p, "factor", factor_names, 0, &factor, err);
    if (!rc) rc = cb_params_check(p, allowed_keys, err);
    cd.self_distance = w->thickness;
    if (!rc) rc = cb_springs_build(w, (cb_spring_kind)kind, &s->sp, err);
    if (!rc) rc = cb_step_contact_create(w, &cd, &s->contact, err);
    if (rc) {
        if (rc != CB_ERR_NOMEM) cb_error_prefix(err, "fms: ");
        fms_destroy(s);
        return rc;
    }
    int nv = w->nv, ns = s->sp.n;
    s->unk = cb_calloc((size_t)nv, sizeof *s->unk);
    s->vert = cb_calloc((size_t)nv, sizeof *s->vert);
    s->d = cb_calloc((size_t)(ns > 0 ? ns : 1), sizeof *s->d);
    s->c = cb_calloc((size_t)nv, sizeof *s->c);
    s->x0 = cb_calloc((size_t)nv, sizeof *s->x0);
    s->y = cb_calloc((size_t)nv, sizeof *s->y);
    s->grad = cb_calloc((size_t)nv, sizeof *s->grad);
    s->dx = cb_calloc((size_t)nv, sizeof *s->dx);
    if (!s->unk || !s->vert || !s->d || !s->c || !s->x0 || !s->y || !s->grad || !s->dx) {
        fms_destroy(s);
        return CB_FAIL(err, CB_ERR_NOMEM, "fms: out of memory for %d vertices", nv);
    }
    for (int i = 0; i < nv; i++) {
        s->unk[i] = w->inv_mass[i] > 0 ? s->nfree : -1;
        if (s->unk[i] >= 0) s->vert[s->nfree++] = i;
    }
    /* directions of the rest shape, used when a spring has zero length */
    for (int i = 0; i < ns; i++) {
        cb_v3_sub(s->d[i], w->mesh->x[s->sp.ij[i][0]], w->mesh->x[s->sp.ij[i][1]]);
        cb_v3_normalize(s->d[i]);
        cb_v3_scale(s->d[i], s->d[i], s->sp.rest[i]);
    }
    if (s->nfree > 0) {
        int *colptr = NULL, *rowidx = NULL;
        rc = cb_springs_pattern(&s->sp, s->unk, s->nfree, 1, &colptr, &rowidx, &s->diag_pos, &s->spring_pos, err);
        if (!rc)
            rc = cb_chol_create(s->nfree, colptr, rowidx, 3, (cb_chol_mode)factor,
                                "fms: the global matrix M + h^2 L", &s->chol, err);
        free(colptr);
        free(rowidx);
        if (rc) {
            fms_destroy(s);
            return rc;
        }
    }
    *self = s;
    return CB_OK;
}

/* Assemble M + h^2 L over the free vertices and factor it. */
static int factor(fms_solver *s, const cb_world *w, double h, cb_error *err)
{
    double *A = cb_chol_values(s->chol), h2 = h * h;
    for (int u = 0; u < s->nfree; u++) A[s->diag_pos[u]] = w->mass[s->vert[u]];
    for (int i = 0; i < s->sp.n; i++) {
        double kh = h2 * s->sp.k[i];
        int ua = s->unk[s->sp.ij[i][0]], ub = s->unk[s->sp.ij[i][1]];
        if (ua >= 0) A[s->diag_pos[ua]] += kh;
        if (ub >= 0) A[s->diag_pos[ub]] += kh;
        if (s->spring_pos[i] >= 0) A[s->spring_pos[i]] = 0.0;
    }
    for (int i = 0; i < s->sp.n; i++)
        if (s->spring_pos[i] >= 0) A[s->spring_pos[i]] -= h2 * s->sp.k[i];
    int rc = cb_chol_factor(s->chol, err);
    if (rc == CB_ERR_NUMERIC) {
        int u = cb_chol_failed_unknown(s->chol);
        if (u >= 0 && u < s->nfree) {
            int v = s->vert[u];
            char msg[sizeof err->message];
            memcpy(msg, err->message, sizeof msg);
            return CB_FAIL(err, CB_ERR_NUMERIC, "%s; unknown %d is vertex %d (mass %g kg, dt %g s): "
                           "a free vertex needs a positive mass", msg, u, v, w->mass[v], h);
        }
    }
    if (!rc) s->h_factored = h;
    return rc;
}

/* d_i = r_i (p_a - p_b)/|p_a - p_b| for every spring. */
static void local_step(fms_solver *s, const double (*x)[3])
{
    for (int i = 0; i < s->sp.n; i++) {
        const double *pa = x[s->sp.ij[i][0]], *pb = x[s->sp.ij[i][1]];
        double e[3] = {pa[0] - pb[0], pa[1] - pb[1], pa[2] - pb[2]};
        double l2 = e[0] * e[0] + e[1] * e[1] + e[2] * e[2];
        if (!(l2 > 0)) continue; /* keep the previous direction */
        double sc = s->sp.rest[i] / sqrt(l2);
        s->d[i][0] = sc * e[0];
        s->d[i][1] = sc * e[1];
        s->d[i][2] = sc * e[2];
    }
}

/* B = c + h^2 J d, column-major nfree x 3 (the system for x - y). */
static void build_rhs(fms_solver *s, double h2)
{
    double *B = cb_chol_rhs(s->chol);
    int n = s->nfree;
    for (int u = 0; u < n; u++) {
        B[u] = s->c[u][0];
        B[u + n] = s->c[u][1];
        B[u + 2 * n] = s->c[u][2];
    }
    for (int i = 0; i < s->sp.n; i++) {
        double kh = h2 * s->sp.k[i];
        int ua = s->unk[s->sp.ij[i][0]], ub = s->unk[s->sp.ij[i][1]];
        const double *d = s->d[i];
        if (ua >= 0) {
            B[ua] += kh * d[0];
            B[ua + n] += kh * d[1];
            B[ua + 2 * n] += kh * d[2];
        }
        if (ub >= 0) {
            B[ub] -= kh * d[0];
            B[ub + n] -= kh * d[1];
            B[ub + 2 * n] -= kh * d[2];
        }
    }
}

static int fms_step(void *self, cb_world *w, double dt, cb_step_info *info, cb_error *err)
{
    fms_solver *s = self;
    if (!s || !w || !info) return CB_FAIL(err, CB_ERR_INPUT, "fms: NULL argument");
    if (!(dt > 0) || !isfinite(dt)) return CB_FAIL(err, CB_ERR_INPUT, "fms: dt must be > 0 (got %g)", dt);
    double h = dt, h2 = h * h, t1 = w->state.t + h;
    double (*x)[3] = w->state.x, (*v)[3] = w->state.v;
    double imp[3] = {0, 0, 0};
    double c0 = cb_wall_time();
    if (s->chol && s->h_factored != h) {
        int rc = factor(s, w, h, err);
        if (rc) return rc;
        info->factorizations++;
    }
    double c1 = cb_wall_time();
    /* inertial target, start positions, constant right-hand side */
    memcpy(s->x0, x, (size_t)w->nv * sizeof *x);
    cb_world_apply_pins(w, t1);
    for (int u = 0; u < s->nfree; u++) {
        int i = s->vert[u];
        double m = w->mass[i];
        for (int k = 0; k < 3; k++) {
            s->y[i][k] = s->x0[i][k] + (1.0 - s->damping) * h * v[i][k];
            imp[k] -= s->damping * m * v[i][k];
            s->c[u][k] = h2 * m * w->gravity[k];
            x[i][k] = s->y[i][k];
        }
    }
    for (int i = 0; i < w->nv; i++)
        if (s->unk[i] < 0) cb_v3_copy(s->y[i], x[i]);
    /* c = h^2 (f_ext - L y) with the pinned vertices at their targets in y */
    for (int i = 0; i < s->sp.n; i++) {
        int a = s->sp.ij[i][0], b = s->sp.ij[i][1], ua = s->unk[a], ub = s->unk[b];
        double kh = h2 * s->sp.k[i], e[3];
        cb_v3_sub(e, s->y[b], s->y[a]);
        if (ua >= 0) cb_v3_axpy(s->c[ua], kh, e);
        if (ub >= 0) cb_v3_axpy(s->c[ub], -kh, e);
    }
    double gnorm0 = s->nfree ? cb_springs_gradient(&s->sp, w, (const double (*)[3])x,
                                                   (const double (*)[3])s->y, h, s->grad) : 0.0;
    double tl = 0.0, tg = 0.0;
    int iters = 0;
    if (s->nfree > 0) {
        for (int it = 0; it < s->iterations; it++) {
            double a0 = cb_wall_time();
            local_step(s, (const double (*)[3])x);
            build_rhs(s, h2);
            double a1 = cb_wall_time();
            const double *X;
            int rc = cb_chol_solve(s->chol, &X, err);
            if (rc) return rc;
            int n = s->nfree;
            for (int u = 0; u < n; u++) {
                int i = s->vert[u];
                s->dx[u][0] = X[u];
                s->dx[u][1] = X[u + n];
                s->dx[u][2] = X[u + 2 * n];
                x[i][0] = s->y[i][0] + X[u];
                x[i][1] = s->y[i][1] + X[u + n];
                x[i][2] = s->y[i][2] + X[u + 2 * n];
            }
            double a2 = cb_wall_time();
            tl += a1 - a0;
            tg += a2 - a1;
            iters++;
        }
    }
    /* attachment impulse: h k (d_i - (p_a - p_b)) on the free end of springs to pins */
    for (int i = 0; i < s->sp.n; i++) {
        int a = s->sp.ij[i][0], b = s->sp.ij[i][1], ua = s->unk[a], ub = s->unk[b];
        if ((ua >= 0) == (ub >= 0)) continue;
        double e[3];
        cb_v3_sub(e, s->d[i], x[a]);
        cb_v3_add(e, e, x[b]);
        cb_v3_axpy(imp, (ua >= 0 ? 1.0 : -1.0) * h * s->sp.k[i], e);
    }
    double residual = NAN;
    if (s->nfree > 0) {
        double gn = cb_springs_gradient(&s->sp, w, (const double (*)[3])x, (const double (*)[3])s->y, h, s->grad);
        residual = gnorm0 > 0 ? gn / gnorm0 : 0.0;
    }
    /* v = (x - q_n)/h = (1 - damping) v_n + (x - y)/h, the second form without the
     * cancellation of x - q_n (keeps linear momentum exact to round-off) */
    for (int u = 0; u < s->nfree; u++) {
        int i = s->vert[u];
        for (int k = 0; k < 3; k++) v[i][k] = (1.0 - s->damping) * v[i][k] + s->dx[u][k] / h;
    }
    double c3 = cb_wall_time();
    int contacts = 0;
    int rc = cb_step_contact_apply(s->contact, w, (const double (*)[3])s->x0, t1, imp, &contacts, err);
    if (rc) {
        cb_error_prefix(err, "fms: ");
        return rc;
    }
    double c4 = cb_wall_time();
    info->iterations = iters;
    info->residual = residual;
    info->solver_energy = cb_springs_energy(&s->sp, (const double (*)[3])x);
    info->contacts += contacts;
    info->wall_contact_s += c4 - c3;
    for (int k = 0; k < 3; k++) info->external_impulse[k] = imp[k];
    cb_step_info_stage(info, "factor", c1 - c0);
    cb_step_info_stage(info, "local", tl);
    cb_step_info_stage(info, "global", tg);
    cb_step_info_stage(info, "setup", (c3 - c1) - tl - tg);
    cb_step_info_stage(info, "contact", c4 - c3);
    return CB_OK;
}

const cb_solver_class cb_solver_fms = {
    .name = "fms",
    .summary = "fast mass-spring (Liu et al. 2013): local/global iterations on implicit Euler, one prefactored solve",
    .create = fms_create,
    .step = fms_step,
    .destroy = fms_destroy,
};
