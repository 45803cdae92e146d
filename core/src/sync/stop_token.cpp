// stop_source / stop_token: one shared stop state (stopped | W | L in one
// word, docs/locks.md) and a reference count.
//
// Transitions ("store" releases L):
//   request_stop   0[|W] -> |L, store stopped|L, pop every live waiter
//                  (select nodes woken at once), store stopped
//   register       0[|W] -> |L, push, store W;  stopped -> claim at once
// Invariants:
//   T1  once stopped, the word never changes again but for L (a
//       registration that finds it stopped takes and drops L);
//   T2  the stopped bit is published (L still set) before any waiter is
//       woken: a clause body, or a blocking call's check, sees it;
//   T3  the state outlives every waiter: a waiting token (or the blocking
//       call's copy) holds a reference, and request_stop runs on a source
//       that holds one.
#include "troupe/stop_token.hpp"

#include <string>

#include "troupe/detail/wait_word.hpp"

namespace troupe {
namespace detail {

class stop_state {
public:
    static constexpr std::uintptr_t stopped = std::uintptr_t{1} << payload_shift;

    void retain() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
    void release() noexcept {
        // acq_rel: every use of the state by other owners happens before
        // the last owner deletes it.
        if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
    }
    void add_source() noexcept { sources_.fetch_add(1, std::memory_order_relaxed); }
    void drop_source() noexcept { sources_.fetch_sub(1, std::memory_order_relaxed); }
    bool has_source() const noexcept { return sources_.load(std::memory_order_relaxed) > 0; }

    bool requested() const noexcept {
        return (word_.load(std::memory_order_acquire) & stopped) != 0;
    }

    bool request() noexcept {
        const std::uintptr_t w = lock_queue(word_);
        if (w & stopped) {
            unlock_queue(word_, w);
            return false;
        }
        // T2: the bit first, with L still held, then the waiters.
        word_.store(stopped | queue_lock_bit, std::memory_order_release);
        grant_list to_wake;
        while (select_node* n = waiting_.pop_claimed()) to_wake.add_published(*n);
        unlock_queue(word_, stopped);
        to_wake.grant_all();
        return true;
    }

    bool register_select(select_node& n) noexcept {
        const std::uintptr_t w = lock_queue(word_);
        if (w & stopped) {
            unlock_queue(word_, w);
            return n.try_claim();
        }
        waiting_.push_back(n);
        unlock_queue(word_, w | waiters_bit);
        return false;
    }

    void unregister_select(select_node& n) noexcept {
        const std::uintptr_t w = lock_queue(word_);
        waiting_.remove(n);
        unlock_queue(word_, with_waiters(w, waiting_));
    }

private:
    ~stop_state() = default;
    mutable std::atomic<std::uintptr_t> word_{0};
    std::atomic<std::uint32_t> refs_{1};
    std::atomic<std::uint32_t> sources_{0};
    node_queue waiting_;  // under L
};

void throw_cancelled(const char* what, const char* name, const void* address) {
    throw cancelled(std::string("troupe: ") + describe(what, name, address) +
                    ": cancelled (stop requested before the operation completed; nothing "
                    "changed)");
}

}  // namespace detail

// ------------------------------------------------------------- stop_token

stop_token::stop_token(const stop_token& o) noexcept : s_(o.s_) {
    if (s_) s_->retain();
}
stop_token::~stop_token() {
    if (s_) s_->release();
}
bool stop_token::stop_requested() const noexcept { return s_ && s_->requested(); }
bool stop_token::stop_possible() const noexcept {
    return s_ && (s_->has_source() || s_->requested());
}
bool stop_token::register_select(select_node& n) const noexcept {
    // No state: never available (a nil channel); nothing to queue on.
    return s_ ? s_->register_select(n) : false;
}
bool stop_token::unregister_select(select_node& n) const noexcept {
    if (s_) s_->unregister_select(n);
    return false;
}

// ------------------------------------------------------------ stop_source

stop_source::stop_source() : s_(new detail::stop_state) { s_->add_source(); }
stop_source::stop_source(const stop_source& o) noexcept : s_(o.s_) {
    if (s_) {
        s_->retain();
        s_->add_source();
    }
}
stop_source::~stop_source() {
    if (s_) {
        s_->drop_source();
        s_->release();
    }
}
bool stop_source::request_stop() noexcept { return s_ && s_->request(); }
bool stop_source::stop_requested() const noexcept { return s_ && s_->requested(); }
stop_token stop_source::get_token() const noexcept {
    if (s_) s_->retain();
    return stop_token{s_};
}

}  // namespace troupe
