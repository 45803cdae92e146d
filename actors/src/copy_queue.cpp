// The copy queue's out-of-line steps (growth, cut-back after a burst,
// shrinking) and the per-worker burst cache (troupe/detail/copy_queue.hpp).
#include <cstring>
#include <new>

#include "executor.hpp"
#include "troupe/detail/copy_queue.hpp"

namespace troupe::detail {

void copy_queue::append(const envelope* e, std::uint32_t n) {
    if (next_ == count_) next_ = count_ = 0;
    while (capacity_ - count_ < n) grow();
    std::memcpy(static_cast<void*>(buf_ + count_), e, sizeof(envelope) * n);
    count_ += n;
}

// Buffers come from operator new (nothrow), so allocation-failure tests
// see them; envelopes are trivially copyable (memcpy moves them).
namespace {
envelope* allocate_envelopes(std::uint32_t n) noexcept {
    return static_cast<envelope*>(::operator new(sizeof(envelope) * n, std::nothrow));
}
}  // namespace

copy_queue::copy_queue(std::uint32_t capacity)
    : buf_(allocate_envelopes(capacity)), capacity_(capacity) {
    if (!buf_) throw std::bad_alloc{};
}

copy_queue::~copy_queue() { ::operator delete(buf_); }

void copy_queue::grow() {
    // Strong: on failure the queue is unchanged. Past the retained maximum
    // a worker first looks in its burst cache (no allocation, pages
    // already resident).
    const std::uint32_t want = capacity_ * 2;
    std::uint32_t got = want;
    burst_cache* cache =
        want > defaults::actors::copy_queue_retain_max ? current_burst_cache() : nullptr;
    envelope* b = cache ? cache->take(want, got) : nullptr;
    if (!b) {
        b = allocate_envelopes(want);
        if (!b) throw std::bad_alloc{};
        got = want;
    }
    if (count_) std::memcpy(static_cast<void*>(b), buf_, sizeof(envelope) * count_);
    if (cache && capacity_ > defaults::actors::copy_queue_retain_max) cache->give(buf_, capacity_);
    else ::operator delete(buf_);
    buf_ = b;
    capacity_ = got;
}

void copy_queue::cut_back() noexcept {
    // Only called on an empty queue. On failure the queue keeps its array.
    // Back to the smallest size, not to the retained maximum: a queue a
    // burst passed through is often not used again (a pipeline stage's),
    // and a retained maximum kept in each of them adds up (radixsort: 33
    // queues); one used again regrows in a few doublings, and past the
    // retained maximum takes the burst size from the cache.
    envelope* b = allocate_envelopes(defaults::actors::copy_queue_min_capacity);
    if (!b) return;
    if (burst_cache* cache = current_burst_cache()) cache->give(buf_, capacity_);
    else ::operator delete(buf_);
    buf_ = b;
    capacity_ = defaults::actors::copy_queue_min_capacity;
}

burst_cache::~burst_cache() {
    for (std::size_t i = 0; i < count_; ++i) ::operator delete(arrays_[i].buf);
}

void burst_cache::give(envelope* buf, std::uint32_t n) noexcept {
    const std::size_t size = sizeof(envelope) * n;
    if (count_ == max_arrays || bytes_ + size > defaults::actors::burst_cache_bytes) {
        ::operator delete(buf);
        return;
    }
    arrays_[count_++] = {buf, n};
    bytes_ += size;
}

envelope* burst_cache::take(std::uint32_t n, std::uint32_t& got) noexcept {
    std::size_t best = count_;
    for (std::size_t i = 0; i < count_; ++i)
        if (arrays_[i].n >= n && (best == count_ || arrays_[i].n > arrays_[best].n)) best = i;
    if (best == count_) return nullptr;
    const entry e = arrays_[best];
    arrays_[best] = arrays_[--count_];
    bytes_ -= sizeof(envelope) * e.n;
    got = e.n;
    return e.buf;
}

burst_cache* current_burst_cache() noexcept {
    worker* w = tls_worker;
    return w ? &w->bursts : nullptr;
}

void copy_queue::shrink_to(std::uint32_t capacity) noexcept {
    // Only called on an empty queue: nothing to preserve. On failure the
    // queue keeps its larger buffer.
    if (envelope* b = allocate_envelopes(capacity)) {
        ::operator delete(buf_);
        buf_ = b;
        capacity_ = capacity;
    }
}

}  // namespace troupe::detail
