/* SPDX-License-Identifier: MIT */
#include "access_fault.h"
#include <stdint.h>
#include "chunk_table.h"
#include "os.h"

/* What a report calls the access, by what arch.h tells of it: unknown
 * (-1), a read (0) or a write (1). */
static const char *const zero_size[] = {"access to a zero-size object", "read of a zero-size object",
                                        "write to a zero-size object"};
static const char *const no_object[] = {"access where no object is: an overflow, underflow or stray pointer",
                                        "read where no object is: an overflow, underflow or stray pointer",
                                        "write where no object is: an overflow, underflow or stray pointer"};

/* In the signal handler: the entry is read as it stands, without a lock.
 * A bin's chunk faults only where it has not mapped pages, which no
 * object holds. */
static void on_fault(void *addr, uintptr_t pc, int wrote)
{
    (void)pc;
    struct pm_chunk_entry *e = pm_chunk_entry_of((uintptr_t)addr);
    uint32_t tag = e ? pm_chunk_read(e).tag : 0;
    unsigned kind = wrote < 0 ? 0 : wrote ? 2 : 1;
    if (tag == PM_TAG_ZERO)
        pm_fatal("access", addr, zero_size[kind]);
    if (tag && pm_bin_of_tag(tag) < PM_NBINS)
        pm_fatal("access", addr, no_object[kind]);
}

void pm_access_fault_watch(void)
{
    static int watching;
    if (!__atomic_load_n(&watching, __ATOMIC_ACQUIRE) && !__atomic_exchange_n(&watching, 1, __ATOMIC_ACQ_REL))
        pm_os_on_fault(PM_FAULT_CHUNKS, on_fault);
}
