/* experiments/harness/registry.c — the solver registry: one table, one row per method
 * (registry.h). */
#include "experiments/harness/registry.h"

#include <string.h>

/* One row per method: the class cb_solver_<name> its file in solvers/ defines (a file
 * may define several, as pbd.c does pbd and xpbd). The order is `clothbench list`'s. */
#define METHODS(X) \
    X(explicit)    \
    X(avgforce)    \
    X(acm)         \
    X(pbd)         \
    X(xpbd)        \
    X(fms)         \
    X(newton)

#define DECLARE(m) extern const cb_solver_class cb_solver_##m;
#define ROW(m) &cb_solver_##m,
METHODS(DECLARE)
static const cb_solver_class *const registry[] = {METHODS(ROW)};

int cb_solver_count(void) { return (int)(sizeof registry / sizeof registry[0]); }

const cb_solver_class *cb_solver_at(int i)
{
    return i >= 0 && i < cb_solver_count() ? registry[i] : NULL;
}

const cb_solver_class *cb_solver_find(const char *name)
{
    for (int i = 0; name && i < cb_solver_count(); i++)
        if (!strcmp(registry[i]->name, name)) return registry[i];
    return NULL;
}

const char *cb_solver_names(void)
{
    static char buf[512];
    buf[0] = '\0';
    for (int i = 0; i < cb_solver_count(); i++) {
        if (i) strncat(buf, ", ", sizeof buf - strlen(buf) - 1);
        strncat(buf, registry[i]->name, sizeof buf - strlen(buf) - 1);
    }
    return buf;
}


/* The resident memory per vertex each method needs at least (bytes): the slope of the
 * peak resident size of `run data/scenes/hanging.yaml --no-frames` over one step between
 * a 100 x 100 and a 200 x 200 grid, rounded down (measured with /usr/bin/time on the
 * commit of issue 29). The run loop's estimate before it allocates (run.c). */
static const struct { const char *name; double bytes; } memory_per_vertex[] = {
    {"explicit", 950}, {"avgforce", 1900}, {"acm", 11000}, {"pbd", 2800},
    {"xpbd", 2800}, {"fms", 3500}, {"newton", 9500},
};

double cb_solver_memory_per_vertex(const char *name)
{
    double least = memory_per_vertex[0].bytes;
    for (size_t i = 0; i < sizeof memory_per_vertex / sizeof memory_per_vertex[0]; i++) {
        if (name && !strcmp(memory_per_vertex[i].name, name)) return memory_per_vertex[i].bytes;
        if (memory_per_vertex[i].bytes < least) least = memory_per_vertex[i].bytes;
    }
    return least; /* a method measured by no one: the least of the others */
}
