/* SPDX-License-Identifier: MIT */
/* Removal from a hash table of open addressing with linear probing,
 * without tombstones: the later slots of the emptied slot's cluster that
 * a lookup would no longer reach past the hole move back into it, one
 * after another (backward-shift deletion).  The table is the caller's:
 * mask + 1 slots, a power of two, with two functions that tell, for slot
 * i, the slot its key's probe starts at (PM_PROBE_EMPTY for an empty
 * slot), and move what one slot holds into another.
 *
 * Promises: pm_probe_remove returns the slot left over, which the caller
 * empties; then every key the table held but the removed one is found by
 * probing from its start to the first empty slot, as before. */
#ifndef PM_PROBE_H
#define PM_PROBE_H

#include <stdint.h>

#define PM_PROBE_EMPTY UINT32_MAX

/* Slot i moves into the hole when its probe starts outside (hole, i],
 * cyclically: a lookup from there passes the hole before it reaches i. */
static inline uint32_t pm_probe_remove(void *table, uint32_t mask, uint32_t hole,
                                       uint32_t (*start)(const void *table, uint32_t i),
                                       void (*move)(void *table, uint32_t to, uint32_t from))
{
    uint32_t s;
    for (uint32_t i = (hole + 1) & mask; (s = start(table, i)) != PM_PROBE_EMPTY; i = (i + 1) & mask)
        if (((i - s) & mask) >= ((i - hole) & mask)) {
            move(table, hole, i);
            hole = i;
        }
    return hole;
}

#endif
