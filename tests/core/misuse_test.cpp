// Misuse produces a clear message naming the object: in every build where
// the check is one compare on the path (an unlock by a non-owner, a
// re-lock, a second join), in checked builds for the rest.
#include <atomic>
#include <mutex>
#include <system_error>
#include <thread>

#include "fixture.hpp"
#include "troupe/barging_lock.hpp"
#include "troupe/blocking_lock.hpp"
#include "troupe/condition_variable.hpp"
#include "troupe/future.hpp"
#include "troupe/semaphore.hpp"
#include "troupe/spinlock.hpp"
#include "troupe/thread.hpp"

using doctest::Contains;
using troupe_test::misuse_recorder;

namespace {
// Unlocks of a lock (blocking_lock, owner_lock, barging_lock) by threads
// that do not hold it, in every build: reported naming the lock, and
// without effect (the holder still holds it, its waiters still wait).
template <class Lock>
void check_foreign_unlocks(const char* kind) {
    misuse_recorder rec;
    Lock l{"ledger"};
    const std::string named = std::string(kind) + " 'ledger'";
    l.unlock();  // not held at all
    CHECK(rec.last().find(named) != std::string::npos);
    CHECK(rec.last().find("unlocked while not held") != std::string::npos);
    l.lock();
    std::thread other{[&] { l.unlock(); }};  // held, but by someone else
    other.join();
    CHECK(rec.last().find(named) != std::string::npos);
    CHECK(rec.last().find("does not hold it") != std::string::npos);
    CHECK(l.owned_by_caller());  // the bad unlock had no effect
    // A user thread's unlock of a lock held by this OS thread (the CAS
    // fast path would otherwise have freed it).
    {
        troupe::cluster c{1};
        troupe::thread t{c, [&] { l.unlock(); }};
        t.join();
    }
    CHECK(l.owned_by_caller());
    CHECK(rec.messages().size() == 3);
    // With a waiter queued: the foreign unlock must not hand the lock over.
    std::atomic<bool> got{false};
    std::thread waiter{[&] {
        l.lock();
        got.store(true);
        l.unlock();
    }};
    troupe_test::wait_until([&] { return l.waiters() == 1; });
    std::thread other2{[&] { l.unlock(); }};
    other2.join();
    CHECK(rec.messages().size() == 4);
    CHECK(l.owned_by_caller());
    CHECK_FALSE(got.load());
    l.unlock();
    waiter.join();
    CHECK(got.load());
    CHECK_FALSE(l.owned_by_caller());
    CHECK(rec.messages().size() == 4);
}
}  // namespace

TEST_CASE("unlocking a lock you do not hold is reported in every build") {
    check_foreign_unlocks<troupe::blocking_lock>("blocking_lock");
    check_foreign_unlocks<troupe::owner_lock>("owner_lock");
    check_foreign_unlocks<troupe::barging_lock>("barging_lock");
}

TEST_CASE("an owner_lock's inner levels are released only by its owner") {
    misuse_recorder rec;
    troupe::owner_lock l{"nested"};
    l.lock();
    l.lock();
    std::thread other{[&] { l.unlock(); }};  // a level that is not its own
    other.join();
    CHECK(rec.last().find("owner_lock 'nested'") != std::string::npos);
    CHECK(rec.last().find("does not hold it") != std::string::npos);
    l.unlock();
    CHECK(l.owned_by_caller());  // still one level: the foreign unlock took none
    l.unlock();
    CHECK_FALSE(l.owned_by_caller());
    CHECK(rec.messages().size() == 1);
}

TEST_CASE("a second join, or a join of itself, throws as std::thread's does (every build)") {
    troupe::cluster c{1};
    troupe::thread t{c, [] {}};
    t.join();
    CHECK_FALSE(t.joinable());
    try {
        t.join();
        FAIL("a second join returned");
    } catch (const std::system_error& e) {
        CHECK(e.code() == std::errc::invalid_argument);
        CHECK(std::string(e.what()).find("not joinable") != std::string::npos);
    }
    troupe::thread empty;
    CHECK_THROWS_AS(empty.join(), std::system_error);
    troupe::thread moved{c, [] {}};
    troupe::thread taker{std::move(moved)};
    CHECK_THROWS_AS(moved.join(), std::system_error);
    taker.join();
    // A thread joining its own handle would wait for itself for ever.
    troupe::thread self;
    troupe::future<int> ready, tried;
    std::errc code{};
    self = troupe::thread{c, [&] {
                              (void)ready.get();
                              try {
                                  self.join();
                              } catch (const std::system_error& e) {
                                  code = static_cast<std::errc>(e.code().value());
                              }
                              tried.fulfil(1);
                          }};
    ready.fulfil(1);
    (void)tried.get();       // (our join below empties the handle as it begins)
    CHECK(self.joinable());  // the refused self-join left the handle as it was
    self.join();
    CHECK(code == std::errc::resource_deadlock_would_occur);
}

TEST_CASE("re-locking a non-recursive lock you hold") {
    misuse_recorder rec;  // reported in every build (a hang otherwise)
    troupe::blocking_lock l{"config"};
    l.lock();
    l.lock();  // reported instead of deadlocking
    CHECK(rec.last().find("blocking_lock 'config'") != std::string::npos);
    CHECK(rec.last().find("locked again") != std::string::npos);
    l.unlock();
    CHECK_FALSE(l.owned_by_caller());
}

TEST_CASE("destroying a lock that is held or has waiters") {
    misuse_recorder rec;
    if constexpr (!troupe::checked_build) return;
    {
        troupe::owner_lock l{"held"};
        l.lock();
    }
    CHECK(rec.last().find("owner_lock 'held'") != std::string::npos);
    CHECK(rec.last().find("destroyed while held") != std::string::npos);

    // A waiter queued on a lock about to be destroyed: we observe the report
    // from the destructor, then let the waiter through on a live lock.
    alignas(troupe::blocking_lock) unsigned char storage[sizeof(troupe::blocking_lock)];
    auto* l = new (storage) troupe::blocking_lock{"doomed"};
    l->lock();
    troupe::cluster c{1};
    troupe::thread waiter{c, [&] {
                              l->lock();
                              l->unlock();
                          }};
    while (l->waiters() == 0) std::this_thread::yield();
    l->~blocking_lock();  // reported: 1 waiter
    CHECK(rec.last().find("blocking_lock 'doomed'") != std::string::npos);
    CHECK(rec.last().find("1 thread(s) wait") != std::string::npos);
    // The destructor of a lock holds no resources: the object's memory is
    // still intact, so the owner can hand it over and the waiter finishes.
    l->unlock();
    waiter.join();
}

TEST_CASE("unlocking a spinlock you do not hold") {
    misuse_recorder rec;
    if constexpr (!troupe::checked_build) return;
    troupe::spinlock s{"stats"};
    s.unlock();
    CHECK(rec.last().find("spinlock 'stats'") != std::string::npos);
    s.lock();
    s.unlock();
    CHECK(rec.messages().size() == 1);
}

TEST_CASE("destroying a semaphore or future with waiters; a double unpark") {
    misuse_recorder rec;
    if constexpr (!troupe::checked_build) return;
    troupe::context& me = troupe::this_context();
    troupe::unpark(me);
    troupe::unpark(me);  // second permit: reported
    CHECK(rec.last().find("unparked twice") != std::string::npos);
    troupe::park();  // consume the one banked permit

    troupe::cluster c{1};
    alignas(troupe::future<int>) unsigned char storage[sizeof(troupe::future<int>)];
    auto* f = new (storage) troupe::future<int>();
    troupe::thread waiter{c, [&] { CHECK(f->get() == 9); }};
    while (f->waiters() == 0) std::this_thread::yield();
    f->~future();
    CHECK(rec.last().find("future") != std::string::npos);
    CHECK(rec.last().find("1 thread(s) wait") != std::string::npos);
    // As with the lock above: the storage is intact, so finish the protocol
    // on it to let the waiter leave (the test owns the storage).
    f->fulfil(9);
    waiter.join();

    alignas(troupe::semaphore) unsigned char sem_storage[sizeof(troupe::semaphore)];
    auto* s = new (sem_storage) troupe::semaphore{0, "slots"};
    troupe::thread sem_waiter{c, [&] { s->acquire(); }};
    while (s->waiters() == 0) std::this_thread::yield();
    s->~semaphore();
    CHECK(rec.last().find("semaphore 'slots'") != std::string::npos);
    s->release();
    sem_waiter.join();
}
