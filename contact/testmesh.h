/* contact/testmesh.h — deterministic crumpled cloth and triangle soups for tests and
 * benchmarks of the contact library.
 *
 * Everything is drawn from a splitmix64 generator (Steele, Lea, Flood 2014) whose
 * state the caller owns, so the same state always gives the same mesh:
 *   state += 0x9E3779B97F4A7C15; z = state;
 *   z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9; z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
 *   z ^= z >> 31; uniform = (z >> 11) / 2^53  (in [0, 1)).
 *
 * Crumpled cloth: the positions of a flat grid in the xy plane displaced by six
 * sinusoidal modes sin(k . (u, w) + phase) with random direction, wave number
 * 2 pi (1 .. 3) (wavelengths 1/3 .. 1), phase, and a random amplitude in [-amp, amp]
 * per component: with amp ~ 0.1 on a unit grid it folds through itself.
 *
 * Triangle soups in the unit cube:
 *   disjoint  3 nf vertices; each triangle's corners are its centre (uniform in the
 *             cube) plus offsets uniform in [-spread, spread] per component;
 *   shared    nf/2 + 3 vertices uniform in the cube, triangles on random triples of
 *             them (a triangle whose perimeter exceeds 1.2 is rejected 9 times in 10,
 *             so most are local), no edge on two triangles (non-manifold edges and
 *             repeated triangles never occur); spread is not used.
 */
#ifndef CB_TESTMESH_H
#define CB_TESTMESH_H

#include <stdint.h>

#include "core/error.h"
#include "core/mesh.h"

/* The generator state for a small seed: seed * 0x9E3779B97F4A7C15 + 1. */
uint64_t cb_testmesh_seed(uint64_t seed);
/* Advances *state, returns a uniform number in [0, 1). */
double cb_testmesh_uniform(uint64_t *state);

/* An nx x ny vertex grid of size x size in the xy plane, its corner at the origin,
 * cells split by `diag`. */
int cb_testmesh_grid(int nx, int ny, double size, cb_diagonal diag, cb_mesh **out, cb_error *err);

/* The crumpled positions of m's vertices (from their x and y) with mode amplitude amp
 * (m), drawn from *state: *out is malloc'd [m->nv][3], the caller frees it. */
int cb_testmesh_crumple(const cb_mesh *m, double amp, uint64_t *state, double (**out)[3], cb_error *err);

/* A soup of nf triangles, disjoint (shared = 0) or on a pool of vertices (shared = 1),
 * drawn from *state. */
int cb_testmesh_soup(int nf, int shared, double spread, uint64_t *state, cb_mesh **out, cb_error *err);

#endif
