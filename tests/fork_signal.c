/* SPDX-License-Identifier: MIT */
/* fork() in a signal handler of a single-threaded process (glibc's
 * malloc/tst-mallocfork2.c).  POSIX.1-2008 lists fork among the
 * async-signal-safe functions; glibc keeps it so while the process has one
 * thread by taking no malloc locks around it, and the allocator's fork
 * handlers must take none either, or a fork (or a malloc) in the handler
 * waits forever on a lock that the thread it interrupted holds in the
 * middle of its own fork or malloc.
 * A timer raises SIGUSR1 while the main thread forks, frees or mallocs:
 *   fork    the handler forks a child that exits at once; the main thread
 *           frees and mallocs objects of every category and forks every
 *           fourth round.
 *   malloc  the handler mallocs and frees an object of every edge size,
 *           huge ones included, which take a lock on every call; the main
 *           thread forks every round and calls nothing that allocates (a
 *           malloc in a handler is safe only while the thread it
 *           interrupted is outside the allocator).
 * Both modes run, one after the other, unless one is named.  A deadlock
 * ends the test through the watchdog.
 * Usage: fork_signal [rounds [fork|malloc]] */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "check.h"

#define OBJECTS 509

static timer_t timer;
static volatile sig_atomic_t received, handled, failed;

/* waitpid, resumed when a signal interrupts it; -1 when it fails. */
static int reap(pid_t pid)
{
    int status;
    pid_t r;
    while ((r = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
        ;
    return r == pid ? status : -1;
}

static void fail_in_handler(const char *msg)
{
    ssize_t ignored = write(STDERR_FILENO, msg, strlen(msg));
    (void)ignored;
    failed = 1;
}

static void fork_in_handler(int sig)
{
    (void)sig;
    int saved = errno;
    received = 1;
    handled = 1;
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    if (pid < 0)
        fail_in_handler("handler: fork failed\n");
    else if (reap(pid) != 0)
        fail_in_handler("handler: the child did not exit with status 0\n");
    errno = saved;
}

static void malloc_in_handler(int sig)
{
    (void)sig;
    int saved = errno;
    received = 1;
    handled = 1;
    for (size_t i = 0; i < n_edge_sizes; i++) {
        size_t size = edge_sizes[i];
        char *p = malloc(size);
        if (!p) {
            fail_in_handler("handler: malloc failed\n");
            break;
        }
        if (size) {
            p[0] = 1;
            p[size - 1] = 2;
        }
        free(p);
    }
    errno = saved;
}

/* A timer on the process's CPU time raises SIGUSR1, so that signals land
 * where the main thread spends its time: in fork most of all. */
static void start_signals(void)
{
    struct sigevent ev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR1};
    CHECK(timer_create(CLOCK_PROCESS_CPUTIME_ID, &ev, &timer) == 0);
    struct itimerspec every = {.it_interval = {0, 100000}, .it_value = {0, 100000}};
    CHECK(timer_settime(timer, 0, &every, NULL) == 0);
}

/* One fork whose child exits at once; 1 if a signal came meanwhile. */
static int fork_once(void)
{
    received = 0;
    pid_t pid = fork();
    CHECK(pid >= 0);
    int hit = received;
    if (pid == 0)
        _exit(0);
    CHECK_EQ(reap(pid), 0);
    return hit;
}

/* One mode's rounds over the live objects. */
static void run(int handler_forks, int rounds, void **objects, uint64_t *rng)
{
    struct sigaction sa = {.sa_handler = handler_forks ? fork_in_handler : malloc_in_handler,
                           .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
    handled = 0;
    start_signals();
    unsigned in_fork = 0, in_free = 0, in_malloc = 0;
    for (int round = 0; round < rounds && !failed; round++) {
        size_t slot = rng_next(rng) % OBJECTS;
        size_t size = rng_next(rng) % 16 ? rng_size(rng, 1, 70000)
                                         : rng_size(rng, 1 * MiB, 3 * MiB);
        watchdog_progress();
        int fork_now = !handler_forks || round % 4 == 0;
        if (fork_now)
            in_fork += fork_once();
        if (handler_forks) {
            received = 0;
            free(objects[slot]);
            in_free += received;
            received = 0;
            objects[slot] = malloc(size);
            in_malloc += received;
            CHECK(objects[slot]);
        }
    }
    CHECK(timer_delete(timer) == 0);
    const char *mode = handler_forks ? "fork" : "malloc";
    CHECK_MSG(!failed, "%s in the signal handler failed", mode);
    CHECK_MSG(handled, "%s: no signal was handled", mode);
    printf("%s in the handler: signals during fork %u, free %u, malloc %u\n", mode, in_fork,
           in_free, in_malloc);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 2000;
    const char *only = argc > 2 ? argv[2] : "";
    CHECK_MSG(rounds > 0 && (!*only || !strcmp(only, "fork") || !strcmp(only, "malloc")),
              "usage: fork_signal [rounds [fork|malloc]]");
    deadlock_watchdog(120);
    static void *objects[OBJECTS];
    uint64_t rng = 1;
    /* Every category is in use before the first signal. */
    for (int i = 0; i < OBJECTS; i++)
        CHECK(objects[i] = malloc(edge_sizes[(size_t)i % n_edge_sizes]));
    if (strcmp(only, "malloc"))
        run(1, rounds, objects, &rng);
    if (strcmp(only, "fork"))
        run(0, rounds, objects, &rng);
    for (int i = 0; i < OBJECTS; i++)
        free(objects[i]);
    return 0;
}
