// Fork-join (troupe/parallel.hpp): results, every index exactly once,
// nesting, exceptions (first rethrown, the rest dropped, nothing leaked),
// a million tasks without a million stacks, calls from user threads and OS
// threads, at 1, 2 and 4 processors.
#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "dump_text.hpp"
#include "fixture.hpp"
#include "leak_check.hpp"
#include "troupe/cluster.hpp"
#include "troupe/parallel.hpp"
#include "troupe/semaphore.hpp"
#include "troupe/thread.hpp"

using troupe_test::on_processors;
using troupe_test::run_in;

namespace {

long fib(int n) {
    if (n < 2) return n;
    long a = 0, b = 0;
    troupe::fork_join([&] { a = fib(n - 1); }, [&] { b = fib(n - 2); });
    return a + b;
}

long fib_serial(int n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

// Counts every index it is called with; check() says each was seen once.
struct visits {
    explicit visits(std::size_t n) : seen(n) {}
    std::vector<std::atomic<int>> seen;
    void operator()(std::size_t i) { seen[i].fetch_add(1, std::memory_order_relaxed); }
    bool each_once() const {
        return std::all_of(seen.begin(), seen.end(),
                           [](const std::atomic<int>& s) { return s.load() == 1; });
    }
};

// A binary recursion making 2^depth - 1 forks; records the most user
// threads the cluster ever had alive meanwhile.
struct tree {
    troupe::cluster& c;
    std::atomic<std::size_t> max_live{0};
    std::atomic<long> leaves{0};
    void grow(int depth) {
        if (depth == 0) {
            if (leaves.fetch_add(1, std::memory_order_relaxed) % 4096 == 0) {
                const std::size_t live = c.live_threads();
                std::size_t m = max_live.load();
                while (live > m && !max_live.compare_exchange_weak(m, live)) {}
            }
            return;
        }
        troupe::fork_join([&] { grow(depth - 1); }, [&] { grow(depth - 1); });
    }
};

}  // namespace

TEST_CASE("fork_join: fib is right from a user thread") {
    on_processors([](troupe::cluster& c) {
        troupe_test::leak_check no_leaks;
        long r = 0;
        run_in(c, [&] { r = fib(22); });
        CHECK(r == fib_serial(22));
    });
}

TEST_CASE("fork_join: a forked callable runs beside its forker (it is stolen)") {
    // The first callable returns only once the second has started, so the
    // second must be stolen by a helper: this hangs (the watchdog fires)
    // if fork-join ran serially with more than one processor.
    on_processors(
        [](troupe::cluster& c) {
            troupe_test::leak_check no_leaks;
            run_in(c, [] {
                for (int round = 0; round < 20; ++round) {
                    std::atomic<bool> second{false};
                    troupe::fork_join(
                        [&] { troupe_test::wait_until([&] { return second.load(); }); },
                        [&] { second.store(true); });
                }
            });
        },
        {2, 4});
    // From an OS thread a 1-processor cluster gives one helper too.
    troupe_test::watchdog w{"fork-join: OS thread root on 1 processor"};
    troupe_test::leak_check no_leaks;
    troupe::cluster c{1};
    troupe::lend_while_blocked lend{c};
    std::atomic<bool> second{false};
    troupe::fork_join([&] { troupe_test::wait_until([&] { return second.load(); }); },
                      [&] { second.store(true); });
}

TEST_CASE("parallel_for: blocks run on several workers at once") {
    on_processors(
        [](troupe::cluster& c) {
            troupe_test::leak_check no_leaks;
            run_in(c, [] {
                // Index 0 waits for index 1: [1, 2) must be stolen and run meanwhile.
                std::atomic<bool> one{false};
                troupe::parallel_for(
                    0, 2,
                    [&](int i) {
                        if (i == 0) troupe_test::wait_until([&] { return one.load(); });
                        else one.store(true);
                    },
                    1);
            });
        },
        {2, 4});
}

TEST_CASE("fork_join: three or more callables all run once") {
    on_processors([](troupe::cluster& c) {
        troupe_test::leak_check no_leaks;
        run_in(c, [] {
            for (int round = 0; round < 200; ++round) {
                std::atomic<int> ran[5] = {};
                troupe::fork_join([&] { ran[0]++; }, [&] { ran[1]++; }, [&] { ran[2]++; },
                                  [&] { ran[3]++; }, [&] { ran[4]++; });
                for (auto& r : ran) REQUIRE(r.load() == 1);
                int single = 0;
                troupe::fork_join([&] { ++single; });
                REQUIRE(single == 1);
            }
        });
    });
}

TEST_CASE("parallel_for: every index exactly once, any grain") {
    on_processors([](troupe::cluster& c) {
        troupe_test::leak_check no_leaks;
        run_in(c, [] {
            for (std::size_t grain : {0, 1, 7, 1000, 1 << 20}) {
                visits v(100'003);
                troupe::parallel_for(std::size_t{0}, v.seen.size(), std::ref(v), grain);
                CHECK(v.each_once());
            }
            // Empty and reversed ranges call nothing.
            int calls = 0;
            troupe::parallel_for(5, 5, [&](int) { ++calls; });
            troupe::parallel_for(5, 2, [&](int) { ++calls; });
            CHECK(calls == 0);
            // Mixed index types and a negative start.
            std::atomic<long> sum{0};
            troupe::parallel_for(
                -1000, 1000L, [&](long i) { sum += i; }, 3);
            CHECK(sum.load() == -1000);
        });
    });
}

TEST_CASE("parallel_for: a range's elements are updated in place; blocks cover it exactly") {
    on_processors([](troupe::cluster& c) {
        troupe_test::leak_check no_leaks;
        run_in(c, [] {
            std::vector<std::uint64_t> v(50'000);
            std::iota(v.begin(), v.end(), 0);
            troupe::parallel_for(v, [](std::uint64_t& x) { x = x * 2 + 1; });
            for (std::size_t i = 0; i < v.size(); ++i) REQUIRE(v[i] == 2 * i + 1);

            std::vector<std::atomic<int>> covered(10'000);
            std::atomic<int> blocks{0};
            troupe::parallel_for_blocks(
                0, 10'000,
                [&](int b, int e) {
                    REQUIRE((e - b >= 16 && e - b < 32));
                    blocks++;
                    for (int i = b; i < e; ++i) covered[static_cast<std::size_t>(i)]++;
                },
                16);
            for (auto& x : covered) REQUIRE(x.load() == 1);
            CHECK(blocks.load() <= 10'000 / 16);
            // The whole of int: no overflow in the splitting (UBSan checks it).
            std::atomic<std::uint64_t> length{0};
            troupe::parallel_for_blocks(INT_MIN, INT_MAX, [&](int b, int e) {
                length += static_cast<std::uint64_t>(static_cast<std::int64_t>(e) - b);
            });
            CHECK(length.load() == std::uint64_t{UINT_MAX});
            // A range shorter than the grain is one block.
            troupe::parallel_for_blocks(
                0, 10, [&](int b, int e) { REQUIRE((b == 0 && e == 10)); }, 16);
        });
    });
}

TEST_CASE("parallel_for: nested loops and forks inside a body") {
    on_processors([](troupe::cluster& c) {
        troupe_test::leak_check no_leaks;
        run_in(c, [] {
            constexpr int outer = 64, inner = 500;
            std::vector<std::atomic<int>> seen(outer * inner);
            std::atomic<long> fibs{0};
            troupe::parallel_for(
                0, outer,
                [&](int i) {
                    troupe::parallel_for(
                        0, inner, [&](int j) { seen[static_cast<std::size_t>(i * inner + j)]++; });
                    fibs += fib(12);
                },
                1);
            for (auto& s : seen) REQUIRE(s.load() == 1);
            CHECK(fibs.load() == outer * fib_serial(12));
        });
    });
}

TEST_CASE("parallel_for: a body that throws on every iteration: one exception, the first") {
    on_processors([](troupe::cluster& c) {
        troupe_test::leak_check no_leaks;
        run_in(c, [] {
            for (int round = 0; round < 20; ++round) {
                std::atomic<int> thrown{0};
                std::atomic<int> calls{0};
                try {
                    troupe::parallel_for(
                        0, 100'000,
                        [&](int i) {
                            calls++;
                            thrown++;
                            throw std::runtime_error("iteration " + std::to_string(i));
                        },
                        10);
                    FAIL("parallel_for returned normally");
                } catch (const std::runtime_error& e) {
                    CHECK(std::string(e.what()).rfind("iteration ", 0) == 0);
                }
                // Each block stops at its first throw, and blocks not yet
                // started once the failure is known are skipped.
                CHECK(thrown.load() == calls.load());
                CHECK(calls.load() < 100'000 / 10);
            }
            // The region is gone: the next call works normally.
            visits v(1000);
            troupe::parallel_for(std::size_t{0}, v.seen.size(), std::ref(v));
            CHECK(v.each_once());
        });
    });
}

TEST_CASE("parallel_for: an exception in a nested loop reaches the body that ran it") {
    on_processors([](troupe::cluster& c) {
        troupe_test::leak_check no_leaks;
        run_in(c, [] {
            std::atomic<int> caught{0};
            troupe::parallel_for(
                0, 32,
                [&](int i) {
                    try {
                        troupe::parallel_for(
                            0, 100,
                            [&](int j) {
                                if (j == i) throw std::logic_error("inner");
                            },
                            1);
                    } catch (const std::logic_error&) {
                        caught++;
                    }
                },
                1);
            CHECK(caught.load() == 32);
        });
    });
}

TEST_CASE("fork_join: the lowest-numbered callable's exception; unstarted ones skipped") {
    on_processors([](troupe::cluster& c) {
        troupe_test::leak_check no_leaks;
        run_in(c, [] {
            for (int round = 0; round < 200; ++round) {
                std::atomic<int> ran2{0};
                try {
                    troupe::fork_join([] { throw std::runtime_error("one"); },
                                      [&] {
                                          ran2++;
                                          throw std::logic_error("two");
                                      });
                    FAIL("no exception");
                } catch (const std::runtime_error& e) {
                    CHECK(std::string(e.what()) == "one");
                }
                CHECK(ran2.load() <= 1);  // ran if stolen before "one" was thrown
                try {
                    troupe::fork_join([] {}, [] { throw std::logic_error("two"); }, [] {});
                    FAIL("no exception");
                } catch (const std::logic_error& e) {
                    CHECK(std::string(e.what()) == "two");
                }
            }
        });
    });
}

TEST_CASE("fork_join: a million tasks run on a handful of threads") {
    on_processors(
        [](troupe::cluster& c) {
            troupe_test::leak_check no_leaks;
            tree t{c};
            run_in(c, [&] { t.grow(20); });  // 2^20 leaves, 2^20 - 1 forks
            CHECK(t.leaves.load() == 1L << 20);
            // The caller plus at most one helper per processor: no thread per task.
            CHECK(t.max_live.load() <= c.processor_count() + 1);
            CHECK(c.live_threads() == 0);
        },
        {1, 2});
}

namespace {
// A chain: every level forks a trivial callable beside the next level, so
// the recursion is as deep as the chain is long.
long chain(int n) {
    if (n == 0) return 0;
    long below = 0;
    int here = 0;
    troupe::fork_join([&] { here = 1; }, [&] { below = chain(n - 1); });
    return below + here;
}
}  // namespace

TEST_CASE("fork_join: a chain far deeper than one stack continues on fresh stacks") {
    // 20,000 levels need megabytes of stack; a user thread has
    // defaults::core::stack_size (128 KiB; 256 KiB under sanitizers): without
    // the stack segments this overflows into the guard page and crashes.
    on_processors(
        [](troupe::cluster& c) {
            troupe_test::leak_check no_leaks;
            long total = 0;
            run_in(c, [&] { total = chain(20'000); });
            CHECK(total == 20'000);
            CHECK(c.live_threads() == 0);
        },
        {1, 2});
    // And from an OS thread whose own stack is the limit.
    troupe_test::watchdog w{"fork-join chain from an OS thread"};
    troupe::cluster c{2};
    troupe::lend_while_blocked lend{c};
    std::thread t{[&] {
        troupe::lend_while_blocked inner{c};
        CHECK(chain(20'000) == 20'000);
    }};
    t.join();
}

TEST_CASE("fork_join and parallel_for from an OS thread") {
    troupe_test::watchdog w{"fork-join from an OS thread"};
    for (std::size_t n : {1, 2, 4}) {
        CAPTURE(n);
        // Around the cluster: its guest processors (made when an OS thread
        // first lends itself) are freed with it.
        troupe_test::leak_check no_leaks;
        troupe::cluster c{n};
        {
            // Lending to c: the region runs on c (the OS thread works too).
            troupe::lend_while_blocked lend{c};
            CHECK(fib(20) == fib_serial(20));
            visits v(20'000);
            troupe::parallel_for(std::size_t{0}, v.seen.size(), std::ref(v), 16);
            CHECK(v.each_once());
            CHECK_THROWS_AS(
                troupe::parallel_for(0, 1000, [](int) { throw std::out_of_range("x"); }),
                std::out_of_range);
        }
        // From several std::threads at once, each its own region on c.
        std::atomic<int> right{0};
        std::vector<std::thread> ts;
        for (int k = 0; k < 3; ++k)
            ts.emplace_back([&] {
                troupe::lend_while_blocked lend{c};
                right += fib(18) == fib_serial(18);
            });
        for (auto& t : ts) t.join();
        CHECK(right.load() == 3);
        CHECK(c.live_threads() == 0);
    }
}

TEST_CASE("fork_join from an OS thread that lends to nothing: the default cluster") {
    troupe_test::watchdog w{"fork-join on the default cluster"};
    troupe::processors p{2};
    CHECK(fib(20) == fib_serial(20));
    std::atomic<long> sum{0};
    troupe::parallel_for(0, 10'000, [&](int i) { sum += i; });
    CHECK(sum.load() == 10'000L * 9'999 / 2);
    CHECK(troupe::default_cluster().live_threads() == 0);
}

TEST_CASE("parallel_for: a body that blocks on a troupe primitive") {
    on_processors([](troupe::cluster& c) {
        troupe_test::leak_check no_leaks;
        run_in(c, [] {
            // Every iteration takes and returns one of two units: bodies park
            // and resume (possibly elsewhere) inside the loop.
            troupe::semaphore units{2};
            std::atomic<int> done{0};
            troupe::parallel_for(
                0, 2000,
                [&](int) {
                    units.acquire();
                    troupe::this_thread::yield();
                    units.release();
                    done++;
                },
                4);
            CHECK(done.load() == 2000);
        });
    });
}

TEST_CASE("dump: a forker waiting for its stolen task says so") {
    troupe_test::watchdog w{"fork-join in the dump"};
    troupe::cluster c{2};
    troupe::semaphore gate{0};
    std::atomic<bool> started{false};
    troupe::thread root{c, [&] {
                            troupe::this_thread::set_name("fj root");
                            // The second callable is stolen (the first waits
                            // for it to start) and then blocks: the root
                            // finds it stolen and parks in its join.
                            troupe::fork_join(
                                [&] { troupe_test::wait_until([&] { return started.load(); }); },
                                [&] {
                                    started.store(true);
                                    gate.acquire();
                                });
                        }};
    const std::string line = troupe_test::wait_for_line("fj root", "fork-join join");
    CHECK(troupe_test::has(line, "fork-join join"));
    CHECK(troupe_test::has(troupe_test::dump_now(), "fork-join helper"));
    gate.release();
    root.join();
}
