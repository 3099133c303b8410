/* SPDX-License-Identifier: MIT */
#include "slow_paths.h"
#include <stdint.h>
#include "background.h"
#include "chunk_table.h"
#include "free_object.h"
#include "guard.h"
#include "heap_profile.h"
#include "huge.h"
#include "large.h"
#include "sizeclass.h"
#include "thread_cache.h"
#include "zero.h"

long pm_big_weight(size_t size)
{
    return pm_unlikely(pm_prof_on) && size <= PTRDIFF_MAX ? pm_sampler_charge(size) : 0;
}

void *pm_alloc_big_profiled(size_t size, const char *call)
{
    long weight = pm_big_weight(size);
    if (size <= PM_LARGE_MAX && !weight)
        return pm_large_alloc(size, call);
    return pm_alloc_huge(size, PM_ALIGN, weight, 0);
}

struct pm_where pm_locate(void *p, const char *call, const char *freed)
{
    uintptr_t a = (uintptr_t)p;
    struct pm_chunk_entry *e = pm_chunk_entry_of(a);
    uint32_t tag = e ? e->tag : 0;
    unsigned bin = pm_bin_of_tag(tag);
    struct pm_where w = {PM_NBINS, p, 0, 0, 0, 0, 0};
    if (bin < PM_NBINS) {
        w.bin = bin;
        const struct pm_bin *b = &pm_bins[w.bin];
        uint32_t rel = (uint32_t)(a & (PM_CHUNK - 1)) - PM_DATA_START;
        if (b->kind == PM_LARGE)
            w.start = pm_large_slot(p, w.bin);
        else if (!pm_is_object(b, rel))
            w.start = 0;
        if (!w.start)
            w.sampled = (w.start = pm_prof_home(p)) != 0;
        if (!w.start)
            pm_fatal(call, p, "pointer inside an object, not at its start");
        if (pm_tc_holds(w.start, w.bin, call))
            pm_fatal(call, p, freed);
        w.usable = (size_t)((char *)w.start + b->size - (char *)p);
        return w;
    }
    /* A sampled object's mapping may lie where the table still tells of
     * a chunk that was given back. */
    int was_freed;
    if (tag != PM_TAG_HUGE && pm_guard_find(p, &w.usable, &was_freed)) {
        if (was_freed)
            pm_fatal(call, p, freed);
        w.guarded = 1;
        return w;
    }
    switch (tag) {
    case PM_TAG_HUGE:
        if (a & (PM_CHUNK - 1))
            pm_fatal(call, p, "pointer inside an object, not at its start");
        w.huge = e;
        w.usable = pm_huge_usable(e);
        return w;
    case PM_TAG_ZERO:
        if (!pm_zero_live(p, call))
            pm_fatal(call, p, freed);
        w.zero = 1;
        return w;
    case PM_TAG_FREE:
    case PM_TAG_GONE:
        pm_fatal(call, p, freed);
    case PM_TAG_HUGE_BODY:
        pm_fatal(call, p, "pointer inside an object, not at its start");
    default:
        pm_fatal(call, p, "pointer not allocated by primalloc");
    }
}

void pm_release(void *p, const struct pm_where *w, const char *call, void *site)
{
    if (w->zero) {
        pm_zero_free(p, call);
        return;
    }
    if (w->guarded) {
        pm_guard_free(p, call, site);
        return;
    }
    if (w->huge || w->sampled) {
        pm_prof_free(p);
        if (w->huge)
            pm_huge_free(w->start, w->huge);
        else
            pm_prof_give_back(w->start, w->bin);
        pm_background_if_wanted();
        return;
    }
    pm_large_release(w->start, p, call);
    pm_tc_push(w->start, w->bin);
}

/* A free that is no large object's at its offset: checked against what
 * the pointer is, then released. */
static __attribute__((noinline)) void free_slow(void *p, size_t size, const char *call)
{
    struct pm_where w = pm_locate(p, call, "double free");
    if (size > w.usable)
        pm_fatal(call, p, "size larger than the object");
    pm_release(p, &w, call, __builtin_return_address(0));
}

/* A free the fast path did not take.  A large object at its offset: its
 * canary checked, back to its slot, noting the pointer for a double free
 * found later.  Anything else, and a slot with the free mark, goes the
 * slow way, which tells a double free from a mark the program stored. */
void pm_free_other(void *p, size_t size, const char *call)
{
    unsigned bin = pm_bin_of_addr((uintptr_t)p);
    char *slot = bin < PM_NBINS && pm_bins[bin].kind == PM_LARGE ? pm_large_slot(p, bin) : 0;
    if (!slot || pm_carries_mark(slot) ||
        size > (size_t)(slot + pm_bins[bin].size - (char *)p)) {
        free_slow(p, size, call);
        return;
    }
    pm_large_release(slot, p, call);
    pm_tc_push(slot, bin);
}
