/* SPDX-License-Identifier: MIT */
#include "chunk_table.h"
#include "os.h"

struct pm_chunk_table pm_chunk_table;

/* Leaves mapped outside the window. */
static size_t own_leaves;

#define LEAF_BYTES (sizeof(struct pm_chunk_entry) << PM_LEAF_BITS)

/* The window's first span: the first span covered and the 14 below it
 * (the kernel hands out address space downwards from there) and 1 above,
 * within the table. */
static void place_window(uintptr_t span)
{
    uint32_t unplaced = 0;
    if (!__atomic_compare_exchange_n(&pm_chunk_table.window_placed, &unplaced, 1, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        return;
    uintptr_t first = span > PM_WINDOW_SPANS - 2 ? span - (PM_WINDOW_SPANS - 2) : 0;
    if (first > (1ul << PM_TOP_BITS) - PM_WINDOW_SPANS)
        first = (1ul << PM_TOP_BITS) - PM_WINDOW_SPANS;
    __atomic_store_n(&pm_chunk_table.window_from, first << PM_LEAF_BITS, __ATOMIC_RELEASE);
}

/* A span's leaf: its slice of the window, or else a mapping of its own.
 * NULL when that cannot be mapped. */
static char *leaf_for(uintptr_t span)
{
    uintptr_t first = __atomic_load_n(&pm_chunk_table.window_from, __ATOMIC_ACQUIRE) >> PM_LEAF_BITS;
    if (span - first < PM_WINDOW_SPANS)
        return (char *)&pm_chunk_table.window[(span - first) << PM_LEAF_BITS];
    return pm_os_map(LEAF_BYTES, PM_PAGE);
}

/* A leaf is published once with a compare-and-swap, so concurrent callers
 * need no lock: a loser with a mapping of its own unmaps it. */
int pm_chunk_table_cover(uintptr_t base, size_t size)
{
    place_window(base >> PM_LEAF_SHIFT);
    for (uintptr_t t = base >> PM_LEAF_SHIFT; t <= (base + size - 1) >> PM_LEAF_SHIFT; t++) {
        if (__atomic_load_n(&pm_chunk_table.top[t], __ATOMIC_ACQUIRE))
            continue;
        char *leaf = leaf_for(t);
        if (!leaf)
            return 0;
        uintptr_t none = 0, off = (uintptr_t)leaf - (uintptr_t)&pm_chunk_table;
        int own = (size_t)(leaf - (char *)pm_chunk_table.window) >= sizeof pm_chunk_table.window;
        if (__atomic_compare_exchange_n(&pm_chunk_table.top[t], &none, off, 0, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED))
            __atomic_fetch_add(&own_leaves, own, __ATOMIC_RELAXED);
        else if (own)
            pm_os_unmap(leaf, LEAF_BYTES);
    }
    return 1;
}

size_t pm_chunk_table_metadata(void)
{
    return sizeof pm_chunk_table + __atomic_load_n(&own_leaves, __ATOMIC_RELAXED) * LEAF_BYTES;
}

/* Each entry is written whole, in one store, as pm_chunk_read reads it. */
void pm_chunk_set(uintptr_t base, size_t size, uint32_t tag, uint32_t link)
{
    PM_ASSERT((uint16_t)tag % PM_BIN_STRIDE == 0 && (uint16_t)tag <= PM_BIN_TAG(PM_NBINS - 1));
    uint64_t w = pm_chunk_pack((struct pm_chunk_entry){tag, link});
    for (uintptr_t a = base; a < base + size; a += PM_CHUNK)
        __atomic_store_n((pm_chunk_word *)pm_chunk_at(a), w, __ATOMIC_RELEASE);
}

void pm_chunk_each(void (*fn)(void *ctx, uintptr_t chunk, struct pm_chunk_entry e), void *ctx)
{
    for (uintptr_t span = 0; span < 1ul << PM_TOP_BITS; span++) {
        if (!__atomic_load_n(&pm_chunk_table.top[span], __ATOMIC_ACQUIRE))
            continue;
        for (uintptr_t i = 0; i < 1ul << PM_LEAF_BITS; i++) {
            uintptr_t chunk = (span << PM_LEAF_SHIFT) + (i << PM_CHUNK_SHIFT);
            struct pm_chunk_entry e = pm_chunk_read(pm_chunk_in(span, chunk));
            if (e.tag)
                fn(ctx, chunk, e);
        }
    }
}
