/* The footprint rule shared by folios and huge runs.  Freed memory that is
 * empty stays committed ("dirty") so that allocating again costs no page
 * faults, but never so much that committed memory exceeds the high-water
 * mark of memory in use; and not for more than PM_DECAY_MS.
 *
 * Promises: after pm_fp_settle(), in use + dirty <= high-water mark, as far
 * as dirty memory could be given back. */
#ifndef PM_FOOTPRINT_H
#define PM_FOOTPRINT_H

#include <stddef.h>
#include <stdint.h>

#define PM_DECAY_MS 1000

void pm_fp_inuse(long delta);
void pm_fp_dirty(long delta);

/* Gives back dirty memory while committed memory is over the mark, then
 * anything dirty for longer than PM_DECAY_MS. */
void pm_fp_settle(void);

/* Gives back all dirty memory now. */
void pm_fp_purge_all(void);

/* For statistics: dirty bytes, and the high-water mark of memory in use. */
void pm_fp_read(size_t *dirty, size_t *peak);

#endif
