/* experiments/harness/registry.c — the solver registry: one table, one row per method
 * (registry.h). */
#include "experiments/harness/registry.h"

#include <math.h>
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
    X(newton)      \
    X(ipc)

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

double cb_solver_memory_per_vertex(const cb_solver_class *cls)
{
    if (cls && cls->bytes_per_vertex > 0) return cls->bytes_per_vertex;
    double least = INFINITY; /* a method measured by no one: the least of the others */
    for (int i = 0; i < cb_solver_count(); i++)
        if (registry[i]->bytes_per_vertex > 0 && registry[i]->bytes_per_vertex < least)
            least = registry[i]->bytes_per_vertex;
    return isfinite(least) ? least : 0.0;
}
