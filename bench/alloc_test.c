/* SPDX-License-Identifier: MIT */
/* alloc-test-style (ITHare's alloc-test; The Quest for Memory
 * Allocation Efficiency, section 4): each thread keeps a working set of
 * slots and replaces a random one at every step with an object whose
 * size follows a Pareto law (most small, a few large) up to 1 KiB. */
#include "common.h"

#include <math.h>
#include <stdio.h>

#define TABLE 4096

static long g_ops, g_slots;
static uint32_t g_sizes[TABLE];

static void *work(void *arg)
{
    int id = ARG_ID(arg);
    struct tally t = {0};
    rng_t r;
    rng_seed(&r, (uint64_t)id);
    obj_t *o = slots_new(g_slots);
    if (!o)
        return NULL;
    for (long i = 0; i < g_ops; i++) {
        obj_t *s = &o[rng_below(&r, (uint64_t)g_slots)];
        obj_free(s, &t);
        obj_alloc(s, g_sizes[rng_below(&r, TABLE)], (uint32_t)rng_next(&r), &t);
    }
    slots_done(o, g_slots, &t);
    return NULL;
}

int main(int argc, char **argv)
{
    args_init(argc, argv, "threads=2 ops=1000000 slots=16384 max=1024 alpha=1.2");
    int n = (int)arg_long("threads", 2);
    g_ops = arg_long("ops", 1000000) / n; /* all threads share the total */
    g_slots = arg_long("slots", 16384);
    long max = arg_long("max", 1024);
    double alpha = atof(arg_str("alpha", "1.2"));
    args_done();
    if (n < 1 || g_slots < 1 || max < 8 || alpha <= 0) {
        fprintf(stderr, "need threads, slots >= 1, max >= 8, alpha > 0\n");
        return 2;
    }
    /* Sizes are drawn from a table filled once, so the benchmark does
     * not time pow(); the Pareto tail is cut off at max. */
    rng_t r;
    rng_seed(&r, 42);
    for (size_t i = 0; i < TABLE; i++) {
        double size;
        do
            size = 8.0 / pow(1.0 - (double)(rng_next(&r) >> 11) / 9007199254740992.0, 1.0 / alpha);
        while (size > (double)max);
        g_sizes[i] = (uint32_t)size;
    }

    uint64_t t0 = now_ns();
    run_threads(n, work);
    double secs = (double)(now_ns() - t0) / 1e9;

    metric("mallocs_per_s", (double)n * g_ops / secs, "1/s");
    return bench_finish();
}
