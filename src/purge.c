#include "purge.h"
#include "chunk_pool.h"
#include "folio.h"
#include "footprint.h"
#include "os.h"

static uint32_t next_decay;

void pm_purge_settle(void)
{
    while (pm_fp_pool_over() && pm_pool_purge_one(0, 1))
        ;
    while (pm_fp_folios_over() && pm_folio_purge_one(0, 1))
        ;
    uint32_t now = pm_os_now_ms(), due = __atomic_load_n(&next_decay, __ATOMIC_RELAXED);
    if ((int32_t)(now - due) < 0 ||
        !__atomic_compare_exchange_n(&next_decay, &due, now + PM_DECAY_MS / 4, 0, __ATOMIC_RELAXED,
                                     __ATOMIC_RELAXED))
        return;
    while (pm_pool_purge_one(now - PM_DECAY_MS, 0) || pm_folio_purge_one(now - PM_DECAY_MS, 0))
        ;
}

void pm_purge_all(void)
{
    while (pm_folio_purge_one(0, 1))
        ;
    while (pm_pool_purge_one(0, 1))
        ;
}
