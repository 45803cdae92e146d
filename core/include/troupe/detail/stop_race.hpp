#pragma once
// Internal: a blocking call given a stop_token, as a two-clause exclusive
// select between its resource and the token (the select_node protocol,
// troupe/select.hpp). Exactly one of them wins the shared status word,
// and a resource performs its operation only after winning it, so a stop
// racing completion never lets both happen: either the operation completed
// (the resource won) or nothing changed (the token won).
//
//     detail::stop_race race{this_context()};
//     if (!race.run(resource, token, "future", nullptr, this))
//         detail::throw_cancelled("future get", nullptr, this);
//     // resource won: its node is race.node() (not unregistered)
#include <atomic>
#include <cstdint>
#include <exception>

#include "troupe/context.hpp"
#include "troupe/detail/trace.hpp"
#include "troupe/detail/wait_reason.hpp"
#include "troupe/error.hpp"
#include "troupe/select.hpp"
#include "troupe/stop_token.hpp"

namespace troupe::detail {

class stop_race {
public:
    explicit stop_race(context& me) noexcept : resource_(me, status_), stop_(me, status_) {}
    stop_race(const stop_race&) = delete;
    stop_race& operator=(const stop_race&) = delete;

    /// Waits until `r` completes its operation on node() (true) or `tok` is
    /// stopped first (false: `r` is left as it was, node() unregistered).
    /// A stop requested before the call returns false without touching `r`.
    /// On true the caller finishes the clause (on_selected, and
    /// unregister_select where the resource needs it: not for a lock, whose
    /// unregister of a won node releases it). The wait is recorded for
    /// dumps as `kind` on `resource`. Throws what r.register_select throws
    /// (nothing then changed).
    template <selectable R>
    bool run(R& r, const stop_token& tok, const char* kind, const char* name, const void* resource,
             const wait_describer* d = nullptr) {
        if (tok.stop_requested()) return false;
        bool immediate = false;
        try {
            immediate = r.register_select(resource_);
        } catch (...) {
            r.unregister_select(resource_);
            throw;
        }
        if (immediate) return true;
        // A resource that already won needs no token: its wake is owed.
        bool stop_registered = false, stopped_now = false;
        if (status_.load(std::memory_order_acquire) == unsat) {
            stop_registered = true;
            stopped_now = tok.register_select(stop_);
        }
        if (!stopped_now) await_winner(kind, name, resource, d);
        const std::uintptr_t st = status_.load(std::memory_order_acquire);
        if (st == address(resource_)) {
            if (stop_registered) tok.unregister_select(stop_);
            return true;
        }
        // The token won: the resource can no longer claim our node (the
        // status is not unsat), so dequeuing it leaves the resource as it was.
        r.unregister_select(resource_);
        if (stop_registered) tok.unregister_select(stop_);
        return false;
    }

    /// The resource's node (valid for the race's life).
    select_node& node() noexcept { return resource_; }

private:
    static constexpr std::uintptr_t unsat = std::uintptr_t(select_status::unsat);
    static constexpr std::uintptr_t run_status = std::uintptr_t(select_status::run);
    static std::uintptr_t address(const select_node& n) noexcept {
        return reinterpret_cast<std::uintptr_t>(&n);
    }

    // Parks until the winner made its last touch of its node (released); a
    // park that ends earlier is a stray unpark: the winner's is still owed.
    void await_winner(const char* kind, const char* name, const void* resource,
                      const wait_describer* d) noexcept {
        wait_scope rec(kind, name, resource, d);
        for (;;) {
            trace::note_park(kind);
            park();
            const std::uintptr_t st = status_.load(std::memory_order_acquire);
            // A won word holds the winning node's address (above every
            // status value); both nodes are ours.
            if (st > run_status && reinterpret_cast<const select_node*>(st)->released()) return;
            if constexpr (checked_build)
                report_misuse(describe(kind, name, resource) +
                              ": a waiter given a stop_token was unparked before its operation "
                              "completed or its stop was requested (stray wake); it waits again");
        }
    }

    std::atomic<std::uintptr_t> status_{unsat};
    select_node resource_;
    select_node stop_;
};

}  // namespace troupe::detail
