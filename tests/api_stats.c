/* SPDX-License-Identifier: MIT */
/* pm_get_stats and pm_trim: the counters follow huge objects, chunks and
 * folios, and trimming after a large free gives memory back to the kernel
 * (resident memory falls); pm_get_process_stats's totals follow huge
 * objects.  pm_version is the header's. */
#include <string.h>
#include "primalloc.h"
#include "check.h"

static struct pm_stats stats(void)
{
    struct pm_stats s;
    memset(&s, 0xff, sizeof s);
    pm_get_stats(&s);
    return s;
}

static void huge_bytes_follow_huge_objects(void)
{
    const size_t n = 8 * MiB + 5;
    struct pm_stats before = stats();
    void *p = pm_malloc(n);
    CHECK(p != NULL);
    struct pm_stats during = stats();
    CHECK_MSG(during.huge_bytes >= before.huge_bytes + n &&
                  during.huge_bytes <= before.huge_bytes + 2 * n + 2 * MiB,
              "huge_bytes %zu -> %zu for %zu bytes", before.huge_bytes,
              during.huge_bytes, n);
    pm_free(p);
    CHECK_EQ(stats().huge_bytes, before.huge_bytes);
}

/* Small and medium objects, touched, then freed and trimmed. */
static void chunks_folios_and_trim(void)
{
    enum { N = 65536, OBJ = 1000, SMALL = 48, NSMALL = 8 * 1024 * 1024 / SMALL };
    void **big = pm_malloc(N * sizeof *big);
    void **small = pm_malloc(NSMALL * sizeof *small);
    CHECK(big && small);
    struct pm_stats before = stats();
    for (int i = 0; i < N; i++) {
        big[i] = pm_malloc(OBJ);
        CHECK(big[i] != NULL);
        memset(big[i], 1, OBJ);
    }
    for (int i = 0; i < NSMALL; i++) {
        small[i] = pm_malloc(SMALL);
        CHECK(small[i] != NULL);
        memset(small[i], 2, SMALL);
    }
    struct pm_stats full = stats();
    /* 72 MiB of objects cannot fit in fewer than 36 chunks of 2 MiB. */
    CHECK_MSG(full.chunks >= before.chunks + 36, "chunks %zu -> %zu", before.chunks,
              full.chunks);
    CHECK_MSG(full.folios_in_use > before.folios_in_use, "folios %zu -> %zu",
              before.folios_in_use, full.folios_in_use);
    size_t rss_full = rss_bytes();
    for (int i = 0; i < N; i++)
        pm_free(big[i]);
    for (int i = 0; i < NSMALL; i++)
        pm_free(small[i]);
    CHECK_EQ(pm_trim(), 1);
    CHECK_EQ(pm_trim(), 0);
    struct pm_stats trimmed = stats();
    size_t rss_trimmed = rss_bytes();
    CHECK_MSG(trimmed.folios_in_use < full.folios_in_use, "folios %zu -> %zu after trim",
              full.folios_in_use, trimmed.folios_in_use);
    CHECK_MSG(rss_trimmed + 48 * MiB <= rss_full, "RSS %zu -> %zu after trim", rss_full,
              rss_trimmed);
    pm_free(big);
    pm_free(small);
}

static struct pm_process_stats totals(void)
{
    struct pm_process_stats t;
    memset(&t, 0xff, sizeof t);
    pm_get_process_stats(&t);
    CHECK(t.committed == t.active + t.dirty);
    CHECK(t.active >= t.allocated && t.peak_active >= t.active && t.peak_mapped >= t.mapped);
    CHECK(t.metadata > 0);
    return t;
}

/* The process totals follow a huge object in and out, page for page. */
static void process_totals_follow_huge_objects(void)
{
    const size_t n = 24 * MiB;
    struct pm_process_stats before = totals();
    char *p = pm_malloc(n);
    CHECK(p != NULL);
    struct pm_process_stats during = totals();
    CHECK_EQ(during.allocated - before.allocated, n);
    CHECK_EQ(during.huge_objects, before.huge_objects + 1);
    CHECK(during.mapped >= before.mapped + n && during.peak_active >= before.active + n);
    pm_free(p);
    struct pm_process_stats after = totals();
    CHECK_EQ(after.allocated, before.allocated);
    CHECK_EQ(after.huge_objects, before.huge_objects);
    void *small = pm_malloc(16);
    CHECK(totals().threads >= 1);
    pm_free(small);
}

int main(void)
{
    process_totals_follow_huge_objects();
    CHECK(!strcmp(pm_version(), PRIMALLOC_VERSION));
    huge_bytes_follow_huge_objects();
    chunks_folios_and_trim();
    /* Memory given back is usable again. */
    void *p = pm_calloc(1000, 1000);
    CHECK(p != NULL && nonzero_at(p, 1000 * 1000) == 0);
    pm_free(p);
    return 0;
}
