/* SPDX-License-Identifier: MIT */
/* larson (Larson and Krishnan; the SuperMalloc paper section 9,
 * the scalloc paper section 7.2): a server simulation.  Each thread
 * owns an array of objects of random sizes, repeatedly frees a random one
 * and allocates a replacement, then hands the whole array to a new thread
 * it starts, and ends.  The main thread allocates the first arrays, so
 * early frees are remote, and every hand-off frees objects of a thread
 * that has gone. */
#include "common.h"

#include <stdio.h>

static long g_slots, g_rounds, g_gens, g_min, g_max;

struct chain {
    obj_t *obj;
    rng_t r;
    long gen;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done;
};

static void *work(void *arg)
{
    struct chain *c = arg;
    struct tally t = {0};
    for (long i = 0; i < g_rounds; i++) {
        obj_t *o = &c->obj[rng_below(&c->r, (uint64_t)g_slots)];
        obj_free(o, &t);
        obj_alloc(o, rng_range(&c->r, (uint64_t)g_min, (uint64_t)g_max),
                  (uint32_t)rng_next(&c->r), &t);
    }
    tally_merge(&t);
    if (++c->gen < g_gens) {
        /* The successor is detached: nobody waits for a thread that has
         * handed its work on, as in a server that retires its workers. */
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        pthread_t th;
        int err = pthread_create(&th, &a, work, c);
        pthread_attr_destroy(&a);
        if (!err)
            return NULL;
        check_fail("pthread_create failed");
    }
    pthread_mutex_lock(&c->mu);
    c->done = true;
    pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

int main(int argc, char **argv)
{
    args_init(argc, argv, "threads=2 slots=1000 rounds=10000 gens=10 min=7 max=500");
    int n = (int)arg_long("threads", 2);
    g_slots = arg_long("slots", 1000);   /* objects per thread */
    g_rounds = arg_long("rounds", 10000) / n; /* free+malloc per generation, all threads */
    g_gens = arg_long("gens", 10);       /* threads per chain, in turn */
    g_min = arg_long("min", 7);
    g_max = arg_long("max", 500);
    args_done();
    if (n < 1 || g_slots < 1 || g_gens < 1 || g_min < 1 || g_max < g_min) {
        fprintf(stderr, "need threads, slots, gens >= 1 and 1 <= min <= max\n");
        return 2;
    }
    struct chain *cs = calloc((size_t)n, sizeof *cs);
    struct tally t = {0};
    if (!cs)
        return 3;
    for (int i = 0; i < n; i++) {
        struct chain *c = &cs[i];
        rng_seed(&c->r, (uint64_t)i);
        pthread_mutex_init(&c->mu, NULL);
        pthread_cond_init(&c->cv, NULL);
        c->obj = malloc((size_t)g_slots * sizeof *c->obj);
        if (!c->obj)
            return 3;
        for (long j = 0; j < g_slots; j++)
            obj_alloc(&c->obj[j], rng_range(&c->r, (uint64_t)g_min, (uint64_t)g_max),
                      (uint32_t)rng_next(&c->r), &t);
    }

    uint64_t t0 = now_ns();
    for (int i = 0; i < n; i++)
        pthread_detach(spawn(work, &cs[i]));
    for (int i = 0; i < n; i++) {
        pthread_mutex_lock(&cs[i].mu);
        while (!cs[i].done)
            pthread_cond_wait(&cs[i].cv, &cs[i].mu);
        pthread_mutex_unlock(&cs[i].mu);
    }
    double secs = (double)(now_ns() - t0) / 1e9;

    for (int i = 0; i < n; i++) {
        for (long j = 0; j < g_slots; j++)
            obj_free(&cs[i].obj[j], &t);
        free(cs[i].obj);
    }
    tally_merge(&t);
    metric("mallocs_per_s", (double)n * g_rounds * g_gens / secs, "1/s");
    free(cs);
    return bench_finish();
}
