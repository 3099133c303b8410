/* SPDX-License-Identifier: MIT */
/* The purge policy of the footprint rule (footprint.h), over the two
 * places that hold dirty memory: empty folios of the bins and free runs of
 * the chunk pool.
 *
 * Promises: after pm_purge_settle(), the bounds of footprint.h hold as
 * far as dirty and pooled memory could be given back, and nothing has
 * been dirty or pooled for much longer than PM_DECAY_MS once a settle
 * has run since.  The callers of folios and huge objects run it when
 * asked (background.h), and so does the background thread. */
#ifndef PM_PURGE_H
#define PM_PURGE_H

#include "footprint.h"

/* Clears the calling thread's pm_fp_unsettled, then gives back what the
 * bounds and the decay time ask for. */
void pm_purge_settle(void);

/* Whether dirty or pooled memory, or free pages inside folios in use,
 * wait to be given back. */
int pm_purge_pending(void);

/* Gives back all dirty and pooled memory now; returns 1 if there was
 * any. */
int pm_purge_all(void);

#endif
