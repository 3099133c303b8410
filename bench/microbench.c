/* SPDX-License-Identifier: MIT */
/* Single-thread fast-path cost: `pairs` malloc+free pairs of one size, or
 * of sizes from a mixed distribution (size=0).  With window=W (a power of
 * two), each pair frees the object the pair W before allocated, so W
 * objects are live between pairs.  The object is written and read back so
 * neither call can be skipped.  Run under callgrind with N and 2N pairs,
 * the difference divided by N is the instructions per pair
 * (bench/harness.py does this); baseline=1 does the same loop on a static
 * buffer without malloc or free, to count the loop's own instructions. */
#include "common.h"

#include <stdio.h>

/* Built twice: microbench calls malloc and free; microbench_cxx
 * (PM_BENCH_OPERATORS) calls what a C++ program's `new T` and `delete p`
 * of a type of the given size call, by their mangled names: the
 * allocator's own operators where it has them, else libstdc++'s, which
 * call malloc and free.  Sized delete needs one size: no mixed sizes. */
#ifdef PM_BENCH_OPERATORS
void *_Znwm(size_t size);
void _ZdlPvm(void *p, size_t size);
#define ALLOCATE(s) _Znwm(s)
#define RELEASE(p) _ZdlPvm(p, (size_t)size)
#define MIXED_SIZES 0
#else
#define ALLOCATE(s) malloc(s)
#define RELEASE(p) free(p)
#define MIXED_SIZES 1
#endif

#define TABLE 1024
#define MAX (1 << 20)
#define MAX_WINDOW 4096

int main(int argc, char **argv)
{
    args_init(argc, argv, "size=64 (0: mixed) pairs=10000000 window=1 baseline=0");
    long size = arg_long("size", 64);
    long pairs = arg_long("pairs", 10000000);
    long window = arg_long("window", 1);
    bool baseline = arg_long("baseline", 0);
    args_done();
    if (size < !MIXED_SIZES || size > MAX || pairs < 1 || window < 1 || window > MAX_WINDOW ||
        (window & (window - 1))) {
        fprintf(stderr, "need %d <= size <= %d, pairs >= 1, a power of two window <= %d\n",
                !MIXED_SIZES, MAX, MAX_WINDOW);
        return 2;
    }
    static unsigned char *live[MAX_WINDOW];
    static _Alignas(16) unsigned char buffer[MAX];
    /* Mixed: mostly small, a tail to 16 KiB (the exponent is geometric). */
    uint32_t sizes[TABLE];
    rng_t r;
    rng_seed(&r, 7);
    for (size_t i = 0; i < TABLE; i++) {
        unsigned k = 3;
        while (k < 13 && (rng_next(&r) & 1))
            k++;
        sizes[i] = size ? (uint32_t)size : (uint32_t)rng_range(&r, 1u << k, (2u << k) - 1);
    }

    uint64_t sum = 0, want = 0, misaligned = 0;
    uint64_t t0 = now_ns();
    for (long i = 0; i < pairs; i++) {
        size_t s = sizes[i % TABLE];
        unsigned char *p = baseline ? buffer : ALLOCATE(s);
        if (!p) {
            check_fail("allocating %zu bytes returned NULL", s);
            break;
        }
        misaligned += (uintptr_t)p % (s >= 16 ? 16 : 8) != 0;
        p[0] = (unsigned char)i;
        p[s - 1] = (unsigned char)(i >> 8);
        sum += *(volatile unsigned char *)&p[0] + *(volatile unsigned char *)&p[s - 1];
        want += (unsigned char)i + (unsigned char)(i >> 8);
        unsigned char **slot = &live[i & (window - 1)];
        if (!baseline)
            RELEASE(*slot);
        *slot = p;
    }
    if (!baseline)
        for (long i = 0; i < window; i++)
            RELEASE(live[i]);
    double secs = (double)(now_ns() - t0) / 1e9;

    if (sum != want)
        check_fail("objects did not keep what was written to them");
    if (misaligned)
        check_fail("%llu objects were not aligned", (unsigned long long)misaligned);
    checked_add((uint64_t)pairs);
    metric("ns_per_pair", secs * 1e9 / (double)pairs, "ns");
    return bench_finish();
}
