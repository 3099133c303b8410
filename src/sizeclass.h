/* SPDX-License-Identifier: MIT */
/* Size classes ("bins").  Every constant comes from tools/gen_sizeclasses.c,
 * which runs at build time (the SuperMalloc paper section 7).
 *
 * Promises: pm_bin_of_small() maps a request of at most PM_LOOKUP_MAX
 * bytes to the bin whose objects are the smallest that hold it, as
 * pm_large_bin_by_pages does for a large request by its pages and
 * pm_pow2_bin_by_log for an aligned one by the log of its size; every
 * object of a bin starts at chunk + PM_DATA_START + i * size and is
 * aligned to 1 << align_log (at least 16); pm_div_size() divides any chunk
 * offset by a bin's size exactly; pm_is_object() tells exactly whether an
 * offset starts an object and pm_object_index() which one it starts.
 * Bins go by size; the first PM_SMALL_BINS are the small ones, which hold
 * every size up to PM_SMALL_MAX. */
#ifndef PM_SIZECLASS_H
#define PM_SIZECLASS_H

#include <stddef.h>
#include <stdint.h>
#include "layout.h"
#include "os.h"
#include "sizeclass_table.h"

enum pm_kind { PM_SMALL, PM_MEDIUM, PM_POW2, PM_LARGE };

struct pm_bin {
    uint32_t size;            /* object size; the slot size for large bins */
    uint8_t kind;             /* enum pm_kind */
    uint8_t folio_log;        /* log2 of objects per folio */
    uint8_t align_log;        /* every object is aligned to 1 << align_log */
    uint8_t first_folio;      /* the folio a chunk carves first (the
                                 generator says why) */
    uint16_t batch;           /* objects in a thread-cache list */
    uint16_t cpu_batches;     /* batches in a CPU-cache list */
    uint32_t objs_per_chunk;
    uint64_t recip;           /* floor(2^64 / size) + 1 */
    uint64_t limit;           /* the object test's: rel * recip < limit */
};
_Static_assert(sizeof(struct pm_bin) == PM_BIN_STRIDE, "a scaled bin is a description's offset");

/* A table by request size, 0 to PM_LOOKUP_MAX, has an entry for each 16
 * bytes: size's is pm_by_16(size). */
#define PM_BY_16_ENTRIES ((PM_LOOKUP_MAX + 15) / 16 + 1)
static inline size_t pm_by_16(size_t size)
{
    return (size + 15) >> 4;
}

#pragma GCC visibility push(hidden)
extern const struct pm_bin pm_bins[PM_NBINS];
extern const uint16_t pm_scaled_bin_by_16[PM_BY_16_ENTRIES];
extern const uint8_t pm_large_bin_by_pages[PM_LARGE_MAX_PAGES + 1];
extern const uint8_t pm_pow2_bin_by_log[PM_POW2_MAX_LOG + 1];
#pragma GCC visibility pop

/* Bins for requests up to PM_LOOKUP_MAX (small and medium), times
 * PM_BIN_STRIDE; PM_NBINS for 0, the thread cache's zero entry
 * (zero.h), which pm_bin_of_small's callers never pass. */
static inline unsigned pm_scaled_bin_of_small(size_t size)
{
    PM_ASSERT(size <= PM_LOOKUP_MAX);
    return pm_scaled_bin_by_16[pm_by_16(size)];
}

static inline unsigned pm_bin_of_small(size_t size)
{
    return pm_scaled_bin_of_small(size) / PM_BIN_STRIDE;
}

/* A set of bins, a bit each: bin b is bit b % 64 of word b / 64. */
#define PM_BIN_WORDS ((PM_NBINS + 63) / 64)
struct pm_bin_set {
    uint64_t w[PM_BIN_WORDS];
};

static inline uint64_t pm_bin_bit(unsigned bin)
{
    return 1ull << bin % 64;
}

static inline void pm_bin_set_add(struct pm_bin_set *s, unsigned bin)
{
    s->w[bin / 64] |= pm_bin_bit(bin);
}

static inline int pm_bin_set_has(const struct pm_bin_set *s, unsigned bin)
{
    return (s->w[bin / 64] & pm_bin_bit(bin)) != 0;
}

/* Bytes of a folio: its objects, a power of two of them, fill it. */
static inline size_t pm_folio_bytes(const struct pm_bin *b)
{
    return (size_t)b->size << b->folio_log;
}

/* A chunk's last folio holds what fits after the others: it may hold
 * fewer objects than a folio's. */
static inline uint32_t pm_folios_per_chunk(const struct pm_bin *b)
{
    return (b->objs_per_chunk + (1u << b->folio_log) - 1) >> b->folio_log;
}

/* x * recip: x / size in the high half; in the low half a value below
 * limit exactly when x starts an object (tools/gen_sizeclasses.c,
 * find_reciprocal, says why). */
static inline unsigned __int128 pm_by_recip(const struct pm_bin *b, uint32_t x)
{
    return (unsigned __int128)x * b->recip;
}

static inline uint32_t pm_div_size(const struct pm_bin *b, uint32_t x)
{
    uint32_t q = (uint32_t)(pm_by_recip(b, x) >> 64);
    PM_ASSERT(x >= PM_CHUNK || q == x / b->size);
    return q;
}

/* Whether an object starts at rel, an offset from a chunk's data start
 * (below it, wrapped), by a bin's recip and limit or a copy of them.  The
 * low half alone, as a 64-bit product: one imul, where the 128-bit
 * product takes a mul and ties up two registers on free's fast path. */
static inline int pm_divides(uint32_t rel, uint64_t recip, uint64_t limit)
{
    return (uint64_t)rel * recip < limit;
}

static inline int pm_is_object(const struct pm_bin *b, uint32_t rel)
{
    return pm_divides(rel, b->recip, b->limit);
}

/* The number of the object of bin b that starts at rel, or objs_per_chunk
 * when no object starts there: one multiply for both. */
static inline uint32_t pm_object_index(const struct pm_bin *b, uint32_t rel)
{
    unsigned __int128 x = pm_by_recip(b, rel);
    uint32_t i = (uint64_t)x < b->limit ? (uint32_t)(x >> 64) : b->objs_per_chunk;
    PM_ASSERT(i == b->objs_per_chunk || (i < b->objs_per_chunk && (uint64_t)i * b->size == rel));
    return i;
}

#endif
