/* SPDX-License-Identifier: MIT */
/* Usage: as_against_glibc LIBRARY mix THREADS
 *        as_against_glibc LIBRARY startup
 * Address space against the C library's malloc, each figure taken in a
 * fresh process of this program (which links no allocator of its own)
 * started once as it is and once with LIBRARY in LD_PRELOAD:
 *  - mix: under an address-space limit of 200,000 KiB (`ulimit -v
 *    200000`), THREADS threads each allocate sizes spread evenly over the
 *    octaves from 16 B to 128 KiB, keeping every object, until malloc
 *    first fails (the point where a program that cannot do without the
 *    memory stops); the objects LIBRARY's threads got must add up to at
 *    least 90% of the C library's.  Objects count as malloc_usable_size says:
 *    the test weighs the address space each allocator needs for what it
 *    hands out, not its size classes (primalloc's round an object up by
 *    about a tenth on average over this mix, glibc's by under 16 bytes);
 *    the bytes asked for are printed too;
 *  - startup: VmSize at the start of main, before any malloc, and after
 *    one object of each of 24 sizes from 16 B to 128 KiB, as a program's
 *    start-up allocates; LIBRARY's must be at most 8 MiB above the C
 *    library's at both points. */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"
#include "child.h"
#include "limit.h"

#define LIMIT_KIB 200000
#define MIX_THREADS_MAX 16

extern char **environ;

static pthread_barrier_t start;

/* Bytes asked for and got, as malloc_usable_size says. */
struct got {
    size_t asked, usable;
};

/* Allocates until malloc fails, counting what it got in its struct got. */
static void *fill(void *arg)
{
    struct got *g = arg;
    uint64_t r = (uintptr_t)g * 0x9e3779b97f4a7c15ull + 12345;
    pthread_barrier_wait(&start);
    for (;;) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        unsigned octave = 4 + (unsigned)(r % 13);
        size_t size = ((size_t)1 << octave) + (size_t)(r >> 8) % ((size_t)1 << octave);
        char *p = malloc(size);
        if (!p)
            break;
        p[0] = 1;
        g->asked += size;
        g->usable += malloc_usable_size(p);
    }
    return NULL;
}

/* Runs in a process started under the limit: prints the bytes its
 * threads got. */
static int fill_run(unsigned threads)
{
    static struct got got[MIX_THREADS_MAX];
    pthread_t t[MIX_THREADS_MAX];
    pthread_attr_t attr;
    CHECK(pthread_attr_init(&attr) == 0);
    CHECK(pthread_attr_setstacksize(&attr, 256 * KiB) == 0);
    CHECK(pthread_barrier_init(&start, NULL, threads) == 0);
    for (unsigned i = 0; i < threads; i++)
        CHECK(pthread_create(&t[i], &attr, fill, &got[i]) == 0);
    size_t asked = 0, usable = 0;
    for (unsigned i = 0; i < threads; i++) {
        CHECK(pthread_join(t[i], NULL) == 0);
        asked += got[i].asked;
        usable += got[i].usable;
    }
    fprintf(stderr, "live %zu %zu\n", usable, asked);
    return 0;
}

/* Runs in a fresh process: prints VmSize before any malloc and after a
 * start-up's worth of objects. */
static int startup_run(void)
{
    size_t before = vm_size();
    static void *kept[24];
    size_t size = 16;
    for (int i = 0; i < 24; i++, size += size * 3 / 7)
        CHECK((kept[i] = malloc(size)));
    fprintf(stderr, "vmsize %zu %zu\n", before, vm_size());
    return 0;
}

static const char *self;

/* How a measuring process is started: with or without the library in
 * LD_PRELOAD, under the limit or not, with these arguments. */
struct start {
    const char *preload;
    int limited;
    const char *mode, *arg;
};

/* In the child: sets the limit, then starts this program afresh with the
 * environment, less any LD_PRELOAD, plus the library's. */
static void start_measuring(const void *arg)
{
    const struct start *s = arg;
    if (s->limited) {
        struct rlimit r = {(rlim_t)LIMIT_KIB * KiB, (rlim_t)LIMIT_KIB * KiB};
        CHECK(setrlimit(RLIMIT_AS, &r) == 0);
    }
    static char *env[512], preload[4096];
    size_t n = 0;
    for (char **e = environ; *e && n < 510; e++)
        if (strncmp(*e, "LD_PRELOAD=", 11))
            env[n++] = *e;
    if (s->preload) {
        snprintf(preload, sizeof preload, "LD_PRELOAD=%s", s->preload);
        env[n++] = preload;
    }
    env[n] = NULL;
    char *argv[] = {(char *)self, (char *)s->mode, (char *)s->arg, NULL};
    execve(self, argv, env);
    CHECK_MSG(0, "exec %s: %s", self, strerror(errno));
}

/* Runs this program as s says and returns what it printed after `key`. */
static const char *measure(const struct start *s, const char *key, struct child_outcome *o)
{
    child_run(start_measuring, s, 300, o);
    const char *at = strstr(o->err, key);
    CHECK_MSG(WIFEXITED(o->status) && WEXITSTATUS(o->status) == 0 && at, "%s %s with %s: %s; stderr: %s",
              s->mode, s->arg ? s->arg : "", s->preload ? s->preload : "the C library's malloc",
              child_status_text(o->status), o->err);
    return at + strlen(key);
}

static struct child_outcome outcome;

static void mix(const char *lib, const char *threads)
{
    struct start libc = {NULL, 1, "--fill", threads}, ours = {lib, 1, "--fill", threads};
    char *end;
    size_t theirs = strtoull(measure(&libc, "live ", &outcome), &end, 10);
    size_t theirs_asked = strtoull(end, NULL, 10);
    size_t mine = strtoull(measure(&ours, "live ", &outcome), &end, 10);
    size_t mine_asked = strtoull(end, NULL, 10);
    printf("under ulimit -v %d, %s threads: C library %.1f MiB of objects (%.1f MiB asked for), "
           "primalloc %.1f MiB (%.1f MiB asked for): %.0f%% (%.0f%%)\n",
           LIMIT_KIB, threads, (double)theirs / MiB, (double)theirs_asked / MiB, (double)mine / MiB,
           (double)mine_asked / MiB, 100.0 * (double)mine / (double)theirs,
           100.0 * (double)mine_asked / (double)theirs_asked);
    CHECK_MSG(mine >= theirs / 10 * 9, "primalloc's objects add up to %zu bytes, under 90%% of %zu", mine, theirs);
}

static void startup(const char *lib)
{
    struct start libc = {NULL, 0, "--vmsize", NULL}, ours = {lib, 0, "--vmsize", NULL};
    char *end;
    size_t theirs[2], mine[2];
    theirs[0] = strtoull(measure(&libc, "vmsize ", &outcome), &end, 10);
    theirs[1] = strtoull(end, NULL, 10);
    mine[0] = strtoull(measure(&ours, "vmsize ", &outcome), &end, 10);
    mine[1] = strtoull(end, NULL, 10);
    printf("VmSize before malloc: C library %zu KiB, primalloc %zu KiB; after 24 sizes: %zu KiB, %zu KiB\n",
           theirs[0] / KiB, mine[0] / KiB, theirs[1] / KiB, mine[1] / KiB);
    for (int i = 0; i < 2; i++)
        CHECK_MSG(mine[i] <= theirs[i] + 8 * MiB, "VmSize %zu KiB, more than 8 MiB over %zu KiB", mine[i] / KiB,
                  theirs[i] / KiB);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--fill")) {
        unsigned threads = (unsigned)atoi(argv[2]);
        CHECK(threads >= 1 && threads <= MIX_THREADS_MAX);
        return fill_run(threads);
    }
    if (argc >= 2 && !strcmp(argv[1], "--vmsize"))
        return startup_run();
    self = argv[0];
    CHECK_MSG(argc >= 3, "usage: %s LIBRARY mix THREADS | LIBRARY startup", argv[0]);
    CHECK_MSG(access(argv[1], R_OK) == 0, "no library at %s", argv[1]);
    if (!strcmp(argv[2], "mix") && argc == 4)
        mix(argv[1], argv[3]);
    else if (!strcmp(argv[2], "startup"))
        startup(argv[1]);
    else
        CHECK_MSG(0, "unknown mode %s", argv[2]);
    return 0;
}
