/* SPDX-License-Identifier: MIT */
/* The chunk table: one 8-byte entry per chunk (PM_CHUNK) of the address
 * space, so that any pointer finds what its chunk holds in two loads and
 * no lock (the SuperMalloc paper section 2, with the table split in two
 * levels).
 *
 * The table covers the 47-bit user address space of x86-64.  With 5-level
 * paging the kernel hands out addresses above 2^47 only to mmap calls whose
 * hint lies above it; primalloc never passes such a hint, so its chunks are
 * always inside the table and a pointer above is never primalloc's.
 *
 * The top level lives in .bss and holds, for each span of address space a
 * leaf covers (1 << PM_LEAF_SHIFT bytes), the byte offset of its leaf from
 * the zero leaf; an offset of 0 selects the zero leaf itself, which is
 * never written and so reads "not ours" for every chunk.  A lookup
 * therefore needs no initialisation and no test for a missing leaf.  The
 * leaves of 16 spans around the first memory primalloc maps form one
 * array in .bss, the window, which free's fast path indexes
 * directly (one subtraction, one compare, one load, as a flat table);
 * spans outside it get a leaf of their own, mapped when first needed.  The
 * table costs the top level and the window's leaves of address space at
 * start, and one leaf for each span outside the window that holds
 * primalloc's memory.
 *
 * Promises: an entry reads 0 until pm_chunk_set writes it; leaves are
 * never freed, so an entry pointer stays valid for the life of the
 * process. */
#ifndef PM_CHUNK_TABLE_H
#define PM_CHUNK_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include "layout.h"
#include "os.h"
#include "sizeclass.h"

#define PM_ADDRESS_BITS 47
#define PM_LEAF_BITS 13
#define PM_LEAF_SHIFT (PM_CHUNK_SHIFT + PM_LEAF_BITS)
#define PM_TOP_BITS (PM_ADDRESS_BITS - PM_LEAF_SHIFT)
#define PM_WINDOW_SPANS 16
#define PM_WINDOW_CHUNKS ((uintptr_t)PM_WINDOW_SPANS << PM_LEAF_BITS)

/* tag: 0 for memory that is not primalloc's, PM_BIN_TAG(bin) for a chunk
 * of a bin, or one of the kinds below, whose low 16 bits are 0: those bits
 * alone are a bin's tag for a bin's chunk and 0 for any other.  A bin's
 * tag is the byte offset of its entry in a thread's cache, the entry of
 * tag 0 coming first (thread_cache.h), so that free goes from the chunk
 * to the entry with no shift.  link: for a bin's chunk, the carving lane
 * it was made for (folio.h); for the first chunk of a huge object, its
 * pages in use; for a later chunk of one, the run's length in chunks; for
 * a free chunk, the number of its run's record on the run's first and
 * last chunk and 0 on any other, or on a run not yet in the pool (huge.h,
 * chunk_pool.h). */
struct pm_chunk_entry {
    uint32_t tag;
    uint32_t link;
} __attribute__((aligned(8)));

#define PM_BIN_TAG(bin) (((uint32_t)(bin) + 1) * PM_BIN_STRIDE)

enum {
    PM_TAG_HUGE = 0x10000,      /* first chunk of a huge object */
    PM_TAG_HUGE_BODY = 0x20000, /* any later chunk of a huge object */
    PM_TAG_FREE = 0x30000,      /* a chunk of a free run */
    PM_TAG_GONE = 0x40000,      /* a chunk given back to the kernel: only a
                                   freed pointer of primalloc's can name it */
    PM_TAG_ZERO = 0x50000,      /* inaccessible addresses of zero-size
                                   objects (zero.h) */
};
_Static_assert(PM_BIN_TAG(PM_NBINS - 1) < 0x10000 &&
                   !((PM_TAG_HUGE | PM_TAG_HUGE_BODY | PM_TAG_FREE | PM_TAG_GONE | PM_TAG_ZERO) & 0xffff),
               "a tag's low 16 bits are a bin's tag or 0");

/* The zero leaf comes first, so that the table's own address is the base
 * every leaf offset is taken from.  window[i] is the entry of chunk
 * window_from + i; window_from is set once, before any entry of the
 * window is written, so a reader that sees it 0 reads only zeros there. */
struct pm_chunk_table {
    struct pm_chunk_entry zero_leaf[1ul << PM_LEAF_BITS];
    struct pm_chunk_entry window[PM_WINDOW_CHUNKS];
    uintptr_t top[1ul << PM_TOP_BITS];
    uintptr_t window_from;
    uint32_t window_placed;
};

#pragma GCC visibility push(hidden)
extern struct pm_chunk_table pm_chunk_table;
#pragma GCC visibility pop

/* An entry is read and written whole, as the one 64-bit word it packs
 * into, since it may change under its reader. */
typedef uint64_t __attribute__((may_alias)) pm_chunk_word;

static inline uint64_t pm_chunk_pack(struct pm_chunk_entry v)
{
    uint64_t w;
    __builtin_memcpy(&w, &v, sizeof w);
    return w;
}

static inline struct pm_chunk_entry pm_chunk_unpack(uint64_t w)
{
    struct pm_chunk_entry v;
    __builtin_memcpy(&v, &w, sizeof v);
    return v;
}

/* The entry at e, read whole at once. */
static inline struct pm_chunk_entry pm_chunk_read(const struct pm_chunk_entry *e)
{
    return pm_chunk_unpack(__atomic_load_n((const pm_chunk_word *)e, __ATOMIC_ACQUIRE));
}

/* Writes next over the entry at e if it still holds expect, in one step:
 * 1 if it did. */
static inline int pm_chunk_replace(struct pm_chunk_entry *e, struct pm_chunk_entry expect,
                                   struct pm_chunk_entry next)
{
    uint64_t w = pm_chunk_pack(expect);
    return __atomic_compare_exchange_n((pm_chunk_word *)e, &w, pm_chunk_pack(next), 0, __ATOMIC_ACQ_REL,
                                       __ATOMIC_RELAXED);
}

/* The entry of the chunk holding address a, in span `span` (a's top
 * index, below 2^PM_TOP_BITS).  The leaf's offset and a's byte index in
 * it add up before one load, relative to the table's start. */
static inline struct pm_chunk_entry *pm_chunk_in(uintptr_t span, uintptr_t a)
{
    char *table = (char *)&pm_chunk_table;
    uintptr_t *top = (uintptr_t *)(table + offsetof(struct pm_chunk_table, top) + span * sizeof(uintptr_t));
    uintptr_t leaf = __atomic_load_n(top, __ATOMIC_ACQUIRE);
    uintptr_t at = leaf + ((a >> (PM_CHUNK_SHIFT - 3)) & (((1ul << PM_LEAF_BITS) - 1) << 3));
    return (struct pm_chunk_entry *)(table + at);
}

/* The entry of the chunk holding address a, which must lie below
 * 2^PM_ADDRESS_BITS.  Read only, unless pm_chunk_set has written it. */
static inline struct pm_chunk_entry *pm_chunk_at(uintptr_t a)
{
    return pm_chunk_in(a >> PM_LEAF_SHIFT, a);
}

/* The entry of the chunk holding address a, or NULL when a lies outside
 * the table. */
static inline struct pm_chunk_entry *pm_chunk_entry_of(uintptr_t a)
{
    uintptr_t span = a >> PM_LEAF_SHIFT;
    return pm_likely(span < 1ul << PM_TOP_BITS) ? pm_chunk_in(span, a) : 0;
}

/* The index of a's chunk in the window: below PM_WINDOW_CHUNKS when the
 * window covers it. */
static inline uintptr_t pm_window_index(uintptr_t a)
{
    return (a >> PM_CHUNK_SHIFT) - pm_chunk_table.window_from;
}

/* The bin tag of address a: PM_BIN_TAG(bin) when a is in a bin's chunk,
 * else 0 (a huge object, a free chunk, foreign memory, NULL, an address
 * above the table).  One 16-bit load, with no test of the value. */
static inline unsigned pm_bin_tag_of_addr(uintptr_t a)
{
    uintptr_t i = pm_window_index(a);
    if (pm_likely(i < PM_WINDOW_CHUNKS))
        return (uint16_t)pm_chunk_table.window[i].tag;
    uintptr_t span = a >> PM_LEAF_SHIFT;
    if (pm_unlikely(span >= 1ul << PM_TOP_BITS))
        return 0;
    return (uint16_t)pm_chunk_in(span, a)->tag;
}

/* The bin of a chunk's tag, or a value >= PM_NBINS when it is no bin's. */
static inline unsigned pm_bin_of_tag(uint32_t tag)
{
    PM_ASSERT((uint16_t)tag % PM_BIN_STRIDE == 0 && (uint16_t)tag / PM_BIN_STRIDE <= PM_NBINS);
    return (uint16_t)tag / PM_BIN_STRIDE - 1;
}

/* The bin of address a, or a value >= PM_NBINS when a is not in a bin's
 * chunk. */
static inline unsigned pm_bin_of_addr(uintptr_t a)
{
    return pm_bin_of_tag(pm_bin_tag_of_addr(a));
}

/* The carving lane of the bin's chunk holding address a. */
static inline unsigned pm_chunk_lane(uintptr_t a)
{
    uintptr_t i = pm_window_index(a);
    return (pm_likely(i < PM_WINDOW_CHUNKS) ? &pm_chunk_table.window[i] : pm_chunk_at(a))->link;
}

/* Makes the entries of [base, base + size) writable (chunk-aligned, below
 * 2^PM_ADDRESS_BITS).  0 when a leaf could not be mapped. */
int pm_chunk_table_cover(uintptr_t base, size_t size);

/* Bytes of the table, in .bss and in leaves of their own (for statistics). */
size_t pm_chunk_table_metadata(void);

/* Marks the chunks of [base, base + size), which pm_chunk_table_cover
 * accepted, with tag and link. */
void pm_chunk_set(uintptr_t base, size_t size, uint32_t tag, uint32_t link);

/* Calls fn with each chunk whose entry is not 0 and the entry, in address
 * order.  Entries may change while the walk goes on: each is read whole. */
void pm_chunk_each(void (*fn)(void *ctx, uintptr_t chunk, struct pm_chunk_entry e), void *ctx);

#endif
