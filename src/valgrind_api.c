/* SPDX-License-Identifier: MIT */
/* The C API of libprimalloc_valgrind.so, the build to debug programs with
 * memcheck: each standard function wraps its pm_ twin and tells memcheck
 * about the block, of the size asked for, with client requests, so leaks,
 * reads of freed memory or past a block's end and bad frees are reported
 * against primalloc's blocks.  The allocator's own
 * use of free objects (its lists live in them) is hidden from memcheck.
 * The release library has none of this, and no cost for it. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <valgrind/memcheck.h>
#include "os.h"
#include "primalloc.h"

#define QUIETLY(stmt)     \
    do {                  \
        PM_QUIET_BEGIN(); \
        stmt;             \
        PM_QUIET_END();   \
    } while (0)

/* var = call, quietly, with var defined.  What the allocator returns may
 * come out of a free object: a pointer it hands out is read from a link,
 * and memcheck holds a link undefined where part of its word lies in a
 * freed block (an aligned load partly from unaddressable bytes reads
 * them undefined).  The value is the allocator's all the same, and the
 * program tests it. */
#define DEFINED(var, call)                                   \
    QUIETLY(var = (call); VALGRIND_MAKE_MEM_DEFINED(&var, sizeof var))

/* Tells memcheck of block p, size bytes.  The rest of its object,
 * [p + size, p + usable size), is unaddressable, as past the end of a
 * block of memcheck's own malloc, so that the program's accesses there
 * are reported; primalloc's own (a free object's link and mark) come
 * within the wrapped calls or quietly (os.h).  Inline in every caller:
 * memcheck's record of where a block was allocated starts at the frame
 * that tells it, which is then malloc's (or its kin's). */
__attribute__((always_inline)) static inline void *noted(void *p, size_t size, int zeroed)
{
    if (p) {
        size_t usable;
        QUIETLY(usable = pm_malloc_usable_size(p));
        VALGRIND_MALLOCLIKE_BLOCK(p, size, 0, zeroed);
        VALGRIND_MAKE_MEM_NOACCESS((char *)p + size, usable - size);
    }
    return p;
}

/* The size block p was asked with: its object's bytes up to the first
 * unaddressable one, where noted() closed off its tail. */
static size_t block_size(const void *p)
{
    size_t usable;
    uintptr_t end;
    QUIETLY(usable = pm_malloc_usable_size(p);
            end = VALGRIND_CHECK_MEM_IS_ADDRESSABLE(p, usable));
    return end ? end - (uintptr_t)p : usable;
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

/* A move every time, so that memcheck's view of both blocks stays exact:
 * the new block holds as many of the old one's bytes as fit, and the rest
 * of it is undefined. */
PM_API void *realloc(void *p, size_t size)
{
    if (!p)
        return malloc(size);
    if (!size) {
        free(p);
        return 0;
    }
    size_t old = block_size(p);
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

/* The block is the whole pages pvalloc promises. */
PM_API void *pvalloc(size_t size)
{
    void *p;
    DEFINED(p, pm_pvalloc(size));
    size_t page = pm_os_page(), rounded = (size + page - 1) & ~(page - 1);
    return noted(p, rounded ? rounded : page, 0);
}

/* The block's size, as memcheck's own malloc_usable_size gives: a
 * program that uses every byte it reports stays within the block. */
PM_API size_t malloc_usable_size(void *p)
{
    return block_size(p);
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
