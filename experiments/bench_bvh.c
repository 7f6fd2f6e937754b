/* experiments/bench_bvh.c — BVH timing: `void cb_bench_bvh(FILE *out, int quick)` prints
 * CSV lines `name,triangles,bv,seconds` for build, refit, self query (triangle pairs)
 * and the exact self-intersection count (cb_selfcheck_intersections, which rebuilds
 * its tree each call), on a crumpled cloth of about 10k, 40k and 100k triangles
 * (quick: 10k only), with AABB and 18-DOP volumes. Each time is the median of several
 * repetitions, single thread.
 *
 * The crumpled cloth: a unit grid displaced by six random sinusoidal modes (fixed seed,
 * wavelengths 1/3..1, amplitude 0.12 per component), which folds it through itself;
 * volumes are inflated by 1 mm (a 2 mm thick cloth). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "contact/bvh.h"
#include "contact/selfcheck.h"
#include "core/error.h"
#include "core/mesh.h"

void cb_bench_bvh(FILE *out, int quick);

static uint64_t bench_bvh_rng;

static double bench_bvh_uniform(void)
{
    uint64_t z = (bench_bvh_rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

static void crumple(const cb_mesh *m, double (*x)[3])
{
    const double two_pi = 6.283185307179586;
    double k[6][2], ph[6], a[6][3];
    bench_bvh_rng = 12345;
    for (int i = 0; i < 6; i++) {
        double ang = two_pi * bench_bvh_uniform(), mag = two_pi * (1.0 + 2.0 * bench_bvh_uniform());
        k[i][0] = mag * cos(ang);
        k[i][1] = mag * sin(ang);
        ph[i] = two_pi * bench_bvh_uniform();
        for (int c = 0; c < 3; c++) a[i][c] = 0.12 * (2 * bench_bvh_uniform() - 1);
    }
    for (int v = 0; v < m->nv; v++) {
        double u = m->x[v][0], w = m->x[v][1];
        x[v][0] = u;
        x[v][1] = w;
        x[v][2] = 0;
        for (int i = 0; i < 6; i++) {
            double s = sin(k[i][0] * u + k[i][1] * w + ph[i]);
            for (int c = 0; c < 3; c++) x[v][c] += a[i][c] * s;
        }
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

#define BENCH_REPS_MAX 31

static void bench_one(FILE *out, const cb_mesh *m, const double (*x)[3], cb_bv_kind kind)
{
    const double margin = 0.001;
    const char *bv = cb_bv_name(kind);
    const int big = m->nf > 50000;
    cb_error err = {0};
    cb_bvh *b = NULL;
    cb_bvh_result *r = NULL;
    cb_selfcheck *s = NULL;
    double t[BENCH_REPS_MAX];
    if (cb_bvh_create(m, kind, &b, &err) || cb_bvh_result_create(&r, &err) || cb_selfcheck_create(m, kind, &s, &err)) {
        fprintf(stderr, "bench_bvh: %s\n", err.message);
        goto done;
    }
    int n = big ? 5 : 11;
    for (int i = 0; i < n; i++) {
        double t0 = cb_wall_time();
        cb_bvh_build(b, x, margin, &err);
        t[i] = cb_wall_time() - t0;
    }
    fprintf(out, "build,%d,%s,%.6g\n", m->nf, bv, median(t, n));
    n = 31;
    for (int i = 0; i < n; i++) {
        double t0 = cb_wall_time();
        cb_bvh_refit(b, x, margin, &err);
        t[i] = cb_wall_time() - t0;
    }
    fprintf(out, "refit,%d,%s,%.6g\n", m->nf, bv, median(t, n));
    n = big ? 5 : 11;
    for (int i = 0; i < n; i++) {
        double t0 = cb_wall_time();
        if (cb_bvh_self_query(b, CB_BVH_TT, r, &err)) {
            fprintf(stderr, "bench_bvh: %s\n", err.message);
            goto done;
        }
        t[i] = cb_wall_time() - t0;
    }
    fprintf(out, "self_query,%d,%s,%.6g\n", m->nf, bv, median(t, n));
    n = big ? 3 : 5;
    for (int i = 0; i < n; i++) {
        long count;
        double t0 = cb_wall_time();
        if (cb_selfcheck_intersections(s, x, &count, &err) < 0) {
            fprintf(stderr, "bench_bvh: %s\n", err.message);
            goto done;
        }
        t[i] = cb_wall_time() - t0;
    }
    fprintf(out, "self_intersections,%d,%s,%.6g\n", m->nf, bv, median(t, n));
done:
    cb_selfcheck_free(&s);
    cb_bvh_result_free(&r);
    cb_bvh_free(&b);
}

void cb_bench_bvh(FILE *out, int quick)
{
    /* 2 (n-1)^2 triangles: 10082, 39762, 100352 */
    const int sizes[3] = {72, 142, 225};
    const cb_bv_kind kinds[2] = {CB_BV_AABB, CB_BV_KDOP18};
    fprintf(out, "name,triangles,bv,seconds\n");
    for (int si = 0; si < (quick ? 1 : 3); si++) {
        cb_grid_def d = cb_default_grid_def();
        d.nx = d.ny = sizes[si];
        d.size[0] = d.size[1] = 1.0;
        d.origin[0] = d.origin[1] = d.origin[2] = 0.0;
        d.plane = CB_PLANE_XY;
        cb_mesh *m = NULL;
        cb_error err = {0};
        if (cb_mesh_grid(&d, &m, &err)) {
            fprintf(stderr, "bench_bvh: %s\n", err.message);
            return;
        }
        double (*x)[3] = cb_calloc((size_t)m->nv, sizeof *x);
        if (!x) {
            cb_mesh_free(&m);
            return;
        }
        crumple(m, x);
        for (int ki = 0; ki < 2; ki++) bench_one(out, m, (const double (*)[3])x, kinds[ki]);
        free(x);
        cb_mesh_free(&m);
    }
}
