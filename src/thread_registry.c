/* SPDX-License-Identifier: MIT */
/* The registry of live threads' caches (thread_registry.h): a doubly
 * linked list through a TLS node of each thread's. */
#include "thread_registry.h"
#include "lock.h"

struct member {
    struct member *next, *prev;
    const struct pm_thread_cache *tc; /* NULL while not in the list */
};
static __thread struct member member __attribute__((tls_model("initial-exec")));
static struct member *members;
static pm_lock lock;

void pm_registry_join(const struct pm_thread_cache *tc)
{
    pm_lock_take(&lock);
    member.tc = tc;
    member.prev = 0;
    member.next = members;
    if (members)
        members->prev = &member;
    members = &member;
    pm_lock_drop(&lock);
}

void pm_registry_leave(void)
{
    pm_lock_take(&lock);
    if (member.prev)
        member.prev->next = member.next;
    else
        members = member.next;
    if (member.next)
        member.next->prev = member.prev;
    member.tc = 0;
    pm_lock_drop(&lock);
}

size_t pm_registry_each(void (*fn)(void *ctx, const struct pm_thread_cache *tc), void *ctx)
{
    size_t n = 0;
    pm_lock_take(&lock);
    for (const struct member *m = members; m; m = m->next, n++)
        fn(ctx, m->tc);
    pm_lock_drop(&lock);
    return n;
}

void pm_registry_prefork(void)
{
    pm_lock_take(&lock);
}

/* The child's only thread is the one that forked: the others' TLS may be
 * reused for its new threads. */
void pm_registry_postfork(int child)
{
    if (child) {
        members = member.tc ? &member : 0;
        member.next = member.prev = 0;
    }
    pm_lock_drop(&lock);
}
