/* SPDX-License-Identifier: MIT */
/* The canaries of large objects at an offset in their slot (large.h says
 * what they catch): while such an object is live, the line before it
 * holds its canary; once it is freed, its first word holds another.  Each
 * word is derived from the object's address and the link secret
 * (free_object.h), which the program's data does not hold by chance.  An
 * object at its slot's start has no room before it and no canary.
 *
 * Promises: pm_large_release aborts, naming the call, when the canary
 * before the object it frees was overwritten (or the pointer is no
 * object's start); pm_large_check_freed aborts when the object a slot
 * notes no longer holds its freed canary (it was written after it was
 * freed). */
#ifndef PM_CANARY_H
#define PM_CANARY_H

#include <stdint.h>
#include "free_object.h"
#include "layout.h"
#include "os.h"

/* The canary's word `before` words before a live object p (1 to
 * PM_CANARY_WORDS), or in the first word of a freed one (0). */
static inline uintptr_t pm_large_canary(const void *p, int before)
{
    return (uintptr_t)p ^ pm_link_secret ^ (uintptr_t)before;
}

/* A live object's canary fills the line before it, which its offset (at
 * least a line) leaves in its slot: a store up to a line before the
 * object changes it. */
#define PM_CANARY_WORDS ((int)(PM_LINE / sizeof(uintptr_t)))

static inline void pm_large_canary_set(void *p)
{
    for (int k = 1; k <= PM_CANARY_WORDS; k++)
        ((uintptr_t *)p)[-k] = pm_large_canary(p, k);
}

static inline int pm_large_canary_intact(const void *p)
{
    uintptr_t diff = 0;
    for (int k = 1; k <= PM_CANARY_WORDS; k++)
        diff |= ((const uintptr_t *)p)[-k] ^ pm_large_canary(p, k);
    return !diff;
}

/* Frees p, the object at slot: aborts, naming call, if p is at an offset
 * and its canary was overwritten (or p is no object's start).  The slot
 * then notes p, and p carries its freed canary. */
static inline void pm_large_release(void *slot, void *p, const char *call)
{
    if (p == slot)
        return;
    if (pm_unlikely(!pm_large_canary_intact(p)))
        pm_fatal(call, p, "memory before the object overwritten, or a pointer inside it");
    pm_large_note(slot, p);
    *(uintptr_t *)p = pm_large_canary(p, 0);
}

/* A freed slot leaving a list, handed out again or taken back by its
 * folio: the object it was last freed by at an offset must still carry
 * its freed canary, or the call aborts; the note goes, so that no later
 * life of the slot (or of its memory in another bin) finds it. */
static inline void pm_large_check_freed(void *slot, const char *call)
{
    void *old = pm_large_noted(slot);
    if (old != slot && pm_unlikely(*(uintptr_t *)old != pm_large_canary(old, 0)))
        pm_fatal(call, old, "large object written after it was freed");
    ((uintptr_t *)slot)[2] = 0;
}

#endif
