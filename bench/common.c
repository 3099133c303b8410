/* SPDX-License-Identifier: MIT */
#include "common.h"

#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

static int g_argc;
static char **g_argv;
static const char *g_usage;
static bool *g_used;

void args_init(int argc, char **argv, const char *usage)
{
    g_argc = argc;
    g_argv = argv;
    g_usage = usage;
    g_used = calloc((size_t)argc, sizeof *g_used);
    if (!g_used) {
        perror("calloc");
        exit(2);
    }
    /* The harness logs this line, so every run says what it was asked. */
    printf("#");
    for (int i = 0; i < argc; i++)
        printf(" %s", argv[i]);
    printf("\n");
}

static void usage_exit(const char *why)
{
    fprintf(stderr, "%s: %s\nusage: %s %s\n", g_argv[0], why, g_argv[0], g_usage);
    exit(2);
}

const char *arg_str(const char *name, const char *dflt)
{
    size_t len = strlen(name);
    for (int i = 1; i < g_argc; i++) {
        if (strncmp(g_argv[i], name, len) == 0 && g_argv[i][len] == '=') {
            g_used[i] = true;
            return g_argv[i] + len + 1;
        }
    }
    return dflt;
}

long arg_long(const char *name, long dflt)
{
    const char *s = arg_str(name, NULL);
    if (!s)
        return dflt;
    char *end;
    long v = strtol(s, &end, 0);
    /* Accept k/m/g suffixes so sizes read naturally (size=4k). */
    switch (*end) {
    case 'k': v <<= 10; end++; break;
    case 'm': v <<= 20; end++; break;
    case 'g': v <<= 30; end++; break;
    }
    if (end == s || *end)
        usage_exit("bad number");
    return v;
}

void args_done(void)
{
    for (int i = 1; i < g_argc; i++)
        if (!g_used[i])
            usage_exit(g_argv[i]);
    free(g_used);
}

uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void metric(const char *name, double value, const char *unit)
{
    printf("metric %s %.6g %s\n", name, value, unit);
}

/* ---- self-check ---- */

static _Atomic uint64_t g_allocs, g_frees, g_sum_alloc, g_sum_free;
static _Atomic uint64_t g_failures, g_checked;

void check_fail(const char *fmt, ...)
{
    /* Report the first few; the count says how many there were. */
    if (atomic_fetch_add(&g_failures, 1) < 10) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "check: ");
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, "\n");
        va_end(ap);
    }
}

void tally_merge(const struct tally *t)
{
    atomic_fetch_add(&g_allocs, t->allocs);
    atomic_fetch_add(&g_frees, t->frees);
    atomic_fetch_add(&g_sum_alloc, t->sum_alloc);
    atomic_fetch_add(&g_sum_free, t->sum_free);
}

void checked_add(uint64_t n)
{
    atomic_fetch_add(&g_checked, n);
}

int bench_finish(void)
{
    uint64_t allocs = g_allocs, frees = g_frees;
    if (allocs != frees)
        check_fail("%llu objects allocated but %llu freed",
                   (unsigned long long)allocs, (unsigned long long)frees);
    else if (g_sum_alloc != g_sum_free)
        check_fail("the tags of the freed objects are not those allocated");
    uint64_t failures = g_failures;
    if (failures) {
        printf("check FAILED %llu problems\n", (unsigned long long)failures);
        return 1;
    }
    printf("check ok %llu objects verified\n", (unsigned long long)(frees + g_checked));
    return 0;
}

/* ---- threads ---- */

pthread_t spawn(void *(*fn)(void *), void *arg)
{
    pthread_t t;
    int err = pthread_create(&t, NULL, fn, arg);
    if (err) {
        fprintf(stderr, "pthread_create: %s\n", strerror(err));
        exit(3);
    }
    return t;
}

void run_threads(int n, void *(*fn)(void *))
{
    pthread_t *t = malloc((size_t)n * sizeof *t);
    if (!t) {
        perror("malloc");
        exit(3);
    }
    for (int i = 0; i < n; i++)
        t[i] = spawn(fn, ID_ARG(i));
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    free(t);
}

/* ---- batches and mailboxes ---- */

struct batch *batch_new(size_t cap, int owner)
{
    struct batch *b = malloc(sizeof *b + cap * sizeof b->obj[0]);
    if (!b) {
        perror("malloc");
        exit(3);
    }
    b->next = NULL;
    b->owner = owner;
    b->n = 0;
    b->cap = cap;
    return b;
}

struct batch *batch_fill(size_t n, int owner, size_t min, size_t max, rng_t *r,
                         struct tally *t)
{
    struct batch *b = batch_new(n, owner);
    for (; b->n < n; b->n++)
        obj_alloc(&b->obj[b->n], rng_range(r, min, max), (uint32_t)rng_next(r), t);
    return b;
}

static void batch_free_objects(struct batch *b, struct tally *t,
                               void (*free_obj)(obj_t *, struct tally *))
{
    for (size_t i = 0; i < b->n; i++)
        free_obj(&b->obj[i], t);
}

void batch_release(struct batch *b, struct tally *t)
{
    batch_free_objects(b, t, obj_free);
    free(b);
}

void mailbox_init(struct mailbox *mb, size_t cap)
{
    pthread_mutex_init(&mb->mu, NULL);
    pthread_cond_init(&mb->nonempty, NULL);
    pthread_cond_init(&mb->nonfull, NULL);
    mb->head = mb->tail = NULL;
    mb->len = 0;
    mb->cap = cap;
    mb->closed = false;
}

void mailbox_put(struct mailbox *mb, struct batch *b)
{
    b->next = NULL;
    pthread_mutex_lock(&mb->mu);
    while (mb->cap && mb->len >= mb->cap)
        pthread_cond_wait(&mb->nonfull, &mb->mu);
    if (mb->tail)
        mb->tail->next = b;
    else
        mb->head = b;
    mb->tail = b;
    mb->len++;
    pthread_cond_signal(&mb->nonempty);
    pthread_mutex_unlock(&mb->mu);
}

struct batch *mailbox_take(struct mailbox *mb, bool wait)
{
    pthread_mutex_lock(&mb->mu);
    while (wait && !mb->head && !mb->closed)
        pthread_cond_wait(&mb->nonempty, &mb->mu);
    struct batch *b = mb->head;
    if (b) {
        mb->head = b->next;
        if (!mb->head)
            mb->tail = NULL;
        mb->len--;
        pthread_cond_signal(&mb->nonfull);
    }
    pthread_mutex_unlock(&mb->mu);
    return b;
}

void mailbox_close(struct mailbox *mb)
{
    pthread_mutex_lock(&mb->mu);
    mb->closed = true;
    pthread_cond_broadcast(&mb->nonempty);
    pthread_mutex_unlock(&mb->mu);
}

/* ---- post office ---- */

struct postoffice *po_new(int n, size_t limit)
{
    struct postoffice *po = malloc(sizeof *po);
    if (!po || !(po->box = malloc((size_t)n * sizeof *po->box)) ||
        !(po->inflight = calloc((size_t)n, sizeof *po->inflight))) {
        perror("malloc");
        exit(3);
    }
    po->n = n;
    po->limit = limit;
    po->running = n;
    po->free_obj = obj_free;
    for (int i = 0; i < n; i++)
        mailbox_init(&po->box[i], 0);
    return po;
}

void po_free(struct postoffice *po)
{
    free(po->box);
    free((void *)po->inflight);
    free(po);
}

int po_other(const struct postoffice *po, int self, rng_t *r)
{
    if (po->n == 1)
        return self;
    int to = (int)rng_below(r, (uint64_t)po->n - 1);
    return to >= self ? to + 1 : to;
}

static struct batch *po_take(struct postoffice *po, int self)
{
    return mailbox_take(&po->box[self], false);
}

/* Gives a freed batch's credit back to its sender. */
static void po_done(struct postoffice *po, struct batch *b)
{
    atomic_fetch_sub(&po->inflight[b->owner], 1);
    free(b);
}

size_t po_drain(struct postoffice *po, int self, struct tally *t)
{
    size_t n = 0;
    struct batch *b;
    while ((b = po_take(po, self))) {
        batch_free_objects(b, t, po->free_obj);
        po_done(po, b);
        n++;
    }
    return n;
}

void po_send(struct postoffice *po, int self, int to, struct batch *b, struct tally *t)
{
    while (atomic_load(&po->inflight[self]) >= po->limit)
        if (!po_drain(po, self, t))
            sched_yield();
    b->owner = self;
    atomic_fetch_add(&po->inflight[self], 1);
    mailbox_put(&po->box[to], b);
}

static bool po_quiet(struct postoffice *po)
{
    if (atomic_load(&po->running))
        return false;
    for (int i = 0; i < po->n; i++)
        if (atomic_load(&po->inflight[i]))
            return false;
    return true;
}

void po_finish(struct postoffice *po, int self, struct tally *t)
{
    atomic_fetch_sub(&po->running, 1);
    while (!po_quiet(po))
        if (!po_drain(po, self, t))
            sched_yield();
}
