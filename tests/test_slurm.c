/* tests/test_slurm.c — `clothbench submit --slurm` on a real Slurm: a throwaway
 * single-node cluster (tests/slurm_cluster.sh: own munge key and socket, own
 * slurm.conf, spool, state, logs and ports, daemons stopped by pid at the end) runs a
 * small sweep as a 3-task array plus the merge job; then every run of the experiment is
 * in the index exactly once, ok, and the array's log files and the merge log exist.
 * Where Slurm is not installed the suite fails in CI (CI=true) and says why, and passes
 * with a note elsewhere. */
#include "cb_test.h"

#include <time.h>

static char out[65536];

#define sh(...) cb_test_shell(out, sizeof out, __VA_ARGS__)

static void test_submit_on_a_real_cluster(void)
{
    if (sh("command -v slurmctld && command -v slurmd && command -v munged && command -v sbatch")) {
        const char *ci = getenv("CI");
        if (ci && !strcmp(ci, "true")) CU_FAIL("Slurm is not installed: experiments/install-deps.sh installs it");
        printf("\n  skipped: Slurm not installed (apt install slurmctld slurmd slurm-client munge); CI fails here\n");
        return;
    }
    char dir[1024], conf[1100], out_dir[1100], exp[1100];
    snprintf(dir, sizeof dir, "%s/slurm_cluster", cb_test_tmpdir());
    snprintf(conf, sizeof conf, "%s/slurm.conf", dir);
    snprintf(out_dir, sizeof out_dir, "%s/sweep", dir);
    int rc = sh("bash tests/slurm_cluster.sh start %s 2>&1", dir);
    if (rc) fprintf(stderr, "  %s\n", out);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    snprintf(exp, sizeof exp, "%s/slurm_exp.yaml", dir);
    FILE *f = fopen(exp, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fprintf(f, "name: slurmtest\nscenes: [data/scenes/hanging.yaml]\nsolvers: [explicit, pbd]\n"
               "set: {duration: 0.05, cloth.grid.nx: 6, cloth.grid.ny: 6}\n"
               "grid:\n  cloth.stretch: [400, 700, 1000]\n");
    fclose(f);
    rc = sh("SLURM_CONF=%s %s submit %s --slurm --tasks 3 -o %s 2>&1", conf, cb_test_program(), exp, out_dir);
    if (rc) fprintf(stderr, "  %s\n", out);
    CU_ASSERT_EQUAL(rc, 0);
    long array_id = -1, merge_id = -1;
    const char *p = strstr(out, "array job ");
    if (p) sscanf(p, "array job %ld (tasks 0-2), merge job %ld", &array_id, &merge_id);
    CU_ASSERT(array_id > 0 && merge_id > 0);
    /* wait for both jobs to leave the queue: an event; the bound (3000 looks at the queue,
     * over 10 minutes) only keeps a broken cluster from hanging the suite, it assumes no
     * speed (2 minutes had been tight on a loaded machine) */
    int left = 1;
    for (int i = 0; i < 3000 && left; i++) {
        struct timespec ts = {0, 200000000};
        nanosleep(&ts, NULL);
        if (sh("SLURM_CONF=%s squeue -h -j %ld,%ld 2>/dev/null | wc -l", conf, array_id, merge_id) == 0)
            left = atoi(out) > 0;
    }
    CU_ASSERT_EQUAL(left, 0);
    char index[1200], log[1300];
    snprintf(index, sizeof index, "%s/index.csv", out_dir);
    CU_ASSERT_EQUAL(cb_test_count_lines(index, ",ok,"), 6);            /* every run ok ... */
    CU_ASSERT_EQUAL(cb_test_count_lines(index, "hanging__"), 6);       /* ... each exactly once */
    CU_ASSERT_EQUAL(cb_test_count_lines(index, ",running,"), 0);       /* no stale row */
    CU_ASSERT_EQUAL(cb_test_count_lines(index, "pending"), 0);
    for (int t = 0; t < 3; t++) {
        snprintf(log, sizeof log, "%s/slurm/logs/%ld_%d.out", out_dir, array_id, t);
        CU_ASSERT(cb_test_count_lines(log, "") >= 0); /* the task's log exists */
    }
    snprintf(log, sizeof log, "%s/slurm/logs/%ld-merge.out", out_dir, merge_id);
    CU_ASSERT(cb_test_count_lines(log, "") >= 0);
    /* N is fixed in the script (resubmitting one task keeps the same shards) */
    CU_ASSERT_EQUAL(sh("grep -c 'shard ${SLURM_ARRAY_TASK_ID}/3' %s/slurm/array.sh", out_dir), 0);
    CU_ASSERT_EQUAL(sh("bash tests/slurm_cluster.sh stop %s 2>&1", dir), 0);
}

static void test_dry_run_and_bad_input(void)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/slurm_dry", cb_test_tmpdir());
    int rc = sh("%s submit experiments/figures/pbd_balloon.yaml --slurm --dry-run --tasks 2 -o %s "
                "--sbatch-args '--partition=short --time=0:10:00' 2>&1", cb_test_program(), dir);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "3 runs as 2 array tasks"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "sbatch --parsable --partition=short --time=0:10:00"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "--dependency=afterany:"));
    CU_ASSERT_EQUAL(sh("grep -c -e '--array=0-1' -e '--shard ${SLURM_ARRAY_TASK_ID}/2' %s/slurm/array.sh", dir), 0);
    CU_ASSERT_EQUAL(atoi(out), 2);
    CU_ASSERT_EQUAL(sh("grep -c -e ' --index' %s/slurm/merge.sh", dir), 0);
    CU_ASSERT_EQUAL(sh("%s submit experiments/figures/pbd_balloon.yaml 2>&1", cb_test_program()), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "--slurm"));
    CU_ASSERT_EQUAL(sh("%s submit experiments/figures/pbd_balloon.yaml --slurm --tasks 0 2>&1", cb_test_program()), 2);
}

CB_TEST_MAIN("slurm",
             CB_TEST(test_dry_run_and_bad_input),
             CB_TEST(test_submit_on_a_real_cluster))
