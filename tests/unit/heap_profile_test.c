/* SPDX-License-Identifier: MIT */
/* The sampler and the heap profile's table: the weights of samples add up
 * to the bytes charged; every kind of allocation can be sampled, and a
 * sampled object keeps its size and alignment; freeing objects by every
 * path leaves no entry behind; a dump reads back. */
#include <stdint.h>
#include "heap_profile.h"
#include "layout.h"
#include "primalloc.h"
#include "sampler.h"
#include "unit.h"

#define RATE 4096

/* Within 10% of expect: with RATE, each check below has at least 3,000
 * points, a standard deviation under 2%. */
static int near(double got, double expect)
{
    return got > expect * 0.9 && got < expect * 1.1;
}

static void check_log(void)
{
    CHECK(pm_sampler_neglog(1) == 0);
    double ln2 = 0.6931471805599453, ln10 = 2.302585092994046;
    double a = pm_sampler_neglog(0.5) - ln2, b = pm_sampler_neglog(0.1) - ln10;
    CHECK(a < 1e-9 && a > -1e-9);
    CHECK(b < 1e-9 && b > -1e-9);
    CHECK(pm_sampler_neglog(0x1p-53) > 36);
}

static void check_charges(void)
{
    double total = 0;
    for (int i = 0; i < 200000; i++)
        total += (double)pm_sampler_charge(64);
    CHECK(near(total, 200000.0 * 64));
    /* Each sample weighs whole points; a big charge its own bytes. */
    long w;
    while (!(w = pm_sampler_charge(100)))
        ;
    CHECK(w % RATE == 0);
    CHECK(pm_sampler_charge((size_t)1 << 30) == 1l << 30);
}

static size_t live_bytes(void)
{
    size_t objects, bytes, dropped;
    pm_prof_totals(&objects, &bytes, &dropped);
    CHECK(dropped == 0);
    CHECK(!objects == !bytes);
    return bytes;
}

/* Many small objects: the live samples stand for their bytes; freed by
 * free, free_sized and realloc, none is left. */
static void check_small(void)
{
    enum { N = 200000, SIZE = 64 };
    static void *objs[N];
    for (int i = 0; i < N; i++) {
        objs[i] = pm_malloc(SIZE);
        CHECK(objs[i] && ((uintptr_t)objs[i] & 15) == 0 && pm_malloc_usable_size(objs[i]) >= SIZE);
        memset(objs[i], 0x5a, SIZE);
    }
    CHECK(near((double)live_bytes(), (double)N * SIZE));
    int sampled = 0;
    for (int i = 0; i < N; i++)
        sampled += pm_prof_home(objs[i]) != 0;
    CHECK(sampled > 100);
    for (int i = 0; i < N; i += 3) {
        pm_free(objs[i]);
        if (i + 1 < N)
            pm_free_sized(objs[i + 1], SIZE);
        if (i + 2 < N) {
            char *q = pm_realloc(objs[i + 2], 4 * SIZE);
            CHECK(q && q[SIZE - 1] == 0x5a);
            pm_free(q);
        }
    }
    CHECK(live_bytes() == 0);
}

struct kind {
    size_t size, align; /* align 0: malloc; 1: calloc */
};

static void *allocate(const struct kind *k)
{
    void *p = 0;
    if (k->align == 0)
        p = pm_malloc(k->size);
    else if (k->align == 1)
        p = pm_calloc(1, k->size);
    else
        CHECK(pm_posix_memalign(&p, k->align, k->size) == 0);
    CHECK(p);
    if (k->align > 1)
        CHECK(((uintptr_t)p & (k->align - 1)) == 0);
    CHECK(((uintptr_t)p & 15) == 0 && pm_malloc_usable_size(p) >= k->size);
    if (k->align == 1)
        CHECK(((char *)p)[k->size - 1] == 0);
    memset(p, 0x33, k->size);
    return p;
}

enum { MOST = 4000 };

/* How many of a kind: enough that their bytes make 40 samples expected (a
 * kind goes unsampled once in e^40 runs), at least 16, at most MOST. */
static int count(const struct kind *k)
{
    size_t n = 40 * RATE / k->size;
    return n < 16 ? 16 : n > MOST ? MOST : (int)n;
}

/* Every bin kind, large and huge objects, aligned or not: each is sampled
 * at some point, holds its bytes where asked, and leaves no entry when
 * freed. */
static void check_kinds(void)
{
    static const struct kind kinds[] = {
        {48, 0},     {48, 64},     {300, 0},      {15000, 0},        {100, 4096},   {5000, 512},
        {8192, 8192}, {20000, 0},  {20000, 4096}, {1000000, 0},      {1000000, 4096}, {3 << 20, 0},
        {3 << 20, 1}, {100, 16384}, {5 << 20, 1 << 22},
    };
    enum { NK = sizeof kinds / sizeof kinds[0] };
    static void *objs[NK][MOST];
    for (int k = 0; k < NK; k++) {
        int sampled = 0;
        for (int i = 0; i < count(&kinds[k]); i++) {
            objs[k][i] = allocate(&kinds[k]);
            sampled |= pm_prof_home(objs[k][i]) != 0 || kinds[k].size > PM_LARGE_MAX;
        }
        if (!sampled)
            fprintf(stderr, "kind %d (size %zu align %zu) never sampled\n", k, kinds[k].size, kinds[k].align);
        CHECK(sampled);
    }
    CHECK(live_bytes() > 0);
    for (int k = 0; k < NK; k++)
        for (int i = 0; i < count(&kinds[k]); i++) {
            CHECK(((unsigned char *)objs[k][i])[kinds[k].size - 1] == 0x33);
            if (i % 2)
                objs[k][i] = pm_realloc(objs[k][i], kinds[k].size + (3u << 20));
            pm_free(objs[k][i]);
        }
    CHECK(live_bytes() == 0);
}

static void check_dump(void)
{
    char path[] = "/tmp/pm_heap_profile_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    void *kept = pm_malloc(1 << 20);
    CHECK(pm_prof_dump(path) == 0);
    FILE *f = fopen(path, "r");
    CHECK(f);
    char line[256];
    CHECK(fgets(line, sizeof line, f) && !strncmp(line, "heap profile: ", 14));
    CHECK(strstr(line, "@ heapprofile"));
    int mapped = 0;
    while (fgets(line, sizeof line, f))
        mapped |= !strcmp(line, "MAPPED_LIBRARIES:\n");
    CHECK(mapped);
    fclose(f);
    unlink(path);
    strcat(path, ".folded");
    CHECK(access(path, R_OK) == 0);
    unlink(path);
    pm_free(kept);
}

int main(void)
{
    check_log();
    CHECK(pm_prof_dump("/nonexistent") == -1);
    CHECK(pm_prof_start(RATE));
    check_charges();
    check_small();
    check_kinds();
    check_dump();
    return 0;
}
