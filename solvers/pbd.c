/* solvers/pbd.c — Position Based Dynamics (`pbd`) and Extended Position Based
 * Dynamics (`xpbd`), one constraint engine behind two registry entries.
 *
 * Files: this one holds the method's description, the projections, the sweeps and the
 * step; solvers/pbd_layout.c the parameters and the constraint graph (constraints,
 * colours, mesh parts, SIMD batches; create and destroy); solvers/pbd_contact.c the
 * collider and self contact constraints; solvers/pbd_internal.h the solver's state they
 * share; solvers/pbd_simd*.c the SIMD kernels.
 *
 * Papers: M. Mueller, B. Heidelberger, M. Hennix, J. Ratcliff, "Position Based
 * Dynamics", VRIPHYS 2006 / JVCI 2007;
 * M. Macklin, M. Mueller, N. Chentanez, "XPBD: Position-Based Simulation of Compliant
 * Constrained Dynamics", MIG 2016.
 *
 * Stepping. A step of dt is split into n substeps of length h = dt / n, each running the
 * loop below with `iterations` sweeps:
 *   stepping: small_steps (default; Macklin, Storey, Lu, Terdiman, Chentanez, Jeschke,
 *     Mueller, "Small Steps in Physics Simulation", SCA 2019): n = max(substeps,
 *     ceil(dt / max_substep)), max_substep 0.25 ms, iterations 1 by default: at
 *     dt = 5 ms, 20 substeps of one sweep each;
 *   stepping: paper (Mueller 2007): n = substeps (1), iterations 10 by default.
 * Why small steps. On the default drape (drape_sphere 20 x 20, dt 5 ms) the paper's
 * stepping raises the shared model's total energy from 0.98 J to 1.68 J (pbd) / 1.75 J
 * (xpbd) at impact, and the rise is stretch energy: max strain 0.15 (explicit: 0.023),
 * on edges whose two ends both rest on the sphere (the contact patch is pulled apart
 * by the falling rest of the cloth, whose momentum 10 Gauss-Seidel sweeps cannot
 * turn). It is not the contact order: projecting the collider constraints first in
 * each sweep, or after every colour, gives the same peak (1.684 / 1.688 J pbd, 1.752 /
 * 1.756 J xpbd); nor the final pass (the probe: 0 depth corrected, contact_work < 0);
 * nor friction (friction 0 on the sphere: 1.689 J). What removes it is convergence of
 * the stretch constraints: 100 sweeps per step, or substeps. At an equal budget of
 * sweeps small steps converge further (the prediction error shrinks as h^2): 10 x 1
 * peaks at +4% (pbd) / +8% (xpbd), 20 x 1 at +0% / +0.6% with max strain 0.023 / 0.030.
 * (60 x 60 needs more: 20 x 1 still peaks at +24% / +29% there.)
 * In small_steps pbd's k' spreads the stiffness over all n x iterations sweeps of the
 * step and k_damping over the n substeps, so the iteration count still does not change
 * the result; the substep count does (pbd's material depends on the step): a soft pbd
 * cloth is much stiffer with small steps (hanging 15 x 15, stretch_stiffness 0.5,
 * 4 s: sag 0.022 m against 0.77 m with the paper's stepping).
 *
 * Algorithm (the paper's loop, per substep of length h = dt / n):
 *   v += h g; v *= exp(-drag h); section 3.5 damping with k_damping;
 *   p = x + h v (pinned vertices: p = their kinematic target at t + h, inverse mass 0);
 *   collision constraints against colliders (continuous: the segment x -> p, with the
 *     collider moving over the substep, is bisected for the point where it comes within
 *     `contact_offset` of the surface: C(p) = (p - q_c) . n_c >= 0 at that entry point;
 *     a segment already inside at x falls back to the closest surface point of p), and
 *     vertex-triangle self-collision constraints from the contact library's spatial hash
 *     (eq. 12-13: thickness h, the side the vertex came from at x; a pair is made when
 *     the vertex's projection on the triangle's plane falls inside it at x or p and it
 *     is less than reach = self_thickness + self_margin beyond the side it came from;
 *     paper stepping: the pairs of the hash's cells, a query per substep;
 *     small_steps: the pairs whose vertex is within reach of the triangle's box and
 *     diagonal slabs at p,
 *     from a candidate cache reused across substeps and steps while the cloth's motion
 *     relative to itself stays below its margin, the same pairs as a query every
 *     substep, solvers/pbd_contact.c);
 *   `iterations` Gauss-Seidel sweeps in a fixed order: stretch, bending and tet-volume
 *     constraints colour by colour, then collider, self-collision and pressure
 *     constraints; each constraint is projected with the paper's eq. 8-9 (mass-weighted,
 *     so internal constraints conserve linear and angular momentum);
 *   a final pass projects any vertex still inside a collider to its surface (so the
 *     step never ends inside a collider);
 *   v = (p - x) / h, x = p; then for every vertex whose collision constraint was
 *     active, restitution and Coulomb friction relative to the collider's velocity on
 *     the velocity (the normal velocity before the solve is reflected by `restitution`,
 *     the tangential one is reduced by friction times the collider's normal impulse per
 *     unit mass: the constraint's push summed over the sweeps over h, plus restitution's
 *     change; the push also holds what the stretch constraints press onto the collider,
 *     as the normal correction bounds friction in Macklin, Mueller, Chentanez, Kim,
 *     "Unified Particle Physics for Real-Time Applications", SIGGRAPH 2014, sec. 6.1;
 *     the vertex's net normal velocity change, used before issue 33, misses it: a sheet
 *     hung over a rod moving along itself at 1 m/s reached 0.09 m/s in 0.45 s instead
 *     of the rod's speed, tests/test_pbd.c).
 * Constraints (formulas and gradients in solvers/pbd_constraints.h): stretch per mesh
 * edge (springs included), bending per hinge, tetrahedral volume C = 6 (V - V0) per tet
 * of a tet body (w->tets; its edges are mesh edges, so they get stretch constraints),
 * pressure C = 6V - k_pressure 6V0 for a closed mesh (eq. 14-15, `pressure` > 0).
 *
 * pbd (Mueller 2007): stiffnesses are dimensionless solver parameters in [0, 1]
 * (solvers.pbd.stretch_stiffness, bend_stiffness, volume_stiffness); they are NOT
 * derived from the scene's k_stretch / k_bend (which have units, and PBD's effective
 * material depends on dt and iterations anyway). A correction is multiplied by
 * k' = 1 - (1 - k)^(1/N) so the result does not depend on the iteration count (N = the
 * sweeps of a step: iterations with the paper's stepping, where each substep has its
 * own k'; iterations x n with small_steps).
 * Bending uses the paper's constraint acos(n1 . n2) - phi0 with the appendix-A
 * gradients (`bending: paper`, default) or the shared model's signed dihedral angle
 * (`bending: dihedral`). solver_energy is NaN (PBD has no energy).
 *
 * xpbd: the same constraints with compliance alpha and a Lagrange multiplier per
 * constraint (reset each substep): dlambda = (-C - at lambda) / (sum w |grad C|^2 + at),
 * at = alpha / h^2. Mapping from the shared cloth model (core/model.h), exactly:
 *   stretch E = 1/2 k_stretch (l - L)^2 = 1/2 C^2 / alpha with C = l - L:  alpha = 1/k_stretch;
 *   bending E = k_bend w (theta - theta0)^2 with C = theta - theta0 (the shared signed
 *     dihedral angle and its exact gradient): alpha = 1 / (2 k_bend w), w = 3|e|^2/(A1+A2);
 *   a zero stiffness means no constraint. Tet volume compliance is `volume_compliance`
 *   (m^-3... per (6V)^2 unit; 0 = incompressible); contacts and pressure are hard (alpha = 0).
 * So xpbd and explicit run the same material, and at convergence a static xpbd state
 * is the shared model's equilibrium. solver_energy = sum over constraints 1/2 C^2/alpha
 * (= the shared stretch + bend energy for cloth, plus the tet volume energy).
 *
 * Parallel sweeps: at create the stretch, bending and tet constraints are coloured
 * greedily (in mesh order) so that no two constraints of a colour share a free vertex,
 * and stored by colour. The sweep order is colour by colour, and within a colour the
 * constraints touch disjoint free vertices, so projecting a colour in parallel (OpenMP)
 * gives bitwise the same result as doing it serially: results do not depend on the
 * number of threads. Contact and pressure constraints are projected serially.
 * Mesh parts (`parts`, 2; only where the sweeps go parallel, see create_common): the
 * vertices fall in `parts` bands of their index, a constraint whose free vertices are all
 * in one band belongs to it, the others to the boundary. A sweep runs the bands side by
 * side, each one's colours in order on one thread with no barrier between them, then the
 * boundary's colours on one thread: 2 barriers per sweep instead of one per colour (26 on
 * a 60 x 60 cloth). It is a sweep order of its own (the results differ from parts: 1 as
 * another Gauss-Seidel order does), the same with any number of threads; with more
 * threads than parts the extra ones wait. A mesh whose vertex order is not banded (over a
 * quarter of the constraints on the boundary) keeps a barrier per colour.
 * Layout for speed: constraints are compact records (indices, gathered inverse masses,
 * rest value), sorted by vertex index within a colour; one loop per constraint kind and
 * colour running a fused projection of solvers/pbd_constraints.h (no gradient arrays,
 * nothing done for a zero correction); one parallel region per substep.
 * SIMD (`simd: auto`, the default: 8 lanes with AVX-512, 4 with AVX2 + FMA; `avx2`: at
 * most 4; solvers/pbd_simd.h): within each colour the stretch and bending constraints
 * whose vertices are all free are projected four or eight at a time, one per lane, the
 * rest (a pinned vertex: the attachment's impulse is counted) by the scalar kernels; both
 * widths give the same bits. Lanes are independent, so results still do
 * not depend on the thread count; they differ from `simd: off` by round-off (an atan2
 * of our own instead of libm's atan2/acos, fused multiply-adds): 1e-12 m after 0.5 s of
 * the swinging cloth (tests/test_pbd.c). On pbd_bend (60 x 60, 10 sweeps, one thread) the
 * step went from 4.6 ms (simd: off) to 1.5 ms: `clothbench bench --case pbd_bend`,
 * experiments/bench-results/c-2026-11-25-speed.txt. The prediction p is stored as padded
 * points (x, y, z and the inverse mass: 32 bytes, aligned, p[i][3] set with the
 * prediction) so that the kernels move a point with one load and one store (moving
 * points, not arithmetic, was their bound); the contact library, which takes xyz
 * triples, gets a packed copy (pk) where it needs one (self contact, pressure, the
 * probe). With stretch at 8 lanes and the bending kernels' two vectors interleaved: the
 * same bits, pbd_bend's step 1.16-1.21 -> 0.84-0.89 ms on AVX-512 (interleaved with the
 * code before; what bounds the kernels now: solvers/pbd_simd.h). pbd's stretch residual
 * at the step's end is taken over the same batches, bitwise the scalar loop's (the
 * maximum does not depend on the order; tests/test_pbd.c).
 *
 * Contact probe (contact/contact_probe.h): it brackets, in every substep, the contact
 * work after the sweeps (the final collider pass, restitution and friction), against
 * the implied velocities (p - x)/h; what the collider constraints do inside the sweeps
 * is part of the solve and not in it. Its figures are per step (depth and vertices:
 * max over the substeps; work: summed).
 *
 * step info: iterations = iterations x n; residual = max |C|/L over stretch
 * constraints after the step (pbd), max |C + at lambda| over stretch and bending
 * constraints (xpbd); contacts = active collider + self-collision constraints of the
 * last substep; external_impulse = the impulse of colliders (their projections, the
 * final pass, restitution and friction), attachments (the mass-weighted displacement
 * of the free vertices of constraints with a pinned vertex) and drag, each summed where
 * it acts. Damping and constraints among free vertices must conserve momentum; they are
 * not counted, so the momentum balance (tests/test_conformance.c) checks that they do.
 *
 * What it does not do: no edge-edge self collision (vertex-triangle only, as the paper),
 * no untangling of cloth that is already intersecting, collision constraints are made
 * once per substep (the paper's choice; substeps help fast motion), no two-way coupling
 * with colliders (they are kinematic). Small steps do not make a fine cloth converge:
 * the sweep count a given strain needs grows with the resolution (see above), and
 * max_substep is a fixed length, not adapted to the mesh or the impact speed. Self
 * contact is discrete per substep: a vertex that goes more than reach through a
 * triangle within one substep is not seen.
 *
 * Parameters (solvers.pbd / solvers.xpbd):
 *   stepping (small_steps|paper, small_steps), max_substep (s, 2.5e-4; small_steps only),
 *   iterations (>= 1; 1 with small_steps, 10 with paper), substeps (>= 1, 1: with
 *   small_steps the least number), damping (k_damping in [0,1], 0),
 *   drag (>= 0, 1/s, 0), contact_offset (m, default thickness/2), self_collision
 *   (bool, true for a triangle mesh, as the other solvers), self_thickness (m, default the cloth thickness), self_margin (m,
 *   default self_thickness: extra search distance), self_cache (bool, true; small_steps:
 *   the candidate cache, false: a spatial hash query every substep, the same contacts), pressure (overpressure factor,
 *   0 = off, needs a closed mesh), order (colour|mesh: `mesh` sweeps serially in mesh
 *   order without colouring — the paper's plain Gauss-Seidel, for comparison; no SIMD),
 *   simd (auto|avx2|off, auto: the widest the CPU has), parts (1..64, 2: mesh
 *   parts swept side by side; 1: a barrier after every colour);
 *   pbd only: stretch_stiffness (1), bend_stiffness (0.1), volume_stiffness (1),
 *   bending (paper|dihedral), bend_max_step (rad, 0.5; 0 = unlimited, the paper);
 *   xpbd only: volume_compliance (>= 0, 0).
 *
 * Deviation from the paper: a pbd bending projection changes its (linearised) angle by
 * at most bend_max_step. The paper takes the full step k' C; for a hinge folded flat
 * onto itself (C near -pi) that step moves vertices by up to the triangle size, and with
 * soft stretch (stretch_stiffness 0.2, bend_stiffness 1, a cloth crumpled on the floor)
 * the run diverged within half a second. The limit only acts on corrections larger
 * than 0.5 rad, it scales the whole correction (momentum is still conserved), and
 * bend_max_step: 0 restores the paper's step.
 */
#include "solvers/pbd.h"
#include "solvers/pbd_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "contact/colliders.h"
#include "contact/distance.h"
#include "contact/spatial_hash.h"
#include "contact/contact_probe.h"
#include "core/solver.h"
#include "core/vec3.h"
#include "solvers/pbd_constraints.h"
#include "solvers/pbd_simd.h"

/* ------------------------------------------------------------ helpers */

void cb_pbd_damp_velocities(int nv, const double *mass, const double *inv_mass, const double (*x)[3],
                            double (*v)[3], double k)
{
    if (!(k > 0.0) || nv <= 0) return;
    double M = 0, xc[3] = {0, 0, 0}, vc[3] = {0, 0, 0};
    for (int i = 0; i < nv; i++) {
        if (inv_mass[i] == 0.0) continue;
        M += mass[i];
        cb_v3_axpy(xc, mass[i], x[i]);
        cb_v3_axpy(vc, mass[i], v[i]);
    }
    if (!(M > 0)) return;
    cb_v3_scale(xc, xc, 1.0 / M);
    cb_v3_scale(vc, vc, 1.0 / M);
    double L[3] = {0, 0, 0}, I[3][3] = {{0}};
    for (int i = 0; i < nv; i++) {
        if (inv_mass[i] == 0.0) continue;
        double r[3], c[3];
        cb_v3_sub(r, x[i], xc);
        cb_v3_cross(c, r, v[i]);
        cb_v3_axpy(L, mass[i], c);
        double r2 = cb_v3_norm2(r); /* r~ r~^T = |r|^2 E - r r^T */
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) I[a][b] += mass[i] * ((a == b ? r2 : 0.0) - r[a] * r[b]);
    }
    /* omega = I^-1 L by the adjugate; a singular I (collinear vertices) gives the
     * least-norm part along the non-degenerate directions via a tiny regularisation */
    double tr = I[0][0] + I[1][1] + I[2][2];
    double det = I[0][0] * (I[1][1] * I[2][2] - I[1][2] * I[2][1]) -
                 I[0][1] * (I[1][0] * I[2][2] - I[1][2] * I[2][0]) +
                 I[0][2] * (I[1][0] * I[2][1] - I[1][1] * I[2][0]);
    if (!(fabs(det) > 1e-12 * tr * tr * tr)) {
        double eps = 1e-9 * (tr > 0 ? tr : 1.0);
        for (int a = 0; a < 3; a++) I[a][a] += eps;
        det = I[0][0] * (I[1][1] * I[2][2] - I[1][2] * I[2][1]) -
              I[0][1] * (I[1][0] * I[2][2] - I[1][2] * I[2][0]) +
              I[0][2] * (I[1][0] * I[2][1] - I[1][1] * I[2][0]);
    }
    double om[3] = {0, 0, 0};
    if (det != 0.0) {
        double adj[3][3];
        adj[0][0] = I[1][1] * I[2][2] - I[1][2] * I[2][1];
        adj[0][1] = I[0][2] * I[2][1] - I[0][1] * I[2][2];
        adj[0][2] = I[0][1] * I[1][2] - I[0][2] * I[1][1];
        adj[1][0] = I[1][2] * I[2][0] - I[1][0] * I[2][2];
        adj[1][1] = I[0][0] * I[2][2] - I[0][2] * I[2][0];
        adj[1][2] = I[0][2] * I[1][0] - I[0][0] * I[1][2];
        adj[2][0] = I[1][0] * I[2][1] - I[1][1] * I[2][0];
        adj[2][1] = I[0][1] * I[2][0] - I[0][0] * I[2][1];
        adj[2][2] = I[0][0] * I[1][1] - I[0][1] * I[1][0];
        for (int a = 0; a < 3; a++) om[a] = (adj[a][0] * L[0] + adj[a][1] * L[1] + adj[a][2] * L[2]) / det;
    }
    for (int i = 0; i < nv; i++) {
        if (inv_mass[i] == 0.0) continue;
        double r[3], wr[3];
        cb_v3_sub(r, x[i], xc);
        cb_v3_cross(wr, om, r);
        for (int k2 = 0; k2 < 3; k2++) v[i][k2] += k * (vc[k2] + wr[k2] - v[i][k2]);
    }
}

double cb_pbd_volume6(const cb_mesh *m, const double (*x)[3], double (*grad)[3])
{
    double V = 0;
    if (grad) memset(grad, 0, (size_t)m->nv * sizeof *grad);
    for (int t = 0; t < m->nf; t++) {
        const int *f = m->f[t];
        double c[3];
        cb_v3_cross(c, x[f[0]], x[f[1]]);
        V += cb_v3_dot(c, x[f[2]]);
        if (grad) {
            double g[3];
            cb_v3_add(grad[f[2]], grad[f[2]], c);
            cb_v3_cross(g, x[f[1]], x[f[2]]);
            cb_v3_add(grad[f[0]], grad[f[0]], g);
            cb_v3_cross(g, x[f[2]], x[f[0]]);
            cb_v3_add(grad[f[1]], grad[f[1]], g);
        }
    }
    return V;
}

/* Greedy colouring of n constraints of `arity` vertices (verts[c*arity + j]) so that
 * no two constraints of a colour share a vertex with w > 0. colour[c] gets the colour;
 * returns the number of colours, or -1 when more than MAX_COLOURS would be needed. */

/* ------------------------------------------------------------ projections */

static inline void keep(double (*p)[4], const int *v, int n, double before[][3])
{
    for (int j = 0; j < n; j++) cb_v3_copy(before[j], p[v[j]]);
}

/* The first pinned participant of a constraint (one exists: attached). */
static inline int first_pin(const int *v, const double *w, int n)
{
    int j = 0;
    while (j < n - 1 && w[j] > 0) j++;
    return v[j];
}

static inline void count_moves(const pbd_solver *s, double *acc, double (*p)[4], const int *v, const double *w,
                               int n, double before[][3])
{
    int P = first_pin(v, w, n);
    for (int j = 0; j < n; j++)
        if (w[j] > 0) {
            double mdp[3], u[3];
            for (int k = 0; k < 3; k++) {
                mdp[k] = (p[v[j]][k] - before[j][k]) / w[j];
                acc[k] += mdp[k];
            }
            pin_field(s->pin_omega, (const double (*)[3])s->vpred, (const double (*)[4])p, P, p[v[j]], u);
            acc[3] += cb_v3_dot(mdp, u);
        }
}

static inline double *thread_acc(pbd_solver *s)
{
#ifdef _OPENMP
    int t = omp_get_thread_num();
    return s->jthr[t < s->nthr ? t : 0];
#else
    return s->jthr[0];
#endif
}

static inline void project4(pbd_solver *s, double (*p)[4], const int *v, double C, double g[4][3], double k,
                            double at, double *lambda, double *acc)
{
    double w4[4] = {s->w[v[0]], s->w[v[1]], s->w[v[2]], s->w[v[3]]};
    double dl = cb_pbd_dlambda(C, (const double (*)[3])g, w4, 4, k, at, lambda);
    if (dl == 0.0) return;
    int a = w4[0] == 0.0 || w4[1] == 0.0 || w4[2] == 0.0 || w4[3] == 0.0;
    for (int j = 0; j < 4; j++)
        if (w4[j] > 0) {
            cb_v3_axpy(p[v[j]], dl * w4[j], g[j]);
            if (a) { /* m dp = dl g for a free participant */
                double u[3];
                cb_v3_axpy(acc, dl, g[j]);
                pin_field(s->pin_omega, (const double (*)[3])s->vpred, (const double (*)[4])p, first_pin(v, w4, 4),
                          p[v[j]], u);
                acc[3] += dl * cb_v3_dot(g[j], u);
            }
        }
}

static void project_contacts(pbd_solver *s, double (*p)[4])
{
    double *acc = thread_acc(s);
    for (int c = 0; c < s->ncc; c++) {
        coll_con *k = &s->cc[c];
        double r[3];
        cb_v3_sub(r, p[k->v], k->q);
        double C = cb_v3_dot(r, k->n);
        if (C < 0) {
            cb_v3_axpy(p[k->v], -C, k->n);
            cb_v3_axpy(acc, -C / s->w[k->v], k->n); /* the collider's push */
            acc[3] += -C / s->w[k->v] * cb_v3_dot(k->n, k->vc);
            k->push -= C;
            k->active = 1;
        }
    }
    for (int c = 0; c < s->nsc; c++) {
        self_con *k = &s->sc[c];
        const int *v = k->v;
        double g[4][3];
        double C = cb_pbd_self(p[v[0]], p[v[1]], p[v[2]], p[v[3]], k->side, s->self_h, g);
        if (!(C < 0)) continue;
        k->active = 1;
        project4(s, p, v, C, g, 1.0, -1.0, NULL, acc);
    }
    if (s->pressure > 0) {
        const cb_mesh *m = s->mesh;
        double V = cb_pbd_volume6(m, packed_p(s), s->grad);
        double C = V - s->pressure * s->v6rest, S = 0;
        for (int i = 0; i < m->nv; i++) S += s->w[i] * cb_v3_norm2(s->grad[i]);
        if (S > 0) {
            double dl = -C / S, moved[3] = {0, 0, 0}, power = 0;
            int pinned = -1;
            for (int i = 0; i < m->nv; i++)
                if (s->w[i] == 0.0 && pinned < 0) pinned = i;
            for (int i = 0; i < m->nv; i++) {
                if (s->w[i] > 0) {
                    cb_v3_axpy(p[i], dl * s->w[i], s->grad[i]);
                    cb_v3_axpy(moved, dl, s->grad[i]);
                    if (pinned >= 0) {
                        double u[3];
                        pin_field(s->pin_omega, (const double (*)[3])s->vpred, (const double (*)[4])p, pinned, p[i], u);
                        power += dl * cb_v3_dot(s->grad[i], u);
                    }
                }
            }
            if (pinned >= 0) { /* the gradients sum to 0: only pins unbalance it */
                cb_v3_add(acc, acc, moved);
                acc[3] += power;
            }
        }
    }
}

/* [*lo, *hi): this thread's share of [begin, end) (contiguous, as a static schedule),
 * or all of it when `serial` (one thread sweeps a mesh part) or outside a parallel
 * region. */
static inline void share(int serial, int begin, int end, int *lo, int *hi)
{
    *lo = begin;
    *hi = end;
#ifdef _OPENMP
    int nt = omp_get_num_threads();
    if (serial || nt <= 1 || end <= begin) return;
    int t = omp_get_thread_num(), chunk = (end - begin + nt - 1) / nt;
    *lo = begin + chunk * t < end ? begin + chunk * t : end;
    *hi = *lo + chunk < end ? *lo + chunk : end;
#else
    (void)serial;
#endif
}


/* One colour (or the whole type in `order: mesh`) of one constraint type: one loop per
 * kind, no branch on the type inside. By this thread alone (`serial`), or by every
 * thread of the team, the iterations split statically (share); sweep_block adds the
 * barrier between colours. */
static void sweep_scalar(pbd_solver *s, double (*p)[4], const block *bl, int serial)
{
    int begin, end;
    share(serial, bl->begin, bl->end, &begin, &end);
    double *acc = thread_acc(s), b[4][3];
    if (bl->type == T_STRETCH && !s->xpbd) {
        const scon *st = s->st;
        double k = s->k_stretch;
        for (int c = begin; c < end; c++) {
            int a = attached(st[c].w, 2);
            if (a) keep(p, st[c].v, 2, b);
            cb_pbd_project_stretch(p[st[c].v[0]], p[st[c].v[1]], st[c].w[0], st[c].w[1], st[c].rest, k);
            if (a) count_moves(s, acc, p, st[c].v, st[c].w, 2, b);
        }
    } else if (bl->type == T_STRETCH) {
        const scon *st = s->st;
        const double *alpha = s->salpha, ih2 = s->inv_h2;
        double *lambda = s->slambda;
        for (int c = begin; c < end; c++) {
            int a = attached(st[c].w, 2);
            if (a) keep(p, st[c].v, 2, b);
            cb_pbd_project_stretch_x(p[st[c].v[0]], p[st[c].v[1]], st[c].w[0], st[c].w[1], st[c].rest,
                                     alpha[c] * ih2, &lambda[c]);
            if (a) count_moves(s, acc, p, st[c].v, st[c].w, 2, b);
        }
    } else if (bl->type == T_BEND && s->bending == 0) {
        const qcon *q = s->bd;
        double k = s->k_bend, cap = s->bend_cap;
        for (int c = begin; c < end; c++) {
            int a = attached(q[c].w, 4);
            if (a) keep(p, q[c].v, 4, b);
            cb_pbd_project_bend_paper(p[q[c].v[0]], p[q[c].v[1]], p[q[c].v[2]], p[q[c].v[3]], q[c].w, q[c].rest, k,
                                      cap);
            if (a) count_moves(s, acc, p, q[c].v, q[c].w, 4, b);
        }
    } else if (bl->type == T_BEND && s->xpbd) {
        const qcon *q = s->bd;
        const double *alpha = s->balpha, ih2 = s->inv_h2;
        double *lambda = s->blambda;
        for (int c = begin; c < end; c++) {
            int a = attached(q[c].w, 4);
            if (a) keep(p, q[c].v, 4, b);
            cb_pbd_project_bend_dihedral(p[q[c].v[0]], p[q[c].v[1]], p[q[c].v[2]], p[q[c].v[3]], q[c].w, q[c].rest,
                                         1.0, alpha[c] * ih2, &lambda[c], INFINITY);
            if (a) count_moves(s, acc, p, q[c].v, q[c].w, 4, b);
        }
    } else if (bl->type == T_BEND) {
        const qcon *q = s->bd;
        double k = s->k_bend, cap = s->bend_cap;
        for (int c = begin; c < end; c++) {
            int a = attached(q[c].w, 4);
            if (a) keep(p, q[c].v, 4, b);
            cb_pbd_project_bend_dihedral(p[q[c].v[0]], p[q[c].v[1]], p[q[c].v[2]], p[q[c].v[3]], q[c].w, q[c].rest,
                                         k, -1.0, NULL, cap);
            if (a) count_moves(s, acc, p, q[c].v, q[c].w, 4, b);
        }
    } else {
        const qcon *q = s->te;
        const double *alpha = s->talpha, ih2 = s->inv_h2;
        double *lambda = s->tlambda, k = s->k_volume;
        int x = s->xpbd;
        for (int c = begin; c < end; c++) {
            double *p0 = p[q[c].v[0]], *p1 = p[q[c].v[1]], *p2 = p[q[c].v[2]], *p3 = p[q[c].v[3]], g[4][3];
            int a = attached(q[c].w, 4);
            if (a) keep(p, q[c].v, 4, b);
            double C = cb_pbd_tet_volume(p0, p1, p2, p3, q[c].rest, g);
            if (x) cb_pbd_apply4(p0, p1, p2, p3, q[c].w, C, (const double (*)[3])g, 1.0, alpha[c] * ih2, &lambda[c]);
            else cb_pbd_apply4(p0, p1, p2, p3, q[c].w, C, (const double (*)[3])g, k, -1.0, NULL);
            if (a) count_moves(s, acc, p, q[c].v, q[c].w, 4, b);
        }
    }
}

/* The same with the SIMD path: the batches of the colour, then (no barrier between them:
 * the constraints with a pinned vertex touch other free vertices) those on the scalar
 * path. */
static void sweep_simd(pbd_solver *s, double (*p)[4], const block *bl, int serial)
{
    const double ih2 = s->inv_h2;
    int lo, hi;
    if (bl->type == T_STRETCH) {
        double *lambda = s->xpbd ? s->slambda : NULL, k = s->k_stretch;
        share(serial, bl->b0, bl->b1, &lo, &hi);
        cb_pbd_simd_stretch(s->simd, p, &s->sbat[lo], hi - lo, k, s->salpha, ih2, lambda);
    } else {
        /* bending: the pairs of batches are shared (their grouping is fixed) */
        share(serial, 0, (bl->b1 - bl->b0 + 1) / 2, &lo, &hi);
        lo = bl->b0 + 2 * lo;
        hi = bl->b0 + 2 * hi < bl->b1 ? bl->b0 + 2 * hi : bl->b1;
        if (!s->xpbd && s->bending == 0) {
            cb_pbd_simd_bend_paper(s->simd, p, &s->bbat[lo], hi - lo, s->k_bend, s->bend_cap);
        } else {
            double *lambda = s->xpbd ? s->blambda : NULL, k = s->xpbd ? 1.0 : s->k_bend;
            double cap = s->xpbd ? INFINITY : s->bend_cap;
            cb_pbd_simd_bend_dihedral(s->simd, p, &s->bbat[lo], hi - lo, k, cap, s->balpha, ih2, lambda);
        }
    }
    if (bl->mid == bl->end) return; /* none on the scalar path (most colours) */
    block rest = *bl;
    rest.begin = bl->mid;
    sweep_scalar(s, p, &rest, serial);
}

/* One block, by this thread alone (`serial`) or shared by the team, ending with the
 * team's barrier. */
static void sweep_block(pbd_solver *s, double (*p)[4], const block *bl, int serial)
{
    if (s->simd && bl->type != T_TET) sweep_simd(s, p, bl, serial);
    else sweep_scalar(s, p, bl, serial);
#ifdef _OPENMP
    if (!serial) {
#pragma omp barrier
    }
#endif
}

static void solve(pbd_solver *s)
{
    double (*p)[4] = s->p;
    /* one parallel region per substep; inside, a barrier after each colour only (and
     * after the serial contact pass when there are contacts or pressure) */
    int contacts = s->ncc > 0 || s->nsc > 0 || s->pressure > 0;
#ifdef _OPENMP
#pragma omp parallel if (s->parallel)
#endif
    {
        for (int it = 0; it < s->iterations; it++) {
            if (s->nparts > 1) { /* the parts side by side, then the boundary on one thread */
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
                for (int q = 0; q < s->nparts; q++)
                    for (int b = s->part_block[q]; b < s->part_block[q + 1]; b++) sweep_block(s, p, &s->blocks[b], 1);
#ifdef _OPENMP
#pragma omp single
#endif
                for (int b = s->part_block[s->nparts]; b < s->nblocks; b++) sweep_block(s, p, &s->blocks[b], 1);
            } else {
                for (int b = 0; b < s->nblocks; b++) sweep_block(s, p, &s->blocks[b], 0);
            }
            if (contacts) {
#ifdef _OPENMP
#pragma omp single
#endif
                project_contacts(s, p);
            }
        }
    }
}

/* ------------------------------------------------------------ create / step */

static int pbd_create(const cb_world *w, const cb_params *p, void **self, cb_error *err)
{
    return cb_pbd_create(w, p, 0, self, err);
}

static int xpbd_create(const cb_world *w, const cb_params *p, void **self, cb_error *err)
{
    return cb_pbd_create(w, p, 1, self, err);
}

/* vertex i's predicted position p (and vpred): x + h v, or the pin's target at t1 */
static inline void predict(pbd_solver *s, const cb_world *w, int i, double t1, double h)
{
    s->p[i][3] = s->w[i]; /* the SIMD kernels' inverse masses (solvers/pbd_simd.h) */
    if (s->w[i] == 0.0) {
        cb_world_pin_target(w, i, t1, s->p[i]);
        cb_world_pin_velocity(w, i, t1, s->vpred[i]);
        return;
    }
    cb_v3_copy(s->vpred[i], w->state.v[i]);
    for (int k = 0; k < 3; k++) s->p[i][k] = w->state.x[i][k] + h * w->state.v[i][k];
}

typedef double v2d __attribute__((vector_size(16))); /* two lanes (SSE2 on x86-64) */

static int substep(pbd_solver *s, cb_world *w, double t0, double h, cb_step_info *info, cb_error *err)
{
    double t1 = t0 + h;
    int nv = w->nv;
    cb_lap_timer lap;
    cb_lap_start(&lap, info);
    double decay = exp(-s->drag * h);
    memset(s->jthr, 0, (size_t)s->nthr * sizeof *s->jthr);
    double air[3] = {s->ext[0], s->ext[1], s->ext[2]}; /* in registers: v may alias s->ext */
    /* without the section 3.5 damping (it needs every velocity first) the prediction
     * follows each vertex's velocity in the same pass (the same operations) */
    int damp = s->k_damping_sub > 0.0;
    for (int i = 0; i < nv; i++) {
        if (s->w[i] != 0.0) {
            double *v = w->state.v[i];
            /* drag acts on the velocity of the last step only, so it does not change
             * a static state (damping gravity's own increment would weaken gravity) */
            for (int k = 0; k < 3; k++) {
                air[k] += w->mass[i] * v[k] * (decay - 1.0); /* the air's impulse */
                v[k] = v[k] * decay + h * w->gravity[k];
            }
        }
        if (!damp) predict(s, w, i, t1, h);
    }
    cb_v3_copy(s->ext, air);
    if (damp) {
        cb_pbd_damp_velocities(nv, w->mass, s->w, (const double (*)[3])w->state.x, w->state.v, s->k_damping_sub);
        for (int i = 0; i < nv; i++) predict(s, w, i, t1, h);
    }
    cb_lap(&lap, "predict");
    if (w->ncolliders) cb_pbd_collider_constraints(s, w, t0, h);
    else s->ncc = 0;
    if (s->self_collision) {
        int rc = cb_pbd_self_constraints(s, w, err);
        if (rc) return rc;
    }
    cb_lap_contact(&lap, "contact");
    s->inv_h2 = 1.0 / (h * h);
    if (s->xpbd) {
        memset(s->slambda, 0, (size_t)(s->ns ? s->ns : 1) * sizeof *s->slambda);
        memset(s->blambda, 0, (size_t)(s->nb ? s->nb : 1) * sizeof *s->blambda);
        memset(s->tlambda, 0, (size_t)(s->nt ? s->nt : 1) * sizeof *s->tlambda);
    }
    solve(s);
    cb_lap(&lap, "project");
    /* the contact stage after the solve, measured by the probe: the final collider
     * pass, then restitution and friction, against the velocities (p - x)/h */
    if (s->probe) {
        for (int i = 0; i < nv; i++) {
            if (s->w[i] == 0.0) cb_world_pin_velocity(w, i, t1, w->state.v[i]);
            else
                for (int k = 0; k < 3; k++) w->state.v[i][k] = (s->p[i][k] - w->state.x[i][k]) / h;
        }
        cb_contact_probe_begin(s->probe, w, t1, packed_p(s), (const double (*)[3])w->state.v);
    }
    int fixed = w->ncolliders ? cb_pbd_final_collider_pass(s, w, t1) : 0;
    for (int t = 0; t < s->nthr; t++) { /* the position-level impulses: m dp / h */
        for (int k = 0; k < 3; k++) s->ext[k] += s->jthr[t][k] / h;
        s->work += s->jthr[t][3] / h;
    }
    {
        /* v = (p - x) / h, x = p: x and y as a pair (one 2-lane division, the same
         * IEEE operations as two), the arrays distinct (restrict) */
        double (*restrict x)[3] = w->state.x, (*restrict v)[3] = w->state.v;
        const double (*restrict pp)[4] = (const double (*)[4])s->p, *restrict wi = s->w;
        const v2d h2 = {h, h};
        for (int i = 0; i < nv; i++) {
            if (wi[i] == 0.0) continue;
            v2d a, b;
            memcpy(&a, pp[i], sizeof a);
            memcpy(&b, x[i], sizeof b);
            b = (a - b) / h2;
            memcpy(v[i], &b, sizeof b);
            memcpy(x[i], &a, sizeof a);
            v[i][2] = (pp[i][2] - x[i][2]) / h;
            x[i][2] = pp[i][2];
        }
    }
    cb_world_apply_pins(w, t1);
    cb_pbd_contact_velocities(s, w, t1, h);
    if (s->probe)
        cb_contact_probe_end(s->probe, w, (const double (*)[3])w->state.x, (const double (*)[3])w->state.v, info);
    cb_lap_contact(&lap, "contact");
    int contacts = fixed;
    for (int c = 0; c < s->ncc; c++) contacts += s->cc[c].active;
    for (int c = 0; c < s->nsc; c++) contacts += s->sc[c].active;
    info->contacts = contacts;
    return CB_OK;
}

/* fmax(r, a) for r not NaN (a NaN a is dropped as fmax drops it), without libm's call */
static inline double max_kept(double r, double a) { return a > r ? a : r; }

/* max(r, pbd's stretch residual |C| / L of constraint k on x) (L = 0: r) */
static inline double stretch_residual(const scon *k, const double (*x)[3], double r)
{
    return k->rest > 0 ? max_kept(r, fabs(cb_pbd_stretch(x[k->v[0]], x[k->v[1]], k->rest, NULL)) / k->rest) : r;
}

static int pbd_step(void *self, cb_world *w, double dt, cb_step_info *info, cb_error *err)
{
    pbd_solver *s = self;
    const char *name = s->xpbd ? "xpbd" : "pbd"; /* arguments checked by cb_solver_step */
    if (w->nv != s->nv || w->mesh != s->mesh)
        return CB_FAIL(err, CB_ERR_INPUT, "%s: the world is not the one the solver was created for", name);
    int nsub = cb_pbd_substep_count(s, dt);
    /* small_steps: k' spreads the stiffness over every sweep of the step */
    int sweeps = s->stepping == STEP_PAPER ? s->iterations : s->iterations * nsub;
    if (sweeps != s->kprime_sweeps) cb_pbd_set_kprime(s, sweeps);
    /* section 3.5 damping removes the fraction k_damping of the non-rigid velocity per
     * step (paper: per substep, as before) */
    s->k_damping_sub = s->stepping == STEP_PAPER || nsub == 1 ? s->k_damping : cb_pbd_kprime(s->k_damping, nsub);
    double h = dt / (double)nsub;
    cb_v3_zero(s->ext);
    s->work = 0.0;
#ifdef _OPENMP
    if (omp_get_max_threads() > s->nthr) { /* more threads than at create: one slot each */
        double (*grown)[4] = cb_calloc((size_t)omp_get_max_threads(), sizeof *grown);
        if (!grown) return CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", name);
        free(s->jthr);
        s->jthr = grown;
        s->nthr = omp_get_max_threads();
    }
#endif
    for (int k = 0; k < nsub; k++) {
        if (k > 0 && cb_interrupt_requested()) /* a long dt: many small steps */
            return CB_FAIL(err, CB_ERR_INTERRUPTED, "%s: interrupted by a signal in substep %d of %d", name, k, nsub);
        int rc = substep(s, w, w->state.t + (double)k * h, h, info, err);
        if (rc) return rc;
    }
    /* a non-finite state is reported by cb_solver_step */
    /* the impulse summed where colliders, attachments and drag act (not P1 - P0 - m g dt,
     * which would make the momentum balance true by definition) */
    for (int k = 0; k < 3; k++) info->external_impulse[k] = s->ext[k];
    info->external_work = s->work;
    info->iterations = s->iterations * nsub;
    /* residual and (xpbd) constraint energy at the final positions */
    const double (*x)[3] = (const double (*)[3])w->state.x;
    double res = 0, E = 0;
    if (s->xpbd) {
        for (int c = 0; c < s->ns; c++) {
            const scon *k = &s->st[c];
            double C = cb_pbd_stretch(x[k->v[0]], x[k->v[1]], k->rest, NULL);
            res = max_kept(res, fabs(C + s->salpha[c] * s->inv_h2 * s->slambda[c]));
            E += 0.5 * C * C / s->salpha[c];
        }
    } else {
        /* each colour's batches on vectors (the same operations per constraint, and the
         * maximum does not depend on the order: bitwise the scalar loop's), the rest as
         * they are */
        for (int b = 0; b < s->nblocks; b++) {
            const block *bl = &s->blocks[b];
            if (bl->type != T_STRETCH) continue;
            int from = s->simd ? bl->mid : bl->begin;
            if (s->simd) res = cb_pbd_simd_stretch_residual(s->simd, x, &s->sbat[bl->b0], bl->b1 - bl->b0, res);
            for (int c = from; c < bl->end; c++) res = stretch_residual(&s->st[c], x, res);
        }
    }
    if (s->xpbd) {
        for (int c = 0; c < s->nb; c++) {
            const int *v = s->bd[c].v;
            double C = cb_pbd_bend_dihedral(x[v[0]], x[v[1]], x[v[2]], x[v[3]], s->bd[c].rest, NULL);
            res = max_kept(res, fabs(C + s->balpha[c] * s->inv_h2 * s->blambda[c]));
            E += 0.5 * C * C / s->balpha[c];
        }
        for (int c = 0; c < s->nt; c++) {
            const int *v = s->te[c].v;
            if (!(s->talpha[c] > 0)) continue;
            double C = cb_pbd_tet_volume(x[v[0]], x[v[1]], x[v[2]], x[v[3]], s->te[c].rest, NULL);
            E += 0.5 * C * C / s->talpha[c];
        }
        info->solver_energy = E;
    }
    info->residual = res;
    return CB_OK;
}

static int pbd_self_collision(const void *self) { return ((const pbd_solver *)self)->self_collision; }

/* pbd: dimensionless stiffnesses (not the model's material); xpbd: compliance 1/k of
 * the shared model's stretch and (dihedral) bending. */
static const char *pbd_model(const void *self)
{
    const pbd_solver *s = self;
    if (s->xpbd) return "stretch springs / bending shells / contact constraints";
    return s->bending == 0 ? "pbd dimensionless / bending paper / contact constraints"
                           : "pbd dimensionless / bending dihedral / contact constraints";
}

/* the parallel sweeps keep one order whatever the thread count (parts, above) */
#define PBD_FLAGS (CB_SOLVER_MOVING_COLLIDERS | CB_SOLVER_CONTACT_STAGE | CB_SOLVER_STAGE_TIMES | CB_SOLVER_FIXED_ITERATIONS | \
                   CB_SOLVER_SUBSTEPS | CB_SOLVER_THREAD_INDEPENDENT | CB_SOLVER_COLLIDER_FRICTION)

const cb_solver_class cb_solver_pbd = {
    .name = "pbd",
    .summary = "Position Based Dynamics (Mueller et al. 2007): Gauss-Seidel constraint projection, "
               "dimensionless stiffness",
    .flags = PBD_FLAGS,
    .bytes_per_vertex = 2800,
    .create = pbd_create,
    .step = pbd_step,
    .destroy = cb_pbd_destroy,
    .self_collision = pbd_self_collision,
    .model = pbd_model,
};

const cb_solver_class cb_solver_xpbd = {
    .name = "xpbd",
    .summary = "XPBD (Macklin et al. 2016): compliant constraints = the shared cloth model",
    .flags = PBD_FLAGS,
    .bytes_per_vertex = 2800,
    .create = xpbd_create,
    .step = pbd_step,
    .destroy = cb_pbd_destroy,
    .self_collision = pbd_self_collision,
    .model = pbd_model,
};

