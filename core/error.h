/* core/error.h — one status convention for all of clothbench.
 *
 * Every public function that can fail returns an int status: 0 (CB_OK) on success,
 * a negative CB_ERR_* code on error, a positive CB_WARN_* code for a warning, and
 * fills a caller-owned cb_error. The message says what went wrong in the user's
 * terms (for input errors it starts with "file:line:col:"); `where` records the
 * source location of the check that failed, for bug reports.
 *
 * Nothing below main() calls exit() or abort(). Programmer errors (a broken
 * invariant, not bad input) use CB_ASSERT, active in debug and test builds.
 */
#ifndef CB_ERROR_H
#define CB_ERROR_H

#include <stdarg.h>
#include <stddef.h>

enum {
    CB_OK = 0,
    CB_ERR_INPUT = -1,       /* bad user input: scene, mesh, parameters, arguments */
    CB_ERR_IO = -2,          /* a file could not be read or written */
    CB_ERR_NOMEM = -3,       /* an allocation failed */
    CB_ERR_NUMERIC = -4,     /* numerical failure: NaN/Inf, divergence, not positive definite */
    CB_ERR_INTERRUPTED = -5, /* SIGINT/SIGTERM */
    CB_ERR_INTERNAL = -6,    /* a library (HDF5, CHOLMOD, ...) failed unexpectedly, or a
                                solver's iteration failed without the state diverging (ipc:
                                a Newton step that does not converge): the run's `error` */
    CB_WARN = 1              /* completed, with a warning in the message */
};

typedef struct cb_error {
    int status;          /* the status last set; CB_OK when clear */
    char where[96];      /* source file:line of the check that set it */
    char message[1024];  /* what went wrong, for the user */
} cb_error;

/* Set err (may be NULL) and return status. Use through CB_FAIL. */
int cb_error_set(cb_error *err, int status, const char *src_file, int src_line,
                 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
int cb_error_vset(cb_error *err, int status, const char *src_file, int src_line,
                  const char *fmt, va_list ap);
/* Prefix the existing message with more context ("while loading X: ..."). */
void cb_error_prefix(cb_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cb_error_clear(cb_error *err);
const char *cb_status_name(int status);

#define CB_FAIL(err, status, ...) cb_error_set((err), (status), __FILE__, __LINE__, __VA_ARGS__)

#ifdef NDEBUG
#define CB_ASSERT(cond) ((void)0)
#else
void cb_assert_fail(const char *cond, const char *file, int line);
#define CB_ASSERT(cond) ((cond) ? (void)0 : cb_assert_fail(#cond, __FILE__, __LINE__))
#endif

/* Allocation helpers: NULL on failure; cb_calloc zeroes and checks n * size for
 * overflow. A size of 0 allocates 1 byte (never NULL for success). */
void *cb_calloc(size_t n, size_t size);
void *cb_malloc(size_t n);
void *cb_realloc(void *p, size_t n);
char *cb_strdup(const char *s);

/* Fault injection for tests (as CHOLMOD's coverage tests do): after n more successful
 * allocations through the helpers above, every one fails until the hook is reset with
 * n < 0. cb_alloc_count() counts the allocations since the last call. */
void cb_alloc_fail_after(long n);
/* The same, but only the (n+1)-th allocation fails and the ones after it succeed: an
 * allocation whose failure goes unchecked is then not hidden by a later one failing too. */
void cb_alloc_fail_only(long n);
long cb_alloc_count(void);
/* The largest single request (bytes) through the helpers since the last call, which
 * resets it: the fuzz targets check a reader allocated in proportion to its input. */
size_t cb_alloc_largest(void);

/* Interruption: a signal handler calls cb_interrupt_request() (async-signal-safe: one
 * store); long loops inside a step (acm's events, explicit's substeps, pbd's substeps)
 * poll cb_interrupt_requested() and return CB_ERR_INTERRUPTED, so a run stops within a
 * bounded time even when one step takes minutes. */
void cb_interrupt_request(void);
int cb_interrupt_requested(void);
void cb_interrupt_clear(void);

/* Monotonic wall clock in seconds. */
double cb_wall_time(void);

#endif
