/* SPDX-License-Identifier: MIT */
/* Address space that comes back (the chunk pool).  Each case runs in a
 * child:
 *  - a fresh process started under `ulimit -v` and under `ulimit -d` of
 *    200 MiB makes 16 threads, allocates until ENOMEM, frees, and gets as
 *    much again;
 *  - a program that fills memory with one size, frees it and moves on to
 *    the next size finishes under an address-space limit of twice what it
 *    fills (memory freed by one size class serves the next);
 *  - allocate+free cycles with alignments above a chunk keep the virtual
 *    size and the mapping count flat;
 *  - a huge object bigger than any freed one reuses their pages: writing
 *    it takes almost no page faults;
 *  - a huge object grown in place by realloc and freed leaves the
 *    footprint's high-water mark sane (it used to wrap below zero);
 *  - a pointer into a chunk that went back to the pool, or to the kernel,
 *    is reported as freed;
 *  - glibc's tst-dynarray-fail, in a fresh process: under a limit of the
 *    footprint plus 2 MiB, sizes not asked for before are served, and
 *    arrays grown until realloc fails and heaps filled until malloc fails
 *    leave, once freed, room for what the test allocates next. */
#define _GNU_SOURCE
#include <errno.h>
#include "malloc_ext.h"
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

#define LIMIT (200 * MiB)

static void *touch_a_little(void *arg)
{
    (void)arg;
    for (int i = 0; i < 100; i++) {
        char *p = malloc(64 + 100 * (size_t)i);
        CHECK(p);
        p[0] = 1;
        free(p);
    }
    return NULL;
}

/* Blocks of `size` kept on a list through their first word, until malloc
 * fails; that must be with ENOMEM.  Returns how many. */
static size_t fill_until_enomem(size_t size, void **head)
{
    size_t n = 0;
    for (;;) {
        errno = 0;
        void **p = malloc(size);
        if (!p)
            break;
        *p = *head;
        *head = p;
        n++;
    }
    CHECK_MSG(errno == ENOMEM, "malloc(%zu) failed with errno %d", size, errno);
    return n;
}

static void free_list(void *head)
{
    while (head) {
        void *next = *(void **)head;
        free(head);
        head = next;
    }
}

/* Runs in a process exec'd under the limit.  The threads' stacks are 1 MiB:
 * sixteen default stacks of 8 MiB take 128 MiB of the limit whenever the
 * threads overlap, which depends on the scheduler, and leave less than
 * the 2 MiB chunk that each size class the threads touch needs. */
static int limited_run(void)
{
    pthread_t t[16];
    pthread_attr_t attr;
    CHECK(pthread_attr_init(&attr) == 0);
    CHECK(pthread_attr_setstacksize(&attr, MiB) == 0);
    for (int i = 0; i < 16; i++)
        CHECK(pthread_create(&t[i], &attr, touch_a_little, NULL) == 0);
    CHECK(pthread_attr_destroy(&attr) == 0);
    for (int i = 0; i < 16; i++)
        CHECK(pthread_join(t[i], NULL) == 0);
    /* What is left of the limit must mostly serve: a huge object of 3 MiB
     * takes two chunks. */
    size_t room = LIMIT - vm_size();
    const size_t sizes[] = {3 * MiB, 100 * 1024, 4000, 48};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        void *head = NULL;
        size_t first = fill_until_enomem(sizes[k], &head);
        CHECK_MSG(first * sizes[k] > room / 2, "only %zu blocks of %zu in %zu bytes", first,
                  sizes[k], room);
        free_list(head);
        head = NULL;
        size_t again = fill_until_enomem(sizes[k], &head);
        CHECK_MSG(again >= first - first / 10, "%zu blocks of %zu, then only %zu", first,
                  sizes[k], again);
        free_list(head);
    }
    return 0;
}

static const char *self;

/* Starts this program afresh under the limit on `resource`. */
static void start_limited(const void *arg)
{
    int resource = *(const int *)arg;
    struct rlimit r = {LIMIT, LIMIT};
    CHECK(setrlimit(resource, &r) == 0);
    execl(self, self, "--limited", (char *)NULL);
    CHECK_MSG(0, "exec %s: %s", self, strerror(errno));
}

#define PHASE_BYTES (64 * MiB)

static void phases(const void *arg)
{
    (void)arg;
    static const size_t sizes[] = {24, 40, 72, 136, 264, 520, 1032, 2056, 4104, 16400, 65560, 200000};
    limit_address_space(2 * PHASE_BYTES);
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        void *head = NULL;
        for (size_t n = 0; n < PHASE_BYTES / sizes[k]; n++) {
            void **p = malloc(sizes[k]);
            CHECK_MSG(p, "phase %zu: malloc(%zu) failed after %zu objects", k, sizes[k], n);
            *p = head;
            head = p;
        }
        free_list(head);
    }
}

static size_t mappings(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    CHECK(f);
    size_t n = 0;
    for (int c; (c = fgetc(f)) != EOF;)
        n += c == '\n';
    fclose(f);
    return n;
}

/* The address space held at any time is what the largest alignment asks
 * for, the object, and a little: never what earlier cycles left over
 * (a page left behind by each of the 100,000 cycles would pass the bound
 * four times over).  VmSize is sampled without allocating, so that nothing but the cycles
 * runs between samples. */
static void aligned_cycles(const void *arg)
{
    (void)arg;
    const size_t bound = vm_size() + 64 * MiB + 3 * MiB + 16 * MiB;
    size_t most = 0, maps = 0;
    for (long i = 0; i < 100000; i++) {
        size_t align = (size_t)4 << (i % 3 * 2 + 20); /* 4, 16 and 64 MiB */
        void *p = aligned_alloc(align, 3 * MiB);
        CHECK(p && (uintptr_t)p % align == 0);
        free(p);
        if (i % 1000 == 999) {
            size_t vm = vm_size();
            most = vm > most ? vm : most;
        }
        if (i == 1000)
            maps = mappings();
    }
    CHECK_MSG(most <= bound, "VmSize reached %zu, over %zu", most, bound);
    CHECK_MSG(mappings() <= maps + 4, "mappings grew from %zu to %zu", maps, mappings());
}

/* Two freed huge objects, each between live ones, and a new object as big
 * as both: fresh pages would cost a fault a huge page at least. */
static void huge_pages_reused(const void *arg)
{
    (void)arg;
    enum { N = 5 };
    const size_t size = 6 * MiB;
    const long huge_pages = (long)(2 * size / (2 * MiB));
    char *p[N];
    for (int i = 0; i < N; i++) {
        CHECK((p[i] = malloc(size)));
        memset(p[i], i + 1, size);
    }
    free(p[1]);
    free(p[3]);
    char *q = malloc(2 * size);
    CHECK(q);
    long before = minor_faults();
    memset(q, 7, 2 * size);
    long faults = minor_faults() - before;
    CHECK_MSG(faults < huge_pages, "%ld page faults writing %zu MiB", faults, 2 * size / MiB);
    free(q);
    for (int i = 0; i < N; i += 2)
        free(p[i]);
}

static void huge_realloc_footprint(const void *arg)
{
    (void)arg;
    char *p = malloc(3 * MiB);
    CHECK(p);
    CHECK(realloc(p, 4 * MiB) == p);
    free(p);
    struct mallinfo2 m = mallinfo2();
    CHECK_MSG(m.usmblks < 64 * MiB, "high-water mark %zu after a 4 MiB object", m.usmblks);
}

#define MEDIUM 7000

/* Frees, once more, a pointer into chunks whose objects were all freed and
 * that malloc_trim gave back to the kernel: enough medium objects fill
 * more than one chunk, and only the last carved stays with its bin. */
static void free_into_returned_chunk(const void *arg)
{
    (void)arg;
    enum { N = 3 * 2 * MiB / MEDIUM };
    static char *objs[N];
    for (int i = 0; i < N; i++)
        CHECK((objs[i] = malloc(MEDIUM)));
    for (int i = 0; i < N; i++)
        free(objs[i]);
    malloc_trim(0);
    child_announce(objs[0]);
    free(opaque_ptr(objs[0]));
}

/* Frees a pointer into the second chunk of a freed huge object, whose run
 * is in the pool. */
static void free_into_pooled_chunk(const void *arg)
{
    (void)arg;
    char *p = malloc(5 * MiB);
    CHECK(p);
    free(p);
    child_announce(p + 2 * MiB);
    free(opaque_ptr(p + 2 * MiB));
}

/* tst-dynarray-fail's fill_heap: objects of a page and a word, then of a
 * word, until malloc fails. */
static void *fill_heap(void)
{
    void *head = NULL;
    for (size_t pad = 4096;;) {
        void **p = malloc(sizeof(void *) + pad);
        if (!p && pad) {
            pad = 0;
            continue;
        }
        if (!p)
            return head;
        *p = head;
        head = p;
    }
}

static int dynarray_run(void)
{
    free(malloc(16));
    limit_address_space(2 * MiB);
    static const size_t fresh[] = {40, 200, 1000, 3000, 9000, 40000};
    void *p[sizeof fresh / sizeof fresh[0]];
    for (size_t k = 0; k < sizeof fresh / sizeof fresh[0]; k++)
        CHECK_MSG((p[k] = malloc(fresh[k])), "malloc(%zu), a new size, failed under the footprint plus 2 MiB",
                  fresh[k]);
    for (size_t k = 0; k < sizeof fresh / sizeof fresh[0]; k++)
        free(p[k]);
    for (int round = 0; round < 3; round++) {
        int *a = NULL;
        for (size_t n = 16;; n *= 2) {
            int *b = realloc(a, n * sizeof *a);
            if (!b)
                break;
            a = b;
            a[n - 1] = 1;
        }
        free(a);
        free_list(fill_heap());
        int *ints = malloc(10000 * sizeof *ints);
        char **strs = malloc(1000 * sizeof *strs);
        CHECK_MSG(ints && strs, "round %d: 10000 ints and 1000 pointers after the heap was freed", round);
        for (int i = 0; i < 1000; i++)
            CHECK_MSG((strs[i] = strdup("placeholder")), "round %d: strdup %d after the heap was freed", round, i);
        void *heap = fill_heap();
        CHECK_MSG(!realloc(ints, 20000 * sizeof *ints), "round %d: realloc grew into a full heap", round);
        free_list(heap);
        for (int i = 0; i < 1000; i++)
            free(strs[i]);
        free(strs);
        free(ints);
    }
    return 0;
}

static void start_dynarray(const void *arg)
{
    (void)arg;
    execl(self, self, "--dynarray", (char *)NULL);
    CHECK_MSG(0, "exec %s: %s", self, strerror(errno));
}

static void expect_ok(const char *name, void (*fn)(const void *), const void *arg)
{
    struct child_outcome o;
    child_run(fn, arg, 240, &o);
    CHECK_MSG(WIFEXITED(o.status) && WEXITSTATUS(o.status) == 0, "%s: %s; stderr: %s", name,
              child_status_text(o.status), o.err);
    printf("ok   %s\n", name);
}

static void expect_freed(const char *name, void (*fn)(const void *))
{
    struct child_outcome o;
    child_run(fn, NULL, 60, &o);
    CHECK_MSG(WIFSIGNALED(o.status) && WTERMSIG(o.status) == SIGABRT && strstr(o.err, "double free"),
              "%s: %s; stderr: %s", name, child_status_text(o.status), o.err);
    printf("ok   %s\n", name);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--limited"))
        return limited_run();
    if (argc > 1 && !strcmp(argv[1], "--dynarray"))
        return dynarray_run();
    self = argv[0];
    int as = RLIMIT_AS, data = RLIMIT_DATA;
    expect_ok("start-up, 16 threads and allocation to ENOMEM under ulimit -v 200 MiB",
              start_limited, &as);
    expect_ok("start-up, 16 threads and allocation to ENOMEM under ulimit -d 200 MiB",
              start_limited, &data);
    expect_ok("twelve size classes in turn under twice their fill", phases, NULL);
    expect_ok("100,000 aligned huge cycles keep VmSize and mappings flat", aligned_cycles, NULL);
    expect_ok("a huge object bigger than any freed one reuses their pages", huge_pages_reused, NULL);
    expect_ok("a huge realloc in place keeps the footprint true", huge_realloc_footprint, NULL);
    expect_freed("free into a chunk given back to the pool", free_into_pooled_chunk);
    expect_freed("free into a chunk given back to the kernel", free_into_returned_chunk);
    expect_ok("tst-dynarray-fail's shape: the footprint plus 2 MiB, then new sizes", start_dynarray, NULL);
    return 0;
}
