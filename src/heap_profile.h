/* SPDX-License-Identifier: MIT */
/* The sampled heap profile: the live objects the sampler (sampler.h)
 * picked, each with its call stack, its size and the bytes it stands for;
 * dumps of them in the gperftools heap-profile text format (google-pprof,
 * jeprof) and as folded stacks (flame graphs).
 *
 * Sampling runs on slow paths only, so malloc's and free's fast paths are
 * the same whether the profile is on or off:
 * - a refill of a thread's list (small, medium and pow2 bins) charges the
 *   sampler with the bytes of the objects it brings, and when that makes
 *   a sample, the object the refill returns is the sampled one, weighted
 *   with every point that fell on the batch;
 * - large and huge allocations are charged exactly, by the api, one by
 *   one.
 * A sampled object is not an object of a bin's fast paths: it lies inside
 * an object of a bigger bin (its home), taken from the folios, at an
 * offset no object of that bin is handed out at (the alignment asked, or
 * a page into a large slot).  Free's fast path and the large-object path
 * see no object start there and go the slow way, where the api asks
 * pm_prof_home before calling it misuse, and forgets the sample when it
 * gives the home back.  So a sampled object's free always removes it, and
 * no entry outlives its object.  Sampled huge objects are not moved: every
 * huge free, a slow path already, forgets its pointer while the profile
 * is on.
 *
 * Storage: fixed tables in one mapping (up to 49,152 live samples and
 * 16,384 distinct stacks of up to PM_PROF_DEPTH frames), no malloc.  A
 * sample that does not fit is counted as dropped and its object handed
 * out unsampled.  One lock protects the tables, taken only on sampled
 * allocations, frees of sampled objects (and of huge objects) and dumps.
 *
 * Settings (options.h), acted on by a constructor: PRIMALLOC_PROF=1 turns
 * the profile on, PRIMALLOC_PROF_RATE the mean bytes between samples,
 * PRIMALLOC_PROF_FILE the prefix of dump files (PREFIX.PID.SEQ.heap and
 * .folded), PRIMALLOC_PROF_SIGNAL a signal that dumps.  With
 * PRIMALLOC_PROF=1, the process dumps at exit too. */
#ifndef PM_HEAP_PROFILE_H
#define PM_HEAP_PROFILE_H

#include <stddef.h>
#include "os.h"
#include "sampler.h"

#define PM_PROF_DEPTH 48
#define PM_PROF_STACKS (1u << 14)

/* Whether the profile is on (it is never turned off again). */
extern int pm_prof_on __attribute__((visibility("hidden")));

/* Turns the profile on with mean gap rate (bytes); 0 if its tables could
 * not be mapped.  The caller holds no allocator lock (sampler.h). */
int pm_prof_start(long rate);

void *pm_prof_refilled(void *p, unsigned bin, unsigned n);

/* p, the object a refill of bin returns after bringing n objects to the
 * thread (taken from the list): it, or a sampled object in its place. */
static inline void *pm_prof_refill(void *p, unsigned bin, unsigned n)
{
    return pm_likely(!pm_prof_on) ? p : pm_prof_refilled(p, bin, n);
}

/* A sampled large or huge object of size bytes aligned to align (weight
 * from pm_sampler_charge); *dirty, if dirty is not NULL, as
 * pm_huge_alloc's.  NULL when out of memory. */
void *pm_prof_alloc_big(size_t size, size_t align, long weight, int *dirty);

/* The home of p if p is a sampled object inside one, else NULL. */
void *pm_prof_home(const void *p);

void pm_prof_forget(const void *p);

/* Called before p, a sampled object or a huge one, is given back. */
static inline void pm_prof_free(const void *p)
{
    if (pm_unlikely(pm_prof_on))
        pm_prof_forget(p);
}

/* Returns an object of bin to its folio: the home of a sampled object
 * once freed, as it came, so that the thread caches never hold homes of
 * bins their threads do not use; or the object a refill handed over,
 * replaced by a sample. */
void pm_prof_give_back(void *object, unsigned bin);

/* A huge object p that realloc resized to q, size bytes: sampled anew,
 * as if freed and allocated. */
void pm_prof_resized(const void *p, void *q, size_t size);

/* Writes the profile to path (the heap profile) and path.folded, or,
 * for NULL, to the next pair of files of the prefix.  0 if written, -1 if
 * the profile is off or a file could not be written (errno says why). */
int pm_prof_dump(const char *path);

/* Calls fn with each live sample: its address, its stack (below
 * PM_PROF_STACKS), and the objects and bytes it stands for, under the
 * lock. */
void pm_prof_each(void (*fn)(void *ctx, const void *p, uint32_t stack, uint32_t objects, uint64_t bytes),
                  void *ctx);

/* The extent of the tables, which hold the samples' addresses (NULL
 * while the profile is off). */
const void *pm_prof_tables(size_t *len);

/* The frames of a stack pm_prof_each named, innermost first: how many. */
int pm_prof_frames(uint32_t stack, void *const **frames);

/* What the live samples stand for, and samples dropped (for tests). */
void pm_prof_totals(size_t *objects, size_t *bytes, size_t *dropped);

void pm_prof_prefork(void);
void pm_prof_postfork(void);

#endif
