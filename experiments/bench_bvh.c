/* experiments/bench_bvh.c — BVH timing: `void cb_bench_bvh(FILE *out, int quick)` prints
 * CSV lines `name,triangles,bv,seconds` for build, refit, self query (triangle pairs)
 * and the exact self-intersection count (cb_selfcheck_intersections, which rebuilds
 * its tree each call), on a crumpled cloth of about 10k, 40k and 100k triangles
 * (quick: 10k only), with AABB and 18-DOP volumes. Each time is the median of several
 * repetitions, single thread.
 *
 * The crumpled cloth (contact/testmesh.h): a unit grid displaced by six random
 * sinusoidal modes (fixed generator state 12345, wavelengths 1/3..1, amplitude 0.12 per
 * component), which folds it through itself; volumes are inflated by 1 mm (a 2 mm
 * thick cloth). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "contact/bvh.h"
#include "contact/selfcheck.h"
#include "contact/testmesh.h"
#include "core/error.h"
#include "core/mesh.h"

void cb_bench_bvh(FILE *out, int quick);

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
        cb_mesh *m = NULL;
        double (*x)[3] = NULL;
        uint64_t state = 12345;
        cb_error err = {0};
        if (cb_testmesh_grid(sizes[si], sizes[si], 1.0, CB_DIAG_ALTERNATE, &m, &err) ||
            cb_testmesh_crumple(m, 0.12, &state, &x, &err)) {
            fprintf(stderr, "bench_bvh: %s\n", err.message);
            free(x);
            cb_mesh_free(&m);
            return;
        }
        for (int ki = 0; ki < 2; ki++) bench_one(out, m, (const double (*)[3])x, kinds[ki]);
        free(x);
        cb_mesh_free(&m);
    }
}
