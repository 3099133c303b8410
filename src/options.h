/* SPDX-License-Identifier: MIT */
/* Every setting primalloc reads from the environment, in one table
 * (options.c): its variable, kind, default, range and what it trades.
 *
 * Promises: the variables are read together, once, at the first call of
 * pm_option or pm_option_text (the library's constructor makes one), and
 * never with an allocation.  An empty variable counts as unset.  A value
 * the table does not allow gives one line on stderr naming the variable
 * and the value, and the default stays in force; nothing aborts.  With
 * PRIMALLOC_VERBOSE=1 every setting in force is listed on stderr once
 * read.  The stats report shows the settings in force (pm_option_shown). */
#ifndef PM_OPTIONS_H
#define PM_OPTIONS_H

#include <stdint.h>

enum pm_option {
    PM_OPT_STATS,         /* the report at exit: enum pm_exit_format */
    PM_OPT_STATS_FILE,    /* text: the report's path, %p the process id */
    PM_OPT_GUARD_RATE,    /* one allocation in N on guard pages; 0 none */
    PM_OPT_PURGE_THREAD,  /* 0 or 1: the background thread */
    PM_OPT_HUGE_PAGES,    /* where transparent huge pages are asked for: enum pm_huge_pages */
    PM_OPT_PROF,          /* 0 or 1: the heap profile */
    PM_OPT_PROF_RATE,     /* mean bytes between samples */
    PM_OPT_PROF_FILE,     /* text: the dumps' path prefix */
    PM_OPT_PROF_SIGNAL,   /* the signal that dumps the profile; 0 none */
    PM_OPT_LEAKS,         /* 0 or 1: the leak report at exit */
    PM_OPT_VERBOSE,       /* 0 or 1: list the settings in force at start */
    PM_NOPTIONS
};

/* PM_OPT_STATS's values: none, unless PM_OPT_STATS_FILE names a file. */
enum pm_exit_format { PM_EXIT_NONE, PM_EXIT_TABLE, PM_EXIT_JSON };

/* PM_OPT_HUGE_PAGES's values. */
enum pm_huge_pages { PM_HUGE_NEVER, PM_HUGE_DENSE, PM_HUGE_ALWAYS };

/* The room of a text setting, its NUL included. */
#define PM_OPTION_TEXT_BYTES 4096

/* The value in force of a setting that is a number (a flag, a count, a
 * choice's index, a signal). */
uint64_t pm_option(enum pm_option o);

/* The value in force of a text setting: never NULL, "" when unset and
 * without a default. */
const char *pm_option_text(enum pm_option o);

/* For reports: the variable's name, and the value in force as text
 * (numbers in decimal, into digits when they need it); *quoted says
 * whether it is text rather than a number. */
const char *pm_option_name(enum pm_option o);
const char *pm_option_shown(enum pm_option o, char digits[24], int *quoted);

/* Whether memory gets transparent huge pages, given whether its owner
 * judges it dense (a bin whose live objects fill several chunks, a huge
 * object after one the program filled): PRIMALLOC_HUGE_PAGES decides. */
static inline int pm_huge_pages_for(int dense)
{
    uint64_t where = pm_option(PM_OPT_HUGE_PAGES);
    return where == PM_HUGE_ALWAYS || (where == PM_HUGE_DENSE && dense);
}

#endif
