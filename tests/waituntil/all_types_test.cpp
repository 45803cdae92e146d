// Every resource type in one statement (Cforall's waituntil/all_types and
// waituntil/channels): channels A and C, a lock B guarding a counter, a
// future F and timeouts, selected by a producer, servers, a drainer and a
// churner using the non-blocking operations, all at once. Checks: every
// value inserted is removed exactly once (sums), the lock excludes, the
// future's body runs once.
#include <atomic>
#include <chrono>
#include <vector>

#include "fixture.hpp"
#include "troupe/blocking_lock.hpp"
#include "troupe/channel.hpp"
#include "troupe/future.hpp"
#include "troupe/thread.hpp"
#include "troupe/timeout.hpp"
#include "troupe/waituntil.hpp"

using namespace std::chrono_literals;
using troupe::channel;
using troupe::on;
using troupe::otherwise;
using troupe::timeout;
using troupe::waituntil;
using troupe::when;
using troupe_test::on_processors;

constexpr long iterations = troupe_test::scaled(4'000L, 4);

namespace {
struct shared_state {
    channel<long> A{5, "A"}, C{5, "C"};
    troupe::owner_lock B{"B"};
    long b_count = 0;  // under B
    std::atomic<int> b_inside{0};
    std::atomic<int> violations{0};
    troupe::future<int> F;
    std::atomic<long> inserted{0}, removed{0};
    std::atomic<long> b_bodies{0};
    std::atomic<int> f_bodies{0};

    void b_body() {
        if (b_inside.fetch_add(1) != 0 || !B.owned_by_caller()) ++violations;
        ++b_count;
        ++b_bodies;
        b_inside.fetch_sub(1);
    }
};
}  // namespace

TEST_CASE("all resource types in one statement") {
    on_processors([](troupe::cluster& c) {
        shared_state s;
        constexpr int servers = 3;
        std::atomic<bool> stop_helpers{false};

        std::vector<troupe::thread> server_threads;
        for (int k = 0; k < servers; ++k) {
            server_threads.emplace_back(c, [&, k] {
                long v = 0;
                bool done = false;
                auto got = [&] {
                    if (v < 0) done = true;
                    else s.removed += v;
                };
                for (long i = 0; !done; ++i) {
                    waituntil(on(s.A.remove_into(v), got) |
                                  when(i % 2 == k % 2, on(s.B, [&] { s.b_body(); })) |
                                  on(s.C.remove_into(v), got) | when(i % 3 == 0, on(timeout(10us))),
                              when(i % 5 == 4, otherwise([] {})));
                }
            });
        }
        troupe::thread drainer{c, [&] {
                                   long v = 0;
                                   while (!stop_helpers.load()) {
                                       waituntil(on(s.F,
                                                    [&] {
                                                        if (s.F.get() == 42) ++s.f_bodies;
                                                        s.F.reset();  // nobody else waits on F
                                                    }) |
                                                 on(s.A.remove_into(v), [&] { s.removed += v; }) |
                                                 on(s.C.remove_into(v), [&] { s.removed += v; }) |
                                                 on(s.B, [&] { s.b_body(); }) | on(timeout(100ns)));
                                       // B is usually free: without a yield this loop would keep a
                                       // lone processor to itself (user threads are not preempted).
                                       troupe::this_thread::yield();
                                   }
                               }};
        troupe::thread churner{
            c, [&] {
                long v = 0;
                for (long i = 0; !stop_helpers.load(); ++i) {
                    if (s.A.try_remove(v) == troupe::channel_status::success) s.removed += v;
                    s.C.try_insert(0L);  // adds nothing to the sums, but is removed
                    if (s.B.try_lock()) {
                        s.b_body();
                        s.B.unlock();
                    }
                    s.B.lock();
                    s.b_body();
                    s.B.unlock();
                    troupe::this_thread::yield();
                }
            }};

        // The producer: A alone, or B and C and a 1ns timeout, guarded.
        troupe::thread producer{
            c, [&] {
                for (long j = 1; j <= iterations; ++j) {
                    if (j == iterations / 2) s.F.fulfil(42);
                    auto ins = [&] { s.inserted += j; };
                    waituntil(when(j % 4 != 0, on(s.A.insert_from(j), ins)) |
                              (when(j % 3 != 0, on(s.B, [&] { s.b_body(); })) &
                               when(j % 5 != 0, on(s.C.insert_from(j), ins)) & on(timeout(1ns))));
                }
            }};
        producer.join();
        // F was fulfilled halfway and is the drainer's first clause.
        while (s.f_bodies.load() == 0) troupe::this_thread::yield();
        stop_helpers = true;
        churner.join();
        drainer.join();
        // One sentinel per server (they stop at a negative value).
        for (int k = 0; k < servers; ++k) s.A << -1L;
        for (auto& t : server_threads) t.join();
        long v = 0;
        while (s.A.try_remove(v) == troupe::channel_status::success) s.removed += v;
        while (s.C.try_remove(v) == troupe::channel_status::success) s.removed += v;
        CHECK(s.inserted.load() == s.removed.load());
        CHECK(s.inserted.load() > 0);
        CHECK(s.violations.load() == 0);
        CHECK(s.b_count == s.b_bodies.load());
        CHECK(s.f_bodies.load() == 1);
        CHECK(s.B.try_lock());
        s.B.unlock();
    });
}
