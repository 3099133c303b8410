#include "large.h"
#include "sizeclass.h"
#include "thread_cache.h"

static unsigned bin_for(size_t bytes)
{
    return pm_large_bin_by_pages[(bytes + PM_PAGE - 1) >> PM_PAGE_SHIFT];
}

/* A slot popped from a list: the object it was last freed by at an
 * offset still carries its freed mark, and the note goes, so that a later
 * free at the slot's start (which writes none) leaves none behind. */
static void *reuse(char *slot, const char *call)
{
    if (!slot)
        return 0;
    void *old = pm_large_noted(slot);
    if (old != slot && pm_unlikely(*(uintptr_t *)old != pm_large_guard(old, 0)))
        pm_fatal(call, old, "large object written after it was freed");
    ((uintptr_t *)slot)[2] = 0;
    return slot;
}

void *pm_large_alloc(size_t size, const char *call)
{
    /* The sequence's top bits pick a line of the first page, never the
     * first line unless the largest sizes leave no room: the line before
     * the object holds its guard. */
    size_t offset = (1 + (size_t)((pm_tc_spread() >> 32) * (PM_PAGE / PM_LINE - 1) >> 32)) * PM_LINE;
    if (offset > PM_LARGE_MAX - size)
        offset = (PM_LARGE_MAX - size) & ~(size_t)(PM_LINE - 1);
    char *slot = reuse(pm_tc_pop(bin_for(size + offset), call), call);
    if (!slot)
        return 0;
    char *p = slot + offset;
    if (offset)
        ((uintptr_t *)p)[-1] = pm_large_guard(p, 1);
    return p;
}

void *pm_large_alloc_aligned(size_t size, const char *call)
{
    return reuse(pm_tc_pop(bin_for(size), call), call);
}
