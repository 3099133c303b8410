/* The purge policy of the footprint rule (footprint.h), over the two
 * places that hold dirty memory: empty folios of the bins and free runs of
 * the chunk pool.
 *
 * Promises: after pm_purge_settle(), the bounds of footprint.h hold as
 * far as dirty and pooled memory could be given back, and nothing has
 * been dirty or pooled for much longer than PM_DECAY_MS once a slow path
 * has run since.  With PRIMALLOC_PURGE_THREAD=1 in the environment, a
 * background thread gives it back within 1.25 PM_DECAY_MS even if no
 * slow path runs; without it, the process has no thread of primalloc's. */
#ifndef PM_PURGE_H
#define PM_PURGE_H

#include "footprint.h"

void pm_purge_settle(void);

/* What every caller of folios and huge objects runs before it returns:
 * a settle when they asked for one (footprint.h), else a load. */
static inline void pm_purge_if_wanted(void)
{
    if (__builtin_expect(__atomic_load_n(&pm_fp_unsettled, __ATOMIC_RELAXED), 0))
        pm_purge_settle();
}

/* Gives back all dirty and pooled memory now; returns 1 if there was
 * any. */
int pm_purge_all(void);

/* The environment variable that starts the background purge. */
#define PM_PURGE_THREAD_ENV "PRIMALLOC_PURGE_THREAD"

/* In the child of a fork taken with every lock: the parent's background
 * thread did not come along; the child starts its own when it needs one. */
void pm_purge_fork_child(void);

#endif
