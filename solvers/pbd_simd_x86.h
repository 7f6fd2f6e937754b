/* solvers/pbd_simd_x86.h — moving four points between an array of points and three
 * AVX2 vectors (one per coordinate): xyz triples (solvers/springs_local.c) or padded
 * points (x, y, z and the inverse mass w, 32 bytes each: pbd's prediction, for
 * solvers/pbd_simd.c); the declarations of solvers/pbd_simd512.c's 8-lane kernels. */
#ifndef CB_PBD_SIMD_X86_H
#define CB_PBD_SIMD_X86_H

#include <immintrin.h>

#define CB_AVX2 __attribute__((target("avx2,fma")))

/* The points p[v[0..3]]: (x, y) as 16 bytes and z as 8, exactly the pieces store4()
 * writes, so a point stored by one batch and loaded by a later one is forwarded from the
 * store buffer (a wider load would stall on it). */
static inline CB_AVX2 void cb_simd_load4(double (*p)[3], const int v[4], __m256d *x, __m256d *y, __m256d *z)
{
    __m256d a = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(p[v[0]])), _mm_loadu_pd(p[v[2]]), 1);
    __m256d b = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(p[v[1]])), _mm_loadu_pd(p[v[3]]), 1);
    __m128d zl = _mm_loadh_pd(_mm_load_sd(&p[v[0]][2]), &p[v[1]][2]);
    __m128d zh = _mm_loadh_pd(_mm_load_sd(&p[v[2]][2]), &p[v[3]][2]);
    *x = _mm256_unpacklo_pd(a, b);
    *y = _mm256_unpackhi_pd(a, b);
    *z = _mm256_insertf128_pd(_mm256_castpd128_pd256(zl), zh, 1);
}

/* p[v[l]] = lane l of (x, y, z) for the lanes l set in mask. */
static inline CB_AVX2 void cb_simd_store4(double (*p)[3], const int v[4], __m256d x, __m256d y, __m256d z, int mask)
{
    __m256d t0 = _mm256_unpacklo_pd(x, y), t1 = _mm256_unpackhi_pd(x, y); /* x0 y0 x2 y2 | x1 y1 x3 y3 */
    __m128d zl = _mm256_castpd256_pd128(z), zh = _mm256_extractf128_pd(z, 1);
    if (mask & 1) {
        _mm_storeu_pd(p[v[0]], _mm256_castpd256_pd128(t0));
        _mm_store_sd(&p[v[0]][2], zl);
    }
    if (mask & 2) {
        _mm_storeu_pd(p[v[1]], _mm256_castpd256_pd128(t1));
        _mm_storeh_pd(&p[v[1]][2], zl);
    }
    if (mask & 4) {
        _mm_storeu_pd(p[v[2]], _mm256_extractf128_pd(t0, 1));
        _mm_store_sd(&p[v[2]][2], zh);
    }
    if (mask & 8) {
        _mm_storeu_pd(p[v[3]], _mm256_extractf128_pd(t1, 1));
        _mm_storeh_pd(&p[v[3]][2], zh);
    }
}

/* The points p[v[0..3]] of padded rows (x, y, z, w): one 32-byte load per point,
 * transposed. Each is exactly what cb_simd_store4_pad() writes, so a point stored by one
 * batch and loaded by a later one is forwarded from the store buffer. */
static inline CB_AVX2 void cb_simd_load4_pad(double (*p)[4], const int v[4], __m256d *x, __m256d *y, __m256d *z,
                                             __m256d *w)
{
    __m256d r0 = _mm256_loadu_pd(p[v[0]]), r1 = _mm256_loadu_pd(p[v[1]]);
    __m256d r2 = _mm256_loadu_pd(p[v[2]]), r3 = _mm256_loadu_pd(p[v[3]]);
    __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1); /* x0 x1 z0 z1 | y0 y1 w0 w1 */
    __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
    *x = _mm256_permute2f128_pd(t0, t2, 0x20);
    *y = _mm256_permute2f128_pd(t1, t3, 0x20);
    *z = _mm256_permute2f128_pd(t0, t2, 0x31);
    *w = _mm256_permute2f128_pd(t1, t3, 0x31);
}

/* p[v[l]] = lane l of (x, y, z, w) for the lanes l set in mask: a 32-byte store each. */
static inline CB_AVX2 void cb_simd_store4_pad(double (*p)[4], const int v[4], __m256d x, __m256d y, __m256d z,
                                              __m256d w, int mask)
{
    __m256d a = _mm256_unpacklo_pd(x, y), b = _mm256_unpackhi_pd(x, y); /* x0 y0 x2 y2 | x1 y1 x3 y3 */
    __m256d c = _mm256_unpacklo_pd(z, w), d = _mm256_unpackhi_pd(z, w);
    __m256d r0 = _mm256_permute2f128_pd(a, c, 0x20), r2 = _mm256_permute2f128_pd(a, c, 0x31);
    __m256d r1 = _mm256_permute2f128_pd(b, d, 0x20), r3 = _mm256_permute2f128_pd(b, d, 0x31);
    if (mask & 1) _mm256_storeu_pd(p[v[0]], r0);
    if (mask & 2) _mm256_storeu_pd(p[v[1]], r1);
    if (mask & 4) _mm256_storeu_pd(p[v[2]], r2);
    if (mask & 8) _mm256_storeu_pd(p[v[3]], r3);
}

/* The 8-lane kernels (solvers/pbd_simd512.c), called by solvers/pbd_simd.c. */
struct cb_pbd_batch2;
struct cb_pbd_batch4;
void cb_pbd_simd8_atan2(int n, const double *y, const double *x, double *out);
double cb_pbd_simd8_stretch_residual(const double (*x)[3], const struct cb_pbd_batch2 *b, int nb, double r);
void cb_pbd_simd8_stretch(double (*p)[4], const struct cb_pbd_batch2 *b, int nb, double k, const double *alpha,
                          double ih2, double *lambda);
void cb_pbd_simd8_bend_dihedral(double (*p)[4], const struct cb_pbd_batch4 *b, int nb, double k, double cap,
                                const double *alpha, double ih2, double *lambda);
void cb_pbd_simd8_bend_paper(double (*p)[4], const struct cb_pbd_batch4 *b, int nb, double k, double cap);

#endif
