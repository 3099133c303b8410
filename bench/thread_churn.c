/* SPDX-License-Identifier: MIT */
/* Short-lived threads, as a server that starts a thread per request runs
 * them: `threads` threads at a time, each replacing random objects of
 * `min`..`max` bytes in a window of `window` for `ops` operations, then
 * freeing the window and exiting, `rounds` times over.  What an allocator
 * does when a thread starts, for its first frees and when it exits is
 * paid once a thread, so it weighs here as it does not where threads
 * live long. */
#include "common.h"

#include <stdio.h>

static long g_ops, g_window, g_min, g_max;

static void *work(void *arg)
{
    struct tally t = {0};
    rng_t r;
    rng_seed(&r, (uint64_t)(intptr_t)arg);
    obj_t *o = slots_new(g_window);
    if (!o)
        return NULL;
    for (long i = 0; i < g_ops; i++) {
        obj_t *s = &o[rng_below(&r, (uint64_t)g_window)];
        obj_free(s, &t);
        obj_alloc(s, rng_range(&r, (uint64_t)g_min, (uint64_t)g_max), (uint32_t)rng_next(&r), &t);
    }
    slots_done(o, g_window, &t);
    return NULL;
}

int main(int argc, char **argv)
{
    args_init(argc, argv, "threads=2 rounds=2000 ops=4000 window=256 min=8 max=256");
    long threads = arg_long("threads", 2);
    long rounds = arg_long("rounds", 2000);
    g_ops = arg_long("ops", 4000);
    g_window = arg_long("window", 256);
    g_min = arg_long("min", 8);
    g_max = arg_long("max", 256);
    args_done();
    if (threads < 1 || rounds < 1 || g_ops < 0 || g_window < 1 || g_min < 1 || g_max < g_min) {
        fprintf(stderr, "need threads, rounds, window, min >= 1, ops >= 0, max >= min\n");
        return 2;
    }
    uint64_t t0 = now_ns();
    for (long k = 0; k < rounds; k++) {
        pthread_t tid[threads];
        for (long i = 0; i < threads; i++)
            tid[i] = spawn(work, ID_ARG(k * threads + i));
        for (long i = 0; i < threads; i++)
            pthread_join(tid[i], NULL);
    }
    double secs = (double)(now_ns() - t0) / 1e9;
    metric("threads_per_s", (double)(threads * rounds) / secs, "1/s");
    return bench_finish();
}
