/* tests/test_ipc_friction.c — ipc's lagged friction on its point-triangle and edge-edge
 * pairs (solvers/ipc_friction.h, solvers/ipc.c): the lagged closest points and normal
 * of random pairs; the pair term's gradient and Hessian against finite differences
 * (sticking and sliding, all four slots moving or a collider's slots fixed) and its
 * Hessian positive semi-definite; then Coulomb's incline with the cloth on itself (a
 * patch on a pinned tilted sheet, `self_friction`) and on a tilted static mesh collider
 * (the collider's `friction`): it sticks where tan(theta) < mu and slides with
 * a = g (sin theta - mu cos theta) where tan(theta) > mu, also at tan = 0.95 and 1.05 mu. */
#include "cb_test.h"
#include "cb_sim.h"

#include <math.h>

#include "contact/barrier.h"
#include "contact/distance.h"
#include "core/vec3.h"
#include "solvers/ipc_friction.h"

/* Four points of a random pair at distance about `gap` (ee = 0: a point above a
 * triangle; ee = 1: two crossing edges), randomly rotated and moved. */
static void random_points(uint64_t *seed, int ee, double gap, double x[4][3])
{
    double loc[4][3];
    double r[8];
    for (int k = 0; k < 8; k++) r[k] = cb_test_uniform(seed);
    if (!ee) {
        double q[4][3] = {{0.2 + 0.4 * r[0], 0.2 + 0.3 * r[1], gap}, {0, 0, 0}, {1, 0.2 * r[2], 0}, {0.3 * r[3], 1, 0}};
        memcpy(loc, q, sizeof q);
    } else {
        double q[4][3] = {{-0.5, 0.2 * r[0], 0}, {0.5, 0.2 * r[1], 0}, {0.2 * r[2], -0.5, gap}, {0.2 * r[3], 0.5, gap}};
        memcpy(loc, q, sizeof q);
    }
    double R[3][3];
    cb_test_quat_rotation(r[4] - 0.5, r[5] - 0.5, r[6] - 0.5, r[7] - 0.5, R);
    for (int p = 0; p < 4; p++)
        for (int i = 0; i < 3; i++) x[p][i] = R[i][0] * loc[p][0] + R[i][1] * loc[p][1] + R[i][2] * loc[p][2] + 0.1 * i;
}

/* The lagged weights reproduce the closest points: sum_a w_a x_a = p - q = d n (d the
 * pair's distance), the weights sum to 0 (a rigid translation slips nothing) and n is a
 * unit vector; touching points are refused. */
static void test_lag(void)
{
    uint64_t seed = 0x1234567u;
    for (int rep = 0; rep < 40; rep++) {
        int ee = rep % 2;
        double x[4][3];
        random_points(&seed, ee, 1e-3 + 0.1 * cb_test_uniform(&seed), x);
        const double *pt[4] = {x[0], x[1], x[2], x[3]};
        cb_ipc_fpair f;
        CU_ASSERT_EQUAL_FATAL(cb_ipc_fpair_lag(ee, pt, &f), 0);
        double d = sqrt(ee ? cb_edge_edge_distance2(x[0], x[1], x[2], x[3], NULL, NULL, NULL, NULL)
                           : cb_point_triangle_distance2(x[0], x[1], x[2], x[3], NULL, NULL));
        double s[3] = {0, 0, 0}, wsum = 0.0;
        for (int a = 0; a < 4; a++) {
            cb_v3_axpy(s, f.w[a], x[a]);
            wsum += f.w[a];
        }
        CU_ASSERT(fabs(wsum) < 1e-15);
        CU_ASSERT(fabs(cb_v3_norm(f.n) - 1.0) < 1e-14);
        for (int k = 0; k < 3; k++) CU_ASSERT(fabs(s[k] - d * f.n[k]) < 1e-12);
    }
    double x[4][3] = {{0.2, 0.2, 0}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
    const double *pt[4] = {x[0], x[1], x[2], x[3]};
    cb_ipc_fpair f;
    CU_ASSERT_EQUAL(cb_ipc_fpair_lag(0, pt, &f), -1);
}

typedef struct fd_ctx {
    const cb_ipc_fpair *f;
    int fixed;   /* slots fixed (a collider's points): bit a */
    double eps;
    const double *dc; /* the fixed slots' common displacement (a moving box or capsule), or NULL */
} fd_ctx;

static double term(const double x[12], double g[12], double H[12][12], void *ctx)
{
    const fd_ctx *c = ctx;
    const double *dx[4];
    for (int a = 0; a < 4; a++) dx[a] = c->fixed >> a & 1 ? c->dc : x + 3 * a;
    double M[3][3];
    double e = cb_ipc_fpair_energy(c->f, dx, c->eps, g, H ? M : NULL);
    for (int a = 0; H && a < 4; a++)
        for (int b = 0; b < 4; b++)
            for (int r = 0; r < 3; r++)
                for (int k = 0; k < 3; k++) H[3 * a + r][3 * b + k] = c->f->w[a] * c->f->w[b] * M[r][k];
    return e;
}

/* The pair term against finite differences: point-triangle and edge-edge pairs, their
 * slips well inside the static (sticking) range eps, beyond it (sliding) and zero, with
 * all slots moving, with the collider's slots of the three mesh pair kinds fixed
 * (vertex-triangle: the triangle; edge-edge: the second edge; triangle-vertex: the point),
 * and with those slots moved together by a displacement of the step (a translating box's
 * or capsule's points; zero slip: the cloth's slots moved with them).
 * The Hessian is positive semi-definite: z^T H z >= 0 for random z, and no stiffness
 * along the normal. */
static void test_fd(void)
{
    uint64_t seed = 0x9e3779b97f4a7c15u;
    const int fixed_sets[4] = {0, 0xe, 0xc, 0x1};
    double worst_g = 0.0, worst_h = 0.0;
    int cases = 0;
    for (int ee = 0; ee <= 1; ee++)
        for (int fs = 0; fs < 8; fs++) {
            int fixed = fixed_sets[fs % 4], mv = fs >= 4;
            if (ee && fixed == 0xe) continue;  /* an edge-edge pair fixes its second edge */
            if (!ee && fixed == 0xc) continue; /* a point-triangle pair fixes the point or the triangle */
            if (mv && !fixed) continue;
            for (int regime = 0; regime < 3; regime++)
                for (int rep = 0; rep < 4; rep++) {
                    double p[4][3];
                    random_points(&seed, ee, 2e-3, p);
                    const double *pt[4] = {p[0], p[1], p[2], p[3]};
                    cb_ipc_fpair f;
                    CU_ASSERT_EQUAL_FATAL(cb_ipc_fpair_lag(ee, pt, &f), 0);
                    f.ml = 0.5 + cb_test_uniform(&seed);
                    double dc[3];
                    for (int k = 0; k < 3; k++) dc[k] = cb_test_uniform(&seed) - 0.5;
                    fd_ctx c = {&f, fixed, 1e-5, mv ? dc : NULL};
                    /* random displacements (the fixed slots': dc or none) scaled to a slip
                     * of 0.3 eps (sticking), 3 eps (sliding), or none (moving slots: all
                     * displaced by dc) */
                    double x[12], u[3] = {0, 0, 0};
                    for (int i = 0; i < 12; i++)
                        x[i] = c.fixed >> (i / 3) & 1 ? (mv ? dc[i % 3] : 0.0)
                                                      : regime == 2 && mv ? dc[i % 3] : cb_test_uniform(&seed) - 0.5;
                    for (int a = 0; a < 4; a++) cb_v3_axpy(u, f.w[a], x + 3 * a);
                    cb_v3_axpy(u, -cb_v3_dot(u, f.n), f.n);
                    double target = regime == 0 ? 0.3 * c.eps : regime == 1 ? 3.0 * c.eps : 0.0;
                    double scale = regime == 2 && mv ? 1e-3 : target / cb_v3_norm(u);
                    for (int i = 0; i < 12; i++) x[i] *= scale;
                    cb_v3_scale(dc, dc, scale);
                    double eg, eh;
                    cb_test_fd12(term, x, &c, regime == 2 ? 1e-6 * c.eps : 1e-4 * c.eps, (unsigned)fixed, &eg, &eh);
                    /* PSD, nothing along the normal */
                    double g[12], H[12][12];
                    term(x, g, H, &c);
                    if (regime == 2 && mv) { /* a rigid motion: a slip of round-off, no force */
                        double gmax = 0.0;
                        for (int i = 0; i < 12; i++) gmax = fmax(gmax, fabs(g[i]));
                        CU_ASSERT(gmax < 1e-9 * f.ml);
                        eg = 0.0;
                    }
                    worst_g = fmax(worst_g, eg);
                    worst_h = fmax(worst_h, eh);
                    CU_ASSERT(eg < 1e-6);
                    CU_ASSERT(eh < (regime == 2 ? 1e-4 : 1e-6));
                    for (int k = 0; k < 50; k++) {
                        double z[12], q = 0.0, hz = 0.0;
                        for (int i = 0; i < 12; i++) z[i] = cb_test_uniform(&seed) - 0.5;
                        for (int i = 0; i < 12; i++)
                            for (int j = 0; j < 12; j++) {
                                q += z[i] * H[i][j] * z[j];
                                hz = fmax(hz, fabs(H[i][j]));
                            }
                        CU_ASSERT(q >= -1e-12 * hz);
                    }
                    for (int i = 0; i < 12; i++) {
                        double hn = 0.0;
                        for (int k = 0; k < 3; k++) hn += H[i][3 * (i / 3) + k] * f.n[k];
                        CU_ASSERT(fabs(hn) < 1e-9 * fabs(H[i][i] + 1.0));
                    }
                    cases++;
                }
        }
    fprintf(stderr, "  pair friction: %d cases, worst relative error of the gradient %.2e, of the Hessian %.2e\n",
            cases, worst_g, worst_h);
    CU_ASSERT(cases == 2 * 5 * 3 * 4);
}

/* The lagged normal force (cb_ipc_fpair_force) is the barrier's force along the lagged
 * normal: moving the first primitive by delta n changes the pair's barrier (kappa times
 * cb_offset_pair_barrier's) by -Lambda delta, to central differences, for point-triangle
 * and edge-edge pairs, plain (r = 0: self, mesh and box pairs) and thickened (r: a
 * capsule's), with the edge-edge mollifier active (eps_x twice the edges' |e0 x e1|^2). */
static void test_force(void)
{
    uint64_t seed = 0x2545f4914f6cdd1du;
    const double xi = 1e-3, dhat = 2e-3, shat = (xi + dhat) * (xi + dhat) - xi * xi, kappa = 3.7;
    double worst = 0.0;
    int cases = 0;
    for (int rep = 0; rep < 48; rep++) {
        int ee = rep % 2, thick = rep / 2 % 2, moll = ee && rep / 4 % 2;
        double r = thick ? 0.5e-3 : 0.0, x[4][3];
        random_points(&seed, ee, r + xi + (0.2 + 0.6 * cb_test_uniform(&seed)) * dhat, x);
        const double *pt[4] = {x[0], x[1], x[2], x[3]};
        double e0[3], e1[3], cr[3];
        cb_v3_sub(e0, x[1], x[0]);
        cb_v3_sub(e1, x[3], x[2]);
        cb_v3_cross(cr, e0, e1);
        double eps_x = moll ? 2.0 * cb_v3_norm2(cr) : 0.0;
        cb_ipc_fpair f;
        CU_ASSERT_EQUAL_FATAL(cb_ipc_fpair_lag(ee, pt, &f), 0);
        double lam = cb_ipc_fpair_force(ee, pt, r, xi, shat, kappa, eps_x);
        CU_ASSERT_FATAL(lam > 0 && isfinite(lam));
        double b[2], delta = 1e-9;
        for (int sgn = 0; sgn < 2; sgn++) {
            double y[4][3];
            memcpy(y, x, sizeof y);
            for (int a = 0; a < (ee ? 2 : 1); a++) cb_v3_axpy(y[a], sgn ? -delta : delta, f.n);
            b[sgn] = kappa * cb_offset_pair_barrier(ee, y[0], y[1], y[2], y[3], r, xi, shat, eps_x, NULL, NULL, NULL);
        }
        double fd = -(b[0] - b[1]) / (2.0 * delta), err = fabs(fd - lam) / lam;
        worst = fmax(worst, err);
        CU_ASSERT(err < 1e-5);
        if (moll) CU_ASSERT(cb_ee_mollifier_d(x[0], x[1], x[2], x[3], eps_x, NULL, NULL) < 1.0);
        cases++;
    }
    /* outside the range and at the offset: no force */
    double x[4][3] = {{0.2, 0.2, 0.01}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
    const double *pt[4] = {x[0], x[1], x[2], x[3]};
    CU_ASSERT_EQUAL(cb_ipc_fpair_force(0, pt, 0.0, xi, shat, kappa, 0.0), 0.0);
    CU_ASSERT_EQUAL(cb_ipc_fpair_force(0, pt, 0.01 - xi, xi, shat, kappa, 0.0), 0.0);
    fprintf(stderr, "  normal force: %d pairs, worst relative error against the barrier's slope %.2e\n", cases, worst);
}

/* The OBJ faces of a grid of na x nb vertices (row j, column i: vertex j na + i + 1),
 * two triangles per cell, diagonals alternating. */
static void grid_faces(FILE *f, int na, int nb)
{
    for (int j = 0; j + 1 < nb; j++)
        for (int i = 0; i + 1 < na; i++) {
            int v00 = j * na + i + 1, v10 = v00 + 1, v01 = v00 + na, v11 = v01 + 1;
            if ((i + j) % 2) fprintf(f, "f %d %d %d\nf %d %d %d\n", v00, v10, v11, v00, v11, v01);
            else fprintf(f, "f %d %d %d\nf %d %d %d\n", v00, v10, v01, v10, v11, v01);
        }
}

/* A flat grid in the plane tilted by theta about y (unit normal n = (sin, 0, cos), the
 * down-slope direction t = (cos, 0, -sin)): vertex (i, j) at off n + a t + b y,
 * a = a0 + i (a1 - a0) / (na - 1), b likewise; diagonals alternating. Written to the
 * suite's temporary folder as `name`; its path. */
static const char *write_tilted(const char *name, double theta, int na, int nb, double a0, double a1, double b0,
                                double b1, double off)
{
    const char *path = cb_test_tmp_path(name);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    double n[3] = {sin(theta), 0, cos(theta)}, t[3] = {cos(theta), 0, -sin(theta)};
    for (int j = 0; j < nb; j++)
        for (int i = 0; i < na; i++) {
            double a = a0 + i * (a1 - a0) / (na - 1), b = b0 + j * (b1 - b0) / (nb - 1);
            fprintf(f, "v %.17g %.17g %.17g\n", off * n[0] + a * t[0], b, off * n[2] + a * t[2]);
        }
    grid_faces(f, na, nb);
    fclose(f);
    return path;
}

/* One triangle of the plane tilted by theta (as write_tilted's), large enough to hold the
 * patch on its whole path away from its edges: (a, b) = (-0.5, -1), (1.5, 0), (-0.5, 1).
 * Its path; the patch never meets an edge of the mesh collider. */
static const char *write_triangle(const char *name, double theta)
{
    const char *path = cb_test_tmp_path(name);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    const double ab[3][2] = {{-0.5, -1.0}, {1.5, 0.0}, {-0.5, 1.0}};
    for (int k = 0; k < 3; k++)
        fprintf(f, "v %.17g %.17g %.17g\n", ab[k][0] * cos(theta), ab[k][1], -ab[k][0] * sin(theta));
    fprintf(f, "f 1 2 3\n");
    fclose(f);
    return path;
}

/* The patch (0.2 m square, 5 x 5) on the 30 degree incline for 1 s at dt 5 ms: its mean
 * displacement down the slope at 0.5, 0.75 and 1 s into d[3]. self = 1: on a pinned sheet of the cloth (0.85 x 0.4 m,
 * 18 x 9 vertices, offset in the plane from the patch's grid), 3 mm above it (the self
 * barrier acts within thickness + dhat = 4 mm), mu = self_friction; self = 0: on a static
 * mesh collider (the plane as one triangle, write_triangle), 1.5 mm above it (within
 * 3 mm), mu = its friction. -1 when the run fails. (On the plane as two triangles, the
 * patch crosses their shared edge, where its vertices have two pairs at the same distance:
 * the barrier lifts and holds them back there, a = 0.6483 at mu 0.5 and 0.2209 m/s^2 at
 * tan = 1.05 mu, -1.3% and -5.4%: the barrier's, not the friction's.) */
static int incline(int self, double mu, double d[3])
{
    const double theta = M_PI / 6;
    char patch[1024], base[1024], scene[4096];
    snprintf(patch, sizeof patch, "%s",
             write_tilted("patch.obj", theta, 5, 5, -0.1, 0.1, -0.087, 0.113, self ? 0.003 : 0.0015));
    if (self) {
        snprintf(base, sizeof base, "%s", write_tilted("sheet.obj", theta, 18, 9, -0.21, 0.64, -0.2, 0.2, 0.0));
        snprintf(scene, sizeof scene,
                 "name: self_incline\nduration: 1.0\ndt: 0.005\ngravity: [0, 0, -9.81]\n"
                 "cloth:\n  density: 0.1\n  stretch: 1000.0\n  bend: 1.0e-4\n  thickness: 0.002\n"
                 "  pieces:\n"
                 "    - {mesh: %s, pins: [{box: {min: [-9, -9, -9], max: [9, 9, 9]}}]}\n"
                 "    - {mesh: %s}\n"
                 "solvers:\n  ipc: {self_friction: %.17g}\n",
                 base, patch, mu);
    } else {
        snprintf(base, sizeof base, "%s", write_triangle("plane.obj", theta));
        snprintf(scene, sizeof scene,
                 "name: mesh_incline\nduration: 1.0\ndt: 0.005\ngravity: [0, 0, -9.81]\n"
                 "cloth:\n  mesh: %s\n  density: 0.1\n  stretch: 1000.0\n  bend: 1.0e-4\n  thickness: 0.002\n"
                 "colliders:\n  - {type: mesh, file: %s, friction: %.17g}\n",
                 patch, base, mu);
    }
    cb_sim r;
    if (cb_sim_open(&r, "ipc", NULL, scene, ".", NULL, 0)) {
        cb_sim_close(&r);
        return -1;
    }
    int first = self ? r.w->nv - 25 : 0; /* the patch: the last piece */
    double t[3] = {cos(theta), 0, -sin(theta)}, s0 = 0.0, m = 0.0;
    for (int i = first; i < r.w->nv; i++) {
        s0 += r.w->mass[i] * cb_v3_dot(r.w->state.x[i], t);
        m += r.w->mass[i];
    }
    for (int n = 1; n <= 200; n++) {
        if (cb_sim_step(&r)) {
            cb_sim_close(&r);
            return -1;
        }
        if (n % 50 || n < 100) continue;
        double s1 = 0.0;
        for (int i = first; i < r.w->nv; i++) s1 += r.w->mass[i] * cb_v3_dot(r.w->state.x[i], t);
        d[n / 50 - 2] = (s1 - s0) / m;
    }
    cb_sim_close(&r);
    return 0;
}

/* Coulomb on the 30 degree incline (tan 30 = 0.577). The patch starts inside the
 * barrier's range but not at its resting distance: the barrier first lifts it, and it
 * slides without friction until it lands, about 0.05 s. So the acceleration is the second
 * difference of the mean displacement d at 0.5, 0.75 and 1 s (as README's friction table):
 * at mu 0.5, a = g (sin 30 - mu cos 30) = 0.6575 m/s^2 to 2%; at mu 0.7 it sticks: d stays
 * below 1 cm and moves less than 1 mm from 0.5 to 1 s (with no friction it would slide
 * g sin 30 / 2 = 2.45 m in 1 s). */
static void check_incline(int self)
{
    double a = 9.81 * (0.5 - 0.5 * sqrt(3.0) / 2), slip[3] = {NAN, NAN, NAN}, stick[3] = {NAN, NAN, NAN};
    CU_ASSERT_EQUAL(incline(self, 0.5, slip), 0);
    CU_ASSERT_EQUAL(incline(self, 0.7, stick), 0);
    double as = (slip[2] - 2.0 * slip[1] + slip[0]) / (0.25 * 0.25);
    fprintf(stderr, "  %s incline: mu 0.5: a = %.4f m/s^2 (Coulomb %.4f), %.4f m in 1 s; mu 0.7: %.4f m in 1 s, "
            "%.2e m from 0.5 to 1 s (0)\n", self ? "self" : "mesh", as, a, slip[2], stick[2], stick[2] - stick[0]);
    CU_ASSERT(fabs(as - a) < 0.02 * a);
    CU_ASSERT(fabs(stick[2]) < 0.01);
    CU_ASSERT(fabs(stick[2] - stick[0]) < 1e-3);
}

static void test_self_incline(void) { check_incline(1); }

static void test_mesh_incline(void) { check_incline(0); }

/* Near the threshold, tan 30 = 1.05 mu: a = g (sin 30 - mu cos 30) = 0.2334 m/s^2 (0.036
 * of the frictionless g sin 30) to 5%; tan 30 = 0.95 mu: it sticks (less than 1 mm from
 * 0.5 to 1 s), on the sheet and on the mesh. */
static void test_threshold(void)
{
    double mu_slip = tan(M_PI / 6) / 1.05, mu_stick = tan(M_PI / 6) / 0.95;
    double a = 9.81 * (0.5 - mu_slip * sqrt(3.0) / 2);
    for (int self = 0; self <= 1; self++) {
        double slip[3] = {NAN, NAN, NAN}, stick[3] = {NAN, NAN, NAN};
        CU_ASSERT_EQUAL(incline(self, mu_slip, slip), 0);
        CU_ASSERT_EQUAL(incline(self, mu_stick, stick), 0);
        double as = (slip[2] - 2.0 * slip[1] + slip[0]) / (0.25 * 0.25);
        fprintf(stderr, "  %s: tan = 1.05 mu: a = %.4f m/s^2 (Coulomb %.4f); tan = 0.95 mu: %.2e m from 0.5 to 1 s (0)\n",
                self ? "self" : "mesh", as, a, stick[2] - stick[0]);
        CU_ASSERT(fabs(as - a) < 0.05 * a);
        CU_ASSERT(fabs(stick[2] - stick[0]) < 1e-3);
    }
}

/* A tent of cloth over a ridge along x (the friction pairs of test_ridge): 11 columns at
 * x = -0.1 .. 0.1 m, 2 cm apart, each across the 12 points of a profile 2 cm apart: a
 * flap hanging at y = -0.01 from z = top - 0.1 up to z = top, the strip across the ridge
 * to y = 0.01 at z = top, the other flap down; diagonals alternating. Its rest shape (the
 * shells' rest angles are the mesh's). Written to the suite's temporary folder; its path. */
static const char *write_tent(const char *name, double top)
{
    const char *path = cb_test_tmp_path(name);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    const int na = 11, nk = 12;
    for (int k = 0; k < nk; k++)
        for (int i = 0; i < na; i++)
            fprintf(f, "v %.17g %.17g %.17g\n", -0.1 + 0.02 * i, k < 6 ? -0.01 : 0.01,
                    top - 0.02 * (k < 6 ? 5 - k : k - 6));
    grid_faces(f, na, nk);
    fclose(f);
    return path;
}

/* The tent (write_tent) 1.5 mm above the top of a ridge along x, gravity tilted by theta
 * towards +x (its part along the ridge g sin theta, across it g cos theta straight down
 * the flaps), the ridge moving along x at `speed`, for 0.75 s at dt 5 ms: the mean
 * displacement along x at 0.25, 0.5 and 0.75 s into d[3]. capsule = 0: the ridge is a
 * box's top, a blade 4 mm thick (the strip rests on its two long top edges); 1: a capsule
 * of radius 5 mm. Nothing but the cloth's edges that cross the ridge comes within the
 * barrier's range (3 mm): the strip's vertices are 8 mm (box) and 6.9 mm (capsule) from
 * the collider and the flaps 8 mm from the blade's faces, the box's vertices and the
 * capsule's ends 0.4 m beyond the cloth. So the box's or the capsule's edge pairs carry
 * the whole load, each with its normal straight up by the tent's symmetry. Until 0.75 s:
 * later (from about 0.6 s at theta 30 degrees and mu 0.5, from 0.5 s without friction)
 * the flaps start to swing across the ridge and the strip sinks, which changes the
 * normals. -1 when the run fails. */
static int ridge(int capsule, double mu, double theta, double speed, double d[3])
{
    char tent[1024], scene[4096], col[512];
    snprintf(tent, sizeof tent, "%s", write_tent("tent.obj", 0.0015));
    if (capsule)
        snprintf(col, sizeof col, "{type: capsule, p0: [-0.5, 0, -0.005], p1: [1.0, 0, -0.005], radius: 0.005, "
                 "friction: %.17g, velocity: [%.17g, 0, 0]}", mu, speed);
    else
        snprintf(col, sizeof col, "{type: box, center: [0.25, 0, -0.05], size: [1.5, 0.004, 0.1], friction: %.17g, "
                 "velocity: [%.17g, 0, 0]}", mu, speed);
    snprintf(scene, sizeof scene,
             "name: ridge\nduration: 1.0\ndt: 0.005\ngravity: [%.17g, 0, %.17g]\n"
             "cloth:\n  mesh: %s\n  density: 0.1\n  stretch: 1000.0\n  bend: 1.0e-4\n  thickness: 0.002\n"
             "colliders:\n  - %s\n",
             9.81 * sin(theta), -9.81 * cos(theta), tent, col);
    cb_sim r;
    if (cb_sim_open(&r, "ipc", NULL, scene, ".", NULL, 0)) {
        cb_sim_close(&r);
        return -1;
    }
    double s0 = 0.0, m = 0.0;
    for (int i = 0; i < r.w->nv; i++) {
        s0 += r.w->mass[i] * r.w->state.x[i][0];
        m += r.w->mass[i];
    }
    for (int n = 1; n <= 150; n++) {
        if (cb_sim_step(&r)) {
            cb_sim_close(&r);
            return -1;
        }
        if (n % 50) continue;
        double s1 = 0.0;
        for (int i = 0; i < r.w->nv; i++) s1 += r.w->mass[i] * r.w->state.x[i][0];
        d[n / 50 - 1] = (s1 - s0) / m;
    }
    cb_sim_close(&r);
    return 0;
}

/* Coulomb along a ridge carried by the box's and the capsule's edge pairs (before their
 * friction, the tent slid at g sin 30 = 4.9 m/s^2 whatever mu): at mu 0.5 it slides with
 * a = g (sin 30 - mu cos 30) = 0.6572 m/s^2 to 2% (the second difference of d at 0.25,
 * 0.5, 0.75 s), at mu 0.7 it sticks (less than 1 cm in 0.75 s, less than 1 mm from 0.25 to
 * 0.75 s). */
static void test_ridge(void)
{
    /* the ridge moving along itself at 0.1 m/s under the tent (no tilt): static friction
     * carries it along at that speed (the collider's slots slip by h v: without them the
     * friction held the tent back in the world), to 2% */
    for (int capsule = 0; capsule <= 1; capsule++) {
        double d[3] = {NAN, NAN, NAN};
        CU_ASSERT_EQUAL(ridge(capsule, 0.5, 0.0, 0.1, d), 0);
        double v = (d[2] - d[1]) / 0.25;
        fprintf(stderr, "  %s ridge moving at 0.1 m/s: the tent at %.5f m/s from 0.5 to 0.75 s\n",
                capsule ? "capsule" : "box", v);
        CU_ASSERT(fabs(v - 0.1) < 0.002);
    }
    double a = 9.81 * (0.5 - 0.5 * sqrt(3.0) / 2);
    for (int capsule = 0; capsule <= 1; capsule++) {
        double slip[3] = {NAN, NAN, NAN}, stick[3] = {NAN, NAN, NAN};
        CU_ASSERT_EQUAL(ridge(capsule, 0.5, M_PI / 6, 0.0, slip), 0);
        CU_ASSERT_EQUAL(ridge(capsule, 0.7, M_PI / 6, 0.0, stick), 0);
        double as = (slip[2] - 2.0 * slip[1] + slip[0]) / (0.25 * 0.25);
        fprintf(stderr, "  %s ridge: mu 0.5: a = %.4f m/s^2 (Coulomb %.4f), %.4f m in 0.75 s; mu 0.7: %.4f m in "
                "0.75 s, %.2e m from 0.25 to 0.75 s (0)\n", capsule ? "capsule" : "box", as, a, slip[2], stick[2],
                stick[2] - stick[0]);
        CU_ASSERT(fabs(as - a) < 0.02 * a);
        CU_ASSERT(fabs(stick[2]) < 0.01);
        CU_ASSERT(fabs(stick[2] - stick[0]) < 1e-3);
    }
}

CB_TEST_MAIN("ipc_friction",
             CB_TEST(test_lag),
             CB_TEST(test_fd),
             CB_TEST(test_force),
             CB_TEST(test_self_incline),
             CB_TEST(test_mesh_incline),
             CB_TEST(test_threshold),
             CB_TEST(test_ridge))
