// Writing the execution trace when the program ends: at normal exit, and
// on a fatal signal, through the flusher thread (trace_write.cpp formats
// the file; trace_ring.hpp holds the rings' invariants).
//
// A fatal signal (SIGTERM, SIGINT, SIGSEGV, SIGABRT from abort(), ...) is
// handled only where the program left it at its default action. The
// handler does nothing that is not async-signal-safe: it asks the flusher
// thread (started with the recording, all signals blocked) to write the
// file, with an atomic store and a futex wake, waits for it with a futex
// wait bounded by flush_limit (best effort: a thread that held the heap's
// lock when it faulted would stall the writer), then restores the default
// action and lets the signal take its course.
#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>

#include "diag/trace_ring.hpp"
#include "troupe/detail/futex.hpp"
#include "troupe/detail/service_thread.hpp"
#include "troupe/detail/trace.hpp"

namespace troupe::detail::trace {

void write_at_exit() noexcept {
    // Already written by the everyone-asleep report or a fatal signal, and
    // nothing recorded since (recording stopped then).
    if (written.load(std::memory_order_acquire) && !on()) return;
    if (trace_path[0]) (void)write(trace_path);
}

void flush_now(const char* why) noexcept {
    if (!on() || !trace_path[0]) return;
    (void)write(trace_path, why);
}

namespace {

// 0 idle, 1 write requested, 2 written (or given up).
constinit std::atomic<std::uint32_t> flush_state{0};
constinit std::atomic<bool> flusher{false};
constinit std::atomic<const char*> flush_reason{nullptr};
constinit std::atomic<bool> fatal_seen{false};
constexpr auto flush_limit = std::chrono::seconds(10);

void* flusher_main(void*) {
    name_this_kernel_thread("troupe-trace");
    for (;;) {
        const std::uint32_t v = flush_state.load(std::memory_order_acquire);
        if (v != 1) {
            futex_wait(flush_state, v);
            continue;
        }
        if (on()) (void)write(trace_path, flush_reason.load(std::memory_order_relaxed));
        flush_state.store(2, std::memory_order_release);
        futex_wake(flush_state, 64);
    }
    return nullptr;
}

const int fatal_signals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGSEGV,
                             SIGBUS,  SIGFPE, SIGILL, SIGABRT};

const char* signal_label(int sig) noexcept {
    switch (sig) {
    case SIGTERM: return "signal SIGTERM";
    case SIGINT: return "signal SIGINT";
    case SIGHUP: return "signal SIGHUP";
    case SIGQUIT: return "signal SIGQUIT";
    case SIGSEGV: return "signal SIGSEGV";
    case SIGBUS: return "signal SIGBUS";
    case SIGFPE: return "signal SIGFPE";
    case SIGILL: return "signal SIGILL";
    case SIGABRT: return "abort (SIGABRT)";
    default: return "a fatal signal";
    }
}

// Asks the flusher for a write and waits for it (bounded). Async-signal-safe.
void request_flush_and_wait(const char* why) noexcept {
    std::uint32_t idle = 0;
    flush_reason.store(why, std::memory_order_relaxed);
    if (flush_state.compare_exchange_strong(idle, 1, std::memory_order_acq_rel))
        futex_wake(flush_state);
    const auto deadline = std::chrono::steady_clock::now() + flush_limit;
    for (std::uint32_t v = flush_state.load(std::memory_order_acquire);
         v != 2 && std::chrono::steady_clock::now() < deadline;
         v = flush_state.load(std::memory_order_acquire))
        futex_wait_until(flush_state, v, deadline);
}

void on_fatal_signal(int sig, siginfo_t* info, void*) {
    const int saved = errno;
    // The first fatal signal writes; another one (a fault while writing, a
    // second Ctrl-C) goes straight to the default action.
    if (!fatal_seen.exchange(true, std::memory_order_acq_rel) && on() && flusher_running()) {
        static const char msg[] = "troupe: writing the trace before the signal takes effect\n";
        (void)!::write(2, msg, sizeof msg - 1);
        request_flush_and_wait(signal_label(sig));
    }
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, nullptr);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
    // A fault (si_code > 0: raised by the hardware) happens again when the
    // handler returns, now with the default action; a sent signal is
    // raised again.
    if (!info || info->si_code <= 0 || sig == SIGABRT || sig == SIGTERM || sig == SIGINT ||
        sig == SIGHUP || sig == SIGQUIT)
        ::raise(sig);
    errno = saved;
}

}  // namespace

bool flusher_running() noexcept { return flusher.load(std::memory_order_acquire); }

void install_fatal_handlers() noexcept {
    if (start_service_thread(&flusher_main, nullptr, 256 * 1024) != 0)
        return;  // no flusher: written at normal exit only
    flusher.store(true, std::memory_order_release);
    // A forked child has no flusher thread: its handler must not wait for one.
    pthread_atfork(nullptr, nullptr, [] { flusher.store(false, std::memory_order_relaxed); });
    for (int sig : fatal_signals) {
        struct sigaction cur {};
        if (sigaction(sig, nullptr, &cur) != 0) continue;
        // Only where the program left the default action (a program's own
        // handler, or an ignored SIGINT under nohup, stays as it is).
        if (!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler != SIG_DFL) continue;
        if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction) continue;
        struct sigaction sa {};
        sa.sa_sigaction = &on_fatal_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigaction(sig, &sa, nullptr);
    }
}

}  // namespace troupe::detail::trace
