/* Free-list links.  Every list of free objects (a thread's lists, the
 * batches the cache levels move, the lists folios hand out and take back)
 * links an object to the next through its first word, and the cache levels
 * stack batches through the second word of each batch's first object.
 *
 * A link is stored encoded: xored with a secret drawn once, before the
 * first link is written (glibc's Safe-Linking does the same with address
 * bits).  Objects are 16-byte aligned, so a link that decodes to an
 * address that is not was written by something else: the program, writing
 * to a freed object or past the end of its neighbour.  Decoding checks
 * this and ends in pm_fatal naming the call.  The secret's low four bits
 * are PM_LINK_LOW, not drawn, so that what a check catches does not depend
 * on the draw: a link overwritten with bytes whose low four bits are not
 * PM_LINK_LOW's (zeros, 0xff, ASCII letters but 'K' and 'k', pointers)
 * always fails the check.  The other bits are drawn: without them, an
 * overwrite cannot aim a link at an address of its choosing.
 *
 * Promises: pm_link_init has run before any link is written (the thread
 * cache calls it when a thread starts); a link read back with
 * pm_link_next or pm_link_decode is the one pm_link_set or pm_link_encode
 * wrote, or the call aborts. */
#ifndef PM_FREE_LINK_H
#define PM_FREE_LINK_H

#include <stdint.h>
#include "layout.h"
#include "os.h"

/* Odd, so that no aligned pointer or small even number passes, and rare
 * as the low half of a byte a program writes. */
#define PM_LINK_LOW 0xbu

#pragma GCC visibility push(hidden)
extern uint64_t pm_link_secret;
#pragma GCC visibility pop

/* Draws the secret, once per process. */
void pm_link_init(void);

/* "primalloc: CALL(P): corrupted free-list link", then abort: p is the
 * free object whose link failed the check. */
_Noreturn void pm_link_corrupt(const char *call, const void *p);

static inline uintptr_t pm_link_encode(const void *next, uint64_t key)
{
    return (uintptr_t)next ^ key;
}

/* The link of object p, stored as word, decoded with key. */
static inline void *pm_link_decode(const void *p, uintptr_t word, uint64_t key, const char *call)
{
    uintptr_t next = word ^ key;
    if (pm_unlikely(next & (PM_ALIGN - 1)))
        pm_link_corrupt(call, p);
    return (void *)next;
}

static inline void pm_link_set(void *p, const void *next)
{
    *(uintptr_t *)p = pm_link_encode(next, pm_link_secret);
}

static inline void *pm_link_next(const void *p, const char *call)
{
    return pm_link_decode(p, *(const uintptr_t *)p, pm_link_secret, call);
}

#endif
