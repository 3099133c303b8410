/* SPDX-License-Identifier: MIT */
/* The size-class generator (the SuperMalloc paper section 7, the
 * "metaprogram").  It chooses every bin, its folio and its cache sizes,
 * derives the multiply-and-shift constant that replaces division and the
 * object-start test, checks them for every offset in a chunk, and writes
 * them as a C header.
 *
 * Classes (documented in docs/DESIGN.md):
 *  small   16..256 B, multiples of 16 so every object is 16-byte aligned:
 *          16, 32, 48, 64, then k*2^i (k = 4..7), at most 25% apart above 64;
 *  medium  prime multiples of the 64-byte line, plus 9 and 15 lines, each
 *          the largest candidate within 25% of the previous when there is one;
 *          and a page and five lines (HEADED_PAGE_LINES);
 *  pow2    512..8192 B, used only for aligned requests;
 *  large   page multiples k*2^i pages from 4 pages to what fits twice in a
 *          chunk, handed out with a random cache-line offset;
 *  huge    anything bigger (not a bin: power-of-two chunk runs).
 * Folios are the fewest whole pages that hold a whole number of objects,
 * so no object straddles a folio end and no page end is wasted; a
 * chunk's last folio may hold fewer, those that fit. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "../src/layout.h"

enum { SMALL, MEDIUM, POW2, LARGE };
static const char *kind_name[] = {"PM_SMALL", "PM_MEDIUM", "PM_POW2", "PM_LARGE"};

struct bin {
    unsigned long size;
    int kind;
    unsigned long folio_bytes, objs_per_folio, folios, objs_per_chunk;
    unsigned long batch, cpu_batches, align, first_folio;
    uint64_t recip, limit;
};

#define MAXBINS 128
static struct bin bins[MAXBINS];
static int nbins;

static void die(const char *what, unsigned long v)
{
    fprintf(stderr, "gen_sizeclasses: %s (%lu)\n", what, v);
    exit(1);
}

static unsigned long gcd(unsigned long a, unsigned long b)
{
    while (b) {
        unsigned long t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static int is_prime(unsigned long n)
{
    if (n < 2)
        return 0;
    for (unsigned long d = 2; d * d <= n; d++)
        if (n % d == 0)
            return 0;
    return 1;
}

/* A buffer of a page and a header (a database's page cache entry: sqlite's
 * is 4,368 B; an I/O buffer and its bookkeeping) falls between the primes
 * 61 and 73 lines, 4,672 B being 14% over a page; a bin of a page and up
 * to five lines holds such a buffer with at most 8% spare.  Around 2 KiB
 * and 8 KiB the primes already give one (37 and 131 lines). */
#define HEADED_PAGE_LINES (PM_PAGE / PM_LINE + 5)

static int is_medium_candidate(unsigned long lines)
{
    return is_prime(lines) || lines == 9 || lines == 15;
}

static unsigned log2_exact(unsigned long v)
{
    unsigned l = 0;
    while ((1ul << l) < v)
        l++;
    if ((1ul << l) != v)
        die("not a power of two", v);
    return l;
}

/* recip = floor(2^64 / size) + 1, so that size * recip = 2^64 + e with
 * 1 <= e <= size.  For x = q * size + r below 2^32, x * recip = q * 2^64
 * + q * e + r * recip, and q * e + r * recip < 2^64 (q * e < 2^33, recip
 * > 2^43 as size < 2^21): the high half of the 128-bit product is q,
 * x / size (Lemire, Kaser and Kurz, "Faster Remainder by Direct
 * Computation", 2019).  Its low half is q * e when r == 0 and at least
 * recip otherwise, so with limit = (objs_per_chunk - 1) * e + 1, far
 * below recip, low < limit exactly when x starts an object; a limit of 0,
 * as in a zeroed copy of the test, passes nothing.  An offset rel is
 * taken from the data start, so offsets before it wrap to the top of the
 * 32-bit range, where q >= objs_per_chunk.  Verified for every offset in
 * a chunk. */
static void find_reciprocal(struct bin *b)
{
    b->recip = (uint64_t)(((unsigned __int128)1 << 64) / b->size + 1);
    uint64_t e = (uint64_t)b->size * b->recip;
    b->limit = (b->objs_per_chunk - 1) * e + 1;
    for (uint64_t a = 0; a < PM_CHUNK; a++) {
        unsigned __int128 div = (unsigned __int128)a * b->recip;
        if ((uint64_t)(div >> 64) != a / b->size)
            die("division wrong for size", b->size);
        uint32_t rel = (uint32_t)a - PM_DATA_START;
        int object = rel < b->objs_per_chunk * b->size && rel % b->size == 0;
        unsigned __int128 product = (unsigned __int128)rel * b->recip;
        if (((uint64_t)product < b->limit) != object ||
            (object && (uint64_t)(product >> 64) != rel / b->size))
            die("object test wrong for size", b->size);
    }
}

/* A chunk carves its folios in order from its bin's first folio on,
 * wrapping at the end (folio.c).  The folios carved first are those a bin
 * of few objects uses; were they the chunk's first in every bin, the
 * busiest lines of all bins would lie at the same offsets from chunk
 * boundaries and share the sets of a cache indexed by the low address
 * bits.  So bin i's first folio starts at page 13 i mod COLOR_PAGES of a
 * stretch of COLOR_PAGES pages, one way of the L2 cache DESIGN.md names,
 * or at the nearest start after it that its folio size allows; 13 is odd,
 * so the first COLOR_PAGES bins start at distinct pages. */
#define COLOR_PAGES 32

static unsigned long first_folio(const struct bin *b, unsigned long i)
{
    unsigned long pages = b->folio_bytes / PM_PAGE, want = i * 13 % COLOR_PAGES;
    unsigned long best = 0, gap = COLOR_PAGES;
    for (unsigned long r = 0; r < COLOR_PAGES && r < b->folios; r++) {
        unsigned long start = (PM_DATA_START / PM_PAGE + r * pages) % COLOR_PAGES;
        unsigned long d = (start + COLOR_PAGES - want) % COLOR_PAGES;
        if (d < gap) {
            gap = d;
            best = r;
        }
    }
    return best;
}

static void add_bin(unsigned long size, int kind)
{
    if (nbins == MAXBINS)
        die("too many bins", size);
    struct bin *b = &bins[nbins++];
    b->size = size;
    b->kind = kind;
    if (kind == LARGE) {
        b->folio_bytes = size;
    } else {
        unsigned long pages = size / gcd(size, PM_PAGE);
        b->folio_bytes = pages * PM_PAGE;
    }
    b->objs_per_folio = b->folio_bytes / size;
    if (b->objs_per_folio > PM_MAX_FOLIO_OBJS)
        die("too many objects per folio", size);
    log2_exact(b->objs_per_folio);
    /* Where the data is no whole number of folios, the last folio holds
     * the objects that fit after the others: under a huge page, the
     * chunk's end would be committed whether objects lie there or not. */
    b->objs_per_chunk = (PM_CHUNK - PM_DATA_START) / size;
    b->folios = (b->objs_per_chunk + b->objs_per_folio - 1) / b->objs_per_folio;
    if (b->objs_per_chunk < b->objs_per_folio || b->folios > PM_MAX_FOLIOS)
        die("folio does not fit a chunk", size);
    /* Objects sit at chunk + PM_DATA_START + i * size. */
    unsigned long low = size & -size, data_low = PM_DATA_START & -PM_DATA_START;
    b->align = low < data_low ? low : data_low;
    if (b->align < PM_ALIGN)
        die("object not 16-byte aligned", size);
    b->batch = kind == LARGE ? 1 : PM_THREAD_LIST_BYTES / size;
    if (b->batch < PM_THREAD_LIST_OBJS && kind != LARGE)
        b->batch = PM_THREAD_LIST_OBJS;
    b->cpu_batches = PM_CPU_LIST_BYTES / (b->batch * size);
    if (b->cpu_batches < 1)
        b->cpu_batches = 1;
    find_reciprocal(b);
}

static int by_size(const void *a, const void *b)
{
    const struct bin *x = a, *y = b;
    return (x->size > y->size) - (x->size < y->size);
}

static void make_bins(void)
{
    /* small */
    for (unsigned long s = 16; s <= 64; s += 16)
        add_bin(s, SMALL);
    for (unsigned long base = 64; base < 256; base *= 2)
        for (unsigned long k = 5; k <= 8; k++)
            add_bin(base / 4 * k, SMALL);
    /* medium: from 5 lines while below a large object */
    unsigned long lines = 5;
    while (lines * PM_LINE < PM_LARGE_MIN_PAGES * PM_PAGE) {
        add_bin(lines * PM_LINE, MEDIUM);
        unsigned long next = 0;
        for (unsigned long c = lines + 1; c * 4 <= lines * 5; c++)
            if (is_medium_candidate(c))
                next = c;
        if (!next)
            for (next = lines + 1; !is_medium_candidate(next); next++)
                ;
        lines = next;
    }
    add_bin(HEADED_PAGE_LINES * PM_LINE, MEDIUM);
    /* powers of two for aligned requests, where no small bin is one */
    for (unsigned long s = 512; s <= 8192; s *= 2)
        add_bin(s, POW2);
    /* large */
    for (unsigned long base = 4; base <= PM_LARGE_MAX_PAGES; base *= 2)
        for (unsigned long k = 4; k <= 7; k++) {
            unsigned long pages = base / 4 * k;
            if (pages <= PM_LARGE_MAX_PAGES)
                add_bin(pages * PM_PAGE, LARGE);
        }
    if (bins[nbins - 1].size != PM_LARGE_MAX)
        add_bin(PM_LARGE_MAX, LARGE);
    qsort(bins, nbins, sizeof bins[0], by_size);
    if (nbins > 255)
        die("bin numbers must fit a byte", nbins);
    for (int i = 0; i < nbins; i++)
        bins[i].first_folio = first_folio(&bins[i], (unsigned long)i);
}

/* Smallest bin of one of the given kinds that holds size. */
static int smallest_fit(unsigned long size, int k1, int k2)
{
    for (int i = 0; i < nbins; i++)
        if ((bins[i].kind == k1 || bins[i].kind == k2) && bins[i].size >= size)
            return i;
    return -1;
}

static void write_table(FILE *f)
{
    fprintf(f, "| bin | kind | size | folio | objects/folio | objects/chunk | "
               "waste at chunk end | batch | CPU batches |\n"
               "|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < nbins; i++) {
        const struct bin *b = &bins[i];
        unsigned long used = PM_DATA_START + b->objs_per_chunk * b->size;
        fprintf(f, "| %d | %s | %lu | %lu | %lu | %lu | %lu KiB | %lu | %lu |\n", i,
                kind_name[b->kind] + 3, b->size, b->folio_bytes, b->objs_per_folio,
                b->objs_per_chunk, (PM_CHUNK - used) / 1024, b->batch, b->cpu_batches);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: gen_sizeclasses OUT.h [TABLE.md]\n");
        return 2;
    }
    make_bins();
    unsigned long lookup_max = 0;
    int first_large = -1, nsmall = 0;
    for (int i = 0; i < nbins; i++) {
        if (bins[i].kind == SMALL && nsmall++ != i)
            die("a small bin after a bigger one", bins[i].size);
        if (bins[i].kind == SMALL || bins[i].kind == MEDIUM)
            lookup_max = bins[i].size;
        if (bins[i].kind == LARGE && first_large < 0)
            first_large = i;
    }
    FILE *f = fopen(argv[1], "w");
    if (!f)
        die("cannot write output", 0);
    fprintf(f, "/* Generated by tools/gen_sizeclasses.c: do not edit. */\n"
               "#ifndef PM_SIZECLASS_TABLE_H\n#define PM_SIZECLASS_TABLE_H\n\n");
    fprintf(f, "#define PM_NBINS %d\n#define PM_LOOKUP_MAX %lu\n"
               "#define PM_FIRST_LARGE_BIN %d\n#define PM_POW2_MAX_LOG 13\n"
               "#define PM_HEADED_PAGE_LINES %lu\n"
               "#define PM_SMALL_BINS %d\n#define PM_SMALL_MAX %lu\n\n",
            nbins, lookup_max, first_large, HEADED_PAGE_LINES, nsmall, bins[nsmall - 1].size);
    fprintf(f, "#define PM_BINS_INIT { \\\n");
    for (int i = 0; i < nbins; i++) {
        const struct bin *b = &bins[i];
        fprintf(f, "    { .size = %lu, .kind = %s, .folio_log = %u, .align_log = %u, "
                   ".first_folio = %lu, .batch = %lu, .cpu_batches = %lu, .objs_per_chunk = %lu, "
                   ".recip = %#llxull, .limit = %#llxull }, \\\n",
                b->size, kind_name[b->kind], log2_exact(b->objs_per_folio), log2_exact(b->align),
                b->first_folio, b->batch, b->cpu_batches, b->objs_per_chunk, (unsigned long long)b->recip,
                (unsigned long long)b->limit);
    }
    /* A bin's partial folio lists, one per free count below its objects
     * per folio up to PM_MAX_PARTIAL_LISTS, start on a cache line of
     * their own (four lists). */
    fprintf(f, "}\n\n#define PM_PARTIAL_AT_INIT {");
    unsigned long lists = 0;
    for (int i = 0; i < nbins; i++) {
        fprintf(f, "%s%lu,", i % 16 ? " " : " \\\n   ", lists);
        unsigned long n = bins[i].objs_per_folio;
        lists += ((n < PM_MAX_PARTIAL_LISTS ? n : PM_MAX_PARTIAL_LISTS) + 3) & ~3ul;
    }
    fprintf(f, " }\n#define PM_PARTIAL_LISTS %lu\n", lists);
    fprintf(f, "\n#define PM_SCALED_BIN_BY_16_INIT {");
    for (unsigned long i = 0; i <= (lookup_max + 15) / 16; i++)
        fprintf(f, "%s%d,", i % 16 ? "" : " \\\n   ",
                (i ? smallest_fit(i * 16, SMALL, MEDIUM) : nbins) * PM_BIN_STRIDE);
    fprintf(f, " }\n\n#define PM_LARGE_BIN_BY_PAGES_INIT {");
    for (unsigned long p = 0; p <= PM_LARGE_MAX_PAGES; p++)
        fprintf(f, "%s%d,", p % 32 ? "" : " \\\n   ",
                p < PM_LARGE_MIN_PAGES ? first_large : smallest_fit(p * PM_PAGE, LARGE, LARGE));
    fprintf(f, " }\n\n#define PM_POW2_BIN_BY_LOG_INIT {");
    for (unsigned l = 0; l <= 13; l++)
        fprintf(f, " %d,", l < 4 ? smallest_fit(16, SMALL, SMALL)
                                 : smallest_fit(1ul << l, (1ul << l) <= 256 ? SMALL : POW2, POW2));
    fprintf(f, " }\n\n#endif\n");
    if (fclose(f))
        die("cannot write output", 0);
    if (argc == 3) {
        FILE *t = fopen(argv[2], "w");
        if (!t)
            die("cannot write table", 0);
        write_table(t);
        fclose(t);
    }
    return 0;
}
