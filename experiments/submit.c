/* experiments/submit.c — a sweep submitted to Slurm (submit.h). */
#define _DEFAULT_SOURCE /* realpath(3) */
#include "experiments/submit.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/files.h"

/* Absolute form of path (realpath when it exists, else cwd/path). */
static void absolute(const char *path, char *out, size_t n)
{
    char buf[PATH_MAX];
    if (realpath(path, buf)) {
        snprintf(out, n, "%s", buf);
        return;
    }
    char cwd[PATH_MAX] = ".";
    if (!getcwd(cwd, sizeof cwd)) snprintf(cwd, sizeof cwd, ".");
    if (path[0] == '/') snprintf(out, n, "%s", path);
    else snprintf(out, n, "%s/%s", cwd, path);
}

/* Writes s single-quoted for sh. */
static void sh_quote(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'') fputs("'\\''", f);
        else fputc(*s, f);
    }
    fputc('\'', f);
}

static int write_script(const char *path, const char *job, const char *array_line, const char *logs,
                        const char *log_name, const char *chdir, const char *program, const char *exp,
                        const char *output, const char *mode, const cb_submit_options *o, cb_error *err)
{
    FILE *f = fopen(path, "w");
    if (!f) return CB_FAIL(err, CB_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
    fprintf(f, "#!/bin/bash\n"
               "# Written by clothbench submit; resubmitting one task is safe: sbatch --array=K %s\n"
               "#SBATCH --job-name=%s\n", path, job);
    if (array_line) fprintf(f, "#SBATCH %s\n", array_line);
    fprintf(f, "#SBATCH --output=%s/%s\n#SBATCH --chdir=%s\nset -eu\nexec ", logs, log_name, chdir);
    sh_quote(f, program);
    fputs(" sweep ", f);
    sh_quote(f, exp);
    fputs(" -o ", f);
    sh_quote(f, output);
    for (int i = 0; i < o->nsets; i++) {
        fputs(" --set ", f);
        sh_quote(f, o->sets[i]);
    }
    fprintf(f, " %s\n", mode);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) return CB_FAIL(err, CB_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
    return CB_OK;
}

/* argv for sbatch: "sbatch --parsable [extra...] [dependency] script" (extra split on blanks). */
static int run_sbatch(const char *extra, const char *dependency, const char *script, char *id, size_t n,
                      cb_error *err)
{
    char *copy = strdup(extra ? extra : "");
    if (!copy) return CB_FAIL(err, CB_ERR_NOMEM, "out of memory");
    const char *argv[64];
    int argc = 0;
    argv[argc++] = "sbatch";
    argv[argc++] = "--parsable";
    for (char *t = strtok(copy, " \t"); t && argc < 60; t = strtok(NULL, " \t")) argv[argc++] = t;
    if (dependency) argv[argc++] = dependency;
    argv[argc++] = script;
    argv[argc] = NULL;
    int pipefd[2];
    if (pipe(pipefd)) {
        free(copy);
        return CB_FAIL(err, CB_ERR_IO, "pipe: %s", strerror(errno));
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pipefd[1], 1);
        dup2(pipefd[1], 2);
        close(pipefd[0]);
        execvp("sbatch", (char *const *)argv);
        _exit(127);
    }
    close(pipefd[1]);
    char buf[2048];
    size_t got = 0;
    ssize_t r;
    while (got + 1 < sizeof buf && (r = read(pipefd[0], buf + got, sizeof buf - 1 - got)) > 0) got += (size_t)r;
    buf[got] = '\0';
    close(pipefd[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    free(copy);
    buf[strcspn(buf, "\n")] = '\0';
    if (pid < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || !buf[0])
        return CB_FAIL(err, CB_ERR_IO, "sbatch %s failed: %s", script, buf[0] ? buf : "no output");
    char *semi = strchr(buf, ';'); /* --parsable: "jobid[;cluster]" */
    if (semi) *semi = '\0';
    size_t len = strlen(buf);
    if (len >= n) return CB_FAIL(err, CB_ERR_IO, "sbatch %s: unexpected output: %.200s", script, buf);
    memcpy(id, buf, len + 1);
    return CB_OK;
}

int cb_submit_slurm(const cb_experiment *e, const cb_submit_options *o, FILE *out, cb_error *err)
{
    if (!e || !o || !o->program || !o->experiment)
        return CB_FAIL(err, CB_ERR_INPUT, "%s:%d: cb_submit_slurm: NULL argument", __FILE__, __LINE__);
    long tasks = o->tasks > 0 ? o->tasks : (e->nruns < 16 ? e->nruns : 16);
    if (tasks < 1) tasks = 1;
    if (tasks > e->nruns && e->nruns > 0) tasks = e->nruns;
    char output[PATH_MAX], exp[PATH_MAX], cwd[PATH_MAX], dir[PATH_MAX + 16], logs[PATH_MAX + 32];
    char array_sh[PATH_MAX + 64], merge_sh[PATH_MAX + 64], arr[64], job[300];
    int rc = cb_mkdir_p(e->output, err);
    if (rc) return rc;
    absolute(e->output, output, sizeof output);
    absolute(o->experiment, exp, sizeof exp);
    if (!getcwd(cwd, sizeof cwd)) return CB_FAIL(err, CB_ERR_IO, "getcwd: %s", strerror(errno));
    snprintf(dir, sizeof dir, "%s/slurm", output);
    snprintf(logs, sizeof logs, "%s/logs", dir);
    if ((rc = cb_mkdir_p(logs, err))) return rc;
    snprintf(array_sh, sizeof array_sh, "%s/array.sh", dir);
    snprintf(merge_sh, sizeof merge_sh, "%s/merge.sh", dir);
    snprintf(arr, sizeof arr, "--array=0-%ld", tasks - 1);
    snprintf(job, sizeof job, "cb-%.200s", e->name);
    char mode[64];
    snprintf(mode, sizeof mode, "--shard ${SLURM_ARRAY_TASK_ID}/%ld -q", tasks);
    if ((rc = write_script(array_sh, job, arr, logs, "%A_%a.out", cwd, o->program, exp, output, mode, o, err)) ||
        (rc = write_script(merge_sh, job, NULL, logs, "%j-merge.out", cwd, o->program, exp, output, "--index", o,
                           err)))
        return rc;
    const char *extra = o->sbatch_args ? o->sbatch_args : "";
    fprintf(out, "submit %s: %ld runs as %ld array tasks (shard I/%ld each), then a merge job\n"
                 "  scripts: %s, %s; logs: %s\n", e->name, e->nruns, tasks, tasks, array_sh, merge_sh, logs);
    if (o->dry_run) {
        fprintf(out, "  would run: sbatch --parsable %s%s%s\n"
                     "             sbatch --parsable %s%s--dependency=afterany:<array job id> %s\n",
                extra, extra[0] ? " " : "", array_sh, extra, extra[0] ? " " : "", merge_sh);
        return CB_OK;
    }
    if (system("command -v sbatch >/dev/null 2>&1") != 0)
        return CB_FAIL(err, CB_ERR_INPUT, "sbatch is not on PATH: install Slurm's client (Debian: slurm-client) or "
                       "use --dry-run to write the scripts only");
    char id1[128], id2[128], dep[200];
    if ((rc = run_sbatch(extra, NULL, array_sh, id1, sizeof id1, err))) return rc;
    snprintf(dep, sizeof dep, "--dependency=afterany:%s", id1);
    if ((rc = run_sbatch(extra, dep, merge_sh, id2, sizeof id2, err))) return rc;
    fprintf(out, "  array job %s (tasks 0-%ld), merge job %s (after the array ends)\n"
                 "  watch:  squeue -j %s,%s    sacct -j %s,%s\n"
                 "  index:  %s/index.csv (every task updates it; the merge job rewrites it at the end)\n"
                 "  resubmit one task: sbatch --array=K %s\n",
            id1, tasks - 1, id2, id1, id2, id1, id2, output, array_sh);
    return CB_OK;
}
