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
 * positive semi-definite matrix, so H_i is projected per hinge: its eigen-decomposition
 * by cyclic Jacobi rotations (Golub & Van Loan, "Matrix Computations", 8.5), negative
 * eigenvalues set to zero (Teran et al. 2005 do the same per element). We chose this
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

void cb_bending_hinge_hessian(const cb_bending *b, int i, const double (*x)[3], double H[12][12])
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
    if (d != 0.0) cb_psd_project(12, &H[0][0], NULL);
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
    double lmin = INFINITY;
    for (int k = 0; k < n; k++) {
        lam[k] = A[k * n + k];
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
