/* The note a freed large slot carries: the pointer it was freed by, so
 * that a double free found later, by the folios or by free, names the
 * pointer the program passed rather than the slot (large.h places large
 * objects at an offset in their slot).  A header of its own because the
 * folios, below the large-object module, read it.
 *
 * The guards of large objects live here too (large.h says what they
 * catch): the folios check a freed object's mark when they take its slot
 * back.
 *
 * Promises: pm_large_noted returns the pointer pm_large_note stored, or
 * the slot itself when the slot's third word holds no note. */
#ifndef PM_LARGE_NOTE_H
#define PM_LARGE_NOTE_H

#include <stdint.h>
#include "layout.h"
#include "free_link.h"
#include "os.h"

/* The note is the offset plus a value derived from the slot, so that user
 * data left in a slot freed without a note is not taken for one. */
static inline uintptr_t pm_large_note_key(const void *slot)
{
    return ((uintptr_t)slot * 0x9e3779b97f4a7c15ull) | 1;
}

/* A freed slot remembers the pointer it was freed by in its third word. */
static inline void pm_large_note(void *slot, void *p)
{
    ((uintptr_t *)slot)[2] = pm_large_note_key(slot) + (uintptr_t)((char *)p - (char *)slot);
}

static inline void *pm_large_noted(void *slot)
{
    uintptr_t offset = ((uintptr_t *)slot)[2] - pm_large_note_key(slot);
    return offset < PM_PAGE ? (char *)slot + offset : slot;
}

/* The word before a guarded object (before) or the first word of a freed
 * one: derived from its address and the link secret, which the program's
 * data does not hold by chance. */
static inline uintptr_t pm_large_guard(const void *p, int before)
{
    return (uintptr_t)p ^ pm_link_secret ^ (uintptr_t)before;
}

/* Frees p, the object at slot: aborts, naming call, if p is guarded and
 * its guard was overwritten (or p is no object's start).  The slot then
 * notes p, and a guarded p carries its freed mark. */
static inline void pm_large_release(void *slot, void *p, const char *call)
{
    if (p == slot)
        return;
    if (pm_unlikely(((uintptr_t *)p)[-1] != pm_large_guard(p, 1)))
        pm_fatal(call, p, "memory before the object overwritten, or a pointer inside it");
    pm_large_note(slot, p);
    *(uintptr_t *)p = pm_large_guard(p, 0);
}

/* A freed slot leaving a list, handed out again or taken back by its
 * folio: the object it was last freed by at an offset must still carry
 * its freed mark, or the call aborts; the note goes, so that no later life
 * of the slot (or of its memory in another bin) finds it. */
static inline void pm_large_settle(void *slot, const char *call)
{
    void *old = pm_large_noted(slot);
    if (old != slot && pm_unlikely(*(uintptr_t *)old != pm_large_guard(old, 0)))
        pm_fatal(call, old, "large object written after it was freed");
    ((uintptr_t *)slot)[2] = 0;
}

#endif
