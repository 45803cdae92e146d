#pragma once
// Internal: what keeps one actor from running, read the way the hang
// reports read workers (src/hang_report.cpp): for modules above the actors
// that follow waits beyond one system (troupe-remote names request cycles
// across ranks with it). Every fact is read while the blocked worker's wait
// record is pinned; the identities below are for comparison only.
#include <cstdint>
#include <string>

namespace troupe {
class actor;
}

namespace troupe::detail {

struct mailbox;

/// A behaviour blocked inside a recorded troupe wait, as one look saw it.
struct blocked_behaviour {
    // The wait: its record and sequence identify this wait of this worker
    // (another wait, even at the same place, has another sequence). Never
    // dereferenced by callers.
    const void* record = nullptr;
    std::uint32_t seq = 0;
    // The actor whose behaviour blocks (compare only).
    const void* running = nullptr;
    // The actor looked at: "actor 'b' (B)", or "actor B (0x...)" without a
    // name. Empty when looked up through a mailbox (blocked_behaviour_in).
    std::string self;
    // The blocked behaviour's actor, as self (differs when the actor looked
    // at is queued behind it in its worker's batch).
    std::string who;
    // "(worker 0, in its receive of 'go')".
    std::string in;
    // What it waits on: kind, name, address ("future (0x...)").
    std::string wait;
    // The waited-on resource's address (compare only): for a future, the
    // future; a remote ask's reply future is found by it.
    const void* resource = nullptr;
    bool on_future = false;  // the wait is a future's
    // The wait is on the reply to the behaviour's latest local ask (not yet
    // available): the actor asked (compare only), its mailbox, its name as
    // read when it was asked, the request's type.
    bool local_ask = false;
    bool ask_deadline = false;
    const void* ask_target = nullptr;
    const mailbox* ask_box = nullptr;
    std::string asked;        // "actor 'c' (C)"
    std::string ask_message;  // "'ping'"
};

/// Looks for the blocked behaviour that keeps actor `a` from running: the
/// one running `a` in a recorded wait, or the one whose worker holds the
/// batch of `a`'s mailbox (`a` then waits behind it). False if none (`a`
/// is idle, runs without being in a troupe wait, or waits in a mailbox no
/// blocked worker holds). `a` must be alive and its system running, as for
/// a send to it. Pins workers' waits briefly; never blocks. Throws
/// std::bad_alloc.
bool blocked_behaviour_of(const actor& a, blocked_behaviour& out);

/// As blocked_behaviour_of, for an actor known only by its mailbox (a local
/// ask's target, which may have ended and is not read): the blocked
/// behaviour whose worker holds `box`'s batch. `box` must belong to a
/// running system. `self` is left empty.
bool blocked_behaviour_in(const mailbox& box, blocked_behaviour& out);

/// Whether two looks saw the same wait (the same record and sequence: the
/// worker stayed in that wait between them).
inline bool same_wait(const blocked_behaviour& x, const blocked_behaviour& y) noexcept {
    return x.record == y.record && x.seq == y.seq;
}

}  // namespace troupe::detail
