// channel<T>: operations, close policy, FIFO and FCFS order, element types.
#include <array>
#include <atomic>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "fixture.hpp"
#include "leak_check.hpp"
#include "troupe/channel.hpp"
#include "troupe/thread.hpp"

using troupe::channel;
using troupe::channel_status;
using troupe_test::on_processors;
using troupe_test::run_in;

constexpr int many = troupe_test::scaled(50'000, 5);

namespace {
using troupe_test::wait_until;
}  // namespace

TEST_CASE("buffered channel: FIFO, size, capacity, try operations") {
    channel<int> ch{3, "fifo"};
    CHECK(ch.capacity() == 3);
    CHECK(ch.empty());
    CHECK(ch.name() == std::string("fifo"));
    ch.insert(1);
    ch << 2;
    int three = 3;
    CHECK(ch.try_insert(three) == channel_status::success);
    CHECK(ch.size() == 3);
    CHECK(ch.try_insert(4) == channel_status::full);
    int v = 0;
    ch >> v;
    CHECK(v == 1);
    CHECK(ch.remove() == 2);
    CHECK(ch.try_remove(v) == channel_status::success);
    CHECK(v == 3);
    CHECK(ch.try_remove(v) == channel_status::empty);
    CHECK(v == 3);  // untouched on failure
    // Wrap around the ring several times.
    for (int i = 0; i < 10; ++i) {
        ch << i;
        ch << i + 100;
        CHECK(ch.remove() == i);
        CHECK(ch.remove() == i + 100);
    }
    CHECK(ch.empty());
}

TEST_CASE("try_insert moves from its argument only on success") {
    channel<std::unique_ptr<int>> ch{1};
    auto a = std::make_unique<int>(1);
    auto b = std::make_unique<int>(2);
    CHECK(ch.try_insert(std::move(a)) == channel_status::success);
    CHECK(a == nullptr);
    CHECK(ch.try_insert(std::move(b)) == channel_status::full);
    REQUIRE(b != nullptr);
    CHECK(*b == 2);
    ch.close();
    CHECK(ch.try_insert(std::move(b)) == channel_status::closed);
    REQUIRE(b != nullptr);
}

TEST_CASE("zero-size channel: try operations succeed only with a partner waiting") {
    on_processors([](troupe::cluster& c) {
        troupe_test::leak_check no_leaks;
        channel<int> ch{0};
        int v = 0;
        CHECK(ch.try_insert(1) == channel_status::full);
        CHECK(ch.try_remove(v) == channel_status::empty);
        troupe::thread consumer{c, [&] { v = ch.remove(); }};
        wait_until([&] { return ch.waiting_consumers() == 1; });
        CHECK(ch.try_insert(7) == channel_status::success);
        consumer.join();
        CHECK(v == 7);
        troupe::thread producer{c, [&] { ch.insert(8); }};
        wait_until([&] { return ch.waiting_producers() == 1; });
        CHECK(ch.try_remove(v) == channel_status::success);
        producer.join();
        CHECK(v == 8);
        CHECK(ch.size() == 0);
    });
}

TEST_CASE("rendezvous: an insert completes only when a remove takes it") {
    on_processors([](troupe::cluster& c) {
        troupe_test::leak_check no_leaks;
        channel<int> ch{0};
        std::atomic<bool> inserted{false};
        troupe::thread producer{c, [&] {
                                    ch.insert(42);
                                    inserted = true;
                                }};
        wait_until([&] { return ch.waiting_producers() == 1; });
        CHECK_FALSE(inserted.load());
        CHECK(ch.remove() == 42);
        producer.join();
        CHECK(inserted.load());
    });
}

TEST_CASE("producers and consumers are served first come, first served") {
    on_processors([](troupe::cluster& c) {
        troupe_test::leak_check no_leaks;
        for (std::size_t cap : {0u, 2u}) {
            CAPTURE(cap);
            channel<int> ch{cap};
            for (std::size_t i = 0; i < cap; ++i) ch << -1;  // fill the buffer
            std::vector<troupe::thread> producers;
            for (int i = 0; i < 6; ++i) {
                producers.emplace_back(c, [&ch, i] { ch.insert(i); });
                wait_until([&] { return ch.waiting_producers() == std::size_t(i) + 1; });
            }
            for (std::size_t i = 0; i < cap; ++i) CHECK(ch.remove() == -1);
            for (int i = 0; i < 6; ++i) CHECK(ch.remove() == i);  // arrival order
            for (auto& t : producers) t.join();

            std::vector<int> got(6, -2);
            std::vector<troupe::thread> consumers;
            for (int i = 0; i < 6; ++i) {
                consumers.emplace_back(c, [&ch, &got, i] { got[i] = ch.remove(); });
                wait_until([&] { return ch.waiting_consumers() == std::size_t(i) + 1; });
            }
            for (int i = 0; i < 6; ++i) ch.insert(i * 10);
            for (auto& t : consumers) t.join();
            for (int i = 0; i < 6; ++i) CHECK(got[i] == i * 10);
        }
    });
}

TEST_CASE("close: producers get their element back; remove drains, stop_on_close does not") {
    channel<std::string> ch{4, "closing"};
    ch << std::string("a");
    ch << std::string("b");
    ch.close();
    ch.close();  // harmless
    CHECK(ch.is_closed());
    try {
        ch.insert(std::string("lost?"));
        FAIL("insert into a closed channel must throw");
    } catch (troupe::channel_closed_with<std::string>& e) {
        CHECK(e.value() == "lost?");
        CHECK(e.is_insert());
        CHECK(e.channel() == &ch);
        CHECK(std::string(e.what()).find("closing") != std::string::npos);
    }
    std::string s;
    CHECK(ch.try_remove(s, troupe::stop_on_close) == channel_status::closed);
    CHECK_THROWS_AS(ch.remove(troupe::stop_on_close), troupe::channel_closed);
    CHECK(ch.size() == 2);      // stop left them there
    CHECK(ch.remove() == "a");  // drain
    CHECK(ch.try_remove(s) == channel_status::success);
    CHECK(s == "b");
    CHECK(ch.try_remove(s) == channel_status::closed);
    try {
        ch.remove();
        FAIL("remove from a closed, empty channel must throw");
    } catch (troupe::channel_closed& e) {
        CHECK(e.is_remove());
    }
    CHECK(ch.try_insert(std::string("x")) == channel_status::closed);
}

TEST_CASE("range-for drains a closed channel and ends") {
    channel<int> ch{8};
    for (int i = 0; i < 8; ++i) ch << i;
    ch.close();
    std::vector<int> got;
    for (int v : ch) got.push_back(v);
    CHECK(got == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
    for (int v : ch) got.push_back(v);  // closed and empty: no iterations
    CHECK(got.size() == 8);
}

TEST_CASE("close releases blocked producers (with their values) and consumers") {
    on_processors([](troupe::cluster& c) {
        troupe_test::leak_check no_leaks;
        // Blocked producers on a full channel.
        channel<int> full{2};
        full << 100;
        full << 101;
        std::vector<int> returned(4, -1);
        std::vector<troupe::thread> ps;
        for (int i = 0; i < 4; ++i)
            ps.emplace_back(c, [&, i] {
                try {
                    full.insert(i);
                } catch (troupe::channel_closed_with<int>& e) {
                    returned[i] = e.value();
                }
            });
        wait_until([&] { return full.waiting_producers() == 4; });
        full.close();
        for (auto& t : ps) t.join();
        for (int i = 0; i < 4; ++i) CHECK(returned[i] == i);
        // Drained consumers see every buffered value exactly once.
        std::vector<int> drained;
        for (int v : full) drained.push_back(v);
        CHECK(drained == std::vector<int>{100, 101});

        // Blocked consumers on an empty channel, both policies.
        channel<int> empty{2};
        std::atomic<int> closed_seen{0};
        std::vector<troupe::thread> cs;
        for (int i = 0; i < 4; ++i)
            cs.emplace_back(c, [&, i] {
                try {
                    if (i % 2) (void)empty.remove();
                    else (void)empty.remove(troupe::stop_on_close);
                } catch (troupe::channel_closed&) {
                    ++closed_seen;
                }
            });
        wait_until([&] { return empty.waiting_consumers() == 4; });
        empty.close();
        for (auto& t : cs) t.join();
        CHECK(closed_seen == 4);
        // After close nothing blocks.
        CHECK_THROWS_AS(empty.insert(1), troupe::channel_closed);
        CHECK_THROWS_AS(empty.remove(), troupe::channel_closed);
    });
}

TEST_CASE("move-only elements") {
    on_processors([](troupe::cluster& c) {
        troupe_test::leak_check no_leaks;
        for (std::size_t cap : {0u, 1u, 16u}) {
            channel<std::unique_ptr<int>> ch{cap};
            long sum = 0;
            troupe::thread consumer{c, [&] {
                                        for (auto& p : ch) sum += *p;
                                    }};
            for (int i = 1; i <= 1000; ++i) ch << std::make_unique<int>(i);
            ch.close();
            consumer.join();
            CHECK(sum == 1000L * 1001 / 2);
            // A blocked move-only producer gets its pointer back on close.
            channel<std::unique_ptr<int>> z{0};
            std::unique_ptr<int> back;
            troupe::thread p{c, [&] {
                                 try {
                                     z.insert(std::make_unique<int>(9));
                                 } catch (troupe::channel_closed_with<std::unique_ptr<int>>& e) {
                                     back = std::move(e.value());
                                 }
                             }};
            wait_until([&] { return z.waiting_producers() == 1; });
            z.close();
            p.join();
            REQUIRE(back != nullptr);
            CHECK(*back == 9);
        }
    });
}

namespace {
struct big {
    std::array<std::uint32_t, 1024> words;  // 4 KiB
    static big of(std::uint32_t seed) {
        big b;
        for (std::uint32_t i = 0; i < b.words.size(); ++i) b.words[i] = seed * 2654435761u + i;
        return b;
    }
    bool intact() const {
        for (std::uint32_t i = 1; i < words.size(); ++i)
            if (words[i] != words[0] + i) return false;
        return true;
    }
};
}  // namespace

TEST_CASE("big elements (4 KiB) cross intact, with many producers and consumers") {
    on_processors([](troupe::cluster& c) {
        troupe_test::leak_check no_leaks;
        for (std::size_t cap : {0u, 8u}) {
            channel<big> ch{cap};
            constexpr int producers = 4, consumers = 4, each = many / 50;
            std::atomic<long> sum{0}, bad{0};
            std::vector<troupe::thread> ts;
            for (int k = 0; k < consumers; ++k)
                ts.emplace_back(c, [&] {
                    long s = 0;
                    for (const big& b : ch) {
                        if (!b.intact()) ++bad;
                        s += b.words[0];
                    }
                    sum += s;
                });
            std::vector<troupe::thread> ps;
            for (int k = 0; k < producers; ++k)
                ps.emplace_back(c, [&, k] {
                    for (int i = 0; i < each; ++i) ch << big::of(std::uint32_t(k * each + i));
                });
            long expect = 0;
            for (int i = 0; i < producers * each; ++i) expect += big::of(std::uint32_t(i)).words[0];
            for (auto& t : ps) t.join();
            ch.close();
            for (auto& t : ts) t.join();
            CHECK(bad == 0);
            CHECK(sum == expect);
        }
    });
}

TEST_CASE("flush hands a copy to every blocked consumer and buffers nothing") {
    on_processors([](troupe::cluster& c) {
        troupe_test::leak_check no_leaks;
        channel<std::string> ch{4};
        CHECK(ch.flush("nobody") == 0);
        CHECK(ch.empty());
        std::vector<std::string> got(5);
        std::vector<troupe::thread> cs;
        for (int i = 0; i < 5; ++i) cs.emplace_back(c, [&, i] { got[i] = ch.remove(); });
        wait_until([&] { return ch.waiting_consumers() == 5; });
        CHECK(ch.flush("stop") == 5);
        for (auto& t : cs) t.join();
        for (auto& s : got) CHECK(s == "stop");
        CHECK(ch.empty());
    });
}

TEST_CASE("user threads and OS threads share one channel") {
    on_processors([](troupe::cluster& c) {
        troupe_test::leak_check no_leaks;
        for (std::size_t cap : {0u, 4u}) {
            channel<long> ch{cap};
            constexpr int per = many / 10;
            std::atomic<long> received{0}, count{0};
            auto consume = [&] {
                long s = 0, n = 0;
                for (long v : ch) {
                    s += v;
                    ++n;
                }
                received += s;
                count += n;
            };
            auto produce = [&](long base) {
                for (long i = 0; i < per; ++i) ch << base + i;
            };
            std::thread os_consumer{consume};
            troupe::thread user_consumer{c, consume};
            std::thread os_producer{produce, 0L};
            troupe::thread user_producer{c, produce, long(per)};
            produce(2L * per);  // main is an OS thread too
            os_producer.join();
            user_producer.join();
            ch.close();
            os_consumer.join();
            user_consumer.join();
            const long n = 3L * per;
            CHECK(count == n);
            CHECK(received == n * (n - 1) / 2);
        }
    });
}
