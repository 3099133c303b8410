/* SPDX-License-Identifier: MIT */
/* mstress-style (mimalloc-bench; The Quest for Memory Allocation
 * Efficiency, section 4): power-of-two sizes, small ones likelier;
 * objects move between threads through a shared array; the threads do
 * unequal amounts of work; all threads end after each phase and new
 * ones start, while the objects in the shared array live on into the
 * next phase. */
#include "common.h"

#include <stdio.h>

#define LOCAL 512
#define SHARED 4096
#define STRIPES 64

static long g_threads, g_iters, g_maxlog, g_phase;
static obj_t g_shared[SHARED];
static pthread_mutex_t g_stripe[STRIPES];

static size_t pick_size(rng_t *r)
{
    /* Two draws make a triangular law over the exponents 3 .. maxlog. */
    uint64_t span = (uint64_t)g_maxlog - 2;
    return (size_t)1 << (3 + rng_below(r, rng_below(r, span) + 1));
}

static void *work(void *arg)
{
    int id = ARG_ID(arg);
    struct tally t = {0};
    rng_t r;
    rng_seed(&r, (uint64_t)(g_phase * g_threads + id));
    obj_t *local = calloc(LOCAL, sizeof *local);
    if (!local) {
        check_fail("calloc failed");
        return NULL;
    }
    /* Thread i does 2(i+1)/(n+1) shares of the work: uneven, same total. */
    long iters = g_iters * 2 * (id + 1) / (g_threads + 1);
    for (long it = 0; it < iters; it++) {
        obj_t *o = &local[rng_below(&r, LOCAL)];
        uint64_t op = rng_below(&r, 10);
        if (op < 5) {
            obj_free(o, &t);
            obj_alloc(o, pick_size(&r), (uint32_t)rng_next(&r), &t);
        } else if (op < 8) {
            obj_free(o, &t);
        } else {
            size_t s = rng_below(&r, SHARED);
            pthread_mutex_t *mu = &g_stripe[s % STRIPES];
            pthread_mutex_lock(mu);
            obj_t x = g_shared[s];
            g_shared[s] = *o;
            pthread_mutex_unlock(mu);
            *o = x;
        }
    }
    for (size_t i = 0; i < LOCAL; i++)
        obj_free(&local[i], &t);
    free(local);
    tally_merge(&t);
    return NULL;
}

int main(int argc, char **argv)
{
    args_init(argc, argv, "threads=2 phases=10 iters=100000 maxlog=14");
    int n = (int)(g_threads = arg_long("threads", 2));
    long phases = arg_long("phases", 10);
    g_iters = arg_long("iters", 100000) / n; /* per phase, all threads together */
    g_maxlog = arg_long("maxlog", 14);
    args_done();
    if (n < 1 || phases < 1 || g_maxlog < 3 || g_maxlog > 30) {
        fprintf(stderr, "need threads, phases >= 1, 3 <= maxlog <= 30\n");
        return 2;
    }
    for (int i = 0; i < STRIPES; i++)
        pthread_mutex_init(&g_stripe[i], NULL);

    uint64_t t0 = now_ns();
    for (g_phase = 0; g_phase < phases; g_phase++)
        run_threads(n, work);
    double secs = (double)(now_ns() - t0) / 1e9;

    struct tally t = {0};
    for (size_t i = 0; i < SHARED; i++)
        obj_free(&g_shared[i], &t);
    tally_merge(&t);
    metric("ops_per_s", (double)phases * n * g_iters / secs, "1/s");
    return bench_finish();
}
