#pragma once
/// Go-style channels: a bounded FIFO (or, at capacity 0, a rendezvous)
/// between any number of producers and consumers, closed by exceptions.
///
///     troupe::channel<int> ch{128, "work"};
///     troupe::thread producer{[&] {
///         for (int i = 0; i < 1000; ++i) ch << i;        // ch.insert(i)
///         ch.close();
///     }};
///     for (int v : ch) use(v);        // ends when closed and drained
///
/// Algorithm (Go's, as in Cforall): one internal spinlock; blocked producers
/// and consumers wait in FIFO queues with a pointer to their element; the
/// thread that finds a blocked partner completes the partner's operation
/// (moves the element into or out of the partner's storage) and then wakes
/// it, so a woken thread never re-takes the lock (wait morphing), and
/// threads are served first come, first served. Blocking works from troupe
/// user threads and OS threads alike. Inside the critical section the only
/// code of T that runs is its move constructor (and the destructor of the
/// moved-from object); copies are made outside, so T must be nothrow
/// move-constructible.
///
/// Close: `close()` wakes every blocked thread. Producers (blocked or later)
/// get `channel_closed_with<T>` holding their element. Consumers choose per
/// call between draining (`remove()`, range-for) and stopping at once
/// (`remove(troupe::stop_on_close)`); see channel_closed.hpp for why.
///
/// Select: `remove_into(v)`, `remove_discard()` and `insert_from(v)` return
/// clause objects implementing the select_node protocol (troupe::selectable)
/// for `waituntil`.
///
/// Destroying a channel that threads still block on (a program error, e.g.
/// members declared in the wrong order) releases them with
/// `channel_destroyed`, in every build: distinct from `channel_closed`, so a
/// consumer's loop never ends as if the channel had been closed. Checked
/// builds also report it (a deadlock), naming the channel and the count on
/// each side. Statistics builds count
/// operations and blocking waits per channel and print the totals over all
/// channels once at exit, or per channel if asked (channel_statistics.hpp).
///
/// Exception guarantees (T's move constructor and destructor never throw):
///  - insert(T&&): strong: on channel_closed_with<T> the element is in the
///    exception, and `v` is moved from only on success (or into the
///    exception); a failure to build the exception (bad_alloc) leaves `v`.
///  - insert(const T&), try_insert(const T&): strong; the copy is made
///    before anything else, so a throwing copy changes nothing.
///  - remove(), iteration: strong; the element leaves the channel only into
///    the returned value (moves cannot throw).
///  - try_insert(T&&), close(), queries: nothrow. try_remove: strong (only
///    T's move assignment into `out` runs outside the lock).
///  - flush(v): basic if T's copy may throw: consumers served before the
///    failing copy keep their copy, the others still wait, nothing is lost.
///  - the constructor: strong (bad_alloc for the ring buffer).
///  - select clauses: see channel_select.hpp.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <new>
#include <optional>
#include <type_traits>
#include <utility>

#include "troupe/channel_closed.hpp"
#include "troupe/channel_statistics.hpp"
#include "troupe/config.hpp"
#include "troupe/detail/channel_waiter.hpp"
#include "troupe/detail/stop_race.hpp"
#include "troupe/select.hpp"
#include "troupe/spinlock.hpp"
#include "troupe/stop_token.hpp"

namespace troupe {

template <class T>
class channel_remove_clause;
template <class T>
class channel_insert_clause;

template <class T>
class channel {
    static_assert(std::is_nothrow_move_constructible_v<T> && std::is_nothrow_destructible_v<T>,
                  "troupe::channel<T>: T must be nothrow move-constructible and nothrow "
                  "destructible (elements move inside the channel's critical section)");

public:
    using value_type = T;
    class iterator;

    /// A channel holding up to `capacity` elements; 0 makes every insert
    /// wait for a remove (rendezvous). `name` (kept by pointer) appears in
    /// exceptions, misuse reports and statistics.
    explicit channel(std::size_t capacity = 0, const char* name = nullptr)
        : capacity_(capacity), name_(name) {
#if defined(TROUPE_STATISTICS)
        // Built before the first channel is complete, so it is destroyed
        // (and prints) after every static channel.
        (void)detail::channel_statistics_registry::get();
#endif
        if (capacity_)
            buffer_ = static_cast<T*>(::operator new(capacity_ * sizeof(T), buffer_alignment));
    }
    channel(const channel&) = delete;
    channel& operator=(const channel&) = delete;

    /// Destroys buffered elements. Threads still blocked here (a program
    /// error) are released with channel_destroyed, in every build, so none
    /// mistakes it for a close; checked builds report them as a deadlock.
    ~channel();

    // ------------------------------------------------------------- blocking

    /// Inserts `v`: into the buffer, or straight into a waiting consumer;
    /// if the buffer is full (always, at capacity 0) parks until a consumer
    /// takes it. Throws channel_closed_with<T> holding `v` if the channel is
    /// or becomes closed before `v` was taken. Moves from `v` only on success.
    void insert(T&& v);
    /// Inserts a copy of `v` (the copy is made before taking the lock).
    void insert(const T& v) requires std::is_copy_constructible_v<T> { insert(T(v)); }

    /// Removes the oldest element, parking while there is none. After
    /// close it keeps returning buffered elements and throws channel_closed
    /// once the channel is empty (drain).
    T remove() {
        detail::element_slot<T> s;
        const char* name;
        if (!remove_into_storage(s.storage(), false, name)) throw_closed_remove(this, name);
        return s.take();
    }
    /// As remove(), but throws channel_closed as soon as the channel is
    /// closed, even if elements are left in it (stop at once).
    T remove(stop_on_close_t) {
        detail::element_slot<T> s;
        const char* name;
        if (!remove_into_storage(s.storage(), true, name)) throw_closed_remove(this, name);
        return s.take();
    }

    /// As insert(v), but throws `cancelled` if `tok` is stopped before `v`
    /// was taken: `v` is then untouched and the channel unchanged (a stop
    /// already requested throws at once). channel_closed_with<T> as insert.
    void insert(T&& v, const stop_token& tok) {
        channel_insert_clause<T> c{*this, v};
        detail::stop_race race{this_context()};
        if (!race.run(c, tok, "channel insert", name_, this, &wait_info_))
            detail::throw_cancelled("channel insert", name_, this);
        finish_clause(c, race.node());
    }
    void insert(const T& v, const stop_token& tok) requires std::is_copy_constructible_v<T> {
        insert(T(v), tok);
    }
    /// As remove(), but throws `cancelled` if `tok` is stopped before an
    /// element came: nothing was removed (a stop already requested throws
    /// at once). channel_closed as remove() (drain policy).
    T remove(const stop_token& tok) {
        channel_remove_clause<T> c{*this, nullptr, false};
        detail::stop_race race{this_context()};
        if (!race.run(c, tok, "channel remove", name_, this, &wait_info_))
            detail::throw_cancelled("channel remove", name_, this);
        if (c.delivered()) {
            c.unregister_select(race.node());
            return c.take();
        }
        finish_clause(c, race.node());       // closed or destroyed: throws
        throw_closed_remove(this, nullptr);  // not reached: a won clause moved or threw
    }

    /// Go's `ch <- v`: insert(v).
    channel& operator<<(T&& v) {
        insert(std::move(v));
        return *this;
    }
    channel& operator<<(const T& v) requires std::is_copy_constructible_v<T> {
        insert(v);
        return *this;
    }
    /// Go's `v = <-ch`: v = remove() (drains after close, then throws).
    channel& operator>>(T& v) {
        v = remove();
        return *this;
    }

    // --------------------------------------------------------- non-blocking

    /// Inserts `v` if that needs no waiting: `success`, `full` (capacity 0:
    /// no consumer waiting) or `closed`. Never throws; moves from `v` only
    /// on success.
    channel_status try_insert(T&& v) noexcept;
    channel_status try_insert(const T& v) requires std::is_copy_constructible_v<T> {
        if constexpr (std::is_nothrow_copy_constructible_v<T>) {
            T copy(v);
            return try_insert(std::move(copy));
        } else {
            // A throwing copy: see whether it has a chance first, cheaply.
            if (is_closed()) return channel_status::closed;
            T copy(v);
            return try_insert(std::move(copy));
        }
    }
    /// Removes into `out` if that needs no waiting: `success`, `empty`
    /// (capacity 0: no producer waiting) or `closed` (closed and drained).
    channel_status try_remove(T& out) { return try_remove_impl(out, false); }
    /// As try_remove, but `closed` as soon as the channel is closed.
    channel_status try_remove(T& out, stop_on_close_t) { return try_remove_impl(out, true); }

    /// Hands a copy of `v` to every consumer blocked right now (a broadcast,
    /// typically of a sentinel); returns how many got one. Does not buffer.
    std::size_t flush(const T& v) requires std::is_copy_constructible_v<T>;

    /// Closes the channel and wakes every blocked producer and consumer
    /// (see the class comment). Closing again does nothing. Never blocks.
    void close() noexcept;

    // -------------------------------------------------------------- queries

    /// Elements buffered now (a snapshot).
    std::size_t size() const noexcept { return count_.load(std::memory_order_relaxed); }
    std::size_t capacity() const noexcept { return capacity_; }
    bool empty() const noexcept { return size() == 0; }
    bool is_closed() const noexcept { return closed_.load(std::memory_order_acquire); }
    /// Lock-free guesses, stale by the time they return, whether a remove /
    /// an insert would complete without waiting (waituntil's ready hints).
    /// A buffered channel's producers wait only while it is full and its
    /// consumers only while it is empty, so the count tells; at capacity 0
    /// only the lock can tell, and the answer is always yes.
    bool remove_ready_hint() const noexcept {
        return capacity_ == 0 || count_.load(std::memory_order_relaxed) > 0 ||
               closed_.load(std::memory_order_relaxed);
    }
    bool insert_ready_hint() const noexcept {
        return capacity_ == 0 || count_.load(std::memory_order_relaxed) < capacity_ ||
               closed_.load(std::memory_order_relaxed);
    }
    /// Threads (and select clauses) queued on each side (a snapshot).
    std::size_t waiting_producers() const noexcept { return locked_size(producers_); }
    std::size_t waiting_consumers() const noexcept { return locked_size(consumers_); }
    const char* name() const noexcept { return name_; }
    /// This channel's counters so far (statistics builds; zeros otherwise).
    /// Takes the channel's lock briefly.
    channel_statistics statistics() const noexcept {
        channel_statistics s;
#if defined(TROUPE_STATISTICS)
        lock_.lock();
        s = stats_;
        lock_.unlock();
#endif
        return s;
    }

    // ----------------------------------------------------------- iteration

    /// Range-for removes (drain policy) until the channel is closed and empty.
    iterator begin() { return iterator(*this); }
    std::default_sentinel_t end() noexcept { return {}; }

    // -------------------------------------------------------- select clauses

    /// A clause removing one element into `v` when it wins (drain policy:
    /// after close, buffered elements are still taken; a closed and empty
    /// channel makes the clause throw channel_closed when selected).
    [[nodiscard]] channel_remove_clause<T> remove_into(T& v) noexcept { return {*this, &v, false}; }
    [[nodiscard]] channel_remove_clause<T> remove_into(T& v, stop_on_close_t) noexcept {
        return {*this, &v, true};
    }
    /// A clause removing one element and discarding it.
    [[nodiscard]] channel_remove_clause<T> remove_discard() noexcept {
        return {*this, nullptr, false};
    }
    /// Non-throwing forms (Go's `v, ok := <-ch`): the clause never throws
    /// channel_closed; its body runs either way and may take the outcome,
    /// `channel_status::success` (an element was removed into `v`) or
    /// `channel_status::closed` (closed and drained, or closed at all with
    /// stop_on_close; `v` untouched). A closed channel stays ready, so a
    /// select loop disables the clause with `when` once it saw `closed`
    /// (Go sets the channel variable to nil). See channel_select.hpp.
    [[nodiscard]] channel_remove_clause<T> remove_into(T& v, report_close_t) noexcept {
        return {*this, &v, false, true};
    }
    [[nodiscard]] channel_remove_clause<T> remove_into(T& v, report_close_t,
                                                       stop_on_close_t) noexcept {
        return {*this, &v, true, true};
    }
    /// Go's `case v, ok := <-ch:` in one clause: never throws
    /// channel_closed; before the body runs, `ok` is set to true (an
    /// element was moved into `v`) or false (closed and drained, or closed
    /// at all with stop_on_close; `v` untouched). Guard the clause with the
    /// same bool — `when(ok, on(ch.remove_into(v, ok), [&] { if (ok) use(v); }))`
    /// — and it turns itself off once its channel is closed (Go's nil
    /// channel). A destroyed channel still throws channel_destroyed.
    [[nodiscard]] channel_remove_clause<T> remove_into(T& v, bool& ok) noexcept {
        return {*this, &v, false, true, &ok};
    }
    [[nodiscard]] channel_remove_clause<T> remove_into(T& v, bool& ok, stop_on_close_t) noexcept {
        return {*this, &v, true, true, &ok};
    }
    /// A clause inserting `v` when it wins (moving from it); if the channel
    /// is closed it throws channel_closed_with<T> holding `v` when selected.
    [[nodiscard]] channel_insert_clause<T> insert_from(T& v) noexcept { return {*this, v}; }
    /// Non-throwing form: after close the body runs with
    /// `channel_status::closed` and `v` keeps its element.
    [[nodiscard]] channel_insert_clause<T> insert_from(T& v, report_close_t) noexcept {
        return {*this, v, true};
    }
    /// The `ok` form: `ok` becomes true once `v` went in, false after close
    /// (`v` keeps its element); see remove_into(v, ok).
    [[nodiscard]] channel_insert_clause<T> insert_from(T& v, bool& ok) noexcept {
        return {*this, v, true, &ok};
    }
    /// A clause inserting a value it owns.
    [[nodiscard]] channel_insert_clause<T> insert_from(T&& v) noexcept {
        return {*this, std::move(v)};
    }

    class iterator {
    public:
        using value_type = T;
        using difference_type = std::ptrdiff_t;

        T& operator*() noexcept { return *current_; }
        T* operator->() noexcept { return &*current_; }
        iterator& operator++() {
            advance();
            return *this;
        }
        void operator++(int) { advance(); }
        friend bool operator==(const iterator& i, std::default_sentinel_t) noexcept {
            return !i.current_;
        }

    private:
        friend class channel;
        explicit iterator(channel& ch) : ch_(&ch) { advance(); }
        void advance() {
            current_.reset();
            detail::element_slot<T> s;
            const char* name;
            if (ch_->remove_into_storage(s.storage(), false, name)) current_.emplace(s.take());
        }
        channel* ch_;
        std::optional<T> current_;
    };

private:
    friend class channel_remove_clause<T>;
    friend class channel_insert_clause<T>;

    enum class outcome { done, closed, lost, wait };

    // Under lock_: try to complete an operation without waiting. `self` is
    // the caller's select node (nullptr for a plain call); `wake` receives
    // the partner whose operation we completed if it is owed an unpark
    // (committed under the lock; unpark_waiter() after unlocking).
    outcome insert_locked(T& src, select_node* self, select_node*& wake) noexcept;
    outcome remove_locked(void* dst, select_node* self, bool stop, select_node*& wake) noexcept;

    // Removes into raw storage; false if closed (per `stop`) and nothing
    // came; throws channel_destroyed if the channel was destroyed while the
    // caller waited. `name` receives name_, read under the lock: a thread
    // released by the destructor must not read the channel after its wake.
    bool remove_into_storage(void* dst, bool stop, const char*& name);
    // The blocking tail of insert and remove, entered with lock_ held and
    // the operation unable to complete: queues the caller on `q` with
    // `elem` (its element, or its storage), releases lock_ and waits until a
    // partner completes the operation or close releases it. Returns how it
    // ended (done, closed or destroyed). Throws nothing; *this may be gone
    // on return.
    detail::handoff wait_queued(node_queue& q, void* elem, const char* operation,
                                const char* name) noexcept;
    // Dumps (troupe/dump.hpp): a blocked thread's channel, by its state.
    static std::string details_for_dump(const void* ch);
    static constexpr detail::wait_describer wait_info_{&details_for_dump, nullptr, "held by"};
    channel_status try_remove_impl(T& out, bool stop);

    // A won clause of a token call: on_selected (throws after close), then
    // unregister, also when it throws.
    template <class Clause>
    static void finish_clause(Clause& c, select_node& n) {
        struct unregister_at_exit {
            Clause& c;
            select_node& n;
            ~unregister_at_exit() { c.unregister_select(n); }
        } guard{c, n};
        c.on_selected(n);
    }

    // The select protocol, driven by the clause objects.
    bool register_insert(select_node& n, detail::channel_waiter& w, T& src);
    bool register_remove(select_node& n, detail::channel_waiter& w, bool stop);
    // The common tail of both registrations, entered with lock_ held and
    // the operation's outcome `r`; queues `n` on `q` if it must wait;
    // unlocks.
    bool finish_register(select_node& n, detail::channel_waiter& w, outcome r, select_node* wake,
                         node_queue& q);
    // Dequeues a clause's node unless the channel side detached it first;
    // touches the channel only in the first case (see detail::link).
    bool unregister(node_queue& q, select_node& n, detail::channel_waiter& w);

    // Moves the element `n` waits to insert into `dst`; marks `n` done.
    static void take_from(select_node& n, void* dst) noexcept {
        auto& w = detail::waiter_of(n);
        ::new (dst) T(std::move(*static_cast<T*>(w.elem)));
        w.state.store(detail::handoff::done, std::memory_order_release);
    }
    // Moves `src` into the storage `n` waits with; marks `n` done.
    static void give_to(select_node& n, T&& src) noexcept {
        auto& w = detail::waiter_of(n);
        ::new (w.elem) T(std::move(src));
        w.state.store(detail::handoff::done, std::memory_order_release);
    }
    // Pops every claimable waiter of `q`, marks it closed, commits its wake
    // and appends it to `woken` (node_queue::defer_wake) if it is owed an
    // unpark after unlock; returns the count.
    static std::size_t collect_closed(node_queue& q, node_queue& woken,
                                      detail::handoff how) noexcept;
    // Under lock_, after completing `n`'s operation: commits the wake (see
    // select_node::commit) and returns `n` if its waiter must be unparked
    // after unlocking, nullptr if it is awake and must not be touched again.
    // Committing under the lock matters for general-mode (waituntil with
    // `&`) nodes: an awake waiter may finish its statement, and end the
    // node's life, as soon as it can take lock_.
    static select_node* owed_unpark(select_node& n) noexcept { return n.commit() ? &n : nullptr; }

    T* slot(std::size_t i) noexcept { return std::launder(buffer_ + i); }
    std::size_t wrap(std::size_t i) const noexcept { return i >= capacity_ ? i - capacity_ : i; }
    std::size_t tail_index() const noexcept {
        return wrap(head_ + count_.load(std::memory_order_relaxed));
    }
    std::size_t locked_size(const node_queue& q) const noexcept {
        lock_.lock();
        const std::size_t n = q.size();
        lock_.unlock();
        return n;
    }
    [[noreturn]] static void throw_closed_remove(const void* ch, const char* name) {
        throw channel_closed(ch, name, channel_operation::remove);
    }

    // The ring starts on its own cache line (no false sharing with the heap
    // neighbours of a small buffer).
    static constexpr std::align_val_t buffer_alignment{alignof(T) > 64 ? alignof(T) : 64};

    // The hot fields share the lock's cache line.
    alignas(64) mutable spinlock lock_;
    std::atomic<std::size_t> count_{0};  // written under lock_, read anywhere
    std::size_t head_ = 0;
    const std::size_t capacity_;
    T* buffer_ = nullptr;
    node_queue producers_;
    node_queue consumers_;
    std::atomic<bool> closed_{false};  // written under lock_
    const char* name_;
#if defined(TROUPE_STATISTICS)
    channel_statistics stats_{1};  // under lock_
#endif
};

}  // namespace troupe

#include "troupe/channel_select.hpp"
#include "troupe/detail/channel_impl.hpp"
