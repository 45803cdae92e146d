// The live heap block count behind leak_check, and the guard itself.
#include "leak_check.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "leak_trace.hpp"
#include "troupe/cluster.hpp"
#include "troupe/detail/timer.hpp"
#include "troupe/thread.hpp"

namespace troupe_test {

namespace {

// The count is split over padded shards so that threads allocating at once
// do not fight over one cache line; a thread picks its shard once. Any
// shard is correct for any call (a block may be freed on another shard
// than the one that counted it): only the sum means anything.
struct alignas(64) shard {
    std::atomic<long> live{0};
};
constexpr unsigned shard_count = 16;
shard shards[shard_count];  // constant-initialised: usable before any constructor runs
std::atomic<unsigned> next_shard{0};
[[gnu::tls_model("initial-exec")]] thread_local unsigned my_shard = shard_count;

shard& mine() noexcept {
    unsigned s = my_shard;
    if (s == shard_count) {
        s = next_shard.fetch_add(1, std::memory_order_relaxed) % shard_count;
        my_shard = s;
    }
    return shards[s];
}

// Every cache named in leak_check.hpp gets its blocks here, before the
// first baseline. Each step says which cache it fills.
void warm_caches() {
    // doctest's per-kernel-thread INFO/CAPTURE stack (a vector) on this thread.
    { INFO("troupe_test::leak_check warm-up"); }
    // The default cluster and its processors (kernel threads, descriptors).
    troupe::this_cluster();
    // More threads alive at once than a kernel thread caches stacks
    // (defaults' per-thread stack cache holds a handful): joining them all
    // overflows this thread's cache into the process-wide stack pool, whose
    // free list (a vector) gets its block.
    {
        std::vector<troupe::thread> many;
        many.reserve(64);
        for (int i = 0; i < 64; ++i) many.emplace_back([] {});
        for (auto& t : many) t.join();
    }
    // A cluster of its own that starts and retires a processor (what every
    // on_processors round does).
    {
        troupe::cluster c{1};
        troupe::thread t{c, [] {}};
        t.join();
    }
    // The timer service: its thread (a std::thread's state block) and its
    // heap (a vector). Armed directly: a short sleep_for may return before
    // arming anything (its deadline can pass before it looks, on a loaded
    // machine), and then the first timed wait inside a guard started the
    // service: the 2 blocks that about 1 run in 8 kept (found with
    // TROUPE_LEAK_TRACE=1).
    troupe::detail::timer_node t;
    t.deadline = troupe::detail::timer_node::clock::now() + std::chrono::hours(1);
    t.fire = [](troupe::detail::timer_node&) noexcept {};
    troupe::detail::timer_arm(t);
    troupe::detail::timer_cancel(t);
}

// Whether this executable's allocations go through the counting operator
// new at all (tests/meson.build links the support library whole for that).
bool counting_works() {
    const long before = live_heap_blocks();
    int* volatile probe = new int(0);
    const bool counted = live_heap_blocks() == before + 1;
    delete probe;
    return counted;
}

std::once_flag warmed;
bool counting = false;  // written once under `warmed`

}  // namespace

namespace detail {
void note_allocation() noexcept { mine().live.fetch_add(1, std::memory_order_relaxed); }
void note_release() noexcept { mine().live.fetch_sub(1, std::memory_order_relaxed); }
}  // namespace detail

long live_heap_blocks() noexcept {
    // Relaxed loads: the caller has joined (or otherwise synchronised with)
    // every thread whose allocations it wants counted, and a load that
    // happens after an update sees that update or a later one.
    long sum = 0;
    for (const shard& s : shards) sum += s.live.load(std::memory_order_relaxed);
    return sum;
}

leak_check::leak_check(std::source_location where) : where_(where) {
    std::call_once(warmed, [] {
        warm_caches();
        counting = counting_works();
    });
    REQUIRE_MESSAGE(counting,
                    "leak_check: operator new is not the test support library's "
                    "(link it with link_whole), so nothing would be counted");
    failures_ = failed_assertions();
    uncaught_ = std::uncaught_exceptions();
    trace_from_ = detail::trace_sequence();
    baseline_ = live_heap_blocks();
}

long leak_check::leaked() const noexcept { return live_heap_blocks() - baseline_; }

namespace {
std::atomic<bool> strict_checks{[] {
    const char* v = std::getenv("TROUPE_LEAK_CHECK");
    return !(v && std::string_view{v} == "report");
}()};
}  // namespace

void leak_check::set_strict(bool strict) noexcept { strict_checks.store(strict); }

leak_check::~leak_check() {
    const long n = leaked();
    // A test that already failed (or is unwinding) may have left state
    // behind on its way out; its own failure is the report that matters.
    if (failed_assertions() != failures_ || std::uncaught_exceptions() > uncaught_) return;
    if (n == 0) return;
    const std::string what =
        std::string{"leak_check at "} + where_.file_name() + ":" + std::to_string(where_.line()) +
        ": " + std::to_string(n) +
        (n > 0 ? " heap block(s) not returned" : " heap block(s) freed that were made before it");
    detail::trace_dump_since(trace_from_);  // TROUPE_LEAK_TRACE=1 only
    if (strict_checks.load()) FAIL_CHECK(what);
    else MESSAGE(what << " (report only: TROUPE_LEAK_CHECK=report)");
}

}  // namespace troupe_test
