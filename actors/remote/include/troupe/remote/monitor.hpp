#pragma once
/// Monitors of actors on other ranks.
///
///     struct boss : troupe::actor {
///         const troupe::actor* w = nullptr;
///         // start carries a troupe::remote::remote_ref<worker> named worker
///         void receive(start& s) { w = troupe::remote::monitor(*this, s.worker); }
///         void receive(troupe::down& d) {  // exactly once per monitor
///             // e.g. "rank lost: rank 1 lost", "threw: ..."
///             if (d.who == w) std::puts(d.reason.to_string().c_str());
///         }
///     };
///
/// `troupe::remote::monitor(watcher, ref)` is troupe::monitor for an actor
/// published on another rank (or this one): the watcher receives one
/// `troupe::down{who, reason}` when that actor ends, with the reason it
/// ended with there (finished, poison pill, threw with its exception's type
/// and what(), system stopped, destroyed), or `rank_lost` with what()
/// "rank N lost" when its rank ends first (its world is destroyed: it
/// returned from main, early or late) or when this rank's world ends
/// before the down came. At once if that is known already.
///
/// How: the watching rank keeps one stand-in per remote actor it monitors
/// (an actor no system runs; `who` is its address, the same for every
/// monitor of that actor from this rank, valid as an identity for the
/// world's life) and places the local monitor on it; the first monitor of
/// an actor ships one small frame to its rank, which monitors the actor
/// locally and ships its end back. Costs: about 200 bytes per remote actor
/// ever monitored on the watching rank, until its world ends; on the
/// watched rank one relay (about 200 bytes) from the watch until the actor
/// ends. A watcher sees the messages the remote actor sent it before it
/// ended before its down (per-pair FIFO).
///
/// Threads: as troupe::monitor (any thread; the watcher must not end
/// concurrently with the call). The downs are sent by whichever thread
/// runs the remote progress pass, straight to the watcher's mailbox.
#include <concepts>

#include "troupe/monitor.hpp"
#include "troupe/remote/ref.hpp"

namespace troupe::remote {

/// Monitors the actor `watched` refers to for `watcher` (see above).
/// Returns the `who` its down carries (nullptr if `watcher` has already
/// ended: nothing added). Each call adds one monitor (monitoring twice
/// gives two downs). Throws std::logic_error (invalid reference),
/// std::out_of_range (bad rank), std::bad_alloc (nothing added).
template <class W, class A>
requires std::derived_from<W, actor>
const actor* monitor(W& watcher, const remote_ref<A>& watched) {
    static_assert(
        troupe::detail::member_receiver<W, down> || troupe::detail::free_receiver<W, down>,
        "troupe: a watcher needs a `receive(troupe::down&)`");
    actor& s = detail::watch_remote(watched.engine(), watched.rank(), watched.id());
    if (!troupe::detail::add_monitor(watcher, s,
                                     {&watcher, &troupe::detail::dispatch<W, down>,
                                      &troupe::detail::quiet_names_of<W, down>}))
        return nullptr;
    return &s;
}

/// Removes every monitor `watcher` has on the actor `watched` refers to; a
/// down already sent is still delivered, one arriving later is dropped.
/// Returns whether one was removed. Nothrow.
template <class A>
bool demonitor(actor& watcher, const remote_ref<A>& watched) noexcept {
    if (!watched.valid()) return false;
    actor* s = detail::remote_stand_in(watched.engine(), watched.rank(), watched.id());
    return s && troupe::detail::remove_monitor(watcher, *s);
}

}  // namespace troupe::remote
