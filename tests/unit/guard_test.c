/* SPDX-License-Identifier: MIT */
/* Sampled guard pages: each guarded object ends at an inaccessible page
 * and is aligned as asked, stays known while live and while quarantined,
 * is forgotten when it leaves the quarantine, and no more than
 * PM_GUARD_OBJECTS are held at once; an underflow into its first page is
 * reported when it is freed, and an access past it or after its free by
 * the fault handler.  The records' validator runs after every step. */
#define _GNU_SOURCE
#include <stdint.h>
#include "guard.h"
#include "layout.h"
#include "unit.h"

static void *alloc_checked(size_t size, size_t align)
{
    char *p = pm_guard_alloc(size, align, (void *)alloc_checked);
    CHECK(p);
    CHECK((uintptr_t)p % align == 0);
    size_t usable;
    int freed = 1;
    CHECK(pm_guard_find(p, &usable, &freed) && !freed);
    CHECK(usable >= size && usable - size < (align > PM_ALIGN ? align : PM_ALIGN));
    /* The object ends where a page starts: the guard page. */
    CHECK(((uintptr_t)p + usable) % PM_PAGE == 0);
    memset(p, 0x5a, size);
    return p;
}

static void underflow(void *p)
{
    ((char *)p)[-1] = 0;
    pm_guard_free(p, "free", NULL);
}

static void overflow(void *p)
{
    size_t usable;
    int freed;
    CHECK(pm_guard_find(p, &usable, &freed));
    ((volatile char *)p)[usable] = 0;
}

static void use_after_free(void *p)
{
    pm_guard_free(p, "free", NULL);
    ((volatile char *)p)[0] = 0;
}

int main(void)
{
    CHECK(getenv("PRIMALLOC_GUARD_RATE"));
    pm_guard_init();
    CHECK(pm_guard_rate == 3);
    /* One allocation in three is sampled: the quota serves two, then none. */
    CHECK(pm_guard_quota(10) == 0);
    CHECK(pm_guard_quota(10) == 2);
    CHECK(pm_guard_quota(10) == 0);
    pm_guard_check();

    const size_t sizes[] = {1, 16, 100, 4096, 5000, 70000};
    const size_t aligns[] = {16, 64, 4096, 65536};
    enum { NSIZES = sizeof sizes / sizeof sizes[0], N = NSIZES * (sizeof aligns / sizeof aligns[0]) };
    void *live[N];
    for (unsigned i = 0; i < N; i++)
        live[i] = alloc_checked(sizes[i % NSIZES], aligns[i / NSIZES]);
    pm_guard_check();

    /* Freed objects stay known, as freed, until PM_GUARD_QUARANTINE later
     * frees push them out. */
    for (unsigned i = 0; i < N; i++) {
        pm_guard_free(live[i], "free", NULL);
        size_t usable;
        int freed = 0;
        CHECK(pm_guard_find(live[i], &usable, &freed) && freed);
    }
    pm_guard_check();
    for (unsigned i = 0; i < PM_GUARD_QUARANTINE; i++)
        pm_guard_free(alloc_checked(32, 16), "free", NULL);
    pm_guard_check();
    for (unsigned i = 0; i < N; i++) {
        size_t usable;
        int freed;
        CHECK(!pm_guard_find(live[i], &usable, &freed));
    }

    /* At most PM_GUARD_OBJECTS at a time, the quarantined among them. */
    static void *held[PM_GUARD_OBJECTS];
    unsigned n = 0;
    while ((held[n] = pm_guard_alloc(16, 16, NULL)))
        CHECK(++n < PM_GUARD_OBJECTS);
    CHECK(n == PM_GUARD_OBJECTS - PM_GUARD_QUARANTINE);
    pm_guard_check();
    for (unsigned i = 0; i < n; i++)
        pm_guard_free(held[i], "free", NULL);
    pm_guard_check();

    check_fatal(underflow, alloc_checked(48, 16), "underflow before sampled object");
    check_fatal(overflow, alloc_checked(48, 16), "overflow past sampled object");
    check_fatal(use_after_free, alloc_checked(48, 16), "use after free of sampled object");
    pm_guard_check();
    printf("guard: ok\n");
    return 0;
}
