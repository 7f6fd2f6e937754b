/* solvers/acm/queue.c — indexed 4-ary min-heap of events (see queue.h). */
#include "solvers/acm/queue.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"

int cb_acm_queue_reserve(cb_acm_queue *q, int cap)
{
    if (cap <= q->cap) return CB_OK;
    int ncap = q->cap > 0 ? q->cap : 64;
    while (ncap < cap) ncap *= 2;
    cb_acm_qentry *h = cb_realloc(q->heap, (size_t)ncap * sizeof *h);
    if (!h) return CB_ERR_NOMEM;
    q->heap = h;
    cb_acm_qslot *sl = cb_realloc(q->slot, (size_t)ncap * sizeof *sl);
    if (!sl) return CB_ERR_NOMEM;
    for (int i = q->cap; i < ncap; i++) sl[i] = (cb_acm_qslot){0.0, 0.0, -1};
    q->slot = sl;
    q->cap = ncap;
    return CB_OK;
}

void cb_acm_queue_release(cb_acm_queue *q)
{
    free(q->heap);
    free(q->slot);
    memset(q, 0, sizeof *q);
}

/* A 4-ary heap: children of i are 4i+1 .. 4i+4. Half the depth of a binary heap, and a
 * node's four children share one or two cache lines, so a sift touches fewer lines.
 * The order (time, key) is total (keys are unique among queued ids), so the pop order
 * is the same whatever the heap's shape. */
static void sift_up(cb_acm_queue *q, int i)
{
    cb_acm_qentry e = q->heap[i];
    while (i > 0) {
        int parent = (i - 1) >> 2;
        if (!cb_acm_qentry_less(&e, &q->heap[parent])) break;
        q->heap[i] = q->heap[parent];
        q->slot[q->heap[i].id].pos = i;
        i = parent;
    }
    q->heap[i] = e;
    q->slot[e.id].pos = i;
}

static void sift_down(cb_acm_queue *q, int i)
{
    cb_acm_qentry e = q->heap[i];
    int n = q->n;
    for (;;) {
        int c = 4 * i + 1;
        if (c >= n) break;
        int end = c + 4 < n ? c + 4 : n, m = c;
        for (int k = c + 1; k < end; k++)
            if (cb_acm_qentry_less(&q->heap[k], &q->heap[m])) m = k;
        if (!cb_acm_qentry_less(&q->heap[m], &e)) break;
        q->heap[i] = q->heap[m];
        q->slot[q->heap[i].id].pos = i;
        i = m;
    }
    q->heap[i] = e;
    q->slot[e.id].pos = i;
}

void cb_acm_queue_set(cb_acm_queue *q, int id, double t, uint64_t key)
{
    CB_ASSERT(id >= 0 && id < q->cap);
    cb_acm_qslot *sl = &q->slot[id];
    sl->due = t;
    sl->t = t;
    cb_acm_qentry e = {t, key, id};
    int i = sl->pos;
    if (i < 0) {
        i = q->n++;
        q->heap[i] = e;
        sift_up(q, i);
        return;
    }
    /* a renewal that gives the same time (common: a certificate capped by the
       horizon, a box exit that did not move) leaves the heap as it is */
    if (q->heap[i].t == t && q->heap[i].key == key) return;
    int up = cb_acm_qentry_less(&e, &q->heap[i]);
    q->heap[i] = e;
    if (up) sift_up(q, i);
    else sift_down(q, i);
}

void cb_acm_queue_remove(cb_acm_queue *q, int id)
{
    int i = q->slot[id].pos;
    if (i < 0) return;
    q->slot[id].pos = -1;
    int last = --q->n;
    if (i == last) return;
    cb_acm_qentry e = q->heap[last];
    q->heap[i] = e;
    q->slot[e.id].pos = i;
    if (i > 0 && cb_acm_qentry_less(&e, &q->heap[(i - 1) >> 2])) sift_up(q, i);
    else sift_down(q, i);
}

cb_acm_qentry cb_acm_queue_pop(cb_acm_queue *q)
{
    cb_acm_qentry top = q->heap[0];
    cb_acm_queue_remove(q, top.id);
    return top;
}
