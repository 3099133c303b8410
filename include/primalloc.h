/* SPDX-License-Identifier: MIT */
/* primalloc: a SuperMalloc-style malloc for 64-bit Linux.
 *
 * The library exports the standard names (malloc, free, ... and the C++
 * operators) so that it replaces the system allocator when preloaded or
 * linked.  The pm_-prefixed names below are the same allocator under names
 * of its own, for programs that want primalloc beside the system malloc
 * (for instance to run it under a sanitizer that owns malloc itself). */
#ifndef PRIMALLOC_H
#define PRIMALLOC_H

#include <stddef.h>

/* The version of this header; the build takes its version from here.  A
 * new major version breaks the ABI, and the shared library's soname
 * follows it. */
#define PRIMALLOC_VERSION_MAJOR 0
#define PRIMALLOC_VERSION_MINOR 1
#define PRIMALLOC_VERSION_PATCH 0
#define PRIMALLOC_STRINGIFY_(x) #x
#define PRIMALLOC_STRINGIFY(x) PRIMALLOC_STRINGIFY_(x)
#define PRIMALLOC_VERSION                                                                \
    PRIMALLOC_STRINGIFY(PRIMALLOC_VERSION_MAJOR)                                         \
    "." PRIMALLOC_STRINGIFY(PRIMALLOC_VERSION_MINOR) "." PRIMALLOC_STRINGIFY(PRIMALLOC_VERSION_PATCH)

/* What the library exports, whatever visibility it is built with. */
#define PM_API __attribute__((visibility("default")))

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the library that runs, "MAJOR.MINOR.PATCH": it may be
 * newer than the header a program was built with. */
const char *pm_version(void);

void *pm_malloc(size_t size);
void pm_free(void *ptr);
void *pm_calloc(size_t n, size_t size);
void *pm_realloc(void *ptr, size_t size);
void *pm_reallocarray(void *ptr, size_t n, size_t size);
int pm_posix_memalign(void **out, size_t alignment, size_t size);
void *pm_aligned_alloc(size_t alignment, size_t size);
void *pm_memalign(size_t alignment, size_t size);
void *pm_valloc(size_t size);
void *pm_pvalloc(size_t size);
size_t pm_malloc_usable_size(const void *ptr);
void pm_free_sized(void *ptr, size_t size);
void pm_free_aligned_sized(void *ptr, size_t alignment, size_t size);

/* Returns every cached free object to the shared structures and gives
 * empty memory back to the kernel.  Returns 1 if memory was released,
 * else 0. */
int pm_trim(void);

/* Counters for tests and tools. */
struct pm_stats {
    size_t chunks;        /* 2 MiB chunks taken for small/medium/large bins */
    size_t folios_in_use; /* folios holding at least one object or cached */
    size_t huge_bytes;    /* bytes of huge objects handed out */
};
void pm_get_stats(struct pm_stats *out);

/* The process totals the statistics report prints, as numbers for a
 * service to export: taken without allocating, exact while no other
 * thread allocates or frees (primalloc(3) defines each). */
struct pm_process_stats {
    size_t allocated;   /* bytes of objects in use (their size classes') */
    size_t active;      /* bytes of folios holding objects, and huge objects */
    size_t dirty;       /* bytes of empty folios and free runs that may be committed */
    size_t committed;   /* active + dirty */
    size_t metadata;    /* bytes of primalloc's own bookkeeping */
    size_t mapped;      /* address space of chunks */
    size_t peak_active; /* high-water mark of active */
    size_t peak_mapped; /* high-water mark of mapped */
    size_t huge_objects;
    size_t threads;     /* threads using their caches */
};
void pm_get_process_stats(struct pm_process_stats *out);

/* Writes the sampled heap profile (PRIMALLOC_PROF=1 in the environment
 * turns it on) to path, in the gperftools heap-profile text format that
 * google-pprof and jeprof read, and as folded stacks for flame graphs to
 * path.folded; with a NULL path, to the next PREFIX.PID.SEQ.heap and
 * .folded of PRIMALLOC_PROF_FILE.  Returns 0, or -1 with errno set if the
 * profile is off or a file could not be written. */
int pm_profile_dump(const char *path);

/* pm_stats_print's formats: a table for people, or one JSON object. */
#define PM_STATS_TABLE 0
#define PM_STATS_JSON 1

/* Writes the allocator's statistics (primalloc(3) lists them) through
 * write_fn(opaque, buf, len), a piece at a time, or to stderr when
 * write_fn is NULL.  Nothing is allocated, and no lock of the
 * allocator's is held while write_fn runs, so it may allocate.  Returns
 * 0, or -1 with errno EINVAL for an unknown format. */
int pm_stats_print(void (*write_fn)(void *opaque, const char *buf, size_t len), void *opaque,
                   int format);

#ifdef __cplusplus
}
#endif

#endif
