/* SPDX-License-Identifier: MIT */
/* The C API of libprimalloc_valgrind.so, the build to debug programs with
 * memcheck: each standard function wraps its pm_ twin and tells memcheck
 * about the block with client requests, so leaks, reads of freed memory and
 * bad frees are reported against primalloc's blocks.  The allocator's own
 * use of free objects (its lists live in them) is hidden from memcheck.
 * The release library has none of this, and no cost for it. */
#include <errno.h>
#include <string.h>
#include <valgrind/memcheck.h>
#include "primalloc.h"

#define QUIETLY(stmt)                       \
    do {                                    \
        VALGRIND_DISABLE_ERROR_REPORTING;   \
        stmt;                               \
        VALGRIND_ENABLE_ERROR_REPORTING;    \
    } while (0)

/* var = call, quietly, with var defined.  What the allocator returns may
 * come out of a free object: a pointer it hands out is read from a link,
 * and memcheck holds a link undefined where part of its word lies in a
 * freed block (an aligned load partly from unaddressable bytes reads
 * them undefined).  The value is the allocator's all the same, and the
 * program tests it. */
#define DEFINED(var, call)                                   \
    QUIETLY(var = (call); VALGRIND_MAKE_MEM_DEFINED(&var, sizeof var))

static void *noted(void *p, size_t size, int zeroed)
{
    if (p)
        VALGRIND_MALLOCLIKE_BLOCK(p, size, 0, zeroed);
    return p;
}

PM_API void *malloc(size_t size)
{
    void *p;
    DEFINED(p, pm_malloc(size));
    return noted(p, size, 0);
}

PM_API void free(void *p)
{
    if (!p)
        return;
    VALGRIND_FREELIKE_BLOCK(p, 0);
    QUIETLY(pm_free(p));
}

PM_API void *calloc(size_t n, size_t size)
{
    void *p;
    DEFINED(p, pm_calloc(n, size));
    return noted(p, n * size, 1);
}

/* A move every time, so that memcheck's view of both blocks stays exact. */
PM_API void *realloc(void *p, size_t size)
{
    if (!p)
        return malloc(size);
    if (!size) {
        free(p);
        return 0;
    }
    size_t old;
    QUIETLY(old = pm_malloc_usable_size(p));
    void *q = malloc(size);
    if (!q)
        return 0;
    QUIETLY(memcpy(q, p, old < size ? old : size));
    free(p);
    return q;
}

PM_API void *reallocarray(void *p, size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total)) {
        errno = ENOMEM;
        return 0;
    }
    return realloc(p, total);
}

PM_API int posix_memalign(void **out, size_t align, size_t size)
{
    void *p;
    int rc;
    DEFINED(rc, pm_posix_memalign(&p, align, size));
    if (!rc) {
        VALGRIND_MAKE_MEM_DEFINED(&p, sizeof p);
        *out = noted(p, size, 0);
    }
    return rc;
}

#define ALIGNED(name)                                  \
    PM_API void *name(size_t align, size_t size)       \
    {                                                  \
        void *p;                                       \
        DEFINED(p, pm_##name(align, size));            \
        return noted(p, size, 0);                      \
    }
ALIGNED(aligned_alloc)
ALIGNED(memalign)

PM_API void *valloc(size_t size)
{
    return memalign(4096, size);
}

PM_API void *pvalloc(size_t size)
{
    void *p;
    DEFINED(p, pm_pvalloc(size));
    return noted(p, size, 0);
}

PM_API size_t malloc_usable_size(void *p)
{
    size_t n;
    QUIETLY(n = pm_malloc_usable_size(p));
    return n;
}

PM_API void free_sized(void *p, size_t size)
{
    if (!p)
        return;
    VALGRIND_FREELIKE_BLOCK(p, 0);
    QUIETLY(pm_free_sized(p, size));
}

PM_API void free_aligned_sized(void *p, size_t align, size_t size)
{
    if (!p)
        return;
    VALGRIND_FREELIKE_BLOCK(p, 0);
    QUIETLY(pm_free_aligned_sized(p, align, size));
}
