/* SPDX-License-Identifier: MIT */
/* malloc-simple-style (glibc's benchtests bench-malloc-simple, as
 * mimalloc-bench runs it): one thread allocates a window of objects of
 * one size, writes every byte of each, frees the first half oldest first
 * and the second half newest first, over and over.  Windows of 25, 100,
 * 400 and 1600 objects; sizes size, 2*size and 4*size.  Each size runs
 * every window in the main thread, then in a second thread, then in the
 * main thread again with the process no longer single-threaded. */
#include "common.h"

#include <stdio.h>

static const long windows[] = {25, 100, 400, 1600};
#define NWINDOWS (sizeof windows / sizeof windows[0])
#define MAX_WINDOW 1600

static long g_pairs;
static size_t g_size;
static struct tally g_tally;
static rng_t g_rng;

static void alloc_one(obj_t *o, size_t size)
{
    obj_alloc_written(o, size, (uint32_t)rng_next(&g_rng), &g_tally, true);
}

/* Each window runs until it has made about `pairs` malloc+free pairs. */
static void run_windows(obj_t *o)
{
    for (size_t w = 0; w < NWINDOWS; w++) {
        long n = windows[w];
        for (long iter = 0; iter < g_pairs / n; iter++) {
            for (long i = 0; i < n; i++)
                alloc_one(&o[i], g_size);
            for (long i = 0; i < n / 2; i++)
                obj_free(&o[i], &g_tally);
            for (long i = n - 1; i >= n / 2; i--)
                obj_free(&o[i], &g_tally);
        }
    }
}

static void *in_thread(void *arg)
{
    run_windows(arg);
    return NULL;
}

int main(int argc, char **argv)
{
    args_init(argc, argv, "size=16 pairs=2000000");
    long size = arg_long("size", 16);
    g_pairs = arg_long("pairs", 2000000);
    args_done();
    if (size < 1 || g_pairs < MAX_WINDOW) {
        fprintf(stderr, "need size >= 1, pairs >= %d\n", MAX_WINDOW);
        return 2;
    }
    rng_seed(&g_rng, 1);
    obj_t *o = malloc(MAX_WINDOW * sizeof *o);
    if (!o) {
        perror("malloc");
        return 3;
    }

    uint64_t t0 = now_ns();
    long pairs = 0;
    for (int k = 0; k < 3; k++) {
        g_size = (size_t)size << k;
        run_windows(o);
        pthread_join(spawn(in_thread, o), NULL);
        run_windows(o);
        for (size_t w = 0; w < NWINDOWS; w++)
            pairs += 3 * (g_pairs / windows[w]) * windows[w];
    }
    double secs = (double)(now_ns() - t0) / 1e9;

    free(o);
    tally_merge(&g_tally);
    metric("ns_per_pair", secs * 1e9 / (double)pairs, "ns");
    return bench_finish();
}
