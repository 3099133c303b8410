#include "huge.h"
#include "footprint.h"
#include "lock.h"
#include "os.h"
#include "stats.h"

#define ORDERS (PM_TABLE_BITS + 1)

/* A freed run still committed: its record lives in its own first page. */
struct dirty_run {
    struct dirty_run *next, *prev; /* newest first */
    size_t pages;                  /* of its last object: see committed_end */
    uint32_t since;                /* ms when freed */
    uint32_t order;
};

static pm_lock lock;
static uint32_t clean_runs[ORDERS]; /* chunk index of the first uncommitted run, 0 if none */
static struct dirty_run *dirty_first, *dirty_last;

static void dirty_unlink(struct dirty_run *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        dirty_first = r->next;
    if (r->next)
        r->next->prev = r->prev;
    else
        dirty_last = r->prev;
}

/* At least one page: a run's first page holds its record once freed. */
static size_t pages_of(size_t size)
{
    return size ? (size + PM_PAGE - 1) >> PM_PAGE_SHIFT : 1;
}

/* Where a run holding an object of `pages` may be committed up to.  An
 * object of whole 2 MiB pages may use huge pages, and uncommitting part of
 * one splits it (section 6): so its tail is given back from the next 2 MiB
 * boundary on; that slack, under 2 MiB an object, is not counted by the
 * footprint rule.  malloc-large (5-25 MiB buffers reusing each other's runs),
 * per run: 76 huge-page splits -> 0, page faults 75.7 K -> 52.8 K, max RSS
 * 377 -> 384 MiB (/proc/vmstat and GNU time). */
static size_t committed_end(size_t pages)
{
    size_t bytes = pages * PM_PAGE;
    return bytes < PM_CHUNK ? bytes : (bytes + PM_CHUNK - 1) & ~(PM_CHUNK - 1);
}

static unsigned order_of(size_t size)
{
    size_t chunks = (size + PM_CHUNK - 1) >> PM_CHUNK_SHIFT;
    return chunks <= 1 ? 0 : 64 - (unsigned)__builtin_clzl(chunks - 1);
}

void *pm_huge_alloc(size_t size, size_t align, int *dirty)
{
    if (size > ((size_t)1 << PM_ADDRESS_BITS) / 2)
        return 0;
    unsigned order = order_of(size);
    size_t run = PM_CHUNK << order, pages = pages_of(size);
    char *base = 0;
    struct dirty_run *r = 0;
    if (align <= PM_CHUNK) {
        /* The smallest committed run that holds the request: a bigger run
         * serves a smaller request with its tail given back. */
        pm_lock_take(&lock);
        for (struct dirty_run *d = dirty_first; d; d = d->next)
            if (d->order >= order && (!r || d->order < r->order))
                r = d;
        if (r) {
            order = r->order;
            dirty_unlink(r);
            base = (char *)r;
        } else if (clean_runs[order]) {
            uint32_t i = clean_runs[order];
            clean_runs[order] = pm_chunk_table[i].link;
            base = (char *)((uintptr_t)i << PM_CHUNK_SHIFT);
        }
        pm_lock_drop(&lock);
    }
    if (dirty)
        *dirty = r != 0;
    if (r) {
        pm_fp_dirty(-(long)(r->pages * PM_PAGE));
        size_t keep = committed_end(pages), had = committed_end(r->pages);
        if (had > keep)
            pm_os_uncommit(base + keep, had - keep);
    }
    if (!base) {
        base = pm_os_map(run, align > PM_CHUNK ? align : PM_CHUNK);
        if (!base && pm_huge_unmap_free())
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
    pm_chunk_set((uintptr_t)base, PM_CHUNK, PM_TAG_HUGE + order, (uint32_t)pages);
    pm_stat_add(&pm_stats_global.huge_bytes, (long)(pages * PM_PAGE));
    pm_stat_add(&pm_stats_global.huge_objects, 1);
    pm_fp_inuse((long)(pages * PM_PAGE));
    if (!r)
        pm_fp_settle();
    return base;
}

/* The run is marked free under the lock, so a racing second free is caught;
 * it stays committed, under the footprint rule. */
void pm_huge_free(void *p, struct pm_chunk_entry *e)
{
    pm_lock_take(&lock);
    uint32_t tag = e->tag;
    if ((tag & PM_TAG_KIND) != PM_TAG_HUGE)
        pm_fatal("free", p, "double free");
    e->tag = PM_TAG_HUGE_FREE + (tag - PM_TAG_HUGE);
    /* Once the lock drops, another thread may take the run: read nothing
     * of it after that. */
    long bytes = (long)e->link * (long)PM_PAGE;
    struct dirty_run *r = p;
    r->pages = e->link;
    r->order = tag - PM_TAG_HUGE;
    r->since = pm_os_now_ms();
    r->prev = 0;
    r->next = dirty_first;
    if (dirty_first)
        dirty_first->prev = r;
    else
        dirty_last = r;
    dirty_first = r;
    pm_lock_drop(&lock);
    pm_stat_add(&pm_stats_global.huge_bytes, -bytes);
    pm_stat_add(&pm_stats_global.huge_objects, -1);
    pm_fp_inuse(-bytes);
    pm_fp_dirty(bytes);
    pm_fp_settle();
}

int pm_huge_purge_one(uint32_t before, int force)
{
    pm_lock_take(&lock);
    struct dirty_run *r = dirty_last;
    if (!r || (!force && (int32_t)(before - r->since) < 0)) {
        pm_lock_drop(&lock);
        return 0;
    }
    dirty_unlink(r);
    pm_lock_drop(&lock);
    uint32_t order = r->order;
    size_t pages = r->pages;
    pm_fp_dirty(-(long)(pages * PM_PAGE));
    pm_os_uncommit(r, committed_end(pages));
    uint32_t i = (uint32_t)((uintptr_t)r >> PM_CHUNK_SHIFT);
    pm_lock_take(&lock);
    pm_chunk_table[i].link = clean_runs[order];
    clean_runs[order] = i;
    pm_lock_drop(&lock);
    return 1;
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
    size_t keep = committed_end(now), had = committed_end(old);
    if (had > keep)
        pm_os_uncommit((char *)p + keep, had - keep);
    e->link = (uint32_t)now;
    pm_stat_add(&pm_stats_global.huge_bytes, ((long)now - (long)old) * (long)PM_PAGE);
    return 1;
}

/* Free runs keep their address space, which an address-space limit may
 * need back: unmap them all. */
int pm_huge_unmap_free(void)
{
    while (pm_huge_purge_one(0, 1))
        ;
    int any = 0;
    pm_lock_take(&lock);
    for (unsigned order = 0; order < ORDERS; order++)
        while (clean_runs[order]) {
            uint32_t i = clean_runs[order];
            clean_runs[order] = pm_chunk_table[i].link;
            uintptr_t base = (uintptr_t)i << PM_CHUNK_SHIFT;
            pm_chunk_set(base, PM_CHUNK << order, 0, 0);
            pm_os_unmap((void *)base, PM_CHUNK << order);
            any = 1;
        }
    pm_lock_drop(&lock);
    return any;
}

void pm_huge_prefork(void)
{
    pm_lock_take(&lock);
}

void pm_huge_postfork(void)
{
    pm_lock_drop(&lock);
}
