/* SPDX-License-Identifier: MIT */
/* The caches' tuned decisions, each a constant or a predicate with its
 * reason; docs/tuning.md has the figures that set them.  thread_cache.c
 * and cache.c hold the mechanism (lists, batches, chains, locks, the
 * accounting of budgets) and ask these where they choose.
 *
 * Promises: every predicate is a pure function of its arguments. */
#ifndef PM_CACHE_POLICY_H
#define PM_CACHE_POLICY_H

#include <stddef.h>
#include <stdint.h>

/* ---- a thread's budget ----
 *
 * Every thread may hold PM_TC_OWN_BUDGET, room for the lists of a few
 * bins at a time and for a list of any bin that fits in it.  A thread
 * whose lists need more doubles its budget, taking the difference from
 * what is left of PM_TC_SHARED_BUDGET, up to PM_TC_MAX_BUDGET, which
 * exceeds a list and a spare of every bin: a few busy threads hold what
 * they use, as without a budget, while the threads of a process hold at
 * most PM_TC_SHARED_BUDGET plus PM_TC_OWN_BUDGET each, however many there
 * are. */
#define PM_TC_OWN_BUDGET (64l << 10)
#define PM_TC_MAX_BUDGET (16l << 20)
#define PM_TC_SHARED_BUDGET (64l << 20)

/* The budget a thread with `budget` grows to when it needs `need` bytes:
 * doubled until they fit; 0 when that passes PM_TC_MAX_BUDGET. */
static inline long pm_grown_budget(long budget, long need)
{
    while (budget < need)
        budget *= 2;
    return budget <= PM_TC_MAX_BUDGET ? budget : 0;
}

/* ---- a new thread ----
 *
 * A new thread often frees what a thread on another CPU allocated: a
 * server's worker hands its objects to the thread it starts, which may
 * run on the other CPU.  Kept by the new thread, those objects would be
 * handed out again among the lines that the other CPU's threads still
 * use, and the two CPUs' objects would stay interleaved for good.  So
 * while new, a thread sends each object of a bin it allocates from home:
 * to the CPU whose lane carved the object's chunk, when that is another
 * CPU's.  An older thread keeps what it frees, which in a producer and
 * consumer feeds the producers on the consumer's CPU; sending those home
 * too would move every object across the CPUs a second time.
 *
 * A new thread watches only the small bins, objects of at most
 * PM_TC_NEW_WATCH_MAX bytes: a line or a page of them is shared by many
 * objects, which the two CPUs' threads would hand out side by side.  A
 * medium or large object fills its lines alone.  Sending those home buys
 * little and costs much where threads are short-lived, so new all their
 * lives: every free of theirs takes the slow path, and the objects go
 * round, sent home to a CPU, then taken from it by the other CPU whose
 * level they left empty.  Frees of other bins take the fast path from the
 * thread's start. */
#define PM_TC_NEW_WATCH_MAX 256

static inline int pm_new_thread_watches(size_t size)
{
    return size <= PM_TC_NEW_WATCH_MAX;
}

static inline int pm_sends_home(unsigned chunk_lane, unsigned my_lane)
{
    return chunk_lane != my_lane;
}

/* A thread is new for PM_TC_NEW_FREES frees: long enough for it to free
 * what it took over from its parent a few times over (a server's worker
 * hands over about a thousand objects), short enough that the sending
 * home ends before the thread's own flow sets in.  It stops sooner when
 * PM_TC_NEW_QUIET frees in a row sent nothing home: it had that many
 * chances to meet what it took over, so it took over nothing of another
 * CPU's, and a short-lived thread need not pay the slow path for all its
 * frees. */
#define PM_TC_NEW_FREES 8192
#define PM_TC_NEW_QUIET 1024

/* The free count at which a new thread stops being new, after a free
 * (its `frees`-th before it) that sent an object home. */
static inline uint32_t pm_new_until(uint32_t frees)
{
    uint32_t end = frees + 1 + PM_TC_NEW_QUIET;
    return end < PM_TC_NEW_FREES ? end : PM_TC_NEW_FREES;
}

/* ---- lists from the folios ----
 *
 * How many objects of `size` bytes a list from the folios asks for, of a
 * batch: no more than the bin has out already (`out`), and at least a
 * page's worth (or one object).  A bin a program uses for a few objects
 * then touches a page or two of them, not the eight pages whose first
 * words a batch of objects of a page or more links; a busy bin reaches
 * whole batches within a few refills, its count doubling each time. */
static inline unsigned pm_folio_list_length(size_t out, unsigned batch, size_t size, size_t page)
{
    if (out >= batch)
        return batch;
    size_t per_page = page / size, n = out > per_page ? out : per_page ? per_page : 1;
    return n < batch ? (unsigned)n : batch;
}

/* ---- the CPU and global levels ----
 *
 * A steal looks at up to PM_STEAL_SCAN other CPUs; the global level of a
 * bin holds 2P chains, at most PM_GLOBAL_MAX. */
#define PM_STEAL_SCAN 8
#define PM_GLOBAL_MAX 128

/* A CPU declines a chain from a CPU that took one from it within the
 * bin's last PM_RECENT_MOVES moves.  Two CPUs whose threads run the same
 * phases would otherwise pass the same memory to and fro, each taking the
 * chain the other took, every object a miss in the other CPU's cache.  A
 * CPU that declines carves instead, up to PM_CARVE_MAX bytes in the
 * process's life for chains of at least half a CPU chain and
 * PM_CARVE_SHORT for shorter ones: that slack gives each CPU a pool of its
 * own.  The bound is what the carving costs where such moves are the
 * workload's own flow (every object freed by another thread than
 * allocated it): memory held twice, up to the bound a CPU.  Bytes given
 * back to the folios do not renew the allowance. */
#define PM_RECENT_MOVES 4
#define PM_CARVE_MAX (512l << 10)
#define PM_CARVE_SHORT (256l << 10)

/* Whether a CPU that has carved `carved` bytes so far declines a chain of
 * `nbatches` (of a CPU chain of `cpu_batches`) from a CPU: took_from_me,
 * whether that CPU last took a chain from this one, `moves` moves of the
 * bin ago; batch_bytes, what carving a batch instead adds. */
static inline int pm_declines_chain(int took_from_me, unsigned moves, long carved, long batch_bytes,
                                    size_t nbatches, unsigned cpu_batches)
{
    long cap = 2 * nbatches >= cpu_batches ? PM_CARVE_MAX : PM_CARVE_SHORT;
    return took_from_me && moves < PM_RECENT_MOVES && carved + batch_bytes <= cap;
}

#endif
