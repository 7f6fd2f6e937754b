/* tests/test_bending.c — the hinge bending terms of fms and newton (solvers/bending.c):
 * the exact Hessian of the dihedral angle against central differences of its gradient
 * on random, near-flat and near-folded hinges; the shells and quadratic energies'
 * gradients against differences of the energies; the projection to positive
 * semi-definite against a matrix of known eigen-decomposition, the QL projection and the
 * hinge projection (an 8 x 8 problem) against it; the quadratic energy's
 * Hessian equals the shells Hessian on normal displacements at a flat rest state; degenerate
 * hinges give finite gradients and PSD Hessians; quadratic on a curved rest state is
 * refused. */
#include "cb_test.h"
#include "cb_sim.h"

#include "core/model.h"
#include "core/vec3.h"
#include "solvers/bending.h"

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static double urand(double a, double b) { return a + (b - a) * cb_test_uniform(&rng); }

/* A hinge with x0 = 0, x1 on the x axis, x2 above the edge in the xy plane and x3
 * turned about the edge by phi from the flat position opposite x2 (phi = 0: flat,
 * theta = 0; phi near pi: folded onto x2's side), plus a little noise. */
static void hinge_at(double phi, double noise, double x[4][3])
{
    double X[4][3] = {{0, 0, 0}, {1.0, 0, 0}, {0.4, 0.8, 0}, {0.6, -0.9 * cos(phi), 0.9 * sin(phi)}};
    for (int j = 0; j < 4; j++)
        for (int k = 0; k < 3; k++) x[j][k] = X[j][k] + noise * urand(-1, 1);
}

/* The largest |A - B| over 12 x 12 entries, relative to the largest |B|. */
static double rel_diff12(const double A[12][12], const double B[12][12])
{
    double d = 0, s = 0;
    for (int r = 0; r < 12; r++)
        for (int c = 0; c < 12; c++) {
            d = fmax(d, fabs(A[r][c] - B[r][c]));
            s = fmax(s, fabs(B[r][c]));
        }
    return d / (s > 0 ? s : 1.0);
}

/* Central differences (step eps) of the dihedral angle's gradient. */
static void fd_angle_hessian(double x[4][3], double eps, double H[12][12])
{
    for (int c = 0; c < 12; c++) {
        double gp[4][3], gm[4][3], *xc = &x[c / 3][c % 3], x0 = *xc;
        *xc = x0 + eps;
        cb_dihedral_angle(x[0], x[1], x[2], x[3], gp);
        *xc = x0 - eps;
        cb_dihedral_angle(x[0], x[1], x[2], x[3], gm);
        *xc = x0;
        for (int r = 0; r < 12; r++) H[r][c] = (gp[r / 3][r % 3] - gm[r / 3][r % 3]) / (2 * eps);
    }
}

/* The smallest eigenvalue of a symmetric 12 x 12 matrix (the projection of a copy
 * reports it). */
static double min_eig12(const double A[12][12])
{
    double B[144];
    memcpy(B, A, sizeof B);
    return cb_psd_project(12, B, NULL);
}

static void test_angle_hessian_fd(void)
{
    const double phis[] = {0.7, -1.9, 1e-3, -1e-4, M_PI - 1e-2, -(M_PI - 1e-3)};
    double worst = 0;
    for (int t = 0; t < 26; t++) {
        double x[4][3], H[12][12], F[12][12], g[4][3];
        if (t < 20) { /* random hinges (kept away from the fold's branch cut) */
            do
                for (int j = 0; j < 4; j++)
                    for (int k = 0; k < 3; k++) x[j][k] = urand(-1, 1);
            while (fabs(cb_dihedral_angle(x[0], x[1], x[2], x[3], NULL)) > 3.0);
        } else {
            hinge_at(phis[t - 20], 1e-3, x);
        }
        double th = cb_dihedral_hessian(x[0], x[1], x[2], x[3], g, H);
        CU_ASSERT_EQUAL(th, cb_dihedral_angle(x[0], x[1], x[2], x[3], NULL));
        fd_angle_hessian(x, 1e-6, F);
        double d = rel_diff12(H, F);
        worst = fmax(worst, d);
        if (!(d < 1e-6)) fprintf(stderr, "  hinge %d (theta %g): Hessian vs differences %.3e\n", t, th, d);
        CU_ASSERT(d < 1e-6);
        for (int r = 0; r < 12; r++)
            for (int c = 0; c < 12; c++) CU_ASSERT_EQUAL(H[r][c], H[c][r]);
    }
    fprintf(stderr, "  worst relative difference of the angle's Hessian: %.2e\n", worst);
}

/* A symmetric matrix V diag(lam) V^T with V orthonormal (Gram-Schmidt of random
 * vectors): the projection gives V diag(max(lam, 0)) V^T, and the smallest eigenvalue. */
static void test_psd_projection(void)
{
    double V[12][12], lam[12], A[144], P[144];
    for (int i = 0; i < 12; i++) {
        for (int k = 0; k < 12; k++) V[i][k] = urand(-1, 1);
        for (int j = 0; j < i; j++) {
            double d = 0;
            for (int k = 0; k < 12; k++) d += V[i][k] * V[j][k];
            for (int k = 0; k < 12; k++) V[i][k] -= d * V[j][k];
        }
        double n = 0;
        for (int k = 0; k < 12; k++) n += V[i][k] * V[i][k];
        for (int k = 0; k < 12; k++) V[i][k] /= sqrt(n);
        lam[i] = i < 4 ? -urand(0.1, 3) : urand(0, 3);
    }
    lam[5] = 0.0;
    for (int r = 0; r < 12; r++)
        for (int c = 0; c < 12; c++) {
            double a = 0, p = 0;
            for (int i = 0; i < 12; i++) {
                a += V[i][r] * lam[i] * V[i][c];
                p += V[i][r] * fmax(lam[i], 0.0) * V[i][c];
            }
            A[r * 12 + c] = a;
            P[r * 12 + c] = p;
        }
    double lmin = INFINITY;
    for (int i = 0; i < 12; i++) lmin = fmin(lmin, lam[i]);
    int sweeps = 0;
    CB_ASSERT_REL(cb_psd_project(12, A, &sweeps), lmin, 1e-12);
    /* Jacobi converges quadratically: a handful of sweeps (round-off left in the
     * off-diagonal entries once made them run to the cap of 50) */
    fprintf(stderr, "  %d Jacobi sweeps\n", sweeps);
    CU_ASSERT(sweeps <= 12);
    for (int q = 0; q < 144; q++) CU_ASSERT(fabs(A[q] - P[q]) < 1e-12);
    /* a PSD matrix is left as it is */
    memcpy(A, P, sizeof A);
    CU_ASSERT(cb_psd_project(12, A, &sweeps) > -1e-12);
    CU_ASSERT(sweeps <= 12);
    for (int q = 0; q < 144; q++) CU_ASSERT(fabs(A[q] - P[q]) < 1e-12);
}

/* cb_psd_project_ql against the Jacobi projection on random symmetric matrices of every
 * size 1..12, with negative, zero and repeated eigenvalues: the same matrix to 1e-12 of
 * its largest entry, and the same smallest eigenvalue. */
static void test_psd_projection_ql(void)
{
    double worst = 0;
    for (int t = 0; t < 60; t++) {
        int n = 1 + t % 12, rank = t % 3 == 0 ? n / 2 : n;
        double A[144] = {0}, J[144], Q[144];
        /* A = sum over `rank` random vectors of +-|v|^2 v v^T, plus a repeated eigenvalue on
         * every fourth matrix (the identity times 0.5) */
        for (int i = 0; i < rank; i++) {
            double v[12], sg = urand(-1, 1) < 0 ? -1.0 : 1.0;
            for (int k = 0; k < n; k++) v[k] = urand(-1, 1);
            for (int r = 0; r < n; r++)
                for (int c = 0; c < n; c++) A[r * n + c] += sg * v[r] * v[c];
        }
        if (t % 4 == 1)
            for (int k = 0; k < n; k++) A[k * n + k] += 0.5;
        memcpy(J, A, sizeof J);
        memcpy(Q, A, sizeof Q);
        double lj = cb_psd_project(n, J, NULL), lq = cb_psd_project_ql(n, Q), s = 0, d = 0;
        for (int q = 0; q < n * n; q++) {
            s = fmax(s, fabs(A[q]));
            d = fmax(d, fabs(J[q] - Q[q]));
        }
        worst = fmax(worst, d / s);
        CU_ASSERT(d <= 1e-12 * s);
        CU_ASSERT(fabs(lj - lq) <= 1e-12 * s);
    }
    fprintf(stderr, "  QL against Jacobi: worst relative difference %.2e\n", worst);
    double Z[144] = {0}, N[144];
    CU_ASSERT_EQUAL(cb_psd_project_ql(12, Z), 0.0); /* zero stays zero */
    for (int q = 0; q < 144; q++) CU_ASSERT_EQUAL(Z[q], 0.0);
    for (int q = 0; q < 144; q++) N[q] = q == 13 ? NAN : 1.0;
    CU_ASSERT(isnan(cb_psd_project_ql(12, N)));
}

/* The hinge projection (four known null vectors, an 8 x 8 eigen-problem) equals the
 * 12 x 12 Jacobi projection of the shells Hessian on random, near-flat and near-folded
 * hinges with random rest angles, and is PSD; a hinge with a zero-length edge (whose
 * Hessian the angle's guards make zero) gives zero. The null vectors are checked too:
 * H z = 0 for the edge stretch z = (0, e, s2 e, s3 e). */
static void test_hinge_projection(void)
{
    const double phis[] = {0.7, -1.9, 1e-3, -1e-4, M_PI - 1e-2, -(M_PI - 1e-3), 0.0, 2.5};
    double worst = 0, worst_null = 0;
    for (int t = 0; t < 208; t++) {
        double x[4][3], g[4][3], H[12][12], J[12][12];
        if (t < 200)
            for (int j = 0; j < 4; j++)
                for (int k = 0; k < 3; k++) x[j][k] = urand(-1, 1);
        else
            hinge_at(phis[t - 200], 1e-3, x);
        double d = cb_dihedral_hessian(x[0], x[1], x[2], x[3], g, H) - urand(-1.5, 1.5);
        double e[3], a[3], b[3], z[12], Hz = 0, s = 0;
        cb_v3_sub(e, x[1], x[0]);
        cb_v3_sub(a, x[2], x[0]);
        cb_v3_sub(b, x[3], x[0]);
        double s2 = cb_v3_dot(a, e) / cb_v3_norm2(e), s3 = cb_v3_dot(b, e) / cb_v3_norm2(e);
        for (int k = 0; k < 3; k++) z[k] = 0, z[3 + k] = e[k], z[6 + k] = s2 * e[k], z[9 + k] = s3 * e[k];
        for (int r = 0; r < 12; r++) {
            double hz = 0;
            for (int c = 0; c < 12; c++) {
                H[r][c] = 2e-3 * (g[r / 3][r % 3] * g[c / 3][c % 3] + d * H[r][c]);
                hz += H[r][c] * z[c];
                s = fmax(s, fabs(H[r][c]));
            }
            Hz = fmax(Hz, fabs(hz));
        }
        worst_null = fmax(worst_null, Hz / (s * cb_v3_norm(e)));
        CU_ASSERT(Hz <= 1e-12 * s * cb_v3_norm(e));
        memcpy(J, H, sizeof J);
        cb_psd_project(12, &J[0][0], NULL);
        cb_hinge_psd_project(x[0], x[1], x[2], x[3], H);
        double diff = rel_diff12(H, J);
        worst = fmax(worst, diff);
        if (!(diff < 1e-11)) fprintf(stderr, "  hinge %d: hinge projection vs Jacobi %.3e\n", t, diff);
        CU_ASSERT(diff < 1e-11);
        CU_ASSERT(min_eig12(H) > -1e-12 * s);
        for (int r = 0; r < 12; r++)
            for (int c = 0; c < 12; c++) CU_ASSERT_EQUAL(H[r][c], H[c][r]);
    }
    fprintf(stderr, "  hinge projection against Jacobi: worst %.2e; |H z| / (|H| |e|) at most %.2e\n", worst,
            worst_null);
    /* x1 = x0: the angle's guards give a zero gradient and Hessian, and the fallback keeps it zero */
    double x[4][3] = {{0, 0, 0}, {0, 0, 0}, {0.4, 0.8, 0}, {0.6, -0.9, 0.1}}, g[4][3], H[12][12];
    cb_dihedral_hessian(x[0], x[1], x[2], x[3], g, H);
    cb_hinge_psd_project(x[0], x[1], x[2], x[3], H);
    for (int r = 0; r < 12; r++)
        for (int c = 0; c < 12; c++) CU_ASSERT_EQUAL(H[r][c], 0.0);
}

/* A 4 x 4 grid world (bend 1e-3) whose vertices are moved by `noise` (0: the flat rest
 * state), with the given bending term. */
static cb_world *grid_world(cb_sim *r, double noise, double (**x)[3])
{
    const char *text = "name: b\nduration: 1\ndt: 0.01\n"
                       "cloth:\n  grid: {nx: 4, ny: 4, size: [0.3, 0.2], origin: [0, 0, 0], plane: xy}\n"
                       "  bend: 1.0e-3\n  stretch: 100\n";
    if (cb_sim_world(r, NULL, text, ".", NULL, 0)) return NULL;
    cb_world *w = r->w;
    *x = w->state.x;
    for (int i = 0; i < w->nv; i++)
        for (int k = 0; k < 3; k++) (*x)[i][k] += noise * urand(-1, 1);
    return w;
}

/* d E / d x of the whole term against central differences of E. */
static double energy_gradient_error(const cb_bending *b, cb_world *w, double (*x)[3])
{
    double (*g)[3] = calloc((size_t)w->nv, sizeof *g);
    cb_bending_add_gradient(b, (const double (*)[3])x, 1.0, g);
    double worst = 0, scale = 0, eps = 1e-7;
    for (int i = 0; i < w->nv; i++)
        for (int k = 0; k < 3; k++) {
            double x0 = x[i][k];
            x[i][k] = x0 + eps;
            double ep = cb_bending_energy(b, (const double (*)[3])x);
            x[i][k] = x0 - eps;
            double em = cb_bending_energy(b, (const double (*)[3])x);
            x[i][k] = x0;
            worst = fmax(worst, fabs((ep - em) / (2 * eps) - g[i][k]));
            scale = fmax(scale, fabs(g[i][k]));
        }
    free(g);
    return worst / scale;
}

/* The Hessian of one hinge term, unprojected, against differences of the term's
 * gradient; the projected one is PSD and differs from it by a PSD matrix. */
static void hinge_hessian_check(const cb_bending *b, int i, double (*x)[3], int projected_only)
{
    const int *h = b->h[i];
    double H[12][12], F[12][12], eps = 1e-6;
    cb_bending one = *b;
    one.h = b->h + i;
    one.n = 1;
    if (one.kw) one.kw = b->kw + i, one.theta0 = b->theta0 + i;
    if (one.q) one.q = b->q + i;
    for (int c = 0; c < 12; c++) {
        double gp[4][3] = {{0}}, gm[4][3] = {{0}};
        double *xc = &x[h[c / 3]][c % 3], x0 = *xc;
        double (*gw)[3] = calloc(64, sizeof *gw);
        *xc = x0 + eps;
        cb_bending_add_gradient(&one, (const double (*)[3])x, 1.0, gw);
        for (int j = 0; j < 4; j++) memcpy(gp[j], gw[h[j]], sizeof gp[j]);
        memset(gw, 0, 64 * sizeof *gw);
        *xc = x0 - eps;
        cb_bending_add_gradient(&one, (const double (*)[3])x, 1.0, gw);
        for (int j = 0; j < 4; j++) memcpy(gm[j], gw[h[j]], sizeof gm[j]);
        *xc = x0;
        free(gw);
        for (int r = 0; r < 12; r++) F[r][c] = (gp[r / 3][r % 3] - gm[r / 3][r % 3]) / (2 * eps);
    }
    /* the exact one (ipc's, cb_bending_hinge_hessian_exact) is the differences' everywhere */
    cb_bending_hinge_hessian_exact(b, i, (const double (*)[3])x, H);
    double dx = rel_diff12(H, F);
    if (!(dx < 1e-5)) fprintf(stderr, "  hinge %d: exact Hessian vs differences %.3e\n", i, dx);
    CU_ASSERT(dx < 1e-5);
    cb_bending_hinge_hessian(b, i, (const double (*)[3])x, H);
    CU_ASSERT(min_eig12(H) > -1e-10 * fmax(1.0, fabs(H[0][0])));
    if (!projected_only) {
        double d = rel_diff12(H, F);
        if (!(d < 1e-5)) fprintf(stderr, "  hinge %d: Hessian vs differences %.3e\n", i, d);
        CU_ASSERT(d < 1e-5);
        return;
    }
    /* H - F >= 0: the projection only raised negative eigenvalues */
    double D[12][12], s = 0;
    for (int r = 0; r < 12; r++)
        for (int c = 0; c < 12; c++) {
            D[r][c] = H[r][c] - 0.5 * (F[r][c] + F[c][r]);
            s = fmax(s, fabs(F[r][c]));
        }
    CU_ASSERT(min_eig12(D) > -1e-5 * s);
}

static void test_shells_fd(void)
{
    cb_sim r;
    double (*x)[3];
    cb_world *w = grid_world(&r, 0.03, &x);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    cb_bending b;
    cb_error e;
    CU_ASSERT_EQUAL_FATAL(cb_bending_init(&b, w, CB_BENDING_SHELLS, &e), CB_OK);
    CU_ASSERT_EQUAL(b.n, w->mesh->nh);
    /* the energy is the shared model's */
    CB_ASSERT_REL(cb_bending_energy(&b, (const double (*)[3])x), cb_model_bend_energy(&w->model, (const double (*)[3])x),
                  1e-14);
    double ge = energy_gradient_error(&b, w, x);
    fprintf(stderr, "  shells gradient vs differences: %.2e\n", ge);
    CU_ASSERT(ge < 1e-6);
    /* the exact Hessian where it is PSD, else the projection */
    for (int i = 0; i < b.n; i++) hinge_hessian_check(&b, i, x, 1);
    /* the projection of a hinge's Hessian (rank deficient: rigid motions) ends in a
     * handful of sweeps */
    for (int i = 0; i < b.n; i++) {
        const int *h = b.h[i];
        double g[4][3], H[12][12];
        double d = cb_dihedral_hessian(x[h[0]], x[h[1]], x[h[2]], x[h[3]], g, H) - b.theta0[i];
        for (int r = 0; r < 12; r++)
            for (int c = 0; c < 12; c++) H[r][c] = 2 * b.kw[i] * (g[r / 3][r % 3] * g[c / 3][c % 3] + d * H[r][c]);
        int sweeps = 0;
        cb_psd_project(12, &H[0][0], &sweeps);
        CU_ASSERT(sweeps <= 12);
        if (i == 0) fprintf(stderr, "  hinge 0: %d Jacobi sweeps\n", sweeps);
    }
    /* at the rest angle the Hessian is the exact one (rank one, no projection) */
    cb_bending flat = b;
    double *th = calloc((size_t)w->mesh->nh + 1, sizeof *th);
    for (int i = 0; i < b.n; i++) {
        const int *h = b.h[i];
        th[i] = cb_dihedral_angle(x[h[0]], x[h[1]], x[h[2]], x[h[3]], NULL);
    }
    flat.theta0 = th;
    for (int i = 0; i < b.n; i++) hinge_hessian_check(&flat, i, x, 0);
    free(th);
    cb_bending_release(&b);
    cb_sim_close(&r);
}

/* Quadratic: gradient and (constant) Hessian against differences; at the flat rest
 * state its Hessian on normal displacements (z, the grid is in the xy plane) equals the
 * shells Hessian there. */
static void test_quadratic_matches_shells_at_rest(void)
{
    cb_sim r;
    double (*x)[3];
    cb_world *w = grid_world(&r, 0.0, &x);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    cb_bending q, s;
    cb_error e;
    CU_ASSERT_EQUAL_FATAL(cb_bending_init(&q, w, CB_BENDING_QUADRATIC, &e), CB_OK);
    CU_ASSERT_EQUAL_FATAL(cb_bending_init(&s, w, CB_BENDING_SHELLS, &e), CB_OK);
    CU_ASSERT(cb_bending_energy(&q, (const double (*)[3])x) < 1e-20); /* the rest state is a minimum */
    for (int i = 0; i < q.n; i++) {
        double Hq[12][12], Hs[12][12], Fs[12][12];
        cb_bending_hinge_hessian(&q, i, (const double (*)[3])x, Hq);
        cb_bending_hinge_hessian(&s, i, (const double (*)[3])x, Hs);
        /* the shells Hessian at rest by differences of the shells energy (second differences) */
        const int *h = s.h[i];
        double eps = 1e-5;
        cb_bending one = s;
        one.h = s.h + i, one.n = 1, one.kw = s.kw + i, one.theta0 = s.theta0 + i;
        for (int a = 0; a < 4; a++)
            for (int c = 0; c < 4; c++) {
                double *pa = &x[h[a]][2], *pc = &x[h[c]][2], va = *pa, vc = *pc, E[2][2];
                for (int sa = 0; sa < 2; sa++)
                    for (int sc = 0; sc < 2; sc++) {
                        *pa = va + (sa ? eps : -eps);
                        *pc = (pc == pa ? *pa : vc) + (sc ? eps : -eps);
                        E[sa][sc] = cb_bending_energy(&one, (const double (*)[3])x);
                        *pa = va;
                        *pc = vc;
                    }
                Fs[3 * a + 2][3 * c + 2] = (E[1][1] - E[1][0] - E[0][1] + E[0][0]) / (4 * eps * eps);
            }
        for (int a = 0; a < 4; a++)
            for (int c = 0; c < 4; c++) {
                double scale = fabs(Hs[2][2]) + fabs(Hs[5][5]);
                CU_ASSERT(fabs(Hq[3 * a + 2][3 * c + 2] - Hs[3 * a + 2][3 * c + 2]) <= 1e-10 * scale);
                CU_ASSERT(fabs(Fs[3 * a + 2][3 * c + 2] - Hs[3 * a + 2][3 * c + 2]) <= 1e-4 * scale);
            }
    }
    /* gradient and Hessian of the quadratic term off rest */
    for (int i = 0; i < w->nv; i++)
        for (int k = 0; k < 3; k++) x[i][k] += 0.03 * urand(-1, 1);
    double ge = energy_gradient_error(&q, w, x);
    fprintf(stderr, "  quadratic gradient vs differences: %.2e\n", ge);
    CU_ASSERT(ge < 1e-6);
    for (int i = 0; i < q.n; i++) hinge_hessian_check(&q, i, x, 0);
    cb_bending_release(&q);
    cb_bending_release(&s);
    cb_sim_close(&r);
}

/* Degenerate hinges: a zero-area triangle (x2 on the edge line), coincident opposite
 * vertices (x2 = x3: folded flat), a zero-length edge. Energy, gradient and Hessian are
 * finite, the Hessian PSD; where the angle's gradient is undefined it is zero. */
static void test_degenerate_hinges(void)
{
    double cases[3][4][3] = {
        {{0, 0, 0}, {1, 0, 0}, {0.5, 0, 0}, {0.3, -0.7, 0.2}},
        {{0, 0, 0}, {1, 0, 0}, {0.4, 0.8, 0}, {0.4, 0.8, 0}},
        {{0.2, 0.1, 0}, {0.2, 0.1, 0}, {0.4, 0.8, 0}, {0.3, -0.7, 0.2}},
    };
    for (int t = 0; t < 3; t++) {
        double (*x)[3] = cases[t], g[4][3], H[12][12];
        double th = cb_dihedral_hessian(x[0], x[1], x[2], x[3], g, H);
        CU_ASSERT(isfinite(th));
        int finite = 1;
        for (int r = 0; r < 12; r++) {
            finite &= isfinite(g[r / 3][r % 3]);
            for (int c = 0; c < 12; c++) finite &= isfinite(H[r][c]);
        }
        CU_ASSERT(finite);
        if (t != 1)
            for (int r = 0; r < 12; r++) {
                CU_ASSERT_EQUAL(g[r / 3][r % 3], 0.0);
                for (int c = 0; c < 12; c++) CU_ASSERT_EQUAL(H[r][c], 0.0);
            }
        /* the energy term through cb_bending, rest angle 0.3 */
        int hv[1][4] = {{0, 1, 2, 3}};
        double kw = 2.0, th0 = 0.3;
        cb_bending b = {.kind = CB_BENDING_SHELLS, .n = 1, .h = (const int (*)[4])hv, .kw = &kw, .theta0 = &th0};
        double grad[4][3] = {{0}}, Hb[12][12];
        double E = cb_bending_energy(&b, (const double (*)[3])x);
        cb_bending_add_gradient(&b, (const double (*)[3])x, 1.0, grad);
        cb_bending_hinge_hessian(&b, 0, (const double (*)[3])x, Hb);
        CU_ASSERT(isfinite(E));
        for (int r = 0; r < 12; r++) {
            finite &= isfinite(grad[r / 3][r % 3]);
            for (int c = 0; c < 12; c++) finite &= isfinite(Hb[r][c]);
        }
        CU_ASSERT(finite);
        CU_ASSERT(min_eig12(Hb) > -1e-12 * fmax(1.0, fabs(Hb[0][0])));
        double q[4];
        cb_bending_stencil(x[0], x[1], x[2], x[3], 1e-3, q);
        for (int j = 0; j < 4; j++) CU_ASSERT(isfinite(q[j]));
        if (t != 1)
            for (int j = 0; j < 4; j++) CU_ASSERT_EQUAL(q[j], 0.0);
    }
}

/* Quadratic bending needs a flat rest state: a hinge bent at rest is refused by name. */
static void test_quadratic_refuses_curved_rest(void)
{
    cb_sim r;
    double (*x)[3];
    cb_world *w = grid_world(&r, 0.0, &x);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    cb_bending b;
    cb_error e;
    w->model.hinge_rest_angle[3] = 0.05; /* as if the mesh were bent there at rest */
    CU_ASSERT_EQUAL(cb_bending_init(&b, w, CB_BENDING_QUADRATIC, &e), CB_ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.message, "flat rest state"));
    CU_ASSERT_PTR_NOT_NULL(strstr(e.message, "0.05"));
    CU_ASSERT_EQUAL(b.n, 0);
    CU_ASSERT_EQUAL(cb_bending_init(&b, w, CB_BENDING_SHELLS, &e), CB_OK); /* shells takes it */
    cb_bending_release(&b);
    cb_sim_close(&r);
}

CB_TEST_MAIN("bending",
             CB_TEST(test_angle_hessian_fd),
             CB_TEST(test_psd_projection),
             CB_TEST(test_psd_projection_ql),
             CB_TEST(test_hinge_projection),
             CB_TEST(test_shells_fd),
             CB_TEST(test_quadratic_matches_shells_at_rest),
             CB_TEST(test_degenerate_hinges),
             CB_TEST(test_quadratic_refuses_curved_rest))
