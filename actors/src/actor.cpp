// Actor attach/detach, the live-actor registry, copy queues, names.
#include <cstdlib>
#include <cstring>
#include <new>
#include <ostream>
#include <stdexcept>
#include <string>

#include "executor.hpp"
#include "troupe/config.hpp"
#include "troupe/error.hpp"

namespace troupe::detail {

std::string_view class_of_constructor(std::string_view fn) noexcept {
    // "ns::cls<T>::cls(int)" -> "ns::cls<T>"; anything else is returned whole.
    auto paren = fn.find('(');
    std::string_view head = fn.substr(0, paren);
    // Strip a leading return type or qualifiers ("void f()" has a space).
    int depth = 0;
    std::size_t last_sep = std::string_view::npos;
    for (std::size_t i = 0; i + 1 < head.size(); ++i) {
        char c = head[i];
        if (c == '<') ++depth;
        else if (c == '>') --depth;
        else if (depth == 0 && c == ':' && head[i + 1] == ':') last_sep = i;
    }
    if (last_sep == std::string_view::npos) return fn;
    std::string_view cls = head.substr(0, last_sep);
    auto space = cls.rfind(' ');
    if (space != std::string_view::npos && cls.find('<') > space) cls = cls.substr(space + 1);
    return cls;
}

void attach(actor& a, actor_system* sys, const std::source_location& where) {
#if defined(TROUPE_CHECKED)
    forget_ended(&a);  // a new actor at an ended one's address
#endif
    executor* ex = sys ? &sys->impl() : (tls_worker ? &tls_worker->exec : default_executor());
    // acquire: pairs with the release in stop(); a stopped system takes no actors.
    if (!ex || !ex->accepting.load(std::memory_order_acquire)) [[unlikely]] {
        worker_access::mark_unattached(a);
        const std::string who = describe("actor", std::string{class_of_constructor(where.function_name())}.c_str(), &a);
        if constexpr (checked_build) {
            report_misuse(who + ": created with no running actor system (start one first)");
            return;
        }
        throw std::logic_error("troupe: " + who + ": created with no running actor system");
    }
    std::size_t ticket;
    worker* w = tls_worker;
    if (w && &w->exec == ex) {
        ticket = w->next_ticket();
        // release: see executor::live().
        bump(w->created, 1, std::memory_order_release);
    } else {
        ticket = ex->ticket_external();
        ex->ext_created.fetch_add(1, std::memory_order_seq_cst);
    }
    worker_access::set_box(a, &ex->mailboxes[ticket]);
}

void detach(actor& a) noexcept {
    if (worker_access::unattached(a)) return;
    mailbox& mb = *worker_access::box(a);
    executor& ex = *mb.exec;
    // Only the worker holding mb's batch may touch its registry; a live actor
    // destroyed elsewhere is a program error (reported below), so this is a
    // best effort under the lock.
    mb.lock.lock();
    worker_access::unlink_settled(a);
    mb.lock.unlock();
    worker_access::mark_ended(a);
    if constexpr (checked_build) {
        if (!ex.abandoned.load(std::memory_order_relaxed) && !ex.stopped.load(std::memory_order_relaxed))
            report_misuse(describe("actor", nullptr, &a) +
                          ": destroyed before it finished (no behaviour returned Delete/Destroy/Finished); "
                          "messages still queued for it would dangle");
    }
    ex.ext_terminated.fetch_add(1, std::memory_order_seq_cst);
    ex.notify_if_done();
}

// Registry (see detail::mailbox): by the worker holding mb's batch.
void worker_access::link_settled(actor& a) noexcept {
    mailbox& mb = *box(a);
    set_flags(a, 0, actor::registered_bit);
    a.reg_prev_ = nullptr;
    a.reg_next_ = mb.settled;
    if (mb.settled) mb.settled->reg_prev_ = &a;
    mb.settled = &a;
}

void worker_access::unlink_settled(actor& a) noexcept {
    if (!registered(a)) return;
    mailbox& mb = *box(a);
    if (a.reg_prev_)
        a.reg_prev_->reg_next_ = a.reg_next_;
    else
        mb.settled = a.reg_next_;
    if (a.reg_next_) a.reg_next_->reg_prev_ = a.reg_prev_;
    a.reg_prev_ = a.reg_next_ = nullptr;
    set_flags(a, actor::registered_bit, 0);
}

void send(actor& a, message& m, dispatch_fn fn, [[maybe_unused]] const dispatch_names& names) {
#if defined(TROUPE_CHECKED)
    if (!check_send(a, m, names)) return;
    const envelope e{&a, &m, fn, &names};
#else
    const envelope e{&a, &m, fn};
#endif
    worker* w = tls_worker;
    if (w && w->in_batch()) [[likely]] {
        w->send_from_behaviour(e);
    } else {
        mailbox& mb = *worker_access::box(a);
        mb.lock.lock();
        mb.queue->push(e);
        // Invariant: pending == queue->size() whenever the lock is free.
        mb.pending.store(mb.queue->size(), std::memory_order_relaxed);
        // A worker that parks announces itself in `sleepers`, then checks its
        // mailboxes under their locks: either it sees this envelope, or (its
        // check preceded our lock) we see its announcement here and wake it.
        const bool wake = mb.sleepers->load(std::memory_order_relaxed) != 0;
        mb.lock.unlock();
        if (wake) [[unlikely]]
            wake_owner(mb);
    }
#if defined(TROUPE_STATISTICS)
    note_sent(a);
#endif
}

void copy_queue::append(const envelope* e, std::uint32_t n) {
    if (next_ == count_) next_ = count_ = 0;
    while (capacity_ - count_ < n) grow();
    std::memcpy(static_cast<void*>(buf_ + count_), e, sizeof(envelope) * n);
    count_ += n;
}

copy_queue::copy_queue(std::uint32_t capacity)
    : buf_(static_cast<envelope*>(std::malloc(sizeof(envelope) * capacity))), capacity_(capacity) {
    if (!buf_) throw std::bad_alloc{};
}

copy_queue::~copy_queue() { std::free(buf_); }

void copy_queue::grow() {
    // Envelopes are trivially copyable: realloc moves them.
    auto* b = static_cast<envelope*>(std::realloc(buf_, sizeof(envelope) * capacity_ * 2));
    if (!b) throw std::bad_alloc{};
    buf_ = b;
    capacity_ *= 2;
}

void copy_queue::shrink() noexcept {
    // Only called on an empty queue: nothing to preserve.
    const std::uint32_t half = capacity_ / 2;
    if (auto* b = static_cast<envelope*>(std::realloc(buf_, sizeof(envelope) * half))) {
        buf_ = b;
        capacity_ = half;
    }
}

#if defined(TROUPE_STATISTICS)
void note_sent(actor& a) noexcept {
    worker* w = tls_worker;
    mailbox& mb = *worker_access::box(a);
    if (w && &w->exec == mb.exec)
        bump(w->stats.sent);
    else
        mb.exec->ext_sent.fetch_add(1, std::memory_order_relaxed);
}
#endif

}  // namespace troupe::detail

namespace troupe {

void flush_sends() {
    using detail::tls_worker;
    if (detail::worker* w = tls_worker; w && w->in_batch()) w->flush_before_blocking();
}

std::ostream& operator<<(std::ostream& os, const actor_statistics& s) {
    os << "  actors created:         " << s.actors_created << '\n'
       << "  messages sent:          " << s.messages_sent << '\n'
       << "  messages received:      " << s.messages_received << '\n'
       << "  gulps:                  " << s.gulps << " (average " << s.average_gulp() << " messages)\n"
       << "  missed gulps:           " << s.missed_gulps << '\n'
       << "  steal attempts:         " << s.steal_attempts << '\n'
       << "  steal failures:         " << s.steal_no_candidate << " no candidate, " << s.steal_failed_swaps
       << " failed swaps\n"
       << "  steals:                 " << s.steals << '\n'
       << "  messages stolen:        " << s.messages_stolen << " (average " << s.average_steal() << " per steal)\n"
       << "  idle parks:             " << s.parks << '\n';
    return os;
}

}  // namespace troupe
