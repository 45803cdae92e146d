// The channel's select_node protocol, driven by hand as waituntil will:
// exclusive (pure-or) and general (and/or) modes, the two-sided PENDING
// handshake, FIFO order for buffered channels, and close.
#include <atomic>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "fixture.hpp"
#include "select_protocol.hpp"
#include "troupe/channel.hpp"
#include "troupe/thread.hpp"

using troupe::channel;
using troupe_test::on_processors;
using troupe_test::run_in;
using troupe_test::select_either;
using troupe_test::status_word;
using troupe_test::won_by;

constexpr int rounds = troupe_test::scaled(3'000, 6);

namespace {
constexpr auto unsat = std::uintptr_t(troupe::select_status::unsat);
constexpr auto sat = std::uintptr_t(troupe::select_status::sat);
constexpr auto run = std::uintptr_t(troupe::select_status::run);

using troupe_test::wait_until;

// A general-mode (and) wait over two clauses: both must complete.
// Returns how many completed at registration.
template <class A, class B>
int select_both(A&& a, B&& b) {
    status_word sa{0}, sb{0};
    std::atomic<int> counter{0};
    troupe::select_node na{troupe::this_context(), sa, counter};
    troupe::select_node nb{troupe::this_context(), sb, counter};
    int immediate = int(a.register_select(na)) + int(b.register_select(nb));
    int decrements = 0;
    auto ready = [&] { return sa.load() >= sat && sb.load() >= sat; };
    while (!ready()) {
        ++decrements;
        if (counter.fetch_sub(1) - 1 < 0) troupe::park();
    }
    // Each partner-completed clause owes one increment (its wake); wait for
    // them before the nodes leave scope (a waituntil must do the same).
    const int owed = 2 - immediate;
    while (counter.load() != owed - decrements) troupe::detail::cpu_relax();
    CHECK(a.on_selected(na));
    sa = run;
    CHECK(b.on_selected(nb));
    sb = run;
    CHECK_FALSE(a.unregister_select(na));
    CHECK_FALSE(b.unregister_select(nb));
    return immediate;
}
}  // namespace

TEST_CASE("remove clause: ready channel wins at once; empty channel queues and unregisters") {
    channel<int> ch{2};
    ch << 5;
    int v = 0;
    {
        auto clause = ch.remove_into(v);
        status_word st{0};
        troupe::select_node n{troupe::this_context(), st};
        CHECK(clause.register_select(n));
        CHECK(st.load() == won_by(n));
        CHECK(clause.on_selected(n));
        CHECK(v == 5);
        CHECK_FALSE(clause.unregister_select(n));
    }
    {
        auto clause = ch.remove_into(v);
        status_word st{0};
        troupe::select_node n{troupe::this_context(), st};
        CHECK_FALSE(clause.register_select(n));
        CHECK(ch.waiting_consumers() == 1);
        CHECK(st.load() == unsat);
        CHECK_FALSE(clause.unregister_select(n));
        CHECK(ch.waiting_consumers() == 0);
    }
    // A clause whose statement was already won elsewhere takes nothing.
    {
        ch << 6;
        status_word st{0};
        troupe::select_node other{troupe::this_context(), st};
        st = won_by(other);
        auto clause = ch.remove_into(v);
        troupe::select_node n{troupe::this_context(), st};
        CHECK_FALSE(clause.register_select(n));
        CHECK(ch.size() == 1);
        CHECK(ch.waiting_consumers() == 0);  // not queued either
        CHECK_FALSE(clause.unregister_select(n));
        CHECK(ch.remove() == 6);
    }
}

TEST_CASE("insert clause: waiting consumer or room wins at once; a full channel queues") {
    on_processors([](troupe::cluster& c) {
        channel<int> ch{0};
        int got = 0;
        troupe::thread consumer{c, [&] { got = ch.remove(); }};
        wait_until([&] { return ch.waiting_consumers() == 1; });
        int v = 11;
        CHECK(select_either(ch.insert_from(v), ch.insert_from(99)) == 0);
        consumer.join();
        CHECK(got == 11);

        channel<std::unique_ptr<int>> full{1};
        full << std::make_unique<int>(1);
        auto p = std::make_unique<int>(2);
        auto clause = full.insert_from(p);
        status_word st{0};
        troupe::select_node n{troupe::this_context(), st};
        CHECK_FALSE(clause.register_select(n));
        CHECK(full.waiting_producers() == 1);
        CHECK_FALSE(clause.unregister_select(n));
        REQUIRE(p != nullptr);  // not moved: the clause never completed
        CHECK(*p == 2);
    });
}

TEST_CASE("exclusive or over two channels: exactly one value is taken, the other stays") {
    on_processors([](troupe::cluster& c) {
        int wins[2] = {0, 0};
        for (int i = 0; i < rounds; ++i) {
            channel<int> a{0}, b{0};
            int x = -1, y = -1, w = -1;
            troupe::thread selector{c,
                                    [&] { w = select_either(a.remove_into(x), b.remove_into(y)); }};
            std::atomic<int> delivered{0};
            // Both producers race for the one selector; the loser's value
            // must stay with its producer (capacity 0: it keeps waiting).
            troupe::thread pa{c, [&] {
                                  try {
                                      a.insert(1);
                                      ++delivered;
                                  } catch (troupe::channel_closed_with<int>& e) {
                                      CHECK(e.value() == 1);
                                  }
                              }};
            troupe::thread pb{c, [&] {
                                  try {
                                      b.insert(2);
                                      ++delivered;
                                  } catch (troupe::channel_closed_with<int>& e) {
                                      CHECK(e.value() == 2);
                                  }
                              }};
            selector.join();
            REQUIRE((w == 0 || w == 1));
            ++wins[w];
            if (w == 0) {
                CHECK(x == 1);
                CHECK(y == -1);
            } else {
                CHECK(y == 2);
                CHECK(x == -1);
            }
            a.close();
            b.close();
            pa.join();
            pb.join();
            CHECK(delivered == 1);
        }
        CHECK(wins[0] + wins[1] == rounds);
    });
}

TEST_CASE("general mode: both clauses complete, partners wake through the park counter") {
    on_processors([](troupe::cluster& c) {
        for (int i = 0; i < rounds; ++i) {
            channel<int> a{std::size_t(i % 2)}, b{0};
            int x = 0, y = 0;
            const bool early = i % 3 == 0 && a.capacity() > 0;
            if (early) a << 7;  // completes at registration
            troupe::thread pa{c, [&] {
                                  if (!early) a.insert(7);
                              }};
            troupe::thread pb{c, [&] { b.insert(8); }};
            run_in(c, [&] { select_both(a.remove_into(x), b.remove_into(y)); });
            pa.join();
            pb.join();
            CHECK(x == 7);
            CHECK(y == 8);
        }
    });
}

TEST_CASE("general mode: a clause completed but not yet run is reported by unregister") {
    channel<int> ch{0};
    int v = 0;
    auto clause = ch.remove_into(v);
    status_word st{0};
    std::atomic<int> counter{0};
    troupe::select_node n{troupe::this_context(), st, counter};
    CHECK_FALSE(clause.register_select(n));
    std::thread producer{[&] { ch.insert(3); }};
    wait_until([&] { return st.load() == sat && ch.waiting_consumers() == 0; });
    producer.join();
    wait_until([&] { return counter.load() == 1; });  // its wake (no park was pending)
    // The statement ends without running the clause: cleanup must run it.
    CHECK(clause.unregister_select(n));
    CHECK(clause.on_selected(n));
    CHECK(v == 3);
}

TEST_CASE("a selector never meets itself on a zero-size channel") {
    on_processors([](troupe::cluster& c) {
        channel<int> ch{0};
        int out = -1, w = -1;
        int in = 4;
        troupe::thread selector{
            c, [&] { w = select_either(ch.insert_from(in), ch.remove_into(out)); }};
        wait_until([&] { return ch.waiting_producers() == 1 && ch.waiting_consumers() == 1; });
        CHECK(ch.remove() == 4);  // a real partner completes the insert clause
        selector.join();
        CHECK(w == 0);
        CHECK(out == -1);
        CHECK(ch.waiting_producers() + ch.waiting_consumers() == 0);
    });
}

TEST_CASE("buffered channel keeps FIFO when a selector meets a blocked select producer") {
    channel<int> ch{2};
    ch << 1;
    ch << 2;
    // A select producer blocks on the full channel...
    int three = 3;
    auto ins = ch.insert_from(three);
    status_word ps{0};
    troupe::select_node pn{troupe::this_context(), ps};
    CHECK_FALSE(ins.register_select(pn));
    // ... and a select consumer takes the buffer front, not the producer's
    // element, which moves into the buffer's tail.
    int v = 0;
    auto rem = ch.remove_into(v);
    status_word cs{0};
    troupe::select_node cn{troupe::this_context(), cs};
    CHECK(rem.register_select(cn));
    CHECK(rem.on_selected(cn));
    CHECK(v == 1);
    CHECK(ps.load() == won_by(pn));  // the producer's clause completed
    troupe::park();                  // and it woke us (same context here)
    CHECK(ins.on_selected(pn));
    CHECK_FALSE(ins.unregister_select(pn));
    CHECK_FALSE(rem.unregister_select(cn));
    CHECK(ch.remove() == 2);
    CHECK(ch.remove() == 3);
}

TEST_CASE("two selectors on opposite ends of two zero-size channels resolve (PENDING handshake)") {
    // A: ch1 <- a | x <- ch2      B: ch2 <- b | y <- ch1
    // Each must finish through exactly one clause, paired with the other's.
    // Two long-lived threads meet at a barrier before every round, so they
    // register at about the same moment and often find each other
    // mid-handshake (the symmetric case that needs the step-back rule).
    on_processors([](troupe::cluster& c) {
        struct round_state {
            channel<int> ch1{0}, ch2{0};
            int x = -1, y = -1, wa = -1, wb = -1;
            std::atomic<int> arrived{0};
        };
        std::vector<std::unique_ptr<round_state>> rs;
        for (int i = 0; i < rounds; ++i) rs.push_back(std::make_unique<round_state>());
        auto meet = [](round_state& r) {
            r.arrived.fetch_add(1);
            while (r.arrived.load() < 2) troupe::this_thread::yield();
        };
        troupe::thread ta{c, [&] {
                              for (auto& r : rs) {
                                  meet(*r);
                                  int a = 10;
                                  r->wa = select_either(r->ch1.insert_from(a),
                                                        r->ch2.remove_into(r->x));
                              }
                          }};
        troupe::thread tb{c, [&] {
                              for (auto& r : rs) {
                                  meet(*r);
                                  int b = 20;
                                  r->wb = select_either(r->ch2.insert_from(b),
                                                        r->ch1.remove_into(r->y));
                              }
                          }};
        ta.join();
        tb.join();
        int paired1 = 0, paired2 = 0, wrong = 0;
        for (auto& r : rs) {
            if (r->wa == 0 && r->wb == 1 && r->y == 10 && r->x == -1) {
                ++paired1;  // A's insert met B's remove on ch1
            } else if (r->wa == 1 && r->wb == 0 && r->x == 20 && r->y == -1) {
                ++paired2;  // B's insert met A's remove on ch2
            } else {
                ++wrong;
            }
            wrong += r->ch1.waiting_producers() + r->ch1.waiting_consumers() +
                         r->ch2.waiting_producers() + r->ch2.waiting_consumers() !=
                     0;
        }
        CHECK(wrong == 0);
        CHECK(paired1 + paired2 == rounds);
    });
}

TEST_CASE("close wakes select clauses: on_selected throws, or skips while unwinding") {
    on_processors([](troupe::cluster& c) {
        channel<int> ch{0, "sel"};
        int v = 0;
        bool threw = false;
        troupe::thread selector{c, [&] {
                                    try {
                                        select_either(ch.remove_into(v), ch.remove_discard());
                                    } catch (troupe::channel_closed& e) {
                                        threw = e.is_remove();
                                    }
                                }};
        wait_until([&] { return ch.waiting_consumers() == 2; });
        ch.close();
        selector.join();
        CHECK(threw);
        CHECK(ch.waiting_consumers() == 0);

        // Insert clause: the element comes back in the exception.
        channel<std::unique_ptr<int>> full{0};
        std::unique_ptr<int> back;
        troupe::thread producer{c, [&] {
                                    try {
                                        select_either(full.insert_from(std::make_unique<int>(5)),
                                                      full.insert_from(std::make_unique<int>(6)));
                                    } catch (troupe::channel_closed_with<std::unique_ptr<int>>& e) {
                                        back = std::move(e.value());
                                    }
                                }};
        wait_until([&] { return full.waiting_producers() == 2; });
        full.close();
        producer.join();
        REQUIRE(back != nullptr);
        CHECK((*back == 5 || *back == 6));
    });
    // Registering on a closed channel: a drained remove clause wins as
    // closed; buffered elements are still taken (drain policy) unless the
    // clause asked to stop on close.
    channel<int> ch{2};
    ch << 1;
    ch.close();
    int v = 0;
    {
        auto stop = ch.remove_into(v, troupe::stop_on_close);
        status_word st{0};
        troupe::select_node n{troupe::this_context(), st};
        CHECK(stop.register_select(n));
        CHECK_THROWS_AS(stop.on_selected(n), troupe::channel_closed);
        stop.unregister_select(n);
    }
    {
        auto drain = ch.remove_into(v);
        status_word st{0};
        troupe::select_node n{troupe::this_context(), st};
        CHECK(drain.register_select(n));
        CHECK(drain.on_selected(n));
        CHECK(v == 1);
        drain.unregister_select(n);
    }
    {
        auto drained = ch.remove_into(v);
        status_word st{0};
        troupe::select_node n{troupe::this_context(), st};
        CHECK(drained.register_select(n));
        // While an exception unwinds, a closed clause skips its body instead.
        struct probe {
            decltype(drained)& cl;
            troupe::select_node& n;
            bool* result;
            ~probe() { *result = cl.on_selected(n); }
        };
        bool result = true;
        try {
            probe p{drained, n, &result};
            throw std::runtime_error("unwinding");
        } catch (std::runtime_error&) {}
        CHECK_FALSE(result);
        drained.unregister_select(n);
    }
}

TEST_CASE("selectors and plain threads on both ends: every value exactly once") {
    on_processors([](troupe::cluster& c) {
        for (std::size_t cap : {0u, 3u}) {
            CAPTURE(cap);
            channel<int> a{cap}, b{cap};
            constexpr int selectors = 3, producers = 3;
            const int per = rounds / 3;
            const int total = producers * per * 2;
            std::vector<std::atomic<int>> seen(total);
            std::atomic<int> received{0};
            std::vector<troupe::thread> ts;
            for (int k = 0; k < selectors; ++k)
                ts.emplace_back(c, [&] {
                    for (;;) {
                        int x = -1, y = -1;
                        try {
                            const int w = select_either(a.remove_into(x), b.remove_into(y));
                            const int v = w == 0 ? x : y;
                            seen[v].fetch_add(1);
                        } catch (troupe::channel_closed&) {
                            return;
                        }
                        if (++received == total) {
                            a.close();
                            b.close();
                        }
                    }
                });
            // Producers: half plain inserts, half exclusive insert selections.
            for (int k = 0; k < producers; ++k)
                ts.emplace_back(c, [&, k] {
                    for (int i = 0; i < per; ++i) {
                        int v1 = (k * per + i) * 2, v2 = v1 + 1;
                        if (k % 2) {
                            a.insert(v1);
                            b.insert(v2);
                        } else {
                            // One through an or-selection, the other plainly.
                            int u1 = v1, u2 = v2;
                            if (select_either(a.insert_from(u1), b.insert_from(u2)) == 0)
                                b.insert(v2);
                            else a.insert(v1);
                        }
                    }
                });
            for (auto& t : ts) t.join();
            int wrong = 0;
            for (auto& s : seen) wrong += s.load() != 1;
            CHECK(wrong == 0);
            CHECK(received == total);
        }
    });
}
