/* SPDX-License-Identifier: MIT */
/* Bad input that tests/misuse.c does not cover: double frees of medium,
 * large and huge objects (at once, and the delayed kind found when the
 * object returns to its folio), interior pointers of every category,
 * pointers primalloc never handed out, realloc and malloc_usable_size of a
 * freed pointer, and free_sized / free_aligned_sized whose size or
 * alignment cannot be right.  Each case runs in a child that must die of
 * SIGABRT after exactly one line "primalloc: <call>(0x<ptr>): <what>". */
#define _GNU_SOURCE
#include <inttypes.h>
#include "malloc_ext.h"
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"
#include "child.h"

void free_sized(void *ptr, size_t size);
void free_aligned_sized(void *ptr, size_t alignment, size_t size);
/* C++'s sized, aligned and sized aligned operator delete, by their
 * mangled names. */
void _ZdlPvm(void *p, size_t size);
void _ZdlPvSt11align_val_t(void *p, size_t align);
void _ZdaPvmSt11align_val_t(void *p, size_t size, size_t align);

#define SMALL 48
#define MEDIUM 4000
#define LARGE 100000
#define HUGE (3 * MiB)

static const char DOUBLE[] = "double free";
static const char FOREIGN[] = "pointer not allocated by primalloc";
static const char INTERIOR[] = "pointer inside an object, not at its start";
static const char FREED[] = "pointer already freed";
static const char TOO_BIG[] = "size larger than the object";
static const char MISALIGNED[] = "pointer not aligned as stated";

/* A filled object: contents make the pages real, as in a program. */
static char *object(size_t size)
{
    char *p = malloc(opaque(size));
    CHECK(p != NULL);
    memset(p, 0x5a, size);
    return p;
}

/* ---- double free, caught at once ---- */

static void double_free(const void *arg)
{
    char *p = object(*(const size_t *)arg);
    free(p);
    child_announce(p);
    free(opaque_ptr(p));
}

/* Huge objects are caught however many frees come between. */
static void double_free_huge_later(const void *arg)
{
    (void)arg;
    char *p = object(HUGE), *q = object(HUGE + 5 * MiB);
    free(p);
    free(q);
    child_announce(p);
    free(opaque_ptr(p));
}

/* ---- double free, caught when the object goes back to its folio ---- */

static void free_twice_among_others(size_t size)
{
    char *p = object(size), *q = object(size), *r = object(size);
    free(p);
    free(q);
    child_announce(p);
    free(opaque_ptr(p));
    free(r);
}

static void double_free_then_trim(const void *arg)
{
    free_twice_among_others(*(const size_t *)arg);
    malloc_trim(0);
}

static void *double_free_thread(void *arg)
{
    free_twice_among_others(*(const size_t *)arg);
    return NULL;
}

/* The thread's cache goes to the shared levels when it exits (unchecked,
 * as a batch), and from there to the folios on malloc_trim. */
static void double_free_then_thread_exit(const void *arg)
{
    pthread_t t;
    CHECK(pthread_create(&t, NULL, double_free_thread, (void *)arg) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    malloc_trim(0);
}

/* ---- pointers into the middle of an object ---- */

/* arg: {size, offset}. */
static void free_interior(const void *arg)
{
    const size_t *a = arg;
    char *p = object(a[0]);
    char *inside = opaque_ptr(p + a[1]);
    child_announce(inside);
    free(inside);
}

static void realloc_interior(const void *arg)
{
    const size_t *a = arg;
    char *p = object(a[0]);
    char *inside = opaque_ptr(p + a[1]);
    child_announce(inside);
    CHECK(realloc(inside, 10) != NULL);
}

/* ---- pointers primalloc never handed out ---- */

static char static_buffer[256];

static void free_static(const void *arg)
{
    (void)arg;
    char *p = opaque_ptr(static_buffer + 64);
    child_announce(p);
    free(p);
}

/* Above the 47-bit user address space the chunk table covers. */
static void free_kernel_address(const void *arg)
{
    (void)arg;
    char *p = opaque_ptr((void *)(uintptr_t)0xffff888000001000ull);
    child_announce(p);
    free(p);
}

/* A glibc-style heap address: from brk, which primalloc never uses (musl
 * refuses to move the break: a static area stands in). */
static void realloc_brk(const void *arg)
{
    (void)arg;
    static char area[4096];
    char *p = sbrk(4096);
    if (p == (void *)-1)
        p = area;
    p = opaque_ptr(p + 16);
    child_announce(p);
    CHECK(realloc(p, 100) != NULL);
}

/* ---- use of a freed pointer ---- */

static void realloc_freed(const void *arg)
{
    char *p = object(*(const size_t *)arg);
    free(p);
    child_announce(p);
    CHECK(realloc(opaque_ptr(p), 64) != NULL);
}

static void usable_size_freed(const void *arg)
{
    char *p = object(*(const size_t *)arg);
    free(p);
    child_announce(p);
    CHECK(malloc_usable_size(opaque_ptr(p)) != 0);
}

/* ---- sizes and alignments that cannot be right ---- */

static void free_sized_too_big(const void *arg)
{
    char *p = object(*(const size_t *)arg);
    child_announce(p);
    free_sized(p, opaque(malloc_usable_size(p) + 1));
}

static void sized_delete_too_big(const void *arg)
{
    char *p = object(*(const size_t *)arg);
    child_announce(p);
    _ZdlPvm(p, opaque(malloc_usable_size(p) + 1));
}

/* A 64-byte aligned object of size bytes, announced. */
static char *aligned_object(size_t size)
{
    char *p = aligned_alloc(64, size);
    CHECK(p != NULL);
    child_announce(p);
    return p;
}

/* A small object, 16-byte aligned but not page-aligned, announced. */
static char *not_page_aligned(void)
{
    char *p = object(SMALL);
    if ((uintptr_t)p % 4096 == 0)
        p = object(SMALL);
    child_announce(p);
    return p;
}

static void free_aligned_sized_too_big(const void *arg)
{
    char *p = aligned_object(*(const size_t *)arg);
    free_aligned_sized(p, 64, opaque(malloc_usable_size(p) + 1));
}

/* An object freed as if it were page-aligned. */
static void free_aligned_sized_misaligned(const void *arg)
{
    (void)arg;
    free_aligned_sized(not_page_aligned(), 4096, SMALL);
}

/* The same through C++'s aligned delete, unsized and sized. */
static void aligned_delete_misaligned(const void *arg)
{
    (void)arg;
    _ZdlPvSt11align_val_t(not_page_aligned(), 4096);
}

static void sized_aligned_delete_too_big(const void *arg)
{
    char *p = aligned_object(*(const size_t *)arg);
    _ZdaPvmSt11align_val_t(p, opaque(malloc_usable_size(p) + 1), 64);
}

struct bad_case {
    const char *name;
    void (*run)(const void *arg);
    size_t arg[2];
    const char *call; /* what the message must name */
    const char *what;
};

static const struct bad_case cases[] = {
    {"double free, medium", double_free, {MEDIUM}, "free", DOUBLE},
    {"double free, large", double_free, {LARGE}, "free", DOUBLE},
    {"double free, huge", double_free, {HUGE}, "free", DOUBLE},
    {"double free, huge, after other frees", double_free_huge_later, {0}, "free", DOUBLE},
    {"double free, small, found by malloc_trim", double_free_then_trim, {SMALL}, "free", DOUBLE},
    {"double free, medium, found by malloc_trim", double_free_then_trim, {MEDIUM}, "free", DOUBLE},
    {"double free, large, found by malloc_trim", double_free_then_trim, {LARGE}, "free", DOUBLE},
    {"double free, small, found after thread exit", double_free_then_thread_exit, {SMALL}, "free",
     DOUBLE},
    {"double free, medium, found after thread exit", double_free_then_thread_exit, {MEDIUM}, "free",
     DOUBLE},
    {"free of a medium interior pointer", free_interior, {MEDIUM, 64}, "free", INTERIOR},
    {"free of a large interior pointer (unaligned)", free_interior, {LARGE, 8}, "free", INTERIOR},
    {"free of a large interior pointer (second page)", free_interior, {LARGE, 4096 + 64}, "free",
     INTERIOR},
    {"free of a huge interior pointer (first chunk)", free_interior, {HUGE, 4096}, "free",
     INTERIOR},
    {"free of a huge interior pointer (second chunk)", free_interior, {HUGE, 2 * MiB}, "free",
     INTERIOR},
    {"realloc of a medium interior pointer", realloc_interior, {MEDIUM, 640}, "realloc",
     INTERIOR},
    {"free of a static array", free_static, {0}, "free", FOREIGN},
    {"free of a kernel-half address", free_kernel_address, {0}, "free", FOREIGN},
    {"realloc of a brk heap address", realloc_brk, {0}, "realloc", FOREIGN},
    {"realloc of a freed small pointer", realloc_freed, {SMALL}, "realloc", FREED},
    {"realloc of a freed medium pointer", realloc_freed, {MEDIUM}, "realloc", FREED},
    {"realloc of a freed large pointer", realloc_freed, {LARGE}, "realloc", FREED},
    {"realloc of a freed huge pointer", realloc_freed, {HUGE}, "realloc", FREED},
    {"malloc_usable_size of a freed medium pointer", usable_size_freed, {MEDIUM},
     "malloc_usable_size", FREED},
    {"free_sized too big, small", free_sized_too_big, {SMALL}, "free_sized", TOO_BIG},
    {"free_sized too big, medium", free_sized_too_big, {MEDIUM}, "free_sized", TOO_BIG},
    {"free_sized too big, large", free_sized_too_big, {LARGE}, "free_sized", TOO_BIG},
    {"free_sized too big, huge", free_sized_too_big, {HUGE}, "free_sized", TOO_BIG},
    {"sized operator delete too big, small", sized_delete_too_big, {SMALL}, "operator delete",
     TOO_BIG},
    {"free_aligned_sized too big, medium", free_aligned_sized_too_big, {MEDIUM},
     "free_aligned_sized", TOO_BIG},
    {"free_aligned_sized with a page alignment the pointer lacks", free_aligned_sized_misaligned,
     {0}, "free_aligned_sized", MISALIGNED},
    {"aligned operator delete with a page alignment the pointer lacks", aligned_delete_misaligned,
     {0}, "operator delete", MISALIGNED},
    {"sized aligned operator delete[] too big, medium", sized_aligned_delete_too_big, {MEDIUM},
     "operator delete", TOO_BIG},
};

/* Returns 1 if the case behaved; prints the outcome either way, so the
 * log doubles as the table of what each bad input did. */
static int run_case(const struct bad_case *c)
{
    struct child_outcome o;
    child_run(c->run, c->arg, 30, &o);
    char want[256];
    snprintf(want, sizeof want, "primalloc: %s(%#" PRIxPTR "): %s\n", c->call, o.ptr, c->what);
    int aborted = WIFSIGNALED(o.status) && WTERMSIG(o.status) == SIGABRT;
    int ok = aborted && o.announced && strcmp(o.err, want) == 0;
    printf("%-4s %-58s %s; stderr: %s%s", ok ? "ok" : "FAIL", c->name,
           child_status_text(o.status), o.err[0] ? o.err : "(nothing)\n",
           ok ? "" : "     expected SIGABRT and: ");
    if (!ok)
        fputs(o.announced ? want : "(the child never reached the misuse)\n", stdout);
    return ok;
}

int main(void)
{
    int failed = 0;
    size_t n = sizeof cases / sizeof cases[0];
    for (size_t i = 0; i < n; i++)
        failed += !run_case(&cases[i]);
    CHECK_MSG(failed == 0, "%d of %zu bad-input cases misbehaved", failed, n);
    return 0;
}
