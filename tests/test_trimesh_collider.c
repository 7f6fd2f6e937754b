/* tests/test_trimesh_collider.c — triangle-mesh colliders (contact/trimesh_collider.h)
 * and the scene keys of `type: mesh` colliders. Oracles: brute force over all triangles
 * for distance and closest point, the generalized winding number (sum of solid angles)
 * for inside/outside, the analytic sphere for a tessellated sphere, an independent
 * Rodrigues transform of the vertices for moving meshes, finite differences of material
 * points for surface velocities. */
#include "cb_test.h"

#include <time.h>

#include "contact/colliders.h"
#include "contact/distance.h"
#include "contact/trimesh_collider.h"
#include "core/collider.h"
#include "core/scene.h"
#include "core/vec3.h"

/* ---------------------------------------------------------------- helpers */

static unsigned long long rng_state = 88172645463325252ULL;
static double urand(void) /* [0, 1) */
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) * (1.0 / 9007199254740992.0);
}
static double srand1(void) { return 2.0 * urand() - 1.0; }

typedef struct tmesh {
    int nv, nf;
    double (*x)[3];
    int (*f)[3];
} tmesh;

static void tmesh_free(tmesh *m)
{
    free(m->x);
    free(m->f);
    m->x = NULL;
    m->f = NULL;
}

static tmesh tmesh_of(const cb_mesh *cm)
{
    tmesh m = { cm->nv, cm->nf, malloc(sizeof(double[3]) * (size_t)cm->nv),
                malloc(sizeof(int[3]) * (size_t)cm->nf) };
    memcpy(m.x, cm->x, sizeof(double[3]) * (size_t)cm->nv);
    memcpy(m.f, cm->f, sizeof(int[3]) * (size_t)cm->nf);
    return m;
}

/* Icosahedron subdivided `levels` times, vertices on the sphere (center c, radius r). */
static tmesh icosphere(int levels, const double c[3], double r)
{
    const double t = (1.0 + sqrt(5.0)) / 2.0;
    static const int F0[20][3] = { {0, 11, 5}, {0, 5, 1}, {0, 1, 7}, {0, 7, 10}, {0, 10, 11},
        {1, 5, 9}, {5, 11, 4}, {11, 10, 2}, {10, 7, 6}, {7, 1, 8}, {3, 9, 4}, {3, 4, 2},
        {3, 2, 6}, {3, 6, 8}, {3, 8, 9}, {4, 9, 5}, {2, 4, 11}, {6, 2, 10}, {8, 6, 7}, {9, 8, 1} };
    double V0[12][3] = { {-1, t, 0}, {1, t, 0}, {-1, -t, 0}, {1, -t, 0}, {0, -1, t}, {0, 1, t},
        {0, -1, -t}, {0, 1, -t}, {t, 0, -1}, {t, 0, 1}, {-t, 0, -1}, {-t, 0, 1} };
    int nf = 20, nv = 12;
    int maxf = 20, maxv = 12;
    for (int l = 0; l < levels; l++) { maxv += 3 * maxf / 2; maxf *= 4; }
    double (*x)[3] = malloc(sizeof(double[3]) * (size_t)maxv);
    int (*f)[3] = malloc(sizeof(int[3]) * (size_t)maxf);
    for (int i = 0; i < 12; i++) {
        cb_v3_copy(x[i], V0[i]);
        cb_v3_normalize(x[i]);
    }
    memcpy(f, F0, sizeof F0);
    for (int l = 0; l < levels; l++) {
        /* midpoint cache: open addressing on the edge key */
        int cap = 8 * nf;
        long long *keys = malloc(sizeof(long long) * (size_t)cap);
        int *vals = malloc(sizeof(int) * (size_t)cap);
        for (int i = 0; i < cap; i++) keys[i] = -1;
        int (*nfaces)[3] = malloc(sizeof(int[3]) * (size_t)nf * 4);
        for (int tri = 0; tri < nf; tri++) {
            int mid[3];
            for (int k = 0; k < 3; k++) {
                int a = f[tri][k], b = f[tri][(k + 1) % 3];
                long long key = (long long)(a < b ? a : b) * maxv + (a < b ? b : a);
                int h = (int)((unsigned long long)(key * 2654435761ULL) % (unsigned long long)cap);
                while (keys[h] != -1 && keys[h] != key) h = (h + 1) % cap;
                if (keys[h] == -1) {
                    keys[h] = key;
                    for (int j = 0; j < 3; j++) x[nv][j] = 0.5 * (x[a][j] + x[b][j]);
                    cb_v3_normalize(x[nv]);
                    vals[h] = nv++;
                }
                mid[k] = vals[h];
            }
            int a = f[tri][0], b = f[tri][1], cc = f[tri][2];
            int *o = nfaces[4 * tri];
            o[0] = a; o[1] = mid[0]; o[2] = mid[2];
            o = nfaces[4 * tri + 1]; o[0] = b; o[1] = mid[1]; o[2] = mid[0];
            o = nfaces[4 * tri + 2]; o[0] = cc; o[1] = mid[2]; o[2] = mid[1];
            o = nfaces[4 * tri + 3]; o[0] = mid[0]; o[1] = mid[1]; o[2] = mid[2];
        }
        memcpy(f, nfaces, sizeof(int[3]) * (size_t)nf * 4);
        nf *= 4;
        free(nfaces);
        free(keys);
        free(vals);
    }
    for (int i = 0; i < nv; i++)
        for (int k = 0; k < 3; k++) x[i][k] = c[k] + r * x[i][k];
    tmesh m = { nv, nf, x, f };
    return m;
}

/* Brute force: distance to the closest triangle and its closest point. */
static double brute_distance(const tmesh *m, const double p[3], double cp[3])
{
    double best = INFINITY;
    for (int t = 0; t < m->nf; t++) {
        double c[3];
        double d2 = cb_point_triangle_distance2(p, m->x[m->f[t][0]], m->x[m->f[t][1]],
                                                m->x[m->f[t][2]], NULL, c);
        if (d2 < best) {
            best = d2;
            if (cp) cb_v3_copy(cp, c);
        }
    }
    return sqrt(best);
}

/* Generalized winding number: sum of the signed solid angles of the triangles seen from
 * p, over 4 pi (Van Oosterom & Strackee). ~1 inside a closed CCW mesh, ~0 outside. */
static double winding_number(const tmesh *m, const double p[3])
{
    double sum = 0.0;
    for (int t = 0; t < m->nf; t++) {
        double a[3], b[3], c[3], bxc[3];
        cb_v3_sub(a, m->x[m->f[t][0]], p);
        cb_v3_sub(b, m->x[m->f[t][1]], p);
        cb_v3_sub(c, m->x[m->f[t][2]], p);
        double la = cb_v3_norm(a), lb = cb_v3_norm(b), lc = cb_v3_norm(c);
        cb_v3_cross(bxc, b, c);
        double num = cb_v3_dot(a, bxc);
        double den = la * lb * lc + cb_v3_dot(a, b) * lc + cb_v3_dot(a, c) * lb + cb_v3_dot(b, c) * la;
        sum += 2.0 * atan2(num, den);
    }
    return sum / (4.0 * M_PI);
}

/* Rotation matrix by angle about axis (Rodrigues, independent of the quaternion code). */
static void rodrigues(const double axis_in[3], double angle, double R[3][3])
{
    double k[3];
    cb_v3_copy(k, axis_in);
    if (!(cb_v3_normalize(k) > 0)) angle = 0.0;
    double c = cos(angle), s = sin(angle);
    double K[3][3] = { {0, -k[2], k[1]}, {k[2], 0, -k[0]}, {-k[1], k[0], 0} };
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double kk = 0.0;
            for (int l = 0; l < 3; l++) kk += K[i][l] * K[l][j];
            R[i][j] = (i == j ? 1.0 : 0.0) + s * K[i][j] + (1.0 - c) * kk;
        }
}

static void mat_mul(double o[3][3], const double A[3][3], const double B[3][3])
{
    double r[3][3];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) r[i][j] = A[i][0] * B[0][j] + A[i][1] * B[1][j] + A[i][2] * B[2][j];
    memcpy(o, r, sizeof r);
}

/* x_world = p + T + R (x - p) for every vertex. */
static tmesh transformed(const tmesh *m, const double R[3][3], const double T[3], const double p[3])
{
    tmesh o = { m->nv, m->nf, malloc(sizeof(double[3]) * (size_t)m->nv),
                malloc(sizeof(int[3]) * (size_t)m->nf) };
    memcpy(o.f, m->f, sizeof(int[3]) * (size_t)m->nf);
    for (int i = 0; i < m->nv; i++) {
        double d[3];
        cb_v3_sub(d, m->x[i], p);
        for (int k = 0; k < 3; k++)
            o.x[i][k] = p[k] + T[k] + R[k][0] * d[0] + R[k][1] * d[1] + R[k][2] * d[2];
    }
    return o;
}

static void bbox(const tmesh *m, double lo[3], double hi[3])
{
    cb_v3_copy(lo, m->x[0]);
    cb_v3_copy(hi, m->x[0]);
    for (int i = 1; i < m->nv; i++)
        for (int k = 0; k < 3; k++) {
            lo[k] = fmin(lo[k], m->x[i][k]);
            hi[k] = fmax(hi[k], m->x[i][k]);
        }
}

/* Counts of disagreements between the collider at time t and the oracle mesh `ref`
 * (the collider's mesh placed at time t) on point p. */
typedef struct tally { int n, dist_bad, cp_bad, sign_bad, normal_bad, checked_sign; } tally;

static void check_point(const cb_trimesh_collider *c, double t, const tmesh *ref, int closed,
                        const double p[3], double scale, tally *ty)
{
    double n[3], cp[3], bcp[3];
    double d = cb_trimesh_collider_query(c, t, p, n, cp);
    double bd = brute_distance(ref, p, bcp);
    double tol = 1e-12 * scale;
    ty->n++;
    if (!(fabs(fabs(d) - bd) <= tol)) {
        if (ty->dist_bad++ < 3) fprintf(stderr, "  distance %.17g vs brute %.17g\n", d, bd);
    }
    /* closest point: at distance |d| from p and on the surface (ties may pick another point) */
    double on = brute_distance(ref, cp, NULL);
    if (!(fabs(cb_v3_dist(cp, p) - bd) <= 1e-10 * scale && on <= 1e-10 * scale)) {
        if (ty->cp_bad++ < 3) fprintf(stderr, "  closest point off: |p-cp| %.17g brute %.17g on %.3g\n",
                                      cb_v3_dist(cp, p), bd, on);
    }
    if (!(fabs(cb_v3_norm(n) - 1.0) <= 1e-12)) ty->normal_bad++;
    else if (bd > 1e-9 * scale) {
        double dir[3];
        cb_v3_sub(dir, p, cp);
        cb_v3_scale(dir, dir, (d < 0 ? -1.0 : 1.0) / cb_v3_norm(dir));
        if (!(cb_v3_dist(dir, n) <= 1e-9)) ty->normal_bad++;
    }
    if (closed && bd > 1e-9 * scale) {
        double w = winding_number(ref, p);
        int inside = fabs(w) > 0.5;
        ty->checked_sign++;
        if (inside != (d < 0)) {
            if (ty->sign_bad++ < 3) fprintf(stderr, "  sign: d %.17g winding %.17g at (%g %g %g)\n",
                                            d, w, p[0], p[1], p[2]);
        }
    } else if (!closed && !(d >= 0)) {
        ty->sign_bad++;
    }
}

static void check_tally(const tally *ty, const char *what)
{
    fprintf(stderr, "  %s: %d points (%d sign checks): %d distance, %d closest, %d normal, %d sign "
            "disagreements\n", what, ty->n, ty->checked_sign, ty->dist_bad, ty->cp_bad,
            ty->normal_bad, ty->sign_bad);
    CU_ASSERT(ty->n > 0);
    CU_ASSERT_EQUAL(ty->dist_bad, 0);
    CU_ASSERT_EQUAL(ty->cp_bad, 0);
    CU_ASSERT_EQUAL(ty->normal_bad, 0);
    CU_ASSERT_EQUAL(ty->sign_bad, 0);
}

/* Random points in the inflated box, plus points near every vertex and edge midpoint
 * (the features where the pseudo-normal choice matters). */
static void check_mesh_vs_brute(const cb_trimesh_collider *c, double t, const tmesh *ref, int closed,
                                int nrandom, int near_stride, const char *what)
{
    double lo[3], hi[3], scale;
    bbox(ref, lo, hi);
    scale = cb_v3_dist(lo, hi);
    tally ty = { 0 };
    for (int i = 0; i < nrandom; i++) {
        double p[3];
        for (int k = 0; k < 3; k++) p[k] = lo[k] - 0.2 * scale + (hi[k] - lo[k] + 0.4 * scale) * urand();
        check_point(c, t, ref, closed, p, scale, &ty);
    }
    for (int v = 0; v < ref->nv; v += near_stride) {
        for (int r = 0; r < 4; r++) {
            double p[3], h = scale * pow(10.0, -1.0 - 3.0 * urand());
            for (int k = 0; k < 3; k++) p[k] = ref->x[v][k] + h * srand1();
            check_point(c, t, ref, closed, p, scale, &ty);
        }
    }
    for (int tri = 0; tri < ref->nf; tri += near_stride) {
        const double *a = ref->x[ref->f[tri][0]], *b = ref->x[ref->f[tri][1]];
        double p[3], h = scale * pow(10.0, -1.0 - 3.0 * urand());
        for (int k = 0; k < 3; k++) p[k] = 0.5 * (a[k] + b[k]) + h * srand1();
        check_point(c, t, ref, closed, p, scale, &ty);
    }
    check_tally(&ty, what);
}

static const char *write_file(const char *name, const char *text)
{
    static char path[8][700];
    static int slot = 0;
    char *p = path[slot++ % 8];
    snprintf(p, 700, "%s/%s", cb_test_tmpdir(), name);
    FILE *fp = fopen(p, "w");
    CU_ASSERT_FATAL(fp != NULL);
    fputs(text, fp);
    fclose(fp);
    return p;
}

static const char *CUBE_OBJ =
    "# unit cube centred at the origin, CCW from outside\n"
    "v -0.5 -0.5 -0.5\nv 0.5 -0.5 -0.5\nv 0.5 0.5 -0.5\nv -0.5 0.5 -0.5\n"
    "v -0.5 -0.5 0.5\nv 0.5 -0.5 0.5\nv 0.5 0.5 0.5\nv -0.5 0.5 0.5\n"
    "f 1 4 3 2\nf 5 6 7 8\nf 1 2 6 5\nf 2 3 7 6\nf 3 4 8 7\nf 4 1 5 8\n";

/* ---------------------------------------------------------------- tests */

/* The shipped closed meshes against brute force and the winding number. */
static void test_shipped_meshes_vs_brute_force(void)
{
    static const char *files[] = { "data/meshes/blob.obj", "data/meshes/table.obj" };
    for (int i = 0; i < 2; i++) {
        cb_error err = { 0 };
        cb_trimesh_collider *c = NULL;
        int rc = cb_trimesh_collider_load(files[i], NULL, &c, &err);
        if (rc) fprintf(stderr, "  %s\n", err.message);
        CU_ASSERT_FATAL(rc == 0);
        CU_ASSERT(cb_trimesh_collider_is_closed(c));
        tmesh ref = tmesh_of(cb_trimesh_collider_mesh(c));
        check_mesh_vs_brute(c, 0.0, &ref, 1, i == 0 ? 600 : 2000, i == 0 ? 23 : 1, files[i]);
        tmesh_free(&ref);
        cb_trimesh_collider_free(&c);
        CU_ASSERT(c == NULL);
    }
}

/* A tessellated sphere against the analytic sphere: the signed distances differ by at
 * most the Hausdorff distance of the two surfaces, r - (smallest face-plane distance). */
static void test_sphere_vs_analytic(void)
{
    const double c0[3] = { 0.1, -0.2, 0.3 }, r = 0.5;
    tmesh s = icosphere(4, c0, r);
    double rin = INFINITY;
    for (int t = 0; t < s.nf; t++) {
        double e1[3], e2[3], n[3], d[3];
        cb_v3_sub(e1, s.x[s.f[t][1]], s.x[s.f[t][0]]);
        cb_v3_sub(e2, s.x[s.f[t][2]], s.x[s.f[t][0]]);
        cb_v3_cross(n, e1, e2);
        cb_v3_normalize(n);
        cb_v3_sub(d, s.x[s.f[t][0]], c0);
        rin = fmin(rin, fabs(cb_v3_dot(d, n)));
    }
    double eps = r - rin;
    CU_ASSERT(eps > 0 && eps < 0.01 * r);
    cb_error err = { 0 };
    cb_trimesh_collider *c = NULL;
    CU_ASSERT_FATAL(cb_trimesh_collider_from_arrays(s.nv, (const double (*)[3])s.x, s.nf,
                                                    (const int (*)[3])s.f, "icosphere", NULL, &c,
                                                    &err) == 0);
    int bad = 0, badn = 0;
    double worst = 0.0;
    for (int i = 0; i < 4000; i++) {
        double p[3], n[3], d[3];
        for (int k = 0; k < 3; k++) p[k] = c0[k] + 2.0 * r * srand1();
        double dm = cb_trimesh_collider_query(c, 0.0, p, n, NULL);
        cb_v3_sub(d, p, c0);
        double da = cb_v3_norm(d) - r;
        worst = fmax(worst, fabs(dm - da));
        if (!(fabs(dm - da) <= eps * (1 + 1e-9))) bad++;
        if (da > 0.2 * r) { /* well outside, the normal is nearly radial */
            cb_v3_normalize(d);
            if (!(cb_v3_dot(d, n) > 0.995)) badn++;
        }
    }
    fprintf(stderr, "  sphere r = %g, %d triangles: max |d_mesh - d_sphere| = %.3g (bound %.3g)\n",
            r, s.nf, worst, eps);
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_EQUAL(badn, 0);
    cb_trimesh_collider_free(&c);

    /* the same sphere with every triangle reversed (inward-wound) gives the same answers */
    for (int t = 0; t < s.nf; t++) {
        int tmp = s.f[t][1];
        s.f[t][1] = s.f[t][2];
        s.f[t][2] = tmp;
    }
    cb_trimesh_collider *c2 = NULL;
    CU_ASSERT_FATAL(cb_trimesh_collider_from_arrays(s.nv, (const double (*)[3])s.x, s.nf,
                                                    (const int (*)[3])s.f, "reversed", NULL, &c2,
                                                    &err) == 0);
    tally ty = { 0 };
    for (int i = 0; i < 300; i++) {
        double p[3];
        for (int k = 0; k < 3; k++) p[k] = c0[k] + 1.5 * r * srand1();
        check_point(c2, 0.0, &s, 1, p, 2 * r, &ty);
    }
    check_tally(&ty, "reversed sphere");
    cb_trimesh_collider_free(&c2);
    tmesh_free(&s);
}

/* An open mesh (a bumpy height field): unsigned distance, normal towards p's side. */
static void test_open_mesh(void)
{
    enum { N = 14 };
    double (*x)[3] = malloc(sizeof(double[3]) * N * N);
    int (*f)[3] = malloc(sizeof(int[3]) * 2 * (N - 1) * (N - 1));
    for (int j = 0; j < N; j++)
        for (int i = 0; i < N; i++) {
            double u = i / (N - 1.0), v = j / (N - 1.0);
            cb_v3_set(x[i + N * j], u, v, 0.2 * sin(5 * u) * cos(4 * v));
        }
    int nf = 0;
    for (int j = 0; j + 1 < N; j++)
        for (int i = 0; i + 1 < N; i++) {
            int a = i + N * j, b = a + 1, cc = a + N, d = cc + 1;
            f[nf][0] = a; f[nf][1] = b; f[nf][2] = d; nf++;
            f[nf][0] = a; f[nf][1] = d; f[nf][2] = cc; nf++;
        }
    cb_error err = { 0 };
    cb_trimesh_collider *c = NULL;
    CU_ASSERT_FATAL(cb_trimesh_collider_from_arrays(N * N, (const double (*)[3])x, nf,
                                                    (const int (*)[3])f, "field", NULL, &c, &err) == 0);
    CU_ASSERT(!cb_trimesh_collider_is_closed(c));
    tmesh ref = tmesh_of(cb_trimesh_collider_mesh(c));
    check_mesh_vs_brute(c, 0.0, &ref, 0, 1500, 3, "open height field");
    /* above and below the (piecewise-linear) graph: the normal points to the query
     * point's side, whose normals all have the sign of the offset in z */
    int bad = 0;
    for (int i = 0; i < 200; i++) {
        double p[3] = { 0, 0, 0 }, n[3], w[3] = { urand(), urand(), urand() };
        int t = (int)(urand() * (nf - 1));
        double ws = w[0] + w[1] + w[2];
        for (int k = 0; k < 3; k++) cb_v3_axpy(p, w[k] / ws, x[f[t][k]]);
        if (p[0] < 0.1 || p[0] > 0.9 || p[1] < 0.1 || p[1] > 0.9) { i--; continue; }
        double off = (i % 2 ? 1 : -1) * (0.001 + 0.01 * urand());
        p[2] += off;
        double d = cb_trimesh_collider_query(c, 0.0, p, n, NULL);
        if (!(d > 0 && n[2] * off > 0)) bad++;
    }
    CU_ASSERT_EQUAL(bad, 0);
    tmesh_free(&ref);
    cb_trimesh_collider_free(&c);
    free(x);
    free(f);
}

/* Constant velocity + angular velocity about a pivot: the query at time t equals brute
 * force on the vertices moved by an independent transform, and the static query at the
 * inverse-transformed point; the surface velocity equals the material derivative. */
static void test_rotating_mesh(void)
{
    cb_error err = { 0 };
    cb_trimesh_motion mo = cb_trimesh_default_motion();
    mo.kind = CB_TRIMESH_VELOCITY;
    cb_v3_set(mo.velocity, 0.3, -0.1, 0.2);
    cb_v3_set(mo.angular_velocity, 0.4, 1.1, -0.7);
    mo.has_pivot = 1;
    cb_v3_set(mo.pivot, 0.1, 0.05, 0.3);
    cb_trimesh_collider *c = NULL, *s = NULL;
    CU_ASSERT_FATAL(cb_trimesh_collider_load("data/meshes/table.obj", &mo, &c, &err) == 0);
    CU_ASSERT_FATAL(cb_trimesh_collider_load("data/meshes/table.obj", NULL, &s, &err) == 0);
    tmesh rest = tmesh_of(cb_trimesh_collider_mesh(c));
    const double times[] = { 0.0, 0.37, 1.9, 5.2 };
    double wn = cb_v3_norm(mo.angular_velocity);
    for (int it = 0; it < 4; it++) {
        double t = times[it], R[3][3], T[3];
        rodrigues(mo.angular_velocity, wn * t, R);
        cb_v3_scale(T, mo.velocity, t);
        tmesh ref = transformed(&rest, R, T, mo.pivot);
        char what[64];
        snprintf(what, sizeof what, "rotating table at t = %g", t);
        check_mesh_vs_brute(c, t, &ref, 1, 400, 1, what);
        /* equal to the static query at the point moved back into the rest frame */
        double worst = 0.0;
        for (int i = 0; i < 2000; i++) {
            double p[3], q[3], d[3], n1[3], c1[3], n0[3], c0[3];
            for (int k = 0; k < 3; k++) p[k] = mo.pivot[k] + T[k] + 0.8 * srand1();
            cb_v3_sub(d, p, mo.pivot);
            cb_v3_sub(d, d, T);
            for (int k = 0; k < 3; k++)
                q[k] = mo.pivot[k] + R[0][k] * d[0] + R[1][k] * d[1] + R[2][k] * d[2];
            double d1 = cb_trimesh_collider_query(c, t, p, n1, c1);
            double d0 = cb_trimesh_collider_query(s, 123.0, q, n0, c0); /* static: t ignored */
            double n0w[3], c0w[3];
            for (int k = 0; k < 3; k++) {
                n0w[k] = R[k][0] * n0[0] + R[k][1] * n0[1] + R[k][2] * n0[2];
                c0w[k] = mo.pivot[k] + T[k] + R[k][0] * (c0[0] - mo.pivot[0]) +
                         R[k][1] * (c0[1] - mo.pivot[1]) + R[k][2] * (c0[2] - mo.pivot[2]);
            }
            /* rounding of the transforms (~1e-16) moves the closest point by ~1e-14 and
             * turns the normal (x - c) / |x - c| by ~1e-14 / |d| */
            worst = fmax(worst, fabs(d1 - d0) / 1e-13);
            worst = fmax(worst, cb_v3_dist(c1, c0w) / 1e-12);
            worst = fmax(worst, cb_v3_dist(n1, n0w) / (1e-12 / fmax(fabs(d0), 1e-9)));
        }
        if (!(worst <= 1.0)) fprintf(stderr, "  static vs moving: worst %.3g x tolerance\n", worst);
        CU_ASSERT(worst <= 1.0);
        tmesh_free(&ref);
    }
    /* surface velocity through core/collider.c == d/dt of a material point */
    cb_collider col = cb_default_collider(CB_COLLIDER_MESH);
    col.mesh = c;
    double worst = 0.0;
    for (int i = 0; i < 50; i++) {
        double t = 3.0 * urand(), h = 1e-5, X0[3], xp[3], xm[3], xt[3], v[3], R[3][3], Rp[3][3], Rm[3][3];
        for (int k = 0; k < 3; k++) X0[k] = mo.pivot[k] + 0.5 * srand1();
        rodrigues(mo.angular_velocity, wn * t, R);
        rodrigues(mo.angular_velocity, wn * (t + h), Rp);
        rodrigues(mo.angular_velocity, wn * (t - h), Rm);
        double d[3];
        cb_v3_sub(d, X0, mo.pivot);
        for (int k = 0; k < 3; k++) {
            xt[k] = mo.pivot[k] + mo.velocity[k] * t + R[k][0] * d[0] + R[k][1] * d[1] + R[k][2] * d[2];
            xp[k] = mo.pivot[k] + mo.velocity[k] * (t + h) + Rp[k][0] * d[0] + Rp[k][1] * d[1] + Rp[k][2] * d[2];
            xm[k] = mo.pivot[k] + mo.velocity[k] * (t - h) + Rm[k][0] * d[0] + Rm[k][1] * d[1] + Rm[k][2] * d[2];
        }
        cb_collider_velocity(&col, t, xt, v);
        for (int k = 0; k < 3; k++) worst = fmax(worst, fabs(v[k] - (xp[k] - xm[k]) / (2 * h)));
    }
    fprintf(stderr, "  rotating: max |v - finite difference| = %.3g\n", worst);
    CU_ASSERT(worst < 1e-8);
    /* dispatch through cb_collider_query is the collider's own query */
    double p[3] = { 0.2, 0.1, 0.9 }, n1[3], n2[3];
    CU_ASSERT_EQUAL(cb_collider_query(&col, 0.7, p, n1, NULL), cb_trimesh_collider_query(c, 0.7, p, n2, NULL));
    col.mesh = NULL;
    tmesh_free(&rest);
    cb_trimesh_collider_free(&c);
    cb_trimesh_collider_free(&s);
}

/* Extract angle-axis from a rotation matrix (for angle in (0, pi)). */
static double matrix_angle_axis(const double R[3][3], double axis[3])
{
    double ang = acos(fmax(-1.0, fmin(1.0, 0.5 * (R[0][0] + R[1][1] + R[2][2] - 1.0))));
    cb_v3_set(axis, R[2][1] - R[1][2], R[0][2] - R[2][0], R[1][0] - R[0][1]);
    cb_v3_normalize(axis);
    return ang;
}

static double mat_diff(const double A[3][3], const double B[3][3])
{
    double m = 0.0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) m = fmax(m, fabs(A[i][j] - B[i][j]));
    return m;
}

static void test_keyframes(void)
{
    cb_trimesh_keyframe keys[4] = {
        { .time = 0.5, .translation = { 0, 0, 0 }, .axis = { 0, 0, 1 }, .angle = 0.0 },
        { .time = 1.5, .translation = { 1, 0, 0 }, .axis = { 0, 0, 2 }, .angle = M_PI / 2 },
        { .time = 2.0, .translation = { 1, 2, -1 }, .axis = { 1, -1, 0.5 }, .angle = 2.0 },
        { .time = 3.0, .translation = { 1, 2, -1 }, .axis = { 0, 0, 1 }, .angle = 1.5 * M_PI },
    };
    cb_trimesh_motion mo = cb_trimesh_default_motion();
    mo.kind = CB_TRIMESH_KEYFRAMES;
    mo.keys = keys;
    mo.nkeys = 4;
    cb_error err = { 0 };
    cb_trimesh_collider *c = NULL;
    CU_ASSERT_FATAL(cb_trimesh_collider_load("data/meshes/table.obj", &mo, &c, &err) == 0);
    double R[3][3], T[3], P[3], Rk[3][3];
    /* at every key time the pose is the key's */
    for (int k = 0; k < 4; k++) {
        cb_trimesh_collider_pose(c, keys[k].time, R, T, P);
        rodrigues(keys[k].axis, keys[k].angle, Rk);
        CU_ASSERT(mat_diff(R, Rk) < 1e-14);
        CU_ASSERT(cb_v3_dist(T, keys[k].translation) < 1e-15);
    }
    /* the default pivot is the area-weighted centroid: the table is symmetric in x and y */
    CU_ASSERT(fabs(P[0]) < 1e-12 && fabs(P[1]) < 1e-12 && P[2] > 0.3 && P[2] < 0.7);
    /* held before the first and after the last key, with zero velocity */
    double v[3], xq[3] = { 0.3, 0.2, 0.1 };
    cb_trimesh_collider_pose(c, -4.0, R, T, NULL);
    rodrigues(keys[0].axis, keys[0].angle, Rk);
    CU_ASSERT(mat_diff(R, Rk) < 1e-14 && cb_v3_norm(T) == 0.0);
    cb_trimesh_collider_velocity(c, 0.2, xq, v);
    CU_ASSERT(cb_v3_norm(v) == 0.0);
    cb_trimesh_collider_pose(c, 10.0, R, T, NULL);
    rodrigues(keys[3].axis, keys[3].angle, Rk);
    CU_ASSERT(mat_diff(R, Rk) < 1e-14 && cb_v3_dist(T, keys[3].translation) == 0.0);
    cb_trimesh_collider_velocity(c, 3.5, xq, v);
    CU_ASSERT(cb_v3_norm(v) == 0.0);
    /* segment 0: translation linear, rotation about z by s * 90 degrees */
    cb_trimesh_collider_pose(c, 0.75, R, T, NULL);
    rodrigues(keys[1].axis, 0.25 * M_PI / 2, Rk);
    CU_ASSERT(mat_diff(R, Rk) < 1e-14);
    CU_ASSERT(cb_v3_dist(T, (double[3]){ 0.25, 0, 0 }) < 1e-15);
    /* segment 1 (general axes): R(s) = Rel^s R1 with Rel = R2 R1^T, checked through the
     * matrix angle-axis of Rel */
    double R1[3][3], R2[3][3], R1t[3][3], Rel[3][3], ax[3], Rs[3][3], Rexp[3][3];
    rodrigues(keys[1].axis, keys[1].angle, R1);
    rodrigues(keys[2].axis, keys[2].angle, R2);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) R1t[i][j] = R1[j][i];
    mat_mul(Rel, R2, R1t);
    double ang = matrix_angle_axis(Rel, ax);
    CU_ASSERT(ang > 0.1 && ang < M_PI - 0.1);
    const double s = 0.3, t = 1.5 + s * 0.5;
    rodrigues(ax, s * ang, Rs);
    mat_mul(Rexp, Rs, R1);
    cb_trimesh_collider_pose(c, t, R, T, P);
    CU_ASSERT(mat_diff(R, Rexp) < 1e-13);
    CU_ASSERT(cb_v3_dist(T, (double[3]){ 1, 2 * s, -s }) < 1e-14);
    /* queries at that time against brute force on the independently moved vertices */
    tmesh rest = tmesh_of(cb_trimesh_collider_mesh(c));
    tmesh ref = transformed(&rest, Rexp, T, P);
    check_mesh_vs_brute(c, t, &ref, 1, 300, 1, "keyframed table at t = 1.65");
    /* surface velocity in segment 1 = material derivative (the pose is smooth inside) */
    double X0[3] = { 0.2, -0.1, 0.68 }, Rp[3][3], Rm[3][3], Tp[3], Tm[3], h = 1e-6;
    cb_trimesh_collider_pose(c, t + h, Rp, Tp, NULL);
    cb_trimesh_collider_pose(c, t - h, Rm, Tm, NULL);
    double d[3], xt[3], fd[3];
    cb_v3_sub(d, X0, P);
    for (int k = 0; k < 3; k++) {
        xt[k] = P[k] + T[k] + Rexp[k][0] * d[0] + Rexp[k][1] * d[1] + Rexp[k][2] * d[2];
        double xp = P[k] + Tp[k] + Rp[k][0] * d[0] + Rp[k][1] * d[1] + Rp[k][2] * d[2];
        double xm = P[k] + Tm[k] + Rm[k][0] * d[0] + Rm[k][1] * d[1] + Rm[k][2] * d[2];
        fd[k] = (xp - xm) / (2 * h);
    }
    cb_trimesh_collider_velocity(c, t, xt, v);
    CU_ASSERT(cb_v3_dist(v, fd) < 1e-7);
    /* shorter arc: segment 2 goes from R2 to 270 degrees about z; its middle is the
     * half-way rotation along the arc of angle < pi */
    double R3[3][3];
    rodrigues(keys[3].axis, keys[3].angle, R3);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) R1t[i][j] = R2[j][i];
    mat_mul(Rel, R3, R1t);
    ang = matrix_angle_axis(Rel, ax);
    rodrigues(ax, 0.5 * ang, Rs);
    mat_mul(Rexp, Rs, R2);
    cb_trimesh_collider_pose(c, 2.5, R, T, NULL);
    CU_ASSERT(mat_diff(R, Rexp) < 1e-12);
    tmesh_free(&ref);
    tmesh_free(&rest);
    cb_trimesh_collider_free(&c);
}

static void test_bad_input(void)
{
    cb_error err = { 0 };
    cb_trimesh_collider *c = (cb_trimesh_collider *)&err; /* must be reset to NULL */
    /* missing file */
    CU_ASSERT(cb_trimesh_collider_load("data/meshes/no_such_mesh.obj", NULL, &c, &err) == CB_ERR_IO);
    CU_ASSERT(c == NULL);
    CU_ASSERT(strstr(err.message, "no_such_mesh.obj") != NULL);
    /* NaN coordinate, with file:line */
    const char *p = write_file("nan.obj", "# x\nv 0 0 0\nv 1 0 0\nv nan 1 0\nf 1 2 3\n");
    CU_ASSERT(cb_trimesh_collider_load(p, NULL, &c, &err) == CB_ERR_INPUT);
    CU_ASSERT(strstr(err.message, "nan.obj:4") != NULL);
    fprintf(stderr, "  %s\n", err.message);
    /* non-manifold: three triangles on edge 1-2 */
    p = write_file("nonmanifold.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 -1 0\nv 0 0 1\n"
                   "f 1 2 3\nf 2 1 4\nf 1 2 5\n");
    CU_ASSERT(cb_trimesh_collider_load(p, NULL, &c, &err) == CB_ERR_INPUT);
    CU_ASSERT(strstr(err.message, "nonmanifold.obj:") != NULL);
    CU_ASSERT(strstr(err.message, "non-manifold") != NULL);
    fprintf(stderr, "  %s\n", err.message);
    /* closed but inconsistently oriented (one cube face flipped) */
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", CUBE_OBJ);
    char *face = strstr(buf, "f 5 6 7 8");
    memcpy(face, "f 8 7 6 5", 9);
    p = write_file("flipped.obj", buf);
    CU_ASSERT(cb_trimesh_collider_load(p, NULL, &c, &err) == CB_ERR_INPUT);
    CU_ASSERT(strstr(err.message, "flipped.obj") && strstr(err.message, "consistently oriented"));
    fprintf(stderr, "  %s\n", err.message);
    /* line elements */
    p = write_file("springs.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 1\nf 1 2 3\nl 3 4\n");
    CU_ASSERT(cb_trimesh_collider_load(p, NULL, &c, &err) == CB_ERR_INPUT);
    /* motion: keyframe times not increasing, NaN velocity, zero axis */
    p = write_file("cube.obj", CUBE_OBJ);
    cb_trimesh_keyframe keys[2] = { { .time = 1.0 }, { .time = 1.0 } };
    cb_trimesh_motion mo = cb_trimesh_default_motion();
    mo.kind = CB_TRIMESH_KEYFRAMES;
    mo.keys = keys;
    mo.nkeys = 2;
    CU_ASSERT(cb_trimesh_collider_load(p, &mo, &c, &err) == CB_ERR_INPUT);
    CU_ASSERT(strstr(err.message, "keyframe 1") != NULL);
    keys[1].time = 2.0;
    keys[1].angle = 1.0;
    CU_ASSERT(cb_trimesh_collider_load(p, &mo, &c, &err) == CB_ERR_INPUT);
    CU_ASSERT(strstr(err.message, "axis") != NULL);
    mo = cb_trimesh_default_motion();
    mo.kind = CB_TRIMESH_VELOCITY;
    mo.velocity[1] = NAN;
    CU_ASSERT(cb_trimesh_collider_load(p, &mo, &c, &err) == CB_ERR_INPUT);
    CU_ASSERT(c == NULL);
    /* non-finite query point or time: NaN, not a crash */
    CU_ASSERT_FATAL(cb_trimesh_collider_load(p, NULL, &c, &err) == 0);
    double x[3] = { NAN, 0, 0 }, n[3], cp[3];
    CU_ASSERT(isnan(cb_trimesh_collider_query(c, 0.0, x, n, cp)));
    x[0] = 0.0;
    CU_ASSERT(isnan(cb_trimesh_collider_query(c, INFINITY, x, n, cp)));
    CU_ASSERT_EQUAL(cb_trimesh_collider_query(c, 0.0, x, n, cp), -0.5);
    cb_trimesh_collider_free(&c);
    cb_trimesh_collider_free(&c); /* idempotent */
    cb_trimesh_collider_free(NULL);
}

/* ---- scene keys ---- */

static int load_scene(const char *colliders, cb_scene **s, cb_error *err)
{
    char text[4096];
    snprintf(text, sizeof text,
             "name: t\nduration: 1.0\ndt: 0.01\n"
             "cloth:\n  grid: {nx: 3, ny: 3, size: [1, 1]}\n  density: 0.1\n  stretch: 10\n"
             "colliders:\n%s", colliders);
    return cb_scene_load_string(text, "mem.yaml", cb_test_tmpdir(), NULL, 0, s, err);
}

static void test_scene_mesh_collider(void)
{
    write_file("cube.obj", CUBE_OBJ);
    cb_error err = { 0 };
    cb_scene *s = NULL;
    /* velocity + angular velocity about an explicit pivot */
    int rc = load_scene("  - {type: mesh, file: cube.obj, velocity: [1, 0, 0], angular_velocity: "
                        "[0, 0, 1.5707963267948966], pivot: [0, 0, 0], friction: 0.25}\n", &s, &err);
    if (rc) fprintf(stderr, "  %s\n", err.message);
    CU_ASSERT_FATAL(rc == 0);
    CU_ASSERT_EQUAL(s->ncolliders, 1);
    const cb_collider *c = &s->colliders[0];
    CU_ASSERT(c->type == CB_COLLIDER_MESH && c->mesh != NULL);
    CU_ASSERT_EQUAL(c->friction, 0.25);
    /* at t = 1 the cube is turned 90 degrees (same set) and moved by (1, 0, 0) */
    CB_ASSERT_REL(cb_collider_query(c, 1.0, (double[3]){ 1, 0, 0.9 }, NULL, NULL), 0.4, 1e-12);
    CB_ASSERT_REL(cb_collider_query(c, 1.0, (double[3]){ 1.4, 0, 0 }, NULL, NULL), -0.1, 1e-12);
    /* at t = 0.5 it is turned 45 degrees: a corner sits on the +y axis at |y| = sqrt(1/2) */
    CB_ASSERT_REL(cb_collider_query(c, 0.5, (double[3]){ 0.5, sqrt(0.5) + 0.1, 0.2 }, NULL, NULL), 0.1,
                  1e-12);
    double v[3];
    cb_collider_velocity(c, 1.0, (double[3]){ 1, 1, 0 }, v);
    CB_ASSERT_REL(v[0], 1.0 - M_PI / 2, 1e-12);
    CU_ASSERT(fabs(v[1]) < 1e-12 && fabs(v[2]) < 1e-12);
    cb_scene_free(&s);

    /* default pivot: the centroid; a cube at (2, 0, 0) turning about z stays in place at
     * quarter turns */
    write_file("cube_shifted.obj",
               "v 1.5 -0.5 -0.5\nv 2.5 -0.5 -0.5\nv 2.5 0.5 -0.5\nv 1.5 0.5 -0.5\n"
               "v 1.5 -0.5 0.5\nv 2.5 -0.5 0.5\nv 2.5 0.5 0.5\nv 1.5 0.5 0.5\n"
               "f 1 4 3 2\nf 5 6 7 8\nf 1 2 6 5\nf 2 3 7 6\nf 3 4 8 7\nf 4 1 5 8\n");
    rc = load_scene("  - {type: mesh, file: cube_shifted.obj, angular_velocity: [0, 0, 3.141592653589793]}\n",
                    &s, &err);
    CU_ASSERT_FATAL(rc == 0);
    CB_ASSERT_REL(cb_collider_query(&s->colliders[0], 0.5, (double[3]){ 2.7, 0.1, 0.2 }, NULL, NULL),
                  0.2, 1e-12);
    CB_ASSERT_REL(cb_collider_query(&s->colliders[0], 1.0, (double[3]){ 2.0, 0.0, 0.0 }, NULL, NULL),
                  -0.5, 1e-12);
    cb_scene_free(&s);

    /* keyframes: angle in degrees; at t = 1, half of the 90-degree turn and of the lift */
    rc = load_scene("  - type: mesh\n    file: cube.obj\n    pivot: [0, 0, 0]\n    keyframes:\n"
                    "      - {time: 0}\n"
                    "      - {time: 2, translation: [0, 0, 1], rotation: {axis: [0, 0, 1], angle: 90}}\n",
                    &s, &err);
    if (rc) fprintf(stderr, "  %s\n", err.message);
    CU_ASSERT_FATAL(rc == 0);
    c = &s->colliders[0];
    CB_ASSERT_REL(cb_collider_query(c, 1.0, (double[3]){ 0, sqrt(0.5) + 0.1, 0.7 }, NULL, NULL), 0.1,
                  1e-12);
    CB_ASSERT_REL(cb_collider_query(c, 5.0, (double[3]){ 0, 0, 1.6 }, NULL, NULL), 0.1, 1e-12);
    cb_collider_velocity(c, 1.0, (double[3]){ 0, 0, 0.5 }, v);
    CU_ASSERT(fabs(v[0]) < 1e-12 && fabs(v[1]) < 1e-12);
    CB_ASSERT_REL(v[2], 0.5, 1e-12);
    cb_scene_free(&s);

    /* the shipped scene loads, with its mesh collider */
    rc = cb_scene_load("data/scenes/drape_mesh.yaml", NULL, 0, &s, &err);
    if (rc) fprintf(stderr, "  %s\n", err.message);
    CU_ASSERT_FATAL(rc == 0);
    CU_ASSERT(s->ncolliders >= 1 && s->colliders[0].type == CB_COLLIDER_MESH && s->colliders[0].mesh);
    /* the cloth starts above the blob */
    CU_ASSERT(cb_collider_query(&s->colliders[0], 0.0, (double[3]){ 0, 0, 1.0 }, NULL, NULL) > 0.2);
    cb_scene_free(&s);
}

static void expect_scene_error(const char *colliders, const char *needle1, const char *needle2)
{
    cb_error err = { 0 };
    cb_scene *s = NULL;
    int rc = load_scene(colliders, &s, &err);
    CU_ASSERT(rc < 0);
    CU_ASSERT(s == NULL);
    int ok = strstr(err.message, needle1) != NULL && (!needle2 || strstr(err.message, needle2) != NULL);
    if (!ok) fprintf(stderr, "  unexpected message: %s\n", err.message);
    else fprintf(stderr, "  ok: %s\n", err.message);
    CU_ASSERT(ok);
    cb_scene_free(&s);
}

static void test_scene_mesh_errors(void)
{
    write_file("cube.obj", CUBE_OBJ);
    write_file("bad.obj", "v 0 0 0\nv 1 0 0\nv 0 1\nf 1 2 3\n");
    /* the scene line is 9 (the collider), the file line 3 */
    expect_scene_error("  - {type: mesh, file: missing.obj}\n", "mem.yaml:9:", "missing.obj");
    expect_scene_error("  - {type: mesh, file: bad.obj}\n", "mem.yaml:9:", "bad.obj:3");
    expect_scene_error("  - {type: mesh}\n", "mem.yaml:9:", "file");
    expect_scene_error("  - {type: mesh, file: cube.obj, spin: [0, 0, 1]}\n", "spin", NULL);
    expect_scene_error("  - {type: mesh, file: cube.obj, velocity: [1, 0, 0], keyframes: [{time: 0}]}\n",
                       "mem.yaml:9:", "not both");
    expect_scene_error("  - {type: mesh, file: cube.obj, keyframes: [{time: 1}, {time: 0.5}]}\n",
                       "mem.yaml:9:", "colliders.0.keyframes.1.time");
    expect_scene_error("  - {type: mesh, file: cube.obj, keyframes: [{time: 0, scale: 2}]}\n",
                       "scale", NULL);
    expect_scene_error("  - {type: mesh, file: cube.obj, keyframes: [{time: 0, rotation: {axis: [0, 0, 0], "
                       "angle: 10}}]}\n", "mem.yaml:9:", "axis");
    expect_scene_error("  - {type: mesh, file: cube.obj, keyframes: []}\n", "keyframes", NULL);
    expect_scene_error("  - {type: mesh, file: cube.obj, angular_velocity: [0, .nan, 0]}\n",
                       "angular_velocity", NULL);
    /* an error after the mesh is loaded must not leak it (checked under ASan) */
    expect_scene_error("  - {type: mesh, file: cube.obj, restitution: 2}\n", "restitution", NULL);
}

/* queries per second on a 20480-triangle sphere, with a brute-force spot check */
static void test_performance_20k(void)
{
    const double c0[3] = { 0, 0, 0 };
    tmesh s = icosphere(5, c0, 1.0);
    CU_ASSERT_EQUAL(s.nf, 20480);
    cb_error err = { 0 };
    cb_trimesh_collider *c = NULL;
    CU_ASSERT_FATAL(cb_trimesh_collider_from_arrays(s.nv, (const double (*)[3])s.x, s.nf,
                                                    (const int (*)[3])s.f, "ico5", NULL, &c, &err) == 0);
    enum { NQ = 200000 };
    double (*p)[3] = malloc(sizeof(double[3]) * NQ);
    for (int i = 0; i < NQ; i++)
        for (int k = 0; k < 3; k++) p[i][k] = 1.3 * srand1();
    /* CPU time (clock), not wall time: the machine is shared */
    double sum = 0.0;
    clock_t t0 = clock();
    for (int i = 0; i < NQ; i++) sum += cb_trimesh_collider_query(c, 0.0, p[i], NULL, NULL);
    double el = (double)(clock() - t0) / CLOCKS_PER_SEC;
    /* near the surface (|d| < 0.01): the typical cloth-contact query */
    for (int i = 0; i < NQ; i++) {
        double l = cb_v3_norm(p[i]);
        cb_v3_scale(p[i], p[i], (1.0 + 0.01 * srand1()) / l);
    }
    clock_t t1 = clock();
    for (int i = 0; i < NQ; i++) sum += cb_trimesh_collider_query(c, 0.0, p[i], NULL, NULL);
    double el2 = (double)(clock() - t1) / CLOCKS_PER_SEC;
    fprintf(stderr, "  20480 triangles: %.3g queries/s (points in the box [-1.3, 1.3]^3), "
            "%.3g queries/s (within 0.01 of the surface)   [checksum %g]\n", NQ / el, NQ / el2, sum);
    tally ty = { 0 };
    for (int i = 0; i < 100; i++) check_point(c, 0.0, &s, 1, p[i * 97], 2.0, &ty);
    check_tally(&ty, "20k sphere spot check");
    free(p);
    cb_trimesh_collider_free(&c);
    tmesh_free(&s);
}

CB_TEST_MAIN("trimesh_collider",
    CB_TEST(test_shipped_meshes_vs_brute_force),
    CB_TEST(test_sphere_vs_analytic),
    CB_TEST(test_open_mesh),
    CB_TEST(test_rotating_mesh),
    CB_TEST(test_keyframes),
    CB_TEST(test_bad_input),
    CB_TEST(test_scene_mesh_collider),
    CB_TEST(test_scene_mesh_errors),
    CB_TEST(test_performance_20k))
