#pragma once
// Internal: the progress policy, which says who polls MPI when. The
// reasoning, with the peers it follows (HPX's background work, Charm++'s
// idle polling, Margo's spin-down), is in docs/remote.md, "Progress".
//
// MPI moves bytes only while some thread calls into it, so somebody must
// poll while anything is awaited, and nobody should while nothing is:
//   - Whoever holds the progress token runs a pass (engine::pass: receive,
//     ship replies, flush outboxes, test sends). Candidates: the engine
//     thread, and every idle processor, idle actor worker and OS thread
//     spinning in park() of this process (core's idle poller hooks).
//   - The rank is hot while an ask or lookup awaits its reply, a send is
//     incomplete, a reply is held, or the last pass that did work (or a
//     direct send) is within the spin-down window (defaults::remote::
//     idle_spin). Hot and others polling (their heartbeat moved within
//     poller_fresh): the engine thread sleeps out of their way, woken when
//     one of them stops, and checks on them every first_watch..max_watch.
//     Hot and nobody else polling: the engine thread polls without
//     sleeping (yielding after a pass that did work when the rank has no
//     spare core). An idle poll that received a stream (two batches or
//     more) wakes the engine thread to receive beside it.
//   - Cold: the engine thread sleeps between polls, first_poll doubling to
//     max_poll; a frame queued in an outbox, a fulfilled reply to ship and
//     the destructor wake it at once.
//   - An OS thread parking for the reply to its own last ask keeps polling
//     (idle_poller::awaited answers yes for it alone): one spinning thread
//     per rank.
//
// Invariants:
//   - One pass at a time: the token is taken by exchange (acquire) and
//     given back by a store (release), so the state a pass touches
//     ("token holder only" in engine.hpp) passes from holder to holder.
//   - The park counter (engine_waker): the engine thread decrements it
//     before parking and parks on a negative result; a waker increments it
//     and unparks exactly when it brings it back to zero. Every park is
//     matched by exactly one unpark; a positive value is banked wakes,
//     which only say "look again" and may be dropped by an awake engine.
//   - No lost wake while cold: a sender appends under an outbox lock (or
//     stores kicked_), then reads the counter; the engine decrements it,
//     then rechecks the outboxes under their locks and kicked_ (a Dekker
//     pair, seq_cst on both sides).
//   - No lost wake while stepped aside: a poller that stops bumps
//     poller_sleeps_, then clears handover_ and wakes it; the engine sets
//     handover_, then rereads poller_sleeps_ (a Dekker pair on the futex
//     word). The watchdog bounds the wait for a poller that neither polls
//     nor stops.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "troupe/context.hpp"
#include "troupe/detail/idle_poll.hpp"
#include "troupe/remote/detail/wire.hpp"

namespace troupe::remote::detail {

class engine;

/// Wakes the engine thread from a cold sleep (the park counter, above).
class engine_waker {
public:
    /// Something was queued for the engine (after the append, under or
    /// after the outbox lock): unparks it if it is parked.
    void wake() noexcept {
        if (counter_.load(std::memory_order_seq_cst) < 0 &&
            counter_.fetch_add(1, std::memory_order_seq_cst) + 1 == 0)
            unpark(*ctx_);  // we brought it back to zero: the one unpark owed
    }
    /// A direct send went out without the engine: a reply may be on its
    /// way, so the engine polls closely again (kicked_ is its activity).
    void kick() noexcept {
        kicked_.store(true, std::memory_order_seq_cst);
        wake();
    }
    /// Wakes it whatever the count (quit, a timer): the increment either
    /// brings the count to zero (it was parked) or banks a wake.
    void force() noexcept {
        if (counter_.fetch_add(1, std::memory_order_seq_cst) + 1 == 0) unpark(*ctx_);
    }

    alignas(64) std::atomic<int> counter_{0};
    context* ctx_ = nullptr;  // the engine thread's (set before any wake)
    std::atomic<bool> kicked_{false};
};

/// The last ask sent from a kernel thread: an OS thread parking for its
/// reply keeps polling for it (progress::awaited_hook). One thread-local
/// (one TLS lookup on the ask path).
struct asked_ask {
    const engine* e = nullptr;
    std::uint64_t id = 0;
};
extern constinit thread_local asked_ask last_ask;

class progress {
public:
    explicit progress(engine& e) noexcept : e_(e) {}
    progress(const progress&) = delete;

    /// Starts the engine thread and registers with core's idle pollers
    /// (without them the engine thread alone polls: slower, still right).
    void start();
    /// Unregisters from core's idle pollers: no idle thread runs a pass
    /// once this returns.
    void unhook() noexcept;
    /// Stops the engine thread once the outboxes are sent.
    void stop() noexcept;

    engine_waker waker;
    /// Replies awaited (asks and lookups): the rank is hot while non-zero.
    std::atomic<int> awaited{0};
    /// Whether the engine thread, polling hot and alone, may keep the CPU
    /// after a pass that did work (the rank has a spare core).
    std::atomic<bool> spin_freely{true};

    /// The calling OS thread sent ask `id` last (awaited_hook).
    static void note_ask(const engine& e, std::uint64_t id) noexcept { last_ask = {&e, id}; }
    /// Wakes the engine thread if it stepped aside for pollers.
    void wake_delegated() noexcept;

private:
    void run() noexcept;
    // A pass if the token is free; false if nothing was done or another
    // thread holds the token.
    bool try_progress() noexcept;
    bool hot(std::int64_t now_ns) const noexcept;
    // Sleeps while other threads poll for us, until one of them stops,
    // quit, or `watch` passes; true if woken.
    bool delegated_sleep(std::chrono::nanoseconds watch, std::uint64_t sleeps_seen) noexcept;
    // Cold sleep on the park counter for at most `d`; true if a pass did
    // work first.
    bool idle_sleep(std::chrono::nanoseconds d);
    bool work_queued() noexcept;
    static bool poll_hook(void* self) noexcept;
    static void sleeping_hook(void* self) noexcept;
    static bool awaited_hook(void* self) noexcept;

    engine& e_;
    std::atomic<bool> quit_{false};
    std::thread thread_;
    // The progress token.
    alignas(64) std::atomic<bool> token_{false};
    // Polls by idle processors and actor workers (a heartbeat).
    alignas(64) std::atomic<std::uint64_t> external_polls_{0};
    // When a pass last did work (steady clock, ns): the spin-down window.
    std::atomic<std::int64_t> last_activity_{0};
    // 1 while the engine sleeps in delegated_sleep (futex word).
    alignas(64) std::atomic<std::uint32_t> handover_{0};
    std::atomic<std::uint64_t> poller_sleeps_{0};
    troupe::detail::idle_poller poller_{};
    bool hooked_ = false;
    // Token holder only: the frames a pass builds (scratch() while it runs).
    byte_buffer pbuf_;
};

}  // namespace troupe::remote::detail
