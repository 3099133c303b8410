/* SPDX-License-Identifier: MIT */
// The new-handler in every form of operator new ([new.handler],
// [new.delete]).  A handler that throws std::bad_alloc makes the throwing
// forms throw it and the nothrow forms return nullptr, with the exception
// caught and destroyed inside them; a handler that frees a reserve makes
// the retry succeed.  Each case runs in a child (robustness/child.c), so a form
// that lets the exception escape, ending in std::terminate, fails its case
// alone.  Run linked and with a library preloaded, where the output must
// be that of the system allocator.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iterator>
#include <new>
#include <sys/wait.h>
#include "check.h"
#include "robustness/child.h"
#include "robustness/limit.h"

namespace {

const std::size_t ALIGN = 4096;
const std::align_val_t al{ALIGN};

struct form {
    const char *name;
    void *(*allocate)(std::size_t n);
    void (*release)(void *p);
    std::size_t align;
    bool nothrow;
};

const form forms[] = {
    {"new", [](std::size_t n) { return ::operator new(n); },
     [](void *p) { ::operator delete(p); }, __STDCPP_DEFAULT_NEW_ALIGNMENT__, false},
    {"new[]", [](std::size_t n) { return ::operator new[](n); },
     [](void *p) { ::operator delete[](p); }, __STDCPP_DEFAULT_NEW_ALIGNMENT__, false},
    {"new aligned", [](std::size_t n) { return ::operator new(n, al); },
     [](void *p) { ::operator delete(p, al); }, ALIGN, false},
    {"new[] aligned", [](std::size_t n) { return ::operator new[](n, al); },
     [](void *p) { ::operator delete[](p, al); }, ALIGN, false},
    {"new nothrow", [](std::size_t n) { return ::operator new(n, std::nothrow); },
     [](void *p) { ::operator delete(p); }, __STDCPP_DEFAULT_NEW_ALIGNMENT__, true},
    {"new[] nothrow", [](std::size_t n) { return ::operator new[](n, std::nothrow); },
     [](void *p) { ::operator delete[](p); }, __STDCPP_DEFAULT_NEW_ALIGNMENT__, true},
    {"new aligned nothrow", [](std::size_t n) { return ::operator new(n, al, std::nothrow); },
     [](void *p) { ::operator delete(p, al); }, ALIGN, true},
    {"new[] aligned nothrow",
     [](std::size_t n) { return ::operator new[](n, al, std::nothrow); },
     [](void *p) { ::operator delete[](p, al); }, ALIGN, true},
};

int handler_calls;

// The handler's exception, derived from std::bad_alloc as [new.handler]
// allows, counts its live objects: none may outlive the catch.
int live_exceptions;
struct Exhausted : std::bad_alloc {
    Exhausted() { live_exceptions++; }
    Exhausted(const Exhausted &e) : std::bad_alloc(e) { live_exceptions++; }
    ~Exhausted() override { live_exceptions--; }
};

void throw_exhausted()
{
    handler_calls++;
    throw Exhausted();
}

// An impossible request, twice, so that anything the first catch leaves
// behind shows in the second.  The nothrow forms are called outside any
// try: an exception escaping them ends the child in std::terminate.
void handler_throws(const void *arg)
{
    const form &f = *static_cast<const form *>(arg);
    std::set_new_handler(throw_exhausted);
    for (int round = 1; round <= 2; round++) {
        void *p = nullptr;
        bool threw = false;
        if (f.nothrow) {
            p = f.allocate(opaque(SIZE_MAX / 2));
        } else {
            try {
                p = f.allocate(opaque(SIZE_MAX / 2));
            } catch (const Exhausted &) {
                threw = true;
            }
        }
        CHECK_MSG(p == nullptr && threw != f.nothrow, "round %d: result %p, threw %d", round, p,
                  threw);
        CHECK_EQ(handler_calls, round);
        CHECK_EQ(live_exceptions, 0);
        CHECK(std::uncaught_exceptions() == 0 && !std::current_exception());
    }
}

// Under an address-space limit, a request that fits only once the reserve
// is gone: the handler runs once and the retry succeeds.
const std::size_t HEADROOM = 64 * MiB;
const std::size_t RESERVE = HEADROOM / 2 + 4 * MiB;
void *reserve;

void release_reserve()
{
    handler_calls++;
    ::operator delete(reserve);
    reserve = nullptr;
    std::set_new_handler(nullptr);
}

void handler_frees(const void *arg)
{
    const form &f = *static_cast<const form *>(arg);
    limit_address_space(HEADROOM);
    reserve = ::operator new(RESERVE);
    std::set_new_handler(release_reserve);
    char *p = static_cast<char *>(f.allocate(RESERVE));
    CHECK(p != nullptr);
    CHECK_EQ(handler_calls, 1);
    CHECK_EQ(reinterpret_cast<uintptr_t>(p) % f.align, 0);
    std::memset(p, 1, RESERVE);
    f.release(p);
}

// Returns 1 if the case behaved, printing what went wrong otherwise.
int run_case(const form &f, const char *what, void (*run)(const void *))
{
    struct child_outcome out;
    child_run(run, &f, 60, &out);
    bool ok = WIFEXITED(out.status) && WEXITSTATUS(out.status) == 0 && !out.err[0];
    if (ok)
        std::printf("%s, %s: ok\n", f.name, what);
    else
        std::printf("%s, %s: %s; stderr: %s\n", f.name, what, child_status_text(out.status),
                    out.err);
    return ok;
}

} // namespace

int main()
{
    int failed = 0;
    for (const form &f : forms) {
        failed += !run_case(f, "handler throws bad_alloc", handler_throws);
        failed += !run_case(f, "handler frees a reserve", handler_frees);
    }
    CHECK_MSG(failed == 0, "%d of %zu cases misbehaved", failed, 2 * std::size(forms));
    return 0;
}
