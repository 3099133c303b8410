/* SPDX-License-Identifier: MIT */
/* Platform layer: mmap, madvise, futex, CPU number, error output.
 * Linux only; nothing here calls malloc or stdio. */
#define _GNU_SOURCE
#include "os.h"
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
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
#include "layout.h"

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

void pm_os_yield(void)
{
    sched_yield();
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

int pm_os_env_on(const char *name)
{
    const char *v = pm_os_env(name);
    return v && v[0] == '1' && !v[1];
}

/* The number s spells in decimal digits alone, if it is at most `most`;
 * otherwise (empty, another character, or too big) most + 1. */
static uint64_t decimal(const char *s, uint32_t most)
{
    uint64_t n = 0;
    if (!*s)
        return (uint64_t)most + 1;
    for (; *s; s++)
        if (*s < '0' || *s > '9' || (n = n * 10 + (uint64_t)(*s - '0')) > most)
            return (uint64_t)most + 1;
    return n;
}

uint32_t pm_os_env_number(const char *name)
{
    const char *v = pm_os_env(name);
    uint64_t n = v ? decimal(v, UINT32_MAX) : 0;
    return n <= UINT32_MAX ? (uint32_t)n : 0;
}

void pm_os_protect_none(void *p, size_t size)
{
    int saved = errno;
    mprotect(p, size, PROT_NONE);
    errno = saved;
}

static void (*fault_handler)(void *addr);
static struct sigaction fault_before;

static void on_segv(int sig, siginfo_t *info, void *context)
{
    (void)sig;
    (void)context;
    fault_handler(info->si_addr);
    sigaction(SIGSEGV, &fault_before, 0);
}

void pm_os_on_fault(void (*on_fault)(void *addr))
{
    static int installed;
    if (__atomic_exchange_n(&installed, 1, __ATOMIC_ACQ_REL))
        return;
    fault_handler = on_fault;
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

char *pm_os_put_str(char *o, const char *s)
{
    while (*s)
        *o++ = *s++;
    return o;
}

char *pm_os_put_hex(char *o, uintptr_t v)
{
    int digits = 1;
    while (digits < 16 && v >> (4 * digits))
        digits++;
    o = pm_os_put_str(o, "0x");
    for (int i = digits - 1; i >= 0; i--)
        *o++ = "0123456789abcdef"[v >> (4 * i) & 15];
    return o;
}

char *pm_os_put_dec(char *o, uint64_t v)
{
    char num[21], *n = num + sizeof num;
    *--n = 0;
    do
        *--n = (char)('0' + v % 10);
    while ((v /= 10));
    return pm_os_put_str(o, n);
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
    o = pm_os_put_str(o, "primalloc: ");
    o = pm_os_put_str(o, call);
    o = pm_os_put_str(o, "(");
    o = pm_os_put_hex(o, (uintptr_t)ptr);
    return pm_os_put_str(o, "): ");
}

_Noreturn void pm_fatal(const char *call, const void *ptr, const char *what)
{
    char buf[160];
    pm_os_die(buf, pm_os_put_str(pm_os_put_call(buf, call, ptr), what));
}

#ifdef PM_DEBUG
_Noreturn void pm_assert_failed(const char *file, int line, const char *cond)
{
    char buf[400];
    char *o = pm_os_put_str(buf, "primalloc: ");
    o = pm_os_put_str(o, file);
    o = pm_os_put_str(o, ":");
    o = pm_os_put_dec(o, (uint64_t)line);
    o = pm_os_put_str(o, ": assertion ");
    size_t room = sizeof buf - (size_t)(o - buf) - 10;
    for (; *cond && room; room--)
        *o++ = *cond++;
    o = pm_os_put_str(o, " failed");
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

/* Where an object whose headers are mapped at eh was loaded: the address
 * its symbols' values are relative to. */
static uintptr_t load_base(const ElfW(Ehdr) *eh, const ElfW(Phdr) *ph)
{
    uintptr_t base = (uintptr_t)eh;
    for (unsigned i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_LOAD && ph[i].p_offset == 0)
            base = (uintptr_t)eh - ph[i].p_vaddr;
    return base;
}

/* The program's headers are those of the object primalloc is part of when
 * the executable holds it. */
void pm_os_own_code(uintptr_t *lo, uintptr_t *hi)
{
    extern const ElfW(Ehdr) __ehdr_start __attribute__((visibility("hidden")));
    const ElfW(Ehdr) *eh = &__ehdr_start;
    const ElfW(Phdr) *ph = (const ElfW(Phdr) *)((const char *)eh + eh->e_phoff);
    *lo = *hi = 0;
    if ((uintptr_t)ph == getauxval(AT_PHDR))
        return;
    uintptr_t base = load_base(eh, ph);
    for (unsigned i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X)) {
            *lo = base + ph[i].p_vaddr;
            *hi = *lo + ph[i].p_memsz;
        }
}

/* The loader usually relocates the addresses of the dynamic section in
 * place; where it does not (the vDSO), they are offsets. */
static const void *dyn_address(const struct dl_phdr_info *info, ElfW(Addr) ptr)
{
    return (const void *)(ptr < info->dlpi_addr ? ptr + info->dlpi_addr : ptr);
}

/* How many dynamic symbols an object has: DT_HASH says; with only
 * DT_GNU_HASH, one past the last symbol of the longest-reaching chain. */
static uint32_t symbol_count(const uint32_t *hash, const uint32_t *gnu)
{
    if (hash)
        return hash[1];
    if (!gnu)
        return 0;
    uint32_t nbuckets = gnu[0], first = gnu[1];
    const uint32_t *buckets = gnu + 4 + gnu[2] * (sizeof(ElfW(Addr)) / 4), *chain = buckets + nbuckets;
    uint32_t last = 0;
    for (uint32_t i = 0; i < nbuckets; i++)
        if (buckets[i] > last)
            last = buckets[i];
    if (last < first)
        return first;
    while (!(chain[last - first] & 1))
        last++;
    return last + 1;
}

struct symbol_walk {
    void (*fn)(void *ctx, uintptr_t start, size_t size, const char *name);
    void *ctx;
};

/* dl_iterate_phdr's callback: hands each function among the object's
 * dynamic symbols to the walk. */
static int object_symbols(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    const struct symbol_walk *w = data;
    const ElfW(Dyn) *dyn = 0;
    for (unsigned i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    if (!dyn)
        return 0;
    const ElfW(Sym) *syms = 0;
    const char *names = 0;
    const uint32_t *hash = 0, *gnu = 0;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        if (dyn->d_tag == DT_SYMTAB)
            syms = dyn_address(info, dyn->d_un.d_ptr);
        else if (dyn->d_tag == DT_STRTAB)
            names = dyn_address(info, dyn->d_un.d_ptr);
        else if (dyn->d_tag == DT_HASH)
            hash = dyn_address(info, dyn->d_un.d_ptr);
        else if (dyn->d_tag == DT_GNU_HASH)
            gnu = dyn_address(info, dyn->d_un.d_ptr);
    }
    uint32_t n = syms && names ? symbol_count(hash, gnu) : 0;
    for (uint32_t i = 0; i < n; i++)
        if (syms[i].st_shndx != SHN_UNDEF && ELF64_ST_TYPE(syms[i].st_info) == STT_FUNC && syms[i].st_size)
            w->fn(w->ctx, info->dlpi_addr + syms[i].st_value, syms[i].st_size, names + syms[i].st_name);
    return 0;
}

void pm_os_each_symbol(void (*fn)(void *ctx, uintptr_t start, size_t size, const char *name), void *ctx)
{
    struct symbol_walk w = {fn, ctx};
    dl_iterate_phdr(object_symbols, &w);
}

struct wanted {
    const char *name;
    uintptr_t at;
};

static void match_symbol(void *ctx, uintptr_t start, size_t size, const char *name)
{
    (void)size;
    struct wanted *w = ctx;
    if (!strcmp(name, w->name))
        w->at = start;
}

/* The vDSO's function of that name, or 0.  Its headers are found in the
 * auxiliary vector, not through dl_iterate_phdr, which takes the loader's
 * lock: dlopen holds that lock while it allocates. */
static uintptr_t vdso_function(const char *name)
{
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)getauxval(AT_SYSINFO_EHDR);
    if (!eh)
        return 0;
    const ElfW(Phdr) *ph = (const ElfW(Phdr) *)((const char *)eh + eh->e_phoff);
    struct dl_phdr_info info = {.dlpi_addr = load_base(eh, ph), .dlpi_phdr = ph, .dlpi_phnum = eh->e_phnum};
    struct wanted w = {name, 0};
    struct symbol_walk walk = {match_symbol, &w};
    object_symbols(&info, sizeof info, &walk);
    return w.at;
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
        clock = (clock_fn)vdso_function("__vdso_clock_gettime");
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

/* The signals a program may hand to primalloc, by name without "SIG";
 * their numbers are the architecture's. */
static const struct {
    char name[8];
    int sig;
} signals[] = {
    {"HUP", SIGHUP},     {"INT", SIGINT},         {"QUIT", SIGQUIT}, {"USR1", SIGUSR1},
    {"USR2", SIGUSR2},   {"PIPE", SIGPIPE},       {"ALRM", SIGALRM}, {"TERM", SIGTERM},
    {"CHLD", SIGCHLD},   {"CONT", SIGCONT},       {"TSTP", SIGTSTP}, {"TTIN", SIGTTIN},
    {"TTOU", SIGTTOU},   {"URG", SIGURG},         {"XCPU", SIGXCPU}, {"XFSZ", SIGXFSZ},
    {"VTALRM", SIGVTALRM}, {"PROF", SIGPROF},     {"WINCH", SIGWINCH}, {"IO", SIGIO},
    {"PWR", SIGPWR},     {"SYS", SIGSYS},
};

int pm_os_signal_number(const char *name)
{
    if (name[0] >= '0' && name[0] <= '9') {
        uint64_t sig = decimal(name, NSIG - 1);
        return sig < NSIG ? (int)sig : 0;
    }
    if (!strncmp(name, "SIG", 3))
        name += 3;
    for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++)
        if (!strcmp(signals[i].name, name))
            return signals[i].sig;
    return 0;
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

int pm_os_copy_file(const char *path, int fd)
{
    int in = sys_open(path, O_RDONLY | O_CLOEXEC, 0);
    if (in < 0)
        return -1;
    char buf[4096];
    ssize_t n;
    int status = 0;
    while (!status && ((n = sys_read(in, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)))
        if (n > 0)
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
