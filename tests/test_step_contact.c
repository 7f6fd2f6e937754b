/* tests/test_step_contact.c — the post-solve self and collider contact of fms and newton (solvers/step_contact.c):
 * the candidate cache against rebuilding every step and a brute-force oracle, the rigid-motion
 * reuse of the cache and its far bound. */
#include "cb_test.h"
#include "cb_sim.h"

#include "contact/colliders.h"
#include "contact/distance.h"
#include "contact/spatial_hash.h"
#include "experiments/harness/metrics.h"
#include "core/scene.h"
#include "core/solver.h"
#include "core/vec3.h"
#include "core/world.h"
#include "experiments/harness/registry.h"
#include "solvers/cholmod_util.h"
#include "solvers/springs.h"
#include "solvers/step_contact.h"

/* Two contact stages on two copies of a crumpled grid cloth, the first with the
 * candidate cache and the second without: what the contact tests step by hand. */
typedef struct contact_twin {
    cb_scene *sa, *sb;
    cb_world *wa, *wb;
    cb_step_contact *ca, *cb;
    double (*x0)[3];       /* positions at the start of the step */
    int (*oracle)[2];      /* the brute-force pairs */
    double r2;             /* squared box distance of a candidate */
    cb_error e;
} contact_twin;

/* The two contact stages on the worlds T->wa, T->wb (the same cloth), crumpled. */
static int twin_start(contact_twin *T, double dist, int seed, double amplitude)
{
    if (!T->wa || !T->wb) return -1;
    cb_step_contact_def def = {.collider_offset = 0.0, .self_collision = 1, .self_distance = dist,
                               .self_friction = 0.3, .self_iterations = 2, .self_cache = 1};
    if (cb_step_contact_create(T->wa, &def, &T->ca, &T->e)) return -1;
    def.self_cache = 0;
    if (cb_step_contact_create(T->wb, &def, &T->cb, &T->e)) return -1;
    const int nv = T->wa->nv;
    double (*xc)[3] = cb_test_crumple(T->wa->mesh, seed, amplitude);
    memcpy(T->wa->state.x, xc, (size_t)nv * sizeof *xc);
    free(xc);
    memset(T->wa->state.v, 0, (size_t)nv * sizeof *T->wa->state.v);
    T->x0 = cb_calloc((size_t)nv, sizeof *T->x0);
    T->oracle = cb_calloc((size_t)nv * (size_t)T->wa->mesh->nf, sizeof *T->oracle);
    T->r2 = (1 + 1e-6) * (1 + 1e-6) * dist * dist;
    return T->x0 && T->oracle ? 0 : -1;
}

static int twin_open(contact_twin *T, int n, double size, double dist, int seed, double amplitude)
{
    memset(T, 0, sizeof *T);
    T->wa = cb_sim_grid_world(n, n, size, size, &T->sa);
    T->wb = cb_sim_grid_world(n, n, size, size, &T->sb);
    return twin_start(T, dist, seed, amplitude);
}

/* The same on a cloth of two n x n pieces (side 1 m) 300 m apart. */
static int twin_open_apart(contact_twin *T, int n, double dist, int seed, double amplitude)
{
    memset(T, 0, sizeof *T);
    char text[512];
    snprintf(text, sizeof text,
             "name: apart\nduration: 1\ndt: 0.01\ncloth:\n  bend: 1.0e-3\n  pieces:\n"
             "    - {grid: {nx: %d, ny: %d, size: [1, 1], origin: [0, 0, 0]}}\n"
             "    - {grid: {nx: %d, ny: %d, size: [1, 1], origin: [0, 0, 0]}, translation: [300, 300, 300]}\n",
             n, n, n, n);
    if (cb_scene_load_string(text, "apart.yaml", ".", NULL, 0, &T->sa, &T->e) ||
        cb_world_create(T->sa, &T->wa, &T->e) ||
        cb_scene_load_string(text, "apart.yaml", ".", NULL, 0, &T->sb, &T->e) ||
        cb_world_create(T->sb, &T->wb, &T->e)) {
        fprintf(stderr, "  %s\n", T->e.message);
        return -1;
    }
    return twin_start(T, dist, seed, amplitude);
}

static void twin_close(contact_twin *T)
{
    free(T->oracle);
    free(T->x0);
    cb_step_contact_free(&T->ca);
    cb_step_contact_free(&T->cb);
    cb_world_free(&T->wa);
    cb_world_free(&T->wb);
    cb_scene_free(&T->sa);
    cb_scene_free(&T->sb);
}

/* The second cloth takes the first one's positions and velocities. */
static void twin_sync(contact_twin *T)
{
    size_t bytes = (size_t)T->wa->nv * sizeof *T->x0;
    memcpy(T->wb->state.x, T->wa->state.x, bytes);
    memcpy(T->wb->state.v, T->wa->state.v, bytes);
}

/* A step of both cloths: x0 the positions now, then every coordinate moved by up to
 * 1 mm at random and random velocities. */
static void twin_jitter(contact_twin *T, uint64_t *rng)
{
    const int nv = T->wa->nv;
    memcpy(T->x0, T->wa->state.x, (size_t)nv * sizeof *T->x0);
    for (int i = 0; i < nv; i++)
        for (int k = 0; k < 3; k++) {
            T->wa->state.x[i][k] += 1e-3 * (2 * cb_test_uniform(rng) - 1);
            T->wa->state.v[i][k] = 2 * cb_test_uniform(rng) - 1;
        }
    twin_sync(T);
}

/* The brute-force candidates of the first cloth into T->oracle: every (v, t), v not in
 * t, with box distance^2 <= r2, by triangle then vertex. Returns their number. */
static long twin_oracle(contact_twin *T)
{
    const cb_mesh *m = T->wa->mesh;
    const double (*x)[3] = (const double (*)[3])T->wa->state.x;
    long no = 0;
    for (int t = 0; t < m->nf; t++) {
        const int *f = m->f[t];
        double lo[3], hi[3];
        for (int k = 0; k < 3; k++) {
            lo[k] = fmin(x[f[0]][k], fmin(x[f[1]][k], x[f[2]][k]));
            hi[k] = fmax(x[f[0]][k], fmax(x[f[1]][k], x[f[2]][k]));
        }
        for (int v = 0; v < m->nv; v++) {
            if (v == f[0] || v == f[1] || v == f[2]) continue;
            double g2 = 0;
            for (int k = 0; k < 3; k++) {
                double g = x[v][k] < lo[k] ? lo[k] - x[v][k] : x[v][k] > hi[k] ? x[v][k] - hi[k] : 0.0;
                g2 += g * g;
            }
            if (g2 <= T->r2) {
                T->oracle[no][0] = v;
                T->oracle[no][1] = t;
                no++;
            }
        }
    }
    return no;
}

/* Whether a candidate list differs from the first no oracle pairs. */
static int twin_mismatch(const contact_twin *T, const cb_pair_list *pl, long no)
{
    return pl->n != no || memcmp(pl->p, T->oracle, (size_t)no * sizeof *T->oracle);
}

/* Both contact stages from x0; *na = contacts of the first. Returns 1 when the two
 * cloths' states (or contact counts) are not bitwise equal afterwards. */
static int twin_apply(contact_twin *T, int *na)
{
    double ia[3] = {0, 0, 0}, ib[3] = {0, 0, 0}, wa = 0, wb = 0;
    int nb = 0;
    const double (*x0)[3] = (const double (*)[3])T->x0;
    CU_ASSERT_FATAL(cb_step_contact_apply(T->ca, T->wa, x0, 0.0, ia, &wa, na, &T->e) == CB_OK);
    CU_ASSERT_FATAL(cb_step_contact_apply(T->cb, T->wb, x0, 0.0, ib, &wb, &nb, &T->e) == CB_OK);
    size_t bytes = (size_t)T->wa->nv * sizeof *T->x0;
    return *na != nb || memcmp(T->wa->state.x, T->wb->state.x, bytes) || memcmp(T->wa->state.v, T->wb->state.v, bytes);
}

/* The self-contact candidate cache: random motions of a crumpled cloth, small (the
 * cache is reused) and large (it is rebuilt), with the same contact stage cached and
 * uncached (a spatial hash query every step). The pairs of every step must equal the
 * brute-force set (every (v, t), v not in t, with box distance^2 <= (1 + 1e-6)^2 d^2,
 * by triangle then vertex), and the resolved positions and velocities must be
 * bitwise identical. */
static void test_contact_cache_exact(void)
{
    contact_twin T;
    CU_ASSERT_FATAL(twin_open(&T, 24, 1.0, 0.006 /* edge 1/23 */, 11, 0.15) == 0);
    const cb_mesh *m = T.wa->mesh;
    const int nv = T.wa->nv;
    uint64_t rng = 12345;
    static const double scales[3] = {1e-5, 2e-4, 1e-3};
    long mismatches = 0, differ = 0, total_contacts = 0, npairs = 0;
    for (int step = 0; step < 60; step++) {
        /* both worlds at the same state, then the same random motion */
        memcpy(T.x0, T.wa->state.x, (size_t)nv * sizeof *T.x0);
        double sc = step % 15 == 14 ? 3e-2 : scales[(int)(cb_test_uniform(&rng) * 3)]; /* a jump every 15 */
        double drift[3] = {cb_test_uniform(&rng) - 0.5, cb_test_uniform(&rng) - 0.5, cb_test_uniform(&rng) - 0.5};
        for (int i = 0; i < nv; i++)
            for (int k = 0; k < 3; k++) {
                T.wa->state.x[i][k] += sc * (2 * cb_test_uniform(&rng) - 1 + drift[k]);
                T.wa->state.v[i][k] = 2 * cb_test_uniform(&rng) - 1;
            }
        twin_sync(&T);
        const cb_pair_list *pa = NULL, *pb = NULL;
        CU_ASSERT_FATAL(cb_step_contact_candidates(T.ca, m, (const double (*)[3])T.wa->state.x,
                                                   (const double (*)[3])T.x0, &pa, &T.e) == CB_OK);
        CU_ASSERT_FATAL(cb_step_contact_candidates(T.cb, m, (const double (*)[3])T.wb->state.x,
                                                   (const double (*)[3])T.x0, &pb, &T.e) == CB_OK);
        long no = twin_oracle(&T);
        npairs += no;
        mismatches += twin_mismatch(&T, pa, no) + twin_mismatch(&T, pb, no);
        int na = 0;
        differ += twin_apply(&T, &na);
        total_contacts += na;
    }
    long builds_a, queries_a, builds_b, queries_b;
    cb_step_contact_cache_stats(T.ca, &builds_a, &queries_a);
    cb_step_contact_cache_stats(T.cb, &builds_b, &queries_b);
    fprintf(stderr, "  %ld pairs, %ld contacts over 60 steps; cached: %ld hash queries for %ld requests, "
                    "uncached: %ld; %ld set mismatches, %ld steps differing\n",
            npairs, total_contacts, builds_a, queries_a, builds_b, mismatches, differ);
    CU_ASSERT(total_contacts > 0);
    CU_ASSERT(builds_a < queries_a / 4); /* the cache was reused (two requests per step) */
    CU_ASSERT(builds_b == queries_b);    /* and the other one was not */
    CU_ASSERT_EQUAL(mismatches, 0);
    CU_ASSERT_EQUAL(differ, 0);
    twin_close(&T);
}

/* The two exact shortcuts of the contact stage (step_contact.c). (1) The cache bound
 * is on relative motion: a crumpled cloth translated far (0.3 m per step, 7 edge
 * lengths) with a small jitter keeps its cache, and every step's pairs still equal the
 * brute-force box-distance set, with the resolved state bitwise equal to an uncached
 * stage. (2) cb_step_contact_far never rejects a pair closer than the distance: points
 * at 1 - 1e-7 of it from random triangles (well-shaped, thin, needle-thin, long), in
 * every Voronoi region, against cb_point_triangle_distance2; and it does reject what a
 * lower bound must (2 x the distance off the plane, or beyond an edge in the plane). */
static void test_contact_rigid_cache_and_far_bound(void)
{
    contact_twin T;
    CU_ASSERT_FATAL(twin_open(&T, 16, 0.7, 0.006 /* edge 0.7/15 */, 7, 0.1) == 0);
    const cb_mesh *m = T.wa->mesh;
    const int nv = T.wa->nv;
    uint64_t rng = 777;
    long mismatches = 0, differ = 0, contacts = 0;
    for (int step = 0; step < 40; step++) {
        memcpy(T.x0, T.wa->state.x, (size_t)nv * sizeof *T.x0);
        double tr[3];
        for (int k = 0; k < 3; k++) tr[k] = 0.3 * (2 * cb_test_uniform(&rng) - 1);
        for (int i = 0; i < nv; i++)
            for (int k = 0; k < 3; k++) {
                T.wa->state.x[i][k] += tr[k] + 2e-5 * (2 * cb_test_uniform(&rng) - 1);
                T.wa->state.v[i][k] = 2 * cb_test_uniform(&rng) - 1;
            }
        twin_sync(&T);
        const cb_pair_list *pa = NULL;
        CU_ASSERT_FATAL(cb_step_contact_candidates(T.ca, m, (const double (*)[3])T.wa->state.x,
                                                   (const double (*)[3])T.x0, &pa, &T.e) == CB_OK);
        mismatches += twin_mismatch(&T, pa, twin_oracle(&T));
        int na = 0;
        differ += twin_apply(&T, &na);
        contacts += na;
    }
    long builds, queries;
    cb_step_contact_cache_stats(T.ca, &builds, &queries);
    fprintf(stderr, "  rigid translation: %ld contacts, %ld hash queries for %ld requests, %ld mismatches, %ld differ\n",
            contacts, builds, queries, mismatches, differ);
    CU_ASSERT(contacts > 0);
    CU_ASSERT(builds <= 2); /* one build, kept through the translations */
    CU_ASSERT_EQUAL(mismatches, 0);
    CU_ASSERT_EQUAL(differ, 0);
    twin_close(&T);

    /* (2) the lower bound of cb_step_contact_far */
    long wrong = 0, near = 0, missed = 0, decided = 0;
    for (int trial = 0; trial < 4000; trial++) {
        double d = 0.002, a[3], b[3], q[3];
        int kind = trial % 4; /* well-shaped, thin (1e-2), needle (1e-5), long (edges 1e5 d) */
        double size = kind == 3 ? 1e5 * d : d * (0.5 + 20 * cb_test_uniform(&rng));
        for (int k = 0; k < 3; k++) {
            a[k] = 3 * (cb_test_uniform(&rng) - 0.5);
            b[k] = a[k] + size * (cb_test_uniform(&rng) - 0.5);
            q[k] = a[k] + size * (cb_test_uniform(&rng) - 0.5);
        }
        if (kind == 1 || kind == 2) { /* q near the line ab */
            double s = cb_test_uniform(&rng), thin = kind == 1 ? 1e-2 : 1e-5;
            for (int k = 0; k < 3; k++) q[k] = a[k] + s * (b[k] - a[k]) + thin * (q[k] - a[k]);
        }
        double p[3], cp[3];
        for (int k = 0; k < 3; k++) /* anywhere around the triangle: every Voronoi region */
            p[k] = a[k] + 1.6 * (cb_test_uniform(&rng) - 0.3) * (b[k] - a[k]) +
                   1.6 * (cb_test_uniform(&rng) - 0.3) * (q[k] - a[k]) + 3 * d * (cb_test_uniform(&rng) - 0.5);
        double d2 = cb_point_triangle_distance2(p, a, b, q, NULL, cp);
        if (!(d2 > 0)) continue;
        double s = d * (1 - 1e-7) / sqrt(d2), pn[3]; /* same closest point, just inside d */
        for (int k = 0; k < 3; k++) pn[k] = cp[k] + s * (p[k] - cp[k]);
        double dn2 = cb_point_triangle_distance2(pn, a, b, q, NULL, NULL);
        if (dn2 < d * d) {
            near++;
            wrong += cb_step_contact_far(pn, a, b, q, d * d);
        }
        int f = cb_step_contact_far(p, a, b, q, d * d);
        wrong += f && d2 < d * d;
        decided += f;
        if (kind == 0) { /* a well-shaped triangle must be decided off the plane and beyond an edge */
            double e0[3], e1[3], n[3], c[3], mid[3], out[3];
            cb_v3_sub(e0, b, a);
            cb_v3_sub(e1, q, a);
            cb_v3_cross(n, e0, e1);
            double sin2 = cb_v3_dot(n, n) / (cb_v3_dot(e0, e0) * cb_v3_dot(e1, e1));
            if (sin2 < 0.05 || cb_v3_normalize(n) == 0.0) continue;
            for (int k = 0; k < 3; k++) c[k] = (a[k] + b[k] + q[k]) / 3 + 2 * d * n[k];
            missed += !cb_step_contact_far(c, a, b, q, d * d);
            cb_v3_cross(out, e0, n); /* in the plane, away from q (opposite side of ab) */
            cb_v3_normalize(out);
            for (int k = 0; k < 3; k++) mid[k] = 0.5 * (a[k] + b[k]) + 2 * d * out[k];
            missed += !cb_step_contact_far(mid, a, b, q, d * d);
        }
    }
    fprintf(stderr, "  far bound: %ld points just inside checked, %ld wrong rejections, %ld rejected, %ld missed\n",
            near, wrong, decided, missed);
    CU_ASSERT(near > 3000);
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT_EQUAL(missed, 0);
    CU_ASSERT(decided > 400);
}

/* Two 3 x 3 sheets over a floor (collider offset 1 mm, self distance 2 mm), one step of
 * the stage: at the start of the step the lower one lies at the offset and the upper one
 * 2.5 mm above it, both falling at 0.5 m/s; the stage starts from the lower one at z_low
 * and the upper one at z_up (the end of the solve). Returns 0 when the stage ran; *worst:
 * the smallest distance, on its starting side, of a vertex-triangle pair between the
 * sheets whose vertex lies over the triangle; *lowest: the lowest vertex; *gap: the
 * largest |P1 - P0 - impulse| of the cloth's momentum over the stage, *scale its |P0|. */
static int two_layers(double z_low, double z_up, double *worst, double *lowest, double *gap, double *scale)
{
    const char *text = "name: layers\nduration: 1\ndt: 0.002\ncloth:\n  thickness: 0.002\n  pieces:\n"
                       "    - {grid: {nx: 3, ny: 3, size: [0.1, 0.1], origin: [0, 0, 0]}}\n"
                       "    - {grid: {nx: 3, ny: 3, size: [0.1, 0.1], origin: [0.013, 0.007, 0]}}\n"
                       "colliders:\n  - {type: plane, point: [0, 0, 0], normal: [0, 0, 1], friction: 0.5}\n";
    cb_sim S;
    if (cb_sim_world(&S, NULL, text, NULL, NULL, 0) || S.w->nv != 18) {
        cb_sim_close(&S);
        return -1;
    }
    cb_world *w = S.w;
    const cb_mesh *m = w->mesh;
    const double off = 0.001;
    double x0[18][3], imp[3] = {0, 0, 0}, P0[3] = {0, 0, 0}, P1[3] = {0, 0, 0};
    for (int i = 0; i < w->nv; i++) {
        int upper = i >= 9;
        cb_v3_copy(x0[i], w->state.x[i]);
        x0[i][2] = upper ? off + 0.0025 : off;
        cb_v3_copy(w->state.x[i], x0[i]);
        w->state.x[i][2] = upper ? z_up : z_low;
        for (int k = 0; k < 3; k++) w->state.v[i][k] = k == 2 ? -0.5 : 0.0;
        cb_v3_axpy(P0, w->mass[i], w->state.v[i]);
    }
    cb_step_contact_def def = {.collider_offset = off, .self_collision = 1, .self_distance = 0.002,
                               .self_friction = 0.3, .self_iterations = 1, .self_cache = 1};
    cb_step_contact *c = NULL;
    int contacts = 0;
    double work = 0.0;
    int rc = cb_step_contact_create(w, &def, &c, &S.e);
    if (!rc) rc = cb_step_contact_apply(c, w, (const double (*)[3])x0, 0.002, imp, &work, &contacts, &S.e);
    CU_ASSERT_EQUAL(work, 0.0); /* a fixed floor does no work, through a held vertex either */
    *worst = *lowest = INFINITY;
    *gap = *scale = 0;
    for (int i = 0; i < w->nv; i++) cb_v3_axpy(P1, w->mass[i], w->state.v[i]);
    for (int k = 0; k < 3; k++) {
        *gap = fmax(*gap, fabs(P1[k] - P0[k] - imp[k]));
        *scale = fmax(*scale, fabs(P0[k]));
    }
    for (int v = 0; v < w->nv; v++) {
        *lowest = fmin(*lowest, w->state.x[v][2]);
        for (int t = 0; t < m->nf; t++) {
            const int *f = m->f[t];
            if ((v >= 9) == (f[0] >= 9)) continue; /* the same sheet */
            double b[3], cp[3], n0[3], n1[3], e1[3], e2[3], r[3];
            cb_point_triangle_distance2(w->state.x[v], w->state.x[f[0]], w->state.x[f[1]], w->state.x[f[2]], b, cp);
            if (!(b[0] > 1e-9 && b[1] > 1e-9 && b[2] > 1e-9)) continue; /* not over the triangle */
            cb_v3_sub(e1, x0[f[1]], x0[f[0]]);
            cb_v3_sub(e2, x0[f[2]], x0[f[0]]);
            cb_v3_cross(n0, e1, e2);
            cb_v3_sub(r, x0[v], x0[f[0]]);
            double side = cb_v3_dot(r, n0) > 0 ? 1.0 : -1.0;
            cb_v3_sub(e1, w->state.x[f[1]], w->state.x[f[0]]);
            cb_v3_sub(e2, w->state.x[f[2]], w->state.x[f[0]]);
            cb_v3_cross(n1, e1, e2);
            cb_v3_normalize(n1);
            cb_v3_sub(r, w->state.x[v], cp);
            *worst = fmin(*worst, side * cb_v3_dot(r, n1));
        }
    }
    cb_step_contact_free(&c);
    cb_sim_close(&S);
    return rc;
}

/* The collider pass after the self pass must not leave a layer lifted through the one on
 * top of it (two_layers above). (1) The lower sheet pressed 1.5 mm into the floor, the
 * upper one 1.7 mm above it: the self pass pushes them apart to 2 mm, the lower one
 * further into the floor; the collider pass then puts the lower one back on the offset,
 * where the upper one is put too (both on one surface) unless the pairs are resolved
 * again with the vertices on the floor held (the stage's promise: every pair closer than
 * the distance ends on the side it started on; found on the gauntlet's three-sheet drop,
 * where the middle sheet crossed the bottom one where it lay on the sphere). (2) The lower
 * sheet 0.5 mm into the floor, the upper one 1.2 mm above the floor, off it: after the
 * collider pass the lower one has stopped and the upper one still falls onto it, so the
 * second pass's impulse stops the upper one alone, and that momentum is the collider's.
 * In both every pair over its triangle must end on its starting side by at least half the
 * distance (the pushed ones at the full distance), no vertex below the offset, and the
 * momentum the cloth gains must be the impulse the stage reports. */
static void test_contact_collider_keeps_layers(void)
{
    static const double cases[2][2] = {{-0.0015, 0.0002}, {-0.0005, 0.0012}};
    for (int k = 0; k < 2; k++) {
        double worst, lowest, gap, scale;
        CU_ASSERT_FATAL(two_layers(cases[k][0], cases[k][1], &worst, &lowest, &gap, &scale) == 0);
        fprintf(stderr, "  two layers on a floor (%d): closest pair on its side %.3g mm, lowest vertex %.3g mm, "
                        "momentum gap %.3g\n", k + 1, 1e3 * worst, 1e3 * lowest, gap);
        CU_ASSERT(isfinite(worst)); /* there are pairs over their triangles */
        CU_ASSERT(worst >= 0.001);
        CU_ASSERT(lowest >= 0.001 - 1e-12);
        CU_ASSERT(gap <= 1e-12 * scale);
    }
}

/* The candidates of a build come from a dense grid of cells over the cloth's bounding
 * box, or from the spatial hash when that box is too large for it (step_contact.h): the
 * same pairs as before the grid. A crumpled cloth moving at random, with contacts,
 * uncached (a build every request): every step's pairs equal the hash's answer as the
 * stage took it before (cb_spatial_hash_query with the box filter at the same distance,
 * then the box-distance test, in its order) and the brute-force set, and the contact
 * stage gives the same bits as the cached one. On one cloth the grid answers every build;
 * on a cloth of two pieces 300 m apart (too large a box) the hash answers every one. */
static void test_contact_grid_equals_hash(void)
{
    for (int apart = 0; apart < 2; apart++) {
        contact_twin T;
        CU_ASSERT_FATAL((apart ? twin_open_apart(&T, 16, 0.01, 5, 0.15) : twin_open(&T, 24, 1.0, 0.006, 5, 0.15)) ==
                        0);
        const cb_mesh *m = T.wa->mesh;
        const int nv = T.wa->nv;
        cb_spatial_hash *hash = NULL;
        CU_ASSERT_FATAL(cb_spatial_hash_create(1.0, &hash, &T.e) == CB_OK);
        cb_spatial_hash_set_box_filter(hash, 1);
        int (*old)[2] = cb_calloc((size_t)nv * (size_t)m->nf, sizeof *old);
        CU_ASSERT_FATAL(old != NULL);
        uint64_t rng = 777;
        long mismatches = 0, contacts = 0, npairs = 0;
        for (int step = 0; step < 20; step++) {
            twin_jitter(&T, &rng);
            const double (*x)[3] = (const double (*)[3])T.wb->state.x;
            const cb_pair_list *pb = NULL;
            CU_ASSERT_FATAL(cb_step_contact_candidates(T.cb, m, x, (const double (*)[3])T.x0, &pb, &T.e) == CB_OK);
            CU_ASSERT_FATAL(cb_spatial_hash_query(hash, m, x, sqrt(T.r2), &T.e) == CB_OK);
            const cb_pair_list *ph = cb_spatial_hash_pairs(hash);
            long nold = 0;
            for (long i = 0; i < ph->n; i++) { /* the box-distance test the stage applies */
                const int v = ph->p[i][0], *f = m->f[ph->p[i][1]];
                double g2 = 0;
                for (int k = 0; k < 3; k++) {
                    double lo = fmin(x[f[0]][k], fmin(x[f[1]][k], x[f[2]][k]));
                    double hi = fmax(x[f[0]][k], fmax(x[f[1]][k], x[f[2]][k]));
                    double g = x[v][k] < lo ? lo - x[v][k] : x[v][k] > hi ? x[v][k] - hi : 0.0;
                    g2 += g * g;
                }
                if (g2 <= T.r2) memcpy(old[nold++], ph->p[i], sizeof old[0]);
            }
            long no = twin_oracle(&T);
            npairs += no;
            mismatches += pb->n != nold || memcmp(pb->p, old, (size_t)nold * sizeof old[0]);
            mismatches += twin_mismatch(&T, pb, no);
            int na = 0;
            mismatches += twin_apply(&T, &na);
            contacts += na;
        }
        long builds, queries, grid = cb_step_contact_grid_builds(T.cb);
        cb_step_contact_cache_stats(T.cb, &builds, &queries);
        fprintf(stderr, "  %s: %ld pairs, %ld contacts over 20 steps; %ld builds, %ld by the grid; %ld mismatches\n",
                apart ? "two pieces 300 m apart" : "one cloth", npairs, contacts, builds, grid, mismatches);
        CU_ASSERT(contacts > 0);
        CU_ASSERT_EQUAL(builds, queries);
        CU_ASSERT_EQUAL(grid, apart ? 0 : builds);
        CU_ASSERT_EQUAL(mismatches, 0);
        free(old);
        cb_spatial_hash_free(&hash);
        twin_close(&T);
    }
}

/* The vector widths of the contact stage (solvers/self_grid.c's vertex test, eight or
 * four vertices per vector, and solvers/step_far.c's far bound, eight or four pairs per
 * vector) against the scalar one: a crumpled cloth with contacts moving at random,
 * uncached (a grid query every request), the pairs of every width equal to the
 * brute-force set; the far bits of every width equal to cb_step_contact_far pair by pair,
 * on those pairs and on random triangles (well-shaped, thin, needle-thin, collinear,
 * a point, huge and tiny coordinates); and the stage's results at the widest width
 * bitwise those at width 1. A vertex test or bound that kept fewer pairs, or rejected
 * more, than the scalar definition fails here (so does one that kept more). */
static void test_contact_vector_widths(void)
{
    contact_twin T;
    CU_ASSERT_FATAL(twin_open(&T, 24, 1.0, 0.006, 9, 0.15) == 0);
    const cb_mesh *m = T.wa->mesh;
    const int nv = T.wa->nv;
    const int have = cb_step_contact_set_width(T.cb, 8);
    CU_ASSERT_EQUAL(cb_step_contact_set_width(T.ca, 1), 1);
    fprintf(stderr, "  widest vertex test on this CPU: %d, far bound: %d\n", have, cb_step_contact_far_width());
    unsigned char *bits = cb_calloc((size_t)nv * (size_t)m->nf / 8 + 1, 1);
    CU_ASSERT_FATAL(bits != NULL);
    uint64_t rng = 4242;
    long mismatches = 0, farwrong = 0, farpairs = 0, fars = 0, differ = 0, contacts = 0;
    for (int step = 0; step < 20; step++) {
        twin_jitter(&T, &rng);
        const double (*x)[3] = (const double (*)[3])T.wa->state.x;
        long no = twin_oracle(&T);
        for (int w = 1; w <= 8; w *= 2) {
            if (w == 2) continue;
            const cb_pair_list *pl = NULL;
            cb_step_contact_set_width(T.cb, w);
            CU_ASSERT_FATAL(cb_step_contact_candidates(T.cb, m, x, (const double (*)[3])T.x0, &pl, &T.e) == CB_OK);
            mismatches += twin_mismatch(&T, pl, no);
            cb_step_contact_far_bits(w, x, (const int (*)[3])m->f, (const int (*)[2])T.oracle, no, 0.006 * 0.006, bits);
            for (long i = 0; i < no; i++) {
                const int *t = m->f[T.oracle[i][1]];
                int far = cb_step_contact_far(x[T.oracle[i][0]], x[t[0]], x[t[1]], x[t[2]], 0.006 * 0.006);
                farwrong += far != ((bits[i >> 3] >> (i & 7)) & 1);
                fars += far;
            }
            farpairs += no;
        }
        cb_step_contact_set_width(T.cb, have);
        int na = 0;
        differ += twin_apply(&T, &na);
        contacts += na;
    }
    /* random triangles: x holds p, a, b, q of pair i at 4i .. 4i + 3 */
    enum { NR = 4003 };
    double (*xr)[3] = cb_calloc(4 * NR, sizeof *xr);
    int (*fr)[3] = cb_calloc(NR, sizeof *fr), (*pr)[2] = cb_calloc(NR, sizeof *pr);
    CU_ASSERT_FATAL(xr && fr && pr);
    const double d = 0.002;
    for (int i = 0; i < NR; i++) {
        int kind = i % 7; /* well-shaped, thin, needle, collinear, a point, huge, tiny */
        double scale = kind == 5 ? 1e150 : kind == 6 ? 1e-150 : 1.0, size = d * (0.5 + 20 * cb_test_uniform(&rng));
        double *p = xr[4 * i], *a = xr[4 * i + 1], *b = xr[4 * i + 2], *q = xr[4 * i + 3];
        for (int k = 0; k < 3; k++) {
            a[k] = 3 * (cb_test_uniform(&rng) - 0.5);
            b[k] = a[k] + size * (cb_test_uniform(&rng) - 0.5);
            q[k] = a[k] + size * (cb_test_uniform(&rng) - 0.5);
            p[k] = a[k] + 2 * size * (cb_test_uniform(&rng) - 0.3);
        }
        double thin = kind == 1 ? 1e-2 : kind == 2 ? 1e-5 : 0.0, s = cb_test_uniform(&rng);
        for (int k = 0; k < 3 && kind >= 1 && kind <= 3; k++) q[k] = a[k] + s * (b[k] - a[k]) + thin * (q[k] - a[k]);
        for (int k = 0; k < 3 && kind == 4; k++) b[k] = q[k] = a[k];
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < 3; k++) xr[4 * i + j][k] *= scale;
        fr[i][0] = 4 * i + 1, fr[i][1] = 4 * i + 2, fr[i][2] = 4 * i + 3;
        pr[i][0] = 4 * i, pr[i][1] = i;
    }
    long rwrong = 0, rfar = 0;
    for (int w = 1; w <= 8; w *= 2) {
        cb_step_contact_far_bits(w, (const double (*)[3])xr, (const int (*)[3])fr, (const int (*)[2])pr, NR, d * d,
                                 bits);
        for (int i = 0; i < NR; i++) {
            int far = cb_step_contact_far(xr[4 * i], xr[4 * i + 1], xr[4 * i + 2], xr[4 * i + 3], d * d);
            rwrong += far != ((bits[i >> 3] >> (i & 7)) & 1);
            rfar += far;
        }
    }
    fprintf(stderr, "  widths: %ld pair-set mismatches, far bits %ld of %ld pairs differ (%ld far), random triangles "
                    "%ld differ (%ld far of %d x 4), %ld contacts, %ld steps differing\n",
            mismatches, farwrong, farpairs, fars, rwrong, rfar, NR, contacts, differ);
    CU_ASSERT(contacts > 0);
    CU_ASSERT(fars > 0 && fars < farpairs);
    CU_ASSERT(rfar > 0 && rfar < 4 * NR);
    CU_ASSERT_EQUAL(mismatches, 0);
    CU_ASSERT_EQUAL(farwrong, 0);
    CU_ASSERT_EQUAL(rwrong, 0);
    CU_ASSERT_EQUAL(differ, 0);
    free(xr);
    free(fr);
    free(pr);
    free(bits);
    twin_close(&T);
}

/* The far bounds of a pass taken up front (solvers/step_far.c) and taken again for a
 * pair an earlier pair of the pass moved a vertex of (the stamps), against each pair's
 * bound taken when the pair is used (width 0, as before the up-front bounds): the
 * crumpled cloth's results bit for bit at widths 8 and 4 in turn (capped by the CPU),
 * with bounds taken again on the way (else the stamps go untested). Using every pair's
 * start-of-pass bit fails here (review of the up-front bounds: no test saw it). */
static void test_contact_far_retaken(void)
{
    contact_twin T;
    CU_ASSERT_FATAL(twin_open(&T, 24, 1.0, 0.006, 9, 0.15) == 0);
    CU_ASSERT_EQUAL(cb_step_contact_set_width(T.ca, 0), 1);
    uint64_t rng = 977;
    long differ = 0, contacts = 0;
    for (int step = 0; step < 20; step++) {
        twin_jitter(&T, &rng);
        cb_step_contact_set_width(T.cb, step & 1 ? 4 : 8);
        int na = 0;
        differ += twin_apply(&T, &na);
        contacts += na;
    }
    long again = cb_step_contact_retaken(T.cb);
    fprintf(stderr, "  far bounds taken again: %ld; %ld contacts, %ld steps differing from the per-pair bounds\n", again,
            contacts, differ);
    CU_ASSERT(contacts > 0);
    CU_ASSERT(again > 0);
    CU_ASSERT_EQUAL(cb_step_contact_retaken(T.ca), 0);
    CU_ASSERT_EQUAL(differ, 0);
    twin_close(&T);
}

CB_TEST_MAIN("step_contact",
             CB_TEST(test_contact_cache_exact),
             CB_TEST(test_contact_rigid_cache_and_far_bound),
             CB_TEST(test_contact_collider_keeps_layers),
             CB_TEST(test_contact_grid_equals_hash),
             CB_TEST(test_contact_vector_widths), CB_TEST(test_contact_far_retaken))
