/* SPDX-License-Identifier: MIT */
/* Large objects: random line offsets inside the slot's first page, slot
 * recovery from any returned pointer, page alignment when asked. */
#include <stdint.h>
#include "large.h"
#include "primalloc.h"
#include "sizeclass.h"
#include "chunk_table.h"
#include "unit.h"

int main(void)
{
    enum { N = 200 };
    void *objs[N];
    uint64_t offsets_seen = 0;
    for (int i = 0; i < N; i++) {
        size_t size = 20000 + (size_t)i * 4000;
        char *p = pm_large_alloc(size, "malloc");
        CHECK(p);
        unsigned bin = pm_bin_of_addr((uintptr_t)p);
        CHECK(bin < PM_NBINS && pm_bins[bin].kind == PM_LARGE);
        char *slot = pm_large_slot(p, bin);
        CHECK(slot && ((uintptr_t)slot & (PM_PAGE - 1)) == 0);
        size_t off = (size_t)(p - slot);
        CHECK(off % PM_LINE == 0 && off < PM_PAGE);
        offsets_seen |= 1ull << (off / PM_LINE);
        CHECK(slot + pm_bins[bin].size - p >= (long)size);
        CHECK(pm_malloc_usable_size(p) >= size);
        memset(p, i, size);
        CHECK(pm_large_slot(p + 8, bin) == 0);
        /* A later page of the slot is no slot's start. */
        CHECK(pm_large_slot(slot + PM_PAGE, bin) == 0);
        objs[i] = p;
    }
    /* Offsets are spread, not fixed. */
    CHECK(__builtin_popcountll(offsets_seen) > 16);
    for (int i = 0; i < N; i++) {
        CHECK(((unsigned char *)objs[i])[20000 - 1] == (unsigned char)i);
        pm_free(objs[i]);
    }
    for (size_t size = PM_LOOKUP_MAX + 1; size <= PM_LARGE_MAX; size += 77777) {
        char *p = pm_large_alloc_aligned(size, "aligned_alloc");
        CHECK(p && ((uintptr_t)p & (PM_PAGE - 1)) == 0);
        CHECK(pm_malloc_usable_size(p) >= size);
        pm_free(p);
    }
    /* The largest large request still fits with its offset. */
    char *p = pm_large_alloc(PM_LARGE_MAX, "malloc");
    CHECK(p && pm_malloc_usable_size(p) >= PM_LARGE_MAX);
    pm_free(p);
    printf("large ok\n");
    return 0;
}
