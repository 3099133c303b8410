/* SPDX-License-Identifier: MIT */
#include "guard.h"
#include "chunk_table.h"
#include "code_map.h"
#include "layout.h"
#include "lock.h"
#include "options.h"
#include "os.h"
#include "text.h"

uint32_t pm_guard_rate;

/* An object guarded or quarantined: its mapping is [map, map + len), the
 * last page the guard after the object and the page before the object's
 * first page the guard before it.  The bytes of the object's first page
 * before it hold FILL while it is live. */
struct guarded {
    char *map;
    size_t len;
    char *p;
    size_t usable;
    void *alloc_site, *free_site;
    int freed;
};

/* Records and an open-addressing table of them by object address (twice
 * as many cells as records, linear probing, deletion by shifting back),
 * mapped when sampling starts.  Cells hold a record's index plus one. */
#define CELLS (2 * PM_GUARD_OBJECTS)
static struct guarded *records;
static uint16_t *cells;
static uint16_t unused[PM_GUARD_OBJECTS]; /* a stack of free record indices */
static unsigned nunused;
static uint16_t quarantine[PM_GUARD_QUARANTINE]; /* a FIFO of record indices */
static unsigned q_first, q_n;
static pm_lock lock;

#define FILL 0xa5

static __thread uint32_t left __attribute__((tls_model("initial-exec")));

static void on_fault(void *addr, uintptr_t pc, int wrote);

void pm_guard_init(void)
{
    static int done;
    if (__atomic_load_n(&done, __ATOMIC_ACQUIRE))
        return;
    pm_lock_take(&lock);
    if (!done) {
        uint32_t rate = (uint32_t)pm_option(PM_OPT_GUARD_RATE);
        size_t bytes = PM_GUARD_OBJECTS * sizeof *records + CELLS * sizeof *cells;
        char *m = rate ? pm_os_map((bytes + PM_PAGE - 1) & ~(size_t)(PM_PAGE - 1), PM_PAGE) : 0;
        if (m) {
            records = (struct guarded *)m;
            cells = (uint16_t *)(m + PM_GUARD_OBJECTS * sizeof *records);
            for (nunused = 0; nunused < PM_GUARD_OBJECTS; nunused++)
                unused[nunused] = (uint16_t)(PM_GUARD_OBJECTS - 1 - nunused);
            pm_os_on_fault(PM_FAULT_GUARD, on_fault);
            __atomic_store_n(&pm_guard_rate, rate, __ATOMIC_RELEASE);
        }
        __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
    }
    pm_lock_drop(&lock);
}

unsigned pm_guard_quota(unsigned most)
{
    if (!left) {
        left = pm_guard_rate - 1;
        return 0;
    }
    unsigned k = most < left ? most : left;
    left -= k;
    return k;
}

static unsigned cell_of(const void *p)
{
    return (unsigned)(((uintptr_t)p >> 4) * 0x9e3779b97f4a7c15ull >> 32) & (CELLS - 1);
}

/* The cell that holds p, or the empty cell where p would go. */
static unsigned lookup(const void *p)
{
    unsigned c = cell_of(p);
    while (cells[c] && records[cells[c] - 1].p != p)
        c = (c + 1) & (CELLS - 1);
    return c;
}

/* Empties cell c, moving back the records after it that would no longer
 * be found past the hole. */
static void remove_cell(unsigned c)
{
    unsigned hole = c;
    for (c = (c + 1) & (CELLS - 1); cells[c]; c = (c + 1) & (CELLS - 1)) {
        unsigned home = cell_of(records[cells[c] - 1].p);
        if (((c - home) & (CELLS - 1)) >= ((c - hole) & (CELLS - 1))) {
            cells[hole] = cells[c];
            hole = c;
        }
    }
    cells[hole] = 0;
}

static char *page_of(const char *p)
{
    return (char *)((uintptr_t)p & ~(uintptr_t)(pm_os_page() - 1));
}

/* Whether [map, map + len) lies partly in a chunk of a bin, which can
 * only be the unmapped rest of a partial chunk.  Read after the record is
 * in the table: the pool tags a partial chunk before it asks
 * pm_guard_overlaps, so that of a mapping and a chunk placed at once,
 * one sees the other. */
static int among_bins(const char *map, size_t len)
{
    for (uintptr_t c = (uintptr_t)map & ~(PM_CHUNK - 1); c < (uintptr_t)map + len; c += PM_CHUNK) {
        const struct pm_chunk_entry *e = pm_chunk_entry_of(c);
        if (e && pm_bin_of_tag(__atomic_load_n(&e->tag, __ATOMIC_RELAXED)) < PM_NBINS)
            return 1;
    }
    return 0;
}

/* Record i's object, placed anew, or NULL where there is no room or the
 * kernel's place lies among a bin's chunk (among_bins). */
static char *place(size_t size, size_t align, void *site, uint16_t i)
{
    size_t page = pm_os_page();
    size_t a = align > page ? align : page;
    size_t len = a + ((size + a - 1) & ~(a - 1)) + page;
    char *map = pm_os_map(len, a);
    if (!map)
        return 0;
    char *guard = map + len - page;
    pm_os_protect_none(guard, page);
    char *p = (char *)((uintptr_t)(guard - size) & ~(uintptr_t)(align - 1));
    pm_os_protect_none(page_of(p) - page, page);
    for (char *b = page_of(p); b < p; b++)
        *b = (char)FILL;
    pm_lock_take(&lock);
    records[i] = (struct guarded){map, len, p, (size_t)(guard - p), site, 0, 0};
    cells[lookup(p)] = (uint16_t)(i + 1);
    pm_lock_drop(&lock);
    if (!among_bins(map, len))
        return p;
    pm_lock_take(&lock);
    remove_cell(lookup(p));
    records[i] = (struct guarded){0};
    pm_lock_drop(&lock);
    pm_os_unmap(map, len);
    return 0;
}

/* The mapping's alignment a is at least a page and align: the object ends
 * at the guard after it and starts at least a past the mapping's start,
 * so that the page before its first page is the mapping's. */
void *pm_guard_alloc(size_t size, size_t align, void *site)
{
    pm_lock_take(&lock);
    if (!nunused) {
        pm_lock_drop(&lock);
        return 0;
    }
    uint16_t i = unused[--nunused];
    pm_lock_drop(&lock);
    char *p = place(size, align, site, i);
    if (!p) {
        pm_lock_take(&lock);
        unused[nunused++] = i;
        pm_lock_drop(&lock);
    }
    return p;
}

int pm_guard_overlaps(uintptr_t lo, size_t len)
{
    if (!pm_guard_rate)
        return 0;
    int found = 0;
    pm_lock_take(&lock);
    for (unsigned i = 0; i < PM_GUARD_OBJECTS && !found; i++)
        found = records[i].map && (uintptr_t)records[i].map < lo + len &&
                lo < (uintptr_t)records[i].map + records[i].len;
    pm_lock_drop(&lock);
    return found;
}

int pm_guard_find(const void *p, size_t *usable, int *freed)
{
    if (!pm_guard_rate)
        return 0;
    pm_lock_take(&lock);
    unsigned c = lookup(p);
    int found = cells[c] != 0;
    if (found) {
        *usable = records[cells[c] - 1].usable;
        *freed = records[cells[c] - 1].freed;
    }
    pm_lock_drop(&lock);
    return found;
}

/* Room for a report: three code places and the words around them. */
#define REPORT_BYTES 1024

/* Writes "<what> sampled object 0x<p> of <usable> bytes, allocated from
 * <site>[, freed from <site>][, written at|read at|at <pc>]" after o and
 * dies; each place is a file and an address in it, as addr2line takes
 * them (code_map.h).  A site is named by the byte before its return
 * address: inside the call, whose line it is, where the return address
 * may start the next line. */
static _Noreturn void die_about(char *buf, char *o, const char *what, const struct guarded *g, uintptr_t pc,
                                int wrote)
{
    o = pm_text_str(o, what);
    o = pm_text_str(o, " sampled object ");
    o = pm_text_hex(o, (uintptr_t)g->p);
    o = pm_text_str(o, " of ");
    o = pm_text_dec(o, g->usable);
    o = pm_text_str(o, " bytes, allocated from ");
    o = pm_code_put(o, (uintptr_t)g->alloc_site - 1);
    if (g->freed) {
        o = pm_text_str(o, ", freed from ");
        o = pm_code_put(o, (uintptr_t)g->free_site - 1);
    }
    if (pc) {
        o = pm_text_str(o, wrote > 0 ? ", written at " : wrote == 0 ? ", read at " : ", at ");
        o = pm_code_put(o, pc);
    }
    pm_os_die(buf, o);
}

void pm_guard_free(void *p, const char *call, void *site)
{
    pm_lock_take(&lock);
    unsigned c = lookup(p);
    struct guarded *g = &records[cells[c] - 1];
    for (const char *b = page_of(g->p); b < g->p; b++) {
        if (*b != (char)FILL) {
            char buf[REPORT_BYTES];
            die_about(buf, pm_os_put_call(buf, call, p), "underflow before", g, 0, -1);
        }
    }
    g->freed = 1;
    g->free_site = site;
    pm_os_protect_none(g->map, g->len - pm_os_page());
    struct guarded old = {0};
    if (q_n == PM_GUARD_QUARANTINE) {
        /* The oldest leaves: its mapping goes, its address with it. */
        uint16_t o = quarantine[q_first];
        old = records[o];
        remove_cell(lookup(old.p));
        records[o] = (struct guarded){0};
        unused[nunused++] = o;
        q_first = (q_first + 1) % PM_GUARD_QUARANTINE;
        q_n--;
    }
    quarantine[(q_first + q_n++) % PM_GUARD_QUARANTINE] = (uint16_t)(g - records);
    pm_lock_drop(&lock);
    if (old.map)
        pm_os_unmap(old.map, old.len);
}

static void check_failed(const void *where, const char *what)
{
    pm_fatal("guard check", where, what);
}

const void *pm_guard_each(void (*fn)(void *ctx, void *p, size_t usable, void *site), void *ctx,
                          size_t *records_len)
{
    *records_len = PM_GUARD_OBJECTS * sizeof *records + CELLS * sizeof *cells;
    if (!records)
        return 0;
    pm_lock_take(&lock);
    for (unsigned i = 0; i < PM_GUARD_OBJECTS; i++)
        if (records[i].map && !records[i].freed)
            fn(ctx, records[i].p, records[i].usable, records[i].alloc_site);
    pm_lock_drop(&lock);
    return records;
}

/* A record in use: its object is in its mapping, after the guard before it
 * and ending at the guard after it, and the table finds it. */
static void check_record(unsigned i)
{
    const struct guarded *g = &records[i];
    char *guard = g->map + g->len - pm_os_page();
    if (g->p < g->map + pm_os_page() || g->p + g->usable != guard)
        check_failed(g->p, "object not between its guard pages");
    if (cells[lookup(g->p)] != i + 1)
        check_failed(g->p, "table does not find the object's record");
}

void pm_guard_check(void)
{
    if (!records)
        return;
    pm_lock_take(&lock);
    uint8_t seen[PM_GUARD_OBJECTS] = {0}; /* 1: unused, 2: quarantined */
    if (nunused > PM_GUARD_OBJECTS || q_n > PM_GUARD_QUARANTINE || q_first >= PM_GUARD_QUARANTINE)
        check_failed(&nunused, "counts out of range");
    for (unsigned k = 0; k < nunused; k++) {
        if (unused[k] >= PM_GUARD_OBJECTS || seen[unused[k]] || records[unused[k]].map)
            check_failed(&unused[k], "unused list names a record twice or in use");
        seen[unused[k]] = 1;
    }
    for (unsigned k = 0; k < q_n; k++) {
        uint16_t i = quarantine[(q_first + k) % PM_GUARD_QUARANTINE];
        if (i >= PM_GUARD_OBJECTS || seen[i] || !records[i].freed)
            check_failed(&quarantine[k], "quarantine names a record twice, unused or live");
        seen[i] = 2;
    }
    unsigned used = 0, filled = 0;
    for (unsigned i = 0; i < PM_GUARD_OBJECTS; i++) {
        if (seen[i] == 1)
            continue;
        if (!records[i].map)
            check_failed(&records[i], "record neither unused nor in use");
        if (records[i].freed != (seen[i] == 2))
            check_failed(records[i].p, "freed record outside the quarantine");
        check_record(i);
        used++;
    }
    for (unsigned c = 0; c < CELLS; c++)
        filled += cells[c] != 0;
    if (filled != used || used + nunused != PM_GUARD_OBJECTS)
        check_failed(cells, "table cells disagree with the records in use");
    pm_lock_drop(&lock);
}

/* In the signal handler: no lock (the faulting thread may hold it), a
 * record read as it stands.  Only a record's guard pages, or its whole
 * mapping once freed, fault. */
static void on_fault(void *addr, uintptr_t pc, int wrote)
{
    const char *a = addr;
    for (unsigned i = 0; records && i < PM_GUARD_OBJECTS; i++) {
        const struct guarded *g = &records[i];
        if (!g->map || a < g->map || a >= g->map + g->len)
            continue;
        char buf[REPORT_BYTES];
        const char *what = g->freed ? "use after free of" : a < g->p ? "underflow before" : "overflow past";
        die_about(buf, pm_os_put_call(buf, "access", a), what, g, pc, wrote);
    }
}

void pm_guard_prefork(void)
{
    pm_lock_take(&lock);
}

void pm_guard_postfork(void)
{
    pm_lock_drop(&lock);
}
