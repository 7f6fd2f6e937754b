/* solvers/pbd_simd512.c — the pbd/xpbd SIMD kernels with 8 lanes (AVX-512F/DQ): a vector
 * holds two batches of four. The kernels are solvers/pbd_simd_eval.h's, the same
 * operations per lane as the 4-lane ones of solvers/pbd_simd.c (so the same bits); only
 * the primitives differ (masks are mask registers here). Called through
 * solvers/pbd_simd.c when cb_pbd_simd_width() is 8. */
#include "solvers/pbd_simd.h"

#include "solvers/pbd_constraints.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <math.h>

#include "solvers/pbd_simd_x86.h"

#define KERNEL __attribute__((target("avx512f,avx512dq,avx2,fma")))
#define EVAL KERNEL __attribute__((always_inline))
#define LANES 8
#define NG_BEND 2 /* two vectors of hinges side by side (3 or 4: slower, registers spilled) */

typedef __m512d V;
typedef __mmask8 M;

static inline KERNEL V set1(double a) { return _mm512_set1_pd(a); }
static inline KERNEL V ldu(const double *a) { return _mm512_loadu_pd(a); }
static inline KERNEL void stu(double *a, V v) { _mm512_storeu_pd(a, v); }
static inline KERNEL V add(V a, V b) { return _mm512_add_pd(a, b); }
static inline KERNEL V sub(V a, V b) { return _mm512_sub_pd(a, b); }
static inline KERNEL V mul(V a, V b) { return _mm512_mul_pd(a, b); }
static inline KERNEL V vdiv(V a, V b) { return _mm512_div_pd(a, b); }
static inline KERNEL V vsqrt(V a) { return _mm512_sqrt_pd(a); }
static inline KERNEL V fma_(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
static inline KERNEL V fms_(V a, V b, V c) { return _mm512_fmsub_pd(a, b, c); }
static inline KERNEL V fnma_(V a, V b, V c) { return _mm512_fnmadd_pd(a, b, c); }
static inline KERNEL V vmin(V a, V b) { return _mm512_min_pd(a, b); }
static inline KERNEL V vmax(V a, V b) { return _mm512_max_pd(a, b); }
static inline KERNEL V vabs(V a) { return _mm512_andnot_pd(set1(-0.0), a); }
static inline KERNEL V neg(V a) { return _mm512_xor_pd(a, set1(-0.0)); }
static inline KERNEL V or_sign(V a, V b) { return _mm512_or_pd(a, _mm512_and_pd(b, set1(-0.0))); }
static inline KERNEL M gt(V a, V b) { return _mm512_cmp_pd_mask(a, b, _CMP_GT_OQ); }
static inline KERNEL M eq0(V a) { return _mm512_cmp_pd_mask(a, set1(0.0), _CMP_EQ_OQ); }
static inline KERNEL M signm(V a) { return _mm512_movepi64_mask(_mm512_castpd_si512(a)); }
static inline KERNEL V sel(M m, V yes, V no) { return _mm512_mask_blend_pd(m, no, yes); }
static inline KERNEL M m_and(M a, M b) { return (M)(a & b); }
static inline KERNEL M m_andnot(M a, M b) { return (M)(~a & b); }
static inline KERNEL M m_xor(M a, M b) { return (M)(a ^ b); }
static inline KERNEL int m_bits(M a) { return (int)a; }
static inline KERNEL V zero_unless(V a, M m) { return _mm512_maskz_mov_pd(m, a); }

typedef struct V3 V3;
static inline KERNEL V3 vload(double (*p)[4], const int v0[4], const int v1[4], V *w);
static inline KERNEL void vstore(double (*p)[4], const int v0[4], const int v1[4], V3 q, V w, int mask);
static inline KERNEL V3 xload(const double (*x)[3], const int v0[4], const int v1[4]);
/* the lanes l with c[l] >= 0 (not empty): lanes 0-3 c0[.], 4-7 c1[.] */
static inline KERNEL M real_lanes(const int c0[4], const int c1[4])
{
    __m256i c = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)c0)),
                                        _mm_loadu_si128((const __m128i *)c1), 1);
    return (M)_mm512_mask_cmpge_epi32_mask(0xff, _mm512_castsi256_si512(c), _mm512_setzero_si512());
}
static inline KERNEL V join(__m256d lo, __m256d hi) { return _mm512_insertf64x4(_mm512_castpd256_pd512(lo), hi, 1); }
static inline KERNEL V vld(const double *a0, const double *a1) { return join(_mm256_loadu_pd(a0), _mm256_loadu_pd(a1)); }

#include "solvers/pbd_simd_eval.h"

/* lanes 0-3: the points p[v0[.]], lanes 4-7: p[v1[.]]; a 32-byte load each, pairs of
 * points (lanes l and l + 2 of a half) in one vector, transposed by 128-bit pairs */
static inline KERNEL V3 vload(double (*p)[4], const int v0[4], const int v1[4], V *w)
{
    V a0 = join(_mm256_loadu_pd(p[v0[0]]), _mm256_loadu_pd(p[v0[2]]));
    V a1 = join(_mm256_loadu_pd(p[v0[1]]), _mm256_loadu_pd(p[v0[3]]));
    V a2 = join(_mm256_loadu_pd(p[v1[0]]), _mm256_loadu_pd(p[v1[2]]));
    V a3 = join(_mm256_loadu_pd(p[v1[1]]), _mm256_loadu_pd(p[v1[3]]));
    V t0 = _mm512_unpacklo_pd(a0, a1), t1 = _mm512_unpackhi_pd(a0, a1); /* x0 x1 z0 z1 x2 x3 z2 z3 | y, w */
    V t2 = _mm512_unpacklo_pd(a2, a3), t3 = _mm512_unpackhi_pd(a2, a3);
    *w = _mm512_shuffle_f64x2(t1, t3, 0xdd);
    return (V3){_mm512_shuffle_f64x2(t0, t2, 0x88), _mm512_shuffle_f64x2(t1, t3, 0x88),
                _mm512_shuffle_f64x2(t0, t2, 0xdd)};
}

/* p[.] = lane l of (q, w) for the lanes l set in mask: a 32-byte store each */
static inline KERNEL void vstore(double (*p)[4], const int v0[4], const int v1[4], V3 q, V w, int mask)
{
    V xl = _mm512_unpacklo_pd(q.x, q.y), xh = _mm512_unpackhi_pd(q.x, q.y); /* x0 y0 x2 y2 .. | x1 y1 .. */
    V zl = _mm512_unpacklo_pd(q.z, w), zh = _mm512_unpackhi_pd(q.z, w);
    const __m512i lo = _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11), hi = _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15);
    V r02 = _mm512_permutex2var_pd(xl, lo, zl), r13 = _mm512_permutex2var_pd(xh, lo, zh); /* lanes 0, 2 | 1, 3 */
    V r46 = _mm512_permutex2var_pd(xl, hi, zl), r57 = _mm512_permutex2var_pd(xh, hi, zh); /* lanes 4, 6 | 5, 7 */
    if (mask & 1) _mm256_storeu_pd(p[v0[0]], _mm512_castpd512_pd256(r02));
    if (mask & 2) _mm256_storeu_pd(p[v0[1]], _mm512_castpd512_pd256(r13));
    if (mask & 4) _mm256_storeu_pd(p[v0[2]], _mm512_extractf64x4_pd(r02, 1));
    if (mask & 8) _mm256_storeu_pd(p[v0[3]], _mm512_extractf64x4_pd(r13, 1));
    if (mask & 16) _mm256_storeu_pd(p[v1[0]], _mm512_castpd512_pd256(r46));
    if (mask & 32) _mm256_storeu_pd(p[v1[1]], _mm512_castpd512_pd256(r57));
    if (mask & 64) _mm256_storeu_pd(p[v1[2]], _mm512_extractf64x4_pd(r46, 1));
    if (mask & 128) _mm256_storeu_pd(p[v1[3]], _mm512_extractf64x4_pd(r57, 1));
}

/* lanes 0-3: the triples x[v0[.]], lanes 4-7: x[v1[.]] */
static inline KERNEL V3 xload(const double (*x)[3], const int v0[4], const int v1[4])
{
    __m256d x0, y0, z0, x1, y1, z1;
    cb_simd_load4((double (*)[3])x, v0, &x0, &y0, &z0);
    cb_simd_load4((double (*)[3])x, v1, &x1, &y1, &z1);
    return (V3){join(x0, x1), join(y0, y1), join(z0, z1)};
}

KERNEL double cb_pbd_simd8_stretch_residual(const double (*x)[3], const cb_pbd_batch2 *b, int nb, double r)
{
    double l[LANES];
    stu(l, stretch_residual_run(x, b, nb, set1(0.0)));
    for (int j = 0; j < LANES; j++) r = l[j] > r ? l[j] : r;
    return r;
}

KERNEL void cb_pbd_simd8_atan2(int n, const double *y, const double *x, double *out) { atan2_run(n, y, x, out); }

KERNEL void cb_pbd_simd8_stretch(double (*p)[4], const cb_pbd_batch2 *b, int nb, double k, const double *alpha,
                                 double ih2, double *lambda)
{
    stretch_run(p, b, nb, k, alpha, ih2, lambda);
}

KERNEL void cb_pbd_simd8_bend_dihedral(double (*p)[4], const cb_pbd_batch4 *b, int nb, double k, double cap,
                                       const double *alpha, double ih2, double *lambda)
{
    dihedral_run(p, b, nb, k, cap, alpha, ih2, lambda);
}

KERNEL void cb_pbd_simd8_bend_paper(double (*p)[4], const cb_pbd_batch4 *b, int nb, double k, double cap)
{
    paper_run(p, b, nb, k, cap);
}

#endif
