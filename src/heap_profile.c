/* SPDX-License-Identifier: MIT */
#include "heap_profile.h"
#include <errno.h>
#include <signal.h>
#include "chunk_table.h"
#include "elf_symbols.h"
#include "folio.h"
#include "huge.h"
#include "free_object.h"
#include "lock.h"
#include "options.h"
#include "sizeclass.h"
#include "text.h"

int pm_prof_on;

/* Live samples, by address, with linear probing; kept at most 3/4 full. */
#define ENTRIES (1u << 16)
#define ENTRIES_MOST (ENTRIES / 4 * 3)
/* Distinct stacks, in the order first seen, found through a table of
 * twice as many slots that hold a stack's index + 1. */
#define STACKS PM_PROF_STACKS
#define STACK_SLOTS (2 * STACKS)

struct counts {
    uint64_t objects, bytes;
};

struct entry {
    uintptr_t p; /* 0: empty */
    uint32_t stack;
    uint32_t objects;
    uint64_t bytes;
};

/* A stack's frames never change once it is listed, so a dump reads them
 * without the lock. */
struct stack {
    uint64_t hash;
    uint32_t depth;
    struct counts live, total;
    void *frames[PM_PROF_DEPTH];
};

struct tables {
    struct entry entries[ENTRIES];
    uint32_t slots[STACK_SLOTS];
    struct stack stacks[STACKS];
};

static struct tables *tables;
static uint32_t nentries, nstacks;
static size_t dropped;
static pm_lock lock;

/* ---- the lock, and dumps asked for by signal ----
 *
 * A signal that asks for a dump while its thread holds the lock (or is
 * about to take it) leaves the dump to that thread, which makes it when
 * it drops the lock; in any other thread the handler waits for the lock
 * like anyone. */
static __thread volatile sig_atomic_t holding __attribute__((tls_model("initial-exec")));
static int dump_pending;

static void dump_next(void);

static void take(void)
{
    holding = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    pm_lock_take(&lock);
}

static void drop(void)
{
    pm_lock_drop(&lock);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    holding = 0;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (pm_unlikely(__atomic_load_n(&dump_pending, __ATOMIC_RELAXED)) &&
        __atomic_exchange_n(&dump_pending, 0, __ATOMIC_RELAXED))
        dump_next();
}

static void on_signal(int sig)
{
    (void)sig;
    int saved = errno;
    if (holding)
        __atomic_store_n(&dump_pending, 1, __ATOMIC_RELAXED);
    else
        dump_next();
    errno = saved;
}

void pm_prof_prefork(void)
{
    if (pm_prof_on)
        pm_lock_take(&lock);
}

void pm_prof_postfork(void)
{
    if (pm_prof_on)
        pm_lock_drop(&lock);
}

/* ---- the tables (under the lock) ---- */

static uint32_t entry_slot(uintptr_t p)
{
    return (uint32_t)((p * 0x9e3779b97f4a7c15ull) >> 48) & (ENTRIES - 1);
}

static struct entry *find(uintptr_t p)
{
    for (uint32_t i = entry_slot(p);; i = (i + 1) & (ENTRIES - 1)) {
        struct entry *e = &tables->entries[i];
        if (e->p == p)
            return e;
        if (!e->p)
            return 0;
    }
}

/* Empties entry i, moving back the later entries of its cluster that may
 * sit there (their slot is not cyclically in (i, j]), so that lookups
 * need no tombstones. */
static void remove_at(uint32_t i)
{
    struct entry *e = tables->entries;
    for (uint32_t j = i;;) {
        j = (j + 1) & (ENTRIES - 1);
        if (!e[j].p)
            break;
        uint32_t home = entry_slot(e[j].p);
        if (((j - home) & (ENTRIES - 1)) >= ((j - i) & (ENTRIES - 1))) {
            e[i] = e[j];
            i = j;
        }
    }
    e[i].p = 0;
    nentries--;
}

static uint64_t hash_frames(void *const *frames, int depth)
{
    uint64_t h = 0x84222325cbf29ce4ull ^ (uint64_t)depth;
    for (int i = 0; i < depth; i++)
        h = (h ^ (uintptr_t)frames[i]) * 0x100000001b3ull;
    return h ^ h >> 29;
}

/* The index of the stack, listed if new; STACKS when the list is full. */
static uint32_t intern(void *const *frames, int depth)
{
    uint64_t h = hash_frames(frames, depth);
    for (uint32_t i = (uint32_t)h & (STACK_SLOTS - 1);; i = (i + 1) & (STACK_SLOTS - 1)) {
        uint32_t k = tables->slots[i];
        if (!k) {
            if (nstacks == STACKS)
                return STACKS;
            struct stack *s = &tables->stacks[nstacks];
            s->hash = h;
            s->depth = (uint32_t)depth;
            __builtin_memcpy(s->frames, frames, (size_t)depth * sizeof *frames);
            tables->slots[i] = ++nstacks;
            return nstacks - 1;
        }
        struct stack *s = &tables->stacks[k - 1];
        if (s->hash == h && s->depth == (uint32_t)depth &&
            !__builtin_memcmp(s->frames, frames, (size_t)depth * sizeof *frames))
            return k - 1;
    }
}

static void count(struct counts *c, long sign, const struct entry *e)
{
    c->objects += (uint64_t)(sign * e->objects);
    c->bytes += (uint64_t)(sign * (long)e->bytes);
}

/* Records p, of size bytes, standing for weight bytes, with the caller's
 * stack.  0 if the tables are full. */
static int record(void *p, size_t size, long weight)
{
    void *frames[PM_PROF_DEPTH];
    int depth = pm_sampler_stack(frames, PM_PROF_DEPTH);
    uint64_t objects = ((uint64_t)weight + size / 2) / (size ? size : 1);
    struct entry new = {(uintptr_t)p, 0, objects ? (uint32_t)objects : 1, (uint64_t)weight};
    take();
    uint32_t s = nentries < ENTRIES_MOST ? intern(frames, depth) : STACKS;
    if (s < STACKS) {
        PM_ASSERT(!find((uintptr_t)p));
        uint32_t i = entry_slot(new.p);
        while (tables->entries[i].p)
            i = (i + 1) & (ENTRIES - 1);
        new.stack = s;
        tables->entries[i] = new;
        nentries++;
        count(&tables->stacks[s].live, 1, &new);
        count(&tables->stacks[s].total, 1, &new);
    } else {
        dropped++;
    }
    drop();
    return s < STACKS;
}

void pm_prof_forget(const void *p)
{
    take();
    struct entry *e = find((uintptr_t)p);
    if (e) {
        count(&tables->stacks[e->stack].live, -1, e);
        remove_at((uint32_t)(e - tables->entries));
    }
    drop();
}

static int sampled(const void *p)
{
    take();
    int found = find((uintptr_t)p) != 0;
    drop();
    return found;
}

void pm_prof_each(void (*fn)(void *ctx, const void *p, uint32_t stack, uint32_t objects, uint64_t bytes),
                  void *ctx)
{
    if (!pm_prof_on)
        return;
    take();
    for (uint32_t i = 0; i < ENTRIES; i++)
        if (tables->entries[i].p)
            fn(ctx, (const void *)tables->entries[i].p, tables->entries[i].stack, tables->entries[i].objects,
               tables->entries[i].bytes);
    drop();
}

const void *pm_prof_tables(size_t *len)
{
    *len = sizeof *tables;
    return pm_prof_on ? tables : 0;
}

int pm_prof_frames(uint32_t stack, void *const **frames)
{
    *frames = tables->stacks[stack].frames;
    return (int)tables->stacks[stack].depth;
}

void pm_prof_totals(size_t *objects, size_t *bytes, size_t *lost)
{
    *objects = *bytes = *lost = 0;
    if (!pm_prof_on)
        return;
    take();
    for (uint32_t i = 0; i < nstacks; i++) {
        *objects += tables->stacks[i].live.objects;
        *bytes += tables->stacks[i].live.bytes;
    }
    *lost = dropped;
    drop();
}

/* ---- where sampled objects live ---- */

/* A home for an object of size bytes aligned to align, and where in it
 * the object starts (*at); NULL if no bin holds both.  A small, medium or
 * pow2 home holds the object at offset align (at least 16): not a
 * multiple of the home's size, so not an object start.  A large home
 * holds it 16 bytes in (off every line, where large objects start) or,
 * for a bigger alignment, a page or more in (no slot starts there).  The
 * fast library's free has no object-start test (thread_cache.h), so there
 * every home is large, where free takes the slow path. */
static void *home_for(size_t size, size_t align, unsigned *bin, char **at)
{
    size_t offset = align > PM_ALIGN ? align : PM_ALIGN;
    unsigned small = PM_CHECKED && size + offset <= PM_LOOKUP_MAX ? pm_bin_of_small(size + offset) : PM_NBINS;
    if (small < PM_NBINS && 1ul << pm_bins[small].align_log >= align) {
        *bin = small;
    } else if (PM_CHECKED && size + offset <= 1ul << PM_POW2_MAX_LOG) {
        *bin = pm_pow2_bin_by_log[64 - __builtin_clzl(size + offset - 1)];
    } else {
        if (offset > PM_ALIGN && offset < PM_PAGE)
            offset = PM_PAGE;
        if (size + offset > PM_LARGE_MAX)
            return 0;
        *bin = pm_large_bin_by_pages[(size + offset + PM_PAGE - 1) >> PM_PAGE_SHIFT];
    }
    unsigned got;
    char *home = pm_folio_alloc(*bin, 1, &got);
    if (!home)
        return 0;
    *at = home + offset;
    if (offset > PM_PAGE) /* a large home is aligned to a page only */
        *at = (char *)(((uintptr_t)home + PM_PAGE + align - 1) & ~(uintptr_t)(align - 1));
    PM_ASSERT(*at + size <= home + pm_bins[*bin].size && !((uintptr_t)*at & (align - 1)));
    return home;
}

void pm_prof_give_back(void *object, unsigned bin)
{
    pm_link_set(object, 0);
    pm_folio_free_list(bin, object, "free");
}

/* A sampled object in its home, or, when the tables are full, the home
 * itself: an ordinary object of its bin that holds size bytes aligned as
 * asked, handed out unsampled. */
static void *sample(size_t size, size_t align, long weight)
{
    unsigned bin;
    char *at;
    void *home = home_for(size, align, &bin, &at);
    if (home && !record(at, size, weight))
        at = home;
    return home ? at : 0;
}

void *pm_prof_refilled(void *p, unsigned bin, unsigned n)
{
    const struct pm_bin *b = &pm_bins[bin];
    if (b->kind == PM_LARGE)
        return p; /* charged by the api, object by object */
    long weight = pm_sampler_charge((size_t)n * b->size);
    void *q = weight ? sample(b->size, 1ul << b->align_log, weight) : 0;
    if (!q)
        return p;
    pm_prof_give_back(p, bin);
    return q;
}

void *pm_prof_alloc_big(size_t size, size_t align, long weight, int *dirty)
{
    void *p = size <= PM_LARGE_MAX ? sample(size, align, weight) : 0;
    if (p) {
        if (dirty)
            *dirty = 1;
        return p;
    }
    p = pm_huge_alloc(size, align, dirty);
    if (p)
        record(p, size, weight);
    return p;
}

void *pm_prof_home(const void *p)
{
    uintptr_t a = (uintptr_t)p, chunk = a & ~(PM_CHUNK - 1);
    unsigned bin = pm_bin_of_addr(a);
    if (!pm_prof_on || bin >= PM_NBINS || !sampled(p))
        return 0;
    const struct pm_bin *b = &pm_bins[bin];
    uint32_t rel = (uint32_t)(a - chunk - PM_DATA_START);
    return (char *)chunk + PM_DATA_START + (size_t)pm_div_size(b, rel) * b->size;
}

void pm_prof_resized(const void *p, void *q, size_t size)
{
    if (!pm_prof_on)
        return;
    pm_prof_forget(p);
    long weight = pm_sampler_charge(size);
    if (weight)
        record(q, size, weight);
}

/* ---- dumps ---- */

/* Output through a buffer on the stack to a file; the first failure
 * sticks. */
struct out {
    struct pm_text t;
    int fd, failed;
    char buf[4096];
};

static void to_fd(void *opaque, const char *buf, size_t len)
{
    struct out *o = opaque;
    if (!o->failed && pm_os_write(o->fd, buf, len))
        o->failed = 1;
}

static void flush(struct out *o)
{
    pm_text_flush(&o->t);
}

static void put(struct out *o, const char *s)
{
    pm_text_put(&o->t, s);
}

static void put_num(struct out *o, uint64_t v, unsigned base)
{
    char digits[24];
    put(o, pm_text_numeral(digits, v, base));
}

static void put_counts(struct out *o, const struct counts *live, const struct counts *total)
{
    put_num(o, live->objects, 10);
    put(o, ": ");
    put_num(o, live->bytes, 10);
    put(o, " [");
    put_num(o, total->objects, 10);
    put(o, ": ");
    put_num(o, total->bytes, 10);
    put(o, "] @");
}

/* What a dump reports of each stack: its counts when the dump began. */
struct snapshot {
    struct counts live, total;
};

/* The gperftools heap profile (version 1, "heapprofile": counts are
 * already scaled, so readers apply no sampling correction), stacks
 * innermost first, then the memory map readers symbolize with. */
static void write_heap(struct out *o, const struct snapshot *snap, uint32_t n)
{
    struct counts live = {0, 0}, total = {0, 0};
    for (uint32_t i = 0; i < n; i++) {
        live.objects += snap[i].live.objects;
        live.bytes += snap[i].live.bytes;
        total.objects += snap[i].total.objects;
        total.bytes += snap[i].total.bytes;
    }
    put(o, "heap profile: ");
    put_counts(o, &live, &total);
    put(o, " heapprofile\n");
    for (uint32_t i = 0; i < n; i++) {
        if (!snap[i].live.bytes)
            continue;
        put_counts(o, &snap[i].live, &snap[i].total);
        const struct stack *s = &tables->stacks[i];
        for (uint32_t f = 0; f < s->depth; f++) {
            put(o, " 0x");
            put_num(o, (uintptr_t)s->frames[f], 16);
        }
        put(o, "\n");
    }
    put(o, "\nMAPPED_LIBRARIES:\n");
    flush(o);
    if (!o->failed && pm_os_copy_file("/proc/self/maps", o->fd))
        o->failed = 1;
}

/* A frame of the dump's stacks and the function that holds it (NULL if
 * no dynamic symbol does). */
struct named {
    uintptr_t addr;
    const char *name;
};

struct names {
    struct named *v; /* sorted by address, distinct */
    size_t n;
};

/* Shell sort (gaps shrinking by 5/11): no allocation, unlike qsort. */
static void sort_frames(struct named *v, size_t n)
{
    for (size_t gap = n / 2; gap; gap = gap > 2 ? gap * 5 / 11 : gap - 1)
        for (size_t i = gap; i < n; i++) {
            struct named x = v[i];
            size_t j = i;
            for (; j >= gap && v[j - gap].addr > x.addr; j -= gap)
                v[j] = v[j - gap];
            v[j] = x;
        }
}

/* The first of the sorted frames at or above addr. */
static size_t first_at(const struct names *f, uintptr_t addr)
{
    size_t lo = 0, hi = f->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (f->v[mid].addr < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void name_frames(void *ctx, uintptr_t start, size_t size, const char *name)
{
    struct names *f = ctx;
    for (size_t i = first_at(f, start); i < f->n && f->v[i].addr - start < size; i++)
        f->v[i].name = name;
}

/* Folded stacks (flame graphs): frames outermost first, named by their
 * dynamic symbol or else by address, then the live bytes.  The distinct
 * frames are sorted and every object's symbols walked once, not once a
 * frame: a program's stacks hold thousands of frames, and an object
 * thousands of symbols. */
static void write_folded(struct out *o, const struct snapshot *snap, uint32_t n)
{
    size_t frames = 0;
    for (uint32_t i = 0; i < n; i++)
        frames += snap[i].live.bytes ? tables->stacks[i].depth : 0;
    size_t bytes = (frames * sizeof(struct named) + PM_PAGE - 1) & ~(PM_PAGE - 1);
    struct names f = {frames ? pm_os_map(bytes, PM_PAGE) : 0, 0};
    if (frames && !f.v) {
        o->failed = 1;
        return;
    }
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t k = 0; snap[i].live.bytes && k < tables->stacks[i].depth; k++)
            f.v[f.n++] = (struct named){(uintptr_t)tables->stacks[i].frames[k], 0};
    sort_frames(f.v, f.n);
    size_t distinct = 0;
    for (size_t i = 0; i < f.n; i++)
        if (!distinct || f.v[distinct - 1].addr != f.v[i].addr)
            f.v[distinct++] = f.v[i];
    f.n = distinct;
    pm_elf_each_symbol(name_frames, &f);
    for (uint32_t i = 0; i < n; i++) {
        if (!snap[i].live.bytes)
            continue;
        const struct stack *s = &tables->stacks[i];
        for (uint32_t k = s->depth; k--;) {
            const char *name = f.v[first_at(&f, (uintptr_t)s->frames[k])].name;
            if (name) {
                put(o, name);
            } else {
                put(o, "0x");
                put_num(o, (uintptr_t)s->frames[k], 16);
            }
            if (k)
                put(o, ";");
        }
        if (!s->depth)
            put(o, "[unknown]");
        put(o, " ");
        put_num(o, snap[i].live.bytes, 10);
        put(o, "\n");
    }
    if (frames)
        pm_os_unmap(f.v, bytes);
}

static int write_file(const char *path, void (*write)(struct out *, const struct snapshot *, uint32_t),
                      const struct snapshot *snap, uint32_t n)
{
    struct out o;
    o.fd = pm_os_create(path);
    if (o.fd < 0)
        return -1;
    o.failed = 0;
    o.t = (struct pm_text){to_fd, &o, o.buf, sizeof o.buf, 0};
    write(&o, snap, n);
    flush(&o);
    pm_os_close(o.fd);
    return o.failed ? -1 : 0;
}

static uint32_t dumps;

/* The counts are copied under the lock; symbols are looked up after it is
 * dropped, since the loader may allocate, and so wait for this lock,
 * while it holds its own. */
int pm_prof_dump(const char *path)
{
    char name[PM_OPTION_TEXT_BYTES + 64], digits[24];
    char *end = name + sizeof name - sizeof ".folded";
    if (!pm_prof_on) {
        errno = EINVAL;
        return -1;
    }
    char *stem = pm_text_str_cut(name, end, path ? path : pm_option_text(PM_OPT_PROF_FILE));
    if (!path) {
        stem = pm_text_str_cut(stem, end, ".");
        stem = pm_text_str_cut(stem, end, pm_text_numeral(digits, (uint64_t)pm_os_pid(), 10));
        stem = pm_text_str_cut(stem, end, ".");
        stem = pm_text_str_cut(stem, end,
                               pm_text_numeral(digits, __atomic_fetch_add(&dumps, 1, __ATOMIC_RELAXED), 10));
    }
    __builtin_memcpy(stem, path ? "" : ".heap", path ? 1 : sizeof ".heap");
    size_t bytes = ((size_t)STACKS * sizeof(struct snapshot) + PM_PAGE - 1) & ~(PM_PAGE - 1);
    struct snapshot *snap = pm_os_map(bytes, PM_PAGE);
    if (!snap) {
        errno = ENOMEM;
        return -1;
    }
    take();
    uint32_t n = nstacks;
    for (uint32_t i = 0; i < n; i++) {
        snap[i].live = tables->stacks[i].live;
        snap[i].total = tables->stacks[i].total;
    }
    drop();
    int status = write_file(name, write_heap, snap, n);
    __builtin_memcpy(stem, ".folded", sizeof ".folded");
    if (write_file(name, write_folded, snap, n))
        status = -1;
    pm_os_unmap(snap, bytes);
    return status;
}

static void dump_next(void)
{
    pm_prof_dump(0);
}

/* ---- starting ---- */

int pm_prof_start(long rate)
{
    if (pm_prof_on)
        return 1;
    tables = pm_os_map(sizeof *tables, PM_PAGE);
    if (!tables)
        return 0;
    pm_sampler_start(rate);
    __atomic_store_n(&pm_prof_on, 1, __ATOMIC_RELEASE);
    return 1;
}

static int from_environment;

/* The settings are read before main (options.h); the signal's number was
 * checked catchable when read. */
__attribute__((constructor)) static void prof_environment(void)
{
    if (!pm_option(PM_OPT_PROF) || !pm_prof_start((long)pm_option(PM_OPT_PROF_RATE)))
        return;
    from_environment = 1;
    int sig = (int)pm_option(PM_OPT_PROF_SIGNAL);
    if (sig)
        pm_os_on_signal(sig, on_signal);
}

__attribute__((destructor)) static void prof_at_exit(void)
{
    if (from_environment)
        dump_next();
}
