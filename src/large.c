#include "large.h"
#include "sizeclass.h"
#include "thread_cache.h"

static unsigned bin_for(size_t bytes)
{
    return pm_large_bin_by_pages[(bytes + PM_PAGE - 1) >> PM_PAGE_SHIFT];
}

void *pm_large_alloc(size_t size, const char *call)
{
    /* The sequence's top bits pick a line of the first page. */
    size_t offset = (size_t)((pm_tc_spread() >> 32) * (PM_PAGE / PM_LINE) >> 32) * PM_LINE;
    if (offset > PM_LARGE_MAX - size)
        offset = (PM_LARGE_MAX - size) & ~(size_t)(PM_LINE - 1);
    char *slot = pm_tc_pop(bin_for(size + offset), call);
    return slot ? slot + offset : 0;
}

void *pm_large_alloc_aligned(size_t size, const char *call)
{
    return pm_tc_pop(bin_for(size), call);
}
