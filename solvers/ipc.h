/* solvers/ipc.h — helpers of the ipc solver (solvers/ipc.c) that tests call directly.
 * The solver itself is the registry entry cb_solver_ipc (core/solver.c). */
#ifndef CB_IPC_H
#define CB_IPC_H

/* The colliders' (and moving pins') time after a step alpha of an ipc Newton iteration
 * that prescribes their motion over the rest of the step, dtau = t1 - tau: t1 when alpha
 * >= 1, when tau + alpha dtau falls within CB_IPC_TIME_ULPS ulps of t1, or when it
 * rounds to tau (alpha dtau below half an ulp) with dtau within CB_IPC_TIME_STUCK_ULPS
 * ulps of t1; else tau + alpha dtau. Without the snap, tau + alpha dtau stays at tau for
 * alpha < 1/2 of a one-ulp dtau, and the step cannot converge before the time reaches
 * t1. The snap moves the colliders by at most CB_IPC_TIME_STUCK_ULPS ulps of t1 times
 * their speed beyond the CCD's step (2e-13 m at 50 m/s and t1 = 1 s); the line search
 * still checks the point's feasibility. */
#define CB_IPC_TIME_ULPS 4
#define CB_IPC_TIME_STUCK_ULPS 1024
double cb_ipc_time_after(double tau, double alpha, double dtau, double t1);

/* How many gathers and CCDs of the ipc solver `self` (its create's instance) took their
 * self candidates from the step's cache (candidate_cache) since create: 0 with the cache
 * off. For tests, which check that the cache is used at all. */
long cb_ipc_cache_served(const void *self);

#endif
