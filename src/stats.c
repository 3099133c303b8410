/* Statistics: the pm_get_stats counters and glibc's mallinfo family.
 *
 * mallinfo2 keeps glibc's partition, so that programs written for glibc
 * add its fields as there (in use: uordblks + hblkhd; total: arena +
 * hblkhd): the bins' chunks stand for glibc's arenas, huge objects for its
 * mmapped chunks.  Bytes of an object are its slot's: its bin's object
 * size (a large object's counted from its page start), a huge object's
 * pages.
 *   arena     chunks given to bins, committed or not: uordblks + fordblks
 *   uordblks  objects of the bins in use: out of their folios and not
 *             cached free by the CPU and global levels or by the calling
 *             thread.  Other threads' caches count as in use, as glibc
 *             counts its tcache, until those threads exit and their caches
 *             go to the CPU level.
 *   fordblks  arena - uordblks: free objects, cached or in their folios,
 *             folios not carved yet and the chunks' header pages
 *   ordblks   objects free in their folios
 *   smblks    objects cached free by the CPU and global levels and by the
 *             calling thread (glibc's fastbin chunks)
 *   fsmblks   their bytes, part of fordblks
 *   hblks     huge objects in use
 *   hblkhd    their bytes
 *   usmblks   high-water mark of memory in use: non-empty folios and huge
 *             objects (footprint.h's mark; glibc reports 0)
 *   keepcost  bytes of empty folios and free chunk runs that may be
 *             committed, which malloc_trim gives back, with whatever
 *             folios draining the caches empties
 * The levels are read one after another while other threads run: the
 * fields are exact when no other thread allocates or frees meanwhile, and
 * otherwise off by what those threads moved.  mallinfo keeps each field's
 * low 32 bits, as glibc's converts size_t to int. */
#define _GNU_SOURCE
#include "stats.h"
#include <malloc.h>
#include <unistd.h>
#include "cache.h"
#include "folio.h"
#include "footprint.h"
#include "layout.h"
#include "primalloc.h"
#include "sizeclass.h"
#include "thread_cache.h"

struct pm_counters pm_stats_global;

PM_API void pm_get_stats(struct pm_stats *out)
{
    out->chunks = __atomic_load_n(&pm_stats_global.chunks, __ATOMIC_RELAXED);
    out->folios_in_use = __atomic_load_n(&pm_stats_global.folios_in_use, __ATOMIC_RELAXED);
    out->huge_bytes = __atomic_load_n(&pm_stats_global.huge_bytes, __ATOMIC_RELAXED);
}

#ifdef PM_STD_NAMES
PM_API struct mallinfo2 mallinfo2(void)
{
    struct mallinfo2 m = {0};
    size_t taken = 0;
    for (unsigned bin = 0; bin < PM_NBINS; bin++) {
        size_t carved, nfree, size = pm_bins[bin].size;
        pm_folio_census(bin, &carved, &nfree);
        size_t cached = pm_cache_count(bin) + pm_tc_count(bin);
        m.ordblks += nfree;
        m.smblks += cached;
        m.fsmblks += cached * size;
        taken += (carved - nfree) * size;
    }
    /* Read after the census: chunks are never taken back, so arena holds
     * every object counted. */
    m.arena = __atomic_load_n(&pm_stats_global.chunks, __ATOMIC_RELAXED) * PM_CHUNK;
    m.uordblks = taken > m.fsmblks ? taken - m.fsmblks : 0;
    m.fordblks = m.arena - m.uordblks;
    m.hblks = __atomic_load_n(&pm_stats_global.huge_objects, __ATOMIC_RELAXED);
    m.hblkhd = __atomic_load_n(&pm_stats_global.huge_bytes, __ATOMIC_RELAXED);
    pm_fp_read(&m.keepcost, &m.usmblks);
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

static char *put_dec(char *o, const char *label, size_t v)
{
    while (*label)
        *o++ = *label++;
    char digits[24];
    int n = 0;
    do
        digits[n++] = (char)('0' + v % 10);
    while ((v /= 10));
    while (n)
        *o++ = digits[--n];
    return o;
}

PM_API void malloc_stats(void)
{
    struct pm_stats s;
    pm_get_stats(&s);
    char buf[160], *o = buf;
    o = put_dec(o, "primalloc: chunks ", s.chunks);
    o = put_dec(o, ", folios in use ", s.folios_in_use);
    o = put_dec(o, ", huge bytes ", s.huge_bytes);
    *o++ = '\n';
    ssize_t ignored = write(2, buf, (size_t)(o - buf));
    (void)ignored;
}
#endif
