#include "folio.h"
#include "chunk_table.h"
#include "lock.h"
#include "os.h"
#include "sizeclass.h"
#include "stats.h"

/* One record per folio, in its chunk's header pages. */
struct pm_folio {
    struct pm_folio *next, *prev; /* in the bin's list for nfree */
    uint32_t nfree;
    uint32_t listed;              /* on a fullness list now */
    uint64_t free_bits[PM_MAX_FOLIO_OBJS / 64];
};
_Static_assert(sizeof(struct pm_folio) <= PM_FOLIO_RECORD, "folio record too big");

struct pm_chunk_header {
    uint32_t carved; /* folios initialised so far; the rest is untouched */
    char pad[512 - 4];
    struct pm_folio folios[PM_MAX_FOLIOS];
};
_Static_assert(sizeof(struct pm_chunk_header) <= PM_DATA_START, "chunk header too big");

#define NLISTS (PM_MAX_FOLIO_OBJS + 1)

struct pm_bin_state {
    pm_lock lock;
    uint64_t nonempty[(NLISTS + 63) / 64]; /* bit k: lists[k] has a folio */
    struct pm_folio *lists[NLISTS];        /* folios by free count; full ones unlisted */
    struct pm_chunk_header *wild;          /* chunk with folios not yet carved */
    size_t carved_folios;
} __attribute__((aligned(64)));

static struct pm_bin_state bins[PM_NBINS];

static inline struct pm_chunk_header *chunk_of(const void *p)
{
    return (struct pm_chunk_header *)((uintptr_t)p & ~(PM_CHUNK - 1));
}

static inline char *folio_data(const struct pm_bin *b, struct pm_folio *f)
{
    struct pm_chunk_header *c = chunk_of(f);
    return (char *)c + PM_DATA_START + (size_t)(f - c->folios) * b->folio_bytes;
}

static void list_push(struct pm_bin_state *s, struct pm_folio *f)
{
    unsigned k = f->nfree;
    f->prev = 0;
    f->next = s->lists[k];
    if (f->next)
        f->next->prev = f;
    s->lists[k] = f;
    s->nonempty[k / 64] |= 1ull << (k % 64);
    f->listed = 1;
}

static void list_remove(struct pm_bin_state *s, struct pm_folio *f)
{
    unsigned k = f->nfree;
    if (f->prev)
        f->prev->next = f->next;
    else
        s->lists[k] = f->next;
    if (f->next)
        f->next->prev = f->prev;
    if (!s->lists[k])
        s->nonempty[k / 64] &= ~(1ull << (k % 64));
    f->listed = 0;
}

/* The fullest folio with a free object: the non-empty list with the
 * smallest free count.  Empty folios (all free) come last. */
static struct pm_folio *fullest(struct pm_bin_state *s)
{
    for (unsigned w = 0; w < sizeof s->nonempty / sizeof s->nonempty[0]; w++)
        if (s->nonempty[w])
            return s->lists[w * 64 + __builtin_ctzll(s->nonempty[w])];
    return 0;
}

static struct pm_folio *carve(struct pm_bin_state *s, const struct pm_bin *b, unsigned bin)
{
    struct pm_chunk_header *c = s->wild;
    if (!c || c->carved == b->folios_per_chunk) {
        c = pm_chunk_alloc(bin);
        if (!c)
            return 0;
        s->wild = c;
    }
    struct pm_folio *f = &c->folios[c->carved++];
    unsigned n = 1u << b->folio_log;
    f->nfree = n;
    for (unsigned w = 0; w < PM_MAX_FOLIO_OBJS / 64; w++)
        f->free_bits[w] = n >= (w + 1) * 64 ? ~0ull : n > w * 64 ? (1ull << (n - w * 64)) - 1 : 0;
    s->carved_folios++;
    return f;
}

/* Objects taken under the lock, linked after it is dropped so that page
 * faults on fresh folios happen outside the critical section. */
struct claim {
    char *base;    /* address of the object for bit 0 of mask */
    uint64_t mask; /* objects taken */
};
#define MAX_CLAIMS 64

void *pm_folio_alloc(unsigned bin, unsigned want, unsigned *got)
{
    const struct pm_bin *b = &pm_bins[bin];
    struct pm_bin_state *s = &bins[bin];
    struct claim claims[MAX_CLAIMS];
    unsigned nclaims = 0, need = want;
    pm_lock_take(&s->lock);
    while (need && nclaims < MAX_CLAIMS) {
        struct pm_folio *f = fullest(s);
        if (f)
            list_remove(s, f);
        else if (!(f = carve(s, b, bin)))
            break;
        if (f->nfree == 1u << b->folio_log)
            pm_stat_add(&pm_stats_global.folios_in_use, 1);
        char *data = folio_data(b, f);
        for (unsigned w = 0; w < PM_MAX_FOLIO_OBJS / 64 && need && nclaims < MAX_CLAIMS; w++) {
            uint64_t bits = f->free_bits[w], take = bits;
            if (!bits)
                continue;
            unsigned n = (unsigned)__builtin_popcountll(bits);
            if (n > need) {
                take = 0;
                for (unsigned i = 0; i < need; i++) {
                    take |= bits & -bits;
                    bits &= bits - 1;
                }
                n = need;
            }
            f->free_bits[w] &= ~take;
            f->nfree -= n;
            need -= n;
            claims[nclaims].base = data + (size_t)w * 64 * b->size;
            claims[nclaims++].mask = take;
        }
        if (f->nfree)
            list_push(s, f);
    }
    pm_lock_drop(&s->lock);

    void *head = 0, **tail = &head;
    for (unsigned c = 0; c < nclaims; c++)
        for (uint64_t m = claims[c].mask; m; m &= m - 1) {
            void **obj = (void **)(claims[c].base + (size_t)__builtin_ctzll(m) * b->size);
            *tail = obj;
            tail = (void **)obj;
        }
    *tail = 0;
    *got = want - need;
    return head;
}

/* Frees one object with the bin lock held.  Returns the folio when it has
 * just become empty (it is then unlisted, for the caller to uncommit). */
static struct pm_folio *free_locked(struct pm_bin_state *s, const struct pm_bin *b, void *p,
                                    const char *call)
{
    struct pm_chunk_header *c = chunk_of(p);
    uint32_t rel = (uint32_t)((uintptr_t)p - (uintptr_t)c) - PM_DATA_START;
    uint32_t idx = pm_div_size(b, rel);
    if (pm_unlikely(rel >= b->data_bytes || idx * b->size != rel))
        pm_fatal(call, p, "pointer inside an object, not at its start");
    struct pm_folio *f = &c->folios[idx >> b->folio_log];
    unsigned bit = idx & ((1u << b->folio_log) - 1);
    uint64_t m = 1ull << (bit % 64);
    if (pm_unlikely(f->free_bits[bit / 64] & m))
        pm_fatal(call, p, "double free");
    f->free_bits[bit / 64] |= m;
    if (f->listed)
        list_remove(s, f);
    if (++f->nfree == 1u << b->folio_log)
        return f;
    list_push(s, f);
    return 0;
}

#define FREE_GROUP 64

void pm_folio_free_list(unsigned bin, void *head, const char *call)
{
    const struct pm_bin *b = &pm_bins[bin];
    struct pm_bin_state *s = &bins[bin];
    while (head) {
        /* Gather a group and prefetch its folio records before locking. */
        void *objs[FREE_GROUP];
        unsigned n = 0;
        for (; head && n < FREE_GROUP; head = *(void **)head) {
            objs[n++] = head;
            __builtin_prefetch(&chunk_of(head)->folios[0]);
        }
        struct pm_folio *emptied[FREE_GROUP];
        unsigned nempty = 0;
        pm_lock_take(&s->lock);
        for (unsigned i = 0; i < n; i++) {
            struct pm_folio *f = free_locked(s, b, objs[i], call);
            if (f)
                emptied[nempty++] = f;
        }
        pm_lock_drop(&s->lock);
        if (!nempty)
            continue;
        /* Emptied folios are on no list, so no one touches them while their
         * pages go back to the kernel. */
        for (unsigned i = 0; i < nempty; i++)
            pm_os_uncommit(folio_data(b, emptied[i]), b->folio_bytes);
        pm_stat_add(&pm_stats_global.folios_in_use, -(long)nempty);
        pm_lock_take(&s->lock);
        for (unsigned i = 0; i < nempty; i++)
            list_push(s, emptied[i]);
        pm_lock_drop(&s->lock);
    }
}

void pm_folio_census(unsigned bin, size_t *carved, size_t *free_in_folios)
{
    struct pm_bin_state *s = &bins[bin];
    size_t nfree = 0;
    pm_lock_take(&s->lock);
    for (unsigned k = 1; k < NLISTS; k++)
        for (struct pm_folio *f = s->lists[k]; f; f = f->next)
            nfree += f->nfree;
    *carved = s->carved_folios << pm_bins[bin].folio_log;
    pm_lock_drop(&s->lock);
    *free_in_folios = nfree;
}

void pm_folio_prefork(void)
{
    for (unsigned i = 0; i < PM_NBINS; i++)
        pm_lock_take(&bins[i].lock);
}

void pm_folio_postfork(void)
{
    for (unsigned i = 0; i < PM_NBINS; i++)
        pm_lock_drop(&bins[i].lock);
}
