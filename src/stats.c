/* SPDX-License-Identifier: MIT */
/* Statistics: the snapshot, pm_get_stats and glibc's mallinfo family.
 *
 * mallinfo2 keeps glibc's partition, so that programs written for glibc
 * add its fields as there (in use: uordblks + hblkhd; total: arena +
 * hblkhd): the bins' chunks stand for glibc's arenas, huge objects for its
 * mmapped chunks.  Bytes of an object are its slot's: its bin's object
 * size (a large object's counted from its page start), a huge object's
 * pages.
 *   arena     chunks given to bins, committed or not: uordblks + fordblks
 *   uordblks  objects of the bins in use: out of their folios and not
 *             cached free by any thread or by the CPU and global levels
 *   fordblks  arena - uordblks: free objects, cached or in their folios,
 *             folios not carved yet and the chunks' header pages
 *   ordblks   objects free in their folios
 *   smblks    objects cached free by the threads and the CPU and global
 *             levels (glibc's fastbin chunks)
 *   fsmblks   their bytes, part of fordblks
 *   hblks     huge objects in use
 *   hblkhd    their bytes
 *   usmblks   high-water mark of memory in use: non-empty folios and huge
 *             objects (footprint.h's mark; glibc reports 0)
 *   keepcost  bytes of empty folios and free chunk runs that may be
 *             committed, which malloc_trim gives back, with whatever
 *             folios draining the caches empties
 * mallinfo keeps each field's low 32 bits, as glibc's converts size_t to
 * int. */
#define _GNU_SOURCE
#include "stats.h"
#include <malloc.h>
#include "cache.h"
#include "chunk_pool.h"
#include "chunk_table.h"
#include "folio.h"
#include "footprint.h"
#include "layout.h"
#include "libc.h"
#include "primalloc.h"
#include "thread_cache.h"

static size_t at_least_zero(size_t a, size_t b)
{
    return a > b ? a - b : 0;
}

/* The threads' caches are read first and the folios last, so that an
 * object moving down meanwhile is seen twice rather than not at all, and
 * in use is not overstated. */
void pm_stats_take(struct pm_snapshot *s)
{
    *s = (struct pm_snapshot){0};
    struct pm_totals *t = &s->total;
    size_t by_threads[PM_NBINS] = {0};
    t->threads = pm_tc_census(by_threads);
    size_t bin_bytes = 0;
    for (unsigned bin = 0; bin < PM_NBINS; bin++) {
        const struct pm_bin *b = &pm_bins[bin];
        struct pm_bin_stats *o = &s->bins[bin];
        o->cached_thread = by_threads[bin];
        pm_cache_census(bin, &o->cached_cpu, &o->cached_global);
        struct pm_folio_census c;
        pm_folio_census(bin, &c);
        o->free = c.free;
        o->in_use = at_least_zero(c.objects - c.free, o->cached_thread + o->cached_cpu + o->cached_global);
        o->folios = c.folios;
        o->folios_in_use = c.folios_in_use;
        o->chunks = c.chunks;
        o->dirty = c.dirty;
        o->committed = c.active + c.dirty;
        bin_bytes += o->in_use * b->size;
        t->active += c.active;
        t->bins_chunks += c.chunks;
    }
    pm_counts_read(&s->events);
    t->huge_objects = __atomic_load_n(&pm_stats_global.huge_objects, __ATOMIC_RELAXED);
    t->huge_bytes = __atomic_load_n(&pm_stats_global.huge_bytes, __ATOMIC_RELAXED);
    t->allocated = bin_bytes + t->huge_bytes;
    t->active += t->huge_bytes;
    pm_fp_read(&t->dirty, &t->peak_active);
    t->committed = t->active + t->dirty;
    struct pm_pool_census pool;
    pm_pool_census(&pool);
    t->mapped = pool.bytes;
    t->peak_mapped = pool.peak;
    t->pooled = pool.free * PM_CHUNK;
    t->metadata = pm_folio_metadata() + pm_cache_metadata() + pm_chunk_table_metadata() +
                  pool.metadata + t->threads * sizeof(struct pm_thread_cache);
}

PM_API void pm_get_process_stats(struct pm_process_stats *out)
{
    struct pm_snapshot s;
    pm_stats_take(&s);
    const struct pm_totals *t = &s.total;
    *out = (struct pm_process_stats){
        .allocated = t->allocated,
        .active = t->active,
        .dirty = t->dirty,
        .committed = t->committed,
        .metadata = t->metadata,
        .mapped = t->mapped,
        .peak_active = t->peak_active,
        .peak_mapped = t->peak_mapped,
        .huge_objects = t->huge_objects,
        .threads = t->threads,
    };
}

PM_API void pm_get_stats(struct pm_stats *out)
{
    out->chunks = __atomic_load_n(&pm_stats_global.chunks, __ATOMIC_RELAXED);
    out->folios_in_use = __atomic_load_n(&pm_stats_global.folios_in_use, __ATOMIC_RELAXED);
    out->huge_bytes = __atomic_load_n(&pm_stats_global.huge_bytes, __ATOMIC_RELAXED);
}

#ifdef PM_STD_NAMES
PM_API struct mallinfo2 mallinfo2(void)
{
    struct pm_snapshot s;
    pm_stats_take(&s);
    struct mallinfo2 m = {0};
    for (unsigned bin = 0; bin < PM_NBINS; bin++) {
        const struct pm_bin_stats *b = &s.bins[bin];
        size_t cached = b->cached_thread + b->cached_cpu + b->cached_global;
        m.ordblks += b->free;
        m.smblks += cached;
        m.fsmblks += cached * pm_bins[bin].size;
    }
    m.arena = s.total.bins_chunks * PM_CHUNK;
    m.uordblks = s.total.allocated - s.total.huge_bytes;
    m.fordblks = m.arena - m.uordblks;
    m.hblks = s.total.huge_objects;
    m.hblkhd = s.total.huge_bytes;
    m.usmblks = s.total.peak_active;
    m.keepcost = s.total.dirty;
    return m;
}

PM_API struct mallinfo mallinfo(void)
{
    struct mallinfo2 m = mallinfo2();
    return (struct mallinfo){
        .arena = (int)m.arena,
        .ordblks = (int)m.ordblks,
        .smblks = (int)m.smblks,
        .hblks = (int)m.hblks,
        .hblkhd = (int)m.hblkhd,
        .usmblks = (int)m.usmblks,
        .fsmblks = (int)m.fsmblks,
        .uordblks = (int)m.uordblks,
        .fordblks = (int)m.fordblks,
        .keepcost = (int)m.keepcost,
    };
}
#endif
