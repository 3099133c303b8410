/* Large objects: one per page-multiple slot of a large bin, placed at a
 * random cache-line offset inside the slot's first page so that large
 * objects do not all start on the same cache sets
 * (supermalloc-ismm2015.txt section 5).  They are cached like any bin's
 * objects; the caches hold slot starts. */
#ifndef PM_LARGE_H
#define PM_LARGE_H

#include <stddef.h>

/* A large object of at least size bytes (PM_LOOKUP_MAX < size <=
 * PM_LARGE_MAX), at a random line offset in its slot. */
void *pm_large_alloc(size_t size);

/* A page-aligned large object of at least size bytes (size <= PM_LARGE_MAX). */
void *pm_large_alloc_aligned(size_t size);

/* The slot that p, a pointer into a large bin's chunk, was handed out from,
 * or NULL when p is not a pointer pm_large_alloc could have returned. */
void *pm_large_slot(void *p, unsigned bin);

/* A freed slot remembers the pointer it was freed by (its third word), so
 * that a double free found later names that pointer. */
void pm_large_note(void *slot, void *p);
/* The pointer noted for slot, or slot itself when there is no note. */
void *pm_large_noted(void *slot);

#endif
