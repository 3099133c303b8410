/* SPDX-License-Identifier: MIT */
#include "zero.h"
#include <stdint.h>
#include "access_fault.h"
#include "chunk_table.h"
#include "layout.h"
#include "os.h"

#define SLOTS (PM_CHUNK / PM_ALIGN)
#define WORDS (SLOTS / 64)

/* The readable start of a zero chunk.  Bit i of taken stands for the
 * address i * PM_ALIGN into the chunk: set while it is handed out, and
 * for the addresses of these readable pages, which are never handed
 * out. */
struct zero_chunk {
    struct zero_chunk *next; /* the chunk made before, or NULL */
    uint32_t hint;           /* the word where the last address was found */
    uint64_t taken[WORDS];
};

/* The newest zero chunk; chunks are never given back. */
static struct zero_chunk *chunks;

/* Bytes at a zero chunk's start that are readable: whole pages of the
 * kernel's, whole words of taken. */
static size_t readable(void)
{
    size_t page = pm_os_page();
    return (sizeof(struct zero_chunk) + page - 1) & ~(page - 1);
}

/* An address from c not handed out, now taken; NULL if c has none. */
static void *take(struct zero_chunk *c)
{
    uint32_t first = __atomic_load_n(&c->hint, __ATOMIC_RELAXED);
    for (uint32_t k = 0; k < WORDS; k++) {
        uint32_t w = (first + k) % WORDS;
        uint64_t v = __atomic_load_n(&c->taken[w], __ATOMIC_RELAXED);
        while (~v) {
            uint64_t bit = ~v & (v + 1);
            if (__atomic_compare_exchange_n(&c->taken[w], &v, v | bit, 1, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
                __atomic_store_n(&c->hint, w, __ATOMIC_RELAXED);
                return (char *)c + ((size_t)w * 64 + (unsigned)__builtin_ctzll(bit)) * PM_ALIGN;
            }
        }
    }
    return 0;
}

/* A new zero chunk, in the table, its readable pages' bits set, not yet
 * in the list; NULL when the kernel refuses. */
static struct zero_chunk *new_chunk(void)
{
    char *m = pm_os_map(PM_CHUNK, PM_CHUNK);
    if (!m)
        return 0;
    if (!pm_chunk_table_cover((uintptr_t)m, PM_CHUNK)) {
        pm_os_unmap(m, PM_CHUNK);
        return 0;
    }
    size_t head = readable();
    pm_os_protect_none(m + head, PM_CHUNK - head);
    struct zero_chunk *c = (struct zero_chunk *)m;
    uint32_t words = (uint32_t)(head / PM_ALIGN / 64);
    for (uint32_t w = 0; w < words; w++)
        c->taken[w] = ~(uint64_t)0;
    c->hint = words;
    pm_access_fault_watch();
    pm_chunk_set((uintptr_t)m, PM_CHUNK, PM_TAG_ZERO, 0);
    return c;
}

void *pm_zero_alloc(void)
{
    for (struct zero_chunk *c = __atomic_load_n(&chunks, __ATOMIC_ACQUIRE); c; c = c->next) {
        void *p = take(c);
        if (p)
            return p;
    }
    struct zero_chunk *c = new_chunk();
    if (!c)
        return 0;
    void *p = take(c);
    c->next = __atomic_load_n(&chunks, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(&chunks, &c->next, c, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
        ;
    return p;
}

/* The word of p's bit in its chunk's taken, and the bit. */
static uint64_t *bit_of(const void *p, uint64_t *bit)
{
    uintptr_t a = (uintptr_t)p;
    struct zero_chunk *c = (struct zero_chunk *)(a & ~(uintptr_t)(PM_CHUNK - 1));
    size_t i = (a & (PM_CHUNK - 1)) / PM_ALIGN;
    *bit = (uint64_t)1 << (i % 64);
    return &c->taken[i / 64];
}

int pm_zero_live(const void *p, const char *call)
{
    uintptr_t a = (uintptr_t)p;
    if (a % PM_ALIGN)
        pm_fatal(call, p, "pointer inside an object, not at its start");
    if ((a & (PM_CHUNK - 1)) < readable())
        pm_fatal(call, p, "pointer not allocated by primalloc");
    uint64_t bit, *w = bit_of(p, &bit);
    return (__atomic_load_n(w, __ATOMIC_ACQUIRE) & bit) != 0;
}

void pm_zero_free(void *p, const char *call)
{
    uint64_t bit, *w = bit_of(p, &bit);
    if (!(__atomic_fetch_and(w, ~bit, __ATOMIC_ACQ_REL) & bit))
        pm_fatal(call, p, "double free");
}
