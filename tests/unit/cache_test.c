/* The cache levels lose and duplicate nothing: threads pass millions of
 * objects of several sizes to one another (through every level), with
 * content checks, and threads come and go; afterwards every object of each
 * bin is accounted for in the shared levels and the folios, and a trim
 * empties the caches into the folios. */
#include <pthread.h>
#include <stdint.h>
#include "cache.h"
#include "folio.h"
#include "primalloc.h"
#include "sizeclass.h"
#include "thread_cache.h"
#include "unit.h"

enum { THREADS = 8, ROUNDS = 3, OPS = 100000, SLOTS = 1 << 14 };
static const size_t sizes[] = {16, 48, 100, 256, 700, 3000, 15000, 40000};
static void *slots[SLOTS];

static void fill(unsigned char *p, size_t n, uintptr_t seed)
{
    *(size_t *)p = n;
    for (size_t i = sizeof(size_t); i < n; i++)
        p[i] = (unsigned char)(seed + i);
}

static void verify(unsigned char *p)
{
    size_t n = *(size_t *)p;
    for (size_t i = sizeof(size_t); i < n; i++)
        CHECK(p[i] == (unsigned char)((uintptr_t)p + i));
}

static void *worker(void *arg)
{
    uint64_t x = (uintptr_t)arg * 0x9e3779b97f4a7c15ull + 1;
    for (int i = 0; i < OPS; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        size_t n = sizes[x % (sizeof sizes / sizeof sizes[0])];
        unsigned char *p = pm_malloc(n);
        CHECK(p);
        fill(p, n, (uintptr_t)p);
        unsigned char *old = __atomic_exchange_n(&slots[(x >> 8) % SLOTS], p, __ATOMIC_ACQ_REL);
        if (old) {
            verify(old);
            pm_free(old);
        }
    }
    return 0;
}

int main(void)
{
    for (int r = 0; r < ROUNDS; r++) {
        pthread_t t[THREADS];
        for (uintptr_t i = 0; i < THREADS; i++)
            CHECK(pthread_create(&t[i], 0, worker, (void *)(i + 1 + r * THREADS)) == 0);
        for (int i = 0; i < THREADS; i++)
            CHECK(pthread_join(t[i], 0) == 0);
    }
    for (int i = 0; i < SLOTS; i++)
        if (slots[i]) {
            verify(slots[i]);
            pm_free(slots[i]);
        }
    /* Nothing is live: every carved object is in a cache or free in a folio. */
    for (unsigned bin = 0; bin < PM_NBINS; bin++) {
        size_t carved, nfree;
        pm_folio_census(bin, &carved, &nfree);
        size_t cached = pm_cache_count(bin) + pm_tc_count(bin);
        if (carved != nfree + cached)
            fprintf(stderr, "bin %u: carved %zu, free %zu, cached %zu\n", bin, carved, nfree, cached);
        CHECK(carved == nfree + cached);
    }
    CHECK(pm_trim());
    struct pm_stats s;
    pm_get_stats(&s);
    CHECK(s.folios_in_use == 0 && s.huge_bytes == 0);
    for (unsigned bin = 0; bin < PM_NBINS; bin++) {
        size_t carved, nfree;
        pm_folio_census(bin, &carved, &nfree);
        CHECK(pm_cache_count(bin) == 0 && pm_tc_count(bin) == 0 && carved == nfree);
    }
    printf("cache ok\n");
    return 0;
}
