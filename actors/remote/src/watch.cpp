// Monitors across ranks. The watching rank keeps a stand-in per remote actor
// it monitors (watches.hpp) and ships one watch frame for it to the actor's
// rank; that rank places a local monitor on the actor for a relay (an actor
// no system runs, whose monitor entry is called in place: relay_down), and
// when the actor ends the relay ships a down frame with the reason back,
// which ends the stand-in: the local monitors on it fire. A rank that ends
// ends its stand-ins (rank_end.cpp); so does this rank's world ending.
//
// Invariants:
//   - The watch frame of a stand-in is shipped once (its `watching` flag),
//     after the stand-in is in the table (the Dekker pair with a goodbye,
//     watches.hpp).
//   - A down frame is shipped after everything the watched actor's rank
//     sent to the watcher's rank before the actor ended (the relay fires
//     on the ending thread, after the actor's last behaviour; per-pair
//     FIFO), so a watcher sees the actor's messages before its down.
//   - A relay fires at most once (one monitor entry); it is freed after it
//     fired (moved from relays_ to fired_ under relays_mutex_, freed by the
//     next watch frame or ~engine), or by ~engine, which first waits out
//     relay_down calls in progress (engine.cpp).
#include <string>

#include "engine.hpp"

namespace troupe::remote::detail {

troupe::actor& watch_remote(engine& e, int rank, std::uint64_t id) {
    return e.watch_remote(rank, id);
}
troupe::actor* remote_stand_in(engine& e, int rank, std::uint64_t id) noexcept {
    return e.stand_in(rank, id);
}

troupe::actor& engine::watch_remote(int to, std::uint64_t id) {
    if (to < 0 || to >= size)
        throw std::out_of_range("troupe::remote: rank " + std::to_string(to) +
                                " does not exist (the job has " + std::to_string(size) + " ranks)");
    watch_table::stand_in& s = watches_.get(to, id);
    if (s.watching.exchange(true, std::memory_order_acq_rel)) return s;
    try {
        frame_buffer fb;  // this call's own (the caller may be a user thread)
        byte_buffer& b = fb.get();
        begin_frame(b, frame_kind::watch, "", 0, id, s.token);
        end_frame(b);
        ship(to, b);
    } catch (const rank_lost&) {
        watch_table::end(s, watch_table::lost(to));  // it has ended: at once
    } catch (...) {
        s.watching.store(false, std::memory_order_release);  // a later monitor retries
        throw;
    }
    return s;
}

void engine::handle_watch(const parsed_frame& f, byte_reader& payload, int from) {
    if (payload.left() != 0) {
        report(from, "",
               "troupe::remote: rank " + std::to_string(rank) +
                   " received a malformed watch from rank " + std::to_string(from) +
                   ": it carries a payload");
        return;
    }
    // This rank said goodbye: the watcher's rank ends the stand-in when the
    // goodbye, shipped before anything we could answer, reaches it.
    if (ending_.load(std::memory_order_seq_cst)) return;
    free_fired_relays();
    std::string bad;
    exit_reason gone;
    bool is_gone = false;
    {
        // Held so that the actor is not destroyed while the monitor is
        // placed (~actor's unpublish waits for it).
        auto held = names_.hold();
        name_table::published* p = names_.find(f.h.target);
        if (!p) {
            bad = "troupe::remote: rank " + std::to_string(rank) + " received a watch from rank " +
                  std::to_string(from) + " for actor id " + std::to_string(f.h.target) +
                  ", which it never published";
        } else if (!p->a) {
            // Destroyed: how it ended is not known any more.
            is_gone = true;
            gone.why = exit_reason::kind::destroyed;
            gone.what = "actor \"" + p->name + "\" (type " + p->type + ") on rank " +
                        std::to_string(rank) + " was destroyed before this monitor reached it";
        } else {
            try {
                auto r = std::make_unique<relay>(from, f.h.token);
                {
                    std::lock_guard g{relays_mutex_};
                    relays_.insert(r.get());
                }
                try {
                    // Fires at once (relay_down) if the actor has ended.
                    troupe::detail::add_monitor(
                        *r, *p->a,
                        {r.get(), &relay_down, &troupe::detail::quiet_names_of<relay, troupe::down>,
                         true});
                } catch (...) {
                    std::lock_guard g{relays_mutex_};
                    relays_.erase(r.get());
                    throw;
                }
                (void)r.release();  // in relays_ (or fired_) now
            } catch (const std::bad_alloc&) {
                // No memory for the relay or the monitor: the watcher is not
                // told (as a local monitor that could not be placed throws).
                bad = "troupe::remote: rank " + std::to_string(rank) +
                      " has no memory to monitor actor \"" + p->name + "\" for rank " +
                      std::to_string(from) + "; that monitor will not fire";
            }
        }
    }
    if (is_gone) {
        relay r{from, f.h.token};  // not listed: relay_fired only ships
        relay_fired(r, gone);
        return;
    }
    if (!bad.empty()) report(from, "watch", bad);
}

void engine::relay_fired(relay& r, const exit_reason& why) noexcept {
    try {
        frame_buffer fb;  // any thread: the one ending the watched actor
        byte_buffer& b = fb.get();
        begin_frame(b, frame_kind::down, "", 0, r.token, 0);
        byte_writer w{b};
        put(w, static_cast<std::uint8_t>(why.why));
        put(w, why.what);
        end_frame(b);
        ship(r.to, b);
    } catch (...) {
        // The watcher's rank has ended (its stand-ins ended with it), or no
        // memory for the frame: that watcher is not told.
    }
    std::lock_guard g{relays_mutex_};
    auto it = relays_.find(&r);
    if (it == relays_.end()) return;  // not a listed relay (a gone actor's answer)
    try {
        fired_.push_back(&r);
        relays_.erase(it);
    } catch (...) {
        // No memory to list it: it stays in relays_, freed by ~engine.
    }
}

void engine::free_fired_relays() noexcept {
    std::vector<relay*> v;
    {
        std::lock_guard g{relays_mutex_};
        v.swap(fired_);
    }
    // A fired relay watches nothing any more: freeing it touches no actor.
    for (relay* r : v) delete r;
}

void engine::handle_down(const parsed_frame& f, byte_reader& payload, int from) {
    std::uint8_t kind = 0;
    exit_reason why;
    try {
        get(payload, kind);
        get(payload, why.what);
        if (payload.left() != 0)
            throw truncated_payload("down carries " + std::to_string(payload.left()) +
                                    " byte(s) more than its reason");
        if (kind > static_cast<std::uint8_t>(exit_reason::kind::destroyed))
            throw truncated_payload("unknown exit reason kind " + std::to_string(kind));
    } catch (const std::exception& e) {
        report_malformed(from, "down", e);
        return;
    }
    why.why = static_cast<exit_reason::kind>(kind);
    if (!watches_.end(f.h.target, std::move(why)))
        report(from, "down",
               "troupe::remote: rank " + std::to_string(rank) + " received a down from rank " +
                   std::to_string(from) + " for monitor " + std::to_string(f.h.target) +
                   ", which it never placed");
}

}  // namespace troupe::remote::detail
