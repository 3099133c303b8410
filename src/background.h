/* SPDX-License-Identifier: MIT */
/* The background thread, off unless PRIMALLOC_PURGE_THREAD=1 asks for it,
 * the settle every caller of folios and huge objects runs, which starts
 * or wakes it, and the test that a thread left no settle undone.
 *
 * Promises: with the thread on, dirty and pooled memory goes back as
 * purge.h says, and what the CPU and global levels hold goes to the
 * folios as cache.h says, within PM_DECAY_MS / 4 of when a slow path
 * would have done it, though the program makes no call at all; whole
 * batches keep the thread awake, a CPU's loose objects (fewer than a
 * batch of a bin) only go along.  Without it, the process has no thread
 * of primalloc's. */
#ifndef PM_BACKGROUND_H
#define PM_BACKGROUND_H

#include "footprint.h"

/* Settles (purge.h), then starts the thread at the first call that finds
 * the environment asking for it, or wakes it if it waits while memory
 * waits to be given back.  Called with no lock held. */
void pm_background_settle(void);

/* What every caller of folios and huge objects runs before it returns:
 * a settle when this thread's calls asked for one (footprint.h), else a
 * load. */
static inline void pm_background_if_wanted(void)
{
    if (__builtin_expect(pm_fp_unsettled, 0))
        pm_background_settle();
}

/* Whether this thread has nothing left to settle: what holds whenever
 * control is outside primalloc, checked in debug builds at both ends of
 * malloc and free (fast_path.h). */
static inline int pm_background_settled(void)
{
    return !pm_fp_unsettled;
}

/* In the child of a fork taken with every lock: the parent's thread did
 * not come along; the child starts its own when it needs one. */
void pm_background_fork_child(void);

#endif
