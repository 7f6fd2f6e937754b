/* solvers/acm/queue.h — the event queue of the asynchronous solver: an indexed 4-ary
 * min-heap of event ids keyed by (time, rank, index). Ties in time are broken by the
 * event kind's rank and then by the element index, so the processing order is a pure
 * function of the event times (deterministic). Each id is in the queue at most once;
 * setting the time of a queued id moves it (decrease- or increase-key, O(log n)).
 *
 * Due times (cb_acm_queue_defer): an id may instead be given a due time that the heap
 * only bounds from below. Its heap time is lowered when the due time goes below it and
 * left alone when the due time goes up (no sift); when the entry comes to the top with a
 * heap time below its due time, the owner moves it to its due time (cb_acm_queue_set)
 * instead of processing it. Since an entry never sits in the heap later than its due
 * time, the ids are processed in the order of their due times, exactly as if every
 * change had been a cb_acm_queue_set. Ids set with cb_acm_queue_set keep due = their
 * time.
 */
#ifndef CB_ACM_QUEUE_H
#define CB_ACM_QUEUE_H

#include <math.h>
#include <stdint.h>

typedef struct cb_acm_qentry {
    double t;
    uint64_t key;   /* rank << 40 | index */
    int id;
} cb_acm_qentry;

/* Per id, in one place (a renewal reads all three) */
typedef struct cb_acm_qslot {
    double due;          /* due time of a queued id (>= its heap time) */
    double t;            /* its heap time */
    int pos;             /* its heap position, -1 when not queued */
} cb_acm_qslot;

typedef struct cb_acm_queue {
    cb_acm_qentry *heap; /* [n] */
    cb_acm_qslot *slot;  /* [cap] */
    int n, cap;
} cb_acm_queue;

static inline uint64_t cb_acm_qkey(int rank, long index)
{
    return ((uint64_t)rank << 40) | (uint64_t)index;
}

/* The heap's order: time, then key (unique among queued ids). */
static inline int cb_acm_qentry_less(const cb_acm_qentry *a, const cb_acm_qentry *b)
{
    return a->t < b->t || (a->t == b->t && a->key < b->key);
}

/* The entry that comes right after the top (the least of the root's children), or
 * (inf, max, -1) when the top is alone. */
static inline cb_acm_qentry cb_acm_queue_second(const cb_acm_queue *q)
{
    cb_acm_qentry best = {INFINITY, UINT64_MAX, -1};
    for (int c = 1; c <= 4 && c < q->n; c++)
        if (cb_acm_qentry_less(&q->heap[c], &best)) best = q->heap[c];
    return best;
}

/* Room for ids 0..cap-1 (grows, keeps content). 0 or CB_ERR_NOMEM. */
int cb_acm_queue_reserve(cb_acm_queue *q, int cap);
void cb_acm_queue_release(cb_acm_queue *q);
/* Insert id, or move it if queued. */
void cb_acm_queue_set(cb_acm_queue *q, int id, double t, uint64_t key);
void cb_acm_queue_remove(cb_acm_queue *q, int id);
/* Give id the due time t (see above): insert it if not queued, lower its heap time if
 * t is earlier, else only record t. */
static inline void cb_acm_queue_defer(cb_acm_queue *q, int id, double t, uint64_t key)
{
    cb_acm_qslot *sl = &q->slot[id];
    sl->due = t;
    if (sl->pos < 0 || t < sl->t) cb_acm_queue_set(q, id, t, key);
}
static inline int cb_acm_queue_empty(const cb_acm_queue *q) { return q->n == 0; }
static inline const cb_acm_qentry *cb_acm_queue_top(const cb_acm_queue *q) { return &q->heap[0]; }
static inline int cb_acm_queue_has(const cb_acm_queue *q, int id) { return q->slot[id].pos >= 0; }
/* Remove and return the first entry (queue must not be empty). */
cb_acm_qentry cb_acm_queue_pop(cb_acm_queue *q);

#endif
