/* Size classes ("bins").  Every constant comes from tools/gen_sizeclasses.c,
 * which runs at build time (supermalloc-ismm2015.txt section 7).
 *
 * Promises: pm_bin_of_small() maps a request of at most PM_LOOKUP_MAX
 * bytes to the bin whose objects are the smallest that hold it, as
 * pm_large_bin_by_pages does for a large request by its pages and
 * pm_pow2_bin_by_log for an aligned one by the log of its size; every
 * object of a bin starts at chunk + PM_DATA_START + i * size and is
 * aligned to 1 << align_log (at least 16); pm_div_size() divides any chunk
 * offset by a bin's size exactly; pm_is_object() tells exactly whether an
 * offset starts an object and pm_object_index() which one it starts. */
#ifndef PM_SIZECLASS_H
#define PM_SIZECLASS_H

#include <stddef.h>
#include <stdint.h>
#include "layout.h"
#include "sizeclass_table.h"

enum pm_kind { PM_SMALL, PM_MEDIUM, PM_POW2, PM_LARGE };

struct pm_bin {
    uint32_t size;            /* object size; the slot size for large bins */
    uint32_t magic;           /* x / size == (x * magic) >> shift, x < PM_CHUNK */
    uint8_t shift;
    uint8_t kind;             /* enum pm_kind */
    uint8_t folio_log;        /* log2 of objects per folio */
    uint8_t align_log;        /* every object is aligned to 1 << align_log */
    uint16_t batch;           /* objects in a thread-cache list */
    uint16_t cpu_batches;     /* batches in a CPU-cache list */
    uint32_t inverse;         /* of size's odd part, mod 2^32 */
    uint32_t folio_bytes;
    uint32_t objs_per_chunk;
    uint16_t folios_per_chunk;
    uint8_t size_tz;          /* size == odd part << size_tz */
};
_Static_assert(PM_MAX_FOLIOS <= UINT16_MAX, "folios_per_chunk is 16 bits");
_Static_assert(sizeof(struct pm_bin) == 32, "a bin's description is half a cache line");

#pragma GCC visibility push(hidden)
extern const struct pm_bin pm_bins[PM_NBINS];
extern const uint8_t pm_bin_by_16[(PM_LOOKUP_MAX + 15) / 16 + 1];
extern const uint8_t pm_large_bin_by_pages[PM_LARGE_MAX_PAGES + 1];
extern const uint8_t pm_pow2_bin_by_log[PM_POW2_MAX_LOG + 1];
#pragma GCC visibility pop

/* Bins for requests up to PM_LOOKUP_MAX (small and medium). */
static inline unsigned pm_bin_of_small(size_t size)
{
    return pm_bin_by_16[(size + 15) >> 4];
}

static inline uint32_t pm_div_size(const struct pm_bin *b, uint32_t x)
{
    return (uint32_t)(((uint64_t)x * b->magic) >> b->shift);
}

/* The number of the object of bin b that starts at rel, an offset from a
 * chunk's data start; objs_per_chunk or more when no object starts there.
 * One multiply and a rotation do the bounds and the divisibility test: for
 * a multiple of size the product is the quotient shifted left by size_tz
 * (tools/gen_sizeclasses.c, find_inverse, says why). */
static inline uint32_t pm_object_index(const struct pm_bin *b, uint32_t rel)
{
    uint32_t x = rel * b->inverse;
    unsigned k = b->size_tz;
    return x >> k | x << ((32 - k) & 31);
}

static inline int pm_is_object(const struct pm_bin *b, uint32_t rel)
{
    return pm_object_index(b, rel) < b->objs_per_chunk;
}

#endif
