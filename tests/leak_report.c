/* SPDX-License-Identifier: MIT */
/* The leak report (PRIMALLOC_LEAKS=1), checked line by line.  A child
 * (this program run again) leaks known objects from three sites: large
 * ones, small ones, and a list whose head it drops, so that objects only
 * a leaked object points to are leaked too.  It keeps others reachable in
 * each way a root can hold them: a global array, a chain from a global, a
 * live thread's stack; and that thread, still running at exit, holds
 * freed objects in its cache.  Another thread, gone before the leaks,
 * frees more objects of one size than a CPU's cache holds, and the child
 * takes them back and leaks them: the caches' bookkeeping and the dead
 * thread's stack, which the C library keeps mapped, held their addresses
 * on the way.  The parent reads the child's report:
 *   leak_report classes   every leak by size class, exact counts;
 *   leak_report stacks    with the heap profile sampling every large
 *                         object: the large leak under its site's stack.
 * Arguments after the mode are the emulator that runs the child, if any
 * (CMAKE_CROSSCOMPILING_EMULATOR). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"

#define A_SIZE 100000
#define A_N 20
#define B_SIZE 48
#define B_N 1000
#define C_SIZE 272
#define C_N 10
#define KEPT_SIZE B_SIZE
#define KEPT_N 500
#define CHAIN_SIZE 700
#define CHAIN_N 5
#define HELD_SIZE 5000
#define CACHED_SIZE 3000
#define CACHED_N 200
#define RETAKEN_SIZE 96
#define FREED_N 120000
#define RETAKEN_N 60000

struct node {
    struct node *next;
};

void *volatile escape; /* the last object made, so that none is optimised away */
void *kept[KEPT_N];
struct node *chain;
static int ready[2], never[2];

__attribute__((noinline)) void leak_large(void)
{
    for (int i = 0; i < A_N; i++) {
        char *p = malloc(A_SIZE);
        p[0] = 1;
        escape = p;
    }
}

__attribute__((noinline)) void leak_small(void)
{
    for (int i = 0; i < B_N; i++) {
        char *p = malloc(B_SIZE);
        memset(p, 0, B_SIZE);
        escape = p;
    }
}

__attribute__((noinline)) void leak_list(void)
{
    struct node *head = 0;
    for (int i = 0; i < C_N; i++) {
        struct node *n = malloc(C_SIZE);
        n->next = head;
        escape = head = n;
    }
}

__attribute__((noinline)) void keep(void)
{
    for (int i = 0; i < KEPT_N; i++)
        kept[i] = malloc(KEPT_SIZE);
    for (int i = 0; i < CHAIN_N; i++) {
        struct node *n = malloc(CHAIN_SIZE);
        n->next = chain;
        chain = n;
    }
}

/* Frees FREED_N objects, more than the caches of a CPU hold, so that
 * their lists pass through every level. */
static void *freer(void *arg)
{
    (void)arg;
    void **v = malloc(FREED_N * sizeof *v);
    CHECK(v);
    for (int i = 0; i < FREED_N; i++)
        v[i] = malloc(RETAKEN_SIZE);
    for (int i = 0; i < FREED_N; i++)
        free(v[i]);
    free(v);
    return 0;
}

__attribute__((noinline)) void leak_retaken(void)
{
    for (int i = 0; i < RETAKEN_N; i++) {
        char *p = malloc(RETAKEN_SIZE);
        p[8] = 1;
        escape = p;
    }
}

/* Overwrites the stack below the caller's frame, where its calls left
 * addresses: of what the sites leaked, or of what a thread freed, whose
 * chunk may since hold objects of another size. */
__attribute__((noinline)) static void scrub(void)
{
    volatile char junk[1 << 16];
    memset((char *)junk, 0, sizeof junk);
}

/* Holds one object on its stack only, and objects freed in its cache,
 * and blocks until the process ends. */
static void *holder(void *arg)
{
    (void)arg;
    void *volatile held = malloc(HELD_SIZE);
    void *v[CACHED_N];
    for (int i = 0; i < CACHED_N; i++)
        v[i] = malloc(CACHED_SIZE);
    for (int i = 0; i < CACHED_N; i++)
        free(v[i]);
    memset(v, 0, sizeof v);
    scrub();
    char c = 1;
    CHECK(write(ready[1], &c, 1) == 1);
    CHECK(read(never[0], &c, 1) >= 0);
    return held;
}

static int child(void)
{
    CHECK(pipe(ready) == 0 && pipe(never) == 0);
    pthread_t t;
    CHECK(pthread_create(&t, 0, holder, 0) == 0);
    char c;
    CHECK(read(ready[0], &c, 1) == 1);
    pthread_t gone;
    CHECK(pthread_create(&gone, 0, freer, 0) == 0 && pthread_join(gone, 0) == 0);
    leak_retaken();
    leak_large();
    leak_small();
    leak_list();
    keep();
    escape = 0;
    scrub();
    return 0;
}

/* The child's stderr, its exit status checked; emulator: NULL, or the
 * command line that runs self. */
static char *run_child(const char *self, char **emulator, int stacks, const char *prof)
{
    int out[2];
    CHECK(pipe(out) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (!pid) {
        dup2(out[1], 2);
        setenv("PRIMALLOC_LEAKS", "1", 1);
        if (stacks) {
            setenv("PRIMALLOC_PROF", "1", 1);
            setenv("PRIMALLOC_PROF_RATE", "1", 1);
            setenv("PRIMALLOC_PROF_FILE", prof, 1);
        }
        char *args[16];
        int n = 0;
        for (; emulator && *emulator && n < 13; emulator++)
            args[n++] = *emulator;
        args[n++] = (char *)self;
        args[n++] = "child";
        args[n] = 0;
        execvp(args[0], args);
        _exit(127);
    }
    close(out[1]);
    static char text[1 << 16];
    read_all(out[0], text, sizeof text);
    close(out[0]);
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && !WEXITSTATUS(status), "child status %#x: %s", status, text);
    return text;
}

/* The size class malloc serves size from: what an object of it holds. */
static size_t class_of(size_t size)
{
    void *p = malloc(size);
    size_t usable = malloc_usable_size(p);
    free(p);
    return usable;
}

/* The line "primalloc: leak of B bytes in N objects of size class S" for
 * S, or NULL; *objects its N. */
static const char *class_line(const char *text, unsigned long size, unsigned long *objects)
{
    for (const char *l = text; (l = strstr(l, "primalloc: leak of ")); l++) {
        unsigned long bytes, n, s;
        if (sscanf(l, "primalloc: leak of %lu bytes in %lu objects of size class %lu", &bytes, &n, &s) == 3 &&
            s == size) {
            CHECK_MSG(bytes == n * s, "bytes of the class: %.120s", l);
            *objects = n;
            return l;
        }
    }
    return 0;
}

/* Every leaked object is counted once, sampled or not. */
static void check_total(const char *text)
{
    unsigned long made = A_N + B_N + C_N + RETAKEN_N;
    unsigned long bytes, total;
    const char *head = strstr(text, "primalloc: leaks: ");
    CHECK_MSG(head && sscanf(head, "primalloc: leaks: %lu bytes in %lu objects", &bytes, &total) == 2,
              "no total in: %s", text);
    CHECK_MSG(total == made, "total %lu objects, not %lu: %s", total, made, text);
}

static void check_classes(const char *text)
{
    unsigned long n;
    CHECK_MSG(class_line(text, class_of(B_SIZE), &n) && n == B_N, "small leak not as made: %s", text);
    CHECK_MSG(class_line(text, class_of(C_SIZE), &n) && n == C_N, "list not as made: %s", text);
    CHECK_MSG(class_line(text, class_of(RETAKEN_SIZE), &n) && n == RETAKEN_N, "retaken leak not as made: %s",
              text);
    unsigned long large = 0;
    for (const char *l = text; (l = strstr(l, "primalloc: leak of ")); l++) {
        unsigned long bytes, s;
        if (sscanf(l, "primalloc: leak of %lu bytes in %lu objects of size class %lu", &bytes, &n, &s) == 3 &&
            s >= A_SIZE && s < 2 * A_SIZE)
            large += n;
    }
    CHECK_MSG(large == A_N, "large leak: %lu objects: %s", large, text);
    CHECK_MSG(!class_line(text, class_of(CHAIN_SIZE), &n) && !class_line(text, class_of(HELD_SIZE), &n) &&
                  !class_line(text, class_of(CACHED_SIZE), &n),
              "a reachable or cached object reported: %s", text);
}

/* The function a report's place "FILE+0xOFF (0xADDR)" names: the
 * program's own (it exports its symbols), found at the same offset from
 * its own load base here. */
static const char *function_at(const char *place)
{
    Dl_info self;
    CHECK(dladdr((void *)leak_large, &self));
    const char *plus = strstr(place, "+0x");
    if (!plus || (size_t)(plus - place) != strlen(self.dli_fname) || strncmp(place, self.dli_fname, plus - place))
        return "";
    Dl_info at;
    uintptr_t addr = (uintptr_t)self.dli_fbase + strtoul(plus + 3, 0, 16);
    return dladdr((void *)addr, &at) && at.dli_sname ? at.dli_sname : "";
}

static void check_stacks(const char *text)
{
    int found = 0;
    for (const char *l = text; (l = strstr(l, "primalloc: leak of ~")); l++) {
        unsigned long bytes, objects, samples;
        CHECK(sscanf(l, "primalloc: leak of ~%lu bytes in %lu objects (%lu sampled)", &bytes, &objects, &samples) ==
              3);
        int large = 0;
        for (const char *f = strchr(l, '\n'); f && !strncmp(f + 1, "primalloc:     ", 15); f = strchr(f + 1, '\n'))
            large |= !strcmp(function_at(f + 16), "leak_large");
        if (!large)
            continue;
        found++;
        CHECK_MSG(samples == A_N && objects == A_N, "large leak's stack: %.200s", l);
        CHECK_MSG(bytes > A_N * A_SIZE * 0.95 && bytes < A_N * A_SIZE * 1.05, "large leak's bytes: %.200s", l);
    }
    CHECK_MSG(found == 1, "%d stacks of the large leak in: %s", found, text);
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "child"))
        return child();
    CHECK_MSG(argc >= 2 && (!strcmp(argv[1], "classes") || !strcmp(argv[1], "stacks")),
              "usage: %s classes|stacks [EMULATOR...]", argv[0]);
    int stacks = !strcmp(argv[1], "stacks");
    char prof[] = "/tmp/leak_report.XXXXXX";
    CHECK(mkdtemp(prof));
    char prefix[64];
    snprintf(prefix, sizeof prefix, "%s/prof", prof);
    const char *text = run_child(argv[0], argv + 2, stacks, prefix);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", prof);
    CHECK(system(cmd) == 0);
    check_total(text);
    if (stacks)
        check_stacks(text);
    else
        check_classes(text);
    printf("%s", text);
    return 0;
}
