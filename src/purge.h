/* The purge policy of the footprint rule (footprint.h), over the two
 * places that hold dirty memory: empty folios of the bins and free runs of
 * the chunk pool.
 *
 * Promises: after pm_purge_settle(), the bounds of footprint.h hold as
 * far as dirty and pooled memory could be given back, and nothing has
 * been dirty or pooled for much longer than PM_DECAY_MS once a slow path
 * has run since. */
#ifndef PM_PURGE_H
#define PM_PURGE_H

void pm_purge_settle(void);

/* Gives back all dirty memory now. */
void pm_purge_all(void);

#endif
