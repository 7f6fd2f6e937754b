/* solvers/spring_solver.h — the frame shared by the two implicit-Euler mass-spring
 * solvers, fms and newton: their common parameters, the spring set (springs.h), the
 * numbering of the free vertices as unknowns, the CHOLMOD system over them, the
 * inertial predictor, the velocity update and the contact stage (step_contact.h).
 *
 * Common parameters (solvers.<name>, read after the solver's own): damping (in [0,1],
 * default 0), springs (model | classic), bending (shells | quadratic | springs, the
 * default the solver's; bending.h: a hinge term beside the edge springs, or a bend
 * spring per hinge; `springs: classic` carries its own skip-one bend springs and takes
 * bending: springs only), self_collision (bool, default true),
 * self_friction (>= 0, default 0.1), self_iterations (>= 1, default 2),
 * contact_offset (>= 0, m, default thickness/2), factor (auto | simplicial |
 * supernodal), self_cache (bool, default true: reuse the self-contact candidates while
 * the cloth moves little, step_contact.h; the results are the same either way),
 * contact (constraint | projection, default constraint: collider contact as a penalty
 * term of g inside the solve, see cb_spring_contact_penalty; projection: only the
 * end-of-step projection of Liu et al., for reproducing the paper), contact_stiffness
 * (c > 0, default 1e2), friction_velocity (eps_v > 0, m/s, default 1e-3: the sliding
 * speed below which the in-solve collider friction is static, cb_spring_friction), threads
 * (>= 0, default 1: CHOLMOD and OpenBLAS on the calling thread; N: N OpenBLAS threads; 0:
 * one per core; set around each CHOLMOD call and restored, cholmod_util.h), read after the
 * solver's own, in this order.
 *
 * A step with this frame:
 *   cb_spring_solver_predict   x0 = x, pins moved to t+h, y = x0 + (1 - damping) h v on
 *                              free vertices (x = y there), y = x on pinned ones, dx = 0,
 *                              damping impulse -damping m v added to imp;
 *   (the solver's own iterations, leaving x - y of free vertex i in dx[i]);
 *   cb_spring_solver_finish    v = (1 - damping) v + dx/h on free vertices, the lagged
 *                              normal forces of the friction (cb_spring_friction) from x,
 *                              contact, solver_energy = E(x), contacts, the contact
 *                              stage and external_impulse into the step info.
 *
 * Contact distances (the convention of every method, README "Contact distances"): the
 * cloth's mid-surface keeps contact_offset = thickness/2 from the colliders and
 * self_distance = thickness from itself.
 */
#ifndef CB_SPRING_SOLVER_H
#define CB_SPRING_SOLVER_H

#include "core/error.h"
#include "core/params.h"
#include "core/solver.h"
#include "core/world.h"
#include "solvers/cholmod_util.h"
#include "solvers/bending.h"
#include "solvers/springs.h"
#include "solvers/step_contact.h"

enum { CB_SPRING_CONTACT_CONSTRAINT = 0, CB_SPRING_CONTACT_PROJECTION = 1 };

typedef struct cb_spring_solver {
    const char *name;      /* "fms", "newton": the prefix of its messages */
    double damping;
    cb_spring_set sp;
    cb_bending bend;       /* the hinge term (n = 0 with bending: springs) */
    int classic;           /* springs: classic (the paper's set) */
    int nfree;
    int factor;            /* cb_chol_mode, from the `factor` parameter */
    int bs;                /* scalars per unknown in the system: 1 (fms) or 3 (newton) */
    int *unk;              /* [nv] unknown of each vertex, -1 when pinned */
    int *vert;             /* [nv] vertex of each unknown (the first nfree used) */
    int *diag_pos;         /* [nfree bs^2] from cb_springs_pattern */
    int *spring_pos;       /* [nsprings bs^2], -1 when an end is pinned */
    const int *hinge_pos;  /* [bend.n 6 bs^2] the off-diagonal blocks of each hinge's vertex
                            * pairs (0,1) (0,2) (0,3) (1,2) (1,3) (2,3), as spring_pos (in
                            * the spring_pos allocation) */
    const int *extra_pos;  /* [nextra bs^2] the off-diagonal blocks of the extra vertex pairs
                            * of cb_spring_solver_system (ipc's contact pairs), as spring_pos */
    int nextra;
    cb_chol *chol;         /* NULL when every vertex is pinned */
    double (*x0)[3];       /* [nv] positions at the start of the step */
    double (*y)[3];        /* [nv] inertial target */
    double (*grad)[3];     /* [nv] gradient of g (scratch for the residual) */
    double (*dx)[3];       /* [nv] x - y on the free vertices */
    cb_step_contact *contact;
    struct cb_contact_probe *probe; /* measures the contact stage (contact/contact_probe.h) */
    int contact_mode;      /* CB_SPRING_CONTACT_*: `contact` (constraint when the world has colliders) */
    double contact_stiffness; /* c: the contact term of g is 1/2 c m_i max(0, offset - d_i)^2 */
    double contact_offset; /* `contact_offset`: distance kept from the colliders */
    double friction_velocity; /* eps_v of the collider friction (cb_spring_friction) */
    double *fn;            /* [nv] lagged normal force (N) of vertex i: c m_i max(0, -d_i) / h^2 at the end of the last solve */
    double (*fnrm)[3];     /* [nv] the normal of its collider then */
    int *fcol;             /* [nv] that collider (-1: none) */
    int nfric;             /* vertices with fn > 0 */
    int lagged;            /* 1 once fn was computed (after the first solve of the run) */
    const unsigned char *fric_bound; /* [nv] or NULL (the caller's, ipc's): where set, vertex
                            * i's friction Hessian in cb_spring_friction is the isotropic
                            * mu Lambda f1(y)/y P, a quadratic above f0 (see there) */
    int spring_exact;      /* 1: cb_spring_solver_assemble keeps the springs' transverse part
                            * unclamped (the exact, possibly indefinite, Hessian); 0: clamped */
    int hinge_exact;       /* 1 (ipc): with spring_exact the hinges' exact Hessians too
                            * (cb_bending_hinge_hessian_exact; the hinge cache then holds
                            * those), without it their projected ones, evaluated each time;
                            * 0 (newton): the projected ones always */
    int threads;           /* `threads` of the CHOLMOD calls (cb_chol_set_threads) */
    double *hinge_cache;   /* [bend.n CB_HINGE_CACHE] NULL: every hinge's Hessian evaluated at
                            * each assembly; else cb_spring_solver_hinge_cache */
    double hinge_reuse;    /* the relative motion below which a cached hinge Hessian is reused */
    int hinge_reused;      /* hinges taken from the cache by the last assembly */
} cb_spring_solver;

/* Doubles per hinge of the cache: the 78 entries of its Hessian that the assembly adds
 * (4 diagonal blocks' lower triangles, 6 off-diagonal blocks), the 4 positions it was
 * evaluated at and its squared edge length then (negative: nothing cached). */
#define CB_HINGE_CACHE 91

/* Read the common parameters of p, check that p has no key but these and those the
 * solver read before (p must carry a record: cb_params_begin, params.h), build the
 * spring set, the bending term and the contact stage. bending_default is the solver's
 * default of `bending`; shells_ok = 0 leaves shells out of its choices (a solver whose
 * matrix is constant). Messages are not prefixed with the solver's name: the caller adds it (as
 * for its own parameters). s must be zeroed; release it with cb_spring_solver_release
 * also on error. */
int cb_spring_solver_configure(cb_spring_solver *s, const char *name, const cb_world *w, const cb_params *p,
                               cb_bending_kind bending_default, int shells_ok, cb_error *err);

/* The model energy E(x): springs and bending. */
double cb_spring_solver_energy(const cb_spring_solver *s, const double (*x)[3]);
/* grad g(x) (springs, bending, inertia, gravity; not the contact term) of the step with
 * inertial target s->y and step h into s->grad, zero on pinned vertices; |grad g|. */
double cb_spring_solver_gradient(cb_spring_solver *s, const cb_world *w, const double (*x)[3], double h);
/* The model this solver solves, for the run file: "stretch springs / bending <kind> /
 * contact penalty|projection" (springs: classic: "classic springs ..."). */
const char *cb_spring_solver_model(const cb_spring_solver *s);

/* Allocate the per-vertex arrays, number the free vertices and, when there is one,
 * create the CHOLMOD system M + h^2 (...) with blocks of bs x bs (its pattern from
 * cb_springs_pattern); `what` names the matrix in messages. */
int cb_spring_solver_setup(cb_spring_solver *s, const cb_world *w, int bs, const char *what, cb_error *err);

void cb_spring_solver_release(cb_spring_solver *s);

/* (Re)create the CHOLMOD system over the unknowns with the pattern of the springs, the
 * hinges and nextra extra vertex pairs extra[] (their blocks at extra_pos; a pair with a
 * pinned end gets -1): a method whose couplings change (ipc's contact pairs) calls it
 * when they do. cb_spring_solver_setup calls it with none. Frees the old system. */
int cb_spring_solver_system(cb_spring_solver *s, const int (*extra)[2], int nextra, const char *what, cb_error *err);

/* The values of the system of a 3 x 3 block solver (bs = 3) at x: M + h^2 (the springs'
 * Hessians with their transverse part clamped at 0, or exact with s->spring_exact, + the
 * hinges' Hessians, projected per hinge, or cached: cb_spring_solver_hinge_cache) + hdiag[u] on the diagonal block of unknown u (hdiag may be NULL); the extra
 * pairs' blocks hold only the springs' and hinges' share there (the caller adds its
 * own). newton.c's header says why the clamp. */
void cb_spring_solver_assemble(cb_spring_solver *s, const cb_world *w, const double (*x)[3], double h,
                               const double (*hdiag)[3][3]);

/* Let cb_spring_solver_assemble reuse a hinge's (projected) Hessian, evaluated at earlier
 * positions r, while each of the hinge's vertex offsets from its first vertex moved by
 * at most reuse times the edge length then: |(x_j - x_0) - (r_j - r_0)| <= reuse |r_1 -
 * r_0| for j = 1, 2, 3 (translations reuse it exactly; the error of the reused block is of
 * the order of reuse relative to the block). reuse = 0 (or a solver that never calls
 * this) evaluates every hinge at each assembly. Allocates the cache (CB_HINGE_CACHE
 * doubles per hinge) on the first call; cb_spring_solver_hinge_forget empties it. */
int cb_spring_solver_hinge_cache(cb_spring_solver *s, double reuse, cb_error *err);
void cb_spring_solver_hinge_forget(cb_spring_solver *s);

/* Hinge i's 12 x 12 Hessian at x as the assembly takes it: exact (unprojected) with
 * hinge_exact and spring_exact both set, else projected to PSD (cb_bending_hinge_hessian). */
void cb_spring_solver_hinge_hessian(const cb_spring_solver *s, int i, const double (*x)[3], double H[12][12]);

/* 1/2 dx^T M dx - h^2 dx^T f_ext + extra + h^2 E(x) over the free vertices, x = y + dx:
 * g(x) - g(y) up to the constant h^2 E(y), evaluated from dx without the large terms M y
 * and h^2 y^T f_ext whose round-off would hide the decrease near convergence; extra is
 * the caller's contact terms (added in this order, so newton's sums are unchanged). */
double cb_spring_solver_objective(const cb_spring_solver *s, const cb_world *w, const double (*dx)[3],
                                  const double (*x)[3], double h, double extra);

/* Add to imp the impulse h f of the attachments over a step of length h: the spring and
 * bending forces at x from pinned vertices on free ones; and to *work its work, that
 * impulse times the pin's velocity at t1 (cb_world_pin_velocity: 0 for a fixed pin). */
void cb_spring_solver_pin_impulse(const cb_spring_solver *s, const cb_world *w, const double (*x)[3], double h,
                                  double t1, double imp[3], double *work);

/* Factor the assembled values of s->chol; a matrix that is not positive definite is
 * reported with the vertex of the failing unknown, its mass and the step h. */
int cb_spring_solver_factor(cb_spring_solver *s, const cb_world *w, double h, cb_error *err);

/* The start of a step to t1 = t + h (see above); adds the damping impulse to imp. */
void cb_spring_solver_predict(cb_spring_solver *s, cb_world *w, double h, double t1, double imp[3]);

/* The end of a step (see above): imp (attachments + damping, from the solver) gets the
 * collider impulse and is stored as info->external_impulse, work (the work of the
 * attachments and of the contact inside the solve, from the solver) gets the contact
 * projection's and is stored as info->external_work; the step's lap timer laps "setup"
 * before the contact and "contact" after it. A contact error is prefixed with the
 * solver's name. */
int cb_spring_solver_finish(cb_spring_solver *s, cb_world *w, double h, double t1, double imp[3], double work,
                            cb_step_info *info, cb_lap_timer *lap, cb_error *err);
/* The work (J) of the collider contact inside the solve at x (contact: constraint): the
 * impulse of the penalty, -(1/h) grad P on vertex i, times the surface velocity of the
 * nearest collider at x_i; the impulse of the friction, -(1/h) grad F, times the surface
 * velocity of its lagged collider (as cb_spring_friction takes it, at x0_i). scratch
 * [nv] is overwritten on the free vertices. */
double cb_spring_contact_work(const cb_spring_solver *s, const cb_world *w, double h, double t1,
                              const double (*x)[3], double (*scratch)[3]);
/* The friction part of cb_spring_contact_work alone: each vertex's lagged friction
 * impulse times its lagged collider's surface velocity (ipc, whose normal force is the
 * barrier's). scratch: nv x 3. */
double cb_spring_friction_work(const cb_spring_solver *s, const cb_world *w, double h, double t1,
                               const double (*x)[3], double (*scratch)[3]);

/* Collider contact inside the solve (contact: constraint). d_i is the signed distance of
 * vertex i from the nearest collider at the end of the step, minus contact_offset
 * (negative: closer than the offset), n_i that collider's outward normal. The term of g
 *     P(x) = sum over free i of 1/2 c m_i min(0, d_i)^2        (c = contact_stiffness)
 * is the quadratic penalty of Projective Dynamics' collision constraints (Bouaziz et
 * al. 2014, sec. 5: 1/2 w dist(x_i, C)^2, C the allowed region): its minimiser along the normal leaves a
 * vertex driven in at depth delta at delta / (1 + c) inside the offset.
 * cb_spring_contact_query: d (INFINITY without colliders) and n at time t.
 * cb_spring_contact_penalty: P(x); adds grad P to grad[nv] (when not NULL) and writes
 * hess[nfree] the 3x3 block c m_i n n^T of each unknown (0 when not in contact; when not
 * NULL): the Gauss-Newton part of the Hessian, exact for a plane; the curvature term
 * c m_i d dn/dx of a curved collider is left out (it is negative semi-definite for a
 * convex one: the same clamp as the springs' transverse part). */
double cb_spring_contact_query(const cb_spring_solver *s, const cb_world *w, double t, const double x[3], double n[3]);
double cb_spring_contact_penalty(const cb_spring_solver *s, const cb_world *w, double t, const double (*x)[3],
                                 double (*grad)[3], double (*hess)[3][3]);

/* Collider friction inside the solve (contact: constraint): the lagged Coulomb friction of
 * Incremental Potential Contact (Li et al. 2020, sec. 5), a term of g both solvers
 * minimise. For free vertex i that the penalty held inside the offset at the end of the
 * last step (lagged normal force f_i = c m_i max(0, -d_i) / h^2 > 0, collider normal n_i,
 * friction coefficient mu_i and surface velocity v_c of that collider), with the
 * tangential slip of the step  u_i = (I - n_i n_i^T)(x_i - x0_i - h v_c)  and
 * Lambda_i = h^2 f_i (g is h^2 times an energy):
 *     F(x) = sum_i mu_i Lambda_i f0(|u_i|),
 *     f0(y) = y^2/eps - y^3/(3 eps^2) + eps/3  (y < eps),   y  (y >= eps),
 * so f1 = f0' = 2y/eps - y^2/eps^2 rises from 0 to 1 at y = eps and is 1 beyond: the
 * force -grad F/h^2 is mu f_i against the slip once the vertex slides faster than
 * eps/h, and a stiff tangential spring (stiffness 2 mu Lambda/eps) below: static
 * friction, holding up to mu f_i. eps = max(eps_v h, 2 mu_i Lambda_i / (c m_i)) (the second
 * bound keeps that stiffness below c m_i, the contact spring's weight in fms's matrix, so
 * fms's iteration, which carries F's force on its right-hand side, stays stable; with the
 * defaults it is ~2 mu times the penalty depth, below eps_v h). A vertex held still by
 * friction can creep by less than eps per step (speed < eps/h).
 *     grad_i F = mu Lambda f1(y) u/y,
 *     hess_i F = mu Lambda (f1'(y) u u^T/y^2 + f1(y)/y (P - u u^T/y^2)),  P = I - n n^T,
 * f1'(y) = 2/eps - 2y/eps^2 (y < eps), 0 beyond; at y = 0 the block is mu Lambda (2/eps) P:
 * positive semi-definite everywhere (f1 >= 0, f1' >= 0), smooth (C1 force), and exact
 * (tests/test_newton.c: finite differences). The normal force is lagged (from the last
 * step's penalty) and so is the basis: F is a fixed convex function within a step.
 * Coulomb: the penalty leaves a fraction 1/(1 + c) of the normal impulse to the
 * end-of-step projection (the vertex ends delta/(1 + c) inside the offset, and the
 * projection removes that normal velocity), whose friction is mu times the normal
 * velocity it removes (cb_world_resolve_collider_contact): the two frictions together
 * are mu times the whole normal impulse, c/(1+c) + 1/(1+c) of it in steady contact.
 * Returns F(x); adds grad F to grad[nv] and the 3x3 blocks to hess[nfree] (each may be
 * NULL) and their sum over the unknowns to hsum (may be NULL; not zeroed). x0 = s->x0.
 * cb_spring_friction_lag (called by cb_spring_solver_finish before the end-of-step
 * contact): f_i, n_i and the collider from the solve's x at t1 (0 with contact: projection). */
double cb_spring_friction(const cb_spring_solver *s, const cb_world *w, double h, double t1, const double (*x)[3],
                          double (*grad)[3], double (*hess)[3][3], double hsum[3][3]);
/* The term mu Lambda f0(|u|) above of one tangential slip u (u . n = 0, n the unit
 * normal) with ml = mu Lambda and eps: its value; g (may be NULL) gets its gradient
 * ml f1(y) u / y, M (may be NULL) its Hessian block (PSD). cb_spring_friction and ipc's
 * pair friction (solvers/ipc_friction.h) take their terms from it. */
double cb_friction_slip(double ml, double eps, const double n[3], const double u[3], double g[3], double M[3][3]);

/* The tangential slip u_i of cb_spring_friction of free vertex i (fn[i] > 0) at position
 * xi into u; returns its eps (the end of the static zone). */
double cb_spring_friction_slip(const cb_spring_solver *s, const cb_world *w, double h, double t1, int i,
                               const double xi[3], double u[3]);
void cb_spring_friction_lag(cb_spring_solver *s, const cb_world *w, double h, double t1, const double (*x)[3]);

#endif
