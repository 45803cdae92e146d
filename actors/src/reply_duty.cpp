// The reply duty of requests (troupe/request.hpp): who still owes the
// requester an answer while its receive runs, the count of asks
// outstanding, and the errors a request fails with when nobody answers.
#include <exception>
#include <string>
#include <utility>

#include "executor.hpp"
#include "troupe/request_error.hpp"

namespace troupe::detail {

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

void note_ask(actor& a, const void* reply, const dispatch_names& names, bool deadline) noexcept {
    worker* w = tls_worker;
    if (!w || !w->in_batch()) return;
    // The asker may send to `a`, so `a` is alive here: its mailbox and name
    // are read now, a report may not dereference `a` later.
    worker::ask_note& n = w->asked;
    n.target = &a;
    n.target_box = worker_access::box(a);
    n.target_name = a.name();
    n.names = &names;
    n.deadline = deadline;
    n.reply = reply;
}

void end_ask(ask_counter* c) noexcept {
    // acq_rel: the last one out deletes the counter after every other use.
    if (c && c->word.fetch_sub(2, std::memory_order_acq_rel) == 2) delete c;
}

void restore_reply_duty(const void* request) noexcept {
    for (request_scope* s = tls_request_scope; s; s = s->outer_)
        if (s->request_ == request) s->owes_ = true;
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

}  // namespace troupe::detail
