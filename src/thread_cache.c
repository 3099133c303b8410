#include "thread_cache.h"
#include <errno.h>
#include <pthread.h>
#include "cache.h"
#include "folio.h"

__thread struct pm_thread_cache pm_tc __attribute__((tls_model("initial-exec")));

enum { TC_NEW, TC_LIVE, TC_DEAD };

static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

static void tc_release(void)
{
    for (unsigned bin = 0; bin < PM_NBINS; bin++) {
        struct pm_tbin *t = &pm_tc.bins[bin];
        if (t->head)
            pm_cache_leave(bin, t->head, pm_bins[bin].batch - t->room);
        t->head = 0;
        t->room = 0;
        if (pm_tc.spare[bin])
            pm_cache_leave(bin, pm_tc.spare[bin], pm_bins[bin].batch);
        pm_tc.spare[bin] = 0;
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
    void *list = pm_tc.spare[bin];
    if (list)
        pm_tc.spare[bin] = 0;
    else
        list = pm_cache_get(bin);
    if (!list && !(list = pm_folio_alloc(bin, n, &n))) {
        errno = ENOMEM;
        return 0;
    }
    struct pm_tbin *t = &pm_tc.bins[bin];
    t->head = *(void **)list;
    t->room = pm_bins[bin].batch - n + 1;
    ((void **)list)[1] = 0;
    return list;
}

void pm_tc_overflow(void *p, unsigned bin)
{
    struct pm_tbin *t = &pm_tc.bins[bin];
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
    if (!t->head && !t->room) {
        /* This thread has not allocated from bin yet, so another thread
         * did: at the head of this thread's list p would be the next
         * object it gets, in a line with that thread's objects (passive
         * false sharing: cache-scratch/t2 took 0.48 s, 0.10 s this way,
         * mimalloc 0.10-0.11 s).  It waits with the objects exiting
         * threads leave instead. */
        ((void **)p)[0] = 0;
        ((void **)p)[1] = pm_tc_mark();
        pm_cache_leave(bin, p, 1);
        t->room = pm_bins[bin].batch;
        return;
    }
    /* A full list becomes the spare, and the old spare goes to the CPU
     * level.  A list with room got here only because p carried the mark's
     * top byte without being held (the program stored it there). */
    if (!t->room) {
        if (pm_tc.spare[bin])
            pm_cache_put(bin, pm_tc.spare[bin]);
        pm_tc.spare[bin] = t->head;
        t->head = 0;
        t->room = pm_bins[bin].batch;
    }
    ((void **)p)[0] = t->head;
    ((void **)p)[1] = pm_tc_mark();
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
    return list_has(t->head, p, batch - t->room) || list_has(pm_tc.spare[bin], p, batch);
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
    return (t->head ? pm_bins[bin].batch - t->room : 0) + (pm_tc.spare[bin] ? pm_bins[bin].batch : 0);
}
