/* SPDX-License-Identifier: MIT */
/* malloc-thread-style (glibc's benchtests bench-malloc-thread, as
 * mimalloc-bench runs it): every thread keeps a working set of 1024
 * slots and, at each step, frees a random slot's object and puts there a
 * new one whose size follows an inverse-square law on [4, 32768] (most
 * small, a long tail), writing every byte.  The original runs for a fixed
 * time; here a fixed total of steps is shared by the threads. */
#include "common.h"

#include <stdio.h>

#define TABLE 8192
#define MIN_SIZE 4
#define MAX_SIZE 32768

static long g_steps, g_slots;
static uint32_t g_sizes[TABLE];

static void *work(void *arg)
{
    struct tally t = {0};
    rng_t r;
    rng_seed(&r, (uint64_t)ARG_ID(arg));
    obj_t *o = slots_new(g_slots);
    if (!o)
        return NULL;
    for (long i = 0; i < g_steps; i++) {
        obj_t *s = &o[rng_below(&r, (uint64_t)g_slots)];
        obj_free(s, &t);
        size_t size = g_sizes[rng_below(&r, TABLE)];
        obj_alloc_written(s, size, (uint32_t)rng_next(&r), &t, true);
        if (!s->p)
            break;
    }
    slots_done(o, g_slots, &t);
    return NULL;
}

int main(int argc, char **argv)
{
    args_init(argc, argv, "threads=2 steps=10000000 slots=1024");
    int n = (int)arg_long("threads", 2);
    g_steps = arg_long("steps", 10000000) / n; /* all threads share the total */
    g_slots = arg_long("slots", 1024);
    args_done();
    if (n < 1 || g_slots < 1) {
        fprintf(stderr, "need threads, slots >= 1\n");
        return 2;
    }
    /* Inverse square: the inverse of the distribution function, drawn
     * once into a table so that the benchmark does not time it. */
    rng_t r;
    rng_seed(&r, 88);
    const double lo = 1.0 / MIN_SIZE, hi = 1.0 / MAX_SIZE;
    for (size_t i = 0; i < TABLE; i++) {
        double u = (double)(rng_next(&r) >> 11) / 9007199254740992.0;
        g_sizes[i] = (uint32_t)(1.0 / (lo - u * (lo - hi)));
    }

    uint64_t t0 = now_ns();
    run_threads(n, work);
    double secs = (double)(now_ns() - t0) / 1e9;

    metric("steps_per_s", (double)n * g_steps / secs, "1/s");
    return bench_finish();
}
