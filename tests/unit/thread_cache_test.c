/* SPDX-License-Identifier: MIT */
/* Thread cache: objects freed by a thread are the next it gets back, but
 * not one freed before the thread allocated from its bin; the cache holds
 * at most a list and a spare batch, it knows which objects it holds, a
 * double free of any of them aborts, and thread exit empties the cache.
 * A new thread sends objects carved for another CPU's lane home until it
 * has freed a while with none to send, and its first free of a pointer
 * inside an object aborts too.  Threads hold no
 * more than their budgets, and a bin's first lists are short.  An empty
 * list's head is the list end, never NULL. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include "cache.h"
#include "chunk_table.h"
#include "folio.h"
#include "primalloc.h"
#include "sizeclass.h"
#include "thread_cache.h"
#include "unit.h"

static void double_free(void *p)
{
    pm_free(p);
    pm_free(p);
}

/* p freed under others in its list, then freed again: the pop that
 * reaches its second copy aborts. */
static void double_free_under_others(void *p)
{
    void *q = pm_malloc(100);
    pm_free(p);
    pm_free(q);
    pm_free(p);
    for (int i = 0; i < 3; i++)
        pm_malloc(100);
}

/* p freed, then enough others that the list holding p becomes the spare
 * batch, then p freed again: the pops reach both copies, the second in
 * the spare once the list runs empty. */
static void double_free_in_spare(void *p)
{
    unsigned batch = pm_bins[pm_bin_of_small(100)].batch;
    void *others[batch];
    for (unsigned i = 0; i < batch; i++)
        others[i] = pm_malloc(100);
    pm_free(p);
    for (unsigned i = 0; i < batch; i++)
        pm_free(others[i]);
    CHECK(pm_tc_holds(p, pm_bin_of_small(100), "free"));
    pm_free(p);
    for (unsigned i = 0; i < 2 * batch + 2; i++)
        pm_malloc(100);
}

/* A thread whose first call frees a pointer inside an object: its entries
 * hold no object test yet, which sends the free the slow way, where it
 * aborts; should it return, the process ends before any later check could
 * find the pointer in the thread's cache. */
static void *free_inside(void *p)
{
    pm_free((char *)p + PM_ALIGN);
    _exit(0);
}

static void new_thread_frees_inside(void *p)
{
    pthread_t t;
    CHECK(pthread_create(&t, 0, free_inside, p) == 0);
    CHECK(pthread_join(t, 0) == 0);
}

/* The copies of the bins' object tests, and the entry of no bin, as the
 * program's writes past an object into the thread's TLS could leave them. */
static void object_test_changed(void *p)
{
    (void)p;
    pm_tc.bins[pm_bin_of_small(100)].limit++;
    pm_tc_check();
}

static void entry_of_no_bin_written(void *p)
{
    (void)p;
    pm_tc.none.room = 1;
    pm_tc_check();
}

/* p freed, then its link written over as a use after free would: the
 * check of the thread's cache finds the list leaving its bin. */
/* A link overwritten with an aligned address, of no bin of objects. */
static void written_after_free(void *p)
{
    static _Alignas(PM_ALIGN) char elsewhere[PM_ALIGN];
    pm_free(p);
    pm_link_set(p, elsewhere);
    pm_tc_check();
}

/* A link overwritten with a word that decodes to an unaligned address. */
static void link_overwritten(void *p)
{
    pm_free(p);
    *(uintptr_t *)p = pm_link_secret ^ 1;
    pm_tc_check();
}

/* A list head of NULL, which pop would read through. */
static void head_null(void *p)
{
    (void)p;
    pm_tc.bins[pm_bin_of_small(100)].head = 0;
    pm_tc_check();
}

/* A bin holding p whose open bit is gone: thread exit would leave p. */
static void open_bit_lost(void *p)
{
    pm_free(p);
    unsigned bin = pm_bin_of_small(100);
    pm_tc.open.w[bin / 64] &= ~pm_bin_bit(bin);
    pm_tc_check();
}

static void realloc_freed(void *p)
{
    pm_free(p);
    pm_realloc(p, 100);
}

/* Objects of the worker's bin in the shared levels and its cache, counted
 * just before it exits. */
static size_t held_at_exit;

/* Malloc's table of entries by size, once the first malloc has made it:
 * each size finds its bin's entry, in whichever thread asks; 0 the zero
 * entry; nothing above PM_LOOKUP_MAX. */
static void *entries_by_size(void *unused)
{
    (void)unused;
    CHECK(pm_tc_looks_up(PM_LOOKUP_MAX) && !pm_tc_looks_up(PM_LOOKUP_MAX + 1) && !pm_tc_looks_up(SIZE_MAX));
    CHECK(pm_tc_entry_of_size(0) == pm_tc_scaled(PM_NBINS * PM_BIN_STRIDE));
    for (size_t s = 1; s <= PM_LOOKUP_MAX; s++)
        CHECK(pm_tc_entry_of_size(s) == pm_tc_bin(pm_bin_of_small(s)));
    return 0;
}

static void *worker(void *arg)
{
    unsigned bin = pm_bin_of_small(48);
    unsigned batch = pm_bins[bin].batch;
    size_t n = 5 * (size_t)batch;
    void **objs = arg;
    CHECK(pm_tc_count(bin) == 0);
    for (size_t i = 0; i < n; i++) {
        objs[i] = pm_malloc(48);
        CHECK(objs[i] && pm_tc_count(bin) < 2 * (size_t)batch);
    }
    for (size_t i = 0; i < n; i++) {
        pm_free(objs[i]);
        CHECK(pm_tc_count(bin) <= 2 * (size_t)batch);
    }
    /* The fast library cannot tell (no mark): it answers 0. */
    for (size_t i = n - batch; i < n; i++)
        CHECK(pm_tc_holds(objs[i], bin, "free") == PM_CHECKED);
    CHECK(!pm_tc_holds(objs[0], bin, "free"));
    /* LIFO: the last freed comes back first, no longer marked free. */
    CHECK(pm_malloc(48) == objs[n - 1]);
    CHECK(!pm_tc_holds(objs[n - 1], bin, "free"));
    pm_free(objs[n - 1]);
    /* One object stays live (main frees it), so that the list is partial. */
    CHECK((objs[0] = pm_malloc(48)));
    CHECK(pm_tc_count(bin) % batch != 0);
    held_at_exit = pm_cache_count(bin) + pm_tc_count(bin);
    return 0;
}

/* Threads that each allocate and free 4 objects of every bin below huge
 * hold no more than their budgets, and their budgets beyond their own
 * part no more than the shared one. */
#define BUDGET_THREADS 64
static pthread_barrier_t budgets_taken;
static long budgets[BUDGET_THREADS];

static void *within_budget(void *arg)
{
    long *budget = arg;
    for (unsigned bin = 0; bin < PM_NBINS; bin++) {
        void *p[4];
        for (int i = 0; i < 4; i++)
            CHECK((p[i] = pm_malloc(pm_bins[bin].size)));
        for (int i = 0; i < 4; i++)
            pm_free(p[i]);
    }
    long held = 0;
    for (unsigned bin = 0; bin < PM_NBINS; bin++)
        held += (long)(pm_tc_count(bin) * pm_bins[bin].size);
    CHECK(held <= pm_tc.budget);
    CHECK(pm_tc.budget >= PM_TC_OWN_BUDGET && pm_tc.budget <= PM_TC_MAX_BUDGET);
    *budget = pm_tc.budget;
    pthread_barrier_wait(&budgets_taken);
    return 0;
}

static void budgets_bound(void)
{
    pthread_t t[BUDGET_THREADS];
    CHECK(!pthread_barrier_init(&budgets_taken, 0, BUDGET_THREADS));
    for (int i = 0; i < BUDGET_THREADS; i++)
        CHECK(!pthread_create(&t[i], 0, within_budget, &budgets[i]));
    long beyond_own = 0;
    for (int i = 0; i < BUDGET_THREADS; i++) {
        CHECK(!pthread_join(t[i], 0));
        beyond_own += budgets[i] - PM_TC_OWN_BUDGET;
    }
    CHECK(beyond_own <= PM_TC_SHARED_BUDGET);
    pthread_barrier_destroy(&budgets_taken);
}

/* Frees an object main allocated, its first call in that bin, then
 * allocates one of that size: it must not get main's object back, which
 * shares a line with main's others, and the object must not be lost. */
static void *free_foreign(void *x)
{
    unsigned bin = pm_bin_of_small(16);
    size_t cached = pm_cache_count(bin);
    pm_free(x);
    CHECK(pm_tc_count(bin) == 0 && pm_cache_count(bin) == cached + 1);
    void *q = pm_malloc(16);
    CHECK(q && q != x);
    pm_free(q);
    return 0;
}

/* A freed object in a thread's list holds the link to the object freed
 * before it, encoded with the secret, and the mark; the fast library
 * stores the link as it is and no mark, and a thread's list there does
 * not test a freed object against its head. */
static void stored_form(void)
{
    unsigned bin = pm_bin_of_small(64);
    void **p = pm_malloc(64), **q = pm_malloc(64);
    CHECK(p && q);
    p[1] = q[1] = 0;
    pm_free(p);
    pm_free(q);
    CHECK((uintptr_t)q[0] == ((uintptr_t)p ^ pm_link_key()));
    CHECK(PM_CHECKED ? pm_link_key() != 0 : pm_link_key() == 0);
    CHECK(pm_carries_mark(q) == PM_CHECKED);
    CHECK(((uint32_t *)q)[PM_FREE_MARK_HALF] == (PM_CHECKED ? PM_FREE_MARK : 0));
    CHECK(pm_tc_holds(q, bin, "free") == PM_CHECKED);
    CHECK(pm_malloc(64) == q && pm_malloc(64) == p);
    pm_free(q);
    pm_free(p);
}

/* An object in which the program stored the free mark, or another value
 * with the mark's top byte (which sends free the slow way), is freed like
 * any other while the list has room: it joins the list, which stays one
 * list (it used to become the spare as if full). */
static void stored_value(void *second_word)
{
    unsigned bin = pm_bin_of_small(64);
    void **p = pm_malloc(64), **q = pm_malloc(64);
    CHECK(p && q);
    pm_free(q);
    size_t before = pm_tc_count(bin);
    p[1] = second_word;
    pm_free(p);
    CHECK(pm_tc_count(bin) == before + 1);
    CHECK(pm_malloc(64) == p && pm_malloc(64) == q);
    pm_free(q);
    pm_free(p);
}

/* A list that runs empty ends at the list end, whose pop fails without
 * a test for empty and refills; every object of the list was handed out
 * once.  A thread's lists start there too: a new thread's first malloc
 * refills. */
static void *runs_empty(void *unused)
{
    (void)unused;
    unsigned bin = pm_bin_of_small(32), batch = pm_bins[bin].batch;
    CHECK(pm_tc_bin(bin)->head == PM_LIST_END && !pm_tc_take(pm_tc_bin(bin)));
    void **objs = pm_malloc(2 * batch * sizeof *objs);
    CHECK(objs);
    unsigned n = 0;
    while (!n || pm_tc_bin(bin)->head != PM_LIST_END)
        CHECK((objs[n++] = pm_malloc(32)) && n < batch);
    CHECK(!pm_tc_take(pm_tc_bin(bin)) && pm_tc_bin(bin)->head == PM_LIST_END);
    pm_tc_check();
    CHECK((objs[n++] = pm_malloc(32)) && pm_tc_bin(bin)->head != PM_LIST_END);
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = 0; j < i; j++)
            CHECK(objs[i] != objs[j]);
    for (unsigned i = 0; i < n; i++)
        pm_free(objs[i]);
    pm_free(objs);
    return 0;
}

/* Objects main allocated on the first CPU, freed by a thread on the
 * second; HOME_SIZE is a small bin, WHOLE_SIZE a medium one, bins no
 * other test here uses. */
enum { HOME_SIZE = 150, WHOLE_SIZE = 600 };
static int cpu[2];
static void **home_objs;
static size_t n_home;
static void *whole;

static void free_one(void *p)
{
    pm_free(p);
}

/* A new thread on the second CPU that allocates from the bin frees
 * objects of the first CPU's lane: whole batches go to the first CPU's
 * cache while the thread runs, the rest it holds (a double free of the
 * last aborts at once) until it exits, and none of them is what it gets
 * next; a medium object of that lane it keeps, the next it gets.  Once
 * it has freed PM_TC_NEW_FREES times, it keeps a small one too. */
static void *free_away(void *unused)
{
    (void)unused;
    pin(cpu[1]);
    unsigned bin = pm_bin_of_small(HOME_SIZE), batch = pm_bins[bin].batch;
    void *mine = pm_malloc(HOME_SIZE);
    CHECK(mine);
    size_t cached = pm_cache_count(bin), held = pm_tc_count(bin), sent = n_home - n_home % batch;
    for (size_t i = 0; i + 1 < n_home; i++)
        pm_free(home_objs[i]);
    CHECK(pm_cache_count(bin) == cached + sent);
    CHECK(pm_tc_count(bin) == held + n_home - 1 - sent);
    if (PM_CHECKED) {
        CHECK(pm_tc_holds(home_objs[n_home - 2], bin, "free"));
        check_fatal(free_one, home_objs[n_home - 2], "double free");
    }
    void *next = pm_malloc(HOME_SIZE);
    for (size_t i = 0; i + 1 < n_home; i++)
        CHECK(next != home_objs[i]);
    pm_free(next);
    void *own = pm_malloc(WHOLE_SIZE);
    CHECK(own);
    pm_free(whole);
    CHECK(pm_malloc(WHOLE_SIZE) == whole);
    pm_free(whole);
    pm_free(own);
    for (unsigned i = 0; i < PM_TC_NEW_FREES; i++) {
        void *p = pm_malloc(16);
        CHECK(p);
        pm_free(p);
    }
    held = pm_tc_count(bin);
    pm_free(home_objs[n_home - 1]);
    CHECK(pm_tc_count(bin) == held + 1);
    CHECK(pm_malloc(HOME_SIZE) == home_objs[n_home - 1]);
    pm_free(home_objs[n_home - 1]);
    pm_free(mine);
    return 0;
}

static void sends_home(void)
{
    unsigned bin = pm_bin_of_small(HOME_SIZE), batch = pm_bins[bin].batch;
    /* A batch and one to free at first (a thread keeping them would hand
     * none to the shared levels: its list and spare take them), and one
     * for later. */
    n_home = (size_t)batch + 2;
    home_objs = pm_malloc(n_home * sizeof *home_objs);
    CHECK(home_objs);
    for (size_t i = 0; i < n_home; i++) {
        CHECK((home_objs[i] = pm_malloc(HOME_SIZE)));
        CHECK(pm_chunk_lane((uintptr_t)home_objs[i]) == (unsigned)cpu[0] % PM_CARVE_LANES);
    }
    CHECK((whole = pm_malloc(WHOLE_SIZE)));
    CHECK(pm_chunk_lane((uintptr_t)whole) == (unsigned)cpu[0] % PM_CARVE_LANES);
    pthread_t t;
    CHECK(pthread_create(&t, 0, free_away, 0) == 0);
    CHECK(pthread_join(t, 0) == 0);
    /* No object of the bin is live: each is in a folio, the shared levels
     * or main's cache. */
    struct pm_folio_census c;
    pm_folio_census(bin, &c);
    CHECK(c.objects == c.free + pm_cache_count(bin) + pm_tc_count(bin));
    pm_free(home_objs);
}

/* A new thread that frees PM_TC_NEW_QUIET objects in a row, none of which
 * goes home, is no longer new: an object of the first CPU's lane it frees
 * next stays in its list, the next it gets.  The objects it frees first
 * are of a bin it does not allocate from, so none goes home; QUIET_SIZE
 * and their size are small bins, which no other test here uses. */
enum { QUIET_SIZE = 70, FIRST_SIZE = 200 };

static void *quiet_keeps(void *foreign)
{
    pin(cpu[1]);
    void *mine = pm_malloc(QUIET_SIZE);
    CHECK(mine);
    void **first = ((void **)foreign)[0];
    for (unsigned i = 0; i < PM_TC_NEW_QUIET; i++)
        pm_free(first[i]);
    pm_free(foreign);
    CHECK(pm_malloc(QUIET_SIZE) == foreign);
    pm_free(foreign);
    pm_free(mine);
    return 0;
}

static void quiet_ends_new(void)
{
    void **first = pm_malloc(PM_TC_NEW_QUIET * sizeof *first);
    CHECK(first);
    for (unsigned i = 0; i < PM_TC_NEW_QUIET; i++)
        CHECK((first[i] = pm_malloc(FIRST_SIZE)));
    void **foreign = pm_malloc(QUIET_SIZE);
    CHECK(foreign);
    CHECK(pm_chunk_lane((uintptr_t)foreign) == (unsigned)cpu[0] % PM_CARVE_LANES);
    foreign[0] = first;
    pthread_t t;
    CHECK(pthread_create(&t, 0, quiet_keeps, foreign) == 0);
    CHECK(pthread_join(t, 0) == 0);
    pm_free(first);
}

/* A bin's first lists from the folios are short: a bin of objects of a
 * page or more hands out one object, then as many as it has out, up to a
 * batch.  The bin must be untouched so far. */
static void first_lists_short(void)
{
    unsigned bin = pm_bin_of_small(3 * 4096);
    size_t size = pm_bins[bin].size, batch = pm_bins[bin].batch;
    struct pm_folio_census c;
    pm_folio_census(bin, &c);
    CHECK(c.objects == c.free);
    void *p[3];
    for (int i = 0; i < 3; i++)
        CHECK((p[i] = pm_malloc(size)));
    pm_folio_census(bin, &c);
    CHECK(batch >= 4 && c.objects - c.free == 4 && pm_folio_out(bin) == 4);
    CHECK(pm_tc_count(bin) == 1);
    for (int i = 0; i < 3; i++)
        pm_free(p[i]);
}

int main(void)
{
    /* The main thread runs on the first CPU, so that what it carves is of
     * that CPU's lane and what it frees stays with it (sends_home).  The
     * caches take a slot for each CPU allowed at their first use, which
     * comes first. */
    two_cpus(cpu);
    CHECK(!pm_tc_looks_up(0));
    pm_free(pm_malloc(1));
    entries_by_size(0);
    pthread_t t;
    CHECK(pthread_create(&t, 0, entries_by_size, 0) == 0);
    CHECK(pthread_join(t, 0) == 0);
    pin(cpu[0]);
    first_lists_short();
    sends_home();
    quiet_ends_new();
    unsigned bin = pm_bin_of_small(48);
    size_t batch = pm_bins[bin].batch;
    void **objs = pm_malloc(5 * batch * sizeof(void *));
    CHECK(pthread_create(&t, 0, worker, objs) == 0);
    CHECK(pthread_join(t, 0) == 0);
    /* At exit the thread's spare batch and its partial list, fewer than a
     * batch, stayed in the shared levels: none went to the folios. */
    CHECK(pm_cache_count(bin) == held_at_exit);
    pm_free(objs[0]);

    CHECK(pthread_create(&t, 0, free_foreign, pm_malloc(16)) == 0);
    CHECK(pthread_join(t, 0) == 0);
    CHECK(pthread_create(&t, 0, runs_empty, 0) == 0);
    CHECK(pthread_join(t, 0) == 0);
    pm_tc_check();
    budgets_bound();
    pm_tc_check();
    stored_value((void *)((uintptr_t)PM_FREE_MARK << 32));
    stored_value((void *)((uintptr_t)(PM_FREE_MARK ^ 1) << 32));

    stored_form();

    void *p = pm_malloc(100);
    /* What the fast library leaves out (stored_form). */
    if (PM_CHECKED) {
        check_fatal(double_free, p, "free(0x");
        check_fatal(double_free, p, "double free");
        check_fatal(double_free_under_others, p, "double free");
        check_fatal(double_free_in_spare, p, "double free");
        check_fatal(realloc_freed, p, "realloc(0x");
        check_fatal(realloc_freed, p, "already freed");
    }
    check_fatal(written_after_free, p, "object of another bin");
    check_fatal(link_overwritten, p, "thread cache check(0x");
    check_fatal(link_overwritten, p, "corrupted free-list link");
    check_fatal(new_thread_frees_inside, p, "pointer inside an object");
    check_fatal(object_test_changed, p, "object test differs from the bin's");
    check_fatal(entry_of_no_bin_written, p, "entry of no bin written");
    check_fatal(open_bit_lost, p, "not open");
    check_fatal(head_null, p, "list head is NULL");
    pm_free(p);
    pm_free(objs);
    printf("thread_cache ok\n");
    return 0;
}
