/* experiments/bench.h — `clothbench bench`: the standard timing table.
 *
 * Every registered solver on the standard cases (cloth hanging from two corners;
 * cloth lying on a sphere, in contact from the first step; Liu et al.'s curtain) at
 * grid sizes of 32^2, 64^2, 128^2 and 256^2 vertices (1k, 4k, 16k, 64k; the curtain
 * at 81^2 instead of 64^2; --quick: 1k only; --size replaces the sizes). Each
 * (case, size, solver) runs in a child process of its own: `repeats` short runs
 * (cb_run with max_steps and no output file), the median over runs of the mean ms per
 * step of steps 2..N (the steady state; the first step, which holds one-off work such as
 * fms's and newton's first factorization, is first_step_ms), and the peak resident
 * memory of that process (VmHWM). The rules of bench.c (README "Benchmarks") run some
 * rows of the standard cases other than the defaults, saying why in the row's message:
 * fewer steps and repeats where a step takes seconds (the row's steps and repeats
 * columns are what it ran), the run health check off where the method's defaults break
 * it there ("timed, not judged", as the named case pbd_bend), or not timed (status
 * "skipped"); --max-vertices skips larger sizes. CSV, one row per (case, size, solver):
 *
 *   name,scene,solver,nx,vertices,steps,repeats,median_ms_per_step,min_ms_per_step,
 *   max_ms_per_step,peak_rss_mb,create_ms,first_step_ms,stage_ms_per_step,
 *   scaling_exponent,status,message
 *
 * scaling_exponent is cb_bench_scaling_exponent over the solver's timed rows of the case
 * so far (this size and the smaller ones, median_ms_per_step): on a solver's last row,
 * its exponent over the case's sizes (NaN on the first); the same is printed on
 * `progress` at the end of each case.
 * create_ms is the solver's create (schedules, symbolic work; the least of the
 * repeats), first_step_ms the first step (least of the repeats; fms: create_ms +
 * first_step_ms is the prefactorization of Liu et al.); stage_ms_per_step is "name=ms;name=ms..." of the solver's named stages per
 * step over steps 2..N, from the fastest repeat (so they add up to about min_ms_per_step).
 * Named comparison cases (pbd_bend, fms_curtain, fms_classic: one solver each, the cases
 * of experiments/refbench/) run only when --case names them.
 */
#ifndef CB_BENCH_H
#define CB_BENCH_H

#include <stdio.h>
#include "core/error.h"

#define CB_BENCH_MAX_SETS 16
#define CB_BENCH_MAX_SIZES 16

typedef struct cb_bench_options {
    int quick;             /* small sizes only, fewer steps */
    int steps;             /* steps per run (0: default 10, quick 5) */
    int repeats;           /* runs per row (0: default 5, quick 3) */
    int max_vertices;      /* > 0: skip sizes above this for every solver */
    const char *data_dir;  /* folder holding scenes/ */
    const char *const *solvers; int nsolvers;  /* only these (nsolvers 0: all registered) */
    const char *const *cases; int ncases;      /* only these case names (0: all) */
    int sizes[CB_BENCH_MAX_SIZES]; int nsizes; /* grid sizes nx = ny replacing each case's (0: defaults) */
    const char *const *sets; int nsets;        /* extra --set overrides for every row */
} cb_bench_options;

cb_bench_options cb_default_bench_options(void);

/* Writes the CSV table (header first) to out, one progress line per row to
 * `progress` (may be NULL). Returns 0 when the table was produced (rows may carry
 * status "error" or "diverged"; *nfailed counts them), negative on bad input. */
int cb_bench_run(const cb_bench_options *o, FILE *out, FILE *progress, int *nfailed, cb_error *err);

/* The scaling exponent p of t = c n^p: the least-squares slope of log ms on log vertices
 * over the points (vertices[i], ms[i]) with both positive and finite (the others are left
 * out); NaN with fewer than two distinct vertex counts among them. */
double cb_bench_scaling_exponent(const double *vertices, const double *ms, int n);

/* Contact-library benchmarks (experiments/bench_ccd.c, experiments/bench_bvh.c). */
void cb_bench_ccd(FILE *out, int quick);
void cb_bench_bvh(FILE *out, int quick);

#endif
