/* SPDX-License-Identifier: MIT */
/* The report of a fault inside primalloc's chunks.  Once watching, a
 * SIGSEGV at an address the chunk table gives to a zero-size object's
 * chunk (zero.h) or to a bin's chunk (in the pages a chunk has not mapped:
 * what a sparse bin has not carved yet, what lies before its first folio
 * or past its last) writes one line, "primalloc: access(<address>): read
 * of a zero-size object" or "write where no object is: an overflow,
 * underflow or stray pointer" (read or write where arch.h tells which,
 * else "access"), and aborts.  Any other fault is left to the
 * handlers after this one and to the program's (os.h); guard pages' faults
 * are the guard's, whose handler runs first.
 *
 * Promises: pm_access_fault_watch installs the report once, and costs a
 * load after that; it never allocates. */
#ifndef PM_ACCESS_FAULT_H
#define PM_ACCESS_FAULT_H

void pm_access_fault_watch(void);

#endif
