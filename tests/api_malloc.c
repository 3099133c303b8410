/* SPDX-License-Identifier: MIT */
/* malloc, free, free_sized and malloc_usable_size: glibc's contract for
 * zero and impossible sizes, 16-byte alignment, and usable sizes that are
 * at least the request and writable to the last byte. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include "api.h"
#include "check.h"

/* Live objects of one size at once, so that an object whose usable size
 * overlaps its neighbour shows up as a damaged pattern. */
#define NEIGHBOURS 24

static void check_alignment(const void *p, size_t n)
{
    uintptr_t a = (uintptr_t)p;
    if (n >= 16)
        CHECK_MSG(a % 16 == 0, "malloc(%zu) = %p is not 16-byte aligned", n, p);
    else if (n >= 8)
        CHECK_MSG(a % 8 == 0, "malloc(%zu) = %p is not 8-byte aligned", n, p);
}

static void usable_and_writable(size_t n, int neighbours)
{
    void *p[NEIGHBOURS];
    size_t usable[NEIGHBOURS];
    for (int i = 0; i < neighbours; i++) {
        p[i] = API(malloc)(opaque(n));
        CHECK_MSG(p[i] != NULL, "malloc(%zu) failed", n);
        check_alignment(p[i], n);
        usable[i] = API(malloc_usable_size)(p[i]);
        CHECK_MSG(usable[i] >= n, "malloc_usable_size = %zu < %zu", usable[i], n);
        fill_pattern(p[i], usable[i], n * 131 + i);
    }
    for (int i = 0; i < neighbours; i++) {
        CHECK_PATTERN(p[i], usable[i], n * 131 + i);
        if (i % 2)
            API(free_sized)(p[i], n);
        else
            API(free)(p[i]);
    }
}

static void zero_size_is_unique(void)
{
    enum { N = 1000 };
    static void *p[N];
    for (int i = 0; i < N; i++) {
        p[i] = API(malloc)(opaque(0));
        CHECK(p[i] != NULL);
        /* Writing the usable bytes (if any) must not hurt a neighbour. */
        memset(p[i], 0xee, API(malloc_usable_size)(p[i]));
    }
    for (int i = 0; i < N; i++)
        for (int j = i + 1; j < N; j++)
            CHECK_MSG(p[i] != p[j], "malloc(0) returned %p twice", p[i]);
    for (int i = 0; i < N; i++)
        API(free)(p[i]);
}

/* Freed zero-size objects' addresses serve again: 50 rounds of 20,000
 * live malloc(0)s, each round freed before the next, stay within two
 * 2 MiB regions, where addresses never handed out twice would take
 * eight. */
static void zero_size_addresses_come_back(void)
{
    enum { N = 20000, ROUNDS = 50, REGIONS = 2 };
    static void *p[N];
    uintptr_t seen[REGIONS + 1];
    unsigned regions = 0;
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < N; i++) {
            p[i] = API(malloc)(opaque(0));
            CHECK(p[i] != NULL);
            uintptr_t region = (uintptr_t)p[i] >> 21;
            unsigned k = 0;
            while (k < regions && seen[k] != region)
                k++;
            if (k == regions) {
                CHECK_MSG(regions < REGIONS, "round %d: malloc(0) = %p, in a third 2 MiB region", r, p[i]);
                seen[regions++] = region;
            }
        }
        for (int i = 0; i < N; i++)
            API(free)(p[i]);
    }
}

static void impossible_sizes_fail_with_enomem(void)
{
    const size_t sizes[] = {
        (size_t)PTRDIFF_MAX + 1, SIZE_MAX, SIZE_MAX - 15, SIZE_MAX - 4095,
        SIZE_MAX - (2 << 20) + 1, SIZE_MAX / 2, (size_t)PTRDIFF_MAX,
        (size_t)1 << 62, (size_t)1 << 52,
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        errno = 0;
        void *p = API(malloc)(opaque(sizes[i]));
        CHECK_MSG(p == NULL, "malloc(%#zx) = %p", sizes[i], p);
        CHECK_MSG(errno == ENOMEM, "malloc(%#zx): errno %d", sizes[i], errno);
    }
}

int main(void)
{
    API(free)(NULL);
    API(free_sized)(NULL, 0);
    CHECK_EQ(API(malloc_usable_size)(NULL), 0);
    zero_size_is_unique();
    zero_size_addresses_come_back();
    for (size_t n = 0; n <= 1024; n++)
        usable_and_writable(n, 4);
    for (size_t i = 0; i < n_edge_sizes; i++)
        usable_and_writable(edge_sizes[i], edge_sizes[i] > 4 * MiB ? 3 : NEIGHBOURS);
    impossible_sizes_fail_with_enomem();
    /* The allocator still works after refusing. */
    usable_and_writable(100, NEIGHBOURS);
    return 0;
}
