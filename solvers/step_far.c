/* solvers/step_far.c — the far bound of a vertex-triangle pair, one pair or a list
 * (step_far.h). */
#include "solvers/step_far.h"

#include "core/vec3.h"

/* cb_step_contact_far (step_far.h): returns 1 when the distance from p to
 * triangle (a, b, q) is certainly above dist = sqrt(dist2), by a relative 1e-5, so the
 * pair cannot pass the exact test d2 < dist^2. With n = (b - a) x (q - a), the distance^2 is at least the squared
 * distance to the plane plus the squared in-plane distance beyond any one edge:
 *   d^2 >= s^2 / |n|^2 + max_k max(0, o_k)^2 / (|E_k|^2 |n|^2),
 * s = (p - a) . n, o_k = (p - P_k) . (E_k x n) for the edges P_k -> P_k + E_k (E_k x n
 * points out of the triangle in its plane). Differences of coordinates are correctly
 * rounded (relative error 2^-53); with the triangle not too thin (|n|^2 >= 1e-6
 * |E_0|^2 |E_2|^2, so n has a relative error below ~1e-12) and its edges not much
 * longer than dist (|E_k|^2 <= 1e8 dist^2; the pair passed the box test, so |p - P_k|
 * is then below ~1e4 dist too), the computed bound is within ~1e-7 relative of the
 * true one, far inside the 1e-5 margin. Otherwise: 0 (no decision). */
int cb_step_contact_far(const double p[3], const double a[3], const double b[3], const double q[3], double dist2)
{
    double e0[3], e1[3], e2[3], dp[3];
    cb_v3_sub(e0, b, a);
    cb_v3_sub(e1, q, b);
    cb_v3_sub(e2, a, q);
    cb_v3_sub(dp, p, a);
    double l0 = cb_v3_dot(e0, e0), l1 = cb_v3_dot(e1, e1), l2 = cb_v3_dot(e2, e2);
    double n[3];
    cb_v3_cross(n, e0, e2); /* = -(b - a) x (q - a): same plane, opposite orientation */
    double nn = cb_v3_dot(n, n);
    double lmax = l0 > l1 ? (l0 > l2 ? l0 : l2) : (l1 > l2 ? l1 : l2);
    if (!(nn >= 1e-6 * l0 * l2) || !(lmax <= 1e8 * dist2)) return 0;
    double s = cb_v3_dot(dp, n);
    /* n = (q - a) x (b - a) orients the edges a->b, b->q, q->a clockwise, so the
     * outward in-plane normal of edge E is n x E */
    double m[3], o, best = 0.0;
    cb_v3_cross(m, n, e0);
    o = cb_v3_dot(dp, m);
    if (o > 0 && o * o > best * l0) best = o * o / l0;
    double dpb[3];
    cb_v3_sub(dpb, p, b);
    cb_v3_cross(m, n, e1);
    o = cb_v3_dot(dpb, m);
    if (o > 0 && o * o > best * l1) best = o * o / l1;
    double dpq[3];
    cb_v3_sub(dpq, p, q);
    cb_v3_cross(m, n, e2);
    o = cb_v3_dot(dpq, m);
    if (o > 0 && o * o > best * l2) best = o * o / l2;
    return s * s + best > (1.0 + 1e-5) * (1.0 + 1e-5) * dist2 * nn;
}

/* Eight pairs side by side in GCC's vector extensions: every lane computes
 * cb_step_contact_far's operations in its order, its ternaries as selects. Written once,
 * inlined into one function per instruction set. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

/* The pairs' coordinates gathered into vectors: idx3 = 3 x the vertex (int lanes). */
#define GATHER3(G, idx3, base) {G(idx3, base), G(idx3, base + 1), G(idx3, base + 2)}

/* ---- AVX2: four pairs per vector */
#define KERNEL __attribute__((target("avx2")))
typedef __m256d V;
typedef __m256d M;
static inline KERNEL V set1(double a) { return _mm256_set1_pd(a); }
static inline KERNEL V add(V a, V b) { return _mm256_add_pd(a, b); }
static inline KERNEL V sub(V a, V b) { return _mm256_sub_pd(a, b); }
static inline KERNEL V mul(V a, V b) { return _mm256_mul_pd(a, b); }
static inline KERNEL V vdiv(V a, V b) { return _mm256_div_pd(a, b); }
static inline KERNEL M gt(V a, V b) { return _mm256_cmp_pd(a, b, _CMP_GT_OQ); }
static inline KERNEL M ge(V a, V b) { return _mm256_cmp_pd(a, b, _CMP_GE_OQ); }
static inline KERNEL M le(V a, V b) { return _mm256_cmp_pd(a, b, _CMP_LE_OQ); }
static inline KERNEL M m_and(M a, M b) { return _mm256_and_pd(a, b); }
static inline KERNEL V sel(M m, V a, V b) { return _mm256_blendv_pd(b, a, m); }
#include "solvers/step_far_eval.h"
static inline KERNEL V g4(__m128i idx3, const double *base) { return _mm256_i32gather_pd(base, idx3, 8); }

static KERNEL long far_avx2(const double (*x)[3], const int (*f)[3], const int (*pairs)[2], long n, double dist2,
                            unsigned char *bits)
{
    const double *xs = &x[0][0];
    const int *fs = &f[0][0];
    const __m128i three = _mm_set1_epi32(3);
    long i = 0;
    for (; i + 4 <= n; i += 4) {
        __m256i pr = _mm256_loadu_si256((const __m256i *)pairs[i]); /* v0 t0 v1 t1 ... */
        __m256i lanes = _mm256_permutevar8x32_epi32(pr, _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7));
        __m128i v3 = _mm_mullo_epi32(_mm256_castsi256_si128(lanes), three);
        __m128i t3 = _mm_mullo_epi32(_mm256_extracti128_si256(lanes, 1), three);
        __m128i a3 = _mm_mullo_epi32(_mm_i32gather_epi32(fs, t3, 4), three);
        __m128i b3 = _mm_mullo_epi32(_mm_i32gather_epi32(fs + 1, t3, 4), three);
        __m128i q3 = _mm_mullo_epi32(_mm_i32gather_epi32(fs + 2, t3, 4), three);
        V3 p = GATHER3(g4, v3, xs), a = GATHER3(g4, a3, xs), b = GATHER3(g4, b3, xs), q = GATHER3(g4, q3, xs);
        int m = _mm256_movemask_pd(far_lanes(p, a, b, q, dist2));
        if (i & 4) bits[i >> 3] |= (unsigned char)(m << 4);
        else bits[i >> 3] = (unsigned char)m;
    }
    return i;
}
#undef KERNEL

/* ---- AVX-512: eight pairs per vector */
#define KERNEL __attribute__((target("avx512f,avx2")))
#define V V8
#define M M8
#define set1 set1_8
#define add add8
#define sub sub8
#define mul mul8
#define vdiv vdiv8
#define gt gt8
#define ge ge8
#define le le8
#define m_and m_and8
#define sel sel8
#define V3 V3_8
#define v3sub v3sub8
#define v3dot v3dot8
#define v3cross v3cross8
#define edge_term edge_term8
#define far_lanes far_lanes8
typedef __m512d V;
typedef __mmask8 M;
static inline KERNEL V set1(double a) { return _mm512_set1_pd(a); }
static inline KERNEL V add(V a, V b) { return _mm512_add_pd(a, b); }
static inline KERNEL V sub(V a, V b) { return _mm512_sub_pd(a, b); }
static inline KERNEL V mul(V a, V b) { return _mm512_mul_pd(a, b); }
static inline KERNEL V vdiv(V a, V b) { return _mm512_div_pd(a, b); }
static inline KERNEL M gt(V a, V b) { return _mm512_cmp_pd_mask(a, b, _CMP_GT_OQ); }
static inline KERNEL M ge(V a, V b) { return _mm512_cmp_pd_mask(a, b, _CMP_GE_OQ); }
static inline KERNEL M le(V a, V b) { return _mm512_cmp_pd_mask(a, b, _CMP_LE_OQ); }
static inline KERNEL M m_and(M a, M b) { return a & b; }
static inline KERNEL V sel(M m, V a, V b) { return _mm512_mask_blend_pd(m, b, a); }
#include "solvers/step_far_eval.h"
static inline KERNEL V g8(__m256i idx3, const double *base) { return _mm512_i32gather_pd(idx3, base, 8); }

static KERNEL long far_avx512(const double (*x)[3], const int (*f)[3], const int (*pairs)[2], long n, double dist2,
                              unsigned char *bits)
{
    const double *xs = &x[0][0];
    const int *fs = &f[0][0];
    const __m256i three = _mm256_set1_epi32(3);
    long i = 0;
    for (; i + 8 <= n; i += 8) {
        __m512i pr = _mm512_loadu_si512(pairs[i]); /* a pair per 64-bit lane: v low, t high */
        __m256i v3 = _mm256_mullo_epi32(_mm512_cvtepi64_epi32(pr), three);
        __m256i t3 = _mm256_mullo_epi32(_mm512_cvtepi64_epi32(_mm512_srli_epi64(pr, 32)), three);
        __m256i a3 = _mm256_mullo_epi32(_mm256_i32gather_epi32(fs, t3, 4), three);
        __m256i b3 = _mm256_mullo_epi32(_mm256_i32gather_epi32(fs + 1, t3, 4), three);
        __m256i q3 = _mm256_mullo_epi32(_mm256_i32gather_epi32(fs + 2, t3, 4), three);
        V3 p = GATHER3(g8, v3, xs), a = GATHER3(g8, a3, xs), b = GATHER3(g8, b3, xs), q = GATHER3(g8, q3, xs);
        bits[i >> 3] = (unsigned char)far_lanes(p, a, b, q, dist2);
    }
    return i;
}

int cb_step_contact_far_width(void)
{
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return 8;
    return __builtin_cpu_supports("avx2") ? 4 : 1;
}
#else
int cb_step_contact_far_width(void) { return 1; }
#endif

void cb_step_contact_far_bits(int width, const double (*x)[3], const int (*f)[3], const int (*pairs)[2], long n,
                              double dist2, unsigned char *bits)
{
    if (!x || !f || !pairs || !bits || n <= 0) return;
    long i = 0;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    int have = cb_step_contact_far_width();
    if (width >= 8 && have >= 8) i = far_avx512(x, f, pairs, n, dist2, bits);
    else if (width >= 4 && have >= 4) i = far_avx2(x, f, pairs, n, dist2, bits);
#else
    (void)width;
#endif
    if (i < n && !(i & 7)) bits[i >> 3] = 0;
    for (; i < n; i++) { /* the rest (all of them without the vectors), one at a time */
        const int *t = f[pairs[i][1]];
        int far = cb_step_contact_far(x[pairs[i][0]], x[t[0]], x[t[1]], x[t[2]], dist2);
        bits[i >> 3] = (unsigned char)((bits[i >> 3] & ~(1u << (i & 7))) | ((unsigned)far << (i & 7)));
    }
}
