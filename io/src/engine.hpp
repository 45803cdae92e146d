#pragma once
// Internal: the I/O engine (docs/io.md).
//
// One engine per process: a table of descriptor records (poll_desc, one per
// descriptor number, never freed), a readiness source (epoll or io_uring
// multishot polls) and one poller kernel thread that sleeps in the kernel
// (epoll_wait / io_uring_wait_cqe) and, per event, wakes the threads queued
// on the descriptor. Calls are readiness based: try the system call, and on
// EAGAIN queue a node on the descriptor and park; the poller's wake makes
// the call try again. So a waiter that is not woken (a losing waituntil
// clause, a timeout) has consumed nothing.
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "troupe/detail/wait_reason.hpp"
#include "troupe/io.hpp"
#include "troupe/select.hpp"
#include "troupe/spinlock.hpp"

namespace troupe::io::detail {

/// One descriptor number's record. `state` packs the registration:
///   bits 0-29  calls inside (each holds a reference: the number is not
///              closed under them),
///   bit 30     closing (io::close ran; new calls fail, waiters were woken),
///   bit 31     open (registered with the engine),
///   bits 32-63 generation (bumped by each registration, so an event or a
///              call of an old registration of the number is recognised).
struct poll_desc {
    static constexpr std::uint64_t ref_mask = (1u << 30) - 1;
    static constexpr std::uint64_t closing_bit = 1u << 30;
    static constexpr std::uint64_t open_bit = 1u << 31;
    static std::uint32_t gen_of(std::uint64_t s) noexcept { return std::uint32_t(s >> 32); }

    int fd = -1;
    troupe::spinlock lock{"io descriptor"};  // queues, registration, close
    std::atomic<std::uint64_t> state{0};
    // Readiness events seen (bumped by the poller under `lock`): a call reads
    // it before its system call and queues only if it has not moved since,
    // so an edge that arrives between the EAGAIN and the queueing is not
    // lost (the call retries instead).
    std::atomic<std::uint32_t> rseq{0}, wseq{0};
    node_queue readers, writers;  // under `lock`
    // Not pollable (a regular file, /dev/null: epoll refuses it): always
    // ready; the calls never wait on it.
    bool always_ready = false;
    bool is_socket = false;
    // The io_uring engine's queue of polls its poller thread is to arm
    // (uring_engine::watch): the generation to arm, the next record queued.
    // Intrusive, so a registration allocates nothing. Under the engine's
    // submission lock.
    bool arm_queued = false;
    std::uint32_t arm_gen = 0;
    poll_desc* arm_next = nullptr;
};

/// The engine interface the calls use.
class engine {
public:
    virtual ~engine() = default;
    virtual const char* name() const noexcept = 0;
    /// Starts watching `pd` (generation `gen`) for both directions.
    /// Throws io::error.
    virtual void watch(poll_desc& pd, std::uint32_t gen) = 0;
    /// Stops watching (before the descriptor is closed). nothrow.
    virtual void unwatch(poll_desc& pd, std::uint32_t gen) noexcept = 0;
    /// Whether pread/pwrite of regular files are submitted (io_uring).
    virtual bool async_files() const noexcept { return false; }
    /// Submits a file read or write and parks until it completes; returns
    /// the result (>= 0) or -errno. Only when async_files(). A deadline
    /// that passes, or a stop of `tok`, while the operation is in flight
    /// cancels it, and the call still waits for its completion (the kernel
    /// holds `buf` until then): `ended` says which (timeout, cancelled;
    /// none if neither came), and the result is the operation's (-ECANCELED
    /// if the cancel took, else what it did). nothrow.
    virtual long file_op(bool write, int fd, void* buf, std::size_t n, ::off_t offset,
                         const deadline& d, const stop_token& tok, wake_reason& ended) noexcept {
        (void)write, (void)fd, (void)buf, (void)n, (void)offset, (void)d, (void)tok;
        ended = wake_reason::none;
        return -38;  // ENOSYS
    }
};

/// The process's engine (started on first use; never destroyed: its poller
/// thread lives until the process exits). Throws io::error if neither
/// engine can start.
engine& the_engine();

/// The record of `fd` if one was ever made, else nullptr. nothrow.
poll_desc* find_desc(int fd) noexcept;

/// Called by the poller for an event on `pd` of generation `gen`. nothrow.
void dispatch(poll_desc& pd, std::uint32_t gen, bool readable, bool writable) noexcept;

/// A call's hold on a descriptor (a reference in `state`): throws
/// closed_error if the descriptor is closing or `gen` is stale.
class op_ref {
public:
    op_ref(poll_desc& pd, std::uint32_t gen, const char* op);
    ~op_ref();
    op_ref(const op_ref&) = delete;
    op_ref& operator=(const op_ref&) = delete;

private:
    poll_desc& pd_;
};

/// What a dump shows about an I/O wait (the wait_scope's resource).
struct wait_info {
    int fd;
    const char* op;
    std::size_t bytes;
};

/// Parks the caller until `pd` may be ready in direction `write` (the
/// sequence moved past `seen`), the deadline passes, `tok` is stopped, or
/// the descriptor is closed. Never throws; returns why it ended (ready,
/// timeout, cancelled, closed). Exactly one of them ends it: the poller,
/// the timer, the stop and close race for one exclusive status word.
wake_reason wait_ready(poll_desc& pd, std::uint32_t gen, bool write, std::uint32_t seen,
                       const deadline& d, const stop_token& tok, const wait_info& info) noexcept;

/// Throws troupe::cancelled for operation `op` on `fd` ("troupe::io: read on
/// fd 7: cancelled ...").
[[noreturn]] void throw_cancelled(const char* op, int fd);

/// Records an I/O wait of the calling thread, from t0 (trace::now()) to now,
/// in the execution trace (a no-op when t0 is 0: not recording). nothrow.
void trace_wait(const wait_info& info, std::uint64_t t0) noexcept;

/// Releases the last reference: closes the descriptor. Called with
/// `pd.lock` not held. nothrow.
void finish_close(poll_desc& pd) noexcept;

/// Calls on helper threads and file operations in flight (the
/// everyone-asleep check: they end from outside).
extern std::atomic<long> outside_calls;
/// Helper threads of io::blocking started so far. nothrow.
std::size_t blocking_helpers() noexcept;

/// "troupe::io: <op> on fd N: <strerror>" plus, for EMFILE/ENFILE, the
/// limit to raise.
[[noreturn]] void throw_errno(int err, const char* op, int fd);

// Times the calling thread's current wait record now. An I/O wait is often
// long while its processor stays busy (the watch thread times waits only
// when processors sleep, so a dump would print 0.000 s), and a clock read
// is nothing beside the system calls around it.
inline void time_wait_now() noexcept {
    troupe::detail::stamp_wait(troupe::detail::begin_wait_record());
}

}  // namespace troupe::io::detail
