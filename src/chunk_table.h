/* The chunk table: one 8-byte entry per 2 MiB of the address space, so
 * that any pointer finds its bin in O(1) without a lock
 * (supermalloc-ismm2015.txt section 2).
 *
 * The table covers the 47-bit user address space of x86-64.  With 5-level
 * paging the kernel hands out addresses above 2^47 only to mmap calls whose
 * hint lies above it; primalloc never passes such a hint, so its chunks are
 * always inside the table and a pointer above is never primalloc's.
 * The table lives in .bss: reserved at load, committed page by page as
 * entries are written, and never missing when free() runs first. */
#ifndef PM_CHUNK_TABLE_H
#define PM_CHUNK_TABLE_H

#include <stdint.h>
#include "layout.h"
#include "os.h"
#include "sizeclass.h"

#define PM_ADDRESS_BITS 47
#define PM_TABLE_BITS (PM_ADDRESS_BITS - PM_CHUNK_SHIFT)

/* tag: 0 for memory that is not primalloc's, bin + 1 for a chunk of a bin,
 * or one of the huge tags below plus the run's order (log2 of its chunks).
 * link: for a bin's chunk, the carving lane it was made for (folio.h); for
 * a huge run in use, the pages in use; for a free run, the chunk index of
 * the next free run of the same order. */
struct pm_chunk_entry {
    uint32_t tag;
    uint32_t link;
};

enum {
    PM_TAG_HUGE = 0x100,      /* first chunk of a huge object */
    PM_TAG_HUGE_FREE = 0x200, /* first chunk of a free huge run */
    PM_TAG_HUGE_BODY = 0x300, /* any later chunk of a huge run */
    PM_TAG_KIND = 0xf00,
};

#pragma GCC visibility push(hidden)
extern struct pm_chunk_entry pm_chunk_table[1ul << PM_TABLE_BITS];
#pragma GCC visibility pop

/* The entry of the chunk holding address a, or NULL when a lies outside
 * the table. */
static inline struct pm_chunk_entry *pm_chunk_entry_of(uintptr_t a)
{
    uintptr_t i = a >> PM_CHUNK_SHIFT;
    return pm_likely(i >> PM_TABLE_BITS == 0) ? &pm_chunk_table[i] : 0;
}

/* The bin of address a, or a value >= PM_NBINS when a is not in a bin's
 * chunk (a huge object, foreign memory, NULL). */
static inline unsigned pm_bin_of_addr(uintptr_t a)
{
    uintptr_t i = a >> PM_CHUNK_SHIFT;
    if (pm_unlikely(i >= 1ul << PM_TABLE_BITS))
        return PM_NBINS;
    return pm_chunk_table[i].tag - 1;
}

/* The carving lane of the bin's chunk holding address a. */
static inline unsigned pm_chunk_lane(uintptr_t a)
{
    return pm_chunk_table[a >> PM_CHUNK_SHIFT].link;
}

/* A 2 MiB chunk for bin and carving lane, registered in the table; NULL
 * when the kernel has no memory to give. */
void *pm_chunk_alloc(unsigned bin, unsigned lane);

/* Marks the chunks of [base, base + size) with tag and link. */
void pm_chunk_set(uintptr_t base, size_t size, uint32_t tag, uint32_t link);

void pm_chunk_prefork(void);
void pm_chunk_postfork(void);

#endif
