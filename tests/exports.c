/* SPDX-License-Identifier: MIT */
/* Run with the library under test in LD_PRELOAD: every standard allocation
 * name, C and C++, and every pm_ name must resolve into that library, or
 * some calls would silently reach glibc or libstdc++ instead.
 * Usage: exports <substring of the library's file name> */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include "check.h"

static const char *const names[] = {
    "malloc", "free", "calloc", "realloc", "reallocarray", "posix_memalign",
    "aligned_alloc", "memalign", "valloc", "pvalloc", "malloc_usable_size",
    "free_sized", "free_aligned_sized", "malloc_stats", "malloc_info", "mallinfo", "mallinfo2",
    "cfree", "__libc_malloc", "__libc_free", "__libc_calloc", "__libc_realloc",
    "__libc_memalign", "__libc_valloc", "__libc_pvalloc", "__posix_memalign",
    "pm_malloc", "pm_free", "pm_calloc", "pm_realloc", "pm_reallocarray",
    "pm_posix_memalign", "pm_aligned_alloc", "pm_memalign", "pm_valloc",
    "pm_pvalloc", "pm_malloc_usable_size", "pm_free_sized",
    "pm_free_aligned_sized", "pm_trim", "pm_get_stats", "pm_stats_print", "pm_version", "pm_get_process_stats",
    /* operator new and new[]: plain, nothrow, aligned, aligned nothrow */
    "_Znwm", "_Znam", "_ZnwmRKSt9nothrow_t", "_ZnamRKSt9nothrow_t",
    "_ZnwmSt11align_val_t", "_ZnamSt11align_val_t",
    "_ZnwmSt11align_val_tRKSt9nothrow_t", "_ZnamSt11align_val_tRKSt9nothrow_t",
    /* operator delete and delete[]: plain, nothrow, sized, aligned,
     * aligned nothrow, sized aligned */
    "_ZdlPv", "_ZdaPv", "_ZdlPvRKSt9nothrow_t", "_ZdaPvRKSt9nothrow_t",
    "_ZdlPvm", "_ZdaPvm", "_ZdlPvSt11align_val_t", "_ZdaPvSt11align_val_t",
    "_ZdlPvSt11align_val_tRKSt9nothrow_t", "_ZdaPvSt11align_val_tRKSt9nothrow_t",
    "_ZdlPvmSt11align_val_t", "_ZdaPvmSt11align_val_t",
};

int main(int argc, char **argv)
{
    CHECK_MSG(argc == 2, "usage: exports <library name>");
    int wrong = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *sym = dlsym(RTLD_DEFAULT, names[i]);
        Dl_info info;
        if (!sym || !dladdr(sym, &info) || !info.dli_fname) {
            fprintf(stderr, "%s: not found\n", names[i]);
            wrong++;
        } else if (!strstr(info.dli_fname, argv[1])) {
            fprintf(stderr, "%s: resolves into %s\n", names[i], info.dli_fname);
            wrong++;
        }
    }
    CHECK_MSG(wrong == 0, "%d names do not resolve into %s", wrong, argv[1]);
    return 0;
}
