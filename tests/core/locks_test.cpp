// spinlock, mcs_lock, blocking_lock, owner_lock: exclusion, FIFO, recursion.
#include <atomic>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

#include "fixture.hpp"
#include "select_protocol.hpp"
#include "troupe/blocking_lock.hpp"
#include "troupe/mcs_lock.hpp"
#include "troupe/semaphore.hpp"
#include "troupe/spinlock.hpp"
#include "troupe/thread.hpp"

using troupe_test::on_processors;
using troupe_test::run_in;

constexpr int blocking_iterations = troupe_test::scaled(20'000);
// Spin locks with more spinning kernel threads than cores pay a time slice
// whenever the lock is handed to a descheduled waiter: keep them short.
template <class Lock>
constexpr int iterations =
    std::is_base_of_v<troupe::detail::blocking_lock_base, Lock> ? blocking_iterations
                                                                : blocking_iterations / 40;

namespace {
// Hammers `l` from `users` user threads and `os` OS threads; the critical
// section detects overlap and loses no increments.
template <class Lock>
void exclusion(troupe::cluster& c, Lock& l, int users, int os) {
    long counter = 0;
    std::atomic<int> inside{0};
    std::atomic<int> overlaps{0};
    auto body = [&] {
        for (int i = 0; i < iterations<Lock>; ++i) {
            std::lock_guard g{l};
            if (inside.fetch_add(1) != 0) overlaps.fetch_add(1);
            ++counter;
            if (i % 64 == 0) troupe::this_thread::yield();
            inside.fetch_sub(1);
        }
    };
    {
        std::vector<troupe::thread> ts;
        std::vector<std::thread> ks;
        for (int i = 0; i < users; ++i) ts.emplace_back(c, body);
        for (int i = 0; i < os; ++i) ks.emplace_back(body);
        for (auto& k : ks) k.join();
    }
    CHECK(overlaps.load() == 0);
    CHECK(counter == long(users + os) * iterations<Lock>);
}
}  // namespace

TEST_CASE_TEMPLATE("mutual exclusion from user threads and OS threads", Lock, troupe::blocking_lock,
                   troupe::owner_lock, troupe::spinlock, troupe::mcs_lock) {
    on_processors([](troupe::cluster& c) {
        Lock l;
        exclusion(c, l, 4, 2);
    });
}

TEST_CASE("blocking_lock hands off in FIFO order, without barging") {
    on_processors([](troupe::cluster& c) {
        troupe::blocking_lock l{"fifo"};
        constexpr int n = 20;
        std::vector<int> order;
        std::vector<troupe::thread> ts;
        l.lock();  // hold it while the waiters queue up, one at a time
        for (int i = 0; i < n; ++i) {
            ts.emplace_back(c, [&, i] {
                l.lock();
                order.push_back(i);
                l.unlock();
            });
            // Wait until thread i is queued before starting thread i + 1.
            while (l.waiters() != std::size_t(i + 1)) troupe::this_thread::yield();
        }
        // A barger would be someone who takes the lock between our unlock
        // and the first waiter's wake; the main thread tries exactly that.
        l.unlock();
        // try_lock may legitimately succeed only after every waiter is done
        // (reading `order` is safe while we hold the lock).
        bool barged = false;
        if (l.try_lock()) {
            barged = order.size() != std::size_t(n);
            l.unlock();
        }
        ts.clear();
        std::vector<int> expected(n);
        for (int i = 0; i < n; ++i) expected[i] = i;
        CHECK(order == expected);
        CHECK_FALSE(barged);
    });
}

TEST_CASE("owner_lock is recursive and released only after as many unlocks") {
    troupe::cluster c{2};
    troupe::owner_lock l;
    run_in(c, [&] {
        l.lock();
        l.lock();
        CHECK(l.try_lock());
        CHECK(l.owned_by_caller());
        l.unlock();
        l.unlock();
        std::atomic<bool> other_got_it{false};
        troupe::thread t{[&] {
            CHECK_FALSE(l.owned_by_caller());
            other_got_it = l.try_lock();
            if (other_got_it) l.unlock();
        }};
        t.join();
        CHECK_FALSE(other_got_it.load());  // still held once
        l.unlock();
        troupe::thread u{[&] {
            other_got_it = l.try_lock();
            if (other_got_it) l.unlock();
        }};
        u.join();
        CHECK(other_got_it.load());
    });
}

TEST_CASE("try_lock fails on a held lock and never blocks") {
    troupe::blocking_lock b;
    troupe::spinlock s;
    troupe::mcs_lock m;
    b.lock();
    s.lock();
    m.lock();
    std::thread t{[&] {
        CHECK_FALSE(b.try_lock());
        CHECK_FALSE(s.try_lock());
        CHECK_FALSE(m.try_lock());
    }};
    t.join();
    b.unlock();
    s.unlock();
    m.unlock();
    CHECK(b.try_lock());
    CHECK(s.try_lock());
    CHECK(m.try_lock());
    b.unlock();
    s.unlock();
    m.unlock();
}

// ---------------------------------------------------------------- lock-word transitions
// The lock word's transitions (docs/locks.md) under every interleaving the
// fixture can produce: empty critical sections maximise the moments at which
// a waiter arrives while the holder releases (enqueue racing the unlock CAS),
// and lock, try_lock, recursion and select clauses race on one word.

constexpr int transition_rounds = troupe_test::scaled(30'000);

namespace {
template <class Lock>
void transitions(troupe::cluster& c, Lock& l) {
    long counter = 0;
    std::atomic<int> inside{0};
    std::atomic<int> overlaps{0};
    std::atomic<int> bad_unregister{0};
    auto critical = [&] {
        if (inside.fetch_add(1, std::memory_order_relaxed) != 0) overlaps.fetch_add(1);
        ++counter;
        inside.fetch_sub(1, std::memory_order_relaxed);
    };
    // kind 0: lock/unlock; 1: try_lock, else lock; 2: a select clause (won at
    // registration or by hand-off); 3: recursion (owner_lock only).
    auto body = [&](int kind) {
        for (int i = 0; i < transition_rounds; ++i) {
            switch ((kind + i) % 4) {
            case 0:
                l.lock();
                critical();
                l.unlock();
                break;
            case 1:
                if (!l.try_lock()) l.lock();
                critical();
                l.unlock();
                break;
            case 2: {
                // One exclusive clause on the lock, as waituntil drives it:
                // won at registration or by hand-off; held until unregister.
                troupe_test::status_word status{0};
                troupe::select_node n{troupe::this_context(), status};
                // Not won at registration: the winner owes exactly one
                // unpark, so park at least once (then re-check, as every
                // waiter does), even if the win is already visible.
                if (!l.register_select(n)) {
                    do troupe::park();
                    while (status.load() != troupe_test::won_by(n));
                }
                critical();
                if (l.unregister_select(n)) bad_unregister.fetch_add(1);
                break;
            }
            default:
                l.lock();
                if constexpr (std::is_same_v<Lock, troupe::owner_lock>) {
                    l.lock();
                    critical();
                    l.unlock();
                } else {
                    critical();
                }
                l.unlock();
                break;
            }
        }
    };
    {
        std::vector<troupe::thread> ts;
        std::vector<std::thread> ks;
        ts.emplace_back(c, [&] { body(0); });
        ts.emplace_back(c, [&] { body(2); });
        ks.emplace_back([&] { body(1); });
        ks.emplace_back([&] { body(3); });
        for (auto& k : ks) k.join();
    }
    CHECK(overlaps.load() == 0);
    CHECK(bad_unregister.load() == 0);
    CHECK(counter == 4L * transition_rounds);
    // Back to "free, nobody waits": nothing queued, and the fast path works.
    CHECK(l.waiters() == 0);
    CHECK(l.try_lock());
    CHECK(l.owned_by_caller());
    l.unlock();
    CHECK_FALSE(l.owned_by_caller());
}
}  // namespace

TEST_CASE_TEMPLATE("lock-word transitions: waiters arriving while the holder releases", Lock,
                   troupe::blocking_lock, troupe::owner_lock) {
    on_processors([](troupe::cluster& c) {
        Lock l{"transitions"};
        transitions(c, l);
    });
}

TEST_CASE("a lock released with a waiter is never free in between (hand-off, no barging)") {
    // The holder unlocks and immediately tries to take the lock back; with a
    // waiter queued, the lock must already belong to the waiter.
    on_processors([](troupe::cluster& c) {
        for (int round = 0; round < 200; ++round) {
            troupe::blocking_lock l;
            std::atomic<bool> got{false};
            l.lock();
            troupe::thread t{c, [&] {
                                 l.lock();
                                 got = true;
                                 l.unlock();
                             }};
            while (l.waiters() != 1) std::this_thread::yield();
            l.unlock();
            // The waiter may legitimately have run, locked and unlocked
            // already (it is woken at once on another processor): only a
            // try_lock that succeeds before the waiter had its turn barged.
            const bool took = l.try_lock();
            const bool barged = took && !got.load();
            CHECK_FALSE(barged);
            if (took) l.unlock();
            t.join();
            CHECK(got.load());
        }
    });
}
