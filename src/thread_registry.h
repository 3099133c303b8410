/* SPDX-License-Identifier: MIT */
/* The registry of live threads' caches, for what reads them all (the
 * statistics' census, the leak check): a thread joins when it starts to
 * use its cache and leaves when it exits, before its TLS can go away.
 * Its lock protects the list alone, and nothing takes another lock while
 * it holds this one, but what pm_registry_each calls. */
#ifndef PM_THREAD_REGISTRY_H
#define PM_THREAD_REGISTRY_H

#include <stddef.h>

struct pm_thread_cache;

/* The calling thread's cache joins, once. */
void pm_registry_join(const struct pm_thread_cache *tc);

/* The calling thread's cache, which joined, leaves. */
void pm_registry_leave(void);

/* Calls fn with each live thread's cache, the list held; returns how many
 * there were. */
size_t pm_registry_each(void (*fn)(void *ctx, const struct pm_thread_cache *tc), void *ctx);

/* Around fork: the list is held, and the child's holds only the thread
 * that forked. */
void pm_registry_prefork(void);
void pm_registry_postfork(int child);

#endif
