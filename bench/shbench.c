/* SPDX-License-Identifier: MIT */
/* shbench-style (MicroQuill's sh6bench and sh8bench; the jemalloc
 * paper's "Experiments", The Quest for Memory Allocation Efficiency
 * section 4, the scalloc paper section 7.2).  Each thread allocates
 * groups of equal-size objects, more of them when they are small; a
 * quarter of each group is kept, replacing older kept objects, and the
 * rest is freed, the second half last-in first-out and the first half in
 * allocation order.  With remote=1 (sh8bench) the rest is sent to another
 * thread, which frees it. */
#include "common.h"

#include <stdio.h>

#define KEEP 1024

static long g_iters, g_min, g_max, g_remote;
static struct postoffice *g_po;

static void *work(void *arg)
{
    int id = ARG_ID(arg);
    struct tally t = {0};
    rng_t r;
    rng_seed(&r, (uint64_t)id);
    obj_t *kept = calloc(KEEP, sizeof *kept);
    size_t cap = 4 + 4096 / (size_t)(g_min + 15);
    obj_t *group = malloc(cap * sizeof *group);
    if (!kept || !group) {
        check_fail("malloc of the arrays failed");
        return NULL;
    }
    for (long it = 0; it < g_iters; it++) {
        size_t size = rng_range(&r, (uint64_t)g_min, (uint64_t)g_max);
        size_t n = 4 + 4096 / (size + 15);
        for (size_t i = 0; i < n; i++)
            obj_alloc(&group[i], size, (uint32_t)rng_next(&r), &t);
        struct batch *b = g_remote ? batch_new(n, id) : NULL;
        /* Visits the second half backwards, then the first half forwards. */
        for (size_t k = 0; k < n; k++) {
            size_t i = k < n - n / 2 ? n - 1 - k : k - (n - n / 2);
            if (i % 4 == 0) {
                obj_t *slot = &kept[rng_below(&r, KEEP)];
                obj_free(slot, &t);
                *slot = group[i];
            } else if (b) {
                b->obj[b->n++] = group[i];
            } else {
                obj_free(&group[i], &t);
            }
        }
        if (b) {
            po_send(g_po, id, po_other(g_po, id, &r), b, &t);
            po_drain(g_po, id, &t);
        }
    }
    for (size_t i = 0; i < KEEP; i++)
        obj_free(&kept[i], &t);
    if (g_remote)
        po_finish(g_po, id, &t);
    free(kept);
    free(group);
    tally_merge(&t);
    return NULL;
}

int main(int argc, char **argv)
{
    args_init(argc, argv, "threads=2 iters=20000 min=1 max=1000 remote=0");
    int n = (int)arg_long("threads", 2);
    g_iters = arg_long("iters", 20000) / n; /* groups, all threads together */
    g_min = arg_long("min", 1);
    g_max = arg_long("max", 1000);
    g_remote = arg_long("remote", 0);
    args_done();
    if (n < 1 || g_min < 1 || g_max < g_min) {
        fprintf(stderr, "need threads >= 1, 1 <= min <= max\n");
        return 2;
    }
    g_po = po_new(n, 8);

    uint64_t t0 = now_ns();
    run_threads(n, work);
    double secs = (double)(now_ns() - t0) / 1e9;

    metric("groups_per_s", (double)n * g_iters / secs, "1/s");
    po_free(g_po);
    return bench_finish();
}
