/* SPDX-License-Identifier: MIT */
/* A guarded object never lies in the unmapped rest of a partial chunk,
 * where the chunk table would take it for an object of the chunk's bin.
 * Run with PRIMALLOC_GUARD_RATE=2.  The test finds a partial chunk of
 * SIZE's bin, then fills every gap above it with PROT_NONE mappings until
 * the kernel's next place for a guarded object's mapping is in that
 * chunk's rest; the objects allocated after that, about half of them
 * guarded, must each be what malloc_usable_size and free take them for.
 * With the kernel's places that scarce, both orders happen: a guarded
 * object placed in a chunk's rest (guard.c refuses it) and a partial
 * chunk placed around a guarded object (chunk_pool.c refuses it); this
 * fails without either check. */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "check.h"

#define SIZE 100000
#define CHUNK (2 * MiB)
#define OBJECTS 64

static size_t page;

static int mapped(uintptr_t a)
{
    unsigned char v;
    return mincore((void *)(a & ~(uintptr_t)(page - 1)), 1, &v) == 0;
}

/* A chunk of SIZE's bin with its first page mapped and its last not. */
static uintptr_t partial_slot(void **objects)
{
    for (int i = 0; i < OBJECTS; i++) {
        CHECK((objects[i] = malloc(SIZE)) != NULL);
        uintptr_t s = (uintptr_t)objects[i] & ~(uintptr_t)(CHUNK - 1);
        if (mapped(s) && !mapped(s + CHUNK - page))
            return s;
    }
    return 0;
}

/* Maps PROT_NONE fillers of each size, largest first, while the kernel
 * places them above the slot; returns whether one of `last` bytes, the
 * guarded object's mapping, was then placed in the slot. */
static int fill_above(uintptr_t slot, size_t last)
{
    const size_t sizes[] = {(size_t)1 << 30, 64 * MiB, 2 * MiB, last};
    for (unsigned f = 0; f < sizeof sizes / sizeof sizes[0]; f++) {
        for (;;) {
            char *m = mmap(NULL, sizes[f], PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
            CHECK(m != MAP_FAILED);
            if ((uintptr_t)m >= slot + CHUNK)
                continue;
            CHECK(munmap(m, sizes[f]) == 0);
            if ((uintptr_t)m >= slot)
                return 1;
            break;
        }
    }
    return 0;
}

int main(void)
{
    page = (size_t)sysconf(_SC_PAGESIZE);
    static void *first[OBJECTS], *after[OBJECTS];
    uintptr_t slot = partial_slot(first);
    CHECK_MSG(slot, "no partial chunk among %d objects of %d bytes", OBJECTS, SIZE);
    size_t len = 2 * page + ((SIZE + page - 1) & ~(page - 1));
    CHECK_MSG(fill_above(slot, len), "the kernel placed no mapping in the chunk's rest");
    for (int i = 0; i < OBJECTS; i++) {
        char *p = after[i] = malloc(SIZE);
        CHECK(p);
        CHECK_MSG(malloc_usable_size(p) >= SIZE, "%p: usable %zu", (void *)p, malloc_usable_size(p));
        memset(p, i, SIZE);
    }
    for (int i = 0; i < OBJECTS; i++) {
        free(after[i]);
        free(first[i]);
    }
    return 0;
}
