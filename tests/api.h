/* SPDX-License-Identifier: MIT */
/* The allocator entry points a test calls.  Built plainly, API(malloc) is
 * malloc, the standard name primalloc replaces; built with TEST_PM_API it is
 * pm_malloc, so the same test can run against a variant that exports only
 * the prefixed names (beside a sanitizer's own malloc). */
#ifndef PM_TEST_API_H
#define PM_TEST_API_H

#include "malloc_ext.h"
#include <stdlib.h>
#include "primalloc.h"

#ifdef TEST_PM_API
#define API(name) pm_##name
#else
#define API(name) name
/* C23 names that glibc before 2.41 does not declare. */
void free_sized(void *ptr, size_t size);
void free_aligned_sized(void *ptr, size_t alignment, size_t size);
#endif

#endif
