/* solvers/step_contact.h — contact after an implicit step, shared by fms and newton.
 *
 * The implicit mass-spring solvers solve the step (with collider contact as a penalty
 * term of the objective unless `contact: projection`, solvers/spring_solver.h), then
 * resolve contact on the end-of-step positions x and velocities v — for the colliders a
 * safety net and the friction after an in-solve contact, the whole collider response
 * with `contact: projection`:
 *
 *  1. Self collision (vertex-triangle). The pairs of a step are the (vertex, triangle)
 *     pairs, vertex not in the triangle, whose distance from the vertex to the
 *     triangle's bounding box is at most (1 + 1e-6) self_distance at the positions the
 *     contact stage starts from, ordered by triangle then vertex: a superset of the
 *     pairs in contact that does not depend on how it is found. They come from a
 *     candidate cache built from the box-filtered answer of the contact library's
 *     spatial hash (contact/spatial_hash.h) within (1 + 1e-6) self_distance + delta:
 *     found with a dense grid of cells over the cloth's bounding box while it has at
 *     most 32 cells per vertex (plus 1024; cells of 1.25 mean edge lengths at rest), no
 *     hashing and a row of cells one range of vertices, the same pairs in the same
 *     order (solvers/self_grid.h: its boxes and vertex tests on vectors;
 *     tests/test_step_contact.c), a build without cache box-filtered triangle by
 *     triangle as it is found, else by the hash itself; kept while, in every
 *     coordinate, the displacements of the vertices since the build span less than
 *     delta (max - min over the vertices: a common translation of the whole cloth
 *     does not count, only relative motion changes a box distance; then no pair can
 *     have entered the box distance without being cached: each step filters the cache
 *     with the exact box test). delta = 8 x half that span for the step at the build,
 *     at least 4 self_distance; 0 (a build every step) when that exceeds the mean
 *     edge length (at rest when the grid made the last build, else at its positions) or
 *     the cache is off. Cached or not, the pairs are the same, in the
 *     same order, so the results are identical (tests/test_fms.c). A pair is first
 *     rejected when a lower bound on its distance (cb_step_contact_far) exceeds the
 *     thickness (exact: it changes no result, and skips most of the distance
 *     computations: a flat grid's pairs are mostly the opposite vertex of the
 *     neighbouring triangle, in the triangle's box); the bound is taken for all of a
 *     pass's pairs at its start, eight per vector (solvers/step_far.h, bit for bit the
 *     single pair's), and taken again for a pair an earlier pair of the pass has moved a
 *     vertex of; for each pair closer than the
 *     thickness the vertex is pushed to the side it was on at the start of the step (so a
 *     vertex that crossed a triangle within the step and ended closer than the thickness
 *     is pushed back), to a distance of `self_distance` along the triangle normal. The
 *     correction is split by inverse masses with the barycentric weights of the closest
 *     point (as in PBD), so it conserves linear momentum. Velocity: the relative normal
 *     velocity of an approaching pair is set to 0 (inelastic), and the relative
 *     tangential velocity is reduced by Coulomb friction (self_friction times the
 *     normal velocity change), with the same mass-weighted split (an internal impulse:
 *     momentum is conserved). Gauss-Seidel over the candidates, `self_iterations` passes.
 *  2. Colliders (so nothing ends inside a collider): every free vertex is projected out
 *     to `collider_offset` with the collider's restitution and friction
 *     (cb_world_resolve_collider_contact).
 *  3. When self collision is on and step 2 moved a vertex: the pairs of step 1 once more,
 *     a vertex that step 2 put on a collider taking no share of a correction that would
 *     move it towards that collider (its outward normal there), then step 2 again for the
 *     vertices this moved; the momentum such a pair's velocity change no longer conserves
 *     (the held vertex's share, and a pinned one's) is added to the collider impulse.
 *     Without it a layer pressed into a collider by the layer on top
 *     is put back on the collider's offset surface through that layer: both end on the
 *     same surface, or the lower one above (the three-sheet drop of the gauntlet, where
 *     the bottom sheet lies on the sphere; tests/test_step_contact.c). It moves nothing
 *     where no vertex on a collider is within the thickness of a triangle of another
 *     layer (the drape: the same bits as without it).
 *
 * What it does not promise (issue 33, README "Contact distances and friction"): it is
 * discrete, on the positions the stage starts from, so a vertex that goes through a
 * triangle and ends more than the thickness beyond it within one step is not seen (a
 * relative normal speed above 2 x thickness / dt can pass, depending on where the step
 * ends fall); and it has no edge-edge pairs, so two sheets whose edges cross without a
 * vertex meeting a triangle pass through each other. Liu et al. 2013 have no self
 * collision; this stage is ours.
 *
 * Nothing is allocated per step except when the candidate list grows.
 */
#ifndef CB_STEP_CONTACT_H
#define CB_STEP_CONTACT_H

#include "contact/bvh.h"   /* cb_pair_list */
#include "contact/colliders.h"
#include "core/error.h"
#include "core/world.h"
#include "solvers/step_far.h" /* cb_step_contact_far: the exact rejection before the distance test */

typedef struct cb_step_contact_def {
    double collider_offset;  /* m, distance kept from colliders */
    int self_collision;      /* 0 / 1 */
    double self_distance;    /* m, distance kept between a vertex and a triangle (thickness) */
    double self_friction;    /* Coulomb coefficient of cloth-cloth contact */
    int self_iterations;     /* Gauss-Seidel passes (>= 1) */
    int self_cache;          /* 1: candidate cache (above); 0: a spatial hash query every step */
} cb_step_contact_def;

typedef struct cb_step_contact cb_step_contact;

int cb_step_contact_create(const cb_world *w, const cb_step_contact_def *def, cb_step_contact **out,
                           cb_error *err);
void cb_step_contact_free(cb_step_contact **c);

/* Resolve contact on w->state.x / w->state.v at time t1 (end of the step); x0 are the
 * positions at the start of the step. Adds the collider impulse to impulse[3], its work
 * (each projection's impulse times the collider's surface velocity,
 * cb_world_resolve_collider_contact) to *work, and sets *contacts (vertex-collider
 * contacts + active self-contact pairs). */
int cb_step_contact_apply(cb_step_contact *c, cb_world *w, const double (*x0)[3], double t1,
                          double impulse[3], double *work, int *contacts, cb_error *err);

/* The self-contact pairs of positions x (x0: at the start of the step, for the cache
 * margin) as cb_step_contact_apply uses them (see above): valid until the next call.
 * m must be the mesh c was created for; self collision must be on. */
int cb_step_contact_candidates(cb_step_contact *c, const cb_mesh *m, const double (*x)[3], const double (*x0)[3],
                               const cb_pair_list **pairs, cb_error *err);
/* The vector width of the grid's vertex test (self_grid.h) and of the far bound
 * (step_far.h): 8, 4 or 1, capped by the CPU; returns the width now used (at create: the
 * widest). Every width gives the same pairs and results (for tests). width 0: the grid
 * one at a time, and each pair's far bound taken when the pair is used, not up front
 * with the stamps (the reference the up-front bounds are tested against). */
int cb_step_contact_set_width(cb_step_contact *c, int width);
/* Pairs whose far bound a pass took again since create, because an earlier pair of the
 * pass had moved one of their vertices (0 at width 0). */
long cb_step_contact_retaken(const cb_step_contact *c);
/* Spatial hash queries (cache builds) and candidate requests so far. */
void cb_step_contact_cache_stats(const cb_step_contact *c, long *builds, long *queries);
/* Of those builds, the ones the dense grid answered (the others: the hash). */
long cb_step_contact_grid_builds(const cb_step_contact *c);

/* 1 when this contact stage handles the cloth against itself (self_collision on and a
 * triangle mesh), else 0. */
int cb_step_contact_self_active(const cb_step_contact *c);

#endif
