/* contact/bvh.c — bounding volume hierarchy (AABB and k-DOP) over a mesh's triangles:
 * median-split build, allocation-free refit (static and swept), self / two-tree
 * candidate queries with ownership deduplication, visitors and a closest-triangle
 * query. See bvh.h for the design. */
#include "contact/bvh.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "contact/distance.h"

#define CB_BVH_INLINE static inline __attribute__((always_inline))

/* ---- slab directions ---- */

static const double dirs_aabb[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
static const double dirs_k14[7][3] = {
    {1, 0, 0}, {0, 1, 0}, {0, 0, 1},
    {1, 1, 1}, {1, 1, -1}, {1, -1, 1}, {-1, 1, 1}};
static const double dirs_k18[9][3] = {
    {1, 0, 0}, {0, 1, 0}, {0, 0, 1},
    {1, 1, 0}, {1, 0, 1}, {0, 1, 1}, {1, -1, 0}, {1, 0, -1}, {0, 1, -1}};
static const double dirs_k26[13][3] = {
    {1, 0, 0}, {0, 1, 0}, {0, 0, 1},
    {1, 1, 1}, {1, 1, -1}, {1, -1, 1}, {-1, 1, 1},
    {1, 1, 0}, {1, 0, 1}, {0, 1, 1}, {1, -1, 0}, {1, 0, -1}, {0, 1, -1}};

int cb_bv_directions(cb_bv_kind kind, const double (**dirs)[3])
{
    const double (*d)[3] = NULL;
    int n = 0;
    switch (kind) {
    case CB_BV_AABB: d = dirs_aabb; n = 3; break;
    case CB_BV_KDOP14: d = dirs_k14; n = 7; break;
    case CB_BV_KDOP18: d = dirs_k18; n = 9; break;
    case CB_BV_KDOP26: d = dirs_k26; n = 13; break;
    default: break;
    }
    if (dirs) *dirs = d;
    return n;
}

const char *cb_bv_name(cb_bv_kind kind)
{
    switch (kind) {
    case CB_BV_AABB: return "aabb";
    case CB_BV_KDOP14: return "kdop14";
    case CB_BV_KDOP18: return "kdop18";
    case CB_BV_KDOP26: return "kdop26";
    default: return NULL;
    }
}

/* ---- pair lists ---- */

int cb_pair_list_reserve(cb_pair_list *l, long need)
{
    CB_ASSERT(l != NULL);
    if (need <= l->cap) return 0;
    long cap = l->cap > 0 ? l->cap : 256;
    while (cap < need) {
        if (cap > (long)(SIZE_MAX / (4 * sizeof(int[2])))) return CB_ERR_NOMEM;
        cap *= 2;
    }
    void *p = cb_realloc(l->p, (size_t)cap * sizeof(int[2]));
    if (!p) return CB_ERR_NOMEM;
    l->p = p;
    l->cap = cap;
    return 0;
}

void cb_pair_list_release(cb_pair_list *l)
{
    if (!l) return;
    free(l->p);
    l->p = NULL;
    l->n = l->cap = 0;
}

int cb_bvh_result_create(cb_bvh_result **out, cb_error *err)
{
    if (!out) return CB_FAIL(err, CB_ERR_INPUT, "cb_bvh_result_create: out is NULL");
    *out = cb_calloc(1, sizeof **out);
    if (!*out) return CB_FAIL(err, CB_ERR_NOMEM, "out of memory allocating a BVH result");
    return 0;
}

void cb_bvh_result_free(cb_bvh_result **r)
{
    if (!r || !*r) return;
    cb_pair_list_release(&(*r)->tt);
    cb_pair_list_release(&(*r)->vt);
    cb_pair_list_release(&(*r)->tv);
    cb_pair_list_release(&(*r)->ee);
    free(*r);
    *r = NULL;
}

/* ---- the tree ---- */

typedef struct bvh_node {
    int first;   /* first slot of the node's triangles (contiguous in slot order) */
    int ntri;    /* number of triangles below */
    int right;   /* right child (the left child is node index + 1); -1 for a leaf */
    int leaf;    /* a leaf's block in lbv / lvid (leaves numbered in pre-order); -1 inside */
} bvh_node;

/* Triangle volumes are stored per leaf, structure of arrays: block L holds
 * lbv[L][j][lane] for j < 2 ns (lo slabs, then hi slabs) and lane < 4 (the leaf's
 * triangles in slot order; unused lanes hold the empty volume lo = +inf, hi = -inf and
 * are masked out anyway). One triangle is then tested against a whole leaf in a few
 * vector compares, without a branch per pair. */
#define LANES CB_BVH_LEAF_SIZE

struct cb_bvh {
    const cb_mesh *m;
    cb_bv_kind kind;
    int ns;                       /* slabs = k/2 */
    const double (*dir)[3];
    double dnorm[CB_BV_MAX_SLABS];
    int nf, nv, ne;
    int nnodes, built;
    double margin;
    bvh_node *node;               /* [2 nf] pre-order */
    double *nbv;                  /* [2 nf][2 ns] node volumes: lo[ns], hi[ns] */
    double *lbv;                  /* [nleaf][2 ns][4] triangle volumes per leaf (see above) */
    int nleaf;                    /* leaves of the tree (a function of nf only) */
    int nleaf_built;              /* build counter */
    int *spos;                    /* slot -> LANES * leaf + lane */
    int (*lvid)[3][LANES];        /* [nleaf] vertices of each leaf's triangles (-1: unused lane) */
    int *perm;                    /* slot -> triangle */
    int *slot;                    /* triangle -> slot */
    int (*sv)[3];                 /* slot -> its triangle's vertices */
    int (*sedge)[3];              /* slot -> its triangle's edges */
    unsigned char *sown;          /* slot -> owned vertices (bit k) and edges (bit 3 + k) */
    unsigned char *town;          /* the same per triangle */
    int *vowner, *eowner;         /* [nv], [ne] */
    int (*tedge)[3];              /* [nf] */
    double *vlo, *vhi;            /* [nv][ns] vertex projections (min/max over a sweep) */
    double (*cent)[3];            /* [nf] build workspace: centroids in slot order */
};

/* The volume of the triangle in slot s as lo[ns], hi[ns]. */
static void slot_volume(const cb_bvh *b, int s, double *out)
{
    const int pos = b->spos[s], w = 2 * b->ns;
    const double *bv = b->lbv + (size_t)(pos / LANES) * w * LANES + pos % LANES;
    for (int j = 0; j < w; j++) out[j] = bv[j * LANES];
}

void cb_bvh_free(cb_bvh **bp)
{
    if (!bp || !*bp) return;
    cb_bvh *b = *bp;
    free(b->node);
    free(b->nbv);
    free(b->lbv);
    free(b->spos);
    free(b->lvid);
    free(b->perm);
    free(b->slot);
    free(b->sv);
    free(b->sedge);
    free(b->sown);
    free(b->town);
    free(b->vowner);
    free(b->eowner);
    free(b->tedge);
    free(b->vlo);
    free(b->vhi);
    free(b->cent);
    free(b);
    *bp = NULL;
}

/* The size of the left part when a node of n > CB_BVH_LEAF_SIZE triangles is split: the
 * median, rounded up to a whole number of leaves so that leaves come out full. */
static int split_left(int n)
{
    int half = (n + 1) / 2;
    half = (half + CB_BVH_LEAF_SIZE - 1) / CB_BVH_LEAF_SIZE * CB_BVH_LEAF_SIZE;
    if (half >= n) half = n / 2;
    return half;
}

/* The number of leaves of a tree over n triangles: the shape of the median split
 * depends on the counts only, not on the positions. */
static int count_leaves(int n)
{
    if (n <= CB_BVH_LEAF_SIZE) return 1;
    int h = split_left(n);
    return count_leaves(h) + count_leaves(n - h);
}

int cb_bvh_create(const cb_mesh *m, cb_bv_kind kind, cb_bvh **out, cb_error *err)
{
    if (!out) return CB_FAIL(err, CB_ERR_INPUT, "cb_bvh_create: out is NULL");
    *out = NULL;
    if (!m) return CB_FAIL(err, CB_ERR_INPUT, "cb_bvh_create: mesh is NULL");
    const double (*dir)[3];
    int ns = cb_bv_directions(kind, &dir);
    if (ns == 0)
        return CB_FAIL(err, CB_ERR_INPUT, "bounding volume kind %d is not one of 6 (AABB), 14, 18, 26",
                       (int)kind);
    if (m->nf <= 0 || m->nv <= 0 || !m->f)
        return CB_FAIL(err, CB_ERR_INPUT, "cannot build a BVH over an empty mesh (%d vertices, %d triangles)",
                       m->nv, m->nf);
    if (m->nf > (1 << 29))
        return CB_FAIL(err, CB_ERR_INPUT, "mesh too large for the BVH (%d triangles)", m->nf);
    for (int t = 0; t < m->nf; t++)
        for (int k = 0; k < 3; k++)
            if (m->f[t][k] < 0 || m->f[t][k] >= m->nv)
                return CB_FAIL(err, CB_ERR_INPUT, "triangle %d: vertex index %d out of range [0, %d)",
                               t, m->f[t][k], m->nv);

    cb_bvh *b = cb_calloc(1, sizeof *b);
    if (!b) return CB_FAIL(err, CB_ERR_NOMEM, "out of memory allocating a BVH");
    b->m = m;
    b->kind = kind;
    b->ns = ns;
    b->dir = dir;
    for (int j = 0; j < ns; j++) b->dnorm[j] = sqrt(dir[j][0] * dir[j][0] + dir[j][1] * dir[j][1] + dir[j][2] * dir[j][2]);
    b->nf = m->nf;
    b->nv = m->nv;
    b->ne = m->ne > 0 ? m->ne : 0;
    size_t nf = (size_t)m->nf, nv = (size_t)m->nv;
    b->node = cb_calloc(2 * nf, sizeof *b->node);
    b->nbv = cb_calloc(2 * nf * 2 * (size_t)ns, sizeof(double));
    b->nleaf = count_leaves(m->nf);
    b->lbv = cb_calloc((size_t)b->nleaf * 2 * (size_t)ns * LANES, sizeof(double));
    b->spos = cb_calloc(nf, sizeof(int));
    b->lvid = cb_calloc((size_t)b->nleaf, sizeof *b->lvid);
    b->perm = cb_calloc(nf, sizeof(int));
    b->slot = cb_calloc(nf, sizeof(int));
    b->sv = cb_calloc(nf, sizeof *b->sv);
    b->sedge = cb_calloc(nf, sizeof *b->sedge);
    b->sown = cb_calloc(nf, 1);
    b->town = cb_calloc(nf, 1);
    b->vowner = cb_calloc(nv, sizeof(int));
    b->eowner = cb_calloc((size_t)(b->ne > 0 ? b->ne : 1), sizeof(int));
    b->tedge = cb_calloc(nf, sizeof *b->tedge);
    b->vlo = cb_calloc(nv * (size_t)ns, sizeof(double));
    b->vhi = cb_calloc(nv * (size_t)ns, sizeof(double));
    b->cent = cb_calloc(nf, sizeof *b->cent);
    if (!b->node || !b->nbv || !b->lbv || !b->spos || !b->lvid || !b->perm || !b->slot || !b->sv || !b->sedge || !b->sown || !b->town ||
        !b->vowner || !b->eowner || !b->tedge || !b->vlo || !b->vhi || !b->cent) {
        cb_bvh_free(&b);
        return CB_FAIL(err, CB_ERR_NOMEM, "out of memory allocating a BVH over %d triangles", m->nf);
    }

    /* ownership: the lowest-numbered triangle containing a vertex / an edge */
    for (int v = 0; v < m->nv; v++) b->vowner[v] = -1;
    for (int e = 0; e < b->ne; e++) b->eowner[e] = -1;
    for (int t = 0; t < m->nf; t++) {
        for (int k = 0; k < 3; k++) {
            int v = m->f[t][k], w = m->f[t][(k + 1) % 3];
            if (b->vowner[v] < 0) b->vowner[v] = t;
            int e = (b->ne > 0 && m->e) ? cb_mesh_find_edge(m, v, w) : -1;
            if (e < 0 || e >= b->ne) {
                int ne = b->ne;
                cb_bvh_free(&b);
                return CB_FAIL(err, CB_ERR_INPUT, "triangle %d: edge (%d, %d) is missing from the mesh's "
                               "edge list (%d edges)", t, v, w, ne);
            }
            b->tedge[t][k] = e;
            if (b->eowner[e] < 0) b->eowner[e] = t;
        }
    }
    for (int t = 0; t < m->nf; t++) {
        unsigned char own = 0;
        for (int k = 0; k < 3; k++) {
            if (b->vowner[m->f[t][k]] == t) own |= (unsigned char)(1u << k);
            if (b->eowner[b->tedge[t][k]] == t) own |= (unsigned char)(8u << k);
        }
        b->town[t] = own;
    }
    *out = b;
    return 0;
}

cb_bv_kind cb_bvh_kind(const cb_bvh *b) { CB_ASSERT(b != NULL); return b->kind; }
const cb_mesh *cb_bvh_mesh(const cb_bvh *b) { CB_ASSERT(b != NULL); return b->m; }
int cb_bvh_node_count(const cb_bvh *b) { CB_ASSERT(b != NULL); return b->nnodes; }
const int *cb_bvh_vertex_owners(const cb_bvh *b) { CB_ASSERT(b != NULL); return b->vowner; }
const int *cb_bvh_edge_owners(const cb_bvh *b) { CB_ASSERT(b != NULL); return b->eowner; }
const int (*cb_bvh_triangle_edges(const cb_bvh *b))[3] { CB_ASSERT(b != NULL); return (const int (*)[3])b->tedge; }

/* Project every vertex on the slab directions into out[nv][ns] (for the AABB the
 * projections are the coordinates themselves: out may then be skipped, see refit).
 * Fails on NaN/Inf, found with one branch-free pass (0 * x is NaN iff x is not finite). */
static int check_finite(const cb_bvh *b, const double (*x)[3], const char *what, cb_error *err)
{
    double acc = 0.0;
    for (int v = 0; v < b->nv; v++) acc += 0.0 * x[v][0] + 0.0 * x[v][1] + 0.0 * x[v][2];
    if (acc == 0.0) return 0;
    for (int v = 0; v < b->nv; v++) {
        const double *p = x[v];
        if (!(isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2])))
            return CB_FAIL(err, CB_ERR_INPUT, "%s: vertex %d has a non-finite coordinate (%g, %g, %g)",
                           what, v, p[0], p[1], p[2]);
    }
    return 0;
}

/* The projections, written out per kind in the same order of operations as
 * d0 x + d1 y + d2 z (so identical to it: products with 0 and +-1 are exact). */
CB_BVH_INLINE void project_corners(const double *p, double *o)
{
    o[0] = (p[0] + p[1]) + p[2];
    o[1] = (p[0] + p[1]) - p[2];
    o[2] = (p[0] - p[1]) + p[2];
    o[3] = (p[1] - p[0]) + p[2];
}

CB_BVH_INLINE void project_edges(const double *p, double *o)
{
    o[0] = p[0] + p[1];
    o[1] = p[0] + p[2];
    o[2] = p[1] + p[2];
    o[3] = p[0] - p[1];
    o[4] = p[0] - p[2];
    o[5] = p[1] - p[2];
}

static int project_vertices(const cb_bvh *b, const double (*x)[3], double *out, const char *what,
                            cb_error *err)
{
    int rc = check_finite(b, x, what, err);
    if (rc) return rc;
    const int ns = b->ns;
    for (int v = 0; v < b->nv; v++) {
        const double *p = x[v];
        double *o = out + (size_t)v * ns;
        o[0] = p[0];
        o[1] = p[1];
        o[2] = p[2];
        switch (b->kind) {
        case CB_BV_KDOP14: project_corners(p, o + 3); break;
        case CB_BV_KDOP18: project_edges(p, o + 3); break;
        case CB_BV_KDOP26: project_corners(p, o + 3); project_edges(p, o + 7); break;
        default: break;
        }
    }
    return 0;
}

/* Volumes bottom-up (reverse pre-order: children before parents), a leaf's triangle
 * volumes from the vertex bounds lo/hi ([nv][ns]) as the leaf comes up. */
CB_BVH_INLINE void refit_k(cb_bvh *b, const double *lo, const double *hi, const double *mj, const int ns)
{
    const int w = 2 * ns;
    for (int i = b->nnodes - 1; i >= 0; i--) {
        const bvh_node *n = &b->node[i];
        double *bv = b->nbv + (size_t)i * w;
        if (n->right < 0) {
            /* the leaf's triangle volumes into its block, then their union */
            double *a = b->lbv + (size_t)n->leaf * w * LANES;
            for (int l = 0; l < n->ntri; l++) {
                const int *t = b->sv[n->first + l];
                const double *l0 = lo + (size_t)t[0] * ns, *l1 = lo + (size_t)t[1] * ns, *l2 = lo + (size_t)t[2] * ns;
                const double *h0 = hi + (size_t)t[0] * ns, *h1 = hi + (size_t)t[1] * ns, *h2 = hi + (size_t)t[2] * ns;
                for (int j = 0; j < ns; j++) {
                    double p = l0[j] < l1[j] ? l0[j] : l1[j];
                    a[j * LANES + l] = (p < l2[j] ? p : l2[j]) - mj[j];
                    double c = h0[j] > h1[j] ? h0[j] : h1[j];
                    a[(ns + j) * LANES + l] = (c > h2[j] ? c : h2[j]) + mj[j];
                }
            }
            for (int j = 0; j < w; j++) bv[j] = a[j * LANES];
            for (int l = 1; l < n->ntri; l++)
                for (int j = 0; j < ns; j++) {
                    const double cl = a[j * LANES + l], ch = a[(ns + j) * LANES + l];
                    bv[j] = cl < bv[j] ? cl : bv[j];
                    bv[ns + j] = ch > bv[ns + j] ? ch : bv[ns + j];
                }
        } else {
            const double *a = b->nbv + (size_t)(i + 1) * w, *c = b->nbv + (size_t)n->right * w;
            for (int j = 0; j < ns; j++) {
                bv[j] = a[j] < c[j] ? a[j] : c[j];
                bv[ns + j] = a[ns + j] > c[ns + j] ? a[ns + j] : c[ns + j];
            }
        }
    }
}

static void refit_volumes(cb_bvh *b, const double *lo, const double *hi, double margin)
{
    double mj[CB_BV_MAX_SLABS];
    for (int j = 0; j < b->ns; j++) mj[j] = margin * b->dnorm[j];
    switch (b->ns) {
    case 3: refit_k(b, lo, hi, mj, 3); break;
    case 7: refit_k(b, lo, hi, mj, 7); break;
    case 9: refit_k(b, lo, hi, mj, 9); break;
    default: refit_k(b, lo, hi, mj, 13); break;
    }
}

static int check_margin(double margin, cb_error *err)
{
    if (!(margin >= 0.0) || !isfinite(margin))
        return CB_FAIL(err, CB_ERR_INPUT, "BVH margin must be finite and >= 0 (got %g)", margin);
    return 0;
}

int cb_bvh_refit(cb_bvh *b, const double (*x)[3], double margin, cb_error *err)
{
    if (!b || !x) return CB_FAIL(err, CB_ERR_INPUT, "cb_bvh_refit: tree or positions are NULL");
    if (!b->built) return CB_FAIL(err, CB_ERR_INPUT, "cb_bvh_refit: the tree has not been built");
    int rc = check_margin(margin, err);
    if (rc) return rc;
    if (b->ns == 3) {   /* AABB: the projections are the coordinates, [nv][3] like x */
        rc = check_finite(b, x, "BVH refit", err);
        if (rc) return rc;
        refit_volumes(b, &x[0][0], &x[0][0], margin);
    } else {
        rc = project_vertices(b, x, b->vlo, "BVH refit", err);
        if (rc) return rc;
        refit_volumes(b, b->vlo, b->vlo, margin);
    }
    b->margin = margin;
    return 0;
}

int cb_bvh_refit_swept(cb_bvh *b, const double (*x0)[3], const double (*x1)[3], double margin,
                       cb_error *err)
{
    if (!b || !x0 || !x1) return CB_FAIL(err, CB_ERR_INPUT, "cb_bvh_refit_swept: tree or positions are NULL");
    if (!b->built) return CB_FAIL(err, CB_ERR_INPUT, "cb_bvh_refit_swept: the tree has not been built");
    int rc = check_margin(margin, err);
    if (rc) return rc;
    rc = project_vertices(b, x0, b->vlo, "BVH swept refit (start positions)", err);
    if (!rc) rc = project_vertices(b, x1, b->vhi, "BVH swept refit (end positions)", err);
    if (rc) return rc;
    size_t n = (size_t)b->nv * b->ns;
    for (size_t i = 0; i < n; i++) {
        if (b->vhi[i] < b->vlo[i]) {
            double t = b->vhi[i];
            b->vhi[i] = b->vlo[i];
            b->vlo[i] = t;
        }
    }
    refit_volumes(b, b->vlo, b->vhi, margin);
    b->margin = margin;
    return 0;
}

/* Swap slots i and j of perm and of the slot-ordered centroids. */
static inline void swap_slots(int *perm, double (*cent)[3], int i, int j)
{
    int t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
    for (int k = 0; k < 3; k++) {
        double c = cent[i][k];
        cent[i][k] = cent[j][k];
        cent[j][k] = c;
    }
}

/* Partial sort of perm[lo, hi) so that perm[k] has the key it would have if sorted
 * (key = centroid coordinate `axis`), smaller keys before, larger after. cent is in
 * slot order (cent[s] is the centroid of triangle perm[s]) and moves along with perm,
 * so the scans read memory in order.
 *
 * Each round is Hoare's partition around the median of three,
 *     i = lo, j = hi - 1;
 *     while (i <= j) { while (key[i] < piv) i++; while (key[j] > piv) j--;
 *                      if (i <= j) swap(i++, j--); }
 * whose scans stop at unpredictable places (a branch miss per stop). The same swaps
 * and the same final i, j are found from two lists made without data-dependent
 * branches, over the keys as they are before the round: L, the positions with
 * key >= piv in increasing order, and R, those with key <= piv in decreasing order.
 * Between the scans the loop only touched positions it has passed, so its s-th swap is
 * (L[s], R[s]) as long as L[s] <= R[s]; when they cross, the scans stop at
 * i = min(L[s], R[s-1]) and j = max(R[s], L[s-1]) (the elements swapped last are the
 * sentinels). wl, wr: workspace of hi - lo ints each. */
static void select_kth(int *perm, double (*cent)[3], int axis, int lo, int hi, int k, int *wl, int *wr)
{
    while (hi - lo > 2) {
        int mid = lo + (hi - lo) / 2;
        double a = cent[lo][axis], b = cent[mid][axis], c = cent[hi - 1][axis];
        double piv = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        int nl = 0, nr = 0;
        for (int p = lo; p < hi; p++) {
            wl[nl] = p;
            nl += cent[p][axis] >= piv;
        }
        for (int p = hi - 1; p >= lo; p--) {
            wr[nr] = p;
            nr += cent[p][axis] <= piv;
        }
        int i, j;
        for (int s = 0;; s++) {   /* nl, nr >= 1: piv is one of the keys */
            const int l = s < nl ? wl[s] : hi, r = s < nr ? wr[s] : lo - 1;
            if (l <= r) {
                swap_slots(perm, cent, l, r);
                i = l + 1;
                j = r - 1;
                if (i > j) break;
            } else {
                i = s > 0 && wr[s - 1] < l ? wr[s - 1] : l;
                j = s > 0 && wl[s - 1] > r ? wl[s - 1] : r;
                break;
            }
        }
        /* [lo, j] <= piv, (j, i) == piv, [i, hi) >= piv */
        if (k <= j) hi = j + 1;
        else if (k >= i) lo = i;
        else return;
    }
    if (hi - lo == 2 && cent[lo][axis] > cent[lo + 1][axis]) swap_slots(perm, cent, lo, lo + 1);
}

static int build_rec(cb_bvh *b, int lo, int hi)
{
    int idx = b->nnodes++;
    bvh_node *n = &b->node[idx];
    n->first = lo;
    n->ntri = hi - lo;
    n->right = -1;
    n->leaf = -1;
    if (hi - lo <= CB_BVH_LEAF_SIZE) {
        n->leaf = b->nleaf_built++;
        return idx;
    }
    double cmin[3] = {INFINITY, INFINITY, INFINITY}, cmax[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int s = lo; s < hi; s++) {
        const double *c = b->cent[s];
        for (int k = 0; k < 3; k++) {   /* branch-free min / max (finite keys) */
            cmin[k] = c[k] < cmin[k] ? c[k] : cmin[k];
            cmax[k] = c[k] > cmax[k] ? c[k] : cmax[k];
        }
    }
    int axis = 0;
    for (int k = 1; k < 3; k++)
        if (cmax[k] - cmin[k] > cmax[axis] - cmin[axis]) axis = k;
    int mid = lo + split_left(hi - lo);
    /* slot and spos are written after the build: here they are select's workspace */
    select_kth(b->perm, b->cent, axis, lo, hi, mid, b->slot, b->spos);
    build_rec(b, lo, mid);
    n->right = build_rec(b, mid, hi);
    return idx;
}

int cb_bvh_build(cb_bvh *b, const double (*x)[3], double margin, cb_error *err)
{
    if (!b || !x) return CB_FAIL(err, CB_ERR_INPUT, "cb_bvh_build: tree or positions are NULL");
    int rc = check_margin(margin, err);
    if (rc) return rc;
    rc = project_vertices(b, x, b->vlo, "BVH build", err);
    if (rc) return rc;
    const int (*f)[3] = (const int (*)[3])b->m->f;
    for (int t = 0; t < b->nf; t++) {
        for (int k = 0; k < 3; k++)
            b->cent[t][k] = (x[f[t][0]][k] + x[f[t][1]][k] + x[f[t][2]][k]) * (1.0 / 3.0);
        b->perm[t] = t;
    }
    b->nnodes = 0;
    b->nleaf_built = 0;
    build_rec(b, 0, b->nf);
    CB_ASSERT(b->nnodes <= 2 * b->nf && b->nleaf_built == b->nleaf);
    for (int s = 0; s < b->nf; s++) {
        int t = b->perm[s];
        b->slot[t] = s;
        for (int k = 0; k < 3; k++) {
            b->sv[s][k] = f[t][k];
            b->sedge[s][k] = b->tedge[t][k];
        }
        b->sown[s] = b->town[t];
    }
    for (int i = 0; i < b->nnodes; i++) {
        const bvh_node *n = &b->node[i];
        if (n->right >= 0) continue;
        for (int l = 0; l < LANES; l++)
            for (int k = 0; k < 3; k++) b->lvid[n->leaf][k][l] = l < n->ntri ? b->sv[n->first + l][k] : -1;
        for (int l = 0; l < n->ntri; l++) b->spos[n->first + l] = LANES * n->leaf + l;
        double *blk = b->lbv + (size_t)n->leaf * 2 * b->ns * LANES;
        for (int l = n->ntri; l < LANES; l++)
            for (int j = 0; j < b->ns; j++) {
                blk[j * LANES + l] = INFINITY;
                blk[(b->ns + j) * LANES + l] = -INFINITY;
            }
    }
    b->built = 1;
    refit_volumes(b, b->vlo, b->vlo, margin);
    b->margin = margin;
    return 0;
}

int cb_bvh_node_volume(const cb_bvh *b, int i, double *lo, double *hi, cb_error *err)
{
    if (!b || !lo || !hi) return CB_FAIL(err, CB_ERR_INPUT, "cb_bvh_node_volume: NULL argument");
    if (!b->built || i < 0 || i >= b->nnodes)
        return CB_FAIL(err, CB_ERR_INPUT, "cb_bvh_node_volume: node %d not in [0, %d)", i, b->nnodes);
    const double *bv = b->nbv + (size_t)i * 2 * b->ns;
    memcpy(lo, bv, (size_t)b->ns * sizeof(double));
    memcpy(hi, bv + b->ns, (size_t)b->ns * sizeof(double));
    return 0;
}

int cb_bvh_triangle_volume(const cb_bvh *b, int t, double *lo, double *hi, cb_error *err)
{
    if (!b || !lo || !hi) return CB_FAIL(err, CB_ERR_INPUT, "cb_bvh_triangle_volume: NULL argument");
    if (!b->built || t < 0 || t >= b->nf)
        return CB_FAIL(err, CB_ERR_INPUT, "cb_bvh_triangle_volume: triangle %d not in [0, %d) or tree not built",
                       t, b->nf);
    double bv[2 * CB_BV_MAX_SLABS];
    slot_volume(b, b->slot[t], bv);
    memcpy(lo, bv, (size_t)b->ns * sizeof(double));
    memcpy(hi, bv + b->ns, (size_t)b->ns * sizeof(double));
    return 0;
}

static int contains(const double *outer, const double *inner, int ns)
{
    for (int j = 0; j < ns; j++)
        if (!(outer[j] <= inner[j]) || !(outer[ns + j] >= inner[ns + j])) return 0;
    return 1;
}

int cb_bvh_check(const cb_bvh *b, cb_error *err)
{
    if (!b) return CB_FAIL(err, CB_ERR_INPUT, "cb_bvh_check: tree is NULL");
    if (!b->built) return CB_FAIL(err, CB_ERR_INPUT, "cb_bvh_check: the tree has not been built");
    const int w = 2 * b->ns;
    if (b->nnodes < 1 || b->nnodes > 2 * b->nf)
        return CB_FAIL(err, CB_ERR_INTERNAL, "BVH: %d nodes for %d triangles", b->nnodes, b->nf);
    if (b->node[0].first != 0 || b->node[0].ntri != b->nf)
        return CB_FAIL(err, CB_ERR_INTERNAL, "BVH: the root does not cover all triangles");
    for (int s = 0; s < b->nf; s++)
        if (b->perm[s] < 0 || b->perm[s] >= b->nf || b->slot[b->perm[s]] != s)
            return CB_FAIL(err, CB_ERR_INTERNAL, "BVH: slot %d is not a permutation entry", s);
    for (int i = 0; i < b->nnodes; i++) {
        const bvh_node *n = &b->node[i];
        const double *bv = b->nbv + (size_t)i * w;
        if (n->right < 0) {
            if (n->ntri < 1 || n->ntri > CB_BVH_LEAF_SIZE)
                return CB_FAIL(err, CB_ERR_INTERNAL, "BVH: leaf %d holds %d triangles", i, n->ntri);
            for (int s = n->first; s < n->first + n->ntri; s++) {
                double tv[2 * CB_BV_MAX_SLABS];
                slot_volume(b, s, tv);
                if (!contains(bv, tv, b->ns))
                    return CB_FAIL(err, CB_ERR_INTERNAL, "BVH: leaf %d does not contain triangle %d", i,
                                   b->perm[s]);
            }
        } else {
            const bvh_node *l = &b->node[i + 1], *r;
            if (n->right <= i + 1 || n->right >= b->nnodes)
                return CB_FAIL(err, CB_ERR_INTERNAL, "BVH: node %d has right child %d (not pre-order)", i,
                               n->right);
            r = &b->node[n->right];
            if (l->first != n->first || r->first != n->first + l->ntri || l->ntri + r->ntri != n->ntri ||
                l->ntri < 1 || r->ntri < 1)
                return CB_FAIL(err, CB_ERR_INTERNAL, "BVH: node %d's children do not partition its triangles", i);
            if (!contains(bv, b->nbv + (size_t)(i + 1) * w, b->ns) ||
                !contains(bv, b->nbv + (size_t)n->right * w, b->ns))
                return CB_FAIL(err, CB_ERR_INTERNAL, "BVH: node %d does not contain its children", i);
        }
    }
    return 0;
}

/* ---- traversal ----
 *
 * One depth-first traversal with an explicit stack, force-inlined into a copy per slab
 * count (so the slab loops have a constant trip count) and per leaf action (so no
 * indirect call per pair). A self traversal treats a node paired with itself as "all
 * pairs below it" and expands it as self(L), self(R), pair(L, R), in that order (local
 * pairs first, which branch and bound relies on to find a small radius early). A pair
 * of nodes descends into the one with more triangles. The stack never holds more than
 * about 6 x depth entries; the median split keeps depth <= log2(nf) + 1. */

#define TRAV_STACK 512
#define TRAV_OVERFLOW INT_MIN

typedef struct trav trav;
struct trav {
    const cb_bvh *a, *b;
    int ns;
    double radius;
    double r[CB_BV_MAX_SLABS];         /* allowed gap per slab: radius |d_j| */
    void *ctx;
    int stop;                           /* the nonzero status that ended the traversal */
};

typedef int (*trav_leaf_fn)(trav *t, int sa, int sb);

static void trav_set_radius(trav *t, double radius)
{
    t->radius = radius;
    for (int j = 0; j < t->ns; j++) {
        double r = radius * t->a->dnorm[j];
        t->r[j] = r + fabs(r) * (4 * DBL_EPSILON);
    }
}

/* Do volumes p and q (lo[ns], hi[ns]) come within the per-slab gaps r? With
 * use_r = 0 (radius 0: plain overlap) r is not read. The three axis slabs are tested
 * branch-free first (they reject most pairs), the other k-DOP slabs with early exit. */
CB_BVH_INLINE int near(const double *p, const double *q, const int ns, const double *r, const int use_r)
{
    int ok;
    if (use_r)
        ok = (p[0] - r[0] <= q[ns]) & (q[0] - r[0] <= p[ns]) & (p[1] - r[1] <= q[ns + 1]) &
             (q[1] - r[1] <= p[ns + 1]) & (p[2] - r[2] <= q[ns + 2]) & (q[2] - r[2] <= p[ns + 2]);
    else
        ok = (p[0] <= q[ns]) & (q[0] <= p[ns]) & (p[1] <= q[ns + 1]) & (q[1] <= p[ns + 1]) &
             (p[2] <= q[ns + 2]) & (q[2] <= p[ns + 2]);
    if (ns == 3 || !ok) return ok;
    for (int j = 3; j < ns; j++) {
        double rj = use_r ? r[j] : 0.0;
        if (p[j] - rj > q[ns + j] || q[j] - rj > p[ns + j]) return 0;
    }
    return 1;
}

/* Two lanes at once (GCC/Clang vector extensions: one SSE2 register on x86-64); a leaf
 * block's four lanes are two of them. */
typedef double v2d __attribute__((vector_size(2 * sizeof(double))));
typedef long long v2l __attribute__((vector_size(2 * sizeof(double))));
typedef int v4i __attribute__((vector_size(4 * sizeof(int))));

CB_BVH_INLINE v2d load2(const double *p)
{
    v2d v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* near() of one volume p (element j at p[j * ps]) against the four lanes of a leaf
 * block q ([2 ns][4]): bit l set when p and lane l come within r. The same expressions
 * as near(p, q_l), so the same answers, lane by lane. */
CB_BVH_INLINE unsigned near4(const double *p, const int ps, const double *q, const int ns, const double *r,
                             const int use_r)
{
    v2l ok0 = {-1, -1}, ok1 = {-1, -1};
    for (int j = 0; j < ns; j++) {
        if (j == 3 && ns > 3 && !((ok0[0] | ok0[1]) | (ok1[0] | ok1[1]))) return 0;
        const double rj = use_r ? r[j] : 0.0;
        const double plo = use_r ? p[j * ps] - rj : p[j * ps], phi = p[(ns + j) * ps];
        const double *ql = q + j * LANES, *qh = q + (ns + j) * LANES;
        const v2d ql0 = use_r ? load2(ql) - rj : load2(ql), ql1 = use_r ? load2(ql + 2) - rj : load2(ql + 2);
        ok0 &= (plo <= load2(qh)) & (ql0 <= phi);
        ok1 &= (plo <= load2(qh + 2)) & (ql1 <= phi);
    }
    return (unsigned)((ok0[0] & 1) | (ok0[1] & 2) | (ok1[0] & 4) | (ok1[1] & 8));
}

/* Bit l set when lane l of leaf block lv shares a vertex with triangle v. */
CB_BVH_INLINE unsigned shared4(const int *v, const int (*lv)[LANES])
{
    v4i l0, l1, l2;
    memcpy(&l0, lv[0], sizeof l0);
    memcpy(&l1, lv[1], sizeof l1);
    memcpy(&l2, lv[2], sizeof l2);
    v4i sh = (l0 == v[0]) | (l0 == v[1]) | (l0 == v[2]) | (l1 == v[0]) | (l1 == v[1]) | (l1 == v[2]) |
             (l2 == v[0]) | (l2 == v[1]) | (l2 == v[2]);
    return (unsigned)((sh[0] & 1) | (sh[1] & 2) | (sh[2] & 4) | (sh[3] & 8));
}

/* The triangle pairs (s, lane of leaf block k) of one row, in lane order: m holds the
 * lanes that passed near4 at the current radius. When the leaf action lowers the radius
 * the rest of the row is tested again, so that a pair is visited exactly when its
 * volumes are near at the radius current when it comes up (as the scalar loop did). */
#define TRAV_ROW(sa_, first_b_, m_, retest_) do { \
        unsigned mm_ = (m_); \
        while (mm_) { \
            const int u_ = __builtin_ctz(mm_); \
            mm_ &= mm_ - 1; \
            const double rad_ = t->radius; \
            int rc_ = leaf(t, (sa_), (first_b_) + u_); \
            if (rc_) { t->stop = rc_; return; } \
            if (use_r && t->radius != rad_) mm_ &= (retest_); \
        } \
    } while (0)

/* Node pairs on the stack have already passed the volume test (except the root's
 * self entry); a pushed pair (i, i) in a self traversal means all pairs below i.
 * With tt set (self only) the pairs of triangles sharing a vertex are dropped before
 * the leaf action. */
CB_BVH_INLINE void traverse(trav *t, const int ns, const int self, const int use_r, const int tt,
                            trav_leaf_fn leaf)
{
    const cb_bvh *A = t->a, *B = t->b;
    const int w = 2 * ns;
    const double *r = t->r;
    int stack[TRAV_STACK][2];
    int sp = 0;
#define TRAV_PUSH(i_, k_) do { stack[sp][0] = (i_); stack[sp][1] = (k_); sp++; } while (0)
#define TRAV_TEST_PUSH(i_, k_) do { \
        if (near(A->nbv + (size_t)(i_) * w, B->nbv + (size_t)(k_) * w, ns, r, use_r)) TRAV_PUSH(i_, k_); \
    } while (0)
    if (self) TRAV_PUSH(0, 0);
    else TRAV_TEST_PUSH(0, 0);
    while (sp > 0) {
        if (sp > TRAV_STACK - 3) {
            t->stop = TRAV_OVERFLOW;   /* cannot happen with the median-split depth */
            return;
        }
        sp--;
        const int i = stack[sp][0], k = stack[sp][1];
        const bvh_node *ni = &A->node[i];
        if (self && i == k) {
            if (ni->right < 0) {
                const double *bi = A->lbv + (size_t)ni->leaf * w * LANES;
                const unsigned valid = (1u << ni->ntri) - 1u;
                for (int l = 0; l + 1 < ni->ntri; l++) {
                    const unsigned later = valid & ~((2u << l) - 1u);
                    /* triangles sharing a vertex always pass near4 (both volumes hold
                     * the vertex's, the margin and r being >= 0): skip it when all do */
                    const unsigned sh = shared4(A->sv[ni->first + l], A->lvid[ni->leaf]) & later;
                    unsigned m = sh == later ? later : near4(bi + l, LANES, bi, ns, r, use_r) & later;
                    if (tt) m &= ~sh;
                    TRAV_ROW(ni->first + l, ni->first, m, near4(bi + l, LANES, bi, ns, r, use_r));
                }
            } else {
                TRAV_TEST_PUSH(i + 1, ni->right);
                TRAV_PUSH(ni->right, ni->right);
                TRAV_PUSH(i + 1, i + 1);
            }
            continue;
        }
        const bvh_node *nk = &B->node[k];
        if (ni->right < 0 && nk->right < 0) {
            /* each triangle of i against the lanes of k (a prefilter of k's lanes by
             * i's leaf volume cost more than it saved: the leaves passed as a pair) */
            const double *bi = A->lbv + (size_t)ni->leaf * w * LANES, *bk = B->lbv + (size_t)nk->leaf * w * LANES;
            const unsigned mk = (1u << nk->ntri) - 1u;
            for (int l = 0; l < ni->ntri; l++) {
                unsigned m = near4(bi + l, LANES, bk, ns, r, use_r) & mk;
                if (tt && m) m &= ~shared4(A->sv[ni->first + l], B->lvid[nk->leaf]);
                TRAV_ROW(ni->first + l, nk->first, m, near4(bi + l, LANES, bk, ns, r, use_r));
            }
        } else if (nk->right < 0 || (ni->right >= 0 && ni->ntri >= nk->ntri)) {
            TRAV_TEST_PUSH(ni->right, k);
            TRAV_TEST_PUSH(i + 1, k);
        } else {
            TRAV_TEST_PUSH(i, nk->right);
            TRAV_TEST_PUSH(i, k + 1);
        }
    }
#undef TRAV_PUSH
#undef TRAV_TEST_PUSH
}

#define TRAVERSE(t, self, use_r, tt, leaf) do { \
        switch ((t)->ns) { \
        case 3: traverse((t), 3, (self), (use_r), (tt), (leaf)); break; \
        case 7: traverse((t), 7, (self), (use_r), (tt), (leaf)); break; \
        case 9: traverse((t), 9, (self), (use_r), (tt), (leaf)); break; \
        default: traverse((t), 13, (self), (use_r), (tt), (leaf)); break; \
        } \
    } while (0)

/* ---- candidate queries ---- */

typedef struct qctx {
    unsigned what;
    cb_bvh_result *r;
    const cb_bvh_filter *f;   /* cb_bvh_self_query_filtered's filter, or NULL */
} qctx;

/* Triangle pairs only, the shared-vertex pairs already dropped by the traversal. */
CB_BVH_INLINE int emit_tt(trav *t, int sa, int sb)
{
    const qctx *q = t->ctx;
    const int ta = t->a->perm[sa], tb = t->a->perm[sb];
    return cb_pair_list_push(&q->r->tt, ta < tb ? ta : tb, ta < tb ? tb : ta);
}

/* 1 when on some slab the projections of vertices va[na] and vb[nb] are more than gap[j]
 * apart (cb_bvh_filter). */
CB_BVH_INLINE int proj_separated(const double *proj, const double *gap, const int ns, const int *va, const int na,
                                 const int *vb, const int nb)
{
    for (int j = 0; j < ns; j++) {
        double alo = proj[(size_t)va[0] * ns + j], ahi = alo, blo = proj[(size_t)vb[0] * ns + j], bhi = blo;
        for (int k = 1; k < na; k++) {
            const double x = proj[(size_t)va[k] * ns + j];
            alo = x < alo ? x : alo;
            ahi = x > ahi ? x : ahi;
        }
        for (int k = 1; k < nb; k++) {
            const double x = proj[(size_t)vb[k] * ns + j];
            blo = x < blo ? x : blo;
            bhi = x > bhi ? x : bhi;
        }
        if (blo - ahi > gap[j] || alo - bhi > gap[j]) return 1;
    }
    return 0;
}

/* Store the self candidate (a, b) of list l (kind CB_BVH_VT: vertex a, triangle b with
 * vertices tv; CB_BVH_EE: edges a, b), through the filter when there is one (filt: a
 * compile-time constant per traversal copy). */
CB_BVH_INLINE int push_kept(const cb_bvh *bv, const qctx *q, const int filt, unsigned kind, cb_pair_list *l, int a,
                            int b, const int *tv)
{
    if (filt) {
        const cb_bvh_filter *f = q->f;
        if (f->proj) {
            const int *va = kind == CB_BVH_VT ? &a : bv->m->e[a], *vb = kind == CB_BVH_VT ? tv : bv->m->e[b];
            if (proj_separated(f->proj, f->gap, bv->ns, va, kind == CB_BVH_VT ? 1 : 2, vb, kind == CB_BVH_VT ? 3 : 2))
                return 0;
        }
        if (f->keep && !f->keep(f->ctx, kind, a, b)) return 0;
    }
    return cb_pair_list_push(l, a, b);
}

CB_BVH_INLINE int emit_self_any(trav *t, int sa, int sb, const int filt)
{
    const qctx *q = t->ctx;
    const cb_bvh *b = t->a;
    const int *va = b->sv[sa], *vb = b->sv[sb];
    const int ta = b->perm[sa], tb = b->perm[sb];
    if (q->what == CB_BVH_TT) {   /* the common case: one branch-free shared-vertex test */
        const int a0 = va[0], a1 = va[1], a2 = va[2], b0 = vb[0], b1 = vb[1], b2 = vb[2];
        int sh = (a0 == b0) | (a0 == b1) | (a0 == b2) | (a1 == b0) | (a1 == b1) | (a1 == b2) | (a2 == b0) |
                 (a2 == b1) | (a2 == b2);
        return sh ? 0 : cb_pair_list_push(&q->r->tt, ta < tb ? ta : tb, ta < tb ? tb : ta);
    }
    /* bit 3k + l of M: va[k] == vb[l]. Edge k of a triangle joins its vertices k and
     * k + 1 (mod 3), so edges k of ta and l of tb share a vertex when M has a bit in rows
     * k, k + 1 and columns l, l + 1: edge_rows[k] & edge_cols[l]. */
    static const unsigned edge_rows[3] = {077u, 0770u, 0707u}, edge_cols[3] = {0333u, 0666u, 0555u};
    const v4i lb = {vb[0], vb[1], vb[2], -1}, b0 = {1, 2, 4, 0}, b1 = {8, 16, 32, 0}, b2 = {64, 128, 256, 0};
    const v4i mv = ((lb == va[0]) & b0) | ((lb == va[1]) & b1) | ((lb == va[2]) & b2);
    const unsigned M = (unsigned)(mv[0] | mv[1] | mv[2]);
    /* bit k: va[k] is in tb / vb[k] is in ta */
    const unsigned inb = (unsigned)((M & 07u) != 0) | (unsigned)((M & 070u) != 0) << 1 | (unsigned)((M & 0700u) != 0) << 2;
    const unsigned ina = (unsigned)((M & 0111u) != 0) | (unsigned)((M & 0222u) != 0) << 1 |
                         (unsigned)((M & 0444u) != 0) << 2;
    int rc = 0;
    if ((q->what & CB_BVH_TT) && !inb)
        rc = cb_pair_list_push(&q->r->tt, ta < tb ? ta : tb, ta < tb ? tb : ta);
    if (!(q->what & (CB_BVH_VT | CB_BVH_EE))) return rc;
    const unsigned oa = b->sown[sa], ob = b->sown[sb];
    /* owned vertices not in the other triangle, then owned edges sharing no vertex, in
     * index order (k, then l) */
    if (q->what & CB_BVH_VT) {
        for (unsigned mk = oa & 7u & ~inb; mk && !rc; mk &= mk - 1)
            rc = push_kept(b, q, filt, CB_BVH_VT, &q->r->vt, va[__builtin_ctz(mk)], tb, vb);
        for (unsigned ml = ob & 7u & ~ina; ml && !rc; ml &= ml - 1)
            rc = push_kept(b, q, filt, CB_BVH_VT, &q->r->vt, vb[__builtin_ctz(ml)], ta, va);
    }
    if (q->what & CB_BVH_EE) {
        for (unsigned mk = oa >> 3 & 7u; mk && !rc; mk &= mk - 1) {
            const int k = __builtin_ctz(mk), ea = b->sedge[sa][k];
            const unsigned rk = M & edge_rows[k];
            for (unsigned ml = ob >> 3 & 7u; ml && !rc; ml &= ml - 1) {
                const int l = __builtin_ctz(ml);
                if (rk & edge_cols[l]) continue;
                const int eb = b->sedge[sb][l];
                rc = push_kept(b, q, filt, CB_BVH_EE, &q->r->ee, ea < eb ? ea : eb, ea < eb ? eb : ea, NULL);
            }
        }
    }
    return rc;
}

CB_BVH_INLINE int emit_self(trav *t, int sa, int sb) { return emit_self_any(t, sa, sb, 0); }
CB_BVH_INLINE int emit_self_kept(trav *t, int sa, int sb) { return emit_self_any(t, sa, sb, 1); }

CB_BVH_INLINE int emit_pair(trav *t, int sa, int sb)
{
    const qctx *q = t->ctx;
    const cb_bvh *A = t->a, *B = t->b;
    const int ta = A->perm[sa], tb = B->perm[sb];
    const unsigned oa = A->sown[sa], ob = B->sown[sb];
    int rc = 0;
    if (q->what & CB_BVH_TT) rc = cb_pair_list_push(&q->r->tt, ta, tb);
    if (q->what & CB_BVH_VT)
        for (int k = 0; k < 3 && !rc; k++)
            if (oa >> k & 1u) rc = cb_pair_list_push(&q->r->vt, A->sv[sa][k], tb);
    if (q->what & CB_BVH_TV)
        for (int l = 0; l < 3 && !rc; l++)
            if (ob >> l & 1u) rc = cb_pair_list_push(&q->r->tv, ta, B->sv[sb][l]);
    if (q->what & CB_BVH_EE)
        for (int k = 0; k < 3 && !rc; k++) {
            if (!(oa >> (3 + k) & 1u)) continue;
            for (int l = 0; l < 3 && !rc; l++)
                if (ob >> (3 + l) & 1u) rc = cb_pair_list_push(&q->r->ee, A->sedge[sa][k], B->sedge[sb][l]);
        }
    return rc;
}

static void result_reset(cb_bvh_result *r)
{
    r->tt.n = r->vt.n = r->tv.n = r->ee.n = 0;
}

static int self_query(const cb_bvh *b, unsigned what, const cb_bvh_filter *f, cb_bvh_result *r,
                      const char *fn, cb_error *err)
{
    if (!b || !r) return CB_FAIL(err, CB_ERR_INPUT, "%s: tree or result is NULL", fn);
    if (!b->built) return CB_FAIL(err, CB_ERR_INPUT, "%s: the tree has not been built", fn);
    if (what & ~(unsigned)(CB_BVH_TT | CB_BVH_VT | CB_BVH_EE))
        return CB_FAIL(err, CB_ERR_INPUT, "%s: flags 0x%x are not CB_BVH_TT|VT|EE", fn, what);
    result_reset(r);
    if (!what) return 0;
    qctx q = {what, r, f};
    trav t = {.a = b, .b = b, .ns = b->ns, .ctx = &q};
    trav_set_radius(&t, 0.0);
    if (what == CB_BVH_TT) TRAVERSE(&t, 1, 0, 1, emit_tt);
    else if (f && (what & (CB_BVH_VT | CB_BVH_EE))) TRAVERSE(&t, 1, 0, 0, emit_self_kept);
    else TRAVERSE(&t, 1, 0, 0, emit_self);
    if (t.stop == TRAV_OVERFLOW) return CB_FAIL(err, CB_ERR_INTERNAL, "BVH self query: traversal stack overflow");
    if (t.stop) return CB_FAIL(err, CB_ERR_NOMEM, "BVH self query: out of memory growing the result lists");
    return 0;
}

int cb_bvh_self_query(const cb_bvh *b, unsigned what, cb_bvh_result *r, cb_error *err)
{
    return self_query(b, what, NULL, r, "cb_bvh_self_query", err);
}

int cb_bvh_self_query_filtered(const cb_bvh *b, unsigned what, const cb_bvh_filter *f, cb_bvh_result *r,
                               cb_error *err)
{
    if (f && f->proj && !f->gap)
        return CB_FAIL(err, CB_ERR_INPUT, "cb_bvh_self_query_filtered: the filter has projections but no gaps");
    return self_query(b, what, f, r, "cb_bvh_self_query_filtered", err);
}

static int check_pair_trees(const cb_bvh *a, const cb_bvh *b, const char *fn, cb_error *err)
{
    if (!a || !b) return CB_FAIL(err, CB_ERR_INPUT, "%s: a tree is NULL", fn);
    if (!a->built || !b->built) return CB_FAIL(err, CB_ERR_INPUT, "%s: a tree has not been built", fn);
    if (a->kind != b->kind)
        return CB_FAIL(err, CB_ERR_INPUT, "%s: the trees use different volumes (%s and %s)", fn,
                       cb_bv_name(a->kind), cb_bv_name(b->kind));
    return 0;
}

int cb_bvh_pair_query(const cb_bvh *a, const cb_bvh *b, unsigned what, cb_bvh_result *r, cb_error *err)
{
    int rc = check_pair_trees(a, b, "cb_bvh_pair_query", err);
    if (rc) return rc;
    if (!r) return CB_FAIL(err, CB_ERR_INPUT, "cb_bvh_pair_query: result is NULL");
    if (what & ~(unsigned)(CB_BVH_TT | CB_BVH_VT | CB_BVH_TV | CB_BVH_EE))
        return CB_FAIL(err, CB_ERR_INPUT, "cb_bvh_pair_query: flags 0x%x are not CB_BVH_TT|VT|TV|EE", what);
    result_reset(r);
    if (!what) return 0;
    qctx q = {what, r, NULL};
    trav t = {.a = a, .b = b, .ns = a->ns, .ctx = &q};
    trav_set_radius(&t, 0.0);
    TRAVERSE(&t, 0, 0, 0, emit_pair);
    if (t.stop == TRAV_OVERFLOW) return CB_FAIL(err, CB_ERR_INTERNAL, "BVH pair query: traversal stack overflow");
    if (t.stop) return CB_FAIL(err, CB_ERR_NOMEM, "BVH pair query: out of memory growing the result lists");
    return 0;
}

/* ---- visitors ---- */

typedef struct vwrap {
    cb_bvh_visit_fn fn;
    void *ctx;
} vwrap;

CB_BVH_INLINE int visit_leaf(trav *t, int sa, int sb)
{
    const vwrap *w = t->ctx;
    double rad = t->radius;
    int rc = w->fn(w->ctx, t->a->perm[sa], t->b->perm[sb], &rad);
    if (rc) return rc;
    if (rad < t->radius) trav_set_radius(t, rad);
    return 0;
}

static int check_radius(double radius, cb_error *err)
{
    if (!(radius >= 0.0))
        return CB_FAIL(err, CB_ERR_INPUT, "BVH visit radius must be >= 0 (got %g)", radius);
    return 0;
}

int cb_bvh_self_visit(const cb_bvh *b, double radius, cb_bvh_visit_fn fn, void *ctx, cb_error *err)
{
    if (!b || !fn) return CB_FAIL(err, CB_ERR_INPUT, "cb_bvh_self_visit: tree or function is NULL");
    if (!b->built) return CB_FAIL(err, CB_ERR_INPUT, "cb_bvh_self_visit: the tree has not been built");
    int rc = check_radius(radius, err);
    if (rc) return rc;
    vwrap w = {fn, ctx};
    trav t = {.a = b, .b = b, .ns = b->ns, .ctx = &w};
    trav_set_radius(&t, radius);
    TRAVERSE(&t, 1, 1, 0, visit_leaf);
    if (t.stop == TRAV_OVERFLOW) return CB_FAIL(err, CB_ERR_INTERNAL, "BVH self visit: traversal stack overflow");
    return t.stop;
}

int cb_bvh_pair_visit(const cb_bvh *a, const cb_bvh *b, double radius, cb_bvh_visit_fn fn, void *ctx,
                      cb_error *err)
{
    int rc = check_pair_trees(a, b, "cb_bvh_pair_visit", err);
    if (rc) return rc;
    if (!fn) return CB_FAIL(err, CB_ERR_INPUT, "cb_bvh_pair_visit: function is NULL");
    rc = check_radius(radius, err);
    if (rc) return rc;
    vwrap w = {fn, ctx};
    trav t = {.a = a, .b = b, .ns = a->ns, .ctx = &w};
    trav_set_radius(&t, radius);
    TRAVERSE(&t, 0, 1, 0, visit_leaf);
    if (t.stop == TRAV_OVERFLOW) return CB_FAIL(err, CB_ERR_INTERNAL, "BVH pair visit: traversal stack overflow");
    return t.stop;
}

/* ---- closest triangle ---- */

typedef struct cctx {
    const cb_bvh *b;
    const double (*x)[3];
    const double *p;
    double pp[CB_BV_MAX_SLABS];   /* projections of p */
    int exclude;
    double best2;
    int tri;
    double cp[3];
} cctx;

/* Lower bound on the squared distance from p to a volume. */
/* A lower bound on the squared distance from the query point to a volume: the exact
 * distance to the box of the three axis slabs (the first three directions of every
 * kind, unit length), which contains the k-DOP, or the largest single-slab gap of the
 * other directions, whichever is larger. */
static double volume_dist2(const cctx *c, const double *bv)
{
    const int ns = c->b->ns;
    double box2 = 0.0, d2 = 0.0;
    for (int j = 0; j < ns; j++) {
        double g = bv[j] - c->pp[j];
        double h = c->pp[j] - bv[ns + j];
        if (h > g) g = h;
        if (g > 0.0) {
            g /= c->b->dnorm[j];
            if (j < 3) box2 += g * g;
            else if (g * g > d2) d2 = g * g;
        }
    }
    if (box2 > d2) d2 = box2;
    /* projections are rounded: shrink the bound slightly so it stays a lower bound */
    return d2 * (1.0 - 16 * DBL_EPSILON);
}

static void closest_node(cctx *c, int i)
{
    const cb_bvh *b = c->b;
    const int w = 2 * b->ns;
    const bvh_node *n = &b->node[i];
    if (n->right < 0) {
        for (int s = n->first; s < n->first + n->ntri; s++) {
            double tv[2 * CB_BV_MAX_SLABS];
            slot_volume(b, s, tv);
            if (volume_dist2(c, tv) > c->best2) continue;
            const int *v = b->sv[s];
            if (v[0] == c->exclude || v[1] == c->exclude || v[2] == c->exclude) continue;
            double cp[3];
            double d2 = cb_point_triangle_distance2(c->p, c->x[v[0]], c->x[v[1]], c->x[v[2]], NULL, cp);
            if (d2 < c->best2 || (c->tri < 0 && d2 <= c->best2)) {
                c->best2 = d2;
                c->tri = b->perm[s];
                c->cp[0] = cp[0];
                c->cp[1] = cp[1];
                c->cp[2] = cp[2];
            }
        }
        return;
    }
    int l = i + 1, r = n->right;
    double dl = volume_dist2(c, b->nbv + (size_t)l * w), dr = volume_dist2(c, b->nbv + (size_t)r * w);
    if (dr < dl) {
        int ti = l; l = r; r = ti;
        double td = dl; dl = dr; dr = td;
    }
    if (dl <= c->best2) closest_node(c, l);
    if (dr <= c->best2) closest_node(c, r);
}

int cb_bvh_closest(const cb_bvh *b, const double (*x)[3], const double p[3], double max_dist,
                   int exclude_vertex, int *tri, double *dist, double closest[3], cb_error *err)
{
    if (!b || !x || !p || !tri || !dist)
        return CB_FAIL(err, CB_ERR_INPUT, "cb_bvh_closest: NULL argument");
    *tri = -1;
    *dist = INFINITY;
    if (!b->built) return CB_FAIL(err, CB_ERR_INPUT, "cb_bvh_closest: the tree has not been built");
    if (!(isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2])))
        return CB_FAIL(err, CB_ERR_INPUT, "cb_bvh_closest: query point (%g, %g, %g) is not finite",
                       p[0], p[1], p[2]);
    if (!(max_dist >= 0.0))
        return CB_FAIL(err, CB_ERR_INPUT, "cb_bvh_closest: max_dist must be >= 0 (got %g)", max_dist);
    cctx c = {.b = b, .x = x, .p = p, .exclude = exclude_vertex, .tri = -1};
    c.best2 = isinf(max_dist) ? INFINITY : max_dist * max_dist;
    for (int j = 0; j < b->ns; j++) c.pp[j] = b->dir[j][0] * p[0] + b->dir[j][1] * p[1] + b->dir[j][2] * p[2];
    if (volume_dist2(&c, b->nbv) <= c.best2) closest_node(&c, 0);
    if (c.tri >= 0) {
        *tri = c.tri;
        *dist = sqrt(c.best2);
        if (closest) {
            closest[0] = c.cp[0];
            closest[1] = c.cp[1];
            closest[2] = c.cp[2];
        }
    }
    return 0;
}
