/* SPDX-License-Identifier: MIT */
/* Platform layer: mmap, madvise, futex, CPU number, error output.
 * Linux only; nothing here calls malloc or stdio. */
#define _GNU_SOURCE
#include "os.h"
#include "arch.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#if __has_include(<linux/futex.h>)
#include <linux/futex.h>
#else
/* musl's compiler wrapper sees no kernel headers: the ABI's values. */
#define FUTEX_WAIT_PRIVATE 128
#define FUTEX_WAKE_PRIVATE 129
#endif
#include "arch.h"
#include "elf_symbols.h"
#include "layout.h"
#include "text.h"

size_t pm_os_page(void)
{
    static size_t page;
    size_t p = __atomic_load_n(&page, __ATOMIC_RELAXED);
    if (pm_unlikely(!p)) {
#ifdef PM_TEST_KERNEL_PAGE
        p = PM_TEST_KERNEL_PAGE;
#else
        p = (size_t)getauxval(AT_PAGESZ);
        if (p < PM_PAGE)
            p = PM_PAGE;
#endif
        __atomic_store_n(&page, p, __ATOMIC_RELAXED);
    }
    return p;
}

/* Linux 4.17 and later; an older kernel takes the flag for a plain hint,
 * which map_at sees in the address it gets back. */
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define MAP_FLAGS (MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE)

/* Maps [at, at + size) if none of it is mapped; 1 if done. */
static int map_at(void *at, size_t size)
{
    void *p = mmap(at, size, PROT_READ | PROT_WRITE, MAP_FLAGS | MAP_FIXED_NOREPLACE, -1, 0);
    if (p == MAP_FAILED)
        return 0;
    if (p != at) {
        munmap(p, size);
        return 0;
    }
    return 1;
}

/* Each way asks for no more address space than size, but the last, which
 * needs size + align less a page for a moment: under RLIMIT_AS that may
 * fail where size would not.  The kernel hands out address space
 * downwards, from the top of the highest gap that fits, so the gap the
 * first try landed in most often goes on below it: the same size at the
 * aligned address below comes next. */
void *pm_os_map(size_t size, size_t align)
{
    int saved = errno;
    char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_FLAGS, -1, 0);
    if (p == MAP_FAILED) {
        errno = saved;
        return NULL;
    }
    if (((uintptr_t)p & (align - 1)) == 0)
        return p;
    munmap(p, size);
    char *a = (char *)((uintptr_t)p & ~(uintptr_t)(align - 1));
    if (map_at(a, size)) {
        errno = saved;
        return a;
    }
    size_t span = size + align - PM_PAGE;
    char *q = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_FLAGS, -1, 0);
    if (q == MAP_FAILED) {
        errno = saved;
        return NULL;
    }
    a = (char *)(((uintptr_t)q + align - 1) & ~(uintptr_t)(align - 1));
    if (a > q)
        munmap(q, a - q);
    if (q + span > a + size)
        munmap(a + size, q + span - (a + size));
    errno = saved;
    return a;
}

int pm_os_map_at(void *at, size_t size)
{
    int saved = errno;
    int ok = map_at(at, size);
    errno = saved;
    return ok;
}

void pm_os_unmap(void *p, size_t size)
{
    munmap(p, size);
}

/* Whether MADV_DONTNEED gives pages back as zero pages: Linux's does,
 * but an emulator may take it as a hint and ignore it (Debian 12's
 * qemu-user 7.2 does).  A probe at the first call tells; where it fails,
 * fresh anonymous memory mapped over the range keeps pm_os_uncommit's
 * promise. */
enum { DONTNEED_UNKNOWN, DONTNEED_ZEROES, DONTNEED_IGNORED };
static int dontneed;

static int dontneed_probe(void)
{
    size_t page = pm_os_page();
    volatile char *q = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (q == MAP_FAILED)
        return DONTNEED_UNKNOWN;
    q[0] = 1;
    madvise((void *)q, page, MADV_DONTNEED);
    int kind = q[0] ? DONTNEED_IGNORED : DONTNEED_ZEROES;
    munmap((void *)q, page);
    return kind;
}

/* Only the kernel's pages wholly inside the range go back; where the
 * kernel's page is larger than PM_PAGE, the range's ends are cleared in
 * place instead, so that the whole range reads as zero all the same. */
void pm_os_uncommit(void *p, size_t size)
{
    int saved = errno;
    int kind = __atomic_load_n(&dontneed, __ATOMIC_RELAXED);
    if (pm_unlikely(kind == DONTNEED_UNKNOWN)) {
        kind = dontneed_probe();
        __atomic_store_n(&dontneed, kind, __ATOMIC_RELAXED);
    }
    uintptr_t mask = pm_os_page() - 1, lo = (uintptr_t)p, hi = lo + size;
    uintptr_t in_lo = (lo + mask) & ~mask, in_hi = hi & ~mask;
    if (pm_unlikely(in_lo >= in_hi)) {
        memset(p, 0, size);
    } else {
        memset(p, 0, in_lo - lo);
        memset((void *)in_hi, 0, hi - in_hi);
        if (pm_likely(kind != DONTNEED_IGNORED))
            madvise((void *)in_lo, in_hi - in_lo, MADV_DONTNEED);
        else
            mmap((void *)in_lo, in_hi - in_lo, PROT_READ | PROT_WRITE, MAP_FLAGS | MAP_FIXED, -1, 0);
    }
    errno = saved;
}

void pm_os_hugepage(void *p, size_t size, int on)
{
    int saved = errno;
    madvise(p, size, on ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    errno = saved;
}

unsigned pm_os_resident_sample(const void *p, size_t size, unsigned samples)
{
    int saved = errno;
    size_t step = (size >> PM_PAGE_SHIFT) / samples * PM_PAGE;
    uintptr_t mask = pm_os_page() - 1;
    unsigned in = 0;
    for (unsigned i = 0; i < samples; i++) {
        unsigned char v = 0;
        if (mincore((void *)(((uintptr_t)p + i * step) & ~mask), 1, &v) == 0)
            in += v & 1;
    }
    errno = saved;
    return in;
}

int pm_os_move(void *from, size_t size, void *to)
{
    int saved = errno;
    void *p = mremap(from, size, size, MREMAP_MAYMOVE | MREMAP_FIXED, to);
    errno = saved;
    return p == to;
}

/* The file calls primalloc makes, as raw system calls: the C library's
 * open, read, write and close are cancellation points, and a thread with
 * a cancellation pending would end inside a report, silently, holding
 * whatever lock the report was made under.  Each returns -1 with errno
 * set on failure, as the C library's do. */
static int sys_open(const char *path, int flags, int mode)
{
    return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}

static ssize_t sys_read(int fd, void *buf, size_t n)
{
    return (ssize_t)syscall(SYS_read, fd, buf, n);
}

/* sys_read, again while a signal interrupts it. */
static ssize_t sys_read_retried(int fd, void *buf, size_t n)
{
    ssize_t got;
    while ((got = sys_read(fd, buf, n)) < 0 && errno == EINTR)
        ;
    return got;
}

static ssize_t sys_write(int fd, const void *buf, size_t n)
{
    return (ssize_t)syscall(SYS_write, fd, buf, n);
}

static void sys_close(int fd)
{
    syscall(SYS_close, fd);
}

int pm_os_threaded;

void pm_os_thread_started(void)
{
    static unsigned started;
    if (__atomic_add_fetch(&started, 1, __ATOMIC_RELAXED) > 1)
        __atomic_store_n(&pm_os_threaded, 1, __ATOMIC_RELAXED);
}

/* The number of threads in /proc/self/stat: the 18th field after the
 * command's closing parenthesis; 0 when it cannot be read. */
static unsigned kernel_threads(void)
{
    char buf[1024];
    int fd = sys_open("/proc/self/stat", O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    ssize_t n = sys_read(fd, buf, sizeof buf - 1);
    sys_close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    char *at = strrchr(buf, ')');
    for (int field = 0; at && field < 18; field++)
        at = strchr(at + 1, ' ');
    unsigned threads = 0;
    for (at = at ? at + 1 : 0; at && *at >= '0' && *at <= '9'; at++)
        threads = threads * 10 + (unsigned)(*at - '0');
    return threads;
}

int pm_os_one_thread(void)
{
    int one = pm_libc_single_threaded();
    if (one >= 0)
        return one;
    int saved = errno;
    one = kernel_threads() == 1;
    errno = saved;
    return one;
}

unsigned pm_os_cpu_slow(void)
{
    int cpu = sched_getcpu();
    return cpu < 0 ? 0 : (unsigned)cpu;
}

unsigned pm_os_cpus(void)
{
    unsigned long mask[16];
    long n = syscall(SYS_sched_getaffinity, 0, sizeof mask, mask);
    unsigned highest = 0;
    for (long w = 0; w < n / (long)sizeof mask[0]; w++)
        for (unsigned b = 0; b < 64; b++)
            if (mask[w] >> b & 1)
                highest = (unsigned)w * 64 + b;
    return highest + 1;
}

void pm_os_futex_wait(uint32_t *addr, uint32_t val)
{
    int saved = errno;
    syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
    errno = saved;
}

void pm_os_futex_wake(uint32_t *addr)
{
    int saved = errno;
    syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    errno = saved;
}

uint64_t pm_os_random_seed(void)
{
    uint64_t r = 0;
    const void *at = (const void *)getauxval(AT_RANDOM);
    if (at)
        memcpy(&r, at, sizeof r);
    return r ^ pm_arch_ticks() ^ (uintptr_t)&r;
}

void pm_os_sleep_ms(uint32_t ms)
{
    int saved = errno;
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) && errno == EINTR)
        ;
    errno = saved;
}

void pm_os_protect_none(void *p, size_t size)
{
    int saved = errno;
    mprotect(p, size, PROT_NONE);
    errno = saved;
}

static void (*fault_handlers[PM_FAULT_HANDLERS])(void *addr, uintptr_t pc, int wrote);
static struct sigaction fault_before;

static void on_segv(int sig, siginfo_t *info, void *context)
{
    (void)sig;
    const ucontext_t *uc = context;
    for (int i = 0; i < PM_FAULT_HANDLERS; i++) {
        void (*h)(void *, uintptr_t, int) = __atomic_load_n(&fault_handlers[i], __ATOMIC_ACQUIRE);
        if (h)
            h(info->si_addr, PM_ARCH_CONTEXT_PC(uc), PM_ARCH_CONTEXT_WROTE(uc));
    }
    sigaction(SIGSEGV, &fault_before, 0);
}

void pm_os_on_fault(enum pm_fault_handler which, void (*on_fault)(void *addr, uintptr_t pc, int wrote))
{
    static int installed;
    PM_ASSERT(which < PM_FAULT_HANDLERS && !fault_handlers[which]);
    __atomic_store_n(&fault_handlers[which], on_fault, __ATOMIC_RELEASE);
    if (__atomic_exchange_n(&installed, 1, __ATOMIC_ACQ_REL))
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &fault_before);
}

int pm_os_thread(void *(*fn)(void *))
{
    int saved = errno;
    pthread_attr_t attr;
    sigset_t all, old;
    pthread_t t;
    sigfillset(&all);
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 64 << 10);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int ok = !pthread_create(&t, &attr, fn, 0);
    pthread_sigmask(SIG_SETMASK, &old, 0);
    pthread_attr_destroy(&attr);
    errno = saved;
    return ok;
}

/* Descriptors from here up are left to the program's own numbering. */
#define KEPT_FD_MIN 100

int pm_os_file_keep(int fd, struct pm_os_file *f)
{
    int saved = errno;
    struct stat st;
    int kept = fstat(fd, &st) ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, KEPT_FD_MIN);
    if (kept < 0 && errno == EINVAL)
        kept = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    errno = saved;
    if (kept < 0)
        return 0;
    *f = (struct pm_os_file){kept, st.st_dev, st.st_ino};
    return 1;
}

int pm_os_file_is(int fd, const struct pm_os_file *f)
{
    int saved = errno;
    struct stat st;
    int same = !fstat(fd, &st) && st.st_dev == f->dev && st.st_ino == f->ino;
    errno = saved;
    return same;
}

int pm_os_file_fd(const struct pm_os_file *f)
{
    return pm_os_file_is(f->fd, f) ? f->fd : pm_os_file_is(2, f) ? 2 : -1;
}

_Noreturn void pm_os_die(char *buf, char *end)
{
    *end++ = '\n';
    ssize_t ignored = sys_write(2, buf, (size_t)(end - buf));
    (void)ignored;
    abort();
}

char *pm_os_put_call(char *o, const char *call, const void *ptr)
{
    o = pm_text_str(o, "primalloc: ");
    o = pm_text_str(o, call);
    o = pm_text_str(o, "(");
    o = pm_text_hex(o, (uintptr_t)ptr);
    return pm_text_str(o, "): ");
}

_Noreturn void pm_fatal(const char *call, const void *ptr, const char *what)
{
    char buf[160];
    pm_os_die(buf, pm_text_str(pm_os_put_call(buf, call, ptr), what));
}

#ifdef PM_DEBUG
_Noreturn void pm_assert_failed(const char *file, int line, const char *cond)
{
    char buf[400];
    char *o = pm_text_str(buf, "primalloc: ");
    o = pm_text_str(o, file);
    o = pm_text_str(o, ":");
    o = pm_text_dec(o, (uint64_t)line);
    o = pm_text_str(o, ": assertion ");
    o = pm_text_str_cut(o, buf + sizeof buf - 10, cond);
    o = pm_text_str(o, " failed");
    pm_os_die(buf, o);
}
#endif

int pm_os_backtrace(void **frames, int max)
{
    int saved = errno;
    int n = pm_libc_backtrace(frames, max);
    errno = saved;
    return n;
}

void pm_os_backtrace_prime(void)
{
    void *frame[1];
    pm_os_backtrace(frame, 1);
}

__attribute__((noinline)) void pm_os_wipe_stack(size_t bytes)
{
    volatile uintptr_t junk[bytes / sizeof(uintptr_t)], *w = junk;
    for (size_t i = 0; i < bytes / sizeof(uintptr_t); i++)
        w[i] = 0;
}

typedef int (*clock_fn)(clockid_t, struct timespec *);

/* The clock pm_os_now_ms reads: the vDSO's own clock_gettime where there
 * is one (not under valgrind), else the C library's.  The library's
 * wrapper lies among its time functions, a stretch of its text that many
 * programs never run, and its first call would map that stretch into the
 * process (the kernel maps the pages around a fault); the vDSO's page is
 * mapped already.  Found at the first call; threads that race there find
 * the same function. */
static clock_fn now_clock;

int pm_os_clock_is_vdso(void)
{
    pm_os_now_ms();
    return now_clock != clock_gettime;
}

uint32_t pm_os_now_ms(void)
{
    clock_fn clock = __atomic_load_n(&now_clock, __ATOMIC_RELAXED);
    if (pm_unlikely(!clock)) {
        clock = (clock_fn)pm_elf_vdso_function(PM_ARCH_VDSO_CLOCK);
        if (!clock)
            clock = clock_gettime;
        __atomic_store_n(&now_clock, clock, __ATOMIC_RELAXED);
    }
    struct timespec ts;
    clock(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint32_t)((uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000);
}

const char *pm_os_env(const char *name)
{
    return getenv(name);
}

int pm_os_signal_catchable(int sig)
{
    struct sigaction sa;
    int saved = errno;
    int ok = sig != SIGKILL && sig != SIGSTOP && !sigaction(sig, 0, &sa);
    errno = saved;
    return ok;
}

int pm_os_on_signal(int sig, void (*fn)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    int saved = errno;
    int ok = !sigaction(sig, &sa, 0);
    errno = saved;
    return ok;
}

int pm_os_create(const char *path)
{
    return sys_open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

int pm_os_write(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n) {
        ssize_t done = sys_write(fd, p, n);
        if (done < 0 && errno == EINTR)
            continue;
        if (done <= 0)
            return -1;
        p += done;
        n -= (size_t)done;
    }
    return 0;
}

int pm_os_open(const char *path)
{
    int saved = errno;
    int fd = sys_open(path, O_RDONLY | O_CLOEXEC, 0);
    errno = saved;
    return fd;
}

long pm_os_read(int fd, void *buf, size_t n)
{
    int saved = errno;
    ssize_t got = sys_read_retried(fd, buf, n);
    errno = saved;
    return got;
}

int pm_os_copy_file(const char *path, int fd)
{
    int in = sys_open(path, O_RDONLY | O_CLOEXEC, 0);
    if (in < 0)
        return -1;
    char buf[4096];
    ssize_t n;
    int status = 0;
    while (!status && (n = sys_read_retried(in, buf, sizeof buf)) > 0)
        status = pm_os_write(fd, buf, (size_t)n);
    sys_close(in);
    return n < 0 ? -1 : status;
}

void pm_os_close(int fd)
{
    int saved = errno;
    sys_close(fd);
    errno = saved;
}

int pm_os_pid(void)
{
    return getpid();
}
