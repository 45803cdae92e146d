// Actor timers (troupe/actor_timer.hpp): a lazily cancelled heap with its
// own service thread, and the state machine of a timed message between
// that thread, the worker delivering it and cancel().
//
// The heap. Entries are {deadline, record} pairs in one array, a binary
// min-heap on the deadline; a record does not know its position. Cancel
// never searches or sifts a large heap: it moves the record's state to
// `cancelled` (one compare-and-swap on the record) and leaves the entry in
// place, dead. The service thread drops a dead entry when it reaches the
// top (finding it cancelled instead of firing it), and the cancel that
// makes dead entries a quarter of the heap compacts it (one pass keeping
// the live entries, a heapify, the dead records freed after the lock),
// so dead entries never hold more than a third of the live ones' memory
// and each cancel pays O(1) amortized: Go's runtime timers work the same
// way. A small heap (<= eager_limit entries) is searched and the entry
// removed at once: a program with a few timers gets its memory back when
// cancel() returns.
//
// Why a thread of its own and not core's timer service: that service runs
// its callbacks under its heap lock, so a callback could never re-arm the
// node that would wake this heap next (arming takes the same lock), and
// its heap removes a cancelled node eagerly (the cost this design avoids).
// The thread sleeps on a futex until the earliest deadline, like core's; it
// is registered as a wake source, so the everyone-asleep check counts it
// as troupe's own and knows a pending actor timer will wake someone.
//
// States (timer_core::state) and who moves them:
//   armed    -> fired      the service thread, firing it (not under the lock)
//   armed    -> cancelled  cancel()
//   fired    -> running    the delivery, before the receive
//   fired    -> cancelled  cancel() (the queued envelope is then dropped)
//   fired    -> done       the drop of an envelope to a finished actor
//   running  -> running_cancelled  cancel() during the receive
//   running  -> armed      a periodic timer's delivery re-arming it (under
//                          the heap lock, with the push of its entry)
//   running(_cancelled) -> done / cancelled  the delivery's end
// Each move is one compare-and-swap, so a delivery starts (fired -> running)
// only if no cancel came first: once cancel() returns, no delivery starts.
// An entry in the heap (or in the service's batch) is `armed` or
// `cancelled`: it leaves the heap before it can be fired, and a periodic
// record is pushed again only together with its move back to `armed`.
//
// References (timer_core::refs): the handle's and the flight's (from
// timer_start until the state is done or cancelled and nobody will touch the
// record again). Exactly one party releases the flight: whoever takes a
// cancelled entry out of the heap (the service popping it, a compaction, a
// small heap's cancel erasing it) or finds its batch entry cancelled, and
// otherwise the delivery (or the drop of its envelope).
//
// dead (signed): cancelled records whose entry is still in the heap or the
// batch. The canceller adds one after its compare-and-swap unless it erased
// the entry itself; whoever drops the entry subtracts one. The two may come
// in either order (the count is briefly -1): it steers compactions and the
// dump, never who frees what.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

#include "executor.hpp"
#include "troupe/actor_timer.hpp"
#include "troupe/detail/futex.hpp"
#include "troupe/detail/service_thread.hpp"
#include "troupe/detail/trace.hpp"
#include "troupe/detail/wake_source.hpp"
#include "troupe/error.hpp"
#include "troupe/spinlock.hpp"

namespace troupe::detail {

namespace {

using clock = std::chrono::steady_clock;

// Flights in this process (armed, queued, running, or cancelled and still
// in the heap): troupe::dump.
std::atomic<std::size_t> flights{0};

// Executors alive, for the service thread: a timer fires asynchronously to
// the program, so the system of its actor may be stopped and destroyed
// under it (the actor finished; stop() waits for actors, not for timers).
// The service finds its actor's executor here by the mailbox address (never
// dereferencing a freed one) and sends under this lock, which an
// executor's destructor takes to leave the list.
spinlock systems_lock{"actor timer systems"};
executor* systems = nullptr;  // under systems_lock, linked by timers_next

executor* live_exec_of(const actor& a) noexcept {
    const mailbox* mb = worker_access::box(a);
    for (executor* e = systems; e; e = e->timers_next)
        if (mb >= e->mailboxes.get() && mb < e->mailboxes.get() + e->mailbox_count) return e;
    return nullptr;
}

// Record operations by number (timer_core::ops). An entry is written once,
// before its number is handed out (the registering thread's function-local
// static publishes it), and read only through a record carrying that number.
constexpr std::size_t max_ops = std::size_t{1} << 16;
timer_ops_fn ops_table[max_ops];
std::atomic<std::uint32_t> ops_count{0};

void run_op(timer_core& c, timer_op op) noexcept { ops_table[c.ops](c, op); }

void release_ref(timer_core& c) noexcept {
    // acq_rel: the last holder frees after every other holder's last touch.
    if (c.refs.fetch_sub(1, std::memory_order_acq_rel) == 1) run_op(c, timer_op::free);
}

void release_flight(timer_core& c) noexcept {
    flights.fetch_sub(1, std::memory_order_relaxed);
    release_ref(c);
}

bool move(timer_core& c, std::uint16_t from, std::uint16_t to) noexcept {
    // acq_rel: each party's writes to the record (a periodic deadline, the
    // message) happen before the next party's reads.
    return c.state.compare_exchange_strong(from, to, std::memory_order_acq_rel,
                                           std::memory_order_acquire);
}

executor* exec_of_target(const timer_core& c) noexcept {
    mailbox* mb = worker_access::box(*c.target);
    return mb ? mb->exec : nullptr;
}

void count_dropped(const timer_core& c) noexcept {
    if (executor* ex = exec_of_target(c))
        ex->timers_dropped.fetch_add(1, std::memory_order_relaxed);
}

std::int64_t to_ns(clock::time_point t) noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}
clock::time_point from_ns(std::int64_t ns) noexcept {
    return clock::time_point{
        std::chrono::duration_cast<clock::duration>(std::chrono::nanoseconds{ns})};
}
constexpr std::int64_t never = INT64_MAX;

// A heap no larger than this is searched by cancel() and the entry removed
// at once (a scan of a few cache lines); a larger one is cancelled lazily.
constexpr std::size_t eager_limit = 64;
// Dead entries that start a compaction: at least this many, and a quarter
// of the heap (then dead ones cost at most a third of the live ones).
constexpr std::int64_t compact_min = 64;
// Entries the service fires per lock hold.
constexpr std::size_t batch = 64;

// One process-wide heap. Its storage comes from malloc, not operator new:
// the array is a cache of the process's life (like core's timer heap), and
// it is never freed; the object is never destroyed (the thread may run
// through static destruction), so every member is trivially destructible.
class timer_queue {
public:
    struct entry {
        std::int64_t at;  // steady-clock nanoseconds
        timer_core* c;
    };

    void push(timer_core& c, clock::time_point when) {
        start();
        const std::int64_t at = to_ns(when);
        lock_.lock();
        if (size_ == cap_ && !grow()) {
            lock_.unlock();
            throw std::bad_alloc();
        }
        const bool earlier = insert({at, &c});
        lock_.unlock();
        if (earlier) kick();
    }

    enum class rearm_result { armed, cancelled, no_memory };
    // A periodic delivery's end: running -> armed and the push, together
    // under the lock (a cancel then finds the entry in the heap).
    rearm_result rearm(timer_core& c, clock::time_point when) noexcept {
        lock_.lock();
        if (!move(c, timer_running, timer_armed)) {
            lock_.unlock();
            return rearm_result::cancelled;  // running_cancelled: cancelled during the receive
        }
        if (size_ == cap_ && !grow()) {
            const bool lost = move(c, timer_armed, timer_done);
            lock_.unlock();
            if (lost) return rearm_result::no_memory;
            // A cancel won armed -> cancelled meanwhile; its search found no
            // entry (there is none), so it counted a dead one: take it back.
            dead_.fetch_sub(1, std::memory_order_relaxed);
            return rearm_result::cancelled;
        }
        const bool earlier = insert({to_ns(when), &c});
        lock_.unlock();
        if (earlier) kick();
        return rearm_result::armed;
    }

    // cancel() won armed -> cancelled on `c`. Nothrow.
    void cancelled(timer_core& c) noexcept {
        // A read of the size only picks the path: either is right at any
        // size (the eager path just searches).
        if (size_now_.load(std::memory_order_acquire) <= eager_limit && erase_now(c)) {
            release_flight(c);
            // Our erase may have left only dead entries (see compact_once).
            compact_if_worth();
            return;
        }
        // The entry stays, dead (or it is in the service's batch, which
        // will find it cancelled and drop it, or a compaction took it and
        // counted it already): it counts until dropped.
        // seq_cst here and in compact(): see there.
        const std::int64_t d = dead_.fetch_add(1, std::memory_order_seq_cst) + 1;
        if (worth_compacting(d, size_now_.load(std::memory_order_seq_cst))) compact();
    }

    // After anything that shrank the heap by live entries (an eager erase,
    // the service's pops): the check a cancel makes, on the new size.
    void compact_if_worth() noexcept {
        if (worth_compacting(dead_.load(std::memory_order_seq_cst),
                             size_now_.load(std::memory_order_seq_cst)))
            compact();
    }

    // The service (or an unlucky re-arm) drops a cancelled entry.
    void drop(timer_core& c) noexcept {
        dead_.fetch_sub(1, std::memory_order_relaxed);
        release_flight(c);
    }

    std::size_t dead() const noexcept {
        const std::int64_t d = dead_.load(std::memory_order_relaxed);
        return d > 0 ? static_cast<std::size_t>(d) : 0;
    }

    // For the everyone-asleep check: a live entry (or a batch being fired)
    // will wake someone.
    bool live_pending() const noexcept {
        if (firing_.load(std::memory_order_acquire)) return true;
        return static_cast<std::int64_t>(size_now_.load(std::memory_order_acquire)) >
               dead_.load(std::memory_order_acquire);
    }
    bool started() const noexcept { return started_.load(std::memory_order_acquire); }

private:
    void start() {
        // One acquire load once running.
        if (started_.load(std::memory_order_acquire)) [[likely]]
            return;
        std::call_once(once_, [this] {
            if (const int rc = start_service_thread(&timer_queue::run, this))
                throw std::system_error(rc, std::generic_category(),
                                        "troupe: cannot start the actor timer thread");
            started_.store(true, std::memory_order_release);
            add_wake_source(&source);
        });
    }

    static void* run(void* self) {
        name_this_kernel_thread("troupe-actimer");
        static_cast<timer_queue*>(self)->loop();
        return nullptr;
    }

    [[noreturn]] void loop() noexcept {
        trace::label_thread("actor timers", trace::no_index, nullptr);
        entry due[batch];
        for (;;) {
            // Read before the heap: an arm that kicks after this changes
            // seq_, so the wait below returns at once.
            const std::uint32_t seen = seq_.load(std::memory_order_seq_cst);
            lock_.lock();
            const std::int64_t now = to_ns(clock::now());
            // Set before the pops (which shrink the size the wake source
            // reads): it sees the due entries in the heap or the batch,
            // never neither.
            if (size_ != 0 && heap_[0].at <= now) firing_.store(true, std::memory_order_release);
            std::size_t k = 0;
            while (size_ != 0 && heap_[0].at <= now && k < batch) {
                due[k++] = heap_[0];
                pop_top();
            }
            const std::int64_t next = size_ != 0 ? heap_[0].at : never;
            // While we fire, an arm earlier than `next` must kick us (we are
            // about to sleep until `next`); after a batch we look again anyway.
            sleeping_until_ = next;
            lock_.unlock();
            for (std::size_t i = 0; i < k; ++i) run_op(*due[i].c, timer_op::fire);
            if (k != 0) {
                firing_.store(false, std::memory_order_release);
                compact_if_worth();  // our pops may have left only dead entries
                continue;            // time passed while firing: look again before sleeping
            }
            if (next == never) futex_wait(seq_, seen);
            else futex_wait_until(seq_, seen, from_ns(next));
        }
    }

    void kick() noexcept {
        seq_.fetch_add(1, std::memory_order_seq_cst);
        futex_wake(seq_);
    }

    // Under lock_. Returns whether the service must be woken (it sleeps
    // past `e`).
    bool insert(entry e) noexcept {
        std::size_t i = size_++;
        while (i > 0) {
            const std::size_t parent = (i - 1) / 2;
            if (heap_[parent].at <= e.at) break;
            heap_[i] = heap_[parent];
            i = parent;
        }
        heap_[i] = e;
        size_now_.store(size_, std::memory_order_release);
        // Kick only a service that sleeps past our deadline: one that wakes
        // earlier re-reads the heap then (schedule and cancel in a loop then
        // cost no futex wake each).
        if (e.at >= sleeping_until_) return false;
        sleeping_until_ = e.at;
        return true;
    }

    // Under lock_: moves the hole at `i` down to its place for `e`.
    void sift_down(std::size_t i, entry e) noexcept {
        for (;;) {
            const std::size_t l = 2 * i + 1;
            if (l >= size_) break;
            std::size_t m = l;
            if (l + 1 < size_ && heap_[l + 1].at < heap_[l].at) m = l + 1;
            if (!(heap_[m].at < e.at)) break;
            heap_[i] = heap_[m];
            i = m;
        }
        heap_[i] = e;
    }

    void pop_top() noexcept {
        const entry last = heap_[--size_];
        if (size_ != 0) sift_down(0, last);
        size_now_.store(size_, std::memory_order_seq_cst);  // see compact_once
    }

    bool erase_now(timer_core& c) noexcept {
        lock_.lock();
        std::size_t i = 0;
        while (i < size_ && heap_[i].c != &c) ++i;
        if (i == size_) {
            // In the service's batch (popped, not fired yet): it will find
            // the record cancelled.
            lock_.unlock();
            return false;
        }
        const entry last = heap_[--size_];
        if (i != size_) {
            std::size_t j = i;
            while (j > 0 && last.at < heap_[(j - 1) / 2].at) {
                heap_[j] = heap_[(j - 1) / 2];
                j = (j - 1) / 2;
            }
            if (j != i) heap_[j] = last;
            else sift_down(i, last);
        }
        size_now_.store(size_, std::memory_order_seq_cst);  // see compact_once
        lock_.unlock();
        return true;
    }

    static bool worth_compacting(std::int64_t dead, std::size_t size) noexcept {
        const auto n = static_cast<std::int64_t>(size);
        // Everything left is dead (so a heap of cancelled timers frees them
        // all, however few), or dead entries are many and a quarter of it.
        return dead > 0 && (dead >= n || (dead >= compact_min && dead * 4 >= n));
    }

    // Drops the dead entries; again while the count says more are due (a
    // cancel that raced the pass: see below). Nothrow.
    void compact() noexcept {
        while (compact_once() != 0)
            if (!worth_compacting(dead_.load(std::memory_order_seq_cst),
                                  size_now_.load(std::memory_order_seq_cst)))
                return;
    }

    // A cancel X may win armed -> cancelled after this pass read X's state
    // (X's entry stays) and read the size before this pass stored it (so X
    // saw the old, large size and did not compact). Both sides use seq_cst
    // (X: add to dead_, then load size_now_; the pass: store size_now_,
    // then subtract from and load dead_): if X's load missed our store, our
    // later load sees X's add, and compact() goes round again. Every other
    // shrink (an eager erase, the service's pops) stores the size seq_cst
    // and then makes the same check (compact_if_worth). So a heap whose
    // entries are all cancelled never keeps one.
    std::int64_t compact_once() noexcept {
        lock_.lock();
        // The dead records go to a buffer of pointers (released after the
        // lock in array order, prefetched: a chain through the records
        // would be one dependent cache miss each). The buffer is the
        // queue's, taken while we use it; a compaction running meanwhile
        // (another thread, or a message's destructor cancelling a timer
        // inside our release loop) links its records through them instead.
        timer_core** buf = nullptr;
        if (dead_buf_cap_ >= size_ || grow_dead_buf(size_)) buf = std::exchange(dead_buf_, nullptr);
        const std::size_t buf_cap = buf ? std::exchange(dead_buf_cap_, 0) : 0;
        timer_core* dead_list = nullptr;
        std::size_t removed = 0;
        std::size_t w = 0;
        constexpr std::size_t ahead = 32;
        for (std::size_t i = 0; i < size_; ++i) {
            if (i + ahead < size_) __builtin_prefetch(heap_[i + ahead].c);
            timer_core* c = heap_[i].c;
            // acquire: pairs with the canceller's compare-and-swap; the
            // record is ours to free once we take its entry out.
            if (c->state.load(std::memory_order_acquire) == timer_cancelled) {
                if (buf) {
                    buf[removed] = c;
                } else {
                    c->next_dead = dead_list;  // `target` is dead data from here on
                    dead_list = c;
                }
                ++removed;
            } else {
                heap_[w++] = heap_[i];
            }
        }
        size_ = w;
        // Floyd's heapify: O(n).
        for (std::size_t i = size_ / 2; i-- > 0;) sift_down(i, heap_[i]);
        size_now_.store(size_, std::memory_order_seq_cst);
        // The earliest deadline can only have moved later: a sleeping
        // service wakes at the old one, finds nothing due and sleeps again.
        lock_.unlock();
        const auto n = static_cast<std::int64_t>(removed);
        if (n != 0) {
            dead_.fetch_sub(n, std::memory_order_seq_cst);
            flights.fetch_sub(removed, std::memory_order_relaxed);
        }
        // Outside the lock: freeing runs the message's destructor (user code).
        if (buf) {
            for (std::size_t i = 0; i < removed; ++i) {
                if (i + ahead < removed) __builtin_prefetch(buf[i + ahead], 1);
                release_ref(*buf[i]);
            }
            give_back_dead_buf(buf, buf_cap);
        }
        while (dead_list) {
            timer_core* next = dead_list->next_dead;
            release_ref(*dead_list);
            dead_list = next;
        }
        return n;
    }

    // Under lock_: makes dead_buf_ hold at least `n` pointers.
    bool grow_dead_buf(std::size_t n) noexcept {
        std::size_t cap = dead_buf_cap_ ? dead_buf_cap_ : 64;
        while (cap < n) cap *= 2;
        void* p = std::realloc(dead_buf_, cap * sizeof(timer_core*));
        if (!p) return false;
        dead_buf_ = static_cast<timer_core**>(p);
        dead_buf_cap_ = cap;
        return true;
    }

    void give_back_dead_buf(timer_core** buf, std::size_t cap) noexcept {
        lock_.lock();
        if (!dead_buf_) {
            dead_buf_ = buf;
            dead_buf_cap_ = cap;
            buf = nullptr;
        }
        lock_.unlock();
        std::free(buf);  // another compaction made a buffer of its own meanwhile
    }

    // Under lock_. False: no memory (the heap is unchanged).
    bool grow() noexcept {
        const std::size_t cap = cap_ ? cap_ * 2 : 64;
        void* p = std::realloc(heap_, cap * sizeof(entry));
        if (!p) return false;
        heap_ = static_cast<entry*>(p);
        cap_ = cap;
        return true;
    }

    static std::size_t source_threads() noexcept;
    static bool source_pending() noexcept;
    static constexpr wake_source source{&source_threads, &source_pending};

    spinlock lock_{"actor timer heap"};
    entry* heap_ = nullptr;  // under lock_; malloc'd, cap_ entries
    std::size_t size_ = 0;   // under lock_
    std::size_t cap_ = 0;    // under lock_
    // When the service wakes next by itself (never: it waits for a kick),
    // under lock_: an arm kicks only earlier.
    std::int64_t sleeping_until_ = never;
    // size_ for readers outside the lock (cancel's choice of path, the dump).
    std::atomic<std::size_t> size_now_{0};
    // Compaction's buffer of dead records (malloc'd, under lock_; null
    // while a compaction holds it).
    timer_core** dead_buf_ = nullptr;
    std::size_t dead_buf_cap_ = 0;
    std::atomic<std::int64_t> dead_{0};
    std::atomic<bool> firing_{false};
    std::atomic<std::uint32_t> seq_{0};  // the service's futex word
    std::atomic<bool> started_{false};
    std::once_flag once_;
};

timer_queue& queue() noexcept {
    // Never destroyed (see timer_queue): storage of static duration.
    alignas(timer_queue) static unsigned char storage[sizeof(timer_queue)];
    static timer_queue* q = new (storage) timer_queue;
    return *q;
}

std::size_t timer_queue::source_threads() noexcept { return queue().started() ? 1 : 0; }
bool timer_queue::source_pending() noexcept { return queue().live_pending(); }

}  // namespace

void timers_add_system(executor& ex) noexcept {
    systems_lock.lock();
    ex.timers_next = systems;
    systems = &ex;
    systems_lock.unlock();
}

void timers_remove_system(executor& ex) noexcept {
    systems_lock.lock();
    for (executor** p = &systems; *p; p = &(*p)->timers_next)
        if (*p == &ex) {
            *p = ex.timers_next;
            break;
        }
    systems_lock.unlock();
}

std::size_t actor_timers_pending() noexcept { return flights.load(std::memory_order_relaxed); }
std::size_t actor_timers_cancelled() noexcept { return queue().dead(); }

void check_period(std::chrono::nanoseconds period) {
    if (period <= std::chrono::nanoseconds::zero())
        throw std::invalid_argument("troupe: send_every needs a period > 0 (got " +
                                    std::to_string(period.count()) + " ns)");
}

void timer_release(timer_core& c) noexcept { release_ref(c); }

std::uint32_t timer_register_ops(timer_ops_fn fn) {
    const std::uint32_t id = ops_count.fetch_add(1, std::memory_order_relaxed);
    if (id >= max_ops)
        throw std::length_error(
            "troupe: more than 65536 actor timer record types (actor, message)");
    ops_table[id] = fn;
    return id;
}

void timer_start(timer_core& c, std::chrono::steady_clock::time_point when) {
    flights.fetch_add(1, std::memory_order_relaxed);
    try {
        queue().push(c, when);
    } catch (...) {
        flights.fetch_sub(1, std::memory_order_relaxed);
        throw;
    }
}

void timer_fire(timer_core& c, message& m, dispatch_fn fn, const dispatch_names& names) noexcept {
    if (!move(c, timer_armed, timer_fired)) {
        queue().drop(c);  // cancelled in the heap or the batch: its cancel left it to us
        return;
    }
    systems_lock.lock();
    executor* ex = live_exec_of(*c.target);
    if (!ex || ex->stopped.load(std::memory_order_acquire)) {
        // Its system has stopped (or is gone): nobody will ever receive it.
        if (move(c, timer_fired, timer_done) && ex) count_dropped(c);
        systems_lock.unlock();
        release_flight(c);
        return;
    }
    try {
        // A refused send (a finished actor) runs the trampoline with no
        // actor: timer_dropped releases the flight.
        send(*c.target, m, fn, names);
        systems_lock.unlock();
    } catch (...) {
        systems_lock.unlock();
        move(c, timer_fired, timer_done);
        report_misuse(describe("actor", user_type_name(names.actor).c_str(), c.target) +
                          ": no memory to queue its timer message '" +
                          user_type_name(names.message) + "'; lost",
                      misuse_kind::lost_message);
        release_flight(c);
    }
}

bool timer_begin(timer_core& c) noexcept {
    if (move(c, timer_fired, timer_running)) return true;
    release_flight(c);  // cancelled while queued
    return false;
}

void timer_end(timer_core& c, periodic_part* p, bool ended) noexcept {
    if (!p || ended) {
        c.state.store(timer_done, std::memory_order_release);
        release_flight(c);
        return;
    }
    // Periodic: the next deadline, written while we own the record (running).
    const auto now = clock::now();
    auto next = p->deadline + p->period;
    if (next <= now) next = now + p->period;  // behind: skip the missed ticks
    p->deadline = next;
    switch (queue().rearm(c, next)) {
    case timer_queue::rearm_result::armed: return;  // the heap holds the flight again
    case timer_queue::rearm_result::cancelled:
        c.state.store(timer_cancelled, std::memory_order_release);  // cancelled during the receive
        release_flight(c);
        return;
    case timer_queue::rearm_result::no_memory:
        report_misuse("troupe: no memory to re-arm a periodic actor timer; it stops",
                      misuse_kind::lost_message);
        release_flight(c);
        return;
    }
}

void timer_dropped(timer_core& c, message&) noexcept {
    if (move(c, timer_fired, timer_done)) count_dropped(c);
    release_flight(c);
}

bool timer_cancel_actor(timer_core& c, bool periodic) noexcept {
    for (;;) {
        std::uint16_t s = c.state.load(std::memory_order_acquire);
        switch (s) {
        case timer_armed:
            if (!move(c, timer_armed, timer_cancelled)) continue;
            // Its entry is in the heap or the service's batch: the service
            // will not fire it any more (it loses armed -> fired); the
            // heap drops it (now if small, lazily if large).
            queue().cancelled(c);
            return true;
        case timer_fired:
            if (!move(c, timer_fired, timer_cancelled)) continue;
            return true;  // the queued envelope is dropped at its turn
        case timer_running:
            if (!move(c, timer_running, timer_running_cancelled)) continue;
            return periodic;    // a one-shot's only delivery is under way
        default: return false;  // cancelled, done
        }
    }
}

}  // namespace troupe::detail
