/* solvers/pbd_simd.c — the pbd/xpbd SIMD kernels with 4 lanes (AVX2 + FMA), and the
 * choice of width at run time (8 lanes: solvers/pbd_simd512.c). What the kernels compute,
 * and how it differs from the scalar kernels of solvers/pbd_constraints.h, is in
 * solvers/pbd_simd.h; the kernels themselves are in solvers/pbd_simd_eval.h. They are
 * compiled for their instruction set with a target attribute, whatever the build's
 * -march, and called only at a width cb_pbd_simd_width() allows. */
#include "solvers/pbd_simd.h"

#include "solvers/pbd_constraints.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <math.h>

#include "solvers/pbd_simd_x86.h"

int cb_pbd_simd_width(void)
{
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return 0;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")) return 8;
    return 4;
}

#define KERNEL CB_AVX2
#define EVAL CB_AVX2 __attribute__((always_inline))
#define LANES 4
#define NG_BEND 2

typedef __m256d V;
typedef __m256d M; /* a lane is true when its sign bit is set (a comparison's all-ones) */

static inline KERNEL V set1(double a) { return _mm256_set1_pd(a); }
static inline KERNEL V ldu(const double *a) { return _mm256_loadu_pd(a); }
static inline KERNEL void stu(double *a, V v) { _mm256_storeu_pd(a, v); }
static inline KERNEL V add(V a, V b) { return _mm256_add_pd(a, b); }
static inline KERNEL V sub(V a, V b) { return _mm256_sub_pd(a, b); }
static inline KERNEL V mul(V a, V b) { return _mm256_mul_pd(a, b); }
static inline KERNEL V vdiv(V a, V b) { return _mm256_div_pd(a, b); }
static inline KERNEL V vsqrt(V a) { return _mm256_sqrt_pd(a); }
static inline KERNEL V fma_(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
static inline KERNEL V fms_(V a, V b, V c) { return _mm256_fmsub_pd(a, b, c); }
static inline KERNEL V fnma_(V a, V b, V c) { return _mm256_fnmadd_pd(a, b, c); }
static inline KERNEL V vmin(V a, V b) { return _mm256_min_pd(a, b); }
static inline KERNEL V vmax(V a, V b) { return _mm256_max_pd(a, b); }
static inline KERNEL V vabs(V a) { return _mm256_andnot_pd(set1(-0.0), a); }
static inline KERNEL V neg(V a) { return _mm256_xor_pd(a, set1(-0.0)); }
static inline KERNEL V or_sign(V a, V b) { return _mm256_or_pd(a, _mm256_and_pd(b, set1(-0.0))); }
static inline KERNEL M gt(V a, V b) { return _mm256_cmp_pd(a, b, _CMP_GT_OQ); }
static inline KERNEL M eq0(V a) { return _mm256_cmp_pd(a, set1(0.0), _CMP_EQ_OQ); }
static inline KERNEL M signm(V a) { return a; }
static inline KERNEL V sel(M m, V yes, V no) { return _mm256_blendv_pd(no, yes, m); }
static inline KERNEL M m_and(M a, M b) { return _mm256_and_pd(a, b); }
static inline KERNEL M m_andnot(M a, M b) { return _mm256_andnot_pd(a, b); }
static inline KERNEL M m_xor(M a, M b) { return _mm256_xor_pd(a, b); }
static inline KERNEL int m_bits(M a) { return _mm256_movemask_pd(a); }
static inline KERNEL V zero_unless(V a, M m) { return _mm256_and_pd(a, m); }

/* the lanes' points (v1: the upper half's indices, none at this width) */
typedef struct V3 V3;
static inline KERNEL V3 vload(double (*p)[4], const int v0[4], const int v1[4], V *w);
static inline KERNEL void vstore(double (*p)[4], const int v0[4], const int v1[4], V3 q, V w, int mask);
static inline KERNEL V3 xload(const double (*x)[3], const int v0[4], const int v1[4]);
/* the lanes l with c0[l] >= 0 (not empty; c1: the upper half's, none at this width) */
static inline KERNEL M real_lanes(const int c0[4], const int c1[4])
{
    (void)c1;
    __m128i m = _mm_cmpgt_epi32(_mm_loadu_si128((const __m128i *)c0), _mm_set1_epi32(-1));
    return _mm256_castsi256_pd(_mm256_cvtepi32_epi64(m));
}
static inline KERNEL V vld(const double *a0, const double *a1)
{
    (void)a1;
    return ldu(a0);
}

#include "solvers/pbd_simd_eval.h"

static inline KERNEL V3 vload(double (*p)[4], const int v0[4], const int v1[4], V *w)
{
    (void)v1;
    V3 q;
    cb_simd_load4_pad(p, v0, &q.x, &q.y, &q.z, w);
    return q;
}

static inline KERNEL void vstore(double (*p)[4], const int v0[4], const int v1[4], V3 q, V w, int mask)
{
    (void)v1;
    cb_simd_store4_pad(p, v0, q.x, q.y, q.z, w, mask);
}

/* lanes 0-3: the triples x[v0[.]] */
static inline KERNEL V3 xload(const double (*x)[3], const int v0[4], const int v1[4])
{
    (void)v1;
    V3 q;
    cb_simd_load4((double (*)[3])x, v0, &q.x, &q.y, &q.z);
    return q;
}

int cb_pbd_simd_atan2(int width, int n, const double *y, const double *x, double *out)
{
    if (width < 4 || width > cb_pbd_simd_width()) return -1;
    if (width == 8) cb_pbd_simd8_atan2(n, y, x, out);
    else atan2_run(n, y, x, out);
    return 0;
}

void cb_pbd_simd_stretch(int width, double (*p)[4], const cb_pbd_batch2 *b, int nb, double k, const double *alpha,
                         double ih2, double *lambda)
{
    if (width == 8) cb_pbd_simd8_stretch(p, b, nb, k, alpha, ih2, lambda);
    else stretch_run(p, b, nb, k, alpha, ih2, lambda);
}

static KERNEL double stretch_residual4(const double (*x)[3], const cb_pbd_batch2 *b, int nb, double r)
{
    double l[LANES];
    stu(l, stretch_residual_run(x, b, nb, set1(0.0)));
    for (int j = 0; j < LANES; j++) r = l[j] > r ? l[j] : r;
    return r;
}

double cb_pbd_simd_stretch_residual(int width, const double (*x)[3], const cb_pbd_batch2 *b, int nb, double r)
{
    return width == 8 ? cb_pbd_simd8_stretch_residual(x, b, nb, r) : stretch_residual4(x, b, nb, r);
}

void cb_pbd_simd_bend_dihedral(int width, double (*p)[4], const cb_pbd_batch4 *b, int nb, double k, double cap,
                               const double *alpha, double ih2, double *lambda)
{
    if (width == 8) cb_pbd_simd8_bend_dihedral(p, b, nb, k, cap, alpha, ih2, lambda);
    else dihedral_run(p, b, nb, k, cap, alpha, ih2, lambda);
}

void cb_pbd_simd_bend_paper(int width, double (*p)[4], const cb_pbd_batch4 *b, int nb, double k, double cap)
{
    if (width == 8) cb_pbd_simd8_bend_paper(p, b, nb, k, cap);
    else paper_run(p, b, nb, k, cap);
}

#else /* no x86-64: the scalar path only */

int cb_pbd_simd_width(void) { return 0; }

int cb_pbd_simd_atan2(int width, int n, const double *y, const double *x, double *out)
{
    (void)width, (void)n, (void)y, (void)x, (void)out;
    return -1;
}

void cb_pbd_simd_stretch(int width, double (*p)[4], const cb_pbd_batch2 *b, int nb, double k, const double *alpha,
                         double ih2, double *lambda)
{
    (void)width, (void)p, (void)b, (void)nb, (void)k, (void)alpha, (void)ih2, (void)lambda;
}

double cb_pbd_simd_stretch_residual(int width, const double (*x)[3], const cb_pbd_batch2 *b, int nb, double r)
{
    (void)width, (void)x, (void)b, (void)nb;
    return r;
}

void cb_pbd_simd_bend_dihedral(int width, double (*p)[4], const cb_pbd_batch4 *b, int nb, double k, double cap,
                               const double *alpha, double ih2, double *lambda)
{
    (void)width, (void)p, (void)b, (void)nb, (void)k, (void)cap, (void)alpha, (void)ih2, (void)lambda;
}

void cb_pbd_simd_bend_paper(int width, double (*p)[4], const cb_pbd_batch4 *b, int nb, double k, double cap)
{
    (void)width, (void)p, (void)b, (void)nb, (void)k, (void)cap;
}

#endif
