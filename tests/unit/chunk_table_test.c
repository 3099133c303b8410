/* SPDX-License-Identifier: MIT */
/* Chunk table: entries read 0 until written, on any address of the 47-bit
 * space, with or without a leaf; written entries are seen from every
 * address of their chunk; addresses beyond the table have no entry; the
 * bin tag of a chunk of no bin is 0. */
#include <stdint.h>
#include "chunk_table.h"
#include "os.h"
#include "unit.h"

int main(void)
{
    /* Before anything is covered, every lookup reads "not ours". */
    int local;
    CHECK(pm_bin_of_addr(0) >= PM_NBINS);
    CHECK(pm_bin_of_addr((uintptr_t)&local) >= PM_NBINS);
    CHECK(pm_bin_of_addr((uintptr_t)&main) >= PM_NBINS);
    CHECK(pm_bin_of_addr((1ul << PM_ADDRESS_BITS) - 1) >= PM_NBINS);
    CHECK(pm_bin_of_addr(1ul << PM_ADDRESS_BITS) >= PM_NBINS);
    CHECK(pm_bin_of_addr(UINTPTR_MAX) >= PM_NBINS);
    CHECK(pm_chunk_entry_of(1ul << PM_ADDRESS_BITS) == 0);
    CHECK(pm_chunk_entry_of((1ul << PM_ADDRESS_BITS) - 1)->tag == 0);

    /* Two chunks in different leaves, and one at the very top. */
    uintptr_t a = 5ul << 40, b = a + (3ul << PM_LEAF_SHIFT) + 7 * PM_CHUNK;
    uintptr_t top = (1ul << PM_ADDRESS_BITS) - PM_CHUNK;
    CHECK(pm_chunk_table_cover(a, PM_CHUNK) && pm_chunk_table_cover(b, PM_CHUNK));
    CHECK(pm_chunk_table_cover(top, PM_CHUNK));
    pm_chunk_set(a, PM_CHUNK, PM_BIN_TAG(5), 3);
    pm_chunk_set(b, PM_CHUNK, PM_BIN_TAG(PM_NBINS - 1), 0);
    pm_chunk_set(top, PM_CHUNK, PM_TAG_HUGE, 300);
    for (uintptr_t off = 0; off < PM_CHUNK; off += 4096) {
        CHECK(pm_bin_of_addr(a + off) == 5 && pm_chunk_lane(a + off) == 3);
        CHECK(pm_bin_of_addr(b + off) == PM_NBINS - 1);
        CHECK(pm_chunk_entry_of(top + off)->tag == PM_TAG_HUGE && pm_chunk_entry_of(top + off)->link == 300);
        CHECK(pm_bin_tag_of_addr(a + off) == PM_BIN_TAG(5) && pm_bin_tag_of_addr(top + off) == 0);
        CHECK(pm_bin_of_addr(top + off) >= PM_NBINS);
    }
    /* Neighbours, in the same leaf or another, stay untouched. */
    CHECK(pm_chunk_entry_of(a - 1)->tag == 0 && pm_chunk_entry_of(a + PM_CHUNK)->tag == 0);
    CHECK(pm_chunk_entry_of(b - PM_CHUNK)->tag == 0 && pm_chunk_entry_of(a + (1ul << PM_LEAF_SHIFT))->tag == 0);

    /* A span across a leaf boundary is covered whole. */
    uintptr_t edge = (9ul << PM_LEAF_SHIFT) - PM_CHUNK;
    CHECK(pm_chunk_table_cover(edge, 2 * PM_CHUNK));
    pm_chunk_set(edge, 2 * PM_CHUNK, PM_TAG_FREE, 2);
    CHECK(pm_chunk_entry_of(edge)->tag == PM_TAG_FREE && pm_chunk_entry_of(edge + PM_CHUNK)->link == 2);
    CHECK(pm_bin_tag_of_addr(edge) == 0 && pm_bin_of_addr(edge + PM_CHUNK) >= PM_NBINS);

    /* An entry is replaced whole, and only while it holds what the caller
     * expects: both halves count. */
    struct pm_chunk_entry *e = pm_chunk_entry_of(top), gone = {PM_TAG_FREE, 0};
    CHECK(!pm_chunk_replace(e, (struct pm_chunk_entry){PM_TAG_HUGE, 301}, gone));
    CHECK(!pm_chunk_replace(e, (struct pm_chunk_entry){PM_TAG_HUGE_BODY, 300}, gone));
    CHECK(pm_chunk_read(e).tag == PM_TAG_HUGE && pm_chunk_read(e).link == 300);
    CHECK(pm_chunk_replace(e, (struct pm_chunk_entry){PM_TAG_HUGE, 300}, gone));
    CHECK(pm_chunk_read(e).tag == PM_TAG_FREE && pm_chunk_read(e).link == 0);

    /* The zero leaf was never written. */
    for (size_t i = 0; i < 1ul << PM_LEAF_BITS; i++)
        CHECK(pm_chunk_table.zero_leaf[i].tag == 0 && pm_chunk_table.zero_leaf[i].link == 0);
    printf("chunk_table ok\n");
    return 0;
}
