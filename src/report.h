/* SPDX-License-Identifier: MIT */
/* Reports of the statistics (stats.h): a table for people, JSON for
 * programs and glibc's malloc_info XML.
 *
 * Promises: a report allocates nothing and holds no lock of the
 * allocator's while it hands text to its sink, so a sink may allocate.
 * Text goes to the sink in pieces of at most PM_REPORT_PIECE bytes. */
#ifndef PM_REPORT_H
#define PM_REPORT_H

#include <stddef.h>
#include <stdint.h>

#define PM_REPORT_PIECE 1024

enum pm_report_format {
    PM_REPORT_TABLE, /* PM_STATS_TABLE */
    PM_REPORT_JSON,  /* PM_STATS_JSON */
    PM_REPORT_XML,   /* malloc_info's */
};

typedef void pm_report_sink(void *opaque, const char *buf, size_t len);

/* Takes a snapshot and writes it in format; -1 for an unknown format. */
int pm_report(pm_report_sink *sink, void *opaque, int format);

/* A sink whose opaque points to a file descriptor. */
void pm_report_to_fd(void *fd, const char *buf, size_t len);

#endif
