/* SPDX-License-Identifier: MIT */
/* Where a code address lies, in the terms a user's tools take: the file
 * mapped there and the address within that file, so that `addr2line -e
 * FILE ADDRESS` names the line whatever address the loader chose
 * (programs are position-independent by default).
 *
 * Promises: read from /proc/self/maps with raw system calls: no lock, no
 * allocation, safe in a signal handler, on fixed buffers of its stack
 * (proc_maps.h). */
#ifndef PM_CODE_MAP_H
#define PM_CODE_MAP_H

#include <stddef.h>
#include <stdint.h>

/* The file whose mapping holds addr, its path copied into name (cut to
 * room - 1 bytes), and addr as an address of that file: 1.  0 when no
 * file's mapping holds it, or the maps cannot be read. */
int pm_code_place(uintptr_t addr, char *name, size_t room, uintptr_t *in_file);

/* "FILE+0xADDRESS (0xADDR)", or "0xADDR" when no file holds it, appended
 * at o as pm_text_str does; o must leave room for 200 bytes (a longer
 * path is cut). */
char *pm_code_put(char *o, uintptr_t addr);

#endif
