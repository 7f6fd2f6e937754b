/* solvers/pbd.c — Position Based Dynamics (`pbd`) and Extended Position Based
 * Dynamics (`xpbd`), one constraint engine behind two registry entries.
 *
 * Papers: M. Mueller, B. Heidelberger, M. Hennix, J. Ratcliff, "Position Based
 * Dynamics", VRIPHYS 2006 / JVCI 2007 (/work/shared/papers/pbd-mueller2007-en-zh.txt);
 * M. Macklin, M. Mueller, N. Chentanez, "XPBD: Position-Based Simulation of Compliant
 * Constrained Dynamics", MIG 2016 (notes: pbd-xpbd-explained-zh.txt).
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
 *     (eq. 12-13: thickness h, the side the vertex came from at x; paper stepping: a
 *     hash query per substep; small_steps: one query per step at the first prediction,
 *     its distance grown by 2 x 1.25 x (v_max dt + |g| dt^2), the pairs within that
 *     distance kept and re-tested every substep);
 *   `iterations` Gauss-Seidel sweeps in a fixed order: stretch, bending and tet-volume
 *     constraints colour by colour, then collider, self-collision and pressure
 *     constraints; each constraint is projected with the paper's eq. 8-9 (mass-weighted,
 *     so internal constraints conserve linear and angular momentum);
 *   a final pass projects any vertex still inside a collider to its surface (so the
 *     step never ends inside a collider);
 *   v = (p - x) / h, x = p; then for every vertex whose collision constraint was
 *     active, restitution and Coulomb friction relative to the collider's velocity on
 *     the velocity (the normal velocity before the solve is reflected by `restitution`,
 *     the tangential one is reduced by friction times the normal velocity change).
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
 * experiments/bench-results/c-2026-11-25-speed.txt.
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
 * max_substep is a fixed length, not adapted to the mesh or the impact speed. A vertex
 * that accelerates past the grown self-collision distance within one step can miss a
 * self contact in small_steps (the paper stepping queries every substep).
 *
 * Parameters (solvers.pbd / solvers.xpbd):
 *   stepping (small_steps|paper, small_steps), max_substep (s, 2.5e-4; small_steps only),
 *   iterations (>= 1; 1 with small_steps, 10 with paper), substeps (>= 1, 1: with
 *   small_steps the least number), damping (k_damping in [0,1], 0),
 *   drag (>= 0, 1/s, 0), contact_offset (m, default thickness/2), self_collision
 *   (bool, true for a triangle mesh, as the other solvers), self_thickness (m, default the cloth thickness), self_margin (m,
 *   default self_thickness: extra search distance), pressure (overpressure factor,
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

enum { T_STRETCH = 0, T_BEND = 1, T_TET = 2 };
enum { STEP_SMALL = 0, STEP_PAPER = 1 };
#define MAX_COLOURS 256

/* One colour of one constraint type: constraints [begin, end); with the SIMD path, the
 * ones whose vertices are all free come first, [begin, mid), as the batches [b0, b1). */
typedef struct block { int type, begin, end, mid, b0, b1; } block;

/* Internal constraints as compact records: vertex indices, their inverse masses
 * (gathered at create: a pinned vertex has 0 and is never written) and the rest value
 * (length L, the bending rest angle, the rest 6V). Stored colour by colour, sorted by
 * vertex index within a colour. */
typedef struct scon { int v[2]; double w[2]; double rest; } scon;
typedef struct qcon { int v[4]; double w[4]; double rest; } qcon;

typedef struct coll_con {   /* collider constraint (p - q) . n >= 0 on one vertex */
    int v, col;
    double q[3], n[3];
    double vn0;             /* normal velocity relative to the collider before the solve */
    int active;
} coll_con;

typedef struct self_con { int v[4]; double side; int active; } self_con;

typedef struct pbd_solver {
    int xpbd;
    int iterations, substeps;
    double k_stretch, k_bend, k_volume;     /* pbd: effective k' per type */
    double ks_raw, kb_raw, kv_raw;          /* pbd: the stiffnesses as given */
    int kprime_sweeps;                      /* the sweep count k' was computed for */
    int stepping;                           /* STEP_SMALL or STEP_PAPER */
    double max_substep;                     /* small_steps: the longest substep (s) */
    double bend_cap;                        /* pbd: largest bending step (rad) per projection */
    int bending;                            /* 0 paper, 1 dihedral */
    double k_damping, drag, offset;
    double k_damping_sub;                   /* per substep: 1 - (1 - k_damping)^(1/n) (small_steps) */
    int self_collision;
    double self_h, self_margin;
    double pressure;
    int parallel;
    int mesh_order;                         /* 1: serial sweeps in mesh order, no colouring */
    int simd;                               /* the SIMD width (solvers/pbd_simd.h): 8, 4, 0 = off */
    int parts;                              /* the parameter: mesh parts swept without barriers */
    int nparts;                             /* parts in use (1: a barrier after every colour) */
    int *part_block;                        /* [nparts + 1]: part q is blocks part_block[q..q+1),
                                             * the boundary blocks part_block[nparts..nblocks) */
    const cb_mesh *mesh;
    int nv;
    const double *w;                        /* inverse masses (the world's) */
    /* internal constraints, stored by colour (xpbd: compliance and multiplier arrays) */
    int ns, nb, nt;
    scon *st; double *salpha, *slambda;
    qcon *bd; double *balpha, *blambda;
    qcon *te; double *talpha, *tlambda;
    int nblocks; block *blocks;
    cb_pbd_batch2 *sbat; cb_pbd_batch4 *bbat; /* SIMD batches of stretch and bending constraints */
    double inv_h2;                          /* 1/h^2 of the current substep (xpbd) */
    /* per-vertex work arrays */
    double (*p)[3], (*vpred)[3];
    /* collider constraints */
    int ncc, capcc; coll_con *cc;
    /* self collision */
    cb_spatial_hash *hash;
    int nsc, capsc; self_con *sc;
    long ncand, capcand; int (*cand)[2];    /* small_steps: the step's (vertex, triangle) candidates */
    /* pressure */
    double v6rest;
    double (*grad)[3];
    cb_contact_probe *probe;                /* measures the stage after the solve (colliders only) */
    /* the impulse of what is outside the cloth (colliders, attachments, drag), summed
     * where it acts: never inferred from the momentum change, so that the shared
     * momentum balance checks the internal constraints (which must conserve it) */
    double ext[3];                          /* this step's, N s */
    double (*jthr)[4];                      /* per thread: m dp of attached constraints (padded) */
    int nthr;
} pbd_solver;

static const char *const bending_names[] = {"paper", "dihedral", NULL};
static const char *const order_names[] = {"colour", "mesh", NULL};
static const char *const stepping_names[] = {"small_steps", "paper", NULL};
static const char *const simd_names[] = {"auto", "avx2", "off", NULL};

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
static int colour_constraints(int n, int arity, const int *verts, const double *w, uint64_t (*mask)[4],
                              int nv, int *colour)
{
    memset(mask, 0, (size_t)nv * sizeof *mask);
    int ncol = 0;
    for (int c = 0; c < n; c++) {
        uint64_t used[4] = {0, 0, 0, 0};
        const int *v = verts + (size_t)c * arity;
        for (int j = 0; j < arity; j++)
            if (w[v[j]] > 0.0)
                for (int q = 0; q < 4; q++) used[q] |= mask[v[j]][q];
        int col = -1;
        for (int q = 0; q < 4 && col < 0; q++)
            if (~used[q]) {
                uint64_t free_bits = ~used[q];
                int b = 0;
                while (!((free_bits >> b) & 1u)) b++;
                col = 64 * q + b;
            }
        if (col < 0) return -1;
        for (int j = 0; j < arity; j++)
            if (w[v[j]] > 0.0) mask[v[j]][col / 64] |= (uint64_t)1 << (col % 64);
        colour[c] = col;
        if (col + 1 > ncol) ncol = col + 1;
    }
    return ncol;
}

typedef struct ckey { int key, idx; } ckey;

static int ckey_cmp(const void *pa, const void *pb)
{
    const ckey *a = pa, *b = pb;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* Colour one constraint type and reorder its arrays by colour, and within a colour by
 * the smallest vertex index (memory locality; the constraints of a colour touch disjoint
 * free vertices, so their order does not change the result), appending one block per
 * non-empty colour. verts has n*arity ints, rest and alpha n doubles. */
static int order_by_colour(pbd_solver *s, int type, int n, int arity, int *verts, double *rest,
                           double *alpha, uint64_t (*mask)[4], cb_error *err)
{
    if (n <= 0) return CB_OK;
    if (s->mesh_order) {
        block *nb = cb_realloc(s->blocks, (size_t)(s->nblocks + 1) * sizeof *nb);
        if (!nb) return CB_FAIL(err, CB_ERR_NOMEM, "pbd: out of memory");
        s->blocks = nb;
        s->blocks[s->nblocks++] = (block){type, 0, n, n, 0, 0};
        return CB_OK;
    }
    int *colour = cb_calloc((size_t)n, sizeof *colour);
    int *tmpv = cb_calloc((size_t)n * (size_t)arity, sizeof *tmpv);
    double *tmpd = cb_calloc((size_t)n * 2, sizeof *tmpd);
    ckey *ord = cb_calloc((size_t)n, sizeof *ord);
    int count[MAX_COLOURS + 1];
    int rc = CB_OK;
    if (!colour || !tmpv || !tmpd || !ord) {
        rc = CB_FAIL(err, CB_ERR_NOMEM, "pbd: out of memory for %d constraints", n);
        goto done;
    }
    int ncol = colour_constraints(n, arity, verts, s->w, mask, s->nv, colour);
    if (ncol < 0) {
        rc = CB_FAIL(err, CB_ERR_INPUT, "pbd: the constraints need more than %d colours "
                     "(a vertex with too many neighbours)", MAX_COLOURS);
        goto done;
    }
    memset(count, 0, sizeof count);
    for (int c = 0; c < n; c++) count[colour[c] + 1]++;
    for (int k = 0; k < ncol; k++) count[k + 1] += count[k];
    block *nb = cb_realloc(s->blocks, (size_t)(s->nblocks + ncol) * sizeof *nb);
    if (!nb) {
        rc = CB_FAIL(err, CB_ERR_NOMEM, "pbd: out of memory");
        goto done;
    }
    s->blocks = nb;
    for (int k = 0; k < ncol; k++)
        if (count[k + 1] > count[k])
            s->blocks[s->nblocks++] = (block){type, count[k], count[k + 1], count[k + 1], 0, 0};
    memcpy(tmpv, verts, (size_t)n * (size_t)arity * sizeof *tmpv);
    memcpy(tmpd, rest, (size_t)n * sizeof *tmpd);
    memcpy(tmpd + n, alpha, (size_t)n * sizeof *tmpd);
    for (int c = 0; c < n; c++) {
        const int *v = tmpv + (size_t)c * arity;
        int key = v[0];
        for (int j = 1; j < arity; j++) key = v[j] < key ? v[j] : key;
        ord[count[colour[c]]++] = (ckey){key, c};
    }
    for (int k = 0; k < ncol; k++) { /* count[k] is now the end of colour k */
        int begin = k ? count[k - 1] : 0;
        if (count[k] > begin) qsort(ord + begin, (size_t)(count[k] - begin), sizeof *ord, ckey_cmp);
    }
    for (int dst = 0; dst < n; dst++) {
        int c = ord[dst].idx;
        memcpy(verts + (size_t)dst * arity, tmpv + (size_t)c * arity, (size_t)arity * sizeof *verts);
        rest[dst] = tmpd[c];
        alpha[dst] = tmpd[n + c];
    }
done:
    free(colour);
    free(tmpv);
    free(tmpd);
    free(ord);
    return rc;
}

/* ------------------------------------------------------------ create / destroy */

static void pbd_destroy(void *self)
{
    pbd_solver *s = self;
    if (!s) return;
    free(s->st); free(s->salpha); free(s->slambda);
    free(s->bd); free(s->balpha); free(s->blambda);
    free(s->te); free(s->talpha); free(s->tlambda);
    free(s->blocks);
    free(s->part_block);
    free(s->sbat);
    free(s->bbat);
    free(s->p); free(s->vpred);
    free(s->cc);
    free(s->sc);
    free(s->cand);
    free(s->grad);
    free(s->jthr);
    cb_spatial_hash_free(&s->hash);
    cb_contact_probe_free(&s->probe);
    free(s);
}

static double kprime(double k, int iterations)
{
    return 1.0 - pow(1.0 - k, 1.0 / (double)iterations);
}

/* k' for `sweeps` projections per time step (paper: per substep) */
static void set_kprime(pbd_solver *s, int sweeps)
{
    s->k_stretch = kprime(s->ks_raw, sweeps);
    s->k_bend = kprime(s->kb_raw, sweeps);
    s->k_volume = kprime(s->kv_raw, sweeps);
    s->kprime_sweeps = sweeps;
}

/* The number of substeps of a step of dt: `substeps` (paper), or at least enough
 * for substeps no longer than max_substep (small_steps). */
static int substep_count(const pbd_solver *s, double dt)
{
    if (s->stepping == STEP_PAPER) return s->substeps;
    double q = ceil(dt / s->max_substep * (1.0 - 1e-12));
    int n = q > 1e6 ? 1000000 : q < 1 ? 1 : (int)q;
    return n > s->substeps ? n : s->substeps;
}

/* The stiffnesses read from the parameters (pbd: dimensionless k; xpbd: the tet
 * volume compliance), for building the constraints. */
typedef struct stiffness {
    double ks, kb, kv, vol_compliance;
} stiffness;

/* Create-time constraint arrays before colouring reorders them into s->st, bd, te. */
typedef struct build_arrays {
    int (*sv)[2], (*bv)[4], (*tv)[4];
    double *srest, *brest, *trest;
    uint64_t (*mask)[4];
} build_arrays;

static void free_build_arrays(build_arrays *b)
{
    free(b->sv); free(b->bv); free(b->tv);
    free(b->srest); free(b->brest); free(b->trest);
    free(b->mask);
    memset(b, 0, sizeof *b);
}

/* Stage 1: the parameters (every key read between begin and end), and what they
 * imply: the k' mapping, the bending cap, pressure only on a closed mesh. */
static int read_parameters(pbd_solver *s, const cb_world *w, const cb_params *prm, stiffness *k, cb_error *err)
{
    const char *name = s->xpbd ? "xpbd" : "pbd";
    const int xpbd = s->xpbd;
    *k = (stiffness){1.0, 0.1, 1.0, 0.0};
    cb_params q;
    int rc = cb_params_begin(prm, &q, err);
    if (!rc) rc = cb_params_choice(&q, "stepping", stepping_names, STEP_SMALL, &s->stepping,
                                   "small_steps: substeps of at most max_substep (Macklin 2019); paper: the 2007 loop", err);
    if (!rc) rc = cb_params_double(&q, "max_substep", 2.5e-4, 1e-9, 1e6, &s->max_substep,
                                   "longest substep with stepping small_steps (s)", err);
    if (!rc) rc = cb_params_int(&q, "iterations", s->stepping == STEP_PAPER ? 10 : 1, 1, 1000000, &s->iterations,
                                "Gauss-Seidel sweeps per substep (default 1 with small_steps, 10 with paper)", err);
    if (!rc) rc = cb_params_int(&q, "substeps", 1, 1, 1000000, &s->substeps,
                                "substeps per step (small_steps: the least number)", err);
    if (!rc) rc = cb_params_double(&q, "damping", 0.0, 0.0, 1.0, &s->k_damping,
                                   "k_damping of the paper's section 3.5 velocity damping", err);
    if (!rc) rc = cb_params_double(&q, "drag", 0.0, 0.0, 1e6, &s->drag,
                                   "velocity drag rate (1/s): v *= exp(-drag h)", err);
    if (!rc) rc = cb_params_double(&q, "contact_offset", 0.5 * w->thickness, 0.0, 1e3, &s->offset,
                                   "distance kept from the colliders (m; default half the cloth thickness)", err);
    if (!rc) rc = cb_params_bool(&q, "self_collision", w->mesh && w->mesh->nf > 0, &s->self_collision,
                                 "vertex-triangle self-collision constraints (default on for a triangle mesh)", err);
    if (!rc) rc = cb_params_double(&q, "self_thickness", w->thickness, 0.0, 1e3, &s->self_h,
                                   "self-collision thickness (m; default the cloth thickness)", err);
    if (!rc) rc = cb_params_double(&q, "self_margin", s->self_h, 0.0, 1e3, &s->self_margin,
                                   "extra self-collision search distance (m; default self_thickness)", err);
    if (!rc) rc = cb_params_double(&q, "pressure", 0.0, 0.0, 1e6, &s->pressure,
                                   "overpressure factor of a closed mesh (0: off)", err);
    if (!rc) rc = cb_params_choice(&q, "order", order_names, 0, &s->mesh_order,
                                   "sweep order: colour (parallel colours) or mesh (serial, the paper's)", err);
    int simd_choice = 0;
    if (!rc) rc = cb_params_choice(&q, "simd", simd_names, 0, &simd_choice,
                                   "auto: stretch and bending 8 (AVX-512) or 4 (AVX2) at a time, as the CPU allows; "
                                   "avx2: at most 4; off: scalar", err);
    if (!rc) rc = cb_params_int(&q, "parts", 2, 1, 64, &s->parts,
                                "parallel sweeps: mesh parts swept side by side without a barrier per colour "
                                "(1: a barrier after every colour)", err);
    if (!xpbd) {
        if (!rc) rc = cb_params_double(&q, "stretch_stiffness", 1.0, 0.0, 1.0, &k->ks,
                                       "dimensionless stretch stiffness k", err);
        if (!rc) rc = cb_params_double(&q, "bend_stiffness", 0.1, 0.0, 1.0, &k->kb,
                                       "dimensionless bending stiffness k", err);
        if (!rc) rc = cb_params_double(&q, "volume_stiffness", 1.0, 0.0, 1.0, &k->kv,
                                       "dimensionless tet volume stiffness k", err);
        if (!rc) rc = cb_params_choice(&q, "bending", bending_names, 0, &s->bending,
                                       "bending constraint: the paper's acos(n1.n2) or the model's dihedral angle", err);
        if (!rc) rc = cb_params_double(&q, "bend_max_step", 0.5, 0.0, 1e30, &s->bend_cap,
                                       "largest angle change of one bending projection (rad; 0: unlimited)", err);
    } else {
        s->bending = 1;
        if (!rc) rc = cb_params_double(&q, "volume_compliance", 0.0, 0.0, 1e30, &k->vol_compliance,
                                       "tet volume compliance (0: incompressible)", err);
    }
    rc = cb_params_end(prm, &q, rc, err);
    if (rc) return rc;
    int width = cb_pbd_simd_width();
    s->simd = s->mesh_order || simd_choice == 2 ? 0 : simd_choice == 1 && width > 4 ? 4 : width;
    s->ks_raw = k->ks;
    s->kb_raw = k->kb;
    s->kv_raw = k->kv;
    set_kprime(s, s->iterations);
    if (xpbd || !(s->bend_cap > 0)) s->bend_cap = INFINITY;
    const cb_mesh *m = w->mesh;
    if (s->pressure > 0) {
        int open = m->nf == 0 || m->ns > 0;
        for (int e = 0; e < m->ne && !open; e++) open = m->ef[e][1] < 0;
        if (open)
            return CB_FAIL(err, CB_ERR_INPUT, "%s: pressure needs a closed triangle mesh (every edge in "
                           "two triangles, no springs)", name);
        s->v6rest = cb_pbd_volume6(m, (const double (*)[3])m->x, NULL);
    }
    return CB_OK;
}

/* Stage 2: every array of the solver and the create-time arrays in b. */
static int allocate(pbd_solver *s, const cb_world *w, build_arrays *b, cb_error *err)
{
    const cb_mesh *m = w->mesh;
    int nv = w->nv;
    size_t ne = (size_t)m->ne, nh = (size_t)m->nh, nt = (size_t)w->ntets;
    size_t ne1 = ne ? ne : 1, nh1 = nh ? nh : 1, nt1 = nt ? nt : 1;
    b->sv = cb_calloc(ne1, sizeof *b->sv);
    b->bv = cb_calloc(nh1, sizeof *b->bv);
    b->tv = cb_calloc(nt1, sizeof *b->tv);
    b->srest = cb_calloc(ne1, sizeof *b->srest);
    b->brest = cb_calloc(nh1, sizeof *b->brest);
    b->trest = cb_calloc(nt1, sizeof *b->trest);
    b->mask = cb_calloc((size_t)nv, sizeof *b->mask);
    s->st = cb_calloc(ne1, sizeof *s->st);
    s->salpha = cb_calloc(ne1, sizeof *s->salpha);
    s->slambda = cb_calloc(ne1, sizeof *s->slambda);
    s->bd = cb_calloc(nh1, sizeof *s->bd);
    s->balpha = cb_calloc(nh1, sizeof *s->balpha);
    s->blambda = cb_calloc(nh1, sizeof *s->blambda);
    s->te = cb_calloc(nt1, sizeof *s->te);
    s->talpha = cb_calloc(nt1, sizeof *s->talpha);
    s->tlambda = cb_calloc(nt1, sizeof *s->tlambda);
    s->p = cb_calloc((size_t)nv, sizeof *s->p);
    s->vpred = cb_calloc((size_t)nv, sizeof *s->vpred);
    s->capcc = nv * (w->ncolliders > 0 ? w->ncolliders : 1);
    s->cc = cb_calloc((size_t)s->capcc, sizeof *s->cc);
    s->grad = cb_calloc((size_t)nv, sizeof *s->grad);
#ifdef _OPENMP
    s->nthr = omp_get_max_threads();
#else
    s->nthr = 1;
#endif
    if (s->nthr < 1) s->nthr = 1;
    s->jthr = cb_calloc((size_t)s->nthr, sizeof *s->jthr);
    if (!b->sv || !b->bv || !b->tv || !b->srest || !b->brest || !b->trest || !b->mask || !s->jthr ||
        !s->st || !s->salpha || !s->slambda || !s->bd || !s->balpha || !s->blambda || !s->te || !s->talpha ||
        !s->tlambda || !s->p || !s->vpred || !s->cc || !s->grad)
        return CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory for %d vertices", s->xpbd ? "xpbd" : "pbd", nv);
    return CB_OK;
}

/* Stage 3: the constraints in mesh order: stretch per edge, bending per hinge, volume
 * per tet (those with a free vertex, and a non-zero stiffness). */
static void build_constraints(pbd_solver *s, const cb_world *w, const stiffness *k, build_arrays *b)
{
    const cb_mesh *m = w->mesh;
    const double *ww = w->inv_mass;
    const int xpbd = s->xpbd;
    /* stretch: every mesh edge (xpbd: none when k_stretch = 0) */
    const double (*X)[3] = (const double (*)[3])m->x;
    if (!xpbd || w->model.k_stretch > 0)
        for (int e = 0; e < m->ne; e++) {
            int ia = m->e[e][0], ib = m->e[e][1];
            if (ww[ia] == 0 && ww[ib] == 0) continue;
            b->sv[s->ns][0] = ia;
            b->sv[s->ns][1] = ib;
            b->srest[s->ns] = w->model.rest_length[e];
            s->salpha[s->ns] = xpbd ? 1.0 / w->model.k_stretch : 0.0;
            s->ns++;
        }
    /* bending: every hinge */
    for (int i = 0; i < m->nh; i++) {
        const int *h = m->h[i];
        if (ww[h[0]] == 0 && ww[h[1]] == 0 && ww[h[2]] == 0 && ww[h[3]] == 0) continue;
        double alpha = 0, rest;
        if (xpbd) {
            double kw = 2.0 * w->model.k_bend * w->model.hinge_weight[i];
            if (!(kw > 0)) continue;
            alpha = 1.0 / kw;
        } else if (!(k->kb > 0)) {
            continue;
        }
        if (s->bending == 0) rest = cb_pbd_bend_paper_angle(X[h[0]], X[h[1]], X[h[2]], X[h[3]]);
        else rest = w->model.hinge_rest_angle[i];
        memcpy(b->bv[s->nb], h, sizeof b->bv[0]);
        b->brest[s->nb] = rest;
        s->balpha[s->nb] = alpha;
        s->nb++;
    }
    /* tetrahedral volume */
    for (int i = 0; i < w->ntets; i++) {
        const int *t = w->tets[i];
        if (!xpbd && !(k->kv > 0)) break;
        memcpy(b->tv[s->nt], t, sizeof b->tv[0]);
        b->trest[s->nt] = cb_pbd_tet_volume(X[t[0]], X[t[1]], X[t[2]], X[t[3]], 0.0, NULL);
        s->talpha[s->nt] = k->vol_compliance;
        s->nt++;
    }
}

/* Stage 4: colour each kind of constraint (parallel sweeps) and pack them. */
static int colour_and_pack(pbd_solver *s, const cb_world *w, build_arrays *b, cb_error *err)
{
    const double *ww = w->inv_mass;
    int rc = order_by_colour(s, T_STRETCH, s->ns, 2, &b->sv[0][0], b->srest, s->salpha, b->mask, err);
    if (!rc) rc = order_by_colour(s, T_BEND, s->nb, 4, &b->bv[0][0], b->brest, s->balpha, b->mask, err);
    if (!rc) rc = order_by_colour(s, T_TET, s->nt, 4, &b->tv[0][0], b->trest, s->talpha, b->mask, err);
    if (rc) return rc;
    for (int c = 0; c < s->ns; c++) {
        scon *k = &s->st[c];
        for (int j = 0; j < 2; j++) {
            k->v[j] = b->sv[c][j];
            k->w[j] = ww[b->sv[c][j]];
        }
        k->rest = b->srest[c];
    }
    for (int c = 0; c < s->nb + s->nt; c++) {
        int tet = c >= s->nb, i = tet ? c - s->nb : c;
        qcon *k = tet ? &s->te[i] : &s->bd[i];
        for (int j = 0; j < 4; j++) {
            k->v[j] = tet ? b->tv[i][j] : b->bv[i][j];
            k->w[j] = ww[k->v[j]];
        }
        k->rest = tet ? b->trest[i] : b->brest[i];
    }
    return CB_OK;
}

/* A constraint with a pinned participant (inverse mass 0) moves only its free ones: the
 * attachment's impulse times h is their mass-weighted displacement, added to acc.
 * Constraints among free vertices move their centre of mass by nothing: they are not
 * counted, so the momentum balance tests them. */
static inline int attached(const double *w, int n)
{
    for (int j = 0; j < n; j++)
        if (w[j] == 0.0) return 1;
    return 0;
}

/* Stage 4a (parallel sweeps, `parts` > 1): the vertices fall in `parts` ranges of their
 * index (bands of a grid); a constraint whose free vertices all lie in part q belongs to
 * it, any other to the boundary. Every colour block is reordered part by part (stably)
 * and the blocks regrouped: part 0's (in their colour order), part 1's, ..., then the
 * boundary's. A sweep then runs the parts side by side, each part's colours one after the
 * other on one thread with no barrier between them (two parts share no free vertex),
 * then the boundary on one thread: two barriers per sweep instead of one per colour, and
 * the same order, so the same result, with any number of threads. A mesh whose vertex
 * order is not banded (more than a quarter of the constraints on the boundary) keeps the
 * barrier per colour. */
static int part_of(const pbd_solver *s, const int *v, const double *w, int arity, int K)
{
    int q = -1;
    for (int j = 0; j < arity; j++) {
        if (w[j] == 0.0) continue;
        int r = (int)((long long)v[j] * K / s->nv);
        if (q < 0) q = r;
        else if (q != r) return K;
    }
    return q < 0 ? 0 : q;
}

static int con_part(const pbd_solver *s, int type, int c, int K)
{
    if (type == T_STRETCH) return part_of(s, s->st[c].v, s->st[c].w, 2, K);
    const qcon *q = type == T_BEND ? &s->bd[c] : &s->te[c];
    return part_of(s, q->v, q->w, 4, K);
}

/* Scratch of reorder_block, for blocks of up to cap constraints. */
typedef struct reorder_buf { int *key; scon *ts; qcon *tq; double *ta; int cap; } reorder_buf;

static int reorder_buf_alloc(const pbd_solver *s, reorder_buf *r, cb_error *err)
{
    r->cap = 1;
    for (int b = 0; b < s->nblocks; b++)
        if (s->blocks[b].end - s->blocks[b].begin > r->cap) r->cap = s->blocks[b].end - s->blocks[b].begin;
    r->key = cb_calloc((size_t)r->cap, sizeof *r->key);
    r->ts = cb_calloc((size_t)r->cap, sizeof *r->ts);
    r->tq = cb_calloc((size_t)r->cap, sizeof *r->tq);
    r->ta = cb_calloc((size_t)r->cap, sizeof *r->ta);
    if (!r->key || !r->ts || !r->tq || !r->ta)
        return CB_FAIL(err, CB_ERR_NOMEM, "pbd: out of memory for %d constraints", r->cap);
    return CB_OK;
}

static void reorder_buf_free(reorder_buf *r)
{
    free(r->key);
    free(r->ts);
    free(r->tq);
    free(r->ta);
}

/* Reorder block bl's constraints (records and compliances) stably by r->key[i] in
 * [0, nkey), the key of constraint bl->begin + i (nkey <= MAX_KEYS); start[0..nkey] gets
 * where each key's run begins, counted from bl->begin. The order within a colour does
 * not change the result; the mesh parts and the SIMD batches both group by it. */
#define MAX_KEYS 66
static void reorder_block(pbd_solver *s, const block *bl, int nkey, int *start, reorder_buf *r)
{
    int m = bl->end - bl->begin, fill[MAX_KEYS];
    scon *st = s->st + bl->begin;
    qcon *qc = (bl->type == T_BEND ? s->bd : s->te) + bl->begin;
    double *al = (bl->type == T_STRETCH ? s->salpha : bl->type == T_BEND ? s->balpha : s->talpha) + bl->begin;
    memset(start, 0, (size_t)(nkey + 1) * sizeof *start);
    for (int i = 0; i < m; i++) start[r->key[i] + 1]++;
    for (int q = 0; q < nkey; q++) start[q + 1] += start[q];
    memcpy(fill, start, (size_t)nkey * sizeof *fill);
    if (bl->type == T_STRETCH) memcpy(r->ts, st, (size_t)m * sizeof *r->ts);
    else memcpy(r->tq, qc, (size_t)m * sizeof *r->tq);
    memcpy(r->ta, al, (size_t)m * sizeof *r->ta);
    for (int i = 0; i < m; i++) {
        int d = fill[r->key[i]]++;
        if (bl->type == T_STRETCH) st[d] = r->ts[i];
        else qc[d] = r->tq[i];
        al[d] = r->ta[i];
    }
}

static int split_parts(pbd_solver *s, cb_error *err)
{
    int K = s->parts, n = s->ns + s->nb + s->nt, nboundary = 0;
    s->nparts = 1;
    if (K < 2 || s->mesh_order || !s->parallel) return CB_OK;
    for (int b = 0; b < s->nblocks; b++)
        for (int c = s->blocks[b].begin; c < s->blocks[b].end; c++)
            nboundary += con_part(s, s->blocks[b].type, c, K) == K;
    if (4 * nboundary > n) return CB_OK;
    reorder_buf r = {0};
    block *nb = cb_calloc((size_t)s->nblocks * (size_t)(K + 1), sizeof *nb);
    int *sub = cb_calloc((size_t)s->nblocks * (size_t)(K + 2), sizeof *sub); /* block b, part q: its start */
    s->part_block = cb_calloc((size_t)K + 2, sizeof *s->part_block);
    int rc = reorder_buf_alloc(s, &r, err);
    if (!rc && (!nb || !sub || !s->part_block)) rc = CB_FAIL(err, CB_ERR_NOMEM, "pbd: out of memory for %d mesh parts", K);
    if (rc) goto done;
    for (int b = 0; b < s->nblocks; b++) {
        const block *bl = &s->blocks[b];
        for (int c = bl->begin; c < bl->end; c++) r.key[c - bl->begin] = con_part(s, bl->type, c, K);
        reorder_block(s, bl, K + 1, sub + (size_t)b * (K + 2), &r);
    }
    int nn = 0;
    for (int q = 0; q <= K; q++) {
        s->part_block[q] = nn;
        for (int b = 0; b < s->nblocks; b++) {
            const int *start = sub + (size_t)b * (K + 2);
            int begin = s->blocks[b].begin + start[q], end = s->blocks[b].begin + start[q + 1];
            if (end > begin) nb[nn++] = (block){s->blocks[b].type, begin, end, end, 0, 0};
        }
    }
    s->part_block[K + 1] = nn;
    free(s->blocks);
    s->blocks = nb;
    nb = NULL;
    s->nblocks = nn;
    s->nparts = K;
done:
    free(nb);
    free(sub);
    reorder_buf_free(&r);
    return rc;
}

/* Stage 4b (SIMD path): within each colour of stretch and bending constraints, the
 * constraints whose vertices are all free first (reorder_block: stable), then their
 * batches of four, the last one padded with empty lanes (w = 0, c = -1, the vertices of
 * its first lane, never written). */
static int make_batches(pbd_solver *s, cb_error *err)
{
    reorder_buf r = {0};
    int rc = reorder_buf_alloc(s, &r, err), n2 = 0, n4 = 0;
    for (int b = 0; b < s->nblocks && !rc; b++) {
        block *bl = &s->blocks[b];
        if (bl->type == T_TET) continue;
        int start[3];
        for (int c = bl->begin; c < bl->end; c++)
            r.key[c - bl->begin] = bl->type == T_STRETCH ? attached(s->st[c].w, 2) : attached(s->bd[c].w, 4);
        reorder_block(s, bl, 2, start, &r);
        bl->mid = bl->begin + start[1];
        int nb = (bl->mid - bl->begin + 3) / 4;
        bl->b0 = bl->type == T_STRETCH ? n2 : n4;
        bl->b1 = bl->b0 + nb;
        if (bl->type == T_STRETCH) n2 += nb;
        else n4 += nb;
    }
    reorder_buf_free(&r);
    if (rc) return rc;
    s->sbat = cb_calloc((size_t)(n2 ? n2 : 1), sizeof *s->sbat);
    s->bbat = cb_calloc((size_t)(n4 ? n4 : 1), sizeof *s->bbat);
    if (!s->sbat || !s->bbat) return CB_FAIL(err, CB_ERR_NOMEM, "pbd: out of memory for %d batches", n2 + n4);
    for (int b = 0; b < s->nblocks; b++) {
        const block *bl = &s->blocks[b];
        if (bl->type == T_TET) continue;
        int two = bl->type == T_STRETCH, arity = two ? 2 : 4;
        for (int i = bl->b0; i < bl->b1; i++) {
            /* the batch's rows: vertex j of lane l is v[j][l] (the same in both layouts) */
            int (*v)[4] = two ? s->sbat[i].v : s->bbat[i].v, *cl = two ? s->sbat[i].c : s->bbat[i].c;
            double (*w)[4] = two ? s->sbat[i].w : s->bbat[i].w, *rest = two ? s->sbat[i].rest : s->bbat[i].rest;
            for (int l = 0; l < 4; l++) {
                int c = bl->begin + 4 * (i - bl->b0) + l, real = c < bl->mid;
                int src = real ? c : bl->begin + 4 * (i - bl->b0); /* an empty lane reads lane 0 */
                const int *sv = two ? s->st[src].v : s->bd[src].v;
                const double *sw = two ? s->st[src].w : s->bd[src].w;
                for (int j = 0; j < arity; j++) {
                    v[j][l] = sv[j];
                    w[j][l] = real ? sw[j] : 0.0;
                }
                rest[l] = two ? s->st[src].rest : s->bd[src].rest;
                cl[l] = real ? c : -1;
            }
        }
    }
    return CB_OK;
}

/* Stage 5: self collision (spatial hash, constraint store) and the contact probe. */
static int contact_parts(pbd_solver *s, const cb_world *w, cb_error *err)
{
    const char *name = s->xpbd ? "xpbd" : "pbd";
    const cb_mesh *m = w->mesh;
    int nv = w->nv;
    int rc = 0;
    if (s->self_collision) {
        if (m->nf == 0) rc = CB_FAIL(err, CB_ERR_INPUT, "%s: self_collision needs a triangle mesh", name);
        if (!rc) rc = cb_spatial_hash_create(1.0, &s->hash, err);
        if (!rc) {
            s->capsc = 4 * nv;
            s->sc = cb_calloc((size_t)s->capsc, sizeof *s->sc);
            if (!s->sc) rc = CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", name);
        }
    }
    if (!rc && w->ncolliders) rc = cb_contact_probe_create(w, &s->probe, err);
    return rc;
}

static int create_common(const cb_world *w, const cb_params *prm, int xpbd, void **self, cb_error *err)
{
    const char *name = xpbd ? "xpbd" : "pbd";
    if (!w || !self) return CB_FAIL(err, CB_ERR_INPUT, "%s: NULL argument", name);
    *self = NULL;
    pbd_solver *s = cb_calloc(1, sizeof *s);
    if (!s) return CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", name);
    s->xpbd = xpbd;
    s->mesh = w->mesh;
    s->nv = w->nv;
    s->w = w->inv_mass;
    stiffness k;
    build_arrays b = {0};
    int rc = read_parameters(s, w, prm, &k, err);
    if (!rc) rc = allocate(s, w, &b, err);
    if (!rc) {
        build_constraints(s, w, &k, &b);
        /* small_steps runs 20x the sweeps of a step, each of them a parallel region with
         * a barrier per colour: with one sweep per substep a colour of a 40 x 40 cloth is
         * too little work to share (2 threads on a loaded 2-core machine: 1.4 s per step
         * instead of 38 ms), so it goes parallel at 16x the size only */
        int par_min = s->stepping == STEP_PAPER ? 4096 : 65536;
        s->parallel = !s->mesh_order && s->ns + s->nb + s->nt >= par_min;
        rc = colour_and_pack(s, w, &b, err);
    }
    if (!rc) rc = split_parts(s, err);
    if (!rc && s->simd) rc = make_batches(s, err);
    free_build_arrays(&b);
    if (!rc) rc = contact_parts(s, w, err);
    if (rc) {
        pbd_destroy(s);
        return rc;
    }
    *self = s;
    return CB_OK;
}

static int pbd_create(const cb_world *w, const cb_params *p, void **self, cb_error *err)
{
    return create_common(w, p, 0, self, err);
}

static int xpbd_create(const cb_world *w, const cb_params *p, void **self, cb_error *err)
{
    return create_common(w, p, 1, self, err);
}

/* ------------------------------------------------------------ projections */

static inline void keep(double (*p)[3], const int *v, int n, double before[][3])
{
    for (int j = 0; j < n; j++) cb_v3_copy(before[j], p[v[j]]);
}

static inline void count_moves(double *acc, double (*p)[3], const int *v, const double *w, int n,
                               double before[][3])
{
    for (int j = 0; j < n; j++)
        if (w[j] > 0)
            for (int k = 0; k < 3; k++) acc[k] += (p[v[j]][k] - before[j][k]) / w[j];
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

static inline void project4(pbd_solver *s, double (*p)[3], const int *v, double C, double g[4][3], double k,
                            double at, double *lambda, double *acc)
{
    double w4[4] = {s->w[v[0]], s->w[v[1]], s->w[v[2]], s->w[v[3]]};
    double dl = cb_pbd_dlambda(C, (const double (*)[3])g, w4, 4, k, at, lambda);
    if (dl == 0.0) return;
    int a = w4[0] == 0.0 || w4[1] == 0.0 || w4[2] == 0.0 || w4[3] == 0.0;
    for (int j = 0; j < 4; j++)
        if (w4[j] > 0) {
            cb_v3_axpy(p[v[j]], dl * w4[j], g[j]);
            if (a) cb_v3_axpy(acc, dl, g[j]); /* m dp = dl g for a free participant */
        }
}

static void project_contacts(pbd_solver *s, double (*p)[3])
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
        double V = cb_pbd_volume6(m, (const double (*)[3])p, s->grad);
        double C = V - s->pressure * s->v6rest, S = 0;
        for (int i = 0; i < m->nv; i++) S += s->w[i] * cb_v3_norm2(s->grad[i]);
        if (S > 0) {
            double dl = -C / S, moved[3] = {0, 0, 0};
            int pinned = 0;
            for (int i = 0; i < m->nv; i++) {
                if (s->w[i] > 0) {
                    cb_v3_axpy(p[i], dl * s->w[i], s->grad[i]);
                    cb_v3_axpy(moved, dl, s->grad[i]);
                } else {
                    pinned = 1;
                }
            }
            if (pinned) cb_v3_add(acc, acc, moved); /* the gradients sum to 0: only pins unbalance it */
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
static void sweep_scalar(pbd_solver *s, double (*p)[3], const block *bl, int serial)
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
            if (a) count_moves(acc, p, st[c].v, st[c].w, 2, b);
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
            if (a) count_moves(acc, p, st[c].v, st[c].w, 2, b);
        }
    } else if (bl->type == T_BEND && s->bending == 0) {
        const qcon *q = s->bd;
        double k = s->k_bend, cap = s->bend_cap;
        for (int c = begin; c < end; c++) {
            int a = attached(q[c].w, 4);
            if (a) keep(p, q[c].v, 4, b);
            cb_pbd_project_bend_paper(p[q[c].v[0]], p[q[c].v[1]], p[q[c].v[2]], p[q[c].v[3]], q[c].w, q[c].rest, k,
                                      cap);
            if (a) count_moves(acc, p, q[c].v, q[c].w, 4, b);
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
            if (a) count_moves(acc, p, q[c].v, q[c].w, 4, b);
        }
    } else if (bl->type == T_BEND) {
        const qcon *q = s->bd;
        double k = s->k_bend, cap = s->bend_cap;
        for (int c = begin; c < end; c++) {
            int a = attached(q[c].w, 4);
            if (a) keep(p, q[c].v, 4, b);
            cb_pbd_project_bend_dihedral(p[q[c].v[0]], p[q[c].v[1]], p[q[c].v[2]], p[q[c].v[3]], q[c].w, q[c].rest,
                                         k, -1.0, NULL, cap);
            if (a) count_moves(acc, p, q[c].v, q[c].w, 4, b);
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
            if (a) count_moves(acc, p, q[c].v, q[c].w, 4, b);
        }
    }
}

/* The same with the SIMD path: the batches of the colour, then (no barrier between them:
 * the constraints with a pinned vertex touch other free vertices) those on the scalar
 * path. */
static void sweep_simd(pbd_solver *s, double (*p)[3], const block *bl, int serial)
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
    block rest = *bl;
    rest.begin = bl->mid;
    sweep_scalar(s, p, &rest, serial);
}

/* One block, by this thread alone (`serial`) or shared by the team, ending with the
 * team's barrier. */
static void sweep_block(pbd_solver *s, double (*p)[3], const block *bl, int serial)
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
    double (*p)[3] = s->p;
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

/* ------------------------------------------------------------ contact generation */

/* Signed distance of x + sigma (p - x) from collider c at time t0 + sigma h, minus offset. */
static double entry_fn(const cb_collider *c, const double x[3], const double p[3], double t0, double h,
                       double sigma, double offset, double pt[3], double n[3])
{
    for (int k = 0; k < 3; k++) pt[k] = x[k] + sigma * (p[k] - x[k]);
    return cb_collider_query(c, t0 + sigma * h, pt, n, NULL) - offset;
}

static void make_collider_constraints(pbd_solver *s, const cb_world *w, double t0, double h)
{
    s->ncc = 0;
    for (int i = 0; i < w->nv; i++) {
        if (s->w[i] == 0.0) continue;
        const double *x = w->state.x[i], *p = s->p[i];
        for (int c = 0; c < w->ncolliders; c++) {
            const cb_collider *col = &w->colliders[c];
            double pt[3], n[3];
            double f1 = entry_fn(col, x, p, t0, h, 1.0, s->offset, pt, n);
            if (f1 >= fmax(s->offset, 1e-9)) continue; /* clearly outside at the end (margin: offset) */
            double f0 = entry_fn(col, x, p, t0, h, 0.0, s->offset, pt, n);
            coll_con *k = &s->cc[s->ncc];
            if (f0 >= 0 && f1 < 0) {
                /* continuous: bisect for the entry point (f = 0) */
                double lo = 0, hi = 1;
                for (int it = 0; it < 40; it++) {
                    double mid = 0.5 * (lo + hi);
                    if (entry_fn(col, x, p, t0, h, mid, s->offset, pt, n) >= 0) lo = mid;
                    else hi = mid;
                }
                entry_fn(col, x, p, t0, h, lo, s->offset, k->q, k->n);
            } else {
                /* static: closest point of p (inside, or within the margin) */
                double cp[3];
                cb_collider_query(col, t0 + h, p, k->n, cp);
                for (int q = 0; q < 3; q++) k->q[q] = cp[q] + s->offset * k->n[q];
            }
            double vc[3], vr[3];
            cb_collider_velocity(col, t0 + h, p, vc);
            cb_v3_sub(vr, s->vpred[i], vc);
            k->vn0 = cb_v3_dot(vr, k->n);
            k->v = i;
            k->col = c;
            k->active = 0;
            s->ncc++;
        }
    }
}

/* Signed distance of y from the plane of triangle (a, b, c) and whether its projection
 * lies in the triangle (barycentric tolerance tol). */
static double tri_side(const double y[3], const double a[3], const double b[3], const double c[3], double tol,
                       int *inside)
{
    double e1[3], e2[3], r[3], N[3];
    cb_v3_sub(e1, b, a);
    cb_v3_sub(e2, c, a);
    cb_v3_sub(r, y, a);
    cb_v3_cross(N, e1, e2);
    double n2 = cb_v3_norm2(N);
    *inside = 0;
    if (!(n2 > 0)) return 0.0;
    double t1[3], t2[3];
    cb_v3_cross(t1, r, e2);
    cb_v3_cross(t2, e1, r);
    double u = cb_v3_dot(t1, N) / n2, v = cb_v3_dot(t2, N) / n2;
    *inside = u >= -tol && v >= -tol && u + v <= 1.0 + tol;
    return cb_v3_dot(r, N) / sqrt(n2);
}

/* query > 0: hash the predicted positions again and collect the candidates within
 * `query` (>= self_h + self_margin); query = 0: reuse the candidates of the last query
 * (small_steps: one query per step, its distance covering the step's motion). */
static int make_self_constraints(pbd_solver *s, const cb_world *w, double query, cb_error *err)
{
    s->nsc = 0;
    const cb_mesh *m = s->mesh;
    const double (*x)[3] = (const double (*)[3])w->state.x;
    const double (*p)[3] = (const double (*)[3])s->p;
    const cb_pair_list *pl = NULL;
    if (query > 0) {
        int rc = cb_spatial_hash_query(s->hash, m, p, query, err);
        if (rc) return rc;
        pl = cb_spatial_hash_pairs(s->hash);
        if (s->stepping != STEP_PAPER) {
            /* kept for the whole step: only the pairs really within `query` (the
             * hash's cells hold many more), tested once instead of every substep */
            s->ncand = 0;
            for (long k = 0; k < pl->n; k++) {
                int v = pl->p[k][0];
                const int *f = m->f[pl->p[k][1]];
                if (cb_point_triangle_distance2(p[v], p[f[0]], p[f[1]], p[f[2]], NULL, NULL) > query * query)
                    continue;
                if (s->ncand == s->capcand) {
                    long cap = s->capcand ? 2 * s->capcand : 1024;
                    int (*n)[2] = cb_realloc(s->cand, (size_t)cap * sizeof *n);
                    if (!n) return CB_FAIL(err, CB_ERR_NOMEM, "pbd: out of memory for self candidates");
                    s->cand = n;
                    s->capcand = cap;
                }
                s->cand[s->ncand][0] = v;
                s->cand[s->ncand][1] = pl->p[k][1];
                s->ncand++;
            }
            pl = NULL;
        }
    }
    long npairs = pl ? pl->n : s->ncand;
    double reach = s->self_h + s->self_margin;
    for (long k = 0; k < npairs; k++) {
        int v = pl ? pl->p[k][0] : s->cand[k][0], t = pl ? pl->p[k][1] : s->cand[k][1];
        const int *f = m->f[t];
        if (s->w[v] == 0 && s->w[f[0]] == 0 && s->w[f[1]] == 0 && s->w[f[2]] == 0) continue;
        int in0, in1;
        double s0 = tri_side(x[v], x[f[0]], x[f[1]], x[f[2]], 0.02, &in0);
        double s1 = tri_side(p[v], p[f[0]], p[f[1]], p[f[2]], 0.02, &in1);
        if (!in0 && !in1) continue;
        double side = s0 > 0 ? 1.0 : s0 < 0 ? -1.0 : (s1 >= 0 ? 1.0 : -1.0);
        if (side * s1 >= reach) continue;
        if (s->nsc == s->capsc) {
            int cap = 2 * s->capsc;
            self_con *n = cb_realloc(s->sc, (size_t)cap * sizeof *n);
            if (!n) return CB_FAIL(err, CB_ERR_NOMEM, "pbd: out of memory for self contacts");
            s->sc = n;
            s->capsc = cap;
        }
        self_con *c = &s->sc[s->nsc++];
        c->v[0] = v;
        c->v[1] = f[0];
        c->v[2] = f[1];
        c->v[3] = f[2];
        c->side = side;
        c->active = 0;
    }
    return CB_OK;
}

/* Anything still inside a collider after the sweeps is put on its surface (+offset). */
static int final_collider_pass(pbd_solver *s, const cb_world *w, double t1)
{
    int moved = 0;
    for (int i = 0; i < w->nv; i++) {
        if (s->w[i] == 0.0) continue;
        for (int c = 0; c < w->ncolliders; c++) {
            double n[3], cp[3];
            double d = cb_collider_query(&w->colliders[c], t1, s->p[i], n, cp);
            if (d < 0) {
                for (int q = 0; q < 3; q++) {
                    double to = cp[q] + s->offset * n[q];
                    s->jthr[0][q] += (to - s->p[i][q]) * w->mass[i];
                    s->p[i][q] = to;
                }
                moved++;
            }
        }
    }
    return moved;
}

/* Restitution and friction on the velocities of vertices whose collider constraint acted. */
static void contact_velocities(pbd_solver *s, cb_world *w, double t1)
{
    for (int c = 0; c < s->ncc; c++) {
        coll_con *k = &s->cc[c];
        if (!k->active) continue;
        const cb_collider *col = &w->colliders[k->col];
        double *v = w->state.v[k->v];
        double vc[3], vr[3], vt[3];
        cb_collider_velocity(col, t1, w->state.x[k->v], vc);
        cb_v3_sub(vr, v, vc);
        double vn = cb_v3_dot(vr, k->n);
        cb_v3_copy(vt, vr);
        cb_v3_axpy(vt, -vn, k->n);
        double vn_new = vn;
        if (k->vn0 < 0) vn_new = fmax(vn, -col->restitution * k->vn0);
        double dvn = vn_new - fmin(k->vn0, 0.0);
        double lt = cb_v3_norm(vt);
        double scale = lt > 0 ? fmax(0.0, 1.0 - col->friction * fmax(dvn, 0.0) / lt) : 0.0;
        for (int q = 0; q < 3; q++) {
            double to = vc[q] + vn_new * k->n[q] + scale * vt[q];
            s->ext[q] += w->mass[k->v] * (to - v[q]); /* restitution and friction */
            v[q] = to;
        }
    }
}

/* ------------------------------------------------------------ step */

/* self_query: the candidate distance of a new spatial-hash query, 0 to reuse the last */
static int substep(pbd_solver *s, cb_world *w, double t0, double h, double self_query, cb_step_info *info,
                   cb_error *err)
{
    double t1 = t0 + h;
    int nv = w->nv;
    cb_lap_timer lap;
    cb_lap_start(&lap, info);
    double decay = exp(-s->drag * h);
    memset(s->jthr, 0, (size_t)s->nthr * sizeof *s->jthr);
    for (int i = 0; i < nv; i++) {
        if (s->w[i] == 0.0) continue;
        double *v = w->state.v[i];
        /* drag acts on the velocity of the last step only, so it does not change
         * a static state (damping gravity's own increment would weaken gravity) */
        for (int k = 0; k < 3; k++) {
            s->ext[k] += w->mass[i] * v[k] * (decay - 1.0); /* the air's impulse */
            v[k] = v[k] * decay + h * w->gravity[k];
        }
    }
    cb_pbd_damp_velocities(nv, w->mass, s->w, (const double (*)[3])w->state.x, w->state.v, s->k_damping_sub);
    for (int i = 0; i < nv; i++) {
        if (s->w[i] == 0.0) {
            cb_world_pin_target(w, i, t1, s->p[i]);
            cb_v3_copy(s->vpred[i], w->pin_velocity[i]);
            continue;
        }
        cb_v3_copy(s->vpred[i], w->state.v[i]);
        for (int k = 0; k < 3; k++) s->p[i][k] = w->state.x[i][k] + h * w->state.v[i][k];
    }
    cb_lap(&lap, "predict");
    if (w->ncolliders) make_collider_constraints(s, w, t0, h);
    else s->ncc = 0;
    if (s->self_collision) {
        int rc = make_self_constraints(s, w, self_query, err);
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
        for (int i = 0; i < nv; i++)
            for (int k = 0; k < 3; k++)
                w->state.v[i][k] = s->w[i] == 0.0 ? w->pin_velocity[i][k] : (s->p[i][k] - w->state.x[i][k]) / h;
        cb_contact_probe_begin(s->probe, w, t1, (const double (*)[3])s->p, (const double (*)[3])w->state.v);
    }
    int fixed = w->ncolliders ? final_collider_pass(s, w, t1) : 0;
    for (int t = 0; t < s->nthr; t++) /* the position-level impulses: m dp / h */
        for (int k = 0; k < 3; k++) s->ext[k] += s->jthr[t][k] / h;
    for (int i = 0; i < nv; i++) {
        if (s->w[i] == 0.0) continue;
        for (int k = 0; k < 3; k++) {
            w->state.v[i][k] = (s->p[i][k] - w->state.x[i][k]) / h;
            w->state.x[i][k] = s->p[i][k];
        }
    }
    cb_world_apply_pins(w, t1);
    contact_velocities(s, w, t1);
    if (s->probe)
        cb_contact_probe_end(s->probe, w, (const double (*)[3])w->state.x, (const double (*)[3])w->state.v, info);
    cb_lap_contact(&lap, "contact");
    int contacts = fixed;
    for (int c = 0; c < s->ncc; c++) contacts += s->cc[c].active;
    for (int c = 0; c < s->nsc; c++) contacts += s->sc[c].active;
    info->contacts = contacts;
    return CB_OK;
}

static int pbd_step(void *self, cb_world *w, double dt, cb_step_info *info, cb_error *err)
{
    pbd_solver *s = self;
    const char *name = s->xpbd ? "xpbd" : "pbd"; /* arguments checked by cb_solver_step */
    if (w->nv != s->nv || w->mesh != s->mesh)
        return CB_FAIL(err, CB_ERR_INPUT, "%s: the world is not the one the solver was created for", name);
    int nsub = substep_count(s, dt);
    /* small_steps: k' spreads the stiffness over every sweep of the step */
    int sweeps = s->stepping == STEP_PAPER ? s->iterations : s->iterations * nsub;
    if (sweeps != s->kprime_sweeps) set_kprime(s, sweeps);
    /* section 3.5 damping removes the fraction k_damping of the non-rigid velocity per
     * step (paper: per substep, as before) */
    s->k_damping_sub = s->stepping == STEP_PAPER || nsub == 1 ? s->k_damping : kprime(s->k_damping, nsub);
    double h = dt / (double)nsub;
    cb_v3_zero(s->ext);
#ifdef _OPENMP
    if (omp_get_max_threads() > s->nthr) { /* more threads than at create: one slot each */
        double (*grown)[4] = cb_calloc((size_t)omp_get_max_threads(), sizeof *grown);
        if (!grown) return CB_FAIL(err, CB_ERR_NOMEM, "%s: out of memory", name);
        free(s->jthr);
        s->jthr = grown;
        s->nthr = omp_get_max_threads();
    }
#endif
    /* self-collision candidates: paper, a query per substep within self_h + self_margin;
     * small_steps, one query per step (at the first substep's prediction), its
     * distance grown by twice the farthest a vertex moves over the step (both ends of a
     * pair move: the fastest speed now and gravity, with 25% for the speed changes the
     * constraints make within the step) */
    double reach = s->self_h + s->self_margin, grow = 0;
    if (s->self_collision && s->stepping != STEP_PAPER && nsub > 1) {
        double vmax = 0, g = cb_v3_norm(w->gravity);
        for (int i = 0; i < w->nv; i++) vmax = fmax(vmax, cb_v3_norm(w->state.v[i]));
        grow = 2.0 * 1.25 * (vmax * dt + g * dt * dt);
    }
    /* a long step would grow the query without bound (g dt^2: 6 m at dt = 0.5 s, and the
     * hash visits every cell of that reach: minutes per query); beyond a few reaches a
     * query per substep, each within the reach, costs less */
    int per_substep = s->stepping == STEP_PAPER || grow > 4.0 * reach;
    if (per_substep) grow = 0;
    for (int k = 0; k < nsub; k++) {
        if (k > 0 && cb_interrupt_requested()) /* a long dt: many small steps */
            return CB_FAIL(err, CB_ERR_INTERRUPTED, "%s: interrupted by a signal in substep %d of %d", name, k, nsub);
        double query = per_substep || k == 0 ? reach + grow : 0.0;
        int rc = substep(s, w, w->state.t + (double)k * h, h, query, info, err);
        if (rc) return rc;
    }
    /* a non-finite state is reported by cb_solver_step */
    /* the impulse summed where colliders, attachments and drag act (not P1 - P0 - m g dt,
     * which would make the momentum balance true by definition) */
    for (int k = 0; k < 3; k++) info->external_impulse[k] = s->ext[k];
    info->iterations = s->iterations * nsub;
    /* residual and (xpbd) constraint energy at the final positions */
    const double (*x)[3] = (const double (*)[3])w->state.x;
    double res = 0, E = 0;
    for (int c = 0; c < s->ns; c++) {
        const scon *k = &s->st[c];
        double C = cb_pbd_stretch(x[k->v[0]], x[k->v[1]], k->rest, NULL);
        if (s->xpbd) {
            res = fmax(res, fabs(C + s->salpha[c] * s->inv_h2 * s->slambda[c]));
            E += 0.5 * C * C / s->salpha[c];
        } else if (k->rest > 0) {
            res = fmax(res, fabs(C) / k->rest);
        }
    }
    if (s->xpbd) {
        for (int c = 0; c < s->nb; c++) {
            const int *v = s->bd[c].v;
            double C = cb_pbd_bend_dihedral(x[v[0]], x[v[1]], x[v[2]], x[v[3]], s->bd[c].rest, NULL);
            res = fmax(res, fabs(C + s->balpha[c] * s->inv_h2 * s->blambda[c]));
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

const cb_solver_class cb_solver_pbd = {
    .name = "pbd",
    .summary = "Position Based Dynamics (Mueller et al. 2007): Gauss-Seidel constraint projection, "
               "dimensionless stiffness",
    .create = pbd_create,
    .step = pbd_step,
    .destroy = pbd_destroy,
    .self_collision = pbd_self_collision,
    .model = pbd_model,
};

const cb_solver_class cb_solver_xpbd = {
    .name = "xpbd",
    .summary = "XPBD (Macklin et al. 2016): compliant constraints = the shared cloth model",
    .create = xpbd_create,
    .step = pbd_step,
    .destroy = pbd_destroy,
    .self_collision = pbd_self_collision,
    .model = pbd_model,
};
