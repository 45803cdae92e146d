// The execution trace's recording side: each kernel thread's ring buffer
// (made on its first event), the clock, the recorders the scheduler and
// the actor executor call, and the start when TROUPE_TRACE is set. The
// rings' invariants are at the top of trace_ring.hpp; writing is in
// trace_write.cpp, the writes at exit and on fatal signals in
// trace_flush.cpp (docs/trace.md).
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

#include "diag/trace_ring.hpp"
#include "troupe/detail/trace.hpp"
#include "troupe/knobs.hpp"

namespace troupe::detail::trace {

constinit std::atomic<bool> recording{false};

constinit std::atomic<buffer*> buffers[max_buffers] = {};
constinit std::atomic<std::size_t> buffers_used{0};
constinit std::atomic<std::uint64_t> lost_threads{0};
char trace_path[4096];
// Events per kernel thread: 2^22 (192 MiB of address space per thread,
// reserved with MAP_NORESERVE, so only what a thread records costs memory)
// keeps a few seconds of the busiest processor measured (docs/trace.md,
// "Settings").
std::size_t capacity = 1u << 22;
constinit std::atomic<bool> writing{false};
constinit std::atomic<bool> written{false};
constinit std::atomic<bool> use_tsc{false};
std::uint64_t origin_ticks = 0, origin_ns = 0;

std::uint64_t steady_ns() noexcept {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::steady_clock::now().time_since_epoch())
                                          .count());
}

namespace {

constinit std::atomic<bool> started{false};

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
    const char* path = knobs::value(knobs::trace);
    if (!path || !*path) return;
    if (std::strlen(path) >= sizeof trace_path) {
        std::fprintf(stderr, "troupe: TROUPE_TRACE path too long; not tracing\n");
        return;
    }
    std::strcpy(trace_path, path);
    if (const long n = knobs::get_or(knobs::trace_events, 0, long{1} << 24); n > 0) {
        std::size_t c = 1024;
        while (c < static_cast<std::size_t>(n)) c <<= 1;
        capacity = c;
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

void io_wait(const char* op, int fd, std::uint64_t bytes, std::uint64_t t0) noexcept {
    append(kind::io_wait, 0, static_cast<std::uint32_t>(fd), t0, now(), nullptr, as_word(op),
           bytes);
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

}  // namespace troupe::detail::trace
