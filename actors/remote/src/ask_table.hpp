#pragma once
// Internal: the asks this rank sent and awaits replies to. No MPI (the
// MPI-free tests in tests/remote/parts race it from OS threads).
//
// A slot table with a free list: no allocation once grown. An ask's id is
// generation << 32 | (index + 1); a slot's generation grows each time the
// slot is taken, so a stale id (a reply for an ask already ended, or a
// forged one) never matches a later ask in the same slot.
//
// A slot is free, live (q set: someone waits for the reply), or abandoned
// (q cleared: the request was destroyed first, or its deadline failed it;
// the reply, when it comes, frees the slot and is dropped, and counted as
// a late reply if the deadline had failed it).
//
// An ask with a deadline has a timer record (ask_deadline) in its slot,
// armed in core's timer service. Its callback (expire) takes a live slot as
// a reply would and leaves it abandoned with the record still in it; the
// record is freed by whoever frees the slot (take, take_to, cancel, or the
// table's destructor), after timer_cancel, which returns only once the
// callback is not running: a record is never freed under a running
// callback, and no lock of this table is held while cancelling (the
// callback takes lock_).
//
// Invariants:
//   - Every ask ends exactly once: by take() or take_to() (a reply, or its
//     rank ended: the taker completes the request), by cancel() (its frame
//     was never shipped), or by abandon() (its request is being destroyed).
//     Each of those finds the slot live under lock_ and frees or abandons
//     it under the same hold, so two of them never both find it live.
//   - `awaited` (the counter passed in, which the progress policy reads to
//     decide whether to poll closely) counts the live slots (plus what
//     else its owner adds, lookups): add() raises it once per ask, and
//     whichever of take, take_to, cancel and abandon ends the live slot
//     lowers it once. An abandoned slot is not counted: a reply that never
//     comes must not keep a core polling.
//   - A request is never written after abandon() returns for it: a taker
//     raises the request's own count of writes in progress
//     (request_tag::replies_writing) under lock_ as it takes the slot, and
//     lowers it with a release as the write's last touch of the request;
//     abandon() that finds its slot taken waits until that count is zero
//     (acquire loads), so the destructor that follows sees the whole
//     write. The count is the request's, not the table's: takers run at
//     once (a reply on the progress thread, a deadline on the timer
//     service's), and one taker ending its write must not release the
//     abandon() of another's request (a single table-wide "completing"
//     word did: TSan caught a write after abandon() returned).
//   - lock_ is held for a few loads and stores only, never across user
//     code, an allocation (add() grows the table with it held, but throws
//     with nothing changed) or a park: spinning on it always ends.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "troupe/detail/timer.hpp"
#include "troupe/remote/detail/engine_api.hpp"
#include "troupe/spinlock.hpp"

namespace troupe::remote::detail {

class ask_table;

/// The timer of an ask with a deadline (see the invariants above).
struct ask_deadline {
    troupe::detail::timer_node node;
    ask_table* table = nullptr;
    std::uint64_t id = 0;
    int to = -1;
    std::string what;  // the timeout's text
};

/// What names an ask beyond its rank and message: the future its reply
/// fulfils (compared only: a blocked behaviour's wait is matched with it)
/// and the asked actor's id and type.
struct ask_label {
    const void* reply = nullptr;
    std::uint64_t target = 0;
    std::string_view actor_type;
};

/// A live ask found by its reply future (find_by_reply).
struct ask_seen {
    int to = -1;
    std::uint64_t target = 0;
    std::string_view name, actor_type;
    bool deadline = false;
};

class ask_table {
public:
    /// `awaited`: the counter of replies awaited (see the invariants).
    explicit ask_table(std::atomic<int>& awaited) noexcept : awaited_(awaited) {}
    ask_table(const ask_table&) = delete;
    /// Disarms and frees the deadlines still held (asks never answered).
    ~ask_table();

    /// As add(q, fn, to, name), with a deadline: at `when`, if the ask is
    /// still live, its request fails with error_code::timed_out carrying
    /// `what` (through `fn`, on the timer service's thread), the slot is
    /// abandoned, and a reply arriving later is dropped and counted
    /// (late_replies). Throws std::bad_alloc (nothing recorded or armed).
    std::uint64_t add(troupe::detail::request_tag& q, ask_complete_fn fn, int to,
                      std::string_view name, std::chrono::steady_clock::time_point when,
                      std::string what, const ask_label& label = {});

    /// Records a live ask of rank `to` for request `q`, completed by `fn`;
    /// returns its id. Raises the awaited count after the slot is filled.
    /// Throws std::bad_alloc growing the table (nothing recorded).
    std::uint64_t add(troupe::detail::request_tag& q, ask_complete_fn fn, int to,
                      std::string_view name, const ask_label& label = {});

    /// The live ask whose label's reply future is `reply`, if any (a
    /// request cycle's edge out of this rank). Nothrow; takes the lock.
    bool find_by_reply(const void* reply, ask_seen& out) noexcept;

    /// Whether a taker is writing a reply into `q` now (abandon() waits
    /// for it). Nothrow.
    static bool writing(const troupe::detail::request_tag& q) noexcept {
        return std::atomic_ref{const_cast<std::uint32_t&>(q.replies_writing)}.load(
                   std::memory_order_acquire) != 0;
    }

    /// Ends live ask `id` whose frame was never shipped; false if it had
    /// ended already (taken by take_to, say).
    bool cancel(std::uint64_t id) noexcept;

    /// Request `q` of ask `id` is being destroyed: a live ask becomes
    /// abandoned (its reply will be dropped); if a taker is writing the
    /// reply into `q` now, waits for that write to end (it never parks).
    /// Returns true if it abandoned a live ask.
    bool abandon(troupe::detail::request_tag& q, std::uint64_t id) noexcept;

    /// A taken ask: the request to complete (null if the ask had been
    /// abandoned, or none was found), while the taker writes into it.
    /// Destroying it ends the write (abandon() may return).
    class completion {
    public:
        completion() noexcept = default;
        completion(completion&& o) noexcept
            : writing_(o.writing_),
              deadline_(o.deadline_),
              q(o.q),
              fn(o.fn),
              name(o.name),
              found(o.found) {
            o.writing_ = nullptr;
            o.deadline_ = nullptr;
        }
        completion& operator=(completion&& o) noexcept {
            done();
            release(deadline_);
            writing_ = o.writing_;
            deadline_ = o.deadline_;
            q = o.q;
            fn = o.fn;
            name = o.name;
            found = o.found;
            o.writing_ = nullptr;
            o.deadline_ = nullptr;
            return *this;
        }
        // Ends the write, then disarms and frees the slot's deadline.
        ~completion() {
            done();
            release(deadline_);
        }
        /// Ends the write now (the request may be destroyed from here on).
        void done() noexcept;

    private:
        friend class ask_table;
        // q while it is being written (its replies_writing raised by us)
        troupe::detail::request_tag* writing_ = nullptr;
        ask_deadline* deadline_ = nullptr;  // the freed slot's, to release

    public:
        troupe::detail::request_tag* q = nullptr;
        ask_complete_fn fn = nullptr;
        std::string_view name;  // the request's message name
        bool found = false;     // a live or abandoned slot matched (and is free now)
    };

    /// Takes ask `id` for its reply: frees its slot, and returns the request
    /// to complete if the ask was live (lowering the awaited count).
    completion take(std::uint64_t id) noexcept;
    /// Takes one ask (live or abandoned) awaiting rank `r`, as take() does;
    /// found is false when none is left.
    completion take_to(int r) noexcept;

    /// Whether ask `id` is live; true also when the table is busy (the
    /// caller, a parking thread deciding to keep polling, asks again).
    bool pending(std::uint64_t id) noexcept;

    /// Live and abandoned asks, for troupe::dump.
    void count(std::size_t& live, std::size_t& abandoned) noexcept;
    /// Asks failed by their deadline, and replies dropped because they came
    /// after it (troupe::dump; tests).
    std::uint64_t timed_out() const noexcept { return timed_out_.load(std::memory_order_relaxed); }
    std::uint64_t late_replies() const noexcept {
        return late_replies_.load(std::memory_order_relaxed);
    }

    /// An ask whose deadline had passed when it was made (never sent).
    void note_timed_out() noexcept { timed_out_.fetch_add(1, std::memory_order_relaxed); }

    /// Disarms and frees a deadline record (null: nothing). Waits while its
    /// callback runs; call it with no lock of the table held. Nothrow.
    static void release(ask_deadline* d) noexcept;

private:
    struct slot {
        troupe::detail::request_tag* q = nullptr;
        ask_complete_fn fn = nullptr;
        std::uint32_t generation = 0;
        std::uint32_t next_free = 0;  // index + 1 of the next free slot, 0: none
        bool abandoned = false;
        bool timed_out = false;  // abandoned by its deadline (a reply is late)
        ask_deadline* deadline = nullptr;
        int to = -1;            // the rank asked
        std::string_view name;  // the request's message name (for errors)
        ask_label label;        // its reply future, the actor asked
    };
    static std::uint32_t index_of(std::uint64_t id) noexcept {
        return static_cast<std::uint32_t>(id & 0xffffffffu) - 1;
    }
    bool matches(std::uint32_t idx, std::uint64_t id) const noexcept {
        return idx < slots_.size() && slots_[idx].generation == (id >> 32);
    }
    // Under lock_: frees slot idx (live or abandoned) into a completion.
    completion take_slot(std::uint32_t idx) noexcept;
    // Under lock_: `c` writes into request q from now until c.done().
    static void begin_write(completion& c, troupe::detail::request_tag& q) noexcept {
        // Relaxed: lock_'s release publishes it to an abandon() that takes
        // lock_ after us; the count's own release sequence orders the rest.
        std::atomic_ref{q.replies_writing}.fetch_add(1, std::memory_order_relaxed);
        c.writing_ = &q;
    }
    // The deadline of ask `id` passed: takes a live slot's request as take()
    // does, leaving the slot abandoned (timed out) with its record.
    completion expire(std::uint64_t id) noexcept;
    static void on_deadline(troupe::detail::timer_node& n) noexcept;

    std::atomic<int>& awaited_;
    troupe::spinlock lock_{"troupe::remote asks"};
    std::vector<slot> slots_;
    std::uint32_t free_ = 0;  // index + 1 of the first free slot, 0: none
    std::atomic<std::uint64_t> timed_out_{0}, late_replies_{0};
};

// Inline: add, take and the completion run once per ask, on its round
// trip; pending on every check of a parking asker.

inline std::uint64_t ask_table::add(troupe::detail::request_tag& q, ask_complete_fn fn, int to,
                                    std::string_view name, const ask_label& label) {
    lock_.lock();
    std::uint32_t idx;
    if (free_ != 0) {
        idx = free_ - 1;
        free_ = slots_[idx].next_free;
    } else {
        try {
            slots_.emplace_back();
        } catch (...) {
            lock_.unlock();
            throw;
        }
        idx = static_cast<std::uint32_t>(slots_.size() - 1);
    }
    slot& s = slots_[idx];
    s.q = &q;
    s.fn = fn;
    s.to = to;
    s.name = name;
    s.label = label;
    ++s.generation;
    const std::uint64_t id = (std::uint64_t{s.generation} << 32) | (idx + 1);
    lock_.unlock();
    // seq_cst: the caller's Dekker pair with a rank's goodbye (it fills the
    // slot, then loads the rank's state; the goodbye stores the state, then
    // scans with take_to) needs the fill ordered before that load.
    awaited_.fetch_add(1, std::memory_order_seq_cst);
    return id;
}

inline ask_table::completion ask_table::take_slot(std::uint32_t idx) noexcept {
    slot& s = slots_[idx];
    completion c;
    c.found = true;
    c.q = s.q;
    c.fn = s.fn;
    c.name = s.name;
    c.deadline_ = s.deadline;
    s.deadline = nullptr;
    s.q = nullptr;
    s.abandoned = false;
    s.timed_out = false;
    s.next_free = free_;
    free_ = idx + 1;
    if (c.q) begin_write(c, *c.q);  // under the lock: an abandon() that misses the slot sees it
    return c;
}

inline ask_table::completion ask_table::take(std::uint64_t id) noexcept {
    const std::uint32_t idx = index_of(id);
    completion c;
    bool late = false;
    lock_.lock();
    if (matches(idx, id) && (slots_[idx].q || slots_[idx].abandoned)) {
        late = slots_[idx].timed_out;
        c = take_slot(idx);
    }
    lock_.unlock();
    if (late) late_replies_.fetch_add(1, std::memory_order_relaxed);
    // An abandoned ask was uncounted when it was given up.
    if (c.q) awaited_.fetch_sub(1, std::memory_order_seq_cst);
    return c;
}

inline void ask_table::completion::done() noexcept {
    if (!writing_) return;
    // Release, and our last touch of the request: abandon() reading the
    // count this leaves (or a later one in its release sequence) is ordered
    // after the write into q.
    std::atomic_ref{writing_->replies_writing}.fetch_sub(1, std::memory_order_release);
    writing_ = nullptr;
}

inline bool ask_table::pending(std::uint64_t id) noexcept {
    if (!lock_.try_lock()) return true;  // busy: ask again on the next check
    const std::uint32_t idx = index_of(id);
    const bool live = matches(idx, id) && slots_[idx].q != nullptr;
    lock_.unlock();
    return live;
}

}  // namespace troupe::remote::detail
