/* SPDX-License-Identifier: MIT */
/* The caches' decisions (cache_policy.h), each at the edges of its rule:
 * budgets double up to their bound and no further; a new thread stays new
 * PM_TC_NEW_QUIET frees past its last object sent home, never past
 * PM_TC_NEW_FREES; objects go home only to another lane; a list from the
 * folios is a page's worth, then what the bin has out, then a batch; a
 * CPU declines a chain only from a CPU that took from it recently, and
 * only within its carving allowance, which is larger for long chains. */
#include "cache_policy.h"
#include "unit.h"

static void budgets(void)
{
    CHECK(pm_grown_budget(PM_TC_OWN_BUDGET, PM_TC_OWN_BUDGET + 1) == 2 * PM_TC_OWN_BUDGET);
    CHECK(pm_grown_budget(PM_TC_OWN_BUDGET, 3 * PM_TC_OWN_BUDGET) == 4 * PM_TC_OWN_BUDGET);
    CHECK(pm_grown_budget(PM_TC_OWN_BUDGET, PM_TC_MAX_BUDGET) == PM_TC_MAX_BUDGET);
    CHECK(pm_grown_budget(PM_TC_OWN_BUDGET, PM_TC_MAX_BUDGET + 1) == 0);
    CHECK(PM_TC_OWN_BUDGET <= PM_TC_MAX_BUDGET && PM_TC_MAX_BUDGET <= PM_TC_SHARED_BUDGET);
}

static void new_threads(void)
{
    CHECK(pm_new_until(0) == 1 + PM_TC_NEW_QUIET);
    CHECK(pm_new_until(100) == 101 + PM_TC_NEW_QUIET);
    CHECK(pm_new_until(PM_TC_NEW_FREES - PM_TC_NEW_QUIET - 1) == PM_TC_NEW_FREES);
    CHECK(pm_new_until(PM_TC_NEW_FREES) == PM_TC_NEW_FREES);
    CHECK(pm_sends_home(3, 4) && !pm_sends_home(4, 4));
    CHECK(pm_new_thread_watches(16) && pm_new_thread_watches(64) && pm_new_thread_watches(256));
    CHECK(!pm_new_thread_watches(320) && !pm_new_thread_watches(4416));
}

static void folio_lists(void)
{
    const size_t page = 4096;
    /* A bin with nothing out: a page's worth, or one object of a page or more. */
    CHECK(pm_folio_list_length(0, 64, 16, page) == 64);
    CHECK(pm_folio_list_length(0, 300, 16, page) == 256);
    CHECK(pm_folio_list_length(0, 32, 1024, page) == 4);
    CHECK(pm_folio_list_length(0, 8, 8192, page) == 1);
    /* Then as many as it has out, up to a batch. */
    CHECK(pm_folio_list_length(10, 32, 1024, page) == 10);
    CHECK(pm_folio_list_length(31, 32, 1024, page) == 31);
    CHECK(pm_folio_list_length(32, 32, 1024, page) == 32);
    CHECK(pm_folio_list_length(1000, 32, 1024, page) == 32);
}

static void chains(void)
{
    const long batch = 4096;
    const unsigned cpu_batches = 8;
    /* From a CPU that took from this one within the recent moves. */
    CHECK(pm_declines_chain(1, 0, 0, batch, 4, cpu_batches));
    CHECK(pm_declines_chain(1, PM_RECENT_MOVES - 1, 0, batch, 4, cpu_batches));
    CHECK(!pm_declines_chain(1, PM_RECENT_MOVES, 0, batch, 4, cpu_batches));
    CHECK(!pm_declines_chain(0, 0, 0, batch, 4, cpu_batches));
    /* Within the allowance: PM_CARVE_MAX for half a CPU chain or more,
     * PM_CARVE_SHORT below. */
    CHECK(pm_declines_chain(1, 0, PM_CARVE_MAX - batch, batch, 4, cpu_batches));
    CHECK(!pm_declines_chain(1, 0, PM_CARVE_MAX - batch + 1, batch, 4, cpu_batches));
    CHECK(pm_declines_chain(1, 0, PM_CARVE_SHORT - batch, batch, 3, cpu_batches));
    CHECK(!pm_declines_chain(1, 0, PM_CARVE_SHORT - batch + 1, batch, 3, cpu_batches));
    CHECK(PM_CARVE_SHORT < PM_CARVE_MAX);
}

int main(void)
{
    budgets();
    new_threads();
    folio_lists();
    chains();
    return 0;
}
