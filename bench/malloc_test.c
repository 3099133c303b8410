/* SPDX-License-Identifier: MIT */
/* malloc-test (Lever and Boreham; see the SuperMalloc paper section 9):
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

/* Each side walks the slots until it has acted on g_objects of them: the
 * producer fills empty slots, the consumer verifies and frees full ones.
 * A full pass that found nothing to do yields, so that on an
 * oversubscribed machine the spinning thread lets its partner run. */
static void *original_side(struct pair *pr, bool producer)
{
    struct tally t = {0};
    rng_t r;
    rng_seed(&r, (uint64_t)pr->id);
    long done = 0;
    size_t i = 0, idle = 0;
    while (done < g_objects) {
        _Atomic(void *) *slot = &pr->slot[i];
        i = (i + 1) % SLOTS;
        void *p = atomic_load_explicit(slot, memory_order_relaxed);
        if (producer == (p != NULL)) {
            if (++idle == SLOTS) {
                sched_yield();
                idle = 0;
            }
            continue;
        }
        idle = 0;
        uint32_t tag;
        if (producer) {
            if (!(p = malloc((size_t)g_size))) {
                check_fail("malloc returned NULL");
                continue;
            }
            tag = (uint32_t)rng_next(&r);
            tag_fill(p, (size_t)g_size, tag);
            tally_alloc(&t, tag);
            atomic_store_explicit(slot, p, memory_order_release);
        } else {
            p = atomic_exchange_explicit(slot, NULL, memory_order_acquire);
            if (!tag_read(p, (size_t)g_size, &tag))
                check_fail("object %p damaged in transit", p);
            tally_free(&t, tag);
            free(p);
        }
        done++;
    }
    tally_merge(&t);
    return NULL;
}

static void *original_producer(void *arg)
{
    return original_side(arg, true);
}

static void *original_consumer(void *arg)
{
    return original_side(arg, false);
}

static void *batched_producer(void *arg)
{
    int id = ARG_ID(arg);
    struct tally t = {0};
    rng_t r;
    rng_seed(&r, (uint64_t)id);
    for (long made = 0; made < g_objects; made += g_batch) {
        mailbox_put(&g_queue, batch_fill((size_t)g_batch, id, (size_t)g_size, (size_t)g_size,
                                         &r, &t));
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
