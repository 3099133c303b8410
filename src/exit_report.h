/* SPDX-License-Identifier: MIT */
/* The report at exit that the environment asks for (README, primalloc(7)):
 *   PRIMALLOC_STATS=table|json   the report's format, to stderr
 *   PRIMALLOC_STATS_FILE=path    to this file instead (JSON unless
 *                                PRIMALLOC_STATS says table); %p in the
 *                                path stands for the process id
 * It is written when the process exits through exit() or a return from
 * main, after the program's own exit handlers.  The variables are read
 * once, at start.  Programs often close stderr in their exit handlers
 * (coreutils do), so the report keeps a descriptor of its own on stderr's
 * file, and writes nothing if both are gone. */
#ifndef PM_EXIT_REPORT_H
#define PM_EXIT_REPORT_H

/* Reads the variables; called once, from the library's constructor. */
void pm_exit_report_init(void);

#endif
