/* Huge objects: runs of 2^k chunks, the smallest that holds the request,
 * reused through one free list per k threaded through the chunk table
 * (supermalloc-ismm2015.txt section 6).  Only the pages asked for are ever
 * touched; freeing gives them back to the kernel, so huge memory handed
 * out always reads as zero. */
#ifndef PM_HUGE_H
#define PM_HUGE_H

#include <stddef.h>
#include "chunk_table.h"

/* size > PM_LARGE_MAX; align a power of two.  NULL when out of memory. */
void *pm_huge_alloc(size_t size, size_t align);

/* e is the entry of p's chunk, tagged PM_TAG_HUGE. */
void pm_huge_free(void *p, struct pm_chunk_entry *e);
size_t pm_huge_usable(const struct pm_chunk_entry *e);

/* Resizes in place when size (> PM_LARGE_MAX) fits p's run; 1 if it did. */
int pm_huge_resize(void *p, struct pm_chunk_entry *e, size_t size);

void pm_huge_prefork(void);
void pm_huge_postfork(void);

#endif
