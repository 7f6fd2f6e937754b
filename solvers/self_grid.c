/* solvers/self_grid.c — the dense grid query of the self-contact candidates
 * (self_grid.h). */
#include "solvers/self_grid.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact/spatial_hash.h"

/* The grid is used while the cloth's bounding box holds at most this many cells per
 * vertex (plus GRID_CELLS_MIN); beyond it, the hash. */
#define GRID_CELLS_PER_VERTEX 32
#define GRID_CELLS_MIN 1024
/* Entries past the last vertex in the sorted arrays, so a vector load at any entry
 * stays in the allocation (the lanes past a row's end are dropped). */
#define PAD 8
/* Triangles per block: the box of each, then the vertex tests of all, then their
 * pairs (three short loops whose iterations overlap, where one loop doing all three per
 * triangle waited on each step's latency). */
#define BLOCK 64

struct cb_self_grid {
    int nv, width;
    double cell;
    long gcap;        /* capacity of start */
    int *start;       /* [cells + 1] first entry of each cell */
    int *gcell;       /* [nv] cell of each vertex */
    int *gent;        /* [nv + PAD] the vertices by cell */
    double *gx, *gy, *gz; /* [nv + PAD] their coordinates, in the same order */
    int *r0, *r1, *ri; /* [rcap] a block's nonempty rows: entries r0 to r1 - 1, of triangle ri */
    long rcap;
    int *cand;        /* [ccap] a block's candidates */
    long ccap;
    struct tri_block *blk;
};

/* A block of triangles as the vertex tests read them: coordinate k of triangle i's boxes
 * at [k][i]. */
typedef struct tri_block {
    double lo[3][BLOCK], hi[3][BLOCK];   /* the box inflated by the query's distance and slack */
    double tlo[3][BLOCK], thi[3][BLOCK]; /* the triangle's own box */
    int f[3][BLOCK];                     /* its vertices */
    long off[BLOCK + 1];                 /* its candidates go to cand[off[i]..], cnt[i] of them */
    int cnt[BLOCK];
} tri_block;

/* The vertex tests of a block: for each row range r < nr (of triangle i = ri[r]),
 * appends to cand + off[i] + cnt[i] the entries' vertices inside i's inflated box and
 * not one of its vertices, in entry order (room for its rows' entries plus PAD), and
 * counts them in cnt[i]. */
typedef void (*block_fn)(const cb_self_grid *g, tri_block *b, long nr, int *cand);

/* The definition: a vertex is kept when lo <= x <= hi in every coordinate. */
static void block_scalar(const cb_self_grid *g, tri_block *b, long nr, int *cand)
{
    for (long r = 0; r < nr; r++) {
        const int i = g->ri[r];
        int *out = cand + b->off[i] + b->cnt[i], nc = 0;
        for (int e = g->r0[r]; e < g->r1[r]; e++) {
            int v = g->gent[e];
            double qx = g->gx[e], qy = g->gy[e], qz = g->gz[e];
            out[nc] = v;
            nc += (qx >= b->lo[0][i]) & (qx <= b->hi[0][i]) & (qy >= b->lo[1][i]) & (qy <= b->hi[1][i]) &
                  (qz >= b->lo[2][i]) & (qz <= b->hi[2][i]) & (v != b->f[0][i]) & (v != b->f[1][i]) &
                  (v != b->f[2][i]);
        }
        b->cnt[i] += nc;
    }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))
#define AVX512 __attribute__((target("avx512f,avx512vl,avx2")))

static int cpu_width(void)
{
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) return 8;
    return __builtin_cpu_supports("avx2") ? 4 : 1;
}

/* Four entries per vector: the same ordered comparisons (_CMP_GE_OQ is >=, _CMP_LE_OQ
 * is <=), the lanes past the row's end (read within the padding or the next rows)
 * dropped from the mask. */
static AVX2 void block_avx2(const cb_self_grid *g, tri_block *b, long nr, int *cand)
{
    for (long r = 0; r < nr; r++) {
        const int i = g->ri[r];
        int *out = cand + b->off[i] + b->cnt[i], nc = 0;
        const __m128i f0 = _mm_set1_epi32(b->f[0][i]), f1 = _mm_set1_epi32(b->f[1][i]), f2 = _mm_set1_epi32(b->f[2][i]);
        for (int e = g->r0[r], e1 = g->r1[r]; e < e1; e += 4) {
            const double *src[3] = {g->gx + e, g->gy + e, g->gz + e};
            __m256d in = _mm256_castsi256_pd(_mm256_set1_epi64x(-1));
            for (int k = 0; k < 3; k++) {
                __m256d q = _mm256_loadu_pd(src[k]);
                in = _mm256_and_pd(in, _mm256_and_pd(_mm256_cmp_pd(q, _mm256_set1_pd(b->lo[k][i]), _CMP_GE_OQ),
                                                     _mm256_cmp_pd(q, _mm256_set1_pd(b->hi[k][i]), _CMP_LE_OQ)));
            }
            __m128i v = _mm_loadu_si128((const __m128i *)(g->gent + e));
            __m128i own = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi32(v, f0), _mm_cmpeq_epi32(v, f1)),
                                       _mm_cmpeq_epi32(v, f2));
            int bits = _mm256_movemask_pd(in) & ~_mm_movemask_ps(_mm_castsi128_ps(own));
            if (e1 - e < 4) bits &= (1 << (e1 - e)) - 1;
            while (bits) {
                out[nc++] = g->gent[e + __builtin_ctz((unsigned)bits)];
                bits &= bits - 1;
            }
        }
        b->cnt[i] += nc;
    }
}

/* Eight entries per vector: lo <= q <= hi in every coordinate as min(q - lo, hi - q,
 * ...) >= 0, the same test for finite doubles (a difference of two is >= 0 exactly when
 * the first is >= the second, subnormals kept) with one comparison at the end (a chain
 * of masked comparisons was bound by its latency); the lanes past the row's end dropped
 * from the mask; the kept vertices compressed into a register, then stored (a
 * compressing store to memory is slow on some CPUs). */
static AVX512 void block_avx512(const cb_self_grid *g, tri_block *b, long nr, int *cand)
{
    const __m512d zero = _mm512_setzero_pd();
    for (long r = 0; r < nr; r++) {
        const int i = g->ri[r];
        int *out = cand + b->off[i] + b->cnt[i], nc = 0;
        const __m512d lx = _mm512_set1_pd(b->lo[0][i]), hx = _mm512_set1_pd(b->hi[0][i]);
        const __m512d ly = _mm512_set1_pd(b->lo[1][i]), hy = _mm512_set1_pd(b->hi[1][i]);
        const __m512d lz = _mm512_set1_pd(b->lo[2][i]), hz = _mm512_set1_pd(b->hi[2][i]);
        const __m256i f0 = _mm256_set1_epi32(b->f[0][i]), f1 = _mm256_set1_epi32(b->f[1][i]);
        const __m256i f2 = _mm256_set1_epi32(b->f[2][i]);
        for (int e = g->r0[r], e1 = g->r1[r];; e += 8) { /* once per row unless it has over 8 */
            __mmask8 m = e1 - e >= 8 ? (__mmask8)0xff : (__mmask8)((1u << (e1 - e)) - 1);
            __m512d qx = _mm512_loadu_pd(g->gx + e), qy = _mm512_loadu_pd(g->gy + e), qz = _mm512_loadu_pd(g->gz + e);
            __m256i v = _mm256_loadu_si256((const __m256i *)(g->gent + e));
            __m512d d = _mm512_min_pd(_mm512_min_pd(_mm512_sub_pd(qx, lx), _mm512_sub_pd(hx, qx)),
                                      _mm512_min_pd(_mm512_sub_pd(qy, ly), _mm512_sub_pd(hy, qy)));
            d = _mm512_min_pd(d, _mm512_min_pd(_mm512_sub_pd(qz, lz), _mm512_sub_pd(hz, qz)));
            __m256i own = _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi32(v, f0), _mm256_cmpeq_epi32(v, f1)),
                                          _mm256_cmpeq_epi32(v, f2));
            m &= _mm512_cmp_pd_mask(d, zero, _CMP_GE_OQ) & _mm256_testn_epi32_mask(own, own);
            _mm256_storeu_si256((__m256i *)(out + nc), _mm256_maskz_compress_epi32(m, v));
            nc += __builtin_popcount((unsigned)m);
            if (e1 - e <= 8) break;
        }
        b->cnt[i] += nc;
    }
}
#else
static int cpu_width(void) { return 1; }
#endif

static block_fn block_of(int width)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (width == 8) return block_avx512;
    if (width == 4) return block_avx2;
#endif
    return block_scalar;
}

int cb_self_grid_set_width(cb_self_grid *g, int width)
{
    if (!g) return 1;
    int have = cpu_width();
    g->width = width >= 8 && have >= 8 ? 8 : width >= 4 && have >= 4 ? 4 : 1;
    return g->width;
}

int cb_self_grid_create(int nv, double cell, cb_self_grid **out, cb_error *err)
{
    if (!out) return CB_FAIL(err, CB_ERR_INPUT, "cb_self_grid_create: NULL argument");
    *out = NULL;
    if (nv < 0 || !(cell > 0.0) || !isfinite(cell))
        return CB_FAIL(err, CB_ERR_INPUT, "self grid: %d vertices, cell %g (need >= 0 and a finite cell > 0)", nv, cell);
    cb_self_grid *g = cb_calloc(1, sizeof *g);
    if (!g) return CB_FAIL(err, CB_ERR_NOMEM, "self grid: out of memory");
    g->nv = nv;
    g->cell = cell;
    size_t n = (size_t)nv + PAD;
    g->gcell = cb_calloc(n, sizeof *g->gcell);
    g->gent = cb_calloc(n, sizeof *g->gent);
    g->blk = cb_calloc(1, sizeof *g->blk);
    g->gx = cb_calloc(n, sizeof *g->gx);
    g->gy = cb_calloc(n, sizeof *g->gy);
    g->gz = cb_calloc(n, sizeof *g->gz);
    if (!g->gcell || !g->gent || !g->blk || !g->gx || !g->gy || !g->gz) {
        cb_self_grid_free(&g);
        return CB_FAIL(err, CB_ERR_NOMEM, "self grid: out of memory");
    }
    cb_self_grid_set_width(g, 8);
    *out = g;
    return CB_OK;
}

void cb_self_grid_free(cb_self_grid **pg)
{
    if (!pg || !*pg) return;
    cb_self_grid *g = *pg;
    free(g->start);
    free(g->gcell);
    free(g->gent);
    free(g->cand);
    free(g->r0);
    free(g->r1);
    free(g->ri);
    free(g->blk);
    free(g->gx);
    free(g->gy);
    free(g->gz);
    free(g);
    *pg = NULL;
}

/* The cell of coordinate q in a grid from lo with n cells of size 1/inv along an axis:
 * monotone in q (so a vertex inside a box lies in a cell between the box's bounds'),
 * clamped to the grid. A product, not a division by the cell size: a cell bound may
 * move by a rounding, the pairs do not (any monotone map serves, used alike for the
 * vertices and the boxes). */
static inline long grid_cell(double q, double lo, double inv, long n)
{
    double u = (q - lo) * inv, top = (double)(n - 1);
    u = u > 0.0 ? u : 0.0; /* max and min, not branches (u is finite) */
    u = u < top ? u : top;
    return (long)u;
}

/* Triangle f's own box (the least and the largest of each coordinate: the values of
 * cb_self_grid_box_dist2's bounds) and cb_spatial_hash_tri_box's box inflated by r, with
 * min and max instead of its branches: the same bounds (a bound of +0 or -0 gives the
 * same -r and +r), into slot i of the block. */
static inline void tri_box(const double (*x)[3], const int f[3], double r, tri_block *b, int i)
{
    const double *p = x[f[0]], *q = x[f[1]], *c = x[f[2]];
    for (int k = 0; k < 3; k++) {
        double mn = p[k] < q[k] ? p[k] : q[k], mx = p[k] > q[k] ? p[k] : q[k];
        mn = c[k] < mn ? c[k] : mn;
        mx = c[k] > mx ? c[k] : mx;
        b->tlo[k][i] = mn;
        b->thi[k][i] = mx;
        b->lo[k][i] = mn - r;
        b->hi[k][i] = mx + r;
        b->f[k][i] = f[k];
    }
}

/* Room for nrng row ranges and ncand candidates (plus PAD); 0 or an error. */
static int room(cb_self_grid *g, long nrng, long ncand, cb_error *err)
{
    if (nrng + PAD > g->rcap) {
        long cap = nrng + PAD > 2 * g->rcap ? nrng + PAD : 2 * g->rcap;
        int **a[3] = {&g->r0, &g->r1, &g->ri};
        for (int k = 0; k < 3; k++) {
            void *p = realloc(*a[k], (size_t)cap * sizeof **a[k]);
            if (!p) return CB_FAIL(err, CB_ERR_NOMEM, "step contact: out of memory for %ld rows of cells", cap);
            *a[k] = p;
        }
        g->rcap = cap;
    }
    if (ncand + PAD > g->ccap) {
        long cap = ncand + PAD > 2 * g->ccap ? ncand + PAD : 2 * g->ccap;
        void *p = realloc(g->cand, (size_t)cap * sizeof *g->cand);
        if (!p) return CB_FAIL(err, CB_ERR_NOMEM, "step contact: out of memory for %ld candidates", cap);
        g->cand = p;
        g->ccap = cap;
    }
    return CB_OK;
}

/* Where the grid lies: cells from lo of size 1/inv, n per axis, start[] of each; the
 * boxes inflated by r. */
typedef struct grid_geom {
    double lo[3], inv, r;
    long n[3];
    const int *start;
} grid_geom;

/* The rows of cells of slot i's inflated box (cells glo..ghi) appended to the ranges
 * (nonempty ones only), their entries counted in *nc. */
static int tri_rows(cb_self_grid *g, const grid_geom *q, int i, const long glo[3], const long ghi[3], long *nr,
                    long *nc, cb_error *err)
{
    const long *n = q->n;
    if (ghi[2] - glo[2] <= 1 && ghi[1] - glo[1] <= 1) {
        /* at most 2 x 2 rows (a box under a cell wide, the usual case): the nonempty ones
         * of four, with no branch on the box's extent (room made per block) */
        for (int d = 0; d < 4; d++) {
            long gz = glo[2] + (d >> 1), gy = glo[1] + (d & 1);
            int in = gz <= ghi[2] && gy <= ghi[1];
            long row = ((in ? gz : glo[2]) * n[1] + (in ? gy : glo[1])) * n[0];
            int e0 = q->start[row + glo[0]], e1 = in ? q->start[row + ghi[0] + 1] : e0;
            g->r0[*nr] = e0;
            g->r1[*nr] = e1;
            g->ri[*nr] = i;
            *nc += e1 - e0;
            *nr += e1 > e0;
        }
        return CB_OK;
    }
    int rc = room(g, *nr + (ghi[2] - glo[2] + 1) * (ghi[1] - glo[1] + 1) + 4 * BLOCK, 0, err);
    if (rc) return rc;
    for (long gz = glo[2]; gz <= ghi[2]; gz++)
        for (long gy = glo[1]; gy <= ghi[1]; gy++) {
            long row = (gz * n[1] + gy) * n[0];
            int e0 = q->start[row + glo[0]], e1 = q->start[row + ghi[0] + 1];
            g->r0[*nr] = e0;
            g->r1[*nr] = e1;
            g->ri[*nr] = i;
            *nc += e1 - e0;
            *nr += e1 > e0;
        }
    return CB_OK;
}

/* A block's boxes and rows (triangles t0 .. t0 + nb - 1 in slots 0 .. nb - 1): their
 * ranges, candidate slots off[] (the rows' entries plus PAD each) and counts 0. Returns
 * the number of ranges, or an error. */
static long boxes_scalar(cb_self_grid *g, const grid_geom *q, const cb_mesh *m, const double (*x)[3], int t0, int nb,
                         cb_error *err)
{
    tri_block *b = g->blk;
    long nr = 0, nc = 0;
    for (int i = 0; i < nb; i++) {
        long glo[3], ghi[3];
        tri_box(x, m->f[t0 + i], q->r, b, i);
        for (int k = 0; k < 3; k++) {
            glo[k] = grid_cell(b->lo[k][i], q->lo[k], q->inv, q->n[k]);
            ghi[k] = grid_cell(b->hi[k][i], q->lo[k], q->inv, q->n[k]);
        }
        b->off[i] = nc;
        b->cnt[i] = 0;
        int rc = tri_rows(g, q, i, glo, ghi, &nr, &nc, err);
        if (rc) return rc;
        nc += PAD; /* a vector store past its last candidate */
    }
    b->off[nb] = nc;
    return nr;
}

/* a[c] = a[0] + ... + a[c], c < n (the counts of the cells into the ends of their entries). */
static void prefix_scalar(int *a, long n)
{
    int sum = 0;
    for (long c = 0; c < n; c++) {
        sum += a[c];
        a[c] = sum;
    }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* Sixteen at a time: the sums within a vector by four shifted adds, plus the running
 * total (integer sums: the same values). */
static AVX512 void prefix_avx512(int *a, long n)
{
    const __m512i zero = _mm512_setzero_si512();
    __m512i run = zero;
    long c = 0;
    for (; c + 16 <= n; c += 16) {
        __m512i v = _mm512_loadu_si512(a + c);
        v = _mm512_add_epi32(v, _mm512_alignr_epi32(v, zero, 15));
        v = _mm512_add_epi32(v, _mm512_alignr_epi32(v, zero, 14));
        v = _mm512_add_epi32(v, _mm512_alignr_epi32(v, zero, 12));
        v = _mm512_add_epi32(v, _mm512_alignr_epi32(v, zero, 8));
        v = _mm512_add_epi32(v, run);
        _mm512_storeu_si512(a + c, v);
        run = _mm512_permutexvar_epi32(_mm512_set1_epi32(15), v);
    }
    if (c < n) {
        int sum = c ? a[c - 1] : 0;
        for (; c < n; c++) {
            sum += a[c];
            a[c] = sum;
        }
    }
}
#endif

static void prefix_sum(int width, int *a, long n)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (width == 8) {
        prefix_avx512(a, n);
        return;
    }
#endif
    (void)width;
    prefix_scalar(a, n);
}

typedef long (*boxes_fn)(cb_self_grid *g, const grid_geom *q, const cb_mesh *m, const double (*x)[3], int t0, int nb,
                         cb_error *err);

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* boxes_scalar eight triangles per vector: the coordinates gathered; the boxes with
 * min and max (tri_box's values), the cells with grid_cell's operations (max, min, then
 * truncation, in 32-bit integers: the grid has fewer than 2^31 cells); each of the four
 * rows of the usual case gathered from start[] for the eight, its nonempty ranges
 * compressed into the lists; a triangle whose box spans more rows goes to tri_rows. */
static AVX512 long boxes_avx512(cb_self_grid *g, const grid_geom *q, const cb_mesh *m, const double (*x)[3], int t0,
                                int nb, cb_error *err)
{
    tri_block *b = g->blk;
    const double *xs = &x[0][0];
    const __m512d zero = _mm512_setzero_pd(), r = _mm512_set1_pd(q->r), inv = _mm512_set1_pd(q->inv);
    const __m256i one = _mm256_set1_epi32(1), three = _mm256_set1_epi32(3);
    const __m256i n0 = _mm256_set1_epi32((int)q->n[0]), n1 = _mm256_set1_epi32((int)q->n[1]);
    long nr = 0, nc = 0;
    for (int i = 0; i < nb; i += 8) {
        const __mmask8 valid = nb - i >= 8 ? (__mmask8)0xff : (__mmask8)((1u << (nb - i)) - 1);
        const int *fb = &m->f[t0 + i][0];
        const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), slot = _mm256_add_epi32(lane, _mm256_set1_epi32(i));
        __m256i glo[3], ghi[3], fi[3];
        for (int k = 0; k < 3; k++) {
            fi[k] = _mm256_mmask_i32gather_epi32(_mm256_setzero_si256(), valid,
                                                 _mm256_add_epi32(_mm256_mullo_epi32(lane, three), _mm256_set1_epi32(k)),
                                                 fb, 4);
            _mm256_storeu_si256((__m256i *)&b->f[k][i], fi[k]);
            fi[k] = _mm256_mullo_epi32(fi[k], three);
        }
        for (int c = 0; c < 3; c++) {
            __m512d p0 = _mm512_mask_i32gather_pd(zero, valid, fi[0], xs + c, 8);
            __m512d p1 = _mm512_mask_i32gather_pd(zero, valid, fi[1], xs + c, 8);
            __m512d p2 = _mm512_mask_i32gather_pd(zero, valid, fi[2], xs + c, 8);
            __m512d mn = _mm512_min_pd(_mm512_min_pd(p0, p1), p2), mx = _mm512_max_pd(_mm512_max_pd(p0, p1), p2);
            __m512d blo = _mm512_sub_pd(mn, r), bhi = _mm512_add_pd(mx, r);
            _mm512_storeu_pd(&b->tlo[c][i], mn);
            _mm512_storeu_pd(&b->thi[c][i], mx);
            _mm512_storeu_pd(&b->lo[c][i], blo);
            _mm512_storeu_pd(&b->hi[c][i], bhi);
            const __m512d lo = _mm512_set1_pd(q->lo[c]), top = _mm512_set1_pd((double)(q->n[c] - 1));
            glo[c] = _mm512_cvttpd_epi32(_mm512_min_pd(_mm512_max_pd(_mm512_mul_pd(_mm512_sub_pd(blo, lo), inv), zero), top));
            ghi[c] = _mm512_cvttpd_epi32(_mm512_min_pd(_mm512_max_pd(_mm512_mul_pd(_mm512_sub_pd(bhi, lo), inv), zero), top));
        }
        /* spans over two rows in y or z: tri_rows, lane by lane */
        __mmask8 wide = valid & (_mm256_cmpgt_epi32_mask(_mm256_sub_epi32(ghi[2], glo[2]), one) |
                                 _mm256_cmpgt_epi32_mask(_mm256_sub_epi32(ghi[1], glo[1]), one));
        __m256i tot = _mm256_setzero_si256();
        for (int d = 0; d < 4; d++) {
            __m256i gz = _mm256_add_epi32(glo[2], _mm256_set1_epi32(d >> 1));
            __m256i gy = _mm256_add_epi32(glo[1], _mm256_set1_epi32(d & 1));
            __mmask8 in = valid & ~wide & ~_mm256_cmpgt_epi32_mask(gz, ghi[2]) & ~_mm256_cmpgt_epi32_mask(gy, ghi[1]);
            __m256i row = _mm256_mullo_epi32(_mm256_add_epi32(_mm256_mullo_epi32(gz, n1), gy), n0);
            __m256i e0 = _mm256_mmask_i32gather_epi32(_mm256_setzero_si256(), in, _mm256_add_epi32(row, glo[0]),
                                                      q->start, 4);
            __m256i e1 = _mm256_mmask_i32gather_epi32(e0, in, _mm256_add_epi32(_mm256_add_epi32(row, ghi[0]), one),
                                                      q->start, 4);
            tot = _mm256_add_epi32(tot, _mm256_sub_epi32(e1, e0));
            __mmask8 keep = _mm256_cmpgt_epi32_mask(e1, e0);
            _mm256_storeu_si256((__m256i *)(g->r0 + nr), _mm256_maskz_compress_epi32(keep, e0));
            _mm256_storeu_si256((__m256i *)(g->r1 + nr), _mm256_maskz_compress_epi32(keep, e1));
            _mm256_storeu_si256((__m256i *)(g->ri + nr), _mm256_maskz_compress_epi32(keep, slot));
            nr += __builtin_popcount((unsigned)keep);
        }
        int tl[8];
        _mm256_storeu_si256((__m256i *)tl, tot);
        for (int l = 0; l < 8 && i + l < nb; l++) {
            b->off[i + l] = nc;
            b->cnt[i + l] = 0;
            nc += tl[l];
            if (wide >> l & 1) {
                long lo3[3], hi3[3];
                for (int k = 0; k < 3; k++) {
                    lo3[k] = grid_cell(b->lo[k][i + l], q->lo[k], q->inv, q->n[k]);
                    hi3[k] = grid_cell(b->hi[k][i + l], q->lo[k], q->inv, q->n[k]);
                }
                int rc = tri_rows(g, q, i + l, lo3, hi3, &nr, &nc, err);
                if (rc) return rc;
            }
            nc += PAD; /* a vector store past its last candidate */
        }
    }
    b->off[nb] = nc;
    return nr;
}
#endif

/* boxes_avx512 indexes with 32-bit integers: cells and 3 x vertices below 2^31. */
static boxes_fn boxes_of(int width, long cells, int nv)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (width == 8 && cells < 2147483647L && nv < 715827882) return boxes_avx512;
#endif
    (void)width;
    (void)cells;
    (void)nv;
    return boxes_scalar;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* The box test of each triangle's first candidate, eight triangles per vector, into bit
 * i & 7 of keep[i >> 3] (cb_self_grid_gap2's value: max(d, 0) for its ternaries, the
 * same sum in its order; the points gathered). */
static AVX512 void first_keep_avx512(const cb_self_grid *g, const double (*x)[3], int nb, double f2,
                                     unsigned char *keep)
{
    const tri_block *b = g->blk;
    const double *xs = &x[0][0];
    const __m512d zero = _mm512_setzero_pd(), bound = _mm512_set1_pd(f2);
    for (int i = 0; i < nb; i += 8) {
        const __mmask8 valid = nb - i >= 8 ? (__mmask8)0xff : (__mmask8)((1u << (nb - i)) - 1);
        __mmask8 has = valid & _mm256_cmpgt_epi32_mask(_mm256_loadu_si256((const __m256i *)(b->cnt + i)),
                                                       _mm256_setzero_si256());
        __m256i v = _mm512_mask_i64gather_epi32(_mm256_setzero_si256(), has, _mm512_loadu_si512(b->off + i), g->cand, 4);
        __m256i v3 = _mm256_mullo_epi32(v, _mm256_set1_epi32(3));
        __m512d g2 = zero;
        for (int k = 0; k < 3; k++) {
            __m512d q = _mm512_mask_i32gather_pd(zero, has, v3, xs + k, 8);
            __m512d gk = _mm512_add_pd(_mm512_max_pd(_mm512_sub_pd(_mm512_loadu_pd(&b->tlo[k][i]), q), zero),
                                       _mm512_max_pd(_mm512_sub_pd(q, _mm512_loadu_pd(&b->thi[k][i])), zero));
            g2 = k ? _mm512_add_pd(g2, _mm512_mul_pd(gk, gk)) : _mm512_mul_pd(gk, gk);
        }
        keep[i >> 3] = (unsigned char)(has & _mm512_cmp_pd_mask(g2, bound, _CMP_LE_OQ));
    }
}
#endif

/* The block's candidates into pl as (v, t0 + i), triangle by triangle: with filter2 >= 0
 * those within the box test's bound of the triangle's own box (a triangle's first from
 * keep when not NULL), each triangle's by vertex. */
static int block_emit(const cb_self_grid *g, const double (*x)[3], int t0, int nb, double filter2,
                      const unsigned char *keep, cb_pair_list *pl, cb_error *err)
{
    const tri_block *b = g->blk;
    long most = pl->n;
    for (int i = 0; i < nb; i++) most += b->cnt[i];
    if (most > pl->cap && cb_pair_list_reserve(pl, most))
        return CB_FAIL(err, CB_ERR_NOMEM, "step contact: out of memory for the candidate pairs");
    int (*out)[2] = pl->p;
    long n = pl->n;
    const double f2 = filter2 >= 0.0 ? filter2 : INFINITY;
    for (int i = 0; i < nb; i++) {
        const int *cand = g->cand + b->off[i], t = t0 + i;
        const double lo[3] = {b->tlo[0][i], b->tlo[1][i], b->tlo[2][i]};
        const double hi[3] = {b->thi[0][i], b->thi[1][i], b->thi[2][i]};
        const long first = n;
        for (int a = 0; a < b->cnt[i]; a++) { /* the step's box test on this triangle's few */
            int v = cand[a];
            out[n][0] = v;
            out[n][1] = t;
            n += a == 0 && keep ? (keep[i >> 3] >> (i & 7)) & 1 : cb_self_grid_gap2(x[v][0], x[v][1], x[v][2], lo, hi) <= f2;
        }
        for (long a = first + 1; a < n; a++) { /* by vertex */
            int v = out[a][0];
            long c = a;
            for (; c > first && out[c - 1][0] > v; c--) out[c][0] = out[c - 1][0];
            out[c][0] = v;
        }
    }
    pl->n = n;
    return CB_OK;
}

int cb_self_grid_query(cb_self_grid *g, const cb_mesh *m, const double (*x)[3], double distance, double filter2,
                       cb_pair_list *pl, cb_error *err)
{
    if (!g || !m || !x || !pl) return CB_FAIL(err, CB_ERR_INPUT, "cb_self_grid_query: NULL argument");
    const int nv = m->nv;
    if (nv != g->nv) return CB_FAIL(err, CB_ERR_INPUT, "self grid: %d vertices (created for %d)", nv, g->nv);
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY}, maxabs = 0.0;
    for (int v = 0; v < nv; v++)
        for (int k = 0; k < 3; k++) {
            double q = x[v][k], a = fabs(q);
            if (!isfinite(q)) return 0;
            lo[k] = q < lo[k] ? q : lo[k];
            hi[k] = q > hi[k] ? q : hi[k];
            maxabs = a > maxabs ? a : maxabs;
        }
    if (nv <= 0) return 0;
    const double cell = g->cell;
    /* at most `most` cells, and cell numbers that fit an int (gcell): past either the
     * hash answers; checked before each product, which cannot overflow then */
    long most = (long)GRID_CELLS_PER_VERTEX * nv + GRID_CELLS_MIN;
    if (most > INT_MAX - 1) most = INT_MAX - 1;
    long n[3], cells = 1;
    for (int k = 0; k < 3; k++) {
        double span = (hi[k] - lo[k]) / cell;
        if (!(span < (double)most)) return 0;
        n[k] = (long)span + 1;
        if (n[k] > most / cells) return 0;
        cells *= n[k];
    }
    if (cells + 1 > g->gcap) {
        free(g->start);
        g->start = cb_calloc((size_t)cells + 1, sizeof *g->start);
        g->gcap = g->start ? cells + 1 : 0;
        if (!g->start) return CB_FAIL(err, CB_ERR_NOMEM, "step contact: out of memory for %ld cells", cells);
    }
    const double inv = 1.0 / cell;
    /* the vertices by cell (counting sort, stable), with their coordinates: the counts
     * summed into the end of each cell (the running sum in a register), then the
     * vertices placed from the last, each at its cell's end moved down by one, which
     * leaves start[c] the first entry of cell c */
    int *start = g->start;
    memset(start, 0, (size_t)(cells + 1) * sizeof *start);
    for (int v = 0; v < nv; v++) {
        long c = (grid_cell(x[v][2], lo[2], inv, n[2]) * n[1] + grid_cell(x[v][1], lo[1], inv, n[1])) * n[0] +
                 grid_cell(x[v][0], lo[0], inv, n[0]);
        g->gcell[v] = (int)c;
        start[c]++;
    }
    prefix_sum(g->width, start, cells + 1);
    for (int v = nv - 1; v >= 0; v--) {
        int e = --start[g->gcell[v]];
        g->gent[e] = v;
        g->gx[e] = x[v][0];
        g->gy[e] = x[v][1];
        g->gz[e] = x[v][2];
    }
    /* the triangles a block at a time: each one's boxes (inflated as the hash inflates
     * the box) and rows of cells; the vertex tests of the block; its pairs */
    const grid_geom q = {.lo = {lo[0], lo[1], lo[2]}, .inv = inv, .r = distance + cb_spatial_hash_slack(distance, maxabs),
                         .n = {n[0], n[1], n[2]}, .start = start};
    const block_fn test = block_of(g->width);
    const boxes_fn boxes = boxes_of(g->width, cells, nv);
    tri_block *b = g->blk;
    pl->n = 0;
    for (int t0 = 0; t0 < m->nf; t0 += BLOCK) {
        const int nb = m->nf - t0 < BLOCK ? m->nf - t0 : BLOCK;
        int rc = room(g, 4 * BLOCK, 0, err); /* the usual case's rows (tri_rows: the others) */
        if (rc) return rc;
        long nr = boxes(g, &q, m, x, t0, nb, err);
        if (nr < 0) return (int)nr;
        if ((rc = room(g, 0, b->off[nb], err))) return rc;
        test(g, b, nr, g->cand);
        const unsigned char *keep = NULL;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
        unsigned char kb[BLOCK / 8];
        if (boxes == boxes_avx512 && filter2 >= 0.0) {
            first_keep_avx512(g, x, nb, filter2, kb);
            keep = kb;
        }
#endif
        if ((rc = block_emit(g, x, t0, nb, filter2, keep, pl, err))) return rc;
    }
    return 1;
}
