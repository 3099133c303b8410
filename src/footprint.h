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

/* Per thread: nonzero once this thread's calls have freed memory in or
 * grown folios or huge objects, or decayed the caches, since it last
 * settled (purge.h).  The modules that do so set it and never purge; the
 * callers above them settle before control leaves primalloc
 * (background.h), which debug builds check at both ends of every malloc
 * and free (fast_path.h).  Kept per thread, it is each thread's own to
 * clear, no thread writes a line the others share, and the background
 * thread, which settles on its own period, reads none. */
#pragma GCC visibility push(hidden)
extern __thread uint32_t pm_fp_unsettled __attribute__((tls_model("initial-exec")));
#pragma GCC visibility pop

static inline void pm_fp_want_settle(void)
{
    pm_fp_unsettled = 1;
}

#endif
