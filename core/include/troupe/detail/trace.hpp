#pragma once
// Internal: the execution trace (TROUPE_TRACE=path.json; docs/trace.md).
//
// Scheduling events go to a ring buffer per kernel thread (a processor, an
// actor worker, the timer thread, main, ...) and are written as Chrome
// trace event JSON when the process exits. The hooks are built in unless
// troupe is configured with -Dtrace=false; with tracing off each one is a
// relaxed load of one global flag and a predictable branch, placed on
// paths that already switch, park, wake or batch (never on a lock or
// channel fast path that does none of these).
//
// Installed because header-only modules (channels, waituntil) name their
// park reasons through note_park().
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "troupe/config.hpp"

namespace troupe::detail::trace {

#if defined(TROUPE_TRACE_HOOKS)
inline constexpr bool built_in = true;
#else
inline constexpr bool built_in = false;
#endif

/// True while events are being recorded: set once, at start-up, when the
/// environment names a trace file; cleared when the file is written.
extern std::atomic<bool> recording;

/// Whether to record (one relaxed load; constant false without hooks).
inline bool on() noexcept {
    if constexpr (built_in) return recording.load(std::memory_order_relaxed);
    else return false;
}

/// The trace clock: the time-stamp counter (rdtscp) on x86 with an
/// invariant TSC, else the steady clock in nanoseconds; converted to
/// nanoseconds when the file is written.
std::uint64_t now() noexcept;

/// How a run slice of a user thread ended (the scheduler's post action).
enum class slice_end : std::uint8_t { none, park, yield, finish };
/// How an unpark placed its thread.
enum class placed : std::uint8_t { os_thread, handoff, queued, idle_member };

// Recorders: each appends one event to the calling kernel thread's buffer
// (made on first use). All are nothrow and never block.

/// A user thread ran on this kernel thread from t0 to now.
void run_slice(const void* fiber, std::uint64_t t0, slice_end how) noexcept;
/// `fiber` (named `name`, may be nullptr; copied) was created.
void spawn(const void* fiber, const char* name) noexcept;
/// The calling thread made `target` runnable, starting at t0.
void unpark(const void* target, std::uint64_t t0, placed how) noexcept;
/// This processor stole `fiber` from processor `victim` (queue or hand-off slot).
void steal(const void* fiber, std::size_t victim, bool handoff) noexcept;
/// An OS thread (context `self`) slept in park() from t0 to now.
void os_park(const void* self, std::uint64_t t0) noexcept;
/// An idle-group member (`member`) slept from t0 to now.
void idle(const void* member, std::uint64_t t0) noexcept;
/// Actor batches. A batch of at least `big_batch` messages is one event
/// (its own slice); smaller ones are summed into one slice per run of
/// batches, closed by the worker's next pass that finds no work
/// (batches_idle), by a big batch, or after `run_batches` batches. So a
/// chain of one-message batches (40 ns each) pays a few stores per batch,
/// not two clock reads. batch_begin returns the start time of a big batch
/// (else 0: the batch joins the open run, opened here if none is);
/// batch_end records it. `instant`: the worker is a user thread (its
/// batches may span parks and processors), record marks, not slices.
inline constexpr std::uint32_t big_batch = 16;
inline constexpr std::uint32_t run_batches = 64;
std::uint64_t batch_begin(std::uint32_t messages) noexcept;
void batch_end(std::size_t mailbox, std::uint32_t messages, std::uint64_t t0,
               bool instant) noexcept;
void batches_idle() noexcept;
/// The calling thread (user or OS thread) waited from t0 to now on
/// descriptor `fd` for operation `op` (a static string: "recv", "accept",
/// "file read", ...) of `bytes` bytes: an I/O slice (troupe-io's waits).
void io_wait(const char* op, int fd, std::uint64_t bytes, std::uint64_t t0) noexcept;
/// Actor worker stole mailbox `mailbox` from worker `victim`.
void mailbox_steal(std::size_t mailbox, std::size_t victim) noexcept;

/// `fiber` was named `name` (this_thread::set_name, thread::set_name;
/// copied, 16 bytes at most): its slices carry that name in the file.
void rename(const void* fiber, const char* name) noexcept;
/// Names the calling OS thread's track (this_thread::set_name on an OS
/// thread), when recording.
void name_os_thread(const char* name) noexcept;

/// Names the calling kernel thread's track ("<what> <index>", no index if
/// `index` is no_index, and " (<group>)" if given), when recording.
void label_thread(const char* what, std::size_t index, const char* group) noexcept;
inline constexpr std::size_t no_index = ~std::size_t{0};

/// The reason the calling thread is about to park (a static string such
/// as "channel" or "blocking_lock"), shown on the slice that the park
/// ends. Call right before park(); a no-op unless recording.
void set_park_reason(const char* reason) noexcept;
inline void note_park(const char* reason) noexcept {
    if (on()) [[unlikely]]
        set_park_reason(reason);
}

/// Starts recording if TROUPE_TRACE names a file (once per process; later
/// calls do nothing) and arranges for the file to be written at exit.
/// Called at load time and by every cluster and executor constructor.
void start_if_requested() noexcept;

/// Writes the events recorded so far to `path` and stops recording;
/// false if the file cannot be written (or another write is under way).
/// `ended_by`, if given, is recorded in the file ("signal 15", "abort",
/// "everyone asleep"): the run did not end normally. Called at exit when
/// recording.
bool write(const char* path, const char* ended_by = nullptr) noexcept;

/// Writes the trace file now, if recording (the everyone-asleep report);
/// `why` as write's ended_by. Blocks while the file is written. Nothrow.
void flush_now(const char* why) noexcept;

/// Whether the trace's flusher thread runs (recording with fatal-signal
/// handlers installed): one more thread of troupe's own in the process.
bool flusher_running() noexcept;

}  // namespace troupe::detail::trace
