/* SPDX-License-Identifier: MIT */
/* What malloc's and free's fast paths (fast_path.h) hand over, and what
 * the rest of the API (api.c) builds on: large and huge allocations,
 * sampled or not, and frees that a thread's list does not take, with the
 * one place that finds what a pointer handed back is.
 *
 * Promises: a pointer that is not a live object's start ends in pm_fatal
 * naming the call; a path that reaches huge objects or folios settles
 * (background.h) before it returns; an allocation returns NULL only with
 * errno ENOMEM. */
#ifndef PM_SLOW_PATHS_H
#define PM_SLOW_PATHS_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include "background.h"
#include "chunk_table.h"
#include "heap_profile.h"
#include "huge.h"
#include "large.h"

#pragma GCC visibility push(hidden)

/* A huge object, or, for a weight from pm_big_weight, a sampled large or
 * huge object (heap_profile.h); align a power of two; *dirty (if dirty is
 * not NULL) as pm_huge_alloc's.  Then the settle its allocation may call
 * for (background.h). */
static inline void *pm_alloc_huge(size_t size, size_t align, long weight, int *dirty)
{
    void *p = weight ? pm_prof_alloc_big(size, align, weight, dirty)
              : size <= PTRDIFF_MAX && align <= PM_CHUNK << 10 ? pm_huge_alloc(size, align, dirty)
                                                               : 0;
    pm_background_if_wanted();
    if (!p)
        errno = ENOMEM;
    return p;
}

/* pm_alloc_big while the heap profile is on. */
__attribute__((noinline)) void *pm_alloc_big_profiled(size_t size, const char *call);

/* A large or huge object of size bytes (size > PM_LOOKUP_MAX); call: the
 * API function, named in a report of misuse found on the way.  Inline in
 * malloc, whose path to it then needs no frame of its own. */
static inline void *pm_alloc_big(size_t size, const char *call)
{
    if (pm_unlikely(pm_prof_on))
        return pm_alloc_big_profiled(size, call);
    if (size <= PM_LARGE_MAX)
        return pm_large_alloc(size, call);
    return pm_alloc_huge(size, PM_CHUNK, 0, 0);
}

/* How a large or huge allocation of size bytes weighs in the heap
 * profile: 0 unless it is sampled. */
long pm_big_weight(size_t size);

/* Where a pointer handed to free, realloc or malloc_usable_size lives.
 * Anything that is not a live object's start ends in pm_fatal. */
struct pm_where {
    unsigned bin;              /* PM_NBINS for a huge object */
    void *start;               /* the object (for large ones, its slot; for
                                  a sampled one, its home) */
    int sampled;               /* p is a sampled object inside start */
    size_t usable;             /* bytes from p to the end of the object */
    struct pm_chunk_entry *huge;
    int guarded;               /* an object on a guard page (guard.h) */
    int zero;                  /* a zero-size object (zero.h) */
};

/* What p is; anything that is not a live object's start ends in pm_fatal
 * naming call, a freed object with `freed` as the report. */
struct pm_where pm_locate(void *p, const char *call, const char *freed);

/* Gives back p, located as w; site: the return address a guarded
 * object's report names as where it was freed. */
void pm_release(void *p, const struct pm_where *w, const char *call, void *site);

/* A free (of size bytes when the caller knows it, else 0) that free's
 * fast path did not take. */
__attribute__((noinline)) void pm_free_other(void *p, size_t size, const char *call);

#pragma GCC visibility pop

#endif
