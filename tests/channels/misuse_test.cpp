// Destroying a channel that threads still block on (a deadlock): reported
// in checked builds, and the blocked threads are released either way, with
// channel_destroyed (never mistaken for a close).
// Statistics builds: per-channel counters, aggregated into one report at
// exit unless asked per channel.
#include <unistd.h>
#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "fixture.hpp"
#include "troupe/channel.hpp"
#include "troupe/thread.hpp"

using troupe::channel;
using troupe_test::misuse_recorder;
using troupe_test::on_processors;

namespace {
using troupe_test::wait_until;
bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}
}  // namespace

TEST_CASE("destroying a channel with blocked producers reports a deadlock and releases them") {
    on_processors([](troupe::cluster& c) {
        misuse_recorder rec;
        auto ch = std::make_unique<channel<int>>(1, "doomed");
        ch->insert(0);  // full
        std::vector<int> back(2, -1);
        std::vector<troupe::thread> ts;
        for (int i = 0; i < 2; ++i)
            ts.emplace_back(c, [&, i, raw = ch.get()] {
                int v = 10 + i;
                try {
                    raw->insert(std::move(v));
                } catch (troupe::channel_destroyed& e) {
                    CHECK(e.name() == "doomed");  // touches only the exception
                    CHECK(e.operation() == troupe::channel_operation::insert);
                    back[i] = v;  // not moved: still ours
                }
            });
        wait_until([&] { return ch->waiting_producers() == 2; });
        ch.reset();
        for (auto& t : ts) t.join();
        CHECK(back[0] == 10);
        CHECK(back[1] == 11);
        if constexpr (troupe::checked_build) {
            REQUIRE(rec.messages().size() == 1);
            const std::string m = rec.last();
            CHECK(contains(m, "channel 'doomed'"));
            CHECK(contains(m, "deadlock"));
            CHECK(contains(m, "2 producer(s), 0 consumer(s)"));
        } else {
            CHECK(rec.messages().empty());  // release builds do not check
        }
    });
}

TEST_CASE("destroying a channel with blocked consumers (user and OS threads) reports them") {
    troupe::cluster c{2};
    misuse_recorder rec;
    auto ch = std::make_unique<channel<int>>(0, "abandoned");
    std::atomic<int> released{0};
    auto consume = [&, raw = ch.get()] {
        try {
            (void)raw->remove();
        } catch (troupe::channel_destroyed&) {
            ++released;
        }
    };
    troupe::thread a{c, consume}, b{c, consume};
    std::thread os{consume};
    wait_until([&] { return ch->waiting_consumers() == 3; });
    ch.reset();
    a.join();
    b.join();
    os.join();
    CHECK(released == 3);
    if constexpr (troupe::checked_build) {
        REQUIRE(rec.messages().size() == 1);
        CHECK(contains(rec.last(), "channel 'abandoned'"));
        CHECK(contains(rec.last(), "0 producer(s), 3 consumer(s)"));
    }
}

TEST_CASE("a consumer's loop on a channel destroyed under it can tell (every build)") {
    // Members declared in the wrong order: the channel dies while its
    // consumer waits. Before, the range-for ended as if the channel had
    // been closed. (Select clauses: tests/waituntil/seams_test.cpp.)
    troupe::cluster c{2};
    misuse_recorder rec;
    auto ch = std::make_unique<channel<int>>(0, "inbox");
    std::atomic<int> destroyed{0}, ended_quietly{0};
    troupe::thread loop{c, [&, raw = ch.get()] {
                            try {
                                for (int v : *raw) (void)v;
                                ++ended_quietly;
                            } catch (const troupe::channel_destroyed& e) {
                                if (e.name() == "inbox") ++destroyed;
                            }
                        }};
    std::thread os{[&, raw = ch.get()] {
        try {
            for (int v : *raw) (void)v;
            ++ended_quietly;
        } catch (const troupe::channel_destroyed& e) {
            if (e.operation() == troupe::channel_operation::remove) ++destroyed;
        }
    }};
    wait_until([&] { return ch->waiting_consumers() == 2; });
    ch.reset();
    loop.join();
    os.join();
    CHECK(destroyed == 2);
    CHECK(ended_quietly == 0);
    if constexpr (troupe::checked_build) CHECK(rec.messages().size() == 1);
}

TEST_CASE("channel_closed names the channel (name()), also after the channel is gone") {
    std::string name_seen;
    {
        channel<int> ch{1, "results"};
        ch.close();
        try {
            (void)ch.remove();
        } catch (const troupe::channel_closed& e) {
            name_seen = std::string{e.name()};
            CHECK(contains(e.what(), "remove from closed channel 'results'"));
        }
    }
    CHECK(name_seen == "results");
    channel<int> anonymous{1};
    anonymous.close();
    try {
        anonymous.insert(1);
    } catch (const troupe::channel_closed& e) {
        CHECK(e.name().empty());
        CHECK(e.is_insert());
    }
}

TEST_CASE("an idle channel, or one with only buffered elements, is destroyed silently") {
    misuse_recorder rec;
    {
        channel<std::string> ch{4, "quiet"};
        ch << std::string("left behind");  // destroyed with the channel
    }
    {
        // A select clause that lost its statement leaves a stale node only
        // until unregistered; a queued-then-unregistered one is not a waiter.
        channel<int> ch{0};
        std::atomic<std::uintptr_t> st{0};
        int v = 0;
        auto clause = ch.remove_into(v);
        troupe::select_node n{troupe::this_context(), st};
        CHECK_FALSE(clause.register_select(n));
        CHECK_FALSE(clause.unregister_select(n));
    }
    CHECK(rec.messages().empty());
}

#if defined(TROUPE_STATISTICS)
namespace {
// Runs `f` with stderr captured; returns what it printed.
template <class F>
std::string captured_stderr(F f) {
    std::FILE* tmp = std::tmpfile();
    REQUIRE(tmp);
    std::fflush(stderr);
    const int saved = dup(fileno(stderr));
    dup2(fileno(tmp), fileno(stderr));
    f();
    std::fflush(stderr);
    dup2(saved, fileno(stderr));
    close(saved);
    std::rewind(tmp);
    std::string out;
    char buf[512];
    while (std::fgets(buf, sizeof buf, tmp)) out += buf;
    std::fclose(tmp);
    return out;
}

void three_transfers(troupe::cluster& c, const char* name) {
    channel<int> ch{1, name};
    troupe::thread consumer{c, [&] {
                                for (int i = 0; i < 3; ++i) (void)ch.remove();
                            }};
    for (int i = 0; i < 3; ++i) ch.insert(i);
    consumer.join();
    const auto mine = ch.statistics();
    CHECK(mine.channels == 1);
    CHECK(mine.inserts == 3);
    CHECK(mine.removes == 3);
}
}  // namespace

TEST_CASE("statistics builds aggregate channels into one report unless asked per channel") {
    troupe::cluster c{2};
    const auto before = troupe::channel_statistics_totals();
    // Default: nothing per channel; the totals grow (printed once at exit).
    const std::string quiet = captured_stderr([&] { three_transfers(c, "aggregated"); });
    INFO(quiet);
    CHECK_FALSE(contains(quiet, "aggregated"));
    const auto after = troupe::channel_statistics_totals();
    CHECK(after.channels == before.channels + 1);
    CHECK(after.inserts == before.inserts + 3);
    CHECK(after.removes == before.removes + 3);
    // Asked per channel: one line at its destruction.
    troupe::set_channel_statistics_report(troupe::channel_statistics_report::per_channel);
    const std::string loud = captured_stderr([&] { three_transfers(c, "counted"); });
    troupe::set_channel_statistics_report(troupe::channel_statistics_report::totals_at_exit);
    INFO(loud);
    CHECK(contains(loud, "channel 'counted'"));
    CHECK(contains(loud, "inserts 3"));
    CHECK(contains(loud, "removes 3"));
}
#else
TEST_CASE("without statistics, channel statistics are all zeros") {
    channel<int> ch{1, "plain"};
    ch.insert(1);
    CHECK(ch.statistics().inserts == 0);
    CHECK(troupe::channel_statistics_totals().channels == 0);
}
#endif
