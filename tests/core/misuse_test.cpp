// Checked builds: each detectable misuse produces a clear message naming
// the object. (Release builds compile these checks out; the test then
// verifies that nothing is reported.)
#include <thread>

#include "fixture.hpp"
#include "troupe/blocking_lock.hpp"
#include "troupe/condition_variable.hpp"
#include "troupe/future.hpp"
#include "troupe/semaphore.hpp"
#include "troupe/spinlock.hpp"
#include "troupe/thread.hpp"

using doctest::Contains;
using troupe_test::misuse_recorder;

TEST_CASE("unlocking a blocking lock you do not hold") {
    misuse_recorder rec;
    troupe::blocking_lock l{"ledger"};
    if constexpr (!troupe::checked_build) {
        CHECK(rec.messages().empty());
        return;
    }
    l.unlock();  // not held at all
    CHECK(rec.last().find("blocking_lock 'ledger'") != std::string::npos);
    CHECK(rec.last().find("unlocked while not held") != std::string::npos);
    l.lock();
    std::thread other{[&] { l.unlock(); }};  // held, but by someone else
    other.join();
    CHECK(rec.last().find("does not hold it") != std::string::npos);
    CHECK(l.owned_by_caller());  // the bad unlock had no effect
    l.unlock();
    CHECK(rec.messages().size() == 2);
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
