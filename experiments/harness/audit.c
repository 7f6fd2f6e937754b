/* experiments/harness/audit.c — the continuous audit (audit.h). */
#include "experiments/harness/audit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact/bvh.h"
#include "contact/ccd.h"
#include "contact/colliders.h"
#include "contact/distance.h"
#include "contact/selfcheck.h"
#include "contact/penetration.h"
#include "contact/predicates.h"
#include "contact/trimesh_collider.h"
#include "core/vec3.h"

/* How often the long loops read the interrupt flag (core/error.h): a step's audit took
 * 179 s for a 50 m/s ball and did not stop on a signal (issue 33). */
#define POLL_EVERY 256

typedef struct knot {
    double t;
    double x[3];
    int vertex;
} knot;

struct cb_audit {
    int nv;
    double t0, t1;
    double (*x0)[3];     /* [nv] positions at the start of the step */
    double (*lo)[3], (*hi)[3]; /* [nv] box of each vertex's path (finite vertices) */
    unsigned char *bad;  /* [nv] a non-finite position somewhere on the path */
    double *reach;       /* [nv] bound of the distance from x0 to any point of the path */
    double (*x1r)[3];    /* [nv] end positions in the frame of the mean displacement */
    /* per step: a ball around every triangle and edge at the start, and how far their
     * vertices travel (edges: the two added into er) */
    double (*tc)[3], *tr, *treach; /* [nf] */
    double (*ec)[3], *er;          /* [ne] */
    knot *knots;         /* this step's knots, sorted by vertex at the end of the step */
    long nknots, capknots;
    long *first;         /* [nv + 1] vertex i's knots are knots[first[i] .. first[i+1]) */
    knot *tmp;           /* [captmp] the sort's second buffer */
    long captmp;
    long *pos;           /* [nv] the sort's cursors */
    int knot_error;      /* out of memory while recording */
    cb_bvh *bvh;
    cb_bvh_result *res;
    /* a lower bound of the smallest distance between non-adjacent primitives at the
     * start of the step (-1: none), kept from an exact minimum by subtracting twice the
     * largest relative reach of every step since; while it exceeds twice this step's
     * reach, no pair can touch and the pair search is skipped */
    cb_selfcheck *check;
    double sep_lb;
    int wait, backoff;   /* full searches until the next exact minimum, and the current gap */
    long skipped;        /* steps whose pair search the bound saved */
    double edge_mean;    /* mean rest edge length: the scale of the separations */
    /* the collider pass: which vertices, edges and triangles went inside a collider this
     * step, and the counts beyond the vertices (cb_audit_collider_primitives) */
    unsigned char *vin, *ein, *fin; /* [nv], [ne], [nf] */
    long edge_crossings, face_crossings;
    int self_pairs;      /* more than one triangle: the self search has pairs to visit */
    /* mesh colliders: a BVH of each (NULL for the analytic ones) and room for its
     * vertices at the start and the end of a step */
    cb_bvh **cbvh;
    int ncbvh;
    double (*cx0)[3], (*cx1)[3];
    /* the pieces of multi-piece paths the CCD checked and the piece bound spared (since
     * creation), and the bound turned off (cb_audit_set_exhaustive) */
    long checked, spared;
    int exhaustive;
};

static int mesh_colliders_create(cb_audit *a, const cb_world *w, cb_error *err);

int cb_audit_create(const cb_world *w, cb_audit **out, cb_error *err)
{
    if (!w || !out) return CB_FAIL(err, CB_ERR_INPUT, "cb_audit_create: NULL argument");
    *out = NULL;
    cb_audit *a = cb_calloc(1, sizeof *a);
    size_t n = (size_t)(w->nv > 0 ? w->nv : 1);
    if (a) {
        a->nv = w->nv;
        a->x0 = cb_calloc(n, sizeof *a->x0);
        a->lo = cb_calloc(n, sizeof *a->lo);
        a->hi = cb_calloc(n, sizeof *a->hi);
        a->bad = cb_calloc(n, 1);
        a->reach = cb_calloc(n, sizeof *a->reach);
        a->x1r = cb_calloc(n, sizeof *a->x1r);
        a->first = cb_calloc(n + 1, sizeof *a->first);
        a->pos = cb_calloc(n, sizeof *a->pos);
    }
    if (!a || !a->x0 || !a->lo || !a->hi || !a->bad || !a->reach || !a->x1r || !a->first || !a->pos) {
        cb_audit_free(&a);
        return CB_FAIL(err, CB_ERR_NOMEM, "audit: out of memory (%d vertices)", w->nv);
    }
    size_t nf = (size_t)(w->mesh->nf > 0 ? w->mesh->nf : 1), ne = (size_t)(w->mesh->ne > 0 ? w->mesh->ne : 1);
    a->tc = cb_calloc(nf, sizeof *a->tc);
    a->tr = cb_calloc(nf, sizeof *a->tr);
    a->treach = cb_calloc(nf, sizeof *a->treach);
    a->ec = cb_calloc(ne, sizeof *a->ec);
    a->er = cb_calloc(ne, sizeof *a->er);
    a->vin = cb_calloc(n, 1);
    a->ein = cb_calloc(ne, 1);
    a->fin = cb_calloc(nf, 1);
    if (!a->tc || !a->tr || !a->treach || !a->ec || !a->er || !a->vin || !a->ein || !a->fin) {
        cb_audit_free(&a);
        return CB_FAIL(err, CB_ERR_NOMEM, "audit: out of memory (%d triangles)", w->mesh->nf);
    }
    a->self_pairs = w->mesh->nf > 1;
    if (w->mesh->nf > 0) {
        int rc = cb_bvh_create(w->mesh, CB_BV_AABB, &a->bvh, err);
        if (!rc) rc = cb_bvh_result_create(&a->res, err);
        if (!rc) rc = cb_bvh_build(a->bvh, (const double (*)[3])w->mesh->x, 0.0, err);
        if (!rc && a->self_pairs) rc = cb_selfcheck_create(w->mesh, CB_BV_DEFAULT, &a->check, err);
        if (rc) {
            cb_audit_free(&a);
            return rc;
        }
    }
    int rc = mesh_colliders_create(a, w, err);
    if (rc) {
        cb_audit_free(&a);
        return rc;
    }
    a->sep_lb = -1.0;
    a->backoff = 1;
    for (int e = 0; e < w->mesh->ne; e++) a->edge_mean += w->model.rest_length[e] / w->mesh->ne;
    *out = a;
    return CB_OK;
}

void cb_audit_free(cb_audit **pa)
{
    if (!pa || !*pa) return;
    cb_audit *a = *pa;
    free(a->x0);
    free(a->lo);
    free(a->hi);
    free(a->bad);
    free(a->reach);
    free(a->x1r);
    free(a->tc);
    free(a->tr);
    free(a->treach);
    free(a->ec);
    free(a->er);
    free(a->knots);
    free(a->tmp);
    free(a->first);
    free(a->pos);
    cb_bvh_free(&a->bvh);
    cb_bvh_result_free(&a->res);
    cb_selfcheck_free(&a->check);
    free(a->vin);
    free(a->ein);
    free(a->fin);
    if (a->cbvh)
        for (int c = 0; c < a->ncbvh; c++) cb_bvh_free(&a->cbvh[c]);
    free(a->cbvh);
    free(a->cx0);
    free(a->cx1);
    free(a);
    *pa = NULL;
}

void cb_audit_begin(cb_audit *a, const cb_world *w)
{
    CB_ASSERT(a && w && w->nv == a->nv);
    memcpy(a->x0, w->state.x, (size_t)a->nv * sizeof *a->x0);
    a->t0 = w->state.t;
    a->nknots = 0;
    a->knot_error = 0;
}

void cb_audit_knot(cb_audit *a, int i, double t, const double x[3])
{
    if (!a || i < 0 || i >= a->nv) return;
    if (a->nknots == a->capknots) {
        long cap = a->capknots ? 2 * a->capknots : 1024;
        knot *k = cb_realloc(a->knots, (size_t)cap * sizeof *k);
        if (!k) {
            a->knot_error = 1;
            return;
        }
        a->knots = k;
        a->capknots = cap;
    }
    knot *k = &a->knots[a->nknots++];
    k->t = t;
    k->vertex = i;
    cb_v3_copy(k->x, x);
}

/* Sort the knots by vertex, keeping each vertex's order (a counting sort into the second
 * buffer, which then becomes the knots': no copy back), and flag the vertices with a
 * non-finite position at the start, the end or a knot (bad). A solver's path can hold
 * millions of knots a step (acm), so they are read twice in all. */
static int sort_knots(cb_audit *a, const double (*x1)[3])
{
    memset(a->first, 0, (size_t)(a->nv + 1) * sizeof *a->first);
    for (int i = 0; i < a->nv; i++) a->bad[i] = !cb_v3_isfinite(a->x0[i]) || !cb_v3_isfinite(x1[i]);
    if (a->nknots == 0) return 0;
    if (a->captmp < a->capknots) {
        knot *tmp = cb_realloc(a->tmp, (size_t)a->capknots * sizeof *tmp);
        if (!tmp) return -1;
        a->tmp = tmp;
        a->captmp = a->capknots;
    }
    for (long k = 0; k < a->nknots; k++) a->first[a->knots[k].vertex + 1]++;
    for (int i = 0; i < a->nv; i++) a->first[i + 1] += a->first[i];
    long *pos = a->pos;
    memcpy(pos, a->first, (size_t)a->nv * sizeof *pos);
    knot *tmp = a->tmp;
    for (long k = 0; k < a->nknots; k++) {
        const knot *kn = &a->knots[k];
        if (!cb_v3_isfinite(kn->x)) a->bad[kn->vertex] = 1;
        tmp[pos[kn->vertex]++] = *kn;
    }
    a->tmp = a->knots;
    a->knots = tmp;
    long cap = a->capknots;
    a->capknots = a->captmp;
    a->captmp = cap;
    return 0;
}

/* The box of vertex i's path from x0 through its knots to `end` (lo, hi) and the farthest
 * the path gets from x0 (reach: at a knot or the end, the distance from x0 being convex
 * along each piece); with u, each knot is first moved into the self pass's frame (by
 * -u (t - t0) / span), in the same pass over the knots. Plain comparisons rather than
 * fmin and fmax, which are library calls here, made for every coordinate of millions of
 * knots a step (acm); the positions are finite (callers skip the bad vertices), where
 * the two agree. */
static void path_box(cb_audit *a, int i, const double end[3], const double *u, double span)
{
    const double *x0 = a->x0[i];
    double lo[3], hi[3], r2 = cb_v3_dist2(end, x0);
    for (int q = 0; q < 3; q++) {
        lo[q] = end[q] < x0[q] ? end[q] : x0[q];
        hi[q] = end[q] > x0[q] ? end[q] : x0[q];
    }
    for (long k = a->first[i]; k < a->first[i + 1]; k++) {
        double *p = a->knots[k].x;
        if (u) cb_v3_axpy(p, -(a->knots[k].t - a->t0) / span, u);
        for (int q = 0; q < 3; q++) {
            lo[q] = p[q] < lo[q] ? p[q] : lo[q];
            hi[q] = p[q] > hi[q] ? p[q] : hi[q];
        }
        double d2 = cb_v3_dist2(p, x0);
        r2 = d2 > r2 ? d2 : r2;
    }
    cb_v3_copy(a->lo[i], lo);
    cb_v3_copy(a->hi[i], hi);
    a->reach[i] = sqrt(r2); /* the largest distance: sqrt is rounded monotonically */
}

/* Position of vertex i at time t (t0 <= t <= t1) on its path. *cursor (start it at
 * first[i]) remembers where the last, earlier, time was found: calls in increasing t
 * cost O(knots) together. */
static void position(const cb_audit *a, const double (*x1)[3], int i, double t, long *cursor, double out[3])
{
    double ta = a->t0, tb = a->t1;
    const double *xa = a->x0[i], *xb = x1[i];
    long k0 = *cursor;
    if (k0 > a->first[i]) {
        ta = a->knots[k0 - 1].t;
        xa = a->knots[k0 - 1].x;
    }
    for (long k = k0; k < a->first[i + 1]; k++) {
        const knot *kn = &a->knots[k];
        if (kn->t <= t) {
            ta = kn->t;
            xa = kn->x;
            *cursor = k + 1;
        } else {
            tb = kn->t;
            xb = kn->x;
            break;
        }
    }
    if (t >= tb) { /* the piece's end exactly, not xa + 1 (xb - xa) */
        cb_v3_copy(out, xb);
        return;
    }
    double s = (t - ta) / (tb - ta);
    for (int k = 0; k < 3; k++) out[k] = xa[k] + s * (xb[k] - xa[k]);
}

/* Knot times of the vertices v[0..n-1] (n <= 4) inside (t0, t1), with t0 and t1, sorted
 * and without repeats, into times (room for 2 + their knots). Returns the count. Each
 * vertex's knots are in time order (cb_audit_knot's contract; sort_knots keeps it), so
 * this merges n sorted lists: linear in the knots (an insertion sort was quadratic, which
 * a solver with thousands of knots per vertex and step paid for every pair). */
static int piece_times(const cb_audit *a, const int *v, int n, double *times)
{
    long pos[4], end[4];
    for (int j = 0; j < n; j++) {
        pos[j] = a->first[v[j]];
        end[j] = a->first[v[j] + 1];
    }
    int m = 0;
    times[m++] = a->t0;
    for (;;) {
        int best = -1;
        for (int j = 0; j < n; j++)
            if (pos[j] < end[j] && (best < 0 || a->knots[pos[j]].t < a->knots[pos[best]].t)) best = j;
        if (best < 0) break;
        double t = a->knots[pos[best]++].t;
        if (t > times[m - 1] && t < a->t1) times[m++] = t;
    }
    if (a->t1 > times[m - 1]) times[m++] = a->t1;
    return m;
}

#define MAX_PIECES 256

/* The piece bound: the CCD of most pieces of a path of many pieces (ipc's Newton iterates,
 * acm's kicks) is spared by a bound that costs a few norms. Along the pieces after a
 * reference configuration (the step's start, or the end of the last piece that went
 * through the CCD) where the pair is d_ref apart, no point of a primitive gets farther
 * from where it was at the reference than its farthest vertex (a fixed convex
 * combination of them), and a vertex on a straight piece is farthest at one of its
 * ends; so the pair stays at least G = d_ref - r_1 - r_2 apart (r_s: side s's farthest
 * vertex so far). A piece is spared when G > 4e-10 S + 0.05 L + 1e-9 (1 + d_ref): S the
 * largest coordinate magnitude in the four vertices' path boxes (at least the CCD's own,
 * that of the piece's ends), L the sum of both sides' largest vertex moves on it. Then
 * the CCD of that piece (contact/ccd.c, eta 0) returns no contact, the answer it would
 * give: its contact threshold is at most 1e-10 S, every interval narrower
 * than 2 (G - 1e-10 S) / L >= 0.1 is cleared by its Lipschitz test, so it stops after
 * a few dozen intervals, far from its interval cap and time tolerance; the last term
 * covers the rounding of d_ref (the whole-step test's margin). A piece that the bound
 * cannot spare goes through the CCD as before, and the next piece starts a new
 * reference. Counts are therefore the same with and without the bound
 * (cb_audit_set_exhaustive: tests/test_audit.c compares them). */
typedef struct piece_bound {
    int ee;              /* edge-edge: side 1 is vertices 0, 1; else vertex 0 */
    int stale;           /* take a new reference at the next piece's start */
    int misses;          /* fresh references in a row that did not spare their first piece */
    double S;            /* a bound of every coordinate magnitude on the pair's path */
    double ref[4][3], dref, r1, r2; /* r1, r2 squared */
} piece_bound;

static double pair_distance(int ee, const double *const x[4])
{
    double d2 = ee ? cb_edge_edge_distance2(x[0], x[1], x[2], x[3], NULL, NULL, NULL, NULL)
                   : cb_point_triangle_distance2(x[0], x[1], x[2], x[3], NULL, NULL);
    return sqrt(d2);
}

static void bound_reference(piece_bound *b, const double *const x[4], double d)
{
    for (int j = 0; j < 4; j++) cb_v3_copy(b->ref[j], x[j]);
    b->dref = d;
    b->r1 = b->r2 = 0.0;
    b->stale = 0;
}

/* 1 if the piece from P0 to P1 (the CCD's vertex order) is spared; 0: it goes through
 * the CCD, and the next piece takes a new reference. A pair whose fresh reference fails
 * its first piece twice in a row is close for its motion: its remaining pieces go to the
 * CCD without the bound (which would cost a distance each and spare nothing). */
static int bound_spares(piece_bound *b, const double *const P0[4], const double *const P1[4])
{
    if (b->misses >= 2) return 0;
    int fresh = b->stale || (b->r1 == 0.0 && b->r2 == 0.0);
    if (b->stale) bound_reference(b, P0, pair_distance(b->ee, P0));
    int n1 = b->ee ? 2 : 1;
    double l1 = 0, l2 = 0;
    for (int j = 0; j < 4; j++) {
        double r = cb_v3_dist2(P0[j], b->ref[j]), r_end = cb_v3_dist2(P1[j], b->ref[j]);
        double l = cb_v3_dist2(P0[j], P1[j]);
        r = r_end > r ? r_end : r;
        if (j < n1) {
            b->r1 = r > b->r1 ? r : b->r1;
            l1 = l > l1 ? l : l1;
        } else {
            b->r2 = r > b->r2 ? r : b->r2;
            l2 = l > l2 ? l : l2;
        }
    }
    double gap = b->dref - sqrt(b->r1) - sqrt(b->r2);
    if (gap > 4e-10 * b->S + 0.05 * (sqrt(l1) + sqrt(l2)) + 1e-9 * (1.0 + b->dref)) {
        b->misses = 0;
        return 1;
    }
    b->misses += fresh;
    b->stale = 1;
    return 0;
}

/* 1 if the pair (vertex-triangle: kind 0, v = {p, a, b, c}; edge-edge: kind 1,
 * v = {p, q, r, s}) reaches distance 0 on some piece of the step. */
static int pair_crosses(cb_audit *a, const double (*x1)[3], int kind, const int *v)
{
    for (int j = 0; j < 4; j++)
        if (a->bad[v[j]]) return 0;
    /* the paths' boxes: apart along an axis, the primitives never meet */
    int na = kind == 0 ? 1 : 2;
    for (int k = 0; k < 3; k++) {
        double alo = INFINITY, ahi = -INFINITY, blo = INFINITY, bhi = -INFINITY;
        for (int j = 0; j < 4; j++) {
            if (j < na) {
                alo = fmin(alo, a->lo[v[j]][k]);
                ahi = fmax(ahi, a->hi[v[j]][k]);
            } else {
                blo = fmin(blo, a->lo[v[j]][k]);
                bhi = fmax(bhi, a->hi[v[j]][k]);
            }
        }
        if (alo > bhi || blo > ahi) return 0;
    }
    /* no point moves farther than its vertices' reach: a pair apart by more than the two
     * primitives' reach at the start cannot touch during the step (most pairs) */
    const double (*x0)[3] = (const double (*)[3])a->x0;
    double d2 = kind == 0 ? cb_point_triangle_distance2(x0[v[0]], x0[v[1]], x0[v[2]], x0[v[3]], NULL, NULL)
                          : cb_edge_edge_distance2(x0[v[0]], x0[v[1]], x0[v[2]], x0[v[3]], NULL, NULL, NULL, NULL);
    double r0 = kind == 0 ? a->reach[v[0]] : fmax(a->reach[v[0]], a->reach[v[1]]);
    double r1 = kind == 0 ? fmax(a->reach[v[1]], fmax(a->reach[v[2]], a->reach[v[3]]))
                          : fmax(a->reach[v[2]], a->reach[v[3]]);
    double gap = sqrt(d2) - (r0 + r1);
    if (gap > 1e-9 * (1.0 + sqrt(d2))) return 0;
    long need = 2;
    for (int j = 0; j < 4; j++) need += a->first[v[j] + 1] - a->first[v[j]];
    double stack[MAX_PIECES], *times = need <= MAX_PIECES ? stack : cb_malloc((size_t)need * sizeof *times);
    if (!times) return 1; /* out of memory: the conservative answer */
    int m = piece_times(a, v, 4, times);
    cb_ccd_opts o = cb_default_ccd_opts();
    int hit = 0;
    long cursor[4];
    for (int j = 0; j < 4; j++) cursor[j] = a->first[v[j]];
    piece_bound b = {.ee = kind};
    const double *start[4] = {x0[v[0]], x0[v[1]], x0[v[2]], x0[v[3]]};
    bound_reference(&b, start, sqrt(d2));
    for (int j = 0; j < 4 && m > 2; j++) /* the path boxes hold every position of the pieces */
        for (int k = 0; k < 3; k++) b.S = fmax(b.S, fmax(fabs(a->lo[v[j]][k]), fabs(a->hi[v[j]][k])));
    for (int p = 0; p + 1 < m; p++) {
        double P0[4][3], P1[4][3], toi;
        if ((p % POLL_EVERY) == POLL_EVERY - 1 && cb_interrupt_requested()) break; /* the caller stops */
        for (int j = 0; j < 4; j++) {
            position(a, x1, v[j], times[p], &cursor[j], P0[j]);
            position(a, x1, v[j], times[p + 1], &cursor[j], P1[j]);
        }
        if (m > 2 && !a->exhaustive) {
            const double *e0[4] = {P0[0], P0[1], P0[2], P0[3]}, *e1[4] = {P1[0], P1[1], P1[2], P1[3]};
            if (bound_spares(&b, e0, e1)) {
                a->spared++;
                continue;
            }
        }
        a->checked++;
        hit = kind == 0 ? cb_ccd_vertex_triangle(P0[0], P1[0], P0[1], P1[1], P0[2], P1[2], P0[3], P1[3], &o, &toi)
                            : cb_ccd_edge_edge(P0[0], P1[0], P0[1], P1[1], P0[2], P1[2], P0[3], P1[3], &o, &toi);
        if (hit) break;
    }
    if (times != stack) free(times);
    return hit;
}

typedef struct visit_ctx {
    cb_audit *a;
    const cb_mesh *m;
    const double (*x1)[3];
    const int *vowner, *eowner;
    const int (*tedge)[3];
    long count;
    long visits;         /* pairs visited: the interrupt flag is read every POLL_EVERY */
} visit_ctx;


/* Two balls (centre, radius) that do not meet: what they hold never touches. */
static int too_far(const double c0[3], double r0, const double c1[3], double r1)
{
    double d[3];
    cb_v3_sub(d, c0, c1);
    double r = r0 + r1;
    return cb_v3_norm2(d) > r * r * (1.0 + 1e-12) + 1e-300;
}

static int in_triangle(const int *f, int v) { return f[0] == v || f[1] == v || f[2] == v; }

/* Two triangles whose swept boxes overlap (possibly sharing vertices): their vertex-
 * triangle and edge-edge pairs, each counted once (from its owning triangles, the
 * ownership of contact/bvh.h). First a test for the whole pair: along the line between
 * the centroids at the start, the two triangles are apart by more than their vertices'
 * reach, so no sub-pair can meet (the common case: neighbours in a grid). */
static int visit_pair(void *ctx, int ta, int tb, double *radius)
{
    (void)radius;
    visit_ctx *c = ctx;
    if ((++c->visits % POLL_EVERY) == 0 && cb_interrupt_requested()) return CB_ERR_INTERRUPTED;
    cb_audit *a = c->a;
    const int *fa = c->m->f[ta], *fb = c->m->f[tb];
    if (too_far(a->tc[ta], a->tr[ta] + a->treach[ta], a->tc[tb], a->tr[tb] + a->treach[tb])) return 0;
    const double (*x0)[3] = (const double (*)[3])a->x0;
    for (int side = 0; side < 2; side++) { /* vertices of A against B, then of B against A */
        const int *fv = side ? fb : fa, *ft = side ? fa : fb;
        int tv = side ? tb : ta;
        for (int j = 0; j < 3; j++) {
            int v = fv[j];
            int tt = side ? ta : tb;
            if (c->vowner[v] != tv || in_triangle(ft, v)) continue;
            if (too_far(x0[v], a->reach[v], a->tc[tt], a->tr[tt] + a->treach[tt])) continue;
            int q[4] = {v, ft[0], ft[1], ft[2]};
            c->count += pair_crosses(a, c->x1, 0, q);
        }
    }
    for (int i = 0; i < 3; i++) {
        int ea = c->tedge[ta][i];
        if (c->eowner[ea] != ta) continue;
        for (int j = 0; j < 3; j++) {
            int eb = c->tedge[tb][j];
            if (c->eowner[eb] != tb) continue;
            const int *p = c->m->e[ea], *r = c->m->e[eb];
            if (p[0] == r[0] || p[0] == r[1] || p[1] == r[0] || p[1] == r[1]) continue;
            if (too_far(a->ec[ea], a->er[ea], a->ec[eb], a->er[eb])) continue;
            int q[4] = {p[0], p[1], r[0], r[1]};
            c->count += pair_crosses(a, c->x1, 1, q);
        }
    }
    return 0;
}

static int interrupted(cb_error *err)
{
    return CB_FAIL(err, CB_ERR_INTERRUPTED, "audit: interrupted by a signal");
}

/* ---- the collider pass ---- */

/* The box an analytic collider sweeps over [t0, t1] (it translates; a spin keeps its
 * shape); 0 for the unbounded plane and for meshes. */
static int collider_box(const cb_collider *c, double t0, double t1, double lo[3], double hi[3])
{
    double ext[3], c0[3], c1[3];
    switch (c->type) {
    case CB_COLLIDER_SPHERE:
        for (int k = 0; k < 3; k++) {
            ext[k] = c->radius;
            c0[k] = c1[k] = c->center[k];
        }
        break;
    case CB_COLLIDER_CAPSULE:
        for (int k = 0; k < 3; k++) {
            ext[k] = c->radius + 0.5 * fabs(c->p1[k] - c->p0[k]);
            c0[k] = c1[k] = 0.5 * (c->p0[k] + c->p1[k]);
        }
        break;
    case CB_COLLIDER_BOX:
        for (int k = 0; k < 3; k++) {
            ext[k] = 0;
            for (int j = 0; j < 3; j++) ext[k] += fabs(c->axes[j][k]) * c->half[j];
            c0[k] = c1[k] = c->center[k];
        }
        break;
    default:
        return 0;
    }
    for (int k = 0; k < 3; k++) {
        c0[k] += c->velocity[k] * t0;
        c1[k] += c->velocity[k] * t1;
        double e = ext[k] * (1.0 + 1e-12) + 1e-12 * (fabs(c0[k]) + fabs(c1[k]));
        lo[k] = fmin(c0[k], c1[k]) - e;
        hi[k] = fmax(c0[k], c1[k]) + e;
    }
    return 1;
}

/* 1 if vertex i's path (its pieces) goes inside collider c; -1 when interrupted. */
static int vertex_enters(const cb_audit *a, const double (*x1)[3], const cb_collider *c, int i)
{
    double ta = a->t0;
    const double *xa = a->x0[i];
    for (long k = a->first[i]; k <= a->first[i + 1]; k++) {
        double tb = k < a->first[i + 1] ? a->knots[k].t : a->t1;
        const double *xb = k < a->first[i + 1] ? a->knots[k].x : x1[i];
        if (cb_collider_path_distance(c, ta, xa, tb, xb) < 0) return 1;
        ta = tb;
        xa = xb;
        if (((k - a->first[i]) % POLL_EVERY) == POLL_EVERY - 1 && cb_interrupt_requested()) return -1;
    }
    return 0;
}

/* The vertices whose path goes inside a collider (vin); -1 when interrupted. A vertex is
 * followed piece by piece only where the whole step cannot rule it out: its path box
 * meets the collider's swept box (collider_box) and its distance at t0 is at most how far
 * it moves relative to the collider (reach, world_path_boxes, plus the collider's own
 * travel); the count is that of every piece, at the cost of a few per vertex. Mesh
 * colliders: the ends of each piece here; the paths in between by CCD (mesh_pass). */
static long vertex_pass(cb_audit *a, const cb_world *w, const double (*x1)[3])
{
    memset(a->vin, 0, (size_t)a->nv);
    double span = a->t1 - a->t0;
    for (int c = 0; c < w->ncolliders; c++) {
        const cb_collider *col = &w->colliders[c];
        double clo[3], chi[3];
        int bounded = collider_box(col, a->t0, a->t1, clo, chi);
        double travel = col->type == CB_COLLIDER_MESH ? 0.0 : cb_v3_norm(col->velocity) * fabs(span);
        for (int i = 0; i < a->nv; i++) {
            if ((i % POLL_EVERY) == POLL_EVERY - 1 && cb_interrupt_requested()) return -1;
            if (a->vin[i] || a->bad[i] || w->inv_mass[i] == 0.0) continue;
            int apart = 0;
            for (int k = 0; k < 3 && bounded && !apart; k++) apart = a->lo[i][k] > chi[k] || a->hi[i][k] < clo[k];
            if (apart) continue;
            if (col->type != CB_COLLIDER_MESH &&
                cb_collider_distance(col, a->t0, a->x0[i]) - (a->reach[i] + travel) * (1.0 + 1e-12) > 0)
                continue;
            int in = vertex_enters(a, x1, col, i);
            if (in < 0) return -1;
            a->vin[i] = (unsigned char)in;
        }
    }
    return 0;
}

/* The box of every vertex's path in the world frame (lo, hi) and the farthest it gets from
 * x0 (reach: at a knot or the end, the distance being convex along each piece); a vertex
 * with a non-finite position gets harmless ones (its primitives are skipped). The self
 * pass recomputes all three in its own frame. */
static void world_path_boxes(cb_audit *a, const double (*x1)[3])
{
    for (int i = 0; i < a->nv; i++) {
        if (a->bad[i]) {
            cb_v3_zero(a->lo[i]);
            cb_v3_zero(a->hi[i]);
            a->reach[i] = 0.0;
        } else {
            path_box(a, i, x1[i], NULL, 1.0);
        }
    }
}

/* The times that cut the step into the pieces of the n vertices v (piece_times) into
 * *times: the caller's stack when they fit, else allocated (free it when it is not
 * `stack`). Returns their count, 0 out of memory. */
static int pieces_of(const cb_audit *a, const int *v, int n, double *stack, double **times)
{
    long need = 2;
    for (int j = 0; j < n; j++) need += a->first[v[j] + 1] - a->first[v[j]];
    *times = need <= MAX_PIECES ? stack : cb_malloc((size_t)need * sizeof **times);
    return *times ? piece_times(a, v, n, *times) : 0;
}

/* 1 if a point of the primitive v (n = 2 or 3 vertices) goes inside the analytic
 * collider c on some piece of the step (cb_collider_swept_primitive_inside). */
static int primitive_enters(const cb_audit *a, const double (*x1)[3], const cb_collider *c, const int *v, int n)
{
    /* first the whole step at once: no point of the primitive moves farther from where it
     * was at t0, relative to the collider, than its farthest vertex (a point is a fixed
     * combination of its vertices), and that vertex distance is largest at a knot or the
     * end (it is convex along each piece); a primitive outside by more than that at t0
     * never gets in. Most primitives near a collider stop here, whatever their knots. */
    double p0[3][3], reach = 0;
    for (int j = 0; j < n; j++) {
        cb_v3_copy(p0[j], a->x0[v[j]]);
        for (long k = a->first[v[j]]; k <= a->first[v[j] + 1]; k++) {
            double t = k < a->first[v[j] + 1] ? a->knots[k].t : a->t1, d[3];
            const double *x = k < a->first[v[j] + 1] ? a->knots[k].x : x1[v[j]];
            for (int q = 0; q < 3; q++) d[q] = x[q] - p0[j][q] - c->velocity[q] * (t - a->t0);
            reach = fmax(reach, cb_v3_norm(d));
        }
    }
    if (cb_collider_primitive_lower_bound(c, a->t0, n, (const double (*)[3])p0) - reach >= 0) return 0;
    double stack[MAX_PIECES], *times;
    int m = pieces_of(a, v, n, stack, &times);
    if (!m) return 1; /* out of memory: the conservative answer */
    long cursor[3];
    for (int j = 0; j < n; j++) cursor[j] = a->first[v[j]];
    int hit = 0;
    for (int p = 0; p + 1 < m && !hit; p++) {
        double P0[3][3], P1[3][3];
        for (int j = 0; j < n; j++) {
            position(a, x1, v[j], times[p], &cursor[j], P0[j]);
            position(a, x1, v[j], times[p + 1], &cursor[j], P1[j]);
        }
        hit = cb_collider_swept_primitive_inside(c, times[p], times[p + 1], n, (const double (*)[3])P0,
                                                 (const double (*)[3])P1);
    }
    if (times != stack) free(times);
    return hit;
}

/* The edges (n = 2) or triangles (n = 3) that go inside an analytic collider, beyond
 * their vertices: those with no vertex (triangles: and no edge) already inside are
 * tried against every bounded analytic collider whose swept box meets theirs. The plane
 * needs none: the height is linear, so its minimum over a moving edge or triangle is at
 * a vertex at a piece's end. Returns -1 when interrupted. */
static int analytic_pass(cb_audit *a, const cb_world *w, const double (*x1)[3], int n)
{
    const cb_mesh *m = w->mesh;
    const int (*tedge)[3] = n == 3 ? cb_bvh_triangle_edges(a->bvh) : NULL;
    int count = n == 2 ? m->ne : m->nf;
    unsigned char *flag = n == 2 ? a->ein : a->fin;
    for (int c = 0; c < w->ncolliders; c++) {
        const cb_collider *col = &w->colliders[c];
        double clo[3], chi[3];
        if (!collider_box(col, a->t0, a->t1, clo, chi)) continue;
        for (int e = 0; e < count; e++) {
            if ((e % POLL_EVERY) == POLL_EVERY - 1 && cb_interrupt_requested()) return -1;
            if (flag[e]) continue;
            const int *v = n == 2 ? m->e[e] : m->f[e];
            int skip = 0, pinned = 1;
            for (int j = 0; j < n; j++) {
                skip |= a->bad[v[j]] || a->vin[v[j]];
                pinned &= w->inv_mass[v[j]] == 0.0;
                if (n == 3) skip |= a->ein[tedge[e][j]];
            }
            if (skip || pinned) continue;
            int apart = 0;
            for (int k = 0; k < 3 && !apart; k++) {
                double lo = INFINITY, hi = -INFINITY;
                for (int j = 0; j < n; j++) {
                    lo = fmin(lo, a->lo[v[j]][k]);
                    hi = fmax(hi, a->hi[v[j]][k]);
                }
                apart = lo > chi[k] || hi < clo[k];
            }
            if (!apart) flag[e] = (unsigned char)primitive_enters(a, x1, col, v, n);
        }
    }
    return 0;
}

/* A mesh collider's vertex j at time t (its rigid motion, contact/trimesh_collider.h). */
static void collider_vertex_at(const cb_collider *c, int j, double t, double out[3])
{
    double R[3][3], T[3], p[3], d[3];
    cb_trimesh_collider_pose(c->mesh, t, R, T, p);
    cb_v3_sub(d, cb_trimesh_collider_mesh(c->mesh)->x[j], p);
    for (int k = 0; k < 3; k++) out[k] = p[k] + T[k] + R[k][0] * d[0] + R[k][1] * d[1] + R[k][2] * d[2];
}

/* The BVH of every mesh collider, built on its rest positions (refit every step). */
static int mesh_colliders_create(cb_audit *a, const cb_world *w, cb_error *err)
{
    int maxv = 0;
    for (int c = 0; c < w->ncolliders; c++)
        if (w->colliders[c].type == CB_COLLIDER_MESH && w->colliders[c].mesh) {
            const cb_mesh *cm = cb_trimesh_collider_mesh(w->colliders[c].mesh);
            maxv = cm->nv > maxv ? cm->nv : maxv;
        }
    if (!maxv || !a->bvh) return CB_OK;
    a->cbvh = cb_calloc((size_t)w->ncolliders, sizeof *a->cbvh);
    a->cx0 = cb_calloc((size_t)maxv, sizeof *a->cx0);
    a->cx1 = cb_calloc((size_t)maxv, sizeof *a->cx1);
    if (!a->cbvh || !a->cx0 || !a->cx1) return CB_FAIL(err, CB_ERR_NOMEM, "audit: out of memory (mesh colliders)");
    a->ncbvh = w->ncolliders;
    for (int c = 0; c < w->ncolliders; c++) {
        const cb_collider *col = &w->colliders[c];
        if (col->type != CB_COLLIDER_MESH || !col->mesh) continue;
        const cb_mesh *cm = cb_trimesh_collider_mesh(col->mesh);
        int rc = cb_bvh_create(cm, CB_BV_AABB, &a->cbvh[c], err);
        if (!rc) rc = cb_bvh_build(a->cbvh[c], (const double (*)[3])cm->x, 0.0, err);
        if (rc) return rc;
    }
    return CB_OK;
}

typedef struct mesh_ctx {
    cb_audit *a;
    const cb_world *w;
    const cb_collider *c;
    const cb_mesh *cm;        /* the collider's rest mesh */
    const double (*x1)[3];
    const int *vowner, *eowner, *cvowner, *ceowner;
    const int (*tedge)[3], (*ctedge)[3];
    long visits;
} mesh_ctx;

enum { CLOTH_VERTEX = 0, CLOTH_EDGE = 1, CLOTH_FACE = 2 };

/* 1 if the cloth primitive cv (kind: a vertex against the collider's triangle mv, an
 * edge against its edge mv, a triangle against its vertex mv) reaches distance 0 on
 * some piece of the step: cb_ccd (eta 0) with both on straight lines over each piece
 * (the collider's vertices on the chords between its poses at the piece's ends). */
static int mesh_pair_crosses(const mesh_ctx *x, int kind, const int *cv, const int *mv)
{
    static const int ncloth[3] = {1, 2, 3}, ncoll[3] = {3, 2, 1};
    const cb_audit *a = x->a;
    double stack[MAX_PIECES], *times;
    int m = pieces_of(a, cv, ncloth[kind], stack, &times);
    if (!m) return 1;
    long cursor[3];
    for (int j = 0; j < ncloth[kind]; j++) cursor[j] = a->first[cv[j]];
    cb_ccd_opts o = cb_default_ccd_opts();
    int hit = 0;
    double C0[3][3], C1[3][3], K0[3][3], K1[3][3], toi;
    for (int j = 0; j < ncoll[kind]; j++) collider_vertex_at(x->c, mv[j], times[0], C1[j]);
    for (int p = 0; p + 1 < m && !hit; p++) {
        for (int j = 0; j < ncloth[kind]; j++) {
            position(a, x->x1, cv[j], times[p], &cursor[j], K0[j]);
            position(a, x->x1, cv[j], times[p + 1], &cursor[j], K1[j]);
        }
        for (int j = 0; j < ncoll[kind]; j++) {
            cb_v3_copy(C0[j], C1[j]);
            collider_vertex_at(x->c, mv[j], times[p + 1], C1[j]);
        }
        if (kind == CLOTH_VERTEX)
            hit = cb_ccd_vertex_triangle(K0[0], K1[0], C0[0], C1[0], C0[1], C1[1], C0[2], C1[2], &o, &toi);
        else if (kind == CLOTH_EDGE)
            hit = cb_ccd_edge_edge(K0[0], K1[0], K0[1], K1[1], C0[0], C1[0], C0[1], C1[1], &o, &toi);
        else
            hit = cb_ccd_vertex_triangle(C0[0], C1[0], K0[0], K1[0], K0[1], K1[1], K0[2], K1[2], &o, &toi);
    }
    if (times != stack) free(times);
    return hit;
}

static int all_pinned(const cb_world *w, const int *v, int n)
{
    for (int j = 0; j < n; j++)
        if (w->inv_mass[v[j]] != 0.0) return 0;
    return 1;
}

/* A cloth triangle ta and a collider triangle tb whose swept boxes meet: the cloth's
 * vertices (owned by ta) against tb, its edges against tb's edges (and through tb at the
 * start of the step), ta against tb's vertices (and pierced by tb's edges at the start).
 * A crossing of the surface that starts inside the step begins with one of these
 * contacts: an edge whose ends stay off the surface meets it first at an edge of it, a
 * triangle whose edges stay off it meets it first at a vertex of it. */
static int visit_mesh(void *ctx, int ta, int tb, double *radius)
{
    (void)radius;
    mesh_ctx *x = ctx;
    if ((++x->visits % POLL_EVERY) == 0 && cb_interrupt_requested()) return CB_ERR_INTERRUPTED;
    cb_audit *a = x->a;
    const cb_world *w = x->w;
    const int *f = w->mesh->f[ta], *g = x->cm->f[tb];
    for (int j = 0; j < 3; j++) {
        int v = f[j];
        if (x->vowner[v] != ta || a->vin[v] || a->bad[v] || w->inv_mass[v] == 0.0) continue;
        a->vin[v] = (unsigned char)mesh_pair_crosses(x, CLOTH_VERTEX, &f[j], g);
    }
    int fbad = a->bad[f[0]] || a->bad[f[1]] || a->bad[f[2]];
    if (fbad) return 0;
    double G0[3][3];
    for (int j = 0; j < 3; j++) collider_vertex_at(x->c, g[j], a->t0, G0[j]);
    for (int i = 0; i < 3; i++) {
        int e = x->tedge[ta][i];
        const int *ev = w->mesh->e[e];
        if (x->eowner[e] != ta || a->ein[e] || all_pinned(w, ev, 2)) continue;
        int hit = cb_segment_triangle_intersect(a->x0[ev[0]], a->x0[ev[1]], G0[0], G0[1], G0[2]);
        for (int j = 0; j < 3 && !hit; j++) {
            int ce = x->ctedge[tb][j];
            if (x->ceowner[ce] == tb) hit = mesh_pair_crosses(x, CLOTH_EDGE, ev, x->cm->e[ce]);
        }
        a->ein[e] = (unsigned char)hit;
    }
    if (a->fin[ta] || all_pinned(w, f, 3)) return 0;
    int hit = 0;
    for (int j = 0; j < 3 && !hit; j++) {
        int ce = x->ctedge[tb][j];
        if (x->ceowner[ce] != tb) continue;
        double s0[3], s1[3];
        collider_vertex_at(x->c, x->cm->e[ce][0], a->t0, s0);
        collider_vertex_at(x->c, x->cm->e[ce][1], a->t0, s1);
        hit = cb_segment_triangle_intersect(s0, s1, a->x0[f[0]], a->x0[f[1]], a->x0[f[2]]);
    }
    for (int j = 0; j < 3 && !hit; j++)
        if (x->cvowner[g[j]] == tb) hit = mesh_pair_crosses(x, CLOTH_FACE, f, &g[j]);
    a->fin[ta] = (unsigned char)hit;
    return 0;
}

/* Every mesh collider against the cloth: both BVHs refit with their swept boxes (the
 * cloth's path boxes in lo, hi; the collider's vertices at t0 and t1, widened by how far
 * the middle pose is from the chord, which covers a rotation's arc), then visit_mesh on
 * the pairs whose boxes meet. */
static int mesh_pass(cb_audit *a, const cb_world *w, const double (*x1)[3], cb_error *err)
{
    if (!a->cbvh) return CB_OK;
    int rc = cb_bvh_refit_swept(a->bvh, (const double (*)[3])a->lo, (const double (*)[3])a->hi, 0.0, err);
    for (int c = 0; c < a->ncbvh && !rc; c++) {
        if (!a->cbvh[c]) continue;
        const cb_collider *col = &w->colliders[c];
        const cb_mesh *cm = cb_trimesh_collider_mesh(col->mesh);
        double margin = 0, tm = 0.5 * (a->t0 + a->t1), xm[3];
        for (int j = 0; j < cm->nv; j++) {
            collider_vertex_at(col, j, a->t0, a->cx0[j]);
            collider_vertex_at(col, j, a->t1, a->cx1[j]);
            collider_vertex_at(col, j, tm, xm);
            for (int k = 0; k < 3; k++) margin = fmax(margin, fabs(xm[k] - 0.5 * (a->cx0[j][k] + a->cx1[j][k])));
        }
        rc = cb_bvh_refit_swept(a->cbvh[c], (const double (*)[3])a->cx0, (const double (*)[3])a->cx1,
                                2.0 * margin, err);
        if (rc) break;
        mesh_ctx x = {a, w, col, cm, x1, cb_bvh_vertex_owners(a->bvh), cb_bvh_edge_owners(a->bvh),
                      cb_bvh_vertex_owners(a->cbvh[c]), cb_bvh_edge_owners(a->cbvh[c]),
                      cb_bvh_triangle_edges(a->bvh), cb_bvh_triangle_edges(a->cbvh[c]), 0};
        rc = cb_bvh_pair_visit(a->bvh, a->cbvh[c], 0.0, visit_mesh, &x, err);
    }
    return rc;
}

/* What crossed a collider this step: vertices (returned), and beyond them edges and
 * triangles (a->edge_crossings, a->face_crossings). */
static int collider_pass(cb_audit *a, const cb_world *w, const double (*x1)[3], long *vertices, cb_error *err)
{
    const cb_mesh *m = w->mesh;
    memset(a->ein, 0, (size_t)m->ne);
    memset(a->fin, 0, (size_t)m->nf);
    world_path_boxes(a, x1);
    if (vertex_pass(a, w, x1) < 0) return interrupted(err);
    int rc = mesh_pass(a, w, x1, err);
    if (rc == CB_ERR_INTERRUPTED) return interrupted(err);
    if (rc) return rc;
    if (analytic_pass(a, w, x1, 2) < 0 || (a->bvh && analytic_pass(a, w, x1, 3) < 0)) return interrupted(err);
    long nv = 0, ne = 0, nf = 0;
    for (int i = 0; i < a->nv; i++) nv += a->vin[i];
    for (int e = 0; e < m->ne; e++) ne += a->ein[e] && !a->vin[m->e[e][0]] && !a->vin[m->e[e][1]];
    const int (*tedge)[3] = a->bvh ? cb_bvh_triangle_edges(a->bvh) : NULL;
    for (int t = 0; t < m->nf && tedge; t++) {
        int beyond = a->fin[t];
        for (int j = 0; j < 3; j++) beyond = beyond && !a->vin[m->f[t][j]] && !a->ein[tedge[t][j]];
        nf += beyond;
    }
    *vertices = nv;
    a->edge_crossings = ne;
    a->face_crossings = nf;
    return CB_OK;
}

static void balls(cb_audit *a, const cb_mesh *m)
{
    const double (*x0)[3] = (const double (*)[3])a->x0;
    for (int t = 0; t < m->nf; t++) {
        const int *f = m->f[t];
        double *c = a->tc[t], r2 = 0, reach = 0;
        for (int k = 0; k < 3; k++) c[k] = (x0[f[0]][k] + x0[f[1]][k] + x0[f[2]][k]) / 3.0;
        for (int j = 0; j < 3; j++) {
            double d[3];
            cb_v3_sub(d, x0[f[j]], c);
            double q = cb_v3_norm2(d);
            r2 = q > r2 ? q : r2;
            reach = a->reach[f[j]] > reach ? a->reach[f[j]] : reach;
        }
        a->tr[t] = sqrt(r2) * (1.0 + 1e-12);
        a->treach[t] = reach;
    }
    for (int e = 0; e < m->ne; e++) {
        const int *v = m->e[e];
        for (int k = 0; k < 3; k++) a->ec[e][k] = 0.5 * (x0[v[0]][k] + x0[v[1]][k]);
        double reach = a->reach[v[0]] > a->reach[v[1]] ? a->reach[v[0]] : a->reach[v[1]];
        a->er[e] = 0.5 * cb_v3_dist(x0[v[0]], x0[v[1]]) * (1.0 + 1e-12) + reach;
    }
}


int cb_audit_end(cb_audit *a, const cb_world *w, long *self_out, long *coll_out, cb_error *err)
{
    if (!a || !w || !self_out || !coll_out) return CB_FAIL(err, CB_ERR_INPUT, "cb_audit_end: NULL argument");
    *self_out = *coll_out = 0;
    a->t1 = w->state.t;
    const double (*x1)[3] = (const double (*)[3])w->state.x;
    if (cb_interrupt_requested()) return interrupted(err);
    if (a->knot_error || sort_knots(a, x1)) return CB_FAIL(err, CB_ERR_NOMEM, "audit: out of memory for the path knots");
    a->edge_crossings = a->face_crossings = 0;
    if (w->ncolliders) {
        int rc = collider_pass(a, w, x1, coll_out, err);
        if (rc) {
            *coll_out = a->edge_crossings = a->face_crossings = 0;
            return rc;
        }
    }
    if (!a->self_pairs) return CB_OK;
    /* Distances within the cloth do not change under a translation common to all of it,
     * so the self check runs in the frame that moves with the mean displacement u over
     * the step (x(t) - u (t - t0)/(t1 - t0)): a falling or sliding cloth then hardly
     * moves, and its swept boxes and reaches stay small. */
    double u[3] = {0, 0, 0};
    int nok = 0;
    for (int i = 0; i < a->nv; i++)
        if (!a->bad[i]) {
            for (int k = 0; k < 3; k++) u[k] += x1[i][k] - a->x0[i][k];
            nok++;
        }
    if (nok) cb_v3_scale(u, u, 1.0 / nok);
    double span = a->t1 > a->t0 ? a->t1 - a->t0 : 1.0;
    for (int i = 0; i < a->nv; i++) {
        cb_v3_sub(a->x1r[i], x1[i], u);
        if (a->bad[i]) { /* a harmless box: its pairs are skipped anyway */
            cb_v3_zero(a->lo[i]);
            cb_v3_zero(a->hi[i]);
            a->reach[i] = 0;
            continue;
        }
        path_box(a, i, a->x1r[i], u, span);
    }
    const double (*x1r)[3] = (const double (*)[3])a->x1r;
    double rmax = 0;
    int any_bad = 0;
    for (int i = 0; i < a->nv; i++) {
        rmax = a->reach[i] > rmax ? a->reach[i] : rmax;
        any_bad |= a->bad[i];
    }
    /* no two points came closer than 2 rmax to where they were: a start separation
     * above that proves the step crossing-free */
    double need = 2.0 * rmax * (1.0 + 1e-9);
    if (!any_bad && a->sep_lb > need) {
        a->sep_lb -= need;
        a->skipped++;
        a->backoff = 1;
        return CB_OK;
    }
    a->sep_lb = -1.0;
    balls(a, w->mesh);
    /* the swept volume of a triangle encloses its vertices' boxes: lo and hi as the two
     * "positions" of each vertex give exactly the box of the box corners */
    int rc = cb_bvh_refit_swept(a->bvh, (const double (*)[3])a->lo, (const double (*)[3])a->hi, 0.0, err);
    if (rc) return rc;
    visit_ctx vc = {a, w->mesh, x1r, cb_bvh_vertex_owners(a->bvh), cb_bvh_edge_owners(a->bvh),
                    cb_bvh_triangle_edges(a->bvh), 0, 0};
    rc = cb_bvh_self_visit(a->bvh, 0.0, visit_pair, &vc, err);
    if (rc == CB_ERR_INTERRUPTED || cb_interrupt_requested()) return interrupted(err);
    if (rc < 0) return rc;
    *self_out = vc.count;
    /* the exact smallest separation at the end, as the next steps' bound. It costs
     * several full searches, so only when the cloth moves little relative to itself
     * (under 5% of an edge per step: a bound of the order of an edge then lasts many
     * steps), and when it does not pay (the next step needs the full search anyway)
     * again only after twice as many full searches (at most 64) */
    if (!any_bad && --a->wait <= 0 && 2.0 * rmax < 0.05 * a->edge_mean) {
        double d = NAN;
        if (cb_selfcheck_min_separation(a->check, x1, &d, NULL, NULL, NULL, NULL) >= 0 && d > 0)
            a->sep_lb = d * (1.0 - 1e-9) - 1e-300;
        a->wait = a->backoff;
        a->backoff = a->backoff < 64 ? 2 * a->backoff : 64;
    }
    return CB_OK;
}

void cb_audit_collider_primitives(const cb_audit *a, long *edges, long *faces)
{
    if (edges) *edges = a ? a->edge_crossings : 0;
    if (faces) *faces = a ? a->face_crossings : 0;
}

void cb_audit_set_exhaustive(cb_audit *a, int on)
{
    if (a) a->exhaustive = on != 0;
}

void cb_audit_pieces(const cb_audit *a, long *checked, long *spared)
{
    if (checked) *checked = a ? a->checked : 0;
    if (spared) *spared = a ? a->spared : 0;
}
