#pragma once
/// A write-once value (or exception) that threads can wait for. Selectable.
///
///     troupe::future<int> f;
///     troupe::thread t{[&] { f.fulfil(42); }};
///     int v = f.get();              // parks until fulfilled
///     f.reset();                    // reuse for the next round
///
/// `fulfil` may be called once per round; a second call throws
/// `future_error` (every build). `get` returns a reference valid until
/// `reset` or destruction, or rethrows the delivered exception. `reset` with
/// blocked waiters throws `future_error`.
#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

#include "troupe/error.hpp"
#include "troupe/select.hpp"
#include "troupe/spinlock.hpp"

namespace troupe {

namespace detail {

class future_base {
public:
    future_base(const future_base&) = delete;
    future_base& operator=(const future_base&) = delete;

    /// Whether a value or exception has been delivered.
    bool available() const noexcept { return state_.load(std::memory_order_acquire) != empty; }
    /// Delivers `e` instead of a value; get() rethrows it. Returns whether
    /// threads were waiting. Throws future_error if already fulfilled.
    bool fulfil_exception(std::exception_ptr e);
    /// Number of blocked waiters (a snapshot).
    std::size_t waiters() const noexcept;

    bool register_select(select_node& n);
    bool unregister_select(select_node& n);
    bool on_selected(select_node&) noexcept { return true; }

protected:
    enum : int { empty = 0, has_value = 1, has_error = 2 };
    future_base() noexcept = default;
    ~future_base();

    // Blocks until available; rethrows a delivered exception.
    void wait();
    // Under guard_: checks emptiness (throws), stores via `store`, wakes.
    template <class Store>
    bool deliver(Store&& store, int state = has_value) {
        guard_.lock();
        if (state_.load(std::memory_order_relaxed) != empty) {
            guard_.unlock();
            throw_already_fulfilled();
        }
        try {
            store();
        } catch (...) {
            guard_.unlock();
            throw;
        }
        return publish_and_wake(state);  // unlocks guard_
    }
    void begin_reset();  // locks guard_, throws if waiters (unlocked)
    void end_reset() noexcept;
    [[noreturn]] void throw_already_fulfilled() const;
    bool publish_and_wake(int state) noexcept;

    mutable spinlock guard_{"future"};
    std::atomic<int> state_{empty};
    std::exception_ptr error_;
    node_queue waiting_;
};

}  // namespace detail

template <class T = void>
class future : public detail::future_base {
public:
    future() noexcept = default;

    /// Stores `v` and wakes every waiter; returns whether any waited.
    /// Throws future_error if already fulfilled (the value is not stored).
    template <class U = T>
        requires std::is_constructible_v<T, U&&>
    bool fulfil(U&& v) {
        return deliver([&] { value_.emplace(std::forward<U>(v)); });
    }

    /// Parks until fulfilled; returns the value or rethrows the exception.
    const T& get() {
        wait();
        return *value_;
    }
    /// The value if available (rethrows a delivered exception), else nullptr.
    const T* try_get() const {
        if (!available()) return nullptr;
        if (state_.load(std::memory_order_acquire) == has_error) std::rethrow_exception(error_);
        return &*value_;
    }
    /// Makes the future empty again. Throws future_error if threads wait.
    void reset() {
        begin_reset();
        value_.reset();
        end_reset();
    }

private:
    std::optional<T> value_;
};

template <>
class future<void> : public detail::future_base {
public:
    future() noexcept = default;
    bool fulfil() {
        return deliver([] {});
    }
    void get() { wait(); }
    void reset() {
        begin_reset();
        end_reset();
    }
};

static_assert(selectable<future<int>>);

}  // namespace troupe
