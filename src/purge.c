#include "purge.h"
#include "chunk_pool.h"
#include "folio.h"
#include "footprint.h"
#include "os.h"

static uint32_t next_decay;

/* The background purge (purge.h), off unless asked for: a thread the
 * program did not start surprises some programs (a fork without exec
 * leaves it behind, sandboxes forbid clone, a process that counts its
 * threads), as jemalloc's background thread, also off by default, does.
 * Freed memory otherwise waits for the next slow path, which a process
 * that goes quiet after a burst never takes.
 *
 * The thread settles every PM_DECAY_MS / 4 while memory is dirty or
 * pooled, and otherwise waits on `idle` until a slow path leaves some. */
enum { BG_UNASKED, BG_OFF, BG_ON };
static uint32_t bg_state, bg_idle;

static int pending(void)
{
    size_t dirty, peak;
    pm_fp_read(&dirty, &peak);
    return dirty != 0;
}

static void *background(void *unused)
{
    (void)unused;
    for (;;) {
        pm_os_sleep_ms(PM_DECAY_MS / 4);
        pm_purge_settle();
        __atomic_store_n(&bg_idle, 1, __ATOMIC_SEQ_CST);
        if (!pending())
            pm_os_futex_wait(&bg_idle, 1);
        __atomic_store_n(&bg_idle, 0, __ATOMIC_SEQ_CST);
    }
    return 0;
}

/* Called with memory pending and no lock held: starts the thread at the
 * first call that finds the environment asking for it, else wakes it if
 * it waits. */
static void background_needed(void)
{
    uint32_t state = __atomic_load_n(&bg_state, __ATOMIC_ACQUIRE);
    if (state == BG_UNASKED) {
        uint32_t want = pm_os_env_on(PM_PURGE_THREAD_ENV) ? BG_ON : BG_OFF;
        if (__atomic_compare_exchange_n(&bg_state, &state, want, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) &&
            want == BG_ON && !pm_os_thread(background))
            __atomic_store_n(&bg_state, BG_OFF, __ATOMIC_RELEASE);
        return;
    }
    if (state == BG_ON && __atomic_load_n(&bg_idle, __ATOMIC_SEQ_CST) &&
        __atomic_exchange_n(&bg_idle, 0, __ATOMIC_SEQ_CST))
        pm_os_futex_wake(&bg_idle);
}

void pm_purge_fork_child(void)
{
    if (bg_state == BG_ON)
        bg_state = BG_UNASKED;
    bg_idle = 0;
}

void pm_purge_settle(void)
{
    __atomic_store_n(&pm_fp_unsettled, 0, __ATOMIC_RELAXED);
    while (pm_fp_pool_over() && pm_pool_purge_one(0, 1))
        ;
    while (pm_fp_folios_over() && pm_folio_purge_one(0, 1))
        ;
    if (pending())
        background_needed();
    uint32_t now = pm_os_now_ms();
    if (!pm_os_due(&next_decay, now, PM_DECAY_MS / 4))
        return;
    while (pm_pool_purge_one(now - PM_DECAY_MS, 0) || pm_folio_purge_one(now - PM_DECAY_MS, 0))
        ;
}

int pm_purge_all(void)
{
    int any = 0;
    while (pm_folio_purge_one(0, 1))
        any = 1;
    while (pm_pool_purge_one(0, 1))
        any = 1;
    return any;
}
