// blocking_lock and owner_lock: one atomic word, FIFO hand-off.
//
// word_ = owner | W | L (see detail/wait_word.hpp and docs/locks.md):
//
//   0            free, nobody waits
//   O            held by context O, nobody waits
//   O|W          held by O, the queue is non-empty
//   x|L          the queue is held (x is one of the above, or 0 while a
//                free lock is being granted or won by a select clause)
//
// Transitions (-> by CAS unless noted; "store" releases L):
//   lock fast      0 -> me
//   unlock fast    me -> 0                      (fails on any flag bit)
//   enqueue        O[|W] -> O[|W]|L, push, store O|W  (enqueue_behind_owner)
//   hand-off       me|W -> me|W|L, pop first live node N,
//                  store N|W or N (queue empty) or 0 (no live node);
//                  a waituntil node N: store N[|W]|L, commit, then release L
//   select win     0 -> L, claim, store me (won) or 0 (lost)
//   cv grant       0 -> L, store waiter
// Invariants:
//   I1  the word is never 0 (or owner-less) while W is set: a waiter exists
//       only behind an owner, and ownership passes to it directly;
//   I2  under L the owner cannot change (its unlock CAS expects L clear), so
//       an enqueuer that saw owner O queues behind O, and O's unlock then
//       finds W and hands off (a waiter arriving while the holder releases
//       either sees 0 and takes the lock, or is queued before the release
//       reads the word);
//   I3  count_ is written by the owner, or by the granter before the
//       release store that names the new owner (always 1: a waiter that
//       held more levels, a condition-variable waiter, restores its own
//       depth once it owns the lock); read only by the owner;
//   I4  a plain waiter's completion is "the word names me": it becomes true
//       in the granter's release store, after which the granter touches
//       only the waiter's context (read before).
#include "troupe/blocking_lock.hpp"

#include <string>

#include "troupe/detail/stop_race.hpp"

namespace troupe::detail {

std::string find_cycle_through(const context& me);  // registry.cpp (checked builds)

const wait_describer blocking_lock_base::wait_info{&blocking_lock_base::details_for_dump,
                                                   &blocking_lock_base::holder_for_dump};

const context* blocking_lock_base::holder_for_dump(const void* self) noexcept {
    return static_cast<const blocking_lock_base*>(self)->owner();
}

std::string blocking_lock_base::details_for_dump(const void* self) {
    // The queue's length needs L, held for a few instructions at a time.
    return std::to_string(static_cast<const blocking_lock_base*>(self)->waiters()) + " waiting";
}

blocking_lock_base::~blocking_lock_base() {
    if constexpr (checked_build) {
        const std::uintptr_t w = word_.load(std::memory_order_acquire);
        if (w & waiters_bit) report_destroyed_with_waiters(kind_, name_, this, waiting_.size());
        else if (owner_of(w))
            report_misuse(describe(kind_, name_, this) + ": destroyed while held");
    }
}

bool blocking_lock_base::try_lock() noexcept {
    context& me = this_context();
    std::uintptr_t w = word_.load(std::memory_order_relaxed);
    if (w == 0) {
        // Same step as the lock fast path; a failure means someone got there first.
        if (!word_.compare_exchange_strong(w, to_word(me), std::memory_order_acquire,
                                           std::memory_order_relaxed))
            return false;
        count_ = 1;
        return true;
    }
    if (recursive_ && owner_of(w) == &me) {
        ++count_;  // we own it: count_ is ours
        return true;
    }
    return false;
}

void blocking_lock_base::lock_slow(context& me) {
    // Recorded before queueing and before the walk below: of two threads
    // closing a cycle at once, the second to take the registry's lock for
    // its walk sees the first's record (the lock orders the two walks).
    wait_scope rec(kind_, name_, this, &wait_info);
    if constexpr (checked_build) {
        // Only behind another owner (the slow path of a held lock); before
        // queueing, so a handler that throws leaves nothing behind. The
        // walk reads only registered threads and reports only a cycle
        // whose every edge it validated (registry.cpp).
        const context* o = owner();
        if (o && o != &me) {
            std::string cycle = find_cycle_through(me);
            if (!cycle.empty()) report_misuse(cycle);
        }
    }
    select_node n{me};
    if (!acquire_or_enqueue(n, 1)) park_until_owner(me);  // handed over with count_ 1
}

void blocking_lock_base::lock(const stop_token& tok) {
    if (tok.stop_requested()) throw_cancelled(kind_, name_, this);
    context& me = this_context();
    if (owner() == &me) {
        // Recursion, or (not recursive) the re-lock report: no wait either way.
        select_node n{me};
        acquire_or_enqueue(n, 1);
        return;
    }
    stop_race race{me};
    if (!race.run(*this, tok, kind_, name_, this, &wait_info)) throw_cancelled(kind_, name_, this);
    // Won: ours with one level (taken free at registration, or handed over,
    // I3). Not unregistered: that would release it.
}

bool blocking_lock_base::acquire_or_enqueue(select_node& n, std::size_t depth) {
    context& me = n.waiter();
    queue_backoff b;
    for (;;) {
        std::uintptr_t w = word_.load(std::memory_order_relaxed);
        if (w == 0) {
            // Free (I1: nobody waits): take it.
            if (word_.compare_exchange_weak(w, to_word(me), std::memory_order_acquire,
                                            std::memory_order_relaxed)) {
                count_ = depth;
                return true;
            }
            continue;
        }
        if (owner_of(w) == &me) {
            if (recursive_) {
                count_ += depth;
                return true;
            }
            // Every build (one compare, on the slow path only): queueing
            // behind ourselves would hang for ever.
            report_misuse(describe(kind_, name_, this) +
                          ": locked again by the thread that holds it (not recursive: it would "
                          "wait for itself for ever)");
            return true;  // the handler returned: leave the lock as it was
        }
        // Held: queue behind the owner. The hand-off grants one level (I3);
        // the caller restores `depth` once it owns the lock.
        if (enqueue_behind_owner(n, w, b)) return false;
    }
}

bool blocking_lock_base::enqueue_behind_owner(select_node& n, std::uintptr_t w,
                                              queue_backoff& b) noexcept {
    if (w & queue_lock_bit) {
        b.pause();  // an enqueuer, a hand-off or an unregister holds the queue
        return false;
    }
    // Take L from exactly `w`. acquire: see the queue as its last holder
    // left it. Fails if the owner, W or L changed since the caller read w.
    if (!word_.compare_exchange_weak(w, w | queue_lock_bit, std::memory_order_acquire,
                                     std::memory_order_relaxed))
        return false;
    // Under L the owner is fixed (I2): queue behind it, then publish W with
    // the release of L (one store), so the owner's unlock finds W and hands
    // off to us (I1: W only ever behind an owner).
    waiting_.push_back(n);
    unlock_queue(word_, w | waiters_bit);
    return true;
}

void blocking_lock_base::park_until_owner(const context& me) {
    park_until_recorded([&] { return cv_granted(me); }, kind_, name_, this);
}

void blocking_lock_base::unlock_slow() {
    const context& me = this_context();
    if (const context* o = owner(); o != &me) [[unlikely]] {
        // Every build: the fast path's CAS expected us, so this costs the
        // correct unlock nothing more.
        report_misuse(
            describe(kind_, name_, this) +
            (o ? ": unlocked by a thread that does not hold it" : ": unlocked while not held"));
        return;  // never release someone else's lock
    }
    if (count_ > 1) {
        --count_;
        return;
    }
    release_all();
}

void blocking_lock_base::release_all() noexcept {
    if (free_or_lock_queue(word_)) hand_off_locked();
}

void blocking_lock_base::hand_off_locked() noexcept {
    // Skip nodes whose waituntil was already won elsewhere (pop_claimed), so
    // the lock never goes to a thread that no longer wants it.
    select_node* n = waiting_.pop_claimed();
    if (!n) {
        unlock_queue(word_, 0);  // every queued clause had lost: free
        return;
    }
    context& next = n->waiter();
    count_ = 1;  // I3: before the store naming the new owner
    const std::uintptr_t handed = with_waiters(to_word(next), waiting_);
    if (n->is_plain()) {
        // One store: the new owner, W iff more wait, L released (I1, I4). A
        // plain waiter re-checks the word after park(), so from here on its
        // node may be gone and only `next` is touched.
        unlock_queue(word_, handed);
        unpark(next);
        return;
    }
    // A waituntil waiter: name it the owner *before* commit(), L still held.
    // A general-mode waiter that is awake runs the clause body as soon as
    // commit() counts the wake (its snapshot is then consistent), so the
    // word must already name it: else the body would run while the lock
    // still names the previous owner (owned_by_caller() false, and a
    // body-side unlock() would see a foreign word). commit() stays under L
    // because such a waiter may finish its statement (unregister_select
    // takes L) right after. release: count_ and the critical section are
    // published with the owner, and commit()'s acq_rel RMW orders this
    // store before the waiter's acquire of the counter.
    word_.store(handed | queue_lock_bit, std::memory_order_release);
    const bool owed = n->commit();
    unlock_queue(word_, handed);
    // A waituntil waiter re-checks its node's released() flag after park(),
    // so its node stays valid until unpark_waiter() sets that flag.
    if (owed) n->unpark_waiter();
}

std::size_t blocking_lock_base::waiters() const noexcept {
    const std::uintptr_t w = lock_queue(word_);
    const std::size_t n = waiting_.size();
    unlock_queue(word_, w);
    return n;
}

bool blocking_lock_base::register_select(select_node& n) noexcept {
    context& me = n.waiter();
    queue_backoff b;
    for (;;) {
        std::uintptr_t w = word_.load(std::memory_order_relaxed);
        if (w == 0) {
            // Free: hold L on the free lock so that winning the statement and
            // taking the lock are one step for everyone else (a lost clause
            // must not acquire anything).
            if (!word_.compare_exchange_weak(w, queue_lock_bit, std::memory_order_acquire,
                                             std::memory_order_relaxed))
                continue;
            if (n.try_claim()) {
                count_ = 1;
                unlock_queue(word_, to_word(me));
                return true;
            }
            unlock_queue(word_, 0);
            return false;
        }
        if (recursive_ && owner_of(w) == &me) {
            // Ours already: nobody else can change the owner.
            const bool won = n.try_claim();
            if (won) ++count_;
            return won;
        }
        // Held by someone else: queue behind the owner, even if another
        // clause already won the statement (unlock's pop_claimed drops such
        // nodes, and unregister removes them). A clause holds one level,
        // which is what the hand-off grants (I3).
        if (enqueue_behind_owner(n, w, b)) return false;
    }
}

bool blocking_lock_base::unregister_select(select_node& n) noexcept {
    const std::uintptr_t w = lock_queue(word_);
    if (waiting_.remove(n)) {
        unlock_queue(word_, with_waiters(w, waiting_));
        return false;
    }
    // Not queued: either it lost at registration, or it acquired the lock.
    // Release only what this node acquired (never another level).
    const bool acquired = !n.is_plain() && n.is_claimed() && owner_of(w) == &n.waiter();
    unlock_queue(word_, w);
    if (acquired) unlock();
    return false;
}

void blocking_lock_base::cv_release() {
    if constexpr (checked_build) {
        if (owner() != &this_context()) {
            report_misuse(describe(kind_, name_, this) +
                          ": condition_variable wait without holding the lock");
            return;
        }
    }
    release_all();
}

void blocking_lock_base::cv_enqueue_or_grant(select_node& plain_node) noexcept {
    const std::uintptr_t w = lock_queue(word_);
    if (w == 0) {
        // Free (only L, set by us): grant it to the waiter. I3: one level
        // before the store naming it (the waiter restores its depth); I4:
        // nothing of the node after it.
        context& c = plain_node.waiter();
        wake_guard g{c};  // the store naming it may let it go before the unpark
        count_ = 1;
        unlock_queue(word_, to_word(c));
        unpark(c);
        return;
    }
    // Held: queue the waiter; the owner's unlock hands the lock over and wakes it.
    waiting_.push_back(plain_node);
    unlock_queue(word_, w | waiters_bit);
}

void blocking_lock_base::cv_reacquire(std::size_t depth) {
    context& me = this_context();
    wait_scope rec(kind_, name_, this, &wait_info);
    select_node n{me};
    if (!acquire_or_enqueue(n, depth)) {
        park_until_owner(me);
        count_ = depth;  // I3: ours now; the hand-off granted one level
    }
}

}  // namespace troupe::detail
