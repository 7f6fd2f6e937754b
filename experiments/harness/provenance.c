/* experiments/harness/provenance.c — see provenance.h. The commit and build settings are baked in by
 * meson (experiments/harness/cb_git.h from vcs_tag, cb_build_info.h from configure_file); the library
 * versions are asked of the libraries themselves where they can tell (CHOLMOD,
 * OpenBLAS, HDF5, libyaml), so a run records what it linked, not what it compiled against. */
#define _DEFAULT_SOURCE /* gethostname */
#include "experiments/harness/provenance.h"

#include "core/error.h"

#include <cblas.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "cholmod.h"
#include "experiments/harness/cb_git.h"
#include "cb_build_info.h"

#ifndef CB_VERSION
#define CB_VERSION "unknown"
#endif

static void cpu_model(char *buf, size_t n)
{
    snprintf(buf, n, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10)) continue;
        const char *colon = strchr(line, ':');
        if (!colon) continue;
        colon++;
        while (*colon == ' ' || *colon == '\t') colon++;
        snprintf(buf, n, "%s", colon);
        buf[strcspn(buf, "\n")] = '\0';
        break;
    }
    fclose(f);
}

void cb_provenance_get(cb_provenance *p)
{
    memset(p, 0, sizeof *p);
    snprintf(p->git_commit, sizeof p->git_commit, "%s", CB_GIT_COMMIT[0] ? CB_GIT_COMMIT : "unknown");
    snprintf(p->version, sizeof p->version, "%s", CB_VERSION);
    snprintf(p->build_type, sizeof p->build_type, "%s", CB_BUILD_TYPE);
    snprintf(p->build_flags, sizeof p->build_flags, "%s", CB_BUILD_FLAGS);
    snprintf(p->compiler, sizeof p->compiler, "%s", CB_COMPILER_ID);
    int cv[3] = {0, 0, 0};
    cholmod_version(cv);
    unsigned hmaj = 0, hmin = 0, hrel = 0;
    H5get_libversion(&hmaj, &hmin, &hrel);
    const char *blas = openblas_get_config();
    snprintf(p->libraries, sizeof p->libraries, "CHOLMOD %d.%d.%d; OpenBLAS %s; HDF5 %u.%u.%u; libyaml %s",
             cv[0], cv[1], cv[2], blas ? blas : "unknown", hmaj, hmin, hrel, yaml_get_version_string());
#ifdef _OPENMP
    int omp = omp_get_max_threads(), cores = omp_get_num_procs();
#else
    int omp = 1, cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
#endif
    /* OpenBLAS's count is the solver's (`threads`, set around each CHOLMOD call: in
     * `parameters`), not a process setting */
    snprintf(p->threads, sizeof p->threads, "OpenMP %d (OMP_NUM_THREADS=%s); CHOLMOD and OpenBLAS: the solver's "
             "threads; %d cores", omp, getenv("OMP_NUM_THREADS") ? getenv("OMP_NUM_THREADS") : "unset", cores);
    if (gethostname(p->host, sizeof p->host - 1) != 0) snprintf(p->host, sizeof p->host, "unknown");
    cpu_model(p->cpu, sizeof p->cpu);
}

void cb_provenance_build_line(const cb_provenance *p, char *buf, size_t n)
{
    snprintf(buf, n, "%s %s %s [%s] %s; %s", p->git_commit, p->version, p->build_type, p->build_flags,
             p->compiler, p->libraries);
}

/* A word needs quotes unless it is made of characters the shell leaves alone. */
static int plain_word(const char *w)
{
    if (!w[0]) return 0;
    for (const char *c = w; *c; c++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%", *c))
            return 0;
    return 1;
}

char *cb_provenance_command_line(int argc, char **argv)
{
    size_t n = 1;
    for (int i = 0; i < argc; i++) n += 4 * strlen(argv[i] ? argv[i] : "") + 3;
    char *out = cb_malloc(n), *o = out;
    if (!out) return NULL;
    *o = '\0';
    for (int i = 0; i < argc; i++) {
        const char *w = argv[i] ? argv[i] : "";
        if (i) *o++ = ' ';
        if (plain_word(w)) {
            size_t l = strlen(w);
            memcpy(o, w, l);
            o += l;
            continue;
        }
        *o++ = '\'';
        for (const char *c = w; *c; c++) {
            if (*c == '\'') { memcpy(o, "'\\''", 4); o += 4; }
            else *o++ = *c;
        }
        *o++ = '\'';
    }
    *o = '\0';
    return out;
}

static char *g_command_line;

void cb_provenance_set_command_line(int argc, char **argv)
{
    free(g_command_line);
    g_command_line = cb_provenance_command_line(argc, argv);
}

const char *cb_provenance_get_command_line(void) { return g_command_line ? g_command_line : ""; }
