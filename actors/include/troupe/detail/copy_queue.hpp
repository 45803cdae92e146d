#pragma once
// Envelopes and the copy queue that stores them (see docs/actors.md).
//
// An envelope is (actor, message, trampoline): everything a worker needs to
// run one receive. Sends copy envelopes into a growable array; a worker
// empties a whole array at once (a gulp), so pushes and pops are amortised
// O(1) with no per-message allocation once the array has grown to the
// workload's size.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

#include "troupe/allocation.hpp"
#include "troupe/config.hpp"
#include "troupe/defaults/actors.hpp"

namespace troupe {
class actor;
class message;
}  // namespace troupe

namespace troupe::detail {

/// Calls the statically chosen receive of the derived actor/message types;
/// with a null actor (the receiver has finished) drops the message instead.
using dispatch_fn = allocation (*)(actor*, message&);

/// Type names for reports (one static object per actor/message pair).
struct dispatch_names {
    std::string_view actor;
    std::string_view message;
    /// A drop to a finished actor is expected, not a misuse (timer
    /// messages, downs and exit signals): checked builds do not report it.
    bool quiet_drop = false;
};

struct envelope {
    actor* receiver;
    message* msg;
    dispatch_fn fn;
#if defined(TROUPE_CHECKED)
    const dispatch_names* names;
#endif
};

/// Envelope arrays of at least this many bytes are anonymous mappings,
/// grown in place or moved by mremap (no copy, no second page fault);
/// smaller ones come from operator new. Above `copy_queue_retain_max`, so
/// only a burst's arrays are mapped.
inline constexpr std::size_t mapped_min_bytes = std::size_t{2} << 20;

/// An array of `n` envelopes (uninitialised), or nullptr if the memory is
/// not there. Every envelope array of copy queues and burst caches comes
/// from here and goes back through release_envelopes with the same `n`.
envelope* allocate_envelopes(std::uint32_t n) noexcept;
/// Frees an array allocate_envelopes(n) returned (nullptr: nothing).
void release_envelopes(envelope* buf, std::uint32_t n) noexcept;

/// Arrays of envelopes larger than `copy_queue_retain_max` that a worker
/// keeps for the next burst (one per worker, used by its thread only): a
/// queue cut back after a burst gives its array here, a queue growing past
/// the retained maximum on that worker takes one from here first. Holds at
/// most `burst_cache_bytes` (and 32 arrays); what does not fit is freed.
class burst_cache {
public:
    burst_cache() = default;
    ~burst_cache();
    burst_cache(const burst_cache&) = delete;
    burst_cache& operator=(const burst_cache&) = delete;

    /// Keeps `buf` (capacity `n` envelopes) or frees it. Never throws.
    void give(envelope* buf, std::uint32_t n) noexcept;
    /// The largest kept array, if it holds at least `n` envelopes (its
    /// capacity in `got`), else nullptr. Largest: a queue growing past the
    /// retained maximum is usually the start of a burst like the last one,
    /// so it jumps to that size in one copy instead of doubling through
    /// the cached sizes.
    envelope* take(std::uint32_t n, std::uint32_t& got) noexcept;
    /// Bytes held now (for tests and statistics).
    std::size_t bytes() const noexcept { return bytes_; }

private:
    static constexpr std::size_t max_arrays = 32;
    struct entry {
        envelope* buf;
        std::uint32_t n;
    };
    entry arrays_[max_arrays]{};
    std::size_t count_ = 0;
    std::size_t bytes_ = 0;
};

/// The burst cache of the worker running on this thread, or nullptr (an
/// outside thread: arrays come from and go to the allocator).
burst_cache* current_burst_cache() noexcept;

/// A growable array used in gulp fashion: pushes append; once consumption
/// starts the array is drained completely before the next push, after
/// which both indexes reset to zero. Not synchronised: a mailbox guards it
/// with its lock while it accepts sends; a worker owns it while draining.
class copy_queue {
public:
    explicit copy_queue(std::uint32_t capacity = defaults::actors::copy_queue_capacity);
    ~copy_queue();
    copy_queue(const copy_queue&) = delete;
    copy_queue& operator=(const copy_queue&) = delete;

    /// Appends `e`; doubles the array when full (amortised O(1)). A push
    /// into a drained queue restarts at index 0 (a worker appending to the
    /// batch it is draining reuses the front of the array).
    void push(const envelope& e) {
        if (next_ == count_) next_ = count_ = 0;
        if (count_ == capacity_) [[unlikely]]
            grow();
        buf_[count_++] = e;
    }

    /// Appends `n` envelopes in order.
    void append(const envelope* e, std::uint32_t n);

    /// Exchanges the contents and arrays of two queues (no copy, no
    /// allocation).
    void swap(copy_queue& other) noexcept {
        std::swap(buf_, other.buf_);
        std::swap(count_, other.count_);
        std::swap(next_, other.next_);
        std::swap(capacity_, other.capacity_);
        std::swap(window_peak_, other.window_peak_);
        std::swap(window_gulps_, other.window_gulps_);
    }

    /// Forgets the contents (a staging buffer after its flush).
    void clear() noexcept { next_ = count_ = 0; }

    /// Makes room for `n` envelopes and marks them used (the caller fills
    /// data()[0..n) of an empty queue).
    void reserve(std::uint32_t n) {
        while (capacity_ < n) grow();
        count_ = n;
        next_ = 0;
    }
    envelope* data() noexcept { return buf_; }

    /// The next envelope in FIFO order, or nullptr when drained (then the
    /// queue is reset to empty and ready for pushes again).
    envelope* pop() noexcept {
        if (next_ == count_) {
            next_ = count_ = 0;
            return nullptr;
        }
        return &buf_[next_++];
    }

    /// The envelope `k` places after the next one to pop, or nullptr.
    const envelope* peek(std::uint32_t k) const noexcept {
        return next_ + k < count_ ? &buf_[next_ + k] : nullptr;
    }

    std::uint32_t size() const noexcept { return count_ - next_; }
    bool empty() const noexcept { return count_ == next_; }
    std::uint32_t capacity() const noexcept { return capacity_; }

    /// Called on an empty queue after a gulp of `used` envelopes was
    /// processed. An array larger than `copy_queue_retain_max` is cut back
    /// at once to `copy_queue_min_capacity` (a burst is not kept: nothing
    /// says it comes again, and every queue it passed through would keep a
    /// copy; on a worker the array goes to its burst cache). Below that, tracks
    /// the peak use over a window of gulps and halves the array when that
    /// peak stayed below half of it, so a steady load never reallocates.
    /// If the smaller array cannot be allocated the queue keeps its own.
    void reclaim(std::uint32_t used) noexcept {
        if (capacity_ > defaults::actors::copy_queue_retain_max) [[unlikely]] {
            cut_back();
            window_gulps_ = 0;
            window_peak_ = 0;
            return;
        }
        if (used > window_peak_) window_peak_ = used;
        if (++window_gulps_ < defaults::actors::copy_queue_reclaim_window) return;
        if (window_peak_ * 2 < capacity_ && capacity_ > defaults::actors::copy_queue_min_capacity)
            shrink_to(capacity_ / 2);
        window_gulps_ = 0;
        window_peak_ = 0;
    }

    /// Direct access for shutdown scans: envelopes [0, size()) from the front.
    const envelope* front() const noexcept { return buf_ + next_; }

private:
    void grow();
    void shrink_to(std::uint32_t capacity) noexcept;
    void cut_back() noexcept;

    envelope* buf_;
    std::uint32_t count_ = 0;  // one past the last pushed envelope
    std::uint32_t next_ = 0;   // next envelope to pop
    std::uint32_t capacity_;
    std::uint32_t window_peak_ = 0;
    std::uint32_t window_gulps_ = 0;
};

}  // namespace troupe::detail
