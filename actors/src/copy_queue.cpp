// The copy queue's out-of-line steps (growth, cut-back after a burst,
// shrinking) and the per-worker burst cache (troupe/detail/copy_queue.hpp).
#include <sys/mman.h>

#include <cstring>
#include <new>

#include "executor.hpp"
#include "troupe/detail/copy_queue.hpp"

namespace troupe::detail {

namespace {
constexpr std::size_t bytes_of(std::uint32_t n) noexcept { return sizeof(envelope) * n; }
bool is_mapped(std::uint32_t n) noexcept { return bytes_of(n) >= mapped_min_bytes; }
}  // namespace

void copy_queue::append(const envelope* e, std::uint32_t n) {
    if (next_ == count_) next_ = count_ = 0;
    while (capacity_ - count_ < n) grow();
    std::memcpy(static_cast<void*>(buf_ + count_), e, bytes_of(n));
    count_ += n;
}

// Buffers below `mapped_min_bytes` come from operator new (nothrow),
// so allocation-failure tests see them; envelopes are trivially copyable
// (memcpy moves them). Burst-sized ones are anonymous mappings, which grow
// by mremap: the pages already written move with the array instead of
// being copied into fresh pages that fault again (Savina's count at 1
// worker: 2.5 million envelopes staged in one behaviour spent 30% of its
// time in memmove and 31% in page faults of the doublings).
envelope* allocate_envelopes(std::uint32_t n) noexcept {
    if (!is_mapped(n)) return static_cast<envelope*>(::operator new(bytes_of(n), std::nothrow));
    void* p =
        ::mmap(nullptr, bytes_of(n), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    // Transparent huge pages where the system grants them on request
    // (the "madvise" setting, Debian's default): a burst's pages fault
    // 2 MiB at a time (count at 1 worker: 15,600 faults -> 2,000). The
    // array is at least a huge page, so rounding costs at most one partly
    // used huge page at its end; mremap keeps the advice.
    (void)::madvise(p, bytes_of(n), MADV_HUGEPAGE);
    return static_cast<envelope*>(p);
}

void release_envelopes(envelope* buf, std::uint32_t n) noexcept {
    if (!is_mapped(n)) ::operator delete(buf);
    else if (buf) ::munmap(buf, bytes_of(n));
}

copy_queue::copy_queue(std::uint32_t capacity)
    : buf_(allocate_envelopes(capacity)), capacity_(capacity) {
    if (!buf_) throw std::bad_alloc{};
}

copy_queue::~copy_queue() { release_envelopes(buf_, capacity_); }

void copy_queue::grow() {
    // Strong: on failure the queue is unchanged. Past the retained maximum
    // a worker first looks in its burst cache (no allocation, pages
    // already resident).
    const std::uint32_t want = capacity_ * 2;
    std::uint32_t got = want;
    burst_cache* cache =
        want > defaults::actors::copy_queue_retain_max ? current_burst_cache() : nullptr;
    envelope* b = cache ? cache->take(want, got) : nullptr;
    if (!b && is_mapped(capacity_)) {
        // Moves the page tables, not the envelopes (a failed mremap leaves
        // the old mapping as it was).
        void* p = ::mremap(buf_, bytes_of(capacity_), bytes_of(want), MREMAP_MAYMOVE);
        if (p == MAP_FAILED) throw std::bad_alloc{};
        buf_ = static_cast<envelope*>(p);
        capacity_ = want;
        return;
    }
    if (!b) {
        b = allocate_envelopes(want);
        if (!b) throw std::bad_alloc{};
        got = want;
    }
    if (count_) std::memcpy(static_cast<void*>(b), buf_, bytes_of(count_));
    if (cache && capacity_ > defaults::actors::copy_queue_retain_max) cache->give(buf_, capacity_);
    else release_envelopes(buf_, capacity_);
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
    else release_envelopes(buf_, capacity_);
    buf_ = b;
    capacity_ = defaults::actors::copy_queue_min_capacity;
}

burst_cache::~burst_cache() {
    for (std::size_t i = 0; i < count_; ++i) release_envelopes(arrays_[i].buf, arrays_[i].n);
}

void burst_cache::give(envelope* buf, std::uint32_t n) noexcept {
    const std::size_t size = bytes_of(n);
    if (count_ == max_arrays || bytes_ + size > defaults::actors::burst_cache_bytes) {
        release_envelopes(buf, n);
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
    bytes_ -= bytes_of(e.n);
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
        release_envelopes(buf_, capacity_);
        buf_ = b;
        capacity_ = capacity;
    }
}

}  // namespace troupe::detail
