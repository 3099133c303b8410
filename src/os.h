/* SPDX-License-Identifier: MIT */
/* Every call into the kernel or libc's platform layer lives in os.c.
 *
 * Promises: nothing here allocates with malloc.  pm_os_map returns memory
 * that reads as zero and is committed by the kernel only when touched;
 * pm_os_uncommit gives pages back and they read as zero again afterwards.
 * pm_fatal writes one line to stderr and aborts. */
#ifndef PM_OS_H
#define PM_OS_H

#include <stddef.h>
#include <stdint.h>
#include "libc.h"

#define pm_likely(x) __builtin_expect(!!(x), 1)
#define pm_unlikely(x) __builtin_expect(!!(x), 0)

/* The kernel's page size (PM_PAGE at least, larger on some aarch64
 * kernels), read at the first call.  Folios, large classes and objects
 * are laid out in PM_PAGE units whatever it is; what asks the kernel for
 * pages (purges, guard pages, page-aligned requests) follows this one.  A
 * test build forces it larger than the kernel's (PM_TEST_KERNEL_PAGE). */
size_t pm_os_page(void);

/* size bytes aligned to align (a power of two, at least a page); NULL when
 * the kernel refuses.  An aligned place is sought without mapping more
 * than size first, so that a request fits under an address-space limit
 * whenever size does and the kernel has such a place free. */
void *pm_os_map(size_t size, size_t align);
/* Maps [at, at + size) (at and size multiples of the kernel's page) if
 * none of it is mapped yet; 1 if done, 0 (nothing changed) otherwise. */
int pm_os_map_at(void *at, size_t size);
void pm_os_unmap(void *p, size_t size);
void pm_os_uncommit(void *p, size_t size);
/* Whether touching [p, p + size) may fault in transparent huge pages; the
 * choice stays with the range until it is made again or unmapped. */
void pm_os_hugepage(void *p, size_t size, int on);
/* Of `samples` pages spread evenly over [p, p + size) (p page-aligned,
 * size at least a page), how many are in memory; an unmapped page counts
 * as absent. */
unsigned pm_os_resident_sample(const void *p, size_t size, unsigned samples);
/* Moves the pages of [from, from + size) to [to, to + size), a mapping
 * of the caller's that they replace, and unmaps the source.  1 if done;
 * 0 (nothing changed) when the source spans more than one mapping. */
int pm_os_move(void *from, size_t size, void *to);

/* The CPU number where the C library registered no rseq area:
 * sched_getcpu. */
unsigned pm_os_cpu_slow(void);

/* Whether the process has had one thread so far, as far as primalloc
 * can tell cheaply: the C library's word, or where it says nothing,
 * whether a second thread has started using primalloc
 * (pm_os_thread_started). */
extern int pm_os_threaded;
static inline int pm_os_single_threaded(void)
{
    int one = pm_libc_single_threaded();
    return pm_likely(one >= 0) ? one : !__atomic_load_n(&pm_os_threaded, __ATOMIC_RELAXED);
}

/* A thread starts using primalloc. */
void pm_os_thread_started(void);

/* Whether the process has one thread now, for fork: the C library's word,
 * or the kernel's count where the C library says nothing (0 when it
 * cannot be read).  Async-signal-safe. */
int pm_os_one_thread(void);

/* The CPU whose caches and carving lane this thread uses: the one it runs
 * on now (it may move at any time), or CPU 0 while the process has a
 * single thread.  One thread alone shares no line with another, and
 * following it from CPU to CPU would leave what it cached stranded on the
 * CPU it left while it carves new folios on the next.  Inline, for a new
 * thread's free asks on every call. */
static inline unsigned pm_os_cpu(void)
{
    if (pm_os_single_threaded())
        return 0;
    int32_t cpu = pm_libc_rseq_cpu();
    return pm_likely(cpu >= 0) ? (unsigned)cpu : pm_os_cpu_slow();
}

/* How many CPU numbers this process may see: CPU ids are reduced modulo it. */
unsigned pm_os_cpus(void);

/* Futex wait while *addr == val, and wake one waiter. */
void pm_os_futex_wait(uint32_t *addr, uint32_t val);
void pm_os_futex_wake(uint32_t *addr);

uint64_t pm_os_random_seed(void);

/* A coarse monotonic clock in milliseconds (wraps): CLOCK_MONOTONIC_COARSE,
 * read through the vDSO. */
uint32_t pm_os_now_ms(void);
/* Whether pm_os_now_ms calls the vDSO directly, not the C library's
 * clock_gettime (for tests). */
int pm_os_clock_is_vdso(void);
void pm_os_sleep_ms(uint32_t ms);

/* Whether time `at` lies before `before` on the wrapping clock (the two
 * less than 24.8 days apart). */
static inline int pm_os_earlier(uint32_t at, uint32_t before)
{
    return (int32_t)(at - before) < 0;
}

/* Whether a task run every `period` ms is due at `now`, *next being its
 * next run (0 before the first: the clock counts from boot, so a first
 * run compared with 0 would wait out half the clock's cycle, 24.8 days,
 * wherever boot lies past that).  Of callers racing for one run, one gets
 * 1 and moves *next on. */
static inline int pm_os_due(uint32_t *next, uint32_t now, uint32_t period)
{
    uint32_t due = __atomic_load_n(next, __ATOMIC_RELAXED);
    return (!due || !pm_os_earlier(now, due)) &&
           __atomic_compare_exchange_n(next, &due, now + period, 0, __ATOMIC_RELAXED,
                                       __ATOMIC_RELAXED);
}

/* Makes [p, p + size), whole pages of the kernel's, inaccessible: any
 * access faults. */
void pm_os_protect_none(void *p, size_t size);
/* The SIGSEGV handlers, in the order they run. */
enum pm_fault_handler { PM_FAULT_GUARD, PM_FAULT_CHUNKS, PM_FAULT_HANDLERS };

/* Makes on_fault handler `which`, each once, and installs the action that
 * runs them with the first.  Each runs in the signal handler with
 * the faulting address, the faulting instruction's (0 where arch.h cannot
 * tell) and whether it wrote (1), read (0) or arch.h cannot tell (-1),
 * and returns only if the fault is not its own: when none claims it, the
 * handler puts back the action found at installation and returns, so
 * that the access faults again under it. */
void pm_os_on_fault(enum pm_fault_handler which, void (*on_fault)(void *addr, uintptr_t pc, int wrote));

/* Starts a detached thread running fn, on a small stack and with every
 * signal blocked, so that the program's signals never land on it.
 * Returns 0 if it could not.  Its caller holds no allocator lock:
 * creating a thread allocates. */
int pm_os_thread(void *(*fn)(void *));

/* A file opened by the program, kept for later: a descriptor of our own
 * (close-on-exec, above the low numbers programs count on) and the
 * identity of what it names. */
struct pm_os_file {
    int fd;
    uint64_t dev, ino;
};

/* Keeps the file fd names in *f; 0 when it cannot. */
int pm_os_file_keep(int fd, struct pm_os_file *f);

/* Whether fd still names f's file. */
int pm_os_file_is(int fd, const struct pm_os_file *f);

/* A descriptor that names f's file still: f's own, else 2 when stderr
 * does; -1 when neither. */
int pm_os_file_fd(const struct pm_os_file *f);

/* "primalloc: CALL(PTR): WHAT" on stderr, then abort(). */
_Noreturn void pm_fatal(const char *call, const void *ptr, const char *what);

/* A line for stderr, built without malloc (text.h) and safe in a signal
 * handler: pm_os_put_call appends "primalloc: CALL(PTR): ", the start of
 * every line about a call, at o, which must leave room, and returns the
 * new end; pm_os_die writes buf up to end and a newline, then aborts. */
char *pm_os_put_call(char *o, const char *call, const void *ptr);
_Noreturn void pm_os_die(char *buf, char *end);

/* PM_ASSERT states an invariant of primalloc's own structures; it is
 * checked in debug builds (PM_DEBUG) only, where a failure reports
 * "primalloc: FILE:LINE: assertion COND failed" and aborts.  Misuse by the
 * program is never left to it: pm_fatal catches that in every build. */
#ifdef PM_DEBUG
_Noreturn void pm_assert_failed(const char *file, int line, const char *cond);
#define PM_ASSERT(c) (pm_likely(c) ? (void)0 : pm_assert_failed(__FILE_NAME__, __LINE__, #c))
#else
#define PM_ASSERT(c) ((void)0)
#endif

/* The validators of whole structures (the modules' *_check functions)
 * are the expensive tier of checks.  Slow paths run them in debug builds
 * only: one call in `every` at PM_DEBUG=1, which keeps the debug tests'
 * pace, and every call at PM_DEBUG=2 (the fuzzer's build and the
 * debug_full library).  *calls counts the calls of one place. */
#if defined(PM_DEBUG) && PM_DEBUG >= 2
#define PM_EXPENSIVE 1
#else
#define PM_EXPENSIVE 0
#endif
static inline int pm_check_due(unsigned long *calls, unsigned every)
{
#ifdef PM_DEBUG
    return PM_EXPENSIVE || __atomic_add_fetch(calls, 1, __ATOMIC_RELAXED) % every == 0;
#else
    (void)calls;
    (void)every;
    return 0;
#endif
}

/* In the build for memcheck (PM_VALGRIND, libprimalloc_valgrind.so), a
 * freed object is the program's freed block to memcheck, unaddressable,
 * while primalloc's lists run through it.  The wrapper's calls hide
 * primalloc's accesses; code that walks free objects outside them (at
 * thread exit, in the background thread) runs between PM_QUIET_BEGIN and
 * PM_QUIET_END, with memcheck's error reports off in the calling thread.
 * The pairs nest.  Every other build compiles them to nothing. */
#ifdef PM_VALGRIND
#include <valgrind/valgrind.h>
#define PM_QUIET_BEGIN() VALGRIND_DISABLE_ERROR_REPORTING
#define PM_QUIET_END() VALGRIND_ENABLE_ERROR_REPORTING
#else
#define PM_QUIET_BEGIN() ((void)0)
#define PM_QUIET_END() ((void)0)
#endif

/* The return addresses on the calling thread's stack, innermost first, up
 * to max; how many (none where the C library cannot unwind: libc.h).
 * glibc's backtrace unwinds by the call-frame information every object
 * carries, so neither primalloc nor the program needs frame pointers.
 * Its first call loads libgcc_s, which allocates: pm_os_backtrace_prime
 * makes that call where allocating is safe. */
int pm_os_backtrace(void **frames, int max);
void pm_os_backtrace_prime(void);

/* Zeroes `bytes` of stack below the caller's frame, where the calls it
 * made left words that the frames of later calls keep in slots they do
 * not write (the leak check's roots).  The caller makes sure that much
 * stack is there. */
void pm_os_wipe_stack(size_t bytes);

/* The environment variable's value, or NULL. */
const char *pm_os_env(const char *name);
/* Whether a handler may be installed for signal sig (not SIGKILL,
 * SIGSTOP, or one the C library keeps for itself). */
int pm_os_signal_catchable(int sig);
/* Runs fn on sig, in whichever thread it is delivered to; 0 if it could
 * not be installed. */
int pm_os_on_signal(int sig, void (*fn)(int));

/* Files written without stdio: create (or truncate) for writing, write
 * everything, close; -1 on failure.  pm_os_copy_file appends the whole
 * file at path (such as /proc/self/maps) to fd.  Each keeps errno. */
int pm_os_create(const char *path);
/* Opens path for reading; -1 on failure.  pm_os_read reads at most n
 * bytes: how many, 0 at the end, -1 on failure. */
int pm_os_open(const char *path);
long pm_os_read(int fd, void *buf, size_t n);
int pm_os_write(int fd, const void *buf, size_t n);
int pm_os_copy_file(const char *path, int fd);
void pm_os_close(int fd);
int pm_os_pid(void);

#endif
