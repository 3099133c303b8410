/* SPDX-License-Identifier: MIT */
/* Usage: quiet_purge on|off|busy|sparse
 * A burst of 512 MiB (small, large and huge objects) is written, freed,
 * and followed by no allocation at all, or by work of another size only.
 *  on:   run with PRIMALLOC_PURGE_THREAD=1; the resident set must fall to
 *        within QUIET_SLACK of where it started within twice the decay
 *        time (src/footprint.h), the background thread's doing, and the
 *        CPU and global caches must hold nothing within twice more.
 *  off:  run without it; the process must still have one thread: no
 *        thread of primalloc's by default.
 *  busy: run without it; rounds of 64-byte objects, allocated and freed
 *        through the caches, follow the burst, and the resident set must
 *        fall as for `on` within four decay times: the burst's sizes,
 *        cached or free, go back though the program never calls for
 *        them again.
 *  sparse: run with PRIMALLOC_PURGE_THREAD=1; of SPARSE_BYTES of medium
 *        objects, every SPARSE_KEPT-th stays in use, so that no folio
 *        empties; the resident set must fall to within SPARSE_SLACK of
 *        where it started within four decay times, as the pages between
 *        the objects kept go back. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "background.h"
#include "cache.h"
#include "check.h"
#include "footprint.h"
#include "sizeclass.h"

#define QUIET_SLACK (48 * MiB)

static const size_t sizes[] = {256, 4096, 64 << 10, 4 << 20};
#define PER_SIZE (128 * MiB)

static long threads_now(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    CHECK(f);
    char line[256];
    long n = -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "Threads:", 8))
            n = atol(line + 8);
    fclose(f);
    return n;
}

static void burst(void)
{
    size_t total = 0;
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        total += PER_SIZE / sizes[s];
    char **objs = malloc(total * sizeof *objs);
    CHECK(objs);
    size_t n = 0;
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (size_t i = 0; i < PER_SIZE / sizes[s]; i++) {
            CHECK((objs[n] = malloc(sizes[s])));
            memset(objs[n++], 1, sizes[s]);
        }
    for (size_t i = 0; i < n; i++)
        free(objs[i]);
    free(objs);
}

/* One round of work in one size: ROUND_OBJECTS of 64 bytes, more than a
 * thread's lists hold, allocated, then freed. */
#define ROUND_OBJECTS 20000
static void *round_objects[ROUND_OBJECTS];

static void work_round(void)
{
    for (int i = 0; i < ROUND_OBJECTS; i++)
        CHECK((round_objects[i] = malloc(64)));
    for (int i = 0; i < ROUND_OBJECTS; i++)
        free(round_objects[i]);
}

/* Polls the resident set every 50 ms, for up to `ms`, until it is within
 * `slack` of `before`, doing a round of work before each poll when
 * `working`; then checks that it is, and that the process has `threads`
 * threads. */
static void falls_back(const char *mode, size_t before, size_t after_burst, size_t slack, int ms,
                       int working, long threads)
{
    size_t now = after_burst;
    for (int waited = 0; waited < ms && now > before + slack; waited += 50) {
        usleep(50 * 1000);
        if (working)
            work_round();
        now = rss_bytes();
    }
    printf("quiet_purge %s: resident %zu MiB before, %zu after the burst, %zu now\n", mode,
           before / MiB, after_burst / MiB, now / MiB);
    CHECK(now <= before + slack);
    CHECK(threads_now() == threads);
}

static size_t cached_by_levels(void)
{
    size_t n = 0;
    for (unsigned bin = 0; bin < PM_NBINS; bin++)
        n += pm_cache_count(bin);
    return n;
}

/* Polls the CPU and global levels every 50 ms, for up to `ms`, until
 * they hold no object, and checks that they do not. */
static void caches_empty(size_t after_burst, int ms)
{
    size_t now = cached_by_levels();
    for (int waited = 0; waited < ms && now; waited += 50) {
        usleep(50 * 1000);
        now = cached_by_levels();
    }
    printf("quiet_purge on: %zu objects in the CPU and global caches after the burst, %zu now, "
           "resident %zu MiB\n",
           after_burst, now, rss_bytes() / MiB);
    CHECK(now == 0);
}

#define SPARSE_SIZE 10000
#define SPARSE_BYTES (32 * MiB)
#define SPARSE_KEPT 16
#define SPARSE_SLACK (12 * MiB)

static void sparse(void)
{
    enum { N = SPARSE_BYTES / SPARSE_SIZE };
    static char *objs[N];
    size_t before = rss_bytes();
    for (int i = 0; i < N; i++) {
        CHECK((objs[i] = malloc(SPARSE_SIZE)));
        memset(objs[i], i, SPARSE_SIZE);
    }
    for (int i = 0; i < N; i++)
        if (i % SPARSE_KEPT)
            free(objs[i]);
    size_t after = rss_bytes();
    CHECK(after > before + SPARSE_BYTES / 2);
    falls_back("sparse", before, after, SPARSE_SLACK, 4 * PM_DECAY_MS, 0, 2);
    for (int i = 0; i < N; i += SPARSE_KEPT)
        for (int k = 0; k < SPARSE_SIZE; k++)
            CHECK(objs[i][k] == (char)i);
}

int main(int argc, char **argv)
{
    CHECK(argc == 2);
    if (!strcmp(argv[1], "sparse")) {
        CHECK(getenv("PRIMALLOC_PURGE_THREAD"));
        sparse();
        return 0;
    }
    int on = !strcmp(argv[1], "on"), busy = !strcmp(argv[1], "busy");
    CHECK(on == !!getenv("PRIMALLOC_PURGE_THREAD"));
    work_round();
    size_t before = rss_bytes();
    burst();
    size_t after_burst = rss_bytes(), cached = cached_by_levels();
    CHECK(after_burst > before + 256 * MiB);
    if (busy) {
        falls_back("busy", before, after_burst, QUIET_SLACK, 4 * PM_DECAY_MS, 1, 1);
    } else if (on) {
        falls_back("on", before, after_burst, QUIET_SLACK, 2 * PM_DECAY_MS, 0, 2);
        caches_empty(cached, 2 * PM_DECAY_MS);
    } else {
        usleep(2 * PM_DECAY_MS * 1000);
        CHECK(threads_now() == 1);
        printf("quiet_purge off: one thread, resident %zu MiB\n", rss_bytes() / MiB);
    }
    return 0;
}
