/* solvers/fms.c — Fast Simulation of Mass-Spring Systems.
 *
 * Paper: T. Liu, A. W. Bargteil, J. F. O'Brien, L. Kavan, "Fast Simulation of
 * Mass-Spring Systems", ACM Trans. Graph. 32(6) (SIGGRAPH Asia 2013), sections 3-4.
 *
 * Algorithm. Implicit Euler is the minimisation of
 *     g(x) = 1/2 (x - y)^T M (x - y) + h^2 E(x) - h^2 x^T f_ext,
 *     y = q_n + (1 - damping) (q_n - q_{n-1}) = q_n + (1 - damping) h v_n,
 * with E the spring energy sum 1/2 k_i (|p_a - p_b| - r_i)^2. Writing each spring's
 * energy as min over |d_i| = r_i of 1/2 k_i |p_a - p_b - d_i|^2, g becomes a function
 * of (x, d) minimised by block-coordinate descent, starting from x = y:
 *   local step:  d_i = r_i (p_a - p_b) / |p_a - p_b|                (every spring;
 *                for p_a = p_b every d_i of length r_i minimises, we take the rest
 *                shape's direction)
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
 * Collider contact inside the solve (contact: constraint, the default; Projective
 * Dynamics' collision constraints, Bouaziz et al. 2014, sec. 5, in Liu et al.'s
 * local/global form): g gets the term P(x) = sum_i 1/2 c m_i dist(x_i, C)^2, C the
 * region at least contact_offset from every collider at t + h (solvers/spring_solver.h,
 * cb_spring_contact_penalty; newton minimises the same term). Like a spring it is
 * min over p_i in C of 1/2 c m_i |x_i - p_i|^2: a "contact spring" from the vertex to
 * its projection p_i onto C (x_i itself when it is outside the offset, else moved out
 * along the nearest collider's normal), found in the local step, with weight c m_i on
 * the diagonal of the global matrix, (M + h^2 L + W)(x - y) = h^2 (J d - L y + f_ext)
 * + W (p - y). The vertices with a contact spring are those within their own motion of
 * the step (|y - x0|) of the offset at y or at x0, and any vertex an iteration brings
 * closer than the offset (found after each global step but the last); when one of them
 * has no spring in the current factor, the springs are set to the wanted ones and the
 * matrix is refactored (counted in factorizations: a few per impact, none while the
 * contacts persist; a spring kept for a vertex that left only slows it like a proximal
 * term, the fixed point is unchanged). Both steps still decrease g, so fms converges to
 * the same minimiser as newton (the friction and the coarse correction below keep the
 * fixed point but not this monotonicity). Between iterations (not after the last, so the impulses below
 * stay exact) a coarse correction moves the free vertices by the common translation that
 * minimises the quadratic model of g (coarse_translation): the contact springs' weight is
 * isotropic in the matrix but their force normal, so without it the global step moved a
 * vertex along a collider only 1/(1 + c) of the way per iteration (a cloth on an incline
 * kept 10% of its tangential motion in 10 iterations: 0.21 m instead of 0.33 m in 1 s,
 * with or without friction; issue 32). Collider friction (contact: constraint): the
 * lagged Coulomb friction F of Incremental Potential Contact (Li et al. 2020, sec. 5;
 * spring_solver.h, cb_spring_friction), the same term of g newton minimises; fms carries
 * its force -grad F(x) on the right-hand side of each global step (like the
 * attachments; F is not in the matrix) and in the coarse correction with its Hessian.
 * Its static branch is a tangential spring of stiffness 2 mu Lambda/eps, kept below the
 * contact spring's weight c m_i (eps's lower bound), so the iteration, whose matrix has
 * at least that weight at a contact vertex, stays stable. As in newton, the first
 * step of a run in which the penalty acts is solved twice (normal forces lagged from
 * the first solve). The 30 degree incline (tests/test_friction.c): 0.330 m in 1 s at
 * mu 0.5 (Coulomb: 0.329), 0.6 mm at mu 0.7 (sticks). contact: projection leaves P out: the paper's splitting
 * (solve without colliders, then project), which moves vertices out from up to 2 cm
 * deep on the drape and adds energy (kept to reproduce it).
 * After the iterations v = (x - q_n)/h, then contact (solvers/step_contact.h): self
 * collision (vertex-triangle, spatial hash from contact/, pushed apart to the cloth
 * thickness, inelastic with Coulomb friction: self_friction times the normal velocity
 * change of the pair; self contact is not in the solve, so this stage carries the whole
 * self normal impulse) and collider projection with restitution and friction (the
 * Coulomb friction of the normal velocity it removes, the last 1/(1 + c) of the normal
 * impulse, cb_spring_friction); its wall time is wall_contact_s.
 *
 * Mapping from the shared cloth model (solvers/springs.c, solvers/bending.c): the edge
 * springs are the shared stretch term exactly (k_stretch). Bending (`bending`):
 *   quadratic (the default): the quadratic bending energy of Bergou et al. 2006 ("A
 *     quadratic bending model for inextensible surfaces"), 1/2 x^T Q x with Q = sum over
 *     hinges of q q^T (a constant 4-vertex cotangent stencil q per hinge, the same for x,
 *     y and z), scaled so that at a flat rest state it equals the shared discrete-shells
 *     energy to second order (bending.c derives it; tests/test_bending.c checks it by
 *     finite differences). Q is constant, so it goes into the prefactored matrix,
 *     (M + h^2 (L + Q)) (x - y) = h^2 (J d - (L + Q) y + f_ext), and needs no local step
 *     (the Projective Dynamics form of bending, Bouaziz et al. 2014). Its pattern is that
 *     of the edges and the bend springs', so the factor is as large as with bend springs
 *     and the local step has one spring per edge only. It needs a flat rest state: a mesh
 *     bent at rest (a hinge's rest angle above 1e-6 rad: balloon.yaml, pbd_soft_box.yaml,
 *     the OBJ cloths of the acm scenes) asked for quadratic is refused with a message
 *     naming the hinge (Bergou's energy is minimal at the flat state, not at a curved rest
 *     shape); there the default is springs (the default depends on the scene: quadratic
 *     on a flat rest state, springs on a bent one; the run's parameters and model record
 *     which), so every bundled scene runs with fms's defaults.
 *   springs: a spring across each hinge between its opposite vertices (Liu et al.'s
 *     representation), with stiffness chosen so that spring and hinge store the same
 *     energy at a right-angle fold; its energy grows as theta^4 for small folds, so it
 *     is much softer than the shared model there. Kept for the paper's figures.
 * Why quadratic is the default (measured on the accuracy scene, hanging 12 x 12 in the xy
 * plane, 0.5 s, against the velocity-Verlet reference, README "Accuracy against a
 * reference"): at dt 1/960 s and 50 iterations fms lands at 6.92e-3 m with quadratic
 * bending (newton on the exact shells energy: 6.92e-3 m; newton on quadratic: 6.88e-3 m)
 * and at 7.51e-3 m with bend springs, whose error stops falling below 1/1920 s (newton on
 * springs: 5.28e-3, 4.56e-3, 4.64e-3 m at 1/1920, 1/3840, 1/7680 s) because the model
 * differs from the reference's; and its cost on the 81 x 81 curtain (bench fms_curtain) is
 * the same within the machine's noise (README "Benchmarks"): the matrix has the same
 * pattern, the local step has fewer springs. `springs: classic` (grids only) uses the
 * classic structural/shear/bend set instead (6n^2 - 10n + 2 springs for n x n; it takes
 * bending: springs). The model energy E (springs and bending) is solver_energy.
 * Gravity is f_ext = M g; lumped masses as in the world.
 *
 * Performance. The global step is one cb_chol_solve3_add (cholmod_util.h; it also writes x = y + (x - y) on its way out): CHOLMOD gives
 * the fill-reducing ordering and the numeric factor, the triangular solves are our own
 * over the factor in supernodes (CHOLMOD's supernodal factor read in place: dense
 * column blocks with one row list each, so one index per row of a supernode instead of
 * one per entry, serving both triangular solves; no copy of it, which would cost half
 * the prefactorization in page faults), each factor entry read once per solve for the
 * three coordinates. The solves are bound by their arithmetic's dependencies, not by
 * reading the factor (reading its values twice is about a fifth of a solve on the 81 x 81
 * curtain), so they put a column's rows in the vector lanes with x, y and z apart and
 * keep many independent sums in flight (cholmod_util.c, tri_solves; issue 35: global
 * stage ~0.8x of the interleaved (x, y, z, pad) solves it replaced). Tried and not
 * kept: CHOLMOD's other orderings (METIS, nested dissection: 8% fewer factor entries, no
 * faster, and 15-20 ms more analysis in the first step) and less or more supernode
 * relaxation (fewer explicit zeros but more, smaller supernodes: no faster), eight-wide
 * (AVX-512) rows in the forward pass (no faster), fused multiply-adds (no faster, and
 * the bits would depend on the CPU). `factor_precision: single` (an option, never the
 * default; the run's parameters and model, "... / factor single", say it): the factor is
 * CHOLMOD's in double as always, copied to float once per factorization, and the
 * triangular solves run in float with eight rows per vector (solvers/chol_single.c), the
 * right-hand side and x double at the interface: ~0.6x the solves' CPU time on the 81 x 81
 * curtain (125-130 against 210-225 us per pair); the positions stay within 4e-7 m of the
 * double run over the curtain's 2 s (tests/test_fms.c bounds it by 1e-5 m) and the
 * residual after 10 iterations differs by < 1e-4 relative (with colliders the set of
 * contact springs at an impact may differ, and the runs part by more: 2 mm after 0.5 s
 * on the 30 x 30 drape, README "Benchmarks"), but the iterations converge
 * only to the float solves' level (a relative gradient ~1e-7-1e-6 instead of ~1e-12 on a
 * small well-converging case), and the residual then takes A (x - y) from the matrix's
 * entries (the last solve does not balance b(x_k) exactly, so the shortcut below would
 * report float round-off; matrix_times_dx: setup stage 0.47 -> 0.42 ms of CPU per step
 * on the curtain against the full gradient pass it replaced, the same residual to
 * ~1e-10 relative, the positions bitwise).
 * FastMassSpring (sam007961), which refbench times against, is float throughout.
 * Measured for issue 35 and not kept (README "Benchmarks"): the step's vectors in the
 * factor's order (so the solves need no permutation; bitwise the same): the global
 * stage gained what the local pass lost, the springs being sorted by vertex (their order
 * of additions to a row is the bits) and reading scattered rows instead; METIS with
 * single precision: the float solves' instructions -3.6% (the padding to eight rows eats
 * most of its 8% fewer entries), no faster in CPU time, 19 ms more analysis.
 * The
 * local step and the right-hand side are one branch-free pass over the
 * springs sorted by their smaller end, stored as arrays (ends, their right-hand-side
 * rows, rest length, h^2 k); d is not stored (only for the springs to pins, in the last
 * iteration). The pass (solvers/springs_local.c) is bound by one sqrt and one division
 * per spring, which the compiler does not vectorise (indexed loads, and sqrt's errno
 * without -fno-math-errno), and by the additions to the rows: it does them four springs
 * at a time with AVX2 (two with SSE2 where AVX2 is missing; eight with AVX-512 measured
 * no faster), in the same IEEE operations per spring as the scalar loop, so the result
 * is bitwise that of one spring at a time (tests/test_springs.c), and it keeps the row a
 * run of springs adds to in registers. On the 81 x 81 curtain the local stage takes
 * ~0.45 ms of CPU per step (10 passes) against ~0.70 two springs at a time. Tried and
 * measured slower: a pass computing d for all springs followed by a gather of the
 * contributions per unknown (CSR of incident springs): it moves d through memory (the
 * working set no longer fits in L2), and blocks of springs with vectorised sqrt then a
 * separate scatter. The per-step setup has no pass for grad g(y): the first right-hand
 * side is -grad g(y) (below); the constant part c is one pass over the springs; the
 * final gradient is one more local pass, grad g(x) = A (x - y) - b(x) = b(x_k) - b(x)
 * with A (x - y) = b(x_k) the last global step (without contact springs or friction in
 * the last iteration; otherwise cb_springs_gradient's pass and the contact terms': issue
 * 35, setup stage of the 81 x 81 curtain 0.45 -> 0.30 ms of CPU, the residual the same to
 * ~1e-12 relative, the positions bitwise); E(x) in springs.c takes its square roots two
 * at a time.
 * Self contact reuses its candidate pairs while the cloth's relative motion stays
 * small (a common translation does not count), skips pairs whose distance lower bound
 * exceeds the thickness before the exact distance, and finds its candidates with a dense
 * grid of cells over the cloth's box, a row of cells one range of vertices stored with
 * their positions (step_contact.h: exactly the same pairs and results as the spatial hash
 * every step; the swinging curtain rebuilds every step, the grid halves that query: its
 * step moves the cloth 1.1 to 24 mm relative to itself, the cache needs 8 times that
 * below the 14.2 mm mean edge, which only the first step's build meets (the second moves
 * too far to reuse it; bench fms_curtain, 60 steps); it finds 12800 pairs every step,
 * one per triangle, as a square grid's triangle boxes each hold the quad's fourth
 * vertex, and none is within the thickness: the query and the distance bound are the
 * stage's whole cost there). So both run on vectors (issue 35): the grid's boxes, cells
 * and vertex tests eight triangles or vertices per AVX-512 vector a block of 64
 * triangles at a time (solvers/self_grid.c), the distance bound eight pairs per vector
 * for all of a pass's pairs at its start (solvers/step_far.c); the same pairs and bits
 * (the hashes of tests/test_determinism.c unchanged), the contact stage of the curtain
 * 0.79-0.85 -> 0.40-0.44 ms per step (README "Benchmarks"). Nothing is
 * allocated per step. Create orders the springs and the matrix
 * entries with counting sorts (O(springs + vertices)), so prefactorization is mostly
 * CHOLMOD's analysis and first numeric factorization.
 *
 * Reported: iterations, residual = |grad g(x)| / |grad g(y)| after the iterations
 * (before contact; the relative gradient newton stops on; grad g(y) is the first
 * right-hand side with its sign changed: at x = y it is h^2 (f_ext - L y + J d(y)) =
 * -grad g(y)), solver_energy = E(x) at the end of the step, external_impulse =
 * attachments (h times the spring forces k (d_i - (p_a - p_b)) on the free ends of
 * springs to pinned vertices, exact even before convergence since the global step
 * balances them, and h times the quadratic bending forces of hinges with a pinned
 * vertex on their free ones, -h (Q x)_free, exact likewise) + damping (-damping sum m v_n) + colliders. Stages: factor, local,
 * global, setup (predictor, c, residual, attachments, velocities, E(x)), contact.
 * With contact: constraint the residual includes P and F, and the colliders' impulse includes
 * that of the contact springs, (1/h) sum c m_i (p_i - x_i) with the p of the last local
 * step, and of the friction, (1/h) sum -grad F of the last local step (exact like the
 * attachments'; the springs hold a vertex just inside the offset, so it is in contact
 * for the end-of-step projection too). The
 * end-of-step collider projection stays as a safety net: nothing ends a step inside
 * the offset, and the contact probe measures what it still moves. external_work = those
 * impulses but damping, each times the velocity of what applies it: the pin's at t1, the
 * surface velocity of the collider nearest to the contact spring's vertex in the last
 * local step (friction: its lagged collider's), the projection's collider.
 *
 * What it does not do: no nonlinear bending (quadratic is linear in x, exact only for
 * isometric bending of a flat rest state; bend springs have no small-angle stiffness);
 * no continuous collision detection — a vertex that passes a triangle by
 * more than the thickness within a step is pushed back only if still within the
 * thickness; no edge-edge self contact (vertex-triangle pairs only: two sheets whose
 * edges cross without a vertex meeting a triangle pass through each other,
 * solvers/step_contact.h); a fixed iteration count, no convergence test (the paper's
 * choice); self contact is not in the solve; the contact-spring matrix is refactored, not updated
 * by a low-rank update (cholmod_updown: would need the LDL^T form of the factor that
 * cb_chol_solve3 does not read); a vertex is pulled toward one collider (the nearest);
 * the coarse correction is a common translation only: a cloth turning about a collider's
 * normal, or sliding over a curved collider in a motion that is no translation, is still
 * held back by the contact springs' lag (not measured); self friction is not in the solve.
 *
 * Parameters (solvers.fms): iterations (>= 1, default 10), damping (in [0,1], default
 * 0), springs (model | classic), bending (quadratic | springs, default quadratic on a
 * flat rest state, springs on a bent one; shells is refused: not quadratic), self_collision (bool, default true), self_friction
 * (>= 0, default 0.1), self_iterations (>= 1, default 2), contact_offset (>= 0, m;
 * default thickness/2: distance kept from colliders), factor (auto | simplicial |
 * supernodal: the CHOLMOD factorization kind), factor_precision (double | single, default
 * double: the arithmetic of the global step's triangular solves, below), self_cache (bool, default true: the
 * self-contact candidate cache, same results either way), contact (constraint |
 * projection), contact_stiffness (c > 0, default 1e2), friction_velocity (eps_v, m/s,
 * default 1e-3: static friction below this slip speed), threads (>= 0, default 1: CHOLMOD
 * and BLAS on the calling thread; N: N threads; 0: one per core). Everything but `iterations`, and the
 * frame of the step (unknowns, predictor, velocity update, contact), is shared with
 * newton in solvers/spring_solver.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/solver.h"
#include "core/vec3.h"
#include "solvers/spring_solver.h"
#include "solvers/springs_local.h"

/* fms's default bending (see the header comment) */
#define FMS_BENDING CB_BENDING_QUADRATIC

typedef struct fms_solver {
    int iterations;
    int precision;         /* cb_chol_precision of the global step's solves (`factor_precision`) */
    char model[160];       /* the model text with the precision when single (fms_model) */
    int width;             /* springs per vector of the local step (cb_springs_local_width) */
    cb_spring_solver ss;   /* springs, unknowns, system (blocks 1 x 1), y, dx, contact */
    double h_factored;     /* dt of the current factor and of kh (0: none) */
    /* The springs sorted by their smaller end (consecutive springs touch nearby
     * vertices), as arrays the passes over springs stream through. A pinned end's
     * unknown is nfree, a scratch row of the right-hand side, so the passes have no
     * branch. */
    int ns;
    int *ia, *ib;          /* [ns] ends a, b */
    int *ua, *ub;          /* [ns] their rows in the right-hand side */
    double *rest, *k;      /* [ns] rest length, stiffness */
    double *kh;            /* [ns] h^2 k for h = h_factored */
    double (*d0)[3];       /* [ns] direction of the rest shape (length r): d of a spring of zero length */
    int npin;
    int *pin;              /* [npin] springs with exactly one pinned end, increasing */
    double (*dpin)[3];     /* [npin] their d in the last local step */
    double (*c)[3];        /* [nfree + 1] constant part of the right-hand side, h^2 (f_ext - L y) */
    double (*b)[3];        /* [nfree + 1] right-hand side / solution, interleaved x, y, z */
    double (*blast)[3];    /* [nfree] the last iteration's right-hand side b(x_k), when rhs_residual */
    int rhs_residual;      /* the last iteration had no contact spring and no friction: grad g at
                              the result is blast - b(x) (fms_step) */
    /* contact: constraint — the contact springs in the current factor */
    double *wc;            /* [nfree] weight c m_i of unknown u's contact spring in the matrix (0: none) */
    int *cu;               /* [nfree] the unknowns with wc > 0 */
    int ncu;
    unsigned char *want;   /* [nfree] the contact springs wanted this step */
    double *dy;            /* [nfree] distance of y from the colliders minus the offset */
    double cimp[3];        /* sum of wc (p - y) over the contact springs in the last local step */
    double fimp[3];        /* sum of the friction forces -grad F in the last local step */
    double (*cvel)[3];     /* [nfree + 1] surface velocity of the nearest collider of each contact
                              spring's vertex in the last local step */
    double cpow, fpow;     /* cimp and fimp dotted with those velocities, vertex by vertex (W) */
} fms_solver;

static void fms_destroy(void *self)
{
    fms_solver *s = self;
    if (!s) return;
    cb_spring_solver_release(&s->ss);
    free(s->ia);
    free(s->ib);
    free(s->ua);
    free(s->ub);
    free(s->rest);
    free(s->k);
    free(s->kh);
    free(s->d0);
    free(s->pin);
    free(s->dpin);
    free(s->c);
    free(s->b);
    free(s->blast);
    free(s->wc);
    free(s->cu);
    free(s->cvel);
    free(s->want);
    free(s->dy);
    free(s);
}

/* The sort key of a spring: its smaller end (major) or its other end (minor). */
static inline int end_key(const int e[2], int major) { return (e[0] < e[1]) == major ? e[0] : e[1]; }

/* The order of the springs by (smaller end, other end), stable: two counting-sort
 * passes over the vertex indices, O(springs + vertices) (a comparison sort was a
 * quarter of create at 6561 vertices). ord and tmp: [ns]; cnt: [nv + 1]. */
static void spring_order(const cb_spring_set *sp, int nv, int *ord, int *tmp, int *cnt)
{
    for (int major = 0; major < 2; major++) { /* by the other end, then by the smaller end */
        int *out = major ? ord : tmp;
        memset(cnt, 0, (size_t)(nv + 1) * sizeof *cnt);
        for (int i = 0; i < sp->n; i++) cnt[end_key(sp->ij[i], major) + 1]++;
        for (int v = 0; v < nv; v++) cnt[v + 1] += cnt[v];
        for (int j = 0; j < sp->n; j++) {
            int i = major ? tmp[j] : j;
            out[cnt[end_key(sp->ij[i], major)]++] = i;
        }
    }
}

/* Sort the springs into the arrays and list the springs to pins. */
static int build_springs(fms_solver *s, const cb_world *w, cb_error *err)
{
    const cb_spring_solver *ss = &s->ss;
    int ns = s->ns, nf = ss->nfree;
    size_t n1 = (size_t)(ns > 0 ? ns : 1);
    int *ord = cb_calloc(n1, sizeof *ord), *tmp = cb_calloc(n1, sizeof *tmp);
    int *cnt = cb_calloc((size_t)w->nv + 1, sizeof *cnt);
    s->ia = cb_calloc(n1, sizeof *s->ia);
    s->ib = cb_calloc(n1, sizeof *s->ib);
    s->ua = cb_calloc(n1, sizeof *s->ua);
    s->ub = cb_calloc(n1, sizeof *s->ub);
    s->rest = cb_calloc(n1, sizeof *s->rest);
    s->k = cb_calloc(n1, sizeof *s->k);
    s->kh = cb_calloc(n1, sizeof *s->kh);
    s->d0 = cb_calloc(n1, sizeof *s->d0);
    int npin = 0;
    for (int i = 0; i < ns; i++) npin += (ss->unk[ss->sp.ij[i][0]] < 0) != (ss->unk[ss->sp.ij[i][1]] < 0);
    s->pin = cb_calloc((size_t)(npin > 0 ? npin : 1), sizeof *s->pin);
    s->dpin = cb_calloc((size_t)(npin > 0 ? npin : 1), sizeof *s->dpin);
    int ok = ord && tmp && cnt && s->ia && s->ib && s->ua && s->ub && s->rest && s->k && s->kh && s->d0 && s->pin &&
             s->dpin;
    if (ok) spring_order(&ss->sp, w->nv, ord, tmp, cnt);
    for (int i = 0; ok && i < ns; i++) {
        int o = ord[i], a = ss->sp.ij[o][0], b = ss->sp.ij[o][1];
        s->ia[i] = a;
        s->ib[i] = b;
        s->ua[i] = ss->unk[a] < 0 ? nf : ss->unk[a];
        s->ub[i] = ss->unk[b] < 0 ? nf : ss->unk[b];
        s->rest[i] = ss->sp.rest[o];
        s->k[i] = ss->sp.k[o];
        if ((s->ua[i] < nf) != (s->ub[i] < nf)) s->pin[s->npin++] = i;
        cb_v3_sub(s->d0[i], w->mesh->x[a], w->mesh->x[b]);
        cb_v3_normalize(s->d0[i]);
        cb_v3_scale(s->d0[i], s->d0[i], s->rest[i]);
    }
    free(ord);
    free(tmp);
    free(cnt);
    return ok ? CB_OK : CB_FAIL(err, CB_ERR_NOMEM, "fms: out of memory for %d springs", ns);
}

static int fms_create(const cb_world *w, const cb_params *p, void **self, cb_error *err)
{
    if (!w || !self) return CB_FAIL(err, CB_ERR_INPUT, "fms: NULL argument");
    *self = NULL;
    fms_solver *s = cb_calloc(1, sizeof *s);
    if (!s) return CB_FAIL(err, CB_ERR_NOMEM, "fms: out of memory");
    cb_params q;
    int rc = cb_params_begin(p, &q, err);
    if (!rc) rc = cb_params_int(&q, "iterations", 10, 1, 1000000, &s->iterations,
                                "local/global iterations per step", err);
    static const char *const precision_names[] = {"double", "single", NULL};
    if (!rc) rc = cb_params_choice(&q, "factor_precision", precision_names, CB_CHOL_DOUBLE, &s->precision,
                                   "triangular solves of the global step: double, or single (float copy of the factor)",
                                   err);
    if (!rc) rc = cb_spring_solver_configure(&s->ss, "fms", w, &q, FMS_BENDING, 0, err);
    rc = cb_params_end(p, &q, rc, err);
    if (rc) {
        if (rc != CB_ERR_NOMEM) cb_error_prefix(err, "fms: ");
        fms_destroy(s);
        return rc;
    }
    int nv = w->nv;
    s->ns = s->ss.sp.n;
    s->width = cb_springs_local_width();
    s->c = cb_calloc((size_t)nv + 1, sizeof *s->c);
    s->b = cb_calloc((size_t)nv + 1, sizeof *s->b);
    s->blast = cb_calloc((size_t)nv + 1, sizeof *s->blast);
    s->wc = cb_calloc((size_t)nv + 1, sizeof *s->wc);
    s->cu = cb_calloc((size_t)nv + 1, sizeof *s->cu);
    s->cvel = cb_calloc((size_t)nv + 1, sizeof *s->cvel);
    s->want = cb_calloc((size_t)nv + 1, 1);
    s->dy = cb_calloc((size_t)nv + 1, sizeof *s->dy);
    rc = s->c && s->b && s->blast && s->wc && s->cu && s->cvel && s->want && s->dy ? CB_OK : CB_FAIL(err, CB_ERR_NOMEM, "fms: out of memory for %d vertices", nv);
    if (!rc) rc = cb_spring_solver_setup(&s->ss, w, 1, "fms: the global matrix M + h^2 L", err);
    if (!rc) rc = build_springs(s, w, err);
    if (!rc && s->ss.chol) rc = cb_chol_set_precision(s->ss.chol, (cb_chol_precision)s->precision, err);
    if (rc) {
        fms_destroy(s);
        return rc;
    }
    snprintf(s->model, sizeof s->model, "%s%s", cb_spring_solver_model(&s->ss),
             s->precision == CB_CHOL_SINGLE ? " / factor single" : "");
    *self = s;
    return CB_OK;
}

/* Assemble M + h^2 (L + Q) over the free vertices and factor it (Q: the quadratic
 * bending term's constant Hessian, q q^T per hinge); h^2 k of every spring. */
static int factor(fms_solver *s, const cb_world *w, double h, cb_error *err)
{
    const cb_spring_solver *ss = &s->ss;
    const cb_bending *bd = &ss->bend;
    double *A = cb_chol_values(ss->chol), h2 = h * h;
    for (int u = 0; u < ss->nfree; u++) A[ss->diag_pos[u]] = w->mass[ss->vert[u]] + s->wc[u];
    for (int i = 0; i < ss->sp.n; i++) {
        double kh = h2 * ss->sp.k[i];
        int ua = ss->unk[ss->sp.ij[i][0]], ub = ss->unk[ss->sp.ij[i][1]];
        if (ua >= 0) A[ss->diag_pos[ua]] += kh;
        if (ub >= 0) A[ss->diag_pos[ub]] += kh;
        if (ss->spring_pos[i] >= 0) A[ss->spring_pos[i]] = 0.0;
    }
    for (int q = 0; q < 6 * bd->n; q++)
        if (ss->hinge_pos[q] >= 0) A[ss->hinge_pos[q]] = 0.0;
    for (int i = 0; i < ss->sp.n; i++)
        if (ss->spring_pos[i] >= 0) A[ss->spring_pos[i]] -= h2 * ss->sp.k[i];
    for (int i = 0; i < bd->n; i++) {
        const double *qi = bd->q[i];
        for (int a = 0, p = 0; a < 4; a++) {
            int ua = ss->unk[bd->h[i][a]];
            if (ua >= 0) A[ss->diag_pos[ua]] += h2 * qi[a] * qi[a];
            for (int b = a + 1; b < 4; b++, p++)
                if (ss->hinge_pos[6 * i + p] >= 0) A[ss->hinge_pos[6 * i + p]] += h2 * qi[a] * qi[b];
        }
    }
    s->h_factored = 0.0;
    for (int i = 0; i < s->ns; i++) s->kh[i] = h2 * s->k[i];
    int rc = cb_spring_solver_factor(&s->ss, w, h, err);
    if (!rc) s->h_factored = h;
    return rc;
}

/* Local step and right-hand side in one pass over the springs:
 * d_i = r_i (p_a - p_b)/|p_a - p_b| for every spring, and b = c + h^2 J d,
 * interleaved nfree x 3 (the system for x - y). d is not stored: only the springs to
 * pins keep theirs (want_pin_d, for the attachment impulse). */
static void local_step_rhs(fms_solver *s, const double (*x)[3], int want_pin_d)
{
    double (*b)[3] = s->b;
    memcpy(b, s->c, (size_t)s->ss.nfree * sizeof *b);
    cb_v3_zero(b[s->ss.nfree]);
    cb_springs_local_rhs(s->width, x, s->ns, s->ia, s->ib, s->ua, s->ub, s->rest, s->kh,
                         (const double (*)[3])s->d0, b);
    if (want_pin_d)
        for (int j = 0; j < s->npin; j++) {
            int q = s->pin[j];
            double e[3];
            cb_v3_sub(e, x[s->ia[q]], x[s->ib[q]]);
            double l2 = cb_v3_norm2(e);
            if (l2 > 0) cb_v3_scale(s->dpin[j], e, s->rest[q] / sqrt(l2));
            else cb_v3_copy(s->dpin[j], s->d0[q]);
        }
}

/* The contact springs of the local step: for each unknown u with a contact spring, its
 * projection p onto the allowed region (x itself when it is outside the offset, else x
 * moved out along the nearest collider's normal to the offset), and wc (p - y) added to
 * row u of the right-hand side of the system for x - y. */
static void local_contact(fms_solver *s, const cb_world *w, const double (*x)[3], double t1)
{
    cb_v3_zero(s->cimp);
    s->cpow = 0.0;
    const cb_spring_solver *ss = &s->ss;
    for (int j = 0; j < s->ncu; j++) {
        int u = s->cu[j], i = ss->vert[u], which;
        double n[3], r[3];
        /* cb_spring_contact_query's distance, with the collider's index */
        double d = cb_world_collider_distance(w, t1, x[i], &which, n, NULL) - ss->contact_offset;
        cb_v3_sub(r, x[i], ss->y[i]);
        if (d < 0) cb_v3_axpy(r, -d, n);
        cb_v3_axpy(s->b[u], s->wc[u], r);
        cb_v3_axpy(s->cimp, s->wc[u], r);
        if (which >= 0) cb_collider_velocity(&w->colliders[which], t1, x[i], s->cvel[u]);
        else cb_v3_zero(s->cvel[u]);
        s->cpow += s->wc[u] * cb_v3_dot(r, s->cvel[u]);
    }
}

/* The collider friction of the local step (cb_spring_friction, spring_solver.h): its
 * force -grad F(x) on the right-hand side (F is not in the matrix: the lagged friction
 * rides on the iteration like the attachments; its static stiffness is kept below the
 * contact springs' weight for that), and the sum of those forces into s->fimp. */
static void local_friction(fms_solver *s, const cb_world *w, const double (*x)[3], double h, double t1)
{
    const cb_spring_solver *ss = &s->ss;
    cb_v3_zero(s->fimp);
    s->fpow = 0.0;
    if (ss->nfric == 0) return;
    for (int u = 0; u < ss->nfree; u++) cb_v3_zero(ss->grad[ss->vert[u]]);
    cb_spring_friction(ss, w, h, t1, x, ss->grad, NULL, NULL);
    for (int u = 0; u < ss->nfree; u++) {
        int i = ss->vert[u];
        const double *gi = ss->grad[i];
        cb_v3_axpy(s->b[u], -1.0, gi);
        cb_v3_axpy(s->fimp, -1.0, gi);
        if (ss->fn[i] > 0) { /* the friction's collider, as cb_spring_friction takes its velocity */
            double uc[3];
            cb_collider_velocity(&w->colliders[ss->fcol[i]], t1, ss->x0[i], uc);
            s->fpow -= cb_v3_dot(gi, uc);
        }
    }
}

/* 3x3 symmetric positive definite solve K z = r (Cholesky); 0 when K is not SPD. */
static int solve3(const double K[3][3], const double r[3], double z[3])
{
    double l00 = K[0][0];
    if (!(l00 > 0)) return 0;
    l00 = sqrt(l00);
    double l10 = K[1][0] / l00, l20 = K[2][0] / l00, l11 = K[1][1] - l10 * l10;
    if (!(l11 > 0)) return 0;
    l11 = sqrt(l11);
    double l21 = (K[2][1] - l20 * l10) / l11, l22 = K[2][2] - l20 * l20 - l21 * l21;
    if (!(l22 > 0)) return 0;
    l22 = sqrt(l22);
    double q0 = r[0] / l00, q1 = (r[1] - l10 * q0) / l11, q2 = (r[2] - l20 * q0 - l21 * q1) / l22;
    z[2] = q2 / l22;
    z[1] = (q1 - l21 * z[2]) / l11;
    z[0] = (q0 - l10 * z[1] - l20 * z[2]) / l00;
    return 1;
}

/* The coarse correction between iterations (contact: constraint, with contact springs or
 * friction): the common translation z of the free vertices that minimises the quadratic
 * model of g at x, z = -K^{-1} sum_i grad_i g(x), K = sum_i m_i I + the Hessians of the
 * springs to pins, of the contact penalty and of the friction (the springs between free
 * vertices do not resist a translation). Why: the contact springs' weight c m_i is
 * isotropic in the matrix (it serves x, y and z), but their force is normal, so along a
 * collider the global step moves a vertex only 1/(1 + c) of the way each iteration (the
 * lag of a proximal term): a cloth resting on an incline kept ~10% of its tangential
 * motion in 10 iterations (issue 32: 0.21 m instead of 0.33 m, friction or not). The
 * slow mode is the cloth's sliding as a whole, which this Galerkin step on the
 * translations solves exactly for a flat collider; sums over the springs to pins only. */
static void coarse_translation(fms_solver *s, const cb_world *w, double (*x)[3], double h, double t1)
{
    const cb_spring_solver *ss = &s->ss;
    const int nf = ss->nfree;
    double h2 = h * h, G[3] = {0, 0, 0}, K[3][3] = {{0}};
    double mt = 0.0;
    for (int u = 0; u < nf; u++) {
        int i = ss->vert[u];
        double m = w->mass[i];
        mt += m;
        for (int k = 0; k < 3; k++) G[k] += m * (x[i][k] - ss->y[i][k] - h2 * w->gravity[k]);
    }
    for (int k = 0; k < 3; k++) K[k][k] = mt;
    for (int j = 0; j < s->npin; j++) {
        int q = s->pin[j];
        double e[3];
        cb_v3_sub(e, x[s->ia[q]], x[s->ib[q]]);
        double l = cb_v3_norm(e);
        if (!(l > 0)) continue;
        cb_v3_scale(e, e, 1.0 / l);
        double kh = h2 * s->k[q], tr = fmax(0.0, 1.0 - s->rest[q] / l);
        cb_v3_axpy(G, (s->ua[q] < nf ? 1.0 : -1.0) * kh * (l - s->rest[q]), e);
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++) K[r][c] += kh * ((1.0 - tr) * e[r] * e[c] + (r == c ? tr : 0.0));
    }
    for (int j = 0; j < s->ncu; j++) {
        int i = ss->vert[s->cu[j]];
        double n[3];
        double d = cb_spring_contact_query(ss, w, t1, x[i], n);
        if (!(d < 0)) continue;
        double kc = ss->contact_stiffness * w->mass[i];
        cb_v3_axpy(G, kc * d, n);
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++) K[r][c] += kc * n[r] * n[c];
    }
    if (ss->nfric > 0) {
        for (int u = 0; u < nf; u++) cb_v3_zero(ss->grad[ss->vert[u]]);
        cb_spring_friction(ss, w, h, t1, (const double (*)[3])x, ss->grad, NULL, K);
        for (int u = 0; u < nf; u++) cb_v3_add(G, G, ss->grad[ss->vert[u]]);
    }
    double z[3];
    if (!solve3((const double (*)[3])K, G, z)) return;
    for (int u = 0; u < nf; u++) cb_v3_axpy(x[ss->vert[u]], -1.0, z);
}

/* Contact springs wanted: the unknowns whose vertex is within its own motion of the step
 * (|y - x0|) of the offset at y or at x0 (at the end time t1), or closer than the offset
 * at x (x = NULL: not tested). Marks them in want; returns 1 if one of them has no
 * contact spring in the matrix. */
static int contact_wanted(const fms_solver *s, const cb_world *w, const double (*x)[3], double t1, unsigned char *want)
{
    const cb_spring_solver *ss = &s->ss;
    int missing = 0;
    /* without colliders no vertex is within the offset of one (cb_spring_contact_query:
     * infinitely far), so none is wanted: no queries */
    if (w->ncolliders == 0) return 0;
    for (int u = 0; u < ss->nfree; u++) {
        int i = ss->vert[u];
        int wnt;
        if (x) {
            /* the distance is 1-Lipschitz: x can be inside the offset only if it moved at
             * least d(y) from y (most vertices: no query) */
            double dd = s->dy[u];
            wnt = !(dd > 0 && cb_v3_dist2(x[i], ss->y[i]) < dd * dd) &&
                  cb_spring_contact_query(ss, w, t1, x[i], NULL) < 0;
        } else {
            double margin = cb_v3_dist(ss->y[i], ss->x0[i]);
            s->dy[u] = cb_spring_contact_query(ss, w, t1, ss->y[i], NULL);
            wnt = s->dy[u] < margin || cb_spring_contact_query(ss, w, t1, ss->x0[i], NULL) < margin;
        }
        want[u] = (unsigned char)(want[u] | wnt);
        missing |= wnt && !(s->wc[u] > 0);
    }
    return missing;
}

/* Set the contact springs to the wanted ones (weight c m_i) and refactor. */
static int contact_refactor(fms_solver *s, const cb_world *w, const unsigned char *want, double h, cb_error *err)
{
    cb_spring_solver *ss = &s->ss;
    s->ncu = 0;
    for (int u = 0; u < ss->nfree; u++) {
        s->wc[u] = want[u] ? ss->contact_stiffness * w->mass[ss->vert[u]] : 0.0;
        if (want[u]) s->cu[s->ncu++] = u;
    }
    return factor(s, w, h, err);
}

/* The local/global iterations of a step from x = y; the squared norm of the first
 * right-hand side (-grad g(y)) into *gnorm0_2. */
static int fms_iterate(fms_solver *s, cb_world *w, double h, double t1, int contact, cb_step_info *info,
                       cb_lap_timer *lap, int *iters, double *gnorm0_2, cb_error *err)
{
    cb_spring_solver *ss = &s->ss;
    const int nf = ss->nfree;
    double (*x)[3] = w->state.x;
    const double (*cx)[3] = (const double (*)[3])x;
    *gnorm0_2 = 0.0;
    for (int it = 0; it < s->iterations; it++) {
        if (it > 0 && cb_interrupt_requested()) /* thousands of iterations of a large cloth */
            return CB_FAIL(err, CB_ERR_INTERRUPTED, "fms: interrupted by a signal in iteration %d of %d", it,
                           s->iterations);
        cb_lap(lap, "setup");
        local_step_rhs(s, cx, it == s->iterations - 1);
        if (contact) {
            local_contact(s, w, cx, t1);
            local_friction(s, w, cx, h, t1);
        }
        /* at x = y the right-hand side is -grad g(y) = h^2 (f_ext - L y + J d(y)):
         * the gradient norm the residual is relative to */
        if (it == 0)
            for (int u = 0; u < nf; u++) *gnorm0_2 += cb_v3_norm2(s->b[u]);
        /* the last right-hand side, for the residual (fms_step), where g is the
         * springs', the bending's and the inertia's only and the solve exact to double
         * round-off (a single-precision solve leaves A (x - y) - b(x_k) at float
         * round-off: there fms_step multiplies A (x - y) out instead) */
        s->rhs_residual = it == s->iterations - 1 && s->ncu == 0 && ss->nfric == 0 &&
                          (!contact || w->ncolliders == 0);
        if (s->rhs_residual && s->precision == CB_CHOL_DOUBLE) memcpy(s->blast, s->b, (size_t)nf * sizeof *s->blast);
        cb_lap(lap, "local");
        /* x = y + (x - y); the solution x - y kept in b after the last iteration only
         * (the next local step writes b anew) */
        int rc = cb_chol_solve3_add(ss->chol, s->b, it == s->iterations - 1, ss->vert, (const double (*)[3])ss->y,
                                    x, err);
        if (rc) return rc;
        cb_lap(lap, "global");
        (*iters)++;
        /* a vertex that came closer than the offset without a contact spring: add
         * the springs and refactor (the iterations go on with the new matrix) */
        if (contact && it + 1 < s->iterations && contact_wanted(s, w, cx, t1, s->want)) {
            int rc2 = contact_refactor(s, w, s->want, h, err);
            if (rc2) return rc2;
            info->factorizations++;
        }
        /* not after the last: the impulses are those its global step balanced */
        if (contact && it + 1 < s->iterations && (s->ncu > 0 || ss->nfric > 0)) coarse_translation(s, w, x, h, t1);
    }
    return CB_OK;
}

/* With single-precision solves the last global step balances A (x - y) = b(x_k) to
 * float round-off only, so the residual's shortcut grad g(x) = b(x_k) - b(x) would
 * report that round-off: blast = A (x - y) instead, from the matrix's entries (x - y is
 * in b, kept by the last solve; one pass over the entries per coordinate, ~4x fewer
 * instructions than the gradient pass over springs and hinges it replaces on the 81 x 81
 * curtain; the same residual to ~1e-10 relative). */
static void matrix_times_dx(fms_solver *s)
{
    cb_spring_solver *ss = &s->ss;
    const int nf = ss->nfree;
    double *in = (double *)ss->grad, *out = in + nf; /* scratch: grad holds 3 nv >= 2 nf doubles */
    for (int k = 0; k < 3; k++) {
        for (int u = 0; u < nf; u++) in[u] = s->b[u][k];
        cb_chol_multiply(ss->chol, in, out);
        for (int u = 0; u < nf; u++) s->blast[u][k] = out[u];
    }
}

static int fms_step(void *self, cb_world *w, double dt, cb_step_info *info, cb_error *err)
{
    fms_solver *s = self; /* arguments checked by cb_solver_step */
    cb_spring_solver *ss = &s->ss;
    const int nf = ss->nfree;
    double h = dt, h2 = h * h, t1 = w->state.t + h;
    double (*x)[3] = w->state.x;
    const double (*cx)[3] = (const double (*)[3])x, (*cy)[3] = (const double (*)[3])ss->y;
    double imp[3] = {0, 0, 0}, work = 0.0;
    cb_lap_timer lap;
    cb_lap_start(&lap, info);
    /* inertial target, start positions x = y, and the constant right-hand side
     * c = h^2 (f_ext - L y) with the pinned vertices at their targets in y */
    cb_spring_solver_predict(ss, w, h, t1, imp);
    const int contact = ss->contact_mode == CB_SPRING_CONTACT_CONSTRAINT && nf > 0;
    if (contact) memset(s->want, 0, (size_t)nf);
    int missing = contact && contact_wanted(s, w, NULL, t1, s->want);
    if (ss->chol && (s->h_factored != h || missing)) {
        int rc = contact ? contact_refactor(s, w, s->want, h, err) : factor(s, w, h, err);
        if (rc) return rc;
        info->factorizations++;
    }
    cb_lap(&lap, "factor");
    double gnorm0 = 0.0;
    int iters = 0;
    if (nf > 0) {
        for (int u = 0; u < nf; u++)
            for (int k = 0; k < 3; k++) s->c[u][k] = h2 * w->mass[ss->vert[u]] * w->gravity[k];
        cb_v3_zero(s->c[nf]);
        for (int i = 0; i < s->ns; i++) {
            const double *ya = cy[s->ia[i]], *yb = cy[s->ib[i]];
            double kh = s->kh[i], *ra = s->c[s->ua[i]], *rb = s->c[s->ub[i]];
            for (int k = 0; k < 3; k++) {
                double f = kh * (yb[k] - ya[k]);
                ra[k] += f;
                rb[k] -= f;
            }
        }
        /* the quadratic bending term's part of c: -h^2 Q y */
        for (int i = 0; i < ss->bend.n; i++) {
            const int *hv = ss->bend.h[i];
            const double *qi = ss->bend.q[i];
            double v[3];
            for (int k = 0; k < 3; k++)
                v[k] = qi[0] * cy[hv[0]][k] + qi[1] * cy[hv[1]][k] + qi[2] * cy[hv[2]][k] + qi[3] * cy[hv[3]][k];
            for (int j = 0; j < 4; j++)
                if (ss->unk[hv[j]] >= 0) cb_v3_axpy(s->c[ss->unk[hv[j]]], -h2 * qi[j], v);
        }
        int rc = fms_iterate(s, w, h, t1, contact, info, &lap, &iters, &gnorm0, err);
        /* the first step in contact has no lagged normal forces for the friction
         * (cb_spring_friction): take them from this solve and solve again from y */
        if (!rc && contact && !ss->lagged) {
            cb_spring_friction_lag(ss, w, h, t1, cx);
            if (ss->nfric > 0) {
                for (int u = 0; u < nf; u++) cb_v3_copy(x[ss->vert[u]], ss->y[ss->vert[u]]);
                rc = fms_iterate(s, w, h, t1, contact, info, &lap, &iters, &gnorm0, err);
            }
        }
        if (rc) return rc;
        for (int u = 0; u < nf; u++) cb_v3_copy(ss->dx[ss->vert[u]], s->b[u]);
        gnorm0 = sqrt(gnorm0);
    }
    /* collider impulse of the contact springs, (1/h) sum wc (p - x): exact like the
     * attachments' (the last global step balances them with the p of its local step) */
    if (contact && iters > 0) {
        double ci[3];
        cb_v3_add(ci, s->cimp, s->fimp); /* and the friction's, on the same right-hand side */
        for (int j = 0; j < s->ncu; j++) cb_v3_axpy(ci, -s->wc[s->cu[j]], ss->dx[ss->vert[s->cu[j]]]);
        cb_v3_axpy(imp, 1.0 / h, ci);
        /* its work: each vertex's share times its collider's velocity */
        double pw = s->cpow + s->fpow;
        for (int j = 0; j < s->ncu; j++) {
            int u = s->cu[j];
            pw -= s->wc[u] * cb_v3_dot(ss->dx[ss->vert[u]], s->cvel[u]);
        }
        work += pw / h;
    }
    /* attachment impulse: h k (d_i - (p_a - p_b)) on the free end of springs to pins;
     * its work: that impulse times the pin's velocity at t1 */
    for (int j = 0; j < s->npin; j++) {
        int i = s->pin[j];
        double e[3], u[3];
        cb_v3_sub(e, s->dpin[j], x[s->ia[i]]);
        cb_v3_add(e, e, x[s->ib[i]]);
        double sg = s->ua[i] < nf ? 1.0 : -1.0;
        cb_v3_axpy(imp, sg * h * s->k[i], e);
        cb_world_pin_velocity(w, s->ua[i] < nf ? s->ib[i] : s->ia[i], t1, u);
        work += sg * h * s->k[i] * cb_v3_dot(e, u);
    }
    cb_bending_add_pin_impulse(&ss->bend, cx, ss->unk, h, imp, w, t1, &work);
    double residual = NAN;
    if (nf > 0 && s->rhs_residual) {
        /* grad g(x) = A (x - y) - b(x) for the matrix A and the right-hand side b(x) of
         * the local step at x; the last global step solved A (x - y) = b(x_k), so
         * grad g(x) = b(x_k) - b(x): one more local pass (no d to pins kept: the
         * attachments' are x_k's) instead of a gradient pass over springs and hinges
         * (single-precision solves: A (x - y) multiplied out, matrix_times_dx) */
        if (s->precision != CB_CHOL_DOUBLE) matrix_times_dx(s);
        local_step_rhs(s, cx, 0);
        double n2 = 0.0;
        for (int u = 0; u < nf; u++) {
            double g[3];
            cb_v3_sub(g, s->blast[u], s->b[u]);
            n2 += cb_v3_norm2(g);
        }
        residual = gnorm0 > 0 ? sqrt(n2) / gnorm0 : 0.0;
    } else if (nf > 0) {
        double gn = cb_spring_solver_gradient(ss, w, cx, h);
        if (contact) { /* the contact term of g too */
            cb_spring_contact_penalty(ss, w, t1, cx, ss->grad, NULL);
            cb_spring_friction(ss, w, h, t1, cx, ss->grad, NULL, NULL);
            double n2 = 0.0;
            for (int u = 0; u < nf; u++) n2 += cb_v3_norm2(ss->grad[ss->vert[u]]);
            gn = sqrt(n2);
        }
        residual = gnorm0 > 0 ? gn / gnorm0 : 0.0;
    }
    int rc = cb_spring_solver_finish(ss, w, h, t1, imp, work, info, &lap, err);
    if (rc) return rc;
    info->iterations = iters;
    info->residual = residual;
    return CB_OK;
}

static int fms_self_collision(const void *self)
{
    return cb_step_contact_self_active(((const fms_solver *)self)->ss.contact);
}

static const char *fms_model(const void *self) { return ((const fms_solver *)self)->model; }

const cb_solver_class cb_solver_fms = {
    .name = "fms",
    .summary = "fast mass-spring (Liu et al. 2013): local/global iterations on implicit Euler, one prefactored solve",
    .flags = CB_SOLVER_MOVING_COLLIDERS | CB_SOLVER_CONTACT_STAGE | CB_SOLVER_STAGE_TIMES | CB_SOLVER_FIXED_ITERATIONS |
             CB_SOLVER_THREAD_INDEPENDENT | CB_SOLVER_COLLIDER_FRICTION,
    .bytes_per_vertex = 3500,
    .create = fms_create,
    .step = fms_step,
    .destroy = fms_destroy,
    .self_collision = fms_self_collision,
    .model = fms_model,
};
