/* SPDX-License-Identifier: MIT */
/* Programs for memcheck_verdict.sh, which runs each under memcheck with
 * libprimalloc_valgrind.so and with memcheck's own malloc:
 *   loop      malloc, realloc and free of small blocks, each pointer
 *             tested: correct, no error
 *   usable    calloc, realloc, posix_memalign and aligned_alloc, every
 *             block used to its malloc_usable_size: correct, no error
 *   threads   threads that allocate, free each other's blocks and exit,
 *             then a quiet spell for the background thread: no error
 *   tail      a read of byte 40 of a 40-byte block: one invalid read
 *   grown     a 40-byte block grown by realloc, its new bytes tested
 *             unset: one use of an uninitialised value */
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RING 64

/* Fills p's n bytes with a pattern and checks it, so that every byte
 * reaches a conditional jump. */
static int fill_check(unsigned char *p, size_t n, unsigned char v)
{
    memset(p, v, n);
    for (size_t i = 0; i < n; i++)
        if (p[i] != v)
            return 1;
    return 0;
}

/* Blocks of fewer than 8 bytes among them leave part of the word a free
 * list's link takes outside the block. */
static int loop(void)
{
    for (unsigned i = 0; i < 1000; i++) {
        size_t n = i % 24 + 1;
        unsigned char *p = malloc(n);
        if (!p || fill_check(p, n, 1))
            return 1;
        unsigned char *q = realloc(p, 2 * n);
        if (!q || q[n - 1] != 1 || fill_check(q, 2 * n, 2))
            return 1;
        free(q);
    }
    return 0;
}

static int usable(void)
{
    unsigned char *ring[RING] = {0};
    for (unsigned i = 0; i < 3000; i++) {
        size_t n = i % 97, k = i % RING;
        free(ring[k]);
        unsigned char *p = i % 5 ? malloc(n) : calloc(1, n);
        if (!p || fill_check(p, malloc_usable_size(p), (unsigned char)i))
            return 1;
        unsigned char *q = realloc(p, (n * 7 + 1) % 300);
        if (!q || (n && q[0] != (unsigned char)i))
            return 1;
        ring[k] = q;
        void *a = 0;
        if (posix_memalign(&a, 64, n + 1) || !a || ((size_t)a & 63) ||
            fill_check(a, malloc_usable_size(a), 1))
            return 1;
        free(a);
        unsigned char *b = aligned_alloc(32, 32 * (i % 5 + 1));
        if (!b || fill_check(b, malloc_usable_size(b), 2))
            return 1;
        free(b);
    }
    for (unsigned k = 0; k < RING; k++)
        free(ring[k]);
    return 0;
}

#define THREADS 4

/* Each thread frees the blocks its neighbour left in its slot, and
 * leaves its own for the next. */
static unsigned char *left[THREADS][RING];
static pthread_mutex_t left_lock = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg)
{
    size_t t = (size_t)arg;
    for (unsigned r = 0; r < 20; r++) {
        unsigned char *mine[RING];
        for (unsigned k = 0; k < RING; k++) {
            size_t n = (k * 13 + r) % 200;
            mine[k] = malloc(n);
            if (!mine[k] || fill_check(mine[k], n, (unsigned char)k))
                abort();
        }
        pthread_mutex_lock(&left_lock);
        for (unsigned k = 0; k < RING; k++) {
            free(left[t][k]);
            left[t][k] = 0;
            free(left[(t + 1) % THREADS][k]);
            left[(t + 1) % THREADS][k] = mine[k];
        }
        pthread_mutex_unlock(&left_lock);
    }
    return 0;
}

static int threads(void)
{
    pthread_t t[THREADS];
    for (size_t i = 0; i < THREADS; i++)
        if (pthread_create(&t[i], 0, worker, (void *)i))
            return 1;
    for (size_t i = 0; i < THREADS; i++)
        pthread_join(t[i], 0);
    for (size_t i = 0; i < THREADS; i++)
        for (unsigned k = 0; k < RING; k++)
            free(left[i][k]);
    sleep(1);
    return 0;
}

static int tail(void)
{
    char *p = malloc(40);
    if (!p)
        return 1;
    memset(p, 't', 40);
    char *volatile past = p + 40; /* hides the planted read from the compiler */
    printf("%d\n", *past == 't');
    free(p);
    return 0;
}

static int grown(void)
{
    char *p = malloc(40);
    if (!p)
        return 1;
    memset(p, 'g', 40);
    char *q = realloc(p, 100);
    if (!q)
        return 1;
    printf("%d\n", q[39] == 'g' && q[44] == 'g');
    free(q);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "loop"))
        return loop();
    if (!strcmp(mode, "usable"))
        return usable();
    if (!strcmp(mode, "threads"))
        return threads();
    if (!strcmp(mode, "tail"))
        return tail();
    if (!strcmp(mode, "grown"))
        return grown();
    fprintf(stderr, "usage: %s loop|usable|threads|tail|grown\n", argv[0]);
    return 2;
}
