#pragma once
/// Tunables of troupe-remote's progress engine, in one place:
/// `troupe::defaults::remote` (troupe's tunables convention is described in
/// troupe/defaults.hpp). Not an inline namespace: its `idle_spin` is not
/// core's `troupe::defaults::idle_spin`.
#include <chrono>
#include <cstddef>

namespace troupe::defaults::remote {

using namespace std::chrono_literals;

/// How long the engine keeps polling (MPI and its outboxes) after its last piece of work before it
/// sleeps: keeps request/reply latency low under traffic without burning a core when idle.
inline constexpr std::chrono::nanoseconds idle_spin = 200us;
/// Then the first sleep between network polls of an idle engine ...
inline constexpr std::chrono::nanoseconds first_poll = 50us;
/// ... kept for this long after the last piece of work (traffic in a lull:
/// a reply from another rank is likely to come) ...
inline constexpr std::chrono::nanoseconds warm_period = 20ms;
/// ... then doubling after each empty poll up to this (an idle rank then costs
/// one MPI_Improbe per interval: far below 1% of a core).
inline constexpr std::chrono::nanoseconds max_poll = 8ms;
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
/// Back-off of threads waiting in a collective (stop, barrier).
inline constexpr std::chrono::nanoseconds collective_first_poll = 20us;
inline constexpr std::chrono::nanoseconds collective_max_poll = 2ms;

}  // namespace troupe::defaults::remote
