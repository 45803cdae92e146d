// Clusters: defaults, independent pools, resizing, the processors RAII.
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "fixture.hpp"
#include "thread_names.hpp"
#include "troupe/detail/service_thread.hpp"
#include "troupe/semaphore.hpp"
#include "troupe/thread.hpp"

using troupe_test::run_in;

TEST_CASE("a program that configures nothing runs user threads on the default cluster") {
    std::atomic<int> n{0};
    {
        troupe::thread a{[&] { ++n; }};
        troupe::thread b{[&] { ++n; }};
    }
    CHECK(n.load() == 2);
    CHECK(troupe::default_cluster().processor_count() >= 1);
}

TEST_CASE("processors RAII sets the default cluster's count and restores it") {
    const std::size_t before = troupe::default_cluster().processor_count();
    {
        troupe::processors p{3};
        CHECK(troupe::default_cluster().processor_count() == 3);
        std::atomic<int> n{0};
        {
            std::vector<troupe::thread> ts;
            for (int i = 0; i < 100; ++i) ts.emplace_back([&] { ++n; });
        }
        CHECK(n.load() == 100);
    }
    CHECK(troupe::default_cluster().processor_count() == before);
}

TEST_CASE("independent clusters are created and destroyed repeatedly, side by side") {
    for (int round = 0; round < 20; ++round) {
        troupe::cluster a{std::size_t(1 + round % 3)};
        troupe::cluster b{2};
        std::atomic<int> on_a{0}, on_b{0};
        troupe::semaphore s{0};
        {
            troupe::thread ta{a, [&] {
                                  s.acquire();  // woken from the other cluster
                                  on_a += &troupe::this_cluster() == &a;
                              }};
            troupe::thread tb{b, [&] {
                                  on_b += &troupe::this_cluster() == &b;
                                  s.release();
                              }};
        }
        CHECK(on_a.load() == 1);
        CHECK(on_b.load() == 1);
    }
}

TEST_CASE("threads started inside a user thread inherit its cluster") {
    troupe::cluster c{2};
    std::atomic<int> same{0};
    run_in(c, [&] {
        std::vector<troupe::thread> ts;
        for (int i = 0; i < 10; ++i)
            ts.emplace_back([&] { same += &troupe::this_cluster() == &c; });
    });
    CHECK(same.load() == 10);
}

TEST_CASE("growing and shrinking a cluster while threads run loses no thread") {
    troupe::cluster c{1};
    std::atomic<long> work{0};
    std::atomic<bool> stop{false};
    std::vector<troupe::thread> ts;
    for (int i = 0; i < 16; ++i)
        ts.emplace_back(c, [&] {
            while (!stop.load()) {
                ++work;
                troupe::this_thread::yield();
            }
        });
    for (std::size_t n : {4u, 2u, 3u, 1u, 4u, 1u}) {
        c.set_processor_count(n);
        CHECK(c.processor_count() == n);
        const long seen = work.load();
        while (work.load() < seen + 100) std::this_thread::yield();  // still making progress
    }
    stop = true;
    ts.clear();
    CHECK(c.live_threads() == 0);
}

TEST_CASE("a cluster's destructor waits for threads whose handles were moved away") {
    std::atomic<int> done{0};
    troupe::thread escaped;
    {
        troupe::cluster c{2};
        troupe::semaphore go{0};
        troupe::thread t{c, [&] {
                             go.acquire();
                             ++done;
                         }};
        go.release();
        t.join();
        CHECK(done.load() == 1);
    }
    CHECK(done.load() == 1);
}

TEST_CASE("a cluster's kernel threads are named troupe-proc-N, as top and gdb show them") {
    // Counts, as other clusters (the default one) may carry the same names.
    const auto before = troupe_test::thread_names();
    {
        troupe::cluster c{3};
        const auto during = troupe_test::thread_names();
        for (int i = 0; i < 3; ++i) {
            const std::string name = "troupe-proc-" + std::to_string(i);
            CAPTURE(name);
            CHECK(troupe_test::threads_added(before, during, name) == 1);
        }
    }
    // A name longer than the kernel's 15 bytes is cut, not refused.
    std::atomic<bool> go{false};
    std::thread t{[&] {
        while (!go.load()) std::this_thread::yield();
    }};
    troupe::detail::name_kernel_thread(t, "troupe-a-name-longer-than-fifteen");
    CHECK(troupe_test::thread_names().count("troupe-a-name-l") == 1);
    go = true;
    t.join();
}
