/* experiments/submit.h — `clothbench submit EXPERIMENT.yaml --slurm`: a sweep as a Slurm
 * job array (one shard per task) plus a merge job that rebuilds the index once every task
 * has ended (afterany). The scripts go into <output>/slurm/ with absolute paths and N
 * fixed in them, so resubmitting one task (sbatch --array=K array.sh) is safe. */
#ifndef CB_SUBMIT_H
#define CB_SUBMIT_H

#include <stdio.h>

#include "core/error.h"
#include "experiments/sweep.h"

typedef struct cb_submit_options {
    int tasks;                /* array tasks = shards (0: min(runs, 16)) */
    const char *sbatch_args;  /* extra sbatch options for both jobs, split on blanks (NULL: none) */
    int dry_run;              /* write the scripts, print the sbatch commands, submit nothing */
    const char *program;      /* the clothbench executable (absolute path) */
    const char *experiment;   /* the experiment file as given */
    const char *const *sets;  /* --set overrides passed on to every task */
    int nsets;
} cb_submit_options;

/* Writes <output>/slurm/array.sh and merge.sh (and <output>/slurm/logs/), then submits
 * both with sbatch unless dry_run, printing the job ids and how to watch them to out.
 * Errors: no sbatch on PATH (CB_ERR_INPUT, naming the packages), sbatch failing
 * (CB_ERR_IO with its output), files that cannot be written. */
int cb_submit_slurm(const cb_experiment *e, const cb_submit_options *o, FILE *out, cb_error *err);

#endif
