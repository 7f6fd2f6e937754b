/* solvers/ipc.c — Incremental Potential Contact: implicit Euler on the shared cloth model
 * as the minimisation of an incremental potential with a log barrier on the distances
 * of the cloth to itself and to the colliders, kept intersection-free by a line search
 * capped by continuous collision detection.
 *
 * Papers: Li, Ferguson, Schneider, Langlois, Zorin, Panozzo, Jiang, Kaufman 2020,
 * "Incremental Potential Contact: Intersection- and Inversion-free, Large-Deformation
 * Dynamics" (sec. 3-4 and the supplement: barrier, adaptive stiffness, CCD-filtered line
 * search, the Newton-increment stopping test); Li, Kaufman, Jiang 2021, "Codimensional
 * Incremental Potential Contact" (sec. 4: the thickness offset for codimensional
 * surfaces such as cloth).
 *
 * Algorithm. Each step minimises
 *     g(x) = 1/2 (x - y)^T M (x - y) + h^2 E(x) - h^2 x^T f_ext + kappa sum_k b(s_k(x)) + F(x),
 * y = x_n + (1 - damping) h v_n, E the shared model's elastic energy (edge springs and the
 * `bending` term, as newton: solvers/spring_solver.h), b the barrier of
 * contact/barrier.h on s_k = d_k^2 - xi^2 for every pair k closer than xi + dhat:
 * point-triangle and edge-edge pairs of the cloth with itself that share no vertex
 * (xi = thickness; the edge-edge term times IPC's mollifier, `mollifier`), every
 * free vertex against every analytic collider at t + h (d the signed distance through
 * the collider, xi = thickness / 2: the project's contact distances, README "Contact
 * distances"), and with `sphere_edges` every edge and triangle against every sphere
 * collider (d their distance from the center minus the radius; a plane's distance from a
 * primitive is least at a vertex, so the vertices' pairs cover it), every edge against
 * every box's 12 edges and every capsule's segment and every triangle against every box's
 * 8 vertices and every capsule's two ends (the distance between a polygon or a segment
 * and a triangle is least at one of these features or at a vertex: with the vertices'
 * pairs they cover the whole surface; d the pair's distance less the capsule's radius r,
 * s = (d - r)^2 - xi^2, cb_offset_pair_barrier, the edge pairs times the mollifier; a
 * primitive is a candidate only when its vertices' least distance from the collider less
 * its longest edge is within xi + dhat; without them the five blades of the gauntlet's
 * knives cut 90715 cloth edges in the audit), and every static
 * triangle-mesh collider as triangles (xi = thickness / 2, unsigned distances): cloth
 * vertex against collider triangle, cloth edge against collider edge (times the
 * mollifier, eps_x from the cloth edge's rest length and the collider edge's length) and
 * collider vertex against cloth triangle, the same pair functions as the self pairs with
 * the collider's points fixed: only the cloth's vertices get gradient and the blocks of
 * the PSD-projected 12 x 12 Hessian (as a self pair's pinned vertices); the candidates
 * from a two-tree query of the cloth's BVH (margin (thickness + dhat)/2) against an
 * AABB tree of the collider (built once, margin dhat/2). sphere_edges is on
 * by default (without it the sphere cuts edges and triangles between their vertices: 989
 * edge crossings in the audit of the 20 x 20 drape over 0.5 s). It once converged only
 * linearly (~0.93 per iteration, 122 iterations a step on that drape): an edge's pair
 * couples the edge's two vertices, which a spring couples too, and the assembly zeroed
 * the pair's block after the spring had added to it (cb_spring_solver_assemble, fixed:
 * 8.9 iterations a step, 6.4 against 5.3 CPU-s without sphere_edges). The Newton iteration starts at x_n
 * (intersection-free), not at y:
 *   1. broad phase: the cloth's BVH (contact/bvh.h) refitted at x with margin
 *      (xi + dhat)/2 gives the candidate pairs (kept from the step's one query:
 *      candidate_cache, below); the active set is those within xi + dhat
 *      (a candidate whose lower bound cb_hull_distance_lb, contact/distance.h, is already
 *      beyond xi + dhat is skipped before its distance: self_lb);
 *   2. assembly: H = M + h^2 (springs, hinges: cb_spring_solver_assemble) + kappa sum_k
 *      P(hess b_k); the springs' Hessians exact (a compressed spring's transverse part
 *      negative: spring_exact), the hinges' exact too (cb_bending_hinge_hessian_exact,
 *      unprojected: hinge_exact; as newton's projected ones, reused while the hinge's
 *      shape moved by less than hinge_reuse of its edge: below, "Hinge reuse"); when that
 *      H is not positive definite (CHOLMOD's factorization fails) or its step is no
 *      descent direction, the iteration reassembles and refactors H with the springs'
 *      transverse part clamped at 0 and the hinges' Hessians projected per hinge
 *      (newton's, PSD). With the hinges projected in every iteration (before), Newton
 *      converged linearly wherever the sheet bent away from its rest angle (the increment
 *      falling by ~0.2 per iteration; quadratically with `bending: quadratic`): 7 iterations
 *      in steps 19-20 of the 60 x 60 drape 5 mm above the sphere, now 5 and 6; and their
 *      projection was most of the assembly (1.34 against 0.54 s of its 20 steps). Clamped
 *      springs in every iteration (before that), H was
 *      stiffer than g sideways wherever the draping sheet compressed its springs (h^2 k
 *      (1 - r/l) against the vertex mass: 0.025 x 1% against 6e-5 kg in the 16 x 16 drop
 *      of tests/test_determinism.c) and Newton converged linearly there, ~0.88 a step,
 *      150 iterations on its worst step (79 without sphere_edges; 70 with friction 0: not
 *      the friction); exact: 17. Each pair's 12 x 12 (a
 *      collider pair's 3 x 3) Hessian projected to positive semi-definite by its
 *      eigen-decomposition (cb_psd_project_ql); the sparsity pattern gains the pairs' vertex
 *      couplings when new ones appear (cb_spring_solver_system: CHOLMOD's analysis is
 *      redone then and reused while the pattern holds); it holds the mesh's edges from the
 *      start (seed_pattern), so the pairs against spheres, whose couplings are edges the
 *      springs hold anyway, never redo the analysis (they did 27 times in the first 40
 *      steps of the 60 x 60 drape);
 *   3. factor and solve H p = -grad g (CHOLMOD);
 *   4. stop when |p|_inf / h < tolerance (m/s) (IPC's test on the Newton increment;
 *      near the solution decided without the factorization when it can be: cg_test,
 *      below);
 *   5. CCD: the largest step alpha_max <= 1 along p for which no pair comes closer than
 *      xi + 0.1 (d_0 - xi) (d_0 its distance now): the swept BVH (x to x + p, margin
 *      (xi + dhat)/2, the gather's: with xi/2 a pair ending just above xi was no
 *      candidate, and a pin stepped from xi + dhat to xi in one iteration; its candidates
 *      kept from the step's one query too: candidate_cache) gives the
 *      candidates, conservative CCD (contact/ccd.h) the time of impact of each
 *      (a candidate farther apart than its vertices' relative motion can close, the CCD's
 *      own first test, is skipped before it: ccd_far; 116k candidates per CCD at 60 x 60,
 *      nearly all a cell's neighbours; and before its distance when ccd_far already holds
 *      for the lower bound of self_lb);
 *      against colliders, conservative advancement on the collider's distance of the
 *      vertex, edge or triangle, or of the box's or capsule's pair (Lipschitz in the
 *      step with its vertices' largest motion relative to the collider, |p - dtau v|; the
 *      pairs against spheres and a vertex against a plane exactly, round_toi; an edge
 *      or triangle whose distance from a
 *      sphere is bounded, without its closest point, by the distance of its first vertex
 *      less its extent, is skipped when that bound already says it cannot come close:
 *      sphere_phi_lb, also in the gather);
 *      against a mesh collider, the same CCD as the self pairs with the collider's side
 *      fixed, on the two-tree candidates of the cloth's swept tree;
 *   6. line search: backtracking from alpha_max (halving, Armijo c = 1e-4) on g, the
 *      barrier re-gathered at each trial point; a trial whose decrease g's values cannot
 *      show (below their round-off) is judged by its slope instead (below, "Tight
 *      tolerances"). A step that cannot decrease g within 40
 *      halvings ends the step with CB_ERR_INTERNAL and the reason (unless the step is
 *      already below round-off: then the iterate is the solution). When the increment
 *      shrank by less than half in the last iteration (linear convergence: on the self
 *      pairs the Newton step oscillates about the minimum, the distances' Hessians jump
 *      between their pieces), the accepted alpha is replaced by the minimiser of the
 *      parabola through g, the slope and g(alpha) when that is shorter, feasible and lower;
 *      when the whole step was taken (alpha = 1) and that parabola curves less than half
 *      the model does (-slope / 2), the step is extended towards its minimiser, each longer
 *      step capped by its own CCD (extend_step: the per-pair PSD projection makes H stiffer
 *      than g where the barrier curves down, and Newton crept at alpha = 1).
 *   7. a step that has not converged after max_iterations Newton iterations ends with
 *      CB_ERR_INTERNAL and the reason (the run's status `error`), never silently.
 * Tight tolerances (tight_tolerance; issue 34, 2026-11-27). Near the solution the Newton
 * step's decrease of g, -slope/2, falls below the round-off of g's value: each term is
 * computed from the coordinates, and a spring's length, a hinge's angle or a pair's
 * distance is off by eps of itself, so g is off by about eps sum_k |d term_k / d q_k| |q_k|
 * (objective_roundoff), however small g's changes. Measured (8 x 8 grids): on the hanging
 * cloth at t = 0.15 s the Newton step's decrease was 2e-22 while g's values along it
 * scattered by 8e-21 (the estimate 6.5e-20), on the twist_two_turns sheet 7.6e-24 against
 * 3e-23 (estimate 3.2e-22); the slope along the step, grad g(x + alpha p) . p, followed the
 * quadratic model slope (1 - alpha) to five digits, and Newton converged quadratically
 * (4.6e-4 -> 1.9e-9 m/s). An Armijo test on those values failed the full Newton step and
 * took steps of 1e-3 to 4e-12 of p, most changing g by exactly 0 (g + c alpha slope
 * rounding to g): the increment stayed at 1.7e-8 m/s for 500 iterations (the twist at
 * 1e-8 m/s, steps 13 at 8 x 8 and 21 at 30 x 30; at 1e-7 m/s step 27 at 8 x 8) or the
 * line search failed "in 40 halvings" (the hanging cloth at 1e-9). Not the springs' clamped
 * Hessian (the exact one was in use), nor the moving pins (the hanging cloth has none),
 * nor the convergence test. Now a trial whose first-order decrease alpha |slope| is below
 * g's round-off (looked at only for steps below ROUNDOFF_STEP of the cloth's size) is
 * judged by Hager and Zhang's approximate Armijo test (2005, "A new conjugate gradient
 * method with guaranteed descent and an efficient line search", the approximate Wolfe
 * conditions): g(x + alpha p) within its round-off of g(x) and the slope there at most
 * (1 - 2c) |slope| (by the trapezoid rule, the decrease of Armijo's test), the slope from
 * the gradient at the trial (trial_slope), whose own round-off is far below the slope's
 * size there; the parabola and extend_step (both on g's values) are skipped for such a
 * step. The CCD's cap and the feasibility of every trial hold as before. The floor: the
 * positions themselves are rounded to eps |x|, so Newton's increment cannot fall much
 * below eps max |x| / h (1.1e-13 m/s for the twist's 1 m coordinates at dt 2 ms): after
 * FLOOR_ITERS iterations running whose increment did not fall below 0.99 of the smallest
 * while the Newton step's decrease was below g's round-off, the step ends with
 * CB_ERR_INTERNAL, the increment reached and the smallest tolerance the step allows (twice
 * it); so does a line search whose every trial is below g's round-off and fails the slope
 * test. Reached now (first 50 steps unless said): the twist at 8 x 8 to 1e-13 m/s (1e-14:
 * stalls at 7.8e-14 m/s, "the smallest tolerance this step allows is about 1.6e-13 m/s",
 * after 10 iterations instead of 500), at its 30 x 30 to 1e-10 (1.3 and 1.6 CPU-s for 1e-8
 * and 1e-10); the hanging cloth at 8 x 8 to 1e-14 over 0.2 s; the drape at 12 x 12 to
 * 1e-10 over 0.6 s (before: an error at 1e-8); tangle/two_sheets_sphere (self contact,
 * friction) to 1e-11 over 0.5 s. At the default tolerance nothing changes: the steps whose
 * decrease is near g's round-off are far below 1e-4 m/s (tests/test_determinism.c's ipc
 * hash is the same; objective_roundoff ran 0 times on the 20 x 20 drape over 1 s, 19
 * times and the slope test never on projectile_20 at 16 x 16 over 0.1 s; the 2 s drape,
 * release builds, interleaved pairs against b316a27 at a load of 8-12: 81.4 and 84.9
 * against 82.9 and 83.1 CPU-s, 2026-11-27).
 * Translating colliders (IPC's Dirichlet step, the kinematic degrees of freedom being
 * the colliders' time tau): the iterations start with the colliders at their pose of
 * t_n (tau = t_n: x_n was feasible there) and move them to t + h with the cloth. While
 * tau < t + h an iteration prescribes the rest of the colliders' motion, dtau = t + h -
 * tau, and solves H p = -(grad g + dtau mix) for the cloth's response (mix = d grad
 * (kappa B) / d tau, the PSD pair Hessians times the collider's velocity: a collider
 * moved by dtau v acts as the vertex moved by -dtau v), then takes the largest step of
 * the joint motion (x + alpha p, tau + alpha dtau) that the CCD allows (the conservative
 * advancement's Lipschitz bound adds |v| dtau; a spin in place changes no distance), with
 * no Armijo test (the potential itself changes with tau). From tau = t + h on, the
 * iterations are the plain ones above and the step converges only there, so the
 * solution is the minimiser of the potential with the colliders at t + h. The time lands
 * on t + h exactly (cb_ipc_time_after, solvers/ipc.h): within 4 ulps of it, or when the
 * advance rounds to nothing within 1024 ulps, tau is set to t + h (before, tau + alpha
 * dtau with a one-ulp dtau and alpha < 1/2 stayed at tau: projectile_50 at 16 x 16 ended
 * `error` after 500 iterations 3.47e-18 s short of t + h). A cloth with no
 * room to get out of a collider's way (squeezed between two) ends the step with the
 * reason.
 * Moving pins (a pin with a scripted velocity or rotation: IPC's Dirichlet nodes, Li et
 * al. 2020 sec. 4 and the supplement) take the same path: they start the iterations at
 * their positions of t_n and travel with tau along the straight segment to their targets
 * at t + h (the chord of a rotating pin's arc), reached exactly when tau does. While tau <
 * t + h an iteration prescribes the rest of their motion q = x_target - x_pin, its share
 * of the Newton direction H_ff p = -(grad g + H_fp q) (mix: the springs', hinges' and
 * pairs' Hessian blocks between free vertices and the pins, pin_mix), and the CCD follows
 * the pins along q with the cloth (self pairs, mesh colliders, and the analytic colliders
 * when the pin starts outside their offset). Before, the pins were put at their targets
 * before the iterations, outside the CCD: the funnel's pin pulled into the other sheet.
 * When the CCD lets the prescribed motion advance by less than 1e-9 of its rest, or
 * stops it with a pair of a moving pin or a collider less than 1e-9 of its offset from
 * it, in three iterations running (a pin or a collider driven through, or exactly onto,
 * what cannot make room: the gap of the pair in the way shrinks tenfold each iteration),
 * the step ends with CB_ERR_INTERNAL naming the pin (or the colliders) and that pair.
 * Adaptive stiffness (IPC supplement, our reading): kappa_min = 1e11 m_avg / (4 s0 b''(s0)),
 * s0 = (1e-8 l)^2 (l the cloth's bounding-box diagonal at the start; s0 = shat/2 when that
 * is above shat), kappa_max = 100 kappa_min. At the start of every step with contact,
 * kappa = the gradient balance -grad E . grad B / |grad B|^2 clamped to [kappa_min,
 * kappa_max] (E: g without the barrier); within the step kappa doubles (up to kappa_max)
 * after an iteration whose smallest s fell further while below (1e-9 l)^2. `kappa` > 0
 * fixes it instead.
 * F is IPC's lagged smoothed Coulomb friction against the colliders (sec. 5), the term
 * newton minimises too (cb_spring_friction, solvers/spring_solver.h: mu h^2 lambda_i
 * f0(|u_i|), u_i the tangential slip of the step, f0 smoothed below eps_v h,
 * `friction_velocity`), with lambda_i the barrier's normal force on vertex i at the end of
 * the last step, kappa |b'(s) 2 phi| / h^2, from the collider pushing it hardest (one
 * collider per vertex); the first step of a run is solved twice, the second time with the
 * forces of the first (as newton). Its Hessian blocks (PSD) go into H, its gradient into
 * grad g. F also holds IPC's friction of the self pairs (mu = `self_friction`), of the
 * mesh collider pairs and of the box and capsule pairs (edges against a box's edges or a
 * capsule's segment, triangles against a box's vertices or a capsule's ends; mu = the
 * collider's `friction`), solvers/ipc_friction.h: for each such pair active at the end of
 * the last step (the start of this one; the first step's second solve: the first's
 * solution), its closest points' barycentric weights w_a, their unit normal n and the
 * barrier's normal force kappa |b'(s) 2 phi| / h^2 (phi the distance less a capsule's
 * radius; times the mollifier of an edge-edge pair) are lagged; its term is
 * mu h^2 lambda f0(|u|) of the closest points' tangential slip
 * u = (I - n n^T) sum_a w_a (x_a - x_n,a) (pinned vertices take part with their own
 * motion, a static mesh's points with none, a box's or capsule's with h times its surface
 * velocity at the cloth's lagged closest point, as a vertex's slip), its gradient on the
 * free vertices and its PSD Hessian blocks w_a w_b M in H (the system's pattern keeps a
 * lagged pair's couplings while its barrier pair is inactive). A scripted pin's share of
 * a pair's friction impulse is external work (its pin velocity), and so is a box's or
 * capsule's share (its surface velocity). Before the box and capsule pairs had friction, a
 * cloth resting on a box's edge or a capsule slid freely there: tests/test_ipc_friction.c's
 * tent over a ridge slid at g sin 30 whatever mu. With self_friction 0
 * the results are bitwise those without it. Its cost (2026-11-26,
 * data/scenes/tangle/two_sheets_sphere.yaml, --audit, debugoptimized build, load ~23): 926 Newton
 * iterations over the 250 steps against 801 with self_friction 0, 1.96 against 1.56 CPU-s;
 * the gauntlet's stack3 with 10 x 10 sheets over 0.5 s: 1125 against 824 iterations (20 at
 * most against 11), 12.0 against 8.1 CPU-s; no crossing either way (the static friction's
 * stiffness, 2 mu Lambda / (eps_v h) per pair, is what Newton works against).
 * A vertex whose full Newton step carries its slip through zero (beyond the
 * static zone, the exact Hessian has no curvature along the slip: the step overshoots,
 * and back the next iteration) takes in the next iteration the Hessian of a quadratic
 * above its friction term, mu Lambda f1(y)/y P, and for the rest of the step after a
 * second reversal (friction_reversals; cb_spring_solver.fric_bound).
 * The velocity is v = (x - x_n)/h ((1 - damping) v_n + (x - y)/h); no contact stage after the
 * solve (the barrier is the contact). The free velocities are then shifted by
 * -sum r / (h M_free), r = grad g at the solution (momentum_balance): the momentum the
 * cloth received then equals the impulses reported at any tolerance, so the colliders'
 * work (their impulse times their velocity) is exact; the shift is below the tolerance.
 *
 * Mapping from the shared model: springs k_stretch per edge, bending shells (default) or
 * fms's terms (`bending`), masses lumped, gravity; `thickness` is the self distance xi
 * and twice the collider distance; a collider's `friction` is F's mu against it (its
 * restitution is ignored), `self_friction` (fms's and newton's key and default) the cloth's
 * with itself. solver_energy = E(x); contact_energy = kappa sum b / h^2 at the end of the step
 * (g is h^2 times an energy: the barrier's potential in J, whose force kappa b' / h^2 the
 * friction's lagged normal force is; it read kappa sum b, h^2 times too small, until
 * issue 34's fix of the t = 0 row) and at the initial state with the kappa the first step
 * starts with (initial_contact_energy, core/solver.h);
 * contacts = the active pairs; min_separation = the smallest distance of the active self
 * pairs (NaN when none is within xi + dhat); external_impulse = the attachments' (springs and hinges
 * from pinned vertices), the damping's and the barrier's on the free vertices,
 * -(1/h) sum_free grad (kappa B + F) (the self part of B sums to zero but for pinned
 * vertices).
 * Stages: broad_phase, ccd (contact), assembly, factor, solve, line_search, finish.
 *
 * Its path (set_path_knots, core/solver.h): a step does not move the cloth along the chord
 * from x_n to x_{n+1} but through its accepted Newton iterates, each reached from the one
 * before on the straight segment the CCD certified (step 5); those iterates are the path
 * knots the continuous audit follows (path_record, path_emit: every free vertex at each
 * iterate, in order; the colliders' time where they moved with the cloth). The chords are
 * not ipc's path: on data/scenes/gauntlet/projectile_20.yaml (40 x 40, the free 20 m/s
 * ball) the audit of the chords counted 24 self crossings in two steps (t = 40 and 45
 * ms), the audit of the iterates none. The audit then checks each segment with its own
 * CCD (distance 0), so a segment that crosses is still counted; tests/test_ipc.c also
 * holds every iterate it is given to the thickness (a knot that was not an iterate would
 * not be). Pinned vertices report no knots (they move to their target at the step's
 * start, which the audit follows on their chord).
 *
 * Cost (2026-11-26, data/scenes/drape_sphere.yaml at 20 x 20, 2 s at dt 5 ms, --audit,
 * one core of a loaded shared 2-core machine): 17.3 CPU-s, 43 ms per step, 5.9 Newton
 * iterations (6.9 factorizations) per step, 61 at most, no self or vertex crossing in the
 * audit (the edges and triangles cut by the sphere between vertices: sphere_edges).
 * Assembly is 45% of the stages' time, most of it the per-hinge PSD projection of the
 * shells bending (cb_bending_hinge_hessian, an 8 x 8 problem, solvers/bending.c; redone
 * every iteration: newton reuses its factor, ipc refactors each iteration as the
 * barrier's Hessian changes), CCD 23%, factor 17%, line search 11%. Before the hinge
 * projection's reduction: 55.7 CPU-s, 139 ms per step, assembly 82%. At 60 x 60 with the
 * cloth starting 5 mm above the sphere, steps 2-40 (in contact from about step 7, then 8-14
 * iterations per step): 627 CPU-ms per step (1936 before). With the springs' exact Hessian
 * and the assembly keeping their blocks under the contact pairs' (both later the same day):
 * 4.9 Newton iterations per step in contact (9.9 before), 40 steps in 14.8 CPU-s against
 * 74.8 s at 7200348 (5.1x; load ~2.8): still above the issue's 150 ms per step.
 * Profiled there (perf): the hinges' PSD projections in every assembly ~30%, the
 * factorization ~20%, the self CCD's and the gather's candidates (116k per query at
 * 60 x 60, nearly all a cell's neighbours) ~20%, the pattern's rebuilds (each new edge in
 * contact with the sphere) ~9%. With the edges in the pattern from the start and the far
 * pairs skipping the CCD and the sphere's closest point (results bit for bit the same):
 * 0.87-0.89 of the CPU time of 9bebf9e in interleaved pairs (40 steps, load 20-24), about
 * 340 CPU-ms per step. Newton iterations per step in contact: 4.7 at 60 x 60 (7 at most),
 * 3.8 at 20 x 20; they converge linearly, the increment falling by about 0.15 per
 * iteration (with friction 0 and without sphere_edges too). IPC's start at the
 * CCD-clipped prediction x_n + alpha (y - x_n) (when it lowers g) was tried: 4.5
 * iterations per step, but 3% more time (its CCD, gather and objective cost more than the
 * iteration saved): not kept. Measured 2026-11-26 (README, the paragraph on known
 * limits; CPU time, load 21-32, steps 6-20 of the cloth 5 mm above the sphere): 236
 * CPU-ms per step at 60 x 60 at 0f157e1, 216 after the factorization without CHOLMOD's two transposes per
 * call (solvers/cholmod_util.c) and self_lb, the same results; 3.6 Newton iterations and
 * 5.6 factorizations per step; factor 44% of the stages, assembly 20%, CCD 15%.
 * The cost grows with the active set, and a flat sheet had its own pairs once its
 * smallest triangle altitude (the nearest primitives that share no vertex: an edge /
 * sqrt 2 on the grids) fell below xi + dhat: `clothbench bench --case hanging` (thickness
 * 2 mm, 1 m) has none at 128 x 128 (edge 7.9 mm) and had about 45 per vertex at 256 x 256
 * (edge 3.9 mm) with dhat 2 mm, each with a 12 x 12 Hessian and its PSD projection per
 * iteration: the step 2.05 s at 128 x 128, 122 s at 256 x 256. Those pairs are not
 * contact: they push a sheet at rest apart (forces the shared model has not) and IPC's
 * exclusion of pairs that share a vertex does not reach them. Excluding more pairs (the
 * rings of a vertex) would leave pairs without a barrier, i.e. the guarantee; so the
 * default dhat stays clear of them (default_dhat: half the gap between xi and the
 * smallest rest altitude when xi + xi reaches it; 0.38 mm at 256 x 256; a dhat given is
 * used as given). The gradient-only and value-only passes
 * (kappa's balance, the line search's objective, the step's impulse) carry no Hessian
 * (contact/barrier.h), and the pattern's check is a lookup per coupling in the sorted
 * pattern's rows (no sort while the pattern holds).
 * Hinge reuse (hinge_reuse, default 0.01; 0: every hinge evaluated at each assembly, the
 * results of before bit for bit): the assembly keeps each hinge's 12 x 12 Hessian (the
 * exact one since hinge_exact; the clamped pass's projected ones are not kept) with the
 * positions it was evaluated at and reuses it while each of the hinge's
 * vertex offsets from its first vertex moved by at most hinge_reuse of its edge
 * (newton's cache, cb_spring_solver_hinge_cache). Only the search direction changes:
 * the line search's Armijo test and objective are on the exact g (from tau = t + h on;
 * before, the steps are taken without it either way), and a matrix that is not positive
 * definite falls back to the clamped pass as without reuse. ipc's convergence test is on the increment H^-1 grad g, so
 * an increment below the tolerance from a matrix with blocks reused from before this
 * iteration is redone with every hinge evaluated at the iterate and only that one ends
 * the step; a step the line search rejects with reused blocks is redone the same way
 * before ipc gives up.
 * The convergence tests without their factorizations (cg_test): near the solution the
 * matrix at the new iterate differs little from the one factored in the iteration before
 * (and the redone test's only in the blocks of hinges that moved by less than
 * hinge_reuse), so conjugate gradients preconditioned by the factor at hand converge by
 * orders of magnitude per iteration (two or three solves and products against a
 * factorization); the test passes there only when the increment plus twice the error
 * estimate is below the tolerance, and every other case (near or above the tolerance,
 * slow CG, no descent, the last factor not the exact matrix of the iteration before)
 * factors the matrix as before. Tried at an iterate when the last increment was within
 * ten times the tolerance. The results are bit for bit the same (the same decisions, so
 * the same iterate ends the step); on the 60 x 60 drape in contact every step's tests
 * were decided there: 3 factorizations a step instead of 5 (the Newton iterations'),
 * 163 against 192 CPU-ms per step (steps 6-20; release builds, interleaved pairs against
 * 26b1227, load ~7); the redone test alone by CG: 178. Measured 2026-11-26 (release
 * build, load ~5 on the shared 2-core machine, drape_sphere.yaml with the cloth 5 mm
 * above the sphere; iterations per step; hinge_reuse 0.01 against 0): 20 x 20 to 0.5 s,
 * 4.52 against 4.52 iterations (6.52 against 5.52 factorizations), 2.53 against 3.31
 * CPU-s, the positions at the end 1.1e-6 m apart; 60 x 60 to 0.2 s, 4.40 against 4.43
 * iterations (6.40 against 5.43 factorizations), 10.6 against 12.7 CPU-s (the base
 * 6bf05c8: 12.8), 1.5e-6 m apart; a second pair, 10.2 against 13.0 (base 13.1) at 60 x
 * 60, 2.29 against 3.18 (base 3.10) at 20 x 20. Not everywhere fewer iterations:
 * projectile_50 at 16 x 16 (30 steps, ok either way) takes 50.5 per step, 153 at most,
 * against 47.7 and 91 with hinge_reuse 0, at about the same CPU time (13.8 against 13.5 s).
 * The self candidates' cache (candidate_cache, default true; false: the queries of
 * before, the same results bit for bit, tests/test_ipc.c test_candidate_cache_same):
 * the gather and the CCD of every Newton iteration each refitted the cloth's tree,
 * queried it and bounded every candidate's distance (cb_hull_distance_lb and the
 * traversal 24% of the profile of the 60 x 60 drape 5 mm above the sphere). The tree is
 * rebuilt at the step's start and its topology then holds, so one query over volumes that
 * hold every position of the step returns a superset of each later query's candidates in
 * the same order (the traversal's order is the topology's; wider volumes only add node
 * pairs). cand_build queries it over each vertex's box: its position at the step's start
 * and that plus its motion in the last step, widened by twice the last step's miss of that
 * prediction (at least a quarter of dhat + xi), and bounds each candidate's distance
 * anywhere in the boxes (its distance at the boxes' centres less twice the farthest a
 * vertex of the pair can be from its centre). A gather then takes from the pairs that
 * bound leaves within range, and a CCD from those whose bound is within 1/0.9 of twice
 * their vertices' largest motion of xi (what ccd_far would not skip), exactly the pairs
 * whose owner triangles' volumes at its positions overlap (tri_near: the tree's volumes
 * and test with the same arithmetic), and runs the code of before on them. A query outside
 * the boxes builds the cache again from its positions, twice as wide where it missed, at
 * most three times a step (then the queries of before for the rest of it). Measured
 * 2026-11-27 (release builds, interleaved pairs against b316a27, CPU time user + system,
 * load 8-12 on the shared 2-core machine): the 2 s drape (data/scenes/drape_sphere.yaml)
 * 86.96 and 86.66 -> 73.57 and 72.58 CPU-s (0.85 and 0.84; at a load of 5, 79.04 -> 67.20,
 * 0.85; every series the same to the last bit); steps 6-20 of the 60 x 60
 * drape 5 mm above the sphere 140.7 and 141.3 -> 102.7 and 103.3 CPU-ms per step; the
 * bench's stages (wall, load ~8.5) CCD 40.1 -> 3.0 and line search 32.8 -> 1.6 ms per
 * step, broad phase (now the step's query) 10.7 -> 11.8. On the first 40 steps of that
 * drape: 46 queries (a second one in a step when an iterate leaves the boxes), 192
 * gathers and 146 of 152 CCDs from the cache (a least widening of a tenth of the margin
 * instead of a half: 73 queries, 33 CCDs outside, 5.31 against 5.01 CPU-s).
 * Slow steps in dense contact (2026-11-26, Newton iterations per step, mean / worst, before
 * and after friction_reversals and extend_step; CPU-s on the loaded shared machine, load
 * 15-30, debugoptimized): projectile_20 at 16 x 16, 75 steps: 16.8 / 88 -> 13.2 / 35
 * (13.1 -> 8.6 CPU-s); at its 40 x 40, the first 46 steps: 36.5 / 210 -> 17.7 / 65 (58.6
 * CPU-s after, 1.3 per step); projectile_50 at 16 x 16: before, an error at step 18 (the
 * colliders' time stuck one ulp short of t + h for 500 iterations), after, 30 steps ok, 0
 * crossings, 42.9 / 90 (13.6 CPU-s); stack3 at 12 x 12 per sheet, 0.5 s: 3.46 / 15 ->
 * 3.43 / 13; twist_two_turns, 0.3 s: 3.0 / 4 both. projectile_50 at its 40 x 40, the
 * first 20 steps (release build, load 12-19): 77.3 / 226 -> 26.4 / 115 iterations, 79.7
 * -> 30.9 CPU-s, with the exact CCD against the sphere (round_toi: before, each iteration
 * of the ball's motion inside the step advanced ~2% of its rest, 47 of the 125 of step 8).
 * The gauntlet funnel (data/scenes/gauntlet/funnel.yaml, a closed 512-triangle mesh
 * collider) with both sheets at 11 x 11 (centre pins [60]) over 0.3 s, --audit: 0
 * crossings (self, vertex, edge, face), 38 CPU-ms per step, 4.6 Newton iterations per
 * step (9 at most). At its full size it ran to t = 0.752 s with 0 crossings (511 CPU-ms
 * per step), then a step started infeasible: a pinned centre vertex, pulled down, had
 * been moved into the other sheet (the pins' motion was not in the CCD). With the pins in
 * the step (above; 2026-11-26, --set audit=true, debugoptimized build, load 15-24 on the
 * shared 2-core machine) it ends ok at 1.25 s: 0 crossings, 0 intersecting pairs, 8.5
 * Newton iterations per step (38 at most), 354 CPU-s for 625 steps (0.57 per step). The
 * gauntlet's knives (five 4 mm blades, 30 x 30): 90715 edge crossings with the boxes'
 * vertex pairs alone, 0 with their edge and triangle pairs (0.17 CPU-s per step against
 * 0.11, 3.0 Newton iterations per step against 4.6).
 *
 * Bad input: a scene whose initial state has a self pair or a vertex against a collider
 * at or closer than its xi is refused at create with the pair and its distance
 * (CB_ERR_INPUT); moving mesh colliders (a velocity, a spin or keyframes) are refused
 * with the reason (their CCD and Dirichlet step are not implemented); a pin driven through
 * what cannot make room ends the run `error` naming the pin (above). The interrupt flag is
 * polled in every Newton iteration.
 *
 * What it does not do (yet): restitution, moving mesh colliders, friction on the edge and
 * triangle pairs against a sphere as pairs (their load goes to their vertices' collider
 * friction, above), the derivative of the lagged normal force or basis (IPC lags both:
 * friction is not a potential of x), the friction's coupling to a moving pin in the
 * Dirichlet step's prediction (the friction's blocks are in H, not in pin_mix: while
 * tau < t + h the Newton direction does not carry a friction pair's free side along with
 * its moving pin. Consistent nonetheless: every iterate's gradient has the friction at the
 * pins' current positions, and the step converges only at tau = t + h on the plain
 * iterations, so the solution is the same minimiser and only iterations after tau reached
 * t + h make up for the missing prediction; a box's or capsule's friction slip, h vc over
 * the whole step, does not depend on tau and needs no mix), cloth
 * vertices in no triangle against a mesh collider
 * (the candidates come from the cloth's triangles), edges and
 * triangles of the cloth against planes (not needed) and spheres with sphere_edges off
 * (see above: 1.2 mm into the sphere at 20 x 20 on the drape), a pin's arc inside a step
 * (its chord), a pin against a collider whose offset it starts inside, strain limiting
 * (Codimensional IPC's barrier on the triangles' singular values). Without it the strain
 * is the shared spring model's, and that model concentrates stretch at a grip's corner: on
 * the gauntlet's twist_two_turns ipc ends `diverged` by the strain rule at 2.748 s (1.00017
 * on the free boundary's first edge off a grip) with no crossing; 0.876 of it is there at
 * half a relative turn, before the barrier does anything, newton without contact has the same
 * strain to three digits until then (tests/test_ipc.c holds the two within the solvers'
 * tolerance on the twist at 8 x 8 to 0.6 s), that corner edge's strain grows with the mesh
 * (0.59 at 15 x 15, 1.00 at 60 x 60 at half a turn) while the boundary fibre's mean stays
 * 0.39, near the 0.38 the grips force on any method, and the contact adds 0.13-0.20 by 1.1
 * relative turns (20 x 20, thickness 1-4 mm). Not our code's doing: the measurements are
 * in the README's gauntlet paragraph on ipc (issue 34). The class claims
 * CB_SOLVER_COLLIDER_FRICTION: tests/test_friction.c holds it to Coulomb's incline and
 * stopping distance with the other methods. Those bundled scenes start their cloth 0.05 mm
 * outside the collider offset (a barrier cannot start at it) and set ipc's dhat to that
 * gap; with the default dhat (2 mm there) the start is deep in the barrier's range and its
 * push launches the cloth (the patch stopped after 1.7 mm instead of 25.5 mm at 0.5 m/s).
 *
 * Parameters (solvers.ipc): dhat (m, > 0, default the thickness or 1e-3 m without one;
 * half the gap between the thickness and the smallest rest altitude of a triangle when the
 * thickness + the thickness reaches that altitude: default_dhat),
 * kappa (>= 0, default 0: adaptive), tolerance (m/s, > 0, default 1e-4; down to the
 * positions' round-off, about eps max |x| / dt: "Tight tolerances" above; a tenth of
 * friction_velocity's default; at 1e-3 the first Newton step of a patch starting to slide,
 * shortened by the static friction's stiffness to below eps_v h, passed the test and the
 * patch never slid, on the incline tests/test_ipc.c ran then), max_iterations
 * (>= 1, default 500: the 16 x 16 drop of tests/test_determinism.c takes 5-18 a step;
 * 10-20, up to 150, with the springs' Hessian clamped in every iteration), hinge_reuse
 * (in [0, 1], default 0.01; 0: every hinge at each assembly: "Hinge reuse" above),
 * self_collision (bool, default true), mollifier (bool, default
 * true), sphere_edges (bool, default true), candidate_cache (bool, default true: above), friction_velocity (eps_v, m/s, default 1e-3), self_friction (>= 0,
 * default 0.1), damping, bending (shells |
 * quadratic | springs, default shells), factor, threads (as newton's).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact/barrier.h"
#include "contact/bvh.h"
#include "contact/ccd.h"
#include "contact/colliders.h"
#include "contact/distance.h"
#include "contact/trimesh_collider.h"
#include "core/model.h"
#include "core/solver.h"
#include "core/vec3.h"
#include "solvers/bending.h"
#include "solvers/ipc.h"
#include "solvers/ipc_friction.h"
#include "solvers/spring_solver.h"

/* The round-off floor of the convergence test (tight_tolerance in the header): a step
 * ends with the reason after FLOOR_ITERS iterations running whose increment did not fall
 * below 0.99 of the smallest before while the Newton step's decrease was below g's
 * round-off: at the floor the increments scatter about a level (7.8e-14 to 9.9e-14 m/s
 * on the twist at 8 x 8), where a linear convergence makes progress (0.91 per iteration
 * on tangle/two_sheets_sphere in contact at 1e-10 m/s). */
#define FLOOR_ITERS 10
/* g's round-off is looked at only for steps below ROUNDOFF_STEP times the cloth's size
 * (at least 1 m): a longer one changes g by far more than its round-off, which it
 * reaches near sqrt(eps) times the size (a strain's or a distance's share: the hanging
 * cloth's Newton step of 3e-11 m at 1e-9 m/s) */
#define ROUNDOFF_STEP 1e-7
/* The self candidates' cache (cand_build): the least widening of a vertex's box, in
 * gather margins, and the most queries of the cache in a step */
#ifndef CC_MIN_WIDEN
#define CC_MIN_WIDEN 0.5
#endif
#ifndef CC_MAX_BUILDS
#define CC_MAX_BUILDS 3
#endif

/* The default hinge_reuse (see the header comment) */
#define IPC_HINGE_REUSE 0.01

enum { PAIR_VT = 0, PAIR_EE = 1, PAIR_COL = 2, PAIR_ESPH = 3, PAIR_TSPH = 4, PAIR_MVT = 5, PAIR_MEE = 6, PAIR_MTV = 7,
       PAIR_CEE = 8, PAIR_CTV = 9 };

typedef struct ipc_pair {
    int kind;   /* PAIR_* */
    int a, b;   /* VT: vertex, triangle; EE: edge, edge; COL: vertex, collider; ESPH,
                 * TSPH: edge, triangle against a sphere collider; against the mesh
                 * collider c: MVT cloth vertex, collider triangle; MEE cloth edge,
                 * collider edge; MTV cloth triangle, collider vertex; against the box
                 * or capsule collider c: CEE cloth edge, its edge (a box's 12, a
                 * capsule's segment); CTV cloth triangle, its vertex (a box's 8, a
                 * capsule's two ends) */
    int c;      /* M*: the index of the mesh collider in ipc_solver's mc; C*: in w->colliders */
} ipc_pair;

/* A self candidate of the cache (cand_build): the pair, its vertices (pair_verts), the
 * triangles whose volumes made it a candidate of the tree's query (the owners: a vertex's
 * or edge's triangle in cb_bvh_vertex_owners and cb_bvh_edge_owners) and a lower bound on
 * its distance at the positions of the query. */
typedef struct ipc_cand {
    ipc_pair q;
    int v[4];
    int ta, tb;
    double lb;
} ipc_cand;

/* A static mesh collider as triangles: its world positions and a BVH over them (the
 * cloth's tree and this one, both AABB, queried by cb_bvh_pair_query). */
typedef struct ipc_mesh_col {
    int collider;          /* index in w->colliders */
    const cb_mesh *m;      /* the collider's rest mesh (static: its world positions are x) */
    double (*x)[3];
    cb_bvh *bvh;           /* margin xi_col + dhat - the cloth tree's gather margin */
} ipc_mesh_col;

typedef struct ipc_solver {
    double tolerance, dhat, kappa_fixed, kappa, kappa_min, kappa_max;
    double xi_self, xi_col, shat_self, shat_col, bbox;
    int max_iterations, self_collision, mollifier, sphere_edges;
    cb_spring_solver ss;   /* springs, bending, unknowns, the system (3 x 3 blocks), y, dx */
    cb_bvh *bvh;
    cb_bvh_result *res;
    ipc_mesh_col *mc;      /* [nmc] the static mesh colliders */
    int nmc;
    cb_bvh_result *mres;   /* the cloth-collider candidates of the tree query */
    ipc_pair *cand;        /* those as pairs (mesh_candidates) */
    long ncand, capcand;
    ipc_pair *pairs;       /* the active set */
    long npairs, cappairs;
    int (*vp)[2];          /* the vertex pairs of the system's pattern, sorted */
    long nvp, capvp;
    long *vp_row;          /* [nv + 1] vp[vp_row[i] .. vp_row[i + 1] - 1] are the pairs (i, .) */
    int (*want)[2];        /* scratch for the next pattern */
    long nwant, capwant;
    double *rest_l2;       /* [ne] squared rest length of each edge (the mollifier's eps_x) */
    double (*xt)[3], (*dxt)[3], (*p)[3];
    double (*gt)[3];       /* [nv] grad g at the trial point (trial_slope) */
    double (*hc)[3][3];    /* [nfree] the friction's Hessian blocks */
    double *cg;            /* [5 * 3 nfree] cg_test's vectors */
    double self_friction;  /* `self_friction`: mu of the cloth's pairs with itself */
    cb_ipc_fpair *fp;      /* the lagged friction of the self and mesh collider pairs */
    long nfp, capfp;
    unsigned char *fbound; /* [nv] the vertices whose friction takes its bound's Hessian in
                            * the next iteration (friction_reversals; ss.fric_bound) */
    unsigned char *frev;   /* [nv] their slip reversals in this step's accepted iterations (up to 2) */
    unsigned char *frev_now; /* [nv] the reversals of the current iteration, counted into frev
                            * when its step is accepted (a retried iteration counts once) */
    double (*mix)[3];      /* [nv] d2(kappa B)/dx dtau: how the barrier's gradient changes as
                            * the colliders advance in time (filled with the Hessian) */
    double tau;            /* the colliders' and pins' time in the step's Newton iterations */
    int moving;            /* some collider translates (its distances depend on time) */
    int *mpin;             /* [nmpin] the pinned vertices with a scripted motion */
    int nmpin;
    double (*pin_end)[3];  /* [nmpin] their targets at the step's end */
    double (*pu)[3];       /* [nv] d x / d tau of a moving pin in this iteration (0 elsewhere) */
    int *mp_spring;        /* [nmp_spring] the springs joining a moving pin and a free vertex */
    int nmp_spring;
    int *mp_hinge;         /* [nmp_hinge] the hinges with a moving pin and a free vertex */
    int nmp_hinge;
    ipc_pair lim;          /* the pair that limited the last CCD step (kind -1: none) */
    ipc_cand *cc;          /* the self candidates' cache (cand_build): VT ones first */
    long ncc, capcc;
    long *ccnear;          /* the indices of those with lb < cc_lmax, in order */
    long nccnear, capccnear;
    double (*cclo)[3], (*cchi)[3]; /* [nv] the vertices' boxes it holds */
    double (*ccref)[3];    /* [nv] their centres */
    double *ccr;           /* [nv] the farthest a point of the box is from its centre */
    double *ccpm;          /* [nv] the vertices' motion in a CCD */
    double (*ccdisp)[3];   /* [nv] the vertices' motion in the last step */
    double *ccw;           /* [nv] the boxes' widening (m): twice the last step's miss of
                            * x_n + ccdisp (at least CC_MIN_WIDEN gather margins) */
    int cc_valid;          /* built on the current tree */
    int cc_built;          /* built in this step */
    int cc_on;             /* the cache is used in this step */
    long cc_served;        /* gathers and CCDs the cache served since create (cb_ipc_cache_served) */
    int cand_cache;        /* `candidate_cache`: the cache at all (off: the results are the same) */
    double *vphi;          /* [nv] scratch: every vertex's distance from one box or capsule */
    int pin_phase;         /* the pins are still moving in this iteration (pu set) */
    double min_s;          /* smallest s of the last gather */
    double min_self;       /* smallest distance of a self pair in the last gather (m) */
    cb_path_knot_fn knot_fn; /* the audit's path knots (set_path_knots; NULL: none) */
    void *knot_ctx;
    double *path;          /* [npath][nfree][3] with knot_fn: the accepted iterates of the
                            * step's last solve (path_record) */
    double *path_tau;      /* [npath] the colliders' time at each */
    long npath, cappath, cappath_tau;
    char model[96];
} ipc_solver;

static void ipc_destroy(void *self)
{
    ipc_solver *s = self;
    if (!s) return;
    cb_spring_solver_release(&s->ss);
    cb_bvh_free(&s->bvh);
    cb_bvh_result_free(&s->res);
    free(s->cc);
    free(s->ccnear);
    free(s->ccref);
    free(s->cclo);
    free(s->cchi);
    free(s->ccr);
    free(s->ccpm);
    free(s->ccdisp);
    free(s->ccw);
    for (int k = 0; k < s->nmc; k++) {
        cb_bvh_free(&s->mc[k].bvh);
        free(s->mc[k].x);
    }
    free(s->mc);
    cb_bvh_result_free(&s->mres);
    free(s->cand);
    free(s->pairs);
    free(s->vp);
    free(s->want);
    free(s->rest_l2);
    free(s->vp_row);
    free(s->xt);
    free(s->dxt);
    free(s->gt);
    free(s->p);
    free(s->hc);
    free(s->cg);
    free(s->fp);
    free(s->mix);
    free(s->mpin);
    free(s->pin_end);
    free(s->pu);
    free(s->mp_spring);
    free(s->mp_hinge);
    free(s->vphi);
    free(s->fbound);
    free(s->frev);
    free(s->frev_now);
    free(s->path);
    free(s->path_tau);
    free(s);
}

static int grow(void **ptr, long *cap, long need, size_t size)
{
    if (need <= *cap) return CB_OK;
    long nc = *cap ? *cap : 64;
    while (nc < need) nc *= 2;
    void *q = realloc(*ptr, (size_t)nc * size);
    if (!q) return CB_ERR_NOMEM;
    *ptr = q;
    *cap = nc;
    return CB_OK;
}

/* 1 when vertex i is pinned with a scripted motion (a translation or a rotation). */
static int pin_moves(const cb_world *w, int i)
{
    return w->pinned && w->pinned[i] && (cb_v3_norm(w->pin_velocity[i]) > 0 || cb_v3_norm(w->pin_omega[i]) > 0);
}

/* The cloth's vertices of a pair (VT: vertex, then the triangle's; EE: both edges'; COL,
 * MVT: the vertex; ESPH, MEE, CEE: the edge's; TSPH, MTV, CTV: the triangle's) into v, which
 * holds at least that many (kin_pair passes the last three slots of four for CTV: a
 * pointer, not int[4], so that gcc -O3 does not take the declared size for the access);
 * returns their number. */
static int pair_verts(const cb_mesh *m, const ipc_pair *q, int *v)
{
    if (q->kind == PAIR_MVT || q->kind == PAIR_MEE || q->kind == PAIR_MTV) {
        int n = q->kind == PAIR_MVT ? 1 : q->kind == PAIR_MEE ? 2 : 3;
        for (int k = 0; k < n; k++) v[k] = q->kind == PAIR_MVT ? q->a : q->kind == PAIR_MEE ? m->e[q->a][k] : m->f[q->a][k];
        return n;
    }
    if (q->kind == PAIR_COL) {
        v[0] = q->a;
        return 1;
    }
    if (q->kind == PAIR_ESPH || q->kind == PAIR_TSPH || q->kind == PAIR_CEE || q->kind == PAIR_CTV) {
        int edge = q->kind == PAIR_ESPH || q->kind == PAIR_CEE, n = edge ? 2 : 3;
        for (int k = 0; k < n; k++) v[k] = edge ? m->e[q->a][k] : m->f[q->a][k];
        return n;
    }
    if (q->kind == PAIR_VT) {
        v[0] = q->a;
        for (int k = 0; k < 3; k++) v[1 + k] = m->f[q->b][k];
    } else {
        v[0] = m->e[q->a][0];
        v[1] = m->e[q->a][1];
        v[2] = m->e[q->b][0];
        v[3] = m->e[q->b][1];
    }
    return 4;
}

/* A lower bound on the distance of a self pair at x (cb_hull_distance_lb): VT the vertex
 * v[0] against the triangle v[1..3], EE the edges v[0..1] and v[2..3]. */
static double pair_d_lb(int ee, const int v[4], const double (*x)[3], double need)
{
    const double *pts[4] = {x[v[0]], x[v[1]], x[v[2]], x[v[3]]};
    return cb_hull_distance_lb(pts, ee ? 2 : 1, need);
}

/* The center of a sphere collider at time t. */
static void sphere_center(const cb_collider *c, double t, double ctr[3])
{
    for (int k = 0; k < 3; k++) ctr[k] = c->center[k] + c->velocity[k] * t;
}

/* Distance minus radius of the edge or triangle (n = 2, 3 vertices v) at x from sphere c;
 * with wts, the barycentric weights of its point closest to the center (n of them). */
static double sphere_phi(const cb_collider *c, double t, int n, const int *v, const double (*x)[3], double *wts)
{
    double ctr[3], tt = 0.0;
    sphere_center(c, t, ctr);
    double d2 = n == 2 ? cb_point_segment_distance2(ctr, x[v[0]], x[v[1]], wts ? &tt : NULL, NULL)
                       : cb_point_triangle_distance2(ctr, x[v[0]], x[v[1]], x[v[2]], wts, NULL);
    if (wts && n == 2) {
        wts[0] = 1.0 - tt;
        wts[1] = tt;
    }
    return sqrt(d2) - c->radius;
}

/* The box's vertex k (bit j of k: the sign along axes[j]) and the capsule's ends, at time
 * t, into y; their number (0 for other colliders). */
static int kin_points(const cb_collider *c, double t, double y[8][3])
{
    if (c->type == CB_COLLIDER_CAPSULE) {
        for (int d = 0; d < 3; d++) {
            y[0][d] = c->p0[d] + c->velocity[d] * t;
            y[1][d] = c->p1[d] + c->velocity[d] * t;
        }
        return 2;
    }
    if (c->type != CB_COLLIDER_BOX) return 0;
    for (int k = 0; k < 8; k++)
        for (int d = 0; d < 3; d++) {
            y[k][d] = c->center[d] + c->velocity[d] * t;
            for (int j = 0; j < 3; j++) y[k][d] += ((k >> j) & 1 ? 1.0 : -1.0) * c->half[j] * c->axes[j][d];
        }
    return 8;
}

/* The box's 12 edges (vertices differing in one bit) or the capsule's segment; a box has
 * 8 vertices, a capsule 2 ends. */
static const int box_edge[12][2] = {{0, 1}, {2, 3}, {4, 5}, {6, 7}, {0, 2}, {1, 3},
                                    {4, 6}, {5, 7}, {0, 4}, {1, 5}, {2, 6}, {3, 7}};

static int kin_nedges(const cb_collider *c)
{
    return c->type == CB_COLLIDER_BOX ? 12 : c->type == CB_COLLIDER_CAPSULE ? 1 : 0;
}

/* A box or capsule pair's four points in cb_offset_pair_barrier's order at cloth
 * positions x + tc p (p may be NULL), the collider at t (CEE: the cloth edge, the
 * collider's edge; CTV: the collider's vertex, the cloth triangle) into y (storage) and
 * pt, each slot's cloth vertex in v (-1 for the collider's), the mollifier's eps (CEE with
 * `mollifier`). Returns 1 for an edge-edge pair. */
static int kin_pair(const ipc_solver *s, const cb_world *w, const ipc_pair *q, const double (*x)[3],
                    const double (*p)[3], double tc, double t, double y[4][3], const double *pt[4], int v[4],
                    double *eps)
{
    const cb_collider *c = &w->colliders[q->c];
    double Y[8][3];
    kin_points(c, t, Y);
    int ee = q->kind == PAIR_CEE, nc = ee ? 2 : 3, off = ee ? 0 : 1; /* the cloth's slots */
    pair_verts(w->mesh, q, v + off);
    for (int k = 0; k < nc; k++) {
        for (int d = 0; d < 3; d++) y[off + k][d] = x[v[off + k]][d] + (p ? tc * p[v[off + k]][d] : 0.0);
        pt[off + k] = y[off + k];
    }
    *eps = 0.0;
    if (ee) {
        for (int k = 0; k < 2; k++) {
            cb_v3_copy(y[2 + k], Y[c->type == CB_COLLIDER_BOX ? box_edge[q->b][k] : k]);
            pt[2 + k] = y[2 + k];
            v[2 + k] = -1;
        }
        if (s->mollifier) *eps = 1e-3 * s->rest_l2[q->a] * cb_v3_dist2(y[2], y[3]);
    } else {
        cb_v3_copy(y[0], Y[q->b]);
        pt[0] = y[0];
        v[0] = -1;
    }
    return ee;
}

/* The distance of a box or capsule pair less the capsule's radius (see kin_pair). */
static double kin_phi(const ipc_solver *s, const cb_world *w, const ipc_pair *q, const double (*x)[3],
                      const double (*p)[3], double tc, double t)
{
    double y[4][3], eps;
    const double *pt[4];
    int v[4];
    int ee = kin_pair(s, w, q, x, p, tc, t, y, pt, v, &eps);
    double d2 = ee ? cb_edge_edge_distance2(pt[0], pt[1], pt[2], pt[3], NULL, NULL, NULL, NULL)
                   : cb_point_triangle_distance2(pt[0], pt[1], pt[2], pt[3], NULL, NULL);
    const cb_collider *c = &w->colliders[q->c];
    return sqrt(d2) - (c->type == CB_COLLIDER_CAPSULE ? c->radius : 0.0);
}

/* A lower bound of the distance from box or capsule c of cloth edge (n = 2) or
 * triangle (n = 3) v at x: the least of its vertices' distances (s->vphi) less its
 * longest edge (the distance is 1-Lipschitz; every point of the primitive is within its
 * longest edge of each vertex). */
static double kin_bound(const ipc_solver *s, int n, const int *v, const double (*x)[3])
{
    double lo = INFINITY, len = 0.0;
    for (int a = 0; a < n; a++) {
        lo = fmin(lo, s->vphi[v[a]]);
        len = fmax(len, cb_v3_dist(x[v[a]], x[v[(a + 1) % n]]));
    }
    return lo - len;
}

/* A visit of every cloth edge (CEE) and triangle (CTV) against every box and capsule:
 * for each such collider c, s->vphi its vertices' distances at (x, t), then fn per
 * primitive with q = {kind, primitive, -, c}, its nv vertices v and nfeat, the number of
 * the collider's features it pairs with (q->b from 0 to nfeat - 1, fn's to run). Stops at
 * fn's first non-zero return, which it returns. */
typedef int (*kin_fn)(ipc_solver *s, const cb_world *w, ipc_pair *q, int nv, const int *v, int nfeat, void *ctx);

static int kin_visit(ipc_solver *s, const cb_world *w, const double (*x)[3], double t, kin_fn fn, void *ctx)
{
    const cb_mesh *m = w->mesh;
    for (int c = 0; c < w->ncolliders; c++) {
        const cb_collider *col = &w->colliders[c];
        int ne = kin_nedges(col);
        if (!ne) continue;
        for (int i = 0; i < w->nv; i++) s->vphi[i] = cb_collider_query(col, t, x[i], NULL, NULL);
        for (int kind = PAIR_CEE; kind <= PAIR_CTV; kind++)
            for (int e = 0; e < (kind == PAIR_CEE ? m->ne : m->nf); e++) {
                ipc_pair q = {kind, e, 0, c};
                int v[4], nv = pair_verts(m, &q, v);
                int rc = fn(s, w, &q, nv, v, kind == PAIR_CEE ? ne : ne > 1 ? 8 : 2, ctx);
                if (rc) return rc;
            }
    }
    return 0;
}

/* A lower bound of sphere_phi (with 1e-9 (|x_0 - center| + radius) to spare for its
 * round-off): every point of the primitive is within R = max |x_k - x_0| of its first
 * vertex x_0, so its distance from the center is at least |x_0 - center| - R. Lets the
 * far primitives skip the closest-point computation (the answer unchanged). */
static double sphere_phi_lb(const cb_collider *c, double t, int n, const int *v, const double (*x)[3])
{
    double ctr[3], d[3], R2 = 0.0;
    sphere_center(c, t, ctr);
    for (int k = 1; k < n; k++) {
        cb_v3_sub(d, x[v[k]], x[v[0]]);
        double r2 = cb_v3_norm2(d);
        R2 = r2 > R2 ? r2 : R2;
    }
    cb_v3_sub(d, x[v[0]], ctr);
    double dc = cb_v3_norm(d);
    return dc - sqrt(R2) - c->radius - 1e-9 * (dc + c->radius);
}

static double pair_eps(const ipc_solver *s, const ipc_pair *q)
{
    return s->mollifier && q->kind == PAIR_EE ? 1e-3 * s->rest_l2[q->a] * s->rest_l2[q->b] : 0.0;
}

/* A mesh collider pair's four points in cb_pair_barrier's order (MVT: the cloth vertex,
 * the collider triangle; MEE: the cloth edge, the collider edge; MTV: the collider
 * vertex, the cloth triangle) at cloth positions x, each slot's cloth vertex in v (-1 for
 * the collider's fixed points), its mollifier's eps (MEE with `mollifier`; 0 otherwise).
 * Returns 1 for an edge-edge pair. */
static int mesh_pair(const ipc_solver *s, const cb_mesh *m, const ipc_pair *q, const double (*x)[3],
                     const double *pt[4], int v[4], double *eps)
{
    const ipc_mesh_col *mc = &s->mc[q->c];
    const double (*xc)[3] = (const double (*)[3])mc->x;
    *eps = 0.0;
    if (q->kind == PAIR_MVT) {
        v[0] = q->a;
        pt[0] = x[q->a];
        for (int k = 0; k < 3; k++) {
            v[1 + k] = -1;
            pt[1 + k] = xc[mc->m->f[q->b][k]];
        }
        return 0;
    }
    if (q->kind == PAIR_MTV) {
        v[0] = -1;
        pt[0] = xc[q->b];
        for (int k = 0; k < 3; k++) {
            v[1 + k] = m->f[q->a][k];
            pt[1 + k] = x[v[1 + k]];
        }
        return 0;
    }
    for (int k = 0; k < 2; k++) {
        v[k] = m->e[q->a][k];
        pt[k] = x[v[k]];
        v[2 + k] = -1;
        pt[2 + k] = xc[mc->m->e[q->b][k]];
    }
    if (s->mollifier) {
        double d[3];
        cb_v3_sub(d, pt[3], pt[2]);
        *eps = 1e-3 * s->rest_l2[q->a] * cb_v3_norm2(d);
    }
    return 1;
}

/* Squared distance of a mesh collider pair at x. */
static double mesh_pair_d2(const ipc_solver *s, const cb_mesh *m, const ipc_pair *q, const double (*x)[3])
{
    const double *pt[4];
    int v[4];
    double eps;
    return mesh_pair(s, m, q, x, pt, v, &eps) ? cb_edge_edge_distance2(pt[0], pt[1], pt[2], pt[3], NULL, NULL, NULL, NULL)
                                              : cb_point_triangle_distance2(pt[0], pt[1], pt[2], pt[3], NULL, NULL);
}

/* Squared distance of a self pair at x (from contact/distance.h). */
static double pair_d2(const cb_mesh *m, const ipc_pair *q, const double (*x)[3])
{
    int v[4] = {0, 0, 0, 0}; /* set by pair_verts (-O3 cannot see it for EE pairs) */
    pair_verts(m, q, v);
    if (q->kind == PAIR_VT) return cb_point_triangle_distance2(x[v[0]], x[v[1]], x[v[2]], x[v[3]], NULL, NULL);
    return cb_edge_edge_distance2(x[v[0]], x[v[1]], x[v[2]], x[v[3]], NULL, NULL, NULL, NULL);
}

/* s = phi^2 - xi^2 of a vertex against a collider (phi its signed distance), -1 when
 * phi <= xi (infeasible); phi and the normal out. */
static double collider_s(const ipc_solver *s, const cb_collider *c, double t, const double x[3], double *phi,
                         double n[3])
{
    *phi = cb_collider_query(c, t, x, n, NULL);
    return *phi > s->xi_col ? *phi * *phi - s->xi_col * s->xi_col : -1.0;
}

/* The candidate pairs of the cloth's tree (as last refitted) against mesh collider k's
 * into s->cand (MVT, MEE, MTV). 0 or an error. */
static int mesh_candidates(ipc_solver *s, int k, cb_error *err)
{
    int rc = cb_bvh_pair_query(s->bvh, s->mc[k].bvh, CB_BVH_VT | CB_BVH_TV | CB_BVH_EE, s->mres, err);
    if (rc) return rc;
    s->ncand = 0;
    for (int kind = PAIR_MVT; kind <= PAIR_MTV; kind++) {
        const cb_pair_list *l = kind == PAIR_MVT ? &s->mres->vt : kind == PAIR_MEE ? &s->mres->ee : &s->mres->tv;
        if (grow((void **)&s->cand, &s->capcand, s->ncand + l->n + 1, sizeof *s->cand))
            return CB_FAIL(err, CB_ERR_NOMEM, "ipc: out of memory for %ld mesh collider candidates", s->ncand + l->n);
        for (long i = 0; i < l->n; i++) s->cand[s->ncand++] = (ipc_pair){kind, l->p[i][0], l->p[i][1], k};
    }
    return CB_OK;
}

/* Append pair q (its s and distance d) to the active set, keeping the smallest s and the
 * first infeasible pair (s <= 0). 0 or CB_ERR_NOMEM (err filled). */
static int add_pair(ipc_solver *s, const ipc_pair *q, double sv, double d, ipc_pair *bad, double *bad_d,
                    cb_error *err)
{
    if (!(sv > 0) && bad->kind < 0) {
        *bad = *q;
        *bad_d = d;
    }
    if (sv < s->min_s) s->min_s = sv;
    if ((q->kind == PAIR_VT || q->kind == PAIR_EE) && d < s->min_self) s->min_self = d;
    if (grow((void **)&s->pairs, &s->cappairs, s->npairs + 1, sizeof *s->pairs))
        return CB_FAIL(err, CB_ERR_NOMEM, "ipc: out of memory for %ld contact pairs", s->npairs + 1);
    s->pairs[s->npairs++] = *q;
    return CB_OK;
}

/* ---- the self candidates' cache (cand_build) ----
 * The gather and the CCD of every Newton iteration each refitted the cloth's tree and
 * queried it, then bounded every candidate's distance (116k candidates at 60 x 60, nearly
 * all a cell's neighbours, each bound again in every query). Within a step the tree's
 * topology is fixed (it is rebuilt at the step's start), so one query of the tree over
 * boxes that hold every position a vertex takes in the step gives a superset of the
 * candidates of each later query, in the same order (the traversal's order is the
 * topology's; wider volumes only add node pairs): the box of a vertex spans its position
 * at the start and that plus its motion in the last step, widened by a budget D (twice
 * the last step's miss of that prediction). Each query then keeps from that list exactly
 * its own candidates, those whose owner triangles' volumes at its positions overlap
 * (tri_near: the tree's volumes and test, the same arithmetic), after a bound has put out
 * the pairs beyond any use: the distance at the boxes' centres less the farthest a vertex
 * of the pair can be from its centre (cand lb) beyond the gather's range (they would not
 * be added), or in the CCD too far for the pair's own motion to close (ccd_far would
 * skip them). The same pairs in the same order: the same results bit for bit. A query
 * outside the boxes queries again from where it is, with twice the budget where it
 * missed (cand_at); after CC_MAX_BUILDS queries in a step the cache is off for the rest
 * of it (the original queries). */

/* The number of self candidates of the tree's last query (s->res: its VT pairs, then its
 * EE pairs), and the j-th of them, that order, as a pair with its vertices. */
static long query_count(const ipc_solver *s) { return s->res->vt.n + s->res->ee.n; }

static void query_pair(const ipc_solver *s, const cb_mesh *m, long j, ipc_pair *q, int v[4])
{
    int ee = j >= s->res->vt.n;
    const cb_pair_list *l = ee ? &s->res->ee : &s->res->vt;
    long i = ee ? j - s->res->vt.n : j;
    *q = (ipc_pair){ee ? PAIR_EE : PAIR_VT, l->p[i][0], l->p[i][1], 0};
    pair_verts(m, q, v);
}

/* Do the volumes of triangles ta and tb (their vertices' coordinate ranges over x0 and
 * x1, less and plus margin, as the tree's refit computes them) overlap (the tree's test)? */
static int tri_near(const cb_mesh *m, const double (*x0)[3], const double (*x1)[3], int ta, int tb, double margin)
{
    const int *fa = m->f[ta], *fb = m->f[tb];
    for (int k = 0; k < 3; k++) {
        double lo[2], hi[2];
        for (int sd = 0; sd < 2; sd++) {
            const int *f = sd ? fb : fa;
            double l = INFINITY, h = -INFINITY;
            for (int i = 0; i < 3; i++) {
                double a = x0[f[i]][k], b = x1[f[i]][k];
                double mn = b < a ? b : a, mx = b < a ? a : b;
                l = mn < l ? mn : l;
                h = mx > h ? mx : h;
            }
            lo[sd] = l - margin;
            hi[sd] = h + margin;
        }
        if (!(lo[0] <= hi[1]) || !(lo[1] <= hi[0])) return 0;
    }
    return 1;
}

/* The largest |coordinate| of x over the cloth (NaN kept). */
static double max_coord(int nv, const double (*x)[3])
{
    double big = 0.0;
    for (int i = 0; i < nv; i++)
        for (int k = 0; k < 3; k++) {
            double a = fabs(x[i][k]);
            if (!(a <= big)) big = a;
        }
    return big;
}

/* The least widening of a vertex's box (m). */
static double cand_min_widen(const ipc_solver *s) { return CC_MIN_WIDEN * 0.5 * (s->xi_self + s->dhat); }

/* Is vertex i of x in its box of the cache? */
static int cand_in_box(const ipc_solver *s, int i, const double x[3])
{
    for (int k = 0; k < 3; k++)
        if (!(x[k] >= s->cclo[i][k] && x[k] <= s->cchi[i][k])) return 0;
    return 1;
}

/* Is every vertex of x in its box of the cache? */
static int cand_holds(const ipc_solver *s, int nv, const double (*x)[3])
{
    for (int i = 0; i < nv; i++)
        if (!cand_in_box(s, i, x[i])) return 0;
    return 1;
}

/* The cache from x: the vertices' boxes (x and x + ccdisp, widened by the budget), the
 * tree's self candidates over them into s->cc, each with its lower bound, s->ccnear those
 * within the gather's range by it. */
static int cand_build(ipc_solver *s, const cb_world *w, const double (*x)[3], cb_error *err)
{
    const cb_mesh *m = w->mesh;
    double margin = 0.5 * (s->xi_self + s->dhat), big = 0.0;
    double far = sqrt(s->xi_self * s->xi_self + s->shat_self) * (1.0 + 1e-6);
    s->cc_valid = 0;
    for (int i = 0; i < w->nv; i++) {
        double d2 = 0.0;
        for (int k = 0; k < 3; k++) {
            double a = x[i][k], b = a + s->ccdisp[i][k];
            s->cclo[i][k] = (b < a ? b : a) - s->ccw[i];
            s->cchi[i][k] = (b < a ? a : b) + s->ccw[i];
            s->ccref[i][k] = 0.5 * (a + b);
            d2 += (b - a) * (b - a);
            double f = fmax(fabs(s->cclo[i][k]), fabs(s->cchi[i][k]));
            if (!(f <= big)) big = f;
        }
        s->ccr[i] = (0.5 * sqrt(d2) + 1.7320508075688772 * s->ccw[i]) * (1.0 + 1e-9);
    }
    if (!isfinite(big)) return CB_OK; /* not valid: the original query reports it */
    int rc = cb_bvh_refit_swept(s->bvh, (const double (*)[3])s->cclo, (const double (*)[3])s->cchi,
                                margin * (1.0 + 1e-9) + 1e-12 * (1.0 + big), err);
    if (!rc) rc = cb_bvh_self_query(s->bvh, CB_BVH_VT | CB_BVH_EE, s->res, err);
    if (rc) return rc;
    long n = query_count(s);
    if (grow((void **)&s->cc, &s->capcc, n + 1, sizeof *s->cc) ||
        grow((void **)&s->ccnear, &s->capccnear, n + 1, sizeof *s->ccnear))
        return CB_FAIL(err, CB_ERR_NOMEM, "ipc: out of memory for %ld cached candidates", n);
    const int *vo = cb_bvh_vertex_owners(s->bvh), *eo = cb_bvh_edge_owners(s->bvh);
    const double (*xm)[3] = (const double (*)[3])s->ccref;
    s->nccnear = 0;
    for (s->ncc = 0; s->ncc < n; s->ncc++) {
        ipc_cand *c = &s->cc[s->ncc];
        query_pair(s, m, s->ncc, &c->q, c->v);
        int vt = c->q.kind == PAIR_VT;
        c->ta = vt ? vo[c->q.a] : eo[c->q.a];
        c->tb = vt ? c->q.b : eo[c->q.b];
        double r = 0.0;
        for (int k = 0; k < 4; k++) r = s->ccr[c->v[k]] > r ? s->ccr[c->v[k]] : r;
        double need = far + 2.0 * r, lb = pair_d_lb(!vt, c->v, xm, need);
        if (lb < need) lb = sqrt(pair_d2(m, &c->q, xm)) * (1.0 - 1e-9) - 1e-12 * big;
        c->lb = lb - 2.0 * r; /* wherever in their boxes its vertices are */
        if (c->lb < far) s->ccnear[s->nccnear++] = s->ncc;
    }
    s->cc_valid = 1;
    return CB_OK;
}

/* The cache for a query at x: 1 when it holds x (built from x when it did not: with
 * twice the budget when it had been built in this step), 0 when it is off (the original
 * query then), negative on error. */
static int cand_at(ipc_solver *s, const cb_world *w, const double (*x)[3], cb_error *err)
{
    if (!s->cc_on) return 0;
    if (s->cc_valid && cand_holds(s, w->nv, x)) {
        s->cc_served++;
        return 1;
    }
    if (s->cc_built >= CC_MAX_BUILDS) {
        s->cc_on = 0;
        return 0;
    }
    double wmin = cand_min_widen(s);
    if (s->cc_built++) /* missed in this step: twice the widening where it missed */
        for (int i = 0; i < w->nv; i++)
            if (!cand_in_box(s, i, x[i])) s->ccw[i] = fmax(2.0 * s->ccw[i], wmin);
    int rc = cand_build(s, w, x, err);
    if (rc) return rc;
    s->cc_served += s->cc_valid;
    return s->cc_valid;
}

long cb_ipc_cache_served(const void *self) { return self ? ((const ipc_solver *)self)->cc_served : 0; }

/* gather's share of the self pair q (vertices v) at x: added when within xi + dhat. */
static int gather_self(ipc_solver *s, const cb_mesh *m, const ipc_pair *q, const int v[4], const double (*x)[3],
                       ipc_pair *bad, double *bad_d, cb_error *err)
{
    double far2 = s->xi_self * s->xi_self + s->shat_self, far = sqrt(far2);
    double lb = pair_d_lb(q->kind == PAIR_EE, v, x, far);
    if (lb > 0 && lb * lb >= far2) return CB_OK; /* out of range for sure: self_lb */
    double d2 = pair_d2(m, q, x), sv = d2 - s->xi_self * s->xi_self;
    if (sv < s->shat_self && add_pair(s, q, sv, sqrt(d2), bad, bad_d, err)) return CB_ERR_NOMEM;
    return CB_OK;
}

typedef struct kin_gather_ctx {
    const double (*x)[3];
    double t;
    ipc_pair *bad;
    double *bad_d;
    cb_error *err;
} kin_gather_ctx;

/* gather's share of a box or capsule primitive (kin_visit): its pairs within range. */
static int kin_gather(ipc_solver *s, const cb_world *w, ipc_pair *q, int nv, const int *v, int nfeat, void *ctx)
{
    const kin_gather_ctx *g = ctx;
    int free_end = 0;
    for (int k = 0; k < nv; k++) free_end |= s->ss.unk[v[k]] >= 0;
    if (!free_end || !(kin_bound(s, nv, v, g->x) < s->xi_col + s->dhat)) return CB_OK;
    for (q->b = 0; q->b < nfeat; q->b++) {
        double phi = kin_phi(s, w, q, g->x, NULL, 0.0, g->t);
        double sv = phi > s->xi_col ? phi * phi - s->xi_col * s->xi_col : -1.0;
        if (sv < s->shat_col && add_pair(s, q, sv, phi, g->bad, g->bad_d, g->err)) return CB_ERR_NOMEM;
    }
    return CB_OK;
}

/* The active set at x into s->pairs (self pairs within xi + dhat, free vertices within
 * xi + dhat of a collider at t), s->min_s; the first infeasible pair (s <= 0) into *bad
 * (kind -1 when none) with its distance. */
static int gather(ipc_solver *s, const cb_world *w, const double (*x)[3], double t, ipc_pair *bad, double *bad_d,
                  cb_error *err)
{
    const cb_mesh *m = w->mesh;
    s->npairs = 0;
    s->min_s = INFINITY;
    s->min_self = INFINITY;
    bad->kind = -1;
    *bad_d = NAN;
    int cached = s->self_collision && s->bvh ? cand_at(s, w, x, err) : 0;
    if (cached < 0) return cached;
    if (s->bvh && ((s->self_collision && !cached) || s->nmc > 0)) {
        int rc = cb_bvh_refit(s->bvh, x, 0.5 * (s->xi_self + s->dhat), err);
        if (rc) return rc;
    }
    /* the mesh colliders' triangles: the cloth's tree (margin (xi_self + dhat) / 2) against
     * the collider's (margin the rest of xi_col + dhat) */
    for (int k = 0; k < s->nmc && s->bvh; k++) {
        int rc = mesh_candidates(s, k, err);
        if (rc) return rc;
        for (long i = 0; i < s->ncand; i++) {
            const ipc_pair *q = &s->cand[i];
            int v[4], nv = pair_verts(m, q, v), free_end = 0;
            for (int a = 0; a < nv; a++) free_end |= s->ss.unk[v[a]] >= 0;
            if (!free_end) continue;
            double d2 = mesh_pair_d2(s, m, q, x), sv = d2 - s->xi_col * s->xi_col;
            if (sv < s->shat_col && add_pair(s, q, sv, sqrt(d2), bad, bad_d, err)) return CB_ERR_NOMEM;
        }
    }
    if (cached) {
        /* the cache's pairs that may be in range, those of this query's own candidates */
        double margin = 0.5 * (s->xi_self + s->dhat);
        for (long j = 0; j < s->nccnear; j++) {
            const ipc_cand *c = &s->cc[s->ccnear[j]];
            if (!tri_near(m, x, x, c->ta, c->tb, margin)) continue;
            if (gather_self(s, m, &c->q, c->v, x, bad, bad_d, err)) return CB_ERR_NOMEM;
        }
    } else if (s->self_collision && s->bvh) {
        int rc = cb_bvh_self_query(s->bvh, CB_BVH_VT | CB_BVH_EE, s->res, err);
        if (rc) return rc;
        for (long j = 0, n = query_count(s); j < n; j++) {
            ipc_pair q;
            int v[4];
            query_pair(s, m, j, &q, v);
            if (gather_self(s, m, &q, v, x, bad, bad_d, err)) return CB_ERR_NOMEM;
        }
    }
    for (int u = 0; u < s->ss.nfree; u++) {
        int i = s->ss.vert[u];
        for (int c = 0; c < w->ncolliders; c++) {
            if (w->colliders[c].type == CB_COLLIDER_MESH) continue; /* as triangles, above */
            double phi, n[3], sv = collider_s(s, &w->colliders[c], t, x[i], &phi, n);
            ipc_pair q = {PAIR_COL, i, c, 0};
            if (sv < s->shat_col && add_pair(s, &q, sv, phi, bad, bad_d, err)) return CB_ERR_NOMEM;
        }
    }
    /* edges and triangles against spheres (a plane's closest point to a primitive is at a
     * vertex: the vertices' pairs cover it) */
    for (int c = 0; c < w->ncolliders && s->sphere_edges; c++) {
        const cb_collider *col = &w->colliders[c];
        if (col->type != CB_COLLIDER_SPHERE) continue;
        for (int kind = PAIR_ESPH; kind <= PAIR_TSPH; kind++)
            for (int e = 0; e < (kind == PAIR_ESPH ? m->ne : m->nf); e++) {
                ipc_pair q = {kind, e, c, 0};
                int v[4], nv = pair_verts(m, &q, v), free_end = 0;
                for (int k = 0; k < nv; k++) free_end |= s->ss.unk[v[k]] >= 0;
                if (!free_end) continue;
                double lb = sphere_phi_lb(col, t, nv, v, x);
                if (lb > s->xi_col && lb * lb - s->xi_col * s->xi_col >= s->shat_col) continue; /* out of range */
                double phi = sphere_phi(col, t, nv, v, x, NULL);
                double sv = phi > s->xi_col ? phi * phi - s->xi_col * s->xi_col : -1.0;
                if (sv < s->shat_col && add_pair(s, &q, sv, phi, bad, bad_d, err)) return CB_ERR_NOMEM;
            }
    }
    /* edges against a box's edges or a capsule's segment, triangles against a box's
     * vertices or a capsule's ends (a primitive whose bound is beyond the range skipped) */
    if (!s->vphi) return CB_OK;
    kin_gather_ctx g = {x, t, bad, bad_d, err};
    return kin_visit(s, w, x, t, kin_gather, &g);
}

/* "vertex 3 and triangle 7 at distance 1e-4 m (the barrier needs more than 0.002 m)" into buf:
 * the pair's distance and its offset xi, which the distance must exceed (at xi the barrier is
 * infinite). */
static void describe(const ipc_solver *s, const ipc_pair *q, double d, char *buf, size_t n)
{
    if (q->kind == PAIR_VT)
        snprintf(buf, n, "vertex %d and triangle %d at distance %.6g m (the barrier needs more than %.6g m)", q->a,
                 q->b, d, s->xi_self);
    else if (q->kind == PAIR_EE)
        snprintf(buf, n, "edges %d and %d at distance %.6g m (the barrier needs more than %.6g m)", q->a, q->b, d,
                 s->xi_self);
    else if (q->kind == PAIR_CEE || q->kind == PAIR_CTV)
        snprintf(buf, n, "%s %d and %s %d of collider %d at distance %.6g m (the barrier needs more than %.6g m)",
                 q->kind == PAIR_CEE ? "edge" : "triangle", q->a, q->kind == PAIR_CEE ? "edge" : "vertex", q->b, q->c,
                 d, s->xi_col);
    else if (q->kind >= PAIR_MVT)
        snprintf(buf, n, "%s %d and %s %d of mesh collider %d at distance %.6g m (the barrier needs more than %.6g m)",
                 q->kind == PAIR_MVT ? "vertex" : q->kind == PAIR_MEE ? "edge" : "triangle", q->a,
                 q->kind == PAIR_MVT ? "triangle" : q->kind == PAIR_MEE ? "edge" : "vertex", q->b,
                 s->mc[q->c].collider, d, s->xi_col);
    else
        snprintf(buf, n, "%s %d at signed distance %.6g m from collider %d (the barrier needs more than %.6g m)",
                 q->kind == PAIR_COL ? "vertex" : q->kind == PAIR_ESPH ? "edge" : "triangle", q->a, d, q->b, s->xi_col);
}

/* The index in s->vp of the vertex pair (lo, hi), lo < hi, or -1 (a binary search in lo's
 * row of the sorted pattern). */
static long find_vp(const ipc_solver *s, int lo, int hi)
{
    long l = s->vp_row[lo], r = s->vp_row[lo + 1] - 1;
    while (l <= r) {
        long mid = (l + r) / 2;
        if (s->vp[mid][1] == hi) return mid;
        if (s->vp[mid][1] < hi) l = mid + 1;
        else r = mid - 1;
    }
    return -1;
}

/* Add c B to the system's values A at the block of vertices va (row) and vb (column)
 * when both are free and va's unknown is not below vb's (the lower triangle: a diagonal
 * block's entries r >= c, an off-diagonal block of the pattern's extra vertex pairs
 * whole); B's entry (r, c) at B[r ld + c]. Nothing for -1 (a collider's point). */
static void add_block(const ipc_solver *s, double *A, int va, int vb, const double *B, int ld, double c)
{
    const cb_spring_solver *ss = &s->ss;
    int ua = va >= 0 ? ss->unk[va] : -1, ub = vb >= 0 ? ss->unk[vb] : -1;
    if (ua < 0 || ub < 0 || ua < ub) return;
    if (ua == ub) {
        for (int r = 0; r < 3; r++)
            for (int k = 0; k <= r; k++) A[ss->diag_pos[ua * 9 + r * 3 + k]] += c * B[r * ld + k];
        return;
    }
    long at = find_vp(s, va < vb ? va : vb, va < vb ? vb : va);
    CB_ASSERT(at >= 0);
    const int *pos = ss->extra_pos + 9 * at;
    for (int r = 0; r < 3; r++)
        for (int k = 0; k < 3; k++) A[pos[3 * r + k]] += c * B[r * ld + k];
}

/* The work over a step of length h of a pair's external impulses, -(1/h) kappa g on its
 * free vertices (g the pair's gradient, slot `off` + a for vertex v[a]), where something
 * outside the cloth takes the other share: against a sphere, each vertex's impulse times
 * the sphere's surface velocity there (a fixed collider adds exactly 0); a self pair with
 * pinned vertices, the impulse the free ones get times the first pinned vertex's velocity
 * (the pin's script). Self pairs of free vertices only exchange impulse: 0. */
static double pair_work(const ipc_solver *s, const cb_world *w, const ipc_pair *q, const int *v, int nv, int off,
                        const double *g, const double (*x)[3], double t, double h)
{
    const int *unk = s->ss.unk;
    double W = 0.0, u[3];
    int kin = q->kind == PAIR_CEE || q->kind == PAIR_CTV;
    if (q->kind >= PAIR_MVT && !kin) return 0.0; /* a static mesh collider takes the other share */
    if (q->kind == PAIR_ESPH || q->kind == PAIR_TSPH || kin) {
        for (int a = 0; a < nv; a++) {
            if (v[a] < 0 || unk[v[a]] < 0) continue;
            cb_collider_velocity(&w->colliders[kin ? q->c : q->b], t, x[v[a]], u);
            W -= s->kappa * cb_v3_dot(g + 3 * (a + off), u) / h;
        }
        return W;
    }
    int pinned = -1;
    for (int a = 0; a < nv && pinned < 0; a++)
        if (unk[v[a]] < 0) pinned = v[a];
    if (pinned < 0) return 0.0;
    cb_world_pin_velocity(w, pinned, t, u);
    for (int a = 0; a < nv; a++)
        if (unk[v[a]] >= 0) W -= s->kappa * cb_v3_dot(g + 3 * (a + off), u) / h;
    return W;
}

/* The barrier energy at x (time t); with grad, its gradient added there; with A, its
 * PSD-projected Hessian added to the system's values; with work (needs grad), the work over
 * a step of length h of its external impulses, -(1/h) kappa grad b on the free vertices: a
 * collider pair's times the collider's surface velocity at the vertex, and pair_work's. */
static double barrier(ipc_solver *s, const cb_world *w, const double (*x)[3], double t, double (*grad)[3],
                      double *A, double h, double *work)
{
    const cb_mesh *m = w->mesh;
    const cb_spring_solver *ss = &s->ss;
    double e = 0.0;
    for (long k = 0; k < s->npairs; k++) {
        const ipc_pair *q = &s->pairs[k];
        if (q->kind == PAIR_COL) {
            double phi, n[3], sv = collider_s(s, &w->colliders[q->b], t, x[q->a], &phi, n);
            double db, d2b, b = cb_barrier(sv, s->shat_col, &db, &d2b);
            e += s->kappa * b;
            int u = ss->unk[q->a];
            if (grad) cb_v3_axpy(grad[q->a], s->kappa * db * 2.0 * phi, n);
            if (work && u >= 0) {
                double uc[3];
                cb_collider_velocity(&w->colliders[q->b], t, x[q->a], uc);
                *work -= s->kappa * db * 2.0 * phi * cb_v3_dot(n, uc) / h;
            }
            if (A && u >= 0) {
                /* b'' (2 phi)^2 n n^T + b' 2 n n^T (+ b' 2 phi dn/dx, negative
                 * semi-definite for a convex collider: left out) */
                double c = fmax(0.0, s->kappa * (4.0 * phi * phi * d2b + 2.0 * db));
                for (int r = 0; r < 3; r++)
                    for (int cc = 0; cc <= r; cc++) A[ss->diag_pos[u * 9 + r * 3 + cc]] += c * n[r] * n[cc];
                /* the collider's translation by dtau v moves phi as the vertex's by -dtau v */
                if (s->moving & 1) cb_v3_axpy(s->mix[q->a], -c * cb_v3_dot(n, w->colliders[q->b].velocity), n);
            }
            continue;
        }
        int v[4], nv = pair_verts(m, q, v), off = 0, kin = q->kind == PAIR_CEE || q->kind == PAIR_CTV;
        double g[12], H[12][12], b;
        if (kin) {
            /* four slots, the collider's marked -1 in v, as a mesh collider's */
            const cb_collider *col = &w->colliders[q->c];
            double y[4][3], eps;
            const double *pt[4];
            int ee = kin_pair(s, w, q, x, NULL, 0.0, t, y, pt, v, &eps);
            nv = 4;
            b = cb_offset_pair_barrier(ee, pt[0], pt[1], pt[2], pt[3], col->type == CB_COLLIDER_CAPSULE ? col->radius : 0.0,
                                       s->xi_col, s->shat_col, eps, grad || A ? g : NULL, A ? H : NULL, NULL);
        } else if (q->kind >= PAIR_MVT) {
            /* four slots, the collider's fixed points marked -1 in v: only the cloth's
             * get gradient and Hessian blocks (as a self pair's pinned vertices) */
            const double *pt[4];
            double eps;
            int ee = mesh_pair(s, m, q, x, pt, v, &eps);
            nv = 4;
            b = cb_pair_barrier(ee, pt[0], pt[1], pt[2], pt[3], s->xi_col, s->shat_col, eps, grad || A ? g : NULL,
                                A ? H : NULL, NULL);
        } else if (q->kind == PAIR_ESPH || q->kind == PAIR_TSPH) {
            /* slot 0 the sphere's center (fixed), the primitive's vertices after it */
            const cb_collider *col = &w->colliders[q->b];
            double ctr[3];
            sphere_center(col, t, ctr);
            b = cb_sphere_barrier(nv, x[v[0]], x[v[1]], x[v[nv - 1]], ctr, col->radius, s->xi_col, s->shat_col,
                                  grad || A ? g : NULL, A ? H : NULL, NULL);
            off = 1;
        } else if (!grad && !A) {
            double d2 = pair_d2(m, q, x);
            b = cb_barrier(d2 - s->xi_self * s->xi_self, s->shat_self, NULL, NULL);
            double eps = pair_eps(s, q);
            if (eps > 0 && b > 0 && isfinite(b)) b *= cb_ee_mollifier_d(x[v[0]], x[v[1]], x[v[2]], x[v[3]], eps, NULL, NULL);
        } else {
            b = cb_pair_barrier(q->kind == PAIR_EE, x[v[0]], x[v[1]], x[v[2]], x[v[3]], s->xi_self, s->shat_self,
                                pair_eps(s, q), g, A ? H : NULL, NULL);
        }
        e += s->kappa * b;
        if (grad)
            for (int a = 0; a < nv; a++)
                if (v[a] >= 0 && ss->unk[v[a]] >= 0)
                    for (int k2 = 0; k2 < 3; k2++) grad[v[a]][k2] += s->kappa * g[3 * (a + off) + k2];
        if (work) *work += pair_work(s, w, q, v, nv, off, g, x, t, h);
        if (!A || !(b > 0)) continue;
        /* the block of the vertices' coordinates, projected to PSD */
        int n3 = 3 * nv;
        double P[144];
        for (int r = 0; r < n3; r++)
            for (int c = 0; c < n3; c++) P[r * n3 + c] = H[3 * off + r][3 * off + c];
        cb_psd_project_ql(n3, P);
        if ((s->moving & 1) && kin) /* a box's or capsule's translation: as the cloth's by -dtau v */
            for (int a = 0; a < nv; a++)
                for (int bb = 0; bb < nv; bb++)
                    for (int r = 0; r < 3 && v[a] >= 0 && v[bb] >= 0; r++)
                        for (int c = 0; c < 3; c++)
                            s->mix[v[a]][r] -= s->kappa * P[(3 * a + r) * n3 + 3 * bb + c] * w->colliders[q->c].velocity[c];
        if ((s->moving & 1) && off) /* a sphere's translation: as its primitive's by -dtau v */
            for (int a = 0; a < nv; a++)
                for (int bb = 0; bb < nv; bb++)
                    for (int r = 0; r < 3; r++)
                        for (int c = 0; c < 3; c++)
                            s->mix[v[a]][r] -= s->kappa * P[(3 * a + r) * n3 + 3 * bb + c] * w->colliders[q->b].velocity[c];
        if (s->pin_phase) /* a moving pin of the pair: its block times its rate (pin_mix) */
            for (int a = 0; a < nv; a++)
                for (int bb = 0; bb < nv; bb++) {
                    if (v[a] < 0 || v[bb] < 0 || ss->unk[v[a]] < 0 || ss->unk[v[bb]] >= 0) continue;
                    for (int r = 0; r < 3; r++)
                        for (int c = 0; c < 3; c++)
                            s->mix[v[a]][r] += s->kappa * P[(3 * a + r) * n3 + 3 * bb + c] * s->pu[v[bb]][c];
                }
        for (int a = 0; a < nv; a++)
            for (int bb = 0; bb < nv; bb++) add_block(s, A, v[a], v[bb], P + 3 * a * n3 + 3 * bb, n3, s->kappa);
    }
    return e;
}

static int cmp_pair(const void *a, const void *b)
{
    const int *p = a, *q = b;
    return p[0] != q[0] ? (p[0] < q[0] ? -1 : 1) : (p[1] != q[1] ? (p[1] < q[1] ? -1 : 1) : 0);
}

/* The cloth vertices of entry k of the active pairs followed by the lagged friction
 * pairs (whose couplings stay in H while their pair leaves the active set); their number. */
static int coupled_verts(const ipc_solver *s, const cb_mesh *m, long k, int v[4])
{
    if (k < s->npairs) return pair_verts(m, &s->pairs[k], v);
    const cb_ipc_fpair *f = &s->fp[k - s->npairs];
    int n = 0;
    for (int a = 0; a < 4; a++)
        if (f->v[a] >= 0) v[n++] = f->v[a];
    return n;
}

/* Append the coupling of vertices a and b (both free) to s->want. 0 or CB_ERR_NOMEM. */
static int want_pair(ipc_solver *s, int a, int b, cb_error *err)
{
    if (s->ss.unk[a] < 0 || s->ss.unk[b] < 0) return CB_OK;
    if (grow((void **)&s->want, &s->capwant, s->nwant + 1 + s->nvp, sizeof *s->want))
        return CB_FAIL(err, CB_ERR_NOMEM, "ipc: out of memory for the contact pattern");
    s->want[s->nwant][0] = a < b ? a : b;
    s->want[s->nwant][1] = a < b ? b : a;
    s->nwant++;
    return CB_OK;
}

/* The system's pattern made the union of the old couplings and s->want's (sorted and
 * unique: a pattern that only grows is analysed once per new coupling). */
static int merge_pattern(ipc_solver *s, const cb_world *w, cb_error *err)
{
    if (grow((void **)&s->want, &s->capwant, s->nwant + s->nvp, sizeof *s->want))
        return CB_FAIL(err, CB_ERR_NOMEM, "ipc: out of memory for the contact pattern");
    if (s->nvp > 0) memcpy(s->want + s->nwant, s->vp, (size_t)s->nvp * sizeof *s->vp);
    long n = s->nwant + s->nvp, u = 0;
    qsort(s->want, (size_t)n, sizeof *s->want, cmp_pair);
    for (long i = 0; i < n; i++)
        if (!u || cmp_pair(s->want[u - 1], s->want[i])) {
            s->want[u][0] = s->want[i][0];
            s->want[u][1] = s->want[i][1];
            u++;
        }
    if (u > 100000000) return CB_FAIL(err, CB_ERR_INPUT, "ipc: too many contact couplings (%ld)", u);
    if (grow((void **)&s->vp, &s->capvp, u, sizeof *s->vp))
        return CB_FAIL(err, CB_ERR_NOMEM, "ipc: out of memory for the contact pattern");
    memcpy(s->vp, s->want, (size_t)u * sizeof *s->vp);
    s->nvp = u;
    for (int i = 0, j = 0; i <= w->nv; i++) {
        while (j < u && s->vp[j][0] < i) j++;
        s->vp_row[i] = j;
    }
    return cb_spring_solver_system(&s->ss, (const int (*)[2])s->vp, (int)u, "ipc: the Hessian M + h^2 H + kappa B", err);
}

/* Make the system's pattern hold every vertex pair of the active pairs and of the lagged
 * friction pairs (both ends free): rebuild it with the union of the old and the new pairs
 * when one is missing. The check
 * is a lookup per coupling in the pattern's rows (no sort: the pattern usually holds).
 * The mesh's edges are in it from the start (seed_pattern), so the pairs against
 * spheres, whose couplings are edges, never rebuild it. */
static int update_pattern(ipc_solver *s, const cb_world *w, cb_error *err)
{
    int missing = 0;
    for (long k = 0; k < s->npairs + s->nfp && !missing; k++) {
        int v[4], nv = coupled_verts(s, w->mesh, k, v);
        for (int a = 0; a < nv && !missing; a++)
            for (int b = a + 1; b < nv && !missing; b++)
                if (s->ss.unk[v[a]] >= 0 && s->ss.unk[v[b]] >= 0)
                    missing = find_vp(s, v[a] < v[b] ? v[a] : v[b], v[a] < v[b] ? v[b] : v[a]) < 0;
    }
    if (!missing) return CB_OK;
    s->nwant = 0;
    for (long k = 0; k < s->npairs + s->nfp; k++) {
        int v[4], nv = coupled_verts(s, w->mesh, k, v);
        for (int a = 0; a < nv; a++)
            for (int b = a + 1; b < nv; b++)
                if (want_pair(s, v[a], v[b], err)) return CB_ERR_NOMEM;
    }
    return merge_pattern(s, w, err);
}

/* The couplings of the mesh's edges into the pattern at the start: the springs hold them
 * already (the system's pattern is the same), but a pair against a sphere, whose blocks
 * find_vp places, would otherwise rebuild the pattern and redo CHOLMOD's analysis each
 * time contact reached a new edge (27 times in the first 40 steps of the 60 x 60 drape). */
static int seed_pattern(ipc_solver *s, const cb_world *w, cb_error *err)
{
    s->nwant = 0;
    for (int e = 0; e < w->mesh->ne; e++)
        if (want_pair(s, w->mesh->e[e][0], w->mesh->e[e][1], err)) return CB_ERR_NOMEM;
    return merge_pattern(s, w, err);
}

/* Distance minus xi_col of the primitive (nv vertices v: a vertex against collider col,
 * an edge or a triangle against a sphere; with kq, box or capsule pair kq) at x + tc p,
 * the collider at t + tc dtau. */
static double prim_gap(const ipc_solver *s, const cb_world *w, const ipc_pair *kq, const cb_collider *col, double t,
                       double dtau, int nv, const int *v, const double (*x)[3], double tc)
{
    t += tc * dtau;
    if (kq) return kin_phi(s, w, kq, x, (const double (*)[3])s->p, tc, t) - s->xi_col;
    double y[3][3];
    int idx[3] = {0, 1, 2};
    for (int k = 0; k < nv; k++)
        for (int d = 0; d < 3; d++) y[k][d] = x[v[k]][d] + tc * s->p[v[k]][d];
    double phi = nv == 1 ? cb_collider_query(col, t, y[0], NULL, NULL) : sphere_phi(col, t, nv, idx, (const double (*)[3])y, NULL);
    return phi - s->xi_col;
}

/* Conservative advancement of a primitive against a collider along p (the collider's
 * time along dtau), up to amax: its distance is Lipschitz in the step with the constant
 * len (its vertices' largest motion relative to the collider's translation, |p - dtau v|:
 * a spin in place changes no distance), so advancing by gap / len never passes the first time it
 * comes within 0.1 of its present gap of xi_col. Returns the step reached (amax when it
 * never comes that close). */
static double advance(const ipc_solver *s, const cb_world *w, const ipc_pair *kq, const cb_collider *col, double t,
                      double dtau, int nv, const int *v, const double (*x)[3], double len, double amax)
{
    double gap0 = prim_gap(s, w, kq, col, t, dtau, nv, v, x, 0.0), target = 0.1 * gap0, tc = 0.0;
    if (gap0 - len * amax > target) return amax; /* cannot come that close */
    for (int it = 0; it < 200; it++) {
        double gap = prim_gap(s, w, kq, col, t, dtau, nv, v, x, tc) - target;
        if (!(gap > 1e-3 * (gap0 - target))) break;
        tc += gap / len;
        if (tc >= amax) return amax;
    }
    return tc;
}

/* The largest step along p (the collider's time along dtau) within amax over which the
 * vertex, edge or triangle (nv vertices v at x) against sphere or plane col, gap0 = its
 * distance less xi_col now (> 0), never comes within 0.1 gap0 of xi_col, found exactly
 * in the collider's frame (its translation by tc dtau v acts as the primitive's by
 * -tc dtau v: rel = p - dtau v; a spin keeps the shape): a vertex against a sphere by
 * the root of |r + tc rel| = R + xi_col + 0.1 gap0 (the distance from the center is
 * convex along a line: none when it does not fall at the start), against a plane by its
 * linear height; an edge or a triangle against a sphere by the CCD of the center as a
 * point (a degenerate edge against an edge) with eta = R + xi_col + 0.1 gap0
 * (contact/ccd.h, conservative). advance's conservative advancement, whose Lipschitz
 * bound is the whole relative motion and which gave up after 200 advances, allowed
 * 2e-2 of the step where nothing came close: the cloth wrapping the 50 m/s ball of
 * projectile_50 slides along it 1e-5 m from it. Returns -1 for the other pairs (and
 * where the CCD cannot tell 0.9 gap0 from its margin): advance's. */
static double round_toi(const ipc_solver *s, const cb_collider *col, double t, double dtau, int nv, const int *v,
                        const double (*x)[3], double gap0, double amax)
{
    if (col->type != CB_COLLIDER_SPHERE && !(col->type == CB_COLLIDER_PLANE && nv == 1)) return -1.0;
    if (!(gap0 > 0)) return 0.0;
    double ctr[3], rel[4][3];
    for (int a = 0; a < nv; a++)
        for (int d = 0; d < 3; d++) rel[a][d] = s->p[v[a]][d] - dtau * col->velocity[d];
    if (col->type == CB_COLLIDER_PLANE) {
        double un = cb_v3_dot(rel[0], col->normal);
        return un < 0 && 0.9 * gap0 < -un * amax ? 0.9 * gap0 / -un : amax;
    }
    sphere_center(col, t, ctr);
    double rho = col->radius + s->xi_col + 0.1 * gap0;
    if (nv == 1) {
        double r[3];
        cb_v3_sub(r, x[v[0]], ctr);
        double b = cb_v3_dot(r, rel[0]), a = cb_v3_norm2(rel[0]), c = 0.9 * gap0 * (cb_v3_norm(r) + rho);
        double disc = b * b - a * c;
        if (!(b < 0) || !(disc >= 0)) return amax;
        return fmin(amax, c / (-b + sqrt(disc)));
    }
    double y0[3][3], y1[3][3], toi = 1.0;
    for (int a = 0; a < nv; a++)
        for (int d = 0; d < 3; d++) {
            y0[a][d] = x[v[a]][d];
            y1[a][d] = x[v[a]][d] + rel[a][d];
        }
    cb_ccd_opts o = cb_default_ccd_opts();
    o.eta = rho;
    int hit = nv == 2 ? cb_ccd_edge_edge(ctr, ctr, ctr, ctr, y0[0], y1[0], y0[1], y1[1], &o, &toi)
                      : cb_ccd_vertex_triangle(ctr, ctr, y0[0], y1[0], y0[1], y1[1], y0[2], y1[2], &o, &toi);
    /* toi 0: 0.9 gap0 within the CCD's margin (1e-10 of the coordinates): advance decides */
    return !hit ? amax : toi > 0 ? fmin(amax, toi) : -1.0;
}

/* A CCD bound toi of pair q: the step a becomes toi when that is shorter, q the limit. */
static void limit(ipc_solver *s, const ipc_pair *q, double toi, double *a)
{
    if (toi < *a) {
        *a = toi;
        s->lim = *q;
    }
}

typedef struct kin_ccd_ctx {
    const double (*x)[3];
    double t, dtau, *a;
} kin_ccd_ctx;

/* The largest motion along the Newton step p of the nv vertices v relative to collider col
 * over dtau (its translation by dtau v acts as the primitive's by -dtau v): the length
 * of the conservative advancement and of the CCD's early outs (ccd_step, kin_ccd). */
static double rel_motion(const ipc_solver *s, const cb_collider *col, double dtau, int nv, const int *v)
{
    double len = 0.0;
    for (int a = 0; a < nv; a++) {
        double r[3];
        for (int d = 0; d < 3; d++) r[d] = s->p[v[a]][d] - dtau * col->velocity[d];
        double l = cb_v3_norm(r);
        len = l > len ? l : len; /* fmax(len, l), without its libm call */
    }
    return len;
}

/* ccd_step's share of a box or capsule primitive (kin_visit). */
static int kin_ccd(ipc_solver *s, const cb_world *w, ipc_pair *q, int nv, const int *v, int nfeat, void *ctx)
{
    const kin_ccd_ctx *k = ctx;
    const cb_collider *col = &w->colliders[q->c];
    double len = rel_motion(s, col, k->dtau, nv, v);
    if (!(len > 0) || 0.9 * (kin_bound(s, nv, v, k->x) - s->xi_col) > len * *k->a) return 0;
    for (q->b = 0; q->b < nfeat; q->b++)
        limit(s, q, advance(s, w, q, col, k->t, k->dtau, nv, v, k->x, len, *k->a), k->a);
    return 0;
}

/* Whether the pair of vertices v (edge-edge: v[0..1] against v[2..3]; else v[0] against
 * v[1..3]), d0 apart at x, provably stays farther than eta moving from x to x1: d(t) >=
 * d0 - L t with L the largest relative motion of a vertex of one side and one of the
 * other, computed as contact/ccd.c does (from x1 - x, times 1 + 1e-9) and with a margin
 * ten times its (1e-10 of the largest coordinate), so a pair skipped here is one whose
 * CCD would answer "no contact" after its own first distance (the same answer, without
 * the coplanarity cubic and the distance; most candidates of a swept tree over a slowly
 * moving cloth). NaN or infinite coordinates: 0 (the CCD decides). */
static int ccd_far(int ee, const int v[4], const double (*x)[3], const double (*x1)[3], double d0, double eta)
{
    int n1 = ee ? 2 : 1;
    double L2 = 0.0, S = 0.0;
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 3; k++) {
            double a = fabs(x[v[i]][k]), b = fabs(x1[v[i]][k]);
            S = a > S ? a : S;
            S = b > S ? b : S;
        }
    for (int i = 0; i < n1; i++)
        for (int j = n1; j < 4; j++) {
            double r[3];
            for (int k = 0; k < 3; k++) r[k] = (x1[v[i]][k] - x[v[i]][k]) - (x1[v[j]][k] - x[v[j]][k]);
            double l2 = cb_v3_norm2(r);
            L2 = l2 > L2 ? l2 : L2;
        }
    return d0 - sqrt(L2) * (1.0 + 1e-9) > eta + 1e-9 * S;
}

/* The CCD of the self pair q (vertices v) from x to x1: *a lowered to its time of impact
 * (limit) unless it cannot come closer than xi + 0.1 (d0 - xi). */
static void ccd_self(ipc_solver *s, const cb_mesh *m, const ipc_pair *q, const int v[4], const double (*x)[3],
                     const double (*x1)[3], double *a)
{
    int ee = q->kind == PAIR_EE;
    /* far already by the bound (self_lb): then by the distance too */
    double lb = pair_d_lb(ee, v, x, INFINITY);
    if (lb > s->xi_self && ccd_far(ee, v, x, x1, lb, s->xi_self + 0.1 * (lb - s->xi_self))) return;
    cb_ccd_opts o = cb_default_ccd_opts();
    double d0 = sqrt(pair_d2(m, q, x)), toi = 1.0;
    o.eta = s->xi_self + 0.1 * (d0 - s->xi_self);
    if (ccd_far(ee, v, x, x1, d0, o.eta)) return;
    int hit = !ee ? cb_ccd_vertex_triangle(x[v[0]], x1[v[0]], x[v[1]], x1[v[1]], x[v[2]], x1[v[2]], x[v[3]], x1[v[3]],
                                          &o, &toi)
                  : cb_ccd_edge_edge(x[v[0]], x1[v[0]], x[v[1]], x1[v[1]], x[v[2]], x1[v[2]], x[v[3]], x1[v[3]], &o,
                                     &toi);
    if (hit) limit(s, q, toi, a);
}

/* The largest alpha in (0, 1] along p from x, the colliders moving from time t to
 * t + alpha dtau, with no pair closer than xi + 0.1 (d0 - xi): CCD on the swept BVH's
 * candidates, conservative advancement against colliders. */
static int ccd_step(ipc_solver *s, const cb_world *w, const double (*x)[3], double t, double dtau, double *alpha,
                    cb_error *err)
{
    const cb_mesh *m = w->mesh;
    double a = 1.0;
    s->lim.kind = -1;
    for (int i = 0; i < w->nv; i++)
        for (int k = 0; k < 3; k++) s->xt[i][k] = x[i][k] + s->p[i][k];
    const double (*x1)[3] = (const double (*)[3])s->xt;
    int swept = 0; /* the tree refitted over the sweep */
    if (s->self_collision && s->bvh) {
        double margin = 0.5 * (s->xi_self + s->dhat);
        int cached = cand_at(s, w, x, err);
        if (cached < 0) return cached;
        double big = cached ? fmax(max_coord(w->nv, x), max_coord(w->nv, x1)) : NAN;
        if (cached && isfinite(big) && cand_holds(s, w->nv, x1)) {
            /* the cache's pairs that ccd_far need not skip: by its bound, their distance
             * at x less xi, times 0.9, is not above their largest relative motion (twice
             * the largest of their vertices' motions) and ccd_far's margins; of those,
             * this query's own candidates */
            for (int i = 0; i < w->nv; i++) {
                double d[3];
                cb_v3_sub(d, x1[i], x[i]);
                s->ccpm[i] = cb_v3_norm(d);
            }
            double T0 = s->xi_self + (1e-9 * big + 1e-12 * (1.0 + big)) / 0.9, T1 = 2.0 * (1.0 + 1e-6) / 0.9;
            for (long j = 0; j < s->ncc; j++) {
                const ipc_cand *c = &s->cc[j];
                double pm = s->ccpm[c->v[0]];
                for (int k = 1; k < 4; k++) pm = s->ccpm[c->v[k]] > pm ? s->ccpm[c->v[k]] : pm;
                if (c->lb >= T0 + T1 * pm || !tri_near(m, x, x1, c->ta, c->tb, margin)) continue;
                ccd_self(s, m, &c->q, c->v, x, x1, &a);
            }
        } else {
            int rc = cb_bvh_refit_swept(s->bvh, x, x1, margin, err);
            if (!rc) rc = cb_bvh_self_query(s->bvh, CB_BVH_VT | CB_BVH_EE, s->res, err);
            if (rc) return rc;
            swept = 1;
            for (long j = 0, n = query_count(s); j < n; j++) {
                ipc_pair q;
                int v[4];
                query_pair(s, m, j, &q, v);
                ccd_self(s, m, &q, v, x, x1, &a);
            }
        }
    }
    /* the static mesh colliders: the cloth's swept tree (margin xi_col) against the
     * collider's (its gather margin: a superset of the candidates) */
    if (s->nmc > 0 && s->bvh && !swept) {
        int rc = cb_bvh_refit_swept(s->bvh, x, x1, 0.5 * (s->xi_self + s->dhat), err);
        if (rc) return rc;
    }
    cb_ccd_opts om = cb_default_ccd_opts();
    for (int k = 0; k < s->nmc && s->bvh; k++) {
        int rc = mesh_candidates(s, k, err);
        if (rc) return rc;
        for (long i = 0; i < s->ncand; i++) {
            const ipc_pair *q = &s->cand[i];
            const double *p0[4], *p1[4];
            int v[4];
            double eps, toi = 1.0;
            int ee = mesh_pair(s, m, q, x, p0, v, &eps);
            mesh_pair(s, m, q, x1, p1, v, &eps);
            om.eta = s->xi_col + 0.1 * (sqrt(mesh_pair_d2(s, m, q, x)) - s->xi_col);
            int hit = ee ? cb_ccd_edge_edge(p0[0], p1[0], p0[1], p1[1], p0[2], p1[2], p0[3], p1[3], &om, &toi)
                         : cb_ccd_vertex_triangle(p0[0], p1[0], p0[1], p1[1], p0[2], p1[2], p0[3], p1[3], &om, &toi);
            if (hit) limit(s, q, toi, &a);
        }
    }
    const cb_mesh *mm = w->mesh;
    for (int c = 0; c < w->ncolliders; c++) {
        const cb_collider *col = &w->colliders[c];
        if (col->type == CB_COLLIDER_MESH) continue; /* as triangles, above */
        int sphere = col->type == CB_COLLIDER_SPHERE && s->sphere_edges;
        /* vertices against every collider (the free ones, and the moving pins while they
         * move when they start outside its offset: a pin driven into a collider stalls
         * the step, pins_stalled); edges and triangles against spheres */
        for (int kind = PAIR_COL; kind <= PAIR_TSPH; kind++) {
            if (kind == PAIR_ESPH && !sphere) break;
            int count = kind == PAIR_COL ? s->ss.nfree + (s->pin_phase ? s->nmpin : 0) : kind == PAIR_ESPH ? mm->ne : mm->nf;
            for (int e = 0; e < count; e++) {
                int pin = kind == PAIR_COL && e >= s->ss.nfree;
                ipc_pair q = {kind, kind != PAIR_COL ? e : pin ? s->mpin[e - s->ss.nfree] : s->ss.vert[e], c, 0};
                int v[4], nv = pair_verts(mm, &q, v);
                double len = rel_motion(s, col, dtau, nv, v);
                if (kind == PAIR_VT || !(len > 0)) continue;
                if (pin && !(prim_gap(s, w, NULL, col, t, dtau, nv, v, x, 0.0) > 0)) continue;
                /* advance's own first test (0.9 gap > len a: never that close) on a lower
                 * bound of the gap, without the closest point */
                if (kind != PAIR_COL && 0.9 * (sphere_phi_lb(col, t, nv, v, x) - s->xi_col) > len * a)
                    continue;
                double gap0 = prim_gap(s, w, NULL, col, t, dtau, nv, v, x, 0.0);
                if (kind == PAIR_COL && gap0 - len * a > 0.1 * gap0) continue; /* cannot come that close */
                double toi = round_toi(s, col, t, dtau, nv, v, x, gap0, a);
                limit(s, &q, toi >= 0 ? toi : advance(s, w, NULL, col, t, dtau, nv, v, x, len, a), &a);
            }
        }
    }
    /* edges and triangles against boxes and capsules (their pairs of gather), skipped
     * where the bound from the vertices' distances keeps the primitive farther than the
     * step can bring it */
    kin_ccd_ctx k = {x, t, dtau, &a};
    if (s->vphi) kin_visit(s, w, x, t, kin_ccd, &k);
    *alpha = a;
    return CB_OK;
}

/* The lagged friction of the self pairs (mu = self_friction), of the mesh collider pairs
 * and of the box and capsule pairs (mu = the collider's friction) of the active set at x
 * (the colliders at t) into s->fp (IPC sec. 5, solvers/ipc_friction.h): each pair's
 * closest points and normal at x, its normal force times h^2 (cb_ipc_fpair_force) and, for
 * a box or capsule, the collider's surface velocity at the cloth's closest point (as
 * cb_spring_friction takes a vertex's). Pairs with no free vertex, mu 0 or no force are
 * left out. 0 or CB_ERR_NOMEM. */
static int pair_friction_lag(ipc_solver *s, const cb_world *w, const double (*x)[3], double t, cb_error *err)
{
    const cb_mesh *m = w->mesh;
    s->nfp = 0;
    for (long k = 0; k < s->npairs; k++) {
        const ipc_pair *q = &s->pairs[k];
        int mesh = q->kind >= PAIR_MVT && q->kind <= PAIR_MTV, kin = q->kind == PAIR_CEE || q->kind == PAIR_CTV;
        if (q->kind != PAIR_VT && q->kind != PAIR_EE && !mesh && !kin) continue;
        const double *pt[4];
        double y[4][3];
        int v[4], ee, free_end = 0;
        double eps, mu, xi = s->xi_col, shat = s->shat_col, r = 0.0;
        const cb_collider *col = NULL;
        if (kin) {
            col = &w->colliders[q->c];
            ee = kin_pair(s, w, q, x, NULL, 0.0, t, y, pt, v, &eps);
            mu = col->friction;
            if (col->type == CB_COLLIDER_CAPSULE) r = col->radius;
        } else if (mesh) {
            ee = mesh_pair(s, m, q, x, pt, v, &eps);
            mu = w->colliders[s->mc[q->c].collider].friction;
        } else {
            pair_verts(m, q, v);
            for (int a = 0; a < 4; a++) pt[a] = x[v[a]];
            ee = q->kind == PAIR_EE;
            eps = pair_eps(s, q);
            mu = s->self_friction;
            xi = s->xi_self;
            shat = s->shat_self;
        }
        for (int a = 0; a < 4; a++) free_end |= v[a] >= 0 && s->ss.unk[v[a]] >= 0;
        if (!(mu > 0) || !free_end) continue;
        double lam = cb_ipc_fpair_force(ee, pt, r, xi, shat, s->kappa, eps);
        cb_ipc_fpair f;
        if (!(lam > 0) || !isfinite(lam) || cb_ipc_fpair_lag(ee, pt, &f)) continue;
        f.ml = mu * lam;
        cb_v3_zero(f.vc);
        for (int a = 0; a < 4; a++) f.v[a] = v[a];
        if (col) { /* the collider's velocity at the cloth's closest point */
            double c[3] = {0, 0, 0}, wsum = 0.0;
            for (int a = 0; a < 4; a++)
                if (v[a] >= 0) {
                    cb_v3_axpy(c, f.w[a], pt[a]);
                    wsum += f.w[a];
                }
            cb_v3_scale(c, c, 1.0 / wsum);
            cb_collider_velocity(col, t, c, f.vc);
        }
        if (grow((void **)&s->fp, &s->capfp, s->nfp + 1, sizeof *s->fp))
            return CB_FAIL(err, CB_ERR_NOMEM, "ipc: out of memory for %ld friction pairs", s->nfp + 1);
        s->fp[s->nfp++] = f;
    }
    return CB_OK;
}

/* The lagged pair friction of s->fp at x (the slips from the step's start x0, a box's or
 * capsule's slots moved by h vc): its value; with grad, its gradient added on the free
 * vertices; with A, its Hessian blocks (PSD) added to the system's values; with work, the
 * work over the step (length h, ending at t) of the impulses -(1/h) grad on the pinned
 * vertices of a pair (their pins' velocity: what a scripted pin does through the
 * friction) and on a box's or capsule's slots (vc); a static mesh collider does none. */
static double pair_friction(ipc_solver *s, const cb_world *w, const double (*x)[3], double (*grad)[3], double *A,
                            double h, double t, double *work)
{
    const cb_spring_solver *ss = &s->ss;
    double e = 0.0, eps = ss->friction_velocity * h;
    for (long k = 0; k < s->nfp; k++) {
        const cb_ipc_fpair *f = &s->fp[k];
        double d[4][3], g[12], M[3][3], dc[3];
        const double *dx[4];
        int moving = cb_v3_norm2(f->vc) > 0;
        cb_v3_scale(dc, f->vc, h);
        for (int a = 0; a < 4; a++) {
            dx[a] = f->v[a] < 0 && moving ? dc : NULL;
            if (f->v[a] < 0) continue;
            cb_v3_sub(d[a], x[f->v[a]], ss->x0[f->v[a]]);
            dx[a] = d[a];
        }
        e += cb_ipc_fpair_energy(f, dx, eps, grad || work ? g : NULL, A ? M : NULL);
        for (int a = 0; a < 4; a++) {
            int va = f->v[a];
            if (work && va < 0 && moving) *work += cb_v3_dot(g + 3 * a, f->vc) / h;
            if (va < 0) continue;
            if (grad && ss->unk[va] >= 0) cb_v3_add(grad[va], grad[va], g + 3 * a);
            if (work && ss->unk[va] < 0) {
                double u[3];
                cb_world_pin_velocity(w, va, t, u);
                *work += cb_v3_dot(g + 3 * a, u) / h;
            }
            for (int b = 0; A && b < 4; b++) add_block(s, A, va, f->v[b], &M[0][0], 3, f->w[a] * f->w[b]);
        }
    }
    return e;
}

/* Trial point: x = y + dx + alpha p on the free vertices. */
static void trial(ipc_solver *s, double alpha)
{
    const cb_spring_solver *ss = &s->ss;
    for (int u = 0; u < ss->nfree; u++) {
        int i = ss->vert[u];
        for (int k = 0; k < 3; k++) {
            s->dxt[i][k] = ss->dx[i][k] + alpha * s->p[i][k];
            s->xt[i][k] = ss->y[i][k] + s->dxt[i][k];
        }
    }
}

/* g at x (dx = x - y): the barrier with the colliders at s->tau, the friction at t. */
static double objective(ipc_solver *s, const cb_world *w, const double (*dx)[3], const double (*x)[3], double h,
                        double t)
{
    double e = barrier(s, w, x, s->tau, NULL, NULL, h, NULL) + cb_spring_friction(&s->ss, w, h, t, x, NULL, NULL, NULL) +
               pair_friction(s, w, x, NULL, NULL, h, t, NULL);
    return cb_spring_solver_objective(&s->ss, w, dx, x, h, e);
}

/* The slope of g along p at the trial point s->xt (its active set gathered; the colliders
 * at s->tau): grad g(x_t) . p over the free vertices, grad g into s->gt (ss->grad kept). */
static double trial_slope(ipc_solver *s, const cb_world *w, double h, double t1)
{
    cb_spring_solver *ss = &s->ss;
    const double (*xt)[3] = (const double (*)[3])s->xt;
    double (*keep)[3] = ss->grad, d = 0.0;
    ss->grad = s->gt;
    cb_spring_solver_gradient(ss, w, xt, h);
    cb_spring_friction(ss, w, h, t1, xt, ss->grad, NULL, NULL);
    barrier(s, w, xt, s->tau, ss->grad, NULL, h, NULL);
    pair_friction(s, w, xt, ss->grad, NULL, h, t1, NULL);
    ss->grad = keep;
    for (int u = 0; u < ss->nfree; u++) d += cb_v3_dot(s->gt[ss->vert[u]], s->p[ss->vert[u]]);
    return d;
}

/* The distance of pair q at x (time t; a collider pair's signed, less a sphere's or
 * capsule's radius) and, with xi, the offset it keeps. */
static double pair_dist(const ipc_solver *s, const cb_world *w, const ipc_pair *q, const double (*x)[3], double t)
{
    if (q->kind == PAIR_VT || q->kind == PAIR_EE) return sqrt(pair_d2(w->mesh, q, x));
    if (q->kind == PAIR_CEE || q->kind == PAIR_CTV) return kin_phi(s, w, q, x, NULL, 0.0, t);
    if (q->kind >= PAIR_MVT) return sqrt(mesh_pair_d2(s, w->mesh, q, x));
    if (q->kind == PAIR_COL) return cb_collider_query(&w->colliders[q->b], t, x[q->a], NULL, NULL);
    int v[4], nv = pair_verts(w->mesh, q, v);
    return sphere_phi(&w->colliders[q->b], t, nv, v, x, NULL);
}

/* The round-off of g near x: how far an evaluation of g (objective) can be from the exact
 * value, a bound within a small factor (tight_tolerance in the header: measured, the
 * scatter of g along a Newton step is 1/8 to 1/10 of it). A term computed from the
 * coordinates is off by its own rounding and by the rounding of the lengths, angles and
 * distances it is computed from, each off by about eps of itself: eps times the sum over
 * the terms of |term| + |d term / d q| |q| (q: a spring's length, a hinge's angle (~1) or
 * its stencil's sum sum_a |q_a| |x_a|, a pair's squared distance and its offset xi^2);
 * the inertia is computed from x - y, the friction's terms are taken at their value. */
static double objective_roundoff(ipc_solver *s, const cb_world *w, const double (*x)[3], double h, double t)
{
    const cb_spring_solver *ss = &s->ss;
    const cb_spring_set *sp = &ss->sp;
    const cb_bending *bd = &ss->bend;
    double h2 = h * h, inert = 0.0, el = 0.0, bar = 0.0;
    for (int u = 0; u < ss->nfree; u++) {
        int i = ss->vert[u];
        inert += w->mass[i] * (0.5 * cb_v3_norm2(ss->dx[i]) + h2 * fabs(cb_v3_dot(w->gravity, ss->dx[i])));
    }
    for (int i = 0; i < sp->n; i++) {
        double e[3];
        cb_v3_sub(e, x[sp->ij[i][0]], x[sp->ij[i][1]]);
        double l = cb_v3_norm(e), dl = fabs(l - sp->rest[i]);
        el += sp->k[i] * dl * (l + 0.5 * dl);
    }
    for (int i = 0; i < bd->n; i++) {
        const int *hv = bd->h[i];
        if (bd->kind == CB_BENDING_SHELLS) {
            double d = fabs(cb_dihedral_angle(x[hv[0]], x[hv[1]], x[hv[2]], x[hv[3]], NULL) - bd->theta0[i]);
            el += bd->kw[i] * d * (2.0 + d);
        } else {
            double v[3] = {0, 0, 0}, mag = 0.0;
            for (int a = 0; a < 4; a++) {
                cb_v3_axpy(v, bd->q[i][a], x[hv[a]]);
                mag += fabs(bd->q[i][a]) * cb_v3_norm(x[hv[a]]);
            }
            double vn = cb_v3_norm(v);
            el += vn * (mag + 0.5 * vn);
        }
    }
    for (long k = 0; k < s->npairs; k++) {
        const ipc_pair *q = &s->pairs[k];
        int self = q->kind == PAIR_VT || q->kind == PAIR_EE;
        double xi = self ? s->xi_self : s->xi_col, d = pair_dist(s, w, q, x, t), db;
        double b = cb_barrier(d * d - xi * xi, self ? s->shat_self : s->shat_col, &db, NULL);
        if (isfinite(b)) bar += fabs(b) + fabs(db) * (d * d + xi * xi);
    }
    double fr = fabs(cb_spring_friction(ss, w, h, t, x, NULL, NULL, NULL)) + fabs(pair_friction(s, w, x, NULL, NULL, h, t, NULL));
    return DBL_EPSILON * (inert + h2 * el + s->kappa * bar + fr);
}

/* kappa at the start of a step: the gradient balance clamped to [kappa_min, kappa_max]
 * (the active set of x gathered, ss->grad = grad of g without the barrier). */
static void init_kappa(ipc_solver *s, const cb_world *w, const double (*x)[3], double t)
{
    if (s->kappa_fixed > 0) {
        s->kappa = s->kappa_fixed;
        return;
    }
    s->kappa = s->kappa_min;
    if (!s->npairs) return;
    double (*gb)[3] = s->dxt; /* scratch */
    memset(gb, 0, (size_t)w->nv * sizeof *gb);
    double keep = s->kappa;
    s->kappa = 1.0;
    barrier(s, w, x, t, gb, NULL, 0.0, NULL);
    s->kappa = keep;
    double num = 0.0, den = 0.0;
    for (int u = 0; u < s->ss.nfree; u++) {
        int i = s->ss.vert[u];
        num -= cb_v3_dot(gb[i], s->ss.grad[i]);
        den += cb_v3_norm2(gb[i]);
    }
    if (den > 0 && num / den > s->kappa) s->kappa = fmin(num / den, s->kappa_max);
}

/* The moving pins' share of mix (d grad g / d tau, see ipc_solve): the springs' and the
 * hinges' Hessian blocks between a free vertex and a moving pin, times the pin's rate pu
 * (the pairs' blocks are added in barrier). The springs' blocks as
 * cb_spring_solver_assemble makes them (exact or clamped with ss->spring_exact), the
 * hinges' exact or projected as there (cb_spring_solver_hinge_hessian). */
static void pin_mix(ipc_solver *s, const double (*x)[3], double h)
{
    const cb_spring_solver *ss = &s->ss;
    const cb_spring_set *sp = &ss->sp;
    double h2 = h * h;
    for (int k = 0; k < s->nmp_spring; k++) {
        int i = s->mp_spring[k], a = sp->ij[i][0], b = sp->ij[i][1];
        double e[3];
        cb_v3_sub(e, x[a], x[b]);
        double l = cb_v3_norm(e);
        if (!(l > 0)) continue;
        cb_v3_scale(e, e, 1.0 / l);
        double tr = 1.0 - sp->rest[i] / l;
        if (!ss->spring_exact) tr = fmax(0.0, tr);
        /* d grad_a / d x_b = -K, K = h^2 k ((1 - tr) e e^T + tr I) */
        for (int end = 0; end < 2; end++) {
            int f = end ? b : a, pn = end ? a : b;
            if (ss->unk[f] < 0) continue;
            double eu = cb_v3_dot(e, s->pu[pn]);
            for (int r = 0; r < 3; r++)
                s->mix[f][r] -= h2 * sp->k[i] * ((1.0 - tr) * e[r] * eu + tr * s->pu[pn][r]);
        }
    }
    for (int k = 0; k < s->nmp_hinge; k++) {
        int i = s->mp_hinge[k];
        const int *hv = ss->bend.h[i];
        double H[12][12];
        cb_spring_solver_hinge_hessian(ss, i, x, H);
        for (int a = 0; a < 4; a++) {
            if (ss->unk[hv[a]] < 0) continue;
            for (int b = 0; b < 4; b++) {
                if (ss->unk[hv[b]] >= 0) continue;
                for (int r = 0; r < 3; r++)
                    for (int c = 0; c < 3; c++) s->mix[hv[a]][r] += h2 * H[3 * a + r][3 * b + c] * s->pu[hv[b]][c];
            }
        }
    }
}

/* The first moving pin among the cloth vertices of pair q, or -1. */
static int pair_pin(const ipc_solver *s, const cb_world *w, const ipc_pair *q)
{
    int v[4], nv = pair_verts(w->mesh, q, v);
    for (int a = 0; a < nv; a++)
        if (s->ss.unk[v[a]] < 0 && pin_moves(w, v[a])) return v[a];
    return -1;
}

/* The pinned vertices with a scripted motion (IPC's Dirichlet nodes), the springs and
 * hinges that join one of them to a free vertex (their Hessian blocks carry the pins'
 * motion into the free vertices' Newton step, pin_mix) and the per-vertex rate pu. */
static int pins_init(ipc_solver *s, const cb_world *w, cb_error *err)
{
    const cb_spring_solver *ss = &s->ss;
    char *mv = cb_calloc((size_t)w->nv + 1, 1);
    if (!mv) return CB_FAIL(err, CB_ERR_NOMEM, "ipc: out of memory");
    for (int i = 0; i < w->nv && w->pinned; i++)
        if (pin_moves(w, i)) {
            mv[i] = 1;
            s->nmpin++;
        }
    if (!s->nmpin) {
        free(mv);
        return CB_OK;
    }
    s->mpin = cb_calloc((size_t)s->nmpin, sizeof *s->mpin);
    s->pin_end = cb_calloc((size_t)s->nmpin, sizeof *s->pin_end);
    s->pu = cb_calloc((size_t)w->nv, sizeof *s->pu);
    s->mp_spring = cb_calloc((size_t)ss->sp.n + 1, sizeof *s->mp_spring);
    s->mp_hinge = cb_calloc((size_t)ss->bend.n + 1, sizeof *s->mp_hinge);
    if (!s->mpin || !s->pin_end || !s->pu || !s->mp_spring || !s->mp_hinge) {
        free(mv);
        return CB_FAIL(err, CB_ERR_NOMEM, "ipc: out of memory for %d moving pins", s->nmpin);
    }
    for (int i = 0, k = 0; i < w->nv; i++)
        if (mv[i]) s->mpin[k++] = i;
    for (int i = 0; i < ss->sp.n; i++) {
        int a = ss->sp.ij[i][0], b = ss->sp.ij[i][1];
        if ((mv[a] && ss->unk[b] >= 0) || (mv[b] && ss->unk[a] >= 0)) s->mp_spring[s->nmp_spring++] = i;
    }
    for (int i = 0; i < ss->bend.n; i++) {
        int pin = 0, fr = 0;
        for (int a = 0; a < 4; a++) {
            pin |= mv[ss->bend.h[i][a]];
            fr |= ss->unk[ss->bend.h[i][a]] >= 0;
        }
        if (pin && fr) s->mp_hinge[s->nmp_hinge++] = i;
    }
    free(mv);
    return CB_OK;
}

/* The default barrier range: the thickness (1e-3 m without one), unless that would put
 * the cloth's own neighbours in range at rest. In a flat sheet the nearest pairs that share
 * no vertex are a vertex and the triangle across the opposite edge of one of its triangles,
 * that triangle's altitude apart; when the thickness + the range reaches the smallest rest
 * altitude, a sheet at rest would repel itself (about 45 pairs per vertex at 256 x 256 on
 * 1 m with thickness 2 mm: forces the shared model does not have, and a step of minutes).
 * Then the range is half the rest gap, (altitude - thickness) / 2: the barrier acts once
 * neighbours come halfway to the thickness (the thickness and the CCD, hence the
 * guarantee, unchanged). */
static double default_dhat(const cb_world *w)
{
    const cb_mesh *m = w->mesh;
    double dhat = w->thickness > 0 ? w->thickness : 1e-3, alt = INFINITY;
    for (int f = 0; f < m->nf; f++)
        for (int k = 0; k < 3; k++) {
            const double *a = m->x[m->f[f][k]], *b = m->x[m->f[f][(k + 1) % 3]], *c = m->x[m->f[f][(k + 2) % 3]];
            double e[3], d[3], n[3];
            cb_v3_sub(e, b, a);
            cb_v3_sub(d, c, a);
            cb_v3_cross(n, e, d);
            double le = cb_v3_norm(e);
            if (le > 0) alt = fmin(alt, cb_v3_norm(n) / le); /* c's distance from the line ab */
        }
    if (w->thickness > 0 && alt > w->thickness && w->thickness + dhat >= alt) dhat = 0.5 * (alt - w->thickness);
    return dhat;
}

static int ipc_create(const cb_world *w, const cb_params *p, void **self, cb_error *err)
{
    if (!w || !self) return CB_FAIL(err, CB_ERR_INPUT, "ipc: NULL argument");
    *self = NULL;
    ipc_solver *s = cb_calloc(1, sizeof *s);
    if (!s) return CB_FAIL(err, CB_ERR_NOMEM, "ipc: out of memory");
    cb_spring_solver *ss = &s->ss;
    ss->name = "ipc";
    cb_params q;
    int bending = 0;
    static const char *const factor_names[] = {"auto", "simplicial", "supernodal", NULL};
    int rc = cb_params_begin(p, &q, err);
    if (!rc) rc = cb_params_double(&q, "dhat", default_dhat(w), 1e-12, 1e3, &s->dhat,
                                   "barrier range (m): pairs closer than the thickness + dhat repel", err);
    if (!rc) rc = cb_params_double(&q, "kappa", 0.0, 0.0, 1e300, &s->kappa_fixed,
                                   "barrier stiffness (0: adaptive, IPC's supplement)", err);
    if (!rc) rc = cb_params_double(&q, "tolerance", 1e-4, 1e-300, 1e3, &s->tolerance,
                                   "stop when the Newton increment's largest entry / dt falls below this (m/s)", err);
    if (!rc) rc = cb_params_int(&q, "max_iterations", 500, 1, 1000000, &s->max_iterations,
                                "Newton iterations per step at most", err);
    double reuse = 0.0;
    if (!rc) rc = cb_params_double(&q, "hinge_reuse", IPC_HINGE_REUSE, 0.0, 1.0, &reuse,
                                   "reuse a hinge's Hessian while its shape changed by less than this fraction "
                                   "of its edge (0: every hinge at each assembly)", err);
    if (!rc) rc = cb_params_bool(&q, "self_collision", 1, &s->self_collision,
                                 "barrier between the cloth and itself", err);
    if (!rc) rc = cb_params_bool(&q, "mollifier", 1, &s->mollifier,
                                 "IPC's mollifier on nearly parallel edge-edge pairs", err);
    if (!rc) rc = cb_params_bool(&q, "sphere_edges", 1, &s->sphere_edges,
                                 "barrier also on the cloth's edges and triangles against spheres", err);
    if (!rc) rc = cb_params_bool(&q, "candidate_cache", 1, &s->cand_cache,
                                 "one tree query of the self candidates per step for all its gathers and CCDs "
                                 "(the same results; false: a query each)", err);
    if (!rc) rc = cb_params_double(&q, "friction_velocity", 1e-3, 1e-12, 1e3, &ss->friction_velocity,
                                   "eps_v (m/s): collider friction is static below this sliding speed", err);
    if (!rc) rc = cb_params_double(&q, "self_friction", 0.1, 0.0, 1e3, &s->self_friction,
                                   "Coulomb coefficient of the cloth with itself (lagged, on its barrier's pairs)", err);
    if (!rc) rc = cb_params_double(&q, "damping", 0.0, 0.0, 1.0, &ss->damping,
                                   "velocity damping per step: the prediction uses (1 - damping) v", err);
    if (!rc) rc = cb_params_choice(&q, "bending", cb_bending_names, CB_BENDING_SHELLS, &bending,
                                   "shells: the shared hinge energy; quadratic: Bergou et al. 2006 (flat rest); springs: a bend spring per hinge", err);
    if (!rc) rc = cb_params_choice(&q, "factor", factor_names, 0, &ss->factor,
                                   "CHOLMOD factorization: auto, simplicial or supernodal", err);
    if (!rc) rc = cb_params_int(&q, "threads", 1, 0, 1024, &ss->threads,
                                "threads of CHOLMOD and BLAS in the solves (1: the calling thread; 0: one per core)", err);
    rc = cb_params_end(p, &q, rc, err);
    for (int c = 0; !rc && c < w->ncolliders; c++) {
        const cb_collider *col = &w->colliders[c];
        if (col->type == CB_COLLIDER_MESH) {
            const cb_trimesh_motion *mo = &col->mesh_motion;
            if (!col->mesh)
                rc = CB_FAIL(err, CB_ERR_INPUT, "collider %d is a triangle mesh whose geometry was not loaded "
                             "(cb_scene_load builds it)", c);
            else if (mo->kind == CB_TRIMESH_KEYFRAMES || cb_v3_norm(mo->velocity) > 0 ||
                     cb_v3_norm(mo->angular_velocity) > 0 || cb_v3_norm(col->velocity) > 0)
                rc = CB_FAIL(err, CB_ERR_INPUT, "collider %d is a moving triangle mesh: ipc takes static mesh "
                             "colliders only (the CCD and the Dirichlet step of a moving mesh are not implemented)", c);
            else
                s->nmc++;
        } else if (cb_v3_norm(col->velocity) > 0)
            s->moving = 1;
    }
    if (!rc) rc = cb_springs_build(w, bending == CB_BENDING_SPRINGS ? CB_SPRINGS_MODEL : CB_SPRINGS_STRETCH, &ss->sp, err);
    if (!rc) rc = cb_bending_init(&ss->bend, w, (cb_bending_kind)bending, err);
    if (!rc && reuse > 0) rc = cb_spring_solver_hinge_cache(ss, reuse, err);
    ss->hinge_exact = 1; /* the hinges exact in the exact pass, as the springs */
    if (rc) {
        if (rc != CB_ERR_NOMEM) cb_error_prefix(err, "ipc: ");
        ipc_destroy(s);
        return rc;
    }
    /* cb_spring_friction's second bound on eps is fms's (its penalty weight c): none here */
    ss->contact_stiffness = INFINITY;
    ss->contact_mode = CB_SPRING_CONTACT_CONSTRAINT;
    snprintf(s->model, sizeof s->model, "stretch springs / bending %s / contact barrier", cb_bending_names[bending]);
    s->xi_self = w->thickness;
    s->xi_col = 0.5 * w->thickness;
    s->shat_self = cb_barrier_shat(s->xi_self, s->dhat);
    s->shat_col = cb_barrier_shat(s->xi_col, s->dhat);
    const cb_mesh *m = w->mesh;
    int nv = w->nv;
    s->xt = cb_calloc((size_t)nv, sizeof *s->xt);
    s->dxt = cb_calloc((size_t)nv, sizeof *s->dxt);
    s->p = cb_calloc((size_t)nv, sizeof *s->p);
    s->gt = cb_calloc((size_t)nv, sizeof *s->gt);
    s->hc = cb_calloc((size_t)nv + 1, sizeof *s->hc);
    s->fbound = cb_calloc((size_t)nv + 1, 1);
    s->frev = cb_calloc((size_t)nv + 1, 1);
    s->frev_now = cb_calloc((size_t)nv + 1, 1);
    ss->fric_bound = s->fbound;
    s->rest_l2 = cb_calloc((size_t)m->ne + 1, sizeof *s->rest_l2);
    for (int i = 0; i < nv; i++) /* a moving pin needs the mix too */
        if (pin_moves(w, i)) s->moving |= 2;
    s->mix = s->moving ? cb_calloc((size_t)nv, sizeof *s->mix) : NULL;
    int kins = 0; /* boxes or capsules: their edge and triangle pairs need vphi */
    for (int c = 0; c < w->ncolliders; c++) kins |= kin_nedges(&w->colliders[c]) > 0;
    s->vphi = kins ? cb_calloc((size_t)nv + 1, sizeof *s->vphi) : NULL;
    s->vp_row = cb_calloc((size_t)nv + 1, sizeof *s->vp_row); /* zero: the pattern has no pair yet */
    rc = s->xt && s->dxt && s->p && s->gt && s->hc && s->rest_l2 && s->vp_row && s->fbound && s->frev && s->frev_now &&
                 (s->mix || !s->moving) && (s->vphi || !kins)
             ? CB_OK
             : CB_FAIL(err, CB_ERR_NOMEM, "ipc: out of memory for %d vertices", nv);
    if (!rc && ((s->self_collision && m->nf > 1) || (s->nmc > 0 && m->nf > 0))) {
        rc = cb_bvh_create(m, CB_BV_AABB, &s->bvh, err);
        if (!rc) rc = cb_bvh_build(s->bvh, (const double (*)[3])w->state.x, 0.0, err);
        if (!rc) rc = cb_bvh_result_create(&s->res, err);
        s->ccref = cb_calloc((size_t)nv, sizeof *s->ccref);
        s->cclo = cb_calloc((size_t)nv, sizeof *s->cclo);
        s->cchi = cb_calloc((size_t)nv, sizeof *s->cchi);
        s->ccdisp = cb_calloc((size_t)nv, sizeof *s->ccdisp);
        s->ccr = cb_calloc((size_t)nv, sizeof *s->ccr);
        s->ccpm = cb_calloc((size_t)nv, sizeof *s->ccpm);
        s->ccw = cb_calloc((size_t)nv, sizeof *s->ccw);
        if (!rc && !(s->ccref && s->cclo && s->cchi && s->ccdisp && s->ccr && s->ccpm && s->ccw))
            rc = CB_FAIL(err, CB_ERR_NOMEM, "ipc: out of memory for %d vertices", nv);
    }
    if (!rc && s->nmc > 0) {
        int nmc = s->nmc;
        s->nmc = 0;
        s->mc = cb_calloc((size_t)nmc, sizeof *s->mc);
        rc = s->mc ? cb_bvh_result_create(&s->mres, err) : CB_FAIL(err, CB_ERR_NOMEM, "ipc: out of memory");
        /* the cloth's tree is refitted with (xi_self + dhat) / 2 in gather: the collider's
         * margin makes the two sum to xi_col + dhat */
        double margin = fmax(0.0, s->xi_col + s->dhat - 0.5 * (s->xi_self + s->dhat));
        for (int c = 0; !rc && c < w->ncolliders; c++) {
            if (w->colliders[c].type != CB_COLLIDER_MESH) continue;
            ipc_mesh_col *mc = &s->mc[s->nmc++];
            mc->collider = c;
            mc->m = cb_trimesh_collider_mesh(w->colliders[c].mesh);
            mc->x = cb_calloc((size_t)mc->m->nv + 1, sizeof *mc->x);
            if (!mc->x) {
                rc = CB_FAIL(err, CB_ERR_NOMEM, "ipc: out of memory for mesh collider %d", c);
                break;
            }
            cb_trimesh_collider_positions(w->colliders[c].mesh, 0.0, mc->x);
            rc = cb_bvh_create(mc->m, CB_BV_AABB, &mc->bvh, err);
            if (!rc) rc = cb_bvh_build(mc->bvh, (const double (*)[3])mc->x, margin, err);
        }
    }
    if (!rc) rc = cb_spring_solver_setup(ss, w, 3, "ipc: the Hessian M + h^2 H + kappa B", err);
    if (!rc) rc = pins_init(s, w, err);
    if (!rc && ss->nfree > 0) rc = seed_pattern(s, w, err);
    if (!rc && ss->nfree > 0) {
        s->cg = cb_calloc((size_t)15 * ss->nfree, sizeof *s->cg);
        if (!s->cg) rc = CB_FAIL(err, CB_ERR_NOMEM, "ipc: out of memory for %d vertices", nv);
    }
    if (rc) {
        ipc_destroy(s);
        return rc;
    }
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY}, msum = 0.0;
    for (int i = 0; i < nv; i++) {
        for (int k = 0; k < 3; k++) {
            lo[k] = fmin(lo[k], w->state.x[i][k]);
            hi[k] = fmax(hi[k], w->state.x[i][k]);
        }
        msum += w->mass[i];
    }
    for (int e = 0; e < m->ne; e++) {
        double d[3];
        cb_v3_sub(d, m->x[m->e[e][1]], m->x[m->e[e][0]]);
        s->rest_l2[e] = cb_v3_norm2(d);
    }
    double dl[3];
    cb_v3_sub(dl, hi, lo);
    s->bbox = cb_v3_norm(dl);
    double s0 = 1e-16 * s->bbox * s->bbox, d2b;
    if (!(s0 > 0) || s0 >= s->shat_self) s0 = 0.5 * s->shat_self;
    cb_barrier(s0, s->shat_self, NULL, &d2b);
    s->kappa_min = 1e11 * (nv > 0 ? msum / nv : 0.0) / (4.0 * s0 * d2b);
    s->kappa_max = 100.0 * s->kappa_min;
    /* the initial state must be feasible: no pair at or inside its xi */
    ipc_pair bad;
    double bad_d;
    rc = gather(s, w, (const double (*)[3])w->state.x, w->state.t, &bad, &bad_d, err);
    if (!rc && bad.kind >= 0) {
        char what[200];
        describe(s, &bad, bad_d, what, sizeof what);
        rc = CB_FAIL(err, CB_ERR_INPUT, "ipc: the initial state is not intersection-free with the thickness: %s; "
                     "a barrier method cannot start there (move the cloth apart or lower cloth.thickness)", what);
    }
    if (rc) {
        ipc_destroy(s);
        return rc;
    }
    *self = s;
    return CB_OK;
}

/* The prescribed motion (the translating colliders', the moving pins') could not reach
 * the step's end t1: the error naming the pin (or the colliders) and the pair that
 * limited the last CCD step. */
static int stall_error(const ipc_solver *s, const cb_world *w, const double (*x)[3], double t1, cb_error *err)
{
    char what[200] = "no pair (the iterations ran out)";
    int pin = -1;
    if (s->lim.kind >= 0) {
        describe(s, &s->lim, pair_dist(s, w, &s->lim, x, s->tau), what, sizeof what);
        pin = pair_pin(s, w, &s->lim);
    }
    if (pin >= 0)
        return CB_FAIL(err, CB_ERR_INTERNAL, "ipc: pinned vertex %d cannot follow its prescribed motion to t = %.9g s "
                       "without a crossing: it stopped at t = %.9g s, held by %s (the pin is driven through the cloth "
                       "or a collider, which cannot make room)", pin, t1, s->tau, what);
    return CB_FAIL(err, CB_ERR_INTERNAL, "ipc: the colliders%s could not reach their pose at the step's end t = %.9g s "
                   "(stopped at t = %.9g s, %.3g s short; the last step limited by %s: the cloth has no room to move "
                   "out of their way, or the steps towards it stalled)", s->nmpin ? " and pins" : "", t1, s->tau,
                   t1 - s->tau, what);
}

/* The lagged friction's Newton step through a cone's tip. Beyond its static zone (slip
 * y > eps) a vertex's friction term is mu Lambda |u|: its Hessian has no curvature along
 * the slip, so where static friction should hold the vertex, Newton's step carries the
 * slip through zero to the other side, and back the next iteration (a 2-cycle the line
 * search can only cut short: alpha 0.002-0.01 for 15 iterations, 88 in one step of the
 * 16 x 16 projectile_20). A vertex whose full step p reverses its slip (u(x) . u(x + p) <
 * 0, ending beyond eps) takes for the rest of the step the Hessian mu Lambda f1(y)/y P
 * (cb_spring_friction with ss.fric_bound): the curvature of the quadratic
 * mu Lambda (f0(y) + f1(y) (|u'|^2 - y^2) / (2 y)), which lies above f0(|u'|) everywhere
 * (f0(sqrt z) is concave in z: f1(y)/y falls), so its Newton steps shrink the slip towards
 * the static zone from the side it is on (iteratively reweighted least squares) instead of
 * overshooting. The other vertices keep the exact Hessian (a sliding vertex converges
 * quadratically with it, linearly with the bound's). An iteration's reversals count
 * (frev) only once its step is accepted (friction_reversals_count): an iteration redone
 * at the same x after its line search failed (with reused hinge blocks) counted its
 * reversals twice before, and a vertex that reversed once took the bound for the rest of
 * the step. */
static void friction_reversals(ipc_solver *s, const cb_world *w, const double (*x)[3], double h, double t1)
{
    const cb_spring_solver *ss = &s->ss;
    for (int u = 0; u < ss->nfree && ss->nfric > 0; u++) {
        int i = ss->vert[u];
        s->frev_now[i] = 0;
        if (s->frev[i] >= 2 || !(ss->fn[i] > 0) || !(w->colliders[ss->fcol[i]].friction > 0)) continue;
        double u0[3], u1[3], x1[3];
        cb_v3_add(x1, x[i], s->p[i]);
        cb_spring_friction_slip(ss, w, h, t1, i, x[i], u0);
        double eps = cb_spring_friction_slip(ss, w, h, t1, i, x1, u1);
        int rev = cb_v3_dot(u0, u1) < 0 && cb_v3_norm(u1) > eps;
        s->frev_now[i] = (unsigned char)rev;
        s->fbound[i] = rev || s->frev[i] + rev >= 2;
    }
}

/* The accepted iteration's reversals into the step's count (friction_reversals). */
static void friction_reversals_count(ipc_solver *s)
{
    const cb_spring_solver *ss = &s->ss;
    for (int u = 0; u < ss->nfree && ss->nfric > 0; u++) {
        int i = ss->vert[u];
        s->frev[i] = (unsigned char)(s->frev[i] + s->frev_now[i]);
        s->frev_now[i] = 0;
    }
}

/* The line search's step beyond the Newton step. Each pair's barrier Hessian is
 * projected to PSD (step 2): where the barrier curves down along p (a vertex sliding off
 * an edge or a corner it is held from: b' < 0 times the distance's positive curvature
 * there) the model is stiffer than g, the accepted alpha = 1 falls short of the minimum
 * along p, and Newton creeps: on the 16 x 16 projectile_20, 70 iterations of one step at
 * alpha = 1 whose increments shrank by ~0.8 each (or grew: g concave along p), the
 * barrier's true curvature along p -2e-13 where the model put +2.5e-13. When Newton
 * converges only linearly (slow) and the Newton step was taken whole, the parabola through
 * g, its slope and g(alpha) measures the curvature along p; while it is below half the
 * model's (-slope / 2) the step is extended to that parabola's minimiser (4 alpha when it
 * has none, at most 4 alpha), capped by the CCD of the longer segment (the same rule as
 * step 5) and kept when g falls further, at most 3 times (64 p). *alpha, *gt: the
 * accepted step and g there; the active set is gathered at the point taken. */
static int extend_step(ipc_solver *s, const cb_world *w, double h, double t1, double g, double slope, double *alpha,
                       double *gt, cb_error *err)
{
    const double (*cx)[3] = (const double (*)[3])w->state.x;
    double a = *alpha, ga = *gt;
    ipc_pair bad;
    double bad_d;
    int moved = 0, rc = CB_OK; /* moved: s->xt, dxt or the active set are no longer a's */
    for (int ext = 0; ext < 3; ext++) {
        double c = (ga - g - slope * a) / (a * a);
        if (!(c < 0.25 * -slope)) break; /* the model's curvature c_model = -slope / 2 */
        double target = c > 0 ? fmin(-slope / (2.0 * c), 4.0 * a) : 4.0 * a;
        if (!(target > 1.5 * a)) break;
        /* the CCD of x -> x + target p (it overwrites s->xt) */
        for (int i = 0; i < w->nv; i++) cb_v3_scale(s->p[i], s->p[i], target);
        double frac = 0.0;
        moved = 1;
        rc = ccd_step(s, w, cx, t1, 0.0, &frac, err);
        for (int i = 0; i < w->nv; i++) cb_v3_scale(s->p[i], s->p[i], 1.0 / target);
        if (rc) return rc;
        double at = frac * target;
        if (!(at > 1.2 * a)) break;
        trial(s, at);
        rc = gather(s, w, (const double (*)[3])s->xt, t1, &bad, &bad_d, err);
        if (rc) return rc;
        double g2 = bad.kind < 0 ? objective(s, w, (const double (*)[3])s->dxt, (const double (*)[3])s->xt, h, t1)
                                 : INFINITY;
        if (!(g2 < ga && g2 <= g + 1e-4 * at * slope)) break;
        a = at;
        ga = g2;
        moved = 0;
    }
    if (moved) { /* back to a's point and its active set */
        trial(s, a);
        rc = gather(s, w, (const double (*)[3])s->xt, t1, &bad, &bad_d, err);
        if (rc) return rc;
    }
    *alpha = a;
    *gt = ga;
    return CB_OK;
}

/* The path of a step for the audit (core/solver.h, set_path_knots). ipc does not move
 * from x_n to x_{n+1} on the chord between them: it moves through its accepted Newton
 * iterates, each reached from the one before on the straight line its CCD certified
 * (step 5; the colliders advancing with the cloth while tau < t1). path_record keeps
 * every accepted iterate of a solve (ipc_solve clears them first, so the first step's
 * solve that is redone with the friction's lagged forces leaves none), path_emit hands
 * them to the audit as knots of every free vertex at the end of the step. */
static int path_record(ipc_solver *s, const cb_world *w, cb_error *err)
{
    if (!s->knot_fn) return CB_OK;
    long n = 3L * s->ss.nfree;
    if (grow((void **)&s->path, &s->cappath, (s->npath + 1) * n, sizeof *s->path) ||
        grow((void **)&s->path_tau, &s->cappath_tau, s->npath + 1, sizeof *s->path_tau))
        return CB_FAIL(err, CB_ERR_NOMEM, "ipc: out of memory for the path of %ld iterates", s->npath + 1);
    double *dst = s->path + s->npath * n;
    for (int u = 0; u < s->ss.nfree; u++) cb_v3_copy(dst + 3 * u, w->state.x[s->ss.vert[u]]);
    s->path_tau[s->npath++] = s->tau;
    return CB_OK;
}

/* The recorded iterates 1 .. K-1 as knots at times in (t0, t1) (iterate K is the step's
 * end). The times order the iterates; the audit's self pass needs nothing more, its
 * collider pass the colliders' time: the iterates that moved the colliders (tau_{j-1} <
 * t1) sit at t0 + (tau_j - t0)(1 - 1e-6), the colliders' time in the joint motion ipc
 * certified, scaled by 1 - 1e-6 to leave room before t1 for the iterates at tau = t1,
 * which share the rest evenly (there a collider is 1e-6 h |v| off its pose of t1: 20 nm
 * at 20 m/s and 1 ms, against the half thickness ipc keeps). A static scene's iterates
 * share (t0, t1) evenly. The velocity passed is the path's slope after the knot. The
 * knots stay 1e-9 h before t1 (the harness sets the end time to (n + 1) dt, which may
 * differ from t0 + h in the last bits). */
static void path_emit(ipc_solver *s, double t0, double t1)
{
    long K = s->npath, n = 3L * s->ss.nfree;
    if (!s->knot_fn || K < 2) return;
    const double shrink = 1.0 - 1e-6;
    long k1 = 0; /* iterates 1 .. k1 moved the colliders */
    while (s->moving && k1 < K && (k1 == 0 ? t0 : s->path_tau[k1 - 1]) < t1) k1++;
    double ta = k1 > 0 ? t0 + (s->path_tau[k1 - 1] - t0) * shrink : t0, prev = t0;
    double *times = s->path_tau; /* overwritten in place: tau_j is read before T_j is written */
    for (long j = 1; j <= K; j++) {
        double T = j <= k1 ? t0 + (times[j - 1] - t0) * shrink : ta + (t1 - ta) * (double)(j - k1) / (double)(K - k1);
        if (j == K) T = t1;
        /* strictly increasing (the audit merges equal times into one) */
        if (!(T > prev)) T = nextafter(prev, INFINITY);
        times[j - 1] = prev = T;
    }
    for (long j = 1; j < K && times[j - 1] < t1 - 1e-9 * (t1 - t0); j++) {
        const double *xj = s->path + (j - 1) * n, *xn = s->path + j * n;
        double span = times[j] - times[j - 1];
        for (int u = 0; u < s->ss.nfree; u++) {
            double v[3];
            for (int k = 0; k < 3; k++) v[k] = (xn[3 * u + k] - xj[3 * u + k]) / span;
            s->knot_fn(s->knot_ctx, s->ss.vert[u], times[j - 1], xj + 3 * u, v);
        }
    }
}

/* The Newton iterations of a step from x = x_n (dx = x_n - y). Translating colliders
 * start at their pose of t_n (tau = t_n, where x_n is feasible) and advance to t1 with
 * the cloth: while tau < t1, an iteration prescribes the rest of their motion,
 * dtau = t1 - tau, solves the quadratic model for the cloth's response to it,
 * H p = -(grad g + mix dtau) (mix = d grad(kappa B) / dtau: the barrier carries the
 * cloth ahead of a collider, as the kinematic degrees of freedom of IPC's Dirichlet
 * step), and takes the largest step of the joint motion that the CCD allows (no Armijo
 * test: the potential itself changes with tau). From tau = t1 on, the plain Newton
 * iterations of the potential at t1; the step converges only there. A step that does
 * not converge within max_iterations, or whose line search cannot decrease g, fails
 * with the reason. */
/* grad g and H at x in one pass over the pairs (the springs' exact Hessian with exact,
 * else their clamped one) */
static void assemble(ipc_solver *s, const cb_world *w, const double (*x)[3], double h, double t1, int exact)
{
    cb_spring_solver *ss = &s->ss;
    ss->spring_exact = exact;
    cb_spring_solver_gradient(ss, w, x, h);
    memset(s->hc, 0, (size_t)ss->nfree * sizeof *s->hc);
    cb_spring_friction(ss, w, h, t1, x, ss->grad, s->hc, NULL);
    cb_spring_solver_assemble(ss, w, x, h, (const double (*)[3][3])s->hc);
    if (s->moving) memset(s->mix, 0, (size_t)w->nv * sizeof *s->mix);
    barrier(s, w, x, s->tau, ss->grad, cb_chol_values(ss->chol), h, NULL);
    pair_friction(s, w, x, ss->grad, cb_chol_values(ss->chol), h, t1, NULL);
    if (s->pin_phase) pin_mix(s, x, h);
}

/* r's preconditioned residual z = P^-1 r by the factor of the system (P: the matrix last
 * factored); returns r . z, *zinf = |z|_inf */
static int precondition(ipc_solver *s, const double *r, double *z, double *rz, double *zinf, cb_error *err)
{
    int n = 3 * s->ss.nfree;
    memcpy(cb_chol_rhs(s->ss.chol), r, (size_t)n * sizeof *r);
    const double *sol;
    int rc = cb_chol_solve(s->ss.chol, &sol, err);
    if (rc) return rc;
    *rz = 0.0;
    *zinf = 0.0;
    for (int i = 0; i < n; i++) {
        z[i] = sol[i];
        *rz += r[i] * z[i];
        *zinf = fmax(*zinf, fabs(z[i]));
    }
    return CB_OK;
}

/* ipc's convergence test on the increment of the assembled matrix A (its values) without
 * A's factorization, by the factor at hand (P): the matrix of the last iteration at the
 * iterate before (cg_first: the test at a new iterate), or the same iterate's with some
 * hinge blocks reused from before (the test redone with every hinge evaluated at x, Hinge
 * reuse in the header; started at P's increment, s->p). Near the solution, A - P is
 * small against P: conjugate gradients on A p = -grad g preconditioned by P converge by
 * the factor |P^-1 (A - P)| per iteration, and z = P^-1 r estimates the error A^-1 r of
 * each iterate p to that factor. The test passes here only when, after an iteration that
 * cut |z|_inf tenfold or more (the estimate's factor is small), |p|_inf + 2 |z|_inf is
 * below the tolerance times h and |z|_inf below 1% of it, and p is a descent direction
 * (the exact solve's increment is then below the tolerance too, unless the estimate were
 * off by more than twice); otherwise (the increment is near the tolerance or above it, A
 * is not positive definite along a direction, CG slow: at most 4 iterations) it returns 0
 * and the caller factors A, as before: the decisions of the exact test, and the results
 * bit for bit, without the factorizations of the test. On 1, s->p is the increment p
 * (the start of the redone test) and *pinf = |p|_inf; 0: undecided; < 0: error. */
static int cg_test(ipc_solver *s, const cb_world *w, double h, int from_p, double *pinf, cb_error *err)
{
    cb_spring_solver *ss = &s->ss;
    int n = 3 * ss->nfree;
    double *p = s->cg, *r = p + n, *z = r + n, *d = z + n, *q = d + n, lim = s->tolerance * h;
    for (int i = 0; i < n; i++) p[i] = from_p ? s->p[ss->vert[i / 3]][i % 3] : 0.0;
    if (from_p) cb_chol_multiply(ss->chol, p, q);
    for (int i = 0; i < n; i++) r[i] = -ss->grad[ss->vert[i / 3]][i % 3] - (from_p ? q[i] : 0.0);
    double rz, zinf;
    int rc = precondition(s, r, z, &rz, &zinf, err);
    if (rc) return rc;
    memcpy(d, z, (size_t)n * sizeof *d);
    for (int it = 0; it < 4; it++) {
        cb_chol_multiply(ss->chol, d, q);
        double dq = 0.0;
        for (int i = 0; i < n; i++) dq += d[i] * q[i];
        if (!(dq > 0) || !(rz > 0)) return 0;
        double a = rz / dq, rz1, zinf1, xinf = 0.0, slope = 0.0;
        for (int i = 0; i < n; i++) {
            p[i] += a * d[i];
            r[i] -= a * q[i];
            xinf = fmax(xinf, fabs(p[i]));
            slope -= p[i] * ss->grad[ss->vert[i / 3]][i % 3];
        }
        rc = precondition(s, r, z, &rz1, &zinf1, err);
        if (rc) return rc;
        if (!(zinf1 <= 0.1 * zinf)) return 0;
        if (xinf + 2.0 * zinf1 < lim && zinf1 <= 0.01 * lim && slope > 0) {
            if (!from_p) memset(s->p, 0, (size_t)w->nv * sizeof *s->p);
            for (int i = 0; i < n; i++) s->p[ss->vert[i / 3]][i % 3] = p[i];
            *pinf = xinf;
            return 1;
        }
        if (xinf - 2.0 * zinf1 >= lim) return 0;
        for (int i = 0; i < n; i++) d[i] = z[i] + rz1 / rz * d[i];
        rz = rz1;
        zinf = zinf1;
    }
    return 0;
}

static int ipc_solve(ipc_solver *s, cb_world *w, double h, double t1, cb_step_info *info, cb_lap_timer *lap,
                     int *iters_p, double *residual, cb_error *err)
{
    cb_spring_solver *ss = &s->ss;
    double (*x)[3] = w->state.x;
    const double (*cx)[3] = (const double (*)[3])x;
    ipc_pair bad;
    double bad_d;
    s->tau = s->moving ? w->state.t : t1;
    /* the moving pins start where the last step left them (IPC's Dirichlet step) */
    for (int k = 0; k < s->nmpin; k++) cb_v3_copy(x[s->mpin[k]], ss->x0[s->mpin[k]]);
    s->npath = 0;
    memset(s->fbound, 0, (size_t)w->nv);
    memset(s->frev, 0, (size_t)w->nv);
    memset(s->frev_now, 0, (size_t)w->nv);
    int rc = gather(s, w, cx, s->tau, &bad, &bad_d, err);
    if (rc) return rc;
    if (bad.kind >= 0) {
        char what[200];
        describe(s, &bad, bad_d, what, sizeof what);
        return CB_FAIL(err, CB_ERR_NUMERIC, "ipc: the start of the step at t = %g s is not feasible: %s", w->state.t,
                       what);
    }
    cb_lap_contact(lap, "broad_phase");
    cb_spring_solver_gradient(ss, w, cx, h);
    init_kappa(s, w, cx, s->tau);
    double g = objective(s, w, (const double (*)[3])ss->dx, cx, h, t1);
    int iters = 0, converged = 0, slow = 0;
    double prev_inf = INFINITY, step_inf = INFINITY, prev_min_s = s->min_s, s_small = 1e-18 * s->bbox * s->bbox;
    int stalled = 0, pressed = 0, fresh = 0; /* fresh: every cached hinge was evaluated at x */
    int floor_iters = 0;    /* iterations running at the round-off floor without progress */
    double best_inf = INFINITY; /* the smallest increment / h of the plain iterations */
    const cb_chol *pf_chol = NULL; /* the system whose factor is the exact matrix of the last iteration */
    int pf_n = 0;                  /* its factorizations then */
    while (iters < s->max_iterations) {
        if (iters > 0 && cb_interrupt_requested())
            return CB_FAIL(err, CB_ERR_INTERRUPTED, "ipc: interrupted by a signal in iteration %d", iters);
        double dtau = t1 - s->tau;
        /* the moving pins' rate: the rest of their motion over the rest of the step */
        s->pin_phase = s->nmpin > 0 && dtau > 0;
        for (int k = 0; k < s->nmpin; k++) {
            int i = s->mpin[k];
            for (int d = 0; d < 3; d++) s->pu[i][d] = s->pin_phase ? (s->pin_end[k][d] - x[i][d]) / dtau : 0.0;
        }
        rc = update_pattern(s, w, err);
        if (rc) return rc;
        /* grad g and H in one pass over the pairs; H with the springs' exact Hessian
         * first, the clamped one when that is not positive definite or gives no descent */
        double slope = 0.0, pinf = 0.0;
        int stale = -1; /* hinges reused from before this iteration (the second pass reuses the first's) */
        int exact = 1;
        /* near the solution (the last increment within ten times the tolerance), the test
         * at this iterate by cg_test on the last iteration's factor first (not after its
         * own factorization proved undecided: fresh) */
        int try_cg = !(dtau > 0) && !fresh && s->cg && pf_chol == ss->chol && pf_chol &&
                     cb_chol_factorizations(ss->chol) == pf_n && prev_inf < 10.0 * s->tolerance;
        for (; exact >= 0; exact--) {
            assemble(s, w, cx, h, t1, exact);
            if (stale < 0) stale = fresh ? 0 : ss->hinge_reused;
            fresh = 0;
            cb_lap(lap, "assembly");
            if (exact && try_cg) {
                rc = cg_test(s, w, h, 0, &pinf, err);
                if (rc < 0) return rc;
                cb_lap(lap, "solve");
                if (rc == 1) break;
            }
            rc = cb_spring_solver_factor(ss, w, h, err);
            if (rc == CB_ERR_NUMERIC && exact) { /* not a factorization used: no count, no message */
                cb_error_clear(err);
                continue;
            }
            if (rc) return rc;
            info->factorizations++;
            pf_chol = exact ? ss->chol : NULL;
            pf_n = cb_chol_factorizations(ss->chol);
            cb_lap(lap, "factor");
            double *B = cb_chol_rhs(ss->chol);
            for (int u = 0; u < ss->nfree; u++)
                for (int k = 0; k < 3; k++)
                    B[3 * u + k] = -ss->grad[ss->vert[u]][k] - (dtau > 0 ? dtau * s->mix[ss->vert[u]][k] : 0.0);
            const double *sol;
            rc = cb_chol_solve(ss->chol, &sol, err);
            if (rc) return rc;
            slope = 0.0;
            pinf = 0.0;
            memset(s->p, 0, (size_t)w->nv * sizeof *s->p);
            for (int u = 0; u < ss->nfree; u++)
                for (int k = 0; k < 3; k++) {
                    s->p[ss->vert[u]][k] = sol[3 * u + k];
                    slope += sol[3 * u + k] * ss->grad[ss->vert[u]][k];
                    pinf = fmax(pinf, fabs(sol[3 * u + k]));
                }
            for (int k = 0; k < s->nmpin && s->pin_phase; k++) /* the rest of the pins' motion */
                cb_v3_sub(s->p[s->mpin[k]], s->pin_end[k], x[s->mpin[k]]);
            if (!exact || slope < 0 || pinf == 0) break;
        }
        cb_lap(lap, "solve");
        step_inf = pinf / h;
        if (!(dtau > 0) && step_inf < s->tolerance && stale > 0) {
            /* converged with reused hinge blocks: the test is redone on the increment
             * of H with every hinge evaluated at x; by cg_test on the factor at hand
             * when the exact springs' matrix was factored, else (or undecided there) by
             * the factorization of the next pass, whose assembly then finds every hinge
             * in the cache (fresh) */
            cb_spring_solver_hinge_forget(ss);
            if (exact == 1 && s->cg) {
                assemble(s, w, cx, h, t1, 1);
                cb_lap(lap, "assembly");
                double pf = 0.0;
                rc = cg_test(s, w, h, 1, &pf, err);
                cb_lap(lap, "solve");
                if (rc < 0) return rc;
                if (rc == 1) {
                    step_inf = pf / h;
                    converged = 1;
                    break;
                }
                fresh = 1;
            }
            continue;
        }
        friction_reversals(s, w, cx, h, t1);
        if (!(dtau > 0) && step_inf < s->tolerance) {
            converged = 1;
            break;
        }
        /* converging only linearly: the model's curvature is off along p */
        slow = !(dtau > 0) && step_inf > 0.5 * prev_inf;
        double prev_keep = prev_inf;
        prev_inf = dtau > 0 ? INFINITY : step_inf;
        iters++;
        double amax, g_noise = -1.0; /* g_noise: objective_roundoff at x, once it is needed */
        rc = ccd_step(s, w, cx, s->tau, dtau, &amax, err);
        if (rc) return rc;
        cb_lap_contact(lap, "ccd");
        /* the prescribed motion stalled: in three iterations running the CCD let it
         * advance by less than 1e-9 of the rest, or stopped it with the pair in its way
         * less than 1e-9 of its offset from it (the gap shrinking tenfold each time): a
         * pin or collider driven through what cannot make room (checked after the step) */
        int blocked = dtau > 0 && amax < 1.0 && s->lim.kind >= 0 && /* by a pair of the prescribed motion */
                      (pair_pin(s, w, &s->lim) >= 0 || (s->lim.kind != PAIR_VT && s->lim.kind != PAIR_EE &&
                                                        (s->lim.kind < PAIR_MVT || s->lim.kind > PAIR_MTV)));
        ipc_pair blk = s->lim;
        stalled = dtau > 0 && amax < 1e-9 ? stalled + 1 : 0;
        if (stalled >= 3) return stall_error(s, w, cx, t1, err);
        double alpha = amax, gt = INFINITY, tau_t = s->tau;
        int accepted = 0, unjudged = 0; /* unjudged: the decrease along p is below g's round-off */
        for (int ls = 0; ls < 40 && alpha > 0; ls++) {
            trial(s, alpha);
            tau_t = dtau > 0 ? cb_ipc_time_after(s->tau, alpha, dtau, t1) : t1;
            for (int k = 0; k < s->nmpin && s->pin_phase; k++) { /* exactly at the target at t1 */
                int i = s->mpin[k];
                for (int d = 0; d < 3; d++) s->xt[i][d] = tau_t == t1 ? s->pin_end[k][d] : x[i][d] + alpha * s->p[i][d];
            }
            rc = gather(s, w, (const double (*)[3])s->xt, tau_t, &bad, &bad_d, err);
            if (rc) return rc;
            if (bad.kind < 0) {
                double keep = s->tau;
                s->tau = tau_t;
                gt = objective(s, w, (const double (*)[3])s->dxt, (const double (*)[3])s->xt, h, t1);
                s->tau = keep;
                int armijo = gt <= g + 1e-4 * alpha * slope;
                if (!(dtau > 0) && (ls > 0 || !armijo) && alpha * pinf <= ROUNDOFF_STEP * fmax(s->bbox, 1.0)) {
                    /* tight_tolerance: can g's values judge it? */
                    if (!(g_noise >= 0)) g_noise = objective_roundoff(s, w, cx, h, t1);
                    unjudged = alpha * -slope <= g_noise;
                    if (unjudged) /* Hager and Zhang's approximate Armijo test, on the slope at the trial */
                        armijo = gt <= g + g_noise && trial_slope(s, w, h, t1) <= (1.0 - 2e-4) * -slope;
                }
                if (dtau > 0 || armijo) {
                    accepted = 1;
                    break;
                }
            }
            alpha *= 0.5;
        }
        if (accepted && slow && !unjudged && !(dtau > 0) && alpha * pinf <= ROUNDOFF_STEP * fmax(s->bbox, 1.0)) {
            /* the two below compare values of g too */
            if (!(g_noise >= 0)) g_noise = objective_roundoff(s, w, cx, h, t1);
            unjudged = alpha * -slope <= g_noise;
        }
        /* when Newton converges only linearly (the Newton step oscillating about the
         * minimum across the distances' pieces, whose Hessians jump: the model's curvature
         * along p is off), the minimiser of the parabola through g, the slope and g at
         * alpha, when it is shorter and lower */
        if (accepted && slow && alpha > 0 && !unjudged) {
            double c = (gt - g - slope * alpha) / (alpha * alpha), a2 = c > 0 ? -slope / (2.0 * c) : alpha;
            if (a2 < 0.9 * alpha && a2 > 0.05 * alpha) {
                trial(s, a2);
                rc = gather(s, w, (const double (*)[3])s->xt, t1, &bad, &bad_d, err);
                if (rc) return rc;
                double g2 = bad.kind < 0 ? objective(s, w, (const double (*)[3])s->dxt, (const double (*)[3])s->xt, h, t1)
                                         : INFINITY;
                if (g2 < gt) {
                    alpha = a2;
                    gt = g2;
                } else { /* back to alpha's point */
                    trial(s, alpha);
                    rc = gather(s, w, (const double (*)[3])s->xt, t1, &bad, &bad_d, err);
                    if (rc) return rc;
                }
            }
        }
        if (accepted && slow && !(dtau > 0) && alpha == 1.0 && !unjudged) {
            rc = extend_step(s, w, h, t1, g, slope, &alpha, &gt, err);
            if (rc) return rc;
        }
        cb_lap(lap, "line_search");
        if (!accepted && stale > 0) {
            /* redo the iteration with every hinge evaluated at x before giving up */
            cb_spring_solver_hinge_forget(ss);
            rc = gather(s, w, cx, s->tau, &bad, &bad_d, err);
            if (rc) return rc;
            prev_inf = prev_keep;
            continue;
        }
        if (!accepted) {
            /* round-off: a step this small changes no position measurably */
            if (!(dtau > 0) && amax * pinf <= 1e-13 * fmax(s->bbox, 1.0)) {
                rc = gather(s, w, cx, s->tau, &bad, &bad_d, err);
                if (rc) return rc;
                converged = 1;
                break;
            }
            if (dtau > 0) return stall_error(s, w, cx, t1, err);
            if (unjudged) /* the slope at the trials no better than at x: the gradient's round-off */
                return CB_FAIL(err, CB_ERR_INTERNAL, "ipc: Newton's increment %.3g m/s at t = %g s is at the round-off of "
                               "the incremental potential and its gradient (no step along it lowers the slope, "
                               "iteration %d, tolerance %.3g m/s): the smallest tolerance this step allows is about "
                               "%.2g m/s", step_inf, w->state.t, iters, s->tolerance, 2.0 * step_inf);
            return CB_FAIL(err, CB_ERR_INTERNAL, "ipc: the line search could not decrease the incremental potential "
                           "in 40 halvings from the CCD step %.3g (iteration %d, Newton step %.3g m, slope %.3g) at t = %g s",
                           amax, iters, pinf, slope, w->state.t);
        }
        /* the round-off floor (tight_tolerance): increments that no longer shrink while the
         * Newton step's decrease is below g's round-off */
        if (!(dtau > 0) && step_inf > 0.99 * best_inf && pinf <= ROUNDOFF_STEP * fmax(s->bbox, 1.0)) {
            if (!(g_noise >= 0)) g_noise = objective_roundoff(s, w, cx, h, t1);
            floor_iters = -slope <= g_noise ? floor_iters + 1 : 0;
            if (floor_iters >= FLOOR_ITERS)
                return CB_FAIL(err, CB_ERR_INTERNAL, "ipc: Newton's increment stalls at %.3g m/s at t = %g s, above the "
                               "tolerance %.3g m/s, where the incremental potential and its gradient are at their "
                               "round-off (%d iterations without progress): the smallest tolerance this step allows "
                               "is about %.2g m/s", best_inf, w->state.t, s->tolerance, FLOOR_ITERS, 2.0 * best_inf);
        } else {
            floor_iters = 0;
        }
        if (!(dtau > 0)) best_inf = fmin(best_inf, step_inf);
        memcpy(x, s->xt, (size_t)w->nv * sizeof *x);
        memcpy(ss->dx, s->dxt, (size_t)w->nv * sizeof *ss->dx);
        s->tau = tau_t;
        friction_reversals_count(s);
        if (blocked) {
            double xi = blk.kind == PAIR_VT || blk.kind == PAIR_EE ? s->xi_self : s->xi_col;
            pressed = pair_dist(s, w, &blk, cx, s->tau) - xi < 1e-9 * xi ? pressed + 1 : 0;
        } else {
            pressed = 0;
        }
        if (pressed >= 3) return stall_error(s, w, cx, t1, err);
        g = gt;
        rc = path_record(s, w, err);
        if (rc) return rc;
        /* the active set of the accepted point is the last gathered */
        if (s->kappa_fixed <= 0 && prev_min_s < s_small && s->min_s < s_small && s->min_s < prev_min_s)
            s->kappa = fmin(s->kappa_max, 2.0 * s->kappa);
        prev_min_s = s->min_s;
    }
    *residual = step_inf;
    *iters_p = iters;
    if (!converged) {
        if (s->tau < t1) return stall_error(s, w, cx, t1, err);
        return CB_FAIL(err, CB_ERR_INTERNAL, "ipc: Newton did not converge in max_iterations = %d iterations at t = %g s "
                       "(the last increment / dt %.3g m/s, tolerance %.3g m/s)", s->max_iterations, w->state.t,
                       step_inf, s->tolerance);
    }
    return CB_OK;
}

double cb_ipc_time_after(double tau, double alpha, double dtau, double t1)
{
    if (alpha >= 1.0) return t1;
    double t = tau + alpha * dtau, ulp = nextafter(t1, INFINITY) - t1;
    return t1 - t <= CB_IPC_TIME_ULPS * ulp || (t == tau && dtau <= CB_IPC_TIME_STUCK_ULPS * ulp) ? t1 : t;
}

/* The lagged normal forces of the collider friction (IPC sec. 5): for every free vertex
 * in a collider's barrier range at x, the largest barrier force on it, kappa |b'(s) 2 phi| / h^2
 * (g is h^2 times an energy), its collider and that collider's normal, into the spring
 * solver's fn, fcol, fnrm (cb_spring_friction reads them), plus the shares of the edges'
 * and triangles' pairs against a sphere. The active set of x gathered. */
static void friction_lag(ipc_solver *s, const cb_world *w, const double (*x)[3], double h, double t)
{
    cb_spring_solver *ss = &s->ss;
    ss->nfric = 0;
    ss->lagged = 1;
    for (int u = 0; u < ss->nfree; u++) {
        ss->fn[ss->vert[u]] = 0.0;
        ss->fcol[ss->vert[u]] = -1;
    }
    for (long k = 0; k < s->npairs; k++) {
        const ipc_pair *q = &s->pairs[k];
        if (q->kind != PAIR_COL) continue;
        double phi, n[3], db, sv = collider_s(s, &w->colliders[q->b], t, x[q->a], &phi, n);
        cb_barrier(sv, s->shat_col, &db, NULL);
        double f = s->kappa * fabs(2.0 * phi * db) / (h * h);
        int i = q->a;
        if (!(f > ss->fn[i])) continue;
        if (!(ss->fn[i] > 0)) ss->nfric++;
        ss->fn[i] = f;
        ss->fcol[i] = q->b;
        cb_v3_copy(ss->fnrm[i], n);
    }
    /* an edge's or triangle's pair against a sphere (sphere_edges) carries part of the
     * load a resting cloth puts on it: its normal force, split over its vertices by the
     * barycentric weights of its closest point to the center, is added to theirs on the
     * same sphere (without it the friction saw only the vertices' pairs, a fraction of
     * the load: test_gauntlet's spinning sphere dragged the sheet with 1e-3 of the
     * co-rotation) */
    for (long k = 0; k < s->npairs; k++) {
        const ipc_pair *q = &s->pairs[k];
        if (q->kind != PAIR_ESPH && q->kind != PAIR_TSPH) continue;
        const cb_collider *col = &w->colliders[q->b];
        int v[4], nv = pair_verts(w->mesh, q, v);
        double wts[3] = {0, 0, 0}, phi = sphere_phi(col, t, nv, v, x, wts);
        if (!(phi > s->xi_col)) continue;
        double db, sv = phi * phi - s->xi_col * s->xi_col;
        cb_barrier(sv, s->shat_col, &db, NULL);
        double f = s->kappa * fabs(2.0 * phi * db) / (h * h);
        for (int a = 0; a < nv; a++) {
            int i = v[a];
            if (ss->unk[i] < 0 || !(wts[a] * f > 0)) continue;
            if (ss->fcol[i] == q->b) {
                ss->fn[i] += wts[a] * f;
                continue;
            }
            if (!(wts[a] * f > ss->fn[i])) continue; /* another collider's load is larger */
            double vphi, n[3];
            collider_s(s, col, t, x[i], &vphi, n);
            if (!(ss->fn[i] > 0)) ss->nfric++;
            ss->fn[i] = wts[a] * f;
            ss->fcol[i] = q->b;
            cb_v3_copy(ss->fnrm[i], n);
        }
    }
}

/* The free vertices' momentum made what the forces at x give. A solve to the tolerance
 * leaves a residual r = grad g at x; the free vertices' momentum then differs from the
 * impulses reported (gravity, attachments, damping, the barrier's and the friction's,
 * which the colliders' work is computed from) by sum r / h, which the self pairs' slow
 * convergence lets grow step after step (1.6e-4 M u^2 over 30 steps of
 * tests/test_health.c's plane under two sheets). Every free velocity is shifted by
 * -sum r / (h M_free): the momentum balance holds to round-off at any tolerance, so the
 * work reported is the colliders' impulse times their velocity, W = P . u; positions are
 * untouched (the shift is below the tolerance's size). ss->grad holds grad g at the
 * solution (the last iteration's). */
static void momentum_balance(ipc_solver *s, cb_world *w, double h)
{
    const cb_spring_solver *ss = &s->ss;
    double r[3] = {0, 0, 0}, mass = 0.0;
    for (int u = 0; u < ss->nfree; u++) {
        cb_v3_add(r, r, ss->grad[ss->vert[u]]);
        mass += w->mass[ss->vert[u]];
    }
    if (!(mass > 0)) return;
    for (int u = 0; u < ss->nfree; u++) cb_v3_axpy(w->state.v[ss->vert[u]], -1.0 / (h * mass), r);
}

static int ipc_step(void *self, cb_world *w, double dt, cb_step_info *info, cb_error *err)
{
    ipc_solver *s = self; /* arguments checked by cb_solver_step */
    cb_spring_solver *ss = &s->ss;
    double h = dt, t1 = w->state.t + h;
    double (*x)[3] = w->state.x, (*v)[3] = w->state.v;
    const double (*cx)[3] = (const double (*)[3])x;
    double imp[3] = {0, 0, 0};
    cb_lap_timer lap;
    cb_lap_start(&lap, info);
    cb_spring_solver_predict(ss, w, h, t1, imp);
    for (int k = 0; k < s->nmpin; k++) cb_v3_copy(s->pin_end[k], x[s->mpin[k]]); /* their targets at t1 */
    /* start at x_n: intersection-free, where y need not be */
    for (int u = 0; u < ss->nfree; u++) {
        int i = ss->vert[u];
        cb_v3_copy(x[i], ss->x0[i]);
        cb_v3_sub(ss->dx[i], x[i], ss->y[i]);
    }
    int iters = 0;
    double residual = NAN;
    if (ss->nfree > 0) {
        if (s->bvh) {
            int rc = cb_bvh_build(s->bvh, cx, 0.0, err);
            if (rc) return rc;
            /* a new topology: the candidates' cache is queried again at the step's
             * first gather, over boxes from each vertex's motion in the last step
             * widened by ccw (twice that prediction's miss, at least cand_min_widen:
             * set at the end of every step, below) */
            s->cc_valid = s->cc_built = 0;
            s->cc_on = s->cand_cache;
        }
        int rc = ipc_solve(s, w, h, t1, info, &lap, &iters, &residual, err);
        /* the first step in contact has no lagged normal forces for the friction: take
         * them from this solve and solve again from x_n (as newton does) */
        if (!rc && !ss->lagged) {
            friction_lag(s, w, cx, h, t1);
            rc = pair_friction_lag(s, w, cx, t1, err);
            if (!rc && (ss->nfric > 0 || s->nfp > 0)) {
                int it2 = 0;
                for (int u = 0; u < ss->nfree; u++) {
                    int i = ss->vert[u];
                    cb_v3_copy(x[i], ss->x0[i]);
                    cb_v3_sub(ss->dx[i], x[i], ss->y[i]);
                }
                rc = ipc_solve(s, w, h, t1, info, &lap, &it2, &residual, err);
                iters += it2;
            }
        }
        if (rc) return rc;
        if (s->ccdisp) { /* the cache's prediction for the next step from its miss in this one */
            double wmin = cand_min_widen(s);
            for (int i = 0; i < w->nv; i++) {
                double d[3], e[3];
                cb_v3_sub(d, x[i], ss->x0[i]);
                cb_v3_sub(e, d, s->ccdisp[i]);
                double wi = 2.0 * cb_v3_norm(e);
                s->ccw[i] = wi > wmin ? wi : wmin;
                cb_v3_copy(s->ccdisp[i], d);
            }
        }
        path_emit(s, w->state.t, t1);
    }
    for (int u = 0; u < ss->nfree; u++) {
        int i = ss->vert[u];
        for (int k = 0; k < 3; k++) v[i][k] = (1.0 - ss->damping) * v[i][k] + ss->dx[i][k] / h;
    }
    momentum_balance(s, w, h);
    double work = 0.0;
    cb_spring_solver_pin_impulse(ss, w, cx, h, t1, imp, &work);
    /* the barrier's impulse on the free vertices: -(1/h) kappa grad B; its work, and the
     * friction's at its lagged collider's velocity */
    memset(s->xt, 0, (size_t)w->nv * sizeof *s->xt);
    work += cb_spring_friction_work(ss, w, h, t1, cx, s->xt);
    memset(s->xt, 0, (size_t)w->nv * sizeof *s->xt);
    info->contact_energy = barrier(s, w, cx, t1, s->xt, NULL, h, &work) / (h * h); /* g is h^2 an energy */
    cb_spring_friction(ss, w, h, t1, cx, s->xt, NULL, NULL);
    pair_friction(s, w, cx, s->xt, NULL, h, t1, &work);
    for (int u = 0; u < ss->nfree; u++) cb_v3_axpy(imp, -1.0 / h, s->xt[ss->vert[u]]);
    info->external_work = work;
    friction_lag(s, w, cx, h, t1);
    int rc = pair_friction_lag(s, w, cx, t1, err);
    if (rc) return rc;
    for (int k = 0; k < 3; k++) info->external_impulse[k] = imp[k];
    info->solver_energy = cb_spring_solver_energy(ss, cx);
    info->contacts = (int)s->npairs;
    info->min_separation = isfinite(s->min_self) ? s->min_self : NAN;
    info->iterations = iters;
    info->residual = residual;
    cb_lap(&lap, "finish");
    return CB_OK;
}

/* The barrier energy kappa B / h^2 at the state before the first step of dt (core/solver.h,
 * initial_contact_energy): the active set gathered there and kappa as that step starts
 * with it (init_kappa's gradient balance with the step's prediction y = x_0 + (1 -
 * damping) dt v_0 and the moving pins where they start). What it fills (y, dx, grad, the
 * active set, kappa, tau) the first step fills again before using it, so the steps are
 * the same bit for bit. NaN when the state is not feasible (create refused it). */
static double ipc_initial_contact_energy(void *self, const cb_world *w, double dt)
{
    ipc_solver *s = self;
    cb_spring_solver *ss = &s->ss;
    const double (*x)[3] = (const double (*)[3])w->state.x;
    ipc_pair bad;
    double bad_d;
    cb_error e;
    s->tau = s->moving ? w->state.t : w->state.t + dt;
    if (s->bvh && cb_bvh_build(s->bvh, x, 0.0, &e)) return NAN;
    if (gather(s, w, x, s->tau, &bad, &bad_d, &e) || bad.kind >= 0) return NAN;
    for (int i = 0; i < w->nv; i++) {
        for (int k = 0; k < 3; k++)
            ss->y[i][k] = ss->unk[i] < 0 ? x[i][k] : x[i][k] + (1.0 - ss->damping) * dt * w->state.v[i][k];
        cb_v3_sub(ss->dx[i], x[i], ss->y[i]);
    }
    cb_spring_solver_gradient(ss, w, x, dt);
    init_kappa(s, w, x, s->tau);
    return barrier(s, w, x, s->tau, NULL, NULL, dt, NULL) / (dt * dt);
}

static int ipc_self_collision(const void *self) { return ((const ipc_solver *)self)->self_collision; }

static const char *ipc_model(const void *self) { return ((const ipc_solver *)self)->model; }

static void ipc_set_path_knots(void *self, cb_path_knot_fn fn, void *ctx)
{
    ipc_solver *s = self;
    if (!s) return;
    s->knot_fn = fn;
    s->knot_ctx = fn ? ctx : NULL;
    s->npath = 0;
}

const cb_solver_class cb_solver_ipc = {
    .name = "ipc",
    .summary = "Incremental Potential Contact: implicit Euler + log barrier, Newton with a CCD-capped line search",
    .flags = CB_SOLVER_STAGE_TIMES | CB_SOLVER_TOLERANCE | CB_SOLVER_MOVING_COLLIDERS | CB_SOLVER_COLLIDER_FRICTION,
    .bytes_per_vertex = 0,
    .create = ipc_create,
    .step = ipc_step,
    .destroy = ipc_destroy,
    .self_collision = ipc_self_collision,
    .model = ipc_model,
    .set_path_knots = ipc_set_path_knots,
    .initial_contact_energy = ipc_initial_contact_energy,
};
