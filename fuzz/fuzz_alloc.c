/* SPDX-License-Identifier: MIT */
/* libFuzzer harness: each input is a program of allocator calls on 64
 * slots, run against the pm_ API beside a shadow model of what each slot
 * should hold.  Every call's result is checked: alignment, usable size,
 * no overlap with any live block, contents kept by realloc, zeroes from
 * calloc, errors for bad arguments; every live block's bytes are verified
 * before it is freed or resized.  At the end of an input all is freed and
 * pm_trim must leave no huge bytes and no folio in use, and the chunk
 * pool's invariants must hold. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cache.h"
#include "chunk_pool.h"
#include "folio.h"
#include "guard.h"
#include "primalloc.h"
#include "thread_cache.h"

#define SLOTS 64
#define MiB ((size_t)1 << 20)

/* How a block was obtained, which decides how it may be freed. */
enum origin { PLAIN, ALIGNED_ALLOC };

struct slot {
    unsigned char *p; /* NULL: empty */
    size_t size;      /* requested */
    size_t usable;    /* as malloc_usable_size said */
    size_t align;
    enum origin origin;
    unsigned char fill; /* every usable byte holds this */
};

static struct slot slots[SLOTS];

#define FAIL(...)                                                            \
    do {                                                                     \
        fprintf(stderr, "fuzz_alloc: " __VA_ARGS__);                         \
        fputc('\n', stderr);                                                 \
        abort();                                                             \
    } while (0)

/* The input, read a byte at a time; zeroes once it runs out. */
struct reader {
    const uint8_t *data;
    size_t left;
};

static unsigned byte(struct reader *r)
{
    if (!r->left)
        return 0;
    r->left--;
    return *r->data++;
}

static unsigned word(struct reader *r)
{
    unsigned lo = byte(r);
    return lo | byte(r) << 8;
}

/* Sizes right at the category boundaries and the chunk size. */
static const size_t edges[] = {0, 1, 16, 256, 257, 15424, 15425, 16384, 1032192, 1032193,
                               2 * MiB, 2 * MiB + 1};

/* A size from one of the four categories, or an edge (+-3): huge ones are
 * capped at 6 MiB so that an input stays fast. */
static size_t read_size(struct reader *r)
{
    unsigned sel = byte(r);
    unsigned v = word(r);
    if (sel & 4) {
        size_t e = edges[v % (sizeof edges / sizeof edges[0])];
        size_t delta = (sel >> 3) % 7;
        return e + delta >= 3 ? e + delta - 3 : 0;
    }
    switch (sel & 3) {
    case 0: return v % 257;
    case 1: return 257 + v % (15424 - 256);
    case 2: return 15425 + (size_t)v * 17 % (1032192 - 15424);
    default: return 1032193 + (size_t)v * 80 % (6 * MiB - 1032192);
    }
}

/* A power of two from 1 to 4 MiB, or (one time in eight) a bad one. */
static size_t read_align(struct reader *r)
{
    unsigned b = byte(r);
    size_t a = (size_t)1 << (b % 23);
    return (b & 0xe0) == 0xe0 ? a * 3 : a;
}

static void check_bytes(const struct slot *s, size_t from, size_t to, unsigned char want,
                        const char *what)
{
    for (size_t i = from; i < to; i++)
        if (s->p[i] != want)
            FAIL("%s: block %p (size %zu) byte %zu is %#x, not %#x", what, (void *)s->p, s->size,
                 i, s->p[i], want);
}

static void verify(const struct slot *s)
{
    if (pm_malloc_usable_size(s->p) != s->usable)
        FAIL("usable size of %p changed", (void *)s->p);
    check_bytes(s, 0, s->usable, s->fill, "contents");
}

/* Records a new block in slot i: checks it against the request and every
 * other live block, then fills it. */
static void place(unsigned i, void *p, size_t size, size_t align, enum origin origin)
{
    struct slot *s = &slots[i];
    if (!p)
        FAIL("allocation of %zu bytes (alignment %zu) failed", size, align);
    if ((uintptr_t)p % align)
        FAIL("%p (size %zu) not aligned to %zu", p, size, align);
    size_t usable = pm_malloc_usable_size(p);
    if (usable < size)
        FAIL("%p: usable %zu < requested %zu", p, usable, size);
    uintptr_t lo = (uintptr_t)p, hi = lo + (usable ? usable : 1);
    for (unsigned j = 0; j < SLOTS; j++) {
        const struct slot *o = &slots[j];
        uintptr_t olo = (uintptr_t)o->p, ohi = olo + (o->usable ? o->usable : 1);
        if (j != i && o->p && lo < ohi && olo < hi)
            FAIL("%p+%zu overlaps live %p+%zu", p, usable, (void *)o->p, o->usable);
    }
    s->p = p;
    s->size = size;
    s->usable = usable;
    s->align = align;
    s->origin = origin;
    s->fill = (unsigned char)(i * 4 + 1 + (s->fill & 3) + 1);
    memset(s->p, s->fill, usable);
}

/* Frees slot i through free, free_sized or free_aligned_sized. */
static void release(unsigned i, unsigned how)
{
    struct slot *s = &slots[i];
    if (!s->p)
        return;
    verify(s);
    if (how % 3 == 1)
        pm_free_sized(s->p, s->size);
    else if (how % 3 == 2 && s->origin == ALIGNED_ALLOC)
        pm_free_aligned_sized(s->p, s->align, s->size);
    else
        pm_free(s->p);
    s->p = NULL;
    s->usable = 0;
}

static int is_pow2(size_t a)
{
    return a && !(a & (a - 1));
}

static void do_aligned(struct reader *r, unsigned op, unsigned i)
{
    size_t align = read_align(r), size = read_size(r);
    release(i, op);
    errno = 0;
    void *p = NULL;
    int rc;
    switch (op) {
    case 0:
        rc = pm_posix_memalign(&p, align, size);
        if (!is_pow2(align) || align < sizeof(void *)) {
            if (rc != EINVAL)
                FAIL("posix_memalign(%zu, %zu) returned %d, not EINVAL", align, size, rc);
            return;
        }
        if (rc)
            FAIL("posix_memalign(%zu, %zu) returned %d", align, size, rc);
        place(i, p, size, align, PLAIN);
        return;
    case 1:
        p = pm_aligned_alloc(align, size);
        if (!is_pow2(align)) {
            if (p || errno != EINVAL)
                FAIL("aligned_alloc(%zu, %zu) gave %p, errno %d", align, size, p, errno);
            return;
        }
        place(i, p, size, align, ALIGNED_ALLOC);
        return;
    default: {
        /* memalign rounds a bad alignment up to a power of two. */
        size_t want = align;
        while (!is_pow2(want))
            want += want & -want;
        place(i, pm_memalign(align, size), size, want, PLAIN);
        return;
    }
    }
}

static void do_realloc(struct reader *r, unsigned i, int array)
{
    struct slot *s = &slots[i];
    size_t size = read_size(r), n = 1;
    if (array) {
        /* Sometimes a count whose product overflows: NULL, ENOMEM, and the
         * block stays. */
        n = byte(r) % 5;
        if (n == 4) {
            /* size | 2 is at least 2, so the count itself cannot wrap. */
            n = SIZE_MAX / (size | 2) + 1;
            errno = 0;
            if (pm_reallocarray(s->p, n, size | 2) || errno != ENOMEM)
                FAIL("reallocarray overflow not refused");
            if (s->p)
                verify(s);
            return;
        }
        if (n == 0)
            n = 1;
        size /= n;
    }
    if (s->p)
        verify(s);
    void *q = array ? pm_reallocarray(s->p, n, size) : pm_realloc(s->p, size);
    size_t total = n * size;
    if (s->p && total == 0 && !q) {
        /* realloc(p, 0) frees p. */
        s->p = NULL;
        s->usable = 0;
        return;
    }
    if (s->p) {
        /* The kept part: what both the old and the new size cover. */
        struct slot moved = *s;
        moved.p = q;
        if (q)
            check_bytes(&moved, 0, s->size < total ? s->size : total, s->fill, "realloc");
    }
    s->p = NULL;
    s->usable = 0;
    place(i, q, total, 16, PLAIN);
}

static void run_op(struct reader *r)
{
    unsigned op = byte(r) % 16, i = byte(r) % SLOTS;
    switch (op) {
    case 0: case 1: case 2: {
        size_t size = read_size(r);
        release(i, op);
        place(i, pm_malloc(size), size, 16, PLAIN);
        break;
    }
    case 3: {
        size_t size = read_size(r), n = byte(r) % 8 + 1;
        release(i, op);
        void *p = pm_calloc(n, size / n);
        struct slot tmp = {p, (size / n) * n, (size / n) * n, 16, PLAIN, 0};
        if (p)
            check_bytes(&tmp, 0, tmp.size, 0, "calloc");
        place(i, p, (size / n) * n, 16, PLAIN);
        break;
    }
    case 4: do_realloc(r, i, 0); break;
    case 5: do_realloc(r, i, 1); break;
    case 6: case 7: case 8: do_aligned(r, op - 6, i); break;
    case 9: {
        size_t size = read_size(r);
        release(i, op);
        place(i, pm_valloc(size), size, 4096, PLAIN);
        break;
    }
    case 10: {
        size_t size = read_size(r);
        release(i, op);
        place(i, pm_pvalloc(size), (size + 4095) & ~(size_t)4095, 4096, PLAIN);
        break;
    }
    case 11: case 12: case 13: release(i, op - 11); break;
    case 14:
        for (unsigned j = 0; j < SLOTS; j++)
            if (slots[j].p)
                verify(&slots[j]);
        break;
    default: pm_trim(); break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct reader r = {data, size};
    while (r.left)
        run_op(&r);
    for (unsigned i = 0; i < SLOTS; i++)
        release(i, i);
    pm_trim();
    struct pm_stats st;
    pm_get_stats(&st);
    if (st.huge_bytes || st.folios_in_use)
        FAIL("after freeing everything and pm_trim: %zu huge bytes, %zu folios in use",
             st.huge_bytes, st.folios_in_use);
    pm_pool_check();
    pm_folio_check();
    pm_cache_check();
    pm_tc_check();
    pm_guard_check();
    return 0;
}
