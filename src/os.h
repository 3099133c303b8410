/* Every call into the kernel or libc's platform layer lives in os.c.
 *
 * Promises: nothing here allocates with malloc.  pm_os_map returns memory
 * that reads as zero and is committed by the kernel only when touched;
 * pm_os_uncommit gives pages back and they read as zero again afterwards.
 * pm_fatal writes one line to stderr and aborts. */
#ifndef PM_OS_H
#define PM_OS_H

#include <stddef.h>
#include <stdint.h>

/* size bytes aligned to align (a power of two, at least a page); NULL when
 * the kernel refuses.  hugepage asks for transparent huge pages. */
void *pm_os_map(size_t size, size_t align);
void pm_os_unmap(void *p, size_t size);
void pm_os_uncommit(void *p, size_t size);
void pm_os_hugepage(void *p, size_t size);

/* The CPU this thread runs on now (it may move at any time). */
unsigned pm_os_cpu(void);
/* How many CPU numbers this process may see: CPU ids are reduced modulo it. */
unsigned pm_os_cpu_slots(void);

/* Futex wait while *addr == val, and wake one waiter. */
void pm_os_futex_wait(uint32_t *addr, uint32_t val);
void pm_os_futex_wake(uint32_t *addr);
void pm_os_yield(void);

uint64_t pm_os_random_seed(void);

/* A coarse monotonic clock in milliseconds (wraps). */
uint32_t pm_os_now_ms(void);

/* "primalloc: CALL(PTR): WHAT" on stderr, then abort(). */
_Noreturn void pm_fatal(const char *call, const void *ptr, const char *what);

#define pm_likely(x) __builtin_expect(!!(x), 1)
#define pm_unlikely(x) __builtin_expect(!!(x), 0)

#endif
