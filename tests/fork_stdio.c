/* SPDX-License-Identifier: MIT */
/* fork() while threads read a FILE with getline, which reallocs its line
 * while holding that FILE's lock, and another thread runs fflush(NULL),
 * which holds glibc's list of FILEs while it waits for each FILE's lock
 * (glibc bug 19431; this is its malloc/tst-malloc-fork-deadlock.c).  fork
 * must take the allocator's locks after that list's lock, as glibc's own
 * malloc does, or the forking thread, a reader and the flusher wait on one
 * another.  The line is long enough that getline's last realloc makes a
 * huge object, which takes a lock on every call, so that the old order
 * deadlocks within the first few forks.  A deadlock ends the test through
 * the watchdog.
 * Usage: fork_stdio [forks per forking thread] */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"

#define FORKERS 2
#define READERS 4
#define LINE (1088 * KiB)

static atomic_int stop;
static int forks_each;

static void *forker(void *unused)
{
    (void)unused;
    for (int i = 0; i < forks_each; i++) {
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0)
            _exit(17);
        int status;
        CHECK(waitpid(pid, &status, 0) == pid);
        CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 17, "child status %#x", status);
        watchdog_progress();
    }
    return NULL;
}

static void *reader(void *arg)
{
    FILE *f = arg;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        rewind(f);
        char *line = NULL;
        size_t cap = 0;
        CHECK_EQ(getline(&line, &cap, f), LINE + 1);
        free(line);
        /* Without a pause the reader takes its FILE's lock back before the
         * waiting flusher wakes, and the flusher keeps the list's lock
         * from the forkers: glibc's own malloc then took tens of seconds
         * for a hundred forks. */
        usleep(200);
    }
    return NULL;
}

static void *flusher(void *unused)
{
    (void)unused;
    while (!atomic_load_explicit(&stop, memory_order_relaxed))
        CHECK(fflush(NULL) == 0);
    return NULL;
}

/* READERS streams on one file of a single LINE-byte line; the file is
 * unlinked once they are open. */
static void open_streams(FILE **streams)
{
    char path[] = "/tmp/fork_stdio.XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    char *text = malloc(LINE + 1);
    CHECK(text);
    memset(text, 'x', LINE);
    text[LINE] = '\n';
    CHECK(write(fd, text, LINE + 1) == LINE + 1);
    free(text);
    CHECK(close(fd) == 0);
    for (int i = 0; i < READERS; i++)
        CHECK((streams[i] = fopen(path, "r")) != NULL);
    CHECK(unlink(path) == 0);
}

int main(int argc, char **argv)
{
    forks_each = argc > 1 ? atoi(argv[1]) : 40;
    CHECK(forks_each > 0);
    deadlock_watchdog(120);
    FILE *streams[READERS];
    open_streams(streams);

    pthread_t forkers[FORKERS], readers[READERS], flush;
    for (int i = 0; i < READERS; i++)
        CHECK(pthread_create(&readers[i], NULL, reader, streams[i]) == 0);
    CHECK(pthread_create(&flush, NULL, flusher, NULL) == 0);
    for (int i = 0; i < FORKERS; i++)
        CHECK(pthread_create(&forkers[i], NULL, forker, NULL) == 0);
    for (int i = 0; i < FORKERS; i++)
        CHECK(pthread_join(forkers[i], NULL) == 0);
    atomic_store(&stop, 1);
    CHECK(pthread_join(flush, NULL) == 0);
    for (int i = 0; i < READERS; i++) {
        CHECK(pthread_join(readers[i], NULL) == 0);
        CHECK(fclose(streams[i]) == 0);
    }
    return 0;
}
