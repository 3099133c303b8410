/* SPDX-License-Identifier: MIT */
/* Shared helpers for the benchmark workloads: name=value arguments,
 * timing, a fast RNG, tagged objects that are verified before free, the
 * self-check that every workload ends with, and the queues that hand
 * batches of objects from one thread to another. */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- arguments: every workload takes name=value words ---- */

/* usage lists the names and defaults; printed on a bad argument. */
void args_init(int argc, char **argv, const char *usage);
long arg_long(const char *name, long dflt);
const char *arg_str(const char *name, const char *dflt);
/* Exits with status 2 if an argument was not asked for (a typo). */
void args_done(void);

/* ---- time and output ---- */

uint64_t now_ns(void);
/* One line the harness reads: "metric NAME VALUE UNIT". */
void metric(const char *name, double value, const char *unit);

/* ---- random numbers: xorshift64*, seeded through splitmix64 ---- */

typedef struct { uint64_t s; } rng_t;

static inline void rng_seed(rng_t *r, uint64_t seed)
{
    uint64_t z = seed + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    r->s = (z ^ (z >> 31)) | 1;
}

static inline uint64_t rng_next(rng_t *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 0x2545F4914F6CDD1Dull;
}

/* Uniform in [0, n). */
static inline uint64_t rng_below(rng_t *r, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)rng_next(r) * n) >> 64);
}

/* Uniform in [lo, hi]. */
static inline uint64_t rng_range(rng_t *r, uint64_t lo, uint64_t hi)
{
    return lo + rng_below(r, hi - lo + 1);
}

/* ---- tagged objects ----
 * An object carries its 32-bit tag in its first bytes and a byte derived
 * from it in its last byte, so an allocator that hands out overlapping or
 * recycled-while-live memory is caught when the object is verified. */

/* Every thread counts what it allocated and freed; the sums of the tags
 * must match at the end, so a lost or double-freed object is seen too. */
struct tally {
    uint64_t allocs, frees, sum_alloc, sum_free;
};

typedef struct {
    void *p;
    uint32_t size, tag;
} obj_t;

static inline uint64_t tag_word(uint32_t tag)
{
    return (uint64_t)tag << 32 | (uint32_t)~tag;
}

static inline void tag_fill(void *p, size_t size, uint32_t tag)
{
    uint64_t w = tag_word(tag);
    memcpy(p, &w, size < 8 ? size : 8);
    if (size > 8)
        ((unsigned char *)p)[size - 1] = (unsigned char)(tag ^ 0xA5);
}

static inline bool tag_ok(const void *p, size_t size, uint32_t tag)
{
    uint64_t w = tag_word(tag);
    if (memcmp(p, &w, size < 8 ? size : 8) != 0)
        return false;
    return size <= 8 || ((const unsigned char *)p)[size - 1] == (unsigned char)(tag ^ 0xA5);
}

/* Reads the tag of an object of at least 8 bytes whose tag is not known
 * (it travelled alone); false if the object is damaged. */
static inline bool tag_read(const void *p, size_t size, uint32_t *tag)
{
    uint64_t w;
    memcpy(&w, p, 8);
    *tag = (uint32_t)(w >> 32);
    return tag_ok(p, size, *tag);
}

void check_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static inline void tally_alloc(struct tally *t, uint32_t tag)
{
    t->allocs++;
    t->sum_alloc += tag;
}

static inline void tally_free(struct tally *t, uint32_t tag)
{
    t->frees++;
    t->sum_free += tag;
}

/* Allocates o's object of size bytes and tags it; with `every_byte`, it
 * first writes every byte, as programs that fill what they allocate do. */
static inline void obj_alloc_written(obj_t *o, size_t size, uint32_t tag, struct tally *t,
                                     bool every_byte)
{
    o->p = malloc(size);
    o->size = (uint32_t)size;
    o->tag = tag;
    if (!o->p) {
        check_fail("malloc(%zu) returned NULL", size);
        return;
    }
    if (every_byte)
        memset(o->p, (int)(tag >> 24), size);
    tag_fill(o->p, size, tag);
    tally_alloc(t, tag);
}

static inline void obj_alloc(obj_t *o, size_t size, uint32_t tag, struct tally *t)
{
    obj_alloc_written(o, size, tag, t, false);
}

/* Checks a live object about to be freed and counts it as freed. */
static inline void obj_verify(const obj_t *o, struct tally *t)
{
    if (!tag_ok(o->p, o->size, o->tag))
        check_fail("object %p of %u bytes was overwritten while live", o->p, o->size);
    tally_free(t, o->tag);
}

static inline void obj_free(obj_t *o, struct tally *t)
{
    if (!o->p)
        return;
    obj_verify(o, t);
    free(o->p);
    o->p = NULL;
}

/* Adds a thread's tally to the process total (call once per thread). */
void tally_merge(const struct tally *t);

/* A thread's n empty object slots, or NULL once the failure is reported. */
static inline obj_t *slots_new(long n)
{
    obj_t *o = calloc((size_t)n, sizeof *o);
    if (!o)
        check_fail("calloc failed");
    return o;
}

/* Frees what the n slots hold and the slots, and adds the thread's tally
 * to the process total. */
static inline void slots_done(obj_t *o, long n, struct tally *t)
{
    for (long i = 0; i < n; i++)
        obj_free(&o[i], t);
    free(o);
    tally_merge(t);
}
/* Counts objects checked outside the tally (e.g. written and read back). */
void checked_add(uint64_t n);
/* Prints "check ok ..." or "check FAILED ..." and returns the exit status. */
int bench_finish(void);

/* ---- threads ---- */

pthread_t spawn(void *(*fn)(void *), void *arg);
/* Runs fn on n threads and joins them; thread i gets ID_ARG(i). */
void run_threads(int n, void *(*fn)(void *));
#define ID_ARG(i) ((void *)(intptr_t)(i))
#define ARG_ID(arg) ((int)(intptr_t)(arg))

/* ---- batches of objects handed between threads ---- */

struct batch {
    struct batch *next;
    int owner;
    size_t n, cap;
    obj_t obj[];
};

struct batch *batch_new(size_t cap, int owner);
/* A new batch of n objects, their sizes uniform in [min, max]. */
struct batch *batch_fill(size_t n, int owner, size_t min, size_t max, rng_t *r,
                         struct tally *t);
/* Verifies and frees every object, then the batch itself. */
void batch_release(struct batch *b, struct tally *t);

/* A FIFO of batches; cap 0 means unbounded, else put waits while full. */
struct mailbox {
    pthread_mutex_t mu;
    pthread_cond_t nonempty, nonfull;
    struct batch *head, *tail;
    size_t len, cap;
    bool closed;
};

void mailbox_init(struct mailbox *mb, size_t cap);
void mailbox_put(struct mailbox *mb, struct batch *b);
/* With wait, blocks until a batch arrives; NULL once closed and empty
 * (or at once, without wait, when empty). */
struct batch *mailbox_take(struct mailbox *mb, bool wait);
void mailbox_close(struct mailbox *mb);

/* All-to-all hand-off: every thread has a mailbox, and a sender may have
 * at most `limit` batches that nobody has freed yet, so memory stays
 * bounded however the scheduler runs the threads.  A waiting sender
 * frees what was sent to it, which is what lets the others go on. */
struct postoffice {
    int n;
    size_t limit;
    struct mailbox *box;
    _Atomic size_t *inflight; /* per sender */
    atomic_int running;       /* threads that may still send */
    /* How po_drain frees one received object (obj_free unless a workload
     * times it). */
    void (*free_obj)(obj_t *o, struct tally *t);
};

struct postoffice *po_new(int n, size_t limit);
void po_send(struct postoffice *po, int self, int to, struct batch *b, struct tally *t);
/* A random thread other than self (self when alone). */
int po_other(const struct postoffice *po, int self, rng_t *r);
/* Frees everything sent to self so far; returns how many batches. */
size_t po_drain(struct postoffice *po, int self, struct tally *t);
/* Called when self will send no more: keeps freeing what others send
 * until every thread has finished and nothing is in flight. */
void po_finish(struct postoffice *po, int self, struct tally *t);
void po_free(struct postoffice *po);

#endif
