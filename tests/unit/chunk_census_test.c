/* SPDX-License-Identifier: MIT */
/* Chunk census: threads allocate and free objects of every category, so
 * that chunks move between bins, huge objects and the pool, while the main
 * thread forks children that check the pool and allocate; threads exit
 * holding cached objects.  Afterwards every chunk of the chunk table is in
 * exactly one place: a bin (as its count says), the pool, or a live huge
 * object. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <sys/wait.h>
#include "cache.h"
#include "chunk_pool.h"
#include "chunk_table.h"
#include "table_count.h"
#include "folio.h"
#include "primalloc.h"
#include "unit.h"

#define THREADS 4
#define LIVE 64

static size_t chunks_of(unsigned bin)
{
    struct pm_folio_census c;
    pm_folio_census(bin, &c);
    return c.chunks;
}

static void *churn(void *arg)
{
    uint64_t r = (uintptr_t)arg * 0x9e3779b97f4a7c15ull + 1;
    void *live[LIVE] = {0};
    for (int i = 0; i < 20000; i++) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        unsigned k = (unsigned)(r % LIVE);
        pm_free(live[k]);
        size_t size = (r >> 8) % 4 == 0 ? (r >> 16) % (5u << 20) : (r >> 16) % 20000;
        CHECK((live[k] = pm_malloc(size)));
        memset(live[k], 1, size < 64 ? size : 64);
    }
    /* Half the threads leave their objects for the main thread to free. */
    if ((uintptr_t)arg % 2 == 0)
        return memcpy(pm_malloc(sizeof live), live, sizeof live);
    for (int k = 0; k < LIVE; k++)
        pm_free(live[k]);
    return NULL;
}

int main(void)
{
    pthread_t t[THREADS];
    for (uintptr_t i = 0; i < THREADS; i++)
        CHECK(pthread_create(&t[i], NULL, churn, (void *)i) == 0);
    for (int f = 0; f < 20; f++) {
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) {
            pm_pool_check();
            pm_folio_check();
            pm_cache_check();
            void *p = pm_malloc(3 << 20), *q = pm_malloc(100);
            CHECK(p && q);
            pm_free(p);
            pm_free(q);
            pm_pool_check();
            _exit(0);
        }
        int status;
        CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
        usleep(2000);
    }
    for (int i = 0; i < THREADS; i++) {
        void *left;
        CHECK(pthread_join(t[i], &left) == 0);
        if (left) {
            for (int k = 0; k < LIVE; k++)
                pm_free(((void **)left)[k]);
            pm_free(left);
        }
    }
    pm_pool_check();
    size_t in_bins = 0;
    for (unsigned b = 0; b < PM_NBINS; b++)
        in_bins += chunks_of(b);
    struct pm_pool_census c;
    pm_pool_census(&c);
    CHECK(count_tagged(PM_BIN_TAG(0), PM_BIN_TAG(PM_NBINS - 1)) == in_bins);
    CHECK(count_tagged(PM_TAG_FREE, PM_TAG_FREE) == c.free);
    CHECK(count_tagged(PM_TAG_HUGE, PM_TAG_HUGE_BODY) == 0);
    CHECK(c.mapped == in_bins + c.free);
    /* Trimmed, every chunk that holds nothing is given back; a bin keeps
     * only chunks with live objects or that it carves from. */
    pm_folio_check();
    pm_cache_check();
    pm_trim();
    pm_pool_check();
    pm_folio_check();
    size_t kept = 0;
    for (unsigned b = 0; b < PM_NBINS; b++)
        kept += chunks_of(b);
    pm_pool_census(&c);
    CHECK(c.free == 0 && c.mapped == kept && kept <= in_bins);
    CHECK(count_tagged(PM_BIN_TAG(0), PM_BIN_TAG(PM_NBINS - 1)) == kept);
    printf("chunk census ok: %zu chunks in bins, %zu after trim\n", in_bins, kept);
    return 0;
}
