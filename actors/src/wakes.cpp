// Who wakes which worker: a send that saw parked workers wakes the owner
// of the receiver's mailbox (or, for an owner blocked in a behaviour or
// busy in a batch, another worker to take the envelope); a busy worker
// wakes a helper, rate-limited. The parking side is parking.cpp's; the
// protocol is in docs/actors.md ("Parking and waking").
#include <chrono>

#include "executor.hpp"

namespace troupe::detail {

bool executor::wake(std::size_t w) noexcept {
    return idle_.wake(workers[w]->idle_member(), idle_group::wake_as::plain);
}

void executor::wake_helper(std::size_t from) noexcept {
    using namespace std::chrono;
    const std::int64_t now =
        duration_cast<microseconds>(steady_clock::now().time_since_epoch()).count();
    std::int64_t last = last_helper_wake_.load(std::memory_order_relaxed);
    if (now - last < static_cast<std::int64_t>(defaults::actors::helper_wake_interval_us)) return;
    // One waker per interval (a lost CAS means another worker is doing it).
    if (!last_helper_wake_.compare_exchange_strong(last, now, std::memory_order_relaxed)) return;
    idle_.wake_another(workers[from]->idle_member());
}

void executor::wake_one_parked(std::size_t from) noexcept {
    idle_.wake_another(workers[from]->idle_member());
}

void wake_owner(mailbox& mb) noexcept {
    executor& ex = *mb.exec;
    const std::size_t o = mb.owner.load(std::memory_order_acquire);
    if (ex.wake(o) || !ex.user_threads) return;
    // A user-thread owner blocked in a behaviour cannot take the envelope:
    // wake another worker to steal it. seq_cst: the Dekker pair of
    // block_in_behaviour (blocked store, then its sleepers load) with our
    // caller's sleepers load (under mb's lock) and this load; see
    // worker::park_idle.
    if (ex.stealing && ex.workers[o]->blocked.load(std::memory_order_seq_cst))
        ex.wake_one_parked(o);
}

// An external send to a sleeping owner's range while another worker is
// awake between batches (looking for work) leaves the envelope to that
// worker, as Go's `wakep` wakes no P while an M spins: the looker adopts
// the owner's range (worker::adopt_dozing) on its next pass. Waking the
// owner instead gave a program driven by `main`'s sends (Savina's fjcreate,
// fjthrput) both workers awake beside `main`: three threads on two cores,
// with `main`, the one that limits the pace, running two thirds of the
// time. The looker wakes the owner itself when work piles up in the range
// (adopt_dozing), so parallel work still gets both cores.
//
// Why the envelope cannot be stranded: our caller appended it under the
// mailbox's lock, then the owner's `adoptable` exchange (seq_cst) came
// before this seq_cst load of the looker's sleep word. A looker that parks
// announces itself (seq_cst) before it reads every dozing worker's flag
// (worker::left_to_adopt, seq_cst): either we read it asleep here and do not
// count on it, or it reads the flag and does not sleep. A looker read awake
// here may start a batch after this load: the envelope then waits for that
// batch (a behaviour that blocks in a troupe primitive wakes a parked worker
// first, worker::flush_before_blocking).
// Not for user-thread workers (a looker may park its user thread inside a
// behaviour at any time), nor for a napping owner, whose wake is its end of
// the nap as before.
bool executor::looker_takes_over(std::size_t o) noexcept {
    worker& owner = *workers[o];
    // seq_cst: after the exchange; a napper sets `napping` after announcing.
    if (!idle_.asleep(owner.idle_member()) || owner.napping.load(std::memory_order_seq_cst))
        return false;
    for (auto& w : workers) {
        if (w->index == o) continue;
        // relaxed: a hint (0 between batches); a busy worker would leave
        // the envelope behind its batch.
        if (w->batch_began.load(std::memory_order_relaxed) != 0) continue;
        // (A worker's slot is never lent: lending is for processors.)
        if (!idle_.asleep(w->idle_member())) return true;
    }
    return false;
}

void executor::wake_for_external_send(mailbox& mb) noexcept {
    const std::size_t o = mb.owner.load(std::memory_order_acquire);
    if (stealing) {
        // Awake workers may take the envelope before the owner runs again
        // (worker::adopt_dozing; an exchange, as in after_send_to_sleeper;
        // seq_cst for looker_takes_over's Dekker pair).
        workers[o]->adoptable.exchange(true, std::memory_order_seq_cst);
        if (!user_threads && looker_takes_over(o)) return;
    }
    if (!wake(o) && user_threads && stealing &&
        workers[o]->blocked.load(std::memory_order_seq_cst)) {
        wake_one_parked(o);  // as in wake_owner: the owner is blocked in a behaviour
        return;
    }
    // The owner is busy in a batch (relaxed: a hint; 0 between batches)
    // while a worker sleeps: the envelope would wait behind that batch.
    // Grouped placement puts up to a run of actors created together on one
    // worker, so independent actors created by main would run one after
    // another on it while the others sleep. Wake one to steal (rate-limited;
    // once it sees a batch running, it parks with a timeout and keeps looking)
    // -- unless a helper could not take the envelope anyway: it has already
    // been gulped (pending 0: a later value than our own store under the
    // lock), or its mailbox is in a batch (being_processed: nobody else may
    // gulp it until that batch ends, and then the owner, awake since wake()
    // failed, scans it). Relaxed loads: a stale value costs one wake too many.
    if (stealing && workers[o]->batch_began.load(std::memory_order_relaxed) != 0 &&
        mb.pending.load(std::memory_order_relaxed) != 0 &&
        !mb.being_processed.load(std::memory_order_relaxed))
        wake_helper(o);
}

}  // namespace troupe::detail
