/* solvers/chol_single.h — a Cholesky factor in supernodes copied to single precision,
 * and the two triangular solves over it for three right-hand sides (x, y, z), for
 * cb_chol_solve3 when its system asks for single precision (cholmod_util.h,
 * cb_chol_set_precision; fms's `factor_precision: single`).
 *
 * The factor is computed in double by CHOLMOD; this is a copy of its values rounded to
 * float, made once per factorization, so a solve reads half the bytes and its vector
 * instructions hold twice the rows (eight floats in 32 bytes where the double solves
 * hold four). The solves' arithmetic is float throughout (the right-hand side rounded
 * to float on the way in), so the solution carries float round-off: relative to the
 * solution about the float epsilon (6e-8) times the condition number of the system.
 *
 * Layout of the copy: supernode s (columns k1 = sup[s] .. k1+nc-1, nb rows below them)
 * is one column-major block with a leading dimension ld = ncp + nbp, ncp and nbp being
 * nc and nb rounded up to a multiple of eight: rows 0 .. ncp-1 of a column are the
 * supernode's own rows (the diagonal triangle; zero past nc), rows ncp .. ld-1 the rows
 * below (zero past nb; their row indices point at a scratch row n of the right-hand
 * side). The triangle's 8 x 8 diagonal blocks (columns and rows j0 .. j0+7, j0 a
 * multiple of eight; m x m for the last m < 8 columns) hold the inverse of the factor's
 * block instead, computed in double and rounded, below the diagonal and, transposed,
 * above it (the forward solve multiplies by it, the backward by its transpose: no
 * substitution). Blocks start at 32-byte boundaries, so every load of eight rows is
 * aligned and no loop has a tail of fewer than eight rows: the padding costs ~15% more
 * entries on the 81 x 81 curtain than CHOLMOD's supernodes hold.
 */
#ifndef CB_CHOL_SINGLE_H
#define CB_CHOL_SINGLE_H

#include "core/error.h"

typedef struct cb_chol_single cb_chol_single;

/* Copy a factor of n unknowns given in ns supernodes into *cs (created on the first
 * call, its arrays reused while large enough): supernode s has the columns sup[s] ..
 * sup[s+1]-1 and the rows row[rp[s] .. rp[s+1]-1] (its own columns first, then the rows
 * below, increasing), its values a dense column-major block of (rp[s+1]-rp[s]) x
 * (sup[s+1]-sup[s]) doubles at val + sx[s] (entries above the diagonal not read). label
 * names the system in messages. CB_ERR_INTERNAL for a diagonal entry that is not
 * positive. */
int cb_chol_single_set(cb_chol_single **cs, int n, int ns, const int *sup, const int *rp, const int *row,
                       const long *sx, const double *val, const char *label, cb_error *err);
void cb_chol_single_free(cb_chol_single **cs);
/* Entries (floats) of the copy, padding included. */
long cb_chol_single_entries(const cb_chol_single *cs);
/* The right-hand side, n rows of (x, y, z, unused) in the factor's (permuted) order:
 * fill it, call cb_chol_single_solve, read the solution from it. */
float (*cb_chol_single_rows(cb_chol_single *cs))[4];
/* L L^T X = B on the rows, in place. */
void cb_chol_single_solve(cb_chol_single *cs);

#endif
