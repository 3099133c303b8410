/* SPDX-License-Identifier: MIT */
#include "large.h"
#include "guard.h"
#include "sizeclass.h"
#include "thread_cache.h"

static unsigned bin_for(size_t bytes)
{
    return pm_large_bin_by_pages[(bytes + PM_PAGE - 1) >> PM_PAGE_SHIFT];
}

static void *reuse(void *slot, const char *call)
{
    if (slot)
        pm_large_check_freed(slot, call);
    return slot;
}

static void *place(size_t size, const char *call)
{
    /* The sequence's top bits pick a line of the first page, never the
     * first line unless the largest sizes leave no room: the line before
     * the object holds its canary. */
    size_t offset = (1 + (size_t)((pm_tc_spread() >> 32) * (PM_PAGE / PM_LINE - 1) >> 32)) * PM_LINE;
    if (offset > PM_LARGE_MAX - size)
        offset = (PM_LARGE_MAX - size) & ~(size_t)(PM_LINE - 1);
    char *slot = reuse(pm_tc_pop(bin_for(size + offset), call), call);
    if (!slot)
        return 0;
    char *p = slot + offset;
    if (offset)
        pm_large_canary_set(p);
    return p;
}

/* Apart, so that the common path keeps no frame for the calls here; a
 * tail call, so that the return address is still malloc's caller. */
static __attribute__((noinline)) void *sample(size_t size, const char *call)
{
    void *g;
    if (!pm_guard_quota(1) && (g = pm_guard_alloc(size, PM_ALIGN, __builtin_return_address(0))))
        return g;
    return place(size, call);
}

/* A process's first large allocation may come before any thread cache
 * has started and read the guard rate (guard.h): while the rate reads 0,
 * it is read here (once; later calls find it read). */
void *pm_large_alloc(size_t size, const char *call)
{
    if (pm_unlikely(pm_guard_rate))
        return sample(size, call);
    pm_guard_init();
    if (pm_unlikely(pm_guard_rate))
        return sample(size, call);
    return place(size, call);
}

void *pm_large_alloc_aligned(size_t size, const char *call)
{
    return reuse(pm_tc_pop(bin_for(size), call), call);
}
