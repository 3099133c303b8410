/* SPDX-License-Identifier: MIT */
/* threadtest (Hoard; the scalloc paper section 7.2): every thread
 * allocates a round of same-size objects, then frees them all, many rounds.
 * The work is thread-local; the total is fixed, split among the threads. */
#include "common.h"

#include <stdio.h>

static long g_threads, g_objects, g_rounds, g_size;

static void *work(void *arg)
{
    long count = g_objects / g_threads;
    struct tally t = {0};
    rng_t r;
    rng_seed(&r, (uint64_t)ARG_ID(arg));
    obj_t *o = malloc((size_t)count * sizeof *o);
    if (!o) {
        check_fail("malloc of the object array failed");
        return NULL;
    }
    for (long round = 0; round < g_rounds; round++) {
        for (long i = 0; i < count; i++)
            obj_alloc(&o[i], (size_t)g_size, (uint32_t)rng_next(&r), &t);
        for (long i = 0; i < count; i++)
            obj_free(&o[i], &t);
    }
    free(o);
    tally_merge(&t);
    return NULL;
}

int main(int argc, char **argv)
{
    args_init(argc, argv, "threads=2 objects=100000 rounds=100 size=64");
    int n = (int)(g_threads = arg_long("threads", 2));
    g_objects = arg_long("objects", 100000); /* per round, all threads */
    g_rounds = arg_long("rounds", 100);
    g_size = arg_long("size", 64);
    args_done();
    if (n < 1 || g_size < 1) {
        fprintf(stderr, "need threads >= 1, size >= 1\n");
        return 2;
    }

    uint64_t t0 = now_ns();
    run_threads(n, work);
    double secs = (double)(now_ns() - t0) / 1e9;

    metric("mallocs_per_s", (double)(g_objects / n) * n * g_rounds / secs, "1/s");
    return bench_finish();
}
