// waituntil over channels, mirroring Cforall's waituntil channel tests:
// one channel selected by many threads (one_chan), zero-size channels in
// both directions with many selectors (channel_zero_size), the two-selector
// opposite-order race, close during waituntil for readers and writers
// (channel_close), repeated close cycles (repeat_close), FIFO when a
// selecting reader meets a blocked selecting writer, closed clauses, and
// run-time-length clauses over channels.
#include <algorithm>
#include <atomic>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "fixture.hpp"
#include "leak_check.hpp"
#include "troupe/channel.hpp"
#include "troupe/future.hpp"
#include "troupe/thread.hpp"
#include "troupe/waituntil.hpp"

using troupe::channel;
using troupe::on;
using troupe::waituntil;
using troupe_test::on_processors;
using troupe_test::run_in;

namespace {
using troupe_test::wait_until;
}  // namespace

TEST_CASE("one channel selected by many threads: every value exactly once (one_chan)") {
    on_processors([](troupe::cluster& c) {
        troupe_test::leak_check no_leaks;
        constexpr int threads = 4;
        const int per = troupe_test::scaled(20'000, 4);
        channel<int> ch{5};
        std::atomic<long> in_sum{0}, out_sum{0};
        std::vector<troupe::thread> ts;
        for (int t = 0; t < threads; ++t) {
            ts.emplace_back(c, [&, t] {
                long s = 0;
                for (int i = 0; i < per; ++i) {
                    int v = t * per + i;
                    waituntil(on(ch.insert_from(v), [&] { s += t * per + i; }));
                }
                in_sum += s;
            });
            ts.emplace_back(c, [&] {
                long s = 0;
                int v = 0;
                for (int i = 0; i < per; ++i) waituntil(on(ch.remove_into(v), [&] { s += v; }));
                out_sum += s;
            });
        }
        for (auto& t : ts) t.join();
        const long n = long(threads) * per;
        CHECK(in_sum.load() == n * (n - 1) / 2);
        CHECK(out_sum.load() == in_sum.load());
        CHECK(ch.empty());
    });
}

TEST_CASE("zero-size channels, both directions selecting, many selectors: every value once") {
    on_processors([](troupe::cluster& c) {
        troupe_test::leak_check no_leaks;
        constexpr int producers = 3, consumers = 3;
        const int per = troupe_test::scaled(3'000, 4);  // values per producer
        const int total = producers * per;
        channel<int> a{0}, b{0}, d{0};
        std::vector<std::atomic<int>> seen(total);
        std::vector<troupe::thread> ts;
        for (int p = 0; p < producers; ++p) {
            ts.emplace_back(c, [&, p] {
                for (int i = 0; i < per; ++i) {
                    int v = p * per + i;
                    if (p % 2)  // opposite orders meet each other
                        waituntil(on(a.insert_from(v)) | on(b.insert_from(v)) |
                                  on(d.insert_from(v)));
                    else
                        waituntil(on(d.insert_from(v)) | on(b.insert_from(v)) |
                                  on(a.insert_from(v)));
                }
            });
        }
        for (int q = 0; q < consumers; ++q) {
            ts.emplace_back(c, [&, q] {
                int v = -1;
                auto got = [&] { seen[v].fetch_add(1, std::memory_order_relaxed); };
                for (int i = 0; i < total / consumers; ++i) {
                    if (q % 2)
                        waituntil(on(a.remove_into(v), got) | on(b.remove_into(v), got) |
                                  on(d.remove_into(v), got));
                    else
                        waituntil(on(b.remove_into(v), got) | on(d.remove_into(v), got) |
                                  on(a.remove_into(v), got));
                }
            });
        }
        for (auto& t : ts) t.join();
        int once = 0;
        for (auto& s : seen) once += s.load() == 1;
        CHECK(once == total);
    });
}

TEST_CASE("two selectors on each other's zero-size channels in opposite orders (PENDING race)") {
    const int rounds = troupe_test::scaled(20'000, 4);
    auto check = [&](const std::vector<int>& got, const std::vector<std::size_t>& won) {
        REQUIRE(got.size() == won.size());
        int mismatches = 0;
        for (std::size_t i = 0; i < got.size(); ++i)
            mismatches += got[i] != (won[i] == 0 ? 2 : 1);  // B carries 2, A carries 1
        CHECK(mismatches == 0);
    };
    on_processors([&](troupe::cluster& c) {
        troupe_test::leak_check no_leaks;
        channel<int> A{0}, B{0};
        std::vector<int> got(rounds);
        std::vector<std::size_t> won(rounds);
        troupe::thread reader{c, [&] {
                                  for (int i = 0; i < rounds; ++i) {
                                      int x = 0;
                                      auto r =
                                          waituntil(on(A.remove_into(x)) | on(B.remove_into(x)));
                                      REQUIRE(r.count() == 1);
                                      got[i] = x;
                                  }
                              }};
        troupe::thread writer{
            c, [&] {
                for (int i = 0; i < rounds; ++i) {
                    int one = 1, two = 2;
                    won[i] = waituntil(on(B.insert_from(two)) | on(A.insert_from(one))).index();
                }
            }};
        reader.join();
        writer.join();
        check(got, won);
        CHECK(A.waiting_consumers() + A.waiting_producers() + B.waiting_consumers() +
                  B.waiting_producers() ==
              0);
    });
    // The same race between an OS thread and a user thread.
    troupe::cluster c{2};
    channel<int> A{0}, B{0};
    std::vector<int> got(rounds / 4);
    std::vector<std::size_t> won(rounds / 4);
    troupe::thread writer{
        c, [&] {
            for (auto& w : won) w = waituntil(on(B.insert_from(2)) | on(A.insert_from(1))).index();
        }};
    for (auto& g : got) waituntil(on(A.remove_into(g)) | on(B.remove_into(g)));
    writer.join();
    check(got, won);
}

TEST_CASE("buffered channel: a selecting reader meeting a blocked selecting writer keeps FIFO") {
    on_processors(
        [](troupe::cluster& c) {
            troupe_test::leak_check no_leaks;
            for (int round = 0; round < troupe_test::scaled(200, 4) + 5; ++round) {
                channel<int> ch{2};
                troupe::future<int> never;
                ch << 1;
                ch << 2;
                troupe::thread writer{c, [&] {
                                          int three = 3;
                                          waituntil(on(never) | on(ch.insert_from(three)));
                                      }};
                wait_until([&] { return ch.waiting_producers() == 1; });
                std::vector<int> out;
                for (int i = 0; i < 3; ++i) {
                    int v = 0;
                    run_in(c, [&] {
                        waituntil(on(never) | on(ch.remove_into(v), [&] { out.push_back(v); }));
                    });
                }
                writer.join();
                CHECK(out == std::vector<int>{1, 2, 3});
            }
        },
        {1, 2});
}

TEST_CASE("a closed channel makes its clause ready and the clause throws, in both modes") {
    channel<int> closed{3};
    closed << 7;
    closed.close();
    troupe::future<int> never;
    int v = 0;
    // Drain policy: the buffered element still comes out first.
    CHECK(waituntil(on(never) | on(closed.remove_into(v))).index() == 1);
    CHECK(v == 7);
    CHECK_THROWS_AS(waituntil(on(never) | on(closed.remove_into(v))), troupe::channel_closed);
    CHECK_THROWS_AS(waituntil(on(closed.insert_from(8)) | on(never)),
                    troupe::channel_closed_with<int>);
    // General mode: the exception comes from the clause; the other clause's
    // completed operation is not lost (its body runs during cleanup).
    channel<int> open{3};
    open << 5;
    int got = 0, bodies = 0;
    CHECK_THROWS_AS(waituntil(on(closed.remove_into(v), [&] { ++bodies; }) &
                              on(open.remove_into(got), [&] { ++bodies; })),
                    troupe::channel_closed);
    CHECK(got == 5);
    CHECK(bodies == 1);
    CHECK(open.empty());
    // Stop policy: a closed channel with elements left throws at once.
    channel<int> left{2};
    left << 1;
    left.close();
    CHECK_THROWS_AS(waituntil(on(left.remove_into(v, troupe::stop_on_close))),
                    troupe::channel_closed);
    CHECK(left.size() == 1);
    CHECK(never.waiters() == 0);
}

TEST_CASE("close during waituntil: no value lost, per-channel FIFO kept (channel_close)") {
    for (bool and_reader : {false, true}) {
        CAPTURE(and_reader);
        on_processors([&](troupe::cluster& c) {
            troupe_test::leak_check no_leaks;
            channel<int> A{2}, B{2};
            std::atomic<long> inserted{0}, removed{0};
            const long threshold = troupe_test::scaled(5'000, 4);
            troupe::thread producer{
                c, [&] {
                    try {
                        for (int i = 0;; ++i)
                            waituntil(on(A.insert_from(i), [&] { ++inserted; }) &
                                      on(B.insert_from(i), [&] { ++inserted; }));
                    } catch (troupe::channel_closed&) {}
                }};
            int next_a = 0, next_b = 0, out_of_order = 0;
            troupe::thread consumer{
                c, [&] {
                    int x = 0, y = 0;
                    auto got_a = [&] { out_of_order += x != next_a++, ++removed; };
                    auto got_b = [&] { out_of_order += y != next_b++, ++removed; };
                    try {
                        for (;;) {
                            if (and_reader)
                                waituntil(on(A.remove_into(x), got_a) &
                                          on(B.remove_into(y), got_b));
                            else
                                waituntil(on(A.remove_into(x), got_a) |
                                          on(B.remove_into(y), got_b));
                        }
                    } catch (troupe::channel_closed&) {}
                    // Drain what is left, one channel at a time.
                    try {
                        for (;;) {
                            x = A.remove();
                            got_a();
                        }
                    } catch (troupe::channel_closed&) {}
                    try {
                        for (;;) {
                            y = B.remove();
                            got_b();
                        }
                    } catch (troupe::channel_closed&) {}
                }};
            wait_until([&] { return removed.load() >= threshold; });
            A.close();
            B.close();
            producer.join();
            consumer.join();
            CHECK(out_of_order == 0);
            CHECK(inserted.load() == removed.load());
            CHECK(inserted.load() >= threshold);
        });
    }
}

TEST_CASE("repeated close cycles: 6-way and-insert against 6-way or-remove (repeat_close)") {
    on_processors(
        [](troupe::cluster& c) {
            troupe_test::leak_check no_leaks;
            for (int round = 0; round < troupe_test::scaled(40, 4); ++round) {
                CAPTURE(round);
                std::vector<channel<long>> ch(6);
                std::atomic<long> in_count{0}, in_sum{0}, out_count{0}, out_sum{0};
                troupe::thread producer{
                    c, [&] {
                        try {
                            for (long i = 1;; ++i) {
                                auto ins = [&] { ++in_count, in_sum += i; };
                                waituntil(
                                    on(ch[0].insert_from(i), ins) & on(ch[1].insert_from(i), ins) &
                                    on(ch[2].insert_from(i), ins) & on(ch[3].insert_from(i), ins) &
                                    on(ch[4].insert_from(i), ins) & on(ch[5].insert_from(i), ins));
                            }
                        } catch (troupe::channel_closed&) {}
                    }};
                troupe::thread consumer{
                    c, [&] {
                        long v = 0;
                        auto rem = [&] { ++out_count, out_sum += v; };
                        try {
                            for (;;)
                                waituntil(
                                    on(ch[0].remove_into(v), rem) | on(ch[1].remove_into(v), rem) |
                                    on(ch[2].remove_into(v), rem) | on(ch[3].remove_into(v), rem) |
                                    on(ch[4].remove_into(v), rem) | on(ch[5].remove_into(v), rem));
                        } catch (troupe::channel_closed&) {}
                    }};
                wait_until([&] { return out_count.load() >= troupe_test::scaled(600, 4); });
                for (auto& x : ch) x.close();
                producer.join();
                consumer.join();
                CHECK(in_count.load() == out_count.load());
                CHECK(in_sum.load() == out_sum.load());
            }
        },
        {1, 2});
}

TEST_CASE("an exception in a body with & pending operations loses nothing") {
    on_processors([](troupe::cluster& c) {
        troupe_test::leak_check no_leaks;
        for (int round = 0; round < troupe_test::scaled(300, 4); ++round) {
            channel<int> A{1}, B{0};
            A << 1;
            int x = 0, y = 0;
            bool b_ran = false;
            troupe::thread producer{c, [&] { B << 2; }};
            run_in(c, [&] {
                // B completes (now or later) and A fails in its body: B's
                // body must still run, before the exception leaves.
                CHECK_THROWS_AS(
                    waituntil(on(A.remove_into(x), [] { throw std::runtime_error("body"); }) &
                              on(B.remove_into(y), [&] { b_ran = true; }) &
                              on(troupe::timeout(std::chrono::hours(1)))),
                    std::runtime_error);
                // Either B's value arrived and its body ran, or B's clause was
                // withdrawn and the producer is still waiting for a partner.
                if (!b_ran) CHECK(B.remove() == 2);
            });
            producer.join();
            CHECK(x == 1);
            if (b_ran) CHECK(y == 2);
            CHECK(A.empty());
        }
    });
}

TEST_CASE("run-time-length clause over channels: the ready one's index reaches the body") {
    on_processors(
        [](troupe::cluster& c) {
            troupe_test::leak_check no_leaks;
            constexpr int n = 12;  // more than the in-place slots
            std::vector<channel<int>> chans(n);
            const int per = troupe_test::scaled(300, 4);
            troupe::thread producer{c, [&] {
                                        for (int i = 0; i < per; ++i)
                                            for (int k = 0; k < n; ++k)
                                                chans[(k * 5 + i) % n] << (k * 5 + i) % n;
                                    }};
            int v = -1, mismatches = 0, received = 0;
            run_in(c, [&] {
                for (int i = 0; i < per * n; ++i) {
                    auto r = waituntil(troupe::on_any(
                        chans, [&](channel<int>& ch) { return ch.remove_into(v); },
                        [&](std::size_t idx) { mismatches += v != int(idx), ++received; }));
                    CHECK(r.index() == 0);
                }
            });
            producer.join();
            CHECK(received == per * n);
            CHECK(mismatches == 0);
        },
        {1, 2});
}

// ------------------------------------------ report_close: no try/catch needed

namespace {
// Two producers: `per` values each into a (0..per-1) and b (per..2per-1),
// then each closes its channel.
std::vector<troupe::thread> fill_and_close(troupe::cluster& c, channel<int>& a, channel<int>& b,
                                           int per) {
    std::vector<troupe::thread> producers;
    producers.emplace_back(c, [&a, per] {
        for (int i = 0; i < per; ++i) a << i;
        a.close();
    });
    producers.emplace_back(c, [&b, per] {
        for (int i = 0; i < per; ++i) b << per + i;
        b.close();
    });
    return producers;
}
}  // namespace

TEST_CASE("report_close: a select loop over channels that close needs no try/catch (Go's v, ok)") {
    on_processors([](troupe::cluster& c) {
        troupe_test::leak_check no_leaks;
        const int per = troupe_test::scaled(2'000, 4);
        channel<int> a{4, "a"}, b{0, "b"};
        std::vector<troupe::thread> producers = fill_and_close(c, a, b, per);
        std::vector<int> seen(2 * per, 0);
        int closes = 0;
        run_in(c, [&] {
            bool a_open = true, b_open = true;
            int v = -1;
            while (a_open || b_open) {
                waituntil(
                    troupe::when(a_open, on(a.remove_into(v, troupe::report_close),
                                            [&](troupe::channel_status s) {
                                                if (s == troupe::channel_status::closed) {
                                                    a_open = false;
                                                    ++closes;
                                                } else {
                                                    ++seen[v];
                                                }
                                            })) |
                    troupe::when(b_open, on(b.remove_into(v, troupe::report_close), [&](auto s) {
                                     if (s == troupe::channel_status::closed) {
                                         b_open = false;
                                         ++closes;
                                     } else {
                                         ++seen[v];
                                     }
                                 })));
            }
        });
        for (auto& t : producers) t.join();
        CHECK(closes == 2);
        for (int x : seen) CHECK(x == 1);  // drain policy: every buffered element first
    });
}

TEST_CASE("the `ok` clause: Go's `case v, ok := <-ch` in one line, its bool also the guard") {
    on_processors([](troupe::cluster& c) {
        troupe_test::leak_check no_leaks;
        const int per = troupe_test::scaled(2'000, 4);
        channel<int> a{4, "a"}, b{0, "b"}, out{0, "out"};
        std::vector<troupe::thread> producers = fill_and_close(c, a, b, per);
        std::vector<int> seen(2 * per, 0);
        int closes = 0;
        run_in(c, [&] {
            bool a_ok = true, b_ok = true;
            int v = -1;
            while (a_ok || b_ok)
                waituntil(troupe::when(a_ok, on(a.remove_into(v, a_ok),
                                                [&] { a_ok ? ++seen[v] : ++closes; })) |
                          troupe::when(b_ok, on(b.remove_into(v, b_ok),
                                                [&] { b_ok ? ++seen[v] : ++closes; })));
        });
        for (auto& t : producers) t.join();
        CHECK(closes == 2);
        for (int x : seen) CHECK(x == 1);
        // The insert side: `ok` turns false after close, the element stays.
        out.close();
        run_in(c, [&] {
            int x = 42;
            bool ok = true;
            waituntil(on(out.insert_from(x, ok)));
            CHECK_FALSE(ok);
            CHECK(x == 42);
        });
    });
}

TEST_CASE(
    "report_close in and-mode: one channel closed, the other ready: both bodies run, with "
    "their outcome") {
    on_processors([](troupe::cluster& c) {
        troupe_test::leak_check no_leaks;
        run_in(c, [&] {
            channel<int> a{1, "a"}, b{1, "b"};
            a.close();
            b.insert(3);
            int x = -1, y = -1;
            troupe::channel_status sa = troupe::channel_status::empty, sb = sa;
            const auto r =
                waituntil(on(a.remove_into(x, troupe::report_close), [&](auto s) { sa = s; }) &
                          on(b.remove_into(y, troupe::report_close), [&](auto s) { sb = s; }));
            CHECK(r.count() == 2);
            CHECK(sa == troupe::channel_status::closed);
            CHECK(x == -1);
            CHECK(sb == troupe::channel_status::success);
            CHECK(y == 3);
            // Closed while the statement waits: the waiting clause reports it.
            channel<int> d{0, "d"}, e{0, "e"};
            troupe::thread closer{c, [&] {
                                      wait_until([&] { return d.waiting_consumers() == 1; });
                                      d.close();
                                      e.insert(4);
                                  }};
            troupe::channel_status sd = troupe::channel_status::empty;
            int z = -1;
            waituntil(on(d.remove_into(x, troupe::report_close), [&](auto s) { sd = s; }) &
                      on(e.remove_into(z)));
            closer.join();
            CHECK(sd == troupe::channel_status::closed);
            CHECK(z == 4);
        });
    });
}

TEST_CASE(
    "report_close on insert: the element stays in its variable; stop_on_close leaves the "
    "buffer") {
    on_processors([](troupe::cluster& c) {
        troupe_test::leak_check no_leaks;
        run_in(c, [&] {
            channel<std::string> ch{2, "s"};
            ch.insert("kept");
            ch.close();
            std::string out = "mine";
            troupe::channel_status s = troupe::channel_status::empty;
            waituntil(on(ch.insert_from(out, troupe::report_close), [&](auto st) { s = st; }));
            CHECK(s == troupe::channel_status::closed);
            CHECK(out == "mine");
            std::string in;
            waituntil(on(ch.remove_into(in, troupe::report_close, troupe::stop_on_close),
                         [&](auto st) { s = st; }));
            CHECK(s == troupe::channel_status::closed);
            CHECK(in.empty());
            CHECK(ch.size() == 1);  // stop at once: the buffered element stays
            waituntil(on(ch.remove_into(in, troupe::report_close), [&](auto st) { s = st; }));
            CHECK(s == troupe::channel_status::success);  // drain: it comes out
            CHECK(in == "kept");
        });
    });
}

TEST_CASE("report_close over a run-time-length clause: the body gets the index and the outcome") {
    on_processors([](troupe::cluster& c) {
        troupe_test::leak_check no_leaks;
        run_in(c, [&] {
            std::vector<std::unique_ptr<channel<int>>> chans;
            for (int i = 0; i < 3; ++i) chans.push_back(std::make_unique<channel<int>>(1, "r"));
            chans[2]->close();
            int v = -1;
            std::size_t index = 99;
            troupe::channel_status s = troupe::channel_status::empty;
            waituntil(troupe::on_any(
                chans, [&](auto& p) { return p->remove_into(v, troupe::report_close); },
                [&](std::size_t i, troupe::channel_status st) {
                    index = i;
                    s = st;
                }));
            CHECK(index == 2);
            CHECK(s == troupe::channel_status::closed);
        });
    });
}
