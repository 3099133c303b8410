/* SPDX-License-Identifier: MIT */
/* Misuse: a double free of a small object, or a pointer primalloc never
 * handed out, must abort the process after one line on stderr of the form
 * "primalloc: <call>(<pointer>): <what>".  Each case runs in a forked child
 * (robustness/child.h) that first announces the pointer it is about to misuse;
 * each runs again with a cancellation pending, which must not end the
 * thread inside the report. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <pthread.h>
#include "malloc_ext.h"
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"
#include "child.h"

#define CASE_SECONDS 60

static void double_free(const void *arg __attribute__((unused)))
{
    char *p = malloc(opaque(32));
    memset(p, 1, 32);
    free(p);
    child_announce(p);
    free(opaque_ptr(p));
}

/* Frees p twice with other objects freed in between, so that the bad free
 * is not simply a repeat of the last one, and returns p. */
static void *double_free_under_others(void)
{
    void *p = malloc(opaque(100)), *q = malloc(opaque(100)), *r = malloc(opaque(200));
    free(p);
    free(q);
    free(r);
    child_announce(p);
    free(opaque_ptr(p));
    return p;
}

static void double_free_later(const void *arg __attribute__((unused)))
{
    double_free_under_others();
    /* Trimming right after: the double free must have been caught already,
     * not turn into a corrupt folio. */
    malloc_trim(0);
}

#ifndef TEST_FAST_LIBRARY
/* The same with the program going on to allocate, as a program that does
 * not trim would: the object must not be handed out twice.  A new
 * thread's frees look for the object in its lists, so the second free
 * reports it; with arg, the thread is no longer new first, and the
 * malloc that would hand it out the second time reports it. */
static void double_free_then_reuse(const void *arg)
{
    /* A thread no longer new after enough frees that sent nothing home:
     * its frees read no object, and the malloc that would take p again
     * finds it. */
    for (int i = arg ? 2 * 8192 : 0; i > 0; i--)
        free(malloc(opaque(40)));
    double_free_under_others();
    void *got[8];
    for (int i = 0; i < 8; i++) {
        got[i] = malloc(opaque(100));
        for (int j = 0; j < i; j++)
            if (got[j] == got[i])
                fprintf(stderr, "malloc(100) returned %p twice\n", got[i]);
    }
}
#endif

static void stack_pointer(const void *arg __attribute__((unused)))
{
    char buf[64] = {0};
    char *p = opaque_ptr(buf + 16);
    child_announce(p);
    free(p);
}

/* An address where a chunk's objects would be, in memory primalloc does
 * not own: 2 MiB-aligned, so only the chunk table can tell. */
static void foreign_chunk(const void *arg __attribute__((unused)))
{
    size_t len = 8 * MiB;
    char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED);
    char *chunk = (char *)(((uintptr_t)m + 2 * MiB - 1) & ~(uintptr_t)(2 * MiB - 1));
    char *p = chunk + 64 * KiB;
    child_announce(p);
    free(p);
}

/* The default library reports it at the free; the fast one, which has no
 * object-start test on free's fast path, when the trim takes the list
 * back to its folio (README, "The fast library"). */
static void interior_pointer(const void *arg __attribute__((unused)))
{
    char *p = malloc(opaque(64));
    char *inside = opaque_ptr(p + 16);
    child_announce(inside);
    free(inside);
    malloc_trim(0);
}

static void realloc_stack_pointer(const void *arg __attribute__((unused)))
{
    char buf[64] = {0};
    char *p = opaque_ptr(buf + 32);
    child_announce(p);
    CHECK(realloc(p, 100) != NULL);
}

struct misuse {
    const char *name;
    const char *call; /* the name the message must give */
    void (*run)(const void *arg);
    const void *arg;
};

static const struct misuse cases[] = {
    {"double free", "free", double_free, 0},
    {"double free after other frees, found by malloc_trim", "free", double_free_later, 0},
#ifndef TEST_FAST_LIBRARY
    /* The fast library gives these up: it finds a double free only where
     * the object heads its list, or when its folio takes it back (README,
     * "The fast library"). */
    {"double free after other frees, then allocations", "free", double_free_then_reuse, 0},
    {"the same in a thread no longer new", "malloc", double_free_then_reuse, "old"},
#endif
    {"free of a stack address", "free", stack_pointer, 0},
    {"free in a chunk-aligned foreign mapping", "free", foreign_chunk, 0},
    {"free of an interior pointer", "free", interior_pointer, 0},
    {"realloc of a stack address", "realloc", realloc_stack_pointer, 0},
};

/* A case run with a cancellation pending: the report is no cancellation
 * point, so the thread cannot end inside it, silently, holding a lock. */
static void cancel_pending(const void *arg)
{
    const struct misuse *m = arg;
    CHECK(pthread_cancel(pthread_self()) == 0);
    m->run(m->arg);
}

/* Returns 1 if the case behaved, printing what went wrong otherwise. */
static int run_case(const struct misuse *m, int cancelled)
{
    struct child_outcome out;
    if (cancelled)
        child_run(cancel_pending, m, CASE_SECONDS, &out);
    else
        child_run(m->run, m->arg, CASE_SECONDS, &out);
    int ok = 1;
    if (!WIFSIGNALED(out.status) || WTERMSIG(out.status) != SIGABRT) {
        printf("%s%s: child was not killed by SIGABRT (%s)\n", m->name,
               cancelled ? ", cancellation pending" : "", child_status_text(out.status));
        ok = 0;
    }
    /* One line: "primalloc: <call>(<pointer>): <what>\n". */
    char call[64] = "", what[512] = "";
    uintptr_t said = 0;
    int fields = sscanf(out.err, "primalloc: %63[^(](%" SCNxPTR "): %511[^\n]", call, &said,
                        what);
    char *nl = strchr(out.err, '\n');
    if (fields != 3 || !nl || nl[1] != 0 || strcmp(call, m->call) != 0 || !out.announced ||
        said != out.ptr) {
        printf("%s%s: expected one line \"primalloc: %s(%#" PRIxPTR "): ...\", got \"%s\"\n",
               m->name, cancelled ? ", cancellation pending" : "", m->call, out.ptr, out.err);
        ok = 0;
    }
    return ok;
}

/* malloc_stats with a cancellation pending prints its whole table and
 * returns (glibc's tst-malloc-stats-cancellation). */
static void stats_cancel_pending(const void *arg __attribute__((unused)))
{
    free(malloc(opaque(100)));
    CHECK(pthread_cancel(pthread_self()) == 0);
    malloc_stats();
    _exit(7);
}

static int stats_not_cancelled(void)
{
    struct child_outcome out;
    child_run(stats_cancel_pending, NULL, CASE_SECONDS, &out);
    if (WIFEXITED(out.status) && WEXITSTATUS(out.status) == 7 && strstr(out.err, "primalloc"))
        return 1;
    printf("malloc_stats, cancellation pending: %s, stderr \"%s\"\n", child_status_text(out.status),
           out.err);
    return 0;
}

int main(void)
{
    size_t n = sizeof cases / sizeof cases[0];
    int failed = 0;
    for (size_t i = 0; i < n; i++)
        failed += !run_case(&cases[i], 0) + !run_case(&cases[i], 1);
    failed += !stats_not_cancelled();
    CHECK_MSG(failed == 0, "%d of %zu misuse cases misbehaved", failed, 2 * n + 1);
    return 0;
}
