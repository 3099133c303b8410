/* SPDX-License-Identifier: MIT */
/* Shared helpers for the ctest programs: checks that name file:line and
 * exit non-zero, content patterns, a small RNG and the RSS reader. */
#ifndef PM_TEST_CHECK_H
#define PM_TEST_CHECK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Prints "file:line: check failed: ..." and ends the process with status 1
 * (with _exit, so that a failing thread does not race atexit handlers). */
__attribute__((noreturn, format(printf, 3, 4)))
void check_failed(const char *file, int line, const char *fmt, ...);

#define CHECK(cond)                                                      \
    do {                                                                 \
        if (!(cond))                                                     \
            check_failed(__FILE__, __LINE__, "%s", #cond);               \
    } while (0)

#define CHECK_MSG(cond, ...)                                             \
    do {                                                                 \
        if (!(cond))                                                     \
            check_failed(__FILE__, __LINE__, __VA_ARGS__);               \
    } while (0)

#define CHECK_EQ(a, b)                                                   \
    do {                                                                 \
        unsigned long long a_ = (unsigned long long)(a);                 \
        unsigned long long b_ = (unsigned long long)(b);                 \
        if (a_ != b_)                                                    \
            check_failed(__FILE__, __LINE__, "%s == %s (%#llx != %#llx)", \
                         #a, #b, a_, b_);                                \
    } while (0)

/* Hides a value from the optimiser, so that calls such as malloc(SIZE_MAX)
 * reach the allocator instead of being folded or warned about. */
static inline size_t opaque(size_t v)
{
    __asm__ volatile("" : "+r"(v));
    return v;
}

static inline void *opaque_ptr(void *p)
{
    __asm__ volatile("" : "+r"(p));
    return p;
}

/* Fills n bytes with a pattern that depends on seed and on each byte's
 * offset; pattern_mismatch() returns the offset of the first wrong byte
 * plus one, or 0 when all n bytes are intact. */
void fill_pattern(void *p, size_t n, uint64_t seed);
size_t pattern_mismatch(const void *p, size_t n, uint64_t seed);

#define CHECK_PATTERN(p, n, seed)                                        \
    do {                                                                 \
        size_t bad_ = pattern_mismatch((p), (n), (seed));                \
        if (bad_)                                                        \
            check_failed(__FILE__, __LINE__,                             \
                         "content of %p (%zu bytes) wrong at offset %zu", \
                         (const void *)(p), (size_t)(n), bad_ - 1);      \
    } while (0)

/* Returns the offset of the first non-zero byte plus one, or 0. */
size_t nonzero_at(const void *p, size_t n);

/* splitmix64: deterministic, so a failing run can be repeated. */
uint64_t rng_next(uint64_t *state);
/* A size from lo to hi inclusive, log-uniform so that small sizes are as
 * well represented as big ones. */
size_t rng_size(uint64_t *state, size_t lo, size_t hi);

/* Request sizes on both sides of every category boundary (small up to
 * 256 B, medium up to about 15 KiB, large up to about 1 MiB, huge beyond)
 * and of the power-of-two and chunk sizes, ascending, from 0 up. */
extern const size_t edge_sizes[];
extern const size_t n_edge_sizes;

/* A deadlock detector for the fork tests: unless watchdog_progress is
 * called (or the process ends) within `seconds` of the start or of its
 * last call, SIGALRM prints that the test made no progress and ends it
 * with status 1.  A loaded machine slows the steps, but only a step that
 * never ends trips it. */
void deadlock_watchdog(unsigned seconds);
void watchdog_progress(void);

/* Runs fn in n threads (at most 256), passing each its number from 1 to n
 * as its argument, and returns once all have ended. */
void run_threads(int n, void *(*fn)(void *));

/* Minor page faults this process has taken so far (getrusage). */
long minor_faults(void);

/* Resident set size of this process in bytes, from /proc/self/statm. */
size_t rss_bytes(void);

/* Reads fd to its end (the writers have exited or closed it), or until
 * buf holds cap - 1 bytes, and ends it with a NUL; returns the length. */
size_t read_all(int fd, char *buf, size_t cap);

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)

#ifdef __cplusplus
}
#endif

#endif
