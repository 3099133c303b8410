/* SPDX-License-Identifier: MIT */
/* The per-thread cache: for each bin, the list malloc pops from and free
 * pushes to, and one spare full batch (the SuperMalloc paper section 8,
 * made as lean as a thread-local pop and push).
 *
 * Promises: pm_tc_pop and pm_tc_push touch only this thread's data unless
 * the list is empty or full, or the thread is new; the slow paths move
 * whole batches to and from the shared levels.  A new thread's frees take
 * the slow path, which sends each object of a bin the thread allocates
 * from home when its chunk was carved for another CPU's lane
 * (cache_policy.h says why), until it has freed PM_TC_NEW_FREES times or
 * PM_TC_NEW_QUIET times in a row with nothing sent.  A thread's objects
 * return to the shared levels when it exits.  What all threads can hold
 * together is bounded: each holds at most its budget, a small one of its
 * own and what it took from one budget shared by all threads.  A double
 * free aborts before the object is handed out twice: at once when the
 * object heads the list it would join, and otherwise when a pop reaches
 * the second copy and finds the mark that every free object in a list
 * carries (free_object.h) already taken.  Free reads nothing of the
 * object, whose line is often cold.  Links are encoded (free_object.h);
 * pm_tc_pop checks the link it follows and the mark. */
#ifndef PM_THREAD_CACHE_H
#define PM_THREAD_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include "arch.h"
#include "cache_policy.h"
#include "free_object.h"
#include "os.h"
#include "sizeclass.h"

struct pm_tbin {
    void *head; /* free objects linked through their first word, or
                   PM_LIST_END when there are none: never NULL, for pop
                   reads its link unchecked (free_object.h) */
    int32_t room; /* how many more objects the list takes, plus its bias;
                     none with an empty list until the thread first
                     allocates or frees in this bin (again after a flush),
                     so that this takes the slow path */
    /* The bin's object size and object test (pm_tc_is_object), set when the
     * thread starts: free reads them from the line it touches anyway, and
     * needs no address of the bin's struct pm_bin.  Zero until then, which
     * fails every pointer. */
    uint32_t size;
    uint64_t recip, limit;
};
_Static_assert(sizeof(struct pm_tbin) == PM_BIN_STRIDE,
               "a scaled bin is an entry's offset, and a shift scales a tag to it");

/* Objects of a bin a new thread sends to the CPU of one carving lane. */
struct pm_homeward {
    void *head;
    uint16_t n;
    uint16_t lane;
};

/* Added to the rooms of the bins whose frees a new thread checks
 * (thread_cache.c says which, cache_policy.h for how long). */
#define PM_TC_NEW_BIAS (-(1 << 30))

/* Chunk tag t (chunk_table.h: 0, or PM_BIN_TAG(b)) is the offset of its
 * entry: `none`, which nothing writes and whose object test fails, or
 * bins[b]. */
struct pm_thread_cache {
    struct pm_tbin none;
    struct pm_tbin bins[PM_NBINS];
    struct pm_tbin zero; /* size 0's entry, bins[PM_NBINS] to the size
                            table: its list is always empty, so that its
                            pop goes to pm_tc_refill (zero.h) */
    void *spares[PM_NBINS]; /* a full batch of each bin, or NULL */
    uint64_t spread; /* pm_tc_spread */
    uint32_t state;
    uint32_t frees;     /* slow-path frees while new */
    uint32_t new_end;   /* frees at which the thread stops being new */
    int32_t bias;       /* PM_TC_NEW_BIAS while the thread is new,
                           then 0: added to the rooms of the bins whose
                           frees a new thread checks (thread_cache.c), it
                           keeps them below 1, so that free's fast path,
                           which tests room alone, sends those frees the
                           slow way */
    struct pm_bin_set allocates; /* bin b: the thread took a list of it */
    struct pm_bin_set open;      /* bin b may have a list, room, a spare or
                           homeward objects; every other bin has none of
                           them, so that returning them all visits only
                           the bins a thread used */
    long granted;       /* bytes the thread may hold: a batch of each open
                           list and each spare, and its homeward objects */
    long budget;        /* granted never exceeds it (thread_cache.c) */
    /* Only objects of small bins go home (cache_policy.h), so only those
     * bins have homeward lists: a new thread's static TLS block, which
     * its stack's first page shares with its first frames, stays small. */
    struct pm_homeward homeward[PM_SMALL_BINS];
};
_Static_assert(PM_TC_NEW_WATCH_MAX <= PM_SMALL_MAX, "a bin a new thread watches has a homeward list");

#pragma GCC visibility push(hidden)
extern __thread struct pm_thread_cache pm_tc __attribute__((tls_model("initial-exec")));
#pragma GCC visibility pop

/* This thread's entry at byte offset `at` of pm_tc, addressed as the
 * architecture layer addresses thread variables (arch.h). */
_Static_assert(offsetof(struct pm_thread_cache, bins) == sizeof(struct pm_tbin),
               "the entry at offset t of pm_tc is tag t's");
_Static_assert(offsetof(struct pm_thread_cache, zero) == (PM_NBINS + 1) * sizeof(struct pm_tbin),
               "the size table's PM_NBINS is the zero entry");
typedef struct pm_tbin PM_ARCH_TP pm_tbin_fs;
static inline pm_tbin_fs *pm_tc_at(uintptr_t at)
{
    return (pm_tbin_fs *)PM_ARCH_TP_AT(pm_tc, at);
}

/* This thread's entry of a chunk's bin tag (chunk_table.h). */
static inline pm_tbin_fs *pm_tc_entry(unsigned tag)
{
    PM_ASSERT(tag % PM_BIN_STRIDE == 0 && tag / PM_BIN_STRIDE <= PM_NBINS);
    return pm_tc_at(tag);
}

/* This thread's entry of a bin scaled by PM_BIN_STRIDE (sizeclass.h): the
 * entry after the one at that offset, so that the step folds into the
 * instructions that use it. */
static inline pm_tbin_fs *pm_tc_scaled(unsigned scaled)
{
    PM_ASSERT(scaled % PM_BIN_STRIDE == 0 && scaled / PM_BIN_STRIDE <= PM_NBINS);
    return pm_tc_at(scaled) + 1;
}

static inline pm_tbin_fs *pm_tc_bin(unsigned bin)
{
    return pm_tc_scaled(bin * PM_BIN_STRIDE);
}

/* For a request of at most PM_LOOKUP_MAX bytes, by pm_by_16: the
 * offset of this thread's entry of its bin from the thread's base
 * (arch.h), the same in every thread, so that malloc adds no offset of
 * pm_tc.  All are made before pm_tc_lookup_end turns from 0 to
 * PM_LOOKUP_MAX + 1, at the process's first malloc or thread start; until
 * then, every request takes malloc's slow path (pm_tc_pop_first). */
#pragma GCC visibility push(hidden)
extern int32_t pm_tc_entry_by_16[PM_BY_16_ENTRIES];
extern uint64_t pm_tc_lookup_end;
#pragma GCC visibility pop

/* Whether the table above has size's entry. */
static inline int pm_tc_looks_up(size_t size)
{
    return pm_arch_below(size, &pm_tc_lookup_end);
}

/* This thread's entry for a request of size bytes, which pm_tc_looks_up. */
static inline pm_tbin_fs *pm_tc_entry_of_size(size_t size)
{
    PM_ASSERT(size <= PM_LOOKUP_MAX && pm_tc_lookup_end);
    return (pm_tbin_fs *)PM_ARCH_TP_REL(pm_tc, pm_tc_entry_by_16[pm_by_16(size)]);
}

/* What pm_tc_take could not do: refills t's list when it is empty, and
 * otherwise reports its head, whose link failed its check or which lacks
 * the mark, and aborts; for the zero entry, a zero-size object.  t: the bin's entry, from pm_tc_bin; call: the
 * API function, named in the report.  The bin is found from t, so that
 * malloc's fast path need not keep it for the call. */
void *pm_tc_refill(pm_tbin_fs *t, const char *call);
/* Frees p, an object of t's bin, where pm_tc_push's fast path could not,
 * with t's room decremented. */
void pm_tc_free_slow(void *p, pm_tbin_fs *t);

/* The link of p, the head of a thread's list, decoded as stored: the
 * list end stays PM_LIST_END.  The caller tests it (free_object.h).  A
 * new thread's first pop reads the secret at the list end while another
 * thread may be drawing it, hence the atomic load (a plain one on x86);
 * either value fails the list end's check. */
static inline uintptr_t pm_tc_next(const void *p)
{
    return *(const uintptr_t *)p ^ (PM_CHECKED ? __atomic_load_n(&pm_link_secret, __ATOMIC_RELAXED) : 0);
}

/* Takes p, the head of t's list, whose link decoded to next, an object
 * or PM_LIST_END: both mapped.  The next object's line is fetched now:
 * where objects come back cold (freed by another thread, long ago), the
 * next malloc of the bin would otherwise wait for it to read the link. */
static inline void *pm_tc_unlink(pm_tbin_fs *t, void *p, uintptr_t next)
{
    __builtin_prefetch((void *)next);
    t->head = (void *)next;
    t->room++;
    return p;
}

/* An object from t's list, or NULL when it is empty (its head
 * PM_LIST_END, whose link fails the check), or its head's link fails the
 * check or its head lacks the mark (pm_tc_pop_from, on the caller's slow
 * path, tells these apart): no call, and no test for empty.  The mark is
 * taken only past the link's check, which the list end never passes. */
static inline void *pm_tc_take(pm_tbin_fs *t)
{
    void *p = t->head;
    uintptr_t next = pm_tc_next(p);
    return pm_likely(pm_link_ok(next) && pm_take_mark(p)) ? pm_tc_unlink(t, p, next) : 0;
}

/* An object from t's list, refilled when empty; NULL only when memory
 * ran out (errno ENOMEM). */
static inline void *pm_tc_pop_from(pm_tbin_fs *t, const char *call)
{
    void *p = pm_tc_take(t);
    return pm_likely(p) ? p : pm_tc_refill(t, call);
}

static inline void *pm_tc_pop(unsigned bin, const char *call)
{
    return pm_tc_pop_from(pm_tc_bin(bin), call);
}

/* pm_tc_pop_from for a request of at most PM_LOOKUP_MAX bytes that
 * pm_tc_looks_up refused: the table is made first. */
void *pm_tc_pop_first(size_t size, const char *call);

/* Whether free may push a pointer at rel onto t's list: an object of t's
 * bin starts there (pm_divides).  The fast library leaves this test out:
 * there, any offset below the end of the bin's objects passes, and no
 * offset in a large bin, whose objects lie at offsets from their slots
 * (thread_cache.c).  Never before the thread has started, nor for the entry
 * of tag 0. */
static inline int pm_tc_is_object(pm_tbin_fs *t, uint32_t rel)
{
    return PM_CHECKED ? pm_divides(rel, t->recip, t->limit) : rel < t->limit;
}

/* Puts p at the head of t's list; the caller has taken its room. */
static inline void pm_tc_link_in(pm_tbin_fs *t, void *p)
{
    pm_link_marked(p, t->head);
    t->head = p;
}

/* Pushes p, an object of t's bin, on t's list.  The room is decremented
 * before anything is tested, and its sign taken from the decrement: two
 * instructions fewer than a test of it beside the head's.  p at the head
 * already is a double free (not tested in the fast library).
 * pm_tc_free_slow puts the room back, unless it keeps p in the list. */
static inline void pm_tc_push_to(pm_tbin_fs *t, void *p)
{
    if (pm_likely(--t->room >= 0 && (!PM_CHECKED || p != t->head))) {
        pm_tc_link_in(t, p);
        return;
    }
    pm_tc_free_slow(p, t);
}

static inline void pm_tc_push(void *p, unsigned bin)
{
    pm_tc_push_to(pm_tc_bin(bin), p);
}

int pm_tc_holds_walk(const void *p, unsigned bin, const char *call);

/* Is p among the objects this thread holds free for bin?  Only an object
 * that carries the mark costs a call and a walk. */
static inline int pm_tc_holds(const void *p, unsigned bin, const char *call)
{
    return pm_unlikely(pm_carries_mark(p)) && pm_tc_holds_walk(p, bin, call);
}

/* A per-thread sequence for large-object offsets: a Weyl sequence (n times
 * the golden ratio, from a random start), whose top bits spread evenly
 * over their range.  Each large malloc waits on it: one add, where
 * xorshift's six shifts and xors were a chain of their own. */
static inline uint64_t pm_tc_spread(void)
{
    uint64_t x = pm_tc.spread;
    if (pm_unlikely(!x))
        x = pm_os_random_seed();
    pm_tc.spread = x += 0x9e3779b97f4a7c15ull;
    return x;
}

/* Returns this thread's cached objects to the shared levels. */
void pm_tc_flush(void);

/* Checks this thread's cache against its specification: an open list (one
 * with objects or room) holds a batch less its room, a closed one nothing;
 * a spare holds a batch; a homeward list holds what it counts, less than
 * a batch; every object is of its bin; granted bytes are
 * those of the open lists, spares and homeward objects, within the
 * budget.  Ends in pm_fatal naming the first that fails. */
void pm_tc_check(void);

/* In the child of a fork taken with every lock: the threads that did not
 * survive hold no budget. */
void pm_tc_fork_child(void);

/* Objects of bin cached by this thread (for tests). */
size_t pm_tc_count(unsigned bin);

/* Adds to counts[bin] the objects of bin that every live thread caches,
 * and returns how many threads use their caches.  Other threads' lists
 * are read while they change: each count may be off by what those
 * threads move meanwhile. */
size_t pm_tc_census(size_t counts[PM_NBINS]);

/* Calls fn with each object that a live thread's cache holds (its lists,
 * spares and homeward objects), other threads' read while they run: a
 * walk ends early at a link that fails its check, so fn may miss
 * objects those threads move meanwhile. */
void pm_tc_each_cached(void (*fn)(void *ctx, void *object), void *ctx);

#endif
