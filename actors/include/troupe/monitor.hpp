#pragma once
/// Monitors and links: actors that learn how other actors ended.
///
///     struct worker : troupe::actor { ... };
///     struct boss : troupe::actor {
///         void receive(start&) { troupe::monitor(*this, *w); }   // w: a worker
///         void receive(troupe::down& d) {                        // exactly once
///             if (d.reason.failure()) std::puts(d.reason.to_string().c_str());
///         }
///     };
///
/// - `monitor(watcher, watched)`: when `watched` ends, `watcher` receives a
///   `troupe::down{who, reason}` message, exactly once per monitor; at once
///   if `watched` had already ended. `demonitor` takes it back.
/// - `link(a, b)`: when one of them fails (a behaviour threw, a link killed
///   it, its system stopped under it, its rank was lost), the other receives
///   an exit signal and, by default, finishes too (Erlang's links). An
///   actor that called `trap_exits(self)` receives the signal as an
///   ordinary `troupe::exit_msg{who, reason}` instead (also for normal
///   ends). Links are symmetric and die with either actor.
///
/// `who` identifies the actor that ended; it is only an identity (compare
/// it; do not dereference it: a `Delete`d actor is gone).
///
/// Downs and exit signals are messages: like any message, one queued for an
/// actor that frees itself (returns Delete/Destroy) is undefined. So an
/// actor that watches or is linked, and may still be sent a down or an exit
/// (a link cycle sends one per failing peer), should end with `Finished`
/// and be freed by its owner once nothing can be sent to it any more
/// (after its system stopped: examples/supervisor.cpp keeps its ended
/// workers until then). An exit signal that kills ends the actor with
/// `Finished` for this reason. A watched actor that is not itself watching
/// or linked may free itself: nothing is sent to it.
///
/// Threads: every function here may be called from any thread (a
/// behaviour, main, a user thread), but a watcher (or a linked actor) must
/// not end concurrently with the call: call it from the actor's own
/// behaviour, or before the actor can end. Their cost: one process-wide
/// lock and, the first time an actor is watched or linked, one record
/// (about 100 bytes) that lives until the actor is destroyed. An actor
/// nobody watches pays one compare-and-swap when it ends with Finished or
/// Destroy (a monitor placed later finds its tombstone), and one load when
/// it ends with Delete (its storage goes at once, so nobody may monitor it
/// from then on).
#include <cstdint>
#include <string>

#include "troupe/actor.hpp"

namespace troupe {

/// How an actor ended.
struct exit_reason {
    enum class kind : std::uint8_t {
        /// A behaviour returned Finished, Delete or Destroy.
        finished,
        /// It received a poison pill (finished_msg, delete_msg, destroy_msg).
        poison_pill,
        /// A behaviour threw and the behaviour-exception handler ended it;
        /// `what` holds the exception's what().
        threw,
        /// An exit signal from a linked actor that failed ended it (it did
        /// not trap exits); `what` says which actor and why.
        linked,
        /// Its actor system stopped (stop_for gave up) while it was alive,
        /// or it belonged to a stopped system when it was monitored.
        system_stopped,
        /// The process (rank) it lives in was lost: delivered by the remote
        /// module (troupe-remote) for remote actors; `what` is "rank N lost".
        rank_lost,
        /// It was destroyed before a behaviour ended it (a program error,
        /// reported in checked builds).
        destroyed,
    };
    kind why = kind::finished;
    /// The exception's what() (threw), the chain (linked), "rank N lost".
    std::string what;

    /// Whether this end propagates over links: threw, linked,
    /// system_stopped, rank_lost and destroyed (a normal end, finished or
    /// a poison pill, does not kill linked actors).
    bool failure() const noexcept { return why != kind::finished && why != kind::poison_pill; }
    /// "threw: std::runtime_error: overdrawn", "finished", ...
    std::string to_string() const;
};

/// The name of a reason kind ("finished", "poison pill", "threw", ...).
const char* to_string(exit_reason::kind k) noexcept;

/// Delivered to a watcher when an actor it monitors ended.
struct down : message {
    const actor* who = nullptr;
    exit_reason reason;
};

/// Delivered to an actor that traps exits when an actor linked to it ended.
struct exit_msg : message {
    const actor* who = nullptr;
    exit_reason reason;
};

namespace detail {
struct life_entry {
    actor* other;
    dispatch_fn fn;
    const dispatch_names* names;
    /// Called in place (`fn(other, m)` on the thread that fires it, with no
    /// lock held but in a no-memory fallback) instead of sent: watchers that
    /// no system runs (troupe-remote's relays, which ship the down to the
    /// watcher's rank). `fn` must not block or throw, and owns the message.
    bool direct = false;
};
bool add_monitor(actor& watcher, actor& watched, const life_entry& e);
bool remove_monitor(actor& watcher, actor& watched) noexcept;
bool add_link(actor& a, actor& b, const life_entry& to_a, const life_entry& to_b);
bool remove_link(actor& a, actor& b) noexcept;
void set_trap_exits(actor& a, bool on);
bool traps_exits(const actor& a) noexcept;
/// Ends `a`, a stand-in that no system runs (troupe-remote's for an actor
/// on another rank), for its monitors with `why`: as life_ended for an
/// actor ending with Finished, at most once (a second end does nothing).
/// Downs go straight to the watchers' mailboxes (never staged in the
/// calling thread's worker). Nothrow.
void life_end_as(actor& a, exit_reason why) noexcept;
/// Not trapping: the end this exit signal gives the receiving actor (its
/// exit action for a failure, Nodelete for a normal end). Never throws.
allocation exit_received(actor& a, exit_msg& e) noexcept;

/// The trampoline of an exit signal to an A: trapping actors receive it,
/// others finish on a failure (their exit action) and ignore a normal end.
template <class A>
allocation exit_dispatch(actor* a, message& m) {
    auto& e = static_cast<exit_msg&>(m);
    if (!a) [[unlikely]] {
        delete &e;
        return Nodelete;
    }
    if constexpr (member_receiver<A, exit_msg> || free_receiver<A, exit_msg>) {
        if (traps_exits(*a)) return dispatch<A, exit_msg>(a, m);
    }
    const allocation how = exit_received(*a, e);
    delete &e;
    return how;
}
}  // namespace detail

/// Monitors `watched` for `watcher`: when `watched` ends, `watcher`
/// receives one `down` (allocated by the runtime, freed after the
/// receive); at once if `watched` has already ended (with the reason it
/// ended with, or `system_stopped` if its system has stopped). Each call
/// adds one monitor (monitoring twice gives two downs). Monitoring oneself
/// is allowed and never fires (an actor cannot receive after it ended).
/// Returns false (nothing added) if `watcher` has already ended. Throws
/// std::bad_alloc (nothing added). A `down` to a watcher that has finished
/// by then is dropped.
template <class W>
requires std::derived_from<W, actor>
bool monitor(W& watcher, actor& watched) {
    static_assert(detail::member_receiver<W, down> || detail::free_receiver<W, down>,
                  "troupe: a watcher needs a `receive(troupe::down&)`");
    return detail::add_monitor(
        watcher, watched, {&watcher, &detail::dispatch<W, down>, &detail::quiet_names_of<W, down>});
}

/// Removes every monitor `watcher` has on `watched`; a `down` already sent
/// is still delivered. Returns whether one was removed. Nothrow.
inline bool demonitor(actor& watcher, actor& watched) noexcept {
    return detail::remove_monitor(watcher, watched);
}

/// Links `a` and `b` (see above). If one of them has already ended, the
/// other receives its exit signal at once (so a link to an actor that
/// failed kills, as in Erlang). Linking twice is one link; linking an
/// actor to itself does nothing. Returns false if nothing was linked.
/// Throws std::bad_alloc (nothing linked).
template <class A, class B>
requires std::derived_from<A, actor> && std::derived_from<B, actor>
bool link(A& a, B& b) {
    return detail::add_link(a, b,
                            {&a, &detail::exit_dispatch<A>, &detail::quiet_names_of<A, exit_msg>},
                            {&b, &detail::exit_dispatch<B>, &detail::quiet_names_of<B, exit_msg>});
}

/// Removes the link between `a` and `b`; returns whether there was one.
inline bool unlink(actor& a, actor& b) noexcept { return detail::remove_link(a, b); }

/// Makes `self` receive exit signals as `exit_msg` messages (on = true)
/// instead of finishing with its linked actors. Throws std::bad_alloc.
template <class A>
requires std::derived_from<A, actor>
void trap_exits(A& self, bool on = true) {
    static_assert(detail::member_receiver<A, exit_msg> || detail::free_receiver<A, exit_msg>,
                  "troupe: an actor trapping exits needs a `receive(troupe::exit_msg&)`");
    detail::set_trap_exits(self, on);
}

}  // namespace troupe
