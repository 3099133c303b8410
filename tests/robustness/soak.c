/* SPDX-License-Identifier: MIT */
/* Soak: 32 threads on 2 CPUs for SOAK_SECONDS (default 100), in
 * generations: each thread keeps up to 400 objects of mixed sizes, made,
 * resized and freed through every entry point, checking every byte of an
 * object before touching it, and some objects are handed to another
 * thread to free.  Threads exit and are replaced each generation (churn);
 * one thread per generation forks, and the child checks what it inherited,
 * allocates, frees and exits.  At the end, with everything freed and
 * pm_trim done, RSS must be within RSS_BOUND of its value at the start. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "check.h"
#include "objects.h"
#include "primalloc.h"

#define THREADS 32
#define LIVE 400
/* Kept by the allocator once all is freed: chunk headers, the chunk
 * table's written pages, per-CPU cache arrays.  Stated bound: 32 MiB. */
#define RSS_BOUND (32 * MiB)

static _Atomic(void *) handoff[THREADS];
static atomic_ulong ops, forks;

struct worker {
    uint64_t rng;
    int id, forker;
};

static void fork_child(void **live, size_t n)
{
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        uint64_t rng = 7;
        for (size_t i = 0; i < n; i++)
            if (live[i]) {
                obj_check(live[i]);
                live[i] = obj_resize(live[i], &rng, obj_mixed_size(&rng));
                obj_free(live[i]);
            }
        _exit(0);
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "forked child failed (%#x)", status);
    atomic_fetch_add(&forks, 1);
}

static void *work(void *arg)
{
    struct worker *w = arg;
    void *live[LIVE] = {0};
    unsigned long n = 0;
    for (int round = 0; round < 3000; round++, n++) {
        size_t i = rng_next(&w->rng) % LIVE;
        unsigned r = (unsigned)(rng_next(&w->rng) % 10);
        if (!live[i]) {
            live[i] = obj_new(&w->rng, obj_mixed_size(&w->rng));
        } else if (r < 3) {
            live[i] = obj_resize(live[i], &w->rng, obj_mixed_size(&w->rng));
        } else if (r < 5) {
            /* Hand it to the next thread, whose objects we take in turn. */
            obj_check(live[i]);
            void *old = atomic_exchange(&handoff[(w->id + 1) % THREADS], live[i]);
            live[i] = NULL;
            if (old)
                obj_free(old);
        } else {
            obj_free(live[i]);
            live[i] = NULL;
        }
        if (w->forker && round == 1500)
            fork_child(live, LIVE);
    }
    for (size_t i = 0; i < LIVE; i++)
        if (live[i])
            obj_free(live[i]);
    atomic_fetch_add(&ops, n);
    return NULL;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 100;
    /* Two CPUs at most, as on the machine the suite is meant for. */
    cpu_set_t set;
    CHECK(sched_getaffinity(0, sizeof set, &set) == 0);
    cpu_set_t two;
    CPU_ZERO(&two);
    for (int c = 0, n = 0; c < CPU_SETSIZE && n < 2; c++)
        if (CPU_ISSET(c, &set)) {
            CPU_SET(c, &two);
            n++;
        }
    CHECK(sched_setaffinity(0, sizeof two, &two) == 0);

    size_t rss_start = rss_bytes(), rss_peak = rss_start;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    unsigned long generations = 0;
    do {
        pthread_t th[THREADS];
        struct worker w[THREADS];
        for (int i = 0; i < THREADS; i++) {
            w[i] = (struct worker){generations * THREADS + (uint64_t)i + 1, i, i == 0};
            CHECK(pthread_create(&th[i], NULL, work, &w[i]) == 0);
        }
        for (int i = 0; i < THREADS; i++)
            CHECK(pthread_join(th[i], NULL) == 0);
        size_t rss = rss_bytes();
        if (rss > rss_peak)
            rss_peak = rss;
        generations++;
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while (t.tv_sec - t0.tv_sec + (t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
    for (int i = 0; i < THREADS; i++) {
        void *p = atomic_exchange(&handoff[i], NULL);
        if (p)
            obj_free(p);
    }
    pm_trim();
    size_t rss_end = rss_bytes();
    printf("soak: %lu generations of %d threads, %lu operations, %lu forks; RSS start %zu KiB, "
           "peak %zu KiB, end %zu KiB (bound: start + %zu KiB)\n",
           generations, THREADS, (unsigned long)ops, (unsigned long)forks, rss_start / KiB,
           rss_peak / KiB, rss_end / KiB, RSS_BOUND / KiB);
    CHECK_MSG(rss_end <= rss_start + RSS_BOUND, "RSS %zu KiB after freeing all, start %zu KiB",
              rss_end / KiB, rss_start / KiB);
    return 0;
}
