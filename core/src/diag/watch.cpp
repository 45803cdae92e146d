// The watch thread: writes the dump on TROUPE_DUMP_SIGNAL, and checks
// whether every thread is asleep (TROUPE_DEADLOCK) when kernel threads go
// to sleep with nothing to do.
//
// The signal handler only sets a bit of `requests` and wakes the futex on
// it (an atomic RMW and a system call: async-signal-safe); the watch thread
// formats the dump. The thread is made with pthread_create, not
// std::thread, so it holds no C++ heap block for its whole life (the
// tests' leak check counts those).
#include <fcntl.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>

#include "diag/dump_snapshot.hpp"
#include "troupe/detail/futex.hpp"
#include "troupe/detail/service_thread.hpp"
#include "troupe/detail/timer.hpp"
#include "troupe/detail/trace.hpp"
#include "troupe/detail/wake_source.hpp"
#include "troupe/detail/watch_stats.hpp"
#include "troupe/dump.hpp"
#include "troupe/knobs.hpp"

namespace troupe::detail {

constinit std::atomic<bool> exiting_asleep{false};

namespace {
enum : std::uint32_t { want_dump = 1, want_check = 2 };
enum class on_deadlock : std::uint8_t { off, report, abort };

std::atomic<std::uint32_t> requests{0};
std::atomic<bool> thread_running{false};
// Registered wake sources (troupe/detail/wake_source.hpp): slots filled once,
// in order, never cleared.
std::atomic<const wake_source*> sources[max_wake_sources];
// Written once, before the thread starts (relaxed: a setting).
std::atomic<on_deadlock> mode{on_deadlock::abort};
std::atomic<deadlock_handler> handler{nullptr};

void on_signal(int) {
    const int saved = errno;
    requests.fetch_or(want_dump, std::memory_order_release);
    futex_wake(requests);
    errno = saved;
}

int signal_number(const char* v) {
    if (!v || !*v) return 0;
    if (std::strncmp(v, "SIG", 3) == 0) v += 3;
    static const struct {
        const char* name;
        int sig;
    } names[] = {{"QUIT", SIGQUIT}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2},  {"HUP", SIGHUP},
                 {"INT", SIGINT},   {"TERM", SIGTERM}, {"WINCH", SIGWINCH}};
    for (const auto& n : names)
        if (std::strcmp(v, n.name) == 0) return n.sig;
    char* end = nullptr;
    const long n = std::strtol(v, &end, 10);
    return (end != v && *end == 0 && n > 0 && n < NSIG) ? static_cast<int>(n) : 0;
}

// Looks taken, and those that walked /proc/self/task (process_threads):
// for the tests (watch_counters).
std::atomic<std::uint64_t> looks_taken{0}, thread_walks{0};

// The threads of the process, from /proc/self/task, read with getdents64
// into a stack buffer: opendir would malloc its buffer, and the first
// malloc on this thread creates a malloc arena (an mmap of its own), which
// cost the first look about 2 ms of CPU beside the program's threads.
std::size_t process_threads() noexcept {
    thread_walks.fetch_add(1, std::memory_order_relaxed);
    const int fd = ::open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return 0;
    alignas(8) char buf[4096];
    std::size_t n = 0;
    for (;;) {
        const long got = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
        if (got <= 0) break;
        for (long off = 0; off < got;) {
            // struct linux_dirent64: ino (8), off (8), reclen (2), type (1), name.
            unsigned short reclen;
            std::memcpy(&reclen, buf + off + 16, sizeof reclen);
            if (buf[off + 19] != '.') ++n;
            off += reclen;
        }
    }
    ::close(fd);
    return n;
}

// One look at the whole process: whether every thread troupe knows is
// asleep on a troupe primitive with nothing that could wake it, and a
// fingerprint of every such thread's wait-record sequence (two equal looks,
// apart, mean nothing moved in between). Allocates nothing: it runs beside
// the program, and the tests' leak check counts heap blocks.
struct look {
    bool all_asleep = false;
    std::uint64_t fingerprint = 0;
};

std::uint64_t mix(const void* p, std::uint32_t seq) noexcept {
    std::uint64_t x = reinterpret_cast<std::uintptr_t>(p) * 0x9e3779b97f4a7c15ull ^ seq;
    x ^= x >> 31;
    return x * 0xbf58476d1ce4e5b9ull;
}

// Stamps every recorded wait nobody has timed yet (wait_reason::since_ns):
// this runs whenever processors go to sleep, so a hung program's waits are
// timed to within a few milliseconds of their start.
void stamp_waits() noexcept {
    registry& r = the_registry();
    std::lock_guard g{r.lock};
    for (context* c = r.fibers.head; c; c = context_access::next(*c))
        if (context_access::wait(*c).seq.load(std::memory_order_acquire) & 1)
            stamp_wait(context_access::wait(*c));
}

look take_look() noexcept {
    looks_taken.fetch_add(1, std::memory_order_relaxed);
    look l;
    stamp_waits();
    if (timer_pending() != 0) return l;  // a timer will wake someone
    registry& r = the_registry();
    std::size_t accounted = 1;  // this thread
    if (timer_thread_started()) ++accounted;
    if (trace::flusher_running()) ++accounted;
    for (auto& slot : sources) {
        const wake_source* s = slot.load(std::memory_order_acquire);
        if (!s) break;
        if (s->pending()) return l;  // a wait on the outside world will end
        accounted += s->threads();
    }
    std::size_t waiting = 0;
    {
        std::lock_guard g{r.lock};
        for (cluster_impl* c : r.cluster_list()) {
            const std::size_t n = c->processor_count();
            for (std::size_t i = 0; i < n; ++i) {
                processor* p = c->active_at(i);
                if (!p || !p->asleep() || p->queue_length() != 0) return l;
            }
            accounted += n;
        }
        for (context* c = r.fibers.head; c; c = context_access::next(*c)) {
            if (static_cast<fiber*>(c)->joiner.load(std::memory_order_acquire) == done_marker)
                continue;
            if (!context_access::parked(*c)) return l;  // running, ready, or between steps
            const std::uint32_t seq = context_access::wait(*c).seq.load(std::memory_order_acquire);
            if (seq & 1) ++waiting;
            l.fingerprint += mix(c, seq);
        }
        for (context* c = r.os_threads.head; c; c = context_access::next(*c)) {
            const std::uint32_t seq = context_access::wait(*c).seq.load(std::memory_order_acquire);
            // An OS thread not blocked in troupe is one that could wake
            // us: not everyone is asleep, and the walk of /proc below (a
            // few system calls) is not needed to say so.
            if (!(seq & 1) || !context_access::parked(*c)) return l;
            ++accounted;
            ++waiting;
            l.fingerprint += mix(c, seq);
        }
    }
    // Every thread of the process is troupe's own or blocked in troupe:
    // nothing outside troupe (a thread in read(), a helper thread of a
    // library) can wake anyone.
    if (waiting == 0 || process_threads() != accounted) return l;
    l.all_asleep = true;
    return l;
}

void report_everyone_asleep() {
    std::ostringstream os;
    os << "troupe: all threads are asleep - deadlock!\n\n";
    dump(os);
    const std::string text = os.str();
    // The trace now: the program aborts next, hangs, or its handler exits.
    trace::flush_now("everyone asleep");
    if (deadlock_handler h = handler.load(std::memory_order_acquire)) {
        // A handler may call exit(): static destructors then must not wait
        // for the threads that are asleep for ever (~cluster_impl).
        exiting_asleep.store(true, std::memory_order_release);
        h(text);
        exiting_asleep.store(false, std::memory_order_release);
        return;
    }
    std::fputs(text.c_str(), stderr);
    std::fflush(stderr);
    if (mode.load(std::memory_order_relaxed) == on_deadlock::abort) std::abort();
}

// How long two looks are apart: long enough that a wake in flight (a
// processor between its last check and its sleep) shows as a change.
constexpr auto settle = std::chrono::milliseconds(100);
// The shortest time between two checks.
constexpr auto check_pause = std::chrono::milliseconds(50);

void check_everyone_asleep(std::uint64_t& reported) {
    look a = take_look();
    if (!a.all_asleep || a.fingerprint == reported) return;
    const auto deadline = std::chrono::steady_clock::now() + settle;
    // Sleep without taking the request bits (a dump asked meanwhile is
    // served after this check).
    while (std::chrono::steady_clock::now() < deadline) {
        const std::uint32_t seen = requests.load(std::memory_order_acquire);
        if (seen & want_dump) break;
        futex_wait_until(requests, seen, deadline);
    }
    look b = take_look();
    if (!b.all_asleep || a.fingerprint != b.fingerprint) return;
    reported = b.fingerprint;  // report one deadlock once
    report_everyone_asleep();
}

void* watch_main(void*) {
    name_this_kernel_thread("troupe-watch");
    std::uint64_t reported = 0;
    for (;;) {
        const std::uint32_t r = requests.exchange(0, std::memory_order_acq_rel);
        if (r == 0) {
            futex_wait(requests, 0);
            continue;
        }
        if (r & want_dump) {
            try {
                std::ostringstream os;
                dump(os);
                std::fputs(os.str().c_str(), stderr);
                std::fflush(stderr);
            } catch (...) {
                std::fputs("troupe: the dump failed (out of memory?)\n", stderr);
            }
        }
        if (r & want_check) {
            try {
                check_everyone_asleep(reported);
            } catch (...) {}
            // At most one check per pause: kicks meanwhile only set the bit
            // (one load each), so a busy program that sleeps and wakes all
            // the time costs this thread a few looks a second.
            const auto until = std::chrono::steady_clock::now() + check_pause;
            for (std::uint32_t seen = requests.load(std::memory_order_acquire);
                 !(seen & want_dump) && std::chrono::steady_clock::now() < until;
                 seen = requests.load(std::memory_order_acquire))
                futex_wait_until(requests, seen, until);
        }
    }
    return nullptr;
}

void start_thread() noexcept {
    // Every signal blocked in the watch thread (the dump signal goes to any
    // other thread; the handler only wakes us).
    if (start_service_thread(&watch_main, nullptr) == 0)
        thread_running.store(true, std::memory_order_release);
}
}  // namespace

void watch_init_once() noexcept {
    static std::once_flag once;
    std::call_once(once, [] {
        on_deadlock m = on_deadlock::abort;
        if (knobs::is(knobs::deadlock, "off")) m = on_deadlock::off;
        else if (knobs::is(knobs::deadlock, "report")) m = on_deadlock::report;
        mode.store(m, std::memory_order_relaxed);
        const char* sv = knobs::value(knobs::dump_signal);
        const int sig = signal_number(sv);
        if (sv && *sv && !sig)
            std::fprintf(stderr, "troupe: TROUPE_DUMP_SIGNAL=%s names no signal; ignored\n", sv);
        if (m == on_deadlock::off && !sig) return;
        start_thread();
        if (sig && thread_running.load(std::memory_order_acquire)) {
            struct sigaction sa {};
            sa.sa_handler = &on_signal;
            sigemptyset(&sa.sa_mask);
            sa.sa_flags = SA_RESTART;
            sigaction(sig, &sa, nullptr);
        }
    });
}

void note_idle_sleep() noexcept {
    if (!thread_running.load(std::memory_order_acquire) ||
        mode.load(std::memory_order_relaxed) == on_deadlock::off)
        return;
    // One load when a check is already asked for.
    if (requests.load(std::memory_order_relaxed) & want_check) return;
    requests.fetch_or(want_check, std::memory_order_release);
    futex_wake(requests);
}

watch_stats watch_counters() noexcept {
    return {looks_taken.load(std::memory_order_relaxed),
            thread_walks.load(std::memory_order_relaxed)};
}

bool add_wake_source(const wake_source* s) noexcept {
    for (auto& slot : sources) {
        const wake_source* expected = nullptr;
        // release: the source's fields before its slot is seen.
        if (slot.compare_exchange_strong(expected, s, std::memory_order_acq_rel)) return true;
        if (expected == s) return true;
    }
    return false;
}

}  // namespace troupe::detail

namespace troupe {

deadlock_handler set_deadlock_handler(deadlock_handler h) noexcept {
    return detail::handler.exchange(h, std::memory_order_acq_rel);
}

}  // namespace troupe
