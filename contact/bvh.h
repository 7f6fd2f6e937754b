/* contact/bvh.h — bounding volume hierarchy over a mesh's triangles, with AABB or
 * k-DOP volumes (k = 14, 18, 26), for self queries, two-tree queries and
 * closest-triangle queries.
 *
 * Volumes. A k-DOP is the intersection of k/2 slabs lo_j <= d_j . x <= hi_j; an AABB
 * is the 6-DOP, so every kind runs through one code path with k/2 slab directions:
 *   AABB  (6): the axes (1,0,0) (0,1,0) (0,0,1)
 *   14-DOP   : the axes and the 4 cube diagonals (1,1,1) (1,1,-1) (1,-1,1) (-1,1,1)
 *   18-DOP   : the axes and the 6 face diagonals (1,1,0) (1,0,1) (0,1,1) (1,-1,0) (1,0,-1) (0,1,-1)
 *   26-DOP   : all 13 of them.
 * The directions are not normalised (small integers, so projections are exact sums);
 * inflating a volume by a margin r widens slab j by r |d_j| on each side, so the
 * inflated volume contains every point within distance r of the triangle.
 *
 * Guarantee: with every triangle volume inflated by margin r, two primitives
 * (points, edges or triangles of two triangles) at distance <= 2r in a self query
 * (r_A + r_B in a two-tree query) have overlapping triangle volumes, so their pair is
 * a candidate. For a cloth of thickness h, refit with margin h/2 to find every pair
 * closer than h.
 *
 * Build: top-down, splitting each node's triangles at the MEDIAN of their centroids
 * along the longest axis of the centroid bounds (a partial sort, O(n log n) overall;
 * the split index is rounded up to a multiple of 4 so leaves come out full), until at
 * most CB_BVH_LEAF_SIZE (4) triangles remain. The tree is balanced, nodes
 * sit in one flat array in pre-order (a child index is always larger than its
 * parent's), leaves hold 1..4 triangles. cb_bvh_build may be called again to re-split
 * after large deformations; like refit it does not allocate.
 * Refit: bottom-up over the flat array (reverse pre-order), no allocation. Swept
 * refit (x0, x1) gives each triangle the volume of its six vertex positions, which
 * contains the triangle at every x(t) = x0 + t (x1 - x0), t in [0,1] (a k-DOP is
 * convex).
 *
 * Queries never allocate except to grow the caller's reusable result lists. The
 * traversal is an explicit-stack dual descent (self: self(L), self(R), pair(L, R);
 * a pair descends into the node with more triangles), specialised per volume kind.
 * Deduplication of vertex and edge candidates is by OWNERSHIP: each vertex and each
 * edge is owned by one triangle (the lowest-numbered triangle containing it), and a
 * pair (vertex v, triangle t) is produced only from the triangle pair (owner(v), t);
 * likewise an edge pair only from (owner(ea), owner(eb)). Each candidate therefore
 * appears exactly once, with no sort. Because of this, the traversal visits triangle
 * pairs that share a vertex too (a vertex of one can still be near the other) and
 * filters shared primitives per candidate.
 *
 * The mesh must outlive the tree. Positions are passed to each call ([nv] xyz).
 */
#ifndef CB_BVH_H
#define CB_BVH_H

#include "core/error.h"
#include "core/mesh.h"

typedef enum {
    CB_BV_AABB = 6,
    CB_BV_KDOP14 = 14,
    CB_BV_KDOP18 = 18,
    CB_BV_KDOP26 = 26
} cb_bv_kind;

#define CB_BV_DEFAULT CB_BV_KDOP18
#define CB_BV_MAX_SLABS 13
#define CB_BVH_LEAF_SIZE 4

/* The k/2 slab directions of a kind (not normalised, see above); returns their number,
 * or 0 (and *dirs = NULL) when kind is not a cb_bv_kind. dirs may be NULL. */
int cb_bv_directions(cb_bv_kind kind, const double (**dirs)[3]);
/* "aabb", "kdop14", "kdop18", "kdop26", or NULL. */
const char *cb_bv_name(cb_bv_kind kind);

/* ---- growable pair lists (reused between calls; they only grow) ---- */

typedef struct cb_pair_list {
    int (*p)[2];     /* [n] pairs */
    long n, cap;
} cb_pair_list;

/* Make room for at least `need` pairs (keeps the content). 0 or CB_ERR_NOMEM. */
int cb_pair_list_reserve(cb_pair_list *l, long need);
/* Free the storage of a list embedded in a caller-owned struct and zero it. */
void cb_pair_list_release(cb_pair_list *l);

static inline int cb_pair_list_push(cb_pair_list *l, int a, int b)
{
    if (l->n == l->cap) {
        int rc = cb_pair_list_reserve(l, l->n + 1);
        if (rc) return rc;
    }
    l->p[l->n][0] = a;
    l->p[l->n][1] = b;
    l->n++;
    return 0;
}

/* ---- the tree ---- */

typedef struct cb_bvh cb_bvh;

/* Allocate a tree for mesh m (nothing built yet: call cb_bvh_build). */
int cb_bvh_create(const cb_mesh *m, cb_bv_kind kind, cb_bvh **out, cb_error *err);
void cb_bvh_free(cb_bvh **b);

/* (Re)build the topology from positions x and refit with `margin` (>= 0). No allocation.
 * Errors: NaN/Inf coordinates (naming the vertex), negative or non-finite margin. */
int cb_bvh_build(cb_bvh *b, const double (*x)[3], double margin, cb_error *err);
/* Recompute all volumes for new positions, keeping the topology. No allocation. */
int cb_bvh_refit(cb_bvh *b, const double (*x)[3], double margin, cb_error *err);
/* Swept volumes enclosing every triangle at x0, at x1 and in between. No allocation. */
int cb_bvh_refit_swept(cb_bvh *b, const double (*x0)[3], const double (*x1)[3], double margin,
                       cb_error *err);

cb_bv_kind cb_bvh_kind(const cb_bvh *b);
const cb_mesh *cb_bvh_mesh(const cb_bvh *b);
int cb_bvh_node_count(const cb_bvh *b);
/* Volume of node i (0 = root; i < node count) or of triangle t, as lo[k/2], hi[k/2]. */
int cb_bvh_node_volume(const cb_bvh *b, int i, double *lo, double *hi, cb_error *err);
int cb_bvh_triangle_volume(const cb_bvh *b, int t, double *lo, double *hi, cb_error *err);
/* Structural check, for tests: pre-order, every triangle in exactly one leaf of 1..4,
 * every node volume contains its children's and its triangles' volumes.
 * 0 or CB_ERR_INTERNAL naming the broken invariant. */
int cb_bvh_check(const cb_bvh *b, cb_error *err);

/* Ownership used for deduplication (see above): [nv] owning triangle of each vertex
 * (-1 for a vertex in no triangle), [ne] owning triangle of each edge, and [nf][3] the
 * edge index of (f[t][k], f[t][(k+1)%3]). */
const int *cb_bvh_vertex_owners(const cb_bvh *b);
const int *cb_bvh_edge_owners(const cb_bvh *b);
const int (*cb_bvh_triangle_edges(const cb_bvh *b))[3];

/* ---- queries ---- */

enum {
    CB_BVH_TT = 1,  /* triangle pairs with overlapping volumes (self: sharing no vertex) */
    CB_BVH_VT = 2,  /* (vertex of A, triangle of B), the vertex not in the triangle (self) */
    CB_BVH_TV = 4,  /* two-tree only: (triangle of A, vertex of B) */
    CB_BVH_EE = 8   /* (edge of A, edge of B), sharing no vertex (self) */
};

/* Every pair is (index in tree A, index in tree B); for a self query A = B, tt and ee
 * pairs are ordered (smaller, larger) and all vertex-triangle pairs are in vt. */
typedef struct cb_bvh_result {
    cb_pair_list tt, vt, tv, ee;
} cb_bvh_result;

int cb_bvh_result_create(cb_bvh_result **out, cb_error *err);
void cb_bvh_result_free(cb_bvh_result **r);

/* Self query: candidates from all pairs of distinct triangles whose volumes overlap.
 * `what` is an OR of CB_BVH_TT, CB_BVH_VT, CB_BVH_EE; the lists not asked for are
 * emptied. Order is deterministic (traversal order). */
int cb_bvh_self_query(const cb_bvh *b, unsigned what, cb_bvh_result *r, cb_error *err);
/* A filter for the self query's vertex-triangle and edge-edge candidates, applied where
 * the traversal produces each one (so the dropped ones are never stored):
 *  - proj ([nv][k/2], the caller's projections of each vertex on the tree's slab
 *    directions in cb_bv_directions order) and gap ([k/2]): a candidate is dropped when
 *    on some slab j the projections of its two primitives' vertices are more than
 *    gap[j] apart (lo_B - hi_A > gap[j] or lo_A - hi_B > gap[j]); proj NULL: no such test;
 *  - then keep(ctx, CB_BVH_VT, v, t) or keep(ctx, CB_BVH_EE, ea, eb), with the pair as it
 *    would be stored: 0 drops it; keep NULL keeps it.
 * The kept candidates come in the order of cb_bvh_self_query (its lists with the
 * dropped pairs taken out). For a caller that rejects most candidates (acm's distance
 * filter, before contact nearly all: mesh neighbours a little too far apart). */
typedef int (*cb_bvh_keep_fn)(void *ctx, unsigned kind, int a, int b);
typedef struct cb_bvh_filter {
    const double *proj;
    const double *gap;
    cb_bvh_keep_fn keep;
    void *ctx;
} cb_bvh_filter;
/* The self query through filter f (NULL: cb_bvh_self_query). A TT list is not filtered. */
int cb_bvh_self_query_filtered(const cb_bvh *b, unsigned what, const cb_bvh_filter *f, cb_bvh_result *r,
                               cb_error *err);
/* Two-tree query (e.g. cloth A vs a mesh collider B); both trees of the same kind.
 * `what`: CB_BVH_TT, CB_BVH_VT, CB_BVH_TV, CB_BVH_EE. */
int cb_bvh_pair_query(const cb_bvh *a, const cb_bvh *b, unsigned what, cb_bvh_result *r,
                      cb_error *err);

/* Visitors, for custom narrow phases (selfcheck.c uses them). fn is called for every
 * unordered pair of distinct triangles (self) or every (ta of A, tb of B) whose volumes
 * come within *radius of each other (per slab: gap_j <= *radius |d_j|, a lower bound on
 * their distance; radius 0 = overlap), INCLUDING self pairs that share vertices.
 * fn may lower *radius (branch and bound) and returns 0 to go on, or a nonzero value
 * that stops the traversal and is returned. */
typedef int (*cb_bvh_visit_fn)(void *ctx, int ta, int tb, double *radius);
int cb_bvh_self_visit(const cb_bvh *b, double radius, cb_bvh_visit_fn fn, void *ctx,
                      cb_error *err);
int cb_bvh_pair_visit(const cb_bvh *a, const cb_bvh *b, double radius, cb_bvh_visit_fn fn,
                      void *ctx, cb_error *err);

/* Closest triangle to point p among triangles within max_dist (INFINITY for no limit),
 * skipping triangles that contain vertex `exclude_vertex` (-1: none). x must be the
 * positions of the last build/refit (the volumes must contain the triangles).
 * Out: *tri (-1 if none within max_dist), *dist (INFINITY if none), closest (may be NULL).
 * Branch and bound, nearest child first; exact up to cb_point_triangle_distance2. */
int cb_bvh_closest(const cb_bvh *b, const double (*x)[3], const double p[3], double max_dist,
                   int exclude_vertex, int *tri, double *dist, double closest[3], cb_error *err);

#endif
