/* SPDX-License-Identifier: MIT */
/* Everything that differs between the C libraries primalloc runs on:
 * glibc (2.31 and later) and musl (1.2 and later).  Names only one of
 * them has are referenced weakly here, so that one object file serves
 * either and a name the running C library lacks reads as absent.
 *
 * What each C library lacks, and what stands in:
 *   __libc_single_threaded (glibc 2.32 on): absent, os.h stands in;
 *   rseq registration (glibc 2.35 on, unless turned off): absent,
 *       pm_libc_rseq_cpu gives -1 and the caller asks sched_getcpu;
 *   the stdio list lock (glibc's _IO_list_lock): absent, fork takes only
 *       primalloc's own locks;
 *   backtrace (glibc's execinfo): absent, stacks are empty;
 *   struct mallinfo and mallinfo2 (glibc 2.33 on for the second):
 *       declared here where <malloc.h> lacks them, so that primalloc
 *       exports mallinfo, mallinfo2 and malloc_info on every C library.
 * Nothing here allocates. */
#ifndef PM_LIBC_H
#define PM_LIBC_H

#include <features.h>
#include <stddef.h>
#include <stdint.h>

extern char __libc_single_threaded __attribute__((weak));

/* Whether the C library says the process has had only one thread so
 * far: 1 or 0, or -1 where it does not say. */
static inline int pm_libc_single_threaded(void)
{
    return &__libc_single_threaded ? __libc_single_threaded != 0 : -1;
}

extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));

/* The CPU the calling thread runs on, from the rseq area the C library
 * registered for it; -1 when there is none. */
static inline int32_t pm_libc_rseq_cpu(void)
{
    if (&__rseq_size && __rseq_size >= 8) {
        const volatile int32_t *rs =
            (const volatile int32_t *)((char *)__builtin_thread_pointer() + __rseq_offset);
        return rs[1];
    }
    return -1;
}

/* The lock on the C library's list of open FILEs, for fork's ordering
 * (api.c): take, drop, and reset in the child. */
void pm_libc_files_lock(void);
void pm_libc_files_unlock(void);
void pm_libc_files_reset(void);

/* The return addresses on the calling thread's stack, innermost first,
 * up to max; how many (0 where the C library cannot unwind). */
int pm_libc_backtrace(void **frames, int max);

#if !defined(__GLIBC__)
struct mallinfo {
    int arena, ordblks, smblks, hblks, hblkhd, usmblks, fsmblks, uordblks, fordblks, keepcost;
};
#define PM_LIBC_NEEDS_MALLINFO2 1
#elif !__GLIBC_PREREQ(2, 33)
#define PM_LIBC_NEEDS_MALLINFO2 1
#endif
#ifdef PM_LIBC_NEEDS_MALLINFO2
struct mallinfo2 {
    size_t arena, ordblks, smblks, hblks, hblkhd, usmblks, fsmblks, uordblks, fordblks, keepcost;
};
#endif

#endif
