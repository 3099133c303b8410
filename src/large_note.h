/* The note a freed large slot carries: the pointer it was freed by, so
 * that a double free found later, by the folios or by free, names the
 * pointer the program passed rather than the slot (large.h places large
 * objects at an offset in their slot).  A header of its own because the
 * folios, below the large-object module, read it.
 *
 * Promises: pm_large_noted returns the pointer pm_large_note stored, or
 * the slot itself when the slot's third word holds no note. */
#ifndef PM_LARGE_NOTE_H
#define PM_LARGE_NOTE_H

#include <stdint.h>
#include "layout.h"

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

#endif
