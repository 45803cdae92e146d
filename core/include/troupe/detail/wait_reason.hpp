#pragma once
// Internal: what a blocked context waits on (DESIGN rule 10: a parked thread
// can always say why).
//
// Every blocking primitive wraps its park loop in a `wait_scope`: the
// record lives in the waiting context itself (user thread or OS thread) and
// is written only by that context, on the slow path that parks, so a fast
// path that does not block pays nothing. Readers (troupe::dump, the
// deadlock-cycle walk, the gdb script) read it from other threads: every
// field is a relaxed atomic, and `seq` (odd while a wait is recorded,
// bumped on entry and exit) tells a reader whether the fields it read
// belong to one wait.
#include <atomic>
#include <cstdint>
#include <string>

namespace troupe {
class context;
}

namespace troupe::detail {

/// How a dump learns more about a resource than its kind and address: small
/// functions the resource type provides (both optional). They run on the
/// dumping thread while the waiter is still inside its blocking call.
struct wait_describer {
    /// The resource's current state ("2/4 elements, 1 waiting consumer",
    /// ...). Must not block; may throw std::bad_alloc.
    std::string (*details)(const void* resource) = nullptr;
    /// The context the waiter waits for (a lock's owner, a joined thread),
    /// or nullptr: an edge of the wait-for graph. Must not block.
    const context* (*holder)(const void* resource) = nullptr;
    /// How a report names that edge: "held by" (a lock), "of" (a join).
    const char* relation = "held by";
};

/// One context's current wait. Written by its owner only.
struct wait_reason {
    std::atomic<std::uint32_t> seq{0};       // odd: waiting
    std::atomic<const char*> kind{nullptr};  // "blocking_lock", "sleep", ...
    std::atomic<const char*> name{nullptr};  // the resource's name, if any
    std::atomic<const void*> resource{nullptr};
    std::atomic<const wait_describer*> describer{nullptr};
    // When the wait began (wait_clock_ns), or 0: not read yet. The waiter
    // does not read a clock (a clock read is a measurable share of a
    // user-thread switch); the first to see the wait stamps it, by CAS from
    // 0: an OS thread about to sleep in the kernel, the watch thread on
    // each of its looks (when processors go to sleep), a dump.
    std::atomic<std::int64_t> since_ns{0};
    std::atomic<std::int64_t> until_ns{0};  // a timed wait's deadline (steady_clock), or 0
    // Readers describing this wait right now (wait_pin): the waiter does not
    // leave its wait scope, and so does not free the resource, while any is.
    std::atomic<std::uint32_t> readers{0};
};

/// Waits (yielding) until no reader pins `r`. Called by a waiter leaving its
/// wait scope when one did: rare, and short (a describer never blocks).
void wait_out_readers(wait_reason& r) noexcept;

/// A reader's hold on wait `seq` of `r`. While held() is true the waiter is
/// still inside that wait and cannot leave it (~wait_scope waits for the
/// pin's end), so the resource the record names is alive and its describer
/// may read it. Invariant (seq_cst on both sides, Dekker): the reader
/// increments `readers` then reads `seq`; the waiter writes `seq` then reads
/// `readers`; so either the reader sees the wait ended (held() false: it
/// reads nothing), or the waiter sees the reader and waits for its
/// decrement, whose release orders every read of the resource before the
/// waiter goes on (and frees it).
class wait_pin {
public:
    wait_pin(const wait_reason& r, std::uint32_t seq) noexcept : r_(const_cast<wait_reason&>(r)) {
        r_.readers.fetch_add(1, std::memory_order_seq_cst);
        held_ = r_.seq.load(std::memory_order_seq_cst) == seq;
    }
    wait_pin(const wait_pin&) = delete;
    wait_pin& operator=(const wait_pin&) = delete;
    ~wait_pin() { r_.readers.fetch_sub(1, std::memory_order_release); }
    bool held() const noexcept { return held_; }

private:
    wait_reason& r_;
    bool held_;
};

/// A coarse monotonic clock (a few nanoseconds; millisecond resolution is
/// enough to say how long a thread has waited).
std::int64_t wait_clock_ns() noexcept;

/// Stamps `r`'s wait with the time now if nobody has (a reader's CAS; see
/// since_ns). Nothrow.
inline void stamp_wait(wait_reason& r) noexcept {
    std::int64_t zero = 0;
    if (r.since_ns.load(std::memory_order_relaxed) == 0)
        r.since_ns.compare_exchange_strong(zero, wait_clock_ns(), std::memory_order_relaxed);
}

/// The calling context's record (user thread or OS thread). Registers an OS
/// thread with the registry the first time it waits.
wait_reason& begin_wait_record() noexcept;

/// The wait record of `c` (any context, for reading: a module above core
/// that knows one of its threads, e.g. an actor worker, reads what it waits
/// on with a wait_pin). Nothrow.
const wait_reason& wait_record_of(const context& c) noexcept;

/// Records, for the calling context, a wait on `resource` for the scope's
/// life. Nothrow; a few relaxed stores and a clock read.
class wait_scope {
public:
    wait_scope(const char* kind, const char* name, const void* resource,
               const wait_describer* d = nullptr, std::int64_t until_ns = 0) noexcept
        : r_(begin_wait_record()) {
        const std::uint32_t s = r_.seq.load(std::memory_order_relaxed);
        r_.seq.store(s + 1, std::memory_order_relaxed);  // odd: fields being written
        // release stores (plain stores on x86; no fence, which TSan does not
        // model): each field is ordered after the odd sequence.
        r_.name.store(name, std::memory_order_release);
        r_.resource.store(resource, std::memory_order_release);
        r_.describer.store(d, std::memory_order_release);
        r_.until_ns.store(until_ns, std::memory_order_release);
        r_.since_ns.store(0, std::memory_order_release);
        // release: a reader that sees the kind sees the fields before it.
        r_.kind.store(kind, std::memory_order_release);
    }
    wait_scope(const wait_scope&) = delete;
    wait_scope& operator=(const wait_scope&) = delete;
    ~wait_scope() {
        r_.kind.store(nullptr, std::memory_order_relaxed);
        // seq_cst store, then the readers check (wait_pin's invariant): the
        // caller may free the resource once this returns.
        r_.seq.store(r_.seq.load(std::memory_order_relaxed) + 1, std::memory_order_seq_cst);
        if (r_.readers.load(std::memory_order_seq_cst) != 0) [[unlikely]]
            wait_out_readers(r_);
    }

private:
    wait_reason& r_;
};

}  // namespace troupe::detail
