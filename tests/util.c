/* SPDX-License-Identifier: MIT */
/* Implementation of the helpers declared in check.h. */
#include "check.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

void check_failed(const char *file, int line, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fflush(stdout);
    fprintf(stderr, "%s:%d: check failed: %s\n", file, line, msg);
    fflush(stderr);
    _exit(1);
}

/* Each 8-byte word holds a mix of the seed and the word's index; a byte
 * takes its place in that word, so any offset can be checked alone. */
static inline uint64_t pattern_word(uint64_t seed, size_t word)
{
    uint64_t x = seed ^ (word * 0x9e3779b97f4a7c15ull);
    x ^= x >> 29;
    return x * 0xbf58476d1ce4e5b9ull;
}

static inline unsigned char pattern_byte(uint64_t seed, size_t i)
{
    return (unsigned char)(pattern_word(seed, i / 8) >> (i % 8 * 8));
}

void fill_pattern(void *p, size_t n, uint64_t seed)
{
    unsigned char *b = p;
    size_t words = n / 8;
    for (size_t w = 0; w < words; w++) {
        uint64_t v = pattern_word(seed, w);
        __builtin_memcpy(b + w * 8, &v, 8);
    }
    for (size_t i = words * 8; i < n; i++)
        b[i] = pattern_byte(seed, i);
}

size_t pattern_mismatch(const void *p, size_t n, uint64_t seed)
{
    const unsigned char *b = p;
    size_t words = n / 8;
    for (size_t w = 0; w < words; w++) {
        uint64_t v;
        __builtin_memcpy(&v, b + w * 8, 8);
        if (v != pattern_word(seed, w))
            for (size_t i = w * 8;; i++)
                if (b[i] != pattern_byte(seed, i))
                    return i + 1;
    }
    for (size_t i = words * 8; i < n; i++)
        if (b[i] != pattern_byte(seed, i))
            return i + 1;
    return 0;
}

size_t nonzero_at(const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i])
            return i + 1;
    return 0;
}

uint64_t rng_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

size_t rng_size(uint64_t *state, size_t lo, size_t hi)
{
    unsigned lo_log = 63 - __builtin_clzll(lo | 1);
    unsigned hi_log = 63 - __builtin_clzll(hi | 1);
    unsigned lg = lo_log + (unsigned)(rng_next(state) % (hi_log - lo_log + 1));
    size_t v = ((size_t)1 << lg) + rng_next(state) % ((size_t)1 << lg);
    return v < lo ? lo : v > hi ? hi : v;
}

const size_t edge_sizes[] = {
    0, 1, 7, 8, 15, 16, 17, 31, 32, 33, 48, 64, 100, 255, 256, 257,
    320, 448, 511, 512, 513, 1000, 1024, 2047, 2048, 4095, 4096, 4097,
    8191, 8192, 8193, 12000, 15000, 15360, 15424, 15425, 15872,
    16383, 16384, 16385, 20000, 32768, 65536, 65537, 100000, 262144,
    500000, 1000000, 1032192, 1032193, 1040384, 1048575, 1048576, 1048577,
    (2 << 20) - 1, 2 << 20, (2 << 20) + 1, (5 << 20) + 3,
};
const size_t n_edge_sizes = sizeof edge_sizes / sizeof edge_sizes[0];

static void watchdog_expired(int sig)
{
    (void)sig;
    static const char msg[] = "deadlock watchdog: the test made no progress in time\n";
    ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)ignored;
    _exit(1);
}

static unsigned watchdog_seconds;

void deadlock_watchdog(unsigned seconds)
{
    struct sigaction sa = {.sa_handler = watchdog_expired};
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGALRM, &sa, NULL) == 0);
    watchdog_seconds = seconds;
    alarm(seconds);
}

void watchdog_progress(void)
{
    alarm(watchdog_seconds);
}

size_t read_all(int fd, char *buf, size_t cap)
{
    size_t len = 0;
    for (;;) {
        ssize_t r = read(fd, buf + len, cap - 1 - len);
        if (r < 0 && errno == EINTR)
            continue;
        CHECK(r >= 0);
        if (r == 0 || (len += (size_t)r) == cap - 1)
            break;
    }
    buf[len] = 0;
    return len;
}

size_t rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long size = 0, resident = 0;
    CHECK(f != NULL);
    CHECK(fscanf(f, "%lu %lu", &size, &resident) == 2);
    fclose(f);
    return resident * (size_t)sysconf(_SC_PAGESIZE);
}

void run_threads(int n, void *(*fn)(void *))
{
    pthread_t t[256];
    CHECK(n >= 1 && n <= 256);
    for (int i = 0; i < n; i++)
        CHECK(pthread_create(&t[i], NULL, fn, (void *)(uintptr_t)(i + 1)) == 0);
    for (int i = 0; i < n; i++)
        CHECK(pthread_join(t[i], NULL) == 0);
}

long minor_faults(void)
{
    struct rusage u;
    CHECK(getrusage(RUSAGE_SELF, &u) == 0);
    return u.ru_minflt;
}
