/* SPDX-License-Identifier: MIT */
/* Usage: parked_threads THREADS
 * Starts THREADS threads; each allocates and frees 4 blocks of every size
 * from 16 B to 1 MiB (16 B apart up to 256 B, then an eighth apart),
 * writing each block's first and last byte, and then waits.  With all of
 * them waiting, prints the process's resident set in KiB, then lets them
 * finish.  rss_against_glibc.sh compares the figure with glibc's. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "check.h"

static pthread_barrier_t parked, release;

static void *work_then_park(void *arg)
{
    (void)arg;
    for (size_t size = 16; size <= 1 << 20; size += size < 256 ? 16 : size / 8) {
        char *p[4];
        for (int i = 0; i < 4; i++) {
            p[i] = malloc(size);
            CHECK(p[i]);
            p[i][0] = p[i][size - 1] = (char)i;
        }
        for (int i = 0; i < 4; i++)
            free(p[i]);
    }
    pthread_barrier_wait(&parked);
    pthread_barrier_wait(&release);
    return 0;
}

int main(int argc, char **argv)
{
    CHECK(argc == 2);
    unsigned n = (unsigned)atoi(argv[1]);
    CHECK(n > 0);
    pthread_t *threads = calloc(n, sizeof *threads);
    CHECK(threads);
    pthread_attr_t attr;
    CHECK(!pthread_attr_init(&attr));
    CHECK(!pthread_attr_setstacksize(&attr, 128 << 10));
    CHECK(!pthread_barrier_init(&parked, 0, n + 1));
    CHECK(!pthread_barrier_init(&release, 0, n + 1));
    for (unsigned i = 0; i < n; i++)
        CHECK(!pthread_create(&threads[i], &attr, work_then_park, 0));
    pthread_barrier_wait(&parked);
    printf("%zu\n", rss_bytes() / KiB);
    fflush(stdout);
    pthread_barrier_wait(&release);
    for (unsigned i = 0; i < n; i++)
        CHECK(!pthread_join(threads[i], 0));
    free(threads);
    return 0;
}
