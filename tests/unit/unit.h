/* SPDX-License-Identifier: MIT */
/* Helpers for the module unit tests, beside the checks of tests/check.h
 * that every test uses: runners for code that must end in pm_fatal or
 * must leave no trace in the process, and
 * (in tests built with _GNU_SOURCE) pinning to one CPU, since the caches
 * and carving lanes follow the CPU. */
#ifndef PM_UNIT_H
#define PM_UNIT_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"

/* Runs fn(arg) in a child; checks that it aborts and that its stderr holds
 * `expect`. */
static inline void check_fatal(void (*fn)(void *), void *arg, const char *expect)
{
    int fds[2];
    CHECK(pipe(fds) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        fn(arg);
        _exit(0);
    }
    close(fds[1]);
    char buf[512];
    read_all(fds[0], buf, sizeof buf);
    close(fds[0]);
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT || !strstr(buf, expect)) {
        fprintf(stderr, "expected abort with \"%s\", got status %d and \"%s\"\n", expect, status, buf);
        exit(1);
    }
}

/* Runs fn in a child, whose changes to the allocator's state the checks
 * after it then do not see; checks that it exits with 0. */
static inline void in_child(void (*fn)(void))
{
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        fn();
        _exit(0);
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

#ifdef _GNU_SOURCE
#include <sched.h>

/* Runs the calling thread on `cpu` only. */
static inline void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    CHECK(sched_setaffinity(0, sizeof set, &set) == 0);
}

/* The first two CPUs this process may run on (the test needs two). */
static inline void two_cpus(int cpu[2])
{
    cpu_set_t set;
    CHECK(sched_getaffinity(0, sizeof set, &set) == 0);
    int n = 0;
    for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
        if (CPU_ISSET(c, &set))
            cpu[n++] = c;
    CHECK(n == 2);
}
#endif

#endif
