// Request cycles across ranks without MPI: the probe payload's codec (and
// its refusals of bad input), a cycle's text, the book that confirms a
// cycle only when two probes, the second sent after the first came back,
// saw the same waits; and the actors' look at what keeps an actor from
// running (blocked_behaviour_of / _in), which probes follow on each rank.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "cycles.hpp"
#include "troupe/actor_system.hpp"
#include "troupe/detail/blocked_behaviour.hpp"
#include "troupe/future.hpp"
#include "troupe/poison_pill.hpp"
#include "troupe/request.hpp"

namespace rd = troupe::remote::detail;

namespace {

rd::probe_hop hop(int rank, std::uint64_t record, std::uint32_t seq, std::string subject,
                  std::string edge) {
    rd::probe_hop h;
    h.rank = rank;
    h.record = record;
    h.seq = seq;
    h.subject = std::move(subject);
    h.in = "(worker 0, in its receive of 'go')";
    h.edge = std::move(edge);
    return h;
}

rd::probe two_hops(std::uint64_t seq, std::uint64_t base, std::uint32_t wait_b = 7) {
    rd::probe p;
    p.initiator = 0;
    p.key = 1;
    p.seq = seq;
    p.base = base;
    p.hops.push_back(hop(0, 0x1000, 3, "actor 'a' (A) on rank 0",
                         "waits for the reply to its remote ask 'x' to"));
    p.hops.push_back(hop(1, 0x2000, wait_b, "actor 'b' (B) on rank 1",
                         "waits for the reply to its remote ask 'y' to"));
    return p;
}

std::string encode(const rd::probe& p) {
    rd::byte_buffer b;
    troupe::remote::byte_writer w{b};
    rd::put_probe(w, p);
    return std::string(b.data(), b.size());
}

rd::probe decode(const std::string& s) {
    troupe::remote::byte_reader r{s.data(), s.size()};
    return rd::get_probe(r);
}

bool contains(const std::string& s, const std::string& what) {
    return s.find(what) != std::string::npos;
}

}  // namespace

TEST_CASE("cycles: a probe survives its codec, texts clipped to the limit") {
    rd::probe p = two_hops(5, 4);
    p.hops[1].behind = "actor 'c' (C)";
    p.hops[1].edge = std::string(1000, 'e');
    const rd::probe q = decode(encode(p));
    CHECK(q.initiator == 0);
    CHECK(q.key == 1);
    CHECK(q.seq == 5);
    CHECK(q.base == 4);
    REQUIRE(q.hops.size() == 2);
    CHECK(q.hops == p.hops);  // ranks and waits
    CHECK(q.hops[0].subject == p.hops[0].subject);
    CHECK(q.hops[0].in == p.hops[0].in);
    CHECK(q.hops[1].behind == "actor 'c' (C)");
    CHECK(q.hops[1].edge == std::string(rd::max_probe_text, 'e'));
}

TEST_CASE("cycles: a malformed probe is refused, naming what is wrong") {
    const std::string good = encode(two_hops(1, 0));
    // Every truncation, and a byte too many.
    for (std::size_t n = 0; n < good.size(); ++n)
        CHECK_THROWS_AS(decode(good.substr(0, n)), rd::truncated_payload);
    try {
        decode(good + "x");
        FAIL("a probe with a byte too many was accepted");
    } catch (const rd::truncated_payload& e) {
        CHECK(contains(e.what(), "1 byte(s) more"));
    }
    // More hops than the cap.
    rd::probe many = two_hops(1, 0);
    while (many.hops.size() <= rd::max_probe_hops) many.hops.push_back(many.hops[0]);
    try {
        decode(encode(many));
        FAIL("a probe over the hop limit was accepted");
    } catch (const rd::truncated_payload& e) {
        CHECK(contains(e.what(), "17 hops, over the limit of 16"));
    }
    // A text that claims more than the limit (the writer clips; a forged
    // length is refused before anything is allocated for it).
    std::string forged = good;
    const std::size_t first_text = 4 + 8 + 8 + 8 + 4 + 4 + 8 + 4;  // header, then hop 0's ids
    const std::uint32_t huge = 1u << 30;
    std::memcpy(forged.data() + first_text, &huge, sizeof huge);
    try {
        decode(forged);
        FAIL("a probe text over the limit was accepted");
    } catch (const rd::truncated_payload& e) {
        CHECK(contains(e.what(), "over the limit of 256"));
    }
}

TEST_CASE("cycles: the text names every actor, its rank and its wait, back to the first") {
    rd::probe p = two_hops(1, 0);
    p.hops[1].behind = "actor 'c' (C)";
    CHECK(rd::cycle_text(p.hops) ==
          "request cycle across ranks: actor 'a' (A) on rank 0 (worker 0, in its receive of "
          "'go') waits for the reply to its remote ask 'x' to actor 'b' (B) on rank 1, queued "
          "behind the behaviour of actor 'c' (C), which (worker 0, in its receive of 'go') waits "
          "for the reply to its remote ask 'y' to actor 'a' (A) on rank 0");
}

TEST_CASE("cycles: the book confirms a cycle only when a later probe agrees") {
    rd::cycle_book book;
    // First probe: numbered 1, nothing back yet.
    rd::cycle_book::numbers n1 = book.start(1, 0x1000, 3);
    CHECK(n1.seq == 1);
    CHECK(n1.base == 0);
    // A second probe leaves before the first comes back.
    rd::cycle_book::numbers n2 = book.start(1, 0x1000, 3);
    CHECK(n2.base == 0);
    CHECK_FALSE(book.came_back(two_hops(n1.seq, n1.base)));  // the first back: not yet
    // The second left before the first came back: no confirmation.
    CHECK_FALSE(book.came_back(two_hops(n2.seq, n2.base)));
    CHECK(book.cycles().empty());
    // A third leaves after the second came back, but sees another wait on
    // rank 1 (B's wait ended and a new one began): no confirmation.
    rd::cycle_book::numbers n3 = book.start(1, 0x1000, 3);
    CHECK(n3.base == n2.seq);
    CHECK_FALSE(book.came_back(two_hops(n3.seq, n3.base, 9)));
    CHECK(book.cycles().empty());
    // A fourth agrees with the third: confirmed.
    rd::cycle_book::numbers n4 = book.start(1, 0x1000, 3);
    CHECK(n4.base == n3.seq);
    CHECK(book.came_back(two_hops(n4.seq, n4.base, 9)));
    auto c = book.cycles();
    REQUIRE(c.size() == 1);
    CHECK(c[0].key == 1);
    CHECK(c[0].record == 0x1000);
    CHECK(c[0].seq == 3);
    CHECK(contains(c[0].text, "actor 'a' (A) on rank 0"));
    CHECK(contains(c[0].text, "actor 'b' (B) on rank 1"));
    CHECK(book.confirmed() == 1);
    // The initiator's wait changes: its cycle is forgotten, and a probe of
    // its old wait coming back late confirms nothing.
    rd::cycle_book::numbers n5 = book.start(1, 0x1000, 5);
    CHECK(n5.seq == 1);
    CHECK(book.cycles().empty());
    CHECK_FALSE(book.came_back(two_hops(n4.seq + 1, n4.seq, 9)));
    // forget() drops a key.
    book.forget(1);
    CHECK_FALSE(book.came_back(two_hops(1, 0)));
    CHECK(book.confirmed() == 1);
}

// ---------------------------------------------------------------- the look

namespace {

struct hold_q : troupe::request<int> {};
struct go_q : troupe::request<int> {};

// Blocks inside its behaviour on `release` (a plain future: no ask).
struct holder : troupe::actor {
    troupe::future<int>* release = nullptr;
    void receive(hold_q& q) { q.reply(release->get()); }
};

// Asks the holder inside its behaviour and waits for the reply.
struct asker : troupe::actor {
    holder* h = nullptr;
    hold_q inner;
    void receive(go_q& q) { q.reply(troupe::ask(*h, inner).get() + 1); }
};

template <class F>
bool eventually(F&& f) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < until) {
        if (f()) return true;
        std::this_thread::yield();
    }
    return false;
}

}  // namespace

TEST_CASE("cycles: what keeps an actor from running, through a local ask") {
    troupe::actor_system sys{2};
    troupe::future<int> release;
    holder h;
    asker a;
    h.set_name("the-holder");
    a.set_name("the-asker");
    h.release = &release;
    a.h = &h;
    go_q go;
    auto& answer = troupe::ask(a, go);
    troupe::detail::blocked_behaviour b;
    // The asker blocks on its ask to the holder (once both behaviours run).
    REQUIRE(eventually([&] {
        troupe::detail::blocked_behaviour x;
        if (!troupe::detail::blocked_behaviour_of(a, x) || !x.local_ask) return false;
        troupe::detail::blocked_behaviour y;
        if (!troupe::detail::blocked_behaviour_in(*x.ask_box, y)) return false;
        b = x;
        return true;
    }));
    CHECK(b.self == "actor 'the-asker' (asker)");
    CHECK(b.who == b.self);
    CHECK(b.running == static_cast<const void*>(&a));
    CHECK(contains(b.in, "in its receive of 'go_q'"));
    CHECK(b.ask_message == "'hold_q'");
    CHECK(b.asked == "actor 'the-holder' (holder)");
    CHECK(b.ask_target == static_cast<const void*>(&h));
    CHECK_FALSE(b.ask_deadline);
    // The holder blocks on a future that is no ask: followed no further.
    troupe::detail::blocked_behaviour y;
    REQUIRE(troupe::detail::blocked_behaviour_in(*b.ask_box, y));
    CHECK(y.running == static_cast<const void*>(&h));
    CHECK(y.self.empty());
    CHECK(y.on_future);
    CHECK_FALSE(y.local_ask);
    CHECK(y.resource == static_cast<const void*>(&release));
    CHECK_FALSE(troupe::detail::same_wait(b, y));
    // The same wait looked at again is the same; once it ends, the look
    // finds nothing.
    troupe::detail::blocked_behaviour again;
    REQUIRE(troupe::detail::blocked_behaviour_of(a, again));
    CHECK(troupe::detail::same_wait(b, again));
    release.fulfil(41);
    CHECK(answer.get() == 42);
    CHECK(eventually([&] {
        troupe::detail::blocked_behaviour z;
        return !troupe::detail::blocked_behaviour_of(a, z) &&
               !troupe::detail::blocked_behaviour_of(h, z);
    }));
    a | troupe::finished_msg;
    h | troupe::finished_msg;
    sys.stop();
}
