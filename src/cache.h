/* SPDX-License-Identifier: MIT */
/* The shared cache levels of each bin (the SuperMalloc paper section 8):
 * per CPU, two chains of about PM_CPU_LIST_BYTES; globally, up to 2P such
 * chains, each going back first to the CPU that handed it down.  Byte
 * budgets over all bins bound what they hold: PM_CPU_BUDGET a CPU, P times
 * that globally.
 * What threads that exit leave stays on their CPU, for the threads that
 * run there next.  A CPU whose levels are empty takes a whole chain from
 * another CPU before the folios are asked, unless that CPU has just taken
 * a chain from it (then, within a small bound, it carves).
 *
 * The unit that moves between levels is a batch: exactly pm_bins[bin].batch
 * free objects linked through their first word to the list end (NULL
 * as pm_link_next reads it, free_object.h).  Batches
 * stack into a chain through the second word of their first object, so
 * every move between levels is a few pointer writes under one lock.  Both
 * links are encoded (free_object.h).
 *
 * Promises: a batch put is got back whole or reaches the folios; nothing
 * is lost or duplicated.  What a CPU's chains of a bin hold when they
 * have received nothing for PM_DECAY_MS (footprint.h), and a global chain
 * handed down that long ago, reach the folios at a later put or leave of
 * any bin, which also asks for a settle (footprint.h). */
#ifndef PM_CACHE_H
#define PM_CACHE_H

#include <stddef.h>

/* A full batch of bin from this CPU's cache or the global one, or NULL.
 * call names the API function, should a batch link be found corrupted. */
void *pm_cache_get(unsigned bin, const char *call);

/* Where put and leave take objects: a CPU's cache, named by a number
 * reduced modulo the CPUs (a chunk's carving lane, folio.h, names the CPU
 * that carved it), or this CPU's (PM_THIS_CPU). */
#define PM_THIS_CPU (-1)

/* Hands a full batch of bin to a CPU's cache; what overflows the global
 * level goes back to the folios. */
void pm_cache_put(unsigned bin, void *batch, int cpu);

/* Keeps a list of n objects of bin (at most a batch) that a thread will
 * not use, on a CPU: what an exiting thread held, or an object freed
 * before its thread allocated from the bin.  A full batch goes on the
 * CPU's chain of what threads left, which that CPU's gets take when its own
 * chains are empty and other CPUs never steal; fewer objects wait, joined
 * with later ones, until they make a batch.  What does not fit goes to the
 * folios. */
void pm_cache_leave(unsigned bin, void *list, unsigned n, int cpu);

/* Returns every cached object to its folio. */
void pm_cache_drain(void);

/* Returns to the folios what has lain in the levels PM_DECAY_MS, as a put
 * does at most every quarter of that, and asks for a settle: for the
 * background thread, which runs no puts of its own. */
void pm_cache_decay(void);

/* Whether the levels hold a whole batch anywhere: read without locks, so
 * a hint while other threads move batches. */
int pm_cache_held(void);

/* Objects of bin held by the CPU levels and by the global level (for
 * statistics), each level's chains read under its lock in turn. */
void pm_cache_census(unsigned bin, size_t *cpu, size_t *global);

/* The two together (for tests). */
static inline size_t pm_cache_count(unsigned bin)
{
    size_t cpu, global;
    pm_cache_census(bin, &cpu, &global);
    return cpu + global;
}

/* Checks both levels against their specification: every chain holds the
 * batches it counts and every batch exactly a batch of objects of its
 * bin, loose objects are fewer than a batch, each CPU's held bytes are
 * those of its chains and the global level's those of its chains, within
 * its budget, and no time stamp of a CPU's cache or a global chain lies
 * after now.  Ends in pm_fatal naming the first that fails.  Takes every
 * lock of the caches while it runs. */
void pm_cache_check(void);

/* Bytes of the levels' own bookkeeping, static or mapped. */
size_t pm_cache_metadata(void);

/* The mapping of the levels' bookkeeping, or NULL before the first list
 * reaches them; *len its bytes.  Its words hold addresses of free
 * objects, and copies of them after the objects leave. */
const void *pm_cache_tables(size_t *len);

void pm_cache_prefork(void);
void pm_cache_postfork(void);

#endif
