#pragma once
/// A counting semaphore with FIFO hand-off. Selectable.
///
///     troupe::semaphore ready{0};
///     ready.release();          // V
///     ready.acquire();          // P: parks while the count is zero
///
/// `release(n)` hands units straight to queued waiters in FIFO order (they
/// do not re-compete), and adds only the remainder to the count.
#include <cstddef>

#include "troupe/select.hpp"
#include "troupe/spinlock.hpp"

namespace troupe {

class semaphore {
public:
    explicit semaphore(std::size_t initial = 0, const char* name = nullptr) noexcept
        : count_(initial), name_(name) {}
    semaphore(const semaphore&) = delete;
    semaphore& operator=(const semaphore&) = delete;
    /// Checked builds report destruction with waiters.
    ~semaphore();

    /// Takes one unit, parking while none is available.
    void acquire();
    /// Takes one unit if available; never blocks.
    bool try_acquire() noexcept;
    /// Adds `n` units: first to waiters (FIFO, each woken), then to the count.
    void release(std::size_t n = 1) noexcept;

    /// Units available now (a snapshot).
    std::size_t count() const noexcept;
    /// Threads queued (a snapshot).
    std::size_t waiters() const noexcept;

    bool register_select(select_node& n);
    bool unregister_select(select_node& n);
    bool on_selected(select_node&) noexcept { return true; }

private:
    mutable spinlock guard_;
    std::size_t count_;
    node_queue waiting_;
    const char* name_;
};

static_assert(selectable<semaphore>);

}  // namespace troupe
