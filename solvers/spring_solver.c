/* solvers/spring_solver.c — the frame shared by the implicit mass-spring solvers fms and
 * newton (spring_solver.h): common parameters, unknowns, the CHOLMOD system, the
 * inertial predictor, the velocity update and contact. */
#include "solvers/spring_solver.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact/colliders.h"
#include "contact/contact_probe.h"
#include "core/vec3.h"

static const char *const spring_names[] = {"model", "classic", NULL};
static const char *const factor_names[] = {"auto", "simplicial", "supernodal", NULL};
static const char *const contact_names[] = {"constraint", "projection", NULL};

int cb_spring_solver_configure(cb_spring_solver *s, const char *name, const cb_world *w, const cb_params *p,
                               cb_bending_kind bending_default, int shells_ok, cb_error *err)
{
    if (!s || !name || !w || !p) return CB_FAIL(err, CB_ERR_INPUT, "cb_spring_solver_configure: NULL argument");
    s->name = name;
    int kind = 0, bending = 0;
    cb_step_contact_def cd;
    int rc = cb_params_double(p, "damping", 0.0, 0.0, 1.0, &s->damping,
                              "velocity damping per step: the prediction uses (1 - damping) v", err);
    if (!rc) rc = cb_params_choice(p, "springs", spring_names, 0, &kind,
                                   "model: edge springs (+ a bend spring per hinge with bending: springs); classic (grids): structural, shear, skip-one", err);
    /* a solver with a constant matrix is offered the quadratic terms only (cb_bending_names
     * without its first, shells) */
    int first = shells_ok ? 0 : 1;
    /* quadratic needs a flat rest state: where the cloth is bent at rest, the default is
     * springs (a default that depends on the scene, recorded as the value used) */
    int def = kind == CB_SPRINGS_CLASSIC ? CB_BENDING_SPRINGS : (int)bending_default;
    if (def == CB_BENDING_QUADRATIC && !cb_bending_rest_flat(w)) def = CB_BENDING_SPRINGS;
    if (!rc) rc = cb_params_choice(p, "bending", cb_bending_names + first, def - first, &bending,
                                   shells_ok ? "shells: the shared hinge energy; quadratic: Bergou et al. 2006 (flat rest); springs: a bend spring per hinge"
                                             : "quadratic: Bergou et al. 2006 in the constant matrix (flat rest); springs: a bend spring per hinge",
                                   err);
    bending += first;
    if (!rc && kind == CB_SPRINGS_CLASSIC && bending != CB_BENDING_SPRINGS)
        rc = CB_FAIL(err, CB_ERR_INPUT, "bending: %s with springs: classic (its skip-one springs bend); "
                     "use bending: springs", cb_bending_names[bending]);
    if (!rc) rc = cb_params_bool(p, "self_collision", 1, &cd.self_collision,
                                 "cloth-cloth contact after the solve", err);
    if (!rc) rc = cb_params_double(p, "self_friction", 0.1, 0.0, 1e3, &cd.self_friction,
                                   "Coulomb coefficient of cloth-cloth contact", err);
    if (!rc) rc = cb_params_int(p, "self_iterations", 2, 1, 1000, &cd.self_iterations,
                                "Gauss-Seidel passes of the self-contact stage", err);
    if (!rc) rc = cb_params_double(p, "contact_offset", 0.5 * w->thickness, 0.0, 1e3, &cd.collider_offset,
                                   "distance kept from the colliders (m; default half the cloth thickness)", err);
    if (!rc) rc = cb_params_choice(p, "factor", factor_names, 0, &s->factor,
                                   "CHOLMOD factorization: auto, simplicial or supernodal", err);
    if (!rc) rc = cb_params_bool(p, "self_cache", 1, &cd.self_cache,
                                 "reuse self-contact candidates while the cloth moves little relative to itself", err);
    if (!rc) rc = cb_params_choice(p, "contact", contact_names, 0, &s->contact_mode,
                                   "constraint: collider contact springs in the solve; projection: end-of-step only", err);
    if (!rc) rc = cb_params_double(p, "contact_stiffness", 1e2, 1e-6, 1e12, &s->contact_stiffness,
                                   "c: contact penalty 1/2 c m_i depth^2 in the solve", err);
    if (!rc) rc = cb_params_double(p, "friction_velocity", 1e-3, 1e-12, 1e3, &s->friction_velocity,
                                   "eps_v (m/s): collider friction is static below this sliding speed", err);
    if (!rc) rc = cb_params_int(p, "threads", 1, 0, 1024, &s->threads,
                                "threads of CHOLMOD and BLAS in the solves (1: the calling thread; 0: one per core)",
                                err);
    if (!rc) rc = cb_params_check(p, err); /* before the build: the solver's own keys were read first */
    cd.self_distance = w->thickness;
    s->contact_offset = cd.collider_offset;
    if (!w->ncolliders) s->contact_mode = CB_SPRING_CONTACT_PROJECTION; /* nothing to do in the solve */
    s->classic = kind == CB_SPRINGS_CLASSIC;
    if (!rc && kind == CB_SPRINGS_MODEL && bending != CB_BENDING_SPRINGS) kind = CB_SPRINGS_STRETCH;
    if (!rc) rc = cb_springs_build(w, (cb_spring_kind)kind, &s->sp, err);
    if (!rc) rc = cb_bending_init(&s->bend, w, (cb_bending_kind)bending, err);
    if (!rc) rc = cb_step_contact_create(w, &cd, &s->contact, err);
    if (!rc) rc = cb_contact_probe_create(w, &s->probe, err);
    return rc;
}

int cb_spring_solver_setup(cb_spring_solver *s, const cb_world *w, int bs, const char *what, cb_error *err)
{
    if (!s || !w || !what) return CB_FAIL(err, CB_ERR_INPUT, "cb_spring_solver_setup: NULL argument");
    if (bs != 1 && bs != 3) return CB_FAIL(err, CB_ERR_INPUT, "cb_spring_solver_setup: block size %d (1 or 3)", bs);
    s->bs = bs;
    int nv = w->nv;
    s->unk = cb_calloc((size_t)nv, sizeof *s->unk);
    s->vert = cb_calloc((size_t)nv, sizeof *s->vert);
    s->x0 = cb_calloc((size_t)nv, sizeof *s->x0);
    s->y = cb_calloc((size_t)nv, sizeof *s->y);
    s->grad = cb_calloc((size_t)nv, sizeof *s->grad);
    s->dx = cb_calloc((size_t)nv, sizeof *s->dx);
    s->fn = cb_calloc((size_t)nv, sizeof *s->fn);
    s->fnrm = cb_calloc((size_t)nv, sizeof *s->fnrm);
    s->fcol = cb_calloc((size_t)nv, sizeof *s->fcol);
    if (!s->unk || !s->vert || !s->x0 || !s->y || !s->grad || !s->dx || !s->fn || !s->fnrm || !s->fcol)
        return CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory for %d vertices", s->name, nv);
    for (int i = 0; i < nv; i++) {
        s->unk[i] = w->inv_mass[i] > 0 ? s->nfree : -1;
        if (s->unk[i] >= 0) s->vert[s->nfree++] = i;
    }
    if (s->nfree == 0) return CB_OK;
    return cb_spring_solver_system(s, NULL, 0, what, err);
}

int cb_spring_solver_system(cb_spring_solver *s, const int (*extra)[2], int nextra, const char *what, cb_error *err)
{
    if (!s || !what || nextra < 0 || (nextra > 0 && !extra))
        return CB_FAIL(err, CB_ERR_INPUT, "cb_spring_solver_system: NULL argument or negative count");
    int bs = s->bs;
    cb_chol_free(&s->chol);
    free(s->diag_pos);
    free(s->spring_pos);
    s->diag_pos = s->spring_pos = NULL;
    s->hinge_pos = s->extra_pos = NULL;
    s->nextra = 0;
    int *colptr = NULL, *rowidx = NULL;
    /* the pattern of the springs, of the six vertex pairs of every hinge term and of
     * the extra pairs */
    cb_spring_set pat = s->sp;
    int nb = s->bend.n;
    if (nb > 0 || nextra > 0) {
        if (s->sp.n > 100000000 || nb > 100000000 || nextra > 100000000)
            return CB_FAIL(err, CB_ERR_INPUT, "%s: too many springs, hinges and pairs (%d, %d, %d)", s->name, s->sp.n,
                           nb, nextra);
        pat.n = s->sp.n + 6 * nb + nextra;
        pat.ij = cb_calloc((size_t)pat.n, sizeof *pat.ij);
        if (!pat.ij) return CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory for %d hinges", s->name, nb);
        memcpy(pat.ij, s->sp.ij, (size_t)s->sp.n * sizeof *pat.ij);
        int q = s->sp.n;
        for (int i = 0; i < nb; i++)
            for (int a = 0; a < 4; a++)
                for (int b = a + 1; b < 4; b++, q++) {
                    pat.ij[q][0] = s->bend.h[i][a];
                    pat.ij[q][1] = s->bend.h[i][b];
                }
        if (nextra > 0) memcpy(pat.ij + q, extra, (size_t)nextra * sizeof *pat.ij);
    }
    int rc = cb_springs_pattern(&pat, s->unk, s->nfree, bs, &colptr, &rowidx, &s->diag_pos, &s->spring_pos, err);
    if (nb > 0 || nextra > 0) free(pat.ij);
    if (!rc) {
        s->hinge_pos = s->spring_pos + (size_t)s->sp.n * bs * bs;
        s->extra_pos = s->hinge_pos + (size_t)nb * 6 * bs * bs;
        s->nextra = nextra;
    }
    /* bs = 1: one matrix for x, y and z, three right-hand sides; bs = 3: one */
    if (!rc) rc = cb_chol_create(bs * s->nfree, colptr, rowidx, bs == 1 ? 3 : 1, (cb_chol_mode)s->factor, what,
                                 &s->chol, err);
    free(colptr);
    free(rowidx);
    if (!rc) cb_chol_set_threads(s->chol, s->threads);
    return rc;
}

void cb_spring_solver_release(cb_spring_solver *s)
{
    if (!s) return;
    cb_springs_release(&s->sp);
    cb_bending_release(&s->bend);
    cb_chol_free(&s->chol);
    cb_step_contact_free(&s->contact);
    cb_contact_probe_free(&s->probe);
    free(s->unk);
    free(s->vert);
    free(s->diag_pos);
    free(s->spring_pos);
    free(s->x0);
    free(s->y);
    free(s->grad);
    free(s->dx);
    free(s->fn);
    free(s->fnrm);
    free(s->fcol);
    free(s->hinge_cache);
    memset(s, 0, sizeof *s);
}

/* 1 when the cached Hessian c of hinge hv is still good at x (cb_spring_solver_hinge_cache). */
static int hinge_unchanged(const double *c, const int *hv, const double (*x)[3], double reuse)
{
    double le2 = c[90];
    if (!(le2 > 0)) return 0;
    const double *r = c + 78;
    double lim = reuse * reuse * le2;
    for (int j = 1; j < 4; j++) {
        double m = 0.0;
        for (int k = 0; k < 3; k++) {
            double d = (x[hv[j]][k] - x[hv[0]][k]) - (r[3 * j + k] - r[k]);
            m += d * d;
        }
        if (!(m <= lim)) return 0;
    }
    return 1;
}

void cb_spring_solver_hinge_hessian(const cb_spring_solver *s, int i, const double (*x)[3], double H[12][12])
{
    if (s->hinge_exact && s->spring_exact)
        cb_bending_hinge_hessian_exact(&s->bend, i, x, H);
    else
        cb_bending_hinge_hessian(&s->bend, i, x, H);
}

/* h^2 times the (projected) Hessian of hinge term i at x into the lower triangle of A:
 * the diagonal blocks of its free vertices, and the off-diagonal blocks of its vertex
 * pairs (a, b) at hinge_pos (row block the larger unknown). The 78 entries are taken
 * from the hinge cache when it holds them for positions close enough to x, else
 * evaluated (and cached). */
static void add_hinge(cb_spring_solver *ss, int i, const double (*x)[3], double h2, double *A)
{
    const int *hv = ss->bend.h[i];
    int unproj = ss->hinge_exact && ss->spring_exact; /* the cache holds its kind only */
    double own[78], *c = ss->hinge_cache && (unproj || !ss->hinge_exact) ? ss->hinge_cache + (size_t)CB_HINGE_CACHE * i
                                                                          : NULL;
    const double *e = c;
    if (c && hinge_unchanged(c, hv, x, ss->hinge_reuse)) {
        ss->hinge_reused++;
    } else {
        double H[12][12], *q = c ? c : own;
        cb_spring_solver_hinge_hessian(ss, i, x, H);
        for (int a = 0; a < 4; a++)
            for (int r = 0; r < 3; r++)
                for (int col = 0; col <= r; col++) *q++ = H[3 * a + r][3 * a + col];
        for (int a = 0; a < 4; a++)
            for (int b = a + 1; b < 4; b++) {
                int lo = ss->unk[hv[a]] < ss->unk[hv[b]] ? a : b, hi = lo == a ? b : a;
                for (int r = 0; r < 3; r++)
                    for (int col = 0; col < 3; col++) *q++ = H[3 * hi + r][3 * lo + col];
            }
        if (c) {
            for (int j = 0; j < 4; j++) cb_v3_copy(c + 78 + 3 * j, x[hv[j]]);
            double d[3];
            cb_v3_sub(d, x[hv[1]], x[hv[0]]);
            c[90] = cb_v3_norm2(d);
        }
        e = c ? c : own;
    }
    for (int a = 0; a < 4; a++, e += 6) {
        int ua = ss->unk[hv[a]];
        if (ua < 0) continue;
        for (int r = 0, q = 0; r < 3; r++)
            for (int col = 0; col <= r; col++, q++) A[ss->diag_pos[ua * 9 + r * 3 + col]] += h2 * e[q];
    }
    const int *pos = ss->hinge_pos + 54 * i;
    for (int p = 0; p < 6; p++, e += 9) {
        if (pos[9 * p] < 0) continue; /* a pinned end */
        for (int q = 0; q < 9; q++) A[pos[9 * p + q]] += h2 * e[q];
    }
}

int cb_spring_solver_hinge_cache(cb_spring_solver *s, double reuse, cb_error *err)
{
    if (!s || !(reuse >= 0))
        return CB_FAIL(err, CB_ERR_INPUT, "cb_spring_solver_hinge_cache: NULL solver or reuse %g < 0", reuse);
    s->hinge_reuse = reuse;
    if (!s->hinge_cache && s->bend.n > 0) {
        s->hinge_cache = cb_calloc((size_t)s->bend.n * CB_HINGE_CACHE, sizeof *s->hinge_cache);
        if (!s->hinge_cache)
            return CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory for the Hessians of %d hinges", s->name, s->bend.n);
    }
    cb_spring_solver_hinge_forget(s);
    return CB_OK;
}

void cb_spring_solver_hinge_forget(cb_spring_solver *s)
{
    if (!s || !s->hinge_cache) return;
    for (int i = 0; i < s->bend.n; i++) s->hinge_cache[(size_t)CB_HINGE_CACHE * i + 90] = -1.0;
}

void cb_spring_solver_assemble(cb_spring_solver *s, const cb_world *w, const double (*x)[3], double h,
                               const double (*hdiag)[3][3])
{
    CB_ASSERT(s && w && x && s->chol && s->bs == 3);
    cb_spring_solver *ss = s;
    const cb_spring_set *sp = &ss->sp;
    double *A = cb_chol_values(s->chol), h2 = h * h;
    ss->hinge_reused = 0;
    for (int u = 0; u < ss->nfree; u++)
        for (int r = 0; r < 3; r++)
            for (int c = 0; c <= r; c++)
                A[ss->diag_pos[u * 9 + r * 3 + c]] =
                    (r == c ? w->mass[ss->vert[u]] : 0.0) + (hdiag ? hdiag[u][r][c] : 0.0);
    for (int i = 0; i < sp->n; i++)
        if (ss->spring_pos[9 * i] >= 0)
            for (int q = 0; q < 9; q++) A[ss->spring_pos[9 * i + q]] = 0.0;
    for (int q = 0; q < 54 * ss->bend.n; q++)
        if (ss->hinge_pos[q] >= 0) A[ss->hinge_pos[q]] = 0.0;
    /* the extra pairs' blocks are zeroed with the others, before any term is added: an
     * extra pair the springs or hinges also couple shares their position in A, and
     * zeroing it afterwards wiped their coupling (test_newton: extra_pairs_keep_model) */
    for (int q = 0; q < 9 * ss->nextra; q++)
        if (ss->extra_pos[q] >= 0) A[ss->extra_pos[q]] = 0.0;
    for (int i = 0; i < sp->n; i++) {
        int a = sp->ij[i][0], b = sp->ij[i][1], ua = ss->unk[a], ub = ss->unk[b];
        double e[3];
        cb_v3_sub(e, x[a], x[b]);
        double l = cb_v3_norm(e);
        double K[3][3];
        if (l > 0) {
            cb_v3_scale(e, e, 1.0 / l);
            double tr = 1.0 - sp->rest[i] / l;
            if (!ss->spring_exact) tr = fmax(0.0, tr);
            for (int r = 0; r < 3; r++)
                for (int c = 0; c < 3; c++)
                    K[r][c] = h2 * sp->k[i] * ((1.0 - tr) * e[r] * e[c] + (r == c ? tr : 0.0));
        } else {
            for (int r = 0; r < 3; r++)
                for (int c = 0; c < 3; c++) K[r][c] = 0.0;
        }
        for (int r = 0; r < 3; r++)
            for (int c = 0; c <= r; c++) {
                if (ua >= 0) A[ss->diag_pos[ua * 9 + r * 3 + c]] += K[r][c];
                if (ub >= 0) A[ss->diag_pos[ub * 9 + r * 3 + c]] += K[r][c];
            }
        if (ss->spring_pos[9 * i] >= 0)
            for (int q = 0; q < 9; q++) A[ss->spring_pos[9 * i + q]] -= K[q / 3][q % 3];
    }
    for (int i = 0; i < ss->bend.n; i++) add_hinge(ss, i, x, h2, A);
}

double cb_spring_solver_objective(const cb_spring_solver *s, const cb_world *w, const double (*dx)[3],
                                  const double (*x)[3], double h, double extra)
{
    CB_ASSERT(s && w && dx && x);
    double g = 0.0, h2 = h * h;
    for (int u = 0; u < s->nfree; u++) {
        int i = s->vert[u];
        g += w->mass[i] * (0.5 * cb_v3_norm2(dx[i]) - h2 * cb_v3_dot(w->gravity, dx[i]));
    }
    g += extra;
    return g + h2 * cb_spring_solver_energy(s, x);
}

void cb_spring_solver_pin_impulse(const cb_spring_solver *s, const cb_world *w, const double (*x)[3], double h,
                                  double t1, double imp[3], double *work)
{
    CB_ASSERT(s && w && x && imp && work);
    const cb_spring_set *sp = &s->sp;
    for (int i = 0; i < sp->n; i++) {
        int a = sp->ij[i][0], b = sp->ij[i][1], ua = s->unk[a], ub = s->unk[b];
        if ((ua >= 0) == (ub >= 0)) continue;
        double e[3], u[3];
        cb_v3_sub(e, x[a], x[b]);
        double l = cb_v3_norm(e);
        if (!(l > 0)) continue;
        double f = -sp->k[i] * (l - sp->rest[i]) / l; /* force on a is f e */
        double sg = ua >= 0 ? 1.0 : -1.0;
        cb_v3_axpy(imp, sg * h * f, e);
        cb_world_pin_velocity(w, ua >= 0 ? b : a, t1, u);
        *work += sg * h * f * cb_v3_dot(e, u);
    }
    cb_bending_add_pin_impulse(&s->bend, x, s->unk, h, imp, w, t1, work);
}

int cb_spring_solver_factor(cb_spring_solver *s, const cb_world *w, double h, cb_error *err)
{
    if (!s || !s->chol || !w) return CB_FAIL(err, CB_ERR_INPUT, "cb_spring_solver_factor: no system to factor");
    int rc = cb_chol_factor(s->chol, err);
    if (rc != CB_ERR_NUMERIC) return rc;
    int q = cb_chol_failed_unknown(s->chol), u = q / s->bs;
    if (q < 0 || u >= s->nfree) return rc;
    int v = s->vert[u];
    char msg[sizeof err->message];
    memcpy(msg, err->message, sizeof msg);
    if (s->bs == 1)
        return CB_FAIL(err, CB_ERR_NUMERIC, "%s; unknown %d is vertex %d (mass %g kg, dt %g s): "
                       "a free vertex needs a positive mass", msg, u, v, w->mass[v], h);
    return CB_FAIL(err, CB_ERR_NUMERIC, "%s; it belongs to vertex %d (mass %g kg, dt %g s): "
                   "a free vertex needs a positive mass", msg, v, w->mass[v], h);
}

void cb_spring_solver_predict(cb_spring_solver *s, cb_world *w, double h, double t1, double imp[3])
{
    CB_ASSERT(s && w && imp);
    double (*x)[3] = w->state.x, (*v)[3] = w->state.v;
    memcpy(s->x0, x, (size_t)w->nv * sizeof *x);
    cb_world_apply_pins(w, t1);
    for (int i = 0; i < w->nv; i++) {
        if (s->unk[i] < 0) {
            cb_v3_copy(s->y[i], x[i]);
            continue;
        }
        for (int k = 0; k < 3; k++) {
            s->y[i][k] = s->x0[i][k] + (1.0 - s->damping) * h * v[i][k];
            imp[k] -= s->damping * w->mass[i] * v[i][k];
            x[i][k] = s->y[i][k];
        }
    }
    memset(s->dx, 0, (size_t)w->nv * sizeof *s->dx);
}

int cb_spring_solver_finish(cb_spring_solver *s, cb_world *w, double h, double t1, double imp[3], double work,
                            cb_step_info *info, cb_lap_timer *lap, cb_error *err)
{
    if (!s || !w || !imp || !info || !lap)
        return CB_FAIL(err, CB_ERR_INPUT, "cb_spring_solver_finish: NULL argument");
    /* v = (x - q_n)/h = (1 - damping) v_n + (x - y)/h, the second form without the
     * cancellation of x - q_n (keeps linear momentum exact to round-off) */
    double (*v)[3] = w->state.v;
    for (int u = 0; u < s->nfree; u++) {
        int i = s->vert[u];
        for (int k = 0; k < 3; k++) v[i][k] = (1.0 - s->damping) * v[i][k] + s->dx[i][k] / h;
    }
    cb_spring_friction_lag(s, w, h, t1, (const double (*)[3])w->state.x);
    cb_lap(lap, "setup");
    int contacts = 0;
    const double (*x)[3] = (const double (*)[3])w->state.x, (*vc)[3] = (const double (*)[3])w->state.v;
    cb_contact_probe_begin(s->probe, w, t1, x, vc);
    int rc = cb_step_contact_apply(s->contact, w, (const double (*)[3])s->x0, t1, imp, &work, &contacts, err);
    cb_contact_probe_end(s->probe, w, x, vc, info);
    if (rc) {
        cb_error_prefix(err, "%s: ", s->name);
        return rc;
    }
    cb_lap_contact(lap, "contact");
    info->solver_energy = cb_spring_solver_energy(s, (const double (*)[3])w->state.x);
    info->contacts += contacts;
    for (int k = 0; k < 3; k++) info->external_impulse[k] = imp[k];
    info->external_work = work;
    return CB_OK;
}

double cb_spring_contact_work(const cb_spring_solver *s, const cb_world *w, double h, double t1,
                              const double (*x)[3], double (*scratch)[3])
{
    CB_ASSERT(s && w && x && scratch);
    double W = 0.0;
    for (int u = 0; u < s->nfree; u++) {
        int i = s->vert[u], which;
        double n[3], uc[3];
        double d = cb_world_collider_distance(w, t1, x[i], &which, n, NULL) - s->contact_offset;
        if (!(d < 0) || which < 0) continue; /* the penalty's term (cb_spring_contact_penalty) */
        cb_collider_velocity(&w->colliders[which], t1, x[i], uc);
        W -= s->contact_stiffness * w->mass[i] * d * cb_v3_dot(n, uc) / h;
    }
    return W + cb_spring_friction_work(s, w, h, t1, x, scratch);
}

double cb_spring_friction_work(const cb_spring_solver *s, const cb_world *w, double h, double t1,
                               const double (*x)[3], double (*scratch)[3])
{
    CB_ASSERT(s && w && x && scratch);
    double W = 0.0;
    if (s->nfric == 0) return W;
    for (int u = 0; u < s->nfree; u++) cb_v3_zero(scratch[s->vert[u]]);
    cb_spring_friction(s, w, h, t1, x, scratch, NULL, NULL);
    for (int u = 0; u < s->nfree; u++) {
        int i = s->vert[u];
        if (!(s->fn[i] > 0)) continue;
        double uc[3];
        cb_collider_velocity(&w->colliders[s->fcol[i]], t1, s->x0[i], uc);
        W -= cb_v3_dot(scratch[i], uc) / h;
    }
    return W;
}

double cb_spring_solver_energy(const cb_spring_solver *s, const double (*x)[3])
{
    CB_ASSERT(s && x);
    return cb_springs_energy(&s->sp, x) + cb_bending_energy(&s->bend, x);
}

double cb_spring_solver_gradient(cb_spring_solver *s, const cb_world *w, const double (*x)[3], double h)
{
    CB_ASSERT(s && w && x);
    double gn = cb_springs_gradient(&s->sp, w, x, (const double (*)[3])s->y, h, s->grad);
    if (s->bend.n == 0) return gn;
    cb_bending_add_gradient(&s->bend, x, h * h, s->grad);
    double n2 = 0.0;
    for (int i = 0; i < w->nv; i++) {
        if (s->unk[i] < 0) cb_v3_zero(s->grad[i]);
        else n2 += cb_v3_norm2(s->grad[i]);
    }
    return sqrt(n2);
}

const char *cb_spring_solver_model(const cb_spring_solver *s)
{
    CB_ASSERT(s);
    if (s->classic)
        return s->contact_mode == CB_SPRING_CONTACT_CONSTRAINT
                   ? "classic springs (structural, shear) / bending skip-one springs / contact penalty"
                   : "classic springs (structural, shear) / bending skip-one springs / contact projection";
    static const char *const names[3][2] = {
        {"stretch springs / bending shells / contact penalty", "stretch springs / bending shells / contact projection"},
        {"stretch springs / bending quadratic / contact penalty",
         "stretch springs / bending quadratic / contact projection"},
        {"stretch springs / bending springs / contact penalty", "stretch springs / bending springs / contact projection"},
    };
    return names[s->bend.kind][s->contact_mode == CB_SPRING_CONTACT_CONSTRAINT ? 0 : 1];
}

double cb_spring_contact_query(const cb_spring_solver *s, const cb_world *w, double t, const double x[3], double n[3])
{
    if (!w->ncolliders) return INFINITY;
    return cb_world_collider_distance(w, t, x, NULL, n, NULL) - s->contact_offset;
}

double cb_spring_contact_penalty(const cb_spring_solver *s, const cb_world *w, double t, const double (*x)[3],
                                 double (*grad)[3], double (*hess)[3][3])
{
    CB_ASSERT(s && w && x);
    double e = 0.0;
    if (w->ncolliders == 0) { /* every vertex infinitely far from a collider: no term, no query */
        if (hess) memset(hess, 0, (size_t)s->nfree * sizeof *hess);
        return e;
    }
    for (int u = 0; u < s->nfree; u++) {
        int i = s->vert[u];
        double n[3];
        double d = cb_spring_contact_query(s, w, t, x[i], n);
        if (hess) memset(hess[u], 0, sizeof hess[u]);
        if (!(d < 0)) continue;
        double kc = s->contact_stiffness * w->mass[i];
        e += 0.5 * kc * d * d;
        if (grad) cb_v3_axpy(grad[i], kc * d, n);
        if (hess)
            for (int r = 0; r < 3; r++)
                for (int c = 0; c < 3; c++) hess[u][r][c] = kc * n[r] * n[c];
    }
    return e;
}

/* f0 of cb_spring_friction (spring_solver.h) and the two factors of its Hessian:
 * f1(y)/y and f1'(y); y >= 0. */
static double friction_f0(double y, double eps, double *f1_y, double *df1)
{
    if (y >= eps) {
        *f1_y = 1.0 / y;
        *df1 = 0.0;
        return y;
    }
    *f1_y = 2.0 / eps - y / (eps * eps);
    *df1 = 2.0 / eps - 2.0 * y / (eps * eps);
    return y * y / eps - y * y * y / (3.0 * eps * eps) + eps / 3.0;
}

/* cb_friction_slip's term; with bound, M is instead ipc's Hessian after a slip reversal,
 * ml f1(y)/y P (ipc's fric_bound, spring_solver.h), from the same f0 evaluation. */
static double friction_term(double ml, double eps, const double n[3], const double u[3], double g[3], double M[3][3],
                            int bound)
{
    double y = cb_v3_norm(u), f1_y, df1;
    double e = ml * friction_f0(y, eps, &f1_y, &df1);
    if (g)
        for (int a = 0; a < 3; a++) g[a] = ml * f1_y * u[a];
    if (M)
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) {
                double P = (a == b ? 1.0 : 0.0) - n[a] * n[b];
                if (bound) {
                    M[a][b] = ml * f1_y * P;
                    continue;
                }
                double uu = y > 0 ? u[a] * u[b] / (y * y) : 0.0;
                M[a][b] = ml * (df1 * uu + f1_y * (P - uu));
            }
    return e;
}

double cb_friction_slip(double ml, double eps, const double n[3], const double u[3], double g[3], double M[3][3])
{
    return friction_term(ml, eps, n, u, g, M, 0);
}

/* The tangential slip u_i of cb_spring_friction of free vertex i at xi (spring_solver.h). */
double cb_spring_friction_slip(const cb_spring_solver *s, const cb_world *w, double h, double t1, int i,
                               const double xi[3], double u[3])
{
    const cb_collider *col = &w->colliders[s->fcol[i]];
    const double *n = s->fnrm[i];
    double ml = col->friction * (h * h * s->fn[i]), vc[3];
    cb_collider_velocity(col, t1, s->x0[i], vc);
    cb_v3_sub(u, xi, s->x0[i]);
    cb_v3_axpy(u, -h, vc);
    cb_v3_axpy(u, -cb_v3_dot(u, n), n);
    return fmax(s->friction_velocity * h, 2.0 * ml / (s->contact_stiffness * w->mass[i]));
}

double cb_spring_friction(const cb_spring_solver *s, const cb_world *w, double h, double t1, const double (*x)[3],
                          double (*grad)[3], double (*hess)[3][3], double hsum[3][3])
{
    CB_ASSERT(s && w && x);
    double e = 0.0;
    for (int u = 0; u < s->nfree && s->nfric > 0; u++) {
        int i = s->vert[u];
        if (!(s->fn[i] > 0)) continue;
        double mu = w->colliders[s->fcol[i]].friction;
        if (!(mu > 0)) continue;
        const double *n = s->fnrm[i];
        double lam = h * h * s->fn[i], ml = mu * lam, r[3]; /* r: the tangential slip u */
        double eps = cb_spring_friction_slip(s, w, h, t1, i, x[i], r);
        double gi[3], H[3][3];
        /* with ipc's bound after a slip reversal, the Hessian ml f1(y)/y P */
        e += friction_term(ml, eps, n, r, gi, hess || hsum ? H : NULL, s->fric_bound && s->fric_bound[i]);
        if (grad) cb_v3_add(grad[i], grad[i], gi);
        if (!hess && !hsum) continue;
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) {
                if (hess) hess[u][a][b] += H[a][b];
                if (hsum) hsum[a][b] += H[a][b];
            }
    }
    return e;
}

void cb_spring_friction_lag(cb_spring_solver *s, const cb_world *w, double h, double t1, const double (*x)[3])
{
    CB_ASSERT(s && w && x);
    s->nfric = 0;
    s->lagged = 1;
    for (int u = 0; u < s->nfree; u++) {
        int i = s->vert[u];
        s->fn[i] = 0.0;
        s->fcol[i] = -1;
        if (s->contact_mode != CB_SPRING_CONTACT_CONSTRAINT) continue;
        int which;
        double d = cb_world_collider_distance(w, t1, x[i], &which, s->fnrm[i], NULL) - s->contact_offset;
        if (!(d < 0) || which < 0) continue;
        s->fn[i] = s->contact_stiffness * w->mass[i] * -d / (h * h);
        s->fcol[i] = which;
        s->nfric++;
    }
}
