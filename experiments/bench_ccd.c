/* experiments/bench_ccd.c — CCD throughput: `void cb_bench_ccd(FILE *out, int quick)`
 * prints one CSV line `name,queries,seconds,queries_per_s` (no header) for each of:
 * near-miss vertex-triangle, near-miss edge-edge, true-crossing vertex-triangle,
 * true-crossing edge-edge. Corpora are generated here from a fixed seed; every near miss
 * is a miss by construction (relative motion is a translation whose line crosses the
 * other primitive's plane outside it, or never crosses it), every crossing a hit. A
 * result that contradicts the construction is reported on an extra `error,...` line. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "contact/ccd.h"
#include "core/error.h"
#include "core/vec3.h"

void cb_bench_ccd(FILE *out, int quick);

typedef struct { double x0[4][3], x1[4][3]; } bench_pair;

static uint64_t bench_rng = 0x5DEECE66Dull;
static double bench_uniform(void)
{
    uint64_t x = bench_rng;
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    bench_rng = x;
    return (double)(x >> 11) * 0x1.0p-53;
}

/* Random rotation and translation of a local-frame pair, plus a common velocity. */
static void place(bench_pair *P, const double l0[4][3], const double l1[4][3])
{
    double q[4], n = 0;
    for (int k = 0; k < 4; k++) { q[k] = bench_uniform() - 0.5; n += q[k] * q[k]; }
    n = sqrt(n);
    double w = q[0] / n, x = q[1] / n, y = q[2] / n, z = q[3] / n;
    double R[3][3] = {{1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)},
                      {2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)},
                      {2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)}};
    double T[3], V[3];
    for (int k = 0; k < 3; k++) { T[k] = 4 * bench_uniform() - 2; V[k] = 0.2 * (bench_uniform() - 0.5); }
    for (int i = 0; i < 4; i++)
        for (int r = 0; r < 3; r++) {
            P->x0[i][r] = R[r][0] * l0[i][0] + R[r][1] * l0[i][1] + R[r][2] * l0[i][2] + T[r];
            P->x1[i][r] = R[r][0] * l1[i][0] + R[r][1] * l1[i][1] + R[r][2] * l1[i][2] + T[r] + V[r];
        }
}

/* Vertex 0 against the triangle (0,0,0), (1,0,0), (u,v,0) with v > 0, static in the
 * local frame. miss: crossing the plane beside the edge y = 0 at distance h, or passing
 * at height h without crossing; hit: crossing the interior. */
static void make_vt(bench_pair *P, int hit)
{
    double l0[4][3] = {{0}}, l1[4][3] = {{0}};
    double u = bench_uniform(), v = 0.3 + 0.7 * bench_uniform();
    double tri[3][3] = {{0, 0, 0}, {1, 0, 0}, {u, v, 0}};
    for (int i = 1; i < 4; i++)
        for (int k = 0; k < 3; k++) l0[i][k] = l1[i][k] = tri[i - 1][k];
    double tc = 0.2 + 0.6 * bench_uniform(), h = pow(10.0, -3.0 + 2.0 * bench_uniform());
    double X[3], d[3];
    if (hit) { /* a point inside, crossed at time tc */
        double s = bench_uniform(), t = bench_uniform() * (1 - s);
        for (int k = 0; k < 3; k++) X[k] = s * tri[1][k] + t * tri[2][k] + (1 - s - t) * tri[0][k];
        d[0] = bench_uniform() - 0.5; d[1] = bench_uniform() - 0.5; d[2] = -(0.3 + bench_uniform());
    } else if (bench_uniform() < 0.5) { /* crosses the plane at h beside the edge y = 0 */
        X[0] = 0.1 + 0.8 * bench_uniform(); X[1] = -h; X[2] = 0;
        d[0] = bench_uniform() - 0.5; d[1] = bench_uniform() - 0.5; d[2] = -(0.3 + bench_uniform());
    } else { /* flies over at height h */
        X[0] = u * 0.5 + 0.3 * (bench_uniform() - 0.5); X[1] = 0.2 * v; X[2] = h;
        d[0] = bench_uniform() - 0.5; d[1] = bench_uniform() - 0.5; d[2] = 0;
    }
    for (int k = 0; k < 3; k++) { l0[0][k] = X[k] - tc * d[k]; l1[0][k] = X[k] + (1 - tc) * d[k]; }
    place(P, l0, l1);
}

/* Edge (0,0,0)-(1,0,0) static; the other edge's xy-projection crosses the x axis at
 * x = c (inside (0,1) for a hit, 1 + h for a miss) while it moves down in z. */
static void make_ee(bench_pair *P, int hit)
{
    double l0[4][3] = {{0, 0, 0}, {1, 0, 0}}, l1[4][3] = {{0, 0, 0}, {1, 0, 0}};
    double h = pow(10.0, -3.0 + 2.0 * bench_uniform());
    double c = hit ? 0.1 + 0.8 * bench_uniform() : 1.0 + h;
    double th = 0.3 + 2.5 * bench_uniform(), len = 0.5 + bench_uniform(), f = bench_uniform();
    double z0 = 0.2 + 0.5 * bench_uniform();
    double z1 = (hit || bench_uniform() < 0.5) ? -(0.2 + 0.5 * bench_uniform()) : h;
    for (int e = 0; e < 2; e++) {
        double s = (e == 0 ? -f : 1 - f) * len;
        double p[3] = {c + s * cos(th), s * sin(th), 0};
        for (int k = 0; k < 3; k++) { l0[2 + e][k] = p[k]; l1[2 + e][k] = p[k]; }
        l0[2 + e][2] = z0;
        l1[2 + e][2] = z1;
    }
    place(P, l0, l1);
}

static void run_one(FILE *out, const char *name, int ee, int hit, int n)
{
    bench_pair *P = cb_calloc((size_t)n, sizeof *P);
    if (!P) { fprintf(out, "error,%s,out of memory\n", name); return; }
    for (int i = 0; i < n; i++) { if (ee) make_ee(&P[i], hit); else make_vt(&P[i], hit); }
    cb_ccd_opts o = cb_default_ccd_opts();
    int hits = 0;
    double t0 = cb_wall_time();
    for (int i = 0; i < n; i++) {
        double toi;
        const bench_pair *q = &P[i];
        if (ee) hits += cb_ccd_edge_edge(q->x0[0], q->x1[0], q->x0[1], q->x1[1], q->x0[2], q->x1[2], q->x0[3], q->x1[3], &o, &toi);
        else hits += cb_ccd_vertex_triangle(q->x0[0], q->x1[0], q->x0[1], q->x1[1], q->x0[2], q->x1[2], q->x0[3], q->x1[3], &o, &toi);
    }
    double dt = cb_wall_time() - t0;
    fprintf(out, "%s,%d,%.6f,%.0f\n", name, n, dt, dt > 0 ? n / dt : 0.0);
    if (hits != (hit ? n : 0)) fprintf(out, "error,%s,%d of %d queries reported contact\n", name, hits, n);
    free(P);
}

void cb_bench_ccd(FILE *out, int quick)
{
    int n = quick ? 20000 : 500000;
    bench_rng = 0x5DEECE66Dull;
    run_one(out, "ccd_near_miss_vertex_triangle", 0, 0, n);
    run_one(out, "ccd_near_miss_edge_edge", 1, 0, n);
    run_one(out, "ccd_crossing_vertex_triangle", 0, 1, n);
    run_one(out, "ccd_crossing_edge_edge", 1, 1, n);
}
