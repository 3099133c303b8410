/* SPDX-License-Identifier: MIT */
/* posix_memalign, aligned_alloc, memalign, valloc, pvalloc and
 * free_aligned_sized: every power-of-two alignment up to 8 MiB with sizes
 * in every category, objects that do not overlap, and glibc's answers to
 * bad alignments (EINVAL) and impossible sizes (ENOMEM). */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include "api.h"
#include "check.h"

#define MAX_ALIGN_LOG 23

/* For alignments glibc's contract accepts or refuses but its headers
 * declare with alloc_align (so that UBSan calls them undefined at the call
 * site): calls through pointers that carry no attributes. */
static void *(*volatile memalign_plain)(size_t, size_t) = API(memalign);
static void *(*volatile aligned_alloc_plain)(size_t, size_t) = API(aligned_alloc);

enum how { POSIX_MEMALIGN, ALIGNED_ALLOC, MEMALIGN };
static const char *const how_name[] = {"posix_memalign", "aligned_alloc", "memalign"};

static void *aligned(enum how how, size_t align, size_t n)
{
    void *p = NULL;
    switch (how) {
    case POSIX_MEMALIGN:
        CHECK_MSG(API(posix_memalign)(&p, align, n) == 0, "posix_memalign(%zu, %zu)",
                  align, n);
        break;
    case ALIGNED_ALLOC:
        p = API(aligned_alloc)(align, n);
        break;
    case MEMALIGN:
        p = API(memalign)(align, n);
        break;
    }
    CHECK_MSG(p != NULL, "%s(%zu, %zu) failed", how_name[how], align, n);
    CHECK_MSG((uintptr_t)p % align == 0, "%s(%zu, %zu) = %p", how_name[how], align, n, p);
    CHECK_MSG(n < 16 || (uintptr_t)p % 16 == 0, "%s(%zu, %zu) = %p", how_name[how], align,
              n, p);
    CHECK(API(malloc_usable_size)(p) >= n);
    return p;
}

/* All sizes of one alignment live at once, each filled over its whole
 * usable size, then checked: an object that overlaps another fails. */
static void every_size(enum how how, size_t align)
{
    const size_t sizes[] = {0, 1, 24, 100, 300, 5000, 40000, 1536 * KiB,
                            align - 1, align, align + 1, 2 * align + 8};
    enum { N = sizeof sizes / sizeof sizes[0] };
    void *p[N];
    size_t usable[N];
    for (size_t i = 0; i < N; i++) {
        p[i] = aligned(how, align, sizes[i]);
        usable[i] = API(malloc_usable_size)(p[i]);
        fill_pattern(p[i], usable[i], align + i);
    }
    for (size_t i = 0; i < N; i++) {
        CHECK_PATTERN(p[i], usable[i], align + i);
        if (how == ALIGNED_ALLOC)
            API(free_aligned_sized)(p[i], align, sizes[i]);
        else
            API(free)(p[i]);
    }
}

static void valid_alignments(void)
{
    for (unsigned lg = 0; lg <= MAX_ALIGN_LOG; lg++) {
        size_t align = (size_t)1 << lg;
        if (align >= sizeof(void *))
            every_size(POSIX_MEMALIGN, align);
        every_size(ALIGNED_ALLOC, align);
        every_size(MEMALIGN, align);
    }
    /* glibc's memalign accepts 0 and rounds other alignments up to a
     * power of two. */
    void *p = memalign_plain(0, 100);
    CHECK(p != NULL && (uintptr_t)p % 16 == 0);
    API(free)(p);
    const size_t odd[][2] = {{24, 32}, {48, 64}, {100, 128}, {3000, 4096}, {40000, 65536}};
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
        p = memalign_plain(odd[i][0], 1000);
        CHECK_MSG(p != NULL && (uintptr_t)p % odd[i][1] == 0, "memalign(%zu) = %p",
                  odd[i][0], p);
        API(free)(p);
    }
}

static void bad_alignments_give_einval(void)
{
    const size_t not_pow2[] = {3, 12, 24, 48, 1000, 4097, SIZE_MAX, SIZE_MAX / 2,
                               ((size_t)1 << 63) + 8};
    void *const sentinel = (void *)&sentinel;
    for (size_t i = 0; i < sizeof not_pow2 / sizeof not_pow2[0]; i++) {
        void *p = sentinel;
        CHECK_EQ(API(posix_memalign)(&p, opaque(not_pow2[i]), 64), EINVAL);
        CHECK(p == sentinel);
        errno = 0;
        p = aligned_alloc_plain(not_pow2[i], 64);
        CHECK_MSG(p == NULL && errno == EINVAL, "aligned_alloc(%#zx) = %p, errno %d",
                  not_pow2[i], p, errno);
    }
    /* posix_memalign also wants a multiple of sizeof(void *). */
    const size_t too_small[] = {0, 1, 2, 4};
    for (size_t i = 0; i < sizeof too_small / sizeof too_small[0]; i++) {
        void *p = sentinel;
        CHECK_EQ(API(posix_memalign)(&p, opaque(too_small[i]), 64), EINVAL);
        CHECK(p == sentinel);
    }
    errno = 0;
    CHECK(aligned_alloc_plain(0, 64) == NULL);
    CHECK_EQ(errno, EINVAL);
    /* memalign refuses only what no power of two can round up to. */
    const size_t beyond[] = {SIZE_MAX / 2 + 2, SIZE_MAX};
    for (size_t i = 0; i < 2; i++) {
        errno = 0;
        CHECK(memalign_plain(beyond[i], 64) == NULL);
        CHECK_EQ(errno, EINVAL);
    }
}

static void impossible_sizes_give_enomem(void)
{
    const size_t sizes[] = {SIZE_MAX, SIZE_MAX - 4095, (size_t)PTRDIFF_MAX + 1,
                            (size_t)1 << 52};
    const size_t aligns[] = {16, 64, 4096, 2 << 20};
    void *const sentinel = (void *)&sentinel;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t n = opaque(sizes[i]);
        for (size_t j = 0; j < sizeof aligns / sizeof aligns[0]; j++) {
            void *p = sentinel;
            CHECK_EQ(API(posix_memalign)(&p, aligns[j], n), ENOMEM);
            CHECK(p == sentinel);
            errno = 0;
            CHECK(API(aligned_alloc)(aligns[j], n) == NULL && errno == ENOMEM);
            errno = 0;
            CHECK(API(memalign)(aligns[j], n) == NULL && errno == ENOMEM);
        }
        errno = 0;
        CHECK(API(valloc)(n) == NULL && errno == ENOMEM);
        errno = 0;
        CHECK(API(pvalloc)(n) == NULL && errno == ENOMEM);
    }
    /* The largest power-of-two alignment leaves no room for any size. */
    void *p = sentinel;
    CHECK_EQ(API(posix_memalign)(&p, opaque((size_t)1 << 63), 1), ENOMEM);
    CHECK(p == sentinel);
}

static void page_aligned(void)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    void *a = API(valloc)(opaque(0));
    void *b = API(valloc)(opaque(0));
    CHECK(a && b && a != b);
    API(free)(a);
    API(free)(b);
    for (size_t i = 0; i < n_edge_sizes; i++) {
        size_t n = edge_sizes[i];
        void *v = API(valloc)(n);
        CHECK_MSG(v != NULL && (uintptr_t)v % page == 0, "valloc(%zu) = %p", n, v);
        CHECK(API(malloc_usable_size)(v) >= n);
        /* pvalloc rounds the size up to whole pages. */
        void *pv = API(pvalloc)(n);
        size_t rounded = (n + page - 1) / page * page;
        CHECK_MSG(pv != NULL && (uintptr_t)pv % page == 0, "pvalloc(%zu) = %p", n, pv);
        CHECK_MSG(API(malloc_usable_size)(pv) >= rounded, "pvalloc(%zu): usable %zu", n,
                  API(malloc_usable_size)(pv));
        fill_pattern(v, API(malloc_usable_size)(v), n);
        fill_pattern(pv, rounded, n + 1);
        CHECK_PATTERN(v, API(malloc_usable_size)(v), n);
        API(free)(v);
        CHECK_PATTERN(pv, rounded, n + 1);
        API(free)(pv);
    }
}

int main(void)
{
    valid_alignments();
    impossible_sizes_give_enomem();
    page_aligned();
    bad_alignments_give_einval();
    return 0;
}
