/* SPDX-License-Identifier: MIT */
/* Huge objects: runs of as many chunks as they need, reused through the
 * chunk pool and kept committed after free until trimmed, resized in place
 * or moved by their pages, misuse detected. */
#define _GNU_SOURCE
#include <stdint.h>
#include <sys/mman.h>
#include "chunk_table.h"
#include "options.h"
#include "primalloc.h"
#include "unit.h"


static int all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i += 4096)
        if (p[i] || p[n - 1])
            return 0;
    return 1;
}

static size_t resident_pages(void *p, size_t len)
{
    static unsigned char vec[4096];
    CHECK(len / PM_PAGE <= sizeof vec);
    CHECK(mincore(p, len, vec) == 0);
    size_t n = 0;
    for (size_t i = 0; i < len / PM_PAGE; i++)
        n += vec[i] & 1;
    return n;
}

/* The page-size advice of the mapping holding p: 'h' for huge pages, 'n'
 * for none, '-' for neither. */
static char advice(const void *p)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    CHECK(f);
    char line[512];
    int inside = 0;
    char found = '-';
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
            inside = lo <= (uintptr_t)p && (uintptr_t)p < hi;
        else if (inside && strncmp(line, "VmFlags:", 8) == 0)
            found = strstr(line, " hg") ? 'h' : strstr(line, " nh") ? 'n' : '-';
    }
    fclose(f);
    return found;
}

/* The advice memory judged dense (or not) gets under the
 * PRIMALLOC_HUGE_PAGES the test runs with (ctest runs it with each). */
static char expected(int dense)
{
    switch (pm_option(PM_OPT_HUGE_PAGES)) {
    case PM_HUGE_NEVER:
        return 'n';
    case PM_HUGE_ALWAYS:
        return 'h';
    default:
        return dense ? 'h' : 'n';
    }
}

static void free_twice(void *p)
{
    pm_free(p);
    pm_free(p);
}

static void free_inside(void *p)
{
    pm_free((char *)p + PM_CHUNK);
}

int main(void)
{
    /* A bin's first chunk, taken before the pool has a free one: not
     * dense, so huge only under `always`. */
    void *first = pm_malloc(3000);
    CHECK(first && advice(first) == expected(0));
    pm_free(first);

    unsigned char *p = pm_malloc(5 * MiB);
    CHECK(p && ((uintptr_t)p & (PM_CHUNK - 1)) == 0);
    struct pm_chunk_entry *e = pm_chunk_entry_of((uintptr_t)p);
    CHECK(e->tag == PM_TAG_HUGE && e->link == 5 * MiB / PM_PAGE);
    /* 5 MiB takes three chunks, not a power of two. */
    CHECK(pm_chunk_entry_of((uintptr_t)p + 2 * PM_CHUNK)->tag == PM_TAG_HUGE_BODY);
    CHECK(pm_chunk_entry_of((uintptr_t)p + 2 * PM_CHUNK)->link == 3);
    CHECK(pm_chunk_entry_of((uintptr_t)p + 3 * PM_CHUNK)->tag != PM_TAG_HUGE_BODY);
    CHECK(pm_malloc_usable_size(p) == 5 * MiB);
    CHECK(all_zero(p, 5 * MiB));
    memset(p, 7, 5 * MiB);
    CHECK(resident_pages(p, 5 * MiB) == 5 * MiB / PM_PAGE);

    /* In place within the run; shrinking gives the tail back from the
     * next 2 MiB boundary on (a huge page is not split). */
    CHECK(pm_realloc(p, 6 * MiB) == p);
    CHECK(p[5 * MiB - 1] == 7 && p[6 * MiB - 1] == 0);
    CHECK(pm_realloc(p, 3 * MiB) == p);
    CHECK(resident_pages(p, 6 * MiB) == 4 * MiB / PM_PAGE);
    CHECK(p[3 * MiB - 1] == 7);
    /* The chunk it no longer needs went back to the pool. */
    CHECK(pm_chunk_entry_of((uintptr_t)p + 2 * PM_CHUNK)->tag == PM_TAG_FREE);

    /* A freed run stays committed for reuse (calloc clears it); trimmed,
     * it goes back to the kernel. */
    pm_free(p);
    CHECK(resident_pages(p, 4 * MiB) == 4 * MiB / PM_PAGE);
    unsigned char *z = pm_calloc(1, 4 * MiB);
    CHECK(z == p && all_zero(z, 4 * MiB));
    pm_free(z);
    CHECK(pm_trim());
    CHECK(pm_chunk_entry_of((uintptr_t)p)->tag == PM_TAG_GONE);
    unsigned char *q = pm_malloc(6 * MiB);
    CHECK(q && all_zero(q, 6 * MiB));

    /* Growing past the run moves the pages, contents kept. */
    memset(q, 3, 6 * MiB);
    unsigned char *blocker = pm_malloc(3 * MiB);
    unsigned char *r = pm_realloc(q, 9 * MiB);
    CHECK(r && r[6 * MiB - 1] == 3 && r[0] == 3 && r[6 * MiB] == 0);
    CHECK(pm_chunk_entry_of((uintptr_t)r + 4 * PM_CHUNK)->link == 5);
    pm_free(blocker);

    /* Below 2 MiB (no huge page), the tail goes back to the kernel's
     * page. */
    unsigned char *s = pm_malloc(1900 * 1024);
    CHECK(s && pm_chunk_entry_of((uintptr_t)s)->tag == PM_TAG_HUGE);
    memset(s, 5, 1900 * 1024);
    CHECK(pm_realloc(s, 1100 * 1024) == s);
    size_t page = pm_os_page(), kept = (1100 * 1024 + page - 1) & ~(page - 1);
    size_t gone = 1900 * 1024 & ~(page - 1);
    CHECK(resident_pages(s, kept) == kept / PM_PAGE);
    CHECK(resident_pages(s + kept, gone - kept) == 0);
    CHECK(all_zero(s + 1100 * 1024, 800 * 1024));
    pm_free(s);

    /* Alignment beyond a chunk. */
    void *a = pm_aligned_alloc(16 * MiB, 3 * MiB);
    CHECK(a && ((uintptr_t)a & (16 * MiB - 1)) == 0);
    pm_free(a);

    /* An object takes huge pages when the huge object allocated before it
     * was filled, small ones when it was written here and there; a resized
     * object follows its own contents.  A bin's first chunk is not dense. */
    unsigned char *filled = pm_malloc(8 * MiB);
    memset(filled, 1, 8 * MiB);
    unsigned char *after_filled = pm_malloc(8 * MiB);
    CHECK(advice(after_filled) == expected(1));
    after_filled[0] = 1;
    unsigned char *after_sparse = pm_malloc(8 * MiB);
    CHECK(advice(after_sparse) == expected(0));
    filled = pm_realloc(filled, 9 * MiB);
    CHECK(filled && advice(filled) == expected(1));
    after_sparse = pm_realloc(after_sparse, 9 * MiB);
    CHECK(after_sparse && advice(after_sparse) == expected(0));
    void *small = pm_malloc(200);
    CHECK(small && advice(small) == expected(0));
    pm_free(small);
    pm_free(filled);
    pm_free(after_filled);
    pm_free(after_sparse);

    CHECK(pm_malloc((size_t)PTRDIFF_MAX + 1) == 0);
    check_fatal(free_twice, r, "double free");
    check_fatal(free_inside, r, "pointer inside an object");
    pm_free(r);
    check_fatal(free_twice, r, "double free");
    printf("huge ok\n");
    return 0;
}
