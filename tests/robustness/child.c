/* SPDX-License-Identifier: MIT */
/* Implementation of child.h. */
#define _GNU_SOURCE
#include "child.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"

static int announce_fd = -1;

/* A raw system call, never a cancellation point: a case may run with a
 * cancellation pending. */
void child_announce(const void *p)
{
    uintptr_t v = (uintptr_t)p;
    CHECK(syscall(SYS_write, announce_fd, &v, sizeof v) == sizeof v);
}

/* qemu-user adds a line of its own when the program it runs dies of a
 * signal; it is not the program's output. */
static void drop_emulator_line(char *err)
{
    const char *line = "qemu: uncaught target signal";
    char *at = strstr(err, line);
    if (at && (at == err || at[-1] == '\n'))
        *at = 0;
}

void child_run(void (*fn)(const void *arg), const void *arg, unsigned seconds,
               struct child_outcome *out)
{
    int err[2], ann[2];
    CHECK(pipe(err) == 0 && pipe(ann) == 0);
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core);
        dup2(err[1], 2);
        close(err[0]);
        close(err[1]);
        close(ann[0]);
        announce_fd = ann[1];
        alarm(seconds);
        fn(arg);
        _exit(0);
    }
    close(err[1]);
    close(ann[1]);
    read_all(err[0], out->err, sizeof out->err);
    drop_emulator_line(out->err);
    out->announced = read(ann[0], &out->ptr, sizeof out->ptr) == sizeof out->ptr;
    close(err[0]);
    close(ann[0]);
    CHECK(waitpid(pid, &out->status, 0) == pid);
}

const char *child_status_text(int status)
{
    static char text[64];
    if (WIFEXITED(status))
        snprintf(text, sizeof text, "exit status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(text, sizeof text, "signal %s", strsignal(WTERMSIG(status)));
    else
        snprintf(text, sizeof text, "wait status %#x", status);
    return text;
}
