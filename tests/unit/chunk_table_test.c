/* Chunk table: every address of a chunk maps to its bin and carving lane;
 * anything else, including addresses beyond the table, maps to no bin. */
#include <stdint.h>
#include "chunk_table.h"
#include "unit.h"

int main(void)
{
    char *a = pm_chunk_alloc(5, 3), *b = pm_chunk_alloc(PM_NBINS - 1, 0);
    CHECK(a && b && a != b);
    CHECK(((uintptr_t)a & (PM_CHUNK - 1)) == 0 && ((uintptr_t)b & (PM_CHUNK - 1)) == 0);
    for (size_t off = 0; off < PM_CHUNK; off += 64) {
        CHECK(pm_bin_of_addr((uintptr_t)a + off) == 5);
        CHECK(pm_bin_of_addr((uintptr_t)b + off) == PM_NBINS - 1);
        CHECK(pm_chunk_lane((uintptr_t)a + off) == 3 && pm_chunk_lane((uintptr_t)b + off) == 0);
    }
    /* Chunks are writable memory that reads as zero. */
    CHECK(a[PM_CHUNK - 1] == 0);
    a[PM_CHUNK - 1] = 1;

    int local;
    CHECK(pm_bin_of_addr(0) >= PM_NBINS);
    CHECK(pm_bin_of_addr((uintptr_t)&local) >= PM_NBINS);
    CHECK(pm_bin_of_addr((uintptr_t)&main) >= PM_NBINS);
    CHECK(pm_bin_of_addr(1ul << PM_ADDRESS_BITS) >= PM_NBINS);
    CHECK(pm_bin_of_addr(UINTPTR_MAX) >= PM_NBINS);
    CHECK(pm_chunk_entry_of(1ul << PM_ADDRESS_BITS) == 0);
    CHECK(pm_chunk_entry_of((1ul << PM_ADDRESS_BITS) - 1) != 0);

    /* Huge tags on a run of chunks. */
    char *run = pm_chunk_alloc(0, 0);
    pm_chunk_set((uintptr_t)run, PM_CHUNK, PM_TAG_HUGE + 1, 300);
    CHECK(pm_chunk_entry_of((uintptr_t)run + 12345)->tag == PM_TAG_HUGE + 1);
    CHECK(pm_chunk_entry_of((uintptr_t)run)->link == 300);
    CHECK(pm_bin_of_addr((uintptr_t)run) >= PM_NBINS);
    printf("chunk_table ok\n");
    return 0;
}
