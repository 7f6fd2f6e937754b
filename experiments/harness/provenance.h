/* experiments/harness/provenance.h — what produced a run file: the build (commit, version, build type
 * and flags, compiler, linked library versions), the machine (host, CPU, threads) and
 * the command line. cb_runlog_open writes them as root attributes and `clothbench info`
 * prints them, so a figure made from run files can say which code made its numbers. */
#ifndef CB_PROVENANCE_H
#define CB_PROVENANCE_H

#include <stddef.h>

/* The layout of the run file (README "The run file"); a reader refuses a file with a
 * larger number and reads files without the attribute as layout 1. */
#define CB_LAYOUT_VERSION 3

typedef struct cb_provenance {
    char git_commit[96];     /* full hash, "-dirty" appended; "unknown" outside a git tree */
    char version[32];        /* the project version (meson.build) */
    char build_type[32];     /* meson buildtype */
    char build_flags[512];   /* optimization, debug, sanitizers, c_args, ... */
    char compiler[128];
    char libraries[512];     /* CHOLMOD, OpenBLAS, HDF5, libyaml versions (run time where the
                                library reports it) */
    char threads[128];       /* OpenMP's thread count at the time of the call and the cores
                                (BLAS's is the solver's `threads`, in `parameters`) */
    char host[128];
    char cpu[256];           /* /proc/cpuinfo "model name" */
} cb_provenance;

/* Fill *p; never fails (a value that cannot be found reads "unknown"). */
void cb_provenance_get(cb_provenance *p);

/* The build part only (commit, version, build type, flags, compiler, libraries) as one
 * line: two runs whose lines differ were made by different builds. */
void cb_provenance_build_line(const cb_provenance *p, char *buf, size_t n);

/* argv joined into one shell-quoted line (words with special characters in single
 * quotes), malloc'd; NULL when out of memory. */
char *cb_provenance_command_line(int argc, char **argv);

/* The process's command line, set once by main() (a copy is kept until exit) and
 * written to every run file the process makes; "" until set. */
void cb_provenance_set_command_line(int argc, char **argv);
const char *cb_provenance_get_command_line(void);

#endif
