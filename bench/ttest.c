/* SPDX-License-Identifier: MIT */
/* t-test1-style (Wolfram Gloger's multi-thread test that ships with
 * ptmalloc, run by allocbench): every thread keeps an array of bins, each
 * empty or holding one object, and in rounds frees a random number (up to
 * 29) of random bins, then fills a random number of random bins with
 * objects of sizes uniform in [1, max].  Filling a bin that holds an
 * object replaces it: mostly by free and malloc, one in 12.5 by realloc
 * while the old object is under 2000 bytes, one in 64 by calloc and one in
 * 256 by memalign (alignments 4 to 32 bytes).  Besides the tags, a byte
 * every 2 KiB is written and verified, what the original does to commit
 * and check each object's pages; calloc's objects are checked zero. */
#include "common.h"

#include <malloc.h>
#include <stdio.h>

#define STRIDE 2048
#define REALLOC_MAX 2000
#define ROUND_MAX 30

static long g_actions, g_bins, g_max;

static unsigned char stride_byte(uint32_t tag, size_t at)
{
    return (unsigned char)(tag ^ (at >> 11) ^ 0x3c);
}

static void fill(obj_t *o)
{
    unsigned char *p = o->p;
    for (size_t at = STRIDE; at + 1 < o->size; at += STRIDE)
        p[at] = stride_byte(o->tag, at);
    tag_fill(p, o->size, o->tag);
}

/* Verifies a live object, as the original does before every free, and
 * counts it freed. */
static void verify(const obj_t *o, struct tally *t)
{
    const unsigned char *p = o->p;
    for (size_t at = STRIDE; at + 1 < o->size; at += STRIDE)
        if (p[at] != stride_byte(o->tag, at))
            check_fail("object %p of %u bytes was overwritten at %zu", o->p, o->size, at);
    obj_verify(o, t);
}

static void release(obj_t *o, struct tally *t)
{
    if (!o->p)
        return;
    verify(o, t);
    free(o->p);
    o->p = NULL;
}

static void replace(obj_t *o, size_t size, rng_t *r, struct tally *t)
{
    uint32_t tag = (uint32_t)rng_next(r);
    unsigned kind = (unsigned)rng_below(r, 1024);
    void *p;
    if (kind < 4) {
        release(o, t);
        p = memalign((size_t)4 << kind, size);
        if (p && (uintptr_t)p % ((size_t)4 << kind))
            check_fail("memalign(%zu, %zu) returned %p", (size_t)4 << kind, size, p);
    } else if (kind < 20) {
        release(o, t);
        p = calloc(size, 1);
        for (size_t i = 0; p && i < size; i++)
            if (((unsigned char *)p)[i]) {
                check_fail("calloc(%zu, 1) returned %p, not zero at %zu", size, p, i);
                break;
            }
    } else if (kind < 100 && (!o->p || o->size < REALLOC_MAX)) {
        size_t keep = o->size < size ? o->size : size;
        if (o->p)
            verify(o, t);
        p = realloc(o->p, size);
        if (p && o->p && !tag_ok(p, keep < 8 ? keep : 8, o->tag))
            check_fail("realloc(%p, %zu) lost the object's first bytes", o->p, size);
    } else {
        release(o, t);
        p = malloc(size);
    }
    if (!p) {
        check_fail("allocation of %zu bytes returned NULL", size);
        o->p = NULL;
        return;
    }
    o->p = p;
    o->size = (uint32_t)size;
    o->tag = tag;
    fill(o);
    tally_alloc(t, tag);
}

static void *work(void *arg)
{
    struct tally t = {0};
    rng_t r;
    rng_seed(&r, (uint64_t)ARG_ID(arg));
    obj_t *bin = calloc((size_t)g_bins, sizeof *bin);
    if (!bin) {
        check_fail("calloc of the bins failed");
        return NULL;
    }
    for (long b = 0; b < g_bins; b++)
        if (rng_below(&r, 2))
            replace(&bin[b], rng_range(&r, 1, (uint64_t)g_max), &r, &t);
    for (long done = 0; done < g_actions;) {
        long frees = (long)rng_below(&r, ROUND_MAX);
        for (long i = 0; i < frees; i++)
            release(&bin[rng_below(&r, (uint64_t)g_bins)], &t);
        long fills = (long)rng_below(&r, ROUND_MAX);
        for (long i = 0; i < fills; i++)
            replace(&bin[rng_below(&r, (uint64_t)g_bins)], rng_range(&r, 1, (uint64_t)g_max),
                    &r, &t);
        done += frees + fills;
    }
    for (long b = 0; b < g_bins; b++)
        release(&bin[b], &t);
    free(bin);
    tally_merge(&t);
    return NULL;
}

int main(int argc, char **argv)
{
    args_init(argc, argv, "threads=2 actions=10000000 max=10000 bins=0 (0: 64 MiB / (max * threads))");
    int n = (int)arg_long("threads", 2);
    g_actions = arg_long("actions", 10000000) / n; /* all threads share the total */
    g_max = arg_long("max", 10000);
    g_bins = arg_long("bins", 0);
    args_done();
    if (n < 1 || g_max < 1 || g_bins < 0) {
        fprintf(stderr, "need threads >= 1, max >= 1, bins >= 0\n");
        return 2;
    }
    if (!g_bins)
        g_bins = (64l << 20) / (g_max * n);
    if (g_bins < 4)
        g_bins = 4;

    uint64_t t0 = now_ns();
    run_threads(n, work);
    double secs = (double)(now_ns() - t0) / 1e9;

    metric("actions_per_s", (double)n * g_actions / secs, "1/s");
    return bench_finish();
}
