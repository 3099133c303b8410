/* fork() holds every allocator lock across the call, and the first write to
 * a page after fork copies it, in parent and child alike: a lock per page of
 * bookkeeping made each fork copy over a hundred pages (6 ms a fork where
 * glibc took 1).  With every bin and both cache levels in use, the parent's
 * page faults across a fork must stay within a bound that does not grow
 * with the bins: the per-CPU caches' lock lines, and a few pages more.
 * Usage: fork_pages */
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"

#define LIVE 20000

static long minor_faults(void)
{
    struct rusage u;
    CHECK(getrusage(RUSAGE_SELF, &u) == 0);
    return u.ru_minflt;
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
    /* Each CPU's cache of 64 bins holds its locks on two pages. */
    long bound = 16 + 2 * cpus;
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
    return 0;
}
