#pragma once
/// Tunables of troupe-remote's progress engine, in one place:
/// `troupe::defaults::remote` (troupe's tunables convention is described in
/// troupe/defaults/core.hpp).
#include <chrono>
#include <cstddef>

namespace troupe::defaults::remote {

using namespace std::chrono_literals;

/// The spin-down window: how long after the last piece of work (a pass that
/// received, shipped or completed something, or a direct send) the rank keeps
/// polling MPI without sleeping (Margo's spin-down; docs/remote.md,
/// "Progress"). Asks awaiting replies and incomplete sends are polled for
/// without sleeping whatever their age.
inline constexpr std::chrono::nanoseconds idle_spin = 1ms;
/// Then the first sleep between network polls of an idle engine, doubling
/// after each empty poll ...
inline constexpr std::chrono::nanoseconds first_poll = 50us;
/// ... up to this (an idle rank then costs one MPI_Improbe per interval:
/// far below 1% of a core). Senders and replies to ship wake it at once.
inline constexpr std::chrono::nanoseconds max_poll = 8ms;
/// While idle processors or actor workers poll for it (core's idle poller),
/// the engine thread sleeps; they wake it when they stop. It also checks on
/// them after this long, doubling while they are still polling, up to
/// max_watch (a poller that went off to run a long behaviour without
/// sleeping leaves the network unpolled for at most that long).
inline constexpr std::chrono::nanoseconds first_watch = 100us;
inline constexpr std::chrono::nanoseconds max_watch = 1ms;
/// Other threads count as polling if one of their polls ran this recently.
inline constexpr std::chrono::nanoseconds poller_fresh = 20us;
/// Whether a sender posts its frame to MPI itself (MPI_Isend from the
/// sending thread, under the destination's outbox lock) when nothing waits in
/// that outbox, instead of handing it to the engine thread: one thread
/// hand-off fewer per hop. Under load the outbox is rarely empty and frames
/// are batched by the engine as before.
inline constexpr bool direct_send = true;
/// Batches in flight (MPI_Isend not yet complete) before the engine lets
/// outboxes grow instead of posting more sends.
inline constexpr std::size_t max_in_flight = 64;
/// Incoming batches received per pass before the engine turns to sending.
inline constexpr int receives_per_pass = 64;
/// Frame buffers (and cereal stream sets) each kernel thread keeps for
/// reuse by sends: one per send in progress on it, so a few cover user
/// threads whose encoders park. Buffers grown beyond `max_kept_frame_buffer`
/// bytes are freed instead of kept.
inline constexpr int spare_frame_buffers = 8;
inline constexpr std::size_t max_kept_frame_buffer = std::size_t{1} << 20;
/// Request cycles across ranks (docs/remote.md): while replies are awaited,
/// every `probe_interval` each published actor blocked inside a behaviour
/// on an ask sends one probe along its wait (at most `probes_per_sweep`
/// actors a sweep, in turn). A cycle is named after two probes agree: about
/// two intervals after it forms.
inline constexpr std::chrono::nanoseconds probe_interval = 50ms;
inline constexpr std::size_t probes_per_sweep = 256;
/// Back-off of threads waiting in a collective (stop, barrier).
inline constexpr std::chrono::nanoseconds collective_first_poll = 20us;
inline constexpr std::chrono::nanoseconds collective_max_poll = 2ms;

}  // namespace troupe::defaults::remote
