/* SPDX-License-Identifier: MIT */
/* Eight or more threads allocate objects of every category and swap them
 * through a shared exchange of slots, so that most objects are checked,
 * resized or freed by a thread other than the one that allocated them.
 * Every object is checked byte for byte before it is freed, and every
 * object allocated is freed exactly once.  The first thread trims every
 * TRIM_EVERY operations, so that pages inside folios go back while the
 * others allocate from and free into them.
 * Usage: threads_xfree [threads] [operations per thread] */
#include "malloc_ext.h"
#include <stdatomic.h>
#include <stdlib.h>
#include "api.h"
#include "check.h"
#include "objects.h"

#define TRIM_EVERY 256
#ifdef TEST_PM_API
#define TRIM() pm_trim()
#else
#define TRIM() malloc_trim(0)
#endif

#define SLOTS 1024

static _Atomic(void *) slots[SLOTS];
static atomic_long allocated, freed;
static long ops_per_thread;

static void *worker(void *arg)
{
    uint64_t rng = (uint64_t)(uintptr_t)arg * 7919 + 1;
    /* A few objects a thread keeps for itself, to mix local frees in. */
    void *own[8] = {0};
    for (long i = 0; i < ops_per_thread; i++) {
        if ((uintptr_t)arg == 1 && i % TRIM_EVERY == TRIM_EVERY - 1)
            TRIM();
        void *p = obj_new(&rng, obj_mixed_size(&rng));
        atomic_fetch_add(&allocated, 1);
        unsigned r = (unsigned)(rng_next(&rng) % 8);
        if (r == 0) {
            void **mine = &own[rng_next(&rng) % 8];
            void *old = *mine;
            *mine = p;
            p = old;
            if (!p)
                continue;
        }
        /* Hand p over and take whatever another thread left there. */
        void *got = atomic_exchange(&slots[rng_next(&rng) % SLOTS], p);
        if (!got)
            continue;
        if (r == 1) {
            got = obj_resize(got, &rng, obj_mixed_size(&rng));
            got = atomic_exchange(&slots[rng_next(&rng) % SLOTS], got);
            if (!got)
                continue;
        }
        obj_free(got);
        atomic_fetch_add(&freed, 1);
    }
    for (int i = 0; i < 8; i++)
        if (own[i]) {
            obj_free(own[i]);
            atomic_fetch_add(&freed, 1);
        }
    return NULL;
}

int main(int argc, char **argv)
{
    int nthreads = argc > 1 ? atoi(argv[1]) : 8;
    ops_per_thread = argc > 2 ? atol(argv[2]) : 25000;
    CHECK(nthreads >= 1 && nthreads <= 256 && ops_per_thread > 0);
    run_threads(nthreads, worker);
    for (int i = 0; i < SLOTS; i++) {
        void *p = atomic_exchange(&slots[i], NULL);
        if (p) {
            obj_free(p);
            atomic_fetch_add(&freed, 1);
        }
    }
    CHECK_EQ(atomic_load(&allocated), nthreads * ops_per_thread);
    CHECK_EQ(atomic_load(&freed), atomic_load(&allocated));
    return 0;
}
