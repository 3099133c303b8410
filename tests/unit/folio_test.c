/* SPDX-License-Identifier: MIT */
/* Folios: distinct aligned objects, fullest-fit choice, uncommit of empty
 * folios (on purge, after a second, or past the high-water mark) and of
 * free pages inside folios in use, fresh folios carved per CPU, bins'
 * first folios at different cache sets, detection of double and interior
 * frees, and the settle a free asks of its own thread. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <sys/mman.h>
#include "background.h"
#include "chunk_pool.h"
#include "chunk_table.h"
#include "primalloc.h"
#include "folio.h"
#include "free_object.h"
#include "sizeclass.h"
#include "unit.h"

static unsigned bin;
static const struct pm_bin *b;

static size_t folio_of(void *p)
{
    uintptr_t off = (uintptr_t)p & (PM_CHUNK - 1);
    return (off - PM_DATA_START) / pm_folio_bytes(b);
}

/* take and give call the folios as the thread cache does: each call, then
 * the settle it may ask for. */
static void *take(unsigned n, void **out)
{
    unsigned got;
    void *head = pm_folio_alloc(bin, n, &got);
    pm_background_if_wanted();
    CHECK(got == n);
    unsigned i = 0;
    for (void *p = head; p; p = pm_link_next(p, "malloc"))
        out[i++] = p;
    CHECK(i == n);
    return head;
}

static void give(void **objs, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        pm_link_set(objs[i], i + 1 < n ? objs[i + 1] : 0);
    pm_folio_free_list(bin, objs[0], "free");
    CHECK(!pm_background_settled());
    pm_background_if_wanted();
    CHECK(pm_background_settled());
}

static int resident(void *p, size_t len)
{
    unsigned char vec[64];
    CHECK(len / PM_PAGE <= sizeof vec);
    CHECK(mincore(p, len, vec) == 0);
    for (size_t i = 0; i < len / PM_PAGE; i++)
        if (vec[i] & 1)
            return 1;
    return 0;
}

static uintptr_t chunk_of_first(unsigned in_bin, unsigned n)
{
    unsigned got;
    void *head = pm_folio_alloc(in_bin, n, &got);
    pm_background_if_wanted();
    CHECK(head && got == n);
    return (uintptr_t)head & ~(PM_CHUNK - 1);
}

/* A whole folio's worth of a fresh bin, carved on two CPUs in turn: each
 * CPU carves from a chunk of its own and keeps carving from it, once the
 * process has threads; a process of one thread carves from one chunk
 * wherever it runs. */
static void check_lanes(unsigned lane_bin, int cpu_a, int cpu_b, int threaded)
{
    unsigned per = 1u << pm_bins[lane_bin].folio_log;
    pin(cpu_a);
    uintptr_t a = chunk_of_first(lane_bin, per);
    pin(cpu_b);
    uintptr_t other = chunk_of_first(lane_bin, per);
    pin(cpu_a);
    CHECK(chunk_of_first(lane_bin, per) == a);
    CHECK(cpu_b == cpu_a || !threaded ? other == a : other != a);
}

/* The first objects of the first 16 bins, each from its bin's first
 * folio, lie at 16 different pages of a 128 KiB stretch (a way of a 1 MiB
 * 8-way cache), not all at the same offset into their chunks.  Run in a
 * child, as the next check is, so that the chunks it takes leave no trace
 * in the footprint the checks after it expect. */
static void check_colors(void)
{
    uint32_t seen = 0;
    for (unsigned bin = 0; bin < 16; bin++) {
        unsigned got;
        void *p = pm_folio_alloc(bin, 1, &got);
        CHECK(got == 1);
        uint32_t page = (uint32_t)((uintptr_t)p / PM_PAGE % 32);
        CHECK(!(seen >> page & 1));
        seen |= 1u << page;
        pm_link_set(p, 0);
        pm_folio_free_list(bin, p, "free");
        pm_background_if_wanted();
    }
    pm_folio_check();
}

/* A chunk the pool hands out dirty holds what its last owner wrote, in
 * its header too: a folio carved there and handed out whole is on no list
 * all the same, so that a free files it.  The run here is filled with
 * 32-bit ones, which read as a state on a list and as links to no folio.
 * The 4 KiB aligned bin (a folio an object) has no chunk yet, so its
 * first carve takes this run, the only whole one free. */
static void check_dirty_carve(void)
{
    unsigned page_bin = pm_pow2_bin_by_log[12];
    size_t dirty;
    uint32_t *run = pm_pool_take(2, PM_CHUNK, PM_TAG_HUGE, 2 * PM_CHUNK / PM_PAGE, &dirty);
    CHECK(run);
    for (size_t i = 0; i < 2 * PM_CHUNK / sizeof *run; i++)
        run[i] = 1;
    pm_pool_put(run, 2, 2 * PM_CHUNK);
    unsigned got;
    char *p = pm_folio_alloc(page_bin, 1, &got);
    CHECK(got == 1 && p >= (char *)run && p < (char *)run + 2 * PM_CHUNK);
    pm_link_set(p, 0);
    pm_folio_free_list(page_bin, p, "free");
    pm_folio_check();
}

/* A thread that allocates once: where the C library does not say
 * whether the process has threads, a second thread that allocates makes
 * it threaded (os.h), so the main thread allocates too. */
static void *nothing(void *arg)
{
    pm_free(pm_malloc(16));
    return arg;
}

static void free_twice(void *p)
{
    void *one[1] = {p};
    give(one, 1);
    give(one, 1);
}

/* Three neighbours freed in one list whose middle one is already free:
 * the report names that one. */
static void free_middle_twice(void *arg)
{
    void **three = arg;
    give(&three[1], 1);
    give(three, 3);
}

/* A list that comes back to its first object (two objects of one bitmap
 * word, each linked to the other): a double free of that object. */
static void free_cycle(void *arg)
{
    void **two = arg;
    pm_link_set(two[0], two[1]);
    pm_link_set(two[1], two[0]);
    pm_folio_free_list(bin, two[0], "free");
}

/* A caller of the folios that leaves their settle undone: the thread's
 * next malloc finds it so and aborts (fast_path.h). */
static void forget_settle(void *p)
{
    pm_link_set(p, 0);
    pm_folio_free_list(bin, p, "free");
    pm_free(pm_malloc(16));
}

static void *settled_here(void *unused)
{
    (void)unused;
    return (void *)(uintptr_t)pm_background_settled();
}

/* The settle a call of the folios asks for is its own thread's: another
 * thread has none to run, and the caller that forgets it fails at its
 * next malloc. */
static void check_settle_per_thread(void)
{
    void *one[1];
    take(1, one);
    check_fatal(forget_settle, one[0], "pm_background_settled() failed");
    pm_link_set(one[0], 0);
    pm_folio_free_list(bin, one[0], "free");
    CHECK(!pm_background_settled());
    pthread_t t;
    void *other;
    CHECK(pthread_create(&t, 0, settled_here, 0) == 0 && pthread_join(t, &other) == 0);
    CHECK(other);
    CHECK(!pm_background_settled());
    pm_background_if_wanted();
    CHECK(pm_background_settled());
}

static void free_interior(void *p)
{
    void *one[1] = {(char *)p + 16};
    give(one, 1);
}

/* An object of the 256-byte bin freed again once its chunk left that bin
 * (and may be this test's bin's now): its folio record would be read from
 * the chunk as it is now.  Its page is made writable first, wherever the
 * pool left it unmapped or inaccessible, for the link the free writes. */
static void free_after_leaving(void *p)
{
    void *page = (void *)((uintptr_t)p & ~(uintptr_t)(PM_PAGE - 1));
    if (mmap(page, PM_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) != page)
        CHECK(!mprotect(page, PM_PAGE, PROT_READ | PROT_WRITE));
    pm_link_set(p, 0);
    pm_folio_free_list(pm_bin_of_small(256), p, "free");
}

/* Whether any whole page of `page` bytes between from and to is
 * resident: free objects keep their PM_PAGE pages until a release, which
 * gives back the kernel's whole pages (pm_os_page), larger ones where the
 * kernel's page is. */
static int resident_in(const char *from, const char *to, size_t page)
{
    uintptr_t a = ((uintptr_t)from + page - 1) & ~(uintptr_t)(page - 1);
    uintptr_t z = (uintptr_t)to & ~(uintptr_t)(page - 1);
    for (; a < z; a += page)
        if (resident((void *)a, page))
            return 1;
    return 0;
}

static int resident_between(const char *from, const char *to)
{
    CHECK(to - from >= 2 * (long)PM_PAGE);
    return resident_in(from, to, PM_PAGE);
}

static int released_between(const char *from, const char *to)
{
    return !resident_in(from, to, pm_os_page());
}

static void fill(char *p, size_t size, int i)
{
    memset(p, i, size);
}

static int filled(const char *p, size_t size, int i)
{
    for (size_t k = 0; k < size; k++)
        if (p[k] != (char)i)
            return 0;
    return 1;
}

/* Objects i..j-1 of objs back to the folios of bin mb, as one list. */
static void give_run(unsigned mb, void **objs, unsigned i, unsigned j)
{
    for (unsigned k = i; k < j; k++)
        pm_link_set(objs[k], k + 1 < j ? objs[k + 1] : 0);
    pm_folio_free_list(mb, objs[i], "free");
}

/* Pages inside a folio in use go back once the objects on them have been
 * free from one release to the next; pages of an object handed out in
 * between stay, as do its contents and those of the objects in use; a
 * forced release takes every free run at once. */
static void check_release(void)
{
    unsigned mb = pm_bin_of_small(10000);
    const struct pm_bin *m = &pm_bins[mb];
    unsigned n = 1u << m->folio_log;
    CHECK(n == 64 && m->size > 2 * PM_PAGE);
    void *objs[64];
    unsigned got;
    void *head = pm_folio_alloc(mb, n, &got);
    CHECK(got == n);
    for (unsigned i = 0; i < n; i++, head = pm_link_next(head, "malloc"))
        objs[i] = head;
    for (unsigned i = 0; i < n; i++) {
        CHECK((char *)objs[i] == (char *)objs[0] + (size_t)i * m->size);
        fill(objs[i], m->size, (int)i);
    }
    /* In use: objects 0, 20 and 63. */
    give_run(mb, objs, 1, 20);
    give_run(mb, objs, 21, 63);
    CHECK(pm_folio_release_pages(0) == 0);
    CHECK(resident_between(objs[3], objs[20]));

    /* Objects 1 and 2 go out again between the two looks. */
    void *two = pm_folio_alloc(mb, 2, &got);
    CHECK(got == 2 && two == objs[1] && pm_link_next(two, "malloc") == objs[2]);
    fill(objs[1], m->size, 1);
    fill(objs[2], m->size, 2);
    CHECK(pm_folio_release_pages(0) == 1);
    CHECK(released_between(objs[3], objs[20]));
    CHECK(released_between(objs[21], objs[63]));
    for (unsigned i = 0; i < n; i++)
        if (i <= 2 || i == 20 || i == 63)
            CHECK(filled(objs[i], m->size, (int)i));
    pm_folio_check();
    CHECK(pm_folio_release_pages(0) == 0);

    give_run(mb, objs, 1, 3);
    CHECK(resident_between(objs[1], objs[3]));
    CHECK(pm_folio_release_pages(1) == 1);
    CHECK(released_between(objs[1], objs[20]));
    pm_folio_check();

    /* Objects on released pages are handed out and written again; the
     * objects in use keep their contents. */
    head = pm_folio_alloc(mb, n - 3, &got);
    CHECK(got == n - 3);
    for (void *next; head; head = next) {
        next = pm_link_next(head, "malloc");
        fill(head, m->size, 7);
    }
    CHECK(filled(objs[0], m->size, 0) && filled(objs[20], m->size, 20) && filled(objs[63], m->size, 63));
    pm_folio_check();
}

/* A bin that hands out an object whose pages a release gave back waits
 * twice as many visits before it looks again: an object freed after such
 * a hand-out keeps its pages through the two visits that skip the bin
 * and the look that marks it, and loses them at the next look, two
 * visits later rather than one. */
static void check_release_backoff(void)
{
    unsigned mb = pm_bin_of_small(12000);
    const struct pm_bin *m = &pm_bins[mb];
    unsigned n = 1u << m->folio_log, got;
    CHECK(n <= 64 && m->size > 2 * PM_PAGE);
    void *objs[64];
    void *head = pm_folio_alloc(mb, n, &got);
    CHECK(got == n);
    for (unsigned i = 0; i < n; i++, head = pm_link_next(head, "malloc"))
        objs[i] = head;
    give_run(mb, objs, 1, n);
    pm_folio_release_pages(0);
    pm_folio_release_pages(0);
    CHECK(released_between(objs[1], objs[2]));

    void *again = pm_folio_alloc(mb, 1, &got);
    CHECK(got == 1 && again == objs[1]);
    fill(objs[1], m->size, 1);
    give_run(mb, objs, 1, 2);
    for (int visit = 0; visit < 4; visit++) {
        pm_folio_release_pages(0);
        CHECK(resident_between(objs[1], objs[2]));
    }
    pm_folio_release_pages(0);
    CHECK(released_between(objs[1], objs[2]));
    pm_folio_check();
}

/* The number of the object at p in its chunk, of bin m. */
static uint32_t object_number(const struct pm_bin *m, const void *p)
{
    return (uint32_t)((((uintptr_t)p & (PM_CHUNK - 1)) - PM_DATA_START) / m->size);
}

/* A folio of a fuller list is reached while an emptier one holds more
 * folios than a visit looks at: SPREAD folios of 320-byte objects keep
 * one object each, one more keeps 24.  A list that a chunk's last folio,
 * of fewer objects, begins runs on into the next folio carved: it and
 * what that folio has left stay taken, and the next list is a whole
 * folio again. */
#define SPREAD 130
static void check_release_reach(void)
{
    unsigned sb = pm_bin_of_small(320);
    const struct pm_bin *m = &pm_bins[sb];
    unsigned n = 1u << m->folio_log;
    CHECK(n == 64 && pm_folio_bytes(m) > 2 * PM_PAGE);
    CHECK(m->objs_per_chunk % n != 0);
    static void *objs[SPREAD + 1][64];
    unsigned split = 0;
    for (unsigned f = 0; f <= SPREAD;) {
        unsigned got;
        void *head = pm_folio_alloc(sb, n, &got);
        CHECK(got == n);
        unsigned whole = object_number(m, head) % n == 0;
        for (unsigned i = 0; i < n; i++, head = pm_link_next(head, "malloc")) {
            objs[f][i] = head;
            whole &= (char *)head == (char *)objs[f][0] + (size_t)i * m->size;
        }
        if (!whole) {
            uint32_t last = object_number(m, objs[f][n - 1]), end = (last / n + 1) * n;
            unsigned rest = (end < m->objs_per_chunk ? end : m->objs_per_chunk) - last - 1;
            if (rest)
                CHECK(pm_folio_alloc(sb, rest, &got) && got == rest);
            split++;
            continue;
        }
        memset(objs[f++][0], 1, pm_folio_bytes(m));
    }
    CHECK(split >= 1);
    for (unsigned f = 0; f < SPREAD; f++)
        give_run(sb, objs[f], 1, n);
    give_run(sb, objs[SPREAD], 1, 41);
    CHECK(resident_between(objs[SPREAD][1], objs[SPREAD][41]));
    for (int visit = 0; visit < 4; visit++)
        pm_folio_release_pages(0);
    CHECK(released_between(objs[SPREAD][1], objs[SPREAD][41]));
    for (unsigned f = 0; f < SPREAD; f++)
        CHECK(released_between(objs[f][1], (char *)objs[f][0] + pm_folio_bytes(m)));
    pm_folio_check();
}

int main(void)
{
    cpu_set_t allowed;
    CHECK(sched_getaffinity(0, sizeof allowed, &allowed) == 0);
    int cpu_a = -1, cpu_b = -1;
    for (int c = 0; c < CPU_SETSIZE && cpu_b < 0; c++)
        if (CPU_ISSET(c, &allowed)) {
            if (cpu_a < 0)
                cpu_a = c;
            else if (c % PM_CARVE_LANES != cpu_a % PM_CARVE_LANES)
                cpu_b = c;
        }
    /* This leaves the test pinned to cpu_a: fresh folios then come one
     * after the other from one chunk, as the checks below expect. */
    cpu_b = cpu_b < 0 ? cpu_a : cpu_b;
    in_child(check_colors);
    in_child(check_dirty_carve);
    check_lanes(pm_bin_of_small(128), cpu_a, cpu_b, 0);
    pthread_t t;
    CHECK(pthread_create(&t, 0, nothing, 0) == 0 && pthread_join(t, 0) == 0);
    pm_free(pm_malloc(16));
    check_lanes(pm_bin_of_small(160), cpu_a, cpu_b, 1);

    bin = pm_bin_of_small(64);
    b = &pm_bins[bin];
    unsigned n = 1u << b->folio_log; /* 64 objects in a one-page folio */
    CHECK(n == 64 && pm_folio_bytes(b) == PM_PAGE);

    void *objs[256];
    take(4 * n, objs);
    for (unsigned i = 0; i < 4 * n; i++) {
        CHECK(pm_bin_of_addr((uintptr_t)objs[i]) == bin);
        CHECK(((uintptr_t)objs[i] & 63) == 0);
        memset(objs[i], 0xab, b->size);
        for (unsigned j = 0; j < i; j++)
            CHECK(objs[i] != objs[j]);
    }
    size_t f0 = folio_of(objs[0]);
    CHECK(folio_of(objs[n]) == f0 + 1 && folio_of(objs[3 * n]) == f0 + 3);

    /* Folio f0 gets 10 free objects, f0+1 gets 20: the next objects come
     * from the fuller one, f0, until it is full again. */
    give(objs, 10);
    give(objs + n, 20);
    void *again[20];
    take(10, again);
    for (int i = 0; i < 10; i++)
        CHECK(folio_of(again[i]) == f0);
    take(1, again);
    CHECK(folio_of(again[0]) == f0 + 1);

    /* An empty folio stays committed while that keeps the footprint under
     * its high-water mark, and is given back on a purge: its page leaves
     * memory, or where the kernel's page is larger than the folio, the
     * folio is cleared in place (os.h). */
    unsigned char *folio2 = objs[2 * n];
    CHECK(resident(folio2, PM_PAGE));
    give(objs + 2 * n, n);
    CHECK(resident(folio2, PM_PAGE));
    while (pm_folio_purge_one(0, 1))
        ;
    if (pm_os_page() > PM_PAGE) {
        for (size_t i = 0; i < PM_PAGE; i++)
            CHECK(folio2[i] == 0);
    } else {
        CHECK(!resident(folio2, PM_PAGE));
    }

    pm_folio_check();
    struct pm_folio_census c;
    pm_folio_census(bin, &c);
    CHECK(c.objects >= 4 * n);
    CHECK(c.free == c.objects - (4 * n - n - 20 + 1));

    /* Past the high-water mark: once the emptied folios are reused and one
     * more folio is needed, empty folios of other bins are given back; the
     * other bin's only chunk, empty then, leaves it for the pool (and may
     * serve this bin next). */
    unsigned other = pm_bin_of_small(256);
    void *big[64];
    unsigned got;
    void *list = pm_folio_alloc(other, 64, &got);
    CHECK(got == 64);
    for (unsigned i = 0; i < 64; i++, list = pm_link_next(list, "malloc"))
        big[i] = list;
    memset(big[0], 1, 64 * 256);
    for (unsigned i = 0; i < 64; i++)
        pm_link_set(big[i], i + 1 < 64 ? big[i + 1] : 0);
    pm_folio_free_list(other, big[0], "free");
    CHECK(resident(big[0], 4 * PM_PAGE));
    void *more[256];
    pm_folio_census(other, &c);
    CHECK(c.chunks == 1);
    take(4 * n, more);
    pm_folio_census(other, &c);
    CHECK(c.chunks == 0);
    pm_folio_check();

    check_fatal(free_twice, objs[3 * n], "free(0x");
    check_fatal(free_twice, objs[3 * n], "double free");
    char middle[64];
    snprintf(middle, sizeof middle, "free(%p): double free", objs[3 * n + 1]);
    check_fatal(free_middle_twice, &objs[3 * n], middle);
    snprintf(middle, sizeof middle, "free(%p): double free", objs[3 * n]);
    check_fatal(free_cycle, &objs[3 * n], middle);
    check_fatal(free_interior, objs[3 * n + 1], "pointer inside an object");
    snprintf(middle, sizeof middle, "free(%p): double free", big[5]);
    check_fatal(free_after_leaving, big[5], middle);
    check_settle_per_thread();
    check_release();
    check_release_reach();
    in_child(check_release_backoff);
    printf("folio ok\n");
    return 0;
}
