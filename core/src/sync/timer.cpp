// The timer service: a min-heap of deadlines and one sleeping service thread.
#include <atomic>
#include <climits>
#include <ctime>
#include <thread>
#include <vector>

#include "troupe/detail/futex.hpp"
#include "troupe/detail/service_thread.hpp"
#include "troupe/detail/timer.hpp"
#include "troupe/detail/trace.hpp"
#include "troupe/spinlock.hpp"

namespace troupe::detail {

namespace {

class timer_service;
// The service once it runs (for timer_pending; cleared when it stops).
std::atomic<timer_service*> started{nullptr};
// timer_pending() calls in flight. The watch thread is detached and may
// look at the service while static destructors run at exit: the
// destructor clears `started`, then waits for this to drain before it
// destroys the heap. Seq_cst on both sides (store/load of `started`, the
// increment here): either the reader sees null, or the destructor sees
// the reader counted.
std::atomic<int> pending_readers{0};

class timer_service {
public:
    timer_service() : thread_([this] { run(); }) { name_kernel_thread(thread_, "troupe-timer"); }
    ~timer_service() {
        started.store(nullptr, std::memory_order_seq_cst);
        while (pending_readers.load(std::memory_order_seq_cst) != 0) std::this_thread::yield();
        lock_.lock();
        stop_ = true;
        lock_.unlock();
        kick();
        thread_.join();
    }

    void arm(timer_node& n) {
        lock_.lock();
        n.heap_index = heap_.size();
        try {
            heap_.push_back({n.deadline, &n});
        } catch (...) {
            n.heap_index = timer_node::npos;
            lock_.unlock();
            throw;
        }
        sift_up(n.heap_index);
        // Kick only a service that sleeps past our deadline: one that wakes
        // earlier re-reads the heap then (a timer made and cancelled in a
        // loop then costs no futex wake per timer).
        const bool earlier = n.deadline < sleeping_until_;
        if (earlier) sleeping_until_ = n.deadline;
        lock_.unlock();
        if (earlier) kick();
    }

    std::size_t pending() noexcept {
        lock_.lock();
        const std::size_t n = heap_.size();
        lock_.unlock();
        return n;
    }

    bool cancel(timer_node& n) noexcept {
        // Callbacks run under lock_, so once we hold it none is running.
        lock_.lock();
        const bool armed = n.heap_index != timer_node::npos;
        if (armed) erase(n.heap_index);
        lock_.unlock();
        return armed;
    }

private:
    void kick() noexcept {
        seq_.fetch_add(1, std::memory_order_seq_cst);
        futex_wake(seq_);
    }

    void run() noexcept {
        trace::label_thread("timer service", trace::no_index, nullptr);
        for (;;) {
            const std::uint32_t seen = seq_.load(std::memory_order_seq_cst);
            lock_.lock();
            if (stop_) {
                lock_.unlock();
                return;
            }
            const auto now = timer_node::clock::now();
            while (!heap_.empty() && heap_.front().deadline <= now) {
                timer_node* n = heap_.front().node;
                erase(0);
                if (n->period > timer_node::clock::duration::zero()) {
                    // Periodic: the next deadline after now, skipping the
                    // ticks a late service missed (a slow receiver drops
                    // ticks, Go's ticker). Back in the heap before the
                    // callback: erase(0) left room, so no allocation.
                    const auto late = (now - n->deadline) / n->period;
                    n->deadline += n->period * (late + 1);
                    n->heap_index = heap_.size();
                    heap_.push_back({n->deadline, n});
                    sift_up(n->heap_index);
                }
                // The callback is the last touch of `n` (of a one-shot
                // node): its owner may free it as soon as the callback
                // unparks it.
                n->fire(*n);
            }
            const bool any = !heap_.empty();
            const auto next = any ? heap_.front().deadline : timer_node::clock::time_point{};
            sleeping_until_ = any ? next : timer_node::clock::time_point::max();
            lock_.unlock();
            // A kick after `seen` was read changes seq_, so the wait returns.
            if (any) futex_wait_until(seq_, seen, next);
            else futex_wait(seq_, seen);
        }
    }

    // The heap keeps each deadline beside its node pointer, so sifting
    // compares within the array and touches a node only to store its new
    // index (a node is a random cache line: 1M pending timers made a root
    // removal 20 dependent misses with the deadlines read through the
    // pointers). Sifts move a hole instead of swapping.
    struct entry {
        timer_node::clock::time_point deadline;
        timer_node* node;
    };
    void place(std::size_t i, const entry& e) noexcept {
        heap_[i] = e;
        e.node->heap_index = i;
    }
    void sift_up(std::size_t i) noexcept {
        const entry e = heap_[i];
        while (i > 0) {
            const std::size_t parent = (i - 1) / 2;
            if (heap_[parent].deadline <= e.deadline) break;
            place(i, heap_[parent]);
            i = parent;
        }
        place(i, e);
    }
    void sift_down(std::size_t i) noexcept {
        const entry e = heap_[i];
        const std::size_t n = heap_.size();
        for (;;) {
            const std::size_t l = 2 * i + 1;
            if (l >= n) break;
            std::size_t m = l;
            if (l + 1 < n && heap_[l + 1].deadline < heap_[l].deadline) m = l + 1;
            if (!(heap_[m].deadline < e.deadline)) break;
            place(i, heap_[m]);
            i = m;
        }
        place(i, e);
    }
    void erase(std::size_t i) noexcept {
        timer_node* victim = heap_[i].node;
        const std::size_t last = heap_.size() - 1;
        if (i != last) {
            heap_[i] = heap_[last];
            heap_.pop_back();
            if (i > 0 && heap_[i].deadline < heap_[(i - 1) / 2].deadline) sift_up(i);
            else sift_down(i);
        } else {
            heap_.pop_back();
        }
        victim->heap_index = timer_node::npos;
    }

    spinlock lock_{"timer heap"};
    std::vector<entry> heap_;
    bool stop_ = false;
    // When the service thread wakes next by itself (its futex deadline; max
    // while it waits for a kick), under lock_: an arm kicks only earlier.
    timer_node::clock::time_point sleeping_until_ = timer_node::clock::time_point::max();
    std::atomic<std::uint32_t> seq_{0};
    std::thread thread_;
};

timer_service& service() {
    static timer_service s;
    started.store(&s, std::memory_order_release);
    return s;
}

}  // namespace

void timer_arm(timer_node& n) { service().arm(n); }

std::size_t timer_pending() noexcept {
    pending_readers.fetch_add(1, std::memory_order_seq_cst);
    timer_service* s = started.load(std::memory_order_seq_cst);
    const std::size_t n = s ? s->pending() : 0;
    pending_readers.fetch_sub(1, std::memory_order_release);
    return n;
}

bool timer_thread_started() noexcept { return started.load(std::memory_order_acquire) != nullptr; }
bool timer_cancel(timer_node& n) noexcept {
    // Never armed: nothing to do, and no need to start the service. Only the
    // owner writes `fire` (before arming), so this unlocked read is safe;
    // heap_index belongs to the service and is read under its lock.
    if (n.fire == nullptr) return false;
    return service().cancel(n);
}

}  // namespace troupe::detail
