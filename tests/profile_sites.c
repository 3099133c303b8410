/* SPDX-License-Identifier: MIT */
/* Allocation sites for the heap-profile test (heap_profile.sh): keep_most
 * keeps 80% of the live bytes, keep_rest 20%, churn frees all it
 * allocates.  Then the profile is dumped three ways: by pm_profile_dump
 * to argv[1], by SIGUSR2 (when the environment names a signal, which
 * must be that one), and at exit.
 * Sizes are those of bins, so that bytes sampled at refills, counted in
 * whole objects of a bin, are the bytes asked for. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "primalloc.h"

#define LIVE (32u << 20)
#define ROUNDS 64
#define MOST_SIZE 256
#define REST_SIZE 64
#define CHURN_SIZE 128

static void *volatile sink;

/* External, and the program exports its symbols, so that the folded
 * stacks, named by dynamic symbols, name them too; not cloned, since a
 * clone (keep_most.constprop.0) is a local symbol. */
#ifdef __clang__
#define SITE __attribute__((noinline))
#else
#define SITE __attribute__((noinline, noclone))
#endif
void keep_most(void **slots, size_t n);
void keep_rest(void **slots, size_t n);
void churn(size_t n);

SITE void keep_most(void **slots, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        slots[i] = malloc(MOST_SIZE);
        memset(slots[i], 1, MOST_SIZE);
    }
}

SITE void keep_rest(void **slots, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        slots[i] = malloc(REST_SIZE);
        memset(slots[i], 2, REST_SIZE);
    }
}

SITE void churn(size_t n)
{
    void *held[1024];
    for (size_t done = 0; done < n; done += 1024) {
        for (size_t i = 0; i < 1024; i++) {
            held[i] = malloc(CHURN_SIZE);
            sink = held[i];
        }
        for (size_t i = 0; i < 1024; i++)
            free(held[i]);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s dump-path\n", argv[0]);
        return 2;
    }
    size_t most = LIVE / 5 * 4 / MOST_SIZE / ROUNDS, rest = LIVE / 5 / REST_SIZE / ROUNDS;
    void **kept = malloc(ROUNDS * (most + rest) * sizeof *kept);
    for (size_t r = 0; r < ROUNDS; r++) {
        keep_most(kept + r * (most + rest), most);
        churn(LIVE / CHURN_SIZE / ROUNDS);
        keep_rest(kept + r * (most + rest) + most, rest);
    }
    if (pm_profile_dump(argv[1])) {
        perror("pm_profile_dump");
        return 1;
    }
    if (getenv("PRIMALLOC_PROF_SIGNAL"))
        raise(SIGUSR2);
    printf("keep_most %zu keep_rest %zu\n", (size_t)ROUNDS * most * MOST_SIZE, (size_t)ROUNDS * rest * REST_SIZE);
    return 0;
}
