/* SPDX-License-Identifier: MIT */
/* The ELF reader: a C library function found among the dynamic symbols
 * and callable at the start given, the vDSO's clock found by name
 * wherever the process has a vDSO, and no range of primalloc's own code
 * in a program that links it (this test links the static library). */
#define _GNU_SOURCE
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>
#include "elf_symbols.h"
#include "unit.h"

struct sought {
    const char *name;
    uintptr_t start;
    size_t size;
    unsigned found;
};

static void seek(void *ctx, uintptr_t start, size_t size, const char *name)
{
    struct sought *s = ctx;
    CHECK(start && size && name);
    if (!strcmp(name, s->name)) {
        s->start = start;
        s->size = size;
        s->found++;
    }
}

static void test_each_symbol(void)
{
    struct sought s = {"getpid", 0, 0, 0};
    pm_elf_each_symbol(seek, &s);
    CHECK(s.found >= 1);
    pid_t (*found)(void) = (pid_t (*)(void))s.start;
    CHECK(found() == getpid());
    struct sought none = {"pm_no_such_function", 0, 0, 0};
    pm_elf_each_symbol(seek, &none);
    CHECK(!none.found);
}

#if defined __aarch64__
#define VDSO_CLOCK "__kernel_clock_gettime"
#else
#define VDSO_CLOCK "__vdso_clock_gettime"
#endif

static void test_vdso_function(void)
{
    CHECK(!pm_elf_vdso_function("pm_no_such_function"));
    uintptr_t at = pm_elf_vdso_function(VDSO_CLOCK);
    if (!getauxval(AT_SYSINFO_EHDR)) {
        CHECK(!at);
        return;
    }
    CHECK(at);
    int (*vdso_clock)(clockid_t, struct timespec *) = (int (*)(clockid_t, struct timespec *))at;
    struct timespec before, now, after;
    CHECK(clock_gettime(CLOCK_MONOTONIC, &before) == 0);
    CHECK(vdso_clock(CLOCK_MONOTONIC, &now) == 0);
    CHECK(clock_gettime(CLOCK_MONOTONIC, &after) == 0);
    CHECK(now.tv_sec > before.tv_sec || (now.tv_sec == before.tv_sec && now.tv_nsec >= before.tv_nsec));
    CHECK(after.tv_sec > now.tv_sec || (after.tv_sec == now.tv_sec && after.tv_nsec >= now.tv_nsec));
}

static void test_own_code(void)
{
    uintptr_t lo = 1, hi = 1;
    pm_elf_own_code(&lo, &hi);
    CHECK(lo == 0 && hi == 0);
}

int main(void)
{
    test_each_symbol();
    test_vdso_function();
    test_own_code();
    return 0;
}
