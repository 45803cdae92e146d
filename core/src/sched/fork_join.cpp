// Fork-join regions (troupe/parallel.hpp): the workers of one top-level
// parallel call, their helper user threads, stealing, and the helpers'
// sleep list. The design is in docs/forkjoin.md.
#include <pthread.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "diag/registry.hpp"
#include "sched/runtime.hpp"
#include "troupe/cluster.hpp"
#include "troupe/detail/futex.hpp"
#include "troupe/detail/wait_word.hpp"
#include "troupe/parallel.hpp"
#include "troupe/spinlock.hpp"
#include "troupe/thread.hpp"
#include "troupe/topology.hpp"

namespace troupe::detail::fj {

namespace {

// A full (seq_cst) fence. GCC's TSan does not support fences (-Wtsan):
// there a seq_cst read-modify-write of a thread-private atomic stands in
// (the same locked instruction on x86). Only wake-ups depend on it, never
// whether a task runs.
inline void full_fence() noexcept {
#if defined(TROUPE_TSAN)
    thread_local std::atomic<int> fence_word{0};
    fence_word.fetch_add(0, std::memory_order_seq_cst);
#else
    std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

inline std::uint32_t next_random(std::uint32_t& x) noexcept {
    // xorshift32: a thief's starting victim, nothing more.
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
}

// Failed steal attempts before parking (defaults::core::fork_join_spins):
// none when the process may run on one CPU only (its affinity mask), since
// whoever could make work for us cannot run while we spin.
unsigned spin_limit() noexcept {
    static const unsigned limit = affinity_cpu_count() > 1 ? defaults::core::fork_join_spins : 0;
    return limit;
}

const char* const helper_name = "fork-join helper";
const char* const segment_name = "fork-join stack segment";

// The address below which the calling context's stack has less than the
// reserve left: a user thread's from its descriptor, an OS thread's from
// its attributes (looked up once per thread; none known: no limit).
const char* stack_limit_here() noexcept {
    constexpr std::size_t reserve = defaults::core::fork_join_stack_reserve;
    if (fiber* f = current_fiber()) return f->stack_low + reserve;
    thread_local const char* limit = [] {
        pthread_attr_t a;
        if (pthread_getattr_np(pthread_self(), &a) != 0) return static_cast<const char*>(nullptr);
        void* low = nullptr;
        std::size_t size = 0;
        const bool ok = pthread_attr_getstack(&a, &low, &size) == 0 && size > 2 * reserve;
        pthread_attr_destroy(&a);
        return ok ? static_cast<const char*>(low) + reserve : nullptr;
    }();
    return limit;
}

}  // namespace

class region {
public:
    region(cluster& c, std::size_t helpers, context& root_ctx)
        : cluster_(c), count_(helpers + 1), workers_(new worker[helpers + 1]) {
        for (std::size_t i = 0; i < count_; ++i) {
            worker& w = workers_[i];
            w.owner = this;
            w.solo = helpers == 0;
            w.index = static_cast<std::uint32_t>(i);
            w.participants = static_cast<std::uint32_t>(count_);
            w.rng = static_cast<std::uint32_t>(0x9e3779b9u * (i + 1)) | 1u;
        }
        workers_[0].ctx = &root_ctx;
    }

    worker& root() noexcept { return workers_[0]; }
    cluster& where() noexcept { return cluster_; }

    // Called by the root at its first fork (only the root has a deque
    // before the helpers exist). A helper that cannot be started (no
    // memory, no stack) is simply missing: the region's work never depends
    // on helpers, every task is reclaimed by its forker if nobody steals it.
    void start_helpers() noexcept {
        helpers_started_ = true;
        try {
            helpers_.reserve(count_ - 1);
            for (std::size_t i = 1; i < count_; ++i)
                helpers_.emplace_back(thread_attributes{0, &cluster_, helper_name},
                                      [this, i] { helper_main(workers_[i]); });
        } catch (...) {}
    }
    bool helpers_started() const noexcept { return helpers_started_; }

    // The root, once its call is complete (every task was reclaimed):
    // stop and join the helpers.
    void finish() noexcept {
        // seq_cst: a helper going to sleep re-checks done_ after it joined
        // the sleep list (see sleep), or wake_all below finds it there.
        done_.store(true, std::memory_order_seq_cst);
        wake_all();
        helpers_.clear();  // joins each (a helper never throws)
    }

    // A task of another worker of the region, or nullptr.
    task* steal_for(worker& self) noexcept {
        const std::size_t start = next_random(self.rng) % count_;
        for (std::size_t k = 0; k < count_; ++k) {
            worker& v = workers_[(start + k) % count_];
            if (&v == &self) continue;
            if (task* x = v.tasks.steal()) {
                // More left behind: pass the news on to a sleeper (wakes
                // spread one steal at a time, like Go's spinning threads).
                if (sleepers_.load(std::memory_order_seq_cst) > 0 && !v.tasks.looks_empty())
                    wake_one();
                return x;
            }
        }
        return nullptr;
    }

    // Runs a stolen task on `self`, records its exception, and wakes its
    // forker if it parked waiting for it.
    static void execute(worker& self, task& x) noexcept {
        // Read before the state exchange: once `done` is visible the
        // forker may return and the task (on its stack) is gone.
        context* joiner = x.joiner;
        try {
            x.run(x, self);
        } catch (...) {
            x.error = std::current_exception();
        }
        // acq_rel: release publishes the results and x.error to the forker
        // (its acquire load of `done`); the old value says whether it parked
        // (its CAS pending -> waiting came first), and then only this
        // unpark ends that park.
        // The forker may see `done` and return (its thread may end) before
        // our unpark: announce it first (detail/wake_guard.hpp).
        wake_guard g{*joiner};
        if (x.state.exchange(task::done, std::memory_order_acq_rel) == task::waiting)
            unpark(*joiner);
    }

    void wake_one() noexcept {
        if (sleepers_.load(std::memory_order_seq_cst) == 0) return;
        lock_.lock();
        worker* s = sleepers_head_;
        if (s) {
            sleepers_head_ = s->next_sleeper;
            s->asleep.store(false, std::memory_order_release);
            sleepers_.fetch_sub(1, std::memory_order_relaxed);
        }
        lock_.unlock();
        // The sleeper parks exactly once per time it joined the list, and
        // only we took it off: this unpark is that park's one wake.
        if (s) unpark(*s->ctx);
    }

    void wake_all() noexcept {
        while (sleepers_.load(std::memory_order_seq_cst) > 0) wake_one();
    }

    bool any_work() const noexcept {
        for (std::size_t i = 0; i < count_; ++i)
            if (!workers_[i].tasks.looks_empty()) return true;
        return false;
    }

    bool done() const noexcept { return done_.load(std::memory_order_acquire); }

    // A helper with nothing to steal: join the sleep list, re-check, park.
    void sleep(worker& me) noexcept {
        lock_.lock();
        me.next_sleeper = sleepers_head_;
        sleepers_head_ = &me;
        me.asleep.store(true, std::memory_order_relaxed);
        // seq_cst RMW, then the seq_cst loads of the re-check: a forker
        // that pushed onto an empty deque fences, then reads sleepers_; so
        // either it sees us and wakes one, or we see its task here.
        sleepers_.fetch_add(1, std::memory_order_seq_cst);
        lock_.unlock();
        if (done_.load(std::memory_order_seq_cst) || any_work()) {
            lock_.lock();
            const bool still_listed = me.asleep.load(std::memory_order_relaxed);
            if (still_listed) {
                worker** p = &sleepers_head_;
                while (*p != &me) p = &(*p)->next_sleeper;
                *p = me.next_sleeper;
                me.asleep.store(false, std::memory_order_relaxed);
                sleepers_.fetch_sub(1, std::memory_order_relaxed);
            }
            lock_.unlock();
            if (still_listed) return;
            // A waker took us off the list: its unpark is on the way, so
            // park once to consume it (the one park it is matched with).
        }
        park_until([&me] { return !me.asleep.load(std::memory_order_acquire); }, "fork-join idle",
                   nullptr, this);
    }

    void helper_main(worker& me) noexcept {
        context& self = this_context();
        me.ctx = &self;
        me.stack_limit = stack_limit_here();
        context_access::fork_join(self) = &me;
        unsigned idle = 0;
        while (!done()) {
            if (task* x = steal_for(me)) {
                execute(me, *x);
                idle = 0;
                continue;
            }
            if (++idle < spin_limit()) {
                cpu_relax();
                continue;
            }
            idle = 0;
            sleep(me);
        }
        context_access::fork_join(self) = nullptr;
    }

private:
    cluster& cluster_;
    const std::size_t count_;
    std::unique_ptr<worker[]> workers_;
    bool helpers_started_ = false;  // the root's, read and written by it only
    std::vector<thread> helpers_;
    std::atomic<bool> done_{false};
    spinlock lock_{"fork-join sleep list"};
    worker* sleepers_head_ = nullptr;  // guarded by lock_
    std::atomic<int> sleepers_{0};
};

worker* current_worker() noexcept {
    return static_cast<worker*>(context_access::fork_join(this_context()));
}

void notify_work(worker& w) noexcept {
    region& r = *w.owner;
    if (!r.helpers_started()) {
        // Only the root can push before the helpers exist.
        r.start_helpers();
        return;
    }
    // The push (bottom_ store) before the sleepers_ load: the publication
    // half of the Dekker pair with region::sleep.
    full_fence();
    r.wake_one();
}

void wait_stolen(worker& w, task& t) noexcept {
    region& r = *w.owner;
    unsigned idle = 0;
    // acquire: pairs with execute's exchange (the task's results, error).
    while (t.state.load(std::memory_order_acquire) != task::done) {
        if (task* x = r.steal_for(w)) {
            region::execute(w, *x);
            idle = 0;
            continue;
        }
        if (++idle < spin_limit()) {
            cpu_relax();
            continue;
        }
        // Park until the thief's exchange says done (it unparks us only if
        // it sees `waiting`, i.e. after this CAS).
        std::uint32_t expected = task::pending;
        if (t.state.compare_exchange_strong(expected, task::waiting, std::memory_order_acq_rel))
            park_until([&t] { return t.state.load(std::memory_order_acquire) == task::done; },
                       "fork-join join", nullptr, &t);
    }
}

void run_on_fresh_stack(worker& w, void (*fn)(void*), void* arg) {
    // The caller parks in join meanwhile and touches `w` again only after
    // it: the segment is w's only user (thread start and join order it).
    context* const ctx = w.ctx;
    const char* const limit = w.stack_limit;
    thread segment{thread_attributes{0, &w.owner->where(), segment_name}, [&w, fn, arg] {
                       context& self = this_context();
                       w.ctx = &self;
                       w.stack_limit = stack_limit_here();
                       context_access::fork_join(self) = &w;
                       fn(arg);
                       context_access::fork_join(self) = nullptr;
                   }};
    segment.join();
    w.ctx = ctx;
    w.stack_limit = limit;
}

std::size_t auto_grain(const worker& w, std::size_t n) noexcept {
    return std::max<std::size_t>(1, n / (32 * std::size_t{w.participants}));
}

// The root's state beyond the region: lending (an OS thread root).
struct root_state {
    region reg;
    std::optional<lend_while_blocked> lend;
    root_state(cluster& c, std::size_t helpers, context& self) : reg(c, helpers, self) {}
};

void scope::make_root() {
    // An OS thread that lends itself to a cluster forks onto that one.
    cluster_impl* lending = current_fiber() ? nullptr : lending_to();
    cluster& c = lending && lending->public_handle ? *lending->public_handle : this_cluster();
    processor* p = current_fiber() ? current_processor() : nullptr;
    const std::size_t procs = c.processor_count();
    // A user thread of this cluster occupies one of its processors already.
    const std::size_t helpers = p && &p->owner == &c.impl() ? procs - 1 : procs;
    context& self = this_context();
    auto* rs = new root_state(c, helpers, self);
    // An OS thread root lends itself to the cluster while it waits (for a
    // stolen task, for the helpers to finish): it runs the helpers itself
    // if every processor is busy.
    if (!self.is_user_thread()) rs->lend.emplace(c);
    made_ = rs;
    w_ = &rs->reg.root();
    w_->stack_limit = stack_limit_here();
    context_access::fork_join(self) = w_;
}

void scope::tear_down() noexcept {
    made_->reg.finish();
    context_access::fork_join(this_context()) = nullptr;
    delete made_;
}

}  // namespace troupe::detail::fj
