/* SPDX-License-Identifier: MIT */
#include "folio.h"
#include "access_fault.h"
#include "canary.h"
#include "chunk_pool.h"
#include "chunk_table.h"
#include "counters.h"
#include "footprint.h"
#include "free_object.h"
#include "lock.h"
#include "options.h"
#include "os.h"
#include "sizeclass.h"

/* One record per folio, in its chunk's header pages. */
struct pm_folio {
    struct pm_folio *next, *prev; /* in the list its state names */
    uint32_t nfree;
    uint32_t state;               /* enum folio_state */
    uint32_t empty_since;         /* ms, while DIRTY */
    uint32_t unused;
    union {
        uint64_t free_bits[PM_MAX_FOLIO_OBJS / 64];
        /* A folio of at most 64 objects uses one word of free bits; the
         * next two mark objects for giving back the pages inside it
         * (pm_folio_release_pages): those free when it was last looked
         * at, and those whose pages went back then.  released is within
         * seen, seen within the free bits: a hand-out clears all three. */
        struct {
            uint64_t free_word;
            uint64_t seen;
            uint64_t released;
        };
    };
};
_Static_assert(sizeof(struct pm_folio) <= PM_FOLIO_RECORD, "folio record too big");

enum folio_state {
    TAKEN,   /* on no list: full, or being worked on outside the lock */
    PARTIAL, /* on its bin's partial list for nfree (list_index) */
    DIRTY,   /* empty, still committed, on the dirty list */
    CLEAN,   /* empty and uncommitted, on the clean list */
    RELEASING, /* on no list while pages inside it go back: frees count
                  in nfree, and the releaser files it again */
};

/* A chunk belongs to its bin while any of its folios holds an object, or
 * while it is the chunk some lane carves from (wild); otherwise it goes
 * back to the chunk pool, with its empty folios taken off the bin's lists.
 * The pool's record of a free chunk overwrites this header; a chunk taken
 * from the pool starts it afresh. */
struct pm_chunk_header {
    uint32_t carved;   /* folios initialised so far, from the bin's
                          first_folio on; the rest are untouched */
    uint32_t used;     /* carved folios that are not empty */
    uint32_t wild;     /* 1 while some lane carves from it */
    uint32_t purging;  /* empty folios on no list while their pages go back */
    size_t dirty_tail; /* bytes outside the carved folios that may be
                          committed */
    /* What is mapped of the chunk: [0, low) and [from, to), from >= low.
     * A whole chunk: low PM_CHUNK.  A partial one (chunk_pool.h): the
     * header pages, or more, and, while the pieces do not meet, [from,
     * to) from the first folio carved on; from and to are PM_CHUNK once
     * they meet, or when the first folio is close enough to the header
     * that one piece holds both. */
    size_t low, from, to;
    char pad[512 - 48];
    struct pm_folio folios[PM_MAX_FOLIOS];
};
_Static_assert(sizeof(struct pm_chunk_header) <= PM_DATA_START, "chunk header too big");

struct list {
    struct pm_folio *first, *last;
};

/* carved_folios and taken share the line of nonempty, which each
 * allocation under the lock reads and most frees write.  The partial
 * lists live apart (partial_of). */
struct pm_bin_state {
    uint64_t nonempty;                         /* bit k: partial list k has a folio */
    size_t carved_folios;
    size_t carved_objects;                     /* the objects of those folios */
    size_t taken;                              /* objects not free in their folios,
                                                  written under the lock and read
                                                  without it too (pm_folio_out) */
    struct list dirty;                         /* newest first */
    struct list clean;
    struct pm_chunk_header *wild[PM_CARVE_LANES]; /* chunks with folios not yet carved */
    size_t chunks;
    size_t used_folios; /* folios holding objects */
    size_t used_bytes;  /* what their spans (folio_span) may commit */
    size_t dirty_bytes; /* this bin's share of the footprint's dirty bytes */
    long moved_used, moved_dirty; /* this hold's changes of the three, */
    int32_t moved_folios;         /* for bin_unlock */
    uint8_t release_list; /* the partial list the next release visit
                             starts at (0: the emptiest) */
    uint8_t release_log;  /* log2 of the visits from one look to the next */
    uint8_t release_wait; /* visits left before the next look */
    uint8_t refaulted;    /* 1 once an object whose pages went back is
                             handed out again, until the next visit */
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct pm_bin_state) == 4 * PM_LINE, "a bin's state fills four lines");

static struct pm_bin_state bins[PM_NBINS];

/* Each bin's partial folios, by free count: list_index(b, k) holds the
 * folios with k free objects, 1 <= k < objects per folio.  The lists of
 * all bins lie packed, each bin's as many as its folios can use
 * (generated), so that a bin of few objects per folio takes a line or
 * two and a program that uses a few bins touches a few pages of them. */
static const uint16_t partial_at[PM_NBINS] = PM_PARTIAL_AT_INIT;
static struct list partial_lists[PM_PARTIAL_LISTS] __attribute__((aligned(64)));

static struct list *partial_of(const struct pm_bin_state *s)
{
    return &partial_lists[partial_at[s - bins]];
}

/* log2 of PM_MAX_PARTIAL_LISTS: one bit of nonempty a list. */
#define LISTS_LOG 6
_Static_assert(1 << LISTS_LOG == PM_MAX_PARTIAL_LISTS, "one nonempty bit a list");

/* The partial list of bin b for folios of nfree free objects: nfree itself
 * where a folio holds at most PM_MAX_PARTIAL_LISTS objects, else nfree's
 * range of counts, so allocation takes a folio at most a range's width
 * emptier than the fullest. */
static unsigned list_index(const struct pm_bin *b, unsigned nfree)
{
    return nfree >> (b->folio_log > LISTS_LOG ? b->folio_log - LISTS_LOG : 0);
}

/* The bins' locks lie together, one a line, apart from the states they
 * protect: fork holds every lock, and the first write to a page after fork
 * copies it in parent and child alike, each copy a fault and a TLB
 * shootdown, so the fewer pages the locks span, the fewer copies. */
static pm_line_lock bin_locks[PM_NBINS];

static pm_lock *bin_lock(unsigned bin)
{
    return &bin_locks[bin].lock;
}

/* Words of free bits a folio of b uses. */
static unsigned words_of(const struct pm_bin *b)
{
    return b->folio_log > 6 ? 1u << (b->folio_log - 6) : 1;
}

/* Whether b's folios in use give back pages inside them: folios of
 * several objects, at most 64, over several pages. */
static int releases_pages(const struct pm_bin *b)
{
    return words_of(b) == 1 && b->folio_log && pm_folio_bytes(b) > PM_PAGE;
}

/* 1 while such folios may hold free objects whose pages have not gone
 * back: set by frees into them, cleared by a release that leaves none. */
static uint32_t release_wanted;

static inline struct pm_chunk_header *chunk_of(const void *p)
{
    return (struct pm_chunk_header *)((uintptr_t)p & ~(PM_CHUNK - 1));
}

static inline char *folio_data(const struct pm_bin *b, const struct pm_folio *f)
{
    struct pm_chunk_header *c = chunk_of(f);
    return (char *)c + PM_DATA_START + (size_t)(f - c->folios) * pm_folio_bytes(b);
}

static void push(struct list *l, struct pm_folio *f, enum folio_state state)
{
    f->prev = 0;
    f->next = l->first;
    if (f->next)
        f->next->prev = f;
    else
        l->last = f;
    l->first = f;
    f->state = state;
}

static void push_last(struct list *l, struct pm_folio *f, enum folio_state state)
{
    f->next = 0;
    f->prev = l->last;
    if (f->prev)
        f->prev->next = f;
    else
        l->first = f;
    l->last = f;
    f->state = state;
}

static void unlink_from(struct list *l, struct pm_folio *f)
{
    if (f->prev)
        f->prev->next = f->next;
    else
        l->first = f->next;
    if (f->next)
        f->next->prev = f->prev;
    else
        l->last = f->prev;
    f->state = TAKEN;
}

/* Bin b may have a dirty folio.  Purging looks here first, so that it
 * does not write (and so commit) the state of every bin. */
static struct pm_bin_set dirty_bins;

static int may_be_dirty(unsigned bin)
{
    return (__atomic_load_n(&dirty_bins.w[bin / 64], __ATOMIC_RELAXED) & pm_bin_bit(bin)) != 0;
}

static void dirty_push(struct pm_bin_state *s, struct pm_folio *f)
{
    push(&s->dirty, f, DIRTY);
    unsigned bin = (unsigned)(s - bins);
    __atomic_fetch_or(&dirty_bins.w[bin / 64], pm_bin_bit(bin), __ATOMIC_RELAXED);
}

static void dirty_unlink(struct pm_bin_state *s, struct pm_folio *f)
{
    unlink_from(&s->dirty, f);
    unsigned bin = (unsigned)(s - bins);
    if (!s->dirty.first)
        __atomic_fetch_and(&dirty_bins.w[bin / 64], ~pm_bin_bit(bin), __ATOMIC_RELAXED);
}

/* f joins the partial list of its free count, at its start or, when
 * last, at its end. */
static void partial_push(struct pm_bin_state *s, const struct pm_bin *b, struct pm_folio *f, int last)
{
    unsigned k = list_index(b, f->nfree);
    (last ? push_last : push)(&partial_of(s)[k], f, PARTIAL);
    s->nonempty |= 1ull << k;
}

static void partial_remove(struct pm_bin_state *s, const struct pm_bin *b, struct pm_folio *f)
{
    unsigned k = list_index(b, f->nfree);
    struct list *l = &partial_of(s)[k];
    unlink_from(l, f);
    if (!l->first)
        s->nonempty &= ~(1ull << k);
}

/* Dirty bytes of s changed, under the bin lock: the bin's count now, the
 * footprint's at the hold's end (bin_unlock). */
static void bin_dirty(struct pm_bin_state *s, long bytes)
{
    s->dirty_bytes += (size_t)bytes;
    s->moved_dirty += bytes;
}

/* A folio of s, whose span is `bytes`, started (n = 1) or stopped
 * (n = -1) holding objects, under the bin lock: the bin's counts now, the
 * footprint's and the statistics' at the hold's end (bin_unlock). */
static void bin_used(struct pm_bin_state *s, long n, size_t bytes)
{
    s->used_folios += (size_t)n;
    s->used_bytes += (size_t)n * bytes;
    s->moved_used += n * (long)bytes;
    s->moved_folios += (int32_t)n;
}

/* Moves the footprint's and the statistics' shared counts by what the
 * hold changed, once each, then drops bin's lock: a hold that takes or
 * empties several folios makes three atomic adds on lines every CPU
 * writes, not three a folio.  Before the drop, so that a bin's moves keep
 * its lock's order and no count falls below zero between them.  Every
 * hold of a bin lock ends here; one that moved nothing writes nothing,
 * so the state of a bin never used stays unwritten when a census, a
 * check or fork takes every lock.  The moves net out within a hold, so a
 * peak of in-use bytes is one that a hold left, not one inside it. */
static void bin_unlock(unsigned bin)
{
    struct pm_bin_state *s = &bins[bin];
    long used = s->moved_used, dirty = s->moved_dirty, folios = s->moved_folios;
    if (used | dirty | folios) {
        s->moved_used = s->moved_dirty = s->moved_folios = 0;
        /* A folio moves between in use and dirty: the count it leaves
         * first, so that their sum never reads more than it holds. */
        if (dirty < 0)
            pm_fp_dirty(dirty);
        if (used)
            pm_fp_inuse(used);
        if (dirty > 0)
            pm_fp_dirty(dirty);
        if (folios)
            pm_stat_add(&pm_stats_global.folios_in_use, folios);
    }
    pm_lock_drop(bin_lock(bin));
}

#define DENSE_CHUNKS 8

/* The folio record carved k-th in c: a chunk carves from its bin's first
 * folio on, wrapping at the end, so that the folios of different bins
 * that a few objects use lie apart in the caches (gen_sizeclasses.c). */
static struct pm_folio *carved_folio(const struct pm_bin *b, struct pm_chunk_header *c, uint32_t k)
{
    return &c->folios[(b->first_folio + k) % pm_folios_per_chunk(b)];
}

static size_t pages_up(size_t bytes)
{
    return (bytes + pm_os_page() - 1) & ~(pm_os_page() - 1);
}

/* The end of the last folio of a chunk of b, in whole pages of the
 * kernel: what lies after it is never used. */
static size_t last_end(const struct pm_bin *b)
{
    return pages_up(PM_DATA_START + (size_t)b->objs_per_chunk * b->size);
}

/* The start of folio i of a chunk of b, and its end: the next folio's
 * start, or for the last folio last_end.  Where the chunk's data is no
 * whole number of folios, the last one holds the objects that fit after
 * the others (the generator's objs_per_chunk), fewer than a folio's. */
static size_t folio_start(const struct pm_bin *b, uint32_t i)
{
    return PM_DATA_START + i * pm_folio_bytes(b);
}

static size_t folio_stop(const struct pm_bin *b, uint32_t i)
{
    size_t end = folio_start(b, i + 1), last = last_end(b);
    return end < last ? end : last;
}

/* The end of the folio carved k-th in a chunk of b, from the chunk's
 * start. */
static size_t folio_end(const struct pm_bin *b, uint32_t k)
{
    return folio_stop(b, (b->first_folio + k) % pm_folios_per_chunk(b));
}

/* Folio f's bytes that may be committed (its span), and its objects. */
static size_t folio_span(const struct pm_bin *b, const struct pm_folio *f)
{
    uint32_t i = (uint32_t)(f - chunk_of(f)->folios);
    return folio_stop(b, i) - folio_start(b, i);
}

static unsigned folio_objects(const struct pm_bin *b, const struct pm_folio *f)
{
    uint32_t before = (uint32_t)(f - chunk_of(f)->folios) << b->folio_log, whole = 1u << b->folio_log;
    return b->objs_per_chunk - before < whole ? b->objs_per_chunk - before : whole;
}

/* The bits of word w that stand for objects of a folio of n. */
static uint64_t object_bits(unsigned n, unsigned w)
{
    unsigned in_word = n > w * 64 ? n - w * 64 : 0;
    return in_word >= 64 ? ~0ull : (1ull << in_word) - 1;
}

/* Sets what is mapped of c to [0, low) and [from, to), one piece when
 * they meet. */
static void set_pieces(struct pm_chunk_header *c, size_t low, size_t from, size_t to)
{
    if (from <= low) {
        low = to > low ? to : low;
        from = to = PM_CHUNK;
    }
    c->low = low;
    c->from = from;
    c->to = to;
}

/* The least a chunk of b with its first k folios carved (k >= 1) maps,
 * in whole pages of the kernel: the header pages its folios' records use,
 * and the folios carved, from the first on to the last, then from the
 * header's end on.  Its pieces go to *low, *from and *to as in
 * set_pieces. */
static void least_pieces(const struct pm_bin *b, uint32_t k, size_t *low, size_t *from, size_t *to)
{
    uint32_t n = pm_folios_per_chunk(b), past = b->first_folio + k > n ? b->first_folio + k - n : 0;
    size_t header = pages_up(offsetof(struct pm_chunk_header, folios) + n * sizeof(struct pm_folio));
    *low = past ? pages_up(folio_start(b, past)) : header;
    *from = folio_start(b, b->first_folio) & ~(pm_os_page() - 1);
    *to = past ? last_end(b) : pages_up(folio_end(b, k - 1));
    if (*from <= *low) {
        *low = *to > *low ? *to : *low;
        *from = *to = PM_CHUNK;
    }
}

/* Maps c from *end on, up to `need` at least and `most` at most: as many
 * bytes as c has mapped, so that a few calls map the chunk of a bin that
 * fills it (fewer when the pool says so), or, when the kernel refuses
 * that, up to `need` alone. */
static int grow(struct pm_chunk_header *c, size_t *end, size_t need, size_t most)
{
    size_t ahead = c->low + (c->to - c->from), room = pm_pool_ahead();
    size_t to = *end + (ahead < room ? ahead : room);
    to = to < most ? to : most;
    to = to > need ? to : need;
    if (!pm_pool_grow_chunk((char *)c + *end, to - *end) &&
        (to == need || !pm_pool_grow_chunk((char *)c + *end, (to = need) - *end)))
        return 0;
    pm_os_hugepage((char *)c + *end, to - *end, 0);
    *end = to;
    return 1;
}

/* Whether the folio c carves next is mapped, mapping more of c if not: the
 * end of the piece that holds the folios carved last grows, up to where
 * the next piece or the last folio starts, and joins the next piece when
 * it reaches it. */
static int reach(const struct pm_bin *b, struct pm_chunk_header *c)
{
    size_t end = folio_end(b, c->carved), last = last_end(b);
    size_t start = folio_start(b, (b->first_folio + c->carved) % pm_folios_per_chunk(b));
    if (end <= c->low || (start >= c->from && end <= c->to))
        return 1;
    if (start >= c->from)
        return grow(c, &c->to, pages_up(end), last);
    size_t most = c->from < last ? c->from : last;
    if (!grow(c, &c->low, pages_up(end) < most ? pages_up(end) : most, most))
        return 0;
    set_pieces(c, c->low, c->from, c->to);
    return 1;
}

/* Unmaps [lo, hi) of c but what lies in [0, low) or [from, to); 1 if
 * that was anything. */
static int unmap_outside(struct pm_chunk_header *c, size_t lo, size_t hi, size_t low, size_t from, size_t to)
{
    int any = 0;
    lo = lo > low ? lo : low;
    size_t cut[2][2] = {{lo, hi < from ? hi : from}, {lo > to ? lo : to, hi}};
    for (int i = 0; i < 2; i++)
        if (cut[i][0] < cut[i][1]) {
            pm_pool_unmap_part((char *)c + cut[i][0], cut[i][1] - cut[i][0]);
            any = 1;
        }
    return any;
}

/* Unmaps what c has mapped beyond the least its first k folios need
 * (least_pieces): address space no folio holds, mapped ahead of the
 * carving, or a whole chunk's, or pages of its header.  1 if there was
 * any. */
static int trim(const struct pm_bin *b, struct pm_chunk_header *c, uint32_t k)
{
    size_t low, from, to;
    least_pieces(b, k, &low, &from, &to);
    int any = unmap_outside(c, 0, c->low, low, from, to);
    if (c->from < PM_CHUNK)
        any |= unmap_outside(c, c->from, c->to, low, from, to);
    set_pieces(c, low, from, to);
    return any;
}

static struct pm_folio *carve(struct pm_bin_state *s, const struct pm_bin *b, unsigned bin)
{
    unsigned lane = pm_folio_lane();
    struct pm_chunk_header **wild = &s->wild[lane], *c = *wild;
    if (!c || c->carved == pm_folios_per_chunk(b) || !reach(b, c)) {
        /* A bin whose objects not free fill DENSE_CHUNKS chunks is dense
         * enough that a new chunk is worth one huge page (one fault, one
         * TLB entry) and a reservation of address space; a sparser one,
         * however many chunks it holds, would commit a whole chunk for a
         * few objects, and gets a partial chunk unless the pool has a
         * whole one free.  PRIMALLOC_HUGE_PAGES decides the huge page; a
         * chunk that is to be one is whole, for `always` the sparse bins'
         * too. */
        int dense = s->taken >= DENSE_CHUNKS * (size_t)b->objs_per_chunk, partial;
        int huge = pm_huge_pages_for(dense), reserve = (dense || huge) && pm_pool_ahead() >= PM_CHUNK;
        size_t dirty, low, from, to;
        least_pieces(b, 1, &low, &from, &to);
        struct pm_chunk_header *fresh = pm_pool_take_chunk(low, from, to - from, reserve,
                                                           PM_BIN_TAG(bin), lane, &dirty, &partial);
        if (!fresh)
            return 0;
        pm_access_fault_watch();
        /* Carving happens only when the bin has no empty folio, so every
         * folio of the chunk it leaves holds objects. */
        PM_ASSERT(!c || c->used + c->purging == c->carved);
        if (c)
            c->wild = 0;
        if (partial) {
            pm_os_hugepage(fresh, low, 0);
            pm_os_hugepage((char *)fresh + from, to - from, 0);
        } else {
            pm_os_hugepage(fresh, PM_CHUNK, huge);
        }
        *wild = c = fresh;
        c->carved = c->used = c->purging = 0;
        c->wild = 1;
        c->dirty_tail = dirty;
        set_pieces(c, partial ? low : PM_CHUNK, partial ? from : PM_CHUNK, partial ? to : PM_CHUNK);
        /* A whole chunk from the pool keeps only what a partial one would
         * map where the kernel has refused address space lately, and
         * otherwise all but the end after its last folio, unless it is to
         * be one huge page. */
        if (!partial && pm_pool_ahead() < PM_CHUNK)
            trim(b, c, 1);
        else if (!partial && !huge && unmap_outside(c, 0, PM_CHUNK, last_end(b), PM_CHUNK, PM_CHUNK))
            set_pieces(c, last_end(b), PM_CHUNK, PM_CHUNK);
        bin_dirty(s, (long)dirty);
        s->chunks++;
        pm_stat_add(&pm_stats_global.chunks, 1);
    }
    struct pm_folio *f = carved_folio(b, c, c->carved++);
    size_t span = folio_span(b, f), reused = c->dirty_tail < span ? c->dirty_tail : span;
    c->dirty_tail -= reused;
    bin_dirty(s, -(long)reused);
    unsigned n = folio_objects(b, f);
    /* A chunk from the pool may hold its last owner's bytes in the
     * record too: the state is set here, for a folio handed out whole
     * goes on no list that would set it. */
    f->state = TAKEN;
    f->nfree = n;
    for (unsigned w = 0; w < words_of(b); w++)
        f->free_bits[w] = object_bits(n, w);
    s->carved_folios++;
    s->carved_objects += n;
    return f;
}

/* The folio to allocate from: the fullest partial one (first set bit:
 * fewest free, to within list_index's range), else an empty one
 * (committed first), else a new one.  *grew says whether committed
 * memory may grow. */
static struct pm_folio *take_folio(struct pm_bin_state *s, const struct pm_bin *b, unsigned bin,
                                   int *grew)
{
    struct pm_folio *f;
    if (s->nonempty) {
        f = partial_of(s)[__builtin_ctzll(s->nonempty)].first;
        partial_remove(s, b, f);
        return f;
    }
    f = s->dirty.first;
    if (f) {
        dirty_unlink(s, f);
        bin_dirty(s, -(long)folio_span(b, f));
    } else if ((f = s->clean.first)) {
        unlink_from(&s->clean, f);
        *grew = 1;
    } else if ((f = carve(s, b, bin))) {
        *grew = 1;
    } else {
        return 0;
    }
    if (words_of(b) == 1)
        f->seen = f->released = 0;
    chunk_of(f)->used++;
    bin_used(s, 1, folio_span(b, f));
    return f;
}

/* A chunk to hand back to the pool once the bin lock is dropped. */
struct leaving {
    struct pm_chunk_header *c;
    size_t dirty;
    size_t low, from, to; /* as in its header */
    int carved_all;       /* all its folios were carved */
};

/* With the bin lock held: if chunk c no longer belongs to its bin, takes
 * its empty folios off the bin's lists and returns 1 with what the pool
 * needs in *out.  Its header pages count as dirty from then on.  A chunk a
 * lane carves from stays, unless `unwild`: the free path keeps it, so that
 * a bin holding a few objects does not trade its chunk with the pool, and
 * the purge path lets it go once it is empty. */
static int leave_bin(struct pm_bin_state *s, const struct pm_bin *b, struct pm_chunk_header *c,
                     int unwild, struct leaving *out)
{
    if (c->used || c->purging || (c->wild && !unwild))
        return 0;
    for (unsigned l = 0; c->wild && l < PM_CARVE_LANES; l++)
        if (s->wild[l] == c)
            s->wild[l] = 0;
    size_t dirty = c->dirty_tail;
    for (uint32_t i = 0; i < c->carved; i++) {
        struct pm_folio *f = carved_folio(b, c, i);
        PM_ASSERT(f->state == DIRTY || f->state == CLEAN);
        if (f->state == DIRTY) {
            dirty_unlink(s, f);
            dirty += folio_span(b, f);
        } else {
            unlink_from(&s->clean, f);
        }
        s->carved_objects -= folio_objects(b, f);
    }
    bin_dirty(s, -(long)dirty);
    s->carved_folios -= c->carved;
    s->chunks--;
    pm_stat_add(&pm_stats_global.chunks, -1);
    *out = (struct leaving){c, dirty + PM_DATA_START, c->low, c->from, c->to,
                            c->carved == pm_folios_per_chunk(b)};
    c->carved = 0;
    return 1;
}

/* Maps what l's chunk has not mapped; 1 if all of it is mapped then.
 * Whatever it maps, l says. */
static int complete(struct leaving *l)
{
    char *c = (char *)l->c;
    if (l->from < PM_CHUNK) {
        if (!pm_pool_grow_chunk(c + l->low, l->from - l->low))
            return 0;
        l->low = l->to;
        l->from = l->to = PM_CHUNK;
    }
    if (l->low < PM_CHUNK) {
        if (!pm_pool_grow_chunk(c + l->low, PM_CHUNK - l->low))
            return 0;
        l->low = PM_CHUNK;
    }
    return 1;
}

/* A partial chunk whose folios were all carved lacks only pages no folio
 * uses: it goes back whole when they can be mapped, for the pool serves
 * any bin or huge object with it, unless the kernel has refused address
 * space (pm_pool_ahead): a chunk made whole then would hold more than its
 * folios did.  Another goes back to the kernel. */
static void to_pool(struct leaving *l)
{
    if (l->low == PM_CHUNK || (l->carved_all && pm_pool_ahead() == SIZE_MAX && complete(l)))
        pm_pool_put(l->c, 1, l->dirty);
    else
        pm_pool_put_part(l->c, l->low, l->from, l->to - l->from);
}

/* Uncommits the oldest dirty folio of bin if it became empty before
 * `before` (at any time when force).  Returns 1 if it did. */
static int purge_bin(unsigned bin, uint32_t before, int force)
{
    const struct pm_bin *b = &pm_bins[bin];
    struct pm_bin_state *s = &bins[bin];
    pm_lock_take(bin_lock(bin));
    struct pm_folio *f = s->dirty.last;
    if (!f || (!force && pm_os_earlier(before, f->empty_since))) {
        bin_unlock(bin);
        return 0;
    }
    dirty_unlink(s, f);
    bin_dirty(s, -(long)folio_span(b, f));
    struct pm_chunk_header *c = chunk_of(f);
    c->purging++;
    bin_unlock(bin);
    /* TAKEN: on no list, so no one touches it while its pages go back. */
    pm_os_uncommit(folio_data(b, f), folio_span(b, f));
    pm_count(PM_EV_folio_purges);
    pm_lock_take(bin_lock(bin));
    push(&s->clean, f, CLEAN);
    c->purging--;
    struct leaving l;
    int left = leave_bin(s, b, c, 1, &l);
    bin_unlock(bin);
    if (left)
        to_pool(&l);
    return 1;
}

int pm_folio_purge_one(uint32_t before, int force)
{
    static unsigned rotor;
    unsigned start = __atomic_fetch_add(&rotor, 1, __ATOMIC_RELAXED);
    for (unsigned i = 0; i < PM_NBINS; i++) {
        unsigned bin = (start + i) % PM_NBINS;
        if (may_be_dirty(bin) && purge_bin(bin, before, force))
            return 1;
    }
    return 0;
}

/* trim for every chunk of every bin, found through the chunk table, with
 * its bin's lock held; 1 if any address space went back.  A chunk whose
 * tag still names its bin after it left (leave_bin) has no carved folios
 * and is passed by. */
static int trim_all(void)
{
    int any = 0;
    for (uintptr_t t = 0; t < 1ul << PM_TOP_BITS; t++) {
        if (!__atomic_load_n(&pm_chunk_table.top[t], __ATOMIC_ACQUIRE))
            continue;
        for (uintptr_t a = t << PM_LEAF_SHIFT; a < (t + 1) << PM_LEAF_SHIFT; a += PM_CHUNK) {
            unsigned bin = pm_bin_of_tag(pm_chunk_read(pm_chunk_at(a)).tag);
            if (bin >= PM_NBINS)
                continue;
            struct pm_chunk_header *c = (struct pm_chunk_header *)a;
            pm_lock_take(bin_lock(bin));
            if (pm_bin_of_tag(pm_chunk_read(pm_chunk_at(a)).tag) == bin && c->carved)
                any |= trim(&pm_bins[bin], c, c->carved);
            bin_unlock(bin);
        }
    }
    return any;
}

/* Objects taken under the lock, linked after it is dropped so that page
 * faults on fresh folios happen outside the critical section. */
struct claim {
    char *base;    /* address of the object for bit 0 of mask */
    uint64_t mask; /* objects taken */
};
#define MAX_CLAIMS 64

/* With the bin lock held: takes up to *need objects of bin into claims,
 * counting them off *need; returns how many claims. */
static unsigned claim_objects(struct pm_bin_state *s, const struct pm_bin *b, unsigned bin, unsigned *need,
                              struct claim *claims, int *grew)
{
    unsigned nclaims = 0;
    while (*need && nclaims < MAX_CLAIMS) {
        struct pm_folio *f = take_folio(s, b, bin, grew);
        if (!f)
            break;
        char *data = folio_data(b, f);
        unsigned words = words_of(b);
        for (unsigned w = 0; w < words && *need && nclaims < MAX_CLAIMS; w++) {
            uint64_t bits = f->free_bits[w], take = bits;
            if (!bits)
                continue;
            unsigned n = (unsigned)__builtin_popcountll(bits);
            if (n > *need) {
                take = 0;
                for (unsigned i = 0; i < *need; i++) {
                    take |= bits & -bits;
                    bits &= bits - 1;
                }
                n = *need;
            }
            f->free_bits[w] &= ~take;
            if (words == 1) {
                s->refaulted |= (f->released & take) != 0;
                f->seen &= ~take;
                f->released &= ~take;
            }
            f->nfree -= n;
            *need -= n;
            claims[nclaims].base = data + (size_t)w * 64 * b->size;
            claims[nclaims++].mask = take;
        }
        if (f->nfree)
            partial_push(s, b, f, 0);
    }
    return nclaims;
}

void *pm_folio_alloc(unsigned bin, unsigned want, unsigned *got)
{
    const struct pm_bin *b = &pm_bins[bin];
    struct pm_bin_state *s = &bins[bin];
    struct claim claims[MAX_CLAIMS];
    unsigned need = want;
    int grew = 0;
    __builtin_prefetch(s, 1);
    pm_count_bin(bin, PM_EV_folio_allocs);
    pm_lock_take(bin_lock(bin));
    unsigned nclaims = claim_objects(s, b, bin, &need, claims, &grew);
    /* Nothing to be had: what chunks mapped beyond their folios may hold
     * the folio the kernel refused. */
    if (!nclaims) {
        bin_unlock(bin);
        int any = trim_all();
        pm_lock_take(bin_lock(bin));
        if (any)
            nclaims = claim_objects(s, b, bin, &need, claims, &grew);
    }
    __atomic_store_n(&s->taken, s->taken + (want - need), __ATOMIC_RELAXED);
    bin_unlock(bin);
    if (grew)
        pm_fp_want_settle();

    /* Each object's link is written once the next object is known; the
     * word `first` stands in for the link to the head.  Key and size are
     * locals, which the stores into objects cannot alias.  The mark goes
     * on the line the link's store fetches anyway; the head, which every
     * caller hands out, is left without it. */
    uint64_t key = pm_link_key();
    size_t size = b->size;
    uintptr_t first = pm_link_encode(0, key), *link = &first;
    for (unsigned c = 0; c < nclaims; c++) {
        char *base = claims[c].base;
        for (uint64_t m = claims[c].mask; m; m &= m - 1) {
            char *obj = base + (size_t)__builtin_ctzll(m) * size;
            *link = pm_link_encode(obj, key);
            pm_mark(obj);
            link = (uintptr_t *)obj;
        }
    }
    *link = pm_link_encode(0, key);
    void **head = pm_link_next(&first, "malloc");
    if (head)
        head[1] = 0;
    *got = want - need;
    return head;
}

/* Freed objects of one word of a folio's bitmap, found and combined
 * before the bin lock is taken, so that the critical section tests and
 * sets a word for all of them.  In large bins each object has its own:
 * it is checked (pm_large_check_freed) after its bit is set, so that a
 * double free is still reported at the pointer the program freed. */
struct freeing {
    struct pm_folio *f;
    uint64_t *word; /* in f->free_bits */
    uint64_t mask;  /* the objects' bits */
    void *p;        /* the first object */
    unsigned n;     /* objects in mask */
};

/* The object of bit `k` of x's word. */
static void *object_of(const struct pm_bin *b, const struct freeing *x, unsigned k)
{
    unsigned in_folio = (unsigned)(x->word - x->f->free_bits) * 64 + k;
    return folio_data(b, x->f) + (size_t)in_folio * b->size;
}

/* Up to FREE_GROUP objects of bin from *head on, as words of bits in
 * out[]; returns how many words, and leaves *head at the first object not
 * taken.  A pointer that starts no object, or an object twice in the list,
 * ends in pm_fatal; so does one whose chunk the table gives to no bin or
 * another: freed twice, its chunk went back between the frees, and its
 * folio record would be read from what the chunk holds now.  Each word's
 * line is fetched while the walk goes on. */
#define FREE_GROUP 64

static unsigned gather(unsigned bin, const struct pm_bin *b, void **head, struct freeing *out, const char *call)
{
    /* Objects of one chunk share a word when their numbers do above the
     * low word_log bits: the folio's size in objects up to 64, since
     * folios start at multiples of it; 0 in large bins. */
    uint32_t per_folio = (1u << b->folio_log) - 1;
    unsigned word_log = b->kind == PM_LARGE ? 0 : b->folio_log < 6 ? b->folio_log : 6;
    unsigned k = 0, taken = 0, n = 0;
    uintptr_t key = 0;
    uint64_t mask = 0;
    void *p = *head;
    for (; p && taken < FREE_GROUP; p = pm_link_next(p, call), taken++) {
        struct pm_chunk_header *c = chunk_of(p);
        uint32_t idx = pm_object_index(b, (uint32_t)((uintptr_t)p - (uintptr_t)c) - PM_DATA_START);
        if (pm_unlikely(idx >= b->objs_per_chunk))
            pm_fatal(call, p, "pointer inside an object, not at its start");
        uint64_t bit = 1ull << (idx & per_folio & 63);
        uintptr_t at = (uintptr_t)c | idx >> word_log;
        if (at == key) {
            if (pm_unlikely(mask & bit))
                pm_fatal(call, p, "double free");
            mask |= bit;
            n++;
            continue;
        }
        if (pm_unlikely(pm_bin_of_addr((uintptr_t)p) != bin))
            pm_fatal(call, p, "double free");
        if (k) {
            out[k - 1].mask = mask;
            out[k - 1].n = n;
        }
        struct pm_folio *f = &c->folios[idx >> b->folio_log];
        uint64_t *word = &f->free_bits[(idx & per_folio) / 64];
        __builtin_prefetch(word, 1);
        out[k++] = (struct freeing){f, word, 0, p, 0};
        key = at;
        mask = bit;
        n = 1;
    }
    if (k) {
        out[k - 1].mask = mask;
        out[k - 1].n = n;
    }
    *head = p;
    return k;
}

/* Marks x's objects free in their folio, with the bin lock held. */
static void mark_free(const struct pm_bin *b, const struct freeing *x, const char *call)
{
    uint64_t twice = *x->word & x->mask;
    if (pm_unlikely(twice)) {
        void *p = b->kind == PM_LARGE ? pm_large_noted(x->p) : object_of(b, x, (unsigned)__builtin_ctzll(twice));
        pm_fatal(call, p, "double free");
    }
    *x->word |= x->mask;
    if (b->kind == PM_LARGE)
        pm_large_check_freed(x->p, call);
}

/* Puts f, on no list, on the list its free count names (a partial one at
 * its end when last).  1 if f was the last folio in use of a chunk that
 * then left the bin, described in *out. */
static int file_folio(struct pm_bin_state *s, const struct pm_bin *b, struct pm_folio *f,
                      uint32_t now, int last, struct leaving *out)
{
    if (f->nfree < folio_objects(b, f)) {
        partial_push(s, b, f, last);
        return 0;
    }
    f->empty_since = now;
    dirty_push(s, f);
    bin_used(s, -1, folio_span(b, f));
    bin_dirty(s, (long)folio_span(b, f));
    struct pm_chunk_header *c = chunk_of(f);
    c->used--;
    return leave_bin(s, b, c, 0, out);
}

/* n objects of f were marked free: one move to the list of its new count
 * for the lot (a batch's objects mostly share folios), unless f is being
 * released.  1 if f's chunk left the bin, described in *out.  Out of
 * line: inlined, it takes registers from pm_folio_free_list's loop over
 * objects. */
static __attribute__((noinline)) int refile_freed(struct pm_bin_state *s, const struct pm_bin *b,
                                                  struct pm_folio *f, unsigned n, uint32_t now,
                                                  struct leaving *out)
{
    if (f->state == PARTIAL)
        partial_remove(s, b, f);
    f->nfree += n;
    if (f->state == RELEASING)
        return 0;
    return file_folio(s, b, f, now, 0, out);
}

/* Gives back the whole pages inside each run of objects of f, a folio
 * off its lists, that its released mark holds, where the run holds an
 * object of `fresh`: runs of older marks went back before. */
static void give_back_runs(const struct pm_bin *b, const struct pm_folio *f, uint64_t fresh)
{
    char *data = folio_data(b, f);
    for (uint64_t m = f->released; m;) {
        unsigned i = (unsigned)__builtin_ctzll(m);
        uint64_t above = ~(m >> i);
        unsigned len = above ? (unsigned)__builtin_ctzll(above) : 64 - i;
        uint64_t run = (len == 64 ? ~0ull : (1ull << len) - 1) << i;
        uintptr_t start = ((uintptr_t)data + (size_t)i * b->size + PM_PAGE - 1) & ~(uintptr_t)(PM_PAGE - 1);
        uintptr_t end = ((uintptr_t)data + (size_t)(i + len) * b->size) & ~(uintptr_t)(PM_PAGE - 1);
        if ((run & fresh) && end > start)
            pm_os_uncommit((void *)start, end - start);
        m &= ~run;
    }
}

/* Folios one visit to a bin looks at. */
#define RELEASE_LOOKS 128

/* A bin that hands out again objects whose pages a release gave back
 * doubles the visits from one look at it to the next, up to
 * 2^RELEASE_LOG_MAX: its free runs come back into use too soon for their
 * pages to be worth giving back. */
#define RELEASE_LOG_MAX 4

/* Whether a visit to s that is not forced looks at its folios: not while
 * it waits, and not when objects a look released were handed out since,
 * which starts a wait twice the last. */
static int looks_now(struct pm_bin_state *s)
{
    if (s->refaulted) {
        s->refaulted = 0;
        s->release_log += s->release_log < RELEASE_LOG_MAX;
        s->release_wait = 1u << s->release_log;
    }
    if (s->release_wait) {
        s->release_wait--;
        return 0;
    }
    s->release_wait = (1u << s->release_log) - 1;
    return 1;
}

/* One visit to bin: each folio looked at marks its objects ready that
 * are free now and were at the look before (or free now, when force) as
 * released, and those free now as seen.  A folio with ready objects not
 * released before leaves its lists (RELEASING) while the bin lock is
 * dropped and their pages go back, so that nothing on them is handed out
 * meanwhile.  The visit goes from emptier lists to fuller ones, from
 * the list after the one where the visit before ran out of looks, and
 * every folio looked at ends at the end of its list, so that visits in
 * turn reach every folio and each is looked at once a visit.  Returns
 * how many folios gave pages back. */
static unsigned release_bin(unsigned bin, int force, int *more)
{
    const struct pm_bin *b = &pm_bins[bin];
    struct pm_bin_state *s = &bins[bin];
    struct pm_folio *batch[RELEASE_LOOKS];
    uint64_t fresh[RELEASE_LOOKS];
    unsigned n = 0, looks = 0;
    pm_lock_take(bin_lock(bin));
    if (!s->nonempty) {
        /* Nothing to look at; the state of a bin never used stays unwritten. */
        bin_unlock(bin);
        return 0;
    }
    if (!force && !looks_now(s)) {
        *more = 1;
        bin_unlock(bin);
        return 0;
    }
    /* A folio of at most 64 objects: a list per free count, 1 to top. */
    unsigned top = list_index(b, (1u << b->folio_log) - 1), k = s->release_list ? s->release_list : top;
    for (unsigned lists = top; lists && looks < RELEASE_LOOKS; lists--, k = k > 1 ? k - 1 : top) {
        struct pm_folio *next, *moved = 0;
        for (struct pm_folio *f = partial_of(s)[k].first; f && f != moved && looks < RELEASE_LOOKS;
             f = next) {
            next = f->next;
            looks++;
            uint64_t ready = f->free_word & (force ? ~0ull : f->seen);
            fresh[n] = ready & ~f->released;
            f->released = ready;
            f->seen = f->free_word;
            *more |= (f->free_word & ~ready) != 0;
            partial_remove(s, b, f);
            if (fresh[n]) {
                f->state = RELEASING;
                batch[n++] = f;
            } else {
                partial_push(s, b, f, 1);
                moved = moved ? moved : f;
            }
        }
    }
    s->release_list = k;
    *more |= looks == RELEASE_LOOKS;
    bin_unlock(bin);
    for (unsigned i = 0; i < n; i++)
        give_back_runs(b, batch[i], fresh[i]);
    uint32_t now = pm_os_now_ms();
    struct leaving left[RELEASE_LOOKS];
    unsigned nleft = 0;
    pm_lock_take(bin_lock(bin));
    for (unsigned i = 0; i < n; i++) {
        batch[i]->state = TAKEN;
        nleft += file_folio(s, b, batch[i], now, 1, &left[nleft]);
        pm_count(PM_EV_page_releases);
    }
    bin_unlock(bin);
    for (unsigned i = 0; i < nleft; i++)
        to_pool(&left[i]);
    return n;
}

unsigned pm_folio_release_pages(int force)
{
    unsigned n = 0;
    int more = 0;
    __atomic_store_n(&release_wanted, 0, __ATOMIC_RELAXED);
    for (unsigned bin = 0; bin < PM_NBINS; bin++) {
        if (!releases_pages(&pm_bins[bin]))
            continue;
        unsigned got;
        do
            n += got = release_bin(bin, force, &more);
        while (got && force);
    }
    if (more)
        __atomic_store_n(&release_wanted, 1, __ATOMIC_RELAXED);
    return n;
}

int pm_folio_release_wanted(void)
{
    return __atomic_load_n(&release_wanted, __ATOMIC_RELAXED);
}

void pm_folio_free_list(unsigned bin, void *head, const char *call)
{
    /* A copy, which the stores into folio records cannot alias. */
    const struct pm_bin copy = pm_bins[bin], *b = &copy;
    struct pm_bin_state *s = &bins[bin];
    uint32_t now = pm_os_now_ms();
    pm_count_bin(bin, PM_EV_folio_frees);
    while (head) {
        struct freeing group[FREE_GROUP];
        unsigned words = gather(bin, b, &head, group, call), n = 0;
        __builtin_prefetch(s, 1);
        pm_lock_take(bin_lock(bin));
        struct pm_folio *run = 0;
        unsigned in_run = 0, nleft = 0;
        struct leaving left[FREE_GROUP];
        for (unsigned i = 0; i < words; i++) {
            const struct freeing *x = &group[i];
            mark_free(b, x, call);
            if (x->f != run) {
                if (run)
                    nleft += refile_freed(s, b, run, in_run, now, &left[nleft]);
                run = x->f;
                in_run = 0;
            }
            in_run += x->n;
            n += x->n;
        }
        nleft += refile_freed(s, b, run, in_run, now, &left[nleft]);
        __atomic_store_n(&s->taken, s->taken - n, __ATOMIC_RELAXED);
        bin_unlock(bin);
        for (unsigned i = 0; i < nleft; i++)
            to_pool(&left[i]);
    }
    if (releases_pages(b) && !__atomic_load_n(&release_wanted, __ATOMIC_RELAXED))
        __atomic_store_n(&release_wanted, 1, __ATOMIC_RELAXED);
    pm_fp_want_settle();
}

static void check_failed(const void *where, const char *what)
{
    pm_fatal("folio check", where, what);
}

/* A folio record of bin b, on a list that names `state`. */
static void check_folio(const struct pm_bin *b, unsigned bin, const struct pm_folio *f,
                        enum folio_state state)
{
    const struct pm_chunk_header *c = chunk_of(f);
    unsigned objs = folio_objects(b, f), bits = 0;
    for (unsigned w = 0; w < words_of(b); w++) {
        bits += (unsigned)__builtin_popcountll(f->free_bits[w]);
        if (f->free_bits[w] & ~object_bits(objs, w))
            check_failed(f, "free bits past the folio's objects");
    }
    if (f->state != state)
        check_failed(f, "folio state disagrees with its list");
    if (bits != f->nfree)
        check_failed(f, "free count disagrees with the bitmap");
    if (words_of(b) == 1 && ((f->seen & ~f->free_word) || (f->released & ~f->seen)))
        check_failed(f, "release marks not within the free bits");
    if (state == PARTIAL ? !f->nfree || f->nfree >= objs : f->nfree != objs)
        check_failed(f, "free count wrong for the folio's list");
    uint32_t n = pm_folios_per_chunk(b), at = (uint32_t)(f - c->folios);
    if (pm_bin_of_addr((uintptr_t)f) != bin || at >= n || (at + n - b->first_folio) % n >= c->carved)
        check_failed(f, "folio outside its bin's carved chunks");
    if (c->used + c->purging > c->carved)
        check_failed(c, "chunk counts more folios in use than carved");
}

/* A list of bin's folios in `state`; returns the free objects on it. */
static size_t check_list(const struct pm_bin *b, unsigned bin, const struct list *l,
                         enum folio_state state)
{
    size_t n = 0;
    const struct pm_folio *prev = 0;
    for (const struct pm_folio *f = l->first; f; prev = f, f = f->next) {
        if (f->prev != prev)
            check_failed(f, "list links broken");
        check_folio(b, bin, f, state);
        if (state == PARTIAL && l != &partial_of(&bins[bin])[list_index(b, f->nfree)])
            check_failed(f, "folio on the list of another free count");
        n += f->nfree;
    }
    if (l->last != prev)
        check_failed(l, "list end wrong");
    return n;
}

void pm_folio_check(void)
{
    for (unsigned bin = 0; bin < PM_NBINS; bin++) {
        const struct pm_bin *b = &pm_bins[bin];
        struct pm_bin_state *s = &bins[bin];
        unsigned objs = 1u << b->folio_log;
        pm_lock_take(bin_lock(bin));
        size_t free_objs = 0;
        struct list *partial = partial_of(s);
        unsigned lists = (bin + 1 < PM_NBINS ? partial_at[bin + 1] : PM_PARTIAL_LISTS) - partial_at[bin];
        /* The lists a partial folio's count (1 to objs - 1) may name. */
        unsigned low = list_index(b, 1), high = list_index(b, objs - 1);
        if (lists <= high)
            check_failed(partial, "fewer partial lists than free counts name");
        if (lists < PM_MAX_PARTIAL_LISTS && s->nonempty >> lists)
            check_failed(s, "a non-empty bit past its bin's lists");
        for (unsigned k = 0; k < lists; k++) {
            int bit = s->nonempty >> k & 1;
            if ((bit || partial[k].first) && (k < low || k > high))
                check_failed(&partial[k], "a partial list in use that no free count names");
            if (bit != !!partial[k].first)
                check_failed(&partial[k], "non-empty bit disagrees with its list");
            free_objs += check_list(b, bin, &partial[k], PARTIAL);
        }
        size_t dirty = check_list(b, bin, &s->dirty, DIRTY);
        if (dirty && !may_be_dirty(bin))
            check_failed(s, "dirty folios in a bin not marked dirty");
        free_objs += dirty + check_list(b, bin, &s->clean, CLEAN);
        for (unsigned l = 0; l < PM_CARVE_LANES; l++)
            if (s->wild[l] && (!s->wild[l]->wild || s->wild[l]->carved > pm_folios_per_chunk(b)))
                check_failed(s->wild[l], "wild chunk not marked or over-carved");
        if (s->taken + free_objs > s->carved_objects)
            check_failed(s, "more objects taken and free than carved");
        if (s->release_log > RELEASE_LOG_MAX || s->release_wait > 1u << s->release_log)
            check_failed(s, "release wait past the bin's back-off");
        if (s->moved_used || s->moved_dirty || s->moved_folios)
            check_failed(s, "counts an earlier hold left unmoved");
        bin_unlock(bin);
    }
}

size_t pm_folio_out(unsigned bin)
{
    return __atomic_load_n(&bins[bin].taken, __ATOMIC_RELAXED);
}

void pm_folio_census(unsigned bin, struct pm_folio_census *out)
{
    const struct pm_bin_state *s = &bins[bin];
    pm_lock_take(bin_lock(bin));
    out->folios = s->carved_folios;
    out->objects = s->carved_objects;
    out->free = out->objects - s->taken;
    out->folios_in_use = s->used_folios;
    out->active = s->used_bytes;
    out->chunks = s->chunks;
    out->dirty = s->dirty_bytes;
    bin_unlock(bin);
}

void pm_folio_each_taken(unsigned bin, uintptr_t chunk, void (*fn)(void *ctx, void *object, size_t size),
                         void *ctx)
{
    const struct pm_bin *b = &pm_bins[bin];
    struct pm_chunk_header *c = (struct pm_chunk_header *)chunk;
    uint32_t folios = pm_folios_per_chunk(b);
    pm_lock_take(bin_lock(bin));
    if (pm_bin_of_addr(chunk) == bin)
        for (uint32_t k = 0; k < folios; k++) {
            const struct pm_folio *f = &c->folios[k];
            unsigned objs = folio_objects(b, f);
            /* Carved: among the first `carved` from first_folio on. */
            if ((k + folios - b->first_folio) % folios >= c->carved || f->nfree == objs)
                continue;
            for (unsigned j = 0; j < objs; j++)
                if (!(f->free_bits[j / 64] >> (j % 64) & 1))
                    fn(ctx, folio_data(b, f) + (size_t)j * b->size, b->size);
        }
    bin_unlock(bin);
}

size_t pm_folio_metadata(void)
{
    return sizeof bins + sizeof partial_lists + sizeof bin_locks +
           __atomic_load_n(&pm_stats_global.chunks, __ATOMIC_RELAXED) * PM_DATA_START;
}

void pm_folio_prefork(void)
{
    for (unsigned i = 0; i < PM_NBINS; i++)
        pm_lock_take(bin_lock(i));
}

void pm_folio_postfork(void)
{
    for (unsigned i = 0; i < PM_NBINS; i++)
        bin_unlock(i);
}
