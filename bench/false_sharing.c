/* SPDX-License-Identifier: MIT */
/* cache-thrash and cache-scratch (Hoard; the scalloc paper section
 * 7.4): does the allocator put small objects used by different threads
 * in one cache line?
 *   mode=active   (cache-thrash) each thread allocates its own small
 *                 objects and writes them hard; an allocator that serves
 *                 threads from the same line makes them fight over it.
 *   mode=passive  (cache-scratch) the main thread allocates one object
 *                 per thread, all adjacent; each thread frees its object
 *                 first, then allocates and writes its own, which share a
 *                 line with the others if the freed memory is reused. */
#include "common.h"

#include <stdio.h>

static long g_iters, g_writes, g_size;
static void **g_given;

static void *work(void *arg)
{
    int id = ARG_ID(arg);
    if (g_given)
        free(g_given[id]);
    for (long it = 0; it < g_iters; it++) {
        volatile unsigned char *p = malloc((size_t)g_size);
        if (!p) {
            check_fail("malloc returned NULL");
            return NULL;
        }
        for (long j = 0; j < g_size; j++)
            p[j] = 0;
        for (long w = 0; w < g_writes; w++)
            for (long j = 0; j < g_size; j++)
                p[j]++;
        for (long j = 0; j < g_size; j++)
            if (p[j] != (unsigned char)g_writes)
                check_fail("byte %ld of %p holds %u, not %u", j, (void *)p, p[j],
                           (unsigned)(unsigned char)g_writes);
        free((void *)p);
    }
    checked_add((uint64_t)g_iters);
    return NULL;
}

int main(int argc, char **argv)
{
    args_init(argc, argv, "mode=active|passive threads=2 iters=1000 writes=1000 size=8");
    const char *mode = arg_str("mode", "active");
    int n = (int)arg_long("threads", 2);
    g_iters = arg_long("iters", 1000) / n; /* objects, in turn, all threads together */
    g_writes = arg_long("writes", 1000); /* passes over each object */
    g_size = arg_long("size", 8);
    args_done();
    bool passive = strcmp(mode, "passive") == 0;
    if ((!passive && strcmp(mode, "active") != 0) || n < 1 || g_size < 1) {
        fprintf(stderr, "need mode=active|passive, threads >= 1, size >= 1\n");
        return 2;
    }
    if (passive) {
        g_given = malloc((size_t)n * sizeof *g_given);
        if (!g_given)
            return 3;
        for (int i = 0; i < n; i++)
            if (!(g_given[i] = malloc((size_t)g_size)))
                return 3;
    }

    uint64_t t0 = now_ns();
    run_threads(n, work);
    double secs = (double)(now_ns() - t0) / 1e9;

    metric("writes_per_s", (double)n * g_iters * g_writes * g_size / secs, "1/s");
    free(g_given);
    return bench_finish();
}
