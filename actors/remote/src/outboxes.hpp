#pragma once
// Internal: the send side. One outbox per destination rank, the direct
// sends posted by senders themselves, and the batches in flight. The only
// part besides the receive step (inbound.cpp) that calls MPI.
//
// Invariants:
//   - Per-pair FIFO: every MPI send to a rank (a sender's direct send or
//     the engine's batch) is posted under that rank's outbox lock, in the
//     order the frames were shipped; a sender posts directly only while
//     nothing waits in that outbox, and MPI does not let a message overtake
//     one posted before it (same source, destination, communicator, tag).
//   - One batch is one MPI message of at most batch_limit bytes: a frame
//     that would take the unsent batch past it is refused (ship_or_full
//     returns false, ship throws), never split or dropped.
//   - An outbox lock is held for an append, a swap or one MPI_Isend or
//     MPI_Test, never across a park or a user-thread switch (senders take
//     it with lock_no_switch), so spinning on it always ends.
//   - Counted before visible: a batch is counted sent (traffic) before its
//     outbox reads empty or its direct send is posted, so a termination
//     round that could see it received also sees it sent.
//   - A send buffer is MPI's from MPI_Isend until its request completes:
//     in flight it stays in flying_ (the engine's) or direct_buf (the
//     outbox's, reused only after MPI_Test says done); a send to a rank
//     that ended and will never receive is freed from MPI's side
//     (MPI_Request_free) and its buffer leaked on purpose.
//   - Token holder only: flush, complete_sends and complete_direct run in
//     a progress pass (one at a time); flying_count_ and direct_pending_
//     mirror their state for other threads.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "peers.hpp"
#include "progress.hpp"
#include "troupe/remote/detail/wire.hpp"
#include "troupe/spinlock.hpp"

namespace troupe::remote::detail {

/// Tag of batches on the engine's communicator.
inline constexpr int data_tag = 1;

/// Counters for termination (termination.cpp) and troupe::dump: batches
/// sent (counted when handed to MPI or looped back) and received (counted
/// when parsed and delivered), and frames.
struct traffic_counts {
    std::atomic<std::uint64_t> batches_sent{0}, batches_received{0};
    std::atomic<std::uint64_t> frames_sent{0}, frames_received{0};
};

class outboxes {
public:
    /// Loops a batch this rank sent itself back into its receive side.
    using loop_back_fn = void (*)(void* arg, const char* p, std::size_t n);

    outboxes(int rank, int size, MPI_Comm comm, const peer_states& peers, engine_waker& waker,
             traffic_counts& traffic, loop_back_fn loop_back, void* loop_back_arg);
    outboxes(const outboxes&) = delete;
    /// After the engine thread stopped, before the communicator is freed:
    /// waits for direct sends to live ranks, lets MPI forget the sends to
    /// ended ranks.
    void finish() noexcept;

    // ---- any thread
    /// Queues `frame` for rank `to` or posts it directly. Throws
    /// std::length_error if it would take the unsent batch past the batch
    /// limit (strong: nothing queued), std::out_of_range for a bad rank,
    /// rank_lost if `to` has ended, std::bad_alloc.
    void ship(int to, const byte_buffer& frame);
    /// As ship, but returns false (nothing queued; `queued`: the bytes
    /// waiting) instead of throwing when the batch is full.
    bool ship_or_full(int to, const byte_buffer& frame, std::size_t& queued);
    /// Sends `n` raw bytes to `to` as one batch, blocking (tests).
    void send_raw(int to, const void* bytes, std::size_t n);
    /// Whether some outbox to a live rank holds frames or a send to one is
    /// still in flight.
    bool busy() noexcept;
    /// Whether some outbox holds frames (under the outbox locks: the
    /// engine's recheck before it parks).
    bool any_queued() noexcept;
    /// Whether a send is incomplete (the progress policy's hot test; hints).
    bool sends_pending() const noexcept {
        return direct_pending_.load(std::memory_order_relaxed) != 0 ||
               flying_count_.load(std::memory_order_relaxed) != 0;
    }
    void set_batch_limit(std::size_t n) noexcept {
        batch_limit_.store(n ? n : max_frame_size, std::memory_order_relaxed);
    }

    // ---- token holder only
    /// Posts every non-empty outbox as one batch (a rank's own through
    /// loop_back, without MPI); true if it posted any.
    bool flush();
    /// Tests the batches in flight; true if one completed.
    bool complete_sends();
    /// Tests the direct sends still in flight; true if one completed.
    bool complete_direct();
    bool flying() const noexcept { return !flying_.empty(); }
    bool direct_pending() const noexcept {
        return direct_pending_.load(std::memory_order_relaxed) != 0;
    }

private:
    struct alignas(64) outbox {
        troupe::spinlock lock{"troupe::remote outbox"};
        byte_buffer buf;
        std::uint64_t frames = 0;  // frames in buf (under lock)
        // Bytes in buf, stored under lock; read without it by the engine as
        // a hint (a stale zero is caught by the park recheck under the lock).
        std::atomic<std::size_t> bytes{0};
        // The direct path: its one send in flight and the buffer it reads
        // (under lock).
        MPI_Request direct_req = MPI_REQUEST_NULL;
        byte_buffer direct_buf;
        // Whether direct_req is still in flight: stored under lock, read
        // without it by the engine (a hint) and by busy().
        std::atomic<bool> direct_busy{false};
    };
    struct in_flight {
        MPI_Request req;
        byte_buffer buf;
        int to = -1;
    };
    bool post_direct(outbox& o, int to, const byte_buffer& frame);
    byte_buffer take_spare();

    const int rank_, size_;
    const MPI_Comm comm_;
    const peer_states& peers_;
    engine_waker& waker_;
    traffic_counts& traffic_;
    const loop_back_fn loop_back_;
    void* const loop_back_arg_;
    std::unique_ptr<outbox[]> out_;
    // Direct sends not yet complete (any outbox).
    std::atomic<int> direct_pending_{0};
    // Token holder only.
    std::vector<in_flight> flying_;
    std::atomic<std::size_t> flying_count_{0};  // flying_ to live ranks, for other threads
    std::vector<byte_buffer> spares_;
    // The most bytes one batch may hold: max_frame_size, lowered by tests.
    std::atomic<std::size_t> batch_limit_{max_frame_size};
    std::mutex raw_lock_;
};

}  // namespace troupe::remote::detail
