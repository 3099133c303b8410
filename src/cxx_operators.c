/* SPDX-License-Identifier: MIT */
/* Every C++ operator new and delete, written in C under their mangled
 * names so that the library needs no C++ runtime.  A program that calls
 * them has one, whose new-handler, bad_alloc and catch we reach through
 * weak references. */
#include <stddef.h>
#include <unwind.h>
#include "fast_path.h"
#include "os.h"
#include "primalloc.h"

#ifdef PM_STD_NAMES
typedef void (*new_handler)(void);
extern new_handler _ZSt15get_new_handlerv(void) __attribute__((weak));
extern void _ZSt17__throw_bad_allocv(void) __attribute__((weak, noreturn));
extern void *__cxa_begin_catch(void *exception) __attribute__((weak));
extern void __cxa_end_catch(void) __attribute__((weak));

static void *allocate(size_t size, size_t align)
{
    if (!align)
        return pm_alloc(size, "operator new");
    void *p = 0;
    return pm_posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, size) ? 0 : p;
}

/* The exception that ended this thread's last call_handler, from the
 * personality routine to the frame it resumes. */
static __thread struct _Unwind_Exception *handler_exception;

/* The personality routine of call_handler's frame alone.  In the search
 * phase it claims every C++ exception (class "C++\0", or "C++\1" from
 * std::rethrow_exception; any vendor), so the unwinder stops there.  In
 * that frame's cleanup phase it hands the exception over and resumes the
 * frame where the call to the handler returns: the unwinder has restored
 * the registers a call preserves, as for any landing pad.  Forced unwinds
 * (thread exit and cancellation) and other languages' exceptions pass on.
 * Only the assembler names it: not static, so the name stays as written,
 * and hidden, so the PC-relative reference binds inside the library. */
__attribute__((visibility("hidden"), used)) _Unwind_Reason_Code
pm_new_handler_personality(int version, _Unwind_Action actions,
                           _Unwind_Exception_Class exception_class,
                           struct _Unwind_Exception *exception, struct _Unwind_Context *context)
{
    (void)context;
    if (version != 1 || (exception_class & 0xffffff00) != ('C' << 24 | '+' << 16 | '+' << 8))
        return _URC_CONTINUE_UNWIND;
    if (actions & _UA_SEARCH_PHASE)
        return _URC_HANDLER_FOUND;
    if (!(actions & _UA_HANDLER_FRAME))
        return _URC_CONTINUE_UNWIND;
    handler_exception = exception;
    return _URC_INSTALL_CONTEXT;
}

/* Calls h; returns the C++ exception it threw, NULL if it returned.  The
 * directive gives this function's unwind entry the personality above
 * (0x1b: its address PC-relative in 4 bytes).  The call to h is the only
 * call here, so nothing else is caught; never inlined, so the personality
 * covers no caller. */
__attribute__((noinline)) static struct _Unwind_Exception *call_handler(new_handler h)
{
    __asm__(".cfi_personality 0x1b, pm_new_handler_personality");
    h();
    struct _Unwind_Exception *e = handler_exception;
    handler_exception = 0;
    return e;
}

/* Every form calls the new-handler until allocation succeeds or there is
 * no handler; then the throwing forms throw bad_alloc and the nothrow forms
 * return NULL.  The nothrow forms are the throwing form inside a try whose
 * catch (...) returns NULL ([new.delete.single]): an exception from the
 * handler is caught as C++ catches it, begun and ended, which destroys it.
 * The handler may throw only bad_alloc ([new.handler]), so catching any
 * C++ exception catches no more than a conforming handler throws; and a
 * C++ exception comes from a loaded C++ runtime, which binds the weak
 * references to __cxa_begin_catch and __cxa_end_catch.  The forms without
 * alignment first pop from the thread's list inline (new_with_handler). */
static __attribute__((noinline)) void *new_slow(size_t size, size_t align, int nothrow)
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
        if (!nothrow) {
            h();
            continue;
        }
        struct _Unwind_Exception *e = call_handler(h);
        if (e) {
            __cxa_begin_catch(e);
            __cxa_end_catch();
            return 0;
        }
    }
}

/* A small or medium request whose inline pop failed: refills t's list, as
 * malloc's slow path does, without a second pop; only when that fails
 * does new_slow try again and call the handler. */
static __attribute__((noinline)) void *new_refill(pm_tbin_fs *t, size_t size, int nothrow)
{
    void *p = pm_tc_refill(t, "operator new");
    return pm_likely(p) ? p : new_slow(size, 0, nothrow);
}

static inline void *new_with_handler(size_t size, size_t align, int nothrow)
{
    if (!align && pm_likely(pm_tc_looks_up(size))) {
        pm_tbin_fs *t = pm_tc_entry_of_size(size);
        void *p = pm_tc_take(t);
        return pm_likely(p) ? p : new_refill(t, size, nothrow);
    }
    return new_slow(size, align, nothrow);
}

PM_API void *_Znwm(size_t n) { return new_with_handler(n, 0, 0); }
PM_API void *_Znam(size_t n) { return new_with_handler(n, 0, 0); }
PM_API void *_ZnwmRKSt9nothrow_t(size_t n, const void *nt) { (void)nt; return new_with_handler(n, 0, 1); }
PM_API void *_ZnamRKSt9nothrow_t(size_t n, const void *nt) { (void)nt; return new_with_handler(n, 0, 1); }
PM_API void *_ZnwmSt11align_val_t(size_t n, size_t al) { return new_with_handler(n, al, 0); }
PM_API void *_ZnamSt11align_val_t(size_t n, size_t al) { return new_with_handler(n, al, 0); }
PM_API void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t n, size_t al, const void *nt) { (void)nt; return new_with_handler(n, al, 1); }
PM_API void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t n, size_t al, const void *nt) { (void)nt; return new_with_handler(n, al, 1); }

/* Every delete form: free's fast path, n the size the sized forms state
 * (0 for the others), al the alignment the aligned forms state (1 for
 * the others). */
static inline void deallocate(void *p, size_t n, size_t al)
{
    pm_dealloc_aligned(p, al, n, "operator delete");
}

PM_API void _ZdlPv(void *p) { deallocate(p, 0, 1); }
PM_API void _ZdaPv(void *p) { deallocate(p, 0, 1); }
PM_API void _ZdlPvm(void *p, size_t n) { deallocate(p, n, 1); }
PM_API void _ZdaPvm(void *p, size_t n) { deallocate(p, n, 1); }
PM_API void _ZdlPvRKSt9nothrow_t(void *p, const void *nt) { (void)nt; deallocate(p, 0, 1); }
PM_API void _ZdaPvRKSt9nothrow_t(void *p, const void *nt) { (void)nt; deallocate(p, 0, 1); }
PM_API void _ZdlPvSt11align_val_t(void *p, size_t al) { deallocate(p, 0, al); }
PM_API void _ZdaPvSt11align_val_t(void *p, size_t al) { deallocate(p, 0, al); }
PM_API void _ZdlPvmSt11align_val_t(void *p, size_t n, size_t al) { deallocate(p, n, al); }
PM_API void _ZdaPvmSt11align_val_t(void *p, size_t n, size_t al) { deallocate(p, n, al); }
PM_API void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t al, const void *nt) { (void)nt; deallocate(p, 0, al); }
PM_API void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t al, const void *nt) { (void)nt; deallocate(p, 0, al); }
#endif
