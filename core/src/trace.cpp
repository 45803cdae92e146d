// The execution trace: per-kernel-thread ring buffers of scheduling events,
// written as Chrome trace event JSON at exit (docs/trace.md).
//
// Recording: each kernel thread appends to its own buffer (made on its
// first event, never freed, so the writer can read the events of threads
// that have ended). A buffer is a power-of-two ring; the newest events
// overwrite the oldest. The owner writes an event's words with relaxed
// atomic stores and then publishes it with a release store of `head`;
// the writer reads `head` (acquire), copies the ring (acquire loads), and
// reads `head` again: events the owner may have overwritten
// meanwhile are dropped (a seqlock's read side), so a thread that still
// records while the file is written cannot tear an event.
#include "troupe/detail/trace.hpp"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "troupe/detail/futex.hpp"

namespace troupe::detail::trace {

constinit std::atomic<bool> recording{false};

namespace {

enum class kind : std::uint8_t {
    run,
    spawn,
    unpark,
    steal,
    os_park,
    idle,
    batch,
    mailbox_steal,
    rename
};

// One event: six words. w0 = kind | flag << 8 | aux << 32.
struct event {
    std::uint64_t w0, t0, t1, subject, a, b;
};
constexpr std::size_t event_words = sizeof(event) / sizeof(std::uint64_t);

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

constexpr std::size_t max_buffers = 1024;
constinit std::atomic<buffer*> buffers[max_buffers] = {};
constinit std::atomic<std::size_t> buffers_used{0};
constinit std::atomic<bool> started{false};
constinit std::atomic<std::uint64_t> lost_threads{0};  // kernel threads beyond max_buffers
char trace_path[4096];
// Events per kernel thread: 2^22 (192 MiB of address space per thread,
// reserved with MAP_NORESERVE, so only what a thread records costs memory)
// keeps a few seconds of the busiest processor measured (docs/trace.md,
// "Settings").
std::size_t capacity = 1u << 22;
// One write at a time (the exit writer, the flusher thread on a fatal
// signal, the everyone-asleep report): a second one returns at once.
constinit std::atomic<bool> writing{false};
constinit std::atomic<bool> written{false};  // a write finished since recording stopped
// The clock (see now()): whether it is the TSC, and one reading of both
// clocks at start, to convert TSC ticks to nanoseconds when writing.
constinit std::atomic<bool> use_tsc{false};
std::uint64_t origin_ticks = 0, origin_ns = 0;

std::uint64_t steady_ns() noexcept {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::steady_clock::now().time_since_epoch())
                                          .count());
}

// An invariant TSC ticks at a constant rate in every power state and is
// synchronised across cores by the kernel (CPUID 0x80000007, EDX bit 8).
bool invariant_tsc() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u) return false;
    __get_cpuid(0x80000007u, &a, &b, &c, &d);
    return (d >> 8) & 1u;
#else
    return false;
#endif
}

[[gnu::tls_model("initial-exec")]] thread_local buffer* tls_buffer = nullptr;
// A kernel thread that found the registry full records nothing.
[[gnu::tls_model("initial-exec")]] thread_local bool tls_refused = false;

long this_os_tid() noexcept { return static_cast<long>(::syscall(SYS_gettid)); }

// The calling kernel thread's buffer, made on first use (mmap, not the
// heap: the per-test leak check counts operator new, and buffers outlive
// every test by design). nullptr if none can be had.
[[gnu::noinline]] buffer* make_buffer() noexcept {
    if (tls_refused) return nullptr;
    // Address space only: pages are backed as the ring fills (a thread that
    // records little costs little). If the reservation fails (a strict
    // overcommit policy), try smaller rings before giving up.
    std::size_t cap = capacity;
    std::size_t bytes = 0;
    void* mem = MAP_FAILED;
    for (; cap >= 1024; cap /= 4) {
        bytes = sizeof(buffer) + 64 + cap * sizeof(event);
        mem = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (mem != MAP_FAILED) break;
    }
    if (mem == MAP_FAILED) {
        tls_refused = true;
        lost_threads.fetch_add(1, std::memory_order_relaxed);
        return nullptr;
    }
    auto* b = ::new (mem) buffer;
    b->mask = cap - 1;
    b->os_tid = this_os_tid();
    b->ring = reinterpret_cast<event*>(
        (reinterpret_cast<std::uintptr_t>(static_cast<char*>(mem) + sizeof(buffer)) + 63) &
        ~std::uintptr_t(63));
    if (b->os_tid == static_cast<long>(::getpid()))
        std::snprintf(b->label, sizeof b->label, "main thread");
    else std::snprintf(b->label, sizeof b->label, "OS thread %ld", b->os_tid);
    b->labelled.store(true, std::memory_order_release);
    const std::size_t i = buffers_used.fetch_add(1, std::memory_order_relaxed);
    if (i >= max_buffers) {
        ::munmap(mem, bytes);
        lost_threads.fetch_add(1, std::memory_order_relaxed);
        tls_refused = true;
        return nullptr;
    }
    // release: the writer (acquire) sees the buffer's fields.
    buffers[i].store(b, std::memory_order_release);
    tls_buffer = b;
    return b;
}

inline buffer* this_buffer() noexcept {
    buffer* b = tls_buffer;
    return b ? b : make_buffer();
}

void append(kind k, std::uint8_t flag, std::uint32_t aux, std::uint64_t t0, std::uint64_t t1,
            const void* subject, std::uint64_t a, std::uint64_t b) noexcept {
    if (!on()) return;  // stopped since the caller looked
    buffer* buf = this_buffer();
    if (!buf) return;
    const std::uint64_t h = buf->head.load(std::memory_order_relaxed);  // only we write it
    const std::uint64_t words[event_words] = {
        static_cast<std::uint64_t>(k) | std::uint64_t{flag} << 8 | std::uint64_t{aux} << 32,
        t0,
        t1,
        reinterpret_cast<std::uintptr_t>(subject),
        a,
        b};
    auto* slot = reinterpret_cast<std::uint64_t*>(&buf->ring[h & buf->mask]);
    for (std::size_t i = 0; i < event_words; ++i)
        std::atomic_ref<std::uint64_t>(slot[i]).store(words[i], std::memory_order_relaxed);
    // release: the event's words before the count that publishes it.
    buf->head.store(h + 1, std::memory_order_release);
}

std::uint64_t as_word(const char* p) noexcept { return reinterpret_cast<std::uintptr_t>(p); }

void write_at_exit() noexcept {
    // Already written by the everyone-asleep report or a fatal signal, and
    // nothing recorded since (recording stopped then).
    if (written.load(std::memory_order_acquire) && !on()) return;
    if (trace_path[0]) (void)write(trace_path);
}

// ------------------------------------------------ writing on fatal signals
//
// A fatal signal (SIGTERM, SIGINT, SIGSEGV, SIGABRT from abort(), ...) is
// handled only where the program left it at its default action. The
// handler does nothing that is not async-signal-safe: it asks the flusher
// thread (started with the recording, all signals blocked) to write the
// file, with an atomic store and a futex wake, waits for it with a futex
// wait bounded by flush_limit (best effort: a thread that held the heap's
// lock when it faulted would stall the writer), then restores the default
// action and lets the signal take its course.

// 0 idle, 1 write requested, 2 written (or given up).
constinit std::atomic<std::uint32_t> flush_state{0};
constinit std::atomic<bool> flusher{false};
constinit std::atomic<const char*> flush_reason{nullptr};
constinit std::atomic<bool> fatal_seen{false};
constexpr auto flush_limit = std::chrono::seconds(10);

void* flusher_main(void*) {
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

void install_fatal_handlers() noexcept {
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&a, 256 * 1024);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    const bool ok = pthread_create(&t, &a, &flusher_main, nullptr) == 0;
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    pthread_attr_destroy(&a);
    if (!ok) return;  // no flusher: written at normal exit only
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

struct load_time_start {
    load_time_start() noexcept { start_if_requested(); }
} load_time_start_instance;

}  // namespace

std::uint64_t now() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    // rdtscp, not rdtsc: it waits for the instructions before it, so a
    // run slice cannot start (on the thief's clock) before the unpark
    // that placed its thread (on the waker's). ~10 ns, a third of
    // clock_gettime on the VMs measured (bench/RESULTS.md).
    if (use_tsc.load(std::memory_order_relaxed)) {
        unsigned aux;
        return __rdtscp(&aux);
    }
#endif
    return steady_ns();
}

void start_if_requested() noexcept {
    if constexpr (!built_in) return;
    if (started.exchange(true, std::memory_order_acq_rel)) return;
    const char* path = std::getenv("TROUPE_TRACE");
    if (!path || !*path) return;
    if (std::strlen(path) >= sizeof trace_path) {
        std::fprintf(stderr, "troupe: TROUPE_TRACE path too long; not tracing\n");
        return;
    }
    std::strcpy(trace_path, path);
    if (const char* v = std::getenv("TROUPE_TRACE_EVENTS")) {
        char* end = nullptr;
        const unsigned long n = std::strtoul(v, &end, 10);
        if (end != v && n > 0) {
            std::size_t c = 1024;
            while (c < n && c < (std::size_t{1} << 24)) c <<= 1;
            capacity = c;
        }
    }
    use_tsc.store(invariant_tsc(), std::memory_order_relaxed);
    origin_ns = steady_ns();
    origin_ticks = now();
    // Registered now, before (or while) the first cluster is constructed:
    // so it runs after the default cluster and every other static that
    // finished construction later is destroyed (their processors joined).
    std::atexit(&write_at_exit);
    recording.store(true, std::memory_order_seq_cst);
    install_fatal_handlers();
}

void flush_now(const char* why) noexcept {
    if (!on() || !trace_path[0]) return;
    (void)write(trace_path, why);
}

bool flusher_running() noexcept { return flusher.load(std::memory_order_acquire); }

void set_park_reason(const char* reason) noexcept {
    if (buffer* b = this_buffer()) b->park_reason = reason;
}

static const char* take_park_reason() noexcept {
    buffer* b = tls_buffer;
    if (!b) return nullptr;
    return std::exchange(b->park_reason, nullptr);
}

void run_slice(const void* fiber, std::uint64_t t0, slice_end how) noexcept {
    const char* why = how == slice_end::park ? take_park_reason() : nullptr;
    append(kind::run, static_cast<std::uint8_t>(how), 0, t0, now(), fiber, as_word(why), 0);
}

void spawn(const void* fiber, const char* name) noexcept {
    // The name is copied (16 bytes at most): it need not outlive the thread.
    std::uint64_t words[2] = {0, 0};
    if (name) std::memcpy(words, name, ::strnlen(name, sizeof words));
    const std::uint64_t t = now();
    append(kind::spawn, name ? 1 : 0, 0, t, t, fiber, words[0], words[1]);
}

void unpark(const void* target, std::uint64_t t0, placed how) noexcept {
    append(kind::unpark, static_cast<std::uint8_t>(how), 0, t0, now(), target, 0, 0);
}

void steal(const void* fiber, std::size_t victim, bool handoff) noexcept {
    const std::uint64_t t = now();
    append(kind::steal, handoff ? 1 : 0, static_cast<std::uint32_t>(victim), t, t, fiber, 0, 0);
}

void os_park(const void* self, std::uint64_t t0) noexcept {
    append(kind::os_park, 0, 0, t0, now(), self, as_word(take_park_reason()), 0);
}

void idle(const void* member, std::uint64_t t0) noexcept {
    append(kind::idle, 0, 0, t0, now(), member, 0, 0);
}

namespace {
// Appends the open run of small batches, ending now, and closes it.
void close_run(buffer& b) noexcept {
    const std::uint64_t t = now();
    append(kind::batch, b.run_instant ? 1 : 0, b.run_messages, b.run_instant ? t : b.run_t0, t,
           nullptr, ~std::uint64_t{0}, b.run_count);
    b.run_t0 = 0;
    b.run_count = b.run_messages = 0;
}
}  // namespace

std::uint64_t batch_begin(std::uint32_t messages) noexcept {
    buffer* b = this_buffer();
    if (!b) return 0;
    if (messages >= big_batch) {
        if (b->run_t0) close_run(*b);
        return now();
    }
    if (!b->run_t0) b->run_t0 = now();
    return 0;
}

void batch_end(std::size_t mailbox, std::uint32_t messages, std::uint64_t t0,
               bool instant) noexcept {
    buffer* b = tls_buffer;
    if (!b) return;
    if (t0) {
        const std::uint64_t t = now();
        append(kind::batch, instant ? 1 : 0, messages, instant ? t : t0, t, nullptr, mailbox, 1);
        return;
    }
    if (!b->run_t0) return;  // recording started mid-batch
    b->run_instant = instant;
    ++b->run_count;
    b->run_messages += messages;
    if (b->run_count >= run_batches) close_run(*b);
}

void batches_idle() noexcept {
    if (buffer* b = tls_buffer; b && b->run_t0) close_run(*b);
}

void rename(const void* fiber, const char* name) noexcept {
    if (!on() || !name) return;
    std::uint64_t words[2] = {0, 0};
    std::memcpy(words, name, ::strnlen(name, sizeof words));
    const std::uint64_t t = now();
    append(kind::rename, 1, 0, t, t, fiber, words[0], words[1]);
}

void name_os_thread(const char* name) noexcept {
    if (!on() || !name) return;
    buffer* b = this_buffer();
    if (!b) return;
    b->labelled.store(false, std::memory_order_relaxed);
    std::snprintf(b->label, sizeof b->label, "%s (OS thread %ld)", name, b->os_tid);
    b->labelled.store(true, std::memory_order_release);
}

void mailbox_steal(std::size_t mailbox, std::size_t victim) noexcept {
    const std::uint64_t t = now();
    append(kind::mailbox_steal, 0, static_cast<std::uint32_t>(victim), t, t, nullptr, mailbox, 0);
}

void label_thread(const char* what, std::size_t index, const char* group) noexcept {
    if (!on()) return;
    buffer* b = this_buffer();
    if (!b) return;
    b->labelled.store(false, std::memory_order_relaxed);
    char number[24] = "";
    if (index != no_index) std::snprintf(number, sizeof number, " %zu", index);
    if (group) std::snprintf(b->label, sizeof b->label, "%s%s (%s)", what, number, group);
    else std::snprintf(b->label, sizeof b->label, "%s%s", what, number);
    b->labelled.store(true, std::memory_order_release);
}

// ---------------------------------------------------------------- writing

namespace {

struct item {
    event e;
    long tid;
};

kind kind_of(const event& e) noexcept { return static_cast<kind>(e.w0 & 0xff); }
std::uint8_t flag_of(const event& e) noexcept { return static_cast<std::uint8_t>(e.w0 >> 8); }
std::uint32_t aux_of(const event& e) noexcept { return static_cast<std::uint32_t>(e.w0 >> 32); }

// A JSON string body (no quotes) with the characters JSON needs escaped.
std::string json_escape(const char* s) {
    std::string out;
    for (; s && *s; ++s) {
        const auto c = static_cast<unsigned char>(*s);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\u%04x", c);
            out += hex;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out;
}

const char* end_name(std::uint8_t how) noexcept {
    switch (static_cast<slice_end>(how)) {
    case slice_end::park: return "park";
    case slice_end::yield: return "yield";
    case slice_end::finish: return "finish";
    case slice_end::none: break;
    }
    return "switch";
}

const char* placed_name(std::uint8_t how) noexcept {
    switch (static_cast<placed>(how)) {
    case placed::os_thread: return "futex wake";
    case placed::handoff: return "hand-off";
    case placed::queued: return "queued";
    case placed::idle_member: return "idle wake";
    }
    return "?";
}

// Copies every buffer's surviving events (see the top of this file).
std::vector<item> collect(std::uint64_t& dropped,
                          std::vector<std::pair<long, std::string>>& names) {
    std::vector<item> all;
    const std::size_t n = std::min(buffers_used.load(std::memory_order_acquire), max_buffers);
    for (std::size_t i = 0; i < n; ++i) {
        buffer* b = buffers[i].load(std::memory_order_acquire);
        if (!b) continue;
        if (b->labelled.load(std::memory_order_acquire)) names.emplace_back(b->os_tid, b->label);
        const std::uint64_t cap = b->mask + 1;
        const std::uint64_t h1 = b->head.load(std::memory_order_acquire);
        const std::uint64_t first = h1 > cap ? h1 - cap : 0;
        std::vector<event> copy(h1 - first);
        for (std::uint64_t k = first; k < h1; ++k) {
            auto* slot = reinterpret_cast<std::uint64_t*>(&b->ring[k & b->mask]);
            auto* out = reinterpret_cast<std::uint64_t*>(&copy[k - first]);
            // acquire (a plain load on x86): the second look at head
            // below cannot move before these reads (the seqlock's read
            // side; a fence would do the same, but TSan does not model it).
            for (std::size_t w = 0; w < event_words; ++w)
                out[w] = std::atomic_ref<std::uint64_t>(slot[w]).load(std::memory_order_acquire);
        }
        const std::uint64_t h2 = b->head.load(std::memory_order_relaxed);
        const std::uint64_t valid = std::max(first, h2 > cap ? h2 - cap : 0);
        dropped += valid;  // overwritten before (or while) we looked
        for (std::uint64_t k = valid; k < h1; ++k) all.push_back({copy[k - first], b->os_tid});
    }
    return all;
}

}  // namespace

bool write(const char* path, const char* ended_by) noexcept {
    if (writing.exchange(true, std::memory_order_acq_rel)) return false;  // one at a time
    struct done {
        ~done() {
            written.store(true, std::memory_order_release);
            writing.store(false, std::memory_order_release);
        }
    } release_writer;
    // Stop first: a thread still appending finishes its event, and the
    // collection below drops whatever it overwrote meanwhile.
    recording.store(false, std::memory_order_seq_cst);
    try {
        std::uint64_t dropped = 0;
        std::vector<std::pair<long, std::string>> names;
        std::vector<item> all = collect(dropped, names);
        if (use_tsc.load(std::memory_order_relaxed)) {
            // TSC ticks to nanoseconds: the rate over the whole recording.
            const std::uint64_t ticks = now(), ns = steady_ns();
            const double per_tick = ticks > origin_ticks
                                        ? static_cast<double>(ns - origin_ns) /
                                              static_cast<double>(ticks - origin_ticks)
                                        : 1.0;
            auto to_ns = [&](std::uint64_t t) {
                return origin_ns +
                       static_cast<std::uint64_t>(
                           static_cast<double>(t > origin_ticks ? t - origin_ticks : 0) * per_tick);
            };
            for (item& i : all) {
                i.e.t0 = to_ns(i.e.t0);
                i.e.t1 = to_ns(i.e.t1);
            }
        }
        std::stable_sort(all.begin(), all.end(),
                         [](const item& x, const item& y) { return x.e.t0 < y.e.t0; });
        const std::uint64_t origin = all.empty() ? 0 : all.front().e.t0;
        const long pid = static_cast<long>(::getpid());

        // User threads: a number per life (a descriptor's address is reused
        // by the next thread made on the same pooled stack) and a name.
        std::unordered_map<std::uint64_t, std::uint64_t> live_id;
        std::vector<std::string> thread_name{""};
        std::vector<std::uint64_t> id_of(all.size(), 0);
        auto id_for = [&](std::uint64_t subject) {
            auto [it, fresh] = live_id.try_emplace(subject, thread_name.size());
            if (fresh) thread_name.push_back("thread " + std::to_string(it->second));
            return it->second;
        };
        auto name_from = [](const event& e, std::uint64_t id) {
            char copy[17] = {};
            std::memcpy(copy, &e.a, 8);
            std::memcpy(copy + 8, &e.b, 8);
            return std::string(copy) + " (" + std::to_string(id) + ")";
        };
        for (std::size_t i = 0; i < all.size(); ++i) {
            const event& e = all[i].e;
            if (kind_of(e) == kind::rename) {
                // The name holds for the whole life (its earlier slices too).
                const std::uint64_t id = id_for(e.subject);
                thread_name[id] = name_from(e, id);
            } else if (kind_of(e) == kind::spawn) {
                const std::uint64_t id = thread_name.size();
                live_id[e.subject] = id;
                std::string name = "thread " + std::to_string(id);
                if (flag_of(e)) name = name_from(e, id);
                thread_name.push_back(name);
                id_of[i] = id;
            } else if (kind_of(e) == kind::run || kind_of(e) == kind::unpark ||
                       kind_of(e) == kind::steal) {
                id_of[i] = id_for(e.subject);
            }
        }
        // Flow arrows: each wake (an unpark, a spawn, an idle-group wake)
        // pairs with its subject's next arrival (a run slice's start, the
        // end of an OS thread's park or idle sleep). Only paired wakes get
        // arrows, so every 's' in the file has its 'f'.
        struct point {
            std::uint64_t t;
            bool departure;
            std::size_t index;
        };
        std::vector<point> points;
        for (std::size_t i = 0; i < all.size(); ++i) {
            const event& e = all[i].e;
            switch (kind_of(e)) {
            case kind::spawn:
            case kind::unpark: points.push_back({e.t0, true, i}); break;
            case kind::run: points.push_back({e.t0, false, i}); break;
            case kind::os_park:
            case kind::idle: points.push_back({e.t1, false, i}); break;
            default: break;
            }
        }
        std::stable_sort(points.begin(), points.end(), [](const point& x, const point& y) {
            return x.t < y.t || (x.t == y.t && x.departure && !y.departure);
        });
        std::unordered_map<std::uint64_t, std::size_t> pending;  // subject -> departure
        std::vector<std::uint64_t> flow_of(all.size(), 0);       // flow id, both ends
        std::uint64_t flows = 0;
        for (const point& p : points) {
            const std::uint64_t subject = all[p.index].e.subject;
            if (p.departure) {
                pending[subject] = p.index;
            } else if (auto it = pending.find(subject); it != pending.end()) {
                flow_of[it->second] = flow_of[p.index] = ++flows;
                pending.erase(it);
            }
        }

        std::FILE* out = std::fopen(path, "w");
        if (!out) {
            std::fprintf(stderr, "troupe: cannot write the trace to %s: %s\n", path,
                         std::strerror(errno));
            return false;
        }
        auto us = [origin](std::uint64_t t) { return static_cast<double>(t - origin) / 1000.0; };
        const std::uint64_t lost = lost_threads.load(std::memory_order_relaxed);
        std::fprintf(out,
                     "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"troupe\","
                     "\"dropped_events\":%" PRIu64 ",\"lost_threads\":%" PRIu64
                     ",\"buffer_events\":%zu,\"ended_by\":\"%s\"},\n\"traceEvents\":[\n",
                     dropped, lost, capacity, ended_by ? json_escape(ended_by).c_str() : "exit");
        if (dropped || lost)
            std::fprintf(stderr,
                         "troupe: trace %s: %" PRIu64
                         " event(s) dropped (each kernel thread keeps its last %zu; raise "
                         "TROUPE_TRACE_EVENTS), %" PRIu64 " thread(s) not recorded\n",
                         path, dropped, capacity, lost);
        std::fprintf(out,
                     "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%ld,\"args\":{\"name\":"
                     "\"troupe\"}}",
                     pid);
        for (const auto& [tid, label] : names)
            std::fprintf(out,
                         ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%ld,\"tid\":%ld,"
                         "\"args\":{\"name\":\"%s\"}}",
                         pid, tid, json_escape(label.c_str()).c_str());
        auto flow = [&](const char* ph, std::uint64_t id, double ts, long tid) {
            std::fprintf(out,
                         ",\n{\"name\":\"wake\",\"cat\":\"wake\",\"ph\":\"%s\",%s\"id\":%" PRIu64
                         ",\"ts\":%.3f,\"pid\":%ld,\"tid\":%ld}",
                         ph, ph[0] == 'f' ? "\"bp\":\"e\"," : "", id, ts, pid, tid);
        };
        for (std::size_t i = 0; i < all.size(); ++i) {
            const event& e = all[i].e;
            const long tid = all[i].tid;
            const double ts = us(e.t0);
            const double dur = us(e.t1) - ts;
            switch (kind_of(e)) {
            case kind::run: {
                const std::string name = json_escape(thread_name[id_of[i]].c_str());
                const char* why = reinterpret_cast<const char*>(e.a);
                std::fprintf(out,
                             ",\n{\"name\":\"%s\",\"cat\":\"run\",\"ph\":\"X\",\"ts\":%.3f,"
                             "\"dur\":%.3f,\"pid\":%ld,\"tid\":%ld,\"args\":{\"thread\":%" PRIu64
                             ",\"end\":\"%s\"%s%s%s}}",
                             name.c_str(), ts, dur, pid, tid, id_of[i], end_name(flag_of(e)),
                             why ? ",\"reason\":\"" : "", why ? json_escape(why).c_str() : "",
                             why ? "\"" : "");
                if (flow_of[i]) flow("f", flow_of[i], ts, tid);
                break;
            }
            case kind::spawn:
            case kind::unpark: {
                const bool spawned = kind_of(e) == kind::spawn;
                const bool fiber = spawned || static_cast<placed>(flag_of(e)) == placed::handoff ||
                                   static_cast<placed>(flag_of(e)) == placed::queued;
                const std::string whom =
                    fiber ? json_escape(thread_name[id_of[i]].c_str()) : std::string("OS thread");
                std::fprintf(out,
                             ",\n{\"name\":\"%s %s\",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%.3f,"
                             "\"dur\":%.3f,\"pid\":%ld,\"tid\":%ld,\"args\":{\"how\":\"%s\"",
                             spawned ? "spawn" : "unpark", whom.c_str(),
                             spawned ? "spawn" : "unpark", ts, dur, pid, tid,
                             spawned ? "new thread" : placed_name(flag_of(e)));
                if (fiber) std::fprintf(out, ",\"thread\":%" PRIu64, id_of[i]);
                std::fprintf(out, "}}");
                if (flow_of[i]) flow("s", flow_of[i], ts, tid);
                break;
            }
            case kind::steal:
                std::fprintf(out,
                             ",\n{\"name\":\"steal\",\"cat\":\"steal\",\"ph\":\"i\",\"s\":\"t\","
                             "\"ts\":%.3f,\"pid\":%ld,\"tid\":%ld,\"args\":{\"thread\":\"%s\","
                             "\"from processor\":%u,\"slot\":\"%s\"}}",
                             ts, pid, tid, json_escape(thread_name[id_of[i]].c_str()).c_str(),
                             aux_of(e), flag_of(e) ? "hand-off" : "queue");
                break;
            case kind::os_park:
            case kind::idle: {
                const bool parked = kind_of(e) == kind::os_park;
                const char* why = reinterpret_cast<const char*>(e.a);
                std::fprintf(out,
                             ",\n{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%.3f,"
                             "\"dur\":%.3f,\"pid\":%ld,\"tid\":%ld,\"args\":{\"reason\":\"%s\"}}",
                             parked ? "parked" : "idle", parked ? "park" : "idle", ts, dur, pid,
                             tid, parked ? (why ? json_escape(why).c_str() : "park") : "idle");
                // The arrow ends where the sleep ends (a wake has no slice
                // after it on an OS thread's track).
                if (flow_of[i]) flow("f", flow_of[i], ts + dur, tid);
                break;
            }
            case kind::batch: {
                // One big batch (its mailbox), or a run of small ones.
                char where[48];
                if (e.a == ~std::uint64_t{0}) where[0] = '\0';
                else std::snprintf(where, sizeof where, ",\"mailbox\":%" PRIu64, e.a);
                if (flag_of(e))
                    std::fprintf(out,
                                 ",\n{\"name\":\"%s\",\"cat\":\"actor\",\"ph\":\"i\","
                                 "\"s\":\"t\",\"ts\":%.3f,\"pid\":%ld,\"tid\":%ld,\"args\":{"
                                 "\"batches\":%" PRIu64 ",\"messages\":%u%s}}",
                                 e.b == 1 ? "actor batch" : "actor batches", ts, pid, tid, e.b,
                                 aux_of(e), where);
                else
                    std::fprintf(out,
                                 ",\n{\"name\":\"%s\",\"cat\":\"actor\",\"ph\":\"X\","
                                 "\"ts\":%.3f,\"dur\":%.3f,\"pid\":%ld,\"tid\":%ld,\"args\":{"
                                 "\"batches\":%" PRIu64 ",\"messages\":%u%s}}",
                                 e.b == 1 ? "actor batch" : "actor batches", ts, dur, pid, tid, e.b,
                                 aux_of(e), where);
                break;
            }
            case kind::rename: break;  // applied to the thread's name above
            case kind::mailbox_steal:
                std::fprintf(out,
                             ",\n{\"name\":\"steal mailbox\",\"cat\":\"actor\",\"ph\":\"i\","
                             "\"s\":\"t\",\"ts\":%.3f,\"pid\":%ld,\"tid\":%ld,\"args\":{"
                             "\"mailbox\":%" PRIu64 ",\"from worker\":%u}}",
                             ts, pid, tid, e.a, aux_of(e));
                break;
            }
        }
        std::fprintf(out, "\n]}\n");
        const bool ok = std::fflush(out) == 0 && !std::ferror(out);
        if (std::fclose(out) != 0 || !ok) {
            std::fprintf(stderr, "troupe: writing the trace to %s failed\n", path);
            return false;
        }
        return true;
    } catch (...) {
        std::fprintf(stderr, "troupe: out of memory writing the trace to %s\n", path);
        return false;
    }
}

}  // namespace troupe::detail::trace
