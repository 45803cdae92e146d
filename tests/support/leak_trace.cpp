// TROUPE_LEAK_TRACE=1: remembers where every live operator new block was
// made, so a leak_check that ends off its baseline can print the call
// stacks of the blocks made inside it and still held (leak_check.hpp).
// Off by default: the allocation path then costs one relaxed load.
#include "leak_trace.hpp"

#include <execinfo.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace troupe_test::detail {

namespace {

constexpr int frames = 12;
struct entry {
    void* p;  // nullptr: free slot; tombstone: deleted
    unsigned long seq;
    int depth;
    void* stack[frames];
};
void* const tombstone = reinterpret_cast<void*>(1);
constexpr std::size_t slots = std::size_t{1} << 18;  // live blocks traced at once

const bool enabled = [] {
    const char* v = std::getenv("TROUPE_LEAK_TRACE");
    return v && *v && *v != '0';
}();
std::atomic<unsigned long> sequence{0};
std::mutex table_lock;             // (a std::mutex allocates nothing)
entry* table = nullptr;            // from calloc, on first use
thread_local bool inside = false;  // backtrace() may allocate: do not recurse

std::size_t home(const void* p) noexcept {
    return (reinterpret_cast<std::uintptr_t>(p) >> 4) * 0x9E3779B97F4A7C15ull >> (64 - 18);
}

}  // namespace

bool trace_enabled() noexcept { return enabled; }

unsigned long trace_sequence() noexcept { return sequence.load(std::memory_order_relaxed); }

void trace_allocation(void* p) noexcept {
    if (!enabled || inside) return;
    inside = true;
    entry e{};
    e.p = p;
    e.seq = sequence.fetch_add(1, std::memory_order_relaxed);
    e.depth = ::backtrace(e.stack, frames);
    {
        std::lock_guard g{table_lock};
        if (!table) table = static_cast<entry*>(std::calloc(slots, sizeof(entry)));
        if (table) {
            for (std::size_t i = home(p), n = 0; n < slots; i = (i + 1) % slots, ++n) {
                if (table[i].p == nullptr || table[i].p == tombstone) {
                    table[i] = e;
                    break;
                }
            }
        }
    }
    inside = false;
}

void trace_release(void* p) noexcept {
    if (!enabled || inside) return;
    std::lock_guard g{table_lock};
    if (!table) return;
    for (std::size_t i = home(p), n = 0; n < slots && table[i].p; i = (i + 1) % slots, ++n) {
        if (table[i].p == p) {
            table[i].p = tombstone;
            return;
        }
    }
}

void trace_dump_since(unsigned long seq) noexcept {
    if (!enabled) return;
    inside = true;
    std::lock_guard g{table_lock};
    if (table) {
        for (std::size_t i = 0; i < slots; ++i) {
            const entry& e = table[i];
            if (e.p == nullptr || e.p == tombstone || e.seq < seq) continue;
            std::fprintf(stderr, "leak_trace: block %p (allocation #%lu) still held, made at:\n",
                         e.p, e.seq);
            std::fflush(stderr);
            ::backtrace_symbols_fd(e.stack, e.depth, 2);
        }
    }
    inside = false;
}

}  // namespace troupe_test::detail
