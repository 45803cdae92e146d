// barging_lock: one atomic word, Go's two modes (docs/locks.md).
//
// word_ = owner | K | W | L (W, L: detail/wait_word.hpp; K: woken_bit):
//
//   0            free, nobody waits
//   K[|W]        free, a woken waiter is in flight (normal mode: running
//                threads may barge), W: others are queued
//   O            held by context O, nobody waits
//   O|W          held by O, waiters queued, none in flight
//   O|K[|W]      held by O (a barger, or the in-flight waiter once named
//                owner), a woken waiter in flight
//   x|L          the queue is held (x one of the above)
//
// K is Go's mutexWoken: while a woken waiter is on its way, unlocks wake
// nobody, so they free the lock with one CAS (keeping K and W), and the
// woken waiter's retry is one CAS when it finds the lock free; only a
// retry that finds the lock held takes L (to queue again). Every
// clock_every-th unlock while K is set takes the slow path to look at the
// woken waiter's age, which is how the lock notices that it has waited too
// long even if it never gets to run (one processor, a barger that never
// blocks).
//
// Transitions (-> by CAS unless noted; "store" releases L):
//   lock fast      0 -> me
//   barge          K[|W] -> me|K[|W]             (lock, try_lock)
//   enqueue        O[|K][|W] -> ...|L, push at the tail, store O[|K]|W
//   unlock fast    me -> 0                       (fails on any flag bit)
//   unlock, flight me|K[|W] -> K[|W]             (L clear; 15 of 16 such)
//   unlock slow    me|x -> me|x|L (x has W or K), then one of
//     in flight    K set: store K[|W] (wake nobody), or, once the woken
//                  waiter N has waited starvation_after, store N|K[|W]
//                  (N owns the lock; its retry finds it so)
//     wake         K clear: pop N, N waited < starvation_after:
//                  woken_ = N, store K[|W], grant N "compete", unpark N
//     starved      K clear: pop N, N waited >= starvation_after: store
//                  N[|W], grant N "owner", unpark N
//     clause       K clear: pop a waituntil node N: store N[|W]|L, commit,
//                  release L
//   retry          (the woken waiter N, without L)
//     free         K[|W] -> N[|W]                (clears K: N owns it)
//     named        N|K[|W] -> N[|W]              (handed in flight)
//     held by O    O|K[|W] -> O|K[|W]|L, push N at the head, store O|W
//   select win     free x -> x|L, claim, store me|x (won) or x (lost)
// Invariants:
//   B1  whenever L is clear, W == (queue non-empty) and K == (a woken
//       waiter is in flight); the holder of L recomputes W in the store
//       that releases L, K is set only by the wake's store and cleared
//       only by the woken waiter's retry, which leaves the lock held (by
//       itself, or by O with it queued). A free lock with W therefore has
//       K: queued waiters are never left behind a free lock without a
//       woken waiter on its way, whose retry takes the lock or queues
//       behind a holder, whose unlock (K now clear, W set) wakes someone;
//   B2  under L the owner cannot change and K cannot be cleared (every
//       CAS outside L, fast path, barge, unlock and retry, expects L
//       clear), so a waiter that saw owner O queues behind O, and O's
//       unlock then finds W;
//   B3  woken_ and woken_since_ are written under L by the wake that sets
//       K and read only under L while K is set (so a retry that clears K
//       without L leaves nothing stale that anyone reads);
//   B4  a plain waiter's completion is its node's grant (after the store
//       that names it owner, for a hand-off), the waker's last touch of the
//       node; the record's outcome is written before it. A starved, in-flight
//       or clause hand-off never leaves the lock free, so nobody barges past;
//   B5  in_flight_unlocks_ is written only by the lock's holder (between
//       its acquire and its release), so it needs no atomic.
#include "troupe/barging_lock.hpp"

#include <string>

#include "troupe/error.hpp"

namespace troupe {

namespace {
using detail::describe;
using detail::queue_lock_bit;
using detail::report_misuse;
using detail::waiters_bit;

constexpr const char* kind_name = "barging_lock";

// What a plain waiter's node carries: when it started waiting (kept across
// retries, so its age counts from its first queueing) and how its wait
// ended (written by the waker before grant()).
struct barging_wait : wait_record {
    barging_lock::clock::time_point since{};
    bool handed = false;  // true: made the owner; false: woken to compete
};
}  // namespace

barging_lock::~barging_lock() {
    if constexpr (checked_build) {
        const std::uintptr_t w = word_.load(std::memory_order_acquire);
        if (w & (waiters_bit | woken_bit))
            detail::report_destroyed_with_waiters(kind_name, name_, this,
                                                  waiting_.size() + ((w & woken_bit) ? 1 : 0));
        else if (owner_of(w))
            report_misuse(describe(kind_name, name_, this) + ": destroyed while held");
    }
}

bool barging_lock::try_lock() noexcept {
    std::uintptr_t w = word_.load(std::memory_order_relaxed);
    if (owner_of(w) || (w & queue_lock_bit)) return false;
    // Barge: free (maybe with a woken waiter in flight) -> mine, keeping W
    // and K (B1).
    return word_.compare_exchange_strong(w, to_word(this_context()) | w, std::memory_order_acquire,
                                         std::memory_order_relaxed);
}

void barging_lock::lock_slow(context& me) {
    barging_wait rec;
    bool queued_before = false;  // rec.since is set
    bool woken = false;          // we were woken to compete and are in flight (K)
    detail::queue_backoff b;
    for (;;) {
        std::uintptr_t w = word_.load(std::memory_order_relaxed);
        if (w & queue_lock_bit) {
            b.pause();  // an enqueuer, an unlock or a retry holds the queue
            continue;
        }
        const context* o = owner_of(w);
        if (!o) {
            // Free. A running thread barges, keeping W and K (B1). Our retry
            // takes it and settles our wake: K cleared, W kept (B1: the lock
            // is held now). acquire pairs with the previous owner's release.
            const std::uintptr_t mine = to_word(me) | (woken ? (w & ~woken_bit) : w);
            if (word_.compare_exchange_weak(w, mine, std::memory_order_acquire,
                                            std::memory_order_relaxed))
                return;
            continue;
        }
        if (o == &me) {
            if (woken) {
                // An unlock named us the owner while we were on our way (we
                // had waited too long): settle the wake, K cleared. acquire:
                // the hander's critical section (its release store).
                if (word_.compare_exchange_weak(w, w & ~woken_bit, std::memory_order_acquire,
                                                std::memory_order_relaxed))
                    return;
                continue;
            }
            if constexpr (checked_build) {
                report_misuse(describe(kind_name, name_, this) +
                              ": locked again by the thread that holds it (not recursive: "
                              "deadlock)");
                return;  // the handler returned: leave the lock as it was
            }
            // Release build: queue behind ourselves (a deadlock, as documented).
        }
        // Held by o: take L from exactly w. acquire: see the queue as its
        // last holder left it.
        if (!word_.compare_exchange_weak(w, w | queue_lock_bit, std::memory_order_acquire,
                                         std::memory_order_relaxed))
            continue;
        // o is fixed while we hold L (B2): queue behind it. A woken waiter
        // that lost keeps its place at the head and settles its wake (K
        // cleared, B1), so o's unlock finds W without K and wakes someone.
        // The release of L publishes W.
        if (!queued_before) {
            rec.since = now();
            queued_before = true;
        }
        select_node n{me};
        n.attach(rec);
        if (woken) waiting_.push_front(n);
        else waiting_.push_back(n);
        detail::unlock_queue(word_, (woken ? (w & ~woken_bit) : w) | waiters_bit);
        detail::park_until([&n] { return n.granted(); }, kind_name, name_, this);
        if (rec.handed) return;  // starved hand-off: the word names us (B4)
        woken = true;
        b = {};
    }
}

void barging_lock::unlock_slow() {
    std::uintptr_t w = word_.load(std::memory_order_relaxed);
    // Only the owner changes the owner part (and under L it is frozen, B2),
    // so this read answers "do we own it" exactly.
    if (owner_of(w) != &this_context()) {
        if constexpr (checked_build) {
            report_misuse(describe(kind_name, name_, this) +
                          (owner_of(w) ? ": unlocked by a thread that does not hold it"
                                       : ": unlocked while not held"));
        }
        return;  // never release someone else's lock
    }
    detail::queue_backoff b;
    for (;;) {
        w = word_.load(std::memory_order_relaxed);
        if (w & queue_lock_bit) {
            b.pause();  // an enqueuer, a retry that queues, an unregister
            continue;
        }
        if ((w & (waiters_bit | woken_bit)) == 0) {
            // Nobody waits: free. release publishes the critical section.
            if (word_.compare_exchange_weak(w, 0, std::memory_order_release,
                                            std::memory_order_relaxed))
                return;
            continue;
        }
        // Take L. acq_rel: release our critical section to whoever we hand
        // the lock to; acquire the queue as the enqueuers released it.
        if (word_.compare_exchange_weak(w, w | queue_lock_bit, std::memory_order_acq_rel,
                                        std::memory_order_relaxed)) {
            release_locked(w);
            return;
        }
    }
}

void barging_lock::release_locked(std::uintptr_t w) noexcept {
    if (w & woken_bit) {
        // A woken waiter is in flight (B1): free the lock, keeping W and K,
        // and wake nobody; its retry takes the lock or queues again. Look at
        // its age (the fast path sends only every clock_every-th such
        // unlock here): one that waited too long (it may not get to run
        // while we keep barging) is named the owner now, and its retry
        // finds the lock its own (B4: never free in between). woken_ and
        // woken_since_ describe it while K is set (B3).
        if (now() - woken_since_ >= options_.starvation_after) {
            starved_handoffs_.fetch_add(1, std::memory_order_relaxed);
            detail::unlock_queue(word_, to_word(*woken_) | (w & (waiters_bit | woken_bit)));
            return;
        }
        detail::unlock_queue(word_, w & (waiters_bit | woken_bit));
        return;
    }
    // Drop clauses whose waituntil was already won elsewhere.
    select_node* n = waiting_.pop_claimed();
    if (!n) {
        detail::unlock_queue(word_, 0);  // every queued clause had lost: free
        return;
    }
    if (!n->is_plain()) {
        hand_off_clause(*n);
        return;
    }
    auto& rec = n->record<barging_wait>();
    context& next = n->waiter();
    if (now() - rec.since >= options_.starvation_after) {
        // Starved: make it the owner before anyone can barge (B4).
        rec.handed = true;
        starved_handoffs_.fetch_add(1, std::memory_order_relaxed);
        detail::unlock_queue(word_, detail::with_waiters(to_word(next), waiting_));
    } else {
        // Normal: free the lock and let the waiter compete for it; K says
        // it is in flight until its retry (B1, B3).
        rec.handed = false;
        woken_ = &next;
        woken_since_ = rec.since;
        detail::unlock_queue(word_, detail::with_waiters(woken_bit, waiting_));
    }
    // Popped under L, so nobody else touches the node; the grant is our
    // last touch of it, then only the context (read above).
    n->grant();
    unpark(next);
}

void barging_lock::hand_off_clause(select_node& n) noexcept {
    // As blocking_lock: name the clause's waiter the owner *before* commit(),
    // L still held, so its body never runs while the word names someone
    // else; commit() stays under L because an awake general-mode waiter may
    // unregister (which takes L) right after. release: the critical section
    // is published with the owner. (No woken waiter is in flight here: K
    // clear, or the unlock would not have popped.)
    const std::uintptr_t handed = detail::with_waiters(to_word(n.waiter()), waiting_);
    word_.store(handed | queue_lock_bit, std::memory_order_release);
    const bool owed = n.commit();
    detail::unlock_queue(word_, handed);
    if (owed) n.unpark_waiter();
}

std::size_t barging_lock::waiters() const noexcept {
    const std::uintptr_t w = detail::lock_queue(word_);
    const std::size_t n = waiting_.size();
    detail::unlock_queue(word_, w);
    return n;
}

bool barging_lock::register_select(select_node& n) noexcept {
    context& me = n.waiter();
    detail::queue_backoff b;
    for (;;) {
        std::uintptr_t w = word_.load(std::memory_order_relaxed);
        if (w & queue_lock_bit) {
            b.pause();
            continue;
        }
        // Take L in either case: on a free lock so that winning the
        // statement and taking the lock are one step for everyone else (a
        // lost clause acquires nothing); on a held one to queue (B2).
        if (!word_.compare_exchange_weak(w, w | queue_lock_bit, std::memory_order_acquire,
                                         std::memory_order_relaxed))
            continue;
        if (!owner_of(w)) {
            if (n.try_claim()) {
                // Barge, as lock() would (normal mode), keeping W and K (B1).
                detail::unlock_queue(word_, to_word(me) | w);
                return true;
            }
            detail::unlock_queue(word_, w);
            return false;
        }
        // Held (by someone else, or by us: then only another clause can end
        // the statement, as with blocking_lock): queue, even if another
        // clause already won (unlock's pop_claimed drops such nodes).
        waiting_.push_back(n);
        detail::unlock_queue(word_, w | waiters_bit);
        return false;
    }
}

bool barging_lock::unregister_select(select_node& n) noexcept {
    const std::uintptr_t w = detail::lock_queue(word_);
    if (waiting_.remove(n)) {
        // B1: W iff more are queued; K (a woken waiter in flight) stays.
        detail::unlock_queue(word_, detail::with_waiters(w, waiting_));
        return false;
    }
    // Not queued: it lost at registration, or it acquired the lock; release
    // only what this node acquired.
    const bool acquired = !n.is_plain() && n.is_claimed() && owner_of(w) == &n.waiter();
    detail::unlock_queue(word_, w);
    if (acquired) unlock();
    return false;
}

}  // namespace troupe
