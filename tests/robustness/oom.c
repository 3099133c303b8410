/* SPDX-License-Identifier: MIT */
/* Out of memory under RLIMIT_AS.  Each case runs in a child whose address
 * space is limited to its VmSize plus HEADROOM, fills it through one
 * allocation function and one size category until the function fails, and
 * requires:
 *  - NULL (posix_memalign: ENOMEM returned) with errno ENOMEM;
 *  - every object obtained still intact, none overlapping another;
 *  - once all are freed, the same function gets at least as many again;
 *  - no lock left held: a thread started before the limit allocates, and a
 *    fork (which takes every allocator lock) works; a hang ends as SIGALRM.
 * These children stay on one CPU, so that every freed object is within
 * reach of the per-CPU cache they allocate from.  Separate cases: objects
 * freed on one CPU serve a thread that moved to another, a failing realloc
 * keeps the object, memory freed by huge objects serves other categories,
 * and a first allocation of a fresh process under the limit fails
 * cleanly. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include "malloc_ext.h"
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"
#include "child.h"
#include "limit.h"

#define HEADROOM (64 * MiB)
/* Far more objects than HEADROOM can hold: a function that never fails is
 * reported instead of looping on. */
#define MAX_OBJECTS (HEADROOM / 16 + 1)

enum fn { MALLOC, CALLOC, REALLOC, REALLOCARRAY, POSIX_MEMALIGN, ALIGNED_ALLOC, MEMALIGN, VALLOC,
          PVALLOC, NFN };
static const char *const fn_names[NFN] = {"malloc", "calloc", "realloc", "reallocarray",
                                          "posix_memalign", "aligned_alloc", "memalign",
                                          "valloc", "pvalloc"};
static const size_t sizes[] = {64, 4000, 200000, 8 * MiB}; /* one per category */

struct oom_case {
    enum fn fn;
    size_t size;
};

/* Calls the function; returns the object, or NULL with errno as it left
 * it (for posix_memalign, its return value). */
static void *call(enum fn fn, size_t size)
{
    void *p = NULL;
    int rc;
    switch (fn) {
    case MALLOC: return malloc(size);
    case CALLOC:
        p = calloc(size / 16, 16);
        CHECK_MSG(!p || nonzero_at(p, size) == 0, "calloc(%zu) not zeroed", size);
        return p;
    case REALLOC: return realloc(NULL, size);
    case REALLOCARRAY: return reallocarray(NULL, size / 16, 16);
    case POSIX_MEMALIGN:
        errno = 0;
        rc = posix_memalign(&p, 256, size);
        CHECK_MSG(rc == 0 || rc == ENOMEM, "posix_memalign returned %d", rc);
        CHECK_MSG(errno == 0, "posix_memalign changed errno to %d", errno);
        errno = rc;
        return rc ? NULL : p;
    case ALIGNED_ALLOC: return aligned_alloc(256, size);
    case MEMALIGN: return memalign(256, size);
    case VALLOC: return valloc(size);
    case PVALLOC: return pvalloc(size);
    case NFN: break;
    }
    return NULL;
}

static size_t alignment_of(enum fn fn)
{
    return fn == VALLOC || fn == PVALLOC ? 4096 : fn >= POSIX_MEMALIGN ? 256 : 16;
}

/* Objects are kept on a list through their first word; the second and
 * last words hold the object's number, so overlaps and stray writes show. */
struct pile {
    void *head;
    size_t count;
};

static void stamp(void *p, size_t size, size_t n, void *next)
{
    uint64_t mark = n * 0x9e3779b97f4a7c15ull;
    memcpy(p, &next, 8);
    memcpy((char *)p + 8, &mark, 8);
    memcpy((char *)p + size - 8, &mark, 8);
}

static void *check_stamp(void *p, size_t size, size_t n)
{
    uint64_t mark = n * 0x9e3779b97f4a7c15ull, a, b;
    void *next;
    memcpy(&next, p, 8);
    memcpy(&a, (char *)p + 8, 8);
    memcpy(&b, (char *)p + size - 8, 8);
    CHECK_MSG(a == mark && b == mark, "object %zu at %p overwritten", n, p);
    return next;
}

/* Allocates until the function fails, which it must do with ENOMEM;
 * perhaps at once. */
static struct pile fill_rest(enum fn fn, size_t size)
{
    struct pile pile = {NULL, 0};
    for (;;) {
        errno = 0;
        void *p = call(fn, size);
        if (!p)
            break;
        CHECK_MSG((uintptr_t)p % alignment_of(fn) == 0, "%s(%zu) gave %p, misaligned",
                  fn_names[fn], size, p);
        CHECK(malloc_usable_size(p) >= size);
        stamp(p, size, pile.count++, pile.head);
        pile.head = p;
        CHECK_MSG(pile.count < MAX_OBJECTS, "%s(%zu) never ran out", fn_names[fn], size);
    }
    CHECK_MSG(errno == ENOMEM, "%s(%zu) failed with errno %d, not ENOMEM", fn_names[fn], size,
              errno);
    return pile;
}

/* The same, having had at least one object. */
static struct pile fill(enum fn fn, size_t size)
{
    struct pile pile = fill_rest(fn, size);
    CHECK_MSG(pile.count > 0, "%s(%zu) failed at once", fn_names[fn], size);
    return pile;
}

static void release(struct pile *pile, size_t size)
{
    for (void *p = pile->head; p; pile->count--) {
        void *next = check_stamp(p, size, pile->count - 1);
        free(p);
        p = next;
    }
    CHECK(pile->count == 0);
    pile->head = NULL;
}

/* A thread started before the limit, woken afterwards to allocate. */
struct helper {
    pthread_t thread;
    sem_t go, done;
    enum fn fn;
    size_t size;
};

static void *helper_main(void *arg)
{
    struct helper *h = arg;
    while (sem_wait(&h->go) != 0)
        ;
    void *p = call(h->fn, h->size);
    CHECK_MSG(p != NULL, "another thread's %s(%zu) failed after memory was freed",
              fn_names[h->fn], h->size);
    memset(p, 1, h->size);
    free(p);
    sem_post(&h->done);
    return NULL;
}

static void fork_and_allocate(enum fn fn, size_t size)
{
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        void *p = call(fn, size);
        free(p);
        _exit(p ? 0 : 3);
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "child forked after running out of memory: %s", child_status_text(status));
}

/* Moves the calling thread to the nth CPU it may run on (counting from
 * 0), or to the last one if there are fewer. */
static void pin_to_cpu(int nth)
{
    cpu_set_t allowed, one;
    CHECK(sched_getaffinity(0, sizeof allowed, &allowed) == 0);
    int cpu = -1;
    for (int i = 0; i < CPU_SETSIZE && nth >= 0; i++)
        if (CPU_ISSET(i, &allowed)) {
            cpu = i;
            nth--;
        }
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    CHECK(sched_setaffinity(0, sizeof one, &one) == 0);
}

static void exhaust(const void *arg)
{
    const struct oom_case *c = arg;
    pin_to_cpu(0);
    struct helper h = {.fn = c->fn, .size = c->size};
    CHECK(sem_init(&h.go, 0, 0) == 0 && sem_init(&h.done, 0, 0) == 0);
    CHECK(pthread_create(&h.thread, NULL, helper_main, &h) == 0);

    limit_address_space(HEADROOM);
    struct pile first = fill(c->fn, c->size);
    size_t got = first.count;
    release(&first, c->size);
    struct pile again = fill(c->fn, c->size);
    CHECK_MSG(again.count >= got, "%s(%zu): %zu objects at first, only %zu after freeing them",
              fn_names[c->fn], c->size, got, again.count);
    size_t regained = again.count;
    release(&again, c->size);

    sem_post(&h.go);
    while (sem_wait(&h.done) != 0)
        ;
    CHECK(pthread_join(h.thread, NULL) == 0);
    fork_and_allocate(c->fn, c->size);
    printf("%s(%zu): NULL/ENOMEM after %zu objects, %zu again after freeing\n",
           fn_names[c->fn], c->size, got, regained);
}

/* A thread that frees everything and then runs on another CPU must get
 * its objects back before being told there is no memory. */
static void freed_on_other_cpu(const void *arg)
{
    (void)arg;
    pin_to_cpu(0);
    limit_address_space(HEADROOM);
    struct pile first = fill(MALLOC, 64);
    size_t got = first.count;
    release(&first, 64);
    pin_to_cpu(1);
    struct pile again = fill(MALLOC, 64);
    CHECK_MSG(again.count >= got, "malloc(64): %zu objects at first, only %zu after freeing "
              "them and moving to another CPU", got, again.count);
    release(&again, 64);
}

/* A realloc that cannot grow returns NULL and leaves the object alone,
 * for objects of each category. */
static void realloc_keeps(const void *arg)
{
    (void)arg;
    limit_address_space(HEADROOM);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t size = sizes[i];
        char *p = malloc(size);
        CHECK(p != NULL);
        fill_pattern(p, size, i);
        errno = 0;
        CHECK_MSG(realloc(p, 2 * HEADROOM) == NULL && errno == ENOMEM,
                  "realloc(%zu -> %zu) did not fail with ENOMEM", size, 2 * HEADROOM);
        errno = 0;
        CHECK(reallocarray(p, 2, HEADROOM) == NULL && errno == ENOMEM);
        CHECK_PATTERN(p, size, i);
        char *q = realloc(p, size + 100);
        CHECK(q != NULL);
        CHECK_PATTERN(q, size, i);
        free(q);
    }
}

/* Huge objects' memory, once freed, must be usable by the other
 * categories: a program that frees its big buffers may then want many
 * medium ones.  Medium objects first take all the rest, if any, so that
 * only the huge objects' memory can serve the later ones. */
static void huge_then_others(const void *arg)
{
    (void)arg;
    limit_address_space(HEADROOM);
    struct pile huge = fill(MALLOC, 8 * MiB);
    struct pile medium = fill_rest(MALLOC, 4000);
    size_t got = huge.count;
    release(&huge, 8 * MiB);
    /* Half of what the huge objects held. */
    size_t want = got * 8 * MiB / 2 / 4000;
    for (size_t n = 0; n < want; n++) {
        void *p = malloc(4000);
        CHECK_MSG(p != NULL, "after freeing %zu huge objects (%zu MiB), medium object %zu of "
                  "%zu failed", got, got * 8, n, want);
        stamp(p, 4000, medium.count++, medium.head);
        medium.head = p;
    }
    release(&medium, 4000);
    printf("huge then medium: %zu huge objects freed, then %zu more medium objects\n", got, want);
}

/* A fresh process whose very first allocation meets the limit: primalloc
 * has set up nothing yet.  Run by exec, so no state comes from a parent. */
static int first_allocation_under_limit(void)
{
    limit_address_space(0);
    errno = 0;
    void *p = malloc(100);
    CHECK_MSG(p == NULL && errno == ENOMEM, "first malloc under a full limit: %p, errno %d", p,
              errno);
    unlimit_address_space();
    p = malloc(100);
    CHECK_MSG(p != NULL, "malloc failed once the limit was lifted");
    memset(p, 1, 100);
    free(p);
    return 0;
}

static const char *self;

static void exec_fresh(const void *arg)
{
    (void)arg;
    execl(self, self, "fresh", (char *)NULL);
    check_failed(__FILE__, __LINE__, "exec %s failed", self);
}

static int expect_clean(const char *name, void (*fn)(const void *), const void *arg)
{
    struct child_outcome o;
    child_run(fn, arg, 120, &o);
    int ok = WIFEXITED(o.status) && WEXITSTATUS(o.status) == 0 && !o.err[0];
    if (!ok)
        printf("FAIL %s: %s; stderr: %s\n", name, child_status_text(o.status), o.err);
    return ok;
}

/* With no argument, every case but the fresh process; with
 * "fresh-process", that case alone (in a C library that allocates while
 * the library registers its fork handlers, the program's first malloc is
 * not primalloc's first). */
int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "fresh") == 0)
        return first_allocation_under_limit();
    self = argv[0];
    if (argc > 1 && strcmp(argv[1], "fresh-process") == 0) {
        CHECK_MSG(expect_clean("first allocation of a fresh process", exec_fresh, NULL), "fresh process");
        return 0;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* Set up the allocator's caches before any limit, as a program would
     * have done long before running out of memory. */
    free(malloc(16));
    int failed = 0, total = 0;
    for (enum fn fn = 0; fn < NFN; fn++)
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            struct oom_case c = {fn, sizes[i]};
            char name[64];
            snprintf(name, sizeof name, "%s(%zu)", fn_names[fn], sizes[i]);
            failed += !expect_clean(name, exhaust, &c);
            total++;
        }
    failed += !expect_clean("objects freed on another CPU", freed_on_other_cpu, NULL);
    failed += !expect_clean("realloc keeps the object", realloc_keeps, NULL);
    failed += !expect_clean("huge memory freed serves medium objects", huge_then_others, NULL);
    total += 3;
    CHECK_MSG(failed == 0, "%d of %d out-of-memory cases failed", failed, total);
    return 0;
}
