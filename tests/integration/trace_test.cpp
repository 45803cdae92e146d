// The execution trace's workload (docs/trace.md): run by check_trace.py
// with TROUPE_TRACE set, which then parses and checks the file written at
// exit. Each case prints what the trace must show as "TRACE-EXPECT" lines
// on stdout (the processors its user threads ran on, the messages its
// actors received); the checker holds the file to them.
//
// The cases themselves assert their results (values, counts), like every
// test; under `meson test` they only ever run through check_trace.py.
#include <atomic>
#include <cstdio>
#include <mutex>
#include <set>
#include <vector>

#include "fixture.hpp"
#include "troupe/actors.hpp"
#include "troupe/blocking_lock.hpp"
#include "troupe/channel.hpp"
#include "troupe/cluster.hpp"
#include "troupe/context.hpp"
#include "troupe/detail/block_hook.hpp"
#include "troupe/detail/trace.hpp"
#include "troupe/future.hpp"
#include "troupe/thread.hpp"

using troupe_test::scaled;

namespace {

// Processor indices the calling user threads ran on (a sample per step).
struct processors_seen {
    std::mutex m;
    std::set<std::size_t> seen;
    void note() {
        const std::size_t p = troupe::this_thread::processor_index();
        std::lock_guard g{m};
        seen.insert(p);
    }
    void expect(const char* cluster) {
        std::lock_guard g{m};
        for (std::size_t p : seen) std::printf("TRACE-EXPECT processor %zu %s\n", p, cluster);
        std::fflush(stdout);
    }
};

struct add : troupe::message {
    int n;
    explicit add(int v) : n(v) {}
};

struct counter : troupe::actor {
    using troupe::actor::actor;
    std::atomic<long>* total = nullptr;
    troupe::allocation receive(add& m) {
        total->fetch_add(m.n, std::memory_order_relaxed);
        return troupe::Nodelete;
    }
};

// A chain of one-message batches: each hop makes the next actor and sends
// it one message (as bench/actors/dynamic_send.cpp does).
struct hop : troupe::message {
    int left;
    explicit hop(int n) : troupe::message(troupe::Delete), left(n) {}
};
struct chain_link : troupe::actor {
    using troupe::actor::actor;
    std::atomic<long>* hops = nullptr;
    troupe::allocation receive(hop& m) {
        hops->fetch_add(1, std::memory_order_relaxed);
        if (m.left > 0) {
            auto* next = new chain_link;  // on this behaviour's system
            next->hops = hops;
            *next | *new hop{m.left - 1};
        }
        return troupe::Delete;
    }
};

}  // namespace

TEST_CASE("trace: recording is on when TROUPE_TRACE names a file") {
    // check_trace.py sets it; a run without it records nothing, and so
    // does a build with the hooks compiled out (-Dtrace=false: the checker
    // then skips).
    CHECK(troupe::detail::trace::on() ==
          (troupe::detail::trace::built_in && std::getenv("TROUPE_TRACE") != nullptr));
    std::printf("TRACE-EXPECT recording %d\n", troupe::detail::trace::on() ? 1 : 0);
    std::fflush(stdout);
}

TEST_CASE("trace: channel ping-pong, a lock and computing threads on two processors") {
    troupe_test::watchdog w{"trace ping-pong"};
    troupe::cluster_options o;
    o.processors = 2;
    o.name = "trace-test";
    troupe::cluster c{o};
    processors_seen seen;
    const int rounds = scaled(2000, 4);
    troupe::channel<int> ping{0, "ping"}, pong{0, "pong"};
    troupe::blocking_lock lk{"trace lock"};
    long shared = 0;
    long sum = 0;
    {
        troupe::thread_attributes a;
        a.on = &c;
        a.name = "pinger";
        troupe::thread pinger{a, [&] {
                                  for (int i = 0; i < rounds; ++i) {
                                      ping << i;
                                      int v = 0;
                                      pong >> v;
                                      sum += v;
                                      if (i % 64 == 0) seen.note();
                                  }
                              }};
        a.name = "ponger";
        troupe::thread ponger{a, [&] {
                                  for (int i = 0; i < rounds; ++i) {
                                      int v = 0;
                                      ping >> v;
                                      pong << v + 1;
                                      if (i % 64 == 0) seen.note();
                                  }
                              }};
        // Threads that take a lock in turn and compute between (so both
        // processors run user threads and the lock hands off).
        std::vector<troupe::thread> workers;
        for (int k = 0; k < 4; ++k)
            workers.emplace_back(c, [&] {
                for (int i = 0; i < scaled(200, 4); ++i) {
                    lk.lock();
                    ++shared;
                    troupe::this_thread::yield();  // hold it across a switch: others wait
                    lk.unlock();
                    seen.note();
                }
            });
        // Threads that compute: queued on the spawner's processor, where
        // the wake rule lets the other processor steal them.
        std::atomic<unsigned> sink{0};
        for (int k = 0; k < 4; ++k)
            workers.emplace_back(c, [&, k] {
                unsigned x = static_cast<unsigned>(k) + 1;
                for (int step = 0; step < 8; ++step) {
                    for (int i = 0; i < scaled(20000, 4); ++i) x = x * 1664525u + 1013904223u;
                    seen.note();
                    troupe::this_thread::yield();
                }
                sink.fetch_add(x, std::memory_order_relaxed);
            });
        for (auto& t : workers) t.join();
        unsigned expected = 0;
        for (int k = 0; k < 4; ++k) {
            unsigned x = static_cast<unsigned>(k) + 1;
            for (int i = 0; i < 8 * scaled(20000, 4); ++i) x = x * 1664525u + 1013904223u;
            expected += x;
        }
        CHECK(sink.load() == expected);
    }
    CHECK(sum == static_cast<long>(rounds) * (rounds + 1) / 2);
    CHECK(shared == 4L * scaled(200, 4));
    seen.expect("trace-test");
}

TEST_CASE("trace: an OS thread waits on a future a user thread fulfils") {
    troupe_test::watchdog w{"trace future"};
    troupe::cluster c{1};
    // main must really sleep in park() for the trace to show it: no spin,
    // and the fulfilling thread waits until main's park reached its block
    // hook (called just before the futex sleep; the hook is core's, as the
    // actor workers use it). A fulfil in the few instructions between the
    // hook and the sleep only banks a permit (no slice that round); the
    // yields after the hook make that rare, and 8 rounds need one sleep.
    const troupe::park_spin_policy before = troupe::get_park_spin_policy();
    troupe::set_park_spin_policy({0, false});
    std::atomic<bool> blocking{false};
    troupe::detail::set_block_hook(
        [](void* b) noexcept { static_cast<std::atomic<bool>*>(b)->store(true); }, &blocking);
    for (int round = 0; round < 8; ++round) {
        blocking.store(false);
        troupe::future<int> f;
        troupe::thread t{c, [&] {
                             troupe_test::wait_until([&] { return blocking.load(); });
                             for (int i = 0; i < 50; ++i) troupe::this_thread::yield();
                             f.fulfil(round);
                         }};
        CHECK(f.get() == round);  // main (an OS thread) parks on the future
        t.join();
    }
    troupe::detail::set_block_hook(nullptr, nullptr);
    troupe::set_park_spin_policy(before);
    std::printf("TRACE-EXPECT os-park future\n");
    std::fflush(stdout);
}

TEST_CASE("trace: actor batches carry their message counts") {
    troupe_test::watchdog w{"trace actors"};
    std::atomic<long> total{0}, hops{0};
    const int actors = 8, per_actor = scaled(500, 4), chain = scaled(3000, 4);
    {
        troupe::actor_system sys{2};
        std::vector<counter*> cs;
        for (int i = 0; i < actors; ++i) {
            auto* a = new counter{sys};
            a->total = &total;
            cs.push_back(a);
        }
        std::vector<std::unique_ptr<add>> msgs;
        for (int k = 0; k < per_actor; ++k)
            for (counter* a : cs) {
                msgs.push_back(std::make_unique<add>(1));
                *a | *msgs.back();
            }
        for (counter* a : cs) *a | troupe::delete_msg;
        // Small batches (summed per run in the trace).
        auto* first = new chain_link{sys};
        first->hops = &hops;
        *first | *new hop{chain - 1};
        sys.stop();
    }
    CHECK(total.load() == static_cast<long>(actors) * per_actor);
    CHECK(hops.load() == chain);
    // Every message a behaviour received (poison pills included) is in
    // some batch's count.
    std::printf("TRACE-EXPECT actor-messages %ld\n",
                static_cast<long>(actors) * (per_actor + 1) + chain);
    std::fflush(stdout);
}
