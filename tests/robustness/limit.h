/* SPDX-License-Identifier: MIT */
/* Address-space limits relative to what the process already has mapped:
 * only a limit above the current VmSize means anything. */
#ifndef PM_TRUST_LIMIT_H
#define PM_TRUST_LIMIT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* VmSize from /proc/self/status, in bytes (read without allocating). */
size_t vm_size(void);

/* Sets the soft RLIMIT_AS to the current VmSize plus headroom. */
void limit_address_space(size_t headroom);

/* Lifts the soft limit back to the hard one. */
void unlimit_address_space(void);

#ifdef __cplusplus
}
#endif

#endif
