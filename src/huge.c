/* SPDX-License-Identifier: MIT */
#include "huge.h"
#include "chunk_pool.h"
#include "counters.h"
#include "footprint.h"
#include "options.h"
#include "os.h"

/* The first chunk's entry counts pages in 32 bits. */
#define MAX_BYTES ((size_t)UINT32_MAX << PM_PAGE_SHIFT)

/* At least one page, so that an object of size 0 has a page of its own;
 * size is at most MAX_BYTES. */
static size_t pages_of(size_t size)
{
    return size ? (size + PM_PAGE - 1) >> PM_PAGE_SHIFT : 1;
}

static size_t chunks_of(size_t pages)
{
    return (pages * PM_PAGE + PM_CHUNK - 1) >> PM_CHUNK_SHIFT;
}

/* How far an object of `pages` may be committed.  Its whole chunks may be
 * huge pages, and uncommitting part of one splits it (section 6): so its
 * tail is given back from the next chunk boundary on; that slack, under a
 * chunk an object, is not counted by the footprint rule. */
static size_t committed_end(size_t pages)
{
    size_t bytes = pages * PM_PAGE;
    return bytes < PM_CHUNK ? bytes : (bytes + PM_CHUNK - 1) & ~(PM_CHUNK - 1);
}

static size_t run_chunks(const void *p)
{
    struct pm_chunk_entry next = pm_chunk_read(pm_chunk_at((uintptr_t)p + PM_CHUNK));
    return next.tag == PM_TAG_HUGE_BODY ? next.link : 1;
}

/* Pages in use changed by delta: the footprint and the statistics move
 * together. */
static void account(long pages)
{
    pm_stat_add(&pm_stats_global.huge_bytes, pages * (long)PM_PAGE);
    pm_fp_inuse(pages * (long)PM_PAGE);
}

/* An object of at least TAIL_HUGE_CHUNKS chunks has its last, partial
 * chunk backed by a huge page too: one fault instead of up to 511, for at
 * most a chunk committed past the object, under a third of it. */
#define TAIL_HUGE_CHUNKS 4

/* Pages sampled to tell a filled object from a sparse one. */
#define FILL_SAMPLES 8

/* The huge object allocated last: its first chunk's address, or-ed with
 * its pages (at most PM_CHUNK - 1 of them counted).  0 before the first. */
static uintptr_t last_object;

/* Whether most of the pages of [base, base + pages) are in memory: an
 * object the program filled, not one it touches here and there. */
static int filled(const void *base, size_t pages)
{
    return pages && 2 * pm_os_resident_sample(base, pages * PM_PAGE, FILL_SAMPLES) > FILL_SAMPLES;
}

/* Huge pages save an object up to 511 faults a chunk, and commit a whole
 * chunk wherever the program writes a byte of it: they pay for an object
 * that is filled, and cost memory in one that is written sparsely.  Which
 * kind a new object is cannot be known, so it takes after the huge object
 * allocated before it, read now (a program that fills its objects has
 * filled that one by now; one that fills them sparsely has not). */
static int fill_expected(void)
{
    uintptr_t last = __atomic_load_n(&last_object, __ATOMIC_RELAXED);
    return filled((void *)(last & ~(PM_CHUNK - 1)), last & (PM_CHUNK - 1));
}

/* The object's whole chunks may be huge pages, and so may its last
 * fraction if the object is big, when it is expected filled (and the
 * setting agrees); the rest of the run keeps small ones, whatever an
 * earlier owner of the range chose. */
static void choose_page_size(char *base, size_t pages, size_t chunks, int full)
{
    size_t whole = 0;
    if (pm_huge_pages_for(full))
        whole = chunks >= TAIL_HUGE_CHUNKS ? chunks * PM_CHUNK : pages * PM_PAGE & ~(PM_CHUNK - 1);
    if (whole)
        pm_os_hugepage(base, whole, 1);
    if (whole < chunks * PM_CHUNK)
        pm_os_hugepage(base + whole, chunks * PM_CHUNK - whole, 0);
}

void *pm_huge_alloc(size_t size, size_t align, int *dirty)
{
    if (size > MAX_BYTES)
        return 0;
    size_t pages = pages_of(size), chunks = chunks_of(pages), had;
    char *base = pm_pool_take(chunks, align < PM_CHUNK ? PM_CHUNK : align, PM_TAG_HUGE, (uint32_t)pages, &had);
    if (!base)
        return 0;
    /* A reused run may hold committed pages anywhere: those past the
     * object go back. */
    size_t keep = committed_end(pages);
    if (had && keep < chunks * PM_CHUNK)
        pm_os_uncommit(base + keep, chunks * PM_CHUNK - keep);
    choose_page_size(base, pages, chunks, fill_expected());
    __atomic_store_n(&last_object, (uintptr_t)base | (pages < PM_CHUNK ? pages : PM_CHUNK - 1), __ATOMIC_RELAXED);
    if (dirty)
        *dirty = had != 0;
    account((long)pages);
    pm_stat_add(&pm_stats_global.huge_objects, 1);
    pm_count(PM_EV_huge_allocs);
    /* Pages the run did not bring may now be faulted in: the purge
     * policy weighs them. */
    if (had < pages * PM_PAGE)
        pm_fp_want_settle();
    return base;
}

/* The first entry turns free, link 0, in one step: a racing second free
 * sees the tag changed, and the pool's coalescing ignores a free entry
 * with link 0 until pm_pool_put files the run. */
void pm_huge_free(void *p, struct pm_chunk_entry *e)
{
    struct pm_chunk_entry seen, gone = {PM_TAG_FREE, 0};
    do {
        seen = pm_chunk_read(e);
        if (seen.tag != PM_TAG_HUGE)
            pm_fatal("free", p, "double free");
    } while (!pm_chunk_replace(e, seen, gone));
    account(-(long)seen.link);
    pm_stat_add(&pm_stats_global.huge_objects, -1);
    pm_count(PM_EV_huge_frees);
    pm_pool_put(p, run_chunks(p), seen.link * PM_PAGE);
    pm_fp_want_settle();
}

size_t pm_huge_usable(const struct pm_chunk_entry *e)
{
    return (size_t)e->link * PM_PAGE;
}

void *pm_huge_resize(void *p, struct pm_chunk_entry *e, size_t size)
{
    if (size > MAX_BYTES)
        return 0;
    size_t old = e->link, now = pages_of(size), chunks = run_chunks(p), need = chunks_of(now), had;
    char *base = p;
    int huge = filled(p, old);
    if (need > chunks && !pm_pool_extend((uintptr_t)base + chunks * PM_CHUNK, need - chunks, &had)) {
        base = pm_pool_move(p, chunks, need, PM_TAG_HUGE, (uint32_t)now);
        if (!base)
            return 0;
        pm_count(PM_EV_huge_moves);
        chunks = need;
    }
    size_t keep = committed_end(now), was = committed_end(old);
    if (was > keep)
        pm_os_uncommit(base + keep, was - keep);
    if (need < chunks)
        pm_pool_put(base + need * PM_CHUNK, chunks - need, 0);
    if (need > 1)
        pm_chunk_set((uintptr_t)base + PM_CHUNK, (need - 1) * PM_CHUNK, PM_TAG_HUGE_BODY, (uint32_t)need);
    pm_chunk_set((uintptr_t)base, PM_CHUNK, PM_TAG_HUGE, (uint32_t)now);
    choose_page_size(base, now, need, huge);
    account((long)now - (long)old);
    return base;
}
