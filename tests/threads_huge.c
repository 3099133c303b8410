/* SPDX-License-Identifier: MIT */
/* Threads allocate, resize and free huge objects (1 to 12 MiB) and swap
 * them through shared slots, so that runs of every length come back to the
 * chunk pool while other threads take runs longer than any committed one
 * (whose pages move in from those runs) or grow theirs by realloc.  Every
 * page of an object holds the object's seed and the page's number,
 * checked before the object is resized or freed; a calloc'd object must
 * read as zero where it is checked.  Calls go through API(), so that the
 * TSan variant runs primalloc's functions, not the sanitizer's.
 * Usage: threads_huge [threads] [operations per thread] */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "api.h"
#include "check.h"

#define SLOTS 16
#define PAGE 4096

/* An object: its size in its first page's first word, its seed in the
 * second; the first word of every later page that holds a whole word of
 * the object holds seed + page number. */
struct head {
    size_t size;
    uint64_t seed;
};

static _Atomic(char *) slots[SLOTS];
static atomic_long allocated, freed;
static long ops_per_thread;

/* Pages of an object of size bytes (at least 16) whose first word is the
 * object's. */
static size_t pages_of(size_t size)
{
    return (size - sizeof(uint64_t)) / PAGE + 1;
}

static void stamp(char *p, size_t size, uint64_t seed)
{
    for (size_t i = 1; i < pages_of(size); i++)
        *(uint64_t *)(p + i * PAGE) = seed + i;
    *(struct head *)p = (struct head){size, seed};
}

/* Checks the first `keep` bytes' pages of object p (all when keep is its
 * size); returns its size. */
static size_t check(const char *p, size_t keep)
{
    struct head h = *(const struct head *)p;
    size_t n = pages_of(keep < h.size ? keep : h.size);
    for (size_t i = 1; i < n; i++)
        CHECK_MSG(*(const uint64_t *)(p + i * PAGE) == h.seed + i, "page %zu of %p (%zu bytes) damaged",
                  i, (const void *)p, h.size);
    return h.size;
}

static char *make(uint64_t *rng, size_t size)
{
    char *p;
    if (rng_next(rng) % 4 == 0) {
        p = API(calloc)(1, size);
        CHECK(p);
        for (size_t i = 0; i < pages_of(size); i += 7)
            CHECK_MSG(*(uint64_t *)(p + i * PAGE) == 0, "calloc'd %zu bytes not zero at page %zu", size, i);
    } else {
        p = API(malloc)(size);
        CHECK(p);
    }
    stamp(p, size, rng_next(rng));
    atomic_fetch_add(&allocated, 1);
    return p;
}

static void discard(char *p)
{
    check(p, SIZE_MAX);
    API(free)(p);
    atomic_fetch_add(&freed, 1);
}

static void *worker(void *arg)
{
    uint64_t rng = (uint64_t)(uintptr_t)arg * 104729 + 3;
    for (long i = 0; i < ops_per_thread; i++) {
        char *p = make(&rng, rng_size(&rng, 1 * MiB + 1, 12 * MiB));
        char *got = atomic_exchange(&slots[rng_next(&rng) % SLOTS], p);
        if (!got)
            continue;
        if (rng_next(&rng) % 3 == 0) {
            size_t size = rng_size(&rng, 1 * MiB + 1, 12 * MiB);
            size_t old = check(got, SIZE_MAX);
            got = API(realloc)(got, size);
            CHECK(got);
            check(got, old < size ? old : size);
            stamp(got, size, ((struct head *)got)->seed);
            got = atomic_exchange(&slots[rng_next(&rng) % SLOTS], got);
            if (!got)
                continue;
        }
        discard(got);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int nthreads = argc > 1 ? atoi(argv[1]) : 4;
    ops_per_thread = argc > 2 ? atol(argv[2]) : 500;
    CHECK(nthreads >= 1 && nthreads <= 64 && ops_per_thread > 0);
    run_threads(nthreads, worker);
    for (int i = 0; i < SLOTS; i++) {
        char *p = atomic_exchange(&slots[i], NULL);
        if (p)
            discard(p);
    }
    CHECK_EQ(atomic_load(&allocated), nthreads * ops_per_thread);
    CHECK_EQ(atomic_load(&freed), atomic_load(&allocated));
    return 0;
}
