/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include "elf_symbols.h"
#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/auxv.h>

/* Where an object whose headers are mapped at eh was loaded: the address
 * its symbols' values are relative to. */
static uintptr_t load_base(const ElfW(Ehdr) *eh, const ElfW(Phdr) *ph)
{
    uintptr_t base = (uintptr_t)eh;
    for (unsigned i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_LOAD && ph[i].p_offset == 0)
            base = (uintptr_t)eh - ph[i].p_vaddr;
    return base;
}

/* The program's headers are those of the object primalloc is part of when
 * the executable holds it. */
void pm_elf_own_code(uintptr_t *lo, uintptr_t *hi)
{
    extern const ElfW(Ehdr) __ehdr_start __attribute__((visibility("hidden")));
    const ElfW(Ehdr) *eh = &__ehdr_start;
    const ElfW(Phdr) *ph = (const ElfW(Phdr) *)((const char *)eh + eh->e_phoff);
    *lo = *hi = 0;
    if ((uintptr_t)ph == getauxval(AT_PHDR))
        return;
    uintptr_t base = load_base(eh, ph);
    for (unsigned i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X)) {
            *lo = base + ph[i].p_vaddr;
            *hi = *lo + ph[i].p_memsz;
        }
}

/* The loader usually relocates the addresses of the dynamic section in
 * place; where it does not (the vDSO), they are offsets. */
static const void *dyn_address(const struct dl_phdr_info *info, ElfW(Addr) ptr)
{
    return (const void *)(ptr < info->dlpi_addr ? ptr + info->dlpi_addr : ptr);
}

/* How many dynamic symbols an object has: DT_HASH says; with only
 * DT_GNU_HASH, one past the last symbol of the longest-reaching chain. */
static uint32_t symbol_count(const uint32_t *hash, const uint32_t *gnu)
{
    if (hash)
        return hash[1];
    if (!gnu)
        return 0;
    uint32_t nbuckets = gnu[0], first = gnu[1];
    const uint32_t *buckets = gnu + 4 + gnu[2] * (sizeof(ElfW(Addr)) / 4), *chain = buckets + nbuckets;
    uint32_t last = 0;
    for (uint32_t i = 0; i < nbuckets; i++)
        if (buckets[i] > last)
            last = buckets[i];
    if (last < first)
        return first;
    while (!(chain[last - first] & 1))
        last++;
    return last + 1;
}

struct symbol_walk {
    void (*fn)(void *ctx, uintptr_t start, size_t size, const char *name);
    void *ctx;
};

/* dl_iterate_phdr's callback: hands each function among the object's
 * dynamic symbols to the walk. */
static int object_symbols(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    const struct symbol_walk *w = data;
    const ElfW(Dyn) *dyn = 0;
    for (unsigned i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    if (!dyn)
        return 0;
    const ElfW(Sym) *syms = 0;
    const char *names = 0;
    const uint32_t *hash = 0, *gnu = 0;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        if (dyn->d_tag == DT_SYMTAB)
            syms = dyn_address(info, dyn->d_un.d_ptr);
        else if (dyn->d_tag == DT_STRTAB)
            names = dyn_address(info, dyn->d_un.d_ptr);
        else if (dyn->d_tag == DT_HASH)
            hash = dyn_address(info, dyn->d_un.d_ptr);
        else if (dyn->d_tag == DT_GNU_HASH)
            gnu = dyn_address(info, dyn->d_un.d_ptr);
    }
    uint32_t n = syms && names ? symbol_count(hash, gnu) : 0;
    for (uint32_t i = 0; i < n; i++)
        if (syms[i].st_shndx != SHN_UNDEF && ELF64_ST_TYPE(syms[i].st_info) == STT_FUNC && syms[i].st_size)
            w->fn(w->ctx, info->dlpi_addr + syms[i].st_value, syms[i].st_size, names + syms[i].st_name);
    return 0;
}

void pm_elf_each_symbol(void (*fn)(void *ctx, uintptr_t start, size_t size, const char *name), void *ctx)
{
    struct symbol_walk w = {fn, ctx};
    dl_iterate_phdr(object_symbols, &w);
}

struct wanted {
    const char *name;
    uintptr_t at;
};

static void match_symbol(void *ctx, uintptr_t start, size_t size, const char *name)
{
    (void)size;
    struct wanted *w = ctx;
    if (!strcmp(name, w->name))
        w->at = start;
}

/* The vDSO's headers are found in the auxiliary vector, not through
 * dl_iterate_phdr, which takes the loader's lock: dlopen holds that lock
 * while it allocates. */
uintptr_t pm_elf_vdso_function(const char *name)
{
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)getauxval(AT_SYSINFO_EHDR);
    if (!eh)
        return 0;
    const ElfW(Phdr) *ph = (const ElfW(Phdr) *)((const char *)eh + eh->e_phoff);
    struct dl_phdr_info info = {.dlpi_addr = load_base(eh, ph), .dlpi_phdr = ph, .dlpi_phnum = eh->e_phnum};
    struct wanted w = {name, 0};
    struct symbol_walk walk = {match_symbol, &w};
    object_symbols(&info, sizeof info, &walk);
    return w.at;
}
