/* SPDX-License-Identifier: MIT */
/* Removal without tombstones from a small table whose keys choose where
 * their probe starts, so that clusters collide and wrap past the last
 * slot: after every removal, each key left is found by probing from its
 * start to the first empty slot, and the removed one is not. */
#include <stdint.h>
#include "probe.h"
#include "unit.h"

#define SLOTS 16u

/* A key is nonzero; its low four bits are its start. */
static uint32_t start_of(const void *table, uint32_t i)
{
    const uint32_t *slot = table;
    return slot[i] ? slot[i] & (SLOTS - 1) : PM_PROBE_EMPTY;
}

static void move(void *table, uint32_t to, uint32_t from)
{
    uint32_t *slot = table;
    slot[to] = slot[from];
}

/* The slot that holds key, or the empty slot where it would go. */
static uint32_t find(const uint32_t *slot, uint32_t key)
{
    uint32_t i = key & (SLOTS - 1);
    while (slot[i] && slot[i] != key)
        i = (i + 1) & (SLOTS - 1);
    return i;
}

int main(void)
{
    uint64_t rng = 55;
    for (int round = 0; round < 20000; round++) {
        uint32_t slot[SLOTS] = {0}, keys[SLOTS];
        unsigned n = 1 + (unsigned)(rng_next(&rng) % (SLOTS - 1));
        for (unsigned k = 0; k < n; k++) {
            /* Distinct keys whose starts bunch near the end, so that
             * clusters wrap. */
            uint32_t key = (uint32_t)(k + 1) << 4 | (uint32_t)((12 + rng_next(&rng) % 8) & (SLOTS - 1));
            slot[find(slot, key)] = keys[k] = key;
        }
        while (n) {
            unsigned k = (unsigned)(rng_next(&rng) % n);
            uint32_t gone = keys[k];
            uint32_t at = find(slot, gone);
            CHECK(slot[at] == gone);
            slot[pm_probe_remove(slot, SLOTS - 1, at, start_of, move)] = 0;
            keys[k] = keys[--n];
            CHECK(!slot[find(slot, gone)]);
            unsigned held = 0;
            for (uint32_t i = 0; i < SLOTS; i++)
                held += slot[i] != 0;
            CHECK(held == n);
            for (unsigned j = 0; j < n; j++)
                CHECK(slot[find(slot, keys[j])] == keys[j]);
        }
    }
    printf("probe ok\n");
    return 0;
}
