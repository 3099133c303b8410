/* SPDX-License-Identifier: MIT */
/* The process's memory map as /proc/self/maps lists it: each mapping's
 * bounds, permissions, file offset and path.
 *
 * Promises: read with raw system calls: no lock, no allocation, safe in
 * a signal handler, on fixed buffers of the caller's stack (proc_maps.c's
 * LINE and READ).  A line longer than LINE is cut: only its path can lose
 * its end. */
#ifndef PM_PROC_MAPS_H
#define PM_PROC_MAPS_H

#include <stdint.h>

struct pm_mapping {
    uintptr_t lo, hi;  /* the mapping is [lo, hi) */
    uintptr_t offset;  /* lo's offset in the file mapped */
    const char *perms; /* "rwxp": read, write, execute, private or shared */
    const char *path;  /* the file, a kernel name ("[stack]"), or "" */
};

/* Calls fn for each mapping in address order until fn returns nonzero,
 * and returns that value; 0 when fn saw every mapping, -1 when the map
 * cannot be read. */
int pm_maps_each(int (*fn)(void *ctx, const struct pm_mapping *m), void *ctx);

#endif
