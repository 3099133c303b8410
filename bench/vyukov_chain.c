/* SPDX-License-Identifier: MIT */
/* Vyukov's chain, the footprint test of the SuperMalloc paper section 9:
 * thread 0 allocates a batch of objects of random sizes under 4 KiB and
 * hands it to thread 1, which frees it all, allocates its own batch and
 * hands that to thread 2, and so on.  Only one batch is alive at a time,
 * so an allocator that keeps what each thread freed to itself grows its
 * footprint with the number of threads.  All threads exist from the start
 * and each ends once it has passed its batch on. */
#include "common.h"

#include <stdio.h>

static long g_threads, g_objects, g_max;
static struct mailbox *g_box;

static void *work(void *arg)
{
    int id = ARG_ID(arg);
    struct tally t = {0};
    rng_t r;
    rng_seed(&r, (uint64_t)id);
    if (id > 0)
        batch_release(mailbox_take(&g_box[id], true), &t);
    struct batch *b = batch_fill((size_t)g_objects, id, 1, (size_t)g_max - 1, &r, &t);
    /* The last thread's batch goes back to the main thread. */
    mailbox_put(&g_box[(id + 1) % g_threads], b);
    tally_merge(&t);
    return NULL;
}

int main(int argc, char **argv)
{
    args_init(argc, argv, "threads=200 objects=50000 max=4096");
    g_threads = arg_long("threads", 200);
    g_objects = arg_long("objects", 50000); /* per thread */
    g_max = arg_long("max", 4096);          /* sizes are below this */
    args_done();
    if (g_threads < 1 || g_objects < 1 || g_max < 2) {
        fprintf(stderr, "need threads, objects >= 1, max >= 2\n");
        return 2;
    }
    g_box = malloc((size_t)g_threads * sizeof *g_box);
    if (!g_box)
        return 3;
    for (long i = 0; i < g_threads; i++)
        mailbox_init(&g_box[i], 0);

    uint64_t t0 = now_ns();
    run_threads((int)g_threads, work);
    struct tally t = {0};
    batch_release(mailbox_take(&g_box[0], false), &t);
    tally_merge(&t);
    double secs = (double)(now_ns() - t0) / 1e9;

    metric("mallocs_per_s", (double)g_threads * g_objects / secs, "1/s");
    free(g_box);
    return bench_finish();
}
