/* malloc-test (Lever and Boreham; see supermalloc-ismm2015.txt section 9):
 * K producer threads allocate, K consumer threads free.
 *   mode=original  each producer/consumer pair shares an array of 4096
 *                  slots; the producer fills empty slots, the consumer
 *                  frees full ones.
 *   mode=batched   SuperMalloc's version: producers hand batches of 4096
 *                  objects to consumers through a bounded queue with a
 *                  condition variable, which runs evenly and fast. */
#include "common.h"

#include <sched.h>
#include <stdio.h>

#define SLOTS 4096

static long g_objects, g_size, g_batch;
static struct mailbox g_queue;

struct pair {
    _Atomic(void *) slot[SLOTS];
    int id;
};

/* A full pass over the slots that found nothing to do yields, so that on
 * an oversubscribed machine the spinning thread lets its partner run. */
static void *original_producer(void *arg)
{
    struct pair *pr = arg;
    struct tally t = {0};
    rng_t r;
    rng_seed(&r, (uint64_t)pr->id);
    long made = 0;
    size_t i = 0, idle = 0;
    while (made < g_objects) {
        if (!atomic_load_explicit(&pr->slot[i], memory_order_relaxed)) {
            void *p = malloc((size_t)g_size);
            if (!p) {
                check_fail("malloc returned NULL");
                break;
            }
            uint32_t tag = (uint32_t)rng_next(&r);
            tag_fill(p, (size_t)g_size, tag);
            tally_alloc(&t, tag);
            atomic_store_explicit(&pr->slot[i], p, memory_order_release);
            made++;
            idle = 0;
        } else if (++idle == SLOTS) {
            sched_yield();
            idle = 0;
        }
        i = (i + 1) % SLOTS;
    }
    tally_merge(&t);
    return NULL;
}

static void *original_consumer(void *arg)
{
    struct pair *pr = arg;
    struct tally t = {0};
    long freed = 0;
    size_t i = 0, idle = 0;
    while (freed < g_objects) {
        void *p = atomic_load_explicit(&pr->slot[i], memory_order_relaxed);
        if (p) {
            p = atomic_exchange_explicit(&pr->slot[i], NULL, memory_order_acquire);
            uint32_t tag;
            if (!tag_read(p, (size_t)g_size, &tag))
                check_fail("object %p damaged in transit", p);
            tally_free(&t, tag);
            free(p);
            freed++;
            idle = 0;
        } else if (++idle == SLOTS) {
            sched_yield();
            idle = 0;
        }
        i = (i + 1) % SLOTS;
    }
    tally_merge(&t);
    return NULL;
}

static void *batched_producer(void *arg)
{
    int id = ARG_ID(arg);
    struct tally t = {0};
    rng_t r;
    rng_seed(&r, (uint64_t)id);
    for (long made = 0; made < g_objects; made += g_batch) {
        struct batch *b = batch_new((size_t)g_batch, id);
        for (; b->n < b->cap; b->n++)
            obj_alloc(&b->obj[b->n], (size_t)g_size, (uint32_t)rng_next(&r), &t);
        mailbox_put(&g_queue, b);
    }
    tally_merge(&t);
    return NULL;
}

static void *batched_consumer(void *arg)
{
    (void)arg;
    struct tally t = {0};
    struct batch *b;
    while ((b = mailbox_take(&g_queue, true)))
        batch_release(b, &t);
    tally_merge(&t);
    return NULL;
}

int main(int argc, char **argv)
{
    args_init(argc, argv, "mode=batched|original threads=2 objects=1000000 size=64 queue=2*threads");
    const char *mode = arg_str("mode", "batched");
    int k = (int)arg_long("threads", 2);
    g_objects = arg_long("objects", 1000000) / k; /* all producers share the total */
    g_size = arg_long("size", 64);
    g_batch = 4096;
    long queue = arg_long("queue", 2L * k);
    args_done();
    bool batched = strcmp(mode, "batched") == 0;
    if ((!batched && strcmp(mode, "original") != 0) || k < 1 || g_size < 8) {
        fprintf(stderr, "need mode=batched|original, threads >= 1, size >= 8\n");
        return 2;
    }
    if (batched)
        g_objects = (g_objects + g_batch - 1) / g_batch * g_batch;

    pthread_t *th = malloc(2 * (size_t)k * sizeof *th);
    struct pair *pairs = batched ? NULL : calloc((size_t)k, sizeof *pairs);
    if (!th || (!batched && !pairs)) {
        perror("malloc");
        return 3;
    }
    mailbox_init(&g_queue, (size_t)queue);

    uint64_t t0 = now_ns();
    for (int i = 0; i < k; i++) {
        if (batched) {
            th[i] = spawn(batched_producer, ID_ARG(i));
            th[k + i] = spawn(batched_consumer, NULL);
        } else {
            pairs[i].id = i;
            th[i] = spawn(original_producer, &pairs[i]);
            th[k + i] = spawn(original_consumer, &pairs[i]);
        }
    }
    for (int i = 0; i < k; i++)
        pthread_join(th[i], NULL);
    mailbox_close(&g_queue);
    for (int i = 0; i < k; i++)
        pthread_join(th[k + i], NULL);
    double secs = (double)(now_ns() - t0) / 1e9;

    metric("mallocs_per_s", (double)g_objects * k / secs, "1/s");
    free(th);
    free(pairs);
    return bench_finish();
}
