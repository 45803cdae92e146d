// channel insert/remove given a stop_token: a cancelled call changes
// nothing, and a stop racing a hand-off delivers each element exactly once.
#include <atomic>
#include <string>
#include <thread>

#include "fixture.hpp"
#include "troupe/channel.hpp"
#include "troupe/stop_token.hpp"
#include "troupe/thread.hpp"

using troupe_test::on_processors;
using troupe_test::scaled;

TEST_CASE("remove(token) on an empty channel is cancelled; the channel is unchanged") {
    on_processors([](troupe::cluster& c) {
        troupe::channel<int> ch{1, "jobs"};
        troupe::stop_source stop;
        std::atomic<bool> cancelled{false};
        troupe::thread t{
            c, [&] {
                try {
                    (void)ch.remove(stop.get_token());
                } catch (const troupe::cancelled& e) {
                    CHECK(std::string(e.what()).find("channel remove 'jobs'") != std::string::npos);
                    cancelled = true;
                }
            }};
        troupe_test::wait_until([&] { return ch.waiting_consumers() == 1; });
        stop.request_stop();
        t.join();
        CHECK(cancelled.load());
        CHECK(ch.waiting_consumers() == 0);
        ch.insert(5);
        CHECK_THROWS_AS((void)ch.remove(stop.get_token()), troupe::cancelled);  // stopped before
        CHECK(ch.size() == 1);
        CHECK(ch.remove() == 5);
    });
}

TEST_CASE("insert(token) on a full channel is cancelled; the element stays with the caller") {
    on_processors([](troupe::cluster& c) {
        troupe::channel<std::string> ch{0};
        troupe::stop_source stop;
        std::string kept;
        troupe::thread t{c, [&] {
                             std::string v = "payload";
                             try {
                                 ch.insert(std::move(v), stop.get_token());
                             } catch (const troupe::cancelled&) {
                                 kept = v;  // untouched
                             }
                         }};
        troupe_test::wait_until([&] { return ch.waiting_producers() == 1; });
        stop.request_stop();
        t.join();
        CHECK(kept == "payload");
        CHECK(ch.waiting_producers() == 0);
    });
}

TEST_CASE("a stop racing a hand-off: every element reaches exactly one side") {
    for (std::size_t cap : {std::size_t{0}, std::size_t{1}}) {
        CAPTURE(cap);
        on_processors([cap](troupe::cluster& c) {
            const int rounds = scaled(400);
            long received = 0, drained = 0, kept = 0;
            for (int i = 0; i < rounds; ++i) {
                troupe::channel<int> ch{cap};
                troupe::stop_source stop_consumer, stop_producer;
                std::atomic<int> got{-1}, producer_kept{-1};
                troupe::thread consumer{c, [&] {
                                            try {
                                                got = ch.remove(stop_consumer.get_token());
                                            } catch (const troupe::cancelled&) {}
                                        }};
                troupe::thread producer{c, [&] {
                                            int v = i;
                                            try {
                                                ch.insert(std::move(v), stop_producer.get_token());
                                            } catch (const troupe::cancelled&) {
                                                producer_kept = v;
                                            }
                                        }};
                troupe::thread stopper{c, [&] { stop_consumer.request_stop(); }};
                consumer.join();
                stopper.join();
                // The consumer is gone: whatever it did not take is in the
                // buffer, or with a producer we now stop.
                int left = -1;
                if (ch.try_remove(left) == troupe::channel_status::success) {
                    ++drained;
                    CHECK(left == i);
                }
                stop_producer.request_stop();
                producer.join();
                // A producer that came after the first look may have
                // buffered its element before seeing the stop.
                if (ch.try_remove(left) == troupe::channel_status::success) {
                    ++drained;
                    CHECK(left == i);
                }
                if (got.load() >= 0) {
                    ++received;
                    CHECK(got.load() == i);
                }
                if (producer_kept.load() >= 0) {
                    ++kept;
                    CHECK(producer_kept.load() == i);
                }
                CHECK(ch.empty());
            }
            CHECK(received + drained + kept == rounds);  // exactly once each
        });
    }
}

TEST_CASE("remove(token) after close drains, then throws channel_closed (not cancelled)") {
    troupe::channel<int> ch{2};
    troupe::stop_source stop;
    ch.insert(1);
    ch.close();
    CHECK(ch.remove(stop.get_token()) == 1);
    CHECK_THROWS_AS((void)ch.remove(stop.get_token()), troupe::channel_closed);
}
