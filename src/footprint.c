#include "footprint.h"
#include "os.h"

static size_t inuse_bytes, dirty_bytes, peak_bytes;

void pm_fp_inuse(long delta)
{
    size_t now = __atomic_add_fetch(&inuse_bytes, (size_t)delta, __ATOMIC_RELAXED);
    PM_ASSERT((long)now >= 0);
    size_t peak = __atomic_load_n(&peak_bytes, __ATOMIC_RELAXED);
    while (now > peak &&
           !__atomic_compare_exchange_n(&peak_bytes, &peak, now, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

void pm_fp_dirty(long delta)
{
    size_t now = __atomic_add_fetch(&dirty_bytes, (size_t)delta, __ATOMIC_RELAXED);
    PM_ASSERT((long)now >= 0);
    (void)now;
}

int pm_fp_over_peak(void)
{
    return __atomic_load_n(&inuse_bytes, __ATOMIC_RELAXED) + __atomic_load_n(&dirty_bytes, __ATOMIC_RELAXED) >
           __atomic_load_n(&peak_bytes, __ATOMIC_RELAXED);
}
