/* SPDX-License-Identifier: MIT */
#include "background.h"
#include "cache.h"
#include "options.h"
#include "os.h"
#include "purge.h"

/* The thread is off unless asked for: a thread the program did not start
 * surprises some programs (a fork without exec leaves it behind,
 * sandboxes forbid clone, a process that counts its threads), as
 * jemalloc's background thread, also off by default, does.  Freed memory
 * otherwise waits for the next slow path, which a process that goes quiet
 * after a burst never takes.
 *
 * The thread decays the caches and settles every PM_DECAY_MS / 4 while
 * memory is dirty or pooled or the caches hold batches, and otherwise
 * waits on `idle` until a settle finds some. */
enum { BG_UNASKED, BG_OFF, BG_ON };
static uint32_t bg_state, bg_idle;

/* Whether the thread has work: memory to give back now or later. */
static int busy(void)
{
    return pm_purge_pending() || pm_cache_held();
}

static void *background(void *unused)
{
    (void)unused;
    for (;;) {
        pm_os_sleep_ms(PM_DECAY_MS / 4);
        PM_QUIET_BEGIN();
        pm_cache_decay();
        pm_purge_settle();
        PM_QUIET_END();
        __atomic_store_n(&bg_idle, 1, __ATOMIC_SEQ_CST);
        if (!busy())
            pm_os_futex_wait(&bg_idle, 1);
        __atomic_store_n(&bg_idle, 0, __ATOMIC_SEQ_CST);
    }
    return 0;
}

/* Decides, once, whether the environment asks for the thread, and starts
 * it if so; a thread that cannot be made leaves it off. */
static void start(void)
{
    uint32_t state = BG_UNASKED, want = pm_option(PM_OPT_PURGE_THREAD) ? BG_ON : BG_OFF;
    if (__atomic_compare_exchange_n(&bg_state, &state, want, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) &&
        want == BG_ON && !pm_os_thread(background))
        __atomic_store_n(&bg_state, BG_OFF, __ATOMIC_RELEASE);
}

/* Whether the thread has work is asked only when it could act on the
 * answer: with the thread off or running, a settle costs a load or two
 * more, where busy() reads a line of every CPU's. */
void pm_background_settle(void)
{
    pm_purge_settle();
    uint32_t state = __atomic_load_n(&bg_state, __ATOMIC_ACQUIRE);
    if (state == BG_OFF || (state == BG_ON && !__atomic_load_n(&bg_idle, __ATOMIC_SEQ_CST)) || !busy())
        return;
    if (state == BG_UNASKED)
        start();
    else if (__atomic_exchange_n(&bg_idle, 0, __ATOMIC_SEQ_CST))
        pm_os_futex_wake(&bg_idle);
}

void pm_background_fork_child(void)
{
    if (bg_state == BG_ON)
        bg_state = BG_UNASKED;
    bg_idle = 0;
}
