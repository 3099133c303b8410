/* SPDX-License-Identifier: MIT */
/* malloc-large (mimalloc-bench; The Quest for Memory Allocation
 * Efficiency, section 4): a few live buffers of several MiB, replaced
 * one at a time at random, each written once a page so that its memory
 * is really used. */
#include "common.h"

#include <stdio.h>

#define PAGE 4096
#define LIVE 20

int main(int argc, char **argv)
{
    args_init(argc, argv, "ops=500 min=5m max=25m");
    long ops = arg_long("ops", 500);
    long min = arg_long("min", 5L << 20);
    long max = arg_long("max", 25L << 20);
    args_done();
    if (ops < 1 || min < 8 || max < min) {
        fprintf(stderr, "need ops >= 1, 8 <= min <= max\n");
        return 2;
    }
    struct tally t = {0};
    obj_t live[LIVE] = {0};
    rng_t r;
    rng_seed(&r, 1);

    uint64_t t0 = now_ns();
    for (long i = 0; i < ops; i++) {
        obj_t *o = &live[rng_below(&r, LIVE)];
        obj_free(o, &t);
        obj_alloc(o, rng_range(&r, (uint64_t)min, (uint64_t)max), (uint32_t)rng_next(&r), &t);
        if (o->p)
            for (size_t off = PAGE; off + 8 < o->size; off += PAGE)
                ((unsigned char *)o->p)[off] = (unsigned char)off;
    }
    for (size_t i = 0; i < LIVE; i++)
        obj_free(&live[i], &t);
    double secs = (double)(now_ns() - t0) / 1e9;

    tally_merge(&t);
    metric("mallocs_per_s", (double)ops / secs, "1/s");
    return bench_finish();
}
