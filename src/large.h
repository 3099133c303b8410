/* SPDX-License-Identifier: MIT */
/* Large objects: one per page-multiple slot of a large bin, placed at a
 * random cache-line offset inside the slot's first page so that large
 * objects do not all start on the same cache sets
 * (the SuperMalloc paper section 5).  They are cached like any bin's
 * objects; the caches hold slot starts.
 *
 * An object at an offset (not at its slot's start) carries canaries in
 * room of its slot that no object uses (canary.h): the line before it
 * holds one, checked when it is freed, so that an underflow or a free of
 * a pointer inside it aborts; once freed, its first word holds another,
 * checked when the slot is handed out again or its folio takes it back,
 * so that a write after free aborts. */
#ifndef PM_LARGE_H
#define PM_LARGE_H

#include <stddef.h>
#include <stdint.h>
#include "canary.h"
#include "sizeclass.h"

/* A large object of at least size bytes (PM_LOOKUP_MAX < size <=
 * PM_LARGE_MAX), at a random line offset in its slot, or a sampled one
 * (guard.h), the return address its site.  call: the API
 * function, named in a report of misuse found here. */
void *pm_large_alloc(size_t size, const char *call);

/* A page-aligned large object of at least size bytes (size <= PM_LARGE_MAX).
 * Both abort, naming call, if the slot they hand out was written to after
 * it was freed at an offset. */
void *pm_large_alloc_aligned(size_t size, const char *call);

/* The slot that p, a pointer into a large bin's chunk, was handed out from,
 * or NULL when p is not a pointer pm_large_alloc could have returned.
 * Slots are whole pages from a page-aligned data start and offsets lie in
 * the first page, so the slot is p's page: a mask, not a division, which
 * shortens the chain every large free waits on.  Inline, like
 * pm_large_note, because every large free calls both. */
_Static_assert(PM_DATA_START % PM_PAGE == 0, "large slots start on pages");
static inline void *pm_large_slot(void *p, unsigned bin)
{
    uintptr_t slot = (uintptr_t)p & ~(PM_PAGE - 1);
    uint32_t rel = (uint32_t)(slot & (PM_CHUNK - 1)) - PM_DATA_START;
    if ((uintptr_t)p % PM_LINE || !pm_is_object(&pm_bins[bin], rel))
        return 0;
    return (void *)slot;
}

#endif
