/* SPDX-License-Identifier: MIT */
/* Objects of size 0 (malloc(0), operator new(0)): each a distinct address
 * in a chunk that is inaccessible past its first pages, so that any read
 * or write of one faults and is reported (access_fault.h).  A zero chunk's first pages hold a
 * bit for every PM_ALIGN of it, set while that address is handed out, so
 * that a freed address serves again and the address space a program's
 * zero-size objects take is bounded by how many are live at once.
 * Size 0's entry in the size table is the thread cache's zero entry,
 * whose list is always empty (thread_cache.h), so that malloc's fast path
 * is the same instructions and a request of 0 goes to its refill, which
 * calls here.
 *
 * Promises: pm_zero_alloc returns an address PM_ALIGN-aligned, in a chunk
 * whose entry reads PM_TAG_ZERO, past its readable pages, not handed out
 * again until pm_zero_free; NULL when no chunk could be mapped. */
#ifndef PM_ZERO_H
#define PM_ZERO_H

void *pm_zero_alloc(void);

/* Whether p, in a chunk tagged PM_TAG_ZERO, is a zero-size object handed
 * out and not freed since; misuse that is no object's address at all ends
 * in pm_fatal naming call. */
int pm_zero_live(const void *p, const char *call);

/* Frees p, a zero-size object pm_zero_live found live; one that another
 * thread freed since ends in pm_fatal naming call. */
void pm_zero_free(void *p, const char *call);

#endif
