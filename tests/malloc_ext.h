/* SPDX-License-Identifier: MIT */
/* <malloc.h>, with the glibc extensions primalloc exports on every C
 * library declared where the C library's header lacks them (musl; glibc
 * before 2.33 for mallinfo2). */
#ifndef TEST_MALLOC_EXT_H
#define TEST_MALLOC_EXT_H

#include <malloc.h>
#include <stdio.h>
#include "../src/libc.h"

#ifdef PM_LIBC_NEEDS_MALLINFO2
struct mallinfo2 mallinfo2(void);
#endif
#ifndef __GLIBC__
struct mallinfo mallinfo(void);
int malloc_trim(size_t pad);
int malloc_info(int options, FILE *fp);
void malloc_stats(void);
void *pvalloc(size_t size);
#endif

#endif
