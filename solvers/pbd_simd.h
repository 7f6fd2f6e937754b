/* solvers/pbd_simd.h — the pbd/xpbd constraint projections four or eight constraints at
 * a time (AVX2 + FMA, or AVX-512, chosen at run time), for the colour-by-colour sweeps of
 * solvers/pbd.c (kernels: solvers/pbd_simd_eval.h, written once for both widths).
 *
 * Within a colour, constraints touch disjoint free vertices, so four (a batch) or eight
 * (two batches) of them can be projected side by side, one per lane, with the result of each lane exactly what the
 * lane would compute alone: which constraints share a batch, and which thread runs it,
 * does not change the result. The batches are made at create from the constraints of a
 * colour whose vertices are all free (a constraint with a pinned vertex also counts the
 * attachment's impulse: it stays on the scalar path); the last batch of a colour is
 * padded with empty lanes (c = -1: inverse masses 0) that are never written.
 *
 * What a lane computes is the scalar kernel's formula (solvers/pbd_constraints.h) with
 * two differences, both round-off:
 *   - the angle is cb_pbd_simd_atan2 below, a polynomial with its own range reduction
 *     (relative error within 2 ulp of the exact atan2 in tests/test_pbd.c), instead of
 *     libm's atan2 (dihedral) and acos (paper bending). The paper's angle acos(n1.n2/
 *     (|n1||n2|)) is evaluated as atan2(|det| |e|, n1.n2), the same angle
 *     (|n1 x n2| = |det| |e|), which unlike acos keeps its accuracy near flat;
 *   - sums of squares and dot products are fused (FMA), and |g_j|^2 is expanded as
 *     u^2 |n1|^2 + 2uv n1.n2 + v^2 |n2|^2.
 * The two widths give bitwise the same results (the same operations per lane). The
 * scalar path stays (parameter `simd: off`, and every CPU without AVX2); the tests run
 * both and bound their difference.
 * Points. The kernels read and write the solver's prediction as padded points (x, y, z
 * and the vertex's inverse mass w, written back unchanged; 32-byte aligned rows): a
 * point is one 32-byte load and one 32-byte store, transposed to and from the coordinate
 * vectors by shuffles, and the batches hold no masses.
 * Speed (pbd_bend: 60 x 60, 10 sweeps; thread CPU time of these functions called over
 * the solver's own batches, AMD EPYC family 26 with AVX-512 at ~4 GHz; the results
 * bitwise the same throughout). With xyz triples each point and lane took a 16-byte and
 * an 8-byte store, 64 stores per vector of 8 hinges; dropping the stores alone took the
 * bending sweeps from 0.83 to 0.56 ms. Padded points: 0.844 -> 0.669 ms; the masses
 * from the points: 0.655; the two vectors side by side really interleaved (see the
 * drivers in solvers/pbd_simd_eval.h): 0.59 ms, 5.7 ns per hinge (~185 cycles per vector
 * of 8). Stretch at 8 lanes, slower than 4 with triples, now faster: 0.240 -> 0.175 ms
 * (1.65 ns per constraint). What bounds them now (no hardware counters on that machine,
 * so by experiment): not memory (the time per hinge is the same from 20 x 20, all in L1,
 * to 90 x 90), not the divisions (two of the three replaced by products: -2%), not
 * stores aliasing later loads (stores sent to a scratch copy: the same time); the atan2
 * is 13% (replaced by a product: 0.655 -> 0.57 ms); the rest is the instruction stream,
 * ~750 instructions per vector of 8 hinges (a third of them moving points and indices,
 * a fifth spills of the two vectors' registers) at ~4 per cycle. Measured and not kept:
 * AVX-512 gathers for the loads (17% slower); 3 or 4 vectors side by side (spills:
 * slower than 2); a branch-free store when all lanes are stored (slower); batches holding
 * row offsets instead of indices (-1.7%); GCC's schedule-insns (-1.5%); stretch's pbd
 * loop compiled apart from xpbd's (-0.5%; the dihedral kernel's is: -2% on the step);
 * stretch vectors two or four side by side (no change, slower); tuning for znver3
 * (bending 11% slower).
 * Outside the kernels (the next round, the same bits): pbd_step's stretch residual
 * (cb_pbd_stretch and a division per constraint, ~3% of pbd_bend's step) now runs over
 * the batches (cb_pbd_simd_stretch_residual: 1.1% of the step), the constraints with a
 * pinned vertex as before; the velocity update divides x and y as one pair; without
 * damping the prediction follows each velocity in the same pass; a colour with no
 * constraint on the scalar path skips its call. pbd_bend's step 0.855 -> 0.829 ms
 * (thread CPU time of 20 steps, a driver over the solver, min of 15, three interleaved
 * runs, load 1.1-2.2): the residual 2.4 points, the rest ~0.5; the bench (one thread,
 * 12 interleaved pairs against the code before, load 1.0-2.3) min per step 0.87-0.93 ->
 * 0.83-0.88 ms, the pairs' median ratio 0.95 (min) and 0.95 (median); two threads min
 * 0.50-0.63 -> 0.48-0.49 ms (5 pairs, load 1.3). Callgrind (4 steps, 4 lanes: valgrind
 * has no AVX-512): 17.63 -> 17.36 M instructions per step. Where the rest is: the
 * kernels ~93% (bending 71, stretch 22), the prediction and velocity update ~2.5%, the
 * residual 1.1%; pbd_bend's 73 colours (2 mesh parts: 21 stretch, 52 bending) have 103
 * empty lanes of ~21,000 and 9 constraints on the scalar path, too few to matter.
 * Measured and not kept: the degenerate lanes' scalar calls after both vectors' stores
 * (fewer spills in the code, 1% slower); a colour's last three batches as one pair
 * side by side (1% slower); the prediction with restrict pointers, and share() asking
 * OpenMP only when not serial (no change). */
#ifndef CB_PBD_SIMD_H
#define CB_PBD_SIMD_H

/* Four stretch constraints: lane l joins v[0][l] and v[1][l] (free vertices: the
 * fourth coordinates of their points, their inverse masses, > 0), rest length rest[l];
 * c[l] is the constraint's index in the solver's arrays (xpbd: its compliance and
 * multiplier), -1 for an empty lane (its inverse masses count as 0). */
typedef struct cb_pbd_batch2 {
    int v[2][4];
    int c[4];
    double rest[4];
} cb_pbd_batch2;

/* Four hinges (p0, p1; p2, p3) = v[0..3][l], as cb_pbd_batch2. */
typedef struct cb_pbd_batch4 {
    int v[4][4];
    int c[4];
    double rest[4];
} cb_pbd_batch4;

/* The widest vectors this CPU runs the kernels with: 8 lanes (AVX-512F and DQ), 4 (AVX2
 * and FMA) or 0 (neither: nothing below may be called). Every kernel takes its width
 * (4 or 8, at most this); both widths give bitwise the same results. */
int cb_pbd_simd_width(void);

/* The kernels' atan2 over n values: out[i] = atan2(y[i], x[i]) (for the tests; returns -1
 * and writes nothing when the CPU lacks the width). */
int cb_pbd_simd_atan2(int width, int n, const double *y, const double *x, double *out);

/* The kernels project nb batches b[0..nb-1] of one colour (bending: two at a time at
 * either width, so a caller splitting a colour among threads passes pairs; the pairs
 * do not change the result, only the speed) on the points p: rows of (x, y, z, w), w
 * the vertex's inverse mass. */

/* Stretch, pbd (lambda == NULL: stiffness k) or xpbd (at = alpha[c] * ih2, multipliers
 * lambda[c]). */
void cb_pbd_simd_stretch(int width, double (*p)[4], const cb_pbd_batch2 *b, int nb, double k, const double *alpha,
                         double ih2, double *lambda);

/* pbd's stretch residual over the real lanes of b[0..nb) on the positions x (xyz
 * triples): max(r, |(|x0 - x1| - rest)| / rest) over the lanes with rest > 0, bitwise
 * what pbd_step's scalar loop gives (the same unfused operations; the maximum does not
 * depend on the order). */
double cb_pbd_simd_stretch_residual(int width, const double (*x)[3], const cb_pbd_batch2 *b, int nb, double r);

/* The shared model's signed dihedral angle, pbd (lambda == NULL: stiffness k, step cap)
 * or xpbd (alpha, ih2, lambda). A degenerate hinge (a zero-area wing or edge) is
 * projected by the scalar kernel. */
void cb_pbd_simd_bend_dihedral(int width, double (*p)[4], const cb_pbd_batch4 *b, int nb, double k, double cap,
                               const double *alpha, double ih2, double *lambda);

/* The paper's bending constraint acos(n1 . n2) - phi0 with pbd stiffness k and step cap
 * (the cases the scalar kernel skips are skipped here). */
void cb_pbd_simd_bend_paper(int width, double (*p)[4], const cb_pbd_batch4 *b, int nb, double k, double cap);

#endif
