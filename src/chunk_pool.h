/* SPDX-License-Identifier: MIT */
/* The supply of chunks: runs of whole, PM_CHUNK-aligned chunks for the bins
 * (one chunk at a time) and for huge objects (one run each), and the pool
 * of free runs they give back, shared by every size class.
 *
 * A free run is coalesced with its free neighbours when it comes back
 * (the chunk table names its record on its first and last chunk, as
 * boundary tags; records live apart, so a free run's pages are never
 * touched), and kept with whatever pages it has committed, so the next
 * taker reuses them without page faults.  Runs that may hold committed
 * pages and runs that read as zero are kept apart, never coalesced with
 * each other, and takers get the best fit among the first, newest first,
 * from the front of a run, and among the second only when none fits: a
 * committed page is reused before a new one is faulted in and zeroed.
 * A run no committed run can hold is cut from a clean one, and the pages
 * of committed runs, the largest first, move into it (mremap moves page
 * tables, not bytes), their ranges unmapped: a huge object bigger than
 * any freed one still reuses their pages.
 * Each free run counts the bytes it may hold committed (a bound: where in
 * the run they lie is not known, so every piece cut from it keeps the
 * bound), and the sum is counted as pooled by the footprint rule
 * (footprint.h); only a run counted 0 reads as zero.  A purged run is
 * unmapped, not only uncommitted, so the address space held follows the
 * footprint rather than the history of size classes; clean runs, which
 * the footprint does not count, are unmapped before more address space is
 * reserved while they outnumber the chunks in use.
 *
 * New address space comes in reservations that grow with what is mapped
 * (a quarter of it, from RESERVE_MIN to RESERVE_MAX in chunk_pool.c), so a
 * small program maps little.
 * A reservation joins the pool as a free run with nothing committed.
 * A bin that holds few objects, or one that no reservation can serve, gets
 * a partial chunk instead when the pool has no free run: the chunk's
 * address space is its own in the chunk table, but only its start is
 * mapped, and the bin maps more as it carves (pm_pool_grow_chunk), so that
 * the address space held follows what the bins use, not how many there
 * are: under an address-space limit (RLIMIT_AS) every mapped byte counts.
 * A partial chunk never joins the pool: it is unmapped when its bin gives
 * it back.
 *
 * Every chunk of a reservation is, at any time, in exactly one of: a bin
 * (tag PM_BIN_TAG(bin)), a huge object (PM_TAG_HUGE, PM_TAG_HUGE_BODY),
 * the pool (PM_TAG_FREE); or is unmapped (tag 0). */
#ifndef PM_CHUNK_POOL_H
#define PM_CHUNK_POOL_H

#include <stddef.h>
#include <stdint.h>

/* A run of `chunks` chunks aligned to `align` (a power of two, at least
 * PM_CHUNK).  Its first chunk is tagged `tag` with `link`, the others
 * PM_TAG_HUGE_BODY with the run's length.  *dirty says how many of its
 * bytes may hold committed pages and old contents; they are the caller's
 * now, no longer counted as pooled.  NULL when the kernel has no address
 * space to give, even after every free run was unmapped. */
void *pm_pool_take(size_t chunks, size_t align, uint32_t tag, uint32_t link, size_t *dirty);

/* A chunk for a bin, tagged as by pm_pool_take: from a free run, or from
 * a new reservation when `may_reserve`, and then *partial is 0; when
 * neither can be had, a partial chunk, *partial 1, of which only the first
 * `head` bytes and `len` bytes from `at` on (at >= head, or len 0; all
 * multiples of the kernel's page) are mapped, or, where those cannot be
 * placed, a whole one mapped afresh (*partial 0).  *dirty as for
 * pm_pool_take.  NULL when the kernel has no address space for either. */
void *pm_pool_take_chunk(size_t head, size_t at, size_t len, int may_reserve, uint32_t tag, uint32_t link,
                         size_t *dirty, int *partial);

/* Maps [at, at + len) of a partial chunk (multiples of the kernel's page).
 * 1 if done; 0 when the kernel refuses or another mapping lies there. */
int pm_pool_grow_chunk(void *at, size_t len);

/* How many bytes partial chunks may map ahead of what they carve: below
 * the address space held when the kernel last refused a partial chunk
 * more, unless it has since given more beyond that (SIZE_MAX then).
 * Under an address-space limit, what one bin maps ahead is what another
 * is refused. */
size_t pm_pool_ahead(void);

/* Unmaps [at, at + len) of a chunk the caller holds (multiples of the
 * kernel's page), which makes it or leaves it partial. */
void pm_pool_unmap_part(void *at, size_t len);

/* Gives back a partial chunk, whose mapped bytes are the first `head` and
 * `len` from `at` on: they are unmapped. */
void pm_pool_put_part(void *base, size_t head, size_t at, size_t len);

/* Takes the `chunks` chunks from `end` on, if they are free, to grow the
 * run that ends there; they are tagged PM_TAG_HUGE_BODY with link 0 (the
 * caller sets the length).  1 if it took them; *dirty as for pm_pool_take. */
int pm_pool_extend(uintptr_t end, size_t chunks, size_t *dirty);

/* Moves the pages of the caller's run at base, `chunks` long, to the front
 * of a new run of `grown` chunks, tagged as by pm_pool_take; the old run's
 * address space is unmapped.  NULL (nothing changed) when no run could be
 * had. */
void *pm_pool_move(void *base, size_t chunks, size_t grown, uint32_t tag, uint32_t link);

/* Gives back a run whose chunks the caller owns; up to `dirty` of its
 * bytes may hold committed pages (counted as pooled from now on). */
void pm_pool_put(void *base, size_t chunks, size_t dirty);

/* Unmaps up to PURGE_CHUNKS chunks (chunk_pool.c) from the end of the
 * free run that has been free longest, if it came back before `before`
 * (ms, pm_os_now_ms), or whatever its age when force.  1 if it unmapped any. */
int pm_pool_purge_one(uint32_t before, int force);

/* The same from the oldest free run that may hold committed pages: the
 * footprint rule counts no others, so unmapping them brings it no nearer
 * its bound. */
int pm_pool_purge_committed(void);

/* Chunks held (whole or partial), the bytes of them mapped (now, and at
 * most so far), chunks and runs in the pool, and bytes of the pool's
 * records. */
struct pm_pool_census {
    size_t mapped, bytes, peak, free, runs, metadata;
};
void pm_pool_census(struct pm_pool_census *out);

/* Checks every invariant of the pool against the chunk table; ends in
 * pm_fatal naming the first that fails. */
void pm_pool_check(void);

void pm_pool_prefork(void);
void pm_pool_postfork(void);

#endif
