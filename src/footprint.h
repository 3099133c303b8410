/* SPDX-License-Identifier: MIT */
/* The footprint counters shared by folios, the chunk pool and huge
 * objects: bytes in use (in folios that hold objects, and in huge
 * objects), bytes dirty (empty folios, maybe still committed) and bytes
 * pooled (free runs of the chunk pool, maybe still committed), with the
 * high-water mark of bytes in use.  The rule they serve (purge.h): freed
 * memory stays committed so that allocating again costs no page faults,
 * but in use and dirty stay under the mark and a sixteenth, in use, dirty
 * and pooled under the mark and an eighth, and nothing stays dirty or
 * pooled longer than PM_DECAY_MS.  The slack lets freed folios and whole
 * freed chunks, which any size class and huge object can reuse, outlive
 * the moment a program's in-use bytes shift from one object to the next.
 *
 * Promises: no counter goes below zero (checked in debug builds); the mark
 * never falls. */
#ifndef PM_FOOTPRINT_H
#define PM_FOOTPRINT_H

#include <stddef.h>
#include <stdint.h>

#define PM_DECAY_MS 1000

void pm_fp_inuse(long delta);
void pm_fp_dirty(long delta);
void pm_fp_pooled(long delta);

/* Whether in use + dirty exceeds the mark and a sixteenth. */
int pm_fp_folios_over(void);
/* Whether in use + dirty + pooled exceeds the mark and an eighth. */
int pm_fp_pool_over(void);

/* For statistics: dirty and pooled bytes together, and the high-water
 * mark of bytes in use. */
void pm_fp_read(size_t *dirty, size_t *peak);

/* Nonzero once folios or huge objects have freed memory or grown since
 * the purge policy (purge.h), which sits above them, last settled: the
 * layers that call folios and huge objects settle before they return
 * while it is set.  The layers below set it and never purge. */
#pragma GCC visibility push(hidden)
extern uint32_t pm_fp_unsettled;
#pragma GCC visibility pop

static inline void pm_fp_want_settle(void)
{
    __atomic_store_n(&pm_fp_unsettled, 1, __ATOMIC_RELAXED);
}

#endif
