/* Every C++ operator new and delete, written in C under their mangled
 * names so that the library needs no C++ runtime.  A program that calls
 * them has libstdc++, whose new-handler and bad_alloc we reach through
 * weak references. */
#include <stddef.h>
#include "os.h"
#include "primalloc.h"

#ifdef PM_STD_NAMES
#define PM_API __attribute__((visibility("default")))

typedef void (*new_handler)(void);
extern new_handler _ZSt15get_new_handlerv(void) __attribute__((weak));
extern void _ZSt17__throw_bad_allocv(void) __attribute__((weak, noreturn));

static void *allocate(size_t size, size_t align)
{
    if (!align)
        return pm_malloc(size);
    void *p = 0;
    return pm_posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, size) ? 0 : p;
}

/* Every form calls the new-handler until allocation succeeds or there is
 * no handler; then the throwing forms throw bad_alloc and the nothrow forms
 * return NULL (the standard's "as if the throwing form in a try"). */
static void *new_with_handler(size_t size, size_t align, int nothrow)
{
    for (;;) {
        void *p = allocate(size, align);
        if (pm_likely(p))
            return p;
        new_handler h = _ZSt15get_new_handlerv ? _ZSt15get_new_handlerv() : 0;
        if (!h) {
            if (nothrow)
                return 0;
            if (_ZSt17__throw_bad_allocv)
                _ZSt17__throw_bad_allocv();
            pm_fatal("operator new", 0, "out of memory");
        }
        h();
    }
}

PM_API void *_Znwm(size_t n) { return new_with_handler(n, 0, 0); }
PM_API void *_Znam(size_t n) { return new_with_handler(n, 0, 0); }
PM_API void *_ZnwmRKSt9nothrow_t(size_t n, const void *nt) { (void)nt; return new_with_handler(n, 0, 1); }
PM_API void *_ZnamRKSt9nothrow_t(size_t n, const void *nt) { (void)nt; return new_with_handler(n, 0, 1); }
PM_API void *_ZnwmSt11align_val_t(size_t n, size_t al) { return new_with_handler(n, al, 0); }
PM_API void *_ZnamSt11align_val_t(size_t n, size_t al) { return new_with_handler(n, al, 0); }
PM_API void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t n, size_t al, const void *nt) { (void)nt; return new_with_handler(n, al, 1); }
PM_API void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t n, size_t al, const void *nt) { (void)nt; return new_with_handler(n, al, 1); }

PM_API void _ZdlPv(void *p) { pm_free(p); }
PM_API void _ZdaPv(void *p) { pm_free(p); }
PM_API void _ZdlPvm(void *p, size_t n) { pm_free_sized(p, n); }
PM_API void _ZdaPvm(void *p, size_t n) { pm_free_sized(p, n); }
PM_API void _ZdlPvRKSt9nothrow_t(void *p, const void *nt) { (void)nt; pm_free(p); }
PM_API void _ZdaPvRKSt9nothrow_t(void *p, const void *nt) { (void)nt; pm_free(p); }
PM_API void _ZdlPvSt11align_val_t(void *p, size_t al) { (void)al; pm_free(p); }
PM_API void _ZdaPvSt11align_val_t(void *p, size_t al) { (void)al; pm_free(p); }
PM_API void _ZdlPvmSt11align_val_t(void *p, size_t n, size_t al) { pm_free_aligned_sized(p, al, n); }
PM_API void _ZdaPvmSt11align_val_t(void *p, size_t n, size_t al) { pm_free_aligned_sized(p, al, n); }
PM_API void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t al, const void *nt) { (void)al; (void)nt; pm_free(p); }
PM_API void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t al, const void *nt) { (void)al; (void)nt; pm_free(p); }
#endif
