/* SPDX-License-Identifier: MIT */
/* For the chunk pool and census tests: how many chunks of the chunk table
 * carry a tag in [lo, hi], over every span that has a leaf. */
#ifndef PM_TABLE_COUNT_H
#define PM_TABLE_COUNT_H

#include <stddef.h>
#include <stdint.h>
#include "chunk_table.h"

static inline size_t count_tagged(uint32_t lo, uint32_t hi)
{
    size_t n = 0;
    for (size_t t = 0; t < 1ul << PM_TOP_BITS; t++) {
        if (!pm_chunk_table.top[t])
            continue;
        for (size_t i = 0; i < 1ul << PM_LEAF_BITS; i++) {
            uint32_t tag = pm_chunk_at((t << PM_LEAF_SHIFT) + i * PM_CHUNK)->tag;
            n += tag >= lo && tag <= hi;
        }
    }
    return n;
}

#endif
