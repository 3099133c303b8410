/* SPDX-License-Identifier: MIT */
/* malloc's and free's fast paths, inline in every entry point that
 * allocates or frees an object with no alignment asked for: the C
 * functions of api.c and the C++ operators of cxx_operators.c.  A small or
 * medium request is a table lookup and a pop from this thread's list; a
 * free of an object's start in a bin's chunk, a push on it.  Everything
 * else is a call away, in slow_paths.c.
 *
 * Promises: pm_alloc returns an object of at least size bytes, or NULL
 * with errno set to ENOMEM; pm_dealloc frees p, a pointer malloc or a
 * relative returned (or NULL), of at most size bytes when size is not 0,
 * or ends in pm_fatal naming call; pm_dealloc_aligned also ends there
 * when p lacks the alignment stated. */
#ifndef PM_FAST_PATH_H
#define PM_FAST_PATH_H

#include <stddef.h>
#include <stdint.h>
#include "background.h"
#include "chunk_table.h"
#include "os.h"
#include "sizeclass.h"
#include "slow_paths.h"
#include "thread_cache.h"

/* Every malloc and free finds its thread with nothing left to settle
 * (background.h) and leaves it so: debug builds check both ends, which
 * catches a path that forgets its settle in the call itself, or, for the
 * other API functions, at the thread's next malloc or free.  The checks
 * compile to nothing in other builds. */
static inline void *pm_left_settled(void *p)
{
    PM_ASSERT(pm_background_settled());
    return p;
}

/* call: the API function, named should a corrupted free list be found. */
static inline void *pm_alloc(size_t size, const char *call)
{
    PM_ASSERT(pm_background_settled());
    if (pm_likely(pm_tc_looks_up(size)))
        return pm_left_settled(pm_tc_pop_from(pm_tc_entry_of_size(size), call));
    if (size <= PM_LOOKUP_MAX)
        return pm_left_settled(pm_tc_pop_first(size, call));
    return pm_left_settled(pm_alloc_big(size, call));
}

/* The fast free: p must be an object's start in a bin's chunk (in the
 * fast library, any pointer into a small or medium bin's objects:
 * pm_tc_is_object) and, when the caller states a size, no bigger than the
 * object.  The chunk's bin
 * tag (its bin's entry's offset, or 0 for any other chunk or memory)
 * addresses this thread's entry directly, which holds the bin's object
 * test and size; the entry of tag 0, and every entry before the thread
 * has started, fail the test.  A large object (handed out at an offset)
 * or anything odd takes a slower path. */
static inline void pm_dealloc(void *p, size_t size, const char *call)
{
    PM_ASSERT(pm_background_settled());
    uintptr_t a = (uintptr_t)p;
    pm_tbin_fs *t = pm_tc_entry(pm_bin_tag_of_addr(a));
    uint32_t rel = (uint32_t)((a - PM_DATA_START) & (PM_CHUNK - 1));
    if (pm_likely(pm_tc_is_object(t, rel) && size <= t->size)) {
        pm_tc_push_to(t, p);
        PM_ASSERT(pm_background_settled());
        return;
    }
    if (p)
        pm_free_other(p, size, call);
    PM_ASSERT(pm_background_settled());
}

/* pm_dealloc of a pointer said to have alignment align, a power of two
 * (free_aligned_sized, C++'s aligned delete): one that lacks it is
 * misuse. */
static inline void pm_dealloc_aligned(void *p, size_t align, size_t size, const char *call)
{
    if (pm_unlikely((uintptr_t)p & (align - 1)))
        pm_fatal(call, p, "pointer not aligned as stated");
    pm_dealloc(p, size, call);
}

#endif
