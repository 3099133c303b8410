/* SPDX-License-Identifier: MIT */
/* Size classes: spacing, alignment, primality, folio waste, lookups and
 * the multiply-and-shift division and the object-start test for every
 * offset of every bin. */
#include <stdint.h>
#include "sizeclass.h"
#include "unit.h"

static int is_prime(unsigned n)
{
    if (n < 2)
        return 0;
    for (unsigned d = 2; d * d <= n; d++)
        if (n % d == 0)
            return 0;
    return 1;
}

static void test_bins(void)
{
    unsigned prev_plain = 0, headed_pages = 0;
    for (unsigned i = 0; i < PM_NBINS; i++) {
        const struct pm_bin *b = &pm_bins[i];
        unsigned n = 1u << b->folio_log;
        CHECK(b->size % PM_ALIGN == 0);
        CHECK(b->size % (1u << b->align_log) == 0 && b->align_log >= 4);
        CHECK(PM_DATA_START % (1u << b->align_log) == 0);
        /* Folios are whole pages holding whole objects: no page-end waste. */
        CHECK(pm_folio_bytes(b) % PM_PAGE == 0);
        CHECK(pm_folio_bytes(b) == n * b->size);
        CHECK(n <= PM_MAX_FOLIO_OBJS);
        /* A chunk holds every object that fits; its last folio holds
         * what the others leave, 1 to n objects. */
        CHECK(PM_DATA_START + (size_t)b->objs_per_chunk * b->size <= PM_CHUNK);
        CHECK(PM_DATA_START + (size_t)(b->objs_per_chunk + 1) * b->size > PM_CHUNK);
        unsigned last = b->objs_per_chunk - (pm_folios_per_chunk(b) - 1) * n;
        CHECK(last >= 1 && last <= n);
        /* size * recip exceeds 2^64 by 1 to size. */
        uint64_t e = (uint64_t)b->size * b->recip;
        CHECK((unsigned __int128)b->size * b->recip >> 64 == 1 && e >= 1 && e <= b->size);
        CHECK(b->limit == (uint64_t)(b->objs_per_chunk - 1) * e + 1);
        CHECK(b->cpu_batches >= 1);
        /* A large bin's list holds one object; any other's at least
         * PM_THREAD_LIST_OBJS, and more only as PM_THREAD_LIST_BYTES allows. */
        CHECK(b->kind == PM_LARGE ? b->batch == 1
                                  : b->batch >= PM_THREAD_LIST_OBJS &&
                                        (b->batch == PM_THREAD_LIST_OBJS ||
                                         (size_t)b->batch * b->size <= PM_THREAD_LIST_BYTES));
        CHECK(i == 0 || b->size > pm_bins[i - 1].size);
        CHECK((b->kind == PM_SMALL) == (i < PM_SMALL_BINS));
        CHECK((b->size <= PM_SMALL_MAX) == (i < PM_SMALL_BINS));
        switch (b->kind) {
        case PM_SMALL:
            CHECK(b->size <= 256);
            break;
        case PM_MEDIUM: {
            unsigned lines = b->size / PM_LINE;
            CHECK(b->size % PM_LINE == 0);
            CHECK(is_prime(lines) || lines == 9 || lines == 15 || lines == PM_HEADED_PAGE_LINES);
            headed_pages += lines == PM_HEADED_PAGE_LINES;
            break;
        }
        case PM_POW2:
            CHECK((b->size & (b->size - 1)) == 0);
            break;
        case PM_LARGE:
            CHECK(b->size % PM_PAGE == 0 && b->size >= PM_LARGE_MIN_PAGES * PM_PAGE);
            CHECK(b->size <= PM_LARGE_MAX && b->objs_per_chunk >= 2);
            CHECK(i >= PM_FIRST_LARGE_BIN);
            break;
        default:
            CHECK(0);
        }
        /* Small bins are at most 25% apart, or 16 bytes where 16-byte
         * alignment allows no finer step.  A medium bin is within 25% of
         * the one before whenever a prime (or 9 or 15) lines allows it,
         * else it is the next such line count; the bin of a page and a
         * header stands outside that chain. */
        if (b->kind == PM_SMALL && prev_plain) {
            unsigned limit = prev_plain + prev_plain / 4;
            CHECK(b->size <= (limit > prev_plain + 16 ? limit : prev_plain + 16));
        }
        if (b->kind == PM_MEDIUM && b->size == PM_HEADED_PAGE_LINES * PM_LINE)
            continue;
        if (b->kind == PM_MEDIUM && prev_plain) {
            unsigned prev_lines = prev_plain / PM_LINE, lines = b->size / PM_LINE, near = 0;
            for (unsigned c = prev_lines + 1; c * 4 <= prev_lines * 5; c++)
                if (is_prime(c) || c == 9 || c == 15)
                    near = c;
            if (near)
                CHECK(lines == near);
            else
                for (unsigned c = prev_lines + 1; c < lines; c++)
                    CHECK(!is_prime(c) && c != 9 && c != 15);
        }
        if (b->kind != PM_POW2)
            prev_plain = b->size;
    }
    CHECK(headed_pages == 1 && PM_HEADED_PAGE_LINES * PM_LINE > PM_PAGE);
    CHECK(pm_bins[PM_NBINS - 1].size == PM_LARGE_MAX);
}

static void test_lookup(void)
{
    /* Size 0 goes to the thread cache's zero entry (src/zero.h). */
    CHECK(pm_bin_of_small(0) == PM_NBINS);
    for (size_t s = 1; s <= PM_LOOKUP_MAX; s++) {
        unsigned bin = pm_bin_of_small(s);
        CHECK(bin < PM_FIRST_LARGE_BIN);
        CHECK(pm_bins[bin].size >= s && pm_bins[bin].kind != PM_POW2);
        for (unsigned j = 0; j < bin; j++)
            CHECK(pm_bins[j].kind == PM_POW2 || pm_bins[j].size < s);
    }
    for (size_t p = PM_LARGE_MIN_PAGES; p <= PM_LARGE_MAX_PAGES; p++) {
        unsigned bin = pm_large_bin_by_pages[p];
        CHECK(pm_bins[bin].kind == PM_LARGE && pm_bins[bin].size >= p * PM_PAGE);
        CHECK(bin == PM_FIRST_LARGE_BIN || pm_bins[bin - 1].size < p * PM_PAGE);
    }
    for (unsigned l = 4; l <= PM_POW2_MAX_LOG; l++) {
        const struct pm_bin *b = &pm_bins[pm_pow2_bin_by_log[l]];
        CHECK(b->size == 1u << l && b->align_log >= l);
    }
}

/* Division for every chunk offset; the object-start test and the index
 * it gives for every address of a chunk, those before the data start
 * included. */
static void test_division(void)
{
    for (unsigned i = 0; i < PM_NBINS; i++) {
        const struct pm_bin *b = &pm_bins[i];
        for (uint32_t x = 0; x < PM_CHUNK; x++) {
            if (pm_div_size(b, x) != x / b->size) {
                fprintf(stderr, "bin %u: %u / %u wrong\n", i, x, b->size);
                exit(1);
            }
            uint32_t rel = x - PM_DATA_START;
            int object = rel < b->objs_per_chunk * b->size && rel % b->size == 0;
            if (pm_is_object(b, rel) != object) {
                fprintf(stderr, "bin %u: object test wrong at offset %u\n", i, x);
                exit(1);
            }
            if (object && pm_object_index(b, rel) != rel / b->size) {
                fprintf(stderr, "bin %u: object index wrong at offset %u\n", i, x);
                exit(1);
            }
        }
    }
}

int main(void)
{
    test_bins();
    test_lookup();
    test_division();
    printf("sizeclass: %d bins ok\n", PM_NBINS);
    return 0;
}
