/* SPDX-License-Identifier: MIT */
/* A known workload for the reports, which stats_check.py reads:
 *   stats_report json BEFORE DURING AFTER
 *       pm_stats_print's JSON before the workload, while it holds
 *       OBJECTS objects of OBJECT_SIZE bytes and HUGE huge objects and a
 *       second thread caches CACHED freed objects of CACHED_SIZE bytes,
 *       and after half the objects, one huge object and the thread are
 *       gone; each written by fwrite to a FILE (which allocates) from
 *       inside pm_stats_print's write_fn
 *   stats_report table   malloc_stats() during the workload (stderr)
 *   stats_report xml OUT malloc_info() during the workload, to stdout and
 *       through an open_memstream FILE (which allocates as it grows)
 *       copied to OUT
 * Each first prints the usable sizes of both kinds of object on stdout:
 * "sizes OBJECT CACHED". */
#define _GNU_SOURCE
#include <errno.h>
#include "malloc_ext.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "primalloc.h"

enum { OBJECTS = 1000, OBJECT_SIZE = 200, HUGE = 3, CACHED = 100, CACHED_SIZE = 64 };
#define HUGE_SIZE (3u << 20)

static void *objs[OBJECTS], *huge[HUGE];
static pthread_barrier_t cached_ready, may_exit;

/* Frees what it allocated, keeping it in its cache, and waits. */
static void *cacher(void *arg)
{
    (void)arg;
    void *mine[CACHED];
    for (int i = 0; i < CACHED; i++)
        CHECK((mine[i] = malloc(CACHED_SIZE)) != NULL);
    for (int i = 0; i < CACHED; i++)
        free(mine[i]);
    pthread_barrier_wait(&cached_ready);
    pthread_barrier_wait(&may_exit);
    return NULL;
}

static pthread_t start_workload(void)
{
    for (int i = 0; i < OBJECTS; i++)
        CHECK((objs[i] = malloc(OBJECT_SIZE)) != NULL);
    for (int i = 0; i < HUGE; i++)
        CHECK((huge[i] = malloc(HUGE_SIZE)) != NULL);
    pthread_t t;
    CHECK(pthread_barrier_init(&cached_ready, NULL, 2) == 0);
    CHECK(pthread_barrier_init(&may_exit, NULL, 2) == 0);
    CHECK(pthread_create(&t, NULL, cacher, NULL) == 0);
    pthread_barrier_wait(&cached_ready);
    void *probe = malloc(CACHED_SIZE);
    printf("sizes %zu %zu\n", malloc_usable_size(objs[0]), malloc_usable_size(probe));
    fflush(stdout);
    free(probe);
    return t;
}

static void to_file(void *fp, const char *buf, size_t len)
{
    CHECK(fwrite(buf, 1, len, fp) == len);
}

static void json_to(const char *path)
{
    FILE *f = fopen(path, "w");
    CHECK_MSG(f != NULL, "cannot open %s", path);
    CHECK(pm_stats_print(to_file, f, PM_STATS_JSON) == 0);
    CHECK(fclose(f) == 0);
}

static void xml_to(const char *path)
{
    CHECK(malloc_info(0, stdout) == 0);
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    CHECK(mem != NULL);
    CHECK(malloc_info(0, mem) == 0);
    CHECK(fclose(mem) == 0);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL && fwrite(text, 1, len, f) == len && fclose(f) == 0);
    free(text);
    errno = 0;
    CHECK(malloc_info(1, stdout) == -1 && errno == EINVAL);
}

int main(int argc, char **argv)
{
    CHECK_MSG(argc >= 2, "usage: stats_report json|table|xml [files]");
    const char *mode = argv[1];
    CHECK(pm_stats_print(NULL, NULL, 2) == -1 && errno == EINVAL);
    if (!strcmp(mode, "json")) {
        CHECK(argc == 5);
        json_to(argv[2]);
    }
    pthread_t t = start_workload();
    if (!strcmp(mode, "json"))
        json_to(argv[3]);
    else if (!strcmp(mode, "table"))
        malloc_stats();
    else if (!strcmp(mode, "xml") && argc == 3)
        xml_to(argv[2]);
    else
        CHECK_MSG(0, "unknown mode %s", mode);
    pthread_barrier_wait(&may_exit);
    CHECK(pthread_join(t, NULL) == 0);
    for (int i = 0; i < OBJECTS; i += 2)
        free(objs[i]);
    free(huge[0]);
    if (!strcmp(mode, "json"))
        json_to(argv[4]);
    return 0;
}
