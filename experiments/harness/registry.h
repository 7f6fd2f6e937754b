/* experiments/harness/registry.h — every method clothbench compares, by name. The
 * registry sits above the solvers (it names each one); the interface they implement is
 * core/solver.h. Registering a method is one row in registry.c's METHODS
 * (ARCHITECTURE.md "How to add a method" lists the other steps). */
#ifndef CB_REGISTRY_H
#define CB_REGISTRY_H

#include "core/solver.h"

int cb_solver_count(void);
/* The i-th registered method (NULL outside 0 .. count-1). */
const cb_solver_class *cb_solver_at(int i);
/* The method named `name` (NULL when there is none). */
const cb_solver_class *cb_solver_find(const char *name);
/* Comma-separated names of all solvers (static buffer), for messages. */
const char *cb_solver_names(void);
/* Bytes per cloth vertex the method needs at least (cb_solver_class.bytes_per_vertex;
 * the least of the measured methods for one without a figure): the run's memory estimate. */
double cb_solver_memory_per_vertex(const cb_solver_class *cls);

#endif
