// Processors (kernel threads running user threads) and clusters of them.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "runtime.hpp"
#include "troupe/config.hpp"
#include "troupe/defaults.hpp"
#include "troupe/detail/futex.hpp"
#include "troupe/error.hpp"
#include "troupe/topology.hpp"

#if defined(TROUPE_TSAN)
#include <sanitizer/tsan_interface.h>
#endif

namespace troupe {
namespace detail {

namespace {
[[gnu::tls_model("initial-exec")]] thread_local processor* tls_processor = nullptr;
}

[[gnu::noinline]] processor* current_processor() noexcept { return tls_processor; }

processor::processor(cluster_impl& c, std::size_t i, int pin_pu)
    : owner(c), index(i), pin_pu_(pin_pu), rng_(static_cast<std::uint32_t>(i * 2654435761u + 1)) {}

void processor::start() {
    kthread_ = std::thread([this] { run(); });
}

void processor::join_kernel_thread() {
    if (kthread_.joinable()) kthread_.join();
}

bool processor::push(fiber* f) noexcept {
    processor* self = current_processor();
    // Once `f` is queued it may run, finish, and let the cluster be
    // destroyed while we still look at this processor to wake it: a pusher
    // from outside the cluster registers itself so the destructor waits.
    const bool outside = self == nullptr || &self->owner != &owner;
    if (outside) owner.remote_pushes.fetch_add(1, std::memory_order_seq_cst);
    struct done_guard {
        std::atomic<int>* counter;
        ~done_guard() {
            if (counter) counter->fetch_sub(1, std::memory_order_release);
        }
    } done{outside ? &owner.remote_pushes : nullptr};
    qlock_.lock();
    if (retired_) {
        qlock_.unlock();
        return false;
    }
    f->ready_next = nullptr;
    if (tail_) tail_->ready_next = f; else head_ = f;
    tail_ = f;
    // seq_cst RMW, not a plain store: with the seq_cst read of sleep_word_
    // below it forms the pusher's half of a Dekker handshake with idle()
    // (store asleep, then re-read qsize_). A plain store could still sit in
    // the store buffer when we read `awake`, losing the wake-up.
    const std::size_t n = qsize_.fetch_add(1, std::memory_order_seq_cst) + 1;
    qlock_.unlock();

    if (self == this) {
        // Our own queue: we will run it. Wake a helper only for surplus work.
        if (n >= 2 && owner.sleepers.load(std::memory_order_seq_cst) > 0 &&
            owner.spinners.load(std::memory_order_seq_cst) == 0)
            owner.wake_one_sleeper(this);
        return true;
    }
    // seq_cst load pairs with the sleeper's seq_cst store + re-check under
    // qlock_: either we see `asleep`, or its re-check sees our item.
    if (sleeping()) {
        wake();
    } else if (owner.sleepers.load(std::memory_order_seq_cst) > 0 &&
               owner.spinners.load(std::memory_order_seq_cst) == 0) {
        owner.wake_one_sleeper(this);  // we are busy: let an idle one steal it
    }
    return true;
}

fiber* processor::pop() noexcept {
    // seq_cst: a sleeper's re-check (see push) must not read a stale 0.
    if (qsize_.load(std::memory_order_seq_cst) == 0) return nullptr;
    qlock_.lock();
    fiber* f = head_;
    if (f) {
        head_ = f->ready_next;
        if (!head_) tail_ = nullptr;
        qsize_.fetch_sub(1, std::memory_order_relaxed);
    }
    qlock_.unlock();
    return f;
}

fiber* processor::try_steal_from() noexcept {
    if (qsize_.load(std::memory_order_seq_cst) == 0 || !qlock_.try_lock()) return nullptr;
    fiber* f = head_;
    if (f) {
        head_ = f->ready_next;
        if (!head_) tail_ = nullptr;
        qsize_.fetch_sub(1, std::memory_order_relaxed);
    }
    qlock_.unlock();
    return f;
}

void processor::wake() noexcept {
    if (sleep_word_.exchange(awake, std::memory_order_seq_cst) == asleep) futex_wake(sleep_word_);
}

void processor::request_retire() noexcept {
    retire_.store(true, std::memory_order_seq_cst);
    wake();
}

void processor::request_stop() noexcept {
    stop_.store(true, std::memory_order_seq_cst);
    wake();
}

fiber* processor::find_work() noexcept {
    if (fiber* f = pop()) return f;
    if (fiber* f = owner.steal(*this)) {
#if defined(TROUPE_STATISTICS)
        counters.steals.fetch_add(1, std::memory_order_relaxed);
#endif
        return f;
    }
    return nullptr;
}

fiber* processor::idle() noexcept {
    owner.spinners.fetch_add(1, std::memory_order_seq_cst);
    for (int i = 0; i < defaults::idle_spins; ++i) {
        if (fiber* f = find_work()) {
            owner.spinners.fetch_sub(1, std::memory_order_seq_cst);
            return f;
        }
        if (retire_.load(std::memory_order_relaxed) || stop_.load(std::memory_order_relaxed)) break;
        if (i % 16 == 15) std::this_thread::yield(); else cpu_relax();
    }
    // Announce the sleep before the last look: a pusher that misses our
    // `asleep` must have pushed before our re-check (all seq_cst).
    owner.sleepers.fetch_add(1, std::memory_order_seq_cst);
    owner.spinners.fetch_sub(1, std::memory_order_seq_cst);
    sleep_word_.store(asleep, std::memory_order_seq_cst);
    fiber* f = find_work();
    if (!f && !retire_.load(std::memory_order_seq_cst) && !stop_.load(std::memory_order_seq_cst)) {
#if defined(TROUPE_STATISTICS)
        counters.sleeps.fetch_add(1, std::memory_order_relaxed);
#endif
        while (sleep_word_.load(std::memory_order_seq_cst) == asleep) futex_wait(sleep_word_, asleep);
    }
    sleep_word_.store(awake, std::memory_order_relaxed);
    owner.sleepers.fetch_sub(1, std::memory_order_seq_cst);
    return f;
}

void processor::run() noexcept {
    tls_processor = this;
#if defined(TROUPE_TSAN)
    tsan_self = __tsan_get_current_fiber();
#endif
    if (pin_pu_ >= 0) {
        try {
            topology().bind_current_thread(static_cast<std::size_t>(pin_pu_));
        } catch (...) {
            // Pinning is an optimisation; an unbindable machine still runs.
        }
    }
    for (;;) {
        // Checked between threads, not only when idle: a busy processor
        // must still retire promptly when its cluster shrinks.
        if (retire_.load(std::memory_order_acquire)) break;
        fiber* f = find_work();
        if (!f) {
            if (stop_.load(std::memory_order_acquire)) break;
            f = idle();
            if (!f) continue;
            if (retire_.load(std::memory_order_acquire)) {
                owner.schedule(f);  // not ours to run any more
                break;
            }
        }
        run_fiber(f);
    }
    if (retire_.load(std::memory_order_acquire)) {
        // Close the queue, then hand what is left to the active processors.
        qlock_.lock();
        retired_ = true;
        fiber* list = head_;
        head_ = tail_ = nullptr;
        qsize_.store(0, std::memory_order_relaxed);
        qlock_.unlock();
        while (list) {
            fiber* next = list->ready_next;
            owner.schedule(list);
            list = next;
        }
    }
    tls_processor = nullptr;
}

// ---------------------------------------------------------------- cluster

namespace {
std::size_t default_processor_count() {
    if (const char* env = std::getenv("TROUPE_PROCESSORS")) {
        long n = std::strtol(env, nullptr, 10);
        if (n > 0) return static_cast<std::size_t>(n);
    }
    try {
        return std::max<std::size_t>(1, topology().pu_count());
    } catch (...) {
        return std::max(1u, std::thread::hardware_concurrency());
    }
}
}  // namespace

cluster_impl::cluster_impl(const cluster_options& o) : name(o.name), pin_(o.pin) {
    set_processor_count(o.processors ? o.processors : default_processor_count());
}

cluster_impl::~cluster_impl() {
    // Wait for every thread of this cluster to finish (exactly one unpark:
    // whoever takes the waiter pointer back with the exchange).
    if (live_.load(std::memory_order_acquire) != 0) {
        context& me = this_context();
        shutdown_waiter_.store(&me, std::memory_order_seq_cst);
        if (live_.load(std::memory_order_seq_cst) != 0 ||
            shutdown_waiter_.exchange(nullptr, std::memory_order_seq_cst) == nullptr)
            park();
    }
    for (auto& p : all_) p->request_stop();
    for (auto& p : all_) p->join_kernel_thread();
    // An outside pusher may still be in its wake step (see push()).
    while (remote_pushes.load(std::memory_order_acquire) != 0) std::this_thread::yield();
#if defined(TROUPE_STATISTICS)
    auto s = statistics();
    std::fprintf(stderr,
                 "troupe statistics: cluster %s: threads %llu, switches %llu, steals %llu, sleeps %llu\n",
                 name ? name : "(unnamed)", (unsigned long long)s.threads_created,
                 (unsigned long long)s.context_switches, (unsigned long long)s.steals,
                 (unsigned long long)s.sleeps);
#endif
}

void cluster_impl::thread_finished() noexcept {
    if (live_.fetch_sub(1, std::memory_order_seq_cst) == 1) {
        if (context* w = shutdown_waiter_.exchange(nullptr, std::memory_order_seq_cst)) unpark(*w);
    }
}

void cluster_impl::set_processor_count(std::size_t n) {
    if (n == 0) n = 1;
    if (n > max_processors)
        throw std::invalid_argument("troupe::cluster: at most " + std::to_string(max_processors) +
                                    " processors");
    std::lock_guard g{resize_mutex_};
    std::size_t cur = active_.load(std::memory_order_acquire);
    while (cur < n) {
        int pu = -1;
        if (pin_) {
            static const std::size_t pus = std::max<std::size_t>(1, topology().pu_count());
            pu = static_cast<int>(cur % pus);
        }
        all_.push_back(std::make_unique<processor>(*this, cur, pu));
        processor* p = all_.back().get();
        slots_[cur].store(p, std::memory_order_release);
        active_.store(cur + 1, std::memory_order_release);
        p->start();
        ++cur;
    }
    while (cur > n) {
        processor* p = slots_[cur - 1].load(std::memory_order_acquire);
        // Unpublish first so no new work is placed there, then retire it: it
        // moves whatever is still queued to the remaining processors.
        active_.store(cur - 1, std::memory_order_seq_cst);
        slots_[cur - 1].store(nullptr, std::memory_order_release);
        p->request_retire();
        p->join_kernel_thread();
        --cur;
    }
}

processor* cluster_impl::pick() noexcept {
    for (;;) {
        std::size_t n = active_.load(std::memory_order_acquire);
        std::size_t i = round_robin_.fetch_add(1, std::memory_order_relaxed) % (n ? n : 1);
        if (processor* p = active_at(i)) return p;
        cpu_relax();  // a resize is in flight
    }
}

void cluster_impl::place(fiber* f, processor* p) noexcept {
    while (!p->push(f)) p = pick();  // retired: go elsewhere
}

void cluster_impl::schedule(fiber* f) noexcept {
    place(f, f->last ? f->last : pick());
}

void cluster_impl::schedule_new(fiber* f) noexcept {
    processor* self = current_processor();
    place(f, self && &self->owner == this ? self : pick());
}

fiber* cluster_impl::steal(processor& thief) noexcept {
    const std::size_t n = active_.load(std::memory_order_acquire);
    if (n <= 1) return nullptr;
    // xorshift: a cheap per-thief random starting victim.
    std::uint32_t& r = thief.rng_;
    r ^= r << 13;
    r ^= r >> 17;
    r ^= r << 5;
    const std::size_t start = r % n;
    for (std::size_t k = 0; k < n; ++k) {
        processor* v = active_at((start + k) % n);
        if (!v || v == &thief) continue;
        if (fiber* f = v->try_steal_from()) return f;
    }
    return nullptr;
}

void cluster_impl::wake_one_sleeper(processor* except) noexcept {
    const std::size_t n = active_.load(std::memory_order_acquire);
    for (std::size_t i = 0; i < n; ++i) {
        processor* p = active_at(i);
        if (p && p != except && p->sleeping()) {
            p->wake();
            return;
        }
    }
}

cluster_statistics cluster_impl::statistics() const noexcept {
    cluster_statistics s;
    for (auto& p : all_) {
        s.threads_created += p->counters.created.load(std::memory_order_relaxed);
        s.context_switches += p->counters.switches.load(std::memory_order_relaxed);
        s.steals += p->counters.steals.load(std::memory_order_relaxed);
        s.sleeps += p->counters.sleeps.load(std::memory_order_relaxed);
    }
    return s;
}

}  // namespace detail

// ---------------------------------------------------------------- public

cluster::cluster(std::size_t n) : cluster(cluster_options{n, false, nullptr}) {}
cluster::cluster(const cluster_options& o) : impl_(std::make_unique<detail::cluster_impl>(o)) {
    impl_->public_handle = this;
}
cluster::~cluster() = default;
std::size_t cluster::processor_count() const noexcept { return impl_->processor_count(); }
void cluster::set_processor_count(std::size_t n) { impl_->set_processor_count(n); }
std::size_t cluster::live_threads() const noexcept { return impl_->live(); }
cluster_statistics cluster::statistics() const noexcept { return impl_->statistics(); }

cluster& default_cluster() {
    static cluster c{cluster_options{0, false, "default"}};
    return c;
}

cluster& this_cluster() {
    if (detail::processor* p = detail::current_processor()) {
        // The processor's cluster_impl belongs to exactly one cluster object;
        // find it through the back pointer the impl keeps.
        return *p->owner.public_handle;
    }
    return default_cluster();
}

processors::processors(std::size_t n) : previous_(default_cluster().processor_count()) {
    default_cluster().set_processor_count(n);
}

processors::~processors() { default_cluster().set_processor_count(previous_); }

}  // namespace troupe
