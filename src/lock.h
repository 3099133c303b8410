/* SPDX-License-Identifier: MIT */
/* A futex mutex: one compare-and-swap to take it and one exchange to drop
 * it when uncontended; waiters sleep in the kernel, so a preempted holder
 * on an oversubscribed machine costs sleepers nothing.
 * A zero-filled pm_lock is unlocked. */
#ifndef PM_LOCK_H
#define PM_LOCK_H

#include <stdint.h>
#include "os.h"

typedef struct {
    uint32_t state; /* 0 free, 1 held, 2 held with waiters */
} pm_lock;

/* A lock alone on its cache line, for arrays of locks kept apart from what
 * they protect. */
typedef struct {
    pm_lock lock;
} __attribute__((aligned(64))) pm_line_lock;

void pm_lock_wait(pm_lock *l);

/* Takes the lock if it is free; never waits. */
static inline int pm_lock_try(pm_lock *l)
{
    uint32_t free_state = 0;
    return __atomic_compare_exchange_n(&l->state, &free_state, 1, 0, __ATOMIC_ACQUIRE,
                                       __ATOMIC_RELAXED);
}

static inline void pm_lock_take(pm_lock *l)
{
    if (pm_unlikely(!pm_lock_try(l)))
        pm_lock_wait(l);
}

static inline void pm_lock_drop(pm_lock *l)
{
    if (pm_unlikely(__atomic_exchange_n(&l->state, 0, __ATOMIC_RELEASE) == 2))
        pm_os_futex_wake(&l->state);
}

#endif
