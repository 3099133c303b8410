/* SPDX-License-Identifier: MIT */
/* Statistics: one reading of every level of the allocator, from which
 * pm_get_stats, the mallinfo family and the reports (report.h) are made.
 * It reads the counters and censuses the modules below keep on their slow
 * paths; the fast paths count nothing.
 *
 * The levels are read one after another while other threads run: the
 * figures are exact when no other thread allocates or frees meanwhile,
 * and otherwise off by what those threads moved. */
#ifndef PM_STATS_H
#define PM_STATS_H

#include <stddef.h>
#include <stdint.h>
#include "counters.h"
#include "sizeclass.h"

/* One bin.  Objects are counted in the bin's slots (a large object's slot
 * from its page start); every carved object is in use, cached at one
 * level, or free in its folio. */
struct pm_bin_stats {
    size_t in_use;         /* objects the program holds */
    size_t cached_thread;  /* objects in threads' caches */
    size_t cached_cpu;     /* objects in the CPU level */
    size_t cached_global;  /* objects in the global level */
    size_t free;           /* objects free in their folios */
    size_t folios;         /* folios carved */
    size_t folios_in_use;  /* folios holding objects */
    size_t chunks;
    size_t committed;      /* bytes of its folios that may be committed:
                              those in use and dirty ones */
    size_t dirty;          /* bytes of its empty folios and chunk tails
                              that may be committed */
};

/* Totals in bytes, but for the counts of objects and threads. */
struct pm_totals {
    size_t allocated;      /* objects in use: bins' slots, huge pages */
    size_t active;         /* folios that hold objects, and huge objects */
    size_t dirty;          /* empty folios and free runs that may be
                              committed */
    size_t committed;      /* active + dirty: all that may be committed,
                              but for metadata */
    size_t mapped;         /* address space of chunks */
    size_t peak_mapped;    /* its high-water mark */
    size_t pooled;         /* free runs in the chunk pool, committed or not */
    size_t metadata;       /* bookkeeping: static, mapped and chunk headers */
    size_t peak_active;    /* high-water mark of active (footprint.h) */
    size_t huge_objects;
    size_t huge_bytes;
    size_t bins_chunks;    /* chunks given to bins */
    size_t threads;        /* threads using their caches */
};

struct pm_snapshot {
    struct pm_totals total;
    struct pm_bin_stats bins[PM_NBINS];
    struct pm_event_counts events;
};

void pm_stats_take(struct pm_snapshot *s);

#endif
