/* Counters kept off the fast paths: they change only where a lock is
 * already taken or a system call is made. */
#ifndef PM_STATS_H
#define PM_STATS_H

#include <stddef.h>

struct pm_counters {
    size_t chunks;        /* chunks given to bins */
    size_t folios_in_use; /* folios carved and not empty */
    size_t huge_bytes;    /* bytes of huge objects in use (page-rounded) */
    size_t huge_objects;  /* huge objects in use */
};

extern struct pm_counters pm_stats_global;

static inline void pm_stat_add(size_t *counter, long delta)
{
    __atomic_fetch_add(counter, (size_t)delta, __ATOMIC_RELAXED);
}

#endif
