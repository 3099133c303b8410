#include "chunk_table.h"
#include "os.h"

struct pm_chunk_table pm_chunk_table;

#define LEAF_BYTES (sizeof(struct pm_chunk_entry) << PM_LEAF_BITS)

/* A leaf is published once with a compare-and-swap, so concurrent callers
 * need no lock: the loser unmaps its copy. */
int pm_chunk_table_cover(uintptr_t base, size_t size)
{
    for (uintptr_t t = base >> PM_LEAF_SHIFT; t <= (base + size - 1) >> PM_LEAF_SHIFT; t++) {
        if (__atomic_load_n(&pm_chunk_table.top[t], __ATOMIC_ACQUIRE))
            continue;
        char *leaf = pm_os_map(LEAF_BYTES, PM_PAGE);
        if (!leaf)
            return 0;
        uintptr_t none = 0, off = (uintptr_t)leaf - (uintptr_t)pm_chunk_table.zero_leaf;
        if (!__atomic_compare_exchange_n(&pm_chunk_table.top[t], &none, off, 0, __ATOMIC_RELEASE,
                                         __ATOMIC_RELAXED))
            pm_os_unmap(leaf, LEAF_BYTES);
    }
    return 1;
}

void pm_chunk_set(uintptr_t base, size_t size, uint32_t tag, uint32_t link)
{
    for (uintptr_t a = base; a < base + size; a += PM_CHUNK) {
        struct pm_chunk_entry *e = pm_chunk_at(a);
        e->link = link;
        __atomic_store_n(&e->tag, tag, __ATOMIC_RELEASE);
    }
}
