// The seam matrix for channels (every seam has a defined outcome:
// docs/exception-safety.md), at 1, 2 and 4 processors:
// insert, remove and flush, from a user thread and an OS thread, across each
// seam: an element whose copy constructor throws (insert of a const T&,
// try_insert, flush, buffered transfers), allocation failure at each
// allocation point (injector), the channel closed or destroyed while waited
// on, and a stray unpark of a blocked thread. Elements are counted (live
// objects and values), so nothing lost or duplicated shows.
#include <atomic>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "alloc_fail.hpp"
#include "fixture.hpp"
#include "seams.hpp"
#include "troupe/channel.hpp"
#include "troupe/thread.hpp"

using troupe::channel;
using troupe::channel_status;
using troupe_test::copies_fail_after;
using troupe_test::copy_failure;
using troupe_test::from;
using troupe_test::misuse_recorder;
using troupe_test::on_processors;
using troupe_test::run_from;
using troupe_test::run_in;
using troupe_test::sleeps_fully;
using troupe_test::spawned;
using troupe_test::tracked;
using troupe_test::wait_until;

namespace {
constexpr from both[] = {from::user_thread, from::os_thread};

// Runs body(c, where) at each processor count of the fixture, its blocking
// threads as user threads and then as OS threads, and checks that it leaves
// as many `tracked` elements alive as it found (none leaked or destroyed
// twice).
template <class F>
void each_context_no_leak(F body) {
    on_processors([&](troupe::cluster& c) {
        for (from where : both) {
            CAPTURE(int(where));
            const long live = tracked::live;
            body(c, where);
            CHECK(tracked::live == live);
        }
    });
}

}  // namespace

// ---------------------------------------------- a throwing copy constructor

TEST_CASE(
    "insert(const T&) / try_insert(const T&) whose copy throws leave the channel unchanged "
    "(strong)") {
    on_processors([](troupe::cluster& c) {
        for (from where : both) {
            CAPTURE(int(where));
            run_from(c, where, [&] {
                const long live = tracked::live;
                {
                    channel<tracked> ch{2, "copy"};
                    const tracked a{1}, b{2};
                    ch.insert(a);
                    {
                        copies_fail_after f{0};
                        CHECK_THROWS_AS(ch.insert(b), copy_failure);
                        CHECK_THROWS_AS(ch << b, copy_failure);
                        CHECK_THROWS_AS((void)ch.try_insert(b), copy_failure);
                    }
                    CHECK(ch.size() == 1);  // nothing half-inserted
                    ch.insert(b);
                    CHECK(ch.remove().value == 1);
                    CHECK(ch.remove().value == 2);
                    CHECK(ch.empty());
                }
                CHECK(tracked::live == live);  // nothing leaked or destroyed twice
            });
        }
    });
}

TEST_CASE(
    "flush whose copy throws: consumers served so far keep their copy, the others still "
    "wait (basic)") {
    each_context_no_leak([](troupe::cluster& c, from where) {
        channel<tracked> ch{0, "flush"};
        std::atomic<int> got{0};
        std::vector<std::unique_ptr<spawned>> consumers;
        for (int i = 0; i < 3; ++i)
            consumers.push_back(std::make_unique<spawned>(c, where, [&] {
                if (ch.remove().value == 9) ++got;
            }));
        wait_until([&] { return ch.waiting_consumers() == 3; });
        const tracked nine{9};
        {
            copies_fail_after f{1};  // one consumer served, then a copy throws
            CHECK_THROWS_AS(ch.flush(nine), copy_failure);
        }
        wait_until([&] { return got == 1; });
        CHECK(ch.waiting_consumers() == 2);  // nobody lost, nobody served twice
        CHECK(ch.flush(nine) == 2);
        for (auto& t : consumers) t->join();
        CHECK(got == 3);
    });
}

TEST_CASE(
    "buffered transfers with copies that sometimes throw: every inserted element arrives "
    "once") {
    on_processors([](troupe::cluster& c) {
        const int n = troupe_test::scaled(2'000, 4);
        for (from where : both) {
            CAPTURE(int(where));
            const long live = tracked::live;
            {
                channel<tracked> ch{4, "buffered"};
                std::vector<int> inserted, seen(n, 0);
                spawned consumer{c, where, [&] {
                                     for (tracked& t : ch) ++seen[t.value];
                                 }};
                run_from(c, where, [&] {
                    for (int i = 0; i < n; ++i) {
                        const tracked t{i};
                        try {
                            copies_fail_after f{i % 3 == 0 ? 0 : -1};  // every third copy throws
                            ch.insert(t);
                            inserted.push_back(i);
                        } catch (copy_failure&) {}
                    }
                    ch.close();
                });
                consumer.join();
                for (int i : inserted) CHECK(seen[i] == 1);
                int total = 0;
                for (int v : seen) total += v;
                CHECK(total == int(inserted.size()));
                CHECK(inserted.size() == std::size_t(n - (n + 2) / 3));
            }
            CHECK(tracked::live == live);
        }
    });
}

// ------------------------------------------------- closed while waited on

TEST_CASE(
    "close while producers and consumers wait: producers get their element back, "
    "consumers channel_closed") {
    each_context_no_leak([](troupe::cluster& c, from where) {
        channel<tracked> full{1, "full"}, empty{1, "empty"};
        full.insert(tracked{0});
        std::atomic<int> back{0}, closed{0};
        std::vector<std::unique_ptr<spawned>> ts;
        for (int i = 1; i <= 2; ++i) {
            ts.push_back(std::make_unique<spawned>(c, where, [&, i] {
                try {
                    full.insert(tracked{i});
                } catch (troupe::channel_closed_with<tracked>& e) {
                    back += e.value().value;
                }
            }));
            ts.push_back(std::make_unique<spawned>(c, where, [&] {
                try {
                    (void)empty.remove();
                } catch (troupe::channel_closed&) {
                    ++closed;
                }
            }));
        }
        wait_until([&] { return full.waiting_producers() == 2 && empty.waiting_consumers() == 2; });
        full.close();
        empty.close();
        for (auto& t : ts) t->join();
        CHECK(back == 3);  // 1 + 2: each producer's own element
        CHECK(closed == 2);
        CHECK(full.remove().value == 0);  // drain keeps the buffered one
    });
}

// ---------------------------------------------- destroyed while waited on

TEST_CASE(
    "destroying a channel while threads block: released with channel_destroyed, elements "
    "kept, nothing touched after") {
    on_processors([](troupe::cluster& c) {
        for (from where : both) {
            CAPTURE(int(where));
            misuse_recorder rec;
            const long live = tracked::live;
            {
                auto ch = std::make_unique<channel<tracked>>(0, "doomed");
                std::atomic<int> back{0};
                spawned producer{c, where, [&, raw = ch.get()] {
                                     tracked t{5};
                                     try {
                                         raw->insert(std::move(t));
                                     } catch (troupe::channel_destroyed&) {
                                         back = t.value;  // not moved: still ours
                                     }
                                 }};
                wait_until([&] { return ch->waiting_producers() == 1; });
                ch.reset();
                producer.join();
                CHECK(back == 5);
            }
            CHECK(tracked::live == live);
            if constexpr (troupe::checked_build) CHECK(rec.messages().size() == 1);
        }
    });
}

// ---------------------------------------------------------- a stray unpark

TEST_CASE("a stray unpark completes neither a blocked remove nor a blocked insert") {
    on_processors([](troupe::cluster& c) {
        for (from where : both) {
            CAPTURE(int(where));
            misuse_recorder rec;
            channel<int> ch{0, "stray"};
            std::atomic<troupe::context*> ctx{nullptr};
            std::atomic<int> got{-1};
            {
                spawned consumer{c, where, [&] {
                                     ctx = &troupe::this_context();
                                     got = ch.remove();
                                 }};
                wait_until([&] { return ch.waiting_consumers() == 1; });
                troupe::unpark(*ctx.load());
                troupe_test::stray_absorbed(rec, [&] { return ch.waiting_consumers() == 1; });
                ch.insert(7);
                consumer.join();
                CHECK(got == 7);
            }
            ctx = nullptr;
            {
                spawned producer{c, where, [&] {
                                     ctx = &troupe::this_context();
                                     ch.insert(8);
                                 }};
                wait_until([&] { return ch.waiting_producers() == 1; });
                const std::size_t reports = rec.messages().size();
                troupe::unpark(*ctx.load());
                if constexpr (troupe::checked_build)
                    wait_until([&] { return rec.messages().size() > reports; });
                for (int i = 0; i < 2000; ++i) {
                    REQUIRE(ch.waiting_producers() == 1);
                    troupe::this_thread::yield();
                }
                CHECK(ch.remove() == 8);
                producer.join();
            }
        }
    });
}

// ------------------------------------------------------- allocation failure

TEST_CASE("allocation failure at each allocation point of the channel's own paths") {
    on_processors([](troupe::cluster& c) {
        run_in(c, [&] {
            const long live = tracked::live;
            // Construction (the ring buffer): bad_alloc, nothing leaked.
            const std::size_t construct = troupe_test::for_each_allocation_failure([](std::size_t) {
                channel<tracked> ch{8, "ring"};
                ch.insert(tracked{1});
            });
            CHECK(construct >= 1);
            // An insert into a closed channel: building the exception may
            // fail; the element is then still the caller's (strong).
            channel<tracked> ch{1, "closed"};
            ch.close();
            const std::size_t closed = troupe_test::for_each_allocation_failure([&](std::size_t) {
                tracked t{4};
                try {
                    ch.insert(std::move(t));
                } catch (troupe::channel_closed_with<tracked>& e) {
                    CHECK(e.value().value == 4);
                    return;
                } catch (std::bad_alloc&) {
                    CHECK(t.value == 4);  // not moved from
                    throw;
                }
            });
            CHECK(closed >= 1);
            CHECK(tracked::live == live);
            CHECK(sleeps_fully());
        });
    });
}
