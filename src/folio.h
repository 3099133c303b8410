/* SPDX-License-Identifier: MIT */
/* The global structure of each bin: folios of small, medium and large
 * objects, allocated fullest-first (the SuperMalloc paper sections 3-5).
 *
 * Each chunk starts with PM_HEADER_PAGES of bookkeeping: a record per folio
 * with its free-object bitmap and its links in the bin's fullness lists
 * (one list per free count, plus a bitmap of the non-empty lists).  The
 * data pages hold only objects, so a folio whose objects are all free can
 * be given back to the kernel whole, under the rule of footprint.h.
 *
 * Promises: objects handed out are distinct and were free; freeing an
 * object that is already free in its folio, or a pointer that is not an
 * object's start, ends in pm_fatal naming `call`.  Lists are linked
 * through each object's first word (free_object.h) and end at the list
 * end, which pm_link_next reads as NULL. */
#ifndef PM_FOLIO_H
#define PM_FOLIO_H

#include <stddef.h>
#include <stdint.h>
#include "footprint.h"
#include "os.h"

/* Fresh folios for CPU c are carved from a chunk of lane c % PM_CARVE_LANES
 * of the bin, one after another, so that objects first handed to different
 * CPUs lie in different chunks: two CPUs writing pages a few hundred KiB
 * apart slow each other down though they share no cache line, which pages
 * a megabyte apart do not (docs/tuning.md, PM_CARVE_LANES).  A lane
 * costs its chunk's header pages, no more: freed folios are reused
 * whatever lane they came from. */
#define PM_CARVE_LANES 16

/* The carving lane of the CPU the caller runs on: what a chunk carved now
 * records (pm_chunk_lane), and what a new thread's frees compare it with. */
static inline unsigned pm_folio_lane(void)
{
    return pm_os_cpu() % PM_CARVE_LANES;
}

/* Up to `want` objects of bin as a list, each carrying the free mark
 * (free_object.h) but the head, whose second word is 0; *got says how
 * many (fewer only when memory ran out).  NULL when none could be had. */
void *pm_folio_alloc(unsigned bin, unsigned want, unsigned *got);

/* Gives every object of the list back to its folio. */
void pm_folio_free_list(unsigned bin, void *head, const char *call);

/* Gives back the oldest empty, committed folio of some bin that became
 * empty before `before` (ms, see pm_os_now_ms), or of any age when force.
 * Returns 1 if there was one. */
int pm_folio_purge_one(uint32_t before, int force);

/* Gives back the whole pages that lie inside runs of free objects in the
 * folios holding objects, for bins whose folios of several pages hold at
 * most 64 objects (the medium ones): pages of objects free since the call
 * before and not handed out in between, or of every free object when
 * force.  A call looks at up to 128 folios a bin, from emptier to
 * fuller ones, starting where the call before stopped, and puts each at
 * the end of its list, so that its work is bounded and calls in turn
 * reach every folio.  Returns how many folios gave pages back. */
unsigned pm_folio_release_pages(int force);

/* Whether a release may still give pages back: free objects lie in such
 * folios whose pages have not gone back. */
int pm_folio_release_wanted(void);

/* Objects of bin not free in its folios (in use or cached), read without
 * the lock: a hint that may lag a concurrent change. */
size_t pm_folio_out(unsigned bin);

/* For tests and statistics: what bin holds now, read under its lock. */
struct pm_folio_census {
    size_t objects;       /* objects of its carved folios */
    size_t free;          /* how many of them are free in their folios */
    size_t folios;        /* folios carved in its chunks */
    size_t folios_in_use; /* how many of them hold objects */
    size_t active;        /* what those folios may commit */
    size_t chunks;        /* chunks it holds */
    size_t dirty;         /* bytes of empty folios, and of its chunks' tails
                             not carved yet, that may be committed */
};
void pm_folio_census(unsigned bin, struct pm_folio_census *out);

/* Calls fn with each object of chunk, a chunk of bin, that is not free in
 * its folio (in use, or in a cache), and the bin's object size: in
 * address order, under the bin's lock. */
void pm_folio_each_taken(unsigned bin, uintptr_t chunk, void (*fn)(void *ctx, void *object, size_t size),
                         void *ctx);

/* Bytes of the bins' bookkeeping: their state and their chunks' header
 * pages (for statistics). */
size_t pm_folio_metadata(void);

/* Checks every bin against its specification: each folio on the list its
 * state names, its free count the population of its bitmap and within the
 * bounds of that list, a bin's non-empty bit set exactly for its non-empty
 * fullness lists, its dirty bit set while it has dirty folios, objects
 * taken and free no more than carved.  Ends in pm_fatal naming the first
 * that fails.  Takes each bin's lock in turn. */
void pm_folio_check(void);

void pm_folio_prefork(void);
void pm_folio_postfork(void);

#endif
