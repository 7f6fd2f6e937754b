/* solvers/springs_local.c — fms's local step and right-hand side, one, two, four or
 * eight springs at a time (springs_local.h). The pass is bound by one square root and
 * one division per spring, which the compiler does not vectorise here (indexed loads;
 * errno of sqrt): the kernels below do them for a vector of springs, then add each
 * spring's force to its two rows in index order. The AVX2 and AVX-512 kernels are
 * compiled for their instruction set with a target attribute whatever the build's
 * -march, as pbd's (solvers/pbd_simd.c), gather four points with its cb_simd_load4
 * (solvers/pbd_simd_x86.h), and are called only at a width cb_pbd_simd_width allows. */
#include "solvers/springs_local.h"

#include <math.h>

#include "solvers/pbd_simd.h"

/* One spring (the definition of the pass; every width equals it bit for bit). */
static inline void local_one(const double (*x)[3], int i, const int *ia, const int *ib, const int *ua, const int *ub,
                             const double *rest, const double *kh, const double (*d0)[3], double (*b)[3])
{
    const double *pa = x[ia[i]], *pb = x[ib[i]];
    double e0 = pa[0] - pb[0], e1 = pa[1] - pb[1], e2 = pa[2] - pb[2];
    double l2 = e0 * e0 + e1 * e1 + e2 * e2, d[3];
    if (l2 > 0) {
        double sc = rest[i] / sqrt(l2);
        d[0] = sc * e0;
        d[1] = sc * e1;
        d[2] = sc * e2;
    } else {
        d[0] = d0[i][0];
        d[1] = d0[i][1];
        d[2] = d0[i][2];
    }
    double k = kh[i], f0 = k * d[0], f1 = k * d[1], f2 = k * d[2];
    double *ra = b[ua[i]], *rb = b[ub[i]];
    ra[0] += f0;
    ra[1] += f1;
    ra[2] += f2;
    rb[0] -= f0;
    rb[1] -= f1;
    rb[2] -= f2;
}

/* The springs [i, i + n) one at a time. */
static void local_ones(const double (*x)[3], int i, int n, const int *ia, const int *ib, const int *ua,
                       const int *ub, const double *rest, const double *kh, const double (*d0)[3], double (*b)[3])
{
    for (int j = i; j < i + n; j++) local_one(x, j, ia, ib, ua, ub, rest, kh, d0, b);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include "solvers/pbd_simd_x86.h"

#define AVX512 __attribute__((target("avx512f,avx512dq,avx2,fma")))

int cb_springs_local_width(void)
{
    int w = cb_pbd_simd_width();
    return w >= 4 ? 4 : 2; /* 8 lanes measured no faster (the scatter to the rows bounds it) */
}

/* The row of the last spring's end a, kept in registers while the next springs add to
 * it (the springs are sorted by their smaller end, usually their end a: a run of
 * springs adds to one row): the row is loaded once and stored once instead of each
 * spring's addition waiting on the previous one's store. Every addition to the row in
 * between goes to the registers, so each row sees the same operations in the same order
 * as in memory. */
typedef struct acc_row {
    double *r;  /* the row held (NULL: none) */
    __m128d xy; /* its x, y */
    double z;   /* its z */
} acc_row;

static inline void acc_flush(acc_row *a)
{
    if (!a->r) return;
    _mm_storeu_pd(a->r, a->xy);
    a->r[2] = a->z;
    a->r = NULL;
}

/* Row ua[q] += (xy[q], z[q]) and row ub[q] -= them, q = 0..n-1 in order: per
 * coordinate the scalar pass's operations (x and y as one 128-bit vector). */
static inline void scatter_xy(double (*b)[3], const int *ua, const int *ub, int n, const __m128d *xy, const double *z,
                              acc_row *a)
{
    for (int q = 0; q < n; q++) {
        double *ra = b[ua[q]], *rb = b[ub[q]];
        if (ra != a->r) {
            acc_flush(a);
            a->r = ra;
            a->xy = _mm_loadu_pd(ra);
            a->z = ra[2];
        }
        a->xy = _mm_add_pd(a->xy, xy[q]);
        a->z += z[q];
        if (rb == a->r) {
            a->xy = _mm_sub_pd(a->xy, xy[q]);
            a->z -= z[q];
        } else {
            _mm_storeu_pd(rb, _mm_sub_pd(_mm_loadu_pd(rb), xy[q]));
            rb[2] -= z[q];
        }
    }
}

/* SSE2: two springs i, i + 1 (lanes 0, 1); 0 when one has no positive length. */
static inline int pair2(const double (*x)[3], int i, const int *ia, const int *ib, const int *ua, const int *ub,
                        const double *rest, const double *kh, double (*b)[3], acc_row *acc)
{
    const double *pa = x[ia[i]], *pb = x[ib[i]], *qa = x[ia[i + 1]], *qb = x[ib[i + 1]];
    __m128d e[3];
    for (int k = 0; k < 3; k++) e[k] = _mm_sub_pd(_mm_set_pd(qa[k], pa[k]), _mm_set_pd(qb[k], pb[k]));
    __m128d l2 = _mm_add_pd(_mm_add_pd(_mm_mul_pd(e[0], e[0]), _mm_mul_pd(e[1], e[1])), _mm_mul_pd(e[2], e[2]));
    if (_mm_movemask_pd(_mm_cmpgt_pd(l2, _mm_setzero_pd())) != 3) return 0;
    __m128d sc = _mm_div_pd(_mm_loadu_pd(rest + i), _mm_sqrt_pd(l2)), k = _mm_loadu_pd(kh + i);
    __m128d fx = _mm_mul_pd(k, _mm_mul_pd(sc, e[0])), fy = _mm_mul_pd(k, _mm_mul_pd(sc, e[1]));
    __m128d xy[2] = {_mm_unpacklo_pd(fx, fy), _mm_unpackhi_pd(fx, fy)};
    double z[2];
    _mm_storeu_pd(z, _mm_mul_pd(k, _mm_mul_pd(sc, e[2])));
    scatter_xy(b, ua + i, ub + i, 2, xy, z, acc);
    return 1;
}

/* AVX2: the forces of springs i..i+3 (lanes 0..3) as x, y, z vectors; 0 when one has
 * no positive length. */
static inline CB_AVX2 int force4(const double (*x)[3], int i, const int *ia, const int *ib, const double *rest,
                                 const double *kh, __m256d f[3])
{
    __m256d a[3], c[3], e[3];
    cb_simd_load4((double (*)[3])x, ia + i, &a[0], &a[1], &a[2]);
    cb_simd_load4((double (*)[3])x, ib + i, &c[0], &c[1], &c[2]);
    for (int k = 0; k < 3; k++) e[k] = _mm256_sub_pd(a[k], c[k]);
    __m256d l2 = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(e[0], e[0]), _mm256_mul_pd(e[1], e[1])),
                               _mm256_mul_pd(e[2], e[2]));
    if (_mm256_movemask_pd(_mm256_cmp_pd(l2, _mm256_setzero_pd(), _CMP_GT_OQ)) != 15) return 0;
    __m256d sc = _mm256_div_pd(_mm256_loadu_pd(rest + i), _mm256_sqrt_pd(l2)), k = _mm256_loadu_pd(kh + i);
    for (int j = 0; j < 3; j++) f[j] = _mm256_mul_pd(k, _mm256_mul_pd(sc, e[j]));
    return 1;
}

/* Springs i..i+3 of the forces f (lanes 0..3) into their rows. */
static inline CB_AVX2 void scatter4(double (*b)[3], const int *ua, const int *ub, int i, const __m256d f[3],
                                    acc_row *acc)
{
    __m256d t0 = _mm256_unpacklo_pd(f[0], f[1]), t1 = _mm256_unpackhi_pd(f[0], f[1]); /* x0 y0 x2 y2 | x1 y1 x3 y3 */
    __m128d xy[4] = {_mm256_castpd256_pd128(t0), _mm256_castpd256_pd128(t1), _mm256_extractf128_pd(t0, 1),
                     _mm256_extractf128_pd(t1, 1)};
    double z[4];
    _mm256_storeu_pd(z, f[2]);
    scatter_xy(b, ua + i, ub + i, 4, xy, z, acc);
}

static CB_AVX2 int run4(const double (*x)[3], int ns, const int *ia, const int *ib, const int *ua, const int *ub,
                        const double *rest, const double *kh, const double (*d0)[3], double (*b)[3])
{
    int i = 0;
    acc_row acc = {NULL, _mm_setzero_pd(), 0.0};
    for (; i + 4 <= ns; i += 4) {
        __m256d f[3];
        if (force4(x, i, ia, ib, rest, kh, f)) {
            scatter4(b, ua, ub, i, f, &acc);
        } else {
            acc_flush(&acc);
            local_ones(x, i, 4, ia, ib, ua, ub, rest, kh, d0, b);
        }
    }
    acc_flush(&acc);
    return i;
}

/* AVX-512: springs i..i+7 (lanes 0..7), the lanes as two fours. */
static AVX512 int run8(const double (*x)[3], int ns, const int *ia, const int *ib, const int *ua, const int *ub,
                       const double *rest, const double *kh, const double (*d0)[3], double (*b)[3])
{
    int i = 0;
    acc_row acc = {NULL, _mm_setzero_pd(), 0.0};
    for (; i + 8 <= ns; i += 8) {
        __m256d a0[3], a1[3], c0[3], c1[3];
        __m512d e[3], f[3];
        cb_simd_load4((double (*)[3])x, ia + i, &a0[0], &a0[1], &a0[2]);
        cb_simd_load4((double (*)[3])x, ia + i + 4, &a1[0], &a1[1], &a1[2]);
        cb_simd_load4((double (*)[3])x, ib + i, &c0[0], &c0[1], &c0[2]);
        cb_simd_load4((double (*)[3])x, ib + i + 4, &c1[0], &c1[1], &c1[2]);
        for (int k = 0; k < 3; k++)
            e[k] = _mm512_sub_pd(_mm512_insertf64x4(_mm512_castpd256_pd512(a0[k]), a1[k], 1),
                                 _mm512_insertf64x4(_mm512_castpd256_pd512(c0[k]), c1[k], 1));
        __m512d l2 = _mm512_add_pd(_mm512_add_pd(_mm512_mul_pd(e[0], e[0]), _mm512_mul_pd(e[1], e[1])),
                                   _mm512_mul_pd(e[2], e[2]));
        if (_mm512_cmp_pd_mask(l2, _mm512_setzero_pd(), _CMP_GT_OQ) != 0xff) {
            acc_flush(&acc);
            local_ones(x, i, 8, ia, ib, ua, ub, rest, kh, d0, b);
            continue;
        }
        __m512d sc = _mm512_div_pd(_mm512_loadu_pd(rest + i), _mm512_sqrt_pd(l2)), k = _mm512_loadu_pd(kh + i);
        __m256d lo[3], hi[3];
        for (int j = 0; j < 3; j++) {
            f[j] = _mm512_mul_pd(k, _mm512_mul_pd(sc, e[j]));
            lo[j] = _mm512_castpd512_pd256(f[j]);
            hi[j] = _mm512_extractf64x4_pd(f[j], 1);
        }
        scatter4(b, ua, ub, i, lo, &acc);
        scatter4(b, ua, ub, i + 4, hi, &acc);
    }
    acc_flush(&acc);
    return i;
}

void cb_springs_local_rhs(int width, const double (*x)[3], int ns, const int *ia, const int *ib, const int *ua,
                          const int *ub, const double *rest, const double *kh, const double (*d0)[3],
                          double (*b)[3])
{
    int i = 0, have = cb_pbd_simd_width();
    if (width >= 8 && have >= 8) i = run8(x, ns, ia, ib, ua, ub, rest, kh, d0, b);
    else if (width >= 4 && have >= 4) i = run4(x, ns, ia, ib, ua, ub, rest, kh, d0, b);
    if (width >= 2) { /* the rest two at a time */
        acc_row acc = {NULL, _mm_setzero_pd(), 0.0};
        for (; i + 2 <= ns; i += 2)
            if (!pair2(x, i, ia, ib, ua, ub, rest, kh, b, &acc)) {
                acc_flush(&acc);
                local_ones(x, i, 2, ia, ib, ua, ub, rest, kh, d0, b);
            }
        acc_flush(&acc);
    }
    local_ones(x, i, ns - i, ia, ib, ua, ub, rest, kh, d0, b);
}

#else /* no x86-64: one spring at a time */

int cb_springs_local_width(void) { return 1; }

void cb_springs_local_rhs(int width, const double (*x)[3], int ns, const int *ia, const int *ib, const int *ua,
                          const int *ub, const double *rest, const double *kh, const double (*d0)[3],
                          double (*b)[3])
{
    (void)width;
    local_ones(x, 0, ns, ia, ib, ua, ub, rest, kh, d0, b);
}

#endif
