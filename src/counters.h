/* SPDX-License-Identifier: MIT */
/* Counters kept off the fast paths: they change only on slow paths, where
 * a lock is already taken, a list of objects moves between levels or a
 * system call is made.  The statistics (stats.h) read them.
 *
 * Event counts are split in slots by the CPU that counts them, so that
 * CPUs counting at once write lines of their own; a read adds up the
 * slots.  Each count is exact once no thread counts any more. */
#ifndef PM_COUNTERS_H
#define PM_COUNTERS_H

#include <stddef.h>
#include <stdint.h>
#include "sizeclass.h"

/* Process-wide amounts, changed by atomic adds. */
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

/* Events of each bin: X(name, what it counts). */
#define PM_BIN_EVENTS(X)                                                         \
    X(refills, "thread lists asked of the CPU and global levels")              \
    X(flushes, "lists of objects threads handed to the CPU level")             \
    X(folio_allocs, "lists taken from the folios")                             \
    X(folio_frees, "lists given back to the folios")

/* Events of the whole process. */
#define PM_EVENTS(X)                                                             \
    X(steals, "CPU lists taken from another CPU")                              \
    X(global_puts, "CPU lists handed down to the global level")                \
    X(global_takes, "CPU lists taken from the global level")                   \
    X(folio_purges, "empty folios whose pages went back to the kernel")        \
    X(page_releases, "folios in use that gave pages inside them back")         \
    X(reserves, "address space reservations mapped")                          \
    X(unmaps, "pieces of free runs unmapped")                                  \
    X(huge_allocs, "huge objects allocated")                                   \
    X(huge_frees, "huge objects freed")                                        \
    X(huge_moves, "huge objects moved to a longer run")

#define PM_ENUM_ITEM(name, what) PM_EV_##name,
enum pm_bin_event { PM_BIN_EVENTS(PM_ENUM_ITEM) PM_NBIN_EVENTS };
enum pm_event { PM_EVENTS(PM_ENUM_ITEM) PM_NEVENTS };
#undef PM_ENUM_ITEM

void pm_count_bin(unsigned bin, enum pm_bin_event e);
void pm_count(enum pm_event e);

/* The counts so far, summed over the slots. */
struct pm_event_counts {
    uint64_t bins[PM_NBINS][PM_NBIN_EVENTS];
    uint64_t process[PM_NEVENTS];
};
void pm_counts_read(struct pm_event_counts *out);

#endif
