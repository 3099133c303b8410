#include "thread_cache.h"
#include <errno.h>
#include <pthread.h>
#include "cache.h"
#include "chunk_table.h"
#include "folio.h"

__thread struct pm_thread_cache pm_tc __attribute__((tls_model("initial-exec")));

enum { TC_NEW, TC_LIVE, TC_DEAD };

/* How many more objects t's list takes. */
static unsigned room_of(const struct pm_tbin *t)
{
    return (unsigned)(t->room - pm_tc.bias);
}

static void set_room(struct pm_tbin *t, unsigned room)
{
    t->room = (int32_t)room + pm_tc.bias;
}

static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

/* Hands bin's homeward objects, fewer than a batch, to their lane's CPU. */
static void send_homeward(unsigned bin)
{
    struct pm_homeward *h = &pm_tc.homeward[bin];
    if (h->head)
        pm_cache_leave(bin, h->head, h->n, h->lane);
    h->head = 0;
    h->n = 0;
}

static void tc_release(void)
{
    for (unsigned bin = 0; bin < PM_NBINS; bin++) {
        struct pm_tbin *t = &pm_tc.bins[bin];
        if (t->head)
            pm_cache_leave(bin, t->head, pm_bins[bin].batch - room_of(t), PM_CACHE_HERE);
        t->head = 0;
        set_room(t, 0);
        if (t->spare)
            pm_cache_leave(bin, t->spare, pm_bins[bin].batch, PM_CACHE_HERE);
        t->spare = 0;
        send_homeward(bin);
    }
}

/* Runs at thread exit.  Frees that come later in the thread's teardown
 * (other destructors) bypass the cache: the thread is marked dead. */
static void tc_exit(void *unused)
{
    (void)unused;
    pm_tc.state = TC_DEAD;
    tc_release();
}

static void make_exit_key(void)
{
    if (pthread_key_create(&exit_key, tc_exit))
        pm_fatal("malloc", 0, "no thread-specific key left for thread exit");
}

/* The state is set before pthread_setspecific, which may itself allocate:
 * such a nested call finds a live, empty cache. */
static void tc_start(void)
{
    pm_tc.state = TC_LIVE;
    pm_tc.bias = PM_TC_NEW_BIAS;
    for (unsigned bin = 0; bin < PM_NBINS; bin++)
        set_room(&pm_tc.bins[bin], 0);
    pthread_once(&exit_key_once, make_exit_key);
    pthread_setspecific(exit_key, &pm_tc);
}

void *pm_tc_refill(unsigned bin)
{
    unsigned n = pm_bins[bin].batch;
    if (pm_unlikely(pm_tc.state != TC_LIVE)) {
        if (pm_tc.state == TC_DEAD) {
            void *p = pm_folio_alloc(bin, 1, &n);
            if (!p)
                errno = ENOMEM;
            else
                ((void **)p)[1] = 0;
            return p;
        }
        tc_start();
    }
    struct pm_tbin *t = &pm_tc.bins[bin];
    void *list = t->spare;
    if (list)
        t->spare = 0;
    else
        list = pm_cache_get(bin);
    if (!list && !(list = pm_folio_alloc(bin, n, &n))) {
        errno = ENOMEM;
        return 0;
    }
    t->head = *(void **)list;
    set_room(t, pm_bins[bin].batch - n + 1);
    pm_tc.allocates |= 1ull << bin;
    ((void **)list)[1] = 0;
    return list;
}

/* A new thread often frees what a thread on another CPU allocated: a
 * server's worker hands its objects to the thread it starts, which may run
 * on the other CPU.  Kept by the new thread, those objects would be handed
 * out again among the lines that the other CPU's threads still use, and
 * the two CPUs' objects would stay interleaved for good (larson/t2: 114 M
 * mallocs/s with each chain of threads pinned to one CPU, 86 unpinned,
 * mimalloc 106 and 103).  So while new, a thread sends each object of a
 * bin it allocates from to the CPU whose lane carved the object's chunk,
 * when that is another CPU, a batch at a time: memory goes back to its
 * CPU, and each CPU's threads are left with their own.  An older thread
 * keeps what it frees, which in a producer and consumer feeds the
 * producers on the consumer's CPU: sending home every such object cost
 * malloc-test-batched/t8 0.24 -> 0.60 s (docs/DESIGN.md).  Returns 1 if p
 * went homeward. */
static int new_thread_free(void *p, unsigned bin)
{
    unsigned lane = pm_chunk_lane((uintptr_t)p);
    int away = (pm_tc.allocates >> bin & 1) && lane != pm_folio_lane();
    if (away) {
        struct pm_homeward *h = &pm_tc.homeward[bin];
        if (h->lane != lane)
            send_homeward(bin);
        pm_tc_link(p, h->head);
        h->head = p;
        h->lane = (uint16_t)lane;
        if (++h->n == pm_bins[bin].batch) {
            h->head = 0;
            h->n = 0;
            pm_cache_put(bin, p, (int)lane);
        }
    }
    if (++pm_tc.frees == PM_TC_NEW_FREES) {
        for (unsigned b = 0; b < PM_NBINS; b++) {
            send_homeward(b);
            pm_tc.bins[b].room -= pm_tc.bias;
        }
        pm_tc.bias = 0;
    }
    return away;
}

void pm_tc_overflow(void *p)
{
    unsigned bin = pm_bin_of_addr((uintptr_t)p);
    struct pm_tbin *t = &pm_tc.bins[bin];
    t->room++;
    if (pm_tc_holds(p, bin))
        pm_fatal("free", p, "double free");
    if (pm_tc.state != TC_LIVE) {
        if (pm_tc.state == TC_DEAD) {
            *(void **)p = 0;
            pm_folio_free_list(bin, p, "free");
            return;
        }
        tc_start();
    }
    if (pm_tc.bias && new_thread_free(p, bin))
        return;
    if (!t->head && !room_of(t)) {
        /* This thread has not allocated from bin yet, so another thread
         * did: at the head of this thread's list p would be the next
         * object it gets, in a line with that thread's objects (passive
         * false sharing: cache-scratch/t2 took 0.48 s, 0.10 s this way,
         * mimalloc 0.10-0.11 s).  It waits with the objects exiting
         * threads leave instead. */
        pm_tc_link(p, 0);
        pm_cache_leave(bin, p, 1, PM_CACHE_HERE);
        set_room(t, pm_bins[bin].batch);
        return;
    }
    /* A full list becomes the spare, and the old spare goes to the CPU
     * level.  A list with room got here because the thread is new, or
     * because p carried the mark's top byte without being held (the
     * program stored it there). */
    if (!room_of(t)) {
        if (t->spare)
            pm_cache_put(bin, t->spare, PM_CACHE_HERE);
        t->spare = t->head;
        t->head = 0;
        set_room(t, pm_bins[bin].batch);
    }
    pm_tc_link(p, t->head);
    t->head = p;
    t->room--;
}

/* Whether p is in the first n objects of list (n bounds the walk should a
 * use after free have made a cycle). */
static int list_has(const void *list, const void *p, unsigned n)
{
    for (; list && n; list = *(void *const *)list, n--)
        if (list == p)
            return 1;
    return 0;
}

/* The walk behind pm_tc_holds, for an object that carries the mark. */
int pm_tc_holds_walk(const void *p, unsigned bin)
{
    const struct pm_tbin *t = &pm_tc.bins[bin];
    if (pm_tc.state != TC_LIVE)
        return 0;
    unsigned batch = pm_bins[bin].batch;
    const struct pm_homeward *h = &pm_tc.homeward[bin];
    return list_has(t->head, p, batch - room_of(t)) || list_has(t->spare, p, batch) ||
           list_has(h->head, p, h->n);
}

void pm_tc_flush(void)
{
    tc_release();
}

size_t pm_tc_count(unsigned bin)
{
    const struct pm_tbin *t = &pm_tc.bins[bin];
    if (pm_tc.state != TC_LIVE)
        return 0;
    return (t->head ? pm_bins[bin].batch - room_of(t) : 0) + (t->spare ? pm_bins[bin].batch : 0) +
           pm_tc.homeward[bin].n;
}
