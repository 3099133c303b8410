/* The footprint counters shared by folios, the chunk pool and huge
 * objects: bytes in use (in folios that hold objects, and in huge objects)
 * and bytes dirty (empty, but maybe still committed), with the high-water
 * mark of bytes in use.  The rule they serve (purge.h): freed memory stays
 * committed so that allocating again costs no page faults, but committed
 * memory stays under the high-water mark, and nothing stays dirty longer
 * than PM_DECAY_MS.
 *
 * Promises: in use and dirty never go below zero (checked in debug
 * builds); the mark never falls. */
#ifndef PM_FOOTPRINT_H
#define PM_FOOTPRINT_H

#include <stddef.h>
#include <stdint.h>

#define PM_DECAY_MS 1000

void pm_fp_inuse(long delta);
void pm_fp_dirty(long delta);

/* Whether in use + dirty exceeds the high-water mark. */
int pm_fp_over_peak(void);

#endif
