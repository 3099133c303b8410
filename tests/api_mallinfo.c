/* SPDX-License-Identifier: MIT */
/* mallinfo2 and mallinfo, in the spirit of glibc's tst-mallinfo2 and
 * tst-malloc-tcache-leak: uordblks follows the bins' objects in use,
 * hblks and hblkhd the huge ones, and threads that come and go leave
 * nothing counted in use.  Usage: api_mallinfo [threads] */
#include "malloc_ext.h"
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include "check.h"

/* glibc's header marks mallinfo deprecated; it is under test here. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

/* Small, medium, large and huge requests; each small and medium one is
 * made COPIES times, so that the thread refills its lists from the shared
 * levels while the test runs. */
static const size_t sizes[] = {1, 24, 100, 200, 300, 1000, 5000, 15000};
static const size_t large_sizes[] = {16 * KiB + 1, 100 * KiB, 1000 * KiB};
static const size_t huge_sizes[] = {1032 * KiB, 3 * MiB + 5, 9 * MiB};
#define COPIES 500
#define NSIZES (sizeof sizes / sizeof *sizes)
#define NLARGE (sizeof large_sizes / sizeof *large_sizes)
#define NHUGE (sizeof huge_sizes / sizeof *huge_sizes)
#define PAGE ((size_t)4096)

static void *objs[NSIZES * COPIES + NLARGE];
static void *huge[NHUGE];

/* Fields that hold whenever no other thread runs. */
static void check_partition(const struct mallinfo2 *m)
{
    CHECK_EQ(m->uordblks + m->fordblks, m->arena);
    CHECK(m->fsmblks <= m->fordblks);
    CHECK(m->usmblks >= m->uordblks + m->hblkhd);
}

/* uordblks grows by the objects' usable sizes, a large object's counted
 * from its page start (less than a page before it); huge objects count in
 * hblks and hblkhd alone; all falls back when they are freed. */
static void known_amounts(void)
{
    struct mallinfo2 before = mallinfo2();
    check_partition(&before);
    size_t requested = 0, usable = 0, huge_usable = 0, n = 0;
    for (size_t i = 0; i < NSIZES; i++)
        for (int c = 0; c < COPIES; c++, n++) {
            objs[n] = malloc(sizes[i]);
            CHECK(objs[n] != NULL);
            requested += sizes[i];
            usable += malloc_usable_size(objs[n]);
        }
    for (size_t i = 0; i < NLARGE; i++, n++) {
        objs[n] = malloc(large_sizes[i]);
        CHECK(objs[n] != NULL);
        requested += large_sizes[i];
        usable += malloc_usable_size(objs[n]);
    }
    for (size_t i = 0; i < NHUGE; i++) {
        huge[i] = malloc(huge_sizes[i]);
        CHECK(huge[i] != NULL);
        huge_usable += malloc_usable_size(huge[i]);
    }
    struct mallinfo2 during = mallinfo2();
    check_partition(&during);
    size_t grew = during.uordblks - before.uordblks;
    CHECK_MSG(during.uordblks >= before.uordblks + usable && usable >= requested &&
                  grew <= usable + NLARGE * PAGE,
              "uordblks %zu -> %zu for %zu bytes requested, %zu usable", before.uordblks,
              during.uordblks, requested, usable);
    CHECK_EQ(during.hblks, before.hblks + NHUGE);
    CHECK_EQ(during.hblkhd, before.hblkhd + huge_usable);

    /* The int version keeps each field's low 32 bits, as glibc's does. */
    struct mallinfo m = mallinfo();
    CHECK_EQ(m.arena, (int)during.arena);
    CHECK_EQ(m.ordblks, (int)during.ordblks);
    CHECK_EQ(m.smblks, (int)during.smblks);
    CHECK_EQ(m.hblks, (int)during.hblks);
    CHECK_EQ(m.hblkhd, (int)during.hblkhd);
    CHECK_EQ(m.usmblks, (int)during.usmblks);
    CHECK_EQ(m.fsmblks, (int)during.fsmblks);
    CHECK_EQ(m.uordblks, (int)during.uordblks);
    CHECK_EQ(m.fordblks, (int)during.fordblks);
    CHECK_EQ(m.keepcost, (int)during.keepcost);

    for (size_t i = 0; i < n; i++)
        free(objs[i]);
    for (size_t i = 0; i < NHUGE; i++)
        free(huge[i]);
    struct mallinfo2 freed = mallinfo2();
    check_partition(&freed);
    CHECK_EQ(freed.uordblks, before.uordblks);
    CHECK_EQ(freed.hblks, before.hblks);
    CHECK_EQ(freed.hblkhd, before.hblkhd);
    CHECK(freed.smblks > before.smblks && freed.fsmblks > before.fsmblks);

    /* Trimming empties every cache and gives back every empty folio, and
     * every chunk left empty. */
    malloc_trim(0);
    struct mallinfo2 trimmed = mallinfo2();
    check_partition(&trimmed);
    CHECK_EQ(trimmed.uordblks, before.uordblks);
    CHECK_EQ(trimmed.smblks, 0);
    CHECK_EQ(trimmed.fsmblks, 0);
    CHECK_EQ(trimmed.keepcost, 0);
    CHECK(trimmed.arena < freed.arena);
}

/* glibc's tcache-leak shape: threads created and joined one at a time,
 * each allocating and freeing objects of several classes and handing one
 * to the main thread, which frees it.  What an exiting thread cached goes
 * to the shared levels, where it counts as free: uordblks ends where it
 * started.  A first thread runs before the count is taken: glibc keeps
 * that thread's stack for the next one, and with it the stack's thread
 * vector, allocated with calloc. */
static void *worker(void *arg)
{
    size_t i = (size_t)(uintptr_t)arg;
    void *keep[NSIZES];
    for (size_t k = 0; k < NSIZES; k++) {
        keep[k] = malloc(sizes[k]);
        CHECK(keep[k] != NULL);
    }
    for (size_t k = 0; k < NSIZES; k++)
        free(keep[k]);
    void *large = malloc(large_sizes[i % NLARGE]);
    CHECK(large != NULL);
    free(large);
    return malloc(sizes[i % NSIZES]);
}

static void run_thread(int i)
{
    pthread_t t;
    void *ret;
    CHECK(pthread_create(&t, NULL, worker, (void *)(uintptr_t)i) == 0);
    CHECK(pthread_join(t, &ret) == 0);
    CHECK(ret != NULL);
    free(ret);
}

static void threads_leave_nothing(int threads)
{
    void *one = calloc(1, sizeof(pthread_t));
    CHECK(one != NULL);
    run_thread(0);
    struct mallinfo before = mallinfo();
    CHECK(before.uordblks != 0);
    for (int i = 1; i <= threads; i++)
        run_thread(i);
    struct mallinfo after = mallinfo();
    CHECK_MSG(after.uordblks == before.uordblks, "uordblks %d -> %d over %d threads",
              before.uordblks, after.uordblks, threads);
    free(one);
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 20000;
    known_amounts();
    threads_leave_nothing(threads);
    return 0;
}
