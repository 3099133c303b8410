/* SPDX-License-Identifier: MIT */
#include "access_fault.h"
#include <stdint.h>
#include "chunk_table.h"
#include "os.h"

/* In the signal handler: the entry is read as it stands, without a lock.
 * A bin's chunk faults only where it has not mapped pages, which no
 * object holds. */
static void on_fault(void *addr, uintptr_t pc, int wrote)
{
    (void)pc;
    struct pm_chunk_entry *e = pm_chunk_entry_of((uintptr_t)addr);
    uint32_t tag = e ? pm_chunk_read(e).tag : 0;
    if (tag == PM_TAG_ZERO)
        pm_fatal("access", addr, wrote > 0 ? "write to a zero-size object" : "read of a zero-size object");
    if (tag && pm_bin_of_tag(tag) < PM_NBINS)
        pm_fatal("access", addr,
                 wrote > 0 ? "write where no object is: an overflow, underflow or stray pointer"
                           : "read where no object is: an overflow, underflow or stray pointer");
}

void pm_access_fault_watch(void)
{
    static int watching;
    if (!__atomic_load_n(&watching, __ATOMIC_ACQUIRE) && !__atomic_exchange_n(&watching, 1, __ATOMIC_ACQ_REL))
        pm_os_on_fault(PM_FAULT_CHUNKS, on_fault);
}
