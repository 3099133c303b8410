/* SPDX-License-Identifier: MIT */
/* The heap profile's sampler: which allocations are sampled, and their
 * call stacks.
 *
 * Sample points fall on the bytes each thread allocates as a Poisson
 * process: the gaps between them are exponential with mean
 * pm_sampler_rate, so an allocation of any size is sampled with
 * probability 1 - exp(-size / rate) and no pattern of sizes can dodge it
 * (the scheme of tcmalloc's sampler).  Each point stands for rate bytes,
 * so the weights of the samples add up, in expectation, to the bytes
 * charged.
 *
 * Promises: nothing here allocates, but the unwinder behind
 * pm_sampler_stack may: while it runs, this thread's charges sample
 * nothing, so an allocation it makes never recurses into the sampler. */
#ifndef PM_SAMPLER_H
#define PM_SAMPLER_H

#include <stddef.h>
#include <stdint.h>

/* The mean of the gaps in bytes, 0 while the sampler is off. */
extern long pm_sampler_rate __attribute__((visibility("hidden")));

/* Turns the sampler on: rate > 0.  Also primes the unwinder, which
 * allocates on its first use, so the caller must be where a malloc is
 * safe and no allocator lock is held. */
void pm_sampler_start(long rate);

/* Charges this thread's allocation of bytes; returns the weight of the
 * sample it makes, rate times the points that fell on those bytes, or 0
 * when none did (always 0 while the sampler is off or unwinding). */
long pm_sampler_charge(size_t bytes);

/* The return addresses of the calling thread's stack, innermost first,
 * from the caller of primalloc's outermost frame on, up to max; how
 * many.  In a program linked with primalloc rather than preloading it,
 * primalloc's own frames stay (they cannot be told apart). */
int pm_sampler_stack(void **frames, int max);

/* -ln(u) for u in (0, 1], without libm: exported for the unit test. */
double pm_sampler_neglog(double u);

#endif
