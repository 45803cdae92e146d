// Clusters: pools of processors, resizing and placement. The wake rule is
// the cluster's idle group's (idle_group.cpp).
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "diag/registry.hpp"
#include "sched/runtime.hpp"
#include "troupe/config.hpp"
#include "troupe/defaults/core.hpp"
#include "troupe/detail/futex.hpp"
#include "troupe/detail/trace.hpp"
#include "troupe/error.hpp"
#include "troupe/knobs.hpp"
#include "troupe/thread.hpp"
#include "troupe/topology.hpp"

namespace troupe {
namespace detail {

// ---------------------------------------------------------------- cluster

namespace {
// A non-negative duration setting: the option if given, else the
// environment variable (microseconds), else the default.
std::int64_t setting_ns(std::chrono::nanoseconds option, const knobs::knob& env,
                        std::chrono::microseconds fallback) noexcept {
    if (option.count() >= 0) return option.count();
    if (const long us = knobs::get_or(env, -1, LONG_MAX / 1000); us >= 0)
        return static_cast<std::int64_t>(us) * 1000;
    return std::chrono::nanoseconds(fallback).count();
}

schedule_settings resolve(const cluster_options& o) noexcept {
    schedule_settings s{};
    s.idle_spin_ns = setting_ns(o.idle_spin, knobs::idle_spin_us, defaults::core::idle_spin);
    s.handoff_grace_ns = std::max<std::int64_t>(
        1000, setting_ns(o.handoff_grace, knobs::handoff_grace_us, defaults::core::handoff_grace));
    s.handoff_watch_ns = std::max<std::int64_t>(
        s.handoff_grace_ns, std::chrono::nanoseconds(defaults::core::handoff_watch_max).count());
    s.handoff_streak = defaults::core::handoff_streak;
    s.held_look_ns = o.held_slot_look.count() >= 0
                         ? o.held_slot_look.count()
                         : std::chrono::nanoseconds(defaults::core::held_slot_look).count();
    return s;
}
}  // namespace

cluster_impl::cluster_impl(const cluster_options& o)
    : idlers(max_processors, idle_group::spinner_duty::finds_work),
      name(o.name),
      settings(resolve(o)),
      pin_(o.pin) {
    watch_init_once();            // TROUPE_DUMP_SIGNAL, TROUPE_DEADLOCK (first cluster)
    trace::start_if_requested();  // before any processor runs (docs/trace.md)
    set_processor_count(o.processors ? o.processors : available_concurrency());
    register_cluster(*this);
}

cluster_impl::~cluster_impl() {
    // Wait for every thread of this cluster to finish (exactly one unpark:
    // whoever takes the waiter pointer back with the exchange).
    if (live_.load(std::memory_order_acquire) != 0) {
        // For dumps: the destroyer waits for the cluster's threads.
        wait_scope rec("cluster destruction", name, this);
        context& me = this_context();
        shutdown_waiter_.store(&me, std::memory_order_seq_cst);
        if (live_.load(std::memory_order_seq_cst) != 0 ||
            shutdown_waiter_.exchange(nullptr, std::memory_order_seq_cst) == nullptr)
            park();
    }
    // Out of the registry before its processors go (a dump reads them).
    unregister_cluster(*this);
    const std::size_t made = made_.load(std::memory_order_acquire);
    for (std::size_t i = 0; i < made; ++i) all_[i]->request_stop();
    for (std::size_t i = 0; i < made; ++i) all_[i]->join_kernel_thread();
    // An outside pusher may still be in its wake step (see push()).
    while (remote_pushes.load(std::memory_order_acquire) != 0) std::this_thread::yield();
#if defined(TROUPE_STATISTICS)
    auto s = statistics();
    std::fprintf(
        stderr,
        "troupe statistics: cluster %s: threads %llu, switches %llu, hand-offs %llu, steals %llu, "
        "sleeps %llu\n",
        name ? name : "(unnamed)", (unsigned long long)s.threads_created,
        (unsigned long long)s.context_switches, (unsigned long long)s.handoffs,
        (unsigned long long)s.steals, (unsigned long long)s.sleeps);
#endif
}

void cluster_impl::thread_finished() noexcept {
    if (live_.fetch_sub(1, std::memory_order_seq_cst) == 1) {
        if (context* w = shutdown_waiter_.exchange(nullptr, std::memory_order_seq_cst)) unpark(*w);
    }
}

void cluster_impl::lock_resize() noexcept {
    // acquire: see the previous resizer's processor array. yield() parks
    // nothing: a user thread yields its processor, an OS thread the CPU.
    while (resizing_.exchange(true, std::memory_order_acquire)) yield_now();
}

void cluster_impl::unlock_resize() noexcept { resizing_.store(false, std::memory_order_release); }

void cluster_impl::set_processor_count(std::size_t n) {
    if (n == 0) n = 1;
    if (n > max_processors)
        throw std::invalid_argument("troupe::cluster: at most " + std::to_string(max_processors) +
                                    " processors");
    lock_resize();
    struct unlock_guard {
        cluster_impl* c;
        ~unlock_guard() { c->unlock_resize(); }
    } unlock{this};
    std::size_t cur = active_.load(std::memory_order_acquire);
    while (cur < n) {
        int pu = -1;
        if (pin_) {
            static const std::size_t pus = std::max<std::size_t>(1, topology().pu_count());
            pu = static_cast<int>(cur % pus);
        }
        processor* p;
        if (cur < made_.load(std::memory_order_relaxed)) {
            p = all_[cur].get();  // retired earlier and joined: reopen it
            p->reset_after_retire();
        } else {
            all_[cur] = std::make_unique<processor>(*this, cur, pu);
            p = all_[cur].get();
            // release: statistics() reads all_[i] for i < made_ without a lock.
            made_.store(cur + 1, std::memory_order_release);
        }
        p->start();  // may throw: then it is not published (basic guarantee)
        slots_[cur].store(p, std::memory_order_release);
        active_.store(cur + 1, std::memory_order_release);
        idlers.add_member(p->idle_);  // member cur: the wake rule can find it now
        ++cur;
    }
    if (cur > n) {
        // Unpublish first so no new work is placed there, then retire: each
        // moves whatever is still queued to the remaining processors.
        for (std::size_t i = cur; i-- > n;) {
            processor* p = slots_[i].load(std::memory_order_acquire);
            active_.store(i, std::memory_order_seq_cst);
            slots_[i].store(nullptr, std::memory_order_release);
            idlers.remove_last_member();  // member i (request_retire wakes it if asleep)
            p->request_retire();
        }
        // A user thread of this cluster running on a retiring processor
        // must not join its own kernel thread: it yields, and the retiring
        // processor hands it to one that stays (see cluster.hpp).
        if (processor* self = current_processor(); self && &self->owner == this)
            while (current_processor()->index >= n) this_thread::yield();
        for (std::size_t i = n; i < cur; ++i) all_[i]->join_kernel_thread();
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

void cluster_impl::make_ready(fiber* f) noexcept {
    // The traced variant out of line: here one flag test, and the calls
    // below stay tail calls.
    if (trace::on()) [[unlikely]]
        return make_ready_traced(f);
    processor* self = current_processor();
    if (self && &self->owner == this) {
        // Woken by a thread of this cluster (or its scheduler): run where
        // the data it was handed is, next.
        self->hand_off(f);
        return;
    }
    if (!self) [[unlikely]] {
        if (ready_on_held_slot(f)) return;
    }
    schedule(f);
}

// An OS thread that holds a slot of this cluster between its waits
// (lend_while_blocked) is that slot's running thread, as Go's main
// goroutine is its P's: what it makes ready joins the slot's queue (it runs
// there at the thread's next wait, or an idle processor steals it), rather
// than waking the processor it last ran on.
bool cluster_impl::ready_on_held_slot(fiber* f) noexcept {
    processor* h = held_slot();
    return h && &h->owner == this && h->push(f);
}

// make_ready recording the trace's wake (the flow arrow's tail): its time
// is taken before f can run, and only f's address is recorded after (f may
// be running by then).
[[gnu::noinline, gnu::cold]] void cluster_impl::make_ready_traced(fiber* f) noexcept {
    const std::uint64_t t0 = trace::now();
    processor* self = current_processor();
    if (self && &self->owner == this) {
        self->hand_off(f);
        trace::unpark(f, t0, trace::placed::handoff);
        return;
    }
    if (!self && ready_on_held_slot(f)) {
        trace::unpark(f, t0, trace::placed::queued);
        return;
    }
    schedule(f);
    trace::unpark(f, t0, trace::placed::queued);
}

void cluster_impl::schedule(fiber* f) noexcept { place(f, f->last ? f->last : pick()); }

void cluster_impl::schedule_new(fiber* f) noexcept {
    // New threads join the spawner's queue (not its hand-off slot); the wake
    // rule wakes an idle processor to steal them, so they spread.
    processor* self = current_processor();
    place(f, self && &self->owner == this ? self : pick());
}

cluster_statistics cluster_impl::statistics() const noexcept {
    cluster_statistics s;
    s.threads_created = created_outside.load(std::memory_order_relaxed);
    // Entries below made_ never change once published: no lock needed, so
    // this may run concurrently with set_processor_count.
    const std::size_t made = made_.load(std::memory_order_acquire);
    for (std::size_t i = 0; i < made; ++i) {
        const processor& p = *all_[i];
        s.threads_created += p.counters.created.load(std::memory_order_relaxed);
        s.context_switches += p.counters.switches.load(std::memory_order_relaxed);
        s.steals += p.counters.steals.load(std::memory_order_relaxed);
        s.sleeps += p.counters.sleeps.load(std::memory_order_relaxed);
        s.handoffs += p.counters.handoffs.load(std::memory_order_relaxed);
    }
    return s;
}

}  // namespace detail

// ---------------------------------------------------------------- public

cluster::cluster(std::size_t n)
    : cluster([n] {
          cluster_options o;
          o.processors = n;
          return o;
      }()) {}
cluster::cluster(const cluster_options& o) : impl_(std::make_unique<detail::cluster_impl>(o)) {
    impl_->public_handle = this;
}
cluster::~cluster() {
    if (impl_ && detail::exiting_asleep.load(std::memory_order_acquire) && impl_->live() != 0)
        [[unlikely]] {
        // exit() from the deadlock handler: every thread is asleep for
        // ever, so waiting for them would hang the exit. The process is
        // ending: leave the threads and processors (asleep) as they are.
        detail::unregister_cluster(*impl_);
        (void)impl_.release();
    }
}
std::size_t cluster::processor_count() const noexcept { return impl_->processor_count(); }
void cluster::set_processor_count(std::size_t n) { impl_->set_processor_count(n); }
std::size_t cluster::live_threads() const noexcept { return impl_->live(); }
cluster_statistics cluster::statistics() const noexcept { return impl_->statistics(); }

cluster& default_cluster() {
    static cluster c{[] {
        cluster_options o;
        o.name = "default";
        return o;
    }()};
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
