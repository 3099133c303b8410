/* SPDX-License-Identifier: MIT */
/* realloc and reallocarray: contents survive every move within and between
 * the categories (small, medium, large, huge) in both directions and along
 * slow growth and shrinkage; glibc's rules for NULL and zero; failures
 * leave the old object intact and set errno to ENOMEM. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include "api.h"
#include "check.h"

static void *fresh(size_t n, uint64_t seed)
{
    void *p = API(malloc)(n);
    CHECK_MSG(p != NULL, "malloc(%zu) failed", n);
    fill_pattern(p, n, seed);
    return p;
}

/* Grows or shrinks an object that holds pattern seed over `have` bytes and
 * checks the kept prefix, the usable size and the alignment. */
static void *resize(void *p, size_t have, size_t want, uint64_t seed)
{
    void *q = API(realloc)(p, opaque(want));
    CHECK_MSG(q != NULL, "realloc(%zu -> %zu) failed", have, want);
    CHECK_MSG(want < 16 || (uintptr_t)q % 16 == 0, "realloc(%zu) = %p", want, q);
    CHECK_MSG(pattern_mismatch(q, have < want ? have : want, seed) == 0,
              "realloc(%p, %zu -> %zu) = %p lost contents", p, have, want, q);
    CHECK(API(malloc_usable_size)(q) >= want);
    return q;
}

static void every_pair_of_edge_sizes(void)
{
    /* From index 1: realloc to 0 frees (see null_and_zero). */
    for (size_t i = 0; i < n_edge_sizes; i++)
        for (size_t j = 1; j < n_edge_sizes; j++) {
            size_t a = edge_sizes[i], b = edge_sizes[j];
            void *p = fresh(a, i * 1000 + j);
            /* A neighbour allocated after p keeps in-place growth honest. */
            void *guard = fresh(a, 7);
            p = resize(p, a, b, i * 1000 + j);
            fill_pattern(p, b, 99);
            CHECK_PATTERN(guard, a, 7);
            API(free)(p);
            API(free)(guard);
        }
}

/* Many small steps, as a growing buffer or string does, up through every
 * category and back down. */
static void grow_and_shrink_slowly(void)
{
    size_t n = 1;
    void *p = fresh(n, 1);
    while (n < 6 * MiB) {
        size_t next = n + n / 8 + 1;
        p = resize(p, n, next, 1);
        fill_pattern(p, next, 1);
        n = next;
    }
    while (n > 1) {
        size_t next = n - n / 8 - 1;
        p = resize(p, n, next, 1);
        n = next;
    }
    API(free)(p);
}

static void aligned_objects_keep_contents(void)
{
    const size_t aligns[] = {32, 64, 4096, 65536, 2 << 20};
    for (size_t i = 0; i < sizeof aligns / sizeof aligns[0]; i++)
        for (size_t j = 1; j < n_edge_sizes; j += 5) {
            size_t n = edge_sizes[j];
            void *p = API(aligned_alloc)(aligns[i], n);
            CHECK(p != NULL && (uintptr_t)p % aligns[i] == 0);
            fill_pattern(p, n, n);
            p = resize(p, n, n * 3 + 1, n);
            p = resize(p, n, n / 2 + 1, n);
            API(free)(p);
        }
}

static void null_and_zero(void)
{
    /* realloc(NULL, n) is malloc(n), zero included. */
    void *a = API(realloc)(NULL, opaque(0));
    void *b = API(realloc)(NULL, opaque(0));
    CHECK(a != NULL && b != NULL && a != b);
    void *c = API(realloc)(NULL, opaque(100));
    CHECK(c != NULL && API(malloc_usable_size)(c) >= 100);
    API(free)(a);
    API(free)(b);
    API(free)(c);

    /* glibc: realloc(p, 0) frees p and returns NULL.  If p were not freed,
     * 20000 touched 64 KiB objects would add over a GiB of RSS. */
    size_t before = rss_bytes();
    for (int i = 0; i < 20000; i++) {
        void *p = fresh(64 * KiB, i);
        CHECK(API(realloc)(p, opaque(0)) == NULL);
        p = fresh(100, i);
        CHECK(API(realloc)(p, opaque(0)) == NULL);
    }
    size_t after = rss_bytes();
    CHECK_MSG(after < before + 64 * MiB, "realloc(p, 0) kept memory: RSS %zu -> %zu",
              before, after);
}

static void failures_keep_the_object(void)
{
    const size_t sizes[] = {(size_t)PTRDIFF_MAX + 1, SIZE_MAX, SIZE_MAX - 4095,
                            (size_t)1 << 52};
    const size_t have[] = {10, 300, 20000, 3 * MiB};
    for (size_t h = 0; h < sizeof have / sizeof have[0]; h++)
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            void *p = fresh(have[h], h);
            errno = 0;
            CHECK(API(realloc)(p, opaque(sizes[i])) == NULL);
            CHECK_EQ(errno, ENOMEM);
            CHECK_PATTERN(p, have[h], h);
            errno = 0;
            CHECK(API(reallocarray)(p, opaque(sizes[i]), 1) == NULL);
            CHECK_EQ(errno, ENOMEM);
            CHECK_PATTERN(p, have[h], h);
            p = resize(p, have[h], have[h] + 1, h);
            API(free)(p);
        }
}

static void reallocarray_contract(void)
{
    void *p = API(reallocarray)(NULL, opaque(10), 10);
    CHECK(p != NULL && API(malloc_usable_size)(p) >= 100);
    fill_pattern(p, 100, 5);
    p = API(reallocarray)(p, opaque(1000), 100);
    CHECK(p != NULL && API(malloc_usable_size)(p) >= 100000);
    CHECK_PATTERN(p, 100, 5);

    const size_t overflow[][2] = {
        {SIZE_MAX, 2}, {(size_t)1 << 32, (size_t)1 << 32}, {(size_t)1 << 62, 2}};
    for (size_t i = 0; i < sizeof overflow / sizeof overflow[0]; i++) {
        errno = 0;
        CHECK(API(reallocarray)(p, opaque(overflow[i][0]), overflow[i][1]) == NULL);
        CHECK_EQ(errno, ENOMEM);
        CHECK_PATTERN(p, 100, 5);
        errno = 0;
        CHECK(API(reallocarray)(NULL, opaque(overflow[i][0]), overflow[i][1]) == NULL);
        CHECK_EQ(errno, ENOMEM);
    }
    API(free)(p);
}

int main(void)
{
    every_pair_of_edge_sizes();
    grow_and_shrink_slowly();
    aligned_objects_keep_contents();
    null_and_zero();
    failures_keep_the_object();
    reallocarray_contract();
    return 0;
}
