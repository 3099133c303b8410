/* SPDX-License-Identifier: MIT */
/* What a free object holds, at every level: the one place that says
 * which word of a free object means what.
 *
 *   where                             word 0        word 1                word 2
 *   a thread's list, spare, homeward  next object   upper half: the mark  -
 *   a batch at a CPU or the global    next object   the mark; the first   -
 *   level (a chain of batches)                      object: the next
 *                                                   batch
 *   a CPU's loose objects             next object   the mark              -
 *   a list folios hand out            next object   the mark; the head: 0 -
 *   a list folios take back           next object   -                     -
 *   a freed large slot                as above      as above              the note
 *   a freed large object at an        its freed     -                     -
 *   offset in its slot                canary
 *   a live large object at an         (the line before it: its canary;
 *   offset in its slot                canary.h)
 *
 * Free objects in a folio hold nothing: the folio record's bitmap says
 * they are free.  So every object a thread's list can receive carries the
 * mark, but a batch's first and a folio list's head, which the refill
 * that takes the list hands out itself.  A thread's pop takes the mark
 * off the object it hands out, and one that lacks it was handed out
 * already (freed twice) or written after it was freed; the refill clears
 * word 1 of the object it hands out.  So a live object never carries the
 * mark unless the program stores it.
 *
 * Links.  Every link (word 0, and word 1 of a batch's first object) is
 * stored encoded: xored with a secret drawn once, before the first link
 * is written (glibc's Safe-Linking does the same with address bits).
 * Objects are 16-byte aligned, so a link that decodes to an address that
 * is not was written by something else: the program, writing to a freed
 * object or past the end of its neighbour.  Decoding checks this and ends
 * in pm_fatal naming the call.  The secret's low four bits are
 * PM_LINK_LOW, not drawn, so that what a check catches does not depend on
 * the draw: a link overwritten with bytes whose low four bits are not
 * PM_LINK_LOW's (zeros, 0xff, ASCII letters but 'K' and 'k', pointers)
 * always fails the check.  The other bits are drawn: without them, an
 * overwrite cannot aim a link at an address of its choosing.
 *
 * The fast library (built with PM_FAST) leaves out the free mark and the
 * links' encoding, its thread lists the test of a freed object against
 * their head, and free's fast path the test that a pointer starts an
 * object: links are stored as they are (the list end still fails
 * pm_link_ok, which serves as the empty test), no mark is written or
 * taken, pm_carries_mark is always 0.  The same source otherwise.
 *
 * Promises: pm_link_init has run before any link is written (the thread
 * cache calls it when a thread starts); a link read back with
 * pm_link_next, pm_link_decode or pm_batch_next is the one written, or
 * the call aborts; pm_large_noted returns the pointer pm_large_note
 * stored, or the slot itself when the slot's third word holds no note. */
#ifndef PM_FREE_OBJECT_H
#define PM_FREE_OBJECT_H

#include <stdint.h>
#include "arch.h"
#include "layout.h"
#include "os.h"

#ifdef PM_FAST
#define PM_CHECKED 0
#else
#define PM_CHECKED 1
#endif

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

/* The end of every list.  A link to no object is stored as a link to
 * pm_list_end, a mapped word, so that malloc's pop prefetches the next
 * object without testing for NULL; and an empty thread list holds it as
 * its head, whose own link (its word, 1) decodes misaligned under the
 * secret and before it is drawn alike, so that the pop of an empty list
 * fails the link check and takes the slow path, with no test for empty.
 * The decoders below give NULL for it. */
#pragma GCC visibility push(hidden)
extern const uintptr_t pm_list_end[2];
#pragma GCC visibility pop
#define PM_LIST_END ((void *)pm_list_end)

/* next as a link holds it: the list end for NULL. */
static inline void *pm_or_list_end(const void *next)
{
    return (void *)(next ? next : PM_LIST_END);
}

/* A link's target as the levels below the thread cache take it: NULL for
 * the list end. */
static inline void *pm_list_end_as_null(const void *next)
{
    return next == PM_LIST_END ? 0 : (void *)next;
}

/* The key links are stored with: the secret, or none in the fast
 * library. */
static inline uint64_t pm_link_key(void)
{
    return PM_CHECKED ? pm_link_secret : 0;
}

/* The stored form of a link to next, an object or PM_LIST_END, never
 * NULL. */
static inline uintptr_t pm_link_word(const void *next, uint64_t key)
{
    return (uintptr_t)next ^ key;
}

/* The stored form of a link to next, an object or NULL. */
static inline uintptr_t pm_link_encode(const void *next, uint64_t key)
{
    return pm_link_word(pm_or_list_end(next), key);
}

/* Whether a decoded link can be one: objects are PM_ALIGN-aligned, and
 * the key's low bits (PM_LINK_LOW) make a word the program overwrote
 * with an aligned pointer or a small even number decode misaligned. */
static inline int pm_link_ok(uintptr_t next)
{
    return !(next & (PM_ALIGN - 1));
}

/* The link of object p, stored as word, decoded with key: NULL at the
 * list's end. */
static inline void *pm_link_decode(const void *p, uintptr_t word, uint64_t key, const char *call)
{
    uintptr_t next = word ^ key;
    if (pm_unlikely(!pm_link_ok(next)))
        pm_link_corrupt(call, p);
    return pm_list_end_as_null((void *)next);
}

static inline void pm_link_set(void *p, const void *next)
{
    *(uintptr_t *)p = pm_link_encode(next, pm_link_key());
}

static inline void *pm_link_next(const void *p, const char *call)
{
    return pm_link_decode(p, *(const uintptr_t *)p, pm_link_key(), call);
}

/* Word 1 of a batch's first object: the next batch of its chain. */
static inline void pm_batch_set_next(void *batch, const void *next)
{
    ((uintptr_t *)batch)[1] = pm_link_encode(next, pm_link_key());
}

static inline void *pm_batch_next(const void *batch, const char *call)
{
    return pm_link_decode(batch, ((const uintptr_t *)batch)[1], pm_link_key(), call);
}

/* The mark a free object carries in the upper half of its second word: a
 * value no program has reason to store.  Half a word is one store of an
 * immediate where a whole one takes two instructions.  Free writes it and
 * never reads it on its fast path: the object's line is often cold when
 * it is freed (another thread's, or long lived), and a store to it waits
 * for nothing where a load holds up every instruction after it. */
#define PM_FREE_MARK 0xf7e1a5c3u

typedef uint32_t pm_mark_half __attribute__((may_alias));
#define PM_FREE_MARK_HALF (2 * sizeof(void *) / sizeof(pm_mark_half) - 1)

static inline void pm_mark(void *p)
{
    if (PM_CHECKED)
        ((pm_mark_half *)p)[PM_FREE_MARK_HALF] = PM_FREE_MARK;
}

/* Links free object p in front of next, an object or PM_LIST_END, and
 * marks it free. */
static inline void pm_link_marked(void *p, const void *next)
{
    *(uintptr_t *)p = pm_link_word(next, pm_link_key());
    pm_mark(p);
}

/* Whether the object carries the mark. */
static inline int pm_carries_mark(const void *p)
{
    return PM_CHECKED && ((const pm_mark_half *)p)[PM_FREE_MARK_HALF] == PM_FREE_MARK;
}

/* Takes the mark off p, a free object about to be handed out: 1 if p
 * carried it; 0, with p left as it was, if not.  One exchange clears a
 * mark and tests for it, on the line the pop reads anyway (arch.h). */
static inline int pm_take_mark(void *p)
{
    return !PM_CHECKED || pm_arch_take(&((pm_mark_half *)p)[PM_FREE_MARK_HALF], PM_FREE_MARK);
}

/* The large-object note: which object a freed large slot was freed by,
 * for the canaries' checks (canary.h) and the report of a double free.
 * The note is the offset plus a value derived from the slot, so that user
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
