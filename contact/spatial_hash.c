/* contact/spatial_hash.c — hashed uniform grid giving vertex-triangle candidates
 * (Teschner et al. 2003); see spatial_hash.h. */
#include "contact/spatial_hash.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

struct cb_spatial_hash {
    double scale;
    int box_filter;             /* candidates restricted to the inflated box, sorted by vertex */
    double cell;
    uint64_t pmagic;            /* ceil(2^64 / P): h mod P by two multiplications */
    int nv_cap;                 /* capacity of the per-vertex arrays */
    long tsize;                 /* P, table size used for the current nv */
    int tsize_nv;               /* nv that tsize was computed for */
    long tcap;                  /* capacity of start[] (tsize + 1) */
    int64_t (*vcell)[3];        /* [nv] integer cell of each vertex */
    long *vbucket;              /* [nv] bucket of each vertex */
    long *start;                /* [P + 1] bucket offsets into entries */
    int *entries;               /* [nv] vertices sorted by bucket */
    double (*ex)[3];            /* [nv] their positions, in the same order */
    int64_t (*ec)[3];           /* [nv] their cells, in the same order */
    cb_pair_list pairs;
};

int cb_spatial_hash_create(double cell_scale, cb_spatial_hash **out, cb_error *err)
{
    if (!out) return CB_FAIL(err, CB_ERR_INPUT, "cb_spatial_hash_create: out is NULL");
    *out = NULL;
    if (!(cell_scale > 0.0) || !isfinite(cell_scale))
        return CB_FAIL(err, CB_ERR_INPUT, "spatial hash cell scale must be finite and > 0 (got %g)", cell_scale);
    cb_spatial_hash *h = cb_calloc(1, sizeof *h);
    if (!h) return CB_FAIL(err, CB_ERR_NOMEM, "out of memory allocating a spatial hash");
    h->scale = cell_scale;
    *out = h;
    return 0;
}

void cb_spatial_hash_free(cb_spatial_hash **hp)
{
    if (!hp || !*hp) return;
    cb_spatial_hash *h = *hp;
    free(h->vcell);
    free(h->vbucket);
    free(h->start);
    free(h->entries);
    free(h->ex);
    free(h->ec);
    cb_pair_list_release(&h->pairs);
    free(h);
    *hp = NULL;
}

void cb_spatial_hash_set_box_filter(cb_spatial_hash *h, int on) { CB_ASSERT(h != NULL); h->box_filter = on != 0; }
const cb_pair_list *cb_spatial_hash_pairs(const cb_spatial_hash *h) { CB_ASSERT(h != NULL); return &h->pairs; }
double cb_spatial_hash_cell_size(const cb_spatial_hash *h) { CB_ASSERT(h != NULL); return h->cell; }
long cb_spatial_hash_table_size(const cb_spatial_hash *h) { CB_ASSERT(h != NULL); return h->tsize; }

static int is_prime(long n)
{
    if (n < 2) return 0;
    if (n % 2 == 0) return n == 2;
    for (long d = 3; d * d <= n; d += 2)
        if (n % d == 0) return 0;
    return 1;
}

/* Teschner's hash folded to 32 bits, reduced mod P (P < 2^32) without a division:
 * for a < 2^32, a mod P = floor(((M a) mod 2^64) P / 2^64) with M = ceil(2^64 / P)
 * (Lemire, Kaser, Kurz 2019, "Faster remainder by direct computation"). */
static inline long hash_cell(int64_t i, int64_t j, int64_t k, long p, uint64_t magic)
{
    uint64_t hv = ((uint64_t)i * 73856093u) ^ ((uint64_t)j * 19349663u) ^ ((uint64_t)k * 83492791u);
    uint32_t a = (uint32_t)(hv ^ (hv >> 32));
    uint64_t low = magic * a;
    return (long)(((unsigned __int128)low * (uint64_t)p) >> 64);
}

/* Make room for nv vertices and a table for them; allocates only when nv grows. */
static int ensure_capacity(cb_spatial_hash *h, int nv, cb_error *err)
{
    if (h->tsize_nv != nv || h->tsize == 0) {
        long p = 2L * nv + 1;
        while (!is_prime(p)) p++;
        if (p >= 4294967296L)
            return CB_FAIL(err, CB_ERR_INPUT, "spatial hash: %d vertices need a table beyond 2^32 buckets", nv);
        h->tsize = p;
        h->tsize_nv = nv;
        h->pmagic = UINT64_MAX / (uint64_t)p + 1;
    }
    if (nv > h->nv_cap) {
        free(h->vcell);
        free(h->vbucket);
        free(h->entries);
        free(h->ex);
        free(h->ec);
        h->vcell = cb_calloc((size_t)nv, sizeof *h->vcell);
        h->vbucket = cb_calloc((size_t)nv, sizeof(long));
        h->entries = cb_calloc((size_t)nv, sizeof(int));
        h->ex = cb_calloc((size_t)nv, sizeof *h->ex);
        h->ec = cb_calloc((size_t)nv, sizeof *h->ec);
        h->nv_cap = (h->vcell && h->vbucket && h->entries && h->ex && h->ec) ? nv : 0;
        if (!h->nv_cap) return CB_FAIL(err, CB_ERR_NOMEM, "out of memory for a spatial hash of %d vertices", nv);
    }
    if (h->tsize + 1 > h->tcap) {
        free(h->start);
        h->start = cb_calloc((size_t)h->tsize + 1, sizeof(long));
        h->tcap = h->start ? h->tsize + 1 : 0;
        if (!h->start) return CB_FAIL(err, CB_ERR_NOMEM, "out of memory for a spatial hash table of %ld buckets", h->tsize);
    }
    return 0;
}

/* Cell coordinate of a value: floor(c / cell) as an integer, range-checked by the
 * caller. A true division (not a product with 1/cell), so the cell of a point is what
 * a reader computes by hand; it is monotone in c, which the guarantee needs. */
static inline int64_t cell_of(double c, double cell)
{
    double q = c / cell;
    int64_t i = (int64_t)q; /* truncation, then one down for negative non-integers: floor */
    return i - (q < (double)i);
}

int cb_spatial_hash_query(cb_spatial_hash *h, const cb_mesh *m, const double (*x)[3], double distance,
                          cb_error *err)
{
    if (!h || !m || !x) return CB_FAIL(err, CB_ERR_INPUT, "cb_spatial_hash_query: NULL argument");
    h->pairs.n = 0;
    if (m->nv <= 0 || m->nf <= 0 || !m->f)
        return CB_FAIL(err, CB_ERR_INPUT, "spatial hash: empty mesh (%d vertices, %d triangles)", m->nv, m->nf);
    if (!(distance >= 0.0) || !isfinite(distance))
        return CB_FAIL(err, CB_ERR_INPUT, "spatial hash: distance must be finite and >= 0 (got %g)", distance);
    double maxabs = 0.0;
    for (int v = 0; v < m->nv; v++) {
        for (int k = 0; k < 3; k++) {
            double c = x[v][k];
            if (!isfinite(c))
                return CB_FAIL(err, CB_ERR_INPUT, "spatial hash: vertex %d has a non-finite coordinate (%g, %g, %g)",
                               v, x[v][0], x[v][1], x[v][2]);
            if (fabs(c) > maxabs) maxabs = fabs(c);
        }
    }
    /* cell size from the mean edge length (edge list if present, else triangle sides) */
    double sum = 0.0;
    long cnt = 0;
    if (m->ne > 0 && m->e) {
        for (int e = 0; e < m->ne; e++) {
            const double *a = x[m->e[e][0]], *b = x[m->e[e][1]];
            sum += sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
        }
        cnt = m->ne;
    } else {
        for (int t = 0; t < m->nf; t++)
            for (int k = 0; k < 3; k++) {
                const double *a = x[m->f[t][k]], *b = x[m->f[t][(k + 1) % 3]];
                sum += sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
            }
        cnt = 3L * m->nf;
    }
    double cell = h->scale * (sum / (double)cnt);
    if (!(cell > 0.0) || !isfinite(cell)) cell = distance > 0.0 ? distance : 1.0;
    /* slack for rounding: the inflated box must contain every point within `distance` */
    double slack = cb_spatial_hash_slack(distance, maxabs);
    if ((maxabs + distance + slack) / cell >= 1099511627776.0 /* 2^40 */)
        return CB_FAIL(err, CB_ERR_INPUT, "spatial hash: coordinates up to %g are too large for cells of %g",
                       maxabs, cell);
    h->cell = cell;
    int rc = ensure_capacity(h, m->nv, err);
    if (rc) return rc;

    const long p = h->tsize;
    const uint64_t magic = h->pmagic;
    for (long i = 0; i <= p; i++) h->start[i] = 0;
    for (int v = 0; v < m->nv; v++) {
        int64_t *c = h->vcell[v];
        for (int k = 0; k < 3; k++) c[k] = cell_of(x[v][k], cell);
        long bkt = hash_cell(c[0], c[1], c[2], p, magic);
        h->vbucket[v] = bkt;
        h->start[bkt + 1]++;
    }
    for (long i = 0; i < p; i++) h->start[i + 1] += h->start[i];
    /* fill in vertex order (stable), using start[b] as a cursor, then shift back */
    for (int v = 0; v < m->nv; v++) {
        long e = h->start[h->vbucket[v]]++;
        h->entries[e] = v;
        for (int k = 0; k < 3; k++) {
            h->ex[e][k] = x[v][k];
            h->ec[e][k] = h->vcell[v][k];
        }
    }
    for (long i = p; i > 0; i--) h->start[i] = h->start[i - 1];
    h->start[0] = 0;

    const double r = distance + slack;
    const int filter = h->box_filter;
    for (int t = 0; t < m->nf; t++) {
        const int *f = m->f[t];
        int64_t lo[3], hi[3];
        double blo[3], bhi[3];
        cb_spatial_hash_tri_box(x, f, r, blo, bhi);
        for (int k = 0; k < 3; k++) {
            lo[k] = cell_of(blo[k], cell);
            hi[k] = cell_of(bhi[k], cell);
        }
        long first = h->pairs.n;
        const int f0 = f[0], f1 = f[1], f2 = f[2];
        for (int64_t i = lo[0]; i <= hi[0]; i++)
            for (int64_t j = lo[1]; j <= hi[1]; j++)
                for (int64_t k = lo[2]; k <= hi[2]; k++) {
                    long bkt = hash_cell(i, j, k, p, magic), e0 = h->start[bkt], e1 = h->start[bkt + 1];
                    if (e0 == e1) continue;
                    if (h->pairs.n + (e1 - e0) > h->pairs.cap && cb_pair_list_reserve(&h->pairs, h->pairs.n + (e1 - e0)))
                        return CB_FAIL(err, CB_ERR_NOMEM, "out of memory growing the spatial hash pairs");
                    /* over the bucket's entries (positions and cells stored in bucket
                     * order): write every vertex, keep it when it qualifies */
                    long n = h->pairs.n;
                    int (*out)[2] = h->pairs.p;
                    const int *ev = h->entries;
                    const int64_t (*ec)[3] = (const int64_t (*)[3])h->ec;
                    const double (*ex)[3] = (const double (*)[3])h->ex;
                    for (long e = e0; e < e1; e++) {
                        const double *q = ex[e];
                        /* with the filter, the box test first (most entries fail it);
                         * then the cell (each vertex once: at its own cell, not at a
                         * colliding one) */
                        if (filter && !((q[0] >= blo[0]) & (q[0] <= bhi[0]) & (q[1] >= blo[1]) & (q[1] <= bhi[1]) &
                                        (q[2] >= blo[2]) & (q[2] <= bhi[2])))
                            continue;
                        int v = ev[e];
                        out[n][0] = v;
                        out[n][1] = t;
                        n += (ec[e][0] == i) & (ec[e][1] == j) & (ec[e][2] == k) & (v != f0) & (v != f1) & (v != f2);
                    }
                    h->pairs.n = n;
                }
        if (filter) /* insertion sort of this triangle's (few) candidates by vertex */
            for (long a = first + 1; a < h->pairs.n; a++) {
                int v = h->pairs.p[a][0];
                long b = a;
                for (; b > first && h->pairs.p[b - 1][0] > v; b--) h->pairs.p[b][0] = h->pairs.p[b - 1][0];
                h->pairs.p[b][0] = v;
            }
    }
    return 0;
}
