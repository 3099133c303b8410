/* SPDX-License-Identifier: MIT */
/* Everything specific to an instruction set, one section per
 * architecture: x86-64, aarch64 and riscv64, and a portable fallback in
 * C that any other 64-bit target compiles with.
 *
 * Promises, on every architecture:
 *   PM_ARCH_TP          a qualifier for pointers made by PM_ARCH_TP_REL;
 *   PM_ARCH_TP_OFFSET(v) the offset of the initial-exec thread variable v
 *                       from this thread's base, the same in every thread;
 *   PM_ARCH_TP_REL(v, off) the address at offset `off` from this thread's
 *                       base, as a PM_ARCH_TP-qualified address (on x86-64
 *                       the offset itself, from the thread pointer, so that
 *                       no instruction reads the pointer; elsewhere a plain
 *                       address from the thread pointer, or from v where
 *                       the compiler does not give the thread pointer);
 *   PM_ARCH_TP_AT(v, at) PM_ARCH_TP_REL at byte `at` of v;
 *   pm_arch_below(x, b) whether x < *b, with *b read as an acquire load;
 *   pm_arch_take(w, v)  xors v into the 32-bit word at w and returns
 *                       whether that left 0 (the word held v); a word
 *                       that did not hold v is left as it was;
 *   pm_arch_pause()     a hint inside a spin-wait loop;
 *   pm_arch_ticks()     a counter that changes between two calls, for
 *                       seeding (not a clock);
 *   PM_ARCH_VDSO_CLOCK  the name of clock_gettime in the kernel's vDSO.
 * Nothing here calls anything. */
#ifndef PM_ARCH_H
#define PM_ARCH_H

#include <stdint.h>

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PM_ARCH_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define PM_ARCH_TSAN 1
#endif

/* A 32-bit word that may alias an object of any type. */
typedef uint32_t pm_arch_word32 __attribute__((may_alias));

#if defined(__x86_64__)

/* %fs holds the thread pointer; a thread variable's offset from it is a
 * GOT entry (an immediate once linked into a program).  ThreadSanitizer
 * takes an %fs-relative address for a plain one, and sees no load in an
 * asm, so its builds take the portable forms. */
#ifndef PM_ARCH_TSAN
#define PM_ARCH_TP __seg_fs
#define PM_ARCH_TP_OFFSET(v)                                          \
    ({                                                                \
        uintptr_t off_;                                               \
        __asm__("movq " #v "@gottpoff(%%rip), %0" : "=r"(off_));      \
        off_;                                                         \
    })
#define PM_ARCH_TP_REL(v, off) ((uintptr_t)(off))
#define PM_ARCH_TP_AT(v, at)                                          \
    ({                                                                \
        uintptr_t at_ = (at);                                         \
        __asm__("addq " #v "@gottpoff(%%rip), %0" : "+r"(at_));       \
        at_;                                                          \
    })

/* Every load acquires on x86-64, and a compare reads its operand from
 * memory: one instruction, where the compilers load an atomic first.  The
 * clobber keeps the loads after it below it. */
static inline int pm_arch_below(uint64_t x, const uint64_t *b)
{
    int below;
    __asm__ volatile("cmpq %2, %1" : "=@ccb"(below) : "r"(x), "m"(*b) : "memory");
    return below;
}
#define PM_ARCH_HAS_BELOW 1
#endif

/* One xor to memory clears the word and sets the zero flag, where the
 * compilers emit a load, an xor, a store and a compare. */
static inline int pm_arch_take(void *w, uint32_t v)
{
    pm_arch_word32 *x = w;
    int zero;
    __asm__("xorl %2, %0" : "+m"(*x), "=@ccz"(zero) : "ri"(v));
    if (__builtin_expect(zero, 1))
        return 1;
    *x ^= v;
    return 0;
}
#define PM_ARCH_HAS_TAKE 1

static inline void pm_arch_pause(void)
{
    __builtin_ia32_pause();
}

static inline uint64_t pm_arch_ticks(void)
{
    return __builtin_ia32_rdtsc();
}

/* The interrupted instruction's address in a signal handler's context (a
 * ucontext_t *; glibc and musl name it alike), and for a page fault
 * whether it wrote (1) or read (0): the page-fault error code's bit 1. */
#define PM_ARCH_CONTEXT_PC(uc) ((uintptr_t)(uc)->uc_mcontext.gregs[REG_RIP])
#define PM_ARCH_CONTEXT_WROTE(uc) ((int)((uc)->uc_mcontext.gregs[REG_ERR] >> 1 & 1))

#elif defined(__aarch64__)

static inline void pm_arch_pause(void)
{
    __asm__ volatile("yield" ::: "memory");
}

/* The virtual counter, readable at EL0 on Linux. */
static inline uint64_t pm_arch_ticks(void)
{
    uint64_t t;
    __asm__ volatile("mrs %0, cntvct_el0" : "=r"(t));
    return t;
}

#define PM_ARCH_CONTEXT_PC(uc) ((uintptr_t)(uc)->uc_mcontext.pc)

/* arm64's vDSO names its functions __kernel_*. */
#define PM_ARCH_VDSO_CLOCK "__kernel_clock_gettime"

#elif defined(__riscv) && __riscv_xlen == 64

/* The Zihintpause hint, a fence that cores without it run as a no-op. */
static inline void pm_arch_pause(void)
{
    __asm__ volatile(".insn i 0x0f, 0, x0, x0, 0x010" ::: "memory");
}

/* The time CSR, which Linux lets user code read. */
static inline uint64_t pm_arch_ticks(void)
{
    uint64_t t;
    __asm__ volatile("rdtime %0" : "=r"(t));
    return t;
}

/* The first of the general registers' slots holds the pc. */
#define PM_ARCH_CONTEXT_PC(uc) ((uintptr_t)(uc)->uc_mcontext.__gregs[0])

#else

static inline void pm_arch_pause(void)
{
    __asm__ volatile("" ::: "memory");
}

/* Whatever changes: the address of a stack slot differs between threads
 * and, under address-space randomisation, between runs. */
static inline uint64_t pm_arch_ticks(void)
{
    volatile char here;
    return (uintptr_t)&here;
}

#endif

/* The portable forms: from the thread pointer where the compiler gives
 * it (the offsets of initial-exec variables from it are fixed), and
 * otherwise from v itself, which every offset is then relative to. */
#ifndef PM_ARCH_TP
#define PM_ARCH_TP
#if defined(__has_builtin) && !defined(PM_ARCH_TSAN)
#if __has_builtin(__builtin_thread_pointer) && (defined(__aarch64__) || defined(__riscv))
#define PM_ARCH_TP_OFFSET(v) ((uintptr_t)&(v) - (uintptr_t)__builtin_thread_pointer())
#define PM_ARCH_TP_REL(v, off) ((uintptr_t)__builtin_thread_pointer() + (off))
#endif
#endif
#ifndef PM_ARCH_TP_OFFSET
#define PM_ARCH_TP_OFFSET(v) ((void)&(v), (uintptr_t)0)
#define PM_ARCH_TP_REL(v, off) ((uintptr_t)&(v) + (off))
#endif
#define PM_ARCH_TP_AT(v, at) ((uintptr_t)&(v) + (at))
#endif

/* The name x86-64's, riscv64's and the generic vDSO give it; where a
 * vDSO names it otherwise, the lookup fails and the C library's serves. */
#ifndef PM_ARCH_VDSO_CLOCK
#define PM_ARCH_VDSO_CLOCK "__vdso_clock_gettime"
#endif

/* Elsewhere the interrupted instruction is not known (0), nor whether a
 * fault wrote (-1). */
#ifndef PM_ARCH_CONTEXT_PC
#define PM_ARCH_CONTEXT_PC(uc) ((void)(uc), (uintptr_t)0)
#endif
#ifndef PM_ARCH_CONTEXT_WROTE
#define PM_ARCH_CONTEXT_WROTE(uc) ((void)(uc), -1)
#endif

#ifndef PM_ARCH_HAS_BELOW
static inline int pm_arch_below(uint64_t x, const uint64_t *b)
{
    return x < __atomic_load_n(b, __ATOMIC_ACQUIRE);
}
#endif

#ifndef PM_ARCH_HAS_TAKE
static inline int pm_arch_take(void *w, uint32_t v)
{
    pm_arch_word32 *x = w;
    if (__builtin_expect(*x == v, 1)) {
        *x = 0;
        return 1;
    }
    return 0;
}
#endif

#endif
