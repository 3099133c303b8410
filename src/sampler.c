/* SPDX-License-Identifier: MIT */
#include "sampler.h"
#include <string.h>
#include "elf_symbols.h"
#include "os.h"

long pm_sampler_rate;

/* Per thread: bytes left until the next point (a charge that takes it
 * below zero makes a sample), the state of a xorshift generator (0 until
 * the thread's first charge), and whether the thread is unwinding. */
struct sampler_thread {
    long left;
    uint64_t rng;
    int unwinding;
};
static __thread struct sampler_thread me __attribute__((tls_model("initial-exec")));

static uintptr_t own_lo, own_hi;

void pm_sampler_start(long rate)
{
    PM_ASSERT(rate > 0);
    pm_elf_own_code(&own_lo, &own_hi);
    pm_os_backtrace_prime();
    __atomic_store_n(&pm_sampler_rate, rate, __ATOMIC_RELEASE);
}

/* ln(m 2^e) = e ln 2 + 2 atanh(s), s = (m - 1) / (m + 1) in [0, 1/3):
 * ten terms of the series leave an error under 1e-10. */
double pm_sampler_neglog(double u)
{
    uint64_t bits;
    memcpy(&bits, &u, sizeof bits);
    int e = (int)(bits >> 52 & 0x7ff) - 1023;
    bits = (bits & ((1ull << 52) - 1)) | 1023ull << 52;
    double m;
    memcpy(&m, &bits, sizeof m);
    double s = (m - 1) / (m + 1), s2 = s * s, term = s, sum = 0;
    for (int k = 1; k < 20; k += 2, term *= s2)
        sum += term / k;
    return -(2 * sum + e * 0.6931471805599453);
}

/* An exponential gap of mean rate, at least 1 byte. */
static long gap(long rate)
{
    uint64_t x = me.rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    me.rng = x;
    double u = (double)((x >> 11) + 1) * 0x1p-53; /* in (0, 1] */
    long g = (long)(pm_sampler_neglog(u) * (double)rate);
    return g > 0 ? g : 1;
}

long pm_sampler_charge(size_t bytes)
{
    long rate = __atomic_load_n(&pm_sampler_rate, __ATOMIC_RELAXED);
    if (!rate || me.unwinding)
        return 0;
    if (pm_unlikely(!me.rng)) {
        me.rng = pm_os_random_seed() | 1;
        me.left = gap(rate);
    }
    if (bytes >= (size_t)rate << 6)
        return (long)bytes; /* at least 64 points: its own weight, without drawing them */
    long points = 0;
    for (me.left -= (long)bytes; me.left < 0; me.left += gap(rate))
        points++;
    return points * rate;
}

int pm_sampler_stack(void **frames, int max)
{
    enum { OWN_MOST = 16 };
    void *raw[max + OWN_MOST];
    me.unwinding = 1;
    int n = pm_os_backtrace(raw, max + OWN_MOST);
    me.unwinding = 0;
    int first = 0;
    while (first < n && (uintptr_t)raw[first] - own_lo < own_hi - own_lo)
        first++;
    n -= first;
    if (n > max)
        n = max;
    memcpy(frames, raw + first, (size_t)n * sizeof *frames);
    return n;
}
