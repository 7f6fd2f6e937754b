/* core/error.c — the status convention (see error.h). */
#include "core/error.h"

#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int cb_error_vset(cb_error *err, int status, const char *src_file, int src_line,
                  const char *fmt, va_list ap)
{
    if (!err) return status;
    err->status = status;
    snprintf(err->where, sizeof err->where, "%s:%d", src_file ? src_file : "?", src_line);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    return status;
}

int cb_error_set(cb_error *err, int status, const char *src_file, int src_line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cb_error_vset(err, status, src_file, src_line, fmt, ap);
    va_end(ap);
    return status;
}

void cb_error_prefix(cb_error *err, const char *fmt, ...)
{
    if (!err) return;
    char head[512], old[sizeof err->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    memcpy(old, err->message, sizeof old);
    size_t nh = strlen(head), cap = sizeof err->message - 1;
    if (nh > cap) nh = cap;
    size_t no = strnlen(old, sizeof old);
    if (no > cap - nh) no = cap - nh; /* truncate the tail of the old message */
    memcpy(err->message, head, nh);
    memcpy(err->message + nh, old, no);
    err->message[nh + no] = '\0';
}

void cb_error_clear(cb_error *err)
{
    if (!err) return;
    err->status = CB_OK;
    err->where[0] = '\0';
    err->message[0] = '\0';
}

const char *cb_status_name(int status)
{
    switch (status) {
    case CB_OK: return "ok";
    case CB_ERR_INPUT: return "bad input";
    case CB_ERR_IO: return "i/o error";
    case CB_ERR_NOMEM: return "out of memory";
    case CB_ERR_NUMERIC: return "numerical failure";
    case CB_ERR_INTERRUPTED: return "interrupted";
    case CB_ERR_INTERNAL: return "internal error";
    default: return status > 0 ? "warning" : "error";
    }
}

#ifndef NDEBUG
void cb_assert_fail(const char *cond, const char *file, int line)
{
    fprintf(stderr, "clothbench: assertion failed: %s (%s:%d)\n", cond, file, line);
    abort();
}
#endif

/* The fault-injection hook (error.h): allocations left before one fails; < 0 off.
 * Process-wide and not thread-safe: tests set it around single-threaded calls. */
static long g_alloc_countdown = -1;
static long g_alloc_count;

static int g_alloc_only; /* cb_alloc_fail_only: the one failure, then none */

void cb_alloc_fail_after(long n)
{
    g_alloc_countdown = n;
    g_alloc_count = 0;
    g_alloc_only = 0;
}

void cb_alloc_fail_only(long n)
{
    cb_alloc_fail_after(n);
    g_alloc_only = n >= 0;
}

long cb_alloc_count(void) { return g_alloc_count; }

/* The largest request since the last cb_alloc_largest (error.h); same caveat. */
static size_t g_alloc_largest;

size_t cb_alloc_largest(void)
{
    size_t n = g_alloc_largest;
    g_alloc_largest = 0;
    return n;
}

/* 1 when this allocation (of `bytes`) is the one to fail. */
static int inject_failure(size_t bytes)
{
    if (bytes > g_alloc_largest) g_alloc_largest = bytes;
    g_alloc_count++;
    if (g_alloc_countdown < 0) return 0;
    if (g_alloc_countdown == 0) { /* every allocation after the N-th fails too, but with fail_only */
        if (g_alloc_only) g_alloc_countdown = -1;
        return 1;
    }
    g_alloc_countdown--;
    return 0;
}

void *cb_calloc(size_t n, size_t size)
{
    if (n == 0 || size == 0) n = size = 1;
    if (n > SIZE_MAX / size) return NULL;
    if (inject_failure(n * size)) return NULL;
    return calloc(n, size);
}

void *cb_malloc(size_t n)
{
    if (inject_failure(n)) return NULL;
    return malloc(n ? n : 1);
}

void *cb_realloc(void *p, size_t n)
{
    if (inject_failure(n)) return NULL;
    return realloc(p, n ? n : 1);
}

char *cb_strdup(const char *s)
{
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *d = cb_malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

static volatile sig_atomic_t g_interrupt;

void cb_interrupt_request(void) { g_interrupt = 1; }
int cb_interrupt_requested(void) { return g_interrupt != 0; }
void cb_interrupt_clear(void) { g_interrupt = 0; }

double cb_wall_time(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
