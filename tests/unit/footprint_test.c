/* SPDX-License-Identifier: MIT */
/* The footprint rule's two bounds, driven through the counters alone: a
 * high-water mark set by a made-up burst of in-use bytes, then dirty
 * bytes may take in use + dirty to the mark and a sixteenth, and pooled
 * bytes may take the sum to the mark and an eighth, and not a byte more.
 * The process's own memory is given back first, so that nothing is dirty
 * or pooled but the test's, and its objects stay as they are while the
 * deltas apply (the test allocates nothing between its reads). */
#include "footprint.h"
#include "purge.h"
#include "unit.h"

#define BURST ((size_t)1 << 30)

int main(void)
{
    size_t dirty0, peak;
    pm_purge_all();
    pm_fp_inuse((long)BURST);
    pm_fp_read(&dirty0, &peak);
    CHECK(dirty0 == 0 && peak >= BURST);
    CHECK(!pm_fp_folios_over());
    CHECK(!pm_fp_pool_over());

    /* The burst is freed and its folios kept: in use + dirty is the mark. */
    pm_fp_inuse(-(long)BURST);
    pm_fp_dirty((long)BURST);
    CHECK(!pm_fp_folios_over());

    pm_fp_dirty((long)(peak / 16));
    CHECK(!pm_fp_folios_over());
    pm_fp_dirty(1);
    CHECK(pm_fp_folios_over());
    pm_fp_dirty(-1);

    /* Pooled runs take what the folios left of the eighth. */
    long pool_room = (long)(peak + peak / 8 - (peak + peak / 16));
    pm_fp_pooled(pool_room);
    CHECK(!pm_fp_pool_over());
    pm_fp_pooled(1);
    CHECK(pm_fp_pool_over());

    pm_fp_pooled(-pool_room - 1);
    pm_fp_dirty(-(long)(BURST + peak / 16));
    size_t dirty, peak_after;
    pm_fp_read(&dirty, &peak_after);
    CHECK(dirty == 0 && peak_after == peak);
    printf("footprint ok\n");
    return 0;
}
