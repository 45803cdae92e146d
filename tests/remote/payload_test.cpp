// Messages with strings, vectors and maps (cereal), messages with a cereal
// serialize member, and bad input from the network: an unknown message
// name, a truncated payload, a malformed header, a message the actor type
// cannot receive. Each is a clear error naming the rank and the type, and
// the receiving rank carries on.
#include <map>
#include <stdexcept>
#include <string>

#include "remote_fixture.hpp"

namespace remote = troupe::remote;
namespace rd = troupe::remote::detail;

struct note : troupe::message {
    std::string text;
    std::vector<int> numbers;
    std::map<std::string, double> weights;
    int from = 0;
};
#include <cereal/types/map.hpp>
TROUPE_REMOTE_MESSAGE(note, "test.payload.note", &note::text, &note::numbers, &note::weights,
                      &note::from);

struct point : troupe::message {
    double x = 0, y = 0;
    template <class Ar>
    void serialize(Ar& ar) {
        ar(x, y);
    }
};
TROUPE_REMOTE_MESSAGE(point, "test.payload.point");

struct unsent : troupe::message {  // registered, but never sent to a reader
    int v = 0;
};
TROUPE_REMOTE_MESSAGE(unsent, "test.payload.unsent", &unsent::v);

struct reader : troupe::actor {
    int notes = 0, points = 0, expected = 0;  // finishes after `expected` messages
    bool all_right = true;
    troupe::allocation counted() {
        return notes + points == expected ? troupe::Finished : troupe::Nodelete;
    }
    troupe::allocation receive(note& n) {
        ++notes;
        const std::string want = "note from rank " + std::to_string(n.from) + std::string(200, '!');
        all_right &= n.text == want && n.numbers.size() == std::size_t(n.from + 3) &&
                     n.weights.size() == 2 && n.weights["pi"] == 3.25 && n.weights["e"] == 2.5;
        for (std::size_t i = 0; i < n.numbers.size(); ++i)
            all_right &= n.numbers[i] == int(i) * n.from;
        return counted();
    }
    troupe::allocation receive(point& p) {
        ++points;
        all_right &= p.x == 1.5 && p.y == -2.0;
        return counted();
    }
    troupe::allocation receive(unsent&) { return troupe::Nodelete; }
};
struct other_actor : troupe::actor {
    troupe::allocation receive(unsent&) { return troupe::Nodelete; }
};

TEST_CASE("strings, vectors and maps through cereal") {
    auto& w = remote_test::world();
    troupe::actor_system sys{2};
    reader r;
    r.expected = 2 * w.size();
    w.publish("payload.reader", r);
    w.barrier();
    for (int to = 0; to < w.size(); ++to) {
        auto ref = w.lookup<reader>(to, "payload.reader");
        note n;
        n.from = w.rank();
        n.text = "note from rank " + std::to_string(w.rank()) + std::string(200, '!');
        for (int i = 0; i < w.rank() + 3; ++i) n.numbers.push_back(i * w.rank());
        n.weights = {{"pi", 3.25}, {"e", 2.5}};
        ref | n;
        n.text.clear();  // encoded at the send: changing it now changes nothing
        point p;
        p.x = 1.5;
        p.y = -2.0;
        ref | p;
    }
    w.stop(sys);
    CHECK(r.notes == w.size());
    CHECK(r.points == w.size());
    CHECK(r.all_right);
}

// Builds one frame by hand (what a buggy or hostile peer could send).
static rd::byte_buffer frame(rd::frame_kind k, std::string_view name, std::uint64_t target,
                             const void* payload, std::size_t n) {
    rd::byte_buffer b;
    rd::begin_frame(b, k, name, rd::name_key(name), target, 0);
    b.append(payload, n);
    rd::end_frame(b);
    return b;
}

TEST_CASE("bad input from the network is a clear error naming rank and type") {
    auto& w = remote_test::world();
    troupe::actor_system sys{1};
    reader r;
    r.expected = 1;
    other_actor o;
    w.publish("bad.reader", r);
    w.publish("bad.other", o);
    remote_test::clear_network_errors();  // before the barrier: no injection has come yet
    w.barrier();
    const int to = (w.rank() + 1) % w.size();
    const int from = (w.rank() + w.size() - 1) % w.size();
    remote::accept<reader, unsent>();  // this binary delivers unsent to readers
    auto target = w.lookup<reader>(to, "bad.reader");
    auto other = w.lookup<other_actor>(to, "bad.other");
    int v = 5;
    // 1. unknown message name
    auto a = frame(rd::frame_kind::tell, "test.payload.nonesuch", target.id(), &v, sizeof v);
    w.inject_raw_for_test(to, a.data(), a.size());
    // 2. truncated payload: a note whose string length prefix promises more
    std::uint64_t len = 1000;
    auto b = frame(rd::frame_kind::tell, "test.payload.note", target.id(), &len, sizeof len);
    w.inject_raw_for_test(to, b.data(), b.size());
    // 3. a fixed-size payload that is too short
    char one = 1;
    auto c = frame(rd::frame_kind::tell, "test.payload.unsent", target.id(), &one, 1);
    w.inject_raw_for_test(to, c.data(), c.size());
    // 4. a header whose sizes exceed the batch
    const double xy[2] = {1.5, -2.0};
    auto d = frame(rd::frame_kind::tell, "test.payload.point", target.id(), xy, sizeof xy);
    w.inject_raw_for_test(to, d.data(), d.size() - 8);
    // 5. garbage
    const char junk[64] = "this is not a troupe frame at all";
    w.inject_raw_for_test(to, junk, sizeof junk);
    // 6. a registered message the addressed actor type never receives remotely here
    auto e = frame(rd::frame_kind::tell, "test.payload.point", other.id(), nullptr, 0);
    w.inject_raw_for_test(to, e.data(), e.size());
    // The receiving rank carries on: a good message after the bad ones.
    point p;
    p.x = 1.5;
    p.y = -2.0;
    target | p;
    // The good point finishes r; nothing valid ever reaches o.
    o | troupe::finished_msg;
    w.stop(sys);  // also waits for the injected batches (they count as sent)
    CHECK(r.points == 1);
    CHECK(r.all_right);
    auto errs = remote_test::network_errors();
    REQUIRE(errs.size() == 6);
    const std::string here = "rank " + std::to_string(w.rank());
    const std::string there = "rank " + std::to_string(from);
    auto has = [&](std::size_t i, const std::string& part) {
        CAPTURE(errs[i]);
        CHECK(errs[i].find(part) != std::string::npos);
    };
    has(0, "unknown name \"test.payload.nonesuch\"");
    has(0, there);
    has(1, "malformed message \"test.payload.note\"");
    has(1, there);
    has(2, "malformed message \"test.payload.unsent\"");
    has(3, "malformed frame from " + there);
    has(3, "\"test.payload.point\"");
    has(4, "bad magic number");
    has(5, "cannot deliver message \"test.payload.point\"");
    has(5, "other_actor");
    for (auto& s : errs) {
        CAPTURE(s);
        CHECK(s.find(here) != std::string::npos);
    }
}

// Frames carry 32-bit sizes and go out as one MPI message with an int
// count: 2 GiB and more is refused with a clear error, by the size check
// end_frame makes before computing the 32-bit fields (tested directly: no
// 2 GiB allocation).
TEST_CASE("frames of 2 GiB and more are refused with a clear error") {
    namespace d = troupe::remote::detail;
    CHECK_NOTHROW(d::check_frame_size(d::max_frame_size, "test.ok"));
    CHECK_THROWS_AS(d::check_frame_size(d::max_frame_size + 1, "test.big"), std::length_error);
    try {
        d::check_frame_size(std::size_t{1} << 32, "test.big");
        FAIL("expected std::length_error");
    } catch (const std::length_error& e) {
        const std::string what = e.what();
        CHECK(what.find("\"test.big\"") != std::string::npos);
        CHECK(what.find("4294967296 bytes") != std::string::npos);
        CHECK(what.find("32-bit") != std::string::npos);
    }
}
