/* SPDX-License-Identifier: MIT */
/* Geometry shared by the allocator and its size-class generator.
 * Chunks are PM_CHUNK bytes, aligned to their size, and hold objects of
 * one bin; their first pages hold the folio metadata so that data pages
 * can be uncommitted (the SuperMalloc paper sections 2-3). */
#ifndef PM_LAYOUT_H
#define PM_LAYOUT_H

#define PM_PAGE_SHIFT 12
#define PM_PAGE (1ul << PM_PAGE_SHIFT)
#define PM_CHUNK_SHIFT 21
#define PM_CHUNK (1ul << PM_CHUNK_SHIFT)
#define PM_LINE 64

/* Header pages at the start of each chunk: one PM_FOLIO_RECORD-byte folio
 * record for each of up to PM_MAX_FOLIOS one-page folios, plus the chunk
 * record. */
#define PM_HEADER_PAGES 8
#define PM_DATA_START (PM_HEADER_PAGES * PM_PAGE)
#define PM_FOLIO_RECORD 64
#define PM_MAX_FOLIOS ((PM_CHUNK - PM_DATA_START) / PM_PAGE)

/* A folio's free bitmap has this many bits. */
#define PM_MAX_FOLIO_OBJS 256

/* A bin has at most this many partial folio lists, one per free count
 * where its folios hold at most this many objects, else one per range of
 * counts (a power of two wide): fullest-fit within that range. */
#define PM_MAX_PARTIAL_LISTS 64

/* Cache sizing (section 8): a thread list holds about
 * PM_THREAD_LIST_BYTES of objects, and at least PM_THREAD_LIST_OBJS of a
 * small or medium bin; a CPU list about PM_CPU_LIST_BYTES; a CPU holds at
 * most PM_CPU_BUDGET over all its bins, the global level P times that.
 * The least count is the paper's "about 10 objects", which amortise the
 * CPU level's lock: a thread that allocates and frees a bin at random
 * goes down a level about once in batch-squared operations (its list and
 * spare hold from none to two batches, and each move leaves one), so the
 * bytes alone, two objects of the biggest medium bins, would send every
 * fourth of its operations there. */
#define PM_THREAD_LIST_BYTES 8192
#define PM_THREAD_LIST_OBJS 8
#define PM_CPU_LIST_BYTES (1ul << 20)
#define PM_CPU_BUDGET (2ul << 20)

/* A bin's description (struct pm_bin) and a thread's entry of a bin are
 * PM_BIN_STRIDE bytes, so that a bin times PM_BIN_STRIDE, as the size
 * lookup table holds it, is the offset of either with no shift. */
#define PM_BIN_STRIDE 32

/* Every object's alignment, and so the smallest object: two words,
 * because a cached batch links to the next batch through its first
 * object's second word. */
#define PM_ALIGN 16

/* Large objects: page multiples up to what fits twice in a chunk.  A
 * random offset of up to a page less a line spreads them over cache sets. */
#define PM_LARGE_MIN_PAGES 4
#define PM_LARGE_MAX_PAGES ((PM_CHUNK - PM_DATA_START) / PM_PAGE / 2)
#define PM_LARGE_MAX (PM_LARGE_MAX_PAGES * PM_PAGE)

#endif
