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
///
/// Cost: the state, a waiters flag and the queue lock share one atomic word
/// (docs/locks.md): `available`, `try_get` and `get` on a fulfilled future
/// are one load; `fulfil` with nobody waiting is one CAS and one store.
#include <atomic>
#include <cstdint>
#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

#include "troupe/detail/wait_word.hpp"
#include "troupe/error.hpp"
#include "troupe/select.hpp"
#include "troupe/stop_token.hpp"

namespace troupe {

namespace detail {

class future_base {
public:
    future_base(const future_base&) = delete;
    future_base& operator=(const future_base&) = delete;

    /// Whether a value or exception has been delivered. Lock-free, nothrow.
    bool available() const noexcept { return state() != empty; }
    /// Delivers `e` instead of a value; get() rethrows it. Returns whether
    /// threads were waiting. Throws future_error if already fulfilled and
    /// std::invalid_argument for a null `e` (strong guarantee: nothing changes).
    bool fulfil_exception(std::exception_ptr e);
    /// Number of blocked waiters (a snapshot).
    std::size_t waiters() const noexcept;

    /// Selectable: the clause is available once the future is. nothrow.
    bool register_select(select_node& n) noexcept;
    bool unregister_select(select_node& n) noexcept;
    /// How a dump of a waituntil names the clause.
    const char* select_kind() const noexcept { return "future"; }
    bool on_selected(select_node&) noexcept { return true; }

protected:
    // The state lives in word_'s payload bits.
    enum : std::uintptr_t {
        empty = 0,
        has_value = std::uintptr_t{1} << payload_shift,
        has_error = std::uintptr_t{2} << payload_shift,
    };
    static constexpr std::uintptr_t state_mask = has_value | has_error;
    future_base() noexcept = default;
    ~future_base();

    // acquire: the value or exception stored before publication is visible.
    std::uintptr_t state() const noexcept {
        return word_.load(std::memory_order_acquire) & state_mask;
    }
    // Blocks until available; rethrows a delivered exception.
    void wait();
    // As wait(), or throws cancelled once `tok` is stopped first.
    void wait(const stop_token& tok);
    // Takes L, checks emptiness (throws future_error), stores via `store`
    // (an exception from it leaves the future empty), publishes and wakes.
    template <class Store>
    bool deliver(Store&& store, std::uintptr_t new_state = has_value) {
        const std::uintptr_t w = lock_queue(word_);
        if (w & state_mask) {
            unlock_queue(word_, w);
            throw_already_fulfilled();
        }
        try {
            store();
        } catch (...) {
            unlock_queue(word_, w);
            throw;
        }
        return publish_and_wake(w, new_state);  // releases L
    }
    void begin_reset();  // takes L; throws future_error (L released) if waiters
    void end_reset() noexcept;
    [[noreturn]] void throw_already_fulfilled() const;
    bool publish_and_wake(std::uintptr_t w, std::uintptr_t new_state) noexcept;

    // state | W | L (docs/locks.md).
    mutable std::atomic<std::uintptr_t> word_{empty};
    std::exception_ptr error_;
    node_queue waiting_;  // under L
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

    /// Parks until fulfilled; returns the value or rethrows the delivered
    /// exception. A ready value costs one load and takes no lock.
    const T& get() {
        if (state() != has_value) [[unlikely]]
            wait();
        return *value_;
    }
    /// As get(), but throws `cancelled` if `tok` is stopped before the
    /// future is fulfilled (nothing changed); a stop already requested
    /// throws at once, even on a fulfilled future.
    const T& get(const stop_token& tok) {
        wait(tok);
        return *value_;
    }
    /// The value if available (rethrows a delivered exception), else
    /// nullptr. Never blocks.
    const T* try_get() const {
        const std::uintptr_t s = state();
        if (s == empty) return nullptr;
        if (s == has_error) std::rethrow_exception(error_);
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
    /// Marks the future ready and wakes every waiter; returns whether any
    /// waited. Throws future_error if already fulfilled (strong guarantee).
    bool fulfil() {
        return deliver([] {});
    }
    /// Parks until fulfilled; rethrows a delivered exception. A ready
    /// future costs one load and takes no lock.
    void get() {
        if (state() != has_value) [[unlikely]]
            wait();
    }
    /// As get(), but throws `cancelled` if `tok` is stopped first (see
    /// future<T>::get(stop_token)).
    void get(const stop_token& tok) { wait(tok); }
    void reset() {
        begin_reset();
        end_reset();
    }
};

static_assert(selectable<future<int>>);

}  // namespace troupe
