#include "footprint.h"
#include "folio.h"
#include "huge.h"
#include "os.h"

static size_t inuse_bytes, dirty_bytes, peak_bytes;
static uint32_t next_decay;

void pm_fp_inuse(long delta)
{
    size_t now = __atomic_add_fetch(&inuse_bytes, (size_t)delta, __ATOMIC_RELAXED);
    size_t peak = __atomic_load_n(&peak_bytes, __ATOMIC_RELAXED);
    while (now > peak &&
           !__atomic_compare_exchange_n(&peak_bytes, &peak, now, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

void pm_fp_dirty(long delta)
{
    __atomic_add_fetch(&dirty_bytes, (size_t)delta, __ATOMIC_RELAXED);
}

static int over_peak(void)
{
    return __atomic_load_n(&inuse_bytes, __ATOMIC_RELAXED) + __atomic_load_n(&dirty_bytes, __ATOMIC_RELAXED) >
           __atomic_load_n(&peak_bytes, __ATOMIC_RELAXED);
}

void pm_fp_settle(void)
{
    while (over_peak() && (pm_huge_purge_one(0, 1) || pm_folio_purge_one(0, 1)))
        ;
    uint32_t now = pm_os_now_ms(), due = __atomic_load_n(&next_decay, __ATOMIC_RELAXED);
    if ((int32_t)(now - due) < 0 ||
        !__atomic_compare_exchange_n(&next_decay, &due, now + PM_DECAY_MS / 4, 0, __ATOMIC_RELAXED,
                                     __ATOMIC_RELAXED))
        return;
    while (pm_huge_purge_one(now - PM_DECAY_MS, 0) || pm_folio_purge_one(now - PM_DECAY_MS, 0))
        ;
}

void pm_fp_purge_all(void)
{
    while (pm_huge_purge_one(0, 1) || pm_folio_purge_one(0, 1))
        ;
}

void pm_fp_read(size_t *dirty, size_t *peak)
{
    *dirty = __atomic_load_n(&dirty_bytes, __ATOMIC_RELAXED);
    *peak = __atomic_load_n(&peak_bytes, __ATOMIC_RELAXED);
}
