// task_group: a list of task records (a user thread each) under a
// spinlock, the first exception, and a stop source per round.
//
// Invariants:
//   G1  a record is linked only after its thread exists, so whoever takes
//       it from the list (a reap in spawn, wait, the destructor) may join
//       it; the task never touches its record's thread handle;
//   G2  the first exception is stored and the stop requested under lock_,
//       so exactly one failure is kept per round and every later task of
//       the round starts with a stopped token.
#include "troupe/task_group.hpp"

#include <cstdio>
#include <optional>
#include <string>

#include "troupe/error.hpp"

namespace troupe {

task_group::task_group(const char* name) : task_group(this_cluster(), name) {}
task_group::task_group(cluster& c, const char* name) : cluster_(&c), name_(name) {}

task_group::~task_group() {
    join_all();
    if (first_) {
        std::string what = "unknown exception";
        try {
            std::rethrow_exception(first_);
        } catch (const std::exception& x) {
            what = x.what();
        } catch (...) {}
        std::fprintf(stderr,
                     "troupe: %s destroyed without wait() collecting a task's exception: %s\n",
                     detail::describe("task_group", name_, this).c_str(), what.c_str());
    }
}

task_group::record* task_group::new_record() {
    // Reap finished tasks now and then, so a long-lived group does not
    // hold a stack per task it ever ran (amortised: at most once per
    // 64 spawns, or as many as are live).
    record* finished = nullptr;
    lock_.lock();
    if (++since_reap_ >= 64 && since_reap_ >= live_.load(std::memory_order_relaxed) / 2) {
        since_reap_ = 0;
        for (record** p = &head_; *p;) {
            record* r = *p;
            if (r->finished.load(std::memory_order_acquire)) {
                *p = r->next;
                r->next = finished;
                finished = r;
            } else {
                p = &r->next;
            }
        }
    }
    stop_token tok = stop_.get_token();
    lock_.unlock();
    while (finished) {
        record* r = finished;
        finished = r->next;
        r->t.join();  // it finished its body: a few instructions from done
        delete r;
        live_.fetch_sub(1, std::memory_order_relaxed);
    }
    record* r = new record;
    r->token = std::move(tok);
    live_.fetch_add(1, std::memory_order_relaxed);
    return r;
}

void task_group::link_record(record* r) noexcept {
    lock_.lock();
    r->next = head_;
    head_ = r;  // G1
    lock_.unlock();
}

void task_group::discard_record(record* r) noexcept {
    delete r;
    live_.fetch_sub(1, std::memory_order_relaxed);
}

void task_group::fail(std::exception_ptr e) noexcept {
    lock_.lock();
    if (!first_) {
        first_ = std::move(e);
        stop_.request_stop();  // G2
    }
    lock_.unlock();
}

void task_group::join_all() noexcept {
    // A task that waits on its own group waits for the others: its own
    // record is set aside (joining itself would never end) and put back.
    const context* const me = &this_context();
    record* own = nullptr;
    for (;;) {
        lock_.lock();
        record* list = head_;
        head_ = nullptr;
        lock_.unlock();
        if (!list) break;
        while (list) {
            record* r = list;
            list = r->next;
            if (&r->t.get_context() == me) {
                own = r;
                continue;
            }
            r->t.join();  // the body cannot throw out of the thread
            delete r;
            live_.fetch_sub(1, std::memory_order_relaxed);
        }
    }
    if (own) link_record(own);
}

void task_group::wait() {
    join_all();
    // The next round's stop state, made before anything is taken: a
    // bad_alloc here leaves the group as it was (its exception kept).
    std::optional<stop_source> fresh;
    if (get_token().stop_requested()) fresh.emplace();
    lock_.lock();
    std::exception_ptr e = std::exchange(first_, nullptr);
    if (fresh) std::swap(stop_, *fresh);
    lock_.unlock();
    if (e) std::rethrow_exception(e);
}

void task_group::request_stop() noexcept {
    lock_.lock();
    stop_.request_stop();
    lock_.unlock();
}

stop_token task_group::get_token() const noexcept {
    lock_.lock();
    stop_token t = stop_.get_token();
    lock_.unlock();
    return t;
}

}  // namespace troupe
