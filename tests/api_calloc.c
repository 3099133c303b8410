/* SPDX-License-Identifier: MIT */
/* calloc: memory is zero whether fresh or reused (every category,
 * including huge objects that a cache may hand out again), zero counts give
 * unique pointers, and overflowing or too large products give NULL with
 * errno == ENOMEM. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include "api.h"
#include "check.h"

#define ROUNDS 4
#define BATCH 16

/* Dirties BATCH objects of the size, frees them, and checks that calloc
 * then hands out zeroed memory, in a few rounds so that freed memory is
 * certainly reused. */
static void zero_when_reused(size_t n)
{
    void *p[BATCH];
    int batch = n > 4 * MiB ? 2 : BATCH;
    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < batch; i++) {
            /* Half as one element of n bytes, half as n elements of 1. */
            p[i] = i % 2 ? API(calloc)(1, opaque(n)) : API(calloc)(opaque(n), 1);
            CHECK_MSG(p[i] != NULL, "calloc(%zu) failed", n);
            CHECK_MSG(n < 16 || (uintptr_t)p[i] % 16 == 0, "calloc(%zu) = %p", n, p[i]);
            size_t bad = nonzero_at(p[i], n);
            CHECK_MSG(!bad, "calloc(%zu) round %d: byte %zu not zero", n, round, bad - 1);
            memset(p[i], 0xa5, API(malloc_usable_size)(p[i]));
        }
        for (int i = 0; i < batch; i++)
            API(free)(p[i]);
    }
}

static void zero_counts_are_unique(void)
{
    void *a = API(calloc)(opaque(0), 16);
    void *b = API(calloc)(16, opaque(0));
    void *c = API(calloc)(opaque(0), opaque(0));
    CHECK(a && b && c);
    CHECK(a != b && b != c && a != c);
    API(free)(a);
    API(free)(b);
    API(free)(c);
}

static void overflow_fails_with_enomem(void)
{
    const size_t pairs[][2] = {
        {SIZE_MAX, SIZE_MAX},
        {SIZE_MAX / 2 + 1, 2},
        {(size_t)1 << 32, (size_t)1 << 32},
        {3, SIZE_MAX / 3 + 1},
        /* No overflow, but the product is above PTRDIFF_MAX. */
        {(size_t)1 << 62, 2},
        {1, (size_t)PTRDIFF_MAX + 1},
        {(size_t)PTRDIFF_MAX + 1, 1},
        /* Fits in the address arithmetic, not in any machine. */
        {(size_t)1 << 30, (size_t)1 << 30},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        errno = 0;
        void *p = API(calloc)(opaque(pairs[i][0]), opaque(pairs[i][1]));
        CHECK_MSG(p == NULL, "calloc(%#zx, %#zx) = %p", pairs[i][0], pairs[i][1], p);
        CHECK_MSG(errno == ENOMEM, "calloc(%#zx, %#zx): errno %d", pairs[i][0],
                  pairs[i][1], errno);
    }
}

int main(void)
{
    for (size_t n = 0; n <= 512; n += 8)
        zero_when_reused(n);
    for (size_t i = 0; i < n_edge_sizes; i++)
        zero_when_reused(edge_sizes[i]);
    zero_counts_are_unique();
    overflow_fails_with_enomem();
    zero_when_reused(64);
    return 0;
}
