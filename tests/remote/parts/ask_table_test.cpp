// The ask table without MPI: ids, stale replies, cancellation, and a
// bounded stress in which OS threads race the ways an ask can end (its
// reply, its rank ending, its frame not shipped, its request destroyed)
// and every ask must end exactly once, with no write into a request after
// its destructor's abandon() returned (TSan and a poisoned field check it).
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "ask_table.hpp"
#include "leak_check.hpp"
#include "scale.hpp"
#include "troupe/detail/timer.hpp"
#include "troupe/future.hpp"

namespace rd = troupe::remote::detail;
using troupe::remote::byte_reader;

namespace {

struct test_request : troupe::detail::request_tag {
    int value = 0;             // written by the completer (plain: TSan checks the order)
    std::atomic<int> ends{0};  // times this ask ended
    std::atomic<bool> answered{false};
};

void complete(troupe::detail::request_tag& q, rd::frame_kind, byte_reader&, int) {
    auto& r = static_cast<test_request&>(q);
    r.value = 42;
    r.ends.fetch_add(1, std::memory_order_relaxed);
    r.answered.store(true, std::memory_order_release);
}

// Takes ask `id` as a reply would, completing it if it is live; returns
// whether a slot matched.
bool reply(rd::ask_table& t, std::uint64_t id) {
    rd::ask_table::completion c = t.take(id);
    if (c.q) {
        byte_reader none{nullptr, 0};
        c.fn(*c.q, rd::frame_kind::reply_value, none, 1);
    }
    return c.found;
}

}  // namespace

TEST_CASE("ask table: a reply completes its ask once; stale ids find nothing") {
    troupe_test::leak_check no_leaks;
    std::atomic<int> awaited{0};
    {
        rd::ask_table t{awaited};
        test_request q1, q2;
        const std::uint64_t id1 = t.add(q1, &complete, 1, "test.one");
        CHECK(awaited == 1);
        CHECK(t.pending(id1));
        CHECK(reply(t, id1));
        CHECK(q1.ends == 1);
        CHECK(q1.value == 42);
        CHECK(awaited == 0);
        CHECK_FALSE(t.pending(id1));
        CHECK_FALSE(reply(t, id1));  // a second reply to the same ask
        // The slot is reused with a new generation: the old id stays stale.
        const std::uint64_t id2 = t.add(q2, &complete, 1, "test.two");
        CHECK((id2 & 0xffffffffu) == (id1 & 0xffffffffu));
        CHECK(id2 != id1);
        CHECK_FALSE(reply(t, id1));
        CHECK(q2.ends == 0);
        CHECK_FALSE(reply(t, 0));            // an id no ask ever had
        CHECK_FALSE(reply(t, 0xffffffffu));  // an index past the table
        CHECK(t.cancel(id2));
        CHECK_FALSE(t.cancel(id2));
        CHECK(awaited == 0);
        std::size_t live = 9, abandoned = 9;
        t.count(live, abandoned);
        CHECK(live == 0);
        CHECK(abandoned == 0);
    }
}

TEST_CASE("ask table: an abandoned ask is uncounted, and its late reply frees the slot") {
    troupe_test::leak_check no_leaks;
    std::atomic<int> awaited{0};
    rd::ask_table t{awaited};
    test_request q;
    const std::uint64_t id = t.add(q, &complete, 2, "test.late");
    CHECK(t.abandon(q, id));
    CHECK(awaited == 0);  // a reply that never comes keeps nobody polling
    CHECK_FALSE(t.pending(id));
    std::size_t live = 0, abandoned = 0;
    t.count(live, abandoned);
    CHECK(abandoned == 1);
    CHECK_FALSE(t.abandon(q, id));  // the destructor runs once; a second call changes nothing
    rd::ask_table::completion c = t.take(id);
    CHECK(c.found);
    CHECK(c.q == nullptr);  // dropped quietly
    t.count(live, abandoned);
    CHECK(abandoned == 0);
    CHECK(q.ends == 0);
}

TEST_CASE("ask table: two takers write at once; each request waits for its own write") {
    // A reply (the progress thread) and a rank's end or a deadline (the
    // timer service) can each be writing into a different request at once.
    // The second write ending must not tell the first request's destructor
    // that its write is over: with one table-wide "completing" word it did,
    // and ~request freed q1 under its reply's write (a TSan report in the
    // race below, 1 run in many).
    troupe_test::leak_check no_leaks;
    std::atomic<int> awaited{0};
    rd::ask_table t{awaited};
    test_request q1, q2;
    const std::uint64_t id1 = t.add(q1, &complete, 1, "test.first");
    const std::uint64_t id2 = t.add(q2, &complete, 2, "test.second");
    rd::ask_table::completion c1 = t.take(id1);
    REQUIRE(c1.q == &q1);
    CHECK(rd::ask_table::writing(q1));
    {
        rd::ask_table::completion c2 = t.take_to(2);
        REQUIRE(c2.q == &q2);
        CHECK(rd::ask_table::writing(q2));
    }  // the second write ends first
    CHECK_FALSE(rd::ask_table::writing(q2));
    CHECK(rd::ask_table::writing(q1));  // what abandon(q1) waits on
    c1.done();
    CHECK_FALSE(rd::ask_table::writing(q1));
    CHECK_FALSE(t.abandon(q1, id1));  // taken: nothing to abandon, nothing to wait for
    CHECK_FALSE(t.abandon(q2, id2));
    CHECK(awaited == 0);
}

TEST_CASE("ask table: a rank's end takes its asks, live and abandoned, and no other") {
    troupe_test::leak_check no_leaks;
    std::atomic<int> awaited{0};
    rd::ask_table t{awaited};
    test_request to1a, to1b, to2;
    const std::uint64_t a = t.add(to1a, &complete, 1, "test.a");
    const std::uint64_t b = t.add(to1b, &complete, 1, "test.b");
    const std::uint64_t c = t.add(to2, &complete, 2, "test.c");
    CHECK(t.abandon(to1b, b));
    int live = 0, dropped = 0;
    for (;;) {
        rd::ask_table::completion k = t.take_to(1);
        if (!k.found) break;
        if (k.q) {
            CHECK(k.q == &to1a);
            CHECK(k.name == "test.a");
            ++live;
        } else {
            ++dropped;
        }
    }
    CHECK(live == 1);
    CHECK(dropped == 1);
    CHECK(awaited == 1);  // the ask of rank 2
    CHECK_FALSE(reply(t, a));
    CHECK(reply(t, c));
    CHECK(to2.ends == 1);
    CHECK(awaited == 0);
}

TEST_CASE("ask table: replies, a rank's end, cancels and destructors race; each ask ends once") {
    troupe_test::leak_check no_leaks;
    constexpr int askers = 3;
    const int per_asker = troupe_test::scaled(3000);
    const int total = askers * per_asker;
    std::atomic<int> awaited{0};
    rd::ask_table t{awaited};
    std::unique_ptr<test_request[]> reqs{new test_request[static_cast<std::size_t>(total)]};
    std::unique_ptr<std::atomic<std::uint64_t>[]> posted {
        new std::atomic<std::uint64_t>[ static_cast<std::size_t>(total) ]
    };
    for (int i = 0; i < total; ++i) posted[i].store(0);
    std::atomic<int> ended_by_owner{0}, askers_done{0};
    std::atomic<int> unanswered{0};  // (no doctest assertion on these threads)
    // Each asker's current ask (index within its range), for the replier.
    std::atomic<int> current[askers] = {};

    auto asker = [&](int who) {
        std::mt19937 rng{static_cast<unsigned>(who + 1)};
        for (int i = 0; i < per_asker; ++i) {
            const int n = who * per_asker + i;
            current[who].store(i, std::memory_order_release);
            test_request& q = reqs[n];
            const int to = 1 + n % 2;  // rank 1's asks also race its end
            const std::uint64_t id = t.add(q, &complete, to, "test.race");
            posted[n].store(id, std::memory_order_release);
            // A random pause (a busy one: a yield on a loaded machine can
            // cost a time slice, and there are 32 on average per ask).
            for (unsigned spin = rng() % 512; spin > 0; --spin)
                std::atomic_signal_fence(std::memory_order_seq_cst);
            switch (rng() % 3) {
            case 0:  // waits for the reply
                while (!q.answered.load(std::memory_order_acquire)) std::this_thread::yield();
                if (q.value != 42) unanswered.fetch_add(1, std::memory_order_relaxed);
                break;
            case 1:  // its frame could not be shipped
                if (t.cancel(id)) q.ends.fetch_add(1, std::memory_order_relaxed);
                break;
            default: break;  // gives up: the destructor below abandons it
            }
            // ~request: abandon; then the request's storage is dead (poisoned).
            if (t.abandon(q, id)) q.ends.fetch_add(1, std::memory_order_relaxed);
            q.value = -1;
            ended_by_owner.fetch_add(1, std::memory_order_relaxed);
        }
        askers_done.fetch_add(1, std::memory_order_release);
    };
    // Replies, round after round until the askers are done: each round
    // answers every asker's current ask and its two before (a second reply
    // to an ask finds nothing; a reply to an abandoned one frees its slot),
    // and a last round after the askers finished answers every posted id
    // (the late replies of asks abandoned unanswered). A round is short, so
    // a waiting asker is answered soon.
    auto reply_to = [&](int n) {
        const std::uint64_t id = posted[n].load(std::memory_order_acquire);
        if (id == 0) return;
        rd::ask_table::completion c = t.take(id);
        if (c.q) {
            byte_reader none{nullptr, 0};
            c.fn(*c.q, rd::frame_kind::reply_value, none, 1);
        }
    };
    auto replier = [&] {
        for (;;) {
            const bool last = askers_done.load(std::memory_order_acquire) == askers;
            if (last) {
                for (int n = 0; n < total; ++n) reply_to(n);
                return;
            }
            for (int w = 0; w < askers; ++w) {
                const int i = current[w].load(std::memory_order_acquire);
                for (int k = std::max(0, i - 2); k <= i; ++k) reply_to(w * per_asker + k);
            }
            std::this_thread::yield();
        }
    };
    // Rank 1 ending, again and again (its goodbye's scan).
    auto goodbye = [&] {
        while (askers_done.load(std::memory_order_acquire) != askers) {
            rd::ask_table::completion c = t.take_to(1);
            if (c.q) {
                byte_reader none{nullptr, 0};
                c.fn(*c.q, rd::frame_kind::reply_error, none, 1);
            } else {
                std::this_thread::yield();
            }
        }
    };
    std::vector<std::thread> threads;
    for (int w = 0; w < askers; ++w) threads.emplace_back(asker, w);
    threads.emplace_back(replier);
    threads.emplace_back(goodbye);
    for (std::thread& th : threads) th.join();

    CHECK(ended_by_owner == total);
    CHECK(unanswered == 0);
    int wrong = 0;
    for (int n = 0; n < total; ++n) {
        if (reqs[n].ends.load() != 1) ++wrong;
        if (reqs[n].value != -1) ++wrong;  // written after its destructor's abandon()
    }
    CHECK(wrong == 0);
    CHECK(awaited == 0);
    std::size_t live = 9, abandoned = 9;
    t.count(live, abandoned);
    CHECK(live == 0);
    CHECK(abandoned == 0);  // every abandoned ask's late reply freed its slot
}

// ---------------------------------------------------------------- deadlines

namespace {

// A request that records how it was answered.
struct timed_request : troupe::detail::request_tag {
    rd::frame_kind kind{};
    rd::error_code code{};
    std::string what;           // written by the completer (plain: TSan checks)
    std::atomic<int> ends{0};   // times it was answered
    troupe::future<void> done;  // fulfilled by its answer
};

void complete_timed(troupe::detail::request_tag& t, rd::frame_kind k, byte_reader& r, int) {
    auto& q = static_cast<timed_request&>(t);
    q.kind = k;
    if (k == rd::frame_kind::reply_error) {
        const rd::reply_error_record e = rd::get_reply_error(r);
        q.code = e.code;
        q.what = e.what;
    }
    q.ends.fetch_add(1, std::memory_order_relaxed);
    q.done.fulfil();
}

bool answer(rd::ask_table& t, std::uint64_t id) {
    rd::ask_table::completion c = t.take(id);
    if (c.q) {
        byte_reader none{nullptr, 0};
        c.fn(*c.q, rd::frame_kind::reply_value, none, 1);
    }
    return c.found;
}

auto soon(int us) { return std::chrono::steady_clock::now() + std::chrono::microseconds(us); }
auto never() { return std::chrono::steady_clock::now() + std::chrono::hours(1); }

}  // namespace

TEST_CASE("ask table: a deadline fails a live ask once; the late reply is dropped and counted") {
    troupe_test::leak_check no_leaks;
    std::atomic<int> awaited{0};
    rd::ask_table t{awaited};
    timed_request q;
    const std::size_t timers = troupe::detail::timer_pending();
    const std::uint64_t id =
        t.add(q, &complete_timed, 1, "test.slow", soon(2000), "the ask of 'test.slow' timed out");
    // (Whether it is still counted here is a race with the deadline: a
    // preemption of 2 ms fails it. The next case checks the count.)
    q.done.get();  // parks until the deadline's callback answered it
    CHECK(q.ends == 1);
    CHECK(q.kind == rd::frame_kind::reply_error);
    CHECK(q.code == rd::error_code::timed_out);
    CHECK(q.what == "the ask of 'test.slow' timed out");
    CHECK(awaited == 0);  // nobody polls for a reply nobody waits for
    CHECK_FALSE(t.pending(id));
    CHECK(t.timed_out() == 1);
    CHECK(t.late_replies() == 0);
    std::size_t live = 9, abandoned = 9;
    t.count(live, abandoned);
    CHECK(live == 0);
    CHECK(abandoned == 1);  // until its reply comes
    // The destructor of a timed-out request abandons nothing and never waits.
    CHECK_FALSE(t.abandon(q, id));
    // The reply, late: the slot is freed, nothing is written, it is counted.
    CHECK(answer(t, id));
    CHECK(q.ends == 1);
    CHECK(t.late_replies() == 1);
    t.count(live, abandoned);
    CHECK(abandoned == 0);
    CHECK(troupe::detail::timer_pending() == timers);  // the record went with the slot
    CHECK_FALSE(answer(t, id));                        // a second reply finds nothing
    CHECK(t.late_replies() == 1);
}

TEST_CASE("ask table: a reply, a rank's end, a cancel or the table's end disarm the deadline") {
    troupe_test::leak_check no_leaks;
    std::atomic<int> awaited{0};
    const std::size_t timers = troupe::detail::timer_pending();
    {
        rd::ask_table t{awaited};
        timed_request replied, lost, unsent, abandoned, never_answered;
        const std::uint64_t a = t.add(replied, &complete_timed, 1, "test.a", never(), "a");
        (void)t.add(lost, &complete_timed, 2, "test.b", never(), "b");
        const std::uint64_t c = t.add(unsent, &complete_timed, 1, "test.c", never(), "c");
        const std::uint64_t d = t.add(abandoned, &complete_timed, 1, "test.d", never(), "d");
        (void)t.add(never_answered, &complete_timed, 1, "test.e", never(), "e");
        CHECK(troupe::detail::timer_pending() == timers + 5);
        CHECK(awaited == 5);  // an ask with a deadline counts as one without
        CHECK(answer(t, a));
        CHECK(replied.kind == rd::frame_kind::reply_value);
        CHECK(troupe::detail::timer_pending() == timers + 4);
        {
            rd::ask_table::completion k = t.take_to(2);
            CHECK(k.q == &lost);
        }
        CHECK(troupe::detail::timer_pending() == timers + 3);
        CHECK(t.cancel(c));
        CHECK(troupe::detail::timer_pending() == timers + 2);
        CHECK(t.abandon(abandoned, d));  // stays armed: it finds nothing when it fires
        CHECK(troupe::detail::timer_pending() == timers + 2);
        CHECK(t.timed_out() == 0);
    }  // the table's end releases the rest
    CHECK(troupe::detail::timer_pending() == timers);
    CHECK(awaited == 1);  // never_answered's: a table ends with its engine
}

TEST_CASE(
    "ask table: replies race deadlines; each ask is answered once, every late reply counted") {
    troupe_test::leak_check no_leaks;
    const int n = troupe_test::scaled(2000);
    std::atomic<int> awaited{0};
    rd::ask_table t{awaited};
    std::unique_ptr<timed_request[]> reqs{new timed_request[static_cast<std::size_t>(n)]};
    std::unique_ptr<std::atomic<std::uint64_t>[]> posted {
        new std::atomic<std::uint64_t>[ static_cast<std::size_t>(n) ]
    };
    for (int i = 0; i < n; ++i) posted[i].store(0);
    std::atomic<int> next_reply{0};
    // The replier answers the asks in order, each as soon as it is posted,
    // after a random pause of about the deadline's size.
    std::thread replier([&] {
        std::mt19937 rng{7};
        for (int i = 0; i < n; ++i) {
            std::uint64_t id;
            while ((id = posted[i].load(std::memory_order_acquire)) == 0) std::this_thread::yield();
            for (unsigned spin = rng() % 4000; spin > 0; --spin)
                std::atomic_signal_fence(std::memory_order_seq_cst);
            (void)answer(t, id);
            next_reply.store(i + 1, std::memory_order_release);
        }
    });
    std::mt19937 rng{3};
    int values = 0, timeouts = 0, twice = 0;
    for (int i = 0; i < n; ++i) {
        timed_request& q = reqs[i];
        const std::uint64_t id =
            t.add(q, &complete_timed, 1, "test.race", soon(static_cast<int>(rng() % 20)), "late");
        posted[i].store(id, std::memory_order_release);
        q.done.get();
        (void)t.abandon(q, id);  // ~request: waits out a write in progress
        if (q.ends.load() != 1) ++twice;
        if (q.kind == rd::frame_kind::reply_value) ++values;
        else if (q.code == rd::error_code::timed_out && q.what == "late") ++timeouts;
    }
    replier.join();
    CHECK(twice == 0);
    CHECK(values + timeouts == n);
    CHECK(t.timed_out() == static_cast<std::uint64_t>(timeouts));
    // Every timed-out ask's reply came later (the replier answers each ask
    // once) and was dropped and counted.
    CHECK(t.late_replies() == static_cast<std::uint64_t>(timeouts));
    CHECK(awaited == 0);
    std::size_t live = 9, abandoned = 9;
    t.count(live, abandoned);
    CHECK(live == 0);
    CHECK(abandoned == 0);
}
