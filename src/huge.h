/* Huge objects: runs of 2^k chunks, the smallest that holds the request,
 * reused through one free list per k threaded through the chunk table
 * (supermalloc-ismm2015.txt section 6).  Only the pages asked for are ever
 * touched.  A freed run stays committed under the rule of footprint.h and
 * is reused first; then its pages go back to the kernel. */
#ifndef PM_HUGE_H
#define PM_HUGE_H

#include <stddef.h>
#include <stdint.h>
#include "chunk_table.h"

/* align a power of two.  NULL when out of memory.  *dirty (if not NULL)
 * says whether the memory may hold old contents; else it reads as zero. */
void *pm_huge_alloc(size_t size, size_t align, int *dirty);

/* e is the entry of p's chunk, tagged PM_TAG_HUGE. */
void pm_huge_free(void *p, struct pm_chunk_entry *e);
size_t pm_huge_usable(const struct pm_chunk_entry *e);

/* Resizes in place when size (> PM_LARGE_MAX) fits p's run; 1 if it did. */
int pm_huge_resize(void *p, struct pm_chunk_entry *e, size_t size);

/* As pm_folio_purge_one, for freed runs. */
int pm_huge_purge_one(uint32_t before, int force);

/* Unmaps every free run (for when the kernel refuses more address space).
 * Returns 1 if it unmapped any. */
int pm_huge_unmap_free(void);

void pm_huge_prefork(void);
void pm_huge_postfork(void);

#endif
