#pragma once
// Out-of-line members of troupe::channel<T> (included by channel.hpp).
// See docs/channels.md for the algorithm and its invariants.
#include <cstdio>
#include <new>
#include <string>
#include <utility>

#include "troupe/config.hpp"
#include "troupe/error.hpp"

#if defined(TROUPE_STATISTICS)
#define TROUPE_CHANNEL_COUNT(field) (++stats_.field)
#else
#define TROUPE_CHANNEL_COUNT(field) ((void)0)
#endif

namespace troupe {

template <class T>
channel<T>::~channel() {
    node_queue woken;
    lock_.lock();
    closed_.store(true, std::memory_order_release);
    // Released with `destroyed`, not `closed`: they throw channel_destroyed,
    // so no loop mistakes this for the normal end of the stream.
    const std::size_t consumers = collect_closed(consumers_, woken, detail::handoff::destroyed);
    const std::size_t producers = collect_closed(producers_, woken, detail::handoff::destroyed);
    bool leaving = !consumers_.empty() || !producers_.empty();
    lock_.unlock();
    // Released threads never touch the channel again: plain waiters only read
    // their own wait record and throw; select clauses were detached (see
    // detail::link) and consult only their record.
    woken.unpark_all();
    // Nodes still queued belong to select clauses that are unregistering
    // right now (awake, their statement decided): each takes lock_ once to
    // dequeue itself and never touches the channel after that unlock. Wait
    // for them before freeing anything.
    for (int spins = 0; leaving; ++spins) {
        if (spins < 64) detail::cpu_relax();
        else detail::yield_now();
        lock_.lock();
        leaving = !consumers_.empty() || !producers_.empty();
        lock_.unlock();
    }
    if constexpr (checked_build) {
        if (consumers + producers > 0)
            detail::report_misuse(detail::describe("channel", name_, this) +
                                      ": destroyed while threads are blocked on it (deadlock): " +
                                      std::to_string(producers) + " producer(s), " +
                                      std::to_string(consumers) +
                                      " consumer(s); releasing them "
                                      "with channel_destroyed",
                                  misuse_kind::released_waiters);
    }
    for (std::size_t i = 0, n = count_.load(std::memory_order_relaxed); i < n; ++i) {
        slot(wrap(head_ + i))->~T();
    }
    if (buffer_) ::operator delete(buffer_, buffer_alignment);
#if defined(TROUPE_STATISTICS)
    auto& registry = detail::channel_statistics_registry::get();
    registry.add(stats_);
    if (registry.mode() == channel_statistics_report::per_channel)
        std::fprintf(stderr, "troupe statistics: %s: %s\n",
                     detail::describe("channel", name_, this).c_str(),
                     detail::format_channel_counts(stats_).c_str());
#endif
}

template <class T>
auto channel<T>::insert_locked(T& src, select_node* self, select_node*& wake) noexcept -> outcome {
    if (closed_.load(std::memory_order_relaxed)) return outcome::closed;
    const std::size_t count = count_.load(std::memory_order_relaxed);
    // Live consumers wait only while the buffer is empty; stale ones (lost
    // select clauses) are dropped by claim_front.
    if (consumers_.empty() && count == capacity_) return outcome::wait;
    detail::rendezvous_claim claim{self};
    if (!claim.begin()) return outcome::lost;
    if (select_node* c = claim.claim_front(consumers_)) {
        give_to(*c, std::move(src));  // wait morphing: complete its remove
        detail::detach(*c);
        claim.commit();
        wake = owed_unpark(*c);
        return outcome::done;
    }
    if (claim.self_lost()) return outcome::lost;
    if (count < capacity_) {
        ::new (buffer_ + tail_index()) T(std::move(src));
        count_.store(count + 1, std::memory_order_relaxed);
        claim.commit();
        return outcome::done;
    }
    claim.abort();
    return outcome::wait;
}

template <class T>
auto channel<T>::remove_locked(void* dst, select_node* self, bool stop, select_node*& wake) noexcept
    -> outcome {
    const bool closed = closed_.load(std::memory_order_relaxed);
    if (closed && stop) return outcome::closed;
    const std::size_t count = count_.load(std::memory_order_relaxed);
    if (count > 0) {
        // Our own status is never pending here, so try_claim cannot spin.
        if (self && !self->try_claim()) return outcome::lost;
        T* front = slot(head_);
        ::new (dst) T(std::move(*front));
        front->~T();
        if (++head_ == capacity_) head_ = 0;
        // The buffer had been full if a producer waits: its element goes to
        // the tail (FIFO kept: buffered elements leave first).
        if (select_node* p = detail::pop_claimed(producers_)) {
            take_from(*p, buffer_ + wrap(head_ + count - 1));  // the new tail
            detail::detach(*p);
            wake = owed_unpark(*p);
        } else {
            count_.store(count - 1, std::memory_order_relaxed);
        }
        return outcome::done;
    }
    if (closed) return outcome::closed;
    if (producers_.empty()) return outcome::wait;  // capacity > 0: only stale nodes are queued
    detail::rendezvous_claim claim{self};
    if (!claim.begin()) return outcome::lost;
    if (select_node* p = claim.claim_front(producers_)) {
        take_from(*p, dst);
        detail::detach(*p);
        claim.commit();
        wake = owed_unpark(*p);
        return outcome::done;
    }
    if (claim.self_lost()) return outcome::lost;
    claim.abort();
    return outcome::wait;
}

template <class T>
void channel<T>::insert(T&& v) {
    select_node* wake = nullptr;
    lock_.lock();
    const char* const name = name_;  // for the exception: *this may be gone after a wait
    TROUPE_CHANNEL_COUNT(inserts);
    switch (insert_locked(v, nullptr, wake)) {
    case outcome::done:
        lock_.unlock();
        if (wake) wake->unpark_waiter();
        return;
    case outcome::closed: lock_.unlock(); throw channel_closed_with<T>(this, name, std::move(v));
    default: break;
    }
    // Full: queue with a pointer to our element; a consumer moves it out.
    TROUPE_CHANNEL_COUNT(blocked_inserts);
    switch (wait_queued(producers_, &v, "insert", name)) {
    case detail::handoff::closed: throw channel_closed_with<T>(this, name, std::move(v));
    case detail::handoff::destroyed:  // `v` keeps its element
        throw channel_destroyed(this, name, channel_operation::insert);
    default: return;
    }
}

template <class T>
bool channel<T>::remove_into_storage(void* dst, bool stop, const char*& name) {
    select_node* wake = nullptr;
    lock_.lock();
    name = name_;
    TROUPE_CHANNEL_COUNT(removes);
    switch (remove_locked(dst, nullptr, stop, wake)) {
    case outcome::done:
        lock_.unlock();
        if (wake) wake->unpark_waiter();
        return true;
    case outcome::closed: lock_.unlock(); return false;
    default: break;
    }
    // Empty: queue with a pointer to our storage; a producer fills it.
    TROUPE_CHANNEL_COUNT(blocked_removes);
    // A consumer is woken by close only while the channel is empty (it
    // queued on an empty buffer, and nothing can be inserted after close).
    switch (wait_queued(consumers_, dst, "remove", name)) {
    case detail::handoff::done: return true;
    case detail::handoff::destroyed:
        throw channel_destroyed(this, name, channel_operation::remove);  // `this`: address only
    default: return false;
    }
}

template <class T>
std::string channel<T>::details_for_dump(const void* ch) {
    auto* c = static_cast<const channel*>(ch);
    return std::to_string(c->size()) + "/" + std::to_string(c->capacity()) + " elements, " +
           std::to_string(c->waiting_producers()) + " waiting producer(s), " +
           std::to_string(c->waiting_consumers()) + " waiting consumer(s)" +
           (c->is_closed() ? ", closed" : "");
}

template <class T>
detail::handoff channel<T>::wait_queued(node_queue& q, void* elem, const char* operation,
                                        const char* name) noexcept {
    detail::channel_waiter w;
    w.elem = elem;
    select_node self{this_context()};
    self.attach(w);
    q.push_back(self);
    lock_.unlock();
    // From here *this may be destroyed (a close wakes us, then the owner
    // destroys the channel): only `this` as a name in reports is used.
    detail::await_partner(w, self, operation, name, this, &wait_info_);
    // acquire: pairs with the partner's (or close's) release store of the
    // state, so the element it moved is visible.
    return w.state.load(std::memory_order_acquire);
}

template <class T>
channel_status channel<T>::try_insert(T&& v) noexcept {
    select_node* wake = nullptr;
    lock_.lock();
    const outcome r = insert_locked(v, nullptr, wake);
    if (r == outcome::done) TROUPE_CHANNEL_COUNT(inserts);
    lock_.unlock();
    if (wake) wake->unpark_waiter();
    return r == outcome::done     ? channel_status::success
           : r == outcome::closed ? channel_status::closed
                                  : channel_status::full;
}

template <class T>
channel_status channel<T>::try_remove_impl(T& out, bool stop) {
    detail::element_slot<T> s;
    select_node* wake = nullptr;
    lock_.lock();
    const outcome r = remove_locked(s.storage(), nullptr, stop, wake);
    if (r == outcome::done) TROUPE_CHANNEL_COUNT(removes);
    lock_.unlock();
    if (wake) wake->unpark_waiter();
    if (r == outcome::done) {
        out = s.take();  // assignment (user code) outside the lock
        return channel_status::success;
    }
    return r == outcome::closed ? channel_status::closed : channel_status::empty;
}

template <class T>
std::size_t channel<T>::flush(const T& v) requires std::is_copy_constructible_v<T> {
    std::size_t served = 0;
    if constexpr (std::is_nothrow_copy_constructible_v<T>) {
        // One critical section: copy into every waiting consumer, wake after.
        node_queue woken;
        lock_.lock();
        while (select_node* c = detail::pop_claimed(consumers_)) {
            auto& w = detail::waiter_of(*c);
            ::new (w.elem) T(v);
            w.state.store(detail::handoff::done, std::memory_order_release);
            detail::detach(*c);
            woken.defer_wake(*c);  // under the lock (see owed_unpark)
            ++served;
            TROUPE_CHANNEL_COUNT(inserts);
        }
        lock_.unlock();
        woken.unpark_all();
    } else {
        // A copy may throw: make each copy outside the lock, then hand it over.
        const std::size_t waiting = waiting_consumers();
        for (std::size_t i = 0; i < waiting; ++i) {
            T copy(v);
            lock_.lock();
            select_node* c = detail::pop_claimed(consumers_);
            bool owed = false;
            if (c) {
                give_to(*c, std::move(copy));
                detail::detach(*c);
                owed = c->commit();
                TROUPE_CHANNEL_COUNT(inserts);
            }
            lock_.unlock();
            if (!c) break;
            if (owed) c->unpark_waiter();
            ++served;
        }
    }
    return served;
}

template <class T>
std::size_t channel<T>::collect_closed(node_queue& q, node_queue& woken,
                                       detail::handoff how) noexcept {
    std::size_t n = 0;
    // pop_claimed drops clauses whose statement already finished (a lost
    // exclusive clause is detached, never woken) and skips leaving ones.
    while (select_node* w = detail::pop_claimed(q)) {
        auto& rec = detail::waiter_of(*w);
        rec.state.store(how, std::memory_order_release);
        detail::detach(*w);
        woken.defer_wake(*w);  // only if owed: an awake waiter is never touched again
        ++n;
    }
    return n;
}

template <class T>
void channel<T>::close() noexcept {
    node_queue woken;
    lock_.lock();
    if (closed_.load(std::memory_order_relaxed)) {
        lock_.unlock();
        return;
    }
    closed_.store(true, std::memory_order_release);
    collect_closed(consumers_, woken, detail::handoff::closed);  // consumers first, as in Cforall
    collect_closed(producers_, woken, detail::handoff::closed);
    lock_.unlock();
    woken.unpark_all();
}

template <class T>
bool channel<T>::register_insert(select_node& n, detail::channel_waiter& w, T& src) {
    select_node* wake = nullptr;
    lock_.lock();
    w.name = name_;
    TROUPE_CHANNEL_COUNT(inserts);
    const outcome r = insert_locked(src, &n, wake);  // sets wake: evaluate first
    return finish_register(n, w, r, wake, producers_);
}

template <class T>
bool channel<T>::register_remove(select_node& n, detail::channel_waiter& w, bool stop) {
    select_node* wake = nullptr;
    lock_.lock();
    w.name = name_;
    TROUPE_CHANNEL_COUNT(removes);
    const outcome r = remove_locked(w.elem, &n, stop, wake);  // sets wake: evaluate first
    return finish_register(n, w, r, wake, consumers_);
}

template <class T>
bool channel<T>::finish_register(select_node& n, detail::channel_waiter& w, outcome r,
                                 select_node* wake, node_queue& q) {
    // A node that is not queued is detached at once: its clause's unregister
    // then needs no lock (and no channel).
    switch (r) {
    case outcome::done:
        w.state.store(detail::handoff::done, std::memory_order_relaxed);
        w.linkage.store(detail::link::detached,
                        std::memory_order_relaxed);  // read by our own thread
        lock_.unlock();
        if (wake) wake->unpark_waiter();
        return true;
    case outcome::closed: {
        // The clause "completes" as closed if it wins; on_selected throws.
        const bool won = n.try_claim();
        if (won) w.state.store(detail::handoff::closed, std::memory_order_relaxed);
        w.linkage.store(detail::link::detached, std::memory_order_relaxed);
        lock_.unlock();
        return won;
    }
    case outcome::lost:
        w.linkage.store(detail::link::detached, std::memory_order_relaxed);
        lock_.unlock();
        return false;
    case outcome::wait: break;
    }
    if (detail::is_live(n)) {
        q.push_back(n);  // linkage stays `linked`: partners may take it now
        if (&q == &producers_) TROUPE_CHANNEL_COUNT(blocked_inserts);
        else TROUPE_CHANNEL_COUNT(blocked_removes);
    } else {
        w.linkage.store(detail::link::detached, std::memory_order_relaxed);
    }
    lock_.unlock();
    return false;
}

template <class T>
bool channel<T>::unregister(node_queue& q, select_node& n, detail::channel_waiter& w) {
    if (detail::begin_leaving(w)) {
        // Still linked: no partner may take the node any more (they skip
        // leaving nodes), and the destructor waits for us; dequeue it.
        lock_.lock();
        const bool was_queued = q.remove(n);
        lock_.unlock();  // our last touch of the channel
        w.linkage.store(detail::link::detached, std::memory_order_relaxed);
        if (was_queued) return false;
    }
    // Detached by the channel side (or never queued): `state` is final (the
    // acquire in begin_leaving saw the partner's release in detach()), and
    // the channel may already be gone: do not touch it.
    if (!n.is_general()) return false;
    return w.state.load(std::memory_order_acquire) == detail::handoff::done &&
           n.status_word()->load(std::memory_order_acquire) == std::uintptr_t(select_status::sat);
}

}  // namespace troupe

#undef TROUPE_CHANNEL_COUNT
