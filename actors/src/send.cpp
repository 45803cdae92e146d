// The send operation: a refused send (finished receiver) is dropped, a
// behaviour's send is staged in its worker (send_staging.cpp), any other
// goes straight to the receiver's mailbox under its lock.
#include "executor.hpp"
#include "troupe/config.hpp"

namespace troupe::detail {

namespace {
// The body of send and send_external; `may_stage` is a constant at each
// call, so send's fast path is unchanged.
[[gnu::always_inline]] inline bool send_with(actor& a, message& m, dispatch_fn fn,
                                             [[maybe_unused]] const dispatch_names& names,
                                             bool may_stage) {
    // A refused send drops the message here, out of line (the trampoline
    // with no actor runs its allocation action or fails the request).
#if defined(TROUPE_CHECKED)
    if (!check_send(a, m, names)) [[unlikely]] {
        fn(nullptr, m);
        return false;
    }
    const envelope e{&a, &m, fn, &names};
    // Strong guarantee: a send that throws (std::bad_alloc growing a
    // buffer) queued nothing, so it leaves no pending delivery counted.
    struct uncount {
        message& m;
        bool armed = true;
        ~uncount() {
            if (armed) send_access::note_unqueued(m);
        }
    } undo{m};
#else
    // A finished actor takes nothing (checked builds find it by address in
    // check_send, and report it): the header word is read for the mailbox
    // below anyway.
    if (!worker_access::alive(a)) [[unlikely]] {
        fn(nullptr, m);
        return false;
    }
    const envelope e{&a, &m, fn};
#endif
    worker* w = may_stage ? tls_worker : nullptr;
    if (w && w->in_batch()) [[likely]] {
        w->send_from_behaviour(e);
    } else {
        mailbox& mb = *worker_access::box(a);
        if (append_locked_and_check(mb, &e, 1)) [[unlikely]]
            mb.exec->wake_for_external_send(mb);
    }
#if defined(TROUPE_CHECKED)
    undo.armed = false;
#endif
#if defined(TROUPE_STATISTICS)
    note_sent(a);
#endif
    return true;
}
}  // namespace

bool send(actor& a, message& m, dispatch_fn fn, const dispatch_names& names) {
    return send_with(a, m, fn, names, true);
}

bool send_external(actor& a, message& m, dispatch_fn fn, const dispatch_names& names) {
    return send_with(a, m, fn, names, false);
}

#if defined(TROUPE_STATISTICS)
void note_sent(actor& a) noexcept {
    worker* w = tls_worker;
    mailbox& mb = *worker_access::box(a);
    if (w && &w->exec == mb.exec) bump(w->stats.sent);
    else mb.exec->ext_sent.fetch_add(1, std::memory_order_relaxed);
}
#endif

}  // namespace troupe::detail

namespace troupe {

void flush_sends() {
    using detail::tls_worker;
    if (detail::worker* w = tls_worker; w && w->in_batch()) w->flush_before_blocking();
}

}  // namespace troupe
