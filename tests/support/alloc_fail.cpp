// Replaces the global allocation functions for every test executable (the
// support library is linked whole) so fail_allocation can inject failures
// and leak_check can count live blocks.
#include "alloc_fail.hpp"

#include <atomic>
#include <cstdlib>

#include "leak_check.hpp"
#include "leak_trace.hpp"
#include "troupe/context.hpp"

namespace troupe_test {
namespace {
// The armed context, or nullptr. Relaxed loads suffice on the allocation
// path: only the armed context itself counts or fails, so it always sees
// its own store; other threads at worst read a stale pointer that cannot
// equal their own context.
std::atomic<const troupe::context*> armed{nullptr};
std::size_t fail_at = 0;  // written before `armed` is set, by the armed context
std::size_t count = 0;    // touched only by the armed context
bool did_fire = false;

// True if this allocation must fail.
bool inject() noexcept {
    const troupe::context* a = armed.load(std::memory_order_relaxed);
    if (a == nullptr || a != &troupe::this_context()) return false;
    if (++count != fail_at) return false;
    did_fire = true;
    return true;
}

void* allocate(std::size_t n, std::size_t align) noexcept {
    if (inject()) return nullptr;
    if (n == 0) n = 1;
    void* p = nullptr;
    if (align <= alignof(std::max_align_t)) p = std::malloc(n);
    else if (posix_memalign(&p, align, n) != 0) p = nullptr;
    if (p) {
        detail::note_allocation();
        detail::trace_allocation(p);
    }
    return p;
}

void release(void* p) noexcept {
    if (!p) return;
    detail::note_release();
    detail::trace_release(p);
    std::free(p);
}

void* allocate_or_throw(std::size_t n, std::size_t align) {
    if (void* p = allocate(n, align)) return p;
    throw std::bad_alloc{};
}
}  // namespace

fail_allocation::fail_allocation(std::size_t n) noexcept {
    fail_at = n;
    count = 0;
    did_fire = false;
    armed.store(&troupe::this_context(), std::memory_order_release);
}

fail_allocation::~fail_allocation() { armed.store(nullptr, std::memory_order_release); }

bool fail_allocation::fired() const noexcept { return did_fire; }

std::size_t fail_allocation::seen() const noexcept { return count; }

}  // namespace troupe_test

using troupe_test::allocate;
using troupe_test::allocate_or_throw;
using troupe_test::release;

void* operator new(std::size_t n) { return allocate_or_throw(n, 0); }
void* operator new[](std::size_t n) { return allocate_or_throw(n, 0); }
void* operator new(std::size_t n, std::align_val_t a) {
    return allocate_or_throw(n, std::size_t(a));
}
void* operator new[](std::size_t n, std::align_val_t a) {
    return allocate_or_throw(n, std::size_t(a));
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return allocate(n, 0); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return allocate(n, 0); }
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    return allocate(n, std::size_t(a));
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    return allocate(n, std::size_t(a));
}
void operator delete(void* p) noexcept { release(p); }
void operator delete[](void* p) noexcept { release(p); }
void operator delete(void* p, std::size_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t) noexcept { release(p); }
void operator delete(void* p, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::align_val_t) noexcept { release(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { release(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { release(p); }
