/* SPDX-License-Identifier: MIT */
#include "purge.h"
#include "chunk_pool.h"
#include "folio.h"
#include "footprint.h"
#include "os.h"

static uint32_t next_decay, next_release;

int pm_purge_pending(void)
{
    size_t dirty, peak;
    pm_fp_read(&dirty, &peak);
    return dirty != 0 || pm_folio_release_wanted();
}

void pm_purge_settle(void)
{
    pm_fp_unsettled = 0;
    /* Folios first: a chunk whose last folio goes back joins the pool,
     * whose bound counts it. */
    while (pm_fp_folios_over() && pm_folio_purge_one(0, 1))
        ;
    while (pm_fp_pool_over() && pm_pool_purge_committed())
        ;
    uint32_t now = pm_os_now_ms();
    if (!pm_os_due(&next_decay, now, PM_DECAY_MS / 4))
        return;
    while (pm_pool_purge_one(now - PM_DECAY_MS, 0) || pm_folio_purge_one(now - PM_DECAY_MS, 0))
        ;
    /* Pages inside folios in use go back once free from one release
     * visit to the next, PM_DECAY_MS or more apart. */
    if (pm_os_due(&next_release, now, PM_DECAY_MS))
        pm_folio_release_pages(0);
}

int pm_purge_all(void)
{
    int any = 0;
    while (pm_folio_purge_one(0, 1))
        any = 1;
    while (pm_pool_purge_one(0, 1))
        any = 1;
    if (pm_folio_release_pages(1))
        any = 1;
    return any;
}
