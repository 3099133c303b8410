/* SPDX-License-Identifier: MIT */
// C++ out of memory under RLIMIT_AS: the throwing forms of operator new
// throw std::bad_alloc, the nothrow forms return NULL, and a new-handler
// that frees memory makes the retry succeed.  Runs in a child (child.c)
// with the address space limited to VmSize plus HEADROOM.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <sys/wait.h>
#include "check.h"
#include "child.h"
#include "limit.h"
#include "primalloc.h"

static const size_t HEADROOM = 64 * MiB;
static const size_t TOO_BIG = 2 * HEADROOM;

static int thrown(void *(*alloc)(size_t))
{
    try {
        // Not thrown: the case fails, and the child ends without freeing.
        (void)alloc(opaque(TOO_BIG));
        return 0;
    } catch (const std::bad_alloc &) {
        return 1;
    }
}

static void *plain(size_t n) { return ::operator new(n); }
static void *array(size_t n) { return ::operator new[](n); }
static void *aligned(size_t n) { return ::operator new(n, std::align_val_t(4096)); }
static void *aligned_array(size_t n) { return ::operator new[](n, std::align_val_t(4096)); }

// A reserve the new-handler gives back, as a program's emergency pool.
static void *reserve;
static int handler_calls;

static void release_reserve()
{
    handler_calls++;
    ::operator delete(reserve);
    reserve = nullptr;
    std::set_new_handler(nullptr);
}

static void run(const void *)
{
    // The allocator must be the one answering: a huge object shows in its
    // statistics.
    struct pm_stats before, after;
    pm_get_stats(&before);
    void *probe = ::operator new(8 * MiB);
    pm_get_stats(&after);
    CHECK(after.huge_bytes >= before.huge_bytes + 8 * MiB);
    ::operator delete(probe);

    // Freed memory kept for reuse would count in VmSize and then come back
    // as headroom when the limit is hit: give it back first.
    pm_trim();
    limit_address_space(HEADROOM);
    CHECK_MSG(thrown(plain), "operator new(%zu) did not throw bad_alloc", TOO_BIG);
    CHECK_MSG(thrown(array), "operator new[](%zu) did not throw bad_alloc", TOO_BIG);
    CHECK_MSG(thrown(aligned), "aligned operator new(%zu) did not throw bad_alloc", TOO_BIG);
    CHECK_MSG(thrown(aligned_array), "aligned operator new[] did not throw bad_alloc");
    CHECK(::operator new(TOO_BIG, std::nothrow) == nullptr);
    CHECK(::operator new[](TOO_BIG, std::nothrow) == nullptr);
    CHECK(::operator new(TOO_BIG, std::align_val_t(64), std::nothrow) == nullptr);
    CHECK(::operator new[](TOO_BIG, std::align_val_t(64), std::nothrow) == nullptr);

    // Half the headroom in reserve, then a request that fits only once the
    // reserve is gone: the handler must run once and the retry succeed.
    reserve = ::operator new(HEADROOM / 2 + 4 * MiB);
    std::memset(reserve, 1, HEADROOM / 2);
    std::set_new_handler(release_reserve);
    char *big = static_cast<char *>(::operator new(HEADROOM / 2 + 4 * MiB));
    CHECK_EQ(handler_calls, 1);
    std::memset(big, 2, HEADROOM / 2);
    ::operator delete(big);

    // The nothrow forms call the handler too (they behave as the throwing
    // form inside a try): the retry succeeds once it has run.
    reserve = ::operator new(HEADROOM / 2 + 4 * MiB);
    std::memset(reserve, 1, HEADROOM / 2);
    std::set_new_handler(release_reserve);
    big = static_cast<char *>(::operator new(HEADROOM / 2 + 4 * MiB, std::nothrow));
    CHECK(big != nullptr);
    CHECK_EQ(handler_calls, 2);
    std::memset(big, 3, HEADROOM / 2);
    ::operator delete(big);
}

int main()
{
    struct child_outcome o;
    child_run(run, nullptr, 120, &o);
    CHECK_MSG(WIFEXITED(o.status) && WEXITSTATUS(o.status) == 0 && !o.err[0], "%s; stderr: %s",
              child_status_text(o.status), o.err);
    std::puts("bad_alloc from all four throwing forms, NULL from all four nothrow forms, "
              "new-handler called once per form family and the retry succeeded");
    return 0;
}
