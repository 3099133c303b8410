#include "large.h"
#include "sizeclass.h"
#include "thread_cache.h"

static unsigned bin_for(size_t bytes)
{
    return pm_large_bin_by_pages[(bytes + PM_PAGE - 1) >> PM_PAGE_SHIFT];
}

void *pm_large_alloc(size_t size)
{
    size_t offset = (pm_tc_random() & (PM_PAGE / PM_LINE - 1)) * PM_LINE;
    if (offset > PM_LARGE_MAX - size)
        offset = (PM_LARGE_MAX - size) & ~(size_t)(PM_LINE - 1);
    char *slot = pm_tc_pop(bin_for(size + offset));
    return slot ? slot + offset : 0;
}

void *pm_large_alloc_aligned(size_t size)
{
    return pm_tc_pop(bin_for(size));
}

void *pm_large_slot(void *p, unsigned bin)
{
    const struct pm_bin *b = &pm_bins[bin];
    uintptr_t chunk = (uintptr_t)p & ~(PM_CHUNK - 1);
    uint32_t rel = (uint32_t)((uintptr_t)p - chunk) - PM_DATA_START;
    if (rel >= b->data_bytes)
        return 0;
    uint32_t start = pm_div_size(b, rel) * b->size;
    uint32_t offset = rel - start;
    if (offset >= PM_PAGE || offset % PM_LINE)
        return 0;
    return (void *)(chunk + PM_DATA_START + start);
}

/* The note is the offset plus a value derived from the slot, so that user
 * data left in a slot freed without a note is not taken for one. */
static uintptr_t note_key(void *slot)
{
    return ((uintptr_t)slot * 0x9e3779b97f4a7c15ull) | 1;
}

void pm_large_note(void *slot, void *p)
{
    ((uintptr_t *)slot)[2] = note_key(slot) + (uintptr_t)((char *)p - (char *)slot);
}

void *pm_large_noted(void *slot)
{
    uintptr_t offset = ((uintptr_t *)slot)[2] - note_key(slot);
    return offset < PM_PAGE ? (char *)slot + offset : slot;
}
