/* SPDX-License-Identifier: MIT */
/* rptest-style (rpmalloc's benchmark, as mimalloc-bench runs it: random
 * sizes, linear drop-off, a hand-off every second loop): every thread
 * keeps `slots` objects and, each loop, frees a random share of them at a
 * prime stride, frees what other threads sent it, allocates a random
 * number into slots at another prime stride, and every `cross` loops also
 * allocates as many objects more as one batch and sends it to the next
 * thread in turn, which frees them.  Sizes fall off linearly from min to
 * max; two in three requests under 4 KiB go through posix_memalign with
 * an alignment of 8 or 16.  One byte of every page of an object is
 * written, as the original does so that its pages are committed. */
#include "common.h"

#include <stdio.h>

static long g_loops, g_slots, g_ops, g_cross, g_min, g_max;
static long g_stride_alloc, g_stride_free;
static struct postoffice *g_po;

/* Linear drop-off on [min, max]: the smaller of two uniform draws. */
static size_t draw_size(rng_t *r)
{
    uint64_t a = rng_below(r, (uint64_t)(g_max - g_min + 1));
    uint64_t b = rng_below(r, (uint64_t)(g_max - g_min + 1));
    return (size_t)g_min + (a < b ? a : b);
}

static void make(obj_t *o, size_t size, unsigned kind, rng_t *r, struct tally *t)
{
    uint32_t tag = (uint32_t)rng_next(r);
    void *p = NULL;
    size_t align = kind % 3 == 1 ? 8 : 16;
    if (size >= 4096 || !(kind % 3))
        p = malloc(size);
    else if (posix_memalign(&p, align, size))
        p = NULL;
    o->p = p;
    o->size = (uint32_t)size;
    o->tag = tag;
    if (!p) {
        check_fail("allocation of %zu bytes returned NULL", size);
        return;
    }
    if ((uintptr_t)p % 8)
        check_fail("object %p is not aligned", p);
    for (size_t at = 4096; at + 1 < size; at += 4096)
        ((unsigned char *)p)[at] = 1;
    tag_fill(p, size, tag);
    tally_alloc(t, tag);
}

/* A share of ops, 30% to 99% at random. */
static long share(long ops, rng_t *r)
{
    return ops * (long)rng_range(r, 30, 99) / 100;
}

static void *work(void *arg)
{
    int id = ARG_ID(arg);
    struct tally t = {0};
    rng_t r;
    rng_seed(&r, (uint64_t)id);
    obj_t *o = slots_new(g_slots);
    if (!o)
        return NULL;
    long ai = 0, fi = 0;
    unsigned kind = 0;
    int to = id;
    for (long loop = 0; loop < g_loops; loop++) {
        long frees = share(g_ops, &r) * 8 / 10;
        for (long i = 0; i < frees; i++) {
            obj_free(&o[fi], &t);
            fi = (fi + g_stride_free) % g_slots;
        }
        po_drain(g_po, id, &t);
        long allocs = share(g_ops, &r);
        for (long i = 0; i < allocs; i++) {
            obj_free(&o[ai], &t);
            make(&o[ai], draw_size(&r), kind++, &r, &t);
            ai = (ai + g_stride_alloc) % g_slots;
        }
        if (g_po->n > 1 && g_cross && loop % g_cross == 0) {
            struct batch *b = batch_new((size_t)allocs, id);
            for (; b->n < (size_t)allocs; b->n++)
                make(&b->obj[b->n], draw_size(&r), kind++, &r, &t);
            to = (to + 1) % g_po->n;
            if (to == id)
                to = (to + 1) % g_po->n;
            po_send(g_po, id, to, b, &t);
        }
    }
    po_finish(g_po, id, &t);
    slots_done(o, g_slots, &t);
    return NULL;
}

/* The first of these primes that does not divide slots, after skip. */
static long stride(long slots, long skip)
{
    static const long primes[] = {7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47};
    for (size_t i = 0; i < sizeof primes / sizeof primes[0]; i++)
        if (slots % primes[i] && primes[i] != skip)
            return primes[i];
    return 1;
}

int main(int argc, char **argv)
{
    args_init(argc, argv, "threads=2 loops=1000000 slots=1000 ops=100 cross=2 min=8 max=16000");
    int n = (int)arg_long("threads", 2);
    g_loops = arg_long("loops", 1000000) / n; /* all threads share the total */
    g_slots = arg_long("slots", 1000);
    g_ops = arg_long("ops", 100);
    g_cross = arg_long("cross", 2);
    g_min = arg_long("min", 8);
    g_max = arg_long("max", 16000);
    args_done();
    if (n < 1 || g_slots < 1 || g_ops < 2 || g_cross < 0 || g_min < 8 || g_max < g_min) {
        fprintf(stderr, "need threads, slots >= 1, ops >= 2, cross >= 0, 8 <= min <= max\n");
        return 2;
    }
    g_stride_alloc = stride(g_slots, 0);
    g_stride_free = stride(g_slots, g_stride_alloc);
    g_po = po_new(n, 64);

    uint64_t t0 = now_ns();
    run_threads(n, work);
    double secs = (double)(now_ns() - t0) / 1e9;

    metric("loops_per_s", (double)n * g_loops / secs, "1/s");
    po_free(g_po);
    return bench_finish();
}
