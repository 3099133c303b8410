/* SPDX-License-Identifier: MIT */
/* The C library's optional parts (libc.h). */
#include "libc.h"
#ifdef __GLIBC__
#include <execinfo.h>
#endif

extern void _IO_list_lock(void) __attribute__((weak));
extern void _IO_list_unlock(void) __attribute__((weak));
extern void _IO_list_resetlock(void) __attribute__((weak));

void pm_libc_files_lock(void)
{
    if (_IO_list_lock)
        _IO_list_lock();
}

void pm_libc_files_unlock(void)
{
    if (_IO_list_unlock)
        _IO_list_unlock();
}

void pm_libc_files_reset(void)
{
    if (_IO_list_resetlock)
        _IO_list_resetlock();
}

int pm_libc_backtrace(void **frames, int max)
{
#ifdef __GLIBC__
    return backtrace(frames, max);
#else
    (void)frames;
    (void)max;
    return 0;
#endif
}
