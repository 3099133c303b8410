/* SPDX-License-Identifier: MIT */
/* Chunk pool: runs are aligned and tagged as asked, free runs coalesce and
 * are reused best fit, a clean run reads as zero, a run too big for any
 * committed one gets their pages, runs grow in place or move with their
 * contents, purging unmaps (the chunks then read "gone") what has been
 * free long enough, counted from a run's oldest part (and, for the
 * footprint rule, only runs that may hold committed pages), and every mapped
 * chunk is in exactly one place (checked against the chunk table after
 * each step). */
#define _GNU_SOURCE
#include <stdint.h>
#include <sys/mman.h>
#include "chunk_pool.h"
#include "chunk_table.h"
#include "table_count.h"
#include "unit.h"

static size_t owned; /* chunks the test holds as bin chunks or huge runs */

static void census(void)
{
    pm_pool_check();
    struct pm_pool_census c;
    pm_pool_census(&c);
    CHECK(count_tagged(PM_TAG_FREE, PM_TAG_FREE) == c.free);
    CHECK(count_tagged(1, PM_TAG_HUGE_BODY) == owned);
    CHECK(c.mapped == c.free + owned);
}

static int mapped(void *p)
{
    unsigned char v;
    return mincore(p, PM_PAGE, &v) == 0;
}

int main(void)
{
    size_t dirty;
    char *a = pm_pool_take(1, PM_CHUNK, PM_BIN_TAG(3), 7, &dirty);
    owned = 1;
    CHECK(a && ((uintptr_t)a & (PM_CHUNK - 1)) == 0 && dirty == 0);
    CHECK(pm_bin_of_addr((uintptr_t)a + 12345) == 3 && pm_chunk_lane((uintptr_t)a) == 7);
    for (size_t i = 0; i < PM_CHUNK; i += PM_PAGE)
        CHECK(a[i] == 0);
    census();

    /* A three-chunk run: first chunk tagged as asked, the rest body. */
    char *h = pm_pool_take(3, PM_CHUNK, PM_TAG_HUGE, 1000, &dirty);
    owned += 3;
    CHECK(h && dirty == 0);
    CHECK(pm_chunk_entry_of((uintptr_t)h)->tag == PM_TAG_HUGE && pm_chunk_entry_of((uintptr_t)h)->link == 1000);
    CHECK(pm_chunk_entry_of((uintptr_t)h + 2 * PM_CHUNK)->tag == PM_TAG_HUGE_BODY);
    CHECK(pm_chunk_entry_of((uintptr_t)h + 2 * PM_CHUNK)->link == 3);
    census();

    /* Given back dirty, it is reused first, and says so. */
    memset(h, 9, PM_CHUNK);
    pm_pool_put(h, 3, PM_CHUNK);
    owned -= 3;
    CHECK(pm_chunk_entry_of((uintptr_t)h + PM_CHUNK)->tag == PM_TAG_FREE);
    census();
    char *h2 = pm_pool_take(2, PM_CHUNK, PM_TAG_HUGE, 1, &dirty);
    owned += 2;
    CHECK(dirty > 0);
    census();

    /* Neighbours coalesce whatever order they come back in. */
    char *r[4];
    for (int i = 0; i < 4; i++) {
        r[i] = pm_pool_take(1, PM_CHUNK, PM_BIN_TAG(0), 0, &dirty);
        owned++;
    }
    census();
    int order[4] = {2, 0, 3, 1};
    for (int i = 0; i < 4; i++) {
        pm_pool_put(r[order[i]], 1, 0);
        owned--;
        census();
    }
    pm_pool_put(h2, 2, PM_CHUNK);
    owned -= 2;
    census();

    /* A committed run is taken before a clean one, newer or not, and the
     * two are not joined: a clean chunk next to a committed one would
     * otherwise be handed out as committed, and the committed one later. */
    char *clean = pm_pool_take(1, PM_CHUNK, PM_BIN_TAG(0), 0, &dirty);
    char *used = pm_pool_take(1, PM_CHUNK, PM_BIN_TAG(0), 0, &dirty);
    owned += 2;
    memset(used, 5, PM_PAGE);
    pm_pool_put(used, 1, PM_PAGE);
    pm_pool_put(clean, 1, 0);
    owned -= 2;
    census();
    char *again = pm_pool_take(1, PM_CHUNK, PM_BIN_TAG(0), 0, &dirty);
    CHECK(again == used && dirty == PM_PAGE && again[0] == 5);
    char *next = pm_pool_take(1, PM_CHUNK, PM_BIN_TAG(0), 0, &dirty);
    CHECK(dirty == 0);
    owned += 2;
    census();
    pm_pool_put(again, 1, PM_PAGE);
    pm_pool_put(next, 1, 0);
    owned -= 2;
    census();

    /* Alignment beyond a chunk. */
    char *big = pm_pool_take(2, 8 * PM_CHUNK, PM_TAG_HUGE, 1, &dirty);
    owned += 2;
    CHECK(big && ((uintptr_t)big & (8 * PM_CHUNK - 1)) == 0);
    census();

    /* Growing in place into free chunks that follow, then moving. */
    pm_pool_put(big + PM_CHUNK, 1, 0);
    owned--;
    census();
    big[100] = 42;
    if (pm_pool_extend((uintptr_t)big + PM_CHUNK, 2, &dirty)) {
        owned += 2;
        CHECK(pm_chunk_entry_of((uintptr_t)big + 2 * PM_CHUNK)->tag == PM_TAG_HUGE_BODY);
        pm_chunk_set((uintptr_t)big + PM_CHUNK, 2 * PM_CHUNK, PM_TAG_HUGE_BODY, 3);
        census();
    } else {
        CHECK(pm_pool_extend((uintptr_t)big + PM_CHUNK, 1, &dirty));
        owned += 1;
        pm_chunk_set((uintptr_t)big + PM_CHUNK, PM_CHUNK, PM_TAG_HUGE_BODY, 2);
    }
    size_t len = pm_chunk_entry_of((uintptr_t)big + PM_CHUNK)->link;
    char *moved = pm_pool_move(big, len, len + 5, PM_TAG_HUGE, 77);
    CHECK(moved && moved != big && moved[100] == 42);
    CHECK(pm_chunk_entry_of((uintptr_t)big)->tag == PM_TAG_GONE && !mapped(big));
    owned += 5;
    census();

    /* Purging unmaps every free run.  The move's reservation may have
     * unmapped the clean ones, so a chunk goes back first. */
    pm_pool_put(pm_pool_take(1, PM_CHUNK, PM_BIN_TAG(0), 0, &dirty), 1, 0);
    census();
    struct pm_pool_census c;
    pm_pool_census(&c);
    CHECK(c.free > 0);
    while (pm_pool_purge_one(0, 1))
        ;
    pm_pool_census(&c);
    CHECK(c.free == 0 && c.runs == 0);
    census();

    /* A run bigger than every committed run gets their pages: both
     * committed runs move into it, and their ranges read "gone". */
    char *x = pm_pool_take(3, PM_CHUNK, PM_TAG_HUGE, 1, &dirty);
    char *keep_apart = pm_pool_take(1, PM_CHUNK, PM_BIN_TAG(0), 0, &dirty);
    char *z = pm_pool_take(3, PM_CHUNK, PM_TAG_HUGE, 1, &dirty);
    owned += 7;
    for (int i = 0; i < 3; i++) {
        x[i * PM_CHUNK] = 1;
        z[i * PM_CHUNK] = 2;
    }
    pm_pool_put(x, 3, 3 * PM_CHUNK);
    pm_pool_put(z, 3, 3 * PM_CHUNK);
    owned -= 6;
    census();
    char *joined = pm_pool_take(6, PM_CHUNK, PM_TAG_HUGE, 1, &dirty);
    owned += 6;
    CHECK(joined && dirty == 6 * PM_CHUNK);
    for (int i = 0; i < 6; i++)
        CHECK(joined[i * PM_CHUNK] == 1 || joined[i * PM_CHUNK] == 2);
    CHECK(pm_chunk_entry_of((uintptr_t)x)->tag == PM_TAG_GONE && !mapped(x));
    CHECK(pm_chunk_entry_of((uintptr_t)z)->tag == PM_TAG_GONE && !mapped(z));
    census();
    pm_pool_put(joined, 6, 6 * PM_CHUNK);
    pm_pool_put(keep_apart, 1, 0);
    owned -= 7;
    census();

    /* A free run is as old as its oldest part: a chunk freed next to it
     * later does not put off its purge.  The pool is emptied first, so
     * that the run is the only one. */
    char *pair = pm_pool_take(2, PM_CHUNK, PM_TAG_HUGE, 1, &dirty);
    owned += 2;
    while (pm_pool_purge_one(0, 1))
        ;
    pm_pool_put(pair, 1, PM_CHUNK);
    uint32_t first = pm_os_now_ms();
    while (pm_os_now_ms() == first)
        ;
    pm_pool_put(pair + PM_CHUNK, 1, PM_CHUNK);
    owned -= 2;
    census();
    pm_pool_census(&c);
    CHECK(c.runs == 1 && c.free == 2);
    CHECK(pm_pool_purge_one(first, 0));
    census();

    /* The footprint's purge unmaps only runs that may hold committed
     * pages, however old the clean ones are, and none when all are clean. */
    char *cl = pm_pool_take(1, PM_CHUNK, PM_BIN_TAG(0), 0, &dirty);
    char *co = pm_pool_take(1, PM_CHUNK, PM_BIN_TAG(0), 0, &dirty);
    co[0] = 1;
    pm_pool_put(cl, 1, 0);
    while (pm_os_now_ms() == first)
        ;
    pm_pool_put(co, 1, PM_CHUNK);
    census();
    while (pm_pool_purge_committed())
        ;
    CHECK(pm_chunk_entry_of((uintptr_t)co)->tag == PM_TAG_GONE && !mapped(co));
    CHECK(pm_chunk_entry_of((uintptr_t)cl)->tag == PM_TAG_FREE);
    census();

    pm_pool_put(a, 1, PM_CHUNK);
    pm_pool_put(moved, len + 5, PM_CHUNK);
    owned = 0;
    census();
    printf("chunk_pool ok\n");
    return 0;
}
