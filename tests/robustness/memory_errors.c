/* SPDX-License-Identifier: MIT */
/* Memory errors of the kinds glibc's checks catch: overflows into a free
 * neighbour, writes after free, underflows and overflows reaching a large
 * object's canary, a free of a pointer inside an object, a store into
 * pages a bin's chunk has not mapped, any access to a zero-size object
 * and its double free.  `memory_errors
 * CASE` runs one case in a child, which must die of SIGABRT after exactly
 * one line "primalloc: <call>(0x<ptr>): <what>", ptr being the pointer the
 * case announces; with no argument it lists the cases.  The guard_ cases
 * run with PRIMALLOC_GUARD_RATE=1, every object sampled: an access past
 * or after the object, or just before a page-aligned one, faults, an
 * underflow into the object's first page is found by its free, and the
 * report names the object. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <malloc.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"
#include "child.h"

/* A small size whose bin the C library leaves unused before main (musl's
 * pthread_atfork takes a 48-byte object), so that its first chunk in the
 * child is one pool_whole_chunks leaves. */
#define SMALL 64
#define MEDIUM 4096
/* A large size whose slot is 25 pages at any line offset: the slot a free
 * leaves first in its bin's list is the one the next malloc takes. */
#define LARGE (24 * 4096 + 1)
/* A large size that a sampled object fills to its guard page. */
#define LARGE_GUARDED (24 * 4096 + 16)
#define CHUNK (2 * MiB)

/* C++'s operator new and delete, by their mangled names: their fast paths
 * are their own (src/cxx_operators.c). */
void *_Znwm(size_t size);
void _ZdlPv(void *p);

static const char LINK[] = "corrupted free-list link";
static const char BEFORE[] = "memory before the object overwritten, or a pointer inside it";
static const char AFTER_FREE[] = "large object written after it was freed";
static const char INTERIOR[] = "pointer inside an object, not at its start";
static const char DOUBLE[] = "double free";
/* A fault's report names the access a read or a write where the
 * architecture layer tells which (x86-64), else an access. */
#if defined(__x86_64__)
#define ACCESS(read, write) write
#else
#define ACCESS(read, write) read
#endif
static const char NO_OBJECT[] = ACCESS("access", "write") " where no object is: an overflow, underflow or stray pointer";
static const char READ_OF_ZERO[] = ACCESS("access to", "read of") " a zero-size object";
static const char WRITE_TO_ZERO[] = ACCESS("access to", "write to") " a zero-size object";

/* 'A' bytes to overflow with, as a copy from a program's buffer would. */
static char source[MiB + 64];

/* A huge object allocated and freed leaves whole chunks in the pool, which
 * a bin takes before it maps a partial one (src/chunk_pool.h): the bytes
 * an overflow of a megabyte reaches past an object are then mapped, as in
 * a program that has run a while, not beyond what a fresh chunk maps,
 * where the overflow faults before any check. */
static void pool_whole_chunks(void)
{
    free(opaque_ptr(malloc(opaque(16 * MiB))));
}

/* Two neighbours a, b (b right after a's usable bytes), a far enough from
 * its chunk's end that `reach` bytes past it stay in the chunk. */
static void neighbours(size_t size, size_t reach, char **a, char **b)
{
    pool_whole_chunks();
    char *prev = malloc(opaque(size));
    for (int i = 0; i < 1000; i++) {
        char *next = malloc(opaque(size));
        CHECK(prev && next);
        if (next == prev + malloc_usable_size(prev) &&
            ((uintptr_t)prev & (CHUNK - 1)) + reach < CHUNK) {
            *a = prev;
            *b = next;
            return;
        }
        prev = next;
    }
    CHECK_MSG(0, "no neighbours of %zu bytes found", size);
}

/* arg: object size, bytes written past its end, whether by memcpy.  The
 * neighbour is free: the overflow overwrites its link, found by the next
 * malloc that takes it. */
static void overflow_into_free(const void *arg)
{
    const size_t *s = arg;
    char *a, *b;
    neighbours(s[0], s[0] + s[1], &a, &b);
    size_t n = malloc_usable_size(a);
    free(b);
    child_announce(b);
    if (s[2])
        memcpy(a, source, n + s[1]);
    else
        for (size_t i = 0; i < n + s[1]; i++)
            ((volatile char *)a)[i] = 'A';
    malloc(opaque(s[0]));
}

/* arg: object size, byte written.  The freed object is first in its list:
 * the next malloc of its size takes it and decodes its link. */
static void write_after_free(const void *arg)
{
    const size_t *s = arg;
    char *p = malloc(opaque(s[0]));
    CHECK(p);
    free(p);
    child_announce(p);
    memset(opaque_ptr(p), (int)s[1], s[0]);
    malloc(opaque(s[0]));
}

/* The same through operator new, which finds the link on its slow path. */
static void write_after_delete(const void *arg)
{
    const size_t *s = arg;
    char *p = _Znwm(opaque(s[0]));
    _ZdlPv(p);
    child_announce(p);
    memset(opaque_ptr(p), (int)s[1], s[0]);
    _Znwm(opaque(s[0]));
}

/* arg: bytes changed just before a large object, whether only the
 * farthest of them.  Each is flipped, not set: a byte written with the
 * value it held already (one chance in 256 for a fixed one) changes
 * nothing a canary could see. */
static void large_underflow(const void *arg)
{
    const size_t *s = arg;
    char *p = malloc(opaque(LARGE));
    CHECK(p);
    child_announce(p);
    char *q = opaque_ptr(p);
    for (size_t i = s[1] ? s[0] : 1; i <= s[0]; i++)
        q[-(ptrdiff_t)i] ^= 0x5a;
    free(opaque_ptr(p));
}

/* arg: object size.  p freed, q freed, p freed again: the second free of
 * p is not a repeat of the last free, and the child's thread is new,
 * whose frees look for the object in its lists. */
static void double_free_interleaved(const void *arg)
{
    const size_t *s = arg;
    char *p = malloc(opaque(s[0])), *q = malloc(opaque(s[0]));
    CHECK(p && q);
    free(p);
    free(q);
    child_announce(p);
    free(opaque_ptr(p));
}

/* arg: the size, and whether to store a megabyte past the object (1) or
 * the byte before it (0).  A bin's first object in a fresh process lies
 * in a partial chunk, which maps its first folio and the header pages it
 * needs, not the pages around them: the store lands where the chunk has
 * mapped nothing. */
static void fresh_chunk_outside(const void *arg)
{
    const size_t *s = arg;
    volatile char *p = malloc(opaque(s[0]));
    CHECK(p);
    volatile char *at = s[1] ? p + MiB : p - 1;
    child_announce((void *)at);
    *at = 'A';
}

/* arg: what to do with malloc(0)'s object, a distinct address in an
 * inaccessible chunk: read it, write it, write it after its free, or
 * free it twice. */
enum { ZERO_READ, ZERO_WRITE, ZERO_WRITE_AFTER_FREE, ZERO_FREE_TWICE };

static void zero_size_misuse(const void *arg)
{
    const size_t *s = arg;
    volatile char *p = malloc(opaque(0));
    CHECK(p);
    child_announce((void *)p);
    if (s[0] >= ZERO_WRITE_AFTER_FREE)
        free(opaque_ptr((void *)p));
    if (s[0] == ZERO_READ)
        (void)p[0];
    else if (s[0] == ZERO_FREE_TWICE)
        free(opaque_ptr((void *)p));
    else
        p[0] = 'A';
}

/* arg: byte written over a freed large object, which the next malloc of
 * its size takes back. */
static void large_after_free(const void *arg)
{
    const size_t *s = arg;
    char *p = malloc(opaque(LARGE));
    CHECK(p);
    free(p);
    child_announce(p);
    memset(opaque_ptr(p), (int)s[0], LARGE);
    malloc(opaque(LARGE));
}

/* 1 MiB past a large object reaches its live neighbour's canary, found when
 * the neighbour is freed. */
static void large_overflow(const void *arg)
{
    (void)arg;
    pool_whole_chunks();
    char *a = malloc(opaque(LARGE));
    for (int i = 0; i < 100; i++) {
        char *b = malloc(opaque(LARGE));
        CHECK(a && b);
        if (b > a && b < a + LARGE + MiB && ((uintptr_t)a & (CHUNK - 1)) + LARGE + MiB < CHUNK) {
            child_announce(b);
            memcpy(a, source, LARGE + MiB);
            free(opaque_ptr(b));
            return;
        }
        a = b;
    }
    CHECK_MSG(0, "no large neighbours found");
}

/* arg: object size, offset of the pointer freed.  free finds a large
 * object's slot from the page of the pointer, and only a pointer in the
 * object's first page meets the canary test (one past it is reported as
 * inside an object): the case takes an object whose first page holds the
 * pointer (a large object starts 1 to 63 lines into its page). */
static void free_inside(const void *arg)
{
    const size_t *s = arg;
    char *p;
    do
        CHECK((p = malloc(opaque(s[0]))));
    while (((uintptr_t)p + s[1]) % 4096 < s[1]);
    child_announce(p + s[1]);
    free(opaque_ptr(p + s[1]));
}

/* arg: what to do (OVER, AFTER_FREE_OF, UNDER), the object's size.  A
 * sampled object of a size class's size ends where its guard page
 * starts; one of a page, aligned to a page, starts where the guard page
 * before it ends. */
enum { OVER, AFTER_FREE_OF, UNDER };

static void guarded_access(const void *arg)
{
    const size_t *s = arg;
    char *p = s[1] % 4096 ? malloc(opaque(s[1])) : aligned_alloc(4096, opaque(s[1]));
    CHECK(p && malloc_usable_size(p) == s[1]);
    child_announce(p);
    if (s[0] == AFTER_FREE_OF)
        free(p);
    ((volatile char *)p)[s[0] == OVER ? (ptrdiff_t)s[1] : s[0] == UNDER ? -1 : 0] = 'A';
    free(p);
}

struct error_case {
    const char *name;
    void (*run)(const void *arg);
    size_t arg[3];
    const char *call;
    const char *what;
};

static const struct error_case cases[] = {
    {"small_overflow_32_store", overflow_into_free, {SMALL, 32, 0}, "malloc", LINK},
    {"small_overflow_32_memcpy", overflow_into_free, {SMALL, 32, 1}, "malloc", LINK},
    {"small_overflow_1m_store", overflow_into_free, {SMALL, MiB, 0}, "malloc", LINK},
    {"small_overflow_1m_memcpy", overflow_into_free, {SMALL, MiB, 1}, "malloc", LINK},
    {"medium_overflow_32_store", overflow_into_free, {MEDIUM, 32, 0}, "malloc", LINK},
    {"medium_overflow_32_memcpy", overflow_into_free, {MEDIUM, 32, 1}, "malloc", LINK},
    {"medium_overflow_1m_memcpy", overflow_into_free, {MEDIUM, MiB, 1}, "malloc", LINK},
    {"small_write_after_free", write_after_free, {SMALL, 'A'}, "malloc", LINK},
    {"small_zero_after_free", write_after_free, {SMALL, 0}, "malloc", LINK},
    {"medium_write_after_free", write_after_free, {MEDIUM, 'A'}, "malloc", LINK},
    {"medium_zero_after_free", write_after_free, {MEDIUM, 0}, "malloc", LINK},
    {"small_write_after_delete", write_after_delete, {SMALL, 'A'}, "operator new", LINK},
    {"large_underflow_1", large_underflow, {1}, "free", BEFORE},
    {"large_underflow_32", large_underflow, {32}, "free", BEFORE},
    {"large_underflow_32_only", large_underflow, {32, 1}, "free", BEFORE},
    {"small_double_free_interleaved", double_free_interleaved, {SMALL}, "free", DOUBLE},
    {"medium_double_free_interleaved", double_free_interleaved, {MEDIUM}, "free", DOUBLE},
    {"small_overflow_1m_unmapped", fresh_chunk_outside, {SMALL, 1}, "access", NO_OBJECT},
    {"medium_underflow_1_unmapped", fresh_chunk_outside, {MEDIUM, 0}, "access", NO_OBJECT},
    {"zero_size_read", zero_size_misuse, {ZERO_READ}, "access", READ_OF_ZERO},
    {"zero_size_write", zero_size_misuse, {ZERO_WRITE}, "access", WRITE_TO_ZERO},
    {"zero_size_write_after_free", zero_size_misuse, {ZERO_WRITE_AFTER_FREE}, "access", WRITE_TO_ZERO},
    {"zero_size_double_free", zero_size_misuse, {ZERO_FREE_TWICE}, "free", DOUBLE},
    {"large_write_after_free", large_after_free, {'A'}, "malloc", AFTER_FREE},
    {"large_zero_after_free", large_after_free, {0}, "malloc", AFTER_FREE},
    {"large_overflow_1m_memcpy", large_overflow, {0}, "free", BEFORE},
    {"small_free_inside_16", free_inside, {SMALL, 16}, "free", INTERIOR},
    {"large_free_inside_64", free_inside, {LARGE, 64}, "free", BEFORE},
    {"guard_overflow_1", guarded_access, {OVER, 64}, "access", "overflow past"},
    {"guard_use_after_free", guarded_access, {AFTER_FREE_OF, 64}, "access", "use after free of"},
    {"guard_underflow_1", guarded_access, {UNDER, 64}, "free", "underflow before"},
    {"guard_underflow_1_page", guarded_access, {UNDER, 4096}, "access", "underflow before"},
    {"guard_large_first", guarded_access, {OVER, LARGE_GUARDED}, "access", "overflow past"},
};

/* A sampled object's report: "primalloc: <call>(0x<addr>): <what> sampled
 * object 0x<ptr> of <size> bytes, allocated from <site>[, freed from
 * <site>][, at <site>]", one line.  Each site is this program's file and
 * an address in it ("<path>+0x<offset> (0x<address>)"): where it
 * allocated, freed (a use after free) and, for a fault, faulted.
 * guard_addr2line.sh looks the sites up. */
static int guard_report(const struct error_case *c, const struct child_outcome *o)
{
    char call[64], want[256], exe[256], site[300];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    CHECK(n > 0);
    exe[n] = 0;
    snprintf(call, sizeof call, "primalloc: %s(0x", c->call);
    snprintf(want, sizeof want, "): %s sampled object %#" PRIxPTR " of %zu bytes, allocated from %s+0x",
             c->what, o->ptr, c->arg[1], exe);
    snprintf(site, sizeof site, "%s+0x", exe);
    const char *at = strstr(o->err, want), *nl = strchr(o->err, '\n');
    unsigned sites = 0, want_sites = 1 + (c->arg[0] == AFTER_FREE_OF) + !strcmp(c->call, "access");
    for (const char *s = o->err; (s = strstr(s, site)); s++)
        sites++;
    const char *freed = at ? strstr(at, ", freed from ") : 0;
    return !strncmp(o->err, call, strlen(call)) && at && nl && !nl[1] && sites == want_sites &&
           (c->arg[0] != AFTER_FREE_OF || (freed && freed < nl));
}

int main(int argc, char **argv)
{
    size_t n = sizeof cases / sizeof cases[0];
    if (argc < 2) {
        for (size_t i = 0; i < n; i++)
            puts(cases[i].name);
        return 0;
    }
    memset(source, 'A', sizeof source);
    for (size_t i = 0; i < n; i++) {
        const struct error_case *c = &cases[i];
        if (strcmp(argv[1], c->name))
            continue;
        struct child_outcome o;
        child_run(c->run, c->arg, 30, &o);
        char want[256];
        snprintf(want, sizeof want, "primalloc: %s(%#" PRIxPTR "): %s\n", c->call, o.ptr, c->what);
        int aborted = WIFSIGNALED(o.status) && WTERMSIG(o.status) == SIGABRT;
        printf("%s; stderr: %s", child_status_text(o.status), o.err[0] ? o.err : "(nothing)\n");
        int guarded = !strncmp(c->name, "guard_", 6);
        int reported = guarded ? guard_report(c, &o) : !strcmp(o.err, want);
        CHECK_MSG(aborted && o.announced && reported, "expected SIGABRT and: %s",
                  guarded ? c->what : want);
        return 0;
    }
    CHECK_MSG(0, "no case %s", argv[1]);
}
