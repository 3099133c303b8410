/* SPDX-License-Identifier: MIT */
/* Runs one test case in a forked child, so that a case may abort, run out
 * of memory or hang without taking the test program with it. */
#ifndef PM_TRUST_CHILD_H
#define PM_TRUST_CHILD_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct child_outcome {
    int status;      /* as waitpid reports it */
    char err[4096];  /* everything the child wrote to stderr */
    uintptr_t ptr;   /* the pointer the child announced */
    int announced;   /* whether it announced one */
};

/* Forks, runs fn(arg) in the child with stderr captured and core dumps off,
 * and _exit(0)s when fn returns.  After `seconds` the child gets SIGALRM,
 * so a deadlock shows up as a signal instead of a stuck test. */
void child_run(void (*fn)(const void *arg), const void *arg, unsigned seconds,
               struct child_outcome *out);

/* Called in the child: tells the parent which pointer the case is about,
 * since only the child knows the address it got. */
void child_announce(const void *p);

/* A readable description of a wait status, for failure messages. */
const char *child_status_text(int status);

#ifdef __cplusplus
}
#endif

#endif
