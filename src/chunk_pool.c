/* SPDX-License-Identifier: MIT */
#include "chunk_pool.h"
#include <string.h>
#include "chunk_table.h"
#include "counters.h"
#include "footprint.h"
#include "guard.h"
#include "lock.h"
#include "os.h"

#define RESERVE_MIN (2 * PM_CHUNK)
#define RESERVE_MAX (32 * PM_CHUNK)
/* A purge unmaps at most this many chunks, from the end of a run: the
 * footprint rule asks for what it is over by, not for whole runs that
 * coalescing made large. */
#define PURGE_CHUNKS 4

/* A free run's record.  Records live apart from the runs: writing one
 * into a run would commit a page of it, or a whole huge page where the
 * range asks for huge pages.  The run's first and last chunk entries hold
 * its record's number (link), found through `blocks`. */
struct free_run {
    struct free_run *next, *prev;   /* in its class's list, newest first */
    struct free_run *newer, *older; /* in the age list, by since */
    uintptr_t base;
    size_t chunks;
    size_t dirty; /* bytes that may hold committed pages */
    uint32_t since;
    uint32_t id;  /* its number in the chunk table */
};
_Static_assert(sizeof(struct free_run) == 64, "a record is one line");

#define BLOCK_BYTES (64 * 1024)
#define PER_BLOCK (BLOCK_BYTES / sizeof(struct free_run))
#define MAX_BLOCKS 4096

/* Classes 0-31 hold runs of exactly 1-32 chunks; class 32 + k holds runs
 * of 2^(k+5) + 1 to 2^(k+6) chunks. */
#define EXACT 32
#define CLASSES 64

/* Runs that may hold committed pages (dirty count above 0) and runs that
 * read as zero are filed apart and never coalesced with each other:
 * takers get a committed run first, whose pages cost no fault and no
 * zeroing, and a clean run only when no committed one fits. */
enum { CLEAN, COMMITTED, KINDS };

static pm_lock lock;
static struct free_run *lists[KINDS][CLASSES];
static uint64_t nonempty[KINDS];           /* bit c: lists[k][c] has a run */
static struct free_run *oldest, *newest;   /* the age list */
static size_t mapped_chunks, free_chunks, clean_chunks, nruns;
/* Bytes of partial chunks' ranges not mapped, and the high-water mark of
 * the address space held: mapped_chunks chunks less tails. */
static size_t tails, peak_bytes;
/* The address space held when the kernel last refused a partial chunk
 * more, or 0 once it has given an eighth more than that (pm_pool_ahead):
 * what primalloc holds is not all the kernel counts, so a little more
 * may come and go while the limit stays. */
static size_t refused_at;
static struct free_run *blocks[MAX_BLOCKS]; /* record n + 1 is blocks[n / PER_BLOCK][n % PER_BLOCK] */
static size_t nblocks;
static size_t carved = PER_BLOCK;            /* records of the newest block handed out */
static struct free_run *spare;               /* records handed out and dropped, through next */

static unsigned class_of(size_t chunks)
{
    return chunks <= EXACT ? (unsigned)chunks - 1 : EXACT + 58 - (unsigned)__builtin_clzl(chunks - 1);
}

static uintptr_t addr(const struct free_run *r)
{
    return r->base;
}

static struct free_run *record(uint32_t id)
{
    return &blocks[(id - 1) / PER_BLOCK][(id - 1) % PER_BLOCK];
}

/* A spare record, else the newest block's next one, mapping a block when
 * that is used up; NULL when that fails.  A block's records are written
 * only as they are handed out, so a process that needs few touches one
 * page of the block. */
static struct free_run *new_record(void)
{
    struct free_run *r = spare;
    if (r) {
        spare = r->next;
        return r;
    }
    if (carved == PER_BLOCK) {
        struct free_run *blk = nblocks < MAX_BLOCKS ? pm_os_map(BLOCK_BYTES, PM_PAGE) : 0;
        if (!blk)
            return 0;
        blocks[nblocks++] = blk;
        carved = 0;
    }
    r = &blocks[nblocks - 1][carved++];
    r->id = (uint32_t)((nblocks - 1) * PER_BLOCK + carved);
    return r;
}

static void drop_record(struct free_run *r)
{
    r->chunks = 0;
    r->next = spare;
    spare = r;
}

static unsigned kind_of(const struct free_run *r)
{
    return r->dirty ? COMMITTED : CLEAN;
}

/* A run goes into the age list after the last run filed no later than it:
 * the newest end for a run freed now, further back for a piece of an older
 * run (cut, or left by a purge), so that the purge, which looks at the
 * oldest run alone, never finds an old run behind a younger one. */
static void link_run(struct free_run *r)
{
    unsigned c = class_of(r->chunks), k = kind_of(r);
    r->prev = 0;
    r->next = lists[k][c];
    if (r->next)
        r->next->prev = r;
    lists[k][c] = r;
    nonempty[k] |= 1ull << c;
    struct free_run *after = newest;
    while (after && pm_os_earlier(r->since, after->since))
        after = after->older;
    r->older = after;
    r->newer = after ? after->newer : oldest;
    if (r->newer)
        r->newer->older = r;
    else
        newest = r;
    if (after)
        after->newer = r;
    else
        oldest = r;
    free_chunks += r->chunks;
    clean_chunks += k == CLEAN ? r->chunks : 0;
    nruns++;
    pm_fp_pooled((long)r->dirty);
}

static void unlink_run(struct free_run *r)
{
    unsigned c = class_of(r->chunks), k = kind_of(r);
    if (r->prev)
        r->prev->next = r->next;
    else if (!(lists[k][c] = r->next))
        nonempty[k] &= ~(1ull << c);
    if (r->next)
        r->next->prev = r->prev;
    if (r->older)
        r->older->newer = r->newer;
    else
        oldest = r->newer;
    if (r->newer)
        r->newer->older = r->older;
    else
        newest = r->older;
    free_chunks -= r->chunks;
    clean_chunks -= k == CLEAN ? r->chunks : 0;
    nruns--;
    pm_fp_pooled(-(long)r->dirty);
}

static size_t at_most(size_t a, size_t b)
{
    return a < b ? a : b;
}

/* Writes a free run's boundary tags and files its record r.  A run's
 * dirty count bounds the bytes it may hold committed; a run counted 0
 * reads as zero. */
static void file_run(struct free_run *r, uintptr_t base, size_t chunks, size_t dirty, uint32_t since)
{
    uintptr_t last = base + (chunks - 1) * PM_CHUNK;
    pm_chunk_set(base, PM_CHUNK, PM_TAG_FREE, r->id);
    pm_chunk_set(last, PM_CHUNK, PM_TAG_FREE, r->id);
    r->base = base;
    r->chunks = chunks;
    r->dirty = at_most(dirty, chunks * PM_CHUNK);
    r->since = since;
    link_run(r);
}

/* The filed free run whose boundary entry is e (a neighbour's), if any. */
static struct free_run *run_at(const struct pm_chunk_entry *e)
{
    struct pm_chunk_entry v = e ? pm_chunk_read(e) : (struct pm_chunk_entry){0, 0};
    return v.tag == PM_TAG_FREE && v.link ? record(v.link) : 0;
}

/* The free run whose boundary entry is e, if a run counted `dirty` joins
 * it: both committed or both clean. */
static struct free_run *joinable(const struct pm_chunk_entry *e, size_t dirty)
{
    struct free_run *r = run_at(e);
    return r && !r->dirty == !dirty ? r : 0;
}

static void forget_locked(uintptr_t base, size_t chunks);

/* With the lock held: files [base, base + chunks) as free, coalesced with
 * its free neighbours.  When no record can be had for it, the run is
 * unmapped instead.  The run keeps the oldest time of its parts: purge.h
 * promises that nothing stays dirty much longer than PM_DECAY_MS, and a
 * run that took the time of each newcomer would not be purged while
 * freed chunks kept joining it. */
static void put_locked(uintptr_t base, size_t chunks, size_t dirty)
{
    uintptr_t start = base, end = start + chunks * PM_CHUNK;
    uint32_t since = pm_os_now_ms();
    /* The run's own chunks read "free" at once; its interior stays so. */
    pm_chunk_set(start, chunks * PM_CHUNK, PM_TAG_FREE, 0);
    struct free_run *keep = 0, *r;
    if ((r = joinable(start ? pm_chunk_entry_of(start - 1) : 0, dirty))) {
        unlink_run(r);
        pm_chunk_set(start - PM_CHUNK, PM_CHUNK, PM_TAG_FREE, 0);
        start = addr(r);
        dirty += r->dirty;
        since = r->since;
        keep = r;
    }
    if ((r = joinable(pm_chunk_entry_of(end), dirty))) {
        unlink_run(r);
        pm_chunk_set(end, PM_CHUNK, PM_TAG_FREE, 0);
        end += r->chunks * PM_CHUNK;
        dirty += r->dirty;
        if (pm_os_earlier(r->since, since))
            since = r->since;
        if (keep)
            drop_record(r);
        else
            keep = r;
    }
    if (!keep && !(keep = new_record())) {
        forget_locked(start, (end - start) / PM_CHUNK);
        pm_os_unmap((void *)start, end - start);
        return;
    }
    file_run(keep, start, (end - start) / PM_CHUNK, dirty, since);
}

void pm_pool_put(void *base, size_t chunks, size_t dirty)
{
    pm_lock_take(&lock);
    put_locked((uintptr_t)base, chunks, dirty);
    pm_lock_drop(&lock);
}

/* The newest run of kind k of the best-fitting class that holds `chunks`. */
static struct free_run *best_fit_of(unsigned k, size_t chunks)
{
    unsigned c = class_of(chunks);
    if (c >= EXACT)
        for (struct free_run *r = lists[k][c]; r; r = r->next)
            if (r->chunks >= chunks)
                return r;
    uint64_t above = nonempty[k] >> c << c;
    if (c >= EXACT)
        above &= ~(1ull << c);
    return above ? lists[k][__builtin_ctzll(above)] : 0;
}

static struct free_run *best_fit(size_t chunks)
{
    struct free_run *r = best_fit_of(COMMITTED, chunks);
    return r ? r : best_fit_of(CLEAN, chunks);
}

/* Cuts [s, s + chunks) out of free run r (unlinked); what lies before and
 * after it goes back as free runs.  Where the committed pages lie is not
 * known, so each piece may hold as many as the run did: the counts stay
 * bounds, and a piece of a run that may hold old contents never reads as
 * clean.  Returns the bytes the cut piece may hold committed; when 0, it
 * reads as zero.  A piece left over when no record can be had for it is
 * unmapped. */
static size_t cut(struct free_run *r, uintptr_t s, size_t chunks)
{
    uintptr_t base = addr(r), end = base + r->chunks * PM_CHUNK, stop = s + chunks * PM_CHUNK;
    size_t dirty = r->dirty;
    uint32_t since = r->since;
    struct free_run *tail = 0;
    if (s > base)
        file_run(r, base, (s - base) / PM_CHUNK, dirty, since);
    else
        tail = r;
    if (stop < end && !tail && !(tail = new_record())) {
        forget_locked(stop, (end - stop) / PM_CHUNK);
        pm_os_unmap((void *)stop, end - stop);
    } else if (stop < end)
        file_run(tail, stop, (end - stop) / PM_CHUNK, dirty, since);
    else if (tail)
        drop_record(tail);
    return at_most(dirty, chunks * PM_CHUNK);
}

/* With the lock held, before more address space is reserved: clean free
 * runs, oldest first, are unmapped while they outnumber the chunks in use.
 * A request that no free run fits leaves the rest of its reservation free,
 * and a committed run that a later free files between such pieces keeps
 * them from coalescing: a loop of aligned huge objects would otherwise
 * reserve anew each time and hold all of it until the decay.  Clean runs
 * hold no pages, so unmapping them costs no page faults later. */
static void unmap_clean_locked(void)
{
    for (struct free_run *r = oldest, *newer; r && clean_chunks > mapped_chunks - free_chunks; r = newer) {
        newer = r->newer;
        if (r->dirty)
            continue;
        uintptr_t base = addr(r);
        size_t chunks = r->chunks;
        unlink_run(r);
        drop_record(r);
        forget_locked(base, chunks);
        pm_os_unmap((void *)base, chunks * PM_CHUNK);
        pm_count(PM_EV_unmaps);
    }
}

static size_t held(void)
{
    return mapped_chunks * PM_CHUNK - tails;
}

/* With the lock held, after the address space held grew. */
static void note_peak(void)
{
    if (held() > peak_bytes)
        peak_bytes = held();
    if (held() > refused_at + refused_at / 8)
        refused_at = 0;
}

/* With the lock held: maps a reservation that holds `need` bytes and files
 * it as a free run. */
static int reserve(size_t need)
{
    size_t want = mapped_chunks * PM_CHUNK / 4;
    want = want < RESERVE_MIN ? RESERVE_MIN : want > RESERVE_MAX ? RESERVE_MAX : want & ~(PM_CHUNK - 1);
    if (want < need)
        want = need;
    char *p = pm_os_map(want, PM_CHUNK);
    if (!p && want > need)
        p = pm_os_map(want = need, PM_CHUNK);
    if (!p)
        return 0;
    if ((uintptr_t)p + want > 1ul << PM_ADDRESS_BITS || !pm_chunk_table_cover((uintptr_t)p, want)) {
        pm_os_unmap(p, want);
        return 0;
    }
    mapped_chunks += want / PM_CHUNK;
    note_peak();
    pm_count(PM_EV_reserves);
    put_locked((uintptr_t)p, want / PM_CHUNK, 0);
    return 1;
}

static void tag_taken(uintptr_t s, size_t chunks, uint32_t tag, uint32_t link)
{
    if (chunks > 1)
        pm_chunk_set(s + PM_CHUNK, (chunks - 1) * PM_CHUNK, PM_TAG_HUGE_BODY, (uint32_t)chunks);
    pm_chunk_set(s, PM_CHUNK, tag, link);
}

/* A piece of a committed free run on its way into a run just taken. */
struct move {
    uintptr_t from, to;
    size_t chunks;
    size_t dirty; /* bytes of the piece that may hold committed pages */
};

/* A take lends pages from at most this many committed runs. */
#define MAX_MOVES 16

/* With the lock held, for `chunks` chunks from `to` on of a run just cut
 * from a clean one (they hold no pages yet): cuts pieces out of the
 * committed free runs, largest class first, to move into them, so that a
 * run bigger than every committed one still reuses their pages rather
 * than fault in and zero fresh ones.  Each piece is forgotten at once (its
 * range is unmapped when its pages move); the caller moves them after the
 * lock is dropped.  Returns the number of pieces in moves. */
static unsigned gather(uintptr_t to, size_t chunks, struct move *moves)
{
    unsigned n = 0;
    for (size_t done = 0; done < chunks && nonempty[COMMITTED] && n < MAX_MOVES; n++) {
        struct free_run *r = lists[COMMITTED][63 - __builtin_clzll(nonempty[COMMITTED])];
        uintptr_t from = addr(r);
        size_t piece = at_most(r->chunks, chunks - done);
        unlink_run(r);
        moves[n] = (struct move){from, to + done * PM_CHUNK, piece, cut(r, from, piece)};
        forget_locked(from, piece);
        done += piece;
    }
    return n;
}

/* Moves the pages of `chunks` chunks from `from` to `to`, unmapping the
 * source: in one call, else a chunk at a time (the range may span mappings
 * the kernel keeps apart), else, for a chunk the kernel will not move,
 * copying it when `copy`. */
static void move_chunks(char *from, size_t chunks, char *to, int copy)
{
    if (pm_os_move(from, chunks * PM_CHUNK, to))
        return;
    for (size_t i = 0; i < chunks; i++) {
        char *f = from + i * PM_CHUNK;
        if (!pm_os_move(f, PM_CHUNK, to + i * PM_CHUNK)) {
            if (copy)
                memcpy(to + i * PM_CHUNK, f, PM_CHUNK);
            pm_os_unmap(f, PM_CHUNK);
        }
    }
}

/* The pool's validator runs on one take in CHECK_EVERY (os.h): a program
 * of huge objects seldom refills a thread cache, where the checks of
 * every structure run (thread_cache.c). */
#define CHECK_EVERY 64
static void check_sometimes(void)
{
    static unsigned long takes;
    if (pm_check_due(&takes, CHECK_EVERY))
        pm_pool_check();
}

/* pm_pool_take, for a caller that fills the first `filled` chunks of the
 * run itself: those get no pages from other runs.  Only when `may_reserve`
 * is more address space mapped (or free runs unmapped to make room). */
static void *take(size_t chunks, size_t align, uint32_t tag, uint32_t link, size_t *dirty,
                  size_t filled, int may_reserve)
{
    if (chunks > (1ul << PM_ADDRESS_BITS) / PM_CHUNK)
        return 0;
    size_t need = chunks + (align - PM_CHUNK) / PM_CHUNK;
    pm_lock_take(&lock);
    struct free_run *r = best_fit(need);
    if (!r && !may_reserve) {
        pm_lock_drop(&lock);
        return 0;
    }
    if (!r) {
        unmap_clean_locked();
        if (reserve(need * PM_CHUNK))
            r = best_fit(need);
    }
    if (!r) {
        pm_lock_drop(&lock);
        while (pm_pool_purge_one(0, 1))
            ;
        pm_lock_take(&lock);
        if (reserve(need * PM_CHUNK))
            r = best_fit(need);
    }
    if (!r) {
        pm_lock_drop(&lock);
        return 0;
    }
    unlink_run(r);
    uintptr_t s = (addr(r) + align - 1) & ~(align - 1);
    *dirty = cut(r, s, chunks);
    tag_taken(s, chunks, tag, link);
    struct move moves[MAX_MOVES];
    unsigned n = *dirty ? 0 : gather(s + filled * PM_CHUNK, chunks - filled, moves);
    pm_lock_drop(&lock);
    for (unsigned i = 0; i < n; i++) {
        move_chunks((char *)moves[i].from, moves[i].chunks, (char *)moves[i].to, 0);
        *dirty += moves[i].dirty;
    }
    check_sometimes();
    return (void *)s;
}

void *pm_pool_take(size_t chunks, size_t align, uint32_t tag, uint32_t link, size_t *dirty)
{
    return take(chunks, align, tag, link, dirty, 0, 1);
}

/* Partial chunks lie apart from the rest, in a region that starts
 * REGION_GAP below the lowest address the kernel had handed out when the
 * first was placed, and goes down from there (`below`, 0 once the region
 * has run out): the kernel hands out address space from the top of the
 * highest gap that fits, so the unmapped rests of partial chunks, gaps
 * themselves, get nothing of others' until the gap above the region is
 * full.  A place a partial chunk gave back is tried first (`freed`). */
#define REGION_GAP (4ul << 30)
#define REGION_TRIES 4
static uintptr_t below, freed;
static int region_placed;

/* With the lock held: the first place the region offers where `head`
 * bytes from its start and `len` from `at` are free, else any the kernel
 * gives; those bytes mapped there.  NULL when none. */
static char *place_part(size_t head, size_t at, size_t len)
{
    if (!region_placed) {
        region_placed = 1;
        char *q = pm_os_map(pm_os_page(), pm_os_page());
        uintptr_t low = (uintptr_t)q & ~(PM_CHUNK - 1);
        below = q && low > 2 * REGION_GAP ? low - REGION_GAP : 0;
        if (q)
            pm_os_unmap(q, pm_os_page());
    }
    uintptr_t s = freed;
    freed = 0;
    for (int i = 0; i <= REGION_TRIES; i++) {
        if (s && pm_os_map_at((void *)s, head)) {
            if (!len || pm_os_map_at((char *)s + at, len))
                return (char *)s;
            pm_os_unmap((void *)s, head);
        }
        s = below > REGION_GAP ? below : 0;
        below = s ? below - PM_CHUNK : 0;
    }
    char *p = pm_os_map(head, PM_CHUNK);
    if (p && len && !pm_os_map_at(p + at, len)) {
        pm_os_unmap(p, head);
        p = 0;
    }
    return p;
}

/* Unmaps the pieces of a partial chunk at base. */
static void unmap_pieces(char *base, size_t head, size_t at, size_t len)
{
    pm_os_unmap(base, head);
    if (len)
        pm_os_unmap(base + at, len);
}

void *pm_pool_take_chunk(size_t head, size_t at, size_t len, int may_reserve, uint32_t tag, uint32_t link,
                         size_t *dirty, int *partial)
{
    *partial = 0;
    void *p = take(1, PM_CHUNK, tag, link, dirty, 0, may_reserve);
    if (p)
        return p;
    /* Where the pieces cannot be placed apart (valgrind keeps ranges of
     * its own next to what it hands out), a whole chunk is mapped.  A
     * partial chunk whose unmapped rest holds a guarded object goes, and
     * another place is tried: the table would take that object for the
     * chunk's.  It is tagged before the guard is asked (guard.c,
     * among_bins). */
    pm_lock_take(&lock);
    char *s;
    for (int tries = 0;; tries++) {
        s = tries <= REGION_TRIES ? place_part(head, at, len) : 0;
        *partial = s != 0;
        if (!s)
            s = pm_os_map(PM_CHUNK, PM_CHUNK);
        if (s && ((uintptr_t)s + PM_CHUNK > 1ul << PM_ADDRESS_BITS || !pm_chunk_table_cover((uintptr_t)s, PM_CHUNK))) {
            if (*partial)
                unmap_pieces(s, head, at, len);
            else
                pm_os_unmap(s, PM_CHUNK);
            s = 0;
        }
        if (!s)
            break;
        tag_taken((uintptr_t)s, 1, tag, link);
        if (!*partial || !pm_guard_overlaps((uintptr_t)s, PM_CHUNK))
            break;
        pm_chunk_set((uintptr_t)s, PM_CHUNK, PM_TAG_GONE, 0);
        unmap_pieces(s, head, at, len);
    }
    if (s) {
        mapped_chunks++;
        tails += *partial ? PM_CHUNK - head - len : 0;
        note_peak();
        pm_count(PM_EV_reserves);
    } else {
        refused_at = held();
    }
    pm_lock_drop(&lock);
    *dirty = 0;
    return s;
}

int pm_pool_grow_chunk(void *at, size_t len)
{
    int ok = pm_os_map_at(at, len);
    pm_lock_take(&lock);
    if (ok) {
        tails -= len;
        note_peak();
    } else {
        refused_at = held();
    }
    pm_lock_drop(&lock);
    return ok;
}

size_t pm_pool_ahead(void)
{
    pm_lock_take(&lock);
    size_t room = !refused_at ? SIZE_MAX : refused_at > held() ? refused_at - held() : 0;
    pm_lock_drop(&lock);
    return room;
}

void pm_pool_unmap_part(void *at, size_t len)
{
    pm_lock_take(&lock);
    tails += len;
    refused_at -= refused_at < len ? refused_at : len;
    pm_lock_drop(&lock);
    pm_os_unmap(at, len);
}

void pm_pool_put_part(void *base, size_t head, size_t at, size_t len)
{
    pm_lock_take(&lock);
    forget_locked((uintptr_t)base, 1);
    tails -= PM_CHUNK - head - len;
    unmap_pieces(base, head, at, len);
    freed = (uintptr_t)base;
    pm_lock_drop(&lock);
    pm_count(PM_EV_unmaps);
}

int pm_pool_extend(uintptr_t end, size_t chunks, size_t *dirty)
{
    pm_lock_take(&lock);
    struct free_run *r = run_at(pm_chunk_entry_of(end));
    if (!r || addr(r) != end || r->chunks < chunks) {
        pm_lock_drop(&lock);
        return 0;
    }
    unlink_run(r);
    *dirty = cut(r, end, chunks);
    pm_chunk_set(end, chunks * PM_CHUNK, PM_TAG_HUGE_BODY, 0);
    pm_lock_drop(&lock);
    return 1;
}

void *pm_pool_move(void *base, size_t chunks, size_t grown, uint32_t tag, uint32_t link)
{
    size_t dirty;
    char *to = take(grown, PM_CHUNK, tag, link, &dirty, chunks, 1);
    if (!to)
        return 0;
    pm_lock_take(&lock);
    forget_locked((uintptr_t)base, chunks);
    pm_lock_drop(&lock);
    move_chunks(base, chunks, to, 1);
    return to;
}

/* With the lock held, before a run's range is unmapped: the run reads
 * "gone" first, so a freed pointer into it is still reported as freed, and
 * the table claims no range the kernel may hand out again. */
static void forget_locked(uintptr_t base, size_t chunks)
{
    pm_chunk_set(base, chunks * PM_CHUNK, PM_TAG_GONE, 0);
    mapped_chunks -= chunks;
}

/* With the lock held, which it drops: unmaps up to PURGE_CHUNKS chunks
 * from the end of r, if there is an r.  1 if it unmapped any. */
static int purge_run(struct free_run *r)
{
    if (!r) {
        pm_lock_drop(&lock);
        return 0;
    }
    unlink_run(r);
    size_t chunks = r->chunks < PURGE_CHUNKS ? r->chunks : PURGE_CHUNKS;
    uintptr_t base = addr(r) + (r->chunks - chunks) * PM_CHUNK;
    if (chunks < r->chunks)
        file_run(r, addr(r), r->chunks - chunks, r->dirty, r->since);
    else
        drop_record(r);
    forget_locked(base, chunks);
    pm_lock_drop(&lock);
    pm_os_unmap((void *)base, chunks * PM_CHUNK);
    pm_count(PM_EV_unmaps);
    return 1;
}

int pm_pool_purge_one(uint32_t before, int force)
{
    pm_lock_take(&lock);
    struct free_run *r = oldest;
    return purge_run(r && (force || !pm_os_earlier(before, r->since)) ? r : 0);
}

int pm_pool_purge_committed(void)
{
    pm_lock_take(&lock);
    struct free_run *r = oldest;
    while (r && !r->dirty)
        r = r->newer;
    return purge_run(r);
}

void pm_pool_census(struct pm_pool_census *out)
{
    pm_lock_take(&lock);
    out->mapped = mapped_chunks;
    out->bytes = held();
    out->peak = peak_bytes;
    out->free = free_chunks;
    out->runs = nruns;
    out->metadata = sizeof blocks + nblocks * BLOCK_BYTES;
    pm_lock_drop(&lock);
}

void pm_pool_check(void)
{
    pm_lock_take(&lock);
    size_t chunks = 0, clean = 0, runs = 0;
    for (struct free_run *r = oldest, *prev = 0; r; prev = r, r = r->newer) {
        uintptr_t base = addr(r), last = base + (r->chunks - 1) * PM_CHUNK;
        if (r->older != prev)
            pm_fatal("pool check", (void *)base, "age list broken");
        if (prev && pm_os_earlier(r->since, prev->since))
            pm_fatal("pool check", (void *)base, "age list out of order");
        if (!(nonempty[kind_of(r)] >> class_of(r->chunks) & 1))
            pm_fatal("pool check", (void *)base, "run filed in the wrong class");
        if (r->dirty > r->chunks * PM_CHUNK)
            pm_fatal("pool check", (void *)base, "more dirty bytes than the run holds");
        if (!r->chunks || run_at(pm_chunk_at(base)) != r || run_at(pm_chunk_at(last)) != r)
            pm_fatal("pool check", (void *)base, "boundary tags do not name the run's record");
        for (uintptr_t a = base + PM_CHUNK; a < last; a += PM_CHUNK)
            if (pm_chunk_at(a)->tag != PM_TAG_FREE || pm_chunk_at(a)->link)
                pm_fatal("pool check", (void *)a, "interior chunk not marked free");
        if (joinable(base ? pm_chunk_entry_of(base - 1) : 0, r->dirty) ||
            joinable(pm_chunk_entry_of(last + PM_CHUNK), r->dirty))
            pm_fatal("pool check", r, "free neighbours of one kind not coalesced");
        chunks += r->chunks;
        clean += r->dirty ? 0 : r->chunks;
        runs++;
    }
    for (unsigned k = 0; k < KINDS; k++)
        for (unsigned c = 0; c < CLASSES; c++)
            if (!lists[k][c] != !(nonempty[k] >> c & 1))
                pm_fatal("pool check", lists[k][c], "class bitmap disagrees with its list");
    if (chunks != free_chunks || clean != clean_chunks || runs != nruns || free_chunks > mapped_chunks ||
        tails > mapped_chunks * PM_CHUNK)
        pm_fatal("pool check", 0, "counts disagree with the runs");
    size_t spares = 0;
    for (const struct free_run *r = spare; r; r = r->next)
        spares++;
    size_t handed = nblocks ? (nblocks - 1) * PER_BLOCK + carved : 0;
    if (carved > PER_BLOCK || runs + spares != handed)
        pm_fatal("pool check", spare, "records handed out are not the runs' and the spare ones");
    /* Only the pool writes tags that name a record, and a range leaving it
     * (taken, moved or unmapped) is tagged anew: every such tag is the
     * first or last chunk of the run its record describes. */
    for (size_t t = 0; t < 1ul << PM_TOP_BITS; t++) {
        if (!pm_chunk_table.top[t])
            continue;
        for (size_t i = 0; i < 1ul << PM_LEAF_BITS; i++) {
            uintptr_t a = (t << PM_LEAF_SHIFT) + i * PM_CHUNK;
            struct pm_chunk_entry v = pm_chunk_read(pm_chunk_at(a));
            if (v.tag != PM_TAG_FREE || !v.link)
                continue;
            const struct free_run *r = v.link <= handed ? record(v.link) : 0;
            if (!r || !r->chunks || (addr(r) != a && addr(r) + (r->chunks - 1) * PM_CHUNK != a))
                pm_fatal("pool check", (void *)a, "a boundary tag names no run it bounds");
        }
    }
    pm_lock_drop(&lock);
}

void pm_pool_prefork(void)
{
    pm_lock_take(&lock);
}

void pm_pool_postfork(void)
{
    pm_lock_drop(&lock);
}
