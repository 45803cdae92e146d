// lend_while_blocked: an OS thread blocked on a troupe primitive runs the
// cluster's ready user threads in the slot of a processor whose own kernel
// thread sleeps (never beside the processors: the cluster's work runs on at
// most as many kernel threads as it has processors), keeps the slot between
// its waits, gives it back with its work when the scope ends, keeps its own
// exception state, and loses nothing under a bounded stress.
#include <array>
#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "fixture.hpp"
#include "leak_check.hpp"
#include "sched/runtime.hpp"
#include "troupe/cluster.hpp"
#include "troupe/future.hpp"
#include "troupe/semaphore.hpp"
#include "troupe/thread.hpp"

using troupe::detail::processor;
using troupe_test::on_processors;
using troupe_test::wait_until;

namespace {
// While alive, a lender with no work spins in its slot for a long bounded
// time (the park spin limit) instead of giving the slot back at once, so
// that a thread made ready from another OS thread once the slot is seen
// lent can only run in that slot. Restores the policy.
struct long_lender_spin {
    troupe::park_spin_policy saved = troupe::get_park_spin_policy();
    long_lender_spin() { troupe::set_park_spin_policy({1 << 28, false}); }
    ~long_lender_spin() { troupe::set_park_spin_policy(saved); }
};

// A cluster of one processor and user threads parked at gates. ready()
// returns once every thread has parked and the processor's kernel thread
// sleeps past its re-check (its slot can be taken). By default the
// processor never looks at a held slot (held_slot_look = 0), so what runs
// where does not depend on how long the test takes.
troupe::cluster_options one_processor_options(std::chrono::nanoseconds look) {
    troupe::cluster_options o;
    o.processors = 1;
    o.held_slot_look = look;
    return o;
}

struct one_processor {
    troupe::cluster c;
    explicit one_processor(std::chrono::nanoseconds look = std::chrono::nanoseconds{0})
        : c(one_processor_options(look)) {}
    processor* p0 = c.impl().active_at(0);
    std::atomic<int> parked{0};

    // A user thread that parks on `gate`, then runs `body`.
    template <class F>
    troupe::thread at_gate(troupe::future<void>& gate, F body) {
        return troupe::thread{c, [this, &gate, body]() mutable {
                                  parked.fetch_add(1);
                                  gate.get();
                                  body();
                              }};
    }
    void ready(int threads) {
        wait_until([&] { return parked.load() == threads; });
        // The processor runs nothing else: once dormant, every thread parked.
        wait_until([&] { return p0->dormant(); });
    }
};

struct sighting {
    std::thread::id kernel_thread;
    std::size_t processor_index = ~std::size_t{0};
    bool slot_lent = false;
    static sighting here() {
        processor* p = troupe::detail::current_processor();
        return {std::this_thread::get_id(), p ? p->index : ~std::size_t{0}, p && p->lent()};
    }
};
}  // namespace

TEST_CASE(
    "lending: a blocked OS thread runs the cluster's threads in a sleeping processor's slot") {
    troupe_test::watchdog w{"lending: runs threads in a taken slot"};
    long_lender_spin spin;
    one_processor f;
    troupe::future<void> gate, done;
    sighting seen;
    troupe::thread t = f.at_gate(gate, [&] {
        seen = sighting::here();
        done.fulfil();
    });
    f.ready(1);
    // Opens the gate once our wait below has taken the slot: t is then
    // queued on processor 0, whose own kernel thread is asleep and is not
    // woken for it (the slot is busy), so only the lender can run it.
    std::thread opener{[&] {
        wait_until([&] { return f.p0->lent(); });
        gate.fulfil();
    }};
    {
        troupe::lend_while_blocked lend{f.c};
        done.get();
        // Kept between waits (as Go's main goroutine keeps its P).
        CHECK(f.p0->lent());
    }
    // Given back when the scope ended; no work there, so it sleeps again.
    CHECK_FALSE(f.p0->lent());
    CHECK(f.p0->asleep());
    opener.join();
    t.join();
    CHECK(seen.kernel_thread == std::this_thread::get_id());
    CHECK(seen.processor_index == 0);
    CHECK(seen.slot_lent);  // processor 0's own kernel thread was asleep meanwhile
}

TEST_CASE("lending: a held slot's queued thread runs at the lender's next wait") {
    troupe_test::watchdog w{"lending: held slot, next wait"};
    long_lender_spin spin;
    one_processor f;
    troupe::future<void> gate, done, u_gate;
    troupe::future<std::thread::id> u_ran_on;
    troupe::thread t = f.at_gate(gate, [&] { done.fulfil(); });
    troupe::thread u = f.at_gate(u_gate, [&] { u_ran_on.fulfil(std::this_thread::get_id()); });
    f.ready(2);
    std::thread opener{[&] {
        wait_until([&] { return f.p0->lent(); });
        gate.fulfil();
    }};
    {
        troupe::lend_while_blocked lend{f.c};
        done.get();
        REQUIRE(f.p0->lent());  // held
        // Made ready from our own code: queued on the held slot, and
        // nobody else may run it (the processor's thread stays asleep).
        u_gate.fulfil();
        CHECK(f.p0->lent());
        CHECK(f.p0->queue_length() == 1);
        CHECK(u_ran_on.get() == std::this_thread::get_id());  // our next wait ran it
    }
    opener.join();
    t.join();
    u.join();
}

TEST_CASE("lending: work queued on a held slot goes back to the processor when the scope ends") {
    troupe_test::watchdog w{"lending: held slot, scope end"};
    long_lender_spin spin;
    one_processor f;
    troupe::future<void> gate, done, u_gate;
    troupe::future<std::thread::id> u_ran_on;
    troupe::thread t = f.at_gate(gate, [&] { done.fulfil(); });
    troupe::thread u = f.at_gate(u_gate, [&] { u_ran_on.fulfil(std::this_thread::get_id()); });
    f.ready(2);
    std::thread opener{[&] {
        wait_until([&] { return f.p0->lent(); });
        gate.fulfil();
    }};
    {
        troupe::lend_while_blocked lend{f.c};
        done.get();
        REQUIRE(f.p0->lent());
        u_gate.fulfil();
        REQUIRE(f.p0->queue_length() == 1);
    }
    // The give-back saw u queued and woke the processor's own thread: we no
    // longer lend, so u can only run there (it would hang if stranded).
    CHECK(u_ran_on.get() != std::this_thread::get_id());
    opener.join();
    t.join();
    u.join();
}

TEST_CASE("lending: a processor takes its held slot back when work waits there too long") {
    troupe_test::watchdog w{"lending: held slot retaken"};
    long_lender_spin spin;
    one_processor f{std::chrono::microseconds(200)};
    troupe::future<void> gate, done, u_gate;
    std::atomic<bool> u_ran{false};
    std::thread::id u_ran_on;
    troupe::thread t = f.at_gate(gate, [&] { done.fulfil(); });
    troupe::thread u = f.at_gate(u_gate, [&] {
        u_ran_on = std::this_thread::get_id();
        u_ran.store(true, std::memory_order_release);
    });
    f.ready(2);
    std::thread opener{[&] {
        wait_until([&] { return f.p0->lent(); });
        gate.fulfil();
    }};
    {
        troupe::lend_while_blocked lend{f.c};
        done.get();
        REQUIRE(f.p0->lent());  // held
        u_gate.fulfil();        // queued on the held slot
        // We never wait on troupe again in this scope (a plain spin is no
        // wait): only the processor's own thread, taking its slot back
        // after two looks, can run u (this hangs without the retake).
        while (!u_ran.load(std::memory_order_acquire)) std::this_thread::yield();
        CHECK_FALSE(f.p0->lent());
    }
    CHECK(u_ran_on != std::this_thread::get_id());
    opener.join();
    t.join();
    u.join();
}

TEST_CASE("lending: the OS thread's exception state survives the threads it ran") {
    troupe_test::watchdog w{"lending: exception state"};
    long_lender_spin spin;
    one_processor f;
    troupe::future<void> gate;
    troupe::future<int> result;
    sighting seen;
    troupe::thread t = f.at_gate(gate, [&] {
        seen = sighting::here();
        try {
            throw std::runtime_error("inside a lent thread");
        } catch (const std::runtime_error&) {
            result.fulfil(7);
        }
    });
    f.ready(1);
    std::thread opener{[&] {
        wait_until([&] { return f.p0->lent(); });
        gate.fulfil();
    }};
    {
        troupe::lend_while_blocked lend{f.c};
        try {
            throw 42;
        } catch (int) {
            CHECK(result.get() == 7);  // blocks (and lends) inside our handler
            CHECK(std::current_exception() != nullptr);
            try {
                throw;
            } catch (int v) {
                CHECK(v == 42);
            }
        }
        CHECK(std::uncaught_exceptions() == 0);
    }
    opener.join();
    t.join();
    CHECK(seen.kernel_thread == std::this_thread::get_id());
}

TEST_CASE("lending: a processor whose slot is held still retires when the cluster shrinks") {
    troupe_test::watchdog w{"lending: retire a held slot"};
    long_lender_spin spin;
    troupe::cluster_options o;
    o.processors = 2;
    o.held_slot_look = std::chrono::nanoseconds{0};  // only the retire takes it back
    troupe::cluster c{o};
    processor* p0 = c.impl().active_at(0);
    processor* p1 = c.impl().active_at(1);
    wait_until([&] { return p0->dormant() && p1->dormant(); });
    troupe::future<void> done;
    // Our wait takes the highest dormant slot and spins there; the permit
    // banked meanwhile makes it keep the slot (held) as it returns.
    std::thread waker{[&] {
        wait_until([&] { return p1->lent(); });
        done.fulfil();
    }};
    troupe::lend_while_blocked lend{c};
    done.get();
    waker.join();
    REQUIRE(p1->lent());
    CHECK_FALSE(p0->lent());
    // Retiring processor 1 needs its own kernel thread: the request takes
    // the held slot back (without that, this would wait for ever).
    c.set_processor_count(1);
    CHECK(c.processor_count() == 1);
    CHECK_FALSE(p1->lent());
}

TEST_CASE(
    "lending: the cluster's threads never run on more kernel threads than it has processors") {
    constexpr int items = troupe_test::scaled(20'000);
    // Around the clusters (nothing may be left allocated by lending).
    troupe_test::leak_check no_leaks;
    on_processors([](troupe::cluster& c) {
        const std::size_t n = c.processor_count();
        // Which kernel thread runs each processor right now: a user thread
        // claims its processor's entry between two of its blocking calls
        // (no switch in between), so two kernel threads running the same
        // processor at once, or a thread running outside the cluster's n
        // processors (a lender beside them), is seen.
        std::array<std::atomic<int>, 4> running{};
        std::atomic<int> overlaps{0}, outside{0};
        auto check_in = [&] {
            processor* p = troupe::detail::current_processor();
            if (!p || p->index >= n) {
                outside.fetch_add(1);
                return;
            }
            if (running[p->index].exchange(1) != 0) overlaps.fetch_add(1);
            running[p->index].store(0);
        };
        troupe::semaphore full{0}, empty{64};
        std::atomic<long> produced{0};
        std::vector<troupe::thread> producers;
        for (int p = 0; p < 3; ++p)
            producers.emplace_back(c, [&] {
                for (int i = 0; i < items; ++i) {
                    empty.acquire();
                    check_in();
                    produced.fetch_add(1, std::memory_order_relaxed);
                    full.release();
                }
            });
        std::vector<std::thread> consumers;
        std::atomic<long> total{0};
        for (int k = 0; k < 2; ++k)
            consumers.emplace_back([&] {
                troupe::lend_while_blocked lend{c};
                long mine = 0;
                for (int i = 0; i < 3 * items / 2; ++i) {
                    full.acquire();
                    ++mine;
                    empty.release();
                }
                total += mine;
            });
        for (auto& t : consumers) t.join();
        for (auto& p : producers) p.join();
        CHECK(total.load() == 3L * items);
        CHECK(produced.load() == 3L * items);
        CHECK(overlaps.load() == 0);
        CHECK(outside.load() == 0);
    });
}
