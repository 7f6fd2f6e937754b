/* solvers/step_far.h — the exact rejection of a vertex-triangle pair that the
 * self-contact stage (solvers/step_contact.c) applies before the distance test: a lower
 * bound on the distance, for one pair or for a list of pairs at once.
 *
 * The list form computes the same formula, operation for operation (IEEE double, no
 * fused multiply-adds: C11 mode contracts nothing; ordered comparisons, its ternaries as
 * selects; solvers/step_far_eval.h), on eight pairs per AVX-512 vector or four per AVX2
 * vector (the points gathered by index), compiled with a target attribute whatever the
 * build's -march and chosen at run time by the CPU, else pair by pair; so its answers
 * are the single pair's bit for bit (tests/test_step_contact.c compares them on the
 * stage's pairs and on random and degenerate triangles at every width the CPU has). On
 * the 81 x 81 curtain the stage's 12800 pairs per step are all rejected by it (one at a
 * time it was a fifth of the stage's time). */
#ifndef CB_STEP_FAR_H
#define CB_STEP_FAR_H

/* 1 when the distance from p to triangle (a, b, q) certainly exceeds sqrt(dist2) (a
 * lower bound: distance to the plane and beyond an edge in the plane, with a relative
 * margin of 1e-5 far above its round-off), 0 when it does not or cannot decide (a
 * needle-thin triangle, or edges over 1e4 sqrt(dist2)). */
int cb_step_contact_far(const double p[3], const double a[3], const double b[3], const double q[3], double dist2);

/* cb_step_contact_far of pairs[i] = (vertex, triangle of f) at positions x, i < n, into
 * bit i & 7 of bits[i >> 3] (room for (n + 7) / 8 bytes; nothing for n <= 0 or a NULL). width: 8 (AVX-512), 4 (AVX2),
 * or 1 (pair by pair), capped by what the CPU has; every width gives the same bits. The
 * vector widths index x and f with 32-bit integers: vertices and triangles below 2^31 / 3
 * (715,827,882). */
void cb_step_contact_far_bits(int width, const double (*x)[3], const int (*f)[3], const int (*pairs)[2], long n,
                              double dist2, unsigned char *bits);

/* The widest width the CPU has (8, 4 or 1). */
int cb_step_contact_far_width(void);

#endif
