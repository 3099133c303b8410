/* SPDX-License-Identifier: MIT */
/* Huge objects: each a run of whole chunks from the chunk pool, as many as
 * hold the request (the SuperMalloc paper section 6, with the shared
 * pool in place of its power-of-two free lists).  Only the pages asked for
 * are touched; an object's whole chunks, and a big one's last fraction,
 * may be huge pages when the huge object allocated before it was found
 * filled.  A freed run goes back to the pool with its committed pages,
 * for the next taker of any kind.
 *
 * The chunk table says what each chunk is: the first chunk's entry is
 * tagged PM_TAG_HUGE with the pages in use, every later one
 * PM_TAG_HUGE_BODY with the run's length.  Bytes in use are counted, page
 * by page, in the footprint (footprint.h) and the statistics together. */
#ifndef PM_HUGE_H
#define PM_HUGE_H

#include <stddef.h>
#include <stdint.h>
#include "chunk_table.h"

/* align a power of two.  NULL when out of memory.
 * *dirty (if not NULL) says whether the memory may hold old contents; else
 * it reads as zero. */
void *pm_huge_alloc(size_t size, size_t align, int *dirty);

/* e is the entry of p's chunk, read as tagged PM_TAG_HUGE; a second free
 * of p, even racing with this one, ends in pm_fatal. */
void pm_huge_free(void *p, struct pm_chunk_entry *e);
size_t pm_huge_usable(const struct pm_chunk_entry *e);

/* Resizes p (entry e) to size > PM_LARGE_MAX: in place within its run or
 * into free chunks right after it, else by moving its pages (not copying
 * its bytes) to a new run.  The object's address, or NULL when no run
 * could be had (p is unchanged then). */
void *pm_huge_resize(void *p, struct pm_chunk_entry *e, size_t size);

#endif
