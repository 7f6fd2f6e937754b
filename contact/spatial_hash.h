/* contact/spatial_hash.h — spatial hashing for vertex-triangle candidates
 * (Teschner et al. 2003, "Optimized Spatial Hashing for Collision Detection of
 * Deformable Objects").
 *
 * A uniform grid of cubic cells of side `cell_scale` x the mean edge length at the
 * current positions is hashed into a table of P buckets (P = the smallest prime >= 2 nv):
 *   H(i, j, k) = fold32((i * 73856093) xor (j * 19349663) xor (k * 83492791)) mod P,
 * computed in unsigned 64-bit arithmetic, folded to 32 bits (high xor low half), the
 * remainder taken by multiplications (no division). The bucket mapping never changes
 * the answer: only the vertices whose cell matches exactly are candidates. Vertices are stored by bucket (a counting
 * sort, so no linked lists and no per-step allocation), each entry with a copy of its
 * position and cell so a bucket is scanned in contiguous memory; then each triangle's AABB,
 * inflated by `distance`, is scanned cell by cell and every vertex whose cell matches
 * exactly (hash collisions are filtered) and which is not a vertex of the triangle
 * becomes a candidate (vertex, triangle). Each pair appears at most once: a vertex
 * lies in one cell, and a triangle visits each cell of its box once.
 *
 * Guarantee: every (v, t) with v not in t and dist(v, t) <= distance is a candidate
 * (the candidate set is a superset of the true pairs within `distance`).
 *
 * The object is reusable between steps: nothing is allocated again while the vertex
 * count does not grow, except for growing the pair list.
 */
#ifndef CB_SPATIAL_HASH_H
#define CB_SPATIAL_HASH_H

#include <float.h>

#include "contact/bvh.h"   /* cb_pair_list */
#include "core/error.h"
#include "core/mesh.h"

typedef struct cb_spatial_hash cb_spatial_hash;

/* cell_scale > 0 multiplies the mean edge length (1 is Teschner's recommendation). */
int cb_spatial_hash_create(double cell_scale, cb_spatial_hash **out, cb_error *err);
void cb_spatial_hash_free(cb_spatial_hash **h);

/* Hash the vertices of m at positions x and collect the (vertex, triangle) candidates
 * within `distance` (>= 0). Errors: empty mesh, NaN/Inf coordinates (naming the
 * vertex), coordinates too large for the grid (|x| / cell >= 2^40). When every edge
 * has length 0 the cell size falls back to `distance`, or 1 if that is 0 too. */
int cb_spatial_hash_query(cb_spatial_hash *h, const cb_mesh *m, const double (*x)[3], double distance,
                          cb_error *err);

/* Box filter (off by default): with it on, a candidate (v, t) of a query must also
 * have x_v inside t's axis-aligned box inflated by `distance` (plus the same rounding
 * slack as the cell scan), and each triangle's candidates are sorted by vertex. The
 * answer is then a function of the positions and the distance only, not of the cell
 * size, and still contains every pair within `distance`. */
void cb_spatial_hash_set_box_filter(cb_spatial_hash *h, int on);

/* The rounding slack a query adds to its distance, for coordinates up to maxabs (the
 * inflated box must contain every point within the distance). */
static inline double cb_spatial_hash_slack(double distance, double maxabs)
{
    return distance * 1e-12 + 8 * DBL_EPSILON * maxabs;
}

/* Triangle f's axis-aligned box at x inflated by r: [lo, hi] per coordinate, as a query
 * computes it (a candidate of the box filter has lo <= x_v <= hi in every coordinate, r
 * the distance plus the query's rounding slack). */
static inline void cb_spatial_hash_tri_box(const double (*x)[3], const int f[3], double r, double lo[3], double hi[3])
{
    for (int k = 0; k < 3; k++) {
        double a = x[f[0]][k], b = x[f[1]][k], c = x[f[2]][k];
        double mn = a < b ? (a < c ? a : c) : (b < c ? b : c);
        double mx = a > b ? (a > c ? a : c) : (b > c ? b : c);
        lo[k] = mn - r;
        hi[k] = mx + r;
    }
}

/* The candidates of the last query, as (vertex, triangle), ordered by triangle. */
const cb_pair_list *cb_spatial_hash_pairs(const cb_spatial_hash *h);
/* Cell size and table size used by the last query. */
double cb_spatial_hash_cell_size(const cb_spatial_hash *h);
long cb_spatial_hash_table_size(const cb_spatial_hash *h);

#endif
