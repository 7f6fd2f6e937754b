/* solvers/bending.c — the hinge bending terms of fms and newton (bending.h).
 *
 * Shells (newton). E_i = k w (theta - theta0)^2 is the shared model's term
 * (core/model.c); its gradient 2 k w (theta - theta0) grad theta uses the model's
 * cb_dihedral_angle, so newton and the metrics see the same energy. The Hessian
 *     H_i = 2 k w (grad theta grad theta^T + (theta - theta0) hess theta)
 * needs hess theta, which we get exactly (to round-off) by forward-mode
 * differentiation of the gradient formula of core/model.c (dual numbers, one pass per
 * coordinate of the 12): no second derivation by hand to get wrong, and the same
 * guards (a degenerate triangle or edge gives a zero gradient, so a zero Hessian).
 * H_i is indefinite where theta - theta0 and hess theta disagree in sign; newton needs a
 * positive semi-definite matrix, so H_i is projected per hinge: its eigen-decomposition,
 * negative eigenvalues set to zero (Teran et al. 2005 do the same per element). hess
 * theta has rank 8 (4 positive and 4 negative eigenvalues on random hinges): its null
 * space is the three translations and the stretch along the edge (0, e, s2 e, s3 e)
 * (cb_hinge_psd_project, bending.h), and grad theta is orthogonal to all four. So an
 * orthogonal change of basis that isolates them (a Hadamard transform of the four
 * vertices and one Householder reflection) leaves an 8 x 8 eigen-problem, solved by
 * Householder tridiagonalization and the implicit QL method (Golub & Van Loan,
 * "Matrix Computations", 8.3; cb_psd_project_ql): the same projection as the cyclic Jacobi
 * rotations (8.5) on the whole 12 x 12 matrix, which it replaced, to round-off
 * (tests/test_bending.c: 1e-14 relative on random hinges), in 1/7 of the time (2.4 against
 * 16 us per hinge). The Jacobi version, cb_psd_project, stays as the tests' reference.
 * We chose this
 * over the Gauss-Newton form 2 k w grad theta grad theta^T (PSD by construction, no
 * eigen-solver) because that form is exact only at theta = theta0: on a hinge bent far
 * from rest (a drape, a fold) the dropped term is as large as the kept one, and newton
 * would converge linearly where the projected Hessian keeps the positive curvature.
 * A hinge at its rest angle (theta = theta0 exactly) skips the projection (H_i is
 * then the rank-one Gauss-Newton term).
 *
 * Quadratic (fms and newton). Bergou, Wardetzky, Harmon, Zorin, Grinspun 2006, "A
 * quadratic bending model for inextensible surfaces" (SCA), sec. 4: for isometric
 * deformations of a flat rest state the integrated squared mean curvature is
 * 1/2 x^T Q x with Q = sum over hinges of 3/(A1 + A2) K K^T (x, y and z alike), K the
 * cotangent stencil (bending.h). Relation to the shells energy: at a flat rest state
 * grad theta = (1/|e|) K n (n the normal), so 2 k_bend 3/(A1 + A2) K K^T restricted to
 * normal displacements is the shells Hessian 2 k_bend w grad theta grad theta^T: the
 * two energies agree to second order in the bending of a flat rest state (checked by
 * finite differences in tests/test_bending.c); our q is sqrt(2 k_bend) times Bergou's
 * per-hinge vector. Differences: the quadratic energy also sees in-plane motion that is
 * not affine on the hinge (K . x_t for tangential x_t; zero for isometric deformations,
 * which is the model's assumption; the stretch springs resist it far more), and it does
 * not depend on the fold direction's size: for large folds it grows like the squared
 * curvature vector, not like theta^2 (equal for small angles). For a curved rest
 * shape 1/2 x^T Q x is not minimal at rest (K . x measures the mean curvature, which a
 * curved rest shape has): the rest state would bend towards flat. Its extension to
 * curved rest states (Garg et al. 2007, "Cubic shells") is not quadratic any more, so
 * we refuse `bending: quadratic` when a hinge's rest angle exceeds 1e-6 rad.
 */
#include "solvers/bending.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/model.h"
#include "core/vec3.h"

const char *const cb_bending_names[] = {"shells", "quadratic", "springs", NULL};

/* The largest rest angle `quadratic` accepts as flat (rad). */
#define FLAT_REST 1e-6

void cb_bending_release(cb_bending *b)
{
    if (!b) return;
    free(b->kw);
    free(b->theta0);
    free(b->q);
    memset(b, 0, sizeof *b);
}

/* cot of the angle at p in the triangle (p, a, c); 0 when degenerate */
static double cot_at(const double p[3], const double a[3], const double c[3], int *degenerate)
{
    double u[3], v[3], n[3];
    cb_v3_sub(u, a, p);
    cb_v3_sub(v, c, p);
    cb_v3_cross(n, u, v);
    double s = cb_v3_norm(n);
    if (!(s > 0)) {
        *degenerate = 1;
        return 0.0;
    }
    return cb_v3_dot(u, v) / s;
}

void cb_bending_stencil(const double X0[3], const double X1[3], const double X2[3], const double X3[3],
                        double k_bend, double q[4])
{
    int deg = 0;
    double a0 = cot_at(X0, X1, X2, &deg), a1 = cot_at(X1, X0, X2, &deg);
    double b0 = cot_at(X0, X1, X3, &deg), b1 = cot_at(X1, X0, X3, &deg);
    double n1[3], n2[3], e[3], a[3], c[3];
    cb_v3_sub(e, X1, X0);
    cb_v3_sub(a, X2, X0);
    cb_v3_sub(c, X3, X0);
    cb_v3_cross(n1, e, a);
    cb_v3_cross(n2, c, e);
    double A = 0.5 * (cb_v3_norm(n1) + cb_v3_norm(n2));
    if (deg || !(A > 0)) {
        q[0] = q[1] = q[2] = q[3] = 0.0;
        return;
    }
    double s = sqrt(6.0 * k_bend / A);
    q[0] = s * (a1 + b1);
    q[1] = s * (a0 + b0);
    q[2] = -s * (a0 + a1);
    q[3] = -s * (b0 + b1);
}

/* The first hinge of w's mesh bent at rest (rest angle above FLAT_REST), or -1. */
static int first_curved(const cb_world *w)
{
    for (int i = 0; i < w->mesh->nh; i++)
        if (!(fabs(w->model.hinge_rest_angle[i]) <= FLAT_REST)) return i;
    return -1;
}

int cb_bending_rest_flat(const cb_world *w) { return first_curved(w) < 0; }

int cb_bending_init(cb_bending *b, const cb_world *w, cb_bending_kind kind, cb_error *err)
{
    if (!b || !w) return CB_FAIL(err, CB_ERR_INPUT, "cb_bending_init: NULL argument");
    memset(b, 0, sizeof *b);
    b->kind = kind;
    const cb_mesh *m = w->mesh;
    const cb_cloth_model *md = &w->model;
    if (kind == CB_BENDING_SPRINGS || !(md->k_bend > 0) || m->nh == 0) return CB_OK;
    if (kind != CB_BENDING_SHELLS && kind != CB_BENDING_QUADRATIC)
        return CB_FAIL(err, CB_ERR_INPUT, "cb_bending_init: unknown bending kind %d", (int)kind);
    const double (*X)[3] = (const double (*)[3])m->x;
    int curved = kind == CB_BENDING_QUADRATIC ? first_curved(w) : -1;
    if (curved >= 0) {
        const int *h = m->h[curved];
        return CB_FAIL(err, CB_ERR_INPUT,
                       "bending: quadratic needs a flat rest state (Bergou et al. 2006), but the hinge of "
                       "edge %d-%d has rest angle %g rad; use bending: springs (or newton's shells)",
                       h[0], h[1], md->hinge_rest_angle[curved]);
    }
    size_t n = (size_t)m->nh;
    if (kind == CB_BENDING_SHELLS) {
        b->kw = cb_calloc(n, sizeof *b->kw);
        b->theta0 = cb_calloc(n, sizeof *b->theta0);
        if (!b->kw || !b->theta0) goto nomem;
        for (int i = 0; i < m->nh; i++) {
            b->kw[i] = md->k_bend * md->hinge_weight[i];
            b->theta0[i] = md->hinge_rest_angle[i];
        }
    } else {
        b->q = cb_calloc(n, sizeof *b->q);
        if (!b->q) goto nomem;
        for (int i = 0; i < m->nh; i++) {
            const int *h = m->h[i];
            cb_bending_stencil(X[h[0]], X[h[1]], X[h[2]], X[h[3]], md->k_bend, b->q[i]);
        }
    }
    b->n = m->nh;
    b->h = (const int (*)[4])m->h;
    return CB_OK;
nomem:
    cb_bending_release(b);
    return CB_FAIL(err, CB_ERR_NOMEM, "bending: out of memory for %d hinges", m->nh);
}

/* sum_j q_j x_j of quadratic term i */
static void stencil_apply(const cb_bending *b, int i, const double (*x)[3], double v[3])
{
    const int *h = b->h[i];
    const double *q = b->q[i];
    for (int k = 0; k < 3; k++) v[k] = q[0] * x[h[0]][k] + q[1] * x[h[1]][k] + q[2] * x[h[2]][k] + q[3] * x[h[3]][k];
}

double cb_bending_energy(const cb_bending *b, const double (*x)[3])
{
    double e = 0.0;
    for (int i = 0; i < b->n; i++) {
        const int *h = b->h[i];
        if (b->kind == CB_BENDING_SHELLS) {
            double d = cb_dihedral_angle(x[h[0]], x[h[1]], x[h[2]], x[h[3]], NULL) - b->theta0[i];
            e += b->kw[i] * d * d;
        } else {
            double v[3];
            stencil_apply(b, i, x, v);
            e += 0.5 * cb_v3_norm2(v);
        }
    }
    return e;
}

void cb_bending_add_gradient(const cb_bending *b, const double (*x)[3], double scale, double (*grad)[3])
{
    for (int i = 0; i < b->n; i++) {
        const int *h = b->h[i];
        if (b->kind == CB_BENDING_SHELLS) {
            double g[4][3];
            double d = cb_dihedral_angle(x[h[0]], x[h[1]], x[h[2]], x[h[3]], g) - b->theta0[i];
            double s = scale * 2.0 * b->kw[i] * d;
            for (int j = 0; j < 4; j++) cb_v3_axpy(grad[h[j]], s, g[j]);
        } else {
            double v[3];
            stencil_apply(b, i, x, v);
            for (int j = 0; j < 4; j++) cb_v3_axpy(grad[h[j]], scale * b->q[i][j], v);
        }
    }
}

void cb_bending_add_pin_impulse(const cb_bending *b, const double (*x)[3], const int *unk, double h, double imp[3],
                                const cb_world *w, double t, double *work)
{
    for (int i = 0; i < b->n; i++) {
        const int *hv = b->h[i];
        int npin = (unk[hv[0]] < 0) + (unk[hv[1]] < 0) + (unk[hv[2]] < 0) + (unk[hv[3]] < 0);
        if (npin == 0 || npin == 4) continue;
        double g[4][3], s;
        if (b->kind == CB_BENDING_SHELLS) {
            double d = cb_dihedral_angle(x[hv[0]], x[hv[1]], x[hv[2]], x[hv[3]], g) - b->theta0[i];
            s = 2.0 * b->kw[i] * d;
        } else {
            double v[3];
            stencil_apply(b, i, x, v);
            for (int j = 0; j < 4; j++) cb_v3_scale(g[j], v, b->q[i][j]);
            s = 1.0;
        }
        for (int j = 0; j < 4; j++) {
            if (unk[hv[j]] >= 0) {
                cb_v3_axpy(imp, -h * s, g[j]);
                continue;
            }
            double u[3]; /* the term's force on the pin is -s g_j; the pin does minus that */
            cb_world_pin_velocity(w, hv[j], t, u);
            *work += h * s * cb_v3_dot(g[j], u);
        }
    }
}

/* The hinge's Hessian, projected to PSD with project. */
static void hinge_hessian(const cb_bending *b, int i, const double (*x)[3], double H[12][12], int project)
{
    const int *h = b->h[i];
    if (b->kind == CB_BENDING_QUADRATIC) {
        memset(H, 0, 144 * sizeof(double));
        for (int a = 0; a < 4; a++)
            for (int c = 0; c < 4; c++)
                for (int k = 0; k < 3; k++) H[3 * a + k][3 * c + k] = b->q[i][a] * b->q[i][c];
        return;
    }
    double g[4][3];
    double d = cb_dihedral_hessian(x[h[0]], x[h[1]], x[h[2]], x[h[3]], g, H) - b->theta0[i];
    double s = 2.0 * b->kw[i];
    const double *gf = &g[0][0];
    for (int r = 0; r < 12; r++)
        for (int c = 0; c < 12; c++) H[r][c] = s * (gf[r] * gf[c] + d * H[r][c]);
    if (d != 0.0 && project) cb_hinge_psd_project(x[h[0]], x[h[1]], x[h[2]], x[h[3]], H);
}

void cb_bending_hinge_hessian(const cb_bending *b, int i, const double (*x)[3], double H[12][12])
{
    hinge_hessian(b, i, x, H, 1);
}

void cb_bending_hinge_hessian_exact(const cb_bending *b, int i, const double (*x)[3], double H[12][12])
{
    hinge_hessian(b, i, x, H, 0);
}

/* A <- (W (x) I3) A, W = 1/2 [1 1 1 1; 1 1 -1 -1; 1 -1 1 -1; 1 -1 -1 1] (symmetric and
 * orthogonal): the 4 vertex blocks of each column mixed by butterflies. Block 0 of
 * (W (x) I3) u is the translation part of u (twice the mean of its 4 vertices), blocks 1-3
 * the rest. */
static void hadamard_rows(double A[12][12])
{
    for (int c = 0; c < 12; c++)
        for (int k = 0; k < 3; k++) {
            double s01 = A[k][c] + A[3 + k][c], d01 = A[k][c] - A[3 + k][c];
            double s23 = A[6 + k][c] + A[9 + k][c], d23 = A[6 + k][c] - A[9 + k][c];
            A[k][c] = 0.5 * (s01 + s23);
            A[3 + k][c] = 0.5 * (s01 - s23);
            A[6 + k][c] = 0.5 * (d01 + d23);
            A[9 + k][c] = 0.5 * (d01 - d23);
        }
}

/* A <- (W (x) I3) A (W (x) I3) for symmetric A: hadamard_rows, transpose, hadamard_rows. */
static void hadamard_both(double A[12][12])
{
    hadamard_rows(A);
    for (int r = 0; r < 12; r++)
        for (int c = 0; c < r; c++) {
            double t = A[r][c];
            A[r][c] = A[c][r];
            A[c][r] = t;
        }
    hadamard_rows(A);
}

/* M <- P M P for the symmetric 9 x 9 block M of A (rows and columns 3..11), P = I -
 * beta v v^T (a Householder reflection): p = beta M v, q = p - (beta v.p / 2) v,
 * M <- M - v q^T - q v^T. */
static void reflect9(double A[12][12], const double v[9], double beta)
{
    double q[9], vp = 0.0;
    for (int r = 0; r < 9; r++) {
        double sum = 0.0;
        for (int c = 0; c < 9; c++) sum += A[3 + r][3 + c] * v[c];
        q[r] = beta * sum;
        vp += v[r] * q[r];
    }
    double K = 0.5 * beta * vp;
    for (int r = 0; r < 9; r++) q[r] -= K * v[r];
    for (int r = 0; r < 9; r++)
        for (int c = 0; c < 9; c++) A[3 + r][3 + c] -= v[r] * q[c] + q[r] * v[c];
}

void cb_hinge_psd_project(const double x0[3], const double x1[3], const double x2[3], const double x3[3],
                          double H[12][12])
{
    double e[3], a[3], b[3];
    cb_v3_sub(e, x1, x0);
    cb_v3_sub(a, x2, x0);
    cb_v3_sub(b, x3, x0);
    double le2 = cb_v3_norm2(e);
    if (!(le2 > 0)) { /* no edge: no known null vector but the translations */
        cb_psd_project_ql(12, &H[0][0]);
        return;
    }
    /* z = (0, e, s2 e, s3 e) in the transformed coordinates: (W c) (x) e with c = (0, 1,
     * s2, s3); its block 0 (a translation) is dropped with the others */
    double s2 = cb_v3_dot(a, e) / le2, s3 = cb_v3_dot(b, e) / le2;
    const double cw[3] = {0.5 * (1.0 - s2 - s3), 0.5 * (-1.0 + s2 - s3), 0.5 * (-1.0 - s2 + s3)};
    double v[9], wn2 = 0.0;
    for (int j = 0; j < 3; j++)
        for (int k = 0; k < 3; k++) {
            v[3 * j + k] = cw[j] * e[k];
            wn2 += v[3 * j + k] * v[3 * j + k];
        }
    /* the reflection taking z to -sign(z_0) |z| e_0: v = z + sign(z_0) |z| e_0, so
     * v.v = 2 |z|^2 + 2 |z_0| |z| and beta = 2 / v.v */
    double wn = sqrt(wn2), beta = 1.0 / (wn2 + fabs(v[0]) * wn);
    v[0] += v[0] >= 0 ? wn : -wn;
    hadamard_both(H);
    reflect9(H, v, beta);
    /* the 8 x 8 block of the complement of the four null vectors */
    double M[64];
    for (int r = 0; r < 8; r++)
        for (int c = 0; c < 8; c++) M[8 * r + c] = H[4 + r][4 + c];
    cb_psd_project_ql(8, M);
    memset(H, 0, 144 * sizeof(double));
    for (int r = 0; r < 8; r++)
        for (int c = 0; c < 8; c++) H[4 + r][4 + c] = M[8 * r + c];
    reflect9(H, v, beta);
    hadamard_both(H);
    for (int r = 0; r < 12; r++) /* symmetric to round-off: make it exactly so */
        for (int c = 0; c < r; c++) H[r][c] = H[c][r] = 0.5 * (H[r][c] + H[c][r]);
}

/* Forward-mode dual numbers: a value and its derivative along one direction. */
typedef struct dual { double v, d; } dual;

static inline dual dsub(dual a, dual b) { return (dual){a.v - b.v, a.d - b.d}; }
static inline dual dadd(dual a, dual b) { return (dual){a.v + b.v, a.d + b.d}; }
static inline dual dmul(dual a, dual b) { return (dual){a.v * b.v, a.d * b.v + a.v * b.d}; }
static inline dual ddiv(dual a, dual b) { return (dual){a.v / b.v, (a.d * b.v - a.v * b.d) / (b.v * b.v)}; }
static inline dual dsqrt(dual a)
{
    double r = sqrt(a.v);
    return (dual){r, r > 0 ? 0.5 * a.d / r : 0.0};
}
static inline dual ddot(const dual a[3], const dual b[3]) { return dadd(dadd(dmul(a[0], b[0]), dmul(a[1], b[1])), dmul(a[2], b[2])); }
static inline void dvsub(dual r[3], const dual a[3], const dual b[3])
{
    for (int k = 0; k < 3; k++) r[k] = dsub(a[k], b[k]);
}
static inline void dcross(dual r[3], const dual a[3], const dual b[3])
{
    r[0] = dsub(dmul(a[1], b[2]), dmul(a[2], b[1]));
    r[1] = dsub(dmul(a[2], b[0]), dmul(a[0], b[2]));
    r[2] = dsub(dmul(a[0], b[1]), dmul(a[1], b[0]));
}

/* The gradient formula of cb_dihedral_angle (core/model.c) on dual numbers; 0 when
 * degenerate (the same test on the values). */
static int dual_grad(const dual x[4][3], dual g[4][3])
{
    dual e[3], a[3], b[3], n1[3], n2[3];
    dvsub(e, x[1], x[0]);
    dvsub(a, x[2], x[0]);
    dvsub(b, x[3], x[0]);
    dcross(n1, e, a);
    dcross(n2, b, e);
    dual n1s = ddot(n1, n1), n2s = ddot(n2, n2), le2 = ddot(e, e);
    if (!(n1s.v > 0) || !(n2s.v > 0) || !(le2.v > 0)) return 0;
    dual le = dsqrt(le2), m1 = (dual){-1, 0};
    dual c2 = dmul(m1, ddiv(le, n1s)), c3 = dmul(m1, ddiv(le, n2s));
    dual s2 = ddiv(ddot(a, e), le2), s3 = ddiv(ddot(b, e), le2), one = {1, 0};
    for (int k = 0; k < 3; k++) {
        g[2][k] = dmul(n1[k], c2);
        g[3][k] = dmul(n2[k], c3);
        g[0][k] = dsub(dmul(dmul(m1, dsub(one, s2)), g[2][k]), dmul(dsub(one, s3), g[3][k]));
        g[1][k] = dsub(dmul(dmul(m1, s2), g[2][k]), dmul(s3, g[3][k]));
    }
    return 1;
}

double cb_dihedral_hessian(const double x0[3], const double x1[3], const double x2[3], const double x3[3],
                           double g[4][3], double H[12][12])
{
    double theta = cb_dihedral_angle(x0, x1, x2, x3, g);
    const double *xs[4] = {x0, x1, x2, x3};
    dual X[4][3], G[4][3];
    for (int j = 0; j < 4; j++)
        for (int k = 0; k < 3; k++) X[j][k] = (dual){xs[j][k], 0.0};
    for (int c = 0; c < 12; c++) {
        X[c / 3][c % 3].d = 1.0;
        int ok = dual_grad((const dual (*)[3])X, G);
        X[c / 3][c % 3].d = 0.0;
        for (int r = 0; r < 12; r++) H[r][c] = ok ? G[r / 3][r % 3].d : 0.0;
    }
    for (int r = 0; r < 12; r++) /* symmetric to round-off: make it exactly so */
        for (int c = 0; c < r; c++) H[r][c] = H[c][r] = 0.5 * (H[r][c] + H[c][r]);
    return theta;
}

/* A = V diag(max(lam, 0)) V^T (V's columns the eigenvectors, n x n row-major); returns
 * the smallest lam (lam is clamped in place). */
static double reassemble(int n, const double *V, double *lam, double *A)
{
    double lmin = INFINITY;
    for (int k = 0; k < n; k++) {
        if (lam[k] < lmin) lmin = lam[k];
        if (!(lam[k] > 0)) lam[k] = 0.0;
    }
    for (int r = 0; r < n; r++)
        for (int c = 0; c <= r; c++) {
            double sum = 0.0;
            for (int k = 0; k < n; k++) sum += V[r * n + k] * lam[k] * V[c * n + k];
            A[r * n + c] = A[c * n + r] = sum;
        }
    return lmin;
}

double cb_psd_project(int n, double *A, int *sweeps)
{
    double V[144], lam[12];
    for (int r = 0; r < n; r++)
        for (int c = 0; c < n; c++) V[r * n + c] = r == c;
    double fro = 0.0;
    for (int q = 0; q < n * n; q++) fro += A[q] * A[q];
    /* an off-diagonal entry below eps |A| is round-off: set to 0 rather than rotated, so
     * the sweeps end on an exact test (no off-diagonal entry left) and not on a relative
     * threshold that round-off could keep out of reach (measured on the accuracy scene:
     * 1 to 8 sweeps per hinge with either rule) */
    const double tiny = 1e-16 * sqrt(fro);
    int sweep = 0;
    for (; sweep < 50; sweep++) {
        double off = 0.0;
        for (int p = 0; p < n; p++)
            for (int q = p + 1; q < n; q++) off += A[p * n + q] * A[p * n + q];
        if (!(off > 0)) break; /* also stops on NaN */
        for (int p = 0; p < n; p++)
            for (int q = p + 1; q < n; q++) {
                double apq = A[p * n + q];
                if (fabs(apq) <= tiny) {
                    A[p * n + q] = A[q * n + p] = 0.0;
                    continue;
                }
                double th = (A[q * n + q] - A[p * n + p]) / (2.0 * apq);
                double t = (th >= 0 ? 1.0 : -1.0) / (fabs(th) + sqrt(th * th + 1.0));
                double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
                for (int k = 0; k < n; k++) { /* columns p, q */
                    double akp = A[k * n + p], akq = A[k * n + q];
                    A[k * n + p] = c * akp - s * akq;
                    A[k * n + q] = s * akp + c * akq;
                    double vkp = V[k * n + p], vkq = V[k * n + q];
                    V[k * n + p] = c * vkp - s * vkq;
                    V[k * n + q] = s * vkp + c * vkq;
                }
                for (int k = 0; k < n; k++) { /* rows p, q */
                    double apk = A[p * n + k], aqk = A[q * n + k];
                    A[p * n + k] = c * apk - s * aqk;
                    A[q * n + k] = s * apk + c * aqk;
                }
            }
    }
    if (sweeps) *sweeps = sweep;
    for (int k = 0; k < n; k++) lam[k] = A[k * n + k];
    return reassemble(n, V, lam, A);
}

/* Householder reduction of the symmetric n x n matrix a (row-major, lower triangle read)
 * to tridiagonal form, accumulating the orthogonal transformation in a: diagonal into d,
 * subdiagonal into e[1..n-1] (e[0] = 0). The method of Householder as in Golub & Van Loan
 * 8.3.1, rows eliminated from the last one up. */
static void tridiagonalize(int n, double *a, double *d, double *e)
{
#define A_(i, j) a[(i) * n + (j)]
    for (int i = n - 1; i > 0; i--) {
        int l = i - 1;
        double h = 0.0, scale = 0.0;
        if (l > 0) {
            for (int k = 0; k <= l; k++) scale += fabs(A_(i, k));
            if (scale == 0.0) {
                e[i] = A_(i, l);
            } else {
                for (int k = 0; k <= l; k++) {
                    A_(i, k) /= scale;
                    h += A_(i, k) * A_(i, k);
                }
                double f = A_(i, l), g = f >= 0 ? -sqrt(h) : sqrt(h);
                e[i] = scale * g;
                h -= f * g;
                A_(i, l) = f - g;
                f = 0.0;
                for (int j = 0; j <= l; j++) {
                    A_(j, i) = A_(i, j) / h;
                    g = 0.0;
                    for (int k = 0; k <= j; k++) g += A_(j, k) * A_(i, k);
                    for (int k = j + 1; k <= l; k++) g += A_(k, j) * A_(i, k);
                    e[j] = g / h;
                    f += e[j] * A_(i, j);
                }
                double hh = f / (h + h);
                for (int j = 0; j <= l; j++) {
                    f = A_(i, j);
                    e[j] = g = e[j] - hh * f;
                    for (int k = 0; k <= j; k++) A_(j, k) -= f * e[k] + g * A_(i, k);
                }
            }
        } else {
            e[i] = A_(i, l);
        }
        d[i] = h;
    }
    d[0] = 0.0;
    e[0] = 0.0;
    for (int i = 0; i < n; i++) { /* the transformation, from the Householder vectors */
        if (d[i] != 0.0)
            for (int j = 0; j < i; j++) {
                double g = 0.0;
                for (int k = 0; k < i; k++) g += A_(i, k) * A_(k, j);
                for (int k = 0; k < i; k++) A_(k, j) -= g * A_(k, i);
            }
        d[i] = A_(i, i);
        A_(i, i) = 1.0;
        for (int j = 0; j < i; j++) A_(j, i) = A_(i, j) = 0.0;
    }
#undef A_
}

/* sqrt(a^2 + b^2): glibc's hypot takes a third of the QL's time; it is kept only where
 * the squares would overflow or underflow */
static inline double pythag(double a, double b)
{
    double s = a * a + b * b;
    return s < 1e300 && s > 1e-300 ? sqrt(s) : hypot(a, b);
}

/* Eigenvalues (into d) and eigenvectors (columns of z, which holds the tridiagonalizing
 * transformation on entry) of the symmetric tridiagonal matrix (d, e) by the implicit QL
 * method with Wilkinson-like shifts (Golub & Van Loan 8.3.3, in its QL form); a
 * subdiagonal entry below eps (|d_m| + |d_m+1|) or below `tiny` is taken as zero. Returns
 * 0, or -1 when an eigenvalue needed more than 30 iterations. */
static int tridiagonal_ql(int n, double *d, double *e, double *z, double tiny)
{
    for (int i = 1; i < n; i++) e[i - 1] = e[i];
    e[n - 1] = 0.0;
    for (int l = 0; l < n; l++) {
        int iter = 0, m;
        do {
            for (m = l; m < n - 1; m++) {
                double dd = fabs(d[m]) + fabs(d[m + 1]);
                if (fabs(e[m]) <= DBL_EPSILON * dd || fabs(e[m]) <= tiny) break;
            }
            if (m == l) break;
            if (iter++ == 30) return -1;
            double g = (d[l + 1] - d[l]) / (2.0 * e[l]), r = pythag(g, 1.0);
            g = d[m] - d[l] + e[l] / (g + copysign(r, g));
            double s = 1.0, c = 1.0, p = 0.0;
            int i;
            for (i = m - 1; i >= l; i--) {
                double f = s * e[i], b = c * e[i];
                e[i + 1] = r = pythag(f, g);
                if (r == 0.0) {
                    d[i + 1] -= p;
                    e[m] = 0.0;
                    break;
                }
                s = f / r;
                c = g / r;
                g = d[i + 1] - p;
                r = (d[i] - g) * s + 2.0 * c * b;
                p = s * r;
                d[i + 1] = g + p;
                g = c * r - b;
                for (int k = 0; k < n; k++) {
                    f = z[k * n + i + 1];
                    z[k * n + i + 1] = s * z[k * n + i] + c * f;
                    z[k * n + i] = c * z[k * n + i] - s * f;
                }
            }
            if (r == 0.0 && i >= l) continue;
            d[l] -= p;
            e[l] = g;
            e[m] = 0.0;
        } while (m != l);
    }
    return 0;
}

double cb_psd_project_ql(int n, double *A)
{
    double Z[144], d[12], e[12], fro = 0.0;
    memcpy(Z, A, (size_t)(n * n) * sizeof *Z);
    for (int q = 0; q < n * n; q++) fro += A[q] * A[q];
    if (fro == 0.0) return 0.0;
    if (!(fro > 0)) return NAN; /* NaN (or infinite) entries: left as they are */
    tridiagonalize(n, Z, d, e);
    if (tridiagonal_ql(n, d, e, Z, 1e-16 * sqrt(fro))) return cb_psd_project(n, A, NULL);
    return reassemble(n, Z, d, A);
}
