/* SPDX-License-Identifier: MIT */
/* fork() holds every allocator lock across the call, and the first write to
 * a page after fork copies it, in parent and child alike: a lock per page of
 * bookkeeping made each fork copy over a hundred pages (6 ms a fork where
 * glibc took 1).  With every bin and both cache levels in use, the parent's
 * page faults across a fork must stay within a bound that does not grow
 * with the bins: the per-CPU caches' lock lines, and a few pages more.
 * A second thread waits through the forks, since a single-threaded
 * process takes no locks across fork.
 * Usage: fork_pages */
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"

#define LIVE 20000

static void *wait_for_pipe(void *fd)
{
    char c;
    CHECK(read(*(int *)fd, &c, 1) == 1);
    return NULL;
}

int main(void)
{
    static void *live[LIVE];
    /* Sizes over every small, medium and large bin, freed in bulk so that
     * batches reach the CPU and global levels. */
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < LIVE; i++) {
            live[i] = malloc(1 + (size_t)i * 7919 % 60000);
            CHECK(live[i]);
        }
        for (int i = 0; i < LIVE; i++)
            free(live[i]);
    }
    long cpus = sysconf(_SC_NPROCESSORS_CONF);
    CHECK(cpus > 0);
    /* Each CPU's cache of 65 bins holds its locks on three pages; glibc's
     * fork, in a process of several threads, writes a few pages of its own
     * (its malloc's and stdio's locks). */
    long bound = 24 + 3 * cpus;
    int pipe_fds[2];
    CHECK(pipe(pipe_fds) == 0);
    pthread_t waiter;
    CHECK(pthread_create(&waiter, NULL, wait_for_pipe, &pipe_fds[0]) == 0);
    for (int k = 0; k < 3; k++) {
        long before = minor_faults();
        pid_t child = fork();
        CHECK(child >= 0);
        if (!child) {
            free(malloc(100));
            _exit(0);
        }
        long faults = minor_faults() - before;
        int status;
        CHECK(waitpid(child, &status, 0) == child);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        CHECK_MSG(faults <= bound, "fork %d: the parent took %ld page faults (bound %ld)", k,
                  faults, bound);
    }
    CHECK(write(pipe_fds[1], "", 1) == 1);
    CHECK(pthread_join(waiter, NULL) == 0);
    return 0;
}
