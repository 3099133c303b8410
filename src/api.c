/* SPDX-License-Identifier: MIT */
/* The public functions.  malloc and free, first, are their fast paths
 * (fast_path.h); everything else is a call away. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include "background.h"
#include "cache.h"
#include "chunk_pool.h"
#include "chunk_table.h"
#include "exit_report.h"
#include "leak_check.h"
#include "fast_path.h"
#include "folio.h"
#include "guard.h"
#include "heap_profile.h"
#include "huge.h"
#include "large.h"
#include "primalloc.h"
#include "purge.h"
#include "sizeclass.h"
#include "thread_cache.h"
#include "thread_registry.h"

/* The fast paths' places in the decoder's windows do not move with the
 * code linked before them: malloc starts 16 bytes into a 64-byte line,
 * the 16 bytes before it being never-run padding, and free at a line
 * start, so that each one's common case spans two lines.  The same
 * instructions ran slower across three, or from other offsets
 * (docs/tuning.md). */
#define PM_MALLOC_PLACE __attribute__((aligned(64), patchable_function_entry(16, 16)))
#define PM_FREE_PLACE __attribute__((aligned(64)))

PM_API PM_MALLOC_PLACE void *pm_malloc(size_t size)
{
    return pm_alloc(size, "malloc");
}

PM_API PM_FREE_PLACE void pm_free(void *p)
{
    pm_dealloc(p, 0, "free");
}

static void *alloc_aligned(size_t align, size_t size, const char *call)
{
    if (align <= PM_ALIGN)
        return pm_alloc(size, call);
    if (size && size <= PM_LOOKUP_MAX) {
        unsigned bin = pm_bin_of_small(size);
        if (align <= 1ul << pm_bins[bin].align_log)
            return pm_tc_pop(bin, call);
    }
    size_t need = size > align ? size : align;
    if (need <= 1ul << PM_POW2_MAX_LOG)
        return pm_tc_pop(pm_pow2_bin_by_log[64 - __builtin_clzl(need - 1)], call);
    long weight = align <= PM_CHUNK << 10 ? pm_big_weight(size) : 0;
    if (align <= PM_PAGE && size <= PM_LARGE_MAX && pm_likely(!weight))
        return pm_large_alloc_aligned(size, call);
    return pm_alloc_huge(size, align, weight, 0);
}

static int is_pow2(size_t x)
{
    return x && !(x & (x - 1));
}

/* ---- the rest of the API ---- */

PM_API void *pm_calloc(size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total) || total > PTRDIFF_MAX) {
        errno = ENOMEM;
        return 0;
    }
    if (total <= PM_LARGE_MAX) {
        void *p = pm_alloc(total, "calloc");
        if (p)
            memset(p, 0, total);
        return p;
    }
    /* Huge memory from the kernel or an uncommitted run is zero already. */
    int dirty;
    void *p = pm_alloc_huge(total, PM_CHUNK, pm_big_weight(total), &dirty);
    if (p && dirty)
        memset(p, 0, total);
    return p;
}

PM_API void *pm_realloc(void *p, size_t size)
{
    if (!p)
        return pm_alloc(size, "realloc");
    if (!size) {
        pm_free(p);
        return 0;
    }
    struct pm_where w = pm_locate(p, "realloc", "pointer already freed");
    if (w.huge) {
        void *q = size > PM_LARGE_MAX ? pm_huge_resize(p, w.huge, size) : 0;
        if (q) {
            pm_prof_resized(p, q, size);
            return q;
        }
    } else if (size <= w.usable && size >= w.usable / 2) {
        return p;
    }
    void *q = pm_alloc(size, "realloc");
    if (!q)
        return 0;
    memcpy(q, p, size < w.usable ? size : w.usable);
    pm_release(p, &w, "realloc", __builtin_return_address(0));
    return q;
}

PM_API void *pm_reallocarray(void *p, size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total)) {
        errno = ENOMEM;
        return 0;
    }
    return pm_realloc(p, total);
}

PM_API int pm_posix_memalign(void **out, size_t align, size_t size)
{
    if (!is_pow2(align) || align % sizeof(void *))
        return EINVAL;
    int saved = errno;
    void *p = alloc_aligned(align, size, "posix_memalign");
    errno = saved;
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

PM_API void *pm_aligned_alloc(size_t align, size_t size)
{
    if (!is_pow2(align)) {
        errno = EINVAL;
        return 0;
    }
    return alloc_aligned(align, size, "aligned_alloc");
}

/* glibc's memalign rounds a non-power-of-two alignment up. */
PM_API void *pm_memalign(size_t align, size_t size)
{
    if (align > SIZE_MAX / 2 + 1) {
        errno = EINVAL;
        return 0;
    }
    if (align > 1 && !is_pow2(align))
        align = 1ul << (64 - __builtin_clzl(align - 1));
    return alloc_aligned(align, size, "memalign");
}

/* valloc and pvalloc align to the kernel's page. */
PM_API void *pm_valloc(size_t size)
{
    return alloc_aligned(pm_os_page(), size, "valloc");
}

PM_API void *pm_pvalloc(size_t size)
{
    size_t page = pm_os_page(), rounded = (size + page - 1) & ~(page - 1);
    if (rounded < size) {
        errno = ENOMEM;
        return 0;
    }
    return alloc_aligned(page, rounded ? rounded : page, "pvalloc");
}

PM_API size_t pm_malloc_usable_size(const void *p)
{
    return p ? pm_locate((void *)p, "malloc_usable_size", "pointer already freed").usable : 0;
}

PM_API void pm_free_sized(void *p, size_t size)
{
    pm_dealloc(p, size, "free_sized");
}

PM_API void pm_free_aligned_sized(void *p, size_t align, size_t size)
{
    pm_dealloc_aligned(p, align, size, "free_aligned_sized");
}

PM_API const char *pm_version(void)
{
    return PRIMALLOC_VERSION;
}

PM_API int pm_trim(void)
{
    pm_tc_flush();
    pm_cache_drain();
    int any = pm_purge_all();
    pm_background_if_wanted();
    return any;
}

PM_API int pm_profile_dump(const char *path)
{
    return pm_prof_dump(path);
}


/* ---- process-wide events ---- */

/* The C library's lock on its list of open FILEs (glibc's; libc.h).
 * fflush(NULL) holds it while it waits for each FILE's lock, and getline,
 * like other stdio calls, may allocate while holding a FILE's lock;
 * glibc's fork takes the list lock after the prepare handlers and before
 * its own malloc's locks. */

/* A process of several threads holds every lock across fork, in the
 * order the code nests them, so that the child starts with consistent
 * structures.  The FILE list's lock comes first, as it does before glibc's
 * own malloc locks: taken after ours, a fork holding ours would wait for
 * fflush(NULL) to drop it, fflush for a FILE that getline holds, and
 * getline for our locks.  The list lock is recursive, so glibc's fork
 * takes it again.  In the child, where glibc may have reset it already,
 * it is reset rather than dropped.
 *
 * A process of one thread takes no lock, as glibc's fork then takes none
 * of its malloc's: fork is async-signal-safe (POSIX.1-2008; glibc keeps
 * it so while the process has one thread), and a signal handler may
 * fork, or malloc, while the thread it interrupted is inside fork or
 * malloc and holds locks the handler would wait for forever.  With one
 * thread no other holds a lock, and the structures are as the interrupted
 * call leaves them.  The child of a fork in a handler inherits that call's
 * locks and half-done work, which it releases and completes, as the parent
 * does, when the handler returns and the call resumes; until then the
 * child, like the handler, may call only async-signal-safe functions, and
 * malloc is not one.  With several threads a handler that forks while its
 * own thread is inside the allocator waits forever, as with glibc's malloc.
 *
 * fork_locked records which of the two a fork did, for its parent and
 * child handlers, whatever pm_os_one_thread says by then.  It is
 * written under every lock, or with no other thread to race. */
static int fork_locked;

static void prefork(void)
{
    if (pm_os_one_thread()) {
        fork_locked = 0;
        return;
    }
    pm_libc_files_lock();
    pm_prof_prefork();
    pm_cache_prefork();
    pm_folio_prefork();
    pm_pool_prefork();
    pm_registry_prefork();
    pm_guard_prefork();
    fork_locked = 1;
}

static void drop_locks(void)
{
    pm_guard_postfork();
    pm_pool_postfork();
    pm_folio_postfork();
    pm_cache_postfork();
    pm_prof_postfork();
}

static void postfork_parent(void)
{
    if (!fork_locked)
        return;
    pm_registry_postfork(0);
    drop_locks();
    pm_libc_files_unlock();
}

static void postfork_child(void)
{
    if (!fork_locked)
        return;
    pm_registry_postfork(1);
    drop_locks();
    pm_tc_fork_child();
    pm_background_fork_child();
    pm_libc_files_reset();
}

/* At load: the fork handlers, and what the environment asks to report at
 * exit. */
__attribute__((constructor)) static void library_start(void)
{
    pthread_atfork(prefork, postfork_parent, postfork_child);
    pm_exit_report_init();
    pm_leak_check_init();
}

#ifdef PM_STD_NAMES
static int trim_with_pad(size_t pad)
{
    (void)pad;
    return pm_trim();
}

/* No tuning knobs: every option is accepted and changes nothing. */
static int mallopt_accepted(int option, int value)
{
    (void)option;
    (void)value;
    return 1;
}

#define PM_STD(name, ours) extern __typeof(ours) name __attribute__((alias(#ours), visibility("default")))
PM_STD(malloc, pm_malloc);
PM_STD(free, pm_free);
PM_STD(calloc, pm_calloc);
PM_STD(realloc, pm_realloc);
PM_STD(reallocarray, pm_reallocarray);
PM_STD(posix_memalign, pm_posix_memalign);
PM_STD(aligned_alloc, pm_aligned_alloc);
PM_STD(memalign, pm_memalign);
PM_STD(valloc, pm_valloc);
PM_STD(pvalloc, pm_pvalloc);
PM_STD(malloc_usable_size, pm_malloc_usable_size);
PM_STD(free_sized, pm_free_sized);
PM_STD(free_aligned_sized, pm_free_aligned_sized);
PM_STD(cfree, pm_free);
/* glibc's internal names for its allocator, which some programs and
 * interposers call: they must reach this heap, or what they allocate
 * meets free as a foreign pointer. */
PM_STD(__libc_malloc, pm_malloc);
PM_STD(__libc_free, pm_free);
PM_STD(__libc_calloc, pm_calloc);
PM_STD(__libc_realloc, pm_realloc);
PM_STD(__libc_memalign, pm_memalign);
PM_STD(__libc_valloc, pm_valloc);
PM_STD(__libc_pvalloc, pm_pvalloc);
PM_STD(__posix_memalign, pm_posix_memalign);
PM_STD(malloc_trim, trim_with_pad);
PM_STD(mallopt, mallopt_accepted);
#endif
