/* SPDX-License-Identifier: MIT */
/* fork() while other threads allocate: the child, which inherits whatever
 * state those threads left mid-operation, must allocate in every category,
 * from its main thread and from new threads, fork again, and check and
 * free objects inherited from the parent.
 * Usage: fork_threads [forks] */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"
#include "objects.h"

#define BUSY_THREADS 2
#define KEEP 64
#define INHERITED 32

static atomic_int stop;

/* Allocates and frees through a window of live objects until stopped. */
static void churn(uint64_t seed, long ops, atomic_int *until)
{
    void *keep[KEEP] = {0};
    uint64_t rng = seed;
    for (long i = 0; ops < 0 || i < ops; i++) {
        if (until && atomic_load_explicit(until, memory_order_relaxed))
            break;
        void **slot = &keep[i % KEEP];
        if (*slot)
            obj_free(*slot);
        *slot = obj_new(&rng, obj_mixed_size(&rng));
    }
    for (int i = 0; i < KEEP; i++)
        if (keep[i])
            obj_free(keep[i]);
}

static void *busy(void *arg)
{
    churn((uint64_t)(uintptr_t)arg, -1, &stop);
    return NULL;
}

static void *child_thread(void *arg)
{
    churn((uint64_t)(uintptr_t)arg, 200, NULL);
    return NULL;
}

static void wait_ok(pid_t pid, const char *who)
{
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "%s failed: status %#x", who, status);
}

/* Everything a child does; it forks a grandchild when asked. */
static void child(int n, void **inherited, int fork_again)
{
    for (int i = 0; i < INHERITED; i++)
        obj_free(inherited[i]);
    churn(1000 + n, 300, NULL);
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        CHECK(pthread_create(&t[i], NULL, child_thread, (void *)(uintptr_t)(n * 2 + i)) == 0);
    if (fork_again) {
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) {
            churn(5000 + n, 200, NULL);
            _exit(0);
        }
        wait_ok(pid, "grandchild");
    }
    for (int i = 0; i < 2; i++)
        CHECK(pthread_join(t[i], NULL) == 0);
}

int main(int argc, char **argv)
{
    int forks = argc > 1 ? atoi(argv[1]) : 60;
    CHECK(forks > 0);
    uint64_t rng = 42;
    void *inherited[INHERITED];
    for (int i = 0; i < INHERITED; i++)
        inherited[i] = obj_new(&rng, obj_mixed_size(&rng));

    pthread_t t[BUSY_THREADS];
    for (int i = 0; i < BUSY_THREADS; i++)
        CHECK(pthread_create(&t[i], NULL, busy, (void *)(uintptr_t)(i + 1)) == 0);
    for (int n = 0; n < forks; n++) {
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) {
            child(n, inherited, n % 4 == 0);
            /* Half leave through exit(), which runs atexit and stdio
             * teardown while the allocator is in use. */
            if (n % 2)
                exit(0);
            _exit(0);
        }
        wait_ok(pid, "child");
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < BUSY_THREADS; i++)
        CHECK(pthread_join(t[i], NULL) == 0);
    for (int i = 0; i < INHERITED; i++)
        obj_free(inherited[i]);
    return 0;
}
