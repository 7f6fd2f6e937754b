/* solvers/avgforce.c — the average-force predictor with separating-axis penetration
 * response.
 *
 * Paper: Jin Yanxia, Cheng Siyue, Wang He, Cheng Qifu, Zhang Jinrui, "Improvement of
 * traditional geometric constraint method in collision response" (Modern Electronics
 * Technique 43(1), 2020, in Chinese).
 * Equations (1)-(21) below are the paper's numbers. Several are garbled in the copy we
 * have; what follows is the dimensionally consistent reading, derived here.
 *
 * 1. Springs (eqs 1-2). One spring per mesh edge with the shared k_stretch and rest
 *    length L: F_ij = k (1 - L/|x|) x, x = x_j - x_i (eq 1). The paper replaces |x| by its
 *    first-order Taylor expansion of sqrt(s) at s = L^2, |x| ~ (|x|^2 + L^2) / (2L), so
 *    L/|x| ~ 2L^2 / (|x|^2 + L^2) and
 *        F_ij = k (1 - 2 L^2 / (|x|^2 + L^2)) x                                   (2)
 *    one division per spring, L^2 precomputed (spring: taylor, the default). The printed
 *    (2) reads "k (L^2/(x^2+L^2) - 1/2) x": the same thing up to the factor -2 lost in
 *    the typesetting. With r = |x| the magnitude error is
 *        |F_taylor| - |F_exact| = k L (r - L)^2 / (r^2 + L^2),
 *    second order in the strain (tests/test_avgforce.c fits the exponent). The force is
 *    central and depends only on r, so it is conservative with the potential
 *        E(r) = k/2 [ r^2 - L^2 - 2 L^2 ln((r^2 + L^2) / (2 L^2)) ]  (= k (r-L)^2/2 + O((r-L)^3)).
 *    spring: exact uses eq (1), i.e. exactly the shared model's stretch term.
 *
 *    Bending: the paper is a mass-spring model without bending. We add the shared
 *    model's discrete-shells hinge force (core/model.c) unchanged, so bending is
 *    identical to every other solver's. solver_energy is the method's own model energy
 *    in the same form as the metric total_energy: kinetic + gravity + stretch (Taylor
 *    potential above when spring: taylor) + shared bending. With spring: exact the model
 *    is the shared one and solver_energy is NaN.
 *
 * 2. Position correction (eq 3): after the force step a distance constraint with the
 *    same approximation: for each edge the vertices move by
 *        dx = s (1 - 2 L^2 / (|x|^2 + L^2)) x,  split w_i/(w_i+w_j), w = 1/m,
 *    towards each other (too long) or apart (too short). The printed (3),
 *    "L1 = (L^2/(x^2+L^2) - 1/2) x", is the equal-mass half of this per vertex. s is
 *    correction_stiffness; correction_iterations sweeps (0 turns it off), once per
 *    substep. The sweeps are Jacobi: every edge's dx is computed from the same
 *    positions and each vertex moves by the mean of its edges' dx, so the result does
 *    not depend on the numbering of edges or vertices (Gauss-Seidel in mesh order made
 *    the mirror-symmetric drape drift sideways, P_xy ~ 0.01 kg m/s in 1 s).
 *    Velocity. The paper replaces the integration of the internal forces by this
 *    correction ("the positions are corrected according to the internal forces") and
 *    its velocity update (15) is the velocity of the corrected motion; our reading is
 *    that the velocities must be consistent with the constraint the correction just
 *    imposed, i.e. must not keep stretching or compressing the corrected edges. After
 *    the position sweeps, each edge's relative velocity along the edge is removed by a
 *    mass-weighted inelastic impulse, again Jacobi: the sum of all edges' impulses,
 *    scaled by 1/deg_max (deg_max the largest number of edges at a vertex), with
 *    stiffness s. With that scale the kinetic energy cannot increase (Cauchy-Schwarz:
 *    dKE <= (s/deg_max)(s/2 - 1) sum_e (v_rel,e)^2 / (w_a + w_b) <= 0), so the
 *    correction only dissipates. The PBD reading v += dx/h is not used: with the
 *    springs still acting and h a small substep it injects energy (a cloth started 5%
 *    stretched gained 1500x its energy in 50 steps). The old positions-only reading
 *    moved contact vertices into the colliders, whose responses then threw them out
 *    (total energy 0.98 -> 1.6 J at impact on drape_sphere 20 x 20). Contact: a vertex
 *    in a response keeps its prescribed normal motion (the normal part of its dx and
 *    dv is dropped), a vertex in collider contact is not moved or accelerated into the
 *    collider (the inward normal part is dropped).
 *
 * 3. The average-force predictor (eqs 8-16). With F the force per vertex (springs,
 *    bending, gravity, damping -c m v) at the start of the step and G = the same force
 *    after contact filtering (item 4):
 *        p* = p + dt v + dt^2 G(T) / (2m)                                          (10)
 *        v* = v + lambda dt G(T) / m                                               (11)
 *        F(T+dt) = F(p*, v*)                                                        (12)
 *    lambda is a least-squares fit. The velocity over the step should change by the
 *    average force, dt (G(T) + G(T+dt)) / (2m); with v* restricted to the direction of
 *    G(T) the best scalar (sum over all vertices i of |lambda G_i(T) - (G_i(T) +
 *    G_i(T+dt))/2|^2 minimal) is
 *        lambda = 1/2 + 1/2 sum_i G_i(T+dt).G_i(T) / sum_i |G_i(T)|^2.              (13)
 *    The printed (13) "lambda = 0.5 + sum F(T+dt)(F_T - 0.5 dt FD) / sum (F_T - 0.5 dt FD)^2"
 *    subtracts a force times a time from a force and, with F(T+dt) = F(T) and no
 *    friction, gives lambda = 1.5 (a velocity predictor that overshoots the constant-force
 *    answer by half); our reading gives 1 there, and G = F - FD (the force after the
 *    friction FD of eq 14) is what the paper's "F_T - ... FD" stands for. Since F(T+dt)
 *    depends on v* only through damping and friction, (12)-(13) are a fixed point in
 *    lambda: we start at lambda = 1 and iterate (cheap: positions, hence the spring and
 *    bending forces, do not change) up to lambda_iterations times or until lambda moves
 *    less than 1e-12; info.iterations and info.residual report the count and the last
 *    change. The step then uses the average force (eq 8), friction applied to it (eq 9):
 *        F_s = friction(normal cancel((F(T) + F(T+dt)) / 2))                        (8, 9)
 *        v(T+dt) = v + dt F_s / m                                                  (15)
 *        p(T+dt) = p + dt v + dt^2 F_s / (2m)                                      (16)
 *    The printed (16), "p = p + F_s/m dt", is not a length; our reading is eq (10) with
 *    the average force. For a smooth force with jerk j the exact displacement is
 *    dt v + dt^2 a/2 + dt^3 j/6 + ...: the instantaneous prediction (10) misses dt^3 j/6,
 *    the average-force one dt^3 j/12, so to leading order its one-step displacement
 *    error is half (the Figure 5 experiment measures it). predictor: instantaneous
 *    uses G(T) in (15)-(16) instead (one force evaluation per step), for that comparison.
 *
 * 4. Friction (eqs 7, 9, 14). A free vertex is in contact with a collider when its
 *    signed distance at the start of the step is <= contact_offset + contact_band; n is
 *    the collider normal there. Of a force F, the normal part F.n < 0 (pushing in) is
 *    cancelled by the reaction, F_N = |F.n|; the tangential part F_T = F - (F.n)n meets
 *    Coulomb friction with the collider's coefficient k_f. The paper's rule (a vertex at
 *    rest on the surface): static when |F_T| < k_f F_N (tangential force cancelled),
 *    otherwise sliding, F_T - k_f F_N F_T/|F_T| (7). We extend it to a vertex that
 *    already slides (tangential velocity u relative to the collider) so that it never
 *    reverses u within a step: the friction needed to stop the vertex within dt is
 *    f = -F_T - m u/dt; if |f| <= k_f F_N the vertex sticks (tangential force f + F_T),
 *    else friction is k_f F_N f/|f|. With u = 0 this is exactly the paper's rule.
 *
 * 5. Collision detection. Against colliders: the signed distance at the end of the step
 *    (analytic colliders are solids: a vertex that moved into one is inside it at the
 *    end of the step, so the segment test reduces to that). Against the cloth itself:
 *    the vertex-triangle pairs of a swept AABB tree (contact/bvh.h, refit over the step,
 *    rebuilt every 25 steps) go through continuous collision detection over the step
 *    (contact/ccd.h with contact distance 0; it replaces the paper's segment-triangle
 *    test (6)). The edge-edge pairs of the same query go through edge-edge CCD
 *    (cb_ccd_edge_edge, contact distance 0). Only crossings are answered: a vertex must
 *    end the step on the other side of the triangle's plane with its closest point
 *    inside the triangle; an edge pair must have passed through each other (the sign of
 *    det[q-p, s-r, r-p] changed, the normal did not turn over) with both closest points
 *    inside the edges. The sign test is done first (it rejects almost every candidate
 *    for a few dozen flops), the CCD then confirms that the primitives met. Proximity
 *    below self_distance without crossing is left alone: answering it made vibrating
 *    stiff cloth fight its own neighbours. Self collision runs once per scene step (not
 *    per substep), in up to SELF_PASSES detect-respond passes (the broad phase refitted
 *    over the corrected motion between passes) until a pass finds no crossing.
 *    Vertices in a collider response take part: they are held by it (inverse mass 0 in
 *    the self response, so the free participants take all of l; if all are held, all
 *    take part with their masses). When the free ones take part only through a small
 *    coefficient (a lever: a share l |c| w / W above l) the shares and the impulse are
 *    scaled so that no vertex moves more than l, and the next pass goes on (letting the
 *    held vertices move instead left sphere_slide with a vertex inside the floor at the
 *    end). Earlier such pairs were skipped and the crossing stayed. Known: on
 *    sphere_slide vertices still enter the floor transiently (up to 3.7 mm, in about a
 *    third of the steps, taken back by their responses; 0 before issue 15).
 *
 * 6. Penetration response by separating axis (eqs 17-21). The collision plane is the
 *    penetrated triangle's plane (collider: the tangent plane at the closest point), the
 *    separating axis its normal n, oriented to the side the vertex came from, and the
 *    depth l the vertex's distance below the plane shifted by the contact distance
 *    (contact/sat.h cb_sat_vertex_plane_depth; collider: contact_offset - d). Running the
 *    motion backwards (rest -> speed v_t over a distance l under constant acceleration:
 *    l = a t^2/2 (17), a = 2l/t^2 (18), F = m a (19), v_t^2 = 2 a l (20)) gives
 *    v_t = 2l/t (21). So the vertex's velocity along n (relative to the collider; for
 *    self contact relative to the pair's mass-weighted normal velocity) is replaced by
 *    v0 = 2l/t (an impulse) and a constant force -m 2l/t^2 along n acts for the response
 *    time t = response_time: after t the vertex is exactly l further along n, on the
 *    plane, with zero relative normal velocity. During the response the vertex's normal
 *    motion is this prescribed motion (other forces act only tangentially); it is
 *    integrated exactly across steps. For self contact the depth l is split between the
 *    vertex and the triangle's vertices like an inelastic impulse, vertex w_p/W, triangle
 *    vertex k b_k w_k/W opposite, W = w_p + sum b_k^2 w_k (b the barycentric
 *    coordinates of the closest point), so the relative motion closes exactly l; an
 *    edge pair likewise with the coefficients (1-s, s) and (1-t, t) of the closest
 *    points. A
 *    vertex in several contacts keeps the deepest. A collider response starts at the end
 *    of the substep that detected the penetration (below contact_offset), so a vertex is
 *    closer than the offset for up to response_time (default one scene step); it is
 *    inside the collider (what collider_penetrations counts) only if it went deeper
 *    than the offset within one substep.
 *    Self contact: with self_response_time > 0 it is this same prescribed motion, but
 *    on sphere_slide that diverged at t ~ 0.5 s for every response time we tried (2-20
 *    ms): prescribed normal motion of folded, vibrating stiff cloth pumps energy into
 *    it. The default self_response_time 0 is the t -> 0 limit of (17)-(21): the
 *    participants move by their share of l at once and their relative normal velocity
 *    is zeroed by an inelastic, momentum-conserving impulse (applied in detection).
 *    response: projection replaces all of this by the shared projection with restitution
 *    and friction (core/world.c, the "traditional geometric constraint"), with no self
 *    response; response: none does no penetration response at all (friction and the
 *    normal-force cancellation of item 4 stay).
 *
 * Mapping from the shared cloth model: masses, gravity, k_stretch (springs), k_bend
 * (hinges) and thickness as in the world. Pinned vertices follow their targets.
 * external_work: the collider's share of each impulse (the contact filter's change of the
 * average force, a response's normal impulse, what the correction's filter holds back,
 * the projection's) times the collider's velocity (a response's: its normal velocity u0
 * along n), the attachments' impulse times the pin's velocity (trapezoid over t, t1).
 *
 * What it does not do: proximity (non-crossing) self contact; a pair that already
 * intersects at the start of a step is not found again (only crossings are); moving
 * triangle-mesh colliders are used through cb_collider_query only (no mesh-vertex vs
 * cloth-triangle test); the method is explicit, so a dt above the springs' stability
 * limit diverges (the run loop reports it). predictor: instantaneous (eqs 10-11 with
 * G(T) in the velocity too) is an explicit-Euler velocity update: its amplification
 * per substep for a harmonic mode is sqrt(1 + (h omega)^2 / 2) > 1 at every h, so by
 * itself it has no stable substep. On cloth the velocity pass of the correction (item 2)
 * removes the growing stretch modes: with the default correction_iterations = 1 it now
 * runs where average runs (drape_sphere 20 x 20 for 1 s and 60 x 60 for 0.5 s at the
 * scene dt, total energy never above the start; it diverged at t = 0.07 s before);
 * with correction_iterations = 0 expect it to diverge (not guarded).
 *
 * Parameters (solvers.avgforce):
 *   spring                taylor | exact                       (default taylor)
 *   predictor             average | instantaneous              (default average)
 *   lambda_iterations     >= 1, fixed-point sweeps for (13)    (default 5)
 *   damping               >= 0, mass-proportional, 1/s         (default 0)
 *   correction_iterations >= 0, Jacobi sweeps (positions, then  (default 1)
 *                         velocities)
 *   correction_stiffness  0..1                                 (default 1)
 *   response              sat | projection | none              (default sat)
 *   response_time         >= 0 s; 0 means one step (dt)        (default 0)
 *   contact_offset        >= 0 m, collider contact distance    (default thickness/2)
 *   contact_band          >= 0 m, extra distance for contact   (default thickness/2 + 1e-6)
 *   self_collision        bool                                  (default true)
 *   self_distance         > 0 m, distance restored after a self penetration
 *                         (default thickness, 1e-3 if 0)
 *   self_response_time    >= 0 s, 0 = immediate (see item 6)  (default 0)
 *   substeps              >= 0, 0 = auto (h omega_max <= 2 safety, as solvers/explicit.c)
 *   safety                0 < s <= 1, for auto substeps        (default 0.5)
 *
 * Substeps. The scene's dt is far above an explicit method's stability limit for
 * stiff cloth, so each step runs n substeps of h = dt/n, each the whole method above
 * (forces, prediction, correction, collider detection and response); self collision
 * runs once per step. For a harmonic mode the average-force update has the amplification
 * matrix of determinant 1 - (h omega)^4 / 8: it is stable for h omega <= 2 (like
 * velocity Verlet) but, unlike Verlet, numerically dissipative.
 * A collider contact's vertex deeper than 1e-3 max(contact_offset, 1 mm) below the
 * offset counts as a penetration (round-off below that is contact, not penetration).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact/bvh.h"
#include "contact/ccd.h"
#include "contact/colliders.h"
#include "contact/distance.h"
#include "contact/sat.h"
#include "contact/contact_probe.h"
#include "core/solver.h"
#include "core/vec3.h"

enum { SPRING_TAYLOR = 0, SPRING_EXACT = 1 };
enum { PRED_AVERAGE = 0, PRED_INSTANT = 1 };
enum { RESP_SAT = 0, RESP_PROJECTION = 1, RESP_NONE = 2 };

#define REBUILD_EVERY 25
#define SELF_PASSES 4 /* self collision: detect and respond until clear, at most this often */

typedef struct avg_solver {
    /* parameters */
    int spring, predictor, lambda_iters, corr_iters, response, self_collision;
    double damping, corr_stiffness, response_time, offset, band, self_dist, self_response_time;
    int substeps;               /* 0: auto */
    double safety, h_stable;    /* auto substeps: h <= h_stable */
    double pen_tol;             /* a vertex deeper than this below contact_offset penetrates */
    /* rest data */
    double *L2;                 /* [ne] squared rest lengths */
    /* per-step work arrays [nv] */
    double (*x0)[3], (*v0)[3];  /* state at the start of the substep */
    double (*xs)[3];            /* positions at the start of the step (self CCD) */
    double (*fp0)[3], (*fp1)[3];/* position-dependent forces (internal + gravity) at T, T+dt */
    double (*g0)[3], (*g1)[3];  /* filtered total forces at T and T+dt */
    double (*xp)[3], (*vp)[3];  /* prediction; xp is reused to hold x before correction */
    signed char *contact;       /* collider contact at the start of the step: 1, else 0 */
    double (*cn)[3];            /* its normal */
    double (*cvel)[3];          /* the collider's velocity there */
    double *kf;                 /* its friction coefficient */
    /* separating-axis responses in progress */
    unsigned char *resp_on;
    unsigned char *resp_ext;    /* 1: against a collider (its impulses are external) */
    double (*resp_n)[3];
    double *resp_l, *resp_s, *resp_u0, *resp_t;
    /* this step's new responses */
    double *cand_l, *cand_u0;
    unsigned char *cand_ext;
    double (*cand_n)[3];
    /* self collision */
    cb_bvh *bvh;
    cb_bvh_result *res;
    double *wself;              /* [nv] inverse masses in self contact (0: held by a response) */
    /* correction (Jacobi) */
    double (*acc)[3];           /* [nv] accumulated displacement / velocity change */
    int *deg;                   /* [nv] number of edges at each vertex */
    int deg_max;
    long nsteps;
    cb_contact_probe *probe;    /* measures the responses (collider and self) after the correction */
} avg_solver;

static const char *const spring_names[] = {"taylor", "exact", NULL};
static const char *const predictor_names[] = {"average", "instantaneous", NULL};
static const char *const response_names[] = {"sat", "projection", "none", NULL};
static void avg_destroy(void *self)
{
    avg_solver *s = self;
    if (!s) return;
    free(s->L2);
    free(s->x0); free(s->v0); free(s->xs); free(s->fp0); free(s->fp1); free(s->g0); free(s->g1);
    free(s->xp); free(s->vp); free(s->contact); free(s->cn); free(s->cvel); free(s->kf);
    free(s->resp_on); free(s->resp_ext); free(s->cand_ext); free(s->resp_n); free(s->resp_l); free(s->resp_s); free(s->resp_u0);
    free(s->resp_t); free(s->cand_l); free(s->cand_u0); free(s->cand_n);
    free(s->wself); free(s->acc); free(s->deg);
    cb_bvh_free(&s->bvh);
    cb_bvh_result_free(&s->res);
    cb_contact_probe_free(&s->probe);
    free(s);
}

static int avg_create(const cb_world *w, const cb_params *p, void **self, cb_error *err)
{
    if (!w || !self) return CB_FAIL(err, CB_ERR_INPUT, "avgforce: NULL argument");
    *self = NULL;
    avg_solver *s = cb_calloc(1, sizeof *s);
    if (!s) return CB_FAIL(err, CB_ERR_NOMEM, "avgforce: out of memory");
    double th = w->thickness;
    cb_params q;
    int rc = cb_params_begin(p, &q, err);
    if (!rc) rc = cb_params_choice(&q, "spring", spring_names, SPRING_TAYLOR, &s->spring,
                                   "spring force: the paper's Taylor form or the exact model force", err);
    if (!rc) rc = cb_params_choice(&q, "predictor", predictor_names, PRED_AVERAGE, &s->predictor,
                                   "velocity predictor: average force (eqs 8-16) or instantaneous", err);
    if (!rc) rc = cb_params_int(&q, "lambda_iterations", 5, 1, 1000, &s->lambda_iters,
                                "fixed-point sweeps for the predictor's lambda (eq 13)", err);
    if (!rc) rc = cb_params_double(&q, "damping", 0.0, 0.0, 1e6, &s->damping,
                                   "mass-proportional damping -c m v (1/s)", err);
    if (!rc) rc = cb_params_int(&q, "correction_iterations", 1, 0, 100000, &s->corr_iters,
                                "Jacobi sweeps of the position correction (0: off)", err);
    if (!rc) rc = cb_params_double(&q, "correction_stiffness", 1.0, 0.0, 1.0, &s->corr_stiffness,
                                   "fraction of the strain the correction removes per sweep", err);
    if (!rc) rc = cb_params_choice(&q, "response", response_names, RESP_SAT, &s->response,
                                   "penetration response: separating axis, projection or none", err);
    if (!rc) rc = cb_params_double(&q, "response_time", 0.0, 0.0, 1e6, &s->response_time,
                                   "duration of a collider response (s; 0: one step)", err);
    if (!rc) rc = cb_params_double(&q, "contact_offset", 0.5 * th, 0.0, 1e3, &s->offset,
                                   "distance kept from the colliders (m; default half the cloth thickness)", err);
    if (!rc) rc = cb_params_double(&q, "contact_band", 0.5 * th + 1e-6, 0.0, 1e3, &s->band,
                                   "extra distance for collider contact (m; default thickness/2 + 1e-6)", err);
    if (!rc) rc = cb_params_bool(&q, "self_collision", 1, &s->self_collision,
                                 "cloth-cloth crossing response", err);
    if (!rc) rc = cb_params_double(&q, "self_distance", th > 0 ? th : 1e-3, 1e-12, 1e3, &s->self_dist,
                                   "distance restored after a self penetration (m; default the thickness)", err);
    if (!rc) rc = cb_params_double(&q, "self_response_time", 0.0, 0.0, 1e6, &s->self_response_time,
                                   "duration of a self response (s; 0: immediate)", err);
    if (!rc) rc = cb_params_int(&q, "substeps", 0, 0, 100000000, &s->substeps,
                                "substeps per step (0: automatic, from the stability bound times safety)", err);
    if (!rc) rc = cb_params_double(&q, "safety", 0.5, 1e-6, 1.0, &s->safety,
                                   "fraction of the stability bound the automatic substep uses", err);
    rc = cb_params_end(p, &q, rc, err);
    if (!rc) rc = cb_world_stable_step(w, s->safety, &s->h_stable, err);
    if (rc) {
        avg_destroy(s);
        return rc;
    }
    s->pen_tol = 1e-3 * fmax(s->offset, 1e-3);
    size_t nv = (size_t)w->nv, ne = (size_t)w->mesh->ne;
    s->L2 = cb_calloc(ne ? ne : 1, sizeof *s->L2);
#define ALLOC(f) (s->f = cb_calloc(nv ? nv : 1, sizeof *s->f))
    int ok = s->L2 && ALLOC(x0) && ALLOC(v0) && ALLOC(xs) && ALLOC(fp0) && ALLOC(fp1) && ALLOC(g0) && ALLOC(g1) &&
             ALLOC(xp) && ALLOC(vp) && ALLOC(contact) && ALLOC(cn) && ALLOC(cvel) && ALLOC(kf) &&
             ALLOC(resp_on) && ALLOC(resp_ext) && ALLOC(cand_ext) && ALLOC(resp_n) && ALLOC(resp_l) && ALLOC(resp_s) && ALLOC(resp_u0) &&
             ALLOC(resp_t) && ALLOC(cand_l) && ALLOC(cand_u0) && ALLOC(cand_n) && ALLOC(wself) &&
             ALLOC(acc) && ALLOC(deg);
#undef ALLOC
    if (!ok) {
        avg_destroy(s);
        return CB_FAIL(err, CB_ERR_NOMEM, "avgforce: out of memory");
    }
    for (size_t e = 0; e < ne; e++) {
        s->L2[e] = w->model.rest_length[e] * w->model.rest_length[e];
        s->deg[w->mesh->e[e][0]]++;
        s->deg[w->mesh->e[e][1]]++;
    }
    s->deg_max = 1;
    for (size_t i = 0; i < nv; i++)
        if (s->deg[i] > s->deg_max) s->deg_max = s->deg[i];
    rc = cb_contact_probe_create(w, &s->probe, err);
    if (rc) {
        avg_destroy(s);
        return rc;
    }
    if (s->self_collision && s->response == RESP_SAT && w->mesh->nf > 1) {
        rc = cb_bvh_create(w->mesh, CB_BV_AABB, &s->bvh, err);
        if (!rc) rc = cb_bvh_result_create(&s->res, err);
        if (!rc) rc = cb_bvh_build(s->bvh, (const double (*)[3])w->state.x, 0.5 * s->self_dist, err);
        if (!rc) {
            /* make room once, so that steps do not allocate in the common case */
            rc = cb_pair_list_reserve(&s->res->vt, 16L * (long)w->mesh->nf);
            if (!rc) rc = cb_pair_list_reserve(&s->res->ee, 24L * (long)w->mesh->nf);
            if (rc) rc = CB_FAIL(err, CB_ERR_NOMEM, "avgforce: out of memory");
        }
        if (rc) {
            avg_destroy(s);
            return rc;
        }
    }
    *self = s;
    return CB_OK;
}

/* ---------------------------------------------------------------- forces */

/* The Taylor spring scale c with F_i = k c x (x = x_j - x_i): eq (2); exact: eq (1). */
static inline double spring_scale(int spring, double r2, double L2)
{
    if (spring == SPRING_TAYLOR) return 1.0 - 2.0 * L2 / (r2 + L2);
    double r = sqrt(r2);
    return r > 0 ? 1.0 - sqrt(L2) / r : 0.0;
}

/* Position-dependent forces: springs + shared bending + gravity, into f (overwritten). */
static void position_forces(const avg_solver *s, const cb_world *w, const double (*x)[3], double (*f)[3])
{
    const cb_mesh *m = w->mesh;
    for (int i = 0; i < w->nv; i++) cb_v3_scale(f[i], w->gravity, w->mass[i]);
    double k = w->model.k_stretch;
    if (k != 0.0) {
        for (int e = 0; e < m->ne; e++) {
            int a = m->e[e][0], b = m->e[e][1];
            double d[3];
            cb_v3_sub(d, x[b], x[a]);
            double c = k * spring_scale(s->spring, cb_v3_norm2(d), s->L2[e]);
            cb_v3_axpy(f[a], c, d);
            cb_v3_axpy(f[b], -c, d);
        }
    }
    if (w->model.k_bend != 0.0) cb_model_add_bend_forces(&w->model, x, f);
}

/* Normal cancellation and Coulomb friction (header item 4) of force f on vertex i with
 * velocity v; in place. Vertices in a response lose the force component along its axis. */
static void contact_filter(const avg_solver *s, const cb_world *w, int i, const double v[3],
                           double dt, double f[3])
{
    if (s->resp_on[i]) {
        const double *n = s->resp_n[i];
        cb_v3_axpy(f, -cb_v3_dot(f, n), n);
        return;
    }
    if (!s->contact[i]) return;
    const double *n = s->cn[i];
    double fn = cb_v3_dot(f, n);
    if (fn >= 0.0) return; /* pulling away: no reaction, no friction */
    double ft[3], u[3], req[3];
    cb_v3_copy(ft, f);
    cb_v3_axpy(ft, -fn, n);
    cb_v3_sub(u, v, s->cvel[i]);
    cb_v3_axpy(u, -cb_v3_dot(u, n), n);
    double m = w->mass[i];
    for (int k = 0; k < 3; k++) req[k] = -ft[k] - m * u[k] / dt;
    double lreq = cb_v3_norm(req), fmax_ = s->kf[i] * (-fn);
    if (lreq <= fmax_) {
        for (int k = 0; k < 3; k++) f[k] = ft[k] + req[k]; /* sticks: = -m u / dt */
    } else {
        double c = fmax_ / lreq;
        for (int k = 0; k < 3; k++) f[k] = ft[k] + c * req[k];
    }
}

/* g = fp - c m v, filtered, for every free vertex (pinned: 0). */
static void total_forces(const avg_solver *s, const cb_world *w, const double (*fp)[3],
                         const double (*v)[3], double dt, double (*g)[3])
{
    for (int i = 0; i < w->nv; i++) {
        if (w->inv_mass[i] == 0.0) {
            cb_v3_zero(g[i]);
            continue;
        }
        double cm = s->damping * w->mass[i];
        for (int k = 0; k < 3; k++) g[i][k] = fp[i][k] - cm * v[i][k];
        contact_filter(s, w, i, v[i], dt, g[i]);
    }
}

/* ---------------------------------------------------------------- energy */

static double own_energy(const avg_solver *s, const cb_world *w)
{
    const double (*x)[3] = (const double (*)[3])w->state.x;
    double e = 0.0;
    for (int i = 0; i < w->nv; i++)
        e += 0.5 * w->mass[i] * cb_v3_norm2(w->state.v[i]) - w->mass[i] * cb_v3_dot(w->gravity, x[i]);
    double k = w->model.k_stretch;
    for (int j = 0; j < w->mesh->ne; j++) {
        double L2 = s->L2[j], r2 = 0.0;
        for (int c = 0; c < 3; c++) {
            double d = x[w->mesh->e[j][1]][c] - x[w->mesh->e[j][0]][c];
            r2 += d * d;
        }
        e += 0.5 * k * (r2 - L2 - (L2 > 0 ? 2.0 * L2 * log1p((r2 - L2) / (2.0 * L2)) : 0.0));
    }
    return e + cb_model_bend_energy(&w->model, x);
}

/* ---------------------------------------------------------------- correction */

/* The contact rule of the correction for vertex i's change dq (a displacement or a
 * velocity change): a vertex in a response keeps its prescribed normal motion (the
 * response overrides that component anyway), a vertex in collider contact is not moved
 * into the collider. */
static inline void correction_contact_filter(const avg_solver *s, int i, double dq[3])
{
    if (s->resp_on[i]) {
        cb_v3_axpy(dq, -cb_v3_dot(dq, s->resp_n[i]), s->resp_n[i]);
    } else if (s->contact[i] && s->response != RESP_NONE) { /* none: colliders are not obstacles */
        double dn = cb_v3_dot(dq, s->cn[i]);
        if (dn < 0) cb_v3_axpy(dq, -dn, s->cn[i]);
    }
}

/* The velocity of the collider surface vertex i is held against: in a collider response
 * its normal velocity u0 along the response's normal, in collider contact the contact's
 * surface velocity; 0 otherwise (a self response, no contact). */
static void surface_velocity(const avg_solver *s, int i, double u[3])
{
    if (s->resp_on[i]) {
        if (s->resp_ext[i]) cb_v3_scale(u, s->resp_n[i], s->resp_u0[i]);
        else cb_v3_zero(u);
    } else if (s->contact[i]) {
        cb_v3_copy(u, s->cvel[i]);
    } else {
        cb_v3_zero(u);
    }
}

/* Geometric correction (eq 3) as Jacobi sweeps, then the same constraints on the
 * velocities (header item 2): no step depends on the numbering of edges or vertices.
 * The pins are at t1 already: their velocities are the state's. */
static void correction(avg_solver *s, cb_world *w, double imp[3], double *work)
{
    const cb_mesh *m = w->mesh;
    double (*x)[3] = w->state.x, (*v)[3] = w->state.v, (*acc)[3] = s->acc;
    const int nv = w->nv;
    const double st = s->corr_stiffness;
    /* positions: every edge's eq (3) displacement from the same positions, averaged per
     * vertex over its edges */
    for (int it = 0; it < s->corr_iters; it++) {
        memset(acc, 0, (size_t)nv * sizeof *acc);
        for (int e = 0; e < m->ne; e++) {
            int a = m->e[e][0], b = m->e[e][1];
            double wa = w->inv_mass[a], wb = w->inv_mass[b], ws = wa + wb;
            if (ws == 0.0) continue;
            double d[3];
            cb_v3_sub(d, x[b], x[a]);
            double c = st * spring_scale(s->spring, cb_v3_norm2(d), s->L2[e]) / ws;
            cb_v3_axpy(acc[a], c * wa, d);
            cb_v3_axpy(acc[b], -c * wb, d);
        }
        for (int i = 0; i < nv; i++) {
            if (w->inv_mass[i] == 0.0 || s->deg[i] == 0) continue;
            double dq[3];
            cb_v3_scale(dq, acc[i], 1.0 / s->deg[i]);
            correction_contact_filter(s, i, dq);
            cb_v3_add(x[i], x[i], dq);
        }
    }
    /* velocities: the corrected edges' relative velocity along the edge removed by a
     * mass-weighted (inelastic) impulse per edge; the sum of the edges' impulses is
     * scaled by 1/deg_max, which makes the sweep provably non-increasing in kinetic
     * energy (header item 2) */
    const double om = 1.0 / s->deg_max;
    for (int it = 0; it < s->corr_iters; it++) {
        memset(acc, 0, (size_t)nv * sizeof *acc);
        for (int e = 0; e < m->ne; e++) {
            int a = m->e[e][0], b = m->e[e][1];
            double wa = w->inv_mass[a], wb = w->inv_mass[b], ws = wa + wb;
            if (ws == 0.0) continue;
            double u[3], dv[3];
            cb_v3_sub(u, x[b], x[a]);
            if (!(cb_v3_normalize(u) > 0)) continue;
            cb_v3_sub(dv, v[b], v[a]);
            double J = st * cb_v3_dot(dv, u) / ws;
            cb_v3_axpy(acc[a], J * wa, u);
            cb_v3_axpy(acc[b], -J * wb, u);
            /* an edge to a pinned vertex: its half of the exchange is the attachment's */
            if (wa == 0.0 || wb == 0.0) {
                cb_v3_axpy(imp, om * (wa > 0 ? J : -J), u);
                *work += om * (wa > 0 ? J : -J) * cb_v3_dot(u, v[wa > 0 ? b : a]);
            }
        }
        for (int i = 0; i < nv; i++) {
            if (w->inv_mass[i] == 0.0) continue;
            double dq[3], dq0[3];
            cb_v3_scale(dq, acc[i], om);
            cb_v3_copy(dq0, dq);
            correction_contact_filter(s, i, dq);
            /* what the filter holds back from a vertex in a collider response is the
             * collider's (its partners keep their share) */
            double j[3], uc[3];
            for (int k = 0; k < 3; k++) {
                j[k] = w->mass[i] * (dq[k] - dq0[k]);
                imp[k] += j[k];
            }
            surface_velocity(s, i, uc);
            *work += cb_v3_dot(j, uc);
            cb_v3_add(v[i], v[i], dq);
        }
    }
}

/* ---------------------------------------------------------------- responses */

/* Offer vertex i a new response of depth l along unit n with base normal velocity u0;
 * the deepest offer wins. */
static void offer(avg_solver *s, int i, double l, const double n[3], double u0, int ext)
{
    if (!(l > s->cand_l[i])) return;
    s->cand_l[i] = l;
    s->cand_ext[i] = (unsigned char)ext;
    cb_v3_copy(s->cand_n[i], n);
    s->cand_u0[i] = u0;
}

/* Prescribed normal motion over [0, h] of a response in progress: returns the normal
 * displacement and sets *u_end, the normal velocity at the end; advances resp_s. */
static double response_advance(avg_solver *s, int i, double h, double *u_end)
{
    double tr = s->resp_t[i], l = s->resp_l[i], u0 = s->resp_u0[i], t0 = s->resp_s[i];
    double a = 2.0 * l / (tr * tr), hr = fmin(h, tr - t0);
    if (hr < 0) hr = 0;
    double vrel = 2.0 * l / tr - a * t0; /* relative normal velocity at the start */
    double disp = u0 * h + vrel * hr - 0.5 * a * hr * hr;
    s->resp_s[i] = t0 + hr;
    if (s->resp_s[i] >= tr * (1.0 - 1e-12)) {
        s->resp_on[i] = 0;
        *u_end = u0;
    } else {
        *u_end = u0 + vrel - a * hr;
    }
    return disp;
}

/* det[b - a, c - a, p - a]: its sign is the side of p relative to the plane of abc
 * (for an edge pair p-q, r-s: det[q - p, s - r, r - p], the side of r-s relative to p-q). */
static inline double triple(const double a[3], const double b[3], const double c[3], const double p[3])
{
    double u[3], v[3], d[3], n[3];
    cb_v3_sub(u, b, a);
    cb_v3_sub(v, c, a);
    cb_v3_sub(d, p, a);
    cb_v3_cross(n, u, v);
    return cb_v3_dot(n, d);
}

/* One self contact (header item 5-6) among up to 4 vertices idx[k] with coefficients
 * c[k] (the relative motion along nn is sum_k c[k] x[idx[k]].nn; vertex-triangle: 1,
 * -b0, -b1, -b2; edge-edge: -(1-s), -s, 1-t, t), which must end l further apart along
 * nn: an inelastic impulse on the approaching relative normal velocity, then each
 * participant is offered its share of l. Vertices held by a response (wself 0) take no
 * share, unless all are held. Returns 1 if something free took part. */
static int self_contact(avg_solver *s, cb_world *w, const int idx[4], const double c[4], const double nn[3],
                        double l)
{
    double wk[4], W = 0.0, lever = 0.0;
    for (int k = 0; k < 4; k++) W += c[k] * c[k] * (wk[k] = s->wself[idx[k]]);
    for (int k = 0; k < 4; k++) lever = fmax(lever, fabs(c[k]) * wk[k]);
    double cap = 1.0;
    if (!(W > 0)) { /* every participant is held: fall back to the masses */
        W = 0.0;
        for (int k = 0; k < 4; k++) W += c[k] * c[k] * (wk[k] = w->inv_mass[idx[k]]);
        if (!(W > 0)) return 0;
    } else if (lever > W) {
        /* the free participants only by a small coefficient (a lever): their share
         * l |c| w / W would exceed l; cap it at l (a later pass goes on) */
        cap = W / lever;
    }
    double (*v)[3] = w->state.v;
    double vrel = 0.0;
    for (int k = 0; k < 4; k++) vrel += c[k] * cb_v3_dot(v[idx[k]], nn);
    if (vrel < 0) {
        double J = -cap * vrel / W;
        for (int k = 0; k < 4; k++) cb_v3_axpy(v[idx[k]], c[k] * wk[k] * J, nn);
    }
    for (int k = 0; k < 4; k++) {
        if (!(wk[k] > 0) || c[k] == 0.0) continue;
        double dir[3];
        cb_v3_scale(dir, nn, c[k] > 0 ? 1.0 : -1.0);
        offer(s, idx[k], cap * l * fabs(c[k]) * wk[k] / W, dir, cb_v3_dot(v[idx[k]], dir), 0);
    }
    return 1;
}

/* Broad phase of self collision over the step's motion xs -> x: vertex-triangle and
 * edge-edge candidates (rebuild every REBUILD_EVERY steps, else refit). */
static int self_query(avg_solver *s, cb_world *w, int rebuild, cb_error *err)
{
    const double (*x0)[3] = (const double (*)[3])s->xs;
    const double (*x1)[3] = (const double (*)[3])w->state.x;
    double margin = 0.5 * s->self_dist;
    int rc = rebuild ? cb_bvh_build(s->bvh, x1, margin, err) : 0;
    if (!rc) rc = cb_bvh_refit_swept(s->bvh, x0, x1, margin, err);
    if (!rc) rc = cb_bvh_self_query(s->bvh, CB_BVH_VT | CB_BVH_EE, s->res, err);
    return rc;
}

/* Narrow phase: the candidates that crossed during the step (CCD over [xs, x]) and end
 * it on the wrong side; offers. Returns the number of contacts. */
static int self_detect(avg_solver *s, cb_world *w)
{
    const double (*x0)[3] = (const double (*)[3])s->xs;
    const double (*x1)[3] = (const double (*)[3])w->state.x;
    const int nv = w->nv;
    for (int i = 0; i < nv; i++) s->wself[i] = s->resp_on[i] ? 0.0 : w->inv_mass[i];
    cb_ccd_opts o = cb_default_ccd_opts();
    o.eta = 0.0; /* penetrations only: the primitives cross during the step */
    const int (*f)[3] = (const int (*)[3])w->mesh->f;
    const int (*me)[2] = (const int (*)[2])w->mesh->e;
    int found = 0;
    for (long q = 0; q < s->res->vt.n; q++) {
        int p = s->res->vt.p[q][0], t = s->res->vt.p[q][1];
        int a = f[t][0], b = f[t][1], c = f[t][2];
        if (w->inv_mass[p] + w->inv_mass[a] + w->inv_mass[b] + w->inv_mass[c] == 0.0) continue;
        /* a crossing ends on the other side of the plane: cheap sign test first */
        double V0 = triple(x0[a], x0[b], x0[c], x0[p]), V1 = triple(x1[a], x1[b], x1[c], x1[p]);
        if (!(V0 * V1 < 0)) continue;
        double toi;
        if (!cb_ccd_vertex_triangle(x0[p], x1[p], x0[a], x1[a], x0[b], x1[b], x0[c], x1[c], &o, &toi))
            continue;
        double n1[3], bary[3];
        double dep1 = cb_sat_vertex_plane_depth(x1[p], x1[a], x1[b], x1[c], n1);
        if (cb_v3_norm2(n1) == 0.0) continue; /* degenerate triangle */
        /* the side the vertex came from: V0 > 0 is the +n side */
        double side = V0 > 0 ? 1.0 : -1.0;
        double dist1 = -side * dep1; /* signed distance on the vertex's side, < 0 */
        if (!(dist1 < 0)) continue;
        cb_point_triangle_distance2(x1[p], x1[a], x1[b], x1[c], bary, NULL);
        /* the plane is the collision plane only over the triangle: a vertex beside it
         * (closest point on its boundary) belongs to a neighbouring triangle's contact */
        if (!(bary[0] > 0 && bary[1] > 0 && bary[2] > 0)) continue;
        double nn[3];
        cb_v3_scale(nn, n1, side);
        const int idx[4] = {p, a, b, c};
        const double cf[4] = {1.0, -bary[0], -bary[1], -bary[2]};
        found += self_contact(s, w, idx, cf, nn, s->self_dist - dist1);
    }
    for (long q = 0; q < s->res->ee.n; q++) {
        int ea = s->res->ee.p[q][0], eb = s->res->ee.p[q][1];
        int p = me[ea][0], pq = me[ea][1], r = me[eb][0], rs = me[eb][1];
        if (w->inv_mass[p] + w->inv_mass[pq] + w->inv_mass[r] + w->inv_mass[rs] == 0.0) continue;
        /* the edges pass through each other: r-s changes sides of p-q (det[q-p, s-r, r-p]) */
        double d0[3], d1[3];
        cb_v3_sub(d0, x0[rs], x0[r]);
        cb_v3_sub(d1, x1[rs], x1[r]);
        double s0[3], s1[3];
        cb_v3_add(s0, x0[p], d0);
        cb_v3_add(s1, x1[p], d1);
        double V0 = triple(x0[p], x0[pq], s0, x0[r]), V1 = triple(x1[p], x1[pq], s1, x1[r]);
        if (!(V0 * V1 < 0)) continue;
        double toi;
        if (!cb_ccd_edge_edge(x0[p], x1[p], x0[pq], x1[pq], x0[r], x1[r], x0[rs], x1[rs], &o, &toi)) continue;
        double e1[3], n0[3], n1[3], e0[3];
        cb_v3_sub(e0, x0[pq], x0[p]);
        cb_v3_cross(n0, e0, d0);
        cb_v3_sub(e1, x1[pq], x1[p]);
        cb_v3_cross(n1, e1, d1);
        /* nearly parallel edges: the normal is undefined (their vertex-triangle pairs answer) */
        if (!(cb_v3_norm2(n1) > 1e-12 * cb_v3_norm2(e1) * cb_v3_norm2(d1))) continue;
        if (!(cb_v3_dot(n0, n1) > 0)) continue; /* the pair turned over: no consistent side */
        cb_v3_normalize(n1);
        double sa, tb, cp[3], cq[3];
        cb_edge_edge_distance2(x1[p], x1[pq], x1[r], x1[rs], &sa, &tb, cp, cq);
        if (!(sa > 0 && sa < 1 && tb > 0 && tb < 1)) continue; /* beside the edge: a neighbour's */
        double nn[3], dd[3];
        cb_v3_scale(nn, n1, V0 > 0 ? 1.0 : -1.0); /* from p-q towards where r-s came from */
        cb_v3_sub(dd, cq, cp);
        double dist1 = cb_v3_dot(dd, nn);
        if (!(dist1 < 0)) continue;
        const int idx[4] = {p, pq, r, rs};
        const double cf[4] = {-(1.0 - sa), -sa, 1.0 - tb, tb};
        found += self_contact(s, w, idx, cf, nn, s->self_dist - dist1);
    }
    return found;
}

/* ---------------------------------------------------------------- step */

typedef struct sub_stats {
    cb_lap_timer lap;              /* the step's stages (core/solver.h) */
    double imp[3];
    double work;                   /* external_work (core/solver.h) */
    int contacts, iters;
    double dlambda;
} sub_stats;

/* Start the responses offered this (sub)step: the impulse m v0 of eq (21); the
 * decelerating force acts from the next (sub)step on. */
static void start_responses(avg_solver *s, cb_world *w, double tr, double imp[3], double *work)
{
    for (int i = 0; i < w->nv; i++) {
        if (!(s->cand_l[i] > 0)) continue;
        const double *n = s->cand_n[i];
        s->resp_on[i] = 1;
        cb_v3_copy(s->resp_n[i], n);
        s->resp_l[i] = s->cand_l[i];
        s->resp_s[i] = 0.0;
        s->resp_t[i] = tr;
        s->resp_u0[i] = s->cand_u0[i];
        s->resp_ext[i] = s->cand_ext[i];
        double dvn = s->cand_u0[i] + 2.0 * s->cand_l[i] / tr - cb_v3_dot(w->state.v[i], n);
        cb_v3_axpy(w->state.v[i], dvn, n);
        if (s->resp_ext[i]) {
            cb_v3_axpy(imp, w->mass[i] * dvn, n);
            *work += w->mass[i] * dvn * s->resp_u0[i]; /* u0: the collider's normal velocity */
        }
        s->cand_l[i] = 0.0;
    }
}

/* One substep of length h from time t (the method of the header, items 1-6, except
 * self collision, which runs once per step). */
static void substep(avg_solver *s, cb_world *w, double t, double h, double tr, sub_stats *st, cb_step_info *info)
{
    const int nv = w->nv;
    const double t1 = t + h;
    double (*x)[3] = w->state.x, (*v)[3] = w->state.v;
    double *imp = st->imp;
    memcpy(s->x0, x, (size_t)nv * sizeof *s->x0);
    memcpy(s->v0, v, (size_t)nv * sizeof *s->v0);
    const double (*x0)[3] = (const double (*)[3])s->x0;
    const double (*v0)[3] = (const double (*)[3])s->v0;

    /* contact state at T (header item 4) */
    cb_lap(&st->lap, "prediction");
    int contacts = 0;
    for (int i = 0; i < nv; i++) {
        s->contact[i] = 0;
        if (w->inv_mass[i] == 0.0 || !w->ncolliders || s->resp_on[i]) continue;
        int which;
        double d = cb_world_collider_distance(w, t, x0[i], &which, s->cn[i], NULL);
        if (which >= 0 && d <= s->offset + s->band) {
            s->contact[i] = 1;
            s->kf[i] = w->colliders[which].friction;
            cb_collider_velocity(&w->colliders[which], t, x0[i], s->cvel[i]);
            contacts++;
        }
    }
    cb_lap_contact(&st->lap, "detection");

    /* F(T) and the prediction (10)-(11) */
    position_forces(s, w, x0, s->fp0);
    cb_lap(&st->lap, "force");
    total_forces(s, w, (const double (*)[3])s->fp0, v0, h, s->g0);
    double lambda = 1.0;
    int vdep = s->damping > 0 || contacts > 0;
    for (int i = 0; i < nv && !vdep; i++) vdep = s->resp_on[i];
    if (s->predictor == PRED_AVERAGE) {
        double gg = 0.0;
        for (int i = 0; i < nv; i++) gg += cb_v3_norm2(s->g0[i]);
        for (int i = 0; i < nv; i++) {
            if (w->inv_mass[i] == 0.0) {
                cb_world_pin_target(w, i, t1, s->xp[i]);
                continue;
            }
            for (int k = 0; k < 3; k++)
                s->xp[i][k] = x0[i][k] + h * v0[i][k] + 0.5 * h * h * s->g0[i][k] * w->inv_mass[i];
        }
        cb_lap(&st->lap, "prediction");
        position_forces(s, w, (const double (*)[3])s->xp, s->fp1);
        cb_lap(&st->lap, "force");
        /* (12)-(13): fixed point in lambda */
        for (int it = 0; it < s->lambda_iters; it++) {
            for (int i = 0; i < nv; i++)
                for (int k = 0; k < 3; k++)
                    s->vp[i][k] = v0[i][k] + lambda * h * s->g0[i][k] * w->inv_mass[i];
            total_forces(s, w, (const double (*)[3])s->fp1, (const double (*)[3])s->vp, h, s->g1);
            st->iters++;
            double num = 0.0;
            for (int i = 0; i < nv; i++) num += cb_v3_dot(s->g1[i], s->g0[i]);
            double next = gg > 0 ? 0.5 + 0.5 * num / gg : 1.0;
            st->dlambda = fabs(next - lambda);
            lambda = next;
            if (st->dlambda <= 1e-12 || !vdep) break; /* F(T+dt) does not depend on v* */
        }
    }
    /* the average force (8), friction on it (9), the update (15)-(16) */
    for (int i = 0; i < nv; i++) {
        if (w->inv_mass[i] == 0.0) continue;
        double fs[3], fp_avg[3], raw[3];
        double cm = s->damping * w->mass[i];
        if (s->predictor == PRED_AVERAGE) {
            for (int k = 0; k < 3; k++) {
                fs[k] = 0.5 * (s->fp0[i][k] - cm * v0[i][k] + s->fp1[i][k] - cm * s->vp[i][k]);
                fp_avg[k] = 0.5 * (s->fp0[i][k] + s->fp1[i][k]);
            }
            cb_v3_copy(raw, fs);
            contact_filter(s, w, i, v0[i], h, fs);
        } else {
            cb_v3_copy(fs, s->g0[i]);
            cb_v3_copy(fp_avg, s->fp0[i]);
            for (int k = 0; k < 3; k++) raw[k] = s->fp0[i][k] - cm * v0[i][k];
        }
        /* impulse of damping and contact forces: everything but the position forces; the
         * contact's (what the filter changed) does work at the surface's velocity */
        if (!s->resp_on[i] || s->resp_ext[i]) {
            for (int k = 0; k < 3; k++) imp[k] += h * (fs[k] - fp_avg[k]);
            double uc[3], df[3];
            surface_velocity(s, i, uc);
            cb_v3_sub(df, fs, raw);
            st->work += h * cb_v3_dot(df, uc);
        } else { /* a self response: only damping is external */
            for (int k = 0; k < 3; k++)
                imp[k] -= h * cm * (s->predictor == PRED_AVERAGE ? 0.5 * (v0[i][k] + s->vp[i][k]) : v0[i][k]);
        }
        double wi = w->inv_mass[i];
        for (int k = 0; k < 3; k++) {
            x[i][k] = x0[i][k] + h * v0[i][k] + 0.5 * h * h * fs[k] * wi;
            v[i][k] = v0[i][k] + h * fs[k] * wi;
        }
    }
    /* attachments: the impulse that holds pinned vertices against the internal forces */
    for (int i = 0; i < nv; i++) {
        if (w->inv_mass[i] != 0.0) continue;
        double u0[3], u1[3]; /* the pin's velocity at t and t1: the trapezoid of its power */
        cb_world_pin_velocity(w, i, t, u0);
        cb_world_pin_velocity(w, i, t1, u1);
        for (int k = 0; k < 3; k++) {
            double f0 = s->fp0[i][k] - w->mass[i] * w->gravity[k];
            double f1 = s->predictor == PRED_AVERAGE ? s->fp1[i][k] - w->mass[i] * w->gravity[k] : f0;
            imp[k] -= h * 0.5 * (f0 + f1);
            st->work -= h * 0.5 * (f0 * u0[k] + f1 * u1[k]);
        }
    }
    cb_world_apply_pins(w, t1);
    cb_lap(&st->lap, "prediction");
    /* geometric correction (eq 3) and its velocity pass: part of the method (strain
     * limiting, not contact), so before the probe's bracket; it moves every vertex, and
     * inside the bracket the probe would price every spring and hinge each substep */
    if (s->corr_iters > 0 && w->mesh->ne > 0) correction(s, w, imp, &st->work);
    cb_lap(&st->lap, "correction");
    /* what follows moves vertices for contact: measured by the probe */
    cb_contact_probe_begin(s->probe, w, t1, (const double (*)[3])x, (const double (*)[3])v);

    /* responses in progress: prescribed normal motion (header item 6) */
    for (int i = 0; i < nv; i++) {
        if (!s->resp_on[i]) continue;
        contacts++;
        const double *n = s->resp_n[i];
        double u_end, disp = response_advance(s, i, h, &u_end);
        double dxn = cb_v3_dot(x[i], n) - cb_v3_dot(x0[i], n);
        double vn = cb_v3_dot(v[i], n);
        cb_v3_axpy(x[i], disp - dxn, n);
        cb_v3_axpy(v[i], u_end - vn, n);
        if (s->resp_ext[i]) {
            cb_v3_axpy(imp, w->mass[i] * (u_end - vn), n);
            st->work += w->mass[i] * (u_end - vn) * s->resp_u0[i];
        }
    }
    cb_lap_contact(&st->lap, "response");

    /* collider penetrations (item 5) */
    if (s->response == RESP_SAT && w->ncolliders) {
        for (int i = 0; i < nv; i++) {
            if (w->inv_mass[i] == 0.0 || s->resp_on[i]) continue;
            int which;
            double n[3];
            double d = cb_world_collider_distance(w, t1, x[i], &which, n, NULL);
            if (which >= 0 && d < s->offset - s->pen_tol) {
                double vc[3];
                cb_collider_velocity(&w->colliders[which], t1, x[i], vc);
                offer(s, i, s->offset - d, n, cb_v3_dot(vc, n), 1);
                contacts++;
            }
        }
    }
    cb_lap_contact(&st->lap, "detection");
    if (s->response == RESP_SAT) {
        start_responses(s, w, tr, imp, &st->work);
    } else if (s->response == RESP_PROJECTION && w->ncolliders) {
        for (int i = 0; i < nv; i++)
            contacts += cb_world_resolve_collider_contact(w, i, t1, s->offset, x[i], v[i], imp, &st->work);
    }
    cb_contact_probe_end(s->probe, w, (const double (*)[3])x, (const double (*)[3])v, info);
    cb_lap_contact(&st->lap, "response");
    st->contacts += contacts;
}

static int avg_step(void *self, cb_world *w, double dt, cb_step_info *info, cb_error *err)
{
    avg_solver *s = self; /* arguments checked by cb_solver_step */
    long n = s->substeps;
    if (n == 0) {
        double q = dt / s->h_stable;
        n = q < 1.0 ? 1 : (long)ceil(q);
        if (n > 100000000L)
            return CB_FAIL(err, CB_ERR_INPUT, "avgforce: dt %g needs more than 1e8 substeps", dt);
    }
    const double h = dt / (double)n, tr = s->response_time > 0 ? s->response_time : dt;
    sub_stats st;
    memset(&st, 0, sizeof st);
    cb_lap_start(&st.lap, info);
    st.dlambda = NAN;
    if (s->bvh) memcpy(s->xs, w->state.x, (size_t)w->nv * sizeof *s->xs);
    for (long k = 0; k < n; k++) {
        if ((k & 255) == 255 && cb_interrupt_requested()) /* a stiff, light cloth: many substeps */
            return CB_FAIL(err, CB_ERR_INTERRUPTED, "avgforce: interrupted by a signal in substep %ld of %ld", k, n);
        substep(s, w, w->state.t + (double)k * h, h, tr, &st, info);
    }
    /* self collision once per step, over the whole step's motion (items 5-6) */
    if (s->bvh) {
        /* the probe measures the impulses and the displacements */
        cb_contact_probe_begin(s->probe, w, w->state.t + dt, (const double (*)[3])w->state.x,
                               (const double (*)[3])w->state.v);
        const int passes = s->self_response_time > 0 ? 1 : SELF_PASSES;
        for (int pass = 0; pass < passes; pass++) {
            cb_lap_contact(&st.lap, "response");
            /* later passes: the swept volumes again, over the motion the responses added */
            int rc = self_query(s, w, pass == 0 && s->nsteps % REBUILD_EVERY == 0, err);
            if (rc) return rc;
            int found = self_detect(s, w);
            st.contacts += found;
            cb_lap_contact(&st.lap, "detection");
            if (s->self_response_time > 0) {
                start_responses(s, w, s->self_response_time, st.imp, &st.work);
            } else { /* the t -> 0 limit of (17)-(21): move by l now, relative normal velocity 0 */
                for (int i = 0; i < w->nv; i++) {
                    if (!(s->cand_l[i] > 0)) continue;
                    const double *nn = s->cand_n[i];
                    cb_v3_axpy(w->state.x[i], s->cand_l[i], nn);
                    cb_v3_axpy(w->state.v[i], s->cand_u0[i] - cb_v3_dot(w->state.v[i], nn), nn);
                    s->cand_l[i] = 0.0;
                }
            }
            cb_lap_contact(&st.lap, "response");
            if (!found) break;
        }
        cb_contact_probe_end(s->probe, w, (const double (*)[3])w->state.x, (const double (*)[3])w->state.v,
                             info);
    }
    s->nsteps++;
    info->iterations = st.iters;
    info->residual = st.dlambda;
    info->contacts = st.contacts;
    for (int k = 0; k < 3; k++) info->external_impulse[k] = st.imp[k];
    info->external_work = st.work;
    info->solver_energy = s->spring == SPRING_TAYLOR ? own_energy(s, w) : NAN;
    return CB_OK;
}

static int avg_self_collision(const void *self) { return ((const avg_solver *)self)->bvh != NULL; }

static const char *avg_model(const void *self)
{
    static const char *const names[] = {"stretch springs / bending shells / contact sat",
                                        "stretch springs / bending shells / contact projection",
                                        "stretch springs / bending shells / contact none"};
    int r = ((const avg_solver *)self)->response;
    return r >= 0 && r < 3 ? names[r] : "unknown";
}

const cb_solver_class cb_solver_avgforce = {
    .name = "avgforce",
    .summary = "average-force predictor, Taylor springs, separating-axis penetration response (Jin 2020)",
    .flags = CB_SOLVER_MOVING_COLLIDERS | CB_SOLVER_CONTACT_STAGE | CB_SOLVER_STAGE_TIMES | CB_SOLVER_SUBSTEPS |
             CB_SOLVER_THREAD_INDEPENDENT | CB_SOLVER_COLLIDER_FRICTION,
    .bytes_per_vertex = 1900,
    .create = avg_create,
    .step = avg_step,
    .destroy = avg_destroy,
    .self_collision = avg_self_collision,
    .model = avg_model,
};
