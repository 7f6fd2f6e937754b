/* solvers/springs_local.h — the local step of fms (Liu et al. 2013, sec. 4) over a
 * spring array, with its right-hand side: two, four or eight springs at a time.
 *
 * For springs i in [0, ns): e = x[ia[i]] - x[ib[i]], d = rest[i] e / |e| (d0[i] when
 * |e|^2 is not > 0: a spring of zero length keeps its rest direction), f = kh[i] d,
 * added to row ua[i] of b and subtracted from row ub[i], spring by spring in index
 * order (rows may repeat: the same order of additions as one spring at a time).
 *
 * Widths: 1 (scalar), 2 (SSE2, the x86-64 baseline), 4 (AVX2) or 8 (AVX-512F/DQ),
 * chosen at run time with cb_springs_local_width (the widths pbd's kernels run with,
 * cb_pbd_simd_width in solvers/pbd_simd.h: the same CPU check). Every width computes
 * per spring the same IEEE operations in the same order (products and sums unfused,
 * correctly rounded square root and division), so all widths give bitwise the same b
 * (tests/test_springs.c checks it, remainders of ns not a multiple of the width and
 * zero-length springs included). A group of springs holding one of zero length (or a
 * NaN) is done one spring at a time. */
#ifndef CB_SPRINGS_LOCAL_H
#define CB_SPRINGS_LOCAL_H

/* The width fms runs on this CPU: 4 with AVX2 (also with AVX-512: 8 lanes measured no
 * faster on the 81 x 81 curtain, where the additions to the rows bound the pass), else 2
 * on x86-64, 1 elsewhere. */
int cb_springs_local_width(void);

/* The pass above at width `width` (1, 2, 4 or 8; a width this CPU lacks runs the widest
 * it has below it). b is not cleared. */
void cb_springs_local_rhs(int width, const double (*x)[3], int ns, const int *ia, const int *ib, const int *ua,
                          const int *ub, const double *rest, const double *kh, const double (*d0)[3],
                          double (*b)[3]);

#endif
