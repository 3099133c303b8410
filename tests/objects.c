/* SPDX-License-Identifier: MIT */
/* Implementation of objects.h.  Layout: size (8 bytes), the pattern seed
 * (8 bytes), then pattern bytes up to size.  The seed's low byte says how
 * the object may be freed: free_sized only for malloc, calloc and realloc
 * results, free_aligned_sized only for aligned_alloc ones, with the
 * alignment's log2 in the low bits. */
#include "objects.h"

#include <string.h>
#include "api.h"
#include "check.h"

#define HEADER 16
enum { FREE_PLAIN = 0, FREE_SIZED = 0x40, FREE_ALIGNED = 0x80, HOW_MASK = 0xff };

/* FREE_SIZED or FREE_PLAIN, for an object that allows either. */
static uint64_t sized_or_plain(uint64_t *rng)
{
    return rng_next(rng) % 2 ? FREE_SIZED : FREE_PLAIN;
}

size_t obj_mixed_size(uint64_t *rng)
{
    unsigned r = (unsigned)(rng_next(rng) % 1000);
    if (r < 800)
        return rng_size(rng, HEADER, 256);
    if (r < 960)
        return rng_size(rng, 257, 15 * KiB);
    if (r < 999)
        return rng_size(rng, 16 * KiB, 1 * MiB);
    return rng_size(rng, 1 * MiB + 1, 4 * MiB);
}

static void stamp(void *p, size_t size, uint64_t seed)
{
    memcpy(p, &size, 8);
    memcpy((char *)p + 8, &seed, 8);
    fill_pattern((char *)p + HEADER, size - HEADER, seed);
}

static void read_header(const void *p, size_t *size, uint64_t *seed)
{
    memcpy(size, p, 8);
    memcpy(seed, (const char *)p + 8, 8);
}

void *obj_new(uint64_t *rng, size_t size)
{
    if (size < HEADER)
        size = HEADER;
    unsigned entry = (unsigned)(rng_next(rng) % 20);
    unsigned align_log = 4 + (unsigned)(rng_next(rng) % 9);
    size_t align = 16;
    uint64_t how = FREE_PLAIN;
    void *p = NULL;
    if (entry < 12) {
        p = API(malloc)(size);
        how = sized_or_plain(rng);
    } else if (entry < 16) {
        p = API(calloc)(1, size);
        CHECK_MSG(p == NULL || nonzero_at(p, size) == 0, "calloc(1, %zu) not zeroed", size);
        how = sized_or_plain(rng);
    } else {
        align = (size_t)1 << align_log;
        if (entry < 18) {
            p = API(aligned_alloc)(align, size);
            how = FREE_ALIGNED | align_log;
        } else if (entry < 19) {
            p = API(memalign)(align, size);
        } else if (API(posix_memalign)(&p, align, size) != 0) {
            p = NULL;
        }
    }
    CHECK_MSG(p != NULL, "allocating %zu bytes failed", size);
    CHECK_MSG((uintptr_t)p % align == 0, "%p (%zu bytes) not aligned to %zu", p, size, align);
    CHECK(API(malloc_usable_size)(p) >= size);
    stamp(p, size, (rng_next(rng) & ~(uint64_t)HOW_MASK) | how);
    return p;
}

void obj_check(void *p)
{
    size_t size;
    uint64_t seed;
    read_header(p, &size, &seed);
    CHECK_MSG(size >= HEADER && size <= 64 * MiB, "object %p: header damaged (size %#zx)",
              p, size);
    CHECK(API(malloc_usable_size)(p) >= size);
    CHECK_PATTERN((char *)p + HEADER, size - HEADER, seed);
}

void *obj_resize(void *p, uint64_t *rng, size_t size)
{
    size_t old;
    uint64_t seed;
    obj_check(p);
    read_header(p, &old, &seed);
    if (size < HEADER)
        size = HEADER;
    void *q = API(realloc)(p, size);
    CHECK_MSG(q != NULL, "realloc(%zu -> %zu) failed", old, size);
    /* The header still holds the old size: check the kept part by hand. */
    size_t kept = old < size ? old : size;
    CHECK_PATTERN((char *)q + HEADER, kept - HEADER, seed);
    stamp(q, size, (rng_next(rng) & ~(uint64_t)HOW_MASK) | sized_or_plain(rng));
    return q;
}

void obj_free(void *p)
{
    size_t size;
    uint64_t seed;
    obj_check(p);
    read_header(p, &size, &seed);
    if (seed & FREE_ALIGNED)
        API(free_aligned_sized)(p, (size_t)1 << (seed & 0x3f), size);
    else if (seed & FREE_SIZED)
        API(free_sized)(p, size);
    else
        API(free)(p);
}
