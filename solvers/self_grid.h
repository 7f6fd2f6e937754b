/* solvers/self_grid.h — the dense grid query of the self-contact candidates of
 * solvers/step_contact.c: cb_spatial_hash_query's answer with the box filter (every
 * (v, t), v not a vertex of t, with x_v inside t's axis-aligned box inflated by the
 * distance plus the hash's rounding slack, by triangle then vertex), found with a dense
 * grid of cells over the cloth's bounding box instead of hashed cells.
 *
 * The vertices are counting-sorted by cell every query (stable), their coordinates
 * copied in that order into three arrays (x, y, z), so a row of cells along x is one
 * contiguous range of vertices; each triangle's box then tests the vertices of the rows
 * it covers. The triangles go a block of 64 at a time through three short loops, so
 * that one triangle's steps overlap another's (one loop doing all of a triangle's steps
 * waited on each step's latency): their boxes, cells and nonempty rows (with AVX-512
 * eight triangles per vector: the points and the rows' first entries gathered; the
 * usual box, at most 2 x 2 rows of cells, without a branch on its extent); the vertex
 * tests of all the block's rows (eight vertices per AVX-512 vector, four per AVX2
 * vector); each triangle's pairs (the box test of a build without cache, the first
 * candidates' eight per AVX-512 vector, then by vertex). The vector code is compiled with a target attribute whatever the build's
 * -march and chosen at run time by the CPU; every width makes the same comparisons on
 * the same doubles (or an exact equivalent, stated where used), so the pairs are the
 * same (tests/test_step_contact.c runs every width the CPU has against a brute-force
 * oracle, and the stage's results against the scalar width). On the swinging 81 x 81
 * curtain a query tests ~8 vertices per triangle to find its one pair: 0.40-0.44 ms per
 * step for the stage (with the far bound of solvers/step_far.h) against 0.79-0.85 one
 * at a time (README "Benchmarks"). */
#ifndef CB_SELF_GRID_H
#define CB_SELF_GRID_H

#include "contact/bvh.h" /* cb_pair_list */
#include "core/error.h"
#include "core/mesh.h"

typedef struct cb_self_grid cb_self_grid;

/* A grid for a mesh of nv vertices with cells of size `cell` (> 0; the answer does not
 * depend on it). */
int cb_self_grid_create(int nv, double cell, cb_self_grid **out, cb_error *err);
void cb_self_grid_free(cb_self_grid **g);

/* The vector width of the vertex test: 8 (AVX-512), 4 (AVX2) or 1; `width` is capped by
 * what the CPU has (every width gives the same pairs). Returns the width now used. At
 * create: the widest the CPU has. */
int cb_self_grid_set_width(cb_self_grid *g, int width);

/* The pairs of m (nv as at create) at positions x within `distance` (above) into *pl,
 * and with filter2 >= 0 only those whose squared distance from x_v to t's (uninflated)
 * box is at most filter2. Returns 1 with the pairs, 0 when the grid does not apply (a
 * non-finite coordinate, or more than 32 cells per vertex plus 1024 in the bounding box:
 * the caller asks the hash), or an error (out of memory). */
int cb_self_grid_query(cb_self_grid *g, const cb_mesh *m, const double (*x)[3], double distance, double filter2,
                       cb_pair_list *pl, cb_error *err);

/* The squared distance from (px, py, pz) to the box [lo, hi]: per coordinate the gap
 * below lo or above hi (at most one is positive; the other adds +0), without branches. */
static inline double cb_self_grid_gap2(double px, double py, double pz, const double lo[3], const double hi[3])
{
    const double p[3] = {px, py, pz};
    double g2 = 0.0;
    for (int k = 0; k < 3; k++) {
        double below = lo[k] - p[k], above = p[k] - hi[k];
        double g = (below > 0.0 ? below : 0.0) + (above > 0.0 ? above : 0.0);
        g2 += g * g;
    }
    return g2;
}

/* The squared distance from p to the axis-aligned box of triangle (a, b, q): the box
 * test of the self-contact pairs (step_contact.h). */
static inline double cb_self_grid_box_dist2(const double *p, const double *a, const double *b, const double *q)
{
    double lo[3], hi[3];
    for (int k = 0; k < 3; k++) {
        lo[k] = a[k] < b[k] ? a[k] : b[k];
        hi[k] = a[k] < b[k] ? b[k] : a[k];
        lo[k] = q[k] < lo[k] ? q[k] : lo[k];
        hi[k] = q[k] > hi[k] ? q[k] : hi[k];
    }
    return cb_self_grid_gap2(p[0], p[1], p[2], lo, hi);
}

#endif
