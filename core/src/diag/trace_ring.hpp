#pragma once
// Internal: the execution trace's per-kernel-thread event rings, shared by
// the recorders (trace_record.cpp), the writer (trace_write.cpp) and the
// writes at exit and on fatal signals (trace_flush.cpp). docs/trace.md.
//
// Invariants:
// - Each kernel thread appends to its own buffer only (made on its first
//   event, never freed, so the writer can read the events of threads that
//   have ended). A buffer is a power-of-two ring; the newest events
//   overwrite the oldest.
// - The owner writes an event's words with relaxed atomic stores and then
//   publishes it with a release store of `head`. The writer reads `head`
//   (acquire), copies the ring (acquire loads) and reads `head` again:
//   events the owner may have overwritten meanwhile are dropped (a
//   seqlock's read side), so a thread that still records while the file
//   is written cannot tear an event.
// - A buffer is published in `buffers` with a release store after its
//   fields are set; readers load it with acquire.
// - One write at a time (`writing`); `recording` is cleared before a write
//   collects, so recorders stop appending.
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "troupe/detail/trace.hpp"

namespace troupe::detail::trace {

enum class kind : std::uint8_t {
    run,
    spawn,
    unpark,
    steal,
    os_park,
    idle,
    batch,
    mailbox_steal,
    rename,
    io_wait
};

// One event: six words. w0 = kind | flag << 8 | aux << 32.
struct event {
    std::uint64_t w0, t0, t1, subject, a, b;
};
inline constexpr std::size_t event_words = sizeof(event) / sizeof(std::uint64_t);

inline kind kind_of(const event& e) noexcept { return static_cast<kind>(e.w0 & 0xff); }
inline std::uint8_t flag_of(const event& e) noexcept {
    return static_cast<std::uint8_t>(e.w0 >> 8);
}
inline std::uint32_t aux_of(const event& e) noexcept {
    return static_cast<std::uint32_t>(e.w0 >> 32);
}

struct buffer {
    std::atomic<std::uint64_t> head{0};  // events ever appended (owner writes)
    std::uint64_t mask = 0;              // capacity - 1
    long os_tid = 0;
    const char* park_reason = nullptr;  // owner only: the reason noted for the next park
    // Owner only: the open run of small actor batches (see batch_begin).
    std::uint64_t run_t0 = 0;  // 0: no run open
    std::uint32_t run_count = 0, run_messages = 0;
    bool run_instant = false;
    char label[64] = {};
    std::atomic<bool> labelled{false};  // release after label is written
    event* ring = nullptr;
};

inline constexpr std::size_t max_buffers = 1024;
extern std::atomic<buffer*> buffers[max_buffers];
extern std::atomic<std::size_t> buffers_used;
extern std::atomic<std::uint64_t> lost_threads;  // kernel threads beyond max_buffers
// The file named by TROUPE_TRACE (empty: not tracing).
extern char trace_path[4096];
// Events per kernel thread (a power of two).
extern std::size_t capacity;
// One write at a time (the exit writer, the flusher thread on a fatal
// signal, the everyone-asleep report): a second one returns at once.
extern std::atomic<bool> writing;
extern std::atomic<bool> written;  // a write finished since recording stopped

// The clock (see now()): whether it is the TSC, and one reading of both
// clocks at start, to convert TSC ticks to nanoseconds when writing.
extern std::atomic<bool> use_tsc;
extern std::uint64_t origin_ticks, origin_ns;
std::uint64_t steady_ns() noexcept;

// trace_flush.cpp: the write at normal exit (registered with atexit when
// recording starts), and the flusher thread and fatal-signal handlers.
void write_at_exit() noexcept;
void install_fatal_handlers() noexcept;

}  // namespace troupe::detail::trace
