/* SPDX-License-Identifier: MIT */
#include "leak_check.h"
#include "cache.h"
#include "chunk_table.h"
#include "code_map.h"
#include "folio.h"
#include "guard.h"
#include "heap_profile.h"
#include "huge.h"
#include "options.h"
#include "os.h"
#include "proc_maps.h"
#include "purge.h"
#include "sizeclass.h"
#include "text.h"
#include "thread_cache.h"

static int on;
static struct pm_os_file err; /* stderr's file */

void pm_leak_check_init(void)
{
    on = pm_option(PM_OPT_LEAKS) && pm_os_file_keep(2, &err);
}

/* An object in use: its start, with the marks below in its low bits
 * (every object is PM_ALIGN-aligned), its bytes and its class. */
enum { REACHED = 1, CACHED = 2, SAMPLED = 4, MARKS = PM_ALIGN - 1 };
enum { HUGE_CLASS = PM_NBINS, GUARDED_CLASS, CLASSES };
struct object {
    uintptr_t at;
    size_t size;
    size_t class;
};

static uintptr_t start_of(const struct object *o)
{
    return o->at & ~(uintptr_t)MARKS;
}

struct sum {
    uint64_t samples, objects, bytes;
};

/* The stack below its frames that the check zeroes: deeper than
 * primalloc's paths go. */
#define WIPE_BYTES (16 << 10)

/* Ranges that are no roots though writable: the tables that hold
 * objects' addresses, and the check's own. */
#define EXCLUDED 5

/* The check's state, at the start of the mapping that holds its tables:
 * its words hold objects' addresses, so it lies where no root is. */
struct check {
    size_t bytes;           /* of the mapping */
    struct object *objects; /* by address */
    size_t n, room;
    uint32_t *todo; /* objects reached and not yet scanned */
    size_t ntodo;
    struct sum *stacks;  /* PM_PROF_STACKS, for the report */
    uintptr_t low, high; /* what the objects span */
    uintptr_t sp;        /* the exiting thread's stack pointer */
    uintptr_t excluded[EXCLUDED][2];
    unsigned nexcluded;
};

/* ---- the objects in use ---- */

static void add(struct check *c, uintptr_t at, size_t size, size_t class)
{
    if (c->n < c->room)
        c->objects[c->n] = (struct object){at, size, class};
    c->n++;
}

static void add_taken(void *ctx, void *object, size_t size)
{
    add(ctx, (uintptr_t)object, size, pm_bin_of_addr((uintptr_t)object));
}

static void add_chunk(void *ctx, uintptr_t chunk, struct pm_chunk_entry e)
{
    unsigned bin = pm_bin_of_tag(e.tag);
    if (bin < PM_NBINS)
        pm_folio_each_taken(bin, chunk, add_taken, ctx);
    else if (e.tag == PM_TAG_HUGE)
        add(ctx, chunk, pm_huge_usable(&e), HUGE_CLASS);
}

static void add_guarded(void *ctx, void *p, size_t usable, void *site)
{
    (void)site;
    add(ctx, (uintptr_t)p, usable, GUARDED_CLASS);
}

static void exclude(struct check *c, const void *base, size_t len)
{
    if (base && c->nexcluded < EXCLUDED) {
        c->excluded[c->nexcluded][0] = (uintptr_t)base;
        c->excluded[c->nexcluded++][1] = (uintptr_t)base + len;
    }
}

/* Every object in use, and the tables that hold objects' addresses
 * excluded from the roots. */
static void gather(struct check *c)
{
    size_t len;
    c->n = 0;
    c->nexcluded = 0;
    pm_chunk_each(add_chunk, c);
    const void *records = pm_guard_each(add_guarded, c, &len);
    exclude(c, records, len);
    const void *tables = pm_prof_tables(&len);
    exclude(c, tables, len);
    const void *caches = pm_cache_tables(&len);
    exclude(c, caches, len);
}

static void sift(struct object *v, size_t i, size_t n)
{
    for (size_t child; (child = 2 * i + 1) < n; i = child) {
        if (child + 1 < n && v[child + 1].at > v[child].at)
            child++;
        if (v[i].at >= v[child].at)
            return;
        struct object t = v[i];
        v[i] = v[child];
        v[child] = t;
    }
}

/* Heapsort: in place, no allocation, and the objects come mostly sorted
 * from the chunk table's walk, guarded ones aside. */
static void sort(struct object *v, size_t n)
{
    for (size_t i = n / 2; i-- > 0;)
        sift(v, i, n);
    for (size_t end = n; end-- > 1;) {
        struct object t = v[0];
        v[0] = v[end];
        v[end] = t;
        sift(v, 0, end);
    }
}

/* The index of the first object that starts after address a. */
static size_t after(const struct check *c, uintptr_t a)
{
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (start_of(&c->objects[mid]) <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Whether address a lies inside the object before index i (0: none). */
static int inside_before(const struct check *c, size_t i, uintptr_t a)
{
    return i && a - start_of(&c->objects[i - 1]) < c->objects[i - 1].size;
}

/* The object holding address a, or NULL. */
static struct object *holding(const struct check *c, uintptr_t a)
{
    if (a < c->low || a >= c->high)
        return 0;
    size_t i = after(c, a);
    return inside_before(c, i, a) ? &c->objects[i - 1] : 0;
}

static void cached(void *ctx, void *object)
{
    struct object *o = holding(ctx, (uintptr_t)object);
    if (o && start_of(o) == (uintptr_t)object)
        o->at |= CACHED;
}

/* ---- marking ---- */

static void reach(struct check *c, uintptr_t word)
{
    struct object *o = holding(c, word);
    if (o && !(o->at & (REACHED | CACHED))) {
        o->at |= REACHED;
        c->todo[c->ntodo++] = (uint32_t)(o - c->objects);
    }
}

__attribute__((no_sanitize("address", "thread"))) static void scan(struct check *c, uintptr_t from,
                                                                     uintptr_t to)
{
    for (uintptr_t a = (from + 7) & ~(uintptr_t)7; a + 8 <= to; a += 8)
        reach(c, *(const volatile uintptr_t *)a);
}

/* The first range at or after a that is no root, [*s, *t): an excluded
 * table or an object outside the chunks (a guarded one); 0 when none. */
static int next_skipped(const struct check *c, uintptr_t a, uintptr_t *s, uintptr_t *t)
{
    *s = UINTPTR_MAX;
    *t = 0;
    for (unsigned i = 0; i < c->nexcluded; i++)
        if (c->excluded[i][1] > a && c->excluded[i][0] < *s)
            *s = c->excluded[i][0], *t = c->excluded[i][1];
    size_t i = after(c, a);
    i -= inside_before(c, i, a);
    const struct object *o = i < c->n ? &c->objects[i] : 0;
    if (o && start_of(o) < *s)
        *s = start_of(o), *t = start_of(o) + o->size;
    return *s != UINTPTR_MAX;
}

/* Scans [lo, hi) of a root mapping but for primalloc's chunks and the
 * ranges next_skipped names. */
static void scan_root(struct check *c, uintptr_t lo, uintptr_t hi)
{
    while (lo < hi) {
        uintptr_t end = (lo | (PM_CHUNK - 1)) + 1;
        end = end < hi ? end : hi;
        const struct pm_chunk_entry *e = pm_chunk_entry_of(lo);
        if (e && pm_chunk_read(e).tag) {
            lo = end;
            continue;
        }
        uintptr_t s, t;
        if (next_skipped(c, lo, &s, &t) && s < end) {
            scan(c, lo, s > lo ? s : lo);
            lo = t;
        } else {
            scan(c, lo, end);
            lo = end;
        }
    }
}

static int scan_mapping(void *ctx, const struct pm_mapping *m)
{
    struct check *c = ctx;
    if (m->perms[0] == 'r' && m->perms[1] == 'w' && m->perms[3] == 'p')
        scan_root(c, c->sp > m->lo && c->sp < m->hi ? c->sp : m->lo, m->hi);
    return 0;
}

static __attribute__((noinline)) uintptr_t stack_pointer(void)
{
    return (uintptr_t)__builtin_frame_address(0);
}

/* Marks what the roots reach, then what that reaches: 0 when the maps
 * cannot be read. */
static __attribute__((noinline)) int mark(struct check *c)
{
    __builtin_unwind_init(); /* the registers the callers keep, into this frame */
    c->sp = stack_pointer();
    if (pm_maps_each(scan_mapping, c) < 0)
        return 0;
    while (c->ntodo) {
        const struct object *o = &c->objects[c->todo[--c->ntodo]];
        scan(c, start_of(o), start_of(o) + o->size);
    }
    return 1;
}

/* ---- the report ---- */

struct report {
    struct check *c;
    struct sum classes[CLASSES];
    struct sum total;
};

static void add_sample(void *ctx, const void *p, uint32_t stack, uint32_t objects, uint64_t bytes)
{
    struct report *r = ctx;
    struct object *o = holding(r->c, (uintptr_t)p);
    if (!o || o->at & (REACHED | CACHED))
        return;
    o->at |= SAMPLED;
    r->c->stacks[stack].samples++;
    r->c->stacks[stack].objects += objects;
    r->c->stacks[stack].bytes += bytes;
}

static void say(int fd, char *line, char *o)
{
    *o++ = '\n';
    pm_os_write(fd, line, (size_t)(o - line));
}

static char *put_sum(char *o, const char *head, const struct sum *s)
{
    o = pm_text_str(o, head);
    o = pm_text_dec(o, s->bytes);
    o = pm_text_str(o, " bytes in ");
    o = pm_text_dec(o, s->objects);
    return pm_text_str(o, " objects");
}

static void report_stack(int fd, uint32_t stack, const struct sum *s)
{
    char line[512], *o = put_sum(line, "primalloc: leak of ~", s);
    o = pm_text_str(o, " (");
    o = pm_text_dec(o, s->samples);
    say(fd, line, pm_text_str(o, " sampled), allocated from:"));
    void *const *frames;
    int depth = pm_prof_frames(stack, &frames);
    for (int i = 0; i < depth; i++)
        say(fd, line, pm_code_put(pm_text_str(line, "primalloc:     "), (uintptr_t)frames[i]));
}

static void report_class(int fd, size_t class, const struct sum *s)
{
    char line[160], *o = put_sum(line, "primalloc: leak of ", s);
    if (class == HUGE_CLASS)
        o = pm_text_str(o, " (huge)");
    else if (class == GUARDED_CLASS)
        o = pm_text_str(o, " (guarded)");
    else
        o = pm_text_dec(pm_text_str(o, " of size class "), pm_bins[class].size);
    say(fd, line, o);
}

static void report(int fd, struct report *r)
{
    pm_prof_each(add_sample, r);
    for (size_t i = 0; i < r->c->n; i++) {
        const struct object *o = &r->c->objects[i];
        if (o->at & (REACHED | CACHED))
            continue;
        r->total.objects++;
        r->total.bytes += o->size;
        if (!(o->at & SAMPLED)) {
            r->classes[o->class].objects++;
            r->classes[o->class].bytes += o->size;
        }
    }
    char line[160];
    if (!r->total.objects) {
        say(fd, line, pm_text_str(line, "primalloc: leaks: none"));
        return;
    }
    say(fd, line, pm_text_str(put_sum(line, "primalloc: leaks: ", &r->total), " that nothing points to"));
    for (uint32_t s = 0; s < PM_PROF_STACKS; s++)
        if (r->c->stacks[s].samples)
            report_stack(fd, s, &r->c->stacks[s]);
    for (size_t k = 0; k < CLASSES; k++)
        if (r->classes[k].objects)
            report_class(fd, k, &r->classes[k]);
}

static size_t pages(size_t bytes)
{
    return (bytes + PM_PAGE - 1) & ~(PM_PAGE - 1);
}

/* The check with its tables for at most room objects, or NULL. */
static struct check *map_check(size_t room)
{
    size_t head = pages(sizeof(struct check)), objects = pages(room * sizeof(struct object));
    size_t todo = pages(room * sizeof(uint32_t)), bytes = head + objects + todo + pages(PM_PROF_STACKS * sizeof(struct sum));
    char *m = pm_os_map(bytes, PM_PAGE);
    struct check *c = (struct check *)m;
    if (c) {
        c->bytes = bytes;
        c->objects = (struct object *)(m + head);
        c->todo = (uint32_t *)(m + head + objects);
        c->stacks = (struct sum *)(m + head + objects + todo);
        c->room = room;
    }
    return c;
}

/* Every cached object back to the folios, settled as any caller of the
 * folios settles (background.h) but with no thread to start or wake at
 * exit, the objects in use found and sorted, those other threads cache
 * marked: the check, or NULL when it cannot be mapped.  What this leaves
 * on the stack, pm_os_wipe_stack wipes. */
static __attribute__((noinline)) struct check *prepare(void)
{
    pm_tc_flush();
    pm_cache_drain();
    pm_purge_settle();
    struct check count = {0};
    gather(&count);
    struct check *c = map_check(count.n + count.n / 8 + 1024);
    if (!c)
        return 0;
    gather(c);
    exclude(c, c, c->bytes);
    c->n = c->n < c->room ? c->n : c->room;
    sort(c->objects, c->n);
    c->low = c->n ? start_of(&c->objects[0]) : 0;
    c->high = c->n ? start_of(&c->objects[c->n - 1]) + c->objects[c->n - 1].size : 0;
    pm_tc_each_cached(cached, c);
    return c;
}

/* The check, in a frame below the one pm_os_wipe_stack zeroed, so that its
 * locals not yet written hold no address from the exit handlers that ran
 * before. */
static __attribute__((noinline)) void check(int fd)
{
    struct check *c = prepare();
    char line[160];
    if (!c) {
        say(fd, line, pm_text_str(line, "primalloc: leaks: no memory for the check"));
        return;
    }
    pm_os_wipe_stack(WIPE_BYTES);
    if (!mark(c)) {
        say(fd, line, pm_text_str(line, "primalloc: leaks: cannot read /proc/self/maps"));
    } else {
        struct report r = {c, {{0}}, {0}};
        report(fd, &r);
    }
    pm_os_unmap(c, c->bytes);
}

__attribute__((destructor)) static void check_at_exit(void)
{
    int fd = on ? pm_os_file_fd(&err) : -1;
    if (fd >= 0) {
        pm_os_wipe_stack(WIPE_BYTES);
        check(fd);
    }
}
