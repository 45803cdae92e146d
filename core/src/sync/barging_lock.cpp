// barging_lock: one atomic word, Go's two modes (docs/locks.md).
//
// word_ = owner | W | L (detail/wait_word.hpp):
//
//   0            free, nobody waits
//   W            free, waiters queued or one woken (normal mode: running
//                threads may barge)
//   O            held by context O, nobody waits
//   O|W          held by O, waiters queued or one woken
//   x|L          the queue is held (x one of the above)
//
// W means "the queue is non-empty or a woken waiter is in flight" (woken_):
// while one is in flight every unlock takes the slow path, which is how the
// lock notices that the woken waiter has waited too long even if it never
// gets to run (one processor, a barger that never blocks).
//
// Transitions (-> by CAS unless noted; "store" releases L):
//   lock fast      0 -> me
//   barge          W -> me|W                     (lock slow path, try_lock,
//                                                 an OS thread's spin)
//   enqueue        O[|W] -> O[|W]|L, push, store O|W
//   unlock fast    me -> 0                       (fails on any flag bit)
//   unlock slow    me|W -> me|W|L, then one of
//     in flight    a woken waiter K is in flight: store W (wake nobody), or,
//                  once K has waited starvation_after, store K|W (K owns
//                  the lock when it retries)
//     wake         pop N, N waited < starvation_after: woken_ = N, store W,
//                  grant N "compete", unpark N
//     starved      pop N, N waited >= starvation_after: store N[|W], grant
//                  N "owner", unpark N
//     clause       pop a waituntil node N: store N[|W]|L, commit, release L
//   retry          the woken waiter takes L, woken_ = nullptr: free -> store
//                  me[|W]; named owner -> store me[|W]; held by O -> push
//                  its node at the head, store O|W
//   select win     free x -> x|L, claim, store me|(x&W) (won) or x (lost)
// Invariants:
//   B1  whenever L is clear, W == (queue non-empty || woken_); the holder of
//       L recomputes it in the store that releases L. So queued waiters are
//       never left behind a free lock: a free lock with W has a woken
//       waiter in flight, whose retry takes it or queues behind a holder,
//       whose unlock then wakes someone;
//   B2  under L the owner cannot change (unlock's CAS, the barge and the
//       fast path all expect L clear), so a waiter that saw owner O queues
//       behind O, and O's unlock then finds W;
//   B3  woken_, woken_since_ and unlocks_while_woken_ are read and written
//       only under L;
//   B4  a plain waiter's completion is its node's grant (after the store
//       that names it owner, for a hand-off), the waker's last touch of the
//       node; the record's outcome is written before it. A starved, in-flight
//       or clause hand-off never leaves the lock free, so nobody barges past.
#include "troupe/barging_lock.hpp"

#include <algorithm>
#include <string>

#include "troupe/error.hpp"
#include "troupe/topology.hpp"

namespace troupe {

namespace {
using detail::describe;
using detail::queue_lock_bit;
using detail::report_misuse;
using detail::waiters_bit;

constexpr const char* kind_name = "barging_lock";
// Unlocks while a waiter is in flight between two clock reads (B3): the
// clock costs about as much as the rest of such an unlock.
constexpr unsigned clock_every = 16;

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
        if (w & waiters_bit)
            detail::report_destroyed_with_waiters(kind_name, name_, this,
                                                  waiting_.size() + (woken_ ? 1 : 0));
        else if (owner_of(w))
            report_misuse(describe(kind_name, name_, this) + ": destroyed while held");
    }
}

bool barging_lock::try_lock() noexcept {
    std::uintptr_t w = word_.load(std::memory_order_relaxed);
    if (owner_of(w) || (w & queue_lock_bit)) return false;
    // Barge: free (with or without waiters) -> mine, keeping W (B1).
    return word_.compare_exchange_strong(w, to_word(this_context()) | (w & waiters_bit),
                                         std::memory_order_acquire, std::memory_order_relaxed);
}

bool barging_lock::spin_then_barge(const context& me) noexcept {
    // One CPU: the owner cannot run (and free the lock) while we spin.
    static const bool many_cpus = affinity_cpu_count() > 1;
    if (!many_cpus) return false;
    // Polls with pauses doubling up to barging_spin_max_gap: the first polls
    // catch a short hold at once, the later ones leave the word's cache line
    // with the owner long enough for it to run uncontended stretches (a poll
    // every pause turns every acquisition into a cross-core transfer).
    int gap = 1;
    for (int i = 0; i < options_.spins; ++i) {
        for (int k = 0; k < gap; ++k) detail::cpu_relax();
        gap = std::min(2 * gap, defaults::core::barging_spin_max_gap);
        // A load, not a CAS, while the lock is held: polling shares the line
        // instead of taking it from the owner.
        std::uintptr_t w = word_.load(std::memory_order_relaxed);
        const context* o = owner_of(w);
        if (o == &me) return false;  // a re-lock: the queueing path reports it
        // Held, or L held: a free word with L is being decided by L's holder
        // (a woken waiter's retry taking it, a select registration, a
        // waiters() snapshot); a CAS to a word without L would take L from
        // under it (B2, B3). Poll again.
        if (o || (w & queue_lock_bit)) continue;
        // Free (maybe with W: waiters queued or one woken, normal mode):
        // barge as lock_slow does, keeping W (B1), so a queued waiter is
        // still woken by our unlock. The word is never free while a starved
        // waiter is owed the lock (B4), so the spin cannot pass it. acquire
        // pairs with the last owner's release.
        if (word_.compare_exchange_strong(w, to_word(me) | (w & waiters_bit),
                                          std::memory_order_acquire, std::memory_order_relaxed))
            return true;
    }
    return false;
}

void barging_lock::lock_slow(context& me) {
    // An OS thread spins briefly first: a lock freed meanwhile is taken
    // without a queue push, an unlock's pop and a wake. A user thread
    // queues at once, giving its processor to other user threads.
    if (options_.spins > 0 && !me.is_user_thread() && spin_then_barge(me)) return;
    barging_wait rec;
    bool queued_before = false;  // rec.since is set
    bool woken = false;          // we were woken to compete: retry through L
    detail::queue_backoff b;
    for (;;) {
        std::uintptr_t w = word_.load(std::memory_order_relaxed);
        if (w & queue_lock_bit) {
            b.pause();  // an enqueuer, an unlock or a retry holds the queue
            continue;
        }
        const context* o = owner_of(w);
        if (!o && !woken) {
            // Free, maybe with waiters (normal mode): barge, keeping W.
            if (word_.compare_exchange_weak(w, to_word(me) | (w & waiters_bit),
                                            std::memory_order_acquire, std::memory_order_relaxed))
                return;
            continue;
        }
        if (o == &me && !woken) {
            // Every build (one compare, on the slow path only): queueing
            // behind ourselves would hang for ever.
            report_misuse(describe(kind_name, name_, this) +
                          ": locked again by the thread that holds it (not recursive: "
                          "deadlock)");
            return;  // the handler returned: leave the lock as it was
        }
        // Take L from exactly w. acquire: see the queue as its last holder
        // left it (and, if we are named the owner, the critical section).
        if (!word_.compare_exchange_weak(w, w | queue_lock_bit, std::memory_order_acquire,
                                         std::memory_order_relaxed))
            continue;
        if (woken) {
            woken_ = nullptr;  // B3: our retry settles the wake
            if (!o || o == &me) {
                // Free: take it. Named: an unlock handed it to us while we
                // were on our way (we had waited too long). The store
                // releases L with W recomputed (B1).
                const std::uintptr_t wb = waiting_.empty() ? 0 : waiters_bit;
                detail::unlock_queue(word_, to_word(me) | wb);
                return;
            }
        }
        // Held by o, fixed while we hold L (B2): queue behind it; a woken
        // waiter that lost keeps its place at the head. The release of L
        // publishes W, so o's unlock takes the slow path and wakes us.
        if (!queued_before) {
            rec.since = now();
            queued_before = true;
        }
        select_node n{me};
        n.attach(rec);
        if (woken) waiting_.push_front(n);
        else waiting_.push_back(n);
        detail::unlock_queue(word_, w | waiters_bit);
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
    if (owner_of(w) != &this_context()) [[unlikely]] {
        // Every build: the fast path's CAS expected us, so this costs the
        // correct unlock nothing more.
        report_misuse(describe(kind_name, name_, this) +
                      (owner_of(w) ? ": unlocked by a thread that does not hold it"
                                   : ": unlocked while not held"));
        return;  // never release someone else's lock
    }
    if (detail::free_or_lock_queue(word_)) release_locked();
}

void barging_lock::release_locked() noexcept {
    if (woken_) {
        // A woken waiter is in flight (Go's mutexWoken): free the lock and
        // wake nobody; its retry takes the lock or queues again (B1). Every
        // few unlocks, look at its age: one that waited too long (it may not
        // get to run while we keep barging) is named the owner now, and its
        // retry finds the lock its own (B4: never free in between).
        if (++unlocks_while_woken_ % clock_every == 0 &&
            now() - woken_since_ >= options_.starvation_after) {
            starved_handoffs_.fetch_add(1, std::memory_order_relaxed);
            detail::unlock_queue(word_, to_word(*woken_) | waiters_bit);
            return;
        }
        detail::unlock_queue(word_, waiters_bit);
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
        // Normal: free the lock and let the waiter compete for it. It stays
        // counted in W while in flight (B1).
        rec.handed = false;
        woken_ = &next;
        woken_since_ = rec.since;
        unlocks_while_woken_ = 0;
        detail::unlock_queue(word_, waiters_bit);
    }
    // Popped under L, so nobody else touches the node; the grant is our
    // last touch of it, then only the context (announced, then unparked).
    n->grant_and_unpark();
}

void barging_lock::hand_off_clause(select_node& n) noexcept {
    // As blocking_lock: name the clause's waiter the owner *before* commit(),
    // L still held, so its body never runs while the word names someone
    // else; commit() stays under L because an awake general-mode waiter may
    // unregister (which takes L) right after. release: the critical section
    // is published with the owner. (No woken waiter is in flight here.)
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
                // Barge, as lock() would (normal mode), keeping W (B1).
                detail::unlock_queue(word_, to_word(me) | (w & waiters_bit));
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
        // B1: W stays while a woken waiter is in flight.
        const std::uintptr_t wb = (waiting_.empty() && !woken_) ? 0 : waiters_bit;
        detail::unlock_queue(word_, (w & ~waiters_bit) | wb);
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
