#pragma once
// Helpers of the seam-matrix tests (tests/*/seams_test.cpp): probes for a
// stray wake and a stray banked permit, an element type that counts its live
// copies and can throw from its copy constructor, and a way to run the same
// body from a user thread and from an OS thread.
#include <atomic>
#include <chrono>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "fixture.hpp"
#include "troupe/context.hpp"
#include "troupe/error.hpp"
#include "troupe/thread.hpp"

namespace troupe_test {

/// True if the caller has no banked permit: a sleep of `d` lasts at least
/// `d` (a banked permit would end its park at once). A lower bound only, so
/// never a false failure.
inline bool sleeps_fully(std::chrono::milliseconds d = std::chrono::milliseconds(2)) {
    const auto start = std::chrono::steady_clock::now();
    troupe::this_thread::sleep_for(d);
    return std::chrono::steady_clock::now() - start >= d;
}

/// After a stray `troupe::unpark` of a blocked thread: checked builds wait
/// for the stray-wake report (the thread saw the wake and parked again);
/// every build then checks, for a bounded number of yields, that `still`
/// (the thread is still blocked, e.g. its nodes are still queued) keeps
/// holding. Never a false failure; a thread that wrongly ends its wait is
/// caught at once in checked builds and very likely in release.
template <class Still>
void stray_absorbed(misuse_recorder& rec, Still still) {
    if constexpr (troupe::checked_build) wait_until([&] { return !rec.messages().empty(); });
    for (int i = 0; i < 2000; ++i) {
        REQUIRE(still());
        troupe::this_thread::yield();
    }
    if constexpr (troupe::checked_build) CHECK(rec.last().find("stray wake") != std::string::npos);
}

/// Where a seam test runs its blocking side.
enum class from { user_thread, os_thread };

/// Runs `f` on a user thread of `c` or on a fresh std::thread, and waits
/// for it (rethrowing what it threw).
template <class F>
void run_from(troupe::cluster& c, from where, F&& f) {
    if (where == from::user_thread) {
        run_in(c, std::forward<F>(f));
        return;
    }
    std::exception_ptr error;
    std::thread t{[&] {
        try {
            f();
        } catch (...) {
            error = std::current_exception();
        }
    }};
    t.join();
    if (error) std::rethrow_exception(error);
}

/// A blocking side started on a user thread of a cluster or on a fresh
/// std::thread; join() waits for it and rethrows what it threw.
class spawned {
public:
    template <class F>
    spawned(troupe::cluster& c, from where, F f) {
        auto run = [this, f = std::move(f)]() mutable {
            try {
                f();
            } catch (...) {
                error_ = std::current_exception();
            }
        };
        if (where == from::user_thread) user_.emplace(c, std::move(run));
        else os_.emplace(std::move(run));
    }
    spawned(const spawned&) = delete;
    ~spawned() {
        if (user_ || os_) join_quietly();
    }
    void join() {
        join_quietly();
        if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
    }

private:
    void join_quietly() {
        if (user_) user_->join();
        if (os_ && os_->joinable()) os_->join();
        user_.reset();
        os_.reset();
    }
    std::exception_ptr error_;
    std::optional<troupe::thread> user_;
    std::optional<std::thread> os_;
};

/// Thrown by `tracked`'s copy constructor when its budget is spent.
struct copy_failure : std::runtime_error {
    copy_failure() : std::runtime_error("tracked: copy failed") {}
};

/// An element that counts its live objects (`live`) and whose copy
/// constructor throws once `copy_budget` successful copies were made
/// (-1: unlimited). Moves never throw (channels require it).
struct tracked {
    static inline std::atomic<long> live{0};
    static inline std::atomic<int> copy_budget{-1};

    int value = 0;

    explicit tracked(int v = 0) noexcept : value(v) { ++live; }
    tracked(const tracked& o) : value(o.value) {
        for (int b = copy_budget.load(); b >= 0;) {
            if (b == 0) throw copy_failure{};
            if (copy_budget.compare_exchange_weak(b, b - 1)) break;
        }
        ++live;
    }
    tracked(tracked&& o) noexcept : value(o.value) { ++live; }
    tracked& operator=(const tracked& o) {
        value = o.value;
        return *this;
    }
    tracked& operator=(tracked&& o) noexcept {
        value = o.value;
        return *this;
    }
    ~tracked() { --live; }
};

/// Lets `n` copies of `tracked` succeed, then makes every further copy
/// throw, until destroyed.
struct copies_fail_after {
    explicit copies_fail_after(int n) noexcept { tracked::copy_budget = n; }
    ~copies_fail_after() { tracked::copy_budget = -1; }
    copies_fail_after(const copies_fail_after&) = delete;
};

}  // namespace troupe_test
