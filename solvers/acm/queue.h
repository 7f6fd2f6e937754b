/* solvers/acm/queue.h — the event queue of the asynchronous solver: an indexed 4-ary
 * min-heap of event ids keyed by (time, rank, index). Ties in time are broken by the
 * event kind's rank and then by the element index, so the processing order is a pure
 * function of the event times (deterministic). Each id is in the queue at most once;
 * setting the time of a queued id moves it (decrease- or increase-key, O(log n)).
 */
#ifndef CB_ACM_QUEUE_H
#define CB_ACM_QUEUE_H

#include <stdint.h>

typedef struct cb_acm_qentry {
    double t;
    uint64_t key;   /* rank << 40 | index */
    int id;
} cb_acm_qentry;

typedef struct cb_acm_queue {
    cb_acm_qentry *heap; /* [n] */
    int *pos;            /* [cap] heap position of each id, -1 when not queued */
    int n, cap;
} cb_acm_queue;

static inline uint64_t cb_acm_qkey(int rank, long index)
{
    return ((uint64_t)rank << 40) | (uint64_t)index;
}

/* Room for ids 0..cap-1 (grows, keeps content). 0 or CB_ERR_NOMEM. */
int cb_acm_queue_reserve(cb_acm_queue *q, int cap);
void cb_acm_queue_release(cb_acm_queue *q);
/* Insert id, or move it if queued. */
void cb_acm_queue_set(cb_acm_queue *q, int id, double t, uint64_t key);
void cb_acm_queue_remove(cb_acm_queue *q, int id);
static inline int cb_acm_queue_empty(const cb_acm_queue *q) { return q->n == 0; }
static inline const cb_acm_qentry *cb_acm_queue_top(const cb_acm_queue *q) { return &q->heap[0]; }
static inline int cb_acm_queue_has(const cb_acm_queue *q, int id) { return q->pos[id] >= 0; }
/* Remove and return the first entry (queue must not be empty). */
cb_acm_qentry cb_acm_queue_pop(cb_acm_queue *q);

#endif
