/* SPDX-License-Identifier: MIT */
#include "footprint.h"
#include "os.h"

static size_t inuse_bytes, dirty_bytes, pooled_bytes, peak_bytes;
__thread uint32_t pm_fp_unsettled __attribute__((tls_model("initial-exec")));

void pm_fp_inuse(long delta)
{
    size_t now = __atomic_add_fetch(&inuse_bytes, (size_t)delta, __ATOMIC_RELAXED);
    PM_ASSERT((long)now >= 0);
    size_t peak = __atomic_load_n(&peak_bytes, __ATOMIC_RELAXED);
    while (now > peak &&
           !__atomic_compare_exchange_n(&peak_bytes, &peak, now, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

static void move(size_t *counter, long delta)
{
    size_t now = __atomic_add_fetch(counter, (size_t)delta, __ATOMIC_RELAXED);
    PM_ASSERT((long)now >= 0);
    (void)now;
}

void pm_fp_dirty(long delta)
{
    move(&dirty_bytes, delta);
}

void pm_fp_pooled(long delta)
{
    move(&pooled_bytes, delta);
}

static size_t committed(void)
{
    return __atomic_load_n(&inuse_bytes, __ATOMIC_RELAXED) + __atomic_load_n(&dirty_bytes, __ATOMIC_RELAXED);
}

/* Folios get half the slack the pool gets: enough that a program whose
 * in-use bytes hover at the mark while they shift between size classes
 * reuses the folios it emptied rather than faulting them in again, and
 * the rest of the eighth stays for whole chunks, which serve any bin. */
int pm_fp_folios_over(void)
{
    size_t peak = __atomic_load_n(&peak_bytes, __ATOMIC_RELAXED);
    return committed() > peak + peak / 16;
}

int pm_fp_pool_over(void)
{
    size_t peak = __atomic_load_n(&peak_bytes, __ATOMIC_RELAXED);
    return committed() + __atomic_load_n(&pooled_bytes, __ATOMIC_RELAXED) > peak + peak / 8;
}

void pm_fp_read(size_t *dirty, size_t *peak)
{
    *dirty = __atomic_load_n(&dirty_bytes, __ATOMIC_RELAXED) + __atomic_load_n(&pooled_bytes, __ATOMIC_RELAXED);
    *peak = __atomic_load_n(&peak_bytes, __ATOMIC_RELAXED);
}
