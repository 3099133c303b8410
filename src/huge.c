#include "huge.h"
#include "lock.h"
#include "os.h"
#include "stats.h"

#define ORDERS (PM_TABLE_BITS + 1)

static pm_lock lock;
static uint32_t free_runs[ORDERS]; /* chunk index of the first free run, 0 if none */

static size_t pages_of(size_t size)
{
    return (size + PM_PAGE - 1) >> PM_PAGE_SHIFT;
}

static unsigned order_of(size_t size)
{
    size_t chunks = (size + PM_CHUNK - 1) >> PM_CHUNK_SHIFT;
    return chunks <= 1 ? 0 : 64 - (unsigned)__builtin_clzl(chunks - 1);
}

void *pm_huge_alloc(size_t size, size_t align)
{
    if (size > ((size_t)1 << PM_ADDRESS_BITS) / 2)
        return 0;
    unsigned order = order_of(size);
    size_t run = PM_CHUNK << order;
    char *base = 0;
    if (align <= PM_CHUNK) {
        pm_lock_take(&lock);
        uint32_t i = free_runs[order];
        if (i) {
            free_runs[order] = pm_chunk_table[i].link;
            base = (char *)((uintptr_t)i << PM_CHUNK_SHIFT);
        }
        pm_lock_drop(&lock);
    }
    if (!base) {
        base = pm_os_map(run, align > PM_CHUNK ? align : PM_CHUNK);
        if (!base)
            return 0;
        /* Huge pages only where whole 2 MiB pages are asked for: the last
         * fraction keeps small pages (section 6). */
        size_t whole = size & ~(PM_CHUNK - 1);
        if (whole)
            pm_os_hugepage(base, whole);
        pm_chunk_set((uintptr_t)base + PM_CHUNK, run - PM_CHUNK, PM_TAG_HUGE_BODY, 0);
    }
    pm_chunk_set((uintptr_t)base, PM_CHUNK, PM_TAG_HUGE + order, (uint32_t)pages_of(size));
    pm_stat_add(&pm_stats_global.huge_bytes, (long)(pages_of(size) * PM_PAGE));
    return base;
}

/* The run is marked free first, so a racing second free is caught, and
 * linked for reuse only after its pages are back with the kernel. */
void pm_huge_free(void *p, struct pm_chunk_entry *e)
{
    pm_lock_take(&lock);
    uint32_t tag = e->tag;
    if ((tag & PM_TAG_KIND) != PM_TAG_HUGE)
        pm_fatal("free", p, "double free");
    e->tag = PM_TAG_HUGE_FREE + (tag - PM_TAG_HUGE);
    pm_lock_drop(&lock);
    size_t bytes = (size_t)e->link * PM_PAGE;
    pm_os_uncommit(p, bytes);
    pm_stat_add(&pm_stats_global.huge_bytes, -(long)bytes);
    pm_lock_take(&lock);
    e->link = free_runs[tag - PM_TAG_HUGE];
    free_runs[tag - PM_TAG_HUGE] = (uint32_t)((uintptr_t)p >> PM_CHUNK_SHIFT);
    pm_lock_drop(&lock);
}

size_t pm_huge_usable(const struct pm_chunk_entry *e)
{
    return (size_t)e->link * PM_PAGE;
}

int pm_huge_resize(void *p, struct pm_chunk_entry *e, size_t size)
{
    unsigned order = e->tag - PM_TAG_HUGE;
    if (size > PM_CHUNK << order)
        return 0;
    size_t old = e->link, now = pages_of(size);
    if (now < old)
        pm_os_uncommit((char *)p + now * PM_PAGE, (old - now) * PM_PAGE);
    e->link = (uint32_t)now;
    pm_stat_add(&pm_stats_global.huge_bytes, ((long)now - (long)old) * (long)PM_PAGE);
    return 1;
}

void pm_huge_prefork(void)
{
    pm_lock_take(&lock);
}

void pm_huge_postfork(void)
{
    pm_lock_drop(&lock);
}
