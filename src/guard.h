/* SPDX-License-Identifier: MIT */
/* Sampled guard pages, off unless PRIMALLOC_GUARD_RATE=N (N >= 1) is in the
 * environment when the first thread cache starts.  Then about one
 * allocation in N is served from a mapping of its own, its object ending
 * where an inaccessible guard page starts, so that an overflow past the
 * object's usable size faults.  The page before the object's first page
 * is inaccessible too, and the bytes of its first page before it are
 * checked when it is freed, so that an underflow either faults or is
 * reported by the free.  Freed, the object's pages are made inaccessible
 * and stay so while the last PM_GUARD_QUARANTINE freed objects are kept:
 * a use after free faults.  The SIGSEGV handler that this installs writes
 * one line, without malloc, naming the access, the object, its size and
 * the return addresses of the calls that allocated and freed it, then
 * aborts; a fault elsewhere is left to the action found before.
 *
 * The fast paths never look: allocations are counted where a thread's
 * list is refilled (thread_cache.c) and where large and huge objects are
 * allocated (api.c), and pm_guard_rate is read only there.  Allocations a
 * thread serves from objects it freed itself are not counted, so the rate
 * is one in N of the allocations counted.
 *
 * Promises: an object handed out is aligned as asked and ends at most
 * PM_ALIGN - 1 bytes before the guard page (none when its size is a
 * multiple of PM_ALIGN); pm_guard_find knows it until it leaves the
 * quarantine, after which its address is no longer primalloc's.  At most
 * PM_GUARD_OBJECTS objects are guarded or quarantined at a time; beyond
 * that, allocations go unsampled. */
#ifndef PM_GUARD_H
#define PM_GUARD_H

#include <stddef.h>
#include <stdint.h>

#define PM_GUARD_QUARANTINE 64
#define PM_GUARD_OBJECTS 4096

#pragma GCC visibility push(hidden)
/* N, or 0 when sampling is off. */
extern uint32_t pm_guard_rate;
#pragma GCC visibility pop

/* Reads the environment, once per process. */
void pm_guard_init(void);

/* With sampling on: how many of the next allocations, at most `most`, the
 * calling thread serves unsampled, counting them as done; 0 when the next
 * one is to be sampled. */
unsigned pm_guard_quota(unsigned most);

/* A guarded object of size bytes aligned to align (a power of two), or
 * NULL when none can be had; site: the return address recorded. */
void *pm_guard_alloc(size_t size, size_t align, void *site);

/* Whether a guarded object's mapping, live or quarantined, overlaps
 * [lo, lo + len).  The chunk pool asks before it keeps a partial chunk,
 * whose unmapped rest the kernel may have given a guarded object: the
 * chunk table would take that object for the chunk's. */
int pm_guard_overlaps(uintptr_t lo, size_t len);

/* Whether p is a guarded object; if so, *usable: its bytes, *freed:
 * whether it was freed (it is in the quarantine). */
int pm_guard_find(const void *p, size_t *usable, int *freed);

/* Frees guarded object p (pm_guard_find found it, not freed) for call,
 * the API function named if the bytes before p were overwritten. */
void pm_guard_free(void *p, const char *call, void *site);

/* Calls fn with each guarded object not freed, its usable bytes and the
 * site that allocated it, under the lock; returns the extent of the
 * records, which hold those objects' addresses (NULL while sampling is
 * off). */
const void *pm_guard_each(void (*fn)(void *ctx, void *p, size_t usable, void *site), void *ctx,
                          size_t *records_len);

/* Checks the records against the table and the quarantine: each record in
 * use is found by its object's address, lies in its mapping and ends at
 * its guard page; each unused one is empty and listed once as unused; the
 * quarantine holds exactly the freed records, each once.  Ends in pm_fatal
 * naming the first that fails.  Takes the lock while it runs. */
void pm_guard_check(void);

void pm_guard_prefork(void);
void pm_guard_postfork(void);

#endif
