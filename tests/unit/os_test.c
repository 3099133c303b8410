/* SPDX-License-Identifier: MIT */
/* The platform layer's test of which signals may be caught, its test of
 * when a periodic task is due, its clock, its sample of the pages of a
 * range that are in memory, and the CPU number by either path: the
 * rseq area where the C library registered one, else sched_getcpu
 * (PM_TEST_RSEQ says which this run must take). */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>
#include "layout.h"
#include "os.h"
#include "unit.h"

/* Handlers may be installed for the signals a program hands out, not
 * for SIGKILL or SIGSTOP. */
static void test_signal_catchable(void)
{
    CHECK(pm_os_signal_catchable(SIGUSR1));
    CHECK(pm_os_signal_catchable(SIGHUP));
    CHECK(!pm_os_signal_catchable(SIGKILL));
    CHECK(!pm_os_signal_catchable(SIGSTOP));
    CHECK(!pm_os_signal_catchable(NSIG + 1));
}

/* A periodic task is due at its first call wherever the clock stands, its
 * sign bit set included, and then once a period. */
static void test_due(void)
{
    static const uint32_t starts[] = {1000, 0x7fffff00u, 0x90000000u, 0xffffff00u};
    for (unsigned i = 0; i < sizeof starts / sizeof starts[0]; i++) {
        uint32_t next = 0, now = starts[i];
        CHECK(pm_os_due(&next, now, 250));
        CHECK(next == now + 250);
        CHECK(!pm_os_due(&next, now + 249, 250));
        CHECK(pm_os_due(&next, now + 250, 250));
        CHECK(!pm_os_due(&next, now + 251, 250));
        CHECK(pm_os_due(&next, now + 600, 250));
        CHECK(next == now + 850);
    }
}

static uint32_t libc_now_ms(void)
{
    struct timespec ts;
    CHECK(clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) == 0);
    return (uint32_t)((uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000);
}

/* The clock is the C library's coarse monotonic one, read through the
 * vDSO wherever the process has one (valgrind gives it none). */
static void test_clock(void)
{
    CHECK(pm_os_clock_is_vdso() == (getauxval(AT_SYSINFO_EHDR) != 0));
    for (int i = 0; i < 1000; i++) {
        uint32_t before = libc_now_ms(), now = pm_os_now_ms(), after = libc_now_ms();
        CHECK(!pm_os_earlier(now, before));
        CHECK(!pm_os_earlier(after, now));
    }
}

/* Eight samples of 64 of the kernel's pages fall on every eighth page;
 * an unmapped range has none in memory. */
static void test_resident_sample(void)
{
    size_t pages = 64, page = pm_os_page();
    unsigned char *p = pm_os_map(pages * page, page);
    CHECK(p);
    CHECK(pm_os_resident_sample(p, pages * page, 8) == 0);
    for (size_t i = 0; i < 3; i++)
        p[i * 8 * page] = 1;
    p[page] = 1;
    CHECK(pm_os_resident_sample(p, pages * page, 8) == 3);
    memset(p, 1, pages * page);
    CHECK(pm_os_resident_sample(p, pages * page, 8) == 8);
    pm_os_unmap(p, pages * page);
    CHECK(pm_os_resident_sample(p, pages * page, 8) == 0);
}

static void *nothing(void *arg)
{
    return arg;
}

/* With a second thread started (one thread alone is on CPU 0), the CPU
 * number is the one the thread is pinned to, on every CPU it may use. */
static void test_cpu(void)
{
    const char *want = getenv("PM_TEST_RSEQ");
    CHECK(want && (!strcmp(want, "registered") || !strcmp(want, "absent")));
    CHECK((pm_libc_rseq_cpu() >= 0) == !strcmp(want, "registered"));
    pthread_t t;
    CHECK(pthread_create(&t, 0, nothing, 0) == 0 && pthread_join(t, 0) == 0);
    pm_os_thread_started();
    pm_os_thread_started();
    cpu_set_t all;
    CHECK(sched_getaffinity(0, sizeof all, &all) == 0);
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, &all))
            continue;
        pin(c);
        CHECK(pm_os_cpu() == (unsigned)c);
    }
    CHECK(sched_setaffinity(0, sizeof all, &all) == 0);
}

int main(void)
{
    test_cpu();
    test_signal_catchable();
    test_due();
    test_clock();
    test_resident_sample();
    printf("os: parsers, clock, residency and CPU number ok\n");
    return 0;
}
