// An actor in its system: joining it (attach) and leaving it (detach), the
// registry of live actors that have received a message, and what happens
// when a behaviour throws.
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
        ticket = w->ticket_for_new(a);
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

}  // namespace troupe
