/* experiments/sweep_lock.c — the sweep's folder lock (sweep_internal.h). */
#include "experiments/sweep_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "contact/colliders.h"
#include "experiments/harness/h5attr.h"
#include "experiments/harness/registry.h"
#include "experiments/harness/run.h"
#include "core/files.h"
#include "core/scene.h"
#include "core/solver.h"
#include "core/yamltree.h"
#include "experiments/harness/run_summary.h"
#include "experiments/rerun.h"

/* ---------------------------------------------------------------- folder lock */

/* A sweep holds <output>/.sweep-lock-I-of-N (shard I of N) while it runs, holding
 * "pid host start-time". Two sweeps whose shards share a run (I = J mod gcd(N, M)) on
 * one folder deleted each other's files in progress; the second is refused, naming the
 * first. A lock whose process is gone (same host, no such pid) is stale and taken over;
 * one from another host is trusted (its process cannot be asked). Disjoint shards, on
 * one host or many, run side by side as before. */
static long gcd_long(long a, long b)
{
    while (b) {
        long t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static void lock_path(const cb_experiment *e, int shard, int nshards, char *buf, size_t n)
{
    snprintf(buf, n, "%s/.sweep-lock-%d-of-%d", e->output, shard, nshards);
}

int cb_sweep_sweep_lock(const cb_experiment *e, const cb_sweep_options *o, cb_error *err)
{
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) != 0) snprintf(host, sizeof host, "unknown");
    DIR *d = opendir(e->output);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        int j, m;
        char tail;
        if (sscanf(de->d_name, ".sweep-lock-%d-of-%d%c", &j, &m, &tail) != 2 || m < 1) continue;
        if ((o->shard - j) % gcd_long(o->nshards, m) != 0) continue; /* disjoint runs */
        char p[4400], text[512] = "";
        snprintf(p, sizeof p, "%s/%s", e->output, de->d_name);
        FILE *f = fopen(p, "r");
        if (f) {
            if (!fgets(text, sizeof text, f)) text[0] = '\0';
            fclose(f);
        }
        long pid = 0;
        char lhost[256] = "", since[64] = "";
        sscanf(text, "%ld %255s %63s", &pid, lhost, since);
        if (!strcmp(lhost, host) && pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
            remove(p); /* its sweep is gone: a crash or SIGKILL left the lock behind */
            continue;
        }
        closedir(d);
        return CB_FAIL(err, CB_ERR_INPUT, "%s: another sweep uses this output folder (shard %d/%d, pid %ld on %s, "
                       "since %s); wait for it, pick a shard it does not run, or remove %s if that process is "
                       "gone", e->output, j, m, pid, lhost[0] ? lhost : "?", since[0] ? since : "?", p);
    }
    if (d) closedir(d);
    char p[4400];
    lock_path(e, o->shard, o->nshards, p, sizeof p);
    int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0)
        return CB_FAIL(err, errno == EEXIST ? CB_ERR_INPUT : CB_ERR_IO, "%s: cannot take the sweep lock: %s",
                       p, strerror(errno));
    char text[512], since[64];
    time_t now = time(NULL);
    struct tm tm;
    if (!gmtime_r(&now, &tm) || !strftime(since, sizeof since, "%Y-%m-%dT%H:%M:%SZ", &tm)) snprintf(since, sizeof since, "?");
    int len = snprintf(text, sizeof text, "%ld %s %s\n", (long)getpid(), host, since);
    int bad = write(fd, text, (size_t)len) != len;
    close(fd);
    if (bad) {
        remove(p);
        return CB_FAIL(err, CB_ERR_IO, "%s: cannot write the sweep lock", p);
    }
    return CB_OK;
}

void cb_sweep_sweep_unlock(const cb_experiment *e, const cb_sweep_options *o)
{
    char p[4400];
    lock_path(e, o->shard, o->nshards, p, sizeof p);
    remove(p);
}
