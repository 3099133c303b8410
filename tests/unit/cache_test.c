/* SPDX-License-Identifier: MIT */
/* The cache levels lose and duplicate nothing: threads pass millions of
 * objects of several sizes to one another (through every level), with
 * content checks, and threads come and go; afterwards every object of each
 * bin is accounted for in the shared levels and the folios, and a trim
 * empties the caches into the folios.  Frees through many bins park a
 * bounded amount in the shared levels, not two lists a bin.  A thread
 * whose CPU levels are empty takes what another CPU holds, unless that CPU
 * has just taken it from this one.  What lies untouched in the shared
 * levels for the decay time goes back to the folios. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include "background.h"
#include "cache.h"
#include "folio.h"
#include "os.h"
#include "primalloc.h"
#include "sizeclass.h"
#include "thread_cache.h"
#include "unit.h"

enum { THREADS = 8, OPS = 100000, SLOTS = 1 << 14 };
static const size_t sizes[] = {16, 48, 100, 256, 700, 3000, 15000, 40000};
static void *slots[SLOTS];

static void fill(unsigned char *p, size_t n, uintptr_t seed)
{
    *(size_t *)p = n;
    for (size_t i = sizeof(size_t); i < n; i++)
        p[i] = (unsigned char)(seed + i);
}

static void verify(unsigned char *p)
{
    size_t n = *(size_t *)p;
    for (size_t i = sizeof(size_t); i < n; i++)
        CHECK(p[i] == (unsigned char)((uintptr_t)p + i));
}

static void *worker(void *arg)
{
    uint64_t x = (uintptr_t)arg * 0x9e3779b97f4a7c15ull + 1;
    for (int i = 0; i < OPS; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        size_t n = sizes[x % (sizeof sizes / sizeof sizes[0])];
        unsigned char *p = pm_malloc(n);
        CHECK(p);
        fill(p, n, (uintptr_t)p);
        unsigned char *old = __atomic_exchange_n(&slots[(x >> 8) % SLOTS], p, __ATOMIC_ACQ_REL);
        if (old) {
            verify(old);
            pm_free(old);
        }
    }
    return 0;
}

/* The CPU and global levels back to the folios, then the settle that
 * asks for, as every caller of the caches runs it (background.h). */
static void drain(void)
{
    pm_cache_drain();
    pm_background_if_wanted();
}

static size_t cached_bytes(void)
{
    size_t sum = 0;
    for (unsigned bin = 0; bin < PM_NBINS; bin++)
        sum += pm_cache_count(bin) * pm_bins[bin].size;
    return sum;
}

/* The CPUs the caches took slots for, before the main thread is pinned
 * to one of them. */
static unsigned cpus;

/* 3 MiB freed in each of 24 small and medium bins: without a shared budget
 * the levels would keep up to 4 MiB of each. */
static void many_bins(void)
{
    enum { BINS = 24, BYTES = 3 << 20 };
    for (unsigned bin = 0; bin < BINS; bin++) {
        size_t n = BYTES / pm_bins[bin].size;
        void **objs = pm_malloc(n * sizeof(void *));
        for (size_t i = 0; i < n; i++)
            CHECK((objs[i] = pm_malloc(pm_bins[bin].size)));
        for (size_t i = 0; i < n; i++)
            pm_free(objs[i]);
        pm_free(objs);
    }
    size_t bound = (size_t)cpus * 2 * PM_CPU_BUDGET + (size_t)BINS * 16384;
    if (cached_bytes() > bound)
        fprintf(stderr, "cached %zu bytes, bound %zu\n", cached_bytes(), bound);
    CHECK(cached_bytes() <= bound);
}

/* STEAL_BATCHES, three quarters of a CPU list of the bin, reaches past
 * half of it, so that taking the list back is declined (no_taking_back),
 * and stays below a whole one, which would go down to the global level;
 * SHORT_BATCHES stays below half, where declines have a smaller bound. */
enum { STEAL_SIZE = 3000, SHORT_BATCHES = 8 };
#define STEAL_BATCHES (3 * (size_t)pm_bins[pm_bin_of_small(STEAL_SIZE)].cpu_batches / 4)
static size_t free_batches;

/* Pins the calling thread to cpu and frees enough objects there that
 * whole batches reach the CPU level (the last one at exit, when it runs as
 * a thread of its own). */
static void *free_on(void *cpu)
{
    pin((int)(intptr_t)cpu);
    size_t n = free_batches * pm_bins[pm_bin_of_small(STEAL_SIZE)].batch;
    void *objs[n];
    for (size_t i = 0; i < n; i++)
        CHECK((objs[i] = pm_malloc(STEAL_SIZE)));
    for (size_t i = 0; i < n; i++)
        pm_free(objs[i]);
    return 0;
}

/* What alloc_on allocates, and the shared levels' count of that bin while
 * its thread held the batch it got. */
static size_t alloc_size = STEAL_SIZE, cached_by_alloc_on;

/* The first two CPUs the process may run on. */
static int cpu_pair[2];

static void *alloc_on(void *cpu)
{
    pin((int)(intptr_t)cpu);
    void *p = pm_malloc(alloc_size);
    CHECK(p);
    cached_by_alloc_on = pm_cache_count(pm_bin_of_small(alloc_size));
    pm_free(p);
    return 0;
}

static void run_on(void *(*fn)(void *), int cpu)
{
    pthread_t t;
    CHECK(pthread_create(&t, 0, fn, (void *)(intptr_t)cpu) == 0);
    CHECK(pthread_join(t, 0) == 0);
}

/* Objects freed on one CPU serve a thread on another CPU, whose levels are
 * empty, instead of new folios being carved beside them. */
static void steals_across_cpus(void)
{
    unsigned bin = pm_bin_of_small(STEAL_SIZE);
    drain();
    run_on(free_on, cpu_pair[0]);
    size_t cached = pm_cache_count(bin);
    struct pm_folio_census before, after;
    CHECK(cached >= pm_bins[bin].batch);
    pm_folio_census(bin, &before);
    run_on(alloc_on, cpu_pair[1]);
    pm_folio_census(bin, &after);
    CHECK(after.objects == before.objects);
    CHECK(cached_by_alloc_on == cached - pm_bins[bin].batch);
}

/* The main thread frees `batches` batches on the first CPU, a thread on
 * the second CPU steals them, and the main thread then allocates a batch
 * more than its own cache holds.  Gives the shared levels' count before
 * and after that allocation, and the objects it took from the folios.
 * The main thread works on the first CPU (main pins it there), so that
 * nothing of it is left there at a thread exit. */
static void take_after_steal(size_t batches, size_t *held, size_t *held_after, size_t *from_folios)
{
    unsigned bin = pm_bin_of_small(STEAL_SIZE), batch = pm_bins[bin].batch;
    drain();
    free_batches = batches;
    free_on((void *)(intptr_t)cpu_pair[0]);
    free_batches = STEAL_BATCHES;
    size_t n = batches * batch;
    struct pm_folio_census before, after;
    void **objs = pm_malloc(n * sizeof *objs);
    CHECK(objs);
    run_on(alloc_on, cpu_pair[1]);
    size_t want = pm_tc_count(bin) + batch;
    *held = pm_cache_count(bin);
    CHECK(*held >= batch && want <= n);
    pm_folio_census(bin, &before);
    for (size_t i = 0; i < want; i++)
        CHECK((objs[i] = pm_malloc(STEAL_SIZE)));
    pm_folio_census(bin, &after);
    *held_after = pm_cache_count(bin);
    *from_folios = (after.objects - after.free) - (before.objects - before.free);
    for (size_t i = 0; i < want; i++)
        pm_free(objs[i]);
    pm_free(objs);
}

/* A CPU does not at once take back a whole list another CPU took from it:
 * it carves, and the other CPU keeps what it holds. */
static void no_taking_back(void)
{
    unsigned bin = pm_bin_of_small(STEAL_SIZE), batch = pm_bins[bin].batch;
    size_t held, held_after, from_folios;
    take_after_steal(STEAL_BATCHES, &held, &held_after, &from_folios);
    CHECK(2 * held >= (size_t)pm_bins[bin].cpu_batches * batch);
    CHECK(held_after == held);
    CHECK(from_folios == batch);
}

/* A short list is not taken back at once either, but the carving that
 * costs is bounded: past a small amount carved, short lists go back again,
 * every time, with nothing carved. */
static void short_lists_bounded(void)
{
    unsigned bin = pm_bin_of_small(STEAL_SIZE), batch = pm_bins[bin].batch;
    size_t declined = 0, taken = 0;
    for (int i = 0; i < 4096 && taken < 4; i++) {
        size_t held, held_after, from_folios;
        take_after_steal(SHORT_BATCHES, &held, &held_after, &from_folios);
        CHECK(2 * held < (size_t)pm_bins[bin].cpu_batches * batch);
        if (from_folios == batch && held_after == held) {
            CHECK(taken == 0);
            declined++;
        } else {
            CHECK(held_after == held - batch && from_folios == 0);
            taken++;
        }
    }
    CHECK(declined >= 1);
    CHECK(taken == 4);
    CHECK(declined * batch * pm_bins[bin].size <= PM_CPU_BUDGET);
}

/* Objects leave_on's thread held at exit, and the one it left live. */
static size_t held_by_leave_on;
static void *live_from_leave_on;

/* Allocates and frees until the thread holds a spare batch and a partial
 * list, as it exits. */
static void *leave_on(void *cpu)
{
    pin((int)(intptr_t)cpu);
    unsigned bin = pm_bin_of_small(STEAL_SIZE), batch = pm_bins[bin].batch;
    size_t n = 2 * (size_t)batch;
    void *objs[n];
    for (size_t i = 0; i < n; i++)
        CHECK((objs[i] = pm_malloc(STEAL_SIZE)));
    for (size_t i = 1; i < n; i++)
        pm_free(objs[i]);
    live_from_leave_on = objs[0];
    held_by_leave_on = pm_tc_count(bin);
    CHECK(held_by_leave_on > batch && held_by_leave_on % batch != 0);
    return 0;
}

/* What a thread holds at exit stays on its CPU, whole, and serves the next
 * thread there. */
static void left_for_next_thread(void)
{
    unsigned bin = pm_bin_of_small(STEAL_SIZE), batch = pm_bins[bin].batch;
    drain();
    run_on(leave_on, cpu_pair[0]);
    struct pm_folio_census before, after;
    CHECK(pm_cache_count(bin) == held_by_leave_on);
    pm_folio_census(bin, &before);
    run_on(alloc_on, cpu_pair[0]);
    pm_folio_census(bin, &after);
    CHECK(after.objects == before.objects);
    CHECK(cached_by_alloc_on == held_by_leave_on - batch);
    pm_free(live_from_leave_on);
}

enum { LOOSE_SIZE = 256, LOOSE_KEPT = 4 };
static void *kept[2][LOOSE_KEPT];
static int keeper;

/* Allocates LOOSE_KEPT objects, which stay live, and exits: its list holds
 * the rest of the batch it got, no spare. */
static void *keep_few_on(void *cpu)
{
    pin((int)(intptr_t)cpu);
    for (int i = 0; i < LOOSE_KEPT; i++)
        CHECK((kept[keeper][i] = pm_malloc(LOOSE_SIZE)));
    return 0;
}

/* Two exits on one CPU that leave fewer than a batch each: together they
 * make a batch for the next thread there, and the rest waits. */
static void loose_objects_join(void)
{
    unsigned bin = pm_bin_of_small(LOOSE_SIZE), batch = pm_bins[bin].batch;
    size_t each = batch - LOOSE_KEPT;
    struct pm_folio_census before, after;
    CHECK(2 * each >= batch && each < batch);
    drain();
    for (keeper = 0; keeper < 2; keeper++)
        run_on(keep_few_on, cpu_pair[0]);
    CHECK(pm_cache_count(bin) == 2 * each);
    pm_folio_census(bin, &before);
    alloc_size = LOOSE_SIZE;
    run_on(alloc_on, cpu_pair[0]);
    alloc_size = STEAL_SIZE;
    pm_folio_census(bin, &after);
    CHECK(after.objects == before.objects);
    CHECK(cached_by_alloc_on == 2 * each - batch);
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < LOOSE_KEPT; i++)
            pm_free(kept[k][i]);
}

/* Batches of one bin reach this CPU's chains and the global level; once
 * they have lain there untouched for PM_DECAY_MS, a put of another bin
 * sends them back to their folios, and keeps what it put. */
static void idle_chains_decay(void)
{
    unsigned idle = pm_bin_of_small(48), busy = pm_bin_of_small(64), got;
    unsigned batch = pm_bins[idle].batch;
    size_t cpu = 0, global = 0, put = 0;
    drain();
    while (!global && put < 4 * (size_t)pm_bins[idle].cpu_batches) {
        void *list = pm_folio_alloc(idle, batch, &got);
        CHECK(got == batch);
        pm_cache_put(idle, list, PM_THIS_CPU);
        put++;
        pm_cache_census(idle, &cpu, &global);
    }
    CHECK(cpu > 0 && global > 0);
    pm_os_sleep_ms(2 * PM_DECAY_MS);
    CHECK(pm_cache_count(idle) == cpu + global);
    void *list = pm_folio_alloc(busy, pm_bins[busy].batch, &got);
    CHECK(got == pm_bins[busy].batch);
    pm_cache_put(busy, list, PM_THIS_CPU);
    CHECK(pm_cache_count(idle) == 0);
    CHECK(pm_cache_count(busy) == got);
    pm_cache_check();
    drain();
}

/* A batch one object short, put as if whole: the check of the caches
 * finds the list shorter than its chain counts. */
static void short_batch(void *unused)
{
    (void)unused;
    unsigned bin = pm_bin_of_small(48), got, n = pm_bins[bin].batch - 1u;
    drain();
    void *list = pm_folio_alloc(bin, n, &got);
    CHECK(got == n);
    pm_cache_put(bin, list, PM_THIS_CPU);
    pm_cache_check();
}

/* A list that runs list, second, list, ... left as the two objects it
 * counts, as a thread's list is after an object deep in it was freed
 * again: the walk past the count hands it to the folios, which name the
 * object found twice. */
static void list_with_a_repeat(void *unused)
{
    (void)unused;
    unsigned bin = pm_bin_of_small(48), got;
    void **list = pm_folio_alloc(bin, 2, &got);
    CHECK(got == 2);
    void *second = pm_link_next(list, "test");
    pm_link_set(second, list);
    pm_cache_leave(bin, list, 2, PM_THIS_CPU);
}

/* Usage: unit_cache [rounds of THREADS threads at the end, default 3] */
int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 3;
    CHECK(rounds > 0);
    /* The tests of one behaviour run with the main thread on the first
     * CPU, so that every chunk it carves is of that CPU's lane: a new
     * thread on that CPU keeps what it frees (thread_cache.h).  The
     * caches take a slot for each CPU allowed at their first use, which
     * comes first. */
    cpu_set_t all;
    two_cpus(cpu_pair);
    CHECK(sched_getaffinity(0, sizeof all, &all) == 0);
    pm_free(pm_malloc(1));
    cpus = pm_os_cpus();
    pin(cpu_pair[0]);
    free_batches = STEAL_BATCHES;
    many_bins();
    steals_across_cpus();
    no_taking_back();
    short_lists_bounded();
    left_for_next_thread();
    loose_objects_join();
    idle_chains_decay();
    CHECK(sched_setaffinity(0, sizeof all, &all) == 0);
    for (int r = 0; r < rounds; r++) {
        pthread_t t[THREADS];
        for (uintptr_t i = 0; i < THREADS; i++)
            CHECK(pthread_create(&t[i], 0, worker, (void *)(i + 1 + r * THREADS)) == 0);
        for (int i = 0; i < THREADS; i++)
            CHECK(pthread_join(t[i], 0) == 0);
    }
    for (int i = 0; i < SLOTS; i++)
        if (slots[i]) {
            verify(slots[i]);
            pm_free(slots[i]);
        }
    pm_cache_check();
    pm_folio_check();
    pm_tc_check();
    check_fatal(short_batch, 0, "shorter than counted");
    check_fatal(list_with_a_repeat, 0, "double free");
    /* Nothing is live: every carved object is in a cache or free in a folio. */
    for (unsigned bin = 0; bin < PM_NBINS; bin++) {
        struct pm_folio_census c;
        pm_folio_census(bin, &c);
        size_t cached = pm_cache_count(bin) + pm_tc_count(bin);
        if (c.objects != c.free + cached)
            fprintf(stderr, "bin %u: carved %zu, free %zu, cached %zu\n", bin, c.objects, c.free, cached);
        CHECK(c.objects == c.free + cached);
    }
    CHECK(pm_trim());
    struct pm_stats s;
    pm_get_stats(&s);
    CHECK(s.folios_in_use == 0 && s.huge_bytes == 0);
    for (unsigned bin = 0; bin < PM_NBINS; bin++) {
        struct pm_folio_census c;
        pm_folio_census(bin, &c);
        CHECK(pm_cache_count(bin) == 0 && pm_tc_count(bin) == 0 && c.objects == c.free);
    }
    printf("cache ok\n");
    return 0;
}
