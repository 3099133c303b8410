/* SPDX-License-Identifier: MIT */
#include "thread_cache.h"
#include <errno.h>
#include <pthread.h>
#include "background.h"
#include "cache.h"
#include "chunk_pool.h"
#include "chunk_table.h"
#include "folio.h"
#include "guard.h"
#include "heap_profile.h"
#include "options.h"
#include "proc_maps.h"
#include "zero.h"
#include "purge.h"
#include "thread_registry.h"

/* Every list starts empty: its head the list end, never NULL. */
__thread struct pm_thread_cache pm_tc __attribute__((tls_model("initial-exec"))) = {
    .bins = {[0 ... PM_NBINS - 1] = {.head = PM_LIST_END}}, .zero = {.head = PM_LIST_END}};

enum { TC_NEW, TC_LIVE, TC_DEAD };

/* Whether a new thread's frees of objects of `size` take the slow path:
 * in a bin it watches (cache_policy.h) and, where freed objects carry the
 * mark, in every bin, for they look for their object in the thread's
 * lists (new_thread_keeps). */
static int slow_while_new(uint32_t size)
{
    return PM_CHECKED || pm_new_thread_watches(size);
}

/* The bias the room of a bin of objects of `size` carries. */
static int32_t bias_for(uint32_t size)
{
    return slow_while_new(size) ? pm_tc.bias : 0;
}

static int32_t bias_of(const struct pm_tbin *t)
{
    return bias_for(t->size);
}

/* How many more objects t's list takes. */
static unsigned room_of(const struct pm_tbin *t)
{
    return (unsigned)(t->room - bias_of(t));
}

static void set_room(struct pm_tbin *t, unsigned room)
{
    t->room = (int32_t)room + bias_of(t);
}

/* t's objects as a list of the levels below: NULL when empty. */
static void *list_of(const struct pm_tbin *t)
{
    return pm_list_end_as_null(t->head);
}

/* The bytes a batch of bin fills: what an open list or a spare may hold. */
static long batch_bytes(unsigned bin)
{
    return (long)pm_bins[bin].batch * pm_bins[bin].size;
}

/* Budgets (cache_policy.h).  A thread's lists and spares take from its
 * budget, and a budget grows by taking from shared_left.  When neither
 * its own nor the shared budget has room, the thread returns all it
 * holds to the shared levels and starts again within its budget; a bin
 * whose batch exceeds even the whole budget is served without a list, an
 * object at a time.  The fast paths are unchanged: the budget is checked
 * where a list opens or a spare forms, both on slow paths.  A parked
 * thread keeps what it holds (its lists are its own, with no lock),
 * within its budget. */
static long shared_left = PM_TC_SHARED_BUDGET;

/* Whether the thread's budget has room for `bytes` more, doubled from the
 * shared budget if need be. */
static int fits(long bytes)
{
    long need = pm_tc.granted + bytes;
    PM_ASSERT(pm_tc.budget >= PM_TC_OWN_BUDGET);
    if (need <= pm_tc.budget)
        return 1;
    long budget = pm_grown_budget(pm_tc.budget, need);
    long more = budget - pm_tc.budget, left = __atomic_load_n(&shared_left, __ATOMIC_RELAXED);
    do
        if (!budget || left < more)
            return 0;
    while (!__atomic_compare_exchange_n(&shared_left, &left, left - more, 1, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED));
    pm_tc.budget = budget;
    return 1;
}

static void tc_release(void);

/* Grants bin a list, if need be after returning everything the thread
 * holds.  Returns 0 if the list does not fit even then. */
static int open_list(unsigned bin)
{
    long bytes = batch_bytes(bin);
    if (!fits(bytes)) {
        tc_release();
        if (!fits(bytes))
            return 0;
    }
    pm_tc.granted += bytes;
    pm_bin_set_add(&pm_tc.open, bin);
    return 1;
}

static pthread_key_t exit_key;

/* tc's homeward list of bin; for a bin without one (thread_cache.h), an
 * empty list that nothing writes. */
static const struct pm_homeward no_homeward;
static const struct pm_homeward *homeward_in(const struct pm_thread_cache *tc, unsigned bin)
{
    return bin < PM_SMALL_BINS ? &tc->homeward[bin] : &no_homeward;
}

/* Hands bin's homeward objects, fewer than a batch, to their lane's CPU. */
static void send_homeward(unsigned bin)
{
    if (bin >= PM_SMALL_BINS)
        return;
    struct pm_homeward *h = &pm_tc.homeward[bin];
    if (h->head)
        pm_cache_leave(bin, h->head, h->n, h->lane);
    pm_tc.granted -= (long)h->n * pm_bins[bin].size;
    h->head = 0;
    h->n = 0;
}

/* Hands bin's list, spare and homeward objects to the CPU level. */
static void release_bin(unsigned bin)
{
    struct pm_tbin *t = &pm_tc.bins[bin];
    if (list_of(t))
        pm_cache_leave(bin, t->head, pm_bins[bin].batch - room_of(t), PM_THIS_CPU);
    t->head = PM_LIST_END;
    set_room(t, 0);
    if (pm_tc.spares[bin])
        pm_cache_leave(bin, pm_tc.spares[bin], pm_bins[bin].batch, PM_THIS_CPU);
    pm_tc.spares[bin] = 0;
    send_homeward(bin);
}

static void tc_release(void)
{
    for (unsigned w = 0; w < PM_BIN_WORDS; w++)
        for (uint64_t open = pm_tc.open.w[w]; open; open &= open - 1)
            release_bin(w * 64 + (unsigned)__builtin_ctzll(open));
    pm_tc.open = (struct pm_bin_set){0};
    pm_tc.granted = 0;
    pm_background_if_wanted();
}

/* The C library keeps a dead thread's stack mapped for its next thread,
 * and the leak check scans it as it scans every writable mapping: the
 * frames of the thread's frees and of its release at exit hold addresses
 * of objects that other threads may take and leak.  So with the check
 * on, an exiting thread zeroes up to EXIT_WIPE bytes below its frame
 * (docs/tuning.md), deep enough for those frames: no lower than its
 * stack goes, which it knows only of a stack with a guard below it (the
 * C library's own; a stack the program placed in other memory is left as
 * it is), and never the last WIPE_MARGIN bytes, where the wipe's own
 * frame lies. */
#define EXIT_WIPE (8 << 10)
#define WIPE_MARGIN 1024

struct stack_probe {
    uintptr_t sp, below; /* below: the end of the mapping before, if no access */
    size_t room;
};

static int probe_stack(void *ctx, const struct pm_mapping *m)
{
    struct stack_probe *s = ctx;
    if (s->sp < m->lo || s->sp >= m->hi) {
        s->below = m->perms[0] == '-' && m->perms[1] == '-' ? m->hi : 0;
        return 0;
    }
    if (s->below == m->lo && m->perms[1] == 'w')
        s->room = s->sp - m->lo;
    return 1;
}

static __attribute__((noinline)) void wipe_dead_stack(void)
{
    struct stack_probe s = {(uintptr_t)__builtin_frame_address(0), 0, 0};
    if (pm_maps_each(probe_stack, &s) > 0 && s.room > 2 * WIPE_MARGIN) {
        size_t bytes = s.room - WIPE_MARGIN;
        pm_os_wipe_stack(bytes < EXIT_WIPE ? bytes : EXIT_WIPE);
    }
}

/* Runs at thread exit, outside any call of the program's: it walks the
 * lists it hands on quietly (os.h).  Frees that come later in the
 * thread's teardown (other destructors) bypass the cache: the thread is
 * marked dead. */
static void tc_exit(void *unused)
{
    (void)unused;
    pm_tc.state = TC_DEAD;
    pm_registry_leave();
    PM_QUIET_BEGIN();
    tc_release();
    PM_QUIET_END();
    __atomic_fetch_add(&shared_left, pm_tc.budget - PM_TC_OWN_BUDGET, __ATOMIC_RELAXED);
    pm_tc.budget = PM_TC_OWN_BUDGET;
    if (pm_option(PM_OPT_LEAKS))
        wipe_dead_stack();
}

/* The entries a thread starts with: each bin's object test, and a room
 * of its bias alone.  Made once, copied by every thread. */
static struct pm_tbin start_bins[PM_NBINS];
static pthread_once_t start_once = PTHREAD_ONCE_INIT;

/* The limit of bin's entries for pm_tc_is_object: the bin's own for
 * pm_divides; in the fast library, where the objects end, or 0 in a large
 * bin. */
static uint64_t entry_limit(unsigned bin)
{
    const struct pm_bin *b = &pm_bins[bin];
    if (PM_CHECKED)
        return b->limit;
    return b->kind == PM_LARGE ? 0 : (uint64_t)b->objs_per_chunk * b->size;
}

_Alignas(64) int32_t pm_tc_entry_by_16[PM_BY_16_ENTRIES];
uint64_t pm_tc_lookup_end;

/* The entries' offsets, from pm_tc's: a static TLS block lies within
 * 2 GiB of the thread's base. */
static void make_lookup(void)
{
    intptr_t base = (intptr_t)PM_ARCH_TP_OFFSET(pm_tc) + (intptr_t)sizeof(struct pm_tbin);
    for (size_t i = 0; i < PM_BY_16_ENTRIES; i++) {
        intptr_t off = base + pm_scaled_bin_by_16[i];
        if (off != (int32_t)off)
            pm_fatal("malloc", 0, "thread cache too far from the thread pointer");
        pm_tc_entry_by_16[i] = (int32_t)off;
    }
    __atomic_store_n(&pm_tc_lookup_end, PM_LOOKUP_MAX + 1, __ATOMIC_RELEASE);
}

static void make_start(void)
{
    if (pthread_key_create(&exit_key, tc_exit))
        pm_fatal("malloc", 0, "no thread-specific key left for thread exit");
    for (unsigned bin = 0; bin < PM_NBINS; bin++)
        start_bins[bin] = (struct pm_tbin){.head = PM_LIST_END,
                                           .room = slow_while_new(pm_bins[bin].size) ? PM_TC_NEW_BIAS : 0,
                                           .size = pm_bins[bin].size,
                                           .recip = pm_bins[bin].recip,
                                           .limit = entry_limit(bin)};
    make_lookup();
}

/* The state is set before pthread_setspecific, which may itself allocate:
 * such a nested call finds a live, empty cache. */
static void tc_start(void)
{
    pm_link_init();
    pm_guard_init();
    pthread_once(&start_once, make_start);
    pm_tc.bias = PM_TC_NEW_BIAS;
    pm_tc.new_end = PM_TC_NEW_QUIET;
    pm_tc.budget = PM_TC_OWN_BUDGET;
    __builtin_memcpy(pm_tc.bins, start_bins, sizeof start_bins);
    pm_tc.state = TC_LIVE;
    pm_os_thread_started();
    if (!pthread_setspecific(exit_key, &pm_tc))
        pm_registry_join(&pm_tc);
}

/* The validators of this thread's cache and every structure below it
 * run on one refill or slow free in PM_CHECK_EVERY (os.h): often enough
 * that a test which breaks an invariant soon meets a check, seldom
 * enough that walking every list leaves the debug tests their pace.  No
 * lock is held there, and this thread's lists are as they say. */
#define PM_CHECK_EVERY 4096
static void check_sometimes(void)
{
    static unsigned long steps;
    if (!pm_check_due(&steps, PM_CHECK_EVERY))
        return;
    pm_tc_check();
    pm_cache_check();
    pm_folio_check();
    pm_pool_check();
    pm_guard_check();
}

/* Takes bin's spare, which holds a batch. */
static void *take_spare(unsigned bin)
{
    void *list = pm_tc.spares[bin];
    pm_tc.spares[bin] = 0;
    pm_tc.granted -= batch_bytes(bin);
    return list;
}

/* list's first object, handed out: it carries no mark, nor the link of a
 * chain of batches (free_object.h); the list held n objects. */
static void *first_out(void *list, unsigned bin, unsigned n)
{
    ((void **)list)[1] = 0;
    return pm_prof_refill(list, bin, n);
}

/* Makes the rest of list, n objects of bin, t's list, which is empty,
 * and returns its first object. */
static void *hand_over(struct pm_tbin *t, unsigned bin, void *list, unsigned n, const char *call)
{
    t->head = pm_or_list_end(pm_link_next(list, call));
    set_room(t, pm_bins[bin].batch - n + 1);
    pm_bin_set_add(&pm_tc.allocates, bin);
    return first_out(list, bin, n);
}

/* The general refill: a thread that is not live, sampling, a list from
 * the levels below.  site: the return address a sampled object records. */
static void *refill_once(unsigned bin, const char *call, void *site)
{
    unsigned n = pm_bins[bin].batch;
    if (pm_unlikely(pm_tc.state != TC_LIVE)) {
        if (pm_tc.state == TC_DEAD) {
            void *p = pm_folio_alloc(bin, 1, &n);
            if (!p)
                errno = ENOMEM;
            return p;
        }
        tc_start();
    }
    /* With sampling on, the list takes no more objects than may go
     * unsampled: the allocation after them comes back here. */
    unsigned most = n;
    if (pm_unlikely(pm_guard_rate) && pm_bins[bin].kind != PM_LARGE) {
        most = pm_guard_quota(n);
        if (!most) {
            void *g = pm_guard_alloc(pm_bins[bin].size, (size_t)1 << pm_bins[bin].align_log, site);
            if (g)
                return g;
            most = n;
        }
    }
    struct pm_tbin *t = &pm_tc.bins[bin];
    /* An empty list with room holds its grant already; one without
     * takes a grant here, which goes back if no memory comes. */
    int granted = !room_of(t) && open_list(bin);
    int open = granted || room_of(t);
    void *list = pm_tc.spares[bin] ? take_spare(bin) : pm_cache_get(bin, call);
    unsigned want = pm_folio_list_length(pm_folio_out(bin), n, pm_bins[bin].size, PM_PAGE);
    if (!list && !(list = pm_folio_alloc(bin, want, &n))) {
        if (granted)
            pm_tc.granted -= batch_bytes(bin);
        errno = ENOMEM;
        return 0;
    }
    /* Served without a list, or a shorter one: the rest goes back. */
    if (!open)
        most = 1;
    if (n > most) {
        void *cut = list;
        for (unsigned i = 1; i < most; i++)
            cut = pm_link_next(cut, call);
        pm_cache_leave(bin, pm_link_next(cut, call), n - most, PM_THIS_CPU);
        pm_link_set(cut, 0);
        n = most;
    }
    return open ? hand_over(t, bin, list, n, call) : first_out(list, bin, 1);
}

/* refill_once; where that finds no memory, everything this thread and the
 * CPU and global levels hold goes back to the folios, and every empty
 * folio, chunk and free run to the kernel, so that memory freed in any
 * size serves this one, and then it is tried once more. */
static __attribute__((noinline)) void *refill(unsigned bin, const char *call, void *site)
{
    void *p = refill_once(bin, call, site);
    if (!p) {
        tc_release();
        pm_cache_drain();
        pm_purge_all();
        p = refill_once(bin, call, site);
    }
    return p;
}

/* The bin of t, one of this thread's bins' entries. */
static unsigned bin_of_entry(pm_tbin_fs *t)
{
    unsigned bin = (unsigned)(((uintptr_t)t - (uintptr_t)pm_tc_bin(0)) / sizeof(struct pm_tbin));
    PM_ASSERT(bin < PM_NBINS && pm_tc_bin(bin) == t);
    return bin;
}

/* Reports p, the head of a thread's list, which pm_tc_take refused. */
static _Noreturn void corrupt(const void *p, const char *call)
{
    if (pm_link_ok(pm_tc_next(p)))
        pm_fatal(call, p, "double free, or a write after free");
    pm_link_corrupt(call, p);
}

void *pm_tc_refill(pm_tbin_fs *t, const char *call)
{
    if (pm_unlikely(t == pm_tc_scaled(PM_NBINS * PM_BIN_STRIDE))) {
        void *p = pm_zero_alloc();
        if (!p)
            errno = ENOMEM;
        return p;
    }
    if (t->head != PM_LIST_END)
        corrupt(t->head, call);
    check_sometimes();
    unsigned bin = bin_of_entry(t);
    /* Where a bin's mallocs and frees take turns, its list goes to the
     * spare and comes back every batch or so: the common refill.  Only a
     * live thread has a spare, and its list is open; sampling may want
     * fewer objects than the spare holds, and refill cuts them. */
    void *p = pm_likely(pm_tc.spares[bin] && !pm_guard_rate)
                  ? hand_over(&pm_tc.bins[bin], bin, take_spare(bin), pm_bins[bin].batch, call)
                  : refill(bin, call, __builtin_return_address(0));
    pm_background_if_wanted();
    return p;
}

void *pm_tc_pop_first(size_t size, const char *call)
{
    pthread_once(&start_once, make_start);
    return pm_tc_pop_from(pm_tc_entry_of_size(size), call);
}

/* Whether p, freed by a new thread, goes home (cache_policy.h): only
 * objects of bins the thread watches and allocates from. */
static int goes_home(const void *p, unsigned bin)
{
    return pm_new_thread_watches(pm_bins[bin].size) && pm_bin_set_has(&pm_tc.allocates, bin) &&
           pm_sends_home(pm_chunk_lane((uintptr_t)p), pm_folio_lane());
}

/* Returns 1 if p went homeward. */
static int new_thread_free(void *p, unsigned bin)
{
    int away = goes_home(p, bin);
    if (away) {
        unsigned lane = pm_chunk_lane((uintptr_t)p);
        PM_ASSERT(bin < PM_SMALL_BINS);
        struct pm_homeward *h = &pm_tc.homeward[bin];
        long size = pm_bins[bin].size;
        if (h->lane != lane || !fits(size))
            send_homeward(bin);
        pm_link_marked(p, pm_or_list_end(h->head));
        h->head = p;
        h->lane = (uint16_t)lane;
        pm_bin_set_add(&pm_tc.open, bin);
        pm_tc.granted += size;
        if (++h->n == pm_bins[bin].batch) {
            pm_tc.granted -= h->n * size;
            h->head = 0;
            h->n = 0;
            pm_cache_put(bin, p, (int)lane);
        } else if (pm_tc.granted > pm_tc.budget) {
            send_homeward(bin);
        }
        pm_tc.new_end = pm_new_until(pm_tc.frees);
    }
    if (++pm_tc.frees >= pm_tc.new_end) {
        for (unsigned b = 0; b < PM_NBINS; b++) {
            send_homeward(b);
            pm_tc.bins[b].room -= bias_of(&pm_tc.bins[b]);
        }
        pm_tc.bias = 0;
    }
    return away;
}

/* Empties bin's full list: it becomes the spare, and the old spare goes
 * to the CPU level; without a spare and no budget for one, the full list
 * goes there. */
static void list_away(unsigned bin)
{
    struct pm_tbin *t = &pm_tc.bins[bin];
    void *full = t->head;
    void **spare = &pm_tc.spares[bin];
    if (*spare) {
        pm_cache_put(bin, *spare, PM_THIS_CPU);
        *spare = full;
    } else if (fits(batch_bytes(bin))) {
        pm_tc.granted += batch_bytes(bin);
        *spare = full;
    } else {
        pm_cache_put(bin, full, PM_THIS_CPU);
    }
    t->head = PM_LIST_END;
    set_room(t, pm_bins[bin].batch);
}

static __attribute__((noinline)) void overflow(void *p, unsigned bin)
{
    struct pm_tbin *t = &pm_tc.bins[bin];
    t->room++;
    /* Only p at the head of a list it would join is a double free found
     * here: a search of the lists would read p's line, often cold, on
     * every overflow; a pop finds the others (thread_cache.h). */
    if (p == t->head || p == homeward_in(&pm_tc, bin)->head)
        pm_fatal("free", p, "double free");
    if (pm_tc.state != TC_LIVE) {
        if (pm_tc.state == TC_DEAD) {
            pm_link_set(p, 0);
            pm_folio_free_list(bin, p, "free");
            return;
        }
        tc_start();
    }
    if (bias_of(t) && new_thread_free(p, bin))
        return;
    if (!list_of(t) && !room_of(t)) {
        /* This thread has not allocated from bin yet (since its lists
         * were last returned), or has no budget for a list of it.  In the
         * first case another thread did: at the head of this thread's
         * list p would be the next object it gets, in a line with that
         * thread's objects (passive false sharing).  It waits with the
         * objects exiting threads leave instead. */
        pm_link_marked(p, PM_LIST_END);
        pm_cache_leave(bin, p, 1, PM_THIS_CPU);
        if (open_list(bin))
            set_room(t, pm_bins[bin].batch);
        return;
    }
    /* A list with room got here because the thread is new. */
    if (!room_of(t))
        list_away(bin);
    pm_link_marked(p, t->head);
    t->head = p;
    t->room--;
}

/* Most frees of a new thread keep their object in a list with room, as
 * free's fast path would: that case is tested here, with the fast path's
 * own tests and the new thread's.  Out of line, so that the slow path
 * of a thread no longer new saves no registers for it.  A new thread's frees
 * are few and its objects mostly warm, so here p's line is read: p with
 * the mark, in this thread's lists, is a double free even when another
 * object was freed since (free(p); free(q); free(p)). */
static __attribute__((noinline)) int new_thread_keeps(void *p, pm_tbin_fs *t, unsigned bin)
{
    if (pm_tc_holds(p, bin, "free"))
        pm_fatal("free", p, "double free");
    if (t->room - bias_for(t->size) >= 0 && p != t->head && pm_tc.frees + 1 < pm_tc.new_end &&
        !goes_home(p, bin)) {
        pm_tc.frees++;
        pm_tc_link_in(t, p);
        return 1;
    }
    return 0;
}

void pm_tc_free_slow(void *p, pm_tbin_fs *t)
{
    unsigned bin = bin_of_entry(t);
    if (bias_for(t->size)) {
        if (new_thread_keeps(p, t, bin))
            return;
        overflow(p, bin);
    } else if (pm_likely(t->room == -1 && t->head != PM_LIST_END && p != t->head)) {
        /* The full list of a thread no longer new (its room was 0),
         * where a bin's frees and mallocs take turns: the common
         * overflow, which moves the list to the spare.  A full list's
         * head is an object. */
        list_away(bin);
        pm_tc_link_in(t, p);
        t->room--;
    } else {
        overflow(p, bin);
    }
    check_sometimes();
    pm_background_if_wanted();
}

/* Whether p is in the first n objects of list (n bounds the walk should a
 * use after free have made a cycle). */
static int list_has(const void *list, const void *p, unsigned n, const char *call)
{
    for (; list && n; list = pm_link_next(list, call), n--)
        if (list == p)
            return 1;
    return 0;
}

/* The walk behind pm_tc_holds, for an object that carries the mark. */
int pm_tc_holds_walk(const void *p, unsigned bin, const char *call)
{
    const struct pm_tbin *t = &pm_tc.bins[bin];
    if (pm_tc.state != TC_LIVE)
        return 0;
    unsigned batch = pm_bins[bin].batch;
    const struct pm_homeward *h = homeward_in(&pm_tc, bin);
    return list_has(list_of(t), p, batch - room_of(t), call) ||
           list_has(pm_tc.spares[bin], p, batch, call) || list_has(h->head, p, h->n, call);
}

void pm_tc_flush(void)
{
    tc_release();
}

/* The length of a list of free objects of bin, each of which carries the
 * mark; the walk stops past `most`. */
static unsigned checked_length(unsigned bin, const void *list, unsigned most)
{
    unsigned n = 0;
    for (; list && n <= most; list = pm_link_next(list, "thread cache check"), n++) {
        if (pm_bin_of_addr((uintptr_t)list) != bin)
            pm_fatal("thread cache check", list, "object of another bin");
        if (PM_CHECKED && !pm_carries_mark(list))
            pm_fatal("thread cache check", list, "free object without the mark");
    }
    return n;
}

void pm_tc_check(void)
{
    if (pm_tc.state != TC_LIVE)
        return;
    const struct pm_tbin *none = &pm_tc.none;
    if (none->head || none->room || none->size || none->recip || none->limit)
        pm_fatal("thread cache check", 0, "entry of no bin written");
    long granted = 0;
    for (unsigned bin = 0; bin < PM_NBINS; bin++) {
        const struct pm_tbin *t = &pm_tc.bins[bin];
        unsigned batch = pm_bins[bin].batch;
        if (!t->head)
            pm_fatal("thread cache check", 0, "list head is NULL, not the list end");
        unsigned held = checked_length(bin, list_of(t), batch);
        if ((list_of(t) || room_of(t)) && held + room_of(t) != batch)
            pm_fatal("thread cache check", t->head, "list length and room disagree");
        if (list_of(t) || room_of(t))
            granted += batch_bytes(bin);
        if (t->size != pm_bins[bin].size || t->recip != pm_bins[bin].recip ||
            t->limit != entry_limit(bin))
            pm_fatal("thread cache check", 0, "object test differs from the bin's");
        void *spare = pm_tc.spares[bin];
        if (spare && checked_length(bin, spare, batch) != batch)
            pm_fatal("thread cache check", spare, "spare is not a batch");
        if (spare)
            granted += batch_bytes(bin);
        const struct pm_homeward *h = homeward_in(&pm_tc, bin);
        if (h->n >= batch || checked_length(bin, h->head, batch) != h->n)
            pm_fatal("thread cache check", h->head, "homeward list not as counted");
        if (!pm_bin_set_has(&pm_tc.open, bin) && (list_of(t) || room_of(t) || spare || h->head))
            pm_fatal("thread cache check", t->head, "bin holds objects or room but is not open");
        granted += (long)h->n * pm_bins[bin].size;
    }
    if (granted != pm_tc.granted || granted > pm_tc.budget)
        pm_fatal("thread cache check", 0, "granted bytes disagree with the lists or the budget");
}

void pm_tc_fork_child(void)
{
    long mine = pm_tc.budget > PM_TC_OWN_BUDGET ? pm_tc.budget - PM_TC_OWN_BUDGET : 0;
    __atomic_store_n(&shared_left, PM_TC_SHARED_BUDGET - mine, __ATOMIC_RELAXED);
}

/* The objects of bin that tc caches, read while its thread may change
 * them: each field is read once, and a room out of range (read between
 * a refill's stores) counts as a full list. */
__attribute__((no_sanitize("thread"))) static size_t count_of(const struct pm_thread_cache *tc,
                                                              unsigned bin)
{
    if (__atomic_load_n(&tc->state, __ATOMIC_RELAXED) != TC_LIVE)
        return 0;
    const struct pm_tbin *t = &tc->bins[bin];
    unsigned batch = pm_bins[bin].batch;
    int32_t bias = slow_while_new(pm_bins[bin].size) ? __atomic_load_n(&tc->bias, __ATOMIC_RELAXED) : 0;
    unsigned room = (unsigned)(__atomic_load_n(&t->room, __ATOMIC_RELAXED) - bias);
    void *head = __atomic_load_n(&t->head, __ATOMIC_RELAXED);
    size_t n = head != PM_LIST_END && room < batch ? batch - room : 0;
    return n + (__atomic_load_n(&tc->spares[bin], __ATOMIC_RELAXED) ? batch : 0) +
           __atomic_load_n(&homeward_in(tc, bin)->n, __ATOMIC_RELAXED);
}

size_t pm_tc_count(unsigned bin)
{
    return count_of(&pm_tc, bin);
}

/* Up to n objects of bin from list on, read while their thread may change
 * them: the walk ends at an object outside bin's chunks or a link that
 * fails its check. */
__attribute__((no_sanitize("thread"))) static void walk_cached(unsigned bin, const void *list, unsigned n,
                                                               void (*fn)(void *ctx, void *object), void *ctx)
{
    for (; list && list != PM_LIST_END && n && pm_bin_of_addr((uintptr_t)list) == bin; n--) {
        fn(ctx, (void *)list);
        uintptr_t next = __atomic_load_n((const uintptr_t *)list, __ATOMIC_RELAXED) ^ pm_link_key();
        if (!pm_link_ok(next))
            return;
        list = (const void *)next;
    }
}

struct cached_walk {
    void (*fn)(void *ctx, void *object);
    void *ctx;
};

__attribute__((no_sanitize("thread"))) static void walk_thread(void *ctx, const struct pm_thread_cache *tc)
{
    const struct cached_walk *w = ctx;
    if (__atomic_load_n(&tc->state, __ATOMIC_RELAXED) != TC_LIVE)
        return;
    for (unsigned bin = 0; bin < PM_NBINS; bin++) {
        unsigned batch = pm_bins[bin].batch;
        walk_cached(bin, __atomic_load_n(&tc->bins[bin].head, __ATOMIC_RELAXED), batch, w->fn, w->ctx);
        walk_cached(bin, __atomic_load_n(&tc->spares[bin], __ATOMIC_RELAXED), batch, w->fn, w->ctx);
        walk_cached(bin, __atomic_load_n(&homeward_in(tc, bin)->head, __ATOMIC_RELAXED), batch, w->fn, w->ctx);
    }
}

void pm_tc_each_cached(void (*fn)(void *ctx, void *object), void *ctx)
{
    struct cached_walk w = {fn, ctx};
    pm_registry_each(walk_thread, &w);
}

static void count_thread(void *counts, const struct pm_thread_cache *tc)
{
    for (unsigned bin = 0; bin < PM_NBINS; bin++)
        ((size_t *)counts)[bin] += count_of(tc, bin);
}

size_t pm_tc_census(size_t counts[PM_NBINS])
{
    return pm_registry_each(count_thread, counts);
}
