/* SPDX-License-Identifier: MIT */
/* A probe of the machine, not of an allocator: how much does it cost two
 * threads to work on memory that is interleaved between them page by
 * page, though they share no cache line?  Each thread walks a list of
 * `objects` 64-byte objects, taking them all and writing two words of
 * each, then giving them all back, for `rounds` rounds (threadtest's
 * shape, without malloc).  The threads' objects lie in blocks of `block`
 * bytes taken in turn from one mapping, or with block=0 in a mapping of
 * their own.  docs/tuning.md (PM_CARVE_LANES) gives what it showed, and
 * docs/DESIGN.md ("Inside a bin") what primalloc does about it.  Uses mmap, so no allocator is involved. */
#include "common.h"

#include <stdio.h>
#include <sys/mman.h>

#define OBJ 64

struct obj {
    struct obj *next;
    uint64_t round, index;
    char pad[OBJ - 24];
};

static long g_threads, g_objects, g_rounds, g_block;
static char *g_shared;

static char *map(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        exit(3);
    }
    return p;
}

/* Object i of thread id: block k of the thread is block k*threads+id of
 * the shared mapping. */
static struct obj *place(char *own, int id, long i)
{
    if (!g_block)
        return (struct obj *)(own + i * OBJ);
    long per = g_block / OBJ, k = i / per;
    return (struct obj *)(g_shared + (k * g_threads + id) * g_block + (i % per) * OBJ);
}

static void *work(void *arg)
{
    int id = ARG_ID(arg);
    char *own = g_block ? NULL : map((size_t)g_objects * OBJ);
    struct obj **taken = (struct obj **)map((size_t)g_objects * sizeof *taken);
    struct obj *head = NULL;
    for (long i = g_objects; i-- > 0;) {
        struct obj *o = place(own, id, i);
        o->next = head;
        head = o;
    }
    uint64_t sum = 0;
    for (long r = 0; r < g_rounds; r++) {
        for (long i = 0; i < g_objects; i++) {
            struct obj *o = head;
            head = o->next;
            o->round = (uint64_t)r;
            o->index = (uint64_t)i;
            taken[i] = o;
        }
        for (long i = 0; i < g_objects; i++) {
            struct obj *o = taken[i];
            if (o->round != (uint64_t)r || o->index != (uint64_t)i)
                check_fail("object %p of thread %d was overwritten", (void *)o, id);
            sum += o->index;
            o->next = head;
            head = o;
        }
    }
    if (sum != (uint64_t)g_rounds * (uint64_t)g_objects * (uint64_t)(g_objects - 1) / 2)
        check_fail("thread %d summed %llu", id, (unsigned long long)sum);
    checked_add((uint64_t)g_rounds * (uint64_t)g_objects);
    return NULL;
}

int main(int argc, char **argv)
{
    args_init(argc, argv, "threads=2 objects=50000 rounds=240 block=4096");
    g_threads = arg_long("threads", 2);
    g_objects = arg_long("objects", 50000); /* per thread */
    g_rounds = arg_long("rounds", 240);
    g_block = arg_long("block", 4096);      /* 0: a mapping per thread */
    args_done();
    if (g_threads < 1 || g_objects < 1 || g_block < 0 || g_block % OBJ) {
        fprintf(stderr, "need threads, objects >= 1 and block a multiple of %d\n", OBJ);
        return 2;
    }
    if (g_block) {
        long per = g_block / OBJ, blocks = (g_objects + per - 1) / per;
        g_shared = map((size_t)(blocks * g_threads * g_block));
    }
    uint64_t t0 = now_ns();
    run_threads((int)g_threads, work);
    metric("seconds", (double)(now_ns() - t0) / 1e9, "s");
    return bench_finish();
}
