// spinlock, mcs_lock, blocking locks, condition_variable, semaphore, future.
#include <thread>

#include "troupe/config.hpp"
#include "troupe/blocking_lock.hpp"
#include "troupe/condition_variable.hpp"
#include "troupe/error.hpp"
#include "troupe/future.hpp"
#include "troupe/mcs_lock.hpp"
#include "troupe/semaphore.hpp"
#include "troupe/spinlock.hpp"
#include "troupe/thread.hpp"

namespace troupe {

// ---------------------------------------------------------------- spinlock

void spinlock::lock_slow() noexcept {
    for (int spins = 0;; ++spins) {
        // Test before test-and-set: spin on a shared line, not on RMWs.
        while (flag_.load(std::memory_order_relaxed)) {
            if (spins < defaults::spinlock_spins) {
                detail::cpu_relax();
                ++spins;
            } else {
                // The holder may be descheduled: a user thread that yields
                // while holding it waits on our processor's ready queue.
                this_thread::yield();
            }
        }
        if (!flag_.exchange(true, std::memory_order_acquire)) break;
    }
    note_acquired();
}

#if defined(TROUPE_CHECKED)
void spinlock::note_acquired() noexcept { owner_ = &this_context(); }
bool spinlock::note_release() noexcept {
    if (owner_ != &this_context()) {
        detail::report_misuse(detail::describe("spinlock", name_, this) +
                              (flag_.load() ? ": unlocked by a thread that does not hold it"
                                            : ": unlocked while not held"));
        return false;
    }
    owner_ = nullptr;
    return true;
}
#endif

// ---------------------------------------------------------------- mcs_lock

namespace {
// Spin a little, then yield: FIFO hand-off to a waiter whose kernel thread
// is descheduled (more spinners than cores) would otherwise stall every
// hand-off for a whole time slice. A user thread yields to its processor,
// so a holder that yielded on the same processor can run.
struct backoff {
    int spins = 0;
    void pause() noexcept {
        if (++spins < defaults::spinlock_spins) detail::cpu_relax();
        else this_thread::yield();
    }
};
}  // namespace

void mcs_lock::lock() noexcept {
    for (;;) {
        qnode* prev = tail_.load(std::memory_order_relaxed);
        if (prev == nullptr) {
            // Free: become the holder with no queue (tail = &self_).
            if (tail_.compare_exchange_weak(prev, &self_, std::memory_order_acquire,
                                            std::memory_order_relaxed))
                return;
            continue;
        }
        qnode me;
        me.waiting.store(true, std::memory_order_relaxed);
        // Swing the tail to our stack node; the acq_rel orders our node's
        // initialisation before the predecessor can see it.
        if (!tail_.compare_exchange_weak(prev, &me, std::memory_order_acq_rel,
                                         std::memory_order_relaxed))
            continue;
        // Link behind the predecessor (self_ if the holder had no queue).
        prev->next.store(&me, std::memory_order_release);
        backoff b;
        while (me.waiting.load(std::memory_order_acquire)) b.pause();
        // We own the lock. Move our successor link into self_, since `me`
        // dies when we return. If no successor yet, try to make self_ the
        // tail again; if that fails a successor is linking to `me`: wait.
        qnode* succ = me.next.load(std::memory_order_acquire);
        if (succ == nullptr) {
            self_.next.store(nullptr, std::memory_order_relaxed);
            qnode* expected = &me;
            if (tail_.compare_exchange_strong(expected, &self_, std::memory_order_acq_rel))
                return;
            while ((succ = me.next.load(std::memory_order_acquire)) == nullptr) b.pause();
        }
        self_.next.store(succ, std::memory_order_relaxed);
        return;
    }
}

void mcs_lock::unlock() noexcept {
    qnode* succ = self_.next.load(std::memory_order_acquire);
    if (succ == nullptr) {
        qnode* expected = &self_;
        // No queue: free the lock (release our critical section).
        if (tail_.compare_exchange_strong(expected, nullptr, std::memory_order_release)) return;
        // Someone swung the tail but has not linked yet.
        backoff b;
        while ((succ = self_.next.load(std::memory_order_acquire)) == nullptr) b.pause();
    }
    self_.next.store(nullptr, std::memory_order_relaxed);
    // Hand over: release pairs with the waiter's acquire spin.
    succ->waiting.store(false, std::memory_order_release);
}

// ---------------------------------------------------------------- blocking locks

namespace detail {

blocking_lock_base::~blocking_lock_base() {
    if constexpr (checked_build) {
        if (!waiting_.empty())
            report_misuse(describe(kind_, name_, this) + ": destroyed while " +
                          std::to_string(waiting_.size()) + " thread(s) wait for it");
        else if (owner_)
            report_misuse(describe(kind_, name_, this) + ": destroyed while held");
    }
}

bool blocking_lock_base::acquire_or_enqueue(select_node& n, std::size_t depth) {
    if (owner_ == nullptr) {
        owner_ = &n.waiter();
        count_ = depth;
        return true;
    }
    if (owner_ == &n.waiter()) {
        if (recursive_) {
            count_ += depth;
            return true;
        }
        if constexpr (checked_build) {
            guard_.unlock();
            report_misuse(describe(kind_, name_, this) +
                          ": locked again by the thread that holds it (not recursive: deadlock)");
            guard_.lock();
            return true;  // the handler returned: leave the lock as it was
        }
    }
    n.extra = reinterpret_cast<void*>(depth);
    waiting_.push_back(n);
    return false;
}

void blocking_lock_base::lock() {
    select_node n{this_context()};
    guard_.lock();
    if (acquire_or_enqueue(n, 1)) {
        guard_.unlock();
        return;
    }
    guard_.unlock();
    park();  // the unlocker makes us the owner before waking us
}

bool blocking_lock_base::try_lock() {
    context* me = &this_context();
    guard_.lock();
    bool ok = false;
    if (owner_ == nullptr) {
        owner_ = me;
        count_ = 1;
        ok = true;
    } else if (owner_ == me && recursive_) {
        ++count_;
        ok = true;
    }
    guard_.unlock();
    return ok;
}

void blocking_lock_base::hand_off_or_free() {
    // Skip nodes whose waituntil was already won elsewhere (pop_claimed), so
    // the lock never goes to a thread that no longer wants it.
    if (select_node* n = waiting_.pop_claimed()) {
        owner_ = &n->waiter();
        count_ = reinterpret_cast<std::size_t>(n->extra);
        // Ownership is assigned before the wake: no window in which the
        // lock is free.
        const bool owed = n->commit();
        guard_.unlock();
        if (owed) n->unpark_waiter();
        return;
    }
    owner_ = nullptr;
    count_ = 0;
    guard_.unlock();
}

void blocking_lock_base::unlock() {
    guard_.lock();
    if constexpr (checked_build) {
        if (owner_ != &this_context()) {
            const bool held = owner_ != nullptr;
            guard_.unlock();
            report_misuse(describe(kind_, name_, this) +
                          (held ? ": unlocked by a thread that does not hold it"
                                : ": unlocked while not held"));
            return;
        }
    }
    if (--count_ > 0) {
        guard_.unlock();
        return;
    }
    hand_off_or_free();
}

std::size_t blocking_lock_base::waiters() const noexcept {
    guard_.lock();
    std::size_t n = waiting_.size();
    guard_.unlock();
    return n;
}

bool blocking_lock_base::owned_by_caller() const noexcept {
    guard_.lock();
    bool mine = owner_ == &this_context();
    guard_.unlock();
    return mine;
}

bool blocking_lock_base::register_select(select_node& n) {
    guard_.lock();
    const bool free_or_mine = owner_ == nullptr || (recursive_ && owner_ == &n.waiter());
    if (free_or_mine) {
        // Win the statement before taking the lock: a lost clause must not
        // acquire anything.
        const bool won = n.try_claim();
        if (won) acquire_or_enqueue(n, 1);
        guard_.unlock();
        return won;
    }
    // Queue it even if another clause already won the statement: unlock's
    // pop_claimed drops such nodes, and unregister removes them.
    n.extra = reinterpret_cast<void*>(std::size_t{1});
    waiting_.push_back(n);
    guard_.unlock();
    return false;
}

bool blocking_lock_base::unregister_select(select_node& n) {
    guard_.lock();
    if (waiting_.remove(n)) {
        guard_.unlock();
        return false;
    }
    // Not queued: either it lost at registration, or it acquired the lock.
    // Release only what this node acquired (never another level).
    const bool acquired = !n.is_plain() && n.is_claimed() && owner_ == &n.waiter();
    guard_.unlock();
    if (acquired) unlock();
    return false;
}

void blocking_lock_base::cv_release() {
    guard_.lock();
    if constexpr (checked_build) {
        if (owner_ != &this_context()) {
            guard_.unlock();
            report_misuse(describe(kind_, name_, this) +
                          ": condition_variable wait without holding the lock");
            return;
        }
    }
    hand_off_or_free();
}

void blocking_lock_base::cv_enqueue_or_grant(select_node& plain_node) {
    guard_.lock();
    const std::size_t depth = reinterpret_cast<std::size_t>(plain_node.extra);
    if (owner_ == nullptr) {
        owner_ = &plain_node.waiter();
        count_ = depth;
        guard_.unlock();
        plain_node.wake();
        return;
    }
    waiting_.push_back(plain_node);
    guard_.unlock();
}

void blocking_lock_base::cv_reacquire(std::size_t depth) {
    select_node n{this_context()};
    guard_.lock();
    if (owner_ == nullptr) {
        owner_ = &n.waiter();
        count_ = depth;
        guard_.unlock();
        return;
    }
    n.extra = reinterpret_cast<void*>(depth);
    waiting_.push_back(n);
    guard_.unlock();
    park();
}

}  // namespace detail

// ---------------------------------------------------------------- condition_variable

condition_variable::~condition_variable() {
    if constexpr (checked_build) {
        if (!waiting_.empty())
            detail::report_misuse(detail::describe("condition_variable", nullptr, this) +
                                  ": destroyed while " + std::to_string(waiting_.size()) +
                                  " thread(s) wait on it");
    }
}

void condition_variable::enqueue(waiter& w) noexcept {
    guard_.lock();
    waiting_.push_back(w.node);
    guard_.unlock();
}

bool condition_variable::finish(waiter& w, bool timed) noexcept {
    if (timed) detail::timer_cancel(w.timer);  // after this no callback runs
    // Notifier and timer both claim our exclusive node; exactly one won, and
    // only the timer sets timed_out. If the timer won we may still be queued.
    if (!w.timed_out) return true;
    guard_.lock();
    waiting_.remove(w.node);
    guard_.unlock();
    return false;
}

void condition_variable::wake(waiter& w) noexcept {
    if (w.morph)
        w.morph->cv_enqueue_or_grant(w.lock_node);  // its hand-off unparks w
    else
        w.node.wake();
}

bool condition_variable::notify_one() noexcept {
    guard_.lock();
    select_node* n = waiting_.pop_claimed();
    guard_.unlock();
    if (!n) return false;
    wake(*static_cast<waiter*>(n->extra));
    return true;
}

bool condition_variable::notify_all() noexcept {
    node_queue won;
    guard_.lock();
    while (select_node* n = waiting_.pop_claimed()) won.push_back(*n);
    guard_.unlock();
    const bool any = !won.empty();
    while (select_node* n = won.pop_front())
        wake(*static_cast<waiter*>(n->extra));
    return any;
}

bool condition_variable::empty() const noexcept {
    guard_.lock();
    bool e = waiting_.empty();
    guard_.unlock();
    return e;
}

// ---------------------------------------------------------------- semaphore

semaphore::~semaphore() {
    if constexpr (checked_build) {
        if (!waiting_.empty())
            detail::report_misuse(detail::describe("semaphore", name_, this) + ": destroyed while " +
                                  std::to_string(waiting_.size()) + " thread(s) wait on it");
    }
}

void semaphore::acquire() {
    select_node n{this_context()};
    guard_.lock();
    if (count_ > 0) {
        --count_;
        guard_.unlock();
        return;
    }
    waiting_.push_back(n);
    guard_.unlock();
    park();  // release() handed us a unit
}

bool semaphore::try_acquire() noexcept {
    guard_.lock();
    const bool ok = count_ > 0;
    if (ok) --count_;
    guard_.unlock();
    return ok;
}

void semaphore::release(std::size_t n) noexcept {
    node_queue to_wake;
    guard_.lock();
    while (n > 0) {
        select_node* w = waiting_.pop_claimed();
        if (!w) break;
        to_wake.defer_wake(*w);
        --n;
    }
    count_ += n;  // only what no waiter took
    guard_.unlock();
    to_wake.unpark_all();
}

std::size_t semaphore::count() const noexcept {
    guard_.lock();
    std::size_t c = count_;
    guard_.unlock();
    return c;
}

std::size_t semaphore::waiters() const noexcept {
    guard_.lock();
    std::size_t c = waiting_.size();
    guard_.unlock();
    return c;
}

bool semaphore::register_select(select_node& n) {
    guard_.lock();
    if (count_ > 0) {
        const bool won = n.try_claim();
        if (won) --count_;
        guard_.unlock();
        return won;
    }
    waiting_.push_back(n);
    guard_.unlock();
    return false;
}

bool semaphore::unregister_select(select_node& n) {
    guard_.lock();
    const bool was_queued = waiting_.remove(n);
    guard_.unlock();
    // A unit handed to a general-mode clause whose body has not run must
    // still be accounted for by running it.
    if (was_queued || !n.is_general()) return false;
    return n.status_word()->load(std::memory_order_acquire) == std::uintptr_t(select_status::sat);
}

// ---------------------------------------------------------------- future

namespace detail {

future_base::~future_base() {
    // available() and get() read state_ without guard_, so a thread may see
    // the value and destroy the future while fulfil is still leaving its
    // critical section (publish_and_wake stores state_ before unlocking).
    // Taking guard_ waits for that unlock, fulfil's last touch of *this.
    guard_.lock();
    if constexpr (checked_build) {
        if (!waiting_.empty())
            report_misuse(describe("future", nullptr, this) + ": destroyed while " +
                          std::to_string(waiting_.size()) + " thread(s) wait on it");
    }
    guard_.unlock();
}

void future_base::throw_already_fulfilled() const {
    throw future_error(describe("future", nullptr, this) +
                       ": fulfilled twice (reset() it before fulfilling again)");
}

bool future_base::publish_and_wake(int state) noexcept {
    state_.store(state, std::memory_order_release);
    node_queue to_wake;
    bool any = false;
    while (select_node* n = waiting_.pop_claimed()) {
        any = true;
        to_wake.defer_wake(*n);
    }
    guard_.unlock();
    to_wake.unpark_all();
    return any;
}

bool future_base::fulfil_exception(std::exception_ptr e) {
    if (!e) throw std::invalid_argument("troupe::future::fulfil_exception: null exception_ptr");
    return deliver([&] { error_ = std::move(e); }, has_error);
}

void future_base::wait() {
    if (!available()) {
        select_node n{this_context()};
        guard_.lock();
        if (state_.load(std::memory_order_relaxed) == empty) {
            waiting_.push_back(n);
            guard_.unlock();
            park();  // fulfil wakes us after publishing the state
        } else {
            guard_.unlock();
        }
    }
    if (state_.load(std::memory_order_acquire) == has_error) std::rethrow_exception(error_);
}

std::size_t future_base::waiters() const noexcept {
    guard_.lock();
    std::size_t n = waiting_.size();
    guard_.unlock();
    return n;
}

void future_base::begin_reset() {
    guard_.lock();
    if (!waiting_.empty()) {
        std::size_t n = waiting_.size();
        guard_.unlock();
        throw future_error(describe("future", nullptr, this) + ": reset while " + std::to_string(n) +
                           " thread(s) wait on it");
    }
}

void future_base::end_reset() noexcept {
    error_ = nullptr;
    state_.store(empty, std::memory_order_release);
    guard_.unlock();
}

bool future_base::register_select(select_node& n) {
    guard_.lock();
    if (state_.load(std::memory_order_relaxed) != empty) {
        guard_.unlock();
        return n.try_claim();
    }
    waiting_.push_back(n);
    guard_.unlock();
    return false;
}

bool future_base::unregister_select(select_node& n) {
    guard_.lock();
    waiting_.remove(n);
    guard_.unlock();
    return false;
}

}  // namespace detail
}  // namespace troupe
