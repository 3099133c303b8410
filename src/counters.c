/* SPDX-License-Identifier: MIT */
#include "counters.h"
#include "os.h"

struct pm_counters pm_stats_global;

/* A power of two: a slot is the CPU number's low bits. */
#define SLOTS 16

struct slot {
    uint64_t bins[PM_NBINS][PM_NBIN_EVENTS];
    uint64_t process[PM_NEVENTS];
} __attribute__((aligned(64)));

static struct slot slots[SLOTS];

static struct slot *here(void)
{
    return &slots[pm_os_cpu() % SLOTS];
}

void pm_count_bin(unsigned bin, enum pm_bin_event e)
{
    __atomic_fetch_add(&here()->bins[bin][e], 1, __ATOMIC_RELAXED);
}

void pm_count(enum pm_event e)
{
    __atomic_fetch_add(&here()->process[e], 1, __ATOMIC_RELAXED);
}

void pm_counts_read(struct pm_event_counts *out)
{
    *out = (struct pm_event_counts){0};
    for (unsigned s = 0; s < SLOTS; s++) {
        for (unsigned bin = 0; bin < PM_NBINS; bin++)
            for (unsigned e = 0; e < PM_NBIN_EVENTS; e++)
                out->bins[bin][e] += __atomic_load_n(&slots[s].bins[bin][e], __ATOMIC_RELAXED);
        for (unsigned e = 0; e < PM_NEVENTS; e++)
            out->process[e] += __atomic_load_n(&slots[s].process[e], __ATOMIC_RELAXED);
    }
}
