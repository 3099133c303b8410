/* SPDX-License-Identifier: MIT */
#include "cache.h"
#include "cache_policy.h"
#include "chunk_table.h"
#include "counters.h"
#include "folio.h"
#include "footprint.h"
#include "free_object.h"
#include "lock.h"
#include "os.h"
#include "sizeclass.h"

struct chain {
    void *first; /* top batch */
    size_t nbatches;
};

/* Byte budgets shared by all bins, so that a flow through many bins
 * (objects freed by another thread than allocated them) parks a bounded
 * amount, not two CPU lists a bin. */
#define CPU_BUDGET ((long)PM_CPU_BUDGET)

/* carved: bytes the CPU carved rather than take back (takes_back). */
struct cpu_held {
    long bytes, carved;
    char pad[64 - 2 * sizeof(long)];
};

/* The lock has a cache line of its own, apart from the chains it protects,
 * so that a waiter spinning on it does not pull the chains away from the
 * holder (section 8).  `left` and `loose` hold what threads that exited
 * on this CPU had cached: whole batches, counted in the CPU's budget, and
 * fewer than a batch, outside it.  `used_at` shares the lock's line, which
 * its writer, the holder, owns anyway. */
struct cpu_bin {
    pm_lock lock;
    uint32_t used_at; /* pm_os_now_ms() when it last received objects
                         (touch), or when decay last emptied it; 0 if
                         never; written under the lock, read by decay
                         before it takes the lock */
    char pad1[56];
    struct chain cur, full, left;
    void *loose;
    uint16_t nloose;
    uint16_t batches;   /* of cur and full, stored at each unlock for steal's
                           look without the lock */
    uint16_t took_from; /* 1 + the CPU this one last took a chain from */
    uint16_t took_at;   /* the bin's `moves` after that take */
};
_Static_assert(sizeof(struct cpu_bin) == 128, "cpu_bin is two cache lines");

/* A chain in the global level, the CPU that handed it down and when; two
 * a line. */
struct global_slot {
    struct chain chain;
    uint32_t owner;
    uint32_t since; /* pm_os_now_ms() when handed down */
} __attribute__((aligned(32)));

/* n: chains in the bin's slots (global_slots_of), changed under the lock
 * but read without it too (pm_cache_get).  moves: chains taken from
 * another CPU, by a steal or from here. */
struct global_bin {
    unsigned n;
    uint32_t moves;
} __attribute__((aligned(64)));

static struct global_bin globals[PM_NBINS];
/* Apart from the chains they protect, for fork (folio.c says why). */
static pm_line_lock global_locks[PM_NBINS];

static pm_lock *global_lock(unsigned bin)
{
    return &global_locks[bin].lock;
}

static struct cpu_bin *cpus; /* [cpu][bin] */
static struct cpu_held *held; /* [cpu] */
/* [bin][global_stride]: global_cap slots a bin in whole lines, mapped
 * with the CPU levels and sized by the CPUs there are, so that a bin whose
 * chains never reach the global level touches no page of them. */
static struct global_slot *global_slots;
static unsigned global_stride;
static long global_budget;
/* Bytes in the global level, on a line apart from the variables above,
 * which every get and put reads: on one line with them, each write of this
 * counter would make the next load of `cpus` miss on every other CPU. */
static struct {
    long bytes;
} __attribute__((aligned(64))) global_held;
static unsigned ncpus, global_cap;
static size_t mapped_bytes;
static pm_lock init_lock;

static struct global_slot *global_slots_of(unsigned bin)
{
    return global_slots + (size_t)bin * global_stride;
}

/* Maps the per-CPU caches.  When the kernel refuses (an address-space
 * limit), the caches are skipped and init is tried again next time. */
static int init(void)
{
    pm_lock_take(&init_lock);
    if (!__atomic_load_n(&cpus, __ATOMIC_ACQUIRE)) {
        unsigned n = pm_os_cpus();
        unsigned cap = 2 * n < PM_GLOBAL_MAX ? 2 * n : PM_GLOBAL_MAX;
        unsigned stride = (cap + 1) & ~1u;
        size_t bins = (size_t)n * PM_NBINS * sizeof(struct cpu_bin);
        size_t heldb = n * sizeof(struct cpu_held);
        size_t slots = (size_t)PM_NBINS * stride * sizeof(struct global_slot);
        size_t bytes = (bins + heldb + slots + PM_PAGE - 1) & ~(PM_PAGE - 1);
        struct cpu_bin *c = pm_os_map(bytes, PM_PAGE);
        if (c) {
            ncpus = n;
            __atomic_store_n(&mapped_bytes, bytes, __ATOMIC_RELAXED);
            held = (struct cpu_held *)((char *)c + bins);
            global_slots = (struct global_slot *)((char *)held + heldb);
            global_stride = stride;
            global_cap = cap;
            global_budget = (long)(global_cap / 2) * CPU_BUDGET;
            __atomic_store_n(&cpus, c, __ATOMIC_RELEASE);
        }
    }
    pm_lock_drop(&init_lock);
    return cpus != 0;
}

/* bin's cache on this CPU, or on CPU `which` modulo the CPUs. */
static struct cpu_bin *cpu_bin_at(unsigned bin, int which)
{
    if (pm_unlikely(!__atomic_load_n(&cpus, __ATOMIC_ACQUIRE)) && !init())
        return 0;
    unsigned cpu = which == PM_THIS_CPU ? pm_os_cpu() : (unsigned)which;
    /* A CPU outside the mask seen at init wraps; the others skip the
     * division every get and put would pay. */
    if (pm_unlikely(cpu >= ncpus))
        cpu %= ncpus;
    struct cpu_bin *c = &cpus[(size_t)cpu * PM_NBINS + bin];
    __builtin_prefetch(&c->cur, 1);
    return c;
}

static uint32_t cpu_of(const struct cpu_bin *c)
{
    return (uint32_t)((size_t)(c - cpus) / PM_NBINS);
}

static long *held_by(const struct cpu_bin *c)
{
    return &held[cpu_of(c)].bytes;
}

/* Whether c can take `bytes` more within its budget. */
static int within_budget(const struct cpu_bin *c, long bytes)
{
    return __atomic_load_n(held_by(c), __ATOMIC_RELAXED) + bytes <= CPU_BUDGET;
}

static long bytes_of(unsigned bin, size_t nbatches)
{
    return (long)(nbatches * pm_bins[bin].batch * pm_bins[bin].size);
}

/* c received objects at `now` (a put, a leave, or a chain a get brought
 * from elsewhere); its lock is held. */
static void touch(struct cpu_bin *c, uint32_t now)
{
    __atomic_store_n(&c->used_at, now, __ATOMIC_RELAXED);
}

static void cpu_unlock(struct cpu_bin *c)
{
    __atomic_store_n(&c->batches, (uint16_t)(c->cur.nbatches + c->full.nbatches), __ATOMIC_RELAXED);
    pm_lock_drop(&c->lock);
}

/* The new top batch's first line is fetched now, as the thread cache's
 * pop fetches the next object: the next get of the bin reads its link
 * under the lock, and where batches cross CPUs that read would miss while
 * the lock is held.  Not NULL's: a prefetch of page 0 walks the page
 * tables every time. */
static void *chain_pop(struct chain *ch, const char *call)
{
    void *b = ch->first;
    if (b) {
        ch->first = pm_batch_next(b, call);
        if (ch->first)
            __builtin_prefetch(ch->first);
        ch->nbatches--;
    }
    return b;
}

static void chain_push(struct chain *ch, void *batch)
{
    pm_batch_set_next(batch, ch->first);
    ch->first = batch;
    ch->nbatches++;
}

/* The objects were freed: a corrupted link or a double free found here
 * is reported against free. */
static void chain_free(unsigned bin, struct chain ch)
{
    for (void *b; (b = chain_pop(&ch, "free"));)
        pm_folio_free_list(bin, b, "free");
}

/* A batch from c, whose lock is held, or NULL: from its chains, else from
 * what exiting threads left.  Those objects lie beside the ones the
 * exited thread's successor probably holds, so they go to whichever
 * thread runs here next rather than to the folios, where fullest fit
 * would hand them to any thread, and threads on two CPUs would come to
 * share cache lines of live objects. */
static void *cpu_pop(struct cpu_bin *c, unsigned bin, const char *call)
{
    void *batch = chain_pop(&c->cur, call);
    if (!batch && c->full.first) {
        c->cur = c->full;
        c->full = (struct chain){0, 0};
        batch = chain_pop(&c->cur, call);
    }
    if (!batch)
        batch = chain_pop(&c->left, call);
    if (batch)
        __atomic_fetch_sub(held_by(c), bytes_of(bin, 1), __ATOMIC_RELAXED);
    return batch;
}

/* Whether CPU `me` declines v's chain of n batches (cache_policy.h): it
 * would take back what v took from it. */
static int takes_back(unsigned bin, const struct cpu_bin *v, uint32_t me, size_t n)
{
    uint16_t since = (uint16_t)(__atomic_load_n(&globals[bin].moves, __ATOMIC_RELAXED) -
                                __atomic_load_n(&v->took_at, __ATOMIC_RELAXED));
    return pm_declines_chain(__atomic_load_n(&v->took_from, __ATOMIC_RELAXED) == me + 1, since,
                             __atomic_load_n(&held[me].carved, __ATOMIC_RELAXED), bytes_of(bin, 1), n,
                             pm_bins[bin].cpu_batches);
}

static void note_take(unsigned bin, struct cpu_bin *c, uint32_t from)
{
    uint32_t now = __atomic_add_fetch(&globals[bin].moves, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&c->took_from, (uint16_t)(from + 1), __ATOMIC_RELAXED);
    __atomic_store_n(&c->took_at, (uint16_t)now, __ATOMIC_RELAXED);
}

/* A whole chain from another CPU's cache: its older chain if it has two,
 * else its only one, never what exited threads left there (cpu_pop).
 * Where one thread frees what a thread on another CPU allocates (producer
 * and consumer), the freed objects would otherwise sit in the freeing
 * CPU's cache up to its budget while the other CPU carves new folios:
 * memory held twice.  Taking a whole chain, not a batch, makes a steal as
 * rare as a move from the global level: two CPUs that both allocate and
 * steal batch by batch keep pulling each other's freshly freed batches.
 * The scan is bounded and passes over CPUs whose chains of this bin were
 * empty at their last unlock.  It waits for a busy lock rather than skip
 * it: the owner holds it for a few pointer writes, and a skip means
 * carving while the objects sit there.  No other lock is held here, so
 * waiting adds no lock order. */
static struct chain steal(unsigned bin, struct cpu_bin *mine, int *declined)
{
    uint32_t me = cpu_of(mine);
    unsigned scan = ncpus - 1 < PM_STEAL_SCAN ? ncpus - 1 : PM_STEAL_SCAN;
    for (unsigned i = 1; i <= scan; i++) {
        uint32_t victim = (me + i) % ncpus;
        struct cpu_bin *c = &cpus[(size_t)victim * PM_NBINS + bin];
        if (!__atomic_load_n(&c->batches, __ATOMIC_RELAXED))
            continue;
        pm_lock_take(&c->lock);
        struct chain *from = c->full.first ? &c->full : &c->cur, ch = *from;
        if (takes_back(bin, c, me, ch.nbatches)) {
            pm_lock_drop(&c->lock);
            *declined = 1;
            continue;
        }
        *from = (struct chain){0, 0};
        __atomic_fetch_sub(held_by(c), bytes_of(bin, ch.nbatches), __ATOMIC_RELAXED);
        cpu_unlock(c);
        if (ch.first) {
            pm_count(PM_EV_steals);
            note_take(bin, mine, victim);
            return ch;
        }
    }
    return (struct chain){0, 0};
}

/* Takes slot k out of bin's global level, whose lock is held; the last
 * slot fills its place. */
static struct chain global_remove(unsigned bin, unsigned k)
{
    struct global_bin *g = &globals[bin];
    struct global_slot *slot = global_slots_of(bin);
    struct chain ch = slot[k].chain;
    unsigned last = g->n - 1;
    slot[k] = slot[last];
    __atomic_store_n(&g->n, last, __ATOMIC_RELAXED);
    return ch;
}

/* The newest chain this CPU handed down, else the newest of any.  A
 * CPU's own chains hold objects its threads last touched, in chunks it
 * carved (folio.c); another CPU's cost a cache miss an object. */
static struct chain global_take(unsigned bin, struct cpu_bin *c, int *declined)
{
    const struct global_slot *slot = global_slots_of(bin);
    uint32_t me = cpu_of(c);
    unsigned k = globals[bin].n - 1;
    for (unsigned i = globals[bin].n; i-- > 0;)
        if (slot[i].owner == me) {
            k = i;
            break;
        }
    if (slot[k].owner != me) {
        if (takes_back(bin, &cpus[(size_t)slot[k].owner * PM_NBINS + bin], me,
                       slot[k].chain.nbatches)) {
            *declined = 1;
            return (struct chain){0, 0};
        }
        note_take(bin, c, slot[k].owner);
    }
    pm_count(PM_EV_global_takes);
    return global_remove(bin, k);
}

void *pm_cache_get(unsigned bin, const char *call)
{
    pm_count_bin(bin, PM_EV_refills);
    struct cpu_bin *c = cpu_bin_at(bin, PM_THIS_CPU);
    if (!c)
        return 0;
    pm_lock_take(&c->lock);
    void *batch = cpu_pop(c, bin, call);
    int declined = 0;
    struct global_bin *g = &globals[bin];
    /* An empty global level is seen without its lock, which every CPU
     * would otherwise take before every steal only to find nothing. */
    if (!batch && __atomic_load_n(&g->n, __ATOMIC_RELAXED)) {
        pm_lock_take(global_lock(bin));
        if (g->n)
            c->cur = global_take(bin, c, &declined);
        pm_lock_drop(global_lock(bin));
        if (c->cur.first)
            touch(c, pm_os_now_ms());
        long moved = bytes_of(bin, c->cur.nbatches);
        __atomic_fetch_sub(&global_held.bytes, moved, __ATOMIC_RELAXED);
        batch = chain_pop(&c->cur, call);
        __atomic_fetch_add(held_by(c), moved - bytes_of(bin, batch != 0), __ATOMIC_RELAXED);
    }
    cpu_unlock(c);
    if (batch)
        return batch;
    /* The stolen chain's first batch is the answer; the rest joins this
     * CPU's cache, which others may have refilled meanwhile. */
    struct chain ch = steal(bin, c, &declined);
    if (!(batch = chain_pop(&ch, call))) {
        /* The caller carves. */
        if (declined)
            __atomic_fetch_add(&held[cpu_of(c)].carved, bytes_of(bin, 1), __ATOMIC_RELAXED);
        return 0;
    }
    if (!ch.first)
        return batch;
    pm_lock_take(&c->lock);
    struct chain *to = !c->cur.first ? &c->cur : !c->full.first ? &c->full : 0;
    if (to) {
        *to = ch;
        touch(c, pm_os_now_ms());
        __atomic_fetch_add(held_by(c), bytes_of(bin, ch.nbatches), __ATOMIC_RELAXED);
    }
    cpu_unlock(c);
    if (!to)
        chain_free(bin, ch);
    return batch;
}

/* Hands a whole chain to the global level if it has room (room in its array and
 * budget); 1 if it took it.  Called with the CPU lock held. */
static int to_global(unsigned bin, struct chain ch, uint32_t from, uint32_t now)
{
    long bytes = bytes_of(bin, ch.nbatches);
    if (__atomic_add_fetch(&global_held.bytes, bytes, __ATOMIC_RELAXED) > global_budget) {
        __atomic_fetch_sub(&global_held.bytes, bytes, __ATOMIC_RELAXED);
        return 0;
    }
    struct global_bin *g = &globals[bin];
    pm_lock_take(global_lock(bin));
    int took = g->n < global_cap;
    if (took) {
        global_slots_of(bin)[g->n] = (struct global_slot){.chain = ch, .owner = from, .since = now};
        __atomic_store_n(&g->n, g->n + 1, __ATOMIC_RELAXED);
    }
    pm_lock_drop(global_lock(bin));
    if (took)
        pm_count(PM_EV_global_puts);
    else
        __atomic_fetch_sub(&global_held.bytes, bytes, __ATOMIC_RELAXED);
    return took;
}

static void put(unsigned bin, void *batch, int cpu, uint32_t now)
{
    pm_count_bin(bin, PM_EV_flushes);
    struct cpu_bin *c = cpu_bin_at(bin, cpu);
    if (!c) {
        pm_folio_free_list(bin, batch, "free");
        return;
    }
    unsigned cap = pm_bins[bin].cpu_batches;
    long *h = held_by(c), one = bytes_of(bin, 1);
    pm_lock_take(&c->lock);
    touch(c, now);
    if (c->cur.nbatches >= cap && !c->full.first) {
        c->full = c->cur;
        c->cur = (struct chain){0, 0};
    }
    if (c->cur.nbatches >= cap || !within_budget(c, one)) {
        /* No room (both chains full, or the CPU over its budget): the older
         * chain moves down whole.  Where the global level has no room
         * either, the batch goes to its folios instead, while its objects
         * are still in this CPU's cache: walking the older chain, cold by
         * now, would miss on every object. */
        struct chain *old = c->full.first ? &c->full : &c->cur;
        if (!old->first || !to_global(bin, *old, cpu_of(c), now)) {
            cpu_unlock(c);
            pm_folio_free_list(bin, batch, "free");
            return;
        }
        __atomic_fetch_sub(h, bytes_of(bin, old->nbatches), __ATOMIC_RELAXED);
        *old = (struct chain){0, 0};
        if (c->cur.nbatches >= cap) {
            c->full = c->cur;
            c->cur = (struct chain){0, 0};
        }
    }
    chain_push(&c->cur, batch);
    __atomic_fetch_add(h, one, __ATOMIC_RELAXED);
    cpu_unlock(c);
}

/* A full batch goes on c's chain of what threads left if the CPU has room
 * (counted as pm_cache_put counts), else to the folios. */
static void leave_batch(struct cpu_bin *c, unsigned bin, void *batch, uint32_t now)
{
    long one = bytes_of(bin, 1);
    pm_lock_take(&c->lock);
    touch(c, now);
    int room = c->left.nbatches < pm_bins[bin].cpu_batches && within_budget(c, one);
    if (room) {
        chain_push(&c->left, batch);
        __atomic_fetch_add(held_by(c), one, __ATOMIC_RELAXED);
    }
    cpu_unlock(c);
    if (!room)
        pm_folio_free_list(bin, batch, "free");
}

/* A list left as n objects that goes on past them: a thread's list that
 * holds an object twice, freed again while it lay deeper in the list
 * (thread_cache.h).  The folios, taking the list back, name that object. */
static _Noreturn void longer_than_counted(unsigned bin, void *list)
{
    pm_folio_free_list(bin, list, "free");
    pm_fatal("free", list, "corrupted free list");
}

/* Joins a list of n < batch objects with c's loose objects, taken out of
 * c while the list is walked.  Returns a full batch cut from the two, or
 * NULL; what is left over becomes c's loose objects, or goes to the folios
 * if another exit has put some there meanwhile.  The walk to the list's
 * tail goes on from there to the cut: fewer than a batch of steps in all. */
static void *join_loose(struct cpu_bin *c, unsigned bin, void *list, unsigned n, uint32_t now)
{
    unsigned batch = pm_bins[bin].batch, at = 1, counted = n;
    pm_lock_take(&c->lock);
    void *rest = c->loose;
    n += c->nloose;
    c->loose = 0;
    c->nloose = 0;
    pm_lock_drop(&c->lock);
    void *tail = list, *next;
    for (; (next = pm_link_next(tail, "free")); at++) {
        if (pm_unlikely(at == counted))
            longer_than_counted(bin, list);
        tail = next;
    }
    pm_link_set(tail, rest);
    void *full = 0;
    if (n >= batch) {
        void *cut = tail;
        for (; at < batch; at++)
            cut = pm_link_next(cut, "free");
        full = list;
        list = pm_link_next(cut, "free");
        pm_link_set(cut, 0);
        n -= batch;
    }
    if (!list)
        return full;
    pm_lock_take(&c->lock);
    touch(c, now);
    int room = !c->loose;
    if (room) {
        c->loose = list;
        c->nloose = (uint16_t)n;
    }
    pm_lock_drop(&c->lock);
    if (!room)
        pm_folio_free_list(bin, list, "free");
    return full;
}

static void leave(unsigned bin, void *list, unsigned n, int cpu, uint32_t now)
{
    pm_count_bin(bin, PM_EV_flushes);
    struct cpu_bin *c = cpu_bin_at(bin, cpu);
    if (!c)
        pm_folio_free_list(bin, list, "free");
    else if (n == pm_bins[bin].batch || (list = join_loose(c, bin, list, n, now)))
        leave_batch(c, bin, list, now);
}

/* Takes out of bin's global level a chain handed down before `before`
 * (any chain, when all), or returns an empty one. */
static struct chain global_old(unsigned bin, uint32_t before, int all)
{
    struct chain ch = {0, 0};
    pm_lock_take(global_lock(bin));
    for (unsigned k = globals[bin].n; k-- > 0;)
        if (all || pm_os_earlier(global_slots_of(bin)[k].since, before)) {
            ch = global_remove(bin, k);
            break;
        }
    pm_lock_drop(global_lock(bin));
    __atomic_fetch_sub(&global_held.bytes, bytes_of(bin, ch.nbatches), __ATOMIC_RELAXED);
    return ch;
}

/* Returns cached objects to their folios: at `now`, everything when all,
 * else what has lain there PM_DECAY_MS (a CPU's chains of a bin that
 * received nothing for that long, and global chains handed down that long
 * ago).  A CPU's cache that decay emptied counts as touched then, so that
 * an idle one is locked once a decay time, not at every decay. */
static void drain(uint32_t now, int all)
{
    uint32_t before = now - PM_DECAY_MS;
    for (unsigned bin = 0; bin < PM_NBINS; bin++) {
        for (unsigned s = 0; cpus && s < ncpus; s++) {
            struct cpu_bin *c = &cpus[(size_t)s * PM_NBINS + bin];
            if (!all && !pm_os_earlier(__atomic_load_n(&c->used_at, __ATOMIC_RELAXED), before))
                continue;
            pm_lock_take(&c->lock);
            if (!all && !pm_os_earlier(c->used_at, before)) {
                pm_lock_drop(&c->lock);
                continue;
            }
            touch(c, now);
            struct chain cur = c->cur, full = c->full, left = c->left;
            void *loose = c->loose;
            c->cur = c->full = c->left = (struct chain){0, 0};
            c->loose = 0;
            c->nloose = 0;
            size_t n = cur.nbatches + full.nbatches + left.nbatches;
            __atomic_fetch_sub(held_by(c), bytes_of(bin, n), __ATOMIC_RELAXED);
            cpu_unlock(c);
            chain_free(bin, cur);
            chain_free(bin, full);
            chain_free(bin, left);
            if (loose)
                pm_folio_free_list(bin, loose, "free");
        }
        struct chain ch;
        while (__atomic_load_n(&globals[bin].n, __ATOMIC_RELAXED) &&
               (ch = global_old(bin, before, all)).first)
            chain_free(bin, ch);
    }
}

void pm_cache_drain(void)
{
    drain(pm_os_now_ms(), 1);
}

/* Decay runs at most every quarter of PM_DECAY_MS, after a put or leave
 * has dropped its locks (the calls that read the clock every time: a get
 * reads it only when it brings a chain from elsewhere).  Without it, what
 * a bin that a program stopped using, or a CPU its threads left, holds
 * would stay cached for good: up to PM_CPU_BUDGET a CPU and as much again at the global level,
 * with the folios those objects keep from emptying.  It also asks for a
 * settle, which the callers run (purge.h): the footprint's own decay of
 * dirty folios and pooled runs runs only at a settle, which otherwise
 * waits for a call to the folios, and a program whose calls stay in the
 * caches would keep what it freed before committed for good. */
static uint32_t next_decay;

static void decay_if_due(uint32_t now)
{
    if (!pm_os_due(&next_decay, now, PM_DECAY_MS / 4))
        return;
    drain(now, 0);
    pm_fp_want_settle();
}

void pm_cache_decay(void)
{
    decay_if_due(pm_os_now_ms());
}

int pm_cache_held(void)
{
    long bytes = __atomic_load_n(&global_held.bytes, __ATOMIC_RELAXED);
    for (unsigned s = 0; __atomic_load_n(&cpus, __ATOMIC_ACQUIRE) && s < ncpus; s++)
        bytes += __atomic_load_n(&held[s].bytes, __ATOMIC_RELAXED);
    return bytes != 0;
}

void pm_cache_put(unsigned bin, void *batch, int cpu)
{
    uint32_t now = pm_os_now_ms();
    put(bin, batch, cpu, now);
    decay_if_due(now);
}

void pm_cache_leave(unsigned bin, void *list, unsigned n, int cpu)
{
    uint32_t now = pm_os_now_ms();
    leave(bin, list, n, cpu, now);
    decay_if_due(now);
}

void pm_cache_census(unsigned bin, size_t *cpu, size_t *global)
{
    size_t batches = 0, loose = 0, down = 0;
    for (unsigned s = 0; cpus && s < ncpus; s++) {
        struct cpu_bin *c = &cpus[(size_t)s * PM_NBINS + bin];
        pm_lock_take(&c->lock);
        batches += c->cur.nbatches + c->full.nbatches + c->left.nbatches;
        loose += c->nloose;
        pm_lock_drop(&c->lock);
    }
    pm_lock_take(global_lock(bin));
    for (unsigned i = 0; i < globals[bin].n; i++)
        down += global_slots_of(bin)[i].chain.nbatches;
    pm_lock_drop(global_lock(bin));
    *cpu = batches * pm_bins[bin].batch + loose;
    *global = down * pm_bins[bin].batch;
}

size_t pm_cache_metadata(void)
{
    return sizeof globals + sizeof global_locks + __atomic_load_n(&mapped_bytes, __ATOMIC_RELAXED);
}

const void *pm_cache_tables(size_t *len)
{
    *len = __atomic_load_n(&mapped_bytes, __ATOMIC_RELAXED);
    return __atomic_load_n(&cpus, __ATOMIC_ACQUIRE);
}

static void check_failed(const void *where, const char *what)
{
    pm_fatal("cache check", where, what);
}

/* n objects of bin linked through their first word to the list end. */
static void check_objects(unsigned bin, const void *list, size_t n)
{
    for (; n; n--, list = pm_link_next(list, "cache check"))
        if (!list || pm_bin_of_addr((uintptr_t)list) != bin)
            check_failed(list, "a list shorter than counted, or an object of another bin");
    if (list)
        check_failed(list, "a list longer than counted");
}

/* A chain of bin: nbatches batches of exactly a batch each. */
static void check_chain(unsigned bin, const struct chain *ch)
{
    size_t n = 0;
    for (const void *b = ch->first; b; b = pm_batch_next(b, "cache check"), n++) {
        if (n == ch->nbatches)
            check_failed(ch->first, "more batches than the chain counts");
        check_objects(bin, b, pm_bins[bin].batch);
    }
    if (n != ch->nbatches)
        check_failed(ch->first, "fewer batches than the chain counts");
}

void pm_cache_check(void)
{
    pm_cache_prefork();
    uint32_t now = pm_os_now_ms();
    long global = 0;
    for (unsigned s = 0; cpus && s < ncpus; s++) {
        long bytes = 0;
        for (unsigned bin = 0; bin < PM_NBINS; bin++) {
            const struct cpu_bin *c = &cpus[(size_t)s * PM_NBINS + bin];
            check_chain(bin, &c->cur);
            check_chain(bin, &c->full);
            check_chain(bin, &c->left);
            if (c->nloose >= pm_bins[bin].batch)
                check_failed(c, "a batch or more left loose");
            check_objects(bin, c->loose, c->nloose);
            if (c->batches != c->cur.nbatches + c->full.nbatches)
                check_failed(c, "published batch count stale");
            if (c->used_at && pm_os_earlier(now, c->used_at))
                check_failed(c, "CPU cache used later than now");
            bytes += bytes_of(bin, c->cur.nbatches + c->full.nbatches + c->left.nbatches);
        }
        if (bytes != held[s].bytes)
            check_failed(&held[s], "CPU's held bytes disagree with its lists");
    }
    for (unsigned bin = 0; bin < PM_NBINS; bin++) {
        const struct global_bin *g = &globals[bin];
        if (g->n > global_cap)
            check_failed(g, "more global chains than room for");
        for (unsigned i = 0; i < g->n; i++) {
            const struct global_slot *slot = &global_slots_of(bin)[i];
            check_chain(bin, &slot->chain);
            if (slot->owner >= ncpus)
                check_failed(slot, "global list owned by no CPU");
            if (pm_os_earlier(now, slot->since))
                check_failed(slot, "global list handed down later than now");
            global += bytes_of(bin, slot->chain.nbatches);
        }
    }
    if (global != global_held.bytes || global > global_budget)
        check_failed(&global_held, "global held bytes disagree with its lists");
    pm_cache_postfork();
}

/* Lock order, here and everywhere: CPU level, then global level. */
void pm_cache_prefork(void)
{
    pm_lock_take(&init_lock);
    for (size_t i = 0; cpus && i < (size_t)ncpus * PM_NBINS; i++)
        pm_lock_take(&cpus[i].lock);
    for (unsigned bin = 0; bin < PM_NBINS; bin++)
        pm_lock_take(global_lock(bin));
}

void pm_cache_postfork(void)
{
    for (unsigned bin = 0; bin < PM_NBINS; bin++)
        pm_lock_drop(global_lock(bin));
    for (size_t i = 0; cpus && i < (size_t)ncpus * PM_NBINS; i++)
        pm_lock_drop(&cpus[i].lock);
    pm_lock_drop(&init_lock);
}
