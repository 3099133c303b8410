/* SPDX-License-Identifier: MIT */
/* Self-describing test objects for the multithreaded tests: each starts
 * with its size and pattern seed, so whichever thread (or process) ends up
 * with it can check every byte before freeing it. */
#ifndef PM_TEST_OBJECTS_H
#define PM_TEST_OBJECTS_H

#include <stddef.h>
#include <stdint.h>

/* A request size drawn from all categories: mostly small, some medium,
 * a few large and rarely huge, like a real program's mix. */
size_t obj_mixed_size(uint64_t *rng);

/* Allocates an object of at least 16 bytes through a randomly chosen entry
 * point (malloc, calloc, aligned_alloc, posix_memalign, memalign) and
 * fills it. */
void *obj_new(uint64_t *rng, size_t size);

/* Checks every byte; fails the test on damage. */
void obj_check(void *p);

/* Checks, reallocs to a new size, checks the kept part, refills. */
void *obj_resize(void *p, uint64_t *rng, size_t size);

/* Checks, then frees through free, free_sized or free_aligned_sized. */
void obj_free(void *p);

#endif
