// Actor attach/detach, the live-actor registry, copy queues, names, the
// reply duty of requests, exceptions escaping behaviours.
#include <cxxabi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <ostream>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <utility>

#include "executor.hpp"
#include "troupe/config.hpp"
#include "troupe/error.hpp"
#include "troupe/request_error.hpp"

namespace troupe::detail {

namespace {

// Whether s[b, e) is a scope users do not write: a function (local
// classes: "f()", "f() const", "<lambda()>") or an anonymous namespace.
bool unwritten_scope(std::string_view c) noexcept {
    if (c.empty()) return false;
    if (c == "{anonymous}" || c == "(anonymous namespace)") return true;
    if (c.starts_with("<lambda")) return true;
    if (c.back() == ')') return true;
    if (c.ends_with(") const") || c.ends_with(") volatile") || c.ends_with(") const volatile"))
        return true;
    return false;
}

// Start of the name component ending just before `end` in s: walks back
// over balanced brackets to the previous "::", or to a top-level separator.
std::size_t component_begin(const std::string& s, std::size_t end) noexcept {
    int depth = 0;
    std::size_t i = end;
    while (i > 0) {
        const char c = s[i - 1];
        if (c == ')' || c == '>' || c == ']') {
            ++depth;
        } else if (c == '(' || c == '<' || c == '[') {
            if (depth == 0) return i;  // an enclosing argument list starts here
            --depth;
        } else if (depth == 0) {
            if (c == ',') return i;
            if (c == ' ' && !(i >= 2 && s[i - 2] == ')')) return i;  // "f() const" keeps its space
            if (c == ':' && i >= 2 && s[i - 2] == ':') return i;
        }
        --i;
    }
    return 0;
}

}  // namespace

std::string user_type_name(std::string_view spelling) {
    std::string s{spelling};
    // Drop each "scope::" whose scope is unwritten, left to right; a scope
    // starts after the previous "::" or a top-level separator.
    std::size_t from = 0;
    for (;;) {
        const std::size_t sep = s.find("::", from);
        if (sep == std::string::npos) break;
        const std::size_t b = component_begin(s, sep);
        const std::string_view c = std::string_view{s}.substr(b, sep - b);
        if (unwritten_scope(c)) {
            // Also drop the qualifiers before a local class's function scope
            // ("ns::f()::x" -> "x"): everything back to the qualified name's
            // start.
            std::size_t q = b;
            while (q >= 2 && s[q - 1] == ':' && s[q - 2] == ':') q = component_begin(s, q - 2);
            s.erase(q, sep + 2 - q);
            from = q;
        } else {
            from = sep + 2;
        }
    }
    return s;
}

std::string class_of_constructor(std::string_view fn) {
    // "ns::cls<T>::cls(int) [with T = int]" -> "ns::cls<T>"; a local class's
    // "f()::lonely::lonely()" -> "lonely"; anything else is returned whole.
    if (auto with = fn.find(" [with "); with != std::string_view::npos) fn = fn.substr(0, with);
    // The constructor's parameter list: the last balanced "(...)".
    if (fn.empty() || fn.back() != ')') return user_type_name(fn);
    int depth = 0;
    std::size_t open = std::string_view::npos;
    for (std::size_t i = fn.size(); i > 0; --i) {
        const char c = fn[i - 1];
        if (c == ')') ++depth;
        else if (c == '(' && --depth == 0) {
            open = i - 1;
            break;
        }
    }
    if (open == std::string_view::npos) return std::string{fn};
    const std::string head{fn.substr(0, open)};                // "f()::lonely::lonely"
    const std::size_t b = component_begin(head, head.size());  // the constructor's own name
    if (b < 2 || head[b - 1] != ':' || head[b - 2] != ':') return user_type_name(fn);
    std::string cls = head.substr(0, b - 2);
    // Strip a leading return type or qualifiers ("void f()" has a space at
    // the top level).
    const std::size_t start = component_begin(cls, cls.size());
    std::size_t qs = start;
    while (qs >= 2 && cls[qs - 1] == ':' && cls[qs - 2] == ':') qs = component_begin(cls, qs - 2);
    return user_type_name(std::string_view{cls}.substr(qs));
}

void attach(actor& a, actor_system* sys, const std::source_location& where) {
#if defined(TROUPE_CHECKED)
    forget_ended(&a);  // a new actor at an ended one's address
#endif
    executor* ex = sys ? &sys->impl() : (tls_worker ? &tls_worker->exec : default_executor());
    // acquire: pairs with the release in stop(); a stopped system takes no actors.
    if (!ex || !ex->accepting.load(std::memory_order_acquire)) [[unlikely]] {
        worker_access::mark_unattached(a);
        const std::string who =
            describe("actor", class_of_constructor(where.function_name()).c_str(), &a);
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
    life_destroyed(a);
    if constexpr (checked_build) {
        if (!ex.abandoned.load(std::memory_order_relaxed) &&
            !ex.stopped.load(std::memory_order_relaxed))
            report_misuse(
                describe("actor", nullptr, &a) +
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
    if (a.reg_prev_) a.reg_prev_->reg_next_ = a.reg_next_;
    else mb.settled = a.reg_next_;
    if (a.reg_next_) a.reg_next_->reg_prev_ = a.reg_prev_;
    a.reg_prev_ = a.reg_next_ = nullptr;
    set_flags(a, actor::registered_bit, 0);
}

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

void copy_queue::append(const envelope* e, std::uint32_t n) {
    if (next_ == count_) next_ = count_ = 0;
    while (capacity_ - count_ < n) grow();
    std::memcpy(static_cast<void*>(buf_ + count_), e, sizeof(envelope) * n);
    count_ += n;
}

// Buffers come from operator new (nothrow), so allocation-failure tests
// see them; envelopes are trivially copyable (memcpy moves them).
namespace {
envelope* allocate_envelopes(std::uint32_t n) noexcept {
    return static_cast<envelope*>(::operator new(sizeof(envelope) * n, std::nothrow));
}
}  // namespace

copy_queue::copy_queue(std::uint32_t capacity)
    : buf_(allocate_envelopes(capacity)), capacity_(capacity) {
    if (!buf_) throw std::bad_alloc{};
}

copy_queue::~copy_queue() { ::operator delete(buf_); }

void copy_queue::grow() {
    // Strong: on failure the queue is unchanged. Past the retained maximum
    // a worker first looks in its burst cache (no allocation, pages
    // already resident).
    const std::uint32_t want = capacity_ * 2;
    std::uint32_t got = want;
    burst_cache* cache =
        want > defaults::actors::copy_queue_retain_max ? current_burst_cache() : nullptr;
    envelope* b = cache ? cache->take(want, got) : nullptr;
    if (!b) {
        b = allocate_envelopes(want);
        if (!b) throw std::bad_alloc{};
        got = want;
    }
    if (count_) std::memcpy(static_cast<void*>(b), buf_, sizeof(envelope) * count_);
    if (cache && capacity_ > defaults::actors::copy_queue_retain_max) cache->give(buf_, capacity_);
    else ::operator delete(buf_);
    buf_ = b;
    capacity_ = got;
}

void copy_queue::cut_back() noexcept {
    // Only called on an empty queue. On failure the queue keeps its array.
    // Back to the smallest size, not to the retained maximum: a queue a
    // burst passed through is often not used again (a pipeline stage's),
    // and a retained maximum kept in each of them adds up (radixsort: 33
    // queues); one used again regrows in a few doublings, and past the
    // retained maximum takes the burst size from the cache.
    envelope* b = allocate_envelopes(defaults::actors::copy_queue_min_capacity);
    if (!b) return;
    if (burst_cache* cache = current_burst_cache()) cache->give(buf_, capacity_);
    else ::operator delete(buf_);
    buf_ = b;
    capacity_ = defaults::actors::copy_queue_min_capacity;
}

burst_cache::~burst_cache() {
    for (std::size_t i = 0; i < count_; ++i) ::operator delete(arrays_[i].buf);
}

void burst_cache::give(envelope* buf, std::uint32_t n) noexcept {
    const std::size_t size = sizeof(envelope) * n;
    if (count_ == max_arrays || bytes_ + size > defaults::actors::burst_cache_bytes) {
        ::operator delete(buf);
        return;
    }
    arrays_[count_++] = {buf, n};
    bytes_ += size;
}

envelope* burst_cache::take(std::uint32_t n, std::uint32_t& got) noexcept {
    std::size_t best = count_;
    for (std::size_t i = 0; i < count_; ++i)
        if (arrays_[i].n >= n && (best == count_ || arrays_[i].n > arrays_[best].n)) best = i;
    if (best == count_) return nullptr;
    const entry e = arrays_[best];
    arrays_[best] = arrays_[--count_];
    bytes_ -= sizeof(envelope) * e.n;
    got = e.n;
    return e.buf;
}

burst_cache* current_burst_cache() noexcept {
    worker* w = tls_worker;
    return w ? &w->bursts : nullptr;
}

void copy_queue::shrink_to(std::uint32_t capacity) noexcept {
    // Only called on an empty queue: nothing to preserve. On failure the
    // queue keeps its larger buffer.
    if (envelope* b = allocate_envelopes(capacity)) {
        ::operator delete(buf_);
        buf_ = b;
        capacity_ = capacity;
    }
}

// ---------------------------------------------------------------- reply duty

namespace {
// The innermost request_scope of this thread (behaviours do not nest on a
// worker, so at most one in practice). Only this thread reads or writes it.
thread_local request_scope* tls_request_scope = nullptr;
}  // namespace

request_scope::request_scope(const void* request) noexcept
    : request_(request), outer_(tls_request_scope) {
    tls_request_scope = this;
}

request_scope::~request_scope() { tls_request_scope = outer_; }

request_scope* exchange_request_scope(request_scope* s) noexcept {
    return std::exchange(tls_request_scope, s);
}

bool take_reply_duty(const void* request) noexcept {
    for (request_scope* s = tls_request_scope; s; s = s->outer_) {
        if (s->request_ == request) {
            const bool owed = s->owes_;
            s->owes_ = false;
            return owed;
        }
    }
    return false;
}

void begin_ask(actor& a, request_tag& q) noexcept {
    mailbox* mb = worker_access::box(a);
    if (!mb || !mb->exec) return;  // not attached to a system: not counted
    ask_counter* c = mb->exec->asks.p;
    c->word.fetch_add(2, std::memory_order_relaxed);  // a count: no ordering needed
    q.counted_ask = c;
}

void end_ask(ask_counter* c) noexcept {
    // acq_rel: the last one out deletes the counter after every other use.
    if (c && c->word.fetch_sub(2, std::memory_order_acq_rel) == 2) delete c;
}

void restore_reply_duty(const void* request) noexcept {
    for (request_scope* s = tls_request_scope; s; s = s->outer_)
        if (s->request_ == request) s->owes_ = true;
}

// ---------------------------------------------------------------- behaviour exceptions

allocation behaviour_threw(actor& a, const dispatch_names& names) noexcept {
    try {
        behaviour_exception info{a,  user_type_name(names.actor), user_type_name(names.message), {},
                                 {}, std::current_exception()};
        if (const std::type_info* t = abi::__cxa_current_exception_type())
            info.exception_type = user_type_name(demangle(t->name()));
        try {
            throw;
        } catch (const std::exception& x) {
            info.what = x.what();
        } catch (...) {}
        const actor_system_config& cfg = worker_access::box(a)->exec->cfg;
        const allocation how = cfg.on_behaviour_exception
                                   ? cfg.on_behaviour_exception(info)
                                   : default_behaviour_exception_handler(info);
        // The reason its monitors and links see, if the handler ends it.
        if (how != Nodelete) note_threw(info.exception_type, info.what);
        return how;
    } catch (...) {
        // A throwing handler (or no memory for the report): nothing sane
        // is left to do with the actor.
        std::fprintf(
            stderr,
            "troupe: the behaviour-exception handler threw (or ran out of memory) while handling "
            "an exception from actor '%.*s', message '%.*s'\n",
            static_cast<int>(names.actor.size()), names.actor.data(),
            static_cast<int>(names.message.size()), names.message.data());
        std::terminate();
    }
}

namespace {
std::exception_ptr request_failure(request_error::reason why, const std::string& what) noexcept {
    try {
        return std::make_exception_ptr(request_error(why, what));
    } catch (...) {
        return std::current_exception();  // std::bad_alloc: still an answer
    }
}
}  // namespace

std::exception_ptr request_unanswered(const dispatch_names& names) noexcept {
    try {
        const std::string a = user_type_name(names.actor), m = user_type_name(names.message);
        return request_failure(request_error::reason::unanswered,
                               "troupe: actor '" + a + "' returned from its receive of request '" +
                                   m +
                                   "' without replying, forwarding it or calling defer(); the "
                                   "request fails (call q.defer() to answer it later)");
    } catch (...) {
        return std::current_exception();
    }
}

std::exception_ptr request_receiver_ended(const dispatch_names& names) noexcept {
    try {
        const std::string a = user_type_name(names.actor), m = user_type_name(names.message);
        return request_failure(
            request_error::reason::receiver_finished,
            "troupe: request '" + m + "' sent to actor '" + a + "' after it had finished; dropped");
    } catch (...) {
        return std::current_exception();
    }
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

allocation default_behaviour_exception_handler(const behaviour_exception& e) noexcept {
    const std::string who = detail::describe("actor", e.actor_type.c_str(), &e.receiver);
    std::fprintf(stderr,
                 "troupe: %s: receive of '%s' threw %s%s%s; the actor is terminated (as if it "
                 "returned Finished; "
                 "set actor_system_config::on_behaviour_exception to change this)\n",
                 who.c_str(), e.message_type.c_str(),
                 e.exception_type.empty() ? "an exception" : e.exception_type.c_str(),
                 e.what.empty() ? "" : ": ", e.what.c_str());
    std::fflush(stderr);
    return Finished;
}

void flush_sends() {
    using detail::tls_worker;
    if (detail::worker* w = tls_worker; w && w->in_batch()) w->flush_before_blocking();
}

std::ostream& operator<<(std::ostream& os, [[maybe_unused]] const actor_statistics& s) {
#if !defined(TROUPE_STATISTICS)
    return os << "  statistics not built in (configure troupe with -Dstatistics=true)\n";
#else
    os << "  actors created:         " << s.actors_created << '\n'
       << "  messages sent:          " << s.messages_sent << " (" << s.cross_worker_sends
       << " by behaviours to another worker's mailbox)\n"
       << "  messages received:      " << s.messages_received << '\n'
       << "  gulps:                  " << s.gulps << " (average " << s.average_gulp()
       << " messages)\n"
       << "  missed gulps:           " << s.missed_gulps << '\n'
       << "  steal attempts:         " << s.steal_attempts << '\n'
       << "  steal failures:         " << s.steal_no_candidate << " no candidate, "
       << s.steal_failed_swaps << " failed swaps\n"
       << "  steals:                 " << s.steals << '\n'
       << "  messages stolen:        " << s.messages_stolen << " (average " << s.average_steal()
       << " per steal)\n"
       << "  idle parks:             " << s.parks << '\n'
       << "  parked workers' work:   " << s.adopted_gulps << " gulps by awake workers, "
       << s.wakes_taken_over << " wakes taken over by the sender\n"
       << "  long batches' flushes:  " << s.long_batch_flushes << '\n';
    return os;
#endif
}

}  // namespace troupe
