#include "chunk_table.h"
#include "huge.h"
#include "lock.h"
#include "os.h"
#include "stats.h"

struct pm_chunk_entry pm_chunk_table[1ul << PM_TABLE_BITS];

/* Chunks are carved from 64 MiB reservations, so that the kernel sees few
 * mappings and the chunks of one program sit together. */
#define PM_REGION (32 * PM_CHUNK)

static pm_lock region_lock;
static char *region_next, *region_end;

void *pm_chunk_alloc(unsigned bin, unsigned lane)
{
    pm_lock_take(&region_lock);
    if (region_next == region_end) {
        char *r = pm_os_map(PM_REGION, PM_CHUNK);
        size_t size = PM_REGION;
        if (!r) {
            r = pm_os_map(PM_CHUNK, PM_CHUNK);
            size = PM_CHUNK;
        }
        if (!r && pm_huge_unmap_free())
            r = pm_os_map(PM_CHUNK, PM_CHUNK);
        if (!r) {
            pm_lock_drop(&region_lock);
            return 0;
        }
        region_next = r;
        region_end = r + size;
    }
    char *c = region_next;
    region_next += PM_CHUNK;
    pm_lock_drop(&region_lock);
    pm_chunk_set((uintptr_t)c, PM_CHUNK, bin + 1, lane);
    pm_stat_add(&pm_stats_global.chunks, 1);
    return c;
}

void pm_chunk_set(uintptr_t base, size_t size, uint32_t tag, uint32_t link)
{
    for (uintptr_t a = base; a < base + size; a += PM_CHUNK) {
        struct pm_chunk_entry *e = &pm_chunk_table[a >> PM_CHUNK_SHIFT];
        e->link = link;
        __atomic_store_n(&e->tag, tag, __ATOMIC_RELEASE);
    }
}

void pm_chunk_prefork(void)
{
    pm_lock_take(&region_lock);
}

void pm_chunk_postfork(void)
{
    pm_lock_drop(&region_lock);
}
