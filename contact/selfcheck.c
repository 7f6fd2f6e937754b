/* contact/selfcheck.c — exact self-intersection count and minimum separation of a
 * mesh at given positions, through the BVH; see selfcheck.h. */
#include "contact/selfcheck.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "contact/distance.h"
#include "contact/predicates.h"

struct cb_selfcheck {
    const cb_mesh *m;
    cb_bvh *bvh;
    unsigned char *own;          /* [nf] owned vertices (bit k) and edges (bit 3 + k) */
    const int (*tedge)[3];
};

void cb_selfcheck_free(cb_selfcheck **sp)
{
    if (!sp || !*sp) return;
    cb_bvh_free(&(*sp)->bvh);
    free((*sp)->own);
    free(*sp);
    *sp = NULL;
}

int cb_selfcheck_create(const cb_mesh *m, cb_bv_kind kind, cb_selfcheck **out, cb_error *err)
{
    if (!out) return CB_FAIL(err, CB_ERR_INPUT, "cb_selfcheck_create: out is NULL");
    *out = NULL;
    if (!m) return CB_FAIL(err, CB_ERR_INPUT, "cb_selfcheck_create: mesh is NULL");
    if (m->nf <= 0 || m->nv <= 0)
        return CB_FAIL(err, CB_ERR_INPUT, "self-contact check of an empty mesh (%d vertices, %d triangles)",
                       m->nv, m->nf);
    cb_selfcheck *s = cb_calloc(1, sizeof *s);
    if (!s) return CB_FAIL(err, CB_ERR_NOMEM, "out of memory allocating a self-contact check");
    s->m = m;
    int rc = cb_bvh_create(m, kind, &s->bvh, err);
    if (rc) {
        cb_selfcheck_free(&s);
        return rc;
    }
    s->own = cb_calloc((size_t)m->nf, 1);
    if (!s->own) {
        cb_selfcheck_free(&s);
        return CB_FAIL(err, CB_ERR_NOMEM, "out of memory allocating a self-contact check");
    }
    const int *vown = cb_bvh_vertex_owners(s->bvh), *eown = cb_bvh_edge_owners(s->bvh);
    s->tedge = cb_bvh_triangle_edges(s->bvh);
    for (int t = 0; t < m->nf; t++) {
        unsigned char o = 0;
        for (int k = 0; k < 3; k++) {
            if (vown[m->f[t][k]] == t) o |= (unsigned char)(1u << k);
            if (eown[s->tedge[t][k]] == t) o |= (unsigned char)(8u << k);
        }
        s->own[t] = o;
    }
    *out = s;
    return 0;
}

/* Validate x, rebuild the tree at x (inflated by a few ulps of the coordinates) and
 * look for zero-area triangles: 0, CB_WARN (message set) or an error. */
static int prepare(cb_selfcheck *s, const double (*x)[3], const char *what, cb_error *err)
{
    const cb_mesh *m = s->m;
    double maxabs = 0.0;
    for (int v = 0; v < m->nv; v++)
        for (int k = 0; k < 3; k++) {
            if (!isfinite(x[v][k]))
                return CB_FAIL(err, CB_ERR_INPUT, "%s: vertex %d has a non-finite coordinate (%g, %g, %g)", what,
                               v, x[v][0], x[v][1], x[v][2]);
            if (fabs(x[v][k]) > maxabs) maxabs = fabs(x[v][k]);
        }
    int rc = cb_bvh_build(s->bvh, x, 32 * DBL_EPSILON * maxabs, err);
    if (rc) return rc;
    int first = -1, nzero = 0;
    for (int t = 0; t < m->nf; t++) {
        const double *a = x[m->f[t][0]], *b = x[m->f[t][1]], *c = x[m->f[t][2]];
        double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, w[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
        double n0 = u[1] * w[2] - u[2] * w[1], n1 = u[2] * w[0] - u[0] * w[2], n2 = u[0] * w[1] - u[1] * w[0];
        if (n0 == 0.0 && n1 == 0.0 && n2 == 0.0) {
            if (first < 0) first = t;
            nzero++;
        }
    }
    if (first >= 0)
        return CB_FAIL(err, CB_WARN, "%s: %d triangle(s) have zero area at these positions, the first is "
                       "triangle %d (%d, %d, %d); the result counts a degenerate triangle as its edges",
                       what, nzero, first, m->f[first][0], m->f[first][1], m->f[first][2]);
    return 0;
}

/* ---- intersections ---- */

typedef struct isect_ctx {
    const cb_selfcheck *s;
    const double (*x)[3];
    long count;
} isect_ctx;

/* Bit k set when vertex f[k] is a vertex of triangle g (branch-free: most visited pairs
 * share a vertex). */
static inline unsigned vertices_in(const int *f, const int *g)
{
    const int g0 = g[0], g1 = g[1], g2 = g[2];
    return (unsigned)((f[0] == g0) | (f[0] == g1) | (f[0] == g2)) |
           (unsigned)((f[1] == g0) | (f[1] == g1) | (f[1] == g2)) << 1 |
           (unsigned)((f[2] == g0) | (f[2] == g1) | (f[2] == g2)) << 2;
}

/* Bit k set when edge k (f[k], f[k+1]) of a triangle is owned (own, bit 3 + k) and
 * shares no vertex with the other triangle (in: its vertices_in mask): the edges of
 * the triangle counted against the other. */
static inline unsigned candidate_edges(unsigned own, unsigned in)
{
    const unsigned next = (in >> 1 | in << 2) & 7u;   /* bit k: f[k + 1] is shared */
    return (own >> 3) & 7u & ~in & ~next;
}

/* Whether segment pq meets triangle abc, given the exact signs sp, sq of p and q
 * against abc's plane (cb_orient3d(a, b, c, .)): both strictly on one side, no; both in
 * the plane (or abc degenerate), the full function; else the segment meets the plane in
 * one point and abc is not degenerate, so it meets abc when the orientations of pq
 * against abc's three edges do not have both signs (cb_segment_triangle_intersect's
 * steps, all exact). */
static inline int edge_meets(const double *p, const double *q, const double *a, const double *b, const double *c,
                             int sp, int sq)
{
    if (sp * sq > 0) return 0;
    if (sp == 0 && sq == 0) return cb_segment_triangle_intersect(p, q, a, b, c) != 0;
    const int s1 = cb_orient3d_sign(p, q, a, b), s2 = cb_orient3d_sign(p, q, b, c);
    const int s3 = cb_orient3d_sign(p, q, c, a);
    const int pos = (s1 > 0) | (s2 > 0) | (s3 > 0), neg = (s1 < 0) | (s2 < 0) | (s3 < 0);
    return !(pos & neg);
}

/* The number of edges k in `edges` of triangle f that intersect triangle g: exactly
 * cb_segment_triangle_intersect(x[f[k]], x[f[k+1]], x[g0], x[g1], x[g2]) != 0 summed.
 * An edge whose bounding box is apart from g's along an axis misses g (comparisons of
 * coordinates are exact; most visited edges end here). Then the signs of its ends
 * against g's plane (cb_orient3d(g0, g1, g2, end), as that function computes them): an
 * edge strictly on one side misses g. An edge with an end strictly off the plane proves
 * g is not degenerate (for collinear g0, g1, g2 every such orient3d is exactly 0) and
 * that the segment meets the plane in one point, so the rest of the test is the three
 * orientations of the segment against g's edges, as in cb_segment_triangle_intersect;
 * only an edge lying in the plane (both signs 0, or a degenerate g) goes to the full
 * function. All signs are exact (cb_orient3d_sign), so the count is the one the full
 * function gives. */
static inline long edges_vs_triangle(const double (*x)[3], const int *f, unsigned edges, const int *g)
{
    const double *a = x[g[0]], *b = x[g[1]], *c = x[g[2]];
    double glo[3], ghi[3];   /* g's bounding box */
    for (int d = 0; d < 3; d++) {
        const double lo = a[d] < b[d] ? a[d] : b[d], hi = a[d] > b[d] ? a[d] : b[d];
        glo[d] = lo < c[d] ? lo : c[d];
        ghi[d] = hi > c[d] ? hi : c[d];
    }
    long n = 0;
    while (edges) {
        const int k = __builtin_ctz(edges);
        edges &= edges - 1;
        const double *p = x[f[k]], *q = x[f[k == 2 ? 0 : k + 1]];
        int apart = 0;
        for (int d = 0; d < 3; d++)
            apart |= ((p[d] > q[d] ? p[d] : q[d]) < glo[d]) | ((p[d] < q[d] ? p[d] : q[d]) > ghi[d]);
        if (apart) continue;
        n += edge_meets(p, q, a, b, c, cb_orient3d_sign(a, b, c, p), cb_orient3d_sign(a, b, c, q));
    }
    return n;
}

/* The edges in `edges` of triangle f against triangle g = (a, b, c), given the exact
 * signs sv[k] = cb_orient3d(a, b, c, x[f[k]]): the same steps as edges_vs_triangle
 * after its box test. */
static inline long edges_vs_triangle_signs(const double (*x)[3], const int *f, unsigned edges, const int *sv,
                                           const double *a, const double *b, const double *c)
{
    long n = 0;
    while (edges) {
        const int k = __builtin_ctz(edges), k1 = k == 2 ? 0 : k + 1;
        edges &= edges - 1;
        n += edge_meets(x[f[k]], x[f[k1]], a, b, c, sv[k], sv[k1]);
    }
    return n;
}

/* Triangles with all three corners strictly on one side of the other's plane are
 * disjoint, and so are all their edges: 1 then. */
static inline int one_side(const int *s)
{
    return (s[0] > 0 && s[1] > 0 && s[2] > 0) || (s[0] < 0 && s[1] < 0 && s[2] < 0);
}

static int isect_visit(void *ctx, int ta, int tb, double *radius)
{
    (void)radius;
    isect_ctx *c = ctx;
    const int *fa = c->s->m->f[ta], *fb = c->s->m->f[tb];
    const unsigned ina = vertices_in(fa, fb), inb = vertices_in(fb, fa);
    const unsigned ea = candidate_edges(c->s->own[ta], ina), eb = candidate_edges(c->s->own[tb], inb);
    if (!(ea | eb)) return 0;
    if (ina) {
        /* neighbours (most visits): only an edge opposite the shared vertex can meet the
         * other triangle, and the box test rejects ~90% of those */
        if (ea) c->count += edges_vs_triangle(c->x, fa, ea, fb);
        if (eb) c->count += edges_vs_triangle(c->x, fb, eb, fa);
        return 0;
    }
    /* apart in the mesh: the plane test of whole triangles first (the boxes of their
     * edges mostly overlap), then the edges with the signs already known; tb's signs
     * only when tb has edges to test (if tb is on one side of ta's plane, the count
     * of ta's edges just made is 0 too) */
    const double (*x)[3] = c->x;
    const double *a0 = x[fa[0]], *a1 = x[fa[1]], *a2 = x[fa[2]];
    const double *b0 = x[fb[0]], *b1 = x[fb[1]], *b2 = x[fb[2]];
    const int sa[3] = {cb_orient3d_sign(b0, b1, b2, a0), cb_orient3d_sign(b0, b1, b2, a1),
                       cb_orient3d_sign(b0, b1, b2, a2)};
    if (one_side(sa)) return 0;
    if (ea) c->count += edges_vs_triangle_signs(x, fa, ea, sa, b0, b1, b2);
    if (!eb) return 0;
    const int sb[3] = {cb_orient3d_sign(a0, a1, a2, b0), cb_orient3d_sign(a0, a1, a2, b1),
                       cb_orient3d_sign(a0, a1, a2, b2)};
    if (!one_side(sb)) c->count += edges_vs_triangle_signs(x, fb, eb, sb, a0, a1, a2);
    return 0;
}

int cb_selfcheck_intersections(cb_selfcheck *s, const double (*x)[3], long *count, cb_error *err)
{
    if (!s || !x || !count) return CB_FAIL(err, CB_ERR_INPUT, "cb_selfcheck_intersections: NULL argument");
    *count = -1;
    int st = prepare(s, x, "self-intersection count", err);
    if (st < 0) return st;
    isect_ctx c = {s, x, 0};
    int rc = cb_bvh_self_visit(s->bvh, 0.0, isect_visit, &c, err);
    if (rc) return rc;
    *count = c.count;
    return st;
}

/* ---- minimum separation ---- */

typedef struct sep_ctx {
    const cb_selfcheck *s;
    const double (*x)[3];
    double best2;
    int kind, a, b;
} sep_ctx;

static int sep_one_way(sep_ctx *c, int ta, int tb)
{
    const cb_mesh *m = c->s->m;
    const int *fa = m->f[ta], *fb = m->f[tb];
    const unsigned o = c->s->own[ta];
    const double (*x)[3] = c->x;
    int improved = 0;
    for (int k = 0; k < 3; k++) {
        if (!(o >> k & 1u)) continue;
        int v = fa[k];
        if (v == fb[0] || v == fb[1] || v == fb[2]) continue;
        double d2 = cb_point_triangle_distance2(x[v], x[fb[0]], x[fb[1]], x[fb[2]], NULL, NULL);
        if (d2 < c->best2) {
            c->best2 = d2;
            c->kind = 0;
            c->a = v;
            c->b = tb;
            improved = 1;
        }
    }
    return improved;
}

static int sep_visit(void *ctx, int ta, int tb, double *radius)
{
    sep_ctx *c = ctx;
    const cb_mesh *m = c->s->m;
    const double (*x)[3] = c->x;
    int improved = sep_one_way(c, ta, tb);
    improved |= sep_one_way(c, tb, ta);
    const unsigned oa = c->s->own[ta], ob = c->s->own[tb];
    if ((oa & 0x38u) && (ob & 0x38u)) {
        for (int k = 0; k < 3; k++) {
            if (!(oa >> (3 + k) & 1u)) continue;
            int ea = c->s->tedge[ta][k];
            for (int l = 0; l < 3; l++) {
                if (!(ob >> (3 + l) & 1u)) continue;
                int eb = c->s->tedge[tb][l];
                int e0 = ea < eb ? ea : eb, e1 = ea < eb ? eb : ea;
                const int *p = m->e[e0], *q = m->e[e1];
                if (p[0] == q[0] || p[0] == q[1] || p[1] == q[0] || p[1] == q[1]) continue;
                double d2 = cb_edge_edge_distance2(x[p[0]], x[p[1]], x[q[0]], x[q[1]], NULL, NULL, NULL, NULL);
                if (d2 < c->best2) {
                    c->best2 = d2;
                    c->kind = 1;
                    c->a = e0;
                    c->b = e1;
                    improved = 1;
                }
            }
        }
    }
    if (improved) *radius = sqrt(c->best2);
    return 0;
}

int cb_selfcheck_min_separation(cb_selfcheck *s, const double (*x)[3], double *dist, int *pair_kind,
                                int *a, int *b, cb_error *err)
{
    if (!s || !x || !dist) return CB_FAIL(err, CB_ERR_INPUT, "cb_selfcheck_min_separation: NULL argument");
    *dist = NAN;
    if (pair_kind) *pair_kind = -1;
    if (a) *a = -1;
    if (b) *b = -1;
    int st = prepare(s, x, "minimum separation", err);
    if (st < 0) return st;
    sep_ctx c = {s, x, INFINITY, -1, -1, -1};
    int rc = cb_bvh_self_visit(s->bvh, INFINITY, sep_visit, &c, err);
    if (rc) return rc;
    *dist = sqrt(c.best2);
    if (pair_kind) *pair_kind = c.kind;
    if (a) *a = c.a;
    if (b) *b = c.b;
    return st;
}

/* ---- one-shot wrappers ---- */

int cb_self_intersections(const cb_mesh *m, const double (*x)[3], long *count, cb_error *err)
{
    if (!m || !x || !count) return CB_FAIL(err, CB_ERR_INPUT, "cb_self_intersections: NULL argument");
    cb_selfcheck *s = NULL;
    int rc = cb_selfcheck_create(m, CB_BV_DEFAULT, &s, err);
    if (rc) return rc;
    rc = cb_selfcheck_intersections(s, x, count, err);
    cb_selfcheck_free(&s);
    return rc;
}

int cb_min_separation(const cb_mesh *m, const double (*x)[3], double *dist, cb_error *err)
{
    if (!m || !x || !dist) return CB_FAIL(err, CB_ERR_INPUT, "cb_min_separation: NULL argument");
    cb_selfcheck *s = NULL;
    int rc = cb_selfcheck_create(m, CB_BV_DEFAULT, &s, err);
    if (rc) return rc;
    rc = cb_selfcheck_min_separation(s, x, dist, NULL, NULL, NULL, err);
    cb_selfcheck_free(&s);
    return rc;
}
