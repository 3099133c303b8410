/* SPDX-License-Identifier: MIT */
/* What the ELF headers of the loaded objects tell, read where the loader
 * mapped them: the functions among their dynamic symbols, the vDSO's
 * functions by name, and where primalloc's own code lies.
 *
 * Promises: nothing here allocates, makes a system call or takes a lock
 * of primalloc's.  pm_elf_own_code and pm_elf_vdso_function take no lock
 * at all: the auxiliary vector and the linker's __ehdr_start find their
 * headers.  pm_elf_each_symbol walks the loader's list of objects under
 * the loader's lock (dl_iterate_phdr), which dlopen holds while it
 * allocates: its caller holds no lock an allocation may wait for. */
#ifndef PM_ELF_SYMBOLS_H
#define PM_ELF_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

/* Where primalloc's own code lies when it is a shared object of its own;
 * an empty range (0, 0) when it is linked into the program. */
void pm_elf_own_code(uintptr_t *lo, uintptr_t *hi);

/* Calls fn(ctx, start, size, name) for every function among the dynamic
 * symbols of every loaded object, as dladdr would search them. */
void pm_elf_each_symbol(void (*fn)(void *ctx, uintptr_t start, size_t size, const char *name), void *ctx);

/* The address of the vDSO's function of that name, or 0 when the process
 * has no vDSO or the vDSO no such function. */
uintptr_t pm_elf_vdso_function(const char *name);

#endif
