/* SPDX-License-Identifier: MIT */
/* xmalloc-style (Lever and Boreham's xmalloc-test, the repository
 * malloc-test comes from; the SuperMalloc paper section 9): every
 * thread allocates batches of objects of random sizes and sends each batch
 * to a random other thread, which verifies and frees it, so nearly every
 * free is remote and every thread both allocates and frees. */
#include "common.h"

#include <stdio.h>

static long g_objects, g_batch, g_min, g_max;
static struct postoffice *g_po;

static void *work(void *arg)
{
    int id = ARG_ID(arg);
    struct tally t = {0};
    rng_t r;
    rng_seed(&r, (uint64_t)id);
    for (long made = 0; made < g_objects; made += g_batch) {
        struct batch *b = batch_fill((size_t)g_batch, id, (size_t)g_min, (size_t)g_max, &r, &t);
        po_send(g_po, id, po_other(g_po, id, &r), b, &t);
        po_drain(g_po, id, &t);
    }
    po_finish(g_po, id, &t);
    tally_merge(&t);
    return NULL;
}

int main(int argc, char **argv)
{
    args_init(argc, argv, "threads=2 objects=1000000 batch=64 min=8 max=1024");
    int n = (int)arg_long("threads", 2);
    g_objects = arg_long("objects", 1000000) / n; /* all threads share the total */
    g_batch = arg_long("batch", 64);
    g_min = arg_long("min", 8);
    g_max = arg_long("max", 1024);
    args_done();
    if (n < 1 || g_batch < 1 || g_min < 1 || g_max < g_min) {
        fprintf(stderr, "need threads, batch >= 1, 1 <= min <= max\n");
        return 2;
    }
    g_objects = (g_objects + g_batch - 1) / g_batch * g_batch;
    g_po = po_new(n, 16);

    uint64_t t0 = now_ns();
    run_threads(n, work);
    double secs = (double)(now_ns() - t0) / 1e9;

    metric("mallocs_per_s", (double)n * g_objects / secs, "1/s");
    po_free(g_po);
    return bench_finish();
}
