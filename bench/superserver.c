/* SPDX-License-Identifier: MIT */
/* SuperServer (the SuperMalloc paper section 9): a server whose object
 * sizes spread over a wide range.  For each allocation k counts tails in a
 * row of a fair coin (k >= kmin, so k = kmin with probability 1/2, kmin+1
 * with 1/4, ...; capped at kmax) and the size is uniform in [2^k, 2^(k+1)).
 * An object lives for a number of its thread's allocations proportional
 * to its size, then is freed by a random other thread.  Every malloc and
 * free is timed: the slowest and a latency histogram are reported. */
#include "common.h"

#include <stdio.h>

static long g_objects, g_kmin, g_kmax, g_life;
static struct postoffice *g_po;

/* Latency histogram: four buckets per power of two (25% resolution). */
#define HBUCKETS 256
struct hist {
    uint64_t count[HBUCKETS];
    uint64_t n, max;
};

static unsigned bucket(uint64_t ns)
{
    if (ns < 4)
        return (unsigned)ns;
    unsigned e = 63u - (unsigned)__builtin_clzll(ns);
    return (e - 1) * 4 + (unsigned)((ns >> (e - 2)) & 3);
}

/* The largest latency that falls in bucket b. */
static uint64_t bucket_top(unsigned b)
{
    if (b < 4)
        return b;
    unsigned e = b / 4 + 1;
    return ((uint64_t)(4 + b % 4 + 1) << (e - 2)) - 1;
}

static void hist_add(struct hist *h, uint64_t ns)
{
    h->count[bucket(ns) < HBUCKETS ? bucket(ns) : HBUCKETS - 1]++;
    h->n++;
    if (ns > h->max)
        h->max = ns;
}

static pthread_mutex_t g_hist_mu = PTHREAD_MUTEX_INITIALIZER;
static struct hist g_malloc_hist, g_free_hist;

static void hist_merge(struct hist *into, const struct hist *h)
{
    for (unsigned b = 0; b < HBUCKETS; b++)
        into->count[b] += h->count[b];
    into->n += h->n;
    if (h->max > into->max)
        into->max = h->max;
}

static void hist_report(const char *what, const struct hist *h)
{
    static const struct { const char *name; double q; } qs[] = {
        {"p50", 0.5}, {"p99", 0.99}, {"p999", 0.999}};
    char name[64];
    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
        uint64_t want = (uint64_t)(qs[i].q * (double)h->n), seen = 0;
        unsigned b = 0;
        while (b < HBUCKETS - 1 && (seen += h->count[b]) <= want)
            b++;
        snprintf(name, sizeof name, "%s_%s", what, qs[i].name);
        metric(name, (double)bucket_top(b), "ns");
    }
    snprintf(name, sizeof name, "%s_max", what);
    metric(name, (double)h->max, "ns");
}

static __thread struct hist *tl_free_hist;

/* The post office frees received objects through this, so every free is
 * timed, including those done while a sender waits. */
static void timed_free(obj_t *o, struct tally *t)
{
    obj_verify(o, t);
    uint64_t t0 = now_ns();
    free(o->p);
    hist_add(tl_free_hist, now_ns() - t0);
}

struct live {
    uint64_t death;
    obj_t obj;
};

/* A binary min-heap of live objects ordered by the tick they die. */
struct heap {
    struct live *a;
    size_t n, cap;
};

static void heap_push(struct heap *h, struct live x)
{
    if (h->n == h->cap) {
        h->cap = h->cap ? 2 * h->cap : 1024;
        h->a = realloc(h->a, h->cap * sizeof *h->a);
        if (!h->a) {
            perror("realloc");
            exit(3);
        }
    }
    size_t i = h->n++;
    while (i > 0 && h->a[(i - 1) / 2].death > x.death) {
        h->a[i] = h->a[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->a[i] = x;
}

static struct live heap_pop(struct heap *h)
{
    struct live top = h->a[0], x = h->a[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && h->a[c + 1].death < h->a[c].death)
            c++;
        if (x.death <= h->a[c].death)
            break;
        h->a[i] = h->a[c];
        i = c;
    }
    h->a[i] = x;
    return top;
}

#define OUT_BATCH 32

static struct batch *pass_on(struct batch *out, obj_t o, int id, rng_t *r, struct tally *t)
{
    out->obj[out->n++] = o;
    if (out->n < out->cap)
        return out;
    po_send(g_po, id, po_other(g_po, id, r), out, t);
    return batch_new(OUT_BATCH, id);
}

static void *work(void *arg)
{
    int id = ARG_ID(arg);
    struct tally t = {0};
    struct hist *mh = calloc(1, sizeof *mh);
    tl_free_hist = calloc(1, sizeof *tl_free_hist);
    if (!mh || !tl_free_hist) {
        check_fail("calloc of the histograms failed");
        return NULL;
    }
    struct heap h = {0};
    rng_t r;
    rng_seed(&r, (uint64_t)id);
    struct batch *out = batch_new(OUT_BATCH, id);
    long count = g_objects / g_po->n;
    for (long tick = 0; tick < count; tick++) {
        long k = g_kmin;
        while (k < g_kmax && (rng_next(&r) & 1))
            k++;
        size_t size = rng_range(&r, 1ull << k, (2ull << k) - 1);
        uint32_t tag = (uint32_t)rng_next(&r);
        uint64_t t0 = now_ns();
        void *p = malloc(size);
        hist_add(mh, now_ns() - t0);
        if (!p) {
            check_fail("malloc(%zu) returned NULL", size);
            continue;
        }
        tag_fill(p, size, tag);
        tally_alloc(&t, tag);
        uint64_t life = 1 + size * (uint64_t)g_life / 4096;
        heap_push(&h, (struct live){(uint64_t)tick + life, {p, (uint32_t)size, tag}});
        while (h.n && h.a[0].death <= (uint64_t)tick)
            out = pass_on(out, heap_pop(&h).obj, id, &r, &t);
        if (tick % 8 == 0)
            po_drain(g_po, id, &t);
    }
    while (h.n)
        out = pass_on(out, heap_pop(&h).obj, id, &r, &t);
    if (out->n)
        po_send(g_po, id, po_other(g_po, id, &r), out, &t);
    else
        free(out);
    po_finish(g_po, id, &t);
    free(h.a);
    pthread_mutex_lock(&g_hist_mu);
    hist_merge(&g_malloc_hist, mh);
    hist_merge(&g_free_hist, tl_free_hist);
    pthread_mutex_unlock(&g_hist_mu);
    free(mh);
    free(tl_free_hist);
    tally_merge(&t);
    return NULL;
}

int main(int argc, char **argv)
{
    args_init(argc, argv, "threads=2 objects=400000 kmin=4 kmax=20 life=1000");
    int n = (int)arg_long("threads", 2);
    g_objects = arg_long("objects", 400000); /* all threads together */
    g_kmin = arg_long("kmin", 4);
    g_kmax = arg_long("kmax", 20);
    g_life = arg_long("life", 1000); /* ticks an object lives per 4 KiB */
    args_done();
    if (n < 1 || g_kmin < 4 || g_kmax < g_kmin || g_kmax > 30) {
        fprintf(stderr, "need threads >= 1, 4 <= kmin <= kmax <= 30\n");
        return 2;
    }
    g_po = po_new(n, 64);
    g_po->free_obj = timed_free;

    uint64_t t0 = now_ns();
    run_threads(n, work);
    double secs = (double)(now_ns() - t0) / 1e9;

    metric("mallocs_per_s", (double)(g_objects / n) * n / secs, "1/s");
    hist_report("malloc", &g_malloc_hist);
    hist_report("free", &g_free_hist);
    po_free(g_po);
    return bench_finish();
}
