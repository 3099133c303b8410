/* SPDX-License-Identifier: MIT */
#include "lock.h"
#include "arch.h"

/* Spin briefly (the holder is usually running on another CPU and almost
 * done), then mark the lock contended and sleep until it is dropped. */
void pm_lock_wait(pm_lock *l)
{
    for (int i = 0; i < 100; i++) {
        pm_arch_pause();
        if (__atomic_load_n(&l->state, __ATOMIC_RELAXED) == 0 && pm_lock_try(l))
            return;
    }
    while (__atomic_exchange_n(&l->state, 2, __ATOMIC_ACQUIRE) != 0)
        pm_os_futex_wait(&l->state, 2);
}
