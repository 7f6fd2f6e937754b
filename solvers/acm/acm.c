/* solvers/acm/acm.c — Asynchronous Contact Mechanics: the cb_solver_class "acm".
 *
 * Paper: D. Harmon, E. Vouga, B. Smith, R. Tamstorf, E. Grinspun, "Asynchronous Contact
 * Mechanics", ACM SIGGRAPH 2009 (Communications of the ACM research highlight 2012),
 * built on the asynchronous variational integrators of A. Lew, J. Marsden, M. Ortiz, M. West (2003).
 *
 * Algorithm.
 *  AVI. Every vertex stores its position X at its last update time TV and a velocity V:
 *  its trajectory is piecewise linear. Every force has its own regular clock: each
 *  stretch spring (mesh edge), each bending hinge, gravity, each active penalty layer.
 *  Events sit in a priority queue (queue.c) ordered by (time, kind, index); elastic clocks
 *  of one kind with bitwise-equal steps (most of them on a regular mesh) tick together and
 *  share one queue entry that walks through its members in index order (clock_groups,
 *  group_next): the processing order is exactly that of one entry per clock, but the
 *  members that tick at the same time run one after the other while the entry stays at
 *  the top (run_until), and the entry moves once per run, not once per event: no pop and
 *  push through a heap of ~all clocks (that was ~60% of the time of a free-falling sheet),
 *  and no sift per event (~7% of the 60 x 60 drape). Processing a
 *  force event advances its stencil's vertices to the event time and kicks their momenta
 *  by -h grad V (h = the clock's step). Elastic and gravity clocks tick at k h, k >= 0;
 *  tick 0 gives half an impulse (the velocity-Verlet start). A step(dt) processes every
 *  event up to t + dt and reports x(t+dt) = X + (t+dt - TV) V and V for every vertex.
 *  Element steps are fixed at create: h = safety * 2 / omega, with omega^2 the largest
 *  over the stencil of n_i K_i / m_i (K_i the element's Gershgorin row sum for vertex i,
 *  n_i the number of elements of that kind at i): on a uniform mesh this is the explicit
 *  stability bound; small elements (small masses) get proportionally smaller steps.
 *  Multistep resonance (bend_clock). Each element's own bound keeps it stable alone, but
 *  an AVI is a multiple-time-step method, and those are resonance-unstable when a slow
 *  clock's step exceeds half the period of the fast modes its kicks couple to (Fong,
 *  Darve, Lew, "Stability of asynchronous variational integrators", JCP 2008; the paper,
 *  section 7.1, names the risk and reports not seeing it). The hinges' own bounds are
 *  14-20 times the springs' steps on the bundled grids (k_bend 1e-4, k_stretch 1e3), more
 *  than the springs' half period (pi h / (2 safety)), and once the sheet bends, their
 *  kicks pump the stretch modes: energy grew without contact and without work by 12% in
 *  2 s on a spinning 12 x 12 sheet, and the twist gained 8.7 J (E_ref 0.20 J) over its
 *  pins' 13.3 J of work (issue 33). bend_clock: stretch (the default) caps each hinge's
 *  step at the smallest spring step at its four vertices, so no hinge ticks slower than
 *  the stiffest spring it touches: the drift falls to the staggered velocities'
 *  oscillation (0.7%), at about twice the elastic events; bend_clock: element keeps
 *  the hinges' own bounds (the scheme before issue 33).
 *  Discrete penalty layers (layers.h): for each close pair (vertex-triangle,
 *  edge-edge, vertex-collider) layers l = 1..n are active; layer l ticks at k h(l) with
 *  h(l) = penalty_safety * 2 / sqrt(r(l) sum of the stencil's inverse masses) and kicks
 *  with -h(l) grad 1/2 r(l) (d - eta(l))^2 when d < eta(l), along the closest-point
 *  direction, weighted by the closest point's barycentric weights (momentum is conserved
 *  exactly for self pairs). Layers are activated by certificate failures and deactivated
 *  lazily: at a tick of the deepest layer n, if d >= A(n) and the pair separates.
 *  Kinetic separating slabs (contact/certificate.h) give each self pair a conservative
 *  time before which its distance stays >= C(n); vertex-collider pairs use kinetic.h.
 *  A certificate failure computes the distance and activates every layer l with
 *  d < A(l), then rebuilds the certificate. A layer with nonzero impulse is therefore
 *  never active late, and a crossing would need infinitely many layer activations
 *  (eta(l) -> 0): the simulation can stall (Zeno) but never interpenetrate.
 *  Stencil, support, rescheduling. Force events change velocities of their stencil;
 *  certificates and k-DOP box exits depend on the trajectories of their support. After
 *  an event, every certificate of a pair containing a kicked vertex and the kicked
 *  vertices' box exits are recomputed (per-vertex lists of pairs: the dependency graph;
 *  gravity, whose stencil is every vertex, reschedules everything).
 *  Velocity allowance (velocity_slack > 0, the default): each vertex keeps the reference
 *  velocity its certificates and box exit were computed with, and those are computed
 *  (kinetic.h) to hold for any velocity within `velocity_slack` of the reference. A kick
 *  that leaves the vertex inside its allowance reschedules nothing; one that takes it
 *  outside resets the reference and reschedules as above (after gravity: only the
 *  vertices that left their allowance). Certificates are shorter, recomputations far
 *  rarer (the exact scheme spent ~70% of the time rescheduling). velocity_slack = 0 is
 *  the exact scheme, event for event.
 *  Elastic kicks of one time are renewed together: on a regular mesh thousands of
 *  springs and hinges tick at the same time (clock groups below) and a vertex takes up
 *  to ~18 of their kicks. Positions at that time do not depend on those kicks, and
 *  certificates and box exits look forward from it, so the renewals wait until every
 *  elastic event of that time has run, and each touched vertex that left its allowance
 *  is renewed once, from its velocity after all of them (run_until, flush_batch). With
 *  velocity_slack = 0 that is bitwise the scheme of a renewal after every kick (the last
 *  renewal of each certificate already followed the last kick on its vertices); with a
 *  slack, the allowance is checked against the velocity after all the kicks, not after
 *  each (other renewals, so other certificate times: tests/test_determinism.c).
 *  Kinetic k-DOP broad phase. Each vertex owns a k-DOP box of half width box_radius
 *  around its position at the last rebuild; its exit time is a kinetic event. A rebuild
 *  (at t = 0 and at every box exit) refits the k-DOP BVH of contact/bvh.h (its topology
 *  split once, at t = 0) on the box centres with margin box_radius + A(1)/2 and takes
 *  every vertex-triangle and edge-edge candidate: while all vertices stay in their
 *  boxes, a pair that is not a candidate is farther apart than A(1). New pairs get
 *  certificates; pairs that are no candidate any more and have no active layer are
 *  dropped. Vertex-collider pairs are permanent.
 *  Restitution and friction (after the full paper): a penalty impulse applied while the
 *  pair separates is scaled by cor^2 (a single layer then returns a fraction cor of the
 *  approach speed); each penalty impulse J is accompanied by a Coulomb friction impulse
 *  min(mu J, m_eff |v_t|) against the tangential relative velocity v_t (never reversing
 *  it). Colliders use their own friction and restitution; self contact uses the
 *  parameters `friction` and `restitution`. Friction acts only at penalty ticks, against
 *  the tangential velocity the gravity clock (gravity_step) built up since: the sliding
 *  rate is Coulomb's (the 30 degree incline at mu 0.5: a = 0.659 m/s^2 for 0.657), but a
 *  patch that should stick creeps (4.4 mm in 1 s at mu 0.7; 1.7 mm with gravity_step =
 *  dt/16) and one just above the threshold slides further than Coulomb's answer (+34% in
 *  0.5 s at tan = 1.05 mu): a discretisation of the method's clocks, tests/test_friction.c.
 *
 * Mapping from the shared cloth model: stretch springs and discrete-shell hinges are
 * core/model.c's energies (same gradients; the hinge's angle by cb_dihedral_angle_at
 * with cb_atan2, core/atan2.h: within 2 ulp of libm's atan2, which was an eighth of the
 * 60 x 60 drape's time; the same gradient arithmetic, the angle to round-off,
 * tests/test_model.c), lumped masses and gravity as in the
 * world. The penalty potential is reported as contact_energy; solver_energy is NaN.
 * Contact distances (README, the convention of every method): eta(1) of the self pairs
 * is `eta`, by default the cloth thickness (1 mm if it is 0); the vertex-collider pairs'
 * eta(1) is eta / 2, so the mid-surface keeps half the thickness from colliders, as the
 * other methods' contact_offset (until issue 32 it was eta: a patch resting at half the
 * thickness, valid for every other method, started inside acm's first collider layer
 * and was thrown off in the first step). Velocities are the AVI's
 * piecewise-constant velocities (half a clock step off the synchronous ones).
 * external_impulse: attachments (impulses on pinned vertices), collider penalty and
 * friction impulses, and the difference between the impulse the gravity clock gave in
 * this step and the M g dt the run loop adds, so the momentum balance closes exactly.
 * external_work: each attachment impulse times its pin's velocity at the kick's time,
 * each collider impulse (penalty and friction) times the collider's surface velocity at
 * the vertex at the tick.
 *
 * What it does not do: no triangle-mesh colliders, static or moving (rejected at create;
 * the gauntlet's funnel and knives are not applicable to acm). Its collider contact is
 * one pair per cloth vertex against the collider's signed distance; a mesh's edges and
 * corners (a blade, a funnel's rim) can pass through a cloth triangle between its
 * vertices, so vertex pairs alone would break the no-crossing promise (README: the
 * guarantee is per vertex-collider pair). The paper treats obstacles as meshes in the
 * same contact structure; here that would be: the collider's vertices, edges and
 * triangles appended to a contact mesh of acm's own (pairs index it, not the cloth's)
 * as kinematic vertices (inverse mass 0) on piecewise-linear paths (keyframed
 * translations exactly; rotations as chords between samples of a kinematic clock, a
 * sagitta of |w|^2 r h^2 / 8), so that the vertex-triangle and edge-edge layers, slabs
 * and k-DOP boxes cover cloth against obstacle both ways; per-vertex state over the
 * contact vertices; candidate pairs with no free vertex skipped; a knot event at each
 * path corner that sets the velocity and renews the vertex's certificates and box exit;
 * kicks on kinematic vertices counted in external_impulse (as pins' are). Pinned
 * vertices have the same gap: a pin with angular_velocity moves on a circle, but acm
 * keeps the pin's velocity at t0 for the pinned vertex's certificates and box exit (its
 * positions at events are exact), so pairs with a rotating pinned vertex are not
 * conservatively certified; on the twist the pins took part in 0-3 of ~50000 layer
 * impulses. The same kinematic clock would fix both.
 * No damping; the BVH's topology is the median split of the start shape, refitted at
 * every rebuild, never re-split (a tearing or re-meshed cloth would need it);
 * collider-collider and pinned-pinned pairs are not handled; a pair at distance 0 (an
 * intersecting start) is an error; a pair needing more than max_layers layers stops the
 * run with CB_ERR_NUMERIC (no progress, never a crossing). Pools (pairs, queue) grow
 * amortised at rebuilds.
 *
 * Stages (cb_step_info): "elastic+gravity", "penalty" (layer ticks), "slab" (certificate
 * failures), "kdop" (box exits and rebuilds), "reschedule" (certificates and box exits
 * recomputed after kicks). Elastic events are not timed one by one (three clock reads
 * cost about as much as the event): "elastic+gravity" is the loop's wall time minus the
 * other stages, so it includes the queue; the renewals after the elastic events of one
 * time are timed together (one pair of clock reads per batch) into "reschedule".
 * events = events processed; contacts = pairs with an active layer at the end of the step.
 *
 * Parameters (solvers.acm): safety (elastic clocks, default 0.5), penalty_safety (0.5),
 * eta (m, default thickness; collider pairs eta / 2), stiffness (r(1), N/m, default k_stretch or 1000),
 * gravity_step (s, default scene dt / 4), box_radius (m, default 0.12 x mean rest edge
 * length), kdop (aabb|kdop14|kdop18|kdop26, default kdop18), restitution (self, 1),
 * friction (self, 0), horizon (certificate horizon, s, 1), max_layers (100000),
 * profile (per-stage wall times, true), velocity_slack (m/s, 0.05; 0 = reschedule after
 * every kick), bend_clock (stretch|element, stretch: see "Multistep resonance").
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact/bvh.h"
#include "contact/certificate.h"
#include "contact/colliders.h"
#include "contact/distance.h"
#include "core/solver.h"
#include "core/vec3.h"
#include "solvers/acm/acm.h"
#include "solvers/acm/kinetic.h"
#include "solvers/acm/layers.h"
#include "solvers/acm/queue.h"

typedef struct acm_pair {
    int kind, a, b;
    int v[4], nvtx;
    int layers;
    int live, seen;
    uint64_t stamp;
    double h1;        /* layer 1 clock step */
    double t_last;    /* every layer tick <= t_last has been processed */
    double cor2, mu;
    double eta1;      /* eta(1) of this pair: eta for self pairs, eta / 2 for vertex-collider pairs */
    double guard;     /* C(glayers), cached: every renewal needs it */
    int glayers;      /* layer count guard belongs to (-1: none yet) */
} acm_pair;

typedef struct acm_vertex {
    double x[3];
    double tv;
    double v[3];
    double im;        /* w->inv_mass */
} acm_vertex;

typedef struct acm_group {
    int kind;         /* CB_ACM_EV_STRETCH or CB_ACM_EV_BEND */
    int first, n;     /* members gmembers[first .. first + n - 1] */
    int cur;          /* member whose tick is next */
    int id;           /* queue id: base id of the smallest member */
    double h;
} acm_group;

typedef struct acm_solver {
    const cb_world *w;
    const cb_mesh *m;
    int nv, ne, nh, nf, nc;
    /* parameters */
    double safety, psafety, eta1, r1, hg, rho, horizon;
    double self_cor, self_mu;
    double slack;                  /* velocity allowance of the certificates (m/s) */
    int max_layers, profile;
    int bend_clock_stretch;        /* 1: hinge steps capped at the springs' (bend_clock: stretch) */
    cb_bv_kind kdop;
    /* vertex state: position x at time tv, velocity v (piecewise linear trajectory),
       inverse mass: what every event reads, in one cache line per vertex */
    acm_vertex *vx;
    void *vx_mem;
    double (*Vref)[3];             /* velocity the vertex's certificates were computed with */
    double *vref_norm;             /* |Vref| (its collider certificates need it) */
    double (*center)[3];
    double *proj;                  /* [nv][ndir] d_j . center, for the candidate filter (rebuild) */
    double cmax;                   /* largest |coordinate| of the centres */
    double (*box_x)[3], *box_t;    /* position and time of the last box exit renewal */
    unsigned char *box_pending;    /* 1: the box exit of that renewal is not computed yet */
    uint64_t *vstamp;
    int *touched, ntouched;
    int batch_open;                /* 1: `touched` holds the kicks of elastic events at batch_t, not renewed yet */
    double batch_t;
    /* clocks */
    double *h_edge, *h_hinge;
    long *tick_edge, *tick_hinge, tick_gravity;
    /* clock groups: elastic elements of one kind with bitwise-equal steps tick at the
       same times, so each group is one queue entry (see clock_groups) */
    acm_group *groups;
    int ngroups;
    int *gmembers;                 /* members of every group, ascending within a group */
    int *group_of;                 /* [ne + nh]: group of the element whose id is the group's id, else -1 */
    double t0;                     /* creation time: tick 0 of every clock */
    int has_gravity;
    double free_mass;
    /* queue ids */
    int base_edge, base_hinge, base_box, base_pair;
    cb_acm_queue q;
    double now;
    /* pairs */
    acm_pair *pairs;
    int npairs, cap_pairs;
    int nvc_pairs;                 /* the vertex-collider pairs: ids 0 .. nvc_pairs - 1, made at create and
                                      permanent, so every self pair's id is above (the rebuild's loops) */
    int *free_ids, nfree;
    int *slot_next, *slot_prev, *vhead;
    int *order;                    /* live self pair ids, scratch */
    uint64_t stamp;
    /* hash of self pairs: key -> id */
    uint64_t *hkey;
    int *hval;
    int hcap;
    /* broad phase */
    const double (*dirs)[3];
    double dirlen[CB_BV_MAX_SLABS];
    int ndir;
    cb_bvh *bvh;
    cb_bvh_result *res;
    /* accounting */
    double ext[3], grav_imp[3];
    double work;      /* this step's external_work (J) */
    long events_step;
    cb_acm_stats st;
    cb_acm_trace_entry *trace;
    long trace_cap, *trace_n;
    cb_path_knot_fn knot_fn;        /* debug hook (acm.h), NULL normally */
    void *knot_ctx;
    int fail;
} acm_solver;

static const char *const bend_clock_names[] = {"stretch", "element", NULL};
static const char *const kdop_names[] = {"aabb", "kdop14", "kdop18", "kdop26", NULL};
static const cb_bv_kind kdop_kinds[] = {CB_BV_AABB, CB_BV_KDOP14, CB_BV_KDOP18, CB_BV_KDOP26};

/* ---------------------------------------------------------------- vertices */

static inline void pos_at(const acm_solver *s, int i, double t, double out[3])
{
    double dt = t - s->vx[i].tv;
    for (int k = 0; k < 3; k++) out[k] = s->vx[i].x[k] + dt * s->vx[i].v[k];
}

static inline void advance(acm_solver *s, int i, double t)
{
    if (s->vx[i].tv == t) return;
    if (s->vx[i].im == 0.0 && s->w->pinned[i]) cb_world_pin_target(s->w, i, t, s->vx[i].x);
    else pos_at(s, i, t, s->vx[i].x);
    s->vx[i].tv = t;
}

static inline void touch(acm_solver *s, int i)
{
    if (s->vstamp[i] == s->stamp) return;
    s->vstamp[i] = s->stamp;
    s->touched[s->ntouched++] = i;
}

/* Apply impulse J (N s) to vertex i; pinned vertices pass it to their attachment. */
static inline void kick(acm_solver *s, int i, const double J[3])
{
    double im = s->vx[i].im;
    if (im == 0.0) {
        double u[3]; /* the attachment's impulse -J, at the pin's velocity at the kick */
        for (int k = 0; k < 3; k++) s->ext[k] -= J[k];
        cb_world_pin_velocity(s->w, i, s->vx[i].tv, u);
        s->work -= cb_v3_dot(J, u);
        return;
    }
    cb_v3_axpy(s->vx[i].v, im, J);
    touch(s, i);
    if (s->knot_fn) s->knot_fn(s->knot_ctx, i, s->vx[i].tv, s->vx[i].x, s->vx[i].v);
}

static void record(acm_solver *s, double t, int kind, int index, const acm_pair *p, double d, double J)
{
    if (!s->trace_n) return;
    long n = (*s->trace_n)++;
    if (!s->trace || n >= s->trace_cap) return;
    cb_acm_trace_entry *e = &s->trace[n];
    e->t = t;
    e->kind = kind;
    e->index = index;
    e->pair_kind = p ? p->kind : -1;
    e->a = p ? p->a : -1;
    e->b = p ? p->b : -1;
    e->layers = p ? p->layers : 0;
    e->distance = d;
    e->impulse = J;
}

/* The vertex's current velocity becomes its reference velocity (with its norm). */
static inline void set_vref(acm_solver *s, int i)
{
    cb_v3_copy(s->Vref[i], s->vx[i].v);
    s->vref_norm[i] = cb_v3_norm(s->Vref[i]);
}

/* ---------------------------------------------------------------- pair geometry */

/* Distance d, unit normal n (from side B to side A) and weights w (impulse J n w_k on
 * vertex v[k], sum w_k = 0 for self pairs) of pair p at time t. Returns d (NaN if
 * degenerate). For VC pairs, vc gets the collider velocity. */
static double pair_geometry(const acm_solver *s, const acm_pair *p, double t, double n[3],
                            double w[4], double vc[3])
{
    double x[4][3];
    for (int k = 0; k < p->nvtx; k++) pos_at(s, p->v[k], t, x[k]);
    double d;
    if (p->kind == CB_ACM_PAIR_VC) {
        const cb_collider *c = &s->w->colliders[p->b];
        d = cb_collider_query(c, t, x[0], n, NULL);
        if (vc) cb_collider_velocity(c, t, x[0], vc);
        w[0] = 1.0;
        return d;
    }
    if (vc) cb_v3_zero(vc);
    double ca[3], cbp[3];
    if (p->kind == CB_ACM_PAIR_VT) {
        double bary[3];
        d = sqrt(cb_point_triangle_distance2(x[0], x[1], x[2], x[3], bary, cbp));
        cb_v3_copy(ca, x[0]);
        w[0] = 1.0;
        w[1] = -bary[0];
        w[2] = -bary[1];
        w[3] = -bary[2];
    } else {
        double sa, sb;
        d = sqrt(cb_edge_edge_distance2(x[0], x[1], x[2], x[3], &sa, &sb, ca, cbp));
        w[0] = 1.0 - sa;
        w[1] = sa;
        w[2] = -(1.0 - sb);
        w[3] = -sb;
    }
    cb_v3_sub(n, ca, cbp);
    if (d > 0) cb_v3_scale(n, n, 1.0 / d);
    return d;
}

static double pair_step_inv_mass(const acm_solver *s, const acm_pair *p)
{
    double sum = 0;
    for (int k = 0; k < p->nvtx; k++) sum += s->w->inv_mass[p->v[k]];
    return sum;
}

/* ---------------------------------------------------------------- scheduling */

static inline int id_cert(const acm_solver *s, int p) { return s->base_pair + 2 * p; }
static inline int id_layer(const acm_solver *s, int p) { return s->base_pair + 2 * p + 1; }
/* box exits and certificates: the ids queued with due times (cb_acm_queue_defer) */
static inline int id_deferred(const acm_solver *s, int id)
{
    return id >= s->base_box && (id < s->base_pair || ((id - s->base_pair) & 1) == 0);
}

/* Box exits and certificates are renewed after nearly every kick in contact, long before
 * they are due: they go into the queue with cb_acm_queue_defer (queue.h), which moves
 * the heap entry only when the new time is earlier. run_until (due_check) moves an entry
 * that comes up before its due time to that time; the events and their order are those
 * of setting every time exactly.
 * A box exit is not even computed at a renewal: the vertex stays in its box at least
 * until it can have left the ball of radius rho around the centre, which the box
 * contains, so (rho - |x - c|_1) / (|v_ref|_1 + slack) (shortened by a relative 1e-6, far
 * beyond the rounding of both computations) is due first; the position and time are
 * kept, and the exact exit (cb_acm_box_exit with the same arguments as at the renewal,
 * so bitwise the same time) is computed only when that bound comes up. Near the box's
 * boundary (within 1e-3 rho), or when the coordinates dwarf rho, it is computed at once. */
static void schedule_box(acm_solver *s, int i, double t)
{
    double x[3], dc[3];
    pos_at(s, i, t, x);
    int id = s->base_box + i;
    uint64_t key = cb_acm_qkey(CB_ACM_EV_KDOP, i);
    cb_v3_sub(dc, x, s->center[i]);
    /* |.|_1 >= |.|: a shorter bound, without the square roots */
    const double *vr = s->Vref[i];
    double room = s->rho * (1.0 - 1e-6) - (fabs(dc[0]) + fabs(dc[1]) + fabs(dc[2]));
    double speed = fabs(vr[0]) + fabs(vr[1]) + fabs(vr[2]) + s->slack;
    if (room > 1e-3 * s->rho && speed > 0 && s->rho > 1e-6 * s->cmax) {
        cb_v3_copy(s->box_x[i], x);
        s->box_t[i] = t;
        s->box_pending[i] = 1;
        cb_acm_queue_defer(&s->q, id, t + room / speed * (1.0 - 1e-6), key);
        return;
    }
    s->box_pending[i] = 0;
    double ds = cb_acm_box_exit(s->dirs, s->dirlen, s->ndir, s->center[i], s->rho, x, s->Vref[i], s->slack);
    if (isfinite(ds)) cb_acm_queue_defer(&s->q, id, t + ds, key);
    else cb_acm_queue_remove(&s->q, id);
}

/* The queue's top entry (t, id) is a box exit or a certificate (deferred, see above):
 * 1 if it is due now; else it is moved to its due time (a box exit computed first when
 * only its bound had come up) and 0. */
static int due_check(acm_solver *s, int id, double t, uint64_t key)
{
    if (id < s->base_pair) {
        int i = id - s->base_box;
        if (s->box_pending[i] && s->q.slot[id].due <= t) {
            s->box_pending[i] = 0;
            double ds = cb_acm_box_exit(s->dirs, s->dirlen, s->ndir, s->center[i], s->rho, s->box_x[i],
                                        s->Vref[i], s->slack);
            if (!isfinite(ds)) {
                cb_acm_queue_remove(&s->q, id);
                return 0;
            }
            s->q.slot[id].due = s->box_t[i] + ds;
        }
    }
    double due = s->q.slot[id].due;
    if (due <= t) return 1;
    cb_acm_queue_set(&s->q, id, due, key);
    return 0;
}

static inline double pair_guard(acm_pair *p)
{
    if (p->glayers != p->layers) {
        p->guard = cb_acm_guard(p->eta1, p->layers);
        p->glayers = p->layers;
    }
    return p->guard;
}

/* Certificate failure time of pair p from time t, for guard C(layers). */
static double certificate(const acm_solver *s, acm_pair *p, double t)
{
    double guard = pair_guard(p);
    double x[4][3];
    for (int k = 0; k < p->nvtx; k++) pos_at(s, p->v[k], t, x[k]);
    const double (*V)[3] = (const double (*)[3])s->Vref;
    if (p->kind == CB_ACM_PAIR_VC)
        return cb_acm_collider_certificate(&s->w->colliders[p->b], t, x[0], V[p->v[0]], s->vref_norm[p->v[0]],
                                           guard, s->horizon, s->slack);
    if (s->slack > 0) {
        double v[4][3];
        for (int k = 0; k < 4; k++) cb_v3_copy(v[k], V[p->v[k]]);
        return cb_acm_slab_certificate(p->kind == CB_ACM_PAIR_EE, (const double (*)[3])x, (const double (*)[3])v,
                                       guard, s->horizon, s->slack);
    }
    if (p->kind == CB_ACM_PAIR_VT)
        return cb_certificate_vertex_triangle(x[0], V[p->v[0]], x[1], V[p->v[1]], x[2], V[p->v[2]], x[3],
                                              V[p->v[3]], guard, s->horizon);
    return cb_certificate_edge_edge(x[0], V[p->v[0]], x[1], V[p->v[1]], x[2], V[p->v[2]], x[3], V[p->v[3]],
                                    guard, s->horizon);
}

static void schedule_cert(acm_solver *s, int pid, double t)
{
    double ds = certificate(s, &s->pairs[pid], t);
    cb_acm_queue_defer(&s->q, id_cert(s, pid), t + ds, cb_acm_qkey(CB_ACM_EV_CERT, pid));
}

static double next_layer_tick(const acm_pair *p, double after)
{
    double best = INFINITY;
    for (int l = 1; l <= p->layers; l++) {
        double tl = cb_acm_next_tick(p->h1 * cb_acm_step_scale(l), after);
        if (tl < best) best = tl;
    }
    return best;
}

static void schedule_layer(acm_solver *s, int pid)
{
    acm_pair *p = &s->pairs[pid];
    if (p->layers == 0) {
        cb_acm_queue_remove(&s->q, id_layer(s, pid));
        return;
    }
    cb_acm_queue_set(&s->q, id_layer(s, pid), next_layer_tick(p, p->t_last),
                     cb_acm_qkey(CB_ACM_EV_LAYER, pid));
}

/* Recompute what depends on the trajectories of the touched vertices whose velocity left
 * the allowance around their reference velocity (all of them when slack = 0). */
static void reschedule_touched(acm_solver *s, double t)
{
    double slack2 = s->slack * s->slack;
    for (int k = 0; k < s->ntouched; k++) {
        int i = s->touched[k];
        if (s->slack > 0) {
            double dv[3];
            cb_v3_sub(dv, s->vx[i].v, s->Vref[i]);
            if (cb_v3_norm2(dv) <= slack2) continue;
        }
        set_vref(s, i);
        schedule_box(s, i, t);
        for (int sl = s->vhead[i]; sl >= 0; sl = s->slot_next[sl]) {
            int pid = sl >> 2;
            acm_pair *p = &s->pairs[pid];
            if (p->stamp == s->stamp) continue;
            p->stamp = s->stamp;
            schedule_cert(s, pid, t);
        }
    }
    s->ntouched = 0;
}

/* ---------------------------------------------------------------- pairs */

static int grow_pairs(acm_solver *s, int need)
{
    if (need <= s->cap_pairs) return CB_OK;
    int ncap = s->cap_pairs ? s->cap_pairs : 1024;
    while (ncap < need) ncap *= 2;
    acm_pair *p = cb_realloc(s->pairs, (size_t)ncap * sizeof *p);
    if (!p) return CB_ERR_NOMEM;
    s->pairs = p;
    int *fi = cb_realloc(s->free_ids, (size_t)ncap * sizeof *fi);
    if (!fi) return CB_ERR_NOMEM;
    s->free_ids = fi;
    int *od = cb_realloc(s->order, (size_t)ncap * sizeof *od);
    if (!od) return CB_ERR_NOMEM;
    s->order = od;
    int *sn = cb_realloc(s->slot_next, (size_t)ncap * 4 * sizeof *sn);
    if (!sn) return CB_ERR_NOMEM;
    s->slot_next = sn;
    int *sp = cb_realloc(s->slot_prev, (size_t)ncap * 4 * sizeof *sp);
    if (!sp) return CB_ERR_NOMEM;
    s->slot_prev = sp;
    if (cb_acm_queue_reserve(&s->q, s->base_pair + 2 * ncap)) return CB_ERR_NOMEM;
    s->cap_pairs = ncap;
    return CB_OK;
}

static uint64_t pair_key(int kind, int a, int b)
{
    return ((uint64_t)kind << 62) | ((uint64_t)(unsigned)a << 31) | (uint64_t)(unsigned)b;
}

static inline size_t hash64(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return (size_t)k;
}

static int hash_find(const acm_solver *s, uint64_t key)
{
    if (!s->hcap) return -1;
    size_t mask = (size_t)s->hcap - 1;
    for (size_t h = hash64(key) & mask;; h = (h + 1) & mask) {
        if (s->hval[h] < 0) return -1;
        if (s->hkey[h] == key) return s->hval[h];
    }
}

static void hash_insert(acm_solver *s, uint64_t key, int id)
{
    size_t mask = (size_t)s->hcap - 1;
    size_t h = hash64(key) & mask;
    while (s->hval[h] >= 0) h = (h + 1) & mask;
    s->hkey[h] = key;
    s->hval[h] = id;
}

/* Create a pair: *id its id, or -1 when it has no free vertex (no pair needed; not an
 * error). Returns CB_OK or CB_ERR_NOMEM with a message. */
static int pair_create(acm_solver *s, int kind, int a, int b, double t, int *id_out, cb_error *err)
{
    *id_out = -1;
    acm_pair np;
    memset(&np, 0, sizeof np);
    np.kind = kind;
    np.a = a;
    np.b = b;
    const cb_mesh *m = s->m;
    if (kind == CB_ACM_PAIR_VC) {
        np.nvtx = 1;
        np.v[0] = a;
        np.cor2 = s->w->colliders[b].restitution * s->w->colliders[b].restitution;
        np.mu = s->w->colliders[b].friction;
        np.eta1 = 0.5 * s->eta1; /* the mid-surface keeps half the thickness from colliders */
    } else {
        np.nvtx = 4;
        if (kind == CB_ACM_PAIR_VT) {
            np.v[0] = a;
            for (int k = 0; k < 3; k++) np.v[k + 1] = m->f[b][k];
        } else {
            np.v[0] = m->e[a][0];
            np.v[1] = m->e[a][1];
            np.v[2] = m->e[b][0];
            np.v[3] = m->e[b][1];
        }
        np.cor2 = s->self_cor * s->self_cor;
        np.mu = s->self_mu;
        np.eta1 = s->eta1;
    }
    double sim = pair_step_inv_mass(s, &np);
    if (!(sim > 0)) return CB_OK;
    np.h1 = s->psafety * 2.0 / sqrt(s->r1 * sim);
    np.live = 1;
    np.seen = 1;
    np.t_last = t;
    np.stamp = 0;
    np.glayers = -1;
    int id;
    if (s->nfree) id = s->free_ids[--s->nfree];
    else {
        if (grow_pairs(s, s->npairs + 1))
            return CB_FAIL(err, CB_ERR_NOMEM, "acm: out of memory for %d contact pairs", s->npairs + 1);
        id = s->npairs++;
    }
    s->pairs[id] = np;
    for (int k = 0; k < np.nvtx; k++) {
        int sl = 4 * id + k, i = np.v[k];
        s->slot_prev[sl] = -1;
        s->slot_next[sl] = s->vhead[i];
        if (s->vhead[i] >= 0) s->slot_prev[s->vhead[i]] = sl;
        s->vhead[i] = sl;
    }
    schedule_cert(s, id, t);
    *id_out = id;
    return CB_OK;
}

static void pair_destroy(acm_solver *s, int id)
{
    acm_pair *p = &s->pairs[id];
    for (int k = 0; k < p->nvtx; k++) {
        int sl = 4 * id + k, i = p->v[k];
        int pr = s->slot_prev[sl], nx = s->slot_next[sl];
        if (pr >= 0) s->slot_next[pr] = nx;
        else s->vhead[i] = nx;
        if (nx >= 0) s->slot_prev[nx] = pr;
    }
    cb_acm_queue_remove(&s->q, id_cert(s, id));
    cb_acm_queue_remove(&s->q, id_layer(s, id));
    p->live = 0;
    s->free_ids[s->nfree++] = id;
}

/* ---------------------------------------------------------------- broad phase */

/* The narrow filter of a broad-phase candidate, run by the k-DOP tree's self query as it
 * produces each candidate (cb_bvh_self_query_filtered), so that the far ones are never
 * stored (before contact nearly all of them: mesh neighbours a little farther than
 * reach apart, ~80,000 a rebuild on the 60 x 60 drape). Its cheap part is the query's
 * slab test on the box centres' projections s->proj with gaps sep[j] (|d_j| times reach
 * plus a margin that covers the rounding of the projections and of the distance
 * routines): a pair more than sep[j] apart on a slab is surely at distance >= reach
 * (the exact distances were half of the time of a rebuild). keep_near is the rest: the
 * distance between the primitives at the box centres below reach. */
typedef struct near_ctx {
    const acm_solver *s;
    double reach;
} near_ctx;

static int keep_near(void *ctx, unsigned kind, int a, int b)
{
    const near_ctx *nc = ctx;
    const double (*c)[3] = (const double (*)[3])nc->s->center;
    const cb_mesh *m = nc->s->m;
    double d2;
    if (kind == CB_BVH_VT)
        d2 = cb_point_triangle_distance2(c[a], c[m->f[b][0]], c[m->f[b][1]], c[m->f[b][2]], NULL, NULL);
    else
        d2 = cb_edge_edge_distance2(c[m->e[a][0]], c[m->e[a][1]], c[m->e[b][0]], c[m->e[b][1]], NULL, NULL,
                                    NULL, NULL);
    return !(d2 >= nc->reach * nc->reach);
}

static int rebuild(acm_solver *s, double t, cb_error *err)
{
    s->st.rebuilds++;
    double cmax = 0.0;
    for (int i = 0; i < s->nv; i++) {
        advance(s, i, t);
        cb_v3_copy(s->center[i], s->vx[i].x);
        for (int k = 0; k < 3; k++) cmax = fmax(cmax, fabs(s->vx[i].x[k]));
        for (int j = 0; j < s->ndir; j++) s->proj[i * s->ndir + j] = cb_v3_dot(s->dirs[j], s->vx[i].x);
    }
    s->cmax = cmax;
    if (s->bvh) {
        double margin = s->rho + 0.5 * cb_acm_activation(s->eta1, 1);
        /* the tree's topology is split once, at create, and refitted at every later
           rebuild: a cloth's triangles stay neighbours on its surface, so a subtree's
           volume stays a compact patch (re-splitting was ~4% of the 60 x 60 drape) */
        int rc = s->st.rebuilds == 1 ? cb_bvh_build(s->bvh, (const double (*)[3])s->center, margin, err)
                                     : cb_bvh_refit(s->bvh, (const double (*)[3])s->center, margin, err);
        /* every vertex stays in its box, inside a ball of radius rho sqrt(3) (the axis
         * slabs alone bound it), so a pair's distance moves by at most 2 sqrt(3) rho */
        double reach = cb_acm_activation(s->eta1, 1) + 2.0 * sqrt(3.0) * s->rho;
        /* a relative 1e-6 of reach, and 1e-12 of the coordinate scale: far above the
           rounding of the projections (integer directions: sums of coordinates) and of
           the distances, so a separated pair is surely not near */
        double sep[CB_BV_MAX_SLABS];
        for (int j = 0; j < s->ndir; j++) sep[j] = s->dirlen[j] * (reach * (1.0 + 1e-6) + 1e-12 * cmax);
        near_ctx nc = {s, reach};
        cb_bvh_filter f = {s->proj, sep, keep_near, &nc};
        if (!rc) rc = cb_bvh_self_query_filtered(s->bvh, CB_BVH_VT | CB_BVH_EE, &f, s->res, err);
        if (rc) return rc;
        for (int id = s->nvc_pairs; id < s->npairs; id++) s->pairs[id].seen = 0;
        /* the near candidates, vertex-triangle then edge-edge, each in traversal order */
        for (int pass = 0; pass < 2; pass++) {
            const cb_pair_list *L = pass == 0 ? &s->res->vt : &s->res->ee;
            int kind = pass == 0 ? CB_ACM_PAIR_VT : CB_ACM_PAIR_EE;
            for (long c = 0; c < L->n; c++) {
                int a = L->p[c][0], b = L->p[c][1];
                int id = hash_find(s, pair_key(kind, a, b));
                if (id >= 0) {
                    s->pairs[id].seen = 1;
                    continue;
                }
                int rc = pair_create(s, kind, a, b, t, &id, err);
                if (rc) return rc;
            }
        }
        int nlive = 0;
        for (int id = s->nvc_pairs; id < s->npairs; id++) {
            acm_pair *p = &s->pairs[id];
            if (!p->live) continue;
            if (!p->seen && p->layers == 0) pair_destroy(s, id);
            else s->order[nlive++] = id;
        }
        /* rebuild the hash over the live self pairs */
        int need = 16;
        while (need < 2 * nlive + 16) need *= 2;
        if (need > s->hcap) {
            uint64_t *hk = cb_realloc(s->hkey, (size_t)need * sizeof *hk);
            if (!hk) return CB_FAIL(err, CB_ERR_NOMEM, "acm: out of memory (hash)");
            s->hkey = hk;
            int *hv = cb_realloc(s->hval, (size_t)need * sizeof *hv);
            if (!hv) return CB_FAIL(err, CB_ERR_NOMEM, "acm: out of memory (hash)");
            s->hval = hv;
            s->hcap = need;
        }
        for (int h = 0; h < s->hcap; h++) s->hval[h] = -1;
        for (int k = 0; k < nlive; k++) {
            const acm_pair *p = &s->pairs[s->order[k]];
            hash_insert(s, pair_key(p->kind, p->a, p->b), s->order[k]);
        }
    }
    for (int i = 0; i < s->nv; i++) schedule_box(s, i, t);
    return CB_OK;
}

/* ---------------------------------------------------------------- events */

static void event_stretch(acm_solver *s, int e, double t)
{
    const int *ed = s->m->e[e];
    int a = ed[0], b = ed[1];
    double h = s->h_edge[e] * (s->tick_edge[e] == 0 ? 0.5 : 1.0);
    advance(s, a, t);
    advance(s, b, t);
    double d[3];
    cb_v3_sub(d, s->vx[a].x, s->vx[b].x);
    double l = cb_v3_norm(d);
    if (l > 0) {
        double f = -s->w->model.k_stretch * (l - s->w->model.rest_length[e]) / l; /* force on a per unit d */
        double J[3];
        cb_v3_scale(J, d, h * f);
        kick(s, a, J);
        cb_v3_scale(J, J, -1.0);
        kick(s, b, J);
    }
    s->tick_edge[e]++;
}

static void event_bend(acm_solver *s, int hi, double t)
{
    const int *hv = s->m->h[hi];
    double h = s->h_hinge[hi] * (s->tick_hinge[hi] == 0 ? 0.5 : 1.0);
    for (int k = 0; k < 4; k++) advance(s, hv[k], t);
    double g[4][3];
    double th = cb_dihedral_angle_at(s->vx[hv[0]].x, s->vx[hv[1]].x, s->vx[hv[2]].x, s->vx[hv[3]].x, g, 1);
    double c = -2.0 * s->w->model.k_bend * s->w->model.hinge_weight[hi] * (th - s->w->model.hinge_rest_angle[hi]);
    if (c != 0.0 && isfinite(th))
        for (int k = 0; k < 4; k++) {
            double J[3];
            cb_v3_scale(J, g[k], h * c);
            kick(s, hv[k], J);
        }
    s->tick_hinge[hi]++;
}

/* The group's member `cur` has ticked: the group's next member and its tick time. Members
 * with the same tick count tick at the same time (equal steps) and are ordered by index;
 * members that have ticked once more tick strictly later (clock_groups only merges steps
 * > t0), so the group's entry, moved to that time, is always the earliest event of its
 * members and the processing order is the one of one queue entry per element. */
static inline double group_next(acm_solver *s, acm_group *g, int *e_out)
{
    if (++g->cur == g->n) g->cur = 0;
    int e = s->gmembers[g->first + g->cur];
    long c = g->kind == CB_ACM_EV_STRETCH ? s->tick_edge[e] : s->tick_hinge[e];
    double h = g->kind == CB_ACM_EV_STRETCH ? s->h_edge[e] : s->h_hinge[e];
    *e_out = e;
    return c == 0 ? s->t0 : (double)c * h;
}

static void event_gravity(acm_solver *s, double t)
{
    double h = s->hg * (s->tick_gravity == 0 ? 0.5 : 1.0);
    for (int i = 0; i < s->nv; i++) {
        if (s->vx[i].im == 0.0) continue;
        advance(s, i, t);
        cb_v3_axpy(s->vx[i].v, h, s->w->gravity);
        if (s->knot_fn) s->knot_fn(s->knot_ctx, i, s->vx[i].tv, s->vx[i].x, s->vx[i].v);
    }
    cb_v3_axpy(s->grav_imp, h * s->free_mass, s->w->gravity);
    s->tick_gravity++;
    cb_acm_queue_set(&s->q, 0, (double)s->tick_gravity * s->hg, cb_acm_qkey(CB_ACM_EV_GRAVITY, 0));
}

/* Everything depends on the trajectories after a gravity kick (slack = 0). */
static void reschedule_all(acm_solver *s, double t)
{
    for (int i = 0; i < s->nv; i++) set_vref(s, i);
    for (int i = 0; i < s->nv; i++) schedule_box(s, i, t);
    for (int id = 0; id < s->npairs; id++)
        if (s->pairs[id].live) schedule_cert(s, id, t);
}

static int event_cert(acm_solver *s, int pid, double t, cb_error *err)
{
    acm_pair *p = &s->pairs[pid];
    double n[3], w[4];
    double d = pair_geometry(s, p, t, n, w, NULL);
    if (!(d > 0))
        return CB_FAIL(err, CB_ERR_NUMERIC,
                       "acm: %s pair (%d, %d) at distance %g at t = %.17g: the configuration intersects",
                       p->kind == CB_ACM_PAIR_VT ? "vertex-triangle" : p->kind == CB_ACM_PAIR_EE ? "edge-edge"
                                                                                                 : "vertex-collider",
                       p->a, p->b, d, t);
    int old = p->layers;
    while (d < cb_acm_activation(p->eta1, p->layers + 1)) {
        if (++p->layers > s->max_layers) goto too_deep;
    }
    double ds = certificate(s, p, t);
    while (!(ds > 0)) { /* rounding at the guard: one more layer is always safe */
        if (++p->layers > s->max_layers) goto too_deep;
        ds = certificate(s, p, t);
    }
    if (p->layers != old) {
        if (p->t_last < t) p->t_last = t;
        schedule_layer(s, pid);
    }
    if (p->layers > s->st.max_layers) s->st.max_layers = p->layers;
    cb_acm_queue_defer(&s->q, id_cert(s, pid), t + ds, cb_acm_qkey(CB_ACM_EV_CERT, pid));
    record(s, t, CB_ACM_EV_CERT, pid, p, d, 0.0);
    return CB_OK;
too_deep:
    return CB_FAIL(err, CB_ERR_NUMERIC,
                   "acm: pair (%d, %d) needs more than max_layers = %d penalty layers at distance %g "
                   "(t = %g): no progress (eta or stiffness too small for the velocities)",
                   p->a, p->b, s->max_layers, d, t);
}

static void event_layer(acm_solver *s, int pid, double t)
{
    acm_pair *p = &s->pairs[pid];
    for (int k = 0; k < p->nvtx; k++) advance(s, p->v[k], t);
    double n[3], w[4], vc[3];
    double d = pair_geometry(s, p, t, n, w, vc);
    double J = 0.0;
    int deepest_ticks = 0;
    for (int l = 1; l <= p->layers; l++) {
        double hl = p->h1 * cb_acm_step_scale(l);
        if (cb_acm_next_tick(hl, p->t_last) != t) continue;
        if (l == p->layers) deepest_ticks = 1;
        double g = cb_acm_eta(p->eta1, l) - d;
        if (g > 0) J += hl * cb_acm_stiffness(s->r1, l) * g;
    }
    double vrel[3];
    cb_v3_scale(vrel, vc, -1.0);
    double wim = 0.0;
    for (int k = 0; k < p->nvtx; k++) {
        cb_v3_axpy(vrel, w[k], s->vx[p->v[k]].v);
        wim += w[k] * w[k] * s->w->inv_mass[p->v[k]];
    }
    double vn = cb_v3_dot(vrel, n);
    if (J > 0) {
        if (vn > 0) J *= p->cor2;
        double Jt[3] = {0, 0, 0};
        if (p->mu > 0 && wim > 0) {
            double vt[3];
            cb_v3_copy(vt, vrel);
            cb_v3_axpy(vt, -vn, n);
            double lt = cb_v3_norm(vt);
            if (lt > 0) {
                double jt = fmin(p->mu * J, lt / wim);
                cb_v3_scale(Jt, vt, -jt / lt);
            }
        }
        for (int k = 0; k < p->nvtx; k++) {
            double Jk[3];
            for (int c = 0; c < 3; c++) Jk[c] = w[k] * (J * n[c] + Jt[c]);
            kick(s, p->v[k], Jk);
            if (p->kind == CB_ACM_PAIR_VC && s->w->inv_mass[p->v[k]] > 0) {
                cb_v3_add(s->ext, s->ext, Jk);
                s->work += cb_v3_dot(Jk, vc); /* the collider's impulse at its surface velocity */
            }
        }
    }
    int deactivated = 0;
    if (deepest_ticks && d >= cb_acm_activation(p->eta1, p->layers) && vn > 0) {
        p->layers--;
        deactivated = 1;
    }
    p->t_last = t;
    schedule_layer(s, pid);
    /* the new (shallower) guard needs a new certificate. It is computed with the
       reference velocities; the pair is not stamped, so that reschedule_touched renews
       it again if this event's kicks move a vertex's reference velocity (stamping it
       here left a certificate computed with the pre-kick velocities in place) */
    if (deactivated) schedule_cert(s, pid, t);
    record(s, t, CB_ACM_EV_LAYER, pid, p, d, J);
}

/* The renewals after the elastic kicks of one time (see run_until): every vertex they
 * touched whose velocity left its allowance gets its reference velocity, box exit and
 * certificates renewed once, from its velocity after all of them. */
static void flush_batch(acm_solver *s)
{
    reschedule_touched(s, s->batch_t);
    s->batch_open = 0;
}

/* Process every event with time <= t_end. */
static int run_until(acm_solver *s, double t_end, cb_step_info *info, cb_error *err)
{
    double stage[5] = {0, 0, 0, 0, 0};
    double w0 = s->profile ? cb_wall_time() : 0.0;
    int rc = CB_OK;
    while (!cb_acm_queue_empty(&s->q)) {
        const cb_acm_qentry *top = cb_acm_queue_top(&s->q);
        if (!(top->t <= t_end)) break;
        if ((s->events_step & 4095) == 4095 && cb_interrupt_requested()) { /* a step can take hours */
            rc = CB_FAIL(err, CB_ERR_INTERRUPTED, "acm: interrupted by a signal at t = %.9g s, %ld events into "
                         "the step", top->t, s->events_step);
            break;
        }
        double t = top->t;
        int id = top->id;
        int elastic = id > 0 && id < s->base_box;
        /* the elastic kicks of one time are renewed together (batch_open), before anything
           else comes up: renewals rank above the elastic kinds, so nothing they queue
           comes before an elastic event of the same time */
        if (s->batch_open && !(elastic && t == s->batch_t)) {
            double c1 = s->profile ? cb_wall_time() : 0.0;
            flush_batch(s);
            if (s->profile) stage[4] += cb_wall_time() - c1;
            continue;
        }
        /* box exits and certificates (deferred) may come up before they are due */
        if (id_deferred(s, id) && !due_check(s, id, t, top->key))
            continue;
        if (elastic) {
            /* elastic clock group: its members that tick at this time run here one after
               the other, in index order, while the group's entry stays at the top of the
               heap; it moves once, to the next member's tick, at the end of the run (one
               short sift per run instead of one per event, and no pop and push). The run
               stops where another entry comes first: `limit`, the least of the root's
               children at its start (cb_acm_queue_second). Entries queued during the
               run are layer ticks (later than t), never before (t, kind, member), so they
               cannot come between. The kicks' renewals wait until every elastic event
               of time t has run (other groups' runs at t too): the positions at t do not
               depend on kicks at t, and certificates and box exits only look forward
               from t, so one renewal per vertex from its velocity after all of them
               holds what a renewal after each kick held (with velocity_slack 0 the same
               certificates and box exits: the last renewal of each was already after
               the last kick on its vertices). Not timed one by one: the clock reads cost
               as much as the event; "elastic+gravity" is the loop time left over by the
               other stages */
            if (!s->batch_open) {
                s->stamp++;
                s->batch_open = 1;
                s->batch_t = t;
            }
            acm_group *g = &s->groups[s->group_of[id - s->base_edge]];
            int kind = g->kind, e = s->gmembers[g->first + g->cur];
            const cb_acm_qentry limit = cb_acm_queue_second(&s->q);
            s->now = t;
            for (;;) {
                if (kind == CB_ACM_EV_STRETCH) event_stretch(s, e, t);
                else event_bend(s, e, t);
                if (s->trace_n) record(s, t, kind, e, NULL, NAN, 0.0);
                s->st.events[kind]++;
                s->events_step++;
                double tn = group_next(s, g, &e);
                cb_acm_qentry next = {tn, cb_acm_qkey(kind, e), id};
                /* the interrupt check at the top of the loop sees every event count */
                if (tn == t && cb_acm_qentry_less(&next, &limit) && (s->events_step & 4095) != 4095) continue;
                cb_acm_queue_set(&s->q, id, tn, next.key);
                break;
            }
            continue;
        }
        s->now = t;
        s->stamp++;
        cb_acm_queue_pop(&s->q);
        double c0 = s->profile ? cb_wall_time() : 0.0;
        int kind, st;
        if (id == 0) {
            kind = CB_ACM_EV_GRAVITY;
            st = 0;
            event_gravity(s, t);
            record(s, t, kind, 0, NULL, NAN, 0.0);
        } else if (id < s->base_pair) {
            kind = CB_ACM_EV_KDOP;
            st = 3;
            record(s, t, kind, id - s->base_box, NULL, NAN, 0.0);
            rc = rebuild(s, t, err);
        } else if (((id - s->base_pair) & 1) == 0) {
            kind = CB_ACM_EV_CERT;
            st = 2;
            rc = event_cert(s, (id - s->base_pair) >> 1, t, err);
        } else {
            kind = CB_ACM_EV_LAYER;
            st = 1;
            event_layer(s, (id - s->base_pair) >> 1, t);
        }
        double c1 = s->profile ? cb_wall_time() : 0.0;
        if (rc) break;
        if (kind == CB_ACM_EV_GRAVITY && s->slack == 0.0) {
            s->ntouched = 0;
            reschedule_all(s, t);
        } else if (kind == CB_ACM_EV_GRAVITY) {
            s->ntouched = 0;
            for (int i = 0; i < s->nv; i++)
                if (s->w->inv_mass[i] > 0) touch(s, i);
            reschedule_touched(s, t);
        } else if (s->ntouched) {
            reschedule_touched(s, t);
        }
        double c2 = s->profile ? cb_wall_time() : 0.0;
        stage[st] += c1 - c0;
        stage[4] += c2 - c1;
        s->st.events[kind]++;
        s->events_step++;
    }
    if (s->batch_open) {
        double c1 = s->profile ? cb_wall_time() : 0.0;
        flush_batch(s);
        if (s->profile) stage[4] += cb_wall_time() - c1;
    }
    if (s->profile && info) {
        stage[0] = fmax(0.0, cb_wall_time() - w0 - stage[1] - stage[2] - stage[3] - stage[4]);
        /* accumulated per event kind rather than lapped: see the elastic clock group above */
        cb_step_info_stage(info, "elastic+gravity", stage[0], 0);
        cb_step_info_stage(info, "penalty", stage[1], 1);
        cb_step_info_stage(info, "slab", stage[2], 1);
        cb_step_info_stage(info, "kdop", stage[3], 1);
        cb_step_info_stage(info, "reschedule", stage[4], 1);
    }
    return rc;
}

/* ---------------------------------------------------------------- create */

/* Element steps (see the header comment). */
static int compute_clocks(acm_solver *s, cb_error *err)
{
    const cb_mesh *m = s->m;
    const cb_world *w = s->w;
    int *deg = cb_calloc((size_t)s->nv, sizeof *deg), *hdeg = cb_calloc((size_t)s->nv, sizeof *hdeg);
    if (!deg || !hdeg) {
        free(deg);
        free(hdeg);
        return CB_FAIL(err, CB_ERR_NOMEM, "acm: out of memory");
    }
    for (int e = 0; e < m->ne; e++) {
        deg[m->e[e][0]]++;
        deg[m->e[e][1]]++;
    }
    for (int h = 0; h < m->nh; h++)
        for (int k = 0; k < 4; k++) hdeg[m->h[h][k]]++;
    double k = w->model.k_stretch;
    for (int e = 0; e < m->ne; e++) {
        double om2 = 0;
        for (int c = 0; c < 2; c++) {
            int i = m->e[e][c];
            om2 = fmax(om2, deg[i] * 2.0 * k * w->inv_mass[i]);
        }
        s->h_edge[e] = om2 > 0 ? s->safety * 2.0 / sqrt(om2) : INFINITY;
    }
    const double (*x)[3] = (const double (*)[3])m->x;
    for (int h = 0; h < m->nh; h++) {
        const int *hv = m->h[h];
        double g[4][3], om2 = 0;
        cb_dihedral_angle(x[hv[0]], x[hv[1]], x[hv[2]], x[hv[3]], g);
        for (int c = 0; c < 4; c++) {
            int i = hv[c];
            om2 = fmax(om2, hdeg[i] * 8.0 * w->model.k_bend * w->model.hinge_weight[h] * cb_v3_norm2(g[c]) *
                                w->inv_mass[i]);
        }
        s->h_hinge[h] = om2 > 0 && isfinite(om2) ? s->safety * 2.0 / sqrt(om2) : INFINITY;
    }
    if (s->bend_clock_stretch) {
        /* no hinge ticks slower than the fastest spring at its vertices (header comment,
           "Multistep resonance"); vmin: the smallest spring step at each vertex */
        double *vmin = cb_calloc((size_t)s->nv + 1, sizeof *vmin);
        if (!vmin) {
            free(deg);
            free(hdeg);
            return CB_FAIL(err, CB_ERR_NOMEM, "acm: out of memory");
        }
        for (int i = 0; i < s->nv; i++) vmin[i] = INFINITY;
        for (int e = 0; e < m->ne; e++)
            for (int c = 0; c < 2; c++) vmin[m->e[e][c]] = fmin(vmin[m->e[e][c]], s->h_edge[e]);
        for (int h = 0; h < m->nh; h++)
            for (int c = 0; c < 4; c++) s->h_hinge[h] = fmin(s->h_hinge[h], vmin[m->h[h][c]]);
        free(vmin);
    }
    free(deg);
    free(hdeg);
    return CB_OK;
}

typedef struct acm_clock {
    int kind, index;
    double h;
} acm_clock;

static int clock_cmp(const void *pa, const void *pb)
{
    const acm_clock *a = pa, *b = pb;
    if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
    if (a->h != b->h) return a->h < b->h ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

/* Group the running elastic clocks by kind and bitwise-equal step and queue one entry per
 * group at t0. Steps <= t0 stay alone (their tick 1 at h would not come after tick 0 at
 * t0, which the group order needs: see group_next). */
static int clock_groups(acm_solver *s, cb_error *err)
{
    int n = s->ne + s->nh, nc = 0;
    acm_clock *c = cb_calloc((size_t)n + 1, sizeof *c);
    s->groups = cb_calloc((size_t)n + 1, sizeof *s->groups);
    s->gmembers = cb_calloc((size_t)n + 1, sizeof *s->gmembers);
    s->group_of = cb_calloc((size_t)n + 1, sizeof *s->group_of);
    if (!c || !s->groups || !s->gmembers || !s->group_of) {
        free(c);
        return CB_FAIL(err, CB_ERR_NOMEM, "acm: out of memory");
    }
    for (int e = 0; e < s->ne; e++)
        if (isfinite(s->h_edge[e]) && s->w->model.k_stretch > 0)
            c[nc++] = (acm_clock){CB_ACM_EV_STRETCH, e, s->h_edge[e]};
    for (int h = 0; h < s->nh; h++)
        if (isfinite(s->h_hinge[h]) && s->w->model.k_bend > 0)
            c[nc++] = (acm_clock){CB_ACM_EV_BEND, h, s->h_hinge[h]};
    qsort(c, (size_t)nc, sizeof *c, clock_cmp);
    for (int k = 0; k < n; k++) s->group_of[k] = -1;
    s->ngroups = 0;
    for (int k = 0; k < nc;) {
        int k1 = k + 1;
        if (c[k].h > s->t0)
            while (k1 < nc && c[k1].kind == c[k].kind && c[k1].h == c[k].h) k1++;
        acm_group *g = &s->groups[s->ngroups];
        g->kind = c[k].kind;
        g->first = k;
        g->n = k1 - k;
        g->cur = 0;
        g->h = c[k].h;
        g->id = (g->kind == CB_ACM_EV_STRETCH ? s->base_edge : s->base_hinge) + c[k].index;
        for (int j = k; j < k1; j++) s->gmembers[j] = c[j].index;
        s->group_of[g->id - s->base_edge] = s->ngroups++;
        cb_acm_queue_set(&s->q, g->id, s->t0, cb_acm_qkey(g->kind, c[k].index));
        k = k1;
    }
    free(c);
    return CB_OK;
}

static void acm_destroy(void *self);

static int acm_create(const cb_world *w, const cb_params *p, void **self, cb_error *err)
{
    if (!w || !self) return CB_FAIL(err, CB_ERR_INPUT, "acm: NULL argument");
    acm_solver *s = cb_calloc(1, sizeof *s);
    if (!s) return CB_FAIL(err, CB_ERR_NOMEM, "acm: out of memory");
    s->w = w;
    s->m = w->mesh;
    s->nv = w->nv;
    s->ne = s->m->ne;
    s->nh = s->m->nh;
    s->nf = s->m->nf;
    s->nc = w->ncolliders;
    double mean_edge = 0;
    for (int e = 0; e < s->ne; e++) mean_edge += w->model.rest_length[e];
    mean_edge = s->ne ? mean_edge / s->ne : 0.0;
    double eta_def = w->thickness > 0 ? w->thickness : 1e-3;
    double r_def = w->model.k_stretch > 0 ? w->model.k_stretch : 1000.0;
    double hg_def = w->scene ? 0.25 * w->scene->dt : 1e-3;
    int kd = 2;
    cb_params q;
    int rc = cb_params_begin(p, &q, err);
    if (!rc) rc = cb_params_double(&q, "safety", 0.5, 1e-6, 1.0, &s->safety,
                                   "elastic clocks: h = safety 2/omega per element", err);
    if (!rc) rc = cb_params_double(&q, "penalty_safety", 0.5, 1e-6, 1.0, &s->psafety,
                                   "penalty layer clocks: the same factor for each layer's step", err);
    if (!rc) rc = cb_params_double(&q, "eta", eta_def, 1e-12, 1e3, &s->eta1,
                                   "first penalty layer eta(1) of self contact (m; default the cloth thickness; colliders: eta / 2)", err);
    if (!rc) rc = cb_params_double(&q, "stiffness", r_def, 1e-12, 1e15, &s->r1,
                                   "stiffness r(1) of the first penalty layer (N/m; default k_stretch)", err);
    if (!rc) rc = cb_params_double(&q, "gravity_step", hg_def, 1e-12, 1e3, &s->hg,
                                   "step of the gravity clock (s; default dt/4)", err);
    double rho_def = fmax(0.12 * mean_edge, 0.5 * s->eta1);
    if (!rc) rc = cb_params_double(&q, "box_radius", rho_def, 1e-12, 1e3, &s->rho,
                                   "half width of a vertex's kinetic k-DOP box (m; default 0.12 x mean edge)", err);
    if (!rc) rc = cb_params_choice(&q, "kdop", kdop_names, 2, &kd, "bounding volume of the broad phase", err);
    if (!rc) rc = cb_params_double(&q, "restitution", 1.0, 0.0, 1.0, &s->self_cor,
                                   "restitution of self contact", err);
    if (!rc) rc = cb_params_double(&q, "friction", 0.0, 0.0, 1e3, &s->self_mu,
                                   "Coulomb friction of self contact", err);
    if (!rc) rc = cb_params_double(&q, "horizon", 1.0, 1e-9, 1e6, &s->horizon,
                                   "time horizon of the kinetic certificates (s)", err);
    if (!rc) rc = cb_params_int(&q, "max_layers", 100000, 1, 100000000, &s->max_layers,
                                "penalty layers at most before the run stops (no progress)", err);
    if (!rc) rc = cb_params_bool(&q, "profile", 1, &s->profile,
                                 "per-stage wall times (false: the least overhead)", err);
    if (!rc) rc = cb_params_double(&q, "velocity_slack", 0.05, 0.0, 1e3, &s->slack,
                                   "velocity change a certificate tolerates (m/s; 0: the exact rescheduling)", err);
    int bc = 0;
    if (!rc) rc = cb_params_choice(&q, "bend_clock", bend_clock_names, 0, &bc,
                                   "hinge clock steps: stretch (at most the smallest spring step at the hinge's "
                                   "vertices; avoids the multistep resonance) or element (the hinge's own bound)", err);
    s->bend_clock_stretch = bc == 0;
    rc = cb_params_end(p, &q, rc, err);
    if (rc) {
        free(s);
        return rc;
    }
    s->kdop = kdop_kinds[kd];
    s->ndir = cb_bv_directions(s->kdop, &s->dirs);
    for (int j = 0; j < s->ndir; j++) s->dirlen[j] = cb_v3_norm(s->dirs[j]);
    int nv = s->nv;
    /* one cache line per vertex: over-allocate and align */
    s->vx_mem = cb_calloc((size_t)nv + 1, sizeof *s->vx);
    s->vx = s->vx_mem ? (acm_vertex *)(((uintptr_t)s->vx_mem + 63) & ~(uintptr_t)63) : NULL;
    s->Vref = cb_calloc((size_t)nv, sizeof *s->Vref);
    s->vref_norm = cb_calloc((size_t)nv + 1, sizeof *s->vref_norm);
    s->center = cb_calloc((size_t)nv, sizeof *s->center);
    s->proj = cb_calloc((size_t)nv * (size_t)s->ndir + 1, sizeof *s->proj);
    s->box_x = cb_calloc((size_t)nv, sizeof *s->box_x);
    s->box_t = cb_calloc((size_t)nv, sizeof *s->box_t);
    s->box_pending = cb_calloc((size_t)nv, sizeof *s->box_pending);
    s->vstamp = cb_calloc((size_t)nv, sizeof *s->vstamp);
    s->touched = cb_calloc((size_t)nv, sizeof *s->touched);
    s->vhead = cb_calloc((size_t)nv, sizeof *s->vhead);
    s->h_edge = cb_calloc((size_t)s->ne + 1, sizeof *s->h_edge);
    s->tick_edge = cb_calloc((size_t)s->ne + 1, sizeof *s->tick_edge);
    s->h_hinge = cb_calloc((size_t)s->nh + 1, sizeof *s->h_hinge);
    s->tick_hinge = cb_calloc((size_t)s->nh + 1, sizeof *s->tick_hinge);
    if (!s->vx || !s->Vref || !s->vref_norm || !s->center || !s->proj || !s->box_x || !s->box_t || !s->box_pending || !s->vstamp || !s->touched || !s->vhead || !s->h_edge ||
        !s->tick_edge || !s->h_hinge || !s->tick_hinge) {
        acm_destroy(s);
        return CB_FAIL(err, CB_ERR_NOMEM, "acm: out of memory");
    }
    for (int i = 0; i < nv; i++) {
        cb_v3_copy(s->vx[i].x, w->state.x[i]);
        cb_v3_copy(s->vx[i].v, w->state.v[i]);
        if (w->pinned[i]) {
            cb_world_pin_target(w, i, w->state.t, s->vx[i].x);
            cb_world_pin_velocity(w, i, w->state.t, s->vx[i].v);
        }
        set_vref(s, i);
        s->vx[i].tv = w->state.t;
        s->vx[i].im = w->inv_mass[i];
        s->vhead[i] = -1;
        if (w->inv_mass[i] > 0) s->free_mass += w->mass[i];
    }
    s->now = w->state.t;
    if ((rc = compute_clocks(s, err))) {
        acm_destroy(s);
        return rc;
    }
    s->base_edge = 1;
    s->base_hinge = 1 + s->ne;
    s->base_box = 1 + s->ne + s->nh;
    s->base_pair = s->base_box + nv;
    if (cb_acm_queue_reserve(&s->q, s->base_pair + 2048) || grow_pairs(s, 1024)) {
        acm_destroy(s);
        return CB_FAIL(err, CB_ERR_NOMEM, "acm: out of memory");
    }
    if (s->nf > 0) {
        rc = cb_bvh_create(s->m, s->kdop, &s->bvh, err);
        if (!rc) rc = cb_bvh_result_create(&s->res, err);
        if (rc) {
            acm_destroy(s);
            return rc;
        }
    }
    /* clocks start at the current time with a half kick (tick 0) */
    double t0 = s->now;
    s->has_gravity = cb_v3_norm2(w->gravity) > 0 && s->free_mass > 0;
    if (s->has_gravity) cb_acm_queue_set(&s->q, 0, t0, cb_acm_qkey(CB_ACM_EV_GRAVITY, 0));
    s->t0 = t0;
    if ((rc = clock_groups(s, err))) {
        acm_destroy(s);
        return rc;
    }
    /* collider contact is per cloth vertex (header comment: no mesh colliders) */
    for (int c = 0; c < s->nc; c++)
        if (w->colliders[c].type == CB_COLLIDER_MESH) {
            rc = CB_FAIL(err, CB_ERR_INPUT,
                         "acm: collider %d (line %d) is a triangle-mesh collider, which acm does not support, "
                         "static or moving: its collider contact is per cloth vertex, and a mesh's edges and "
                         "corners could cut a cloth triangle between its vertices (solvers/acm/acm.c: what "
                         "supporting them takes)",
                         c, w->colliders[c].line);
            acm_destroy(s);
            return rc;
        }
    /* vertex-collider pairs are permanent */
    for (int i = 0; i < nv; i++) {
        if (w->inv_mass[i] == 0.0) continue;
        for (int c = 0; c < s->nc; c++) {
            double d = cb_collider_query(&w->colliders[c], t0, s->vx[i].x, NULL, NULL);
            if (!(d > 0)) {
                rc = CB_FAIL(err, CB_ERR_INPUT,
                             "acm: vertex %d starts inside collider %d (line %d) at distance %g: "
                             "acm needs a non-penetrating start",
                             i, c, w->colliders[c].line, d);
                acm_destroy(s);
                return rc;
            }
            int id;
            if ((rc = pair_create(s, CB_ACM_PAIR_VC, i, c, t0, &id, err))) {
                acm_destroy(s);
                return rc;
            }
        }
    }
    s->nvc_pairs = s->npairs;
    if ((rc = rebuild(s, t0, err))) {
        acm_destroy(s);
        return rc;
    }
    double hmin = INFINITY, hmax = 0;
    for (int e = 0; e < s->ne; e++) {
        hmin = fmin(hmin, s->h_edge[e]);
        hmax = fmax(hmax, s->h_edge[e]);
    }
    s->st.min_stretch_dt = hmin;
    s->st.max_stretch_dt = hmax;
    *self = s;
    return CB_OK;
}

static int acm_step(void *self, cb_world *w, double dt, cb_step_info *info, cb_error *err)
{
    acm_solver *s = self; /* arguments checked by cb_solver_step */
    (void)dt;
    double t1 = info->t_end; /* exactly where the harness puts the time (not t + dt) */
    cb_v3_zero(s->ext);
    cb_v3_zero(s->grav_imp);
    s->work = 0.0;
    s->events_step = 0;
    int rc = run_until(s, t1, info, err);
    info->events = s->events_step;
    if (rc) return rc;
    double energy = 0;
    int active = 0;
    for (int id = 0; id < s->npairs; id++) {
        const acm_pair *p = &s->pairs[id];
        if (!p->live || p->layers == 0) continue;
        double n[3], wt[4];
        double d = pair_geometry(s, p, t1, n, wt, NULL);
        energy += cb_acm_layer_energy(p->eta1, s->r1, p->layers, d);
        active++;
    }
    for (int i = 0; i < s->nv; i++) {
        if (w->pinned[i]) {
            cb_world_pin_target(w, i, t1, w->state.x[i]);
            cb_world_pin_velocity(w, i, t1, w->state.v[i]);
            continue;
        }
        pos_at(s, i, t1, w->state.x[i]);
        cb_v3_copy(w->state.v[i], s->vx[i].v);
    }
    for (int k = 0; k < 3; k++)
        info->external_impulse[k] = s->ext[k] + s->grav_imp[k] - s->free_mass * w->gravity[k] * dt;
    info->external_work = s->work;
    info->contact_energy = energy;
    info->contacts = active;
    info->iterations = 0;
    s->st.active_pairs = active;
    return CB_OK;
}

static void acm_destroy(void *self)
{
    acm_solver *s = self;
    if (!s) return;
    free(s->vx_mem);
    free(s->Vref);
    free(s->vref_norm);
    free(s->center);
    free(s->proj);
    free(s->box_x);
    free(s->box_t);
    free(s->box_pending);
    free(s->vstamp);
    free(s->touched);
    free(s->vhead);
    free(s->h_edge);
    free(s->tick_edge);
    free(s->h_hinge);
    free(s->tick_hinge);
    free(s->groups);
    free(s->gmembers);
    free(s->group_of);
    free(s->pairs);
    free(s->free_ids);
    free(s->order);
    free(s->slot_next);
    free(s->slot_prev);
    free(s->hkey);
    free(s->hval);
    cb_acm_queue_release(&s->q);
    cb_bvh_free(&s->bvh);
    cb_bvh_result_free(&s->res);
    free(s);
}

/* ---------------------------------------------------------------- introspection */

void cb_acm_set_trace(void *solver, cb_acm_trace_entry *buf, long cap, long *n)
{
    acm_solver *s = solver;
    if (!s) return;
    s->trace = buf;
    s->trace_cap = buf ? cap : 0;
    s->trace_n = buf ? n : NULL;
    if (n) *n = 0;
}

void cb_acm_set_path_knots(void *solver, cb_path_knot_fn fn, void *ctx)
{
    acm_solver *s = solver;
    if (!s) return;
    s->knot_fn = fn;
    s->knot_ctx = fn ? ctx : NULL;
}

void cb_acm_get_stats(const void *solver, cb_acm_stats *out)
{
    const acm_solver *s = solver;
    if (!s || !out) return;
    *out = s->st;
    int live = 0, active = 0;
    for (int id = 0; id < s->npairs; id++)
        if (s->pairs[id].live) {
            live++;
            if (s->pairs[id].layers > 0) active++;
        }
    out->live_pairs = live;
    out->active_pairs = active;
}

long cb_acm_element_ticks(const void *solver, int kind, int index)
{
    const acm_solver *s = solver;
    if (!s) return -1;
    if (kind == CB_ACM_EV_STRETCH && index >= 0 && index < s->ne) return s->tick_edge[index];
    if (kind == CB_ACM_EV_BEND && index >= 0 && index < s->nh) return s->tick_hinge[index];
    return -1;
}

double cb_acm_element_step(const void *solver, int kind, int index)
{
    const acm_solver *s = solver;
    if (!s) return NAN;
    if (kind == CB_ACM_EV_STRETCH && index >= 0 && index < s->ne) return s->h_edge[index];
    if (kind == CB_ACM_EV_BEND && index >= 0 && index < s->nh) return s->h_hinge[index];
    return NAN;
}

/* acm's separating slabs and penalty layers always cover the cloth against itself */
static int acm_self_collision(const void *self)
{
    (void)self;
    return 1;
}

static const char *acm_model(const void *self)
{
    (void)self;
    return "stretch springs / bending shells / contact layers";
}

const cb_solver_class cb_solver_acm = {
    .name = "acm",
    .summary = "asynchronous contact mechanics (Harmon 2009): AVI clocks, discrete penalty layers, "
               "kinetic separating slabs and k-DOP boxes; never interpenetrates",
    .flags = CB_SOLVER_EVENTS | CB_SOLVER_SUBSTEPS | CB_SOLVER_THREAD_INDEPENDENT | CB_SOLVER_COLLIDER_FRICTION |
             CB_SOLVER_MOVING_COLLIDERS,
    .bytes_per_vertex = 11000,
    .create = acm_create,
    .step = acm_step,
    .destroy = acm_destroy,
    .self_collision = acm_self_collision,
    .model = acm_model,
    .set_path_knots = cb_acm_set_path_knots,
};
