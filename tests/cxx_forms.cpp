/* SPDX-License-Identifier: MIT */
// Every replaceable operator new and delete form, called directly and
// through new and delete expressions, over sizes of every category and
// alignments up to 2 MiB, with contents and alignment checked; the failure
// paths (std::bad_alloc, nullptr from the nothrow forms, the new handler);
// and standard containers.  Run plainly and with primalloc preloaded, the
// output must be the same.
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <vector>
#include "check.h"

namespace {

const std::size_t sizes[] = {0, 1, 16, 100, 1000, 20000, 300000, 3 << 20};
const std::size_t aligns[] = {32, 64, 256, 4096, 65536, 2 << 20};

void use(void *p, std::size_t n, std::size_t align, uint64_t seed)
{
    CHECK_MSG(p != nullptr, "allocating %zu bytes failed", n);
    CHECK_MSG(reinterpret_cast<uintptr_t>(p) % align == 0, "%p (%zu bytes) not aligned to %zu",
              p, n, align);
    fill_pattern(p, n, seed);
    CHECK_PATTERN(p, n, seed);
}

// Each allocating form with each deallocating form that may free it.
int direct_calls()
{
    using std::align_val_t;
    const std::nothrow_t &nt = std::nothrow;
    int pairs = 0;
    for (std::size_t n : sizes) {
        // Fundamental alignment for whatever fits in n bytes.
        const std::size_t b = n >= 16 ? 16 : 1;
        void *p;
        p = ::operator new(n), use(p, n, b, 1), ::operator delete(p), pairs++;
        p = ::operator new(n), use(p, n, b, 2), ::operator delete(p, n), pairs++;
        p = ::operator new(n), use(p, n, b, 3), ::operator delete(p, nt), pairs++;
        p = ::operator new(n, nt), use(p, n, b, 4), ::operator delete(p), pairs++;
        p = ::operator new[](n), use(p, n, b, 5), ::operator delete[](p), pairs++;
        p = ::operator new[](n), use(p, n, b, 6), ::operator delete[](p, n), pairs++;
        p = ::operator new[](n), use(p, n, b, 7), ::operator delete[](p, nt), pairs++;
        p = ::operator new[](n, nt), use(p, n, b, 8), ::operator delete[](p), pairs++;
        for (std::size_t a : aligns) {
            align_val_t al{a};
            p = ::operator new(n, al), use(p, n, a, 9), ::operator delete(p, al), pairs++;
            p = ::operator new(n, al), use(p, n, a, 10), ::operator delete(p, n, al), pairs++;
            p = ::operator new(n, al), use(p, n, a, 11), ::operator delete(p, al, nt), pairs++;
            p = ::operator new(n, al, nt), use(p, n, a, 12), ::operator delete(p, al), pairs++;
            p = ::operator new[](n, al), use(p, n, a, 13), ::operator delete[](p, al), pairs++;
            p = ::operator new[](n, al), use(p, n, a, 14), ::operator delete[](p, n, al), pairs++;
            p = ::operator new[](n, al), use(p, n, a, 15), ::operator delete[](p, al, nt), pairs++;
            p = ::operator new[](n, al, nt), use(p, n, a, 16), ::operator delete[](p, al), pairs++;
        }
    }
    return pairs;
}

struct alignas(64) Line {
    unsigned char b[64];
};
struct alignas(4096) Page {
    unsigned char b[5000];
};
// A destructor makes array new store the count, and array delete sized.
struct Counted {
    uint64_t v = 7;
    ~Counted() { CHECK(v == 7); }
};
bool armed;
struct Thrower {
    char c[40];
    Thrower() { if (armed) throw 1; }
};
struct alignas(128) AlignedThrower {
    char c[200];
    AlignedThrower() { if (armed) throw 2; }
};

template <class T> void expression_single(bool nothrow)
{
    T *p = nothrow ? new (std::nothrow) T : new T;
    use(p, sizeof(T), alignof(T) < 16 ? 16 : alignof(T), 20);
    delete p;
}

template <class T> void expression_array(bool nothrow, std::size_t n)
{
    T *p = nothrow ? new (std::nothrow) T[n] : new T[n];
    CHECK(reinterpret_cast<uintptr_t>(p) % alignof(T) == 0);
    for (std::size_t i = 0; i < n; i++)
        p[i] = T();
    delete[] p;
}

// A throwing constructor in a nothrow new-expression frees through the
// matching nothrow delete.
template <class T> void constructor_throws(bool array)
{
    armed = true;
    int caught = 0;
    try {
        if (array)
            (void)new (std::nothrow) T[3];
        else
            (void)new (std::nothrow) T;
    } catch (int) {
        caught = 1;
    }
    armed = false;
    CHECK(caught);
}

int expressions()
{
    int n = 0;
    for (bool nothrow : {false, true}) {
        expression_single<uint64_t>(nothrow), n++;
        expression_single<Line>(nothrow), n++;
        expression_single<Page>(nothrow), n++;
        for (std::size_t count : {1u, 10u, 1000u, 100000u}) {
            expression_array<uint64_t>(nothrow, count), n++;
            expression_array<Line>(nothrow, count), n++;
            expression_array<Page>(nothrow, count / 100 + 1), n++;
            expression_array<Counted>(nothrow, count), n++;
        }
    }
    for (bool array : {false, true}) {
        constructor_throws<Thrower>(array), n++;
        constructor_throws<AlignedThrower>(array), n++;
    }
    return n;
}

int handler_calls;
void handler()
{
    handler_calls++;
    std::set_new_handler(nullptr);
}

// An impossible request calls the new handler once (it removes itself),
// then throws std::bad_alloc or, for the nothrow forms, gives nullptr.
// Returns 1 and prints what happened if the form misbehaves.
template <class F> int misbehaves(const char *what, F allocate, bool nothrow)
{
    handler_calls = 0;
    std::set_new_handler(handler);
    bool threw = false;
    void *p = nullptr;
    try {
        p = allocate();
    } catch (const std::bad_alloc &) {
        threw = true;
    }
    std::set_new_handler(nullptr);
    if (p == nullptr && threw != nothrow && handler_calls == 1)
        return 0;
    std::printf("%s: result %p, threw %d, new handler called %d times\n", what, p, threw,
                handler_calls);
    return 1;
}

int failures()
{
    using std::align_val_t;
    const std::nothrow_t &nt = std::nothrow;
    std::size_t huge = opaque(SIZE_MAX / 2);
    align_val_t al{4096};
    return misbehaves("new", [&] { return ::operator new(huge); }, false) +
           misbehaves("new[]", [&] { return ::operator new[](huge); }, false) +
           misbehaves("new nothrow", [&] { return ::operator new(huge, nt); }, true) +
           misbehaves("new[] nothrow", [&] { return ::operator new[](huge, nt); }, true) +
           misbehaves("new aligned", [&] { return ::operator new(huge, al); }, false) +
           misbehaves("new[] aligned", [&] { return ::operator new[](huge, al); }, false) +
           misbehaves("new aligned nothrow", [&] { return ::operator new(huge, al, nt); },
                      true) +
           misbehaves("new[] aligned nothrow",
                      [&] { return ::operator new[](huge, al, nt); }, true);
}

unsigned long containers()
{
    std::map<std::string, std::vector<int>> m;
    for (int i = 0; i < 20000; i++)
        m["key" + std::to_string(i * 7919 % 20011)].push_back(i);
    std::vector<std::shared_ptr<std::string>> v;
    for (int i = 0; i < 20000; i++)
        v.push_back(std::make_shared<std::string>(std::to_string(i) + std::string(i % 300, 'x')));
    auto lines = std::make_unique<Line[]>(1000);
    unsigned long sum = 0;
    for (auto &kv : m)
        sum = sum * 31 + kv.first.size() + kv.second.size() + kv.second[0];
    for (auto &s : v)
        sum = sum * 31 + s->size();
    return sum + lines[999].b[0];
}

} // namespace

int main()
{
    std::printf("direct form pairs: %d\n", direct_calls());
    std::printf("new/delete expressions: %d\n", expressions());
    int bad = failures();
    std::printf("containers: %lu\n", containers());
    CHECK_MSG(bad == 0, "%d of 8 forms misbehave when allocation fails", bad);
    return 0;
}
