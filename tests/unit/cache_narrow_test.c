/* SPDX-License-Identifier: MIT */
/* The CPU caches take their slots from the CPUs the process may run on at
 * their first use.  A thread that later runs on a CPU beyond those shares
 * a slot: what it puts stays inside the caches, counted and got back. */
#define _GNU_SOURCE
#include "cache.h"
#include "folio.h"
#include "primalloc.h"
#include "sizeclass.h"
#include "unit.h"

int main(void)
{
    int cpu[2];
    two_cpus(cpu);
    /* One slot per CPU up to the first: the second is beyond them. */
    pin(cpu[0]);
    pm_free(pm_malloc(1));
    pin(cpu[1]);

    unsigned bin = pm_bin_of_small(64), want = pm_bins[bin].batch, got;
    void *batch = pm_folio_alloc(bin, want, &got);
    CHECK(batch && got == want);
    size_t before = pm_cache_count(bin);
    pm_cache_put(bin, batch, PM_THIS_CPU);
    CHECK(pm_cache_count(bin) == before + want);
    void *back = pm_cache_get(bin, "malloc");
    CHECK(back == batch);
    pm_folio_free_list(bin, back, "free");
    return 0;
}
