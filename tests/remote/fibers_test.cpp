// Remote sends from many troupe user threads sharing one processor (one
// kernel thread) while OS threads contend for the same outbox. Senders once
// built frames in their kernel thread's scratch buffer; then a
// user thread that met a busy outbox lock yielded its processor (the
// spinlock's slow path), another user thread on that kernel thread built its
// own frame in the same buffer, and the first then shipped the second's frame:
// one message twice, its own never (under TSan: remote asks that hung).
// The second case: encoders (a codec and a cereal serialize) that park
// while the frame is half built; with the shared buffer and streams, 3 in
// 4 frames arrived malformed or lost (each send now owns its buffer).
#include <chrono>
#include <map>
#include <thread>
#include <vector>

#include "remote_fixture.hpp"
#include "troupe/blocking_lock.hpp"
#include "troupe/cluster.hpp"
#include "troupe/thread.hpp"

namespace remote = troupe::remote;

struct tagged : troupe::message {
    int rank = 0, sender = 0, seq = 0;
};
TROUPE_REMOTE_MESSAGE(tagged, "test.fibers.tagged", &tagged::rank, &tagged::sender, &tagged::seq);

constexpr int fibers = 8, os_threads = 3, per_sender = 1000;

struct tally : troupe::actor {
    long expected = 0, received = 0, out_of_order = 0;
    std::map<std::pair<int, int>, int> next;  // (rank, sender) -> next seq
    troupe::allocation receive(tagged& m) {
        int& n = next[{m.rank, m.sender}];
        if (m.seq != n) ++out_of_order;
        n = m.seq + 1;
        return ++received == expected ? troupe::Finished : troupe::Nodelete;
    }
};

TEST_CASE("sends from user threads sharing a kernel thread, outbox contended") {
    auto& w = remote_test::world();
    troupe::actor_system sys{1};
    tally mine;
    mine.expected = long{fibers + os_threads} * per_sender;  // from the previous rank
    w.publish("fibers.tally", mine);
    w.barrier();
    const int to = (w.rank() + 1) % w.size();
    auto far = w.lookup<tally>(to, "fibers.tally");
    auto stream = [&](int sender) {
        tagged m;
        m.rank = w.rank();
        m.sender = sender;
        for (int s = 0; s < per_sender; ++s) {
            m.seq = s;
            far | m;
        }
    };
    {
        troupe::cluster c{1};  // every user thread on one kernel thread
        std::vector<troupe::thread> ts;
        std::vector<std::thread> os;
        for (int i = 0; i < os_threads; ++i) os.emplace_back(stream, fibers + i);
        for (int i = 0; i < fibers; ++i) ts.emplace_back(c, [&, i] { stream(i); });
        for (auto& t : ts) t.join();
        for (auto& t : os) t.join();
    }
    // Bounded: a lost message must fail the test, not hang it.
    CHECK(w.stop_for(sys, std::chrono::seconds(30)).finished);
    CHECK(mine.finished());
    CHECK(mine.received == mine.expected);
    CHECK(mine.out_of_order == 0);
    CHECK(mine.next.size() == std::size_t(fibers + os_threads));
    for (auto& e : remote_test::network_errors()) FAIL_CHECK(e);
}

// ---------------------------------------------------------------- parking encoders

namespace {
// Taken by both encoders below, between two parts of the payload: with
// several senders on one processor, a sender parks on it (or yields inside
// it) with its frame half written.
troupe::blocking_lock encoder_lock{"fibers_test encoder lock"};

std::string text_for(int sender, int seq) {
    return std::string(static_cast<std::size_t>(seq % 23), static_cast<char>('a' + sender));
}

// Encoded by a codec<coded> specialisation that parks mid-payload.
struct coded : troupe::message {
    int sender = 0, seq = 0;
    std::string text;
};

// A field whose cereal serialize parks mid-payload (while saving).
struct parking_text {
    std::string s;
    template <class Archive>
    void serialize(Archive& ar) {
        if constexpr (Archive::is_saving::value) {
            std::lock_guard g{encoder_lock};
            troupe::this_thread::yield();
            ar(s);
        } else {
            ar(s);
        }
    }
};
struct carried : troupe::message {
    int sender = 0, seq = 0;
    parking_text text;
};
}  // namespace

TROUPE_REMOTE_MESSAGE(coded, "test.fibers.coded");
TROUPE_REMOTE_MESSAGE(carried, "test.fibers.carried", &carried::sender, &carried::seq,
                      &carried::text);

template <>
struct troupe::remote::codec<coded> {
    static void encode(const coded& m, byte_writer& w) {
        w.bytes(&m.sender, sizeof m.sender);
        {
            std::lock_guard g{encoder_lock};
            troupe::this_thread::yield();
            w.bytes(&m.seq, sizeof m.seq);
        }
        const std::size_t n = m.text.size();
        w.bytes(&n, sizeof n);
        w.bytes(m.text.data(), n);
    }
    static void decode(coded& m, byte_reader& r) {
        r.bytes(&m.sender, sizeof m.sender);
        r.bytes(&m.seq, sizeof m.seq);
        std::size_t n = 0;
        r.bytes(&n, sizeof n);
        if (n > r.left()) throw std::length_error("text longer than the payload");
        m.text.resize(n);
        r.bytes(m.text.data(), n);
    }
};

namespace {
constexpr int parking_senders = 4, parking_per_sender = 300;

// Checks every message's content and each sender's order, per type.
struct parking_tally : troupe::actor {
    long received = 0, bad = 0;
    int next_coded[parking_senders] = {}, next_carried[parking_senders] = {};
    troupe::allocation check(int sender, int seq, const std::string& text, int* next) {
        if (sender < 0 || sender >= parking_senders || seq != next[sender] ||
            text != text_for(sender, seq))
            ++bad;
        else ++next[sender];
        return ++received == 2L * parking_senders * parking_per_sender ? troupe::Finished
                                                                       : troupe::Nodelete;
    }
    troupe::allocation receive(coded& m) { return check(m.sender, m.seq, m.text, next_coded); }
    troupe::allocation receive(carried& m) {
        return check(m.sender, m.seq, m.text.s, next_carried);
    }
};
}  // namespace

TEST_CASE("encoders that park: 4 user threads on one processor, every message intact") {
    auto& w = remote_test::world();
    troupe::actor_system sys{1};
    parking_tally mine;
    w.publish("fibers.parking", mine);
    w.barrier();
    const int to = (w.rank() + 1) % w.size();
    auto far = w.lookup<parking_tally>(to, "fibers.parking");
    {
        troupe::cluster c{1};  // every sender on one kernel thread
        std::vector<troupe::thread> ts;
        for (int i = 0; i < parking_senders; ++i)
            ts.emplace_back(c, [&, i] {
                for (int s = 0; s < parking_per_sender; ++s) {
                    coded a;
                    a.sender = i;
                    a.seq = s;
                    a.text = text_for(i, s);
                    far | a;
                    carried b;
                    b.sender = i;
                    b.seq = s;
                    b.text.s = text_for(i, s);
                    far | b;
                }
            });
        for (auto& t : ts) t.join();
    }
    CHECK(w.stop_for(sys, std::chrono::seconds(30)).finished);
    CHECK(mine.finished());
    CHECK(mine.received == 2L * parking_senders * parking_per_sender);
    CHECK(mine.bad == 0);
    for (int i = 0; i < parking_senders; ++i) {
        CHECK(mine.next_coded[i] == parking_per_sender);
        CHECK(mine.next_carried[i] == parking_per_sender);
    }
    auto errors = remote_test::network_errors();
    CHECK(errors.empty());
    for (std::size_t i = 0; i < errors.size() && i < 3; ++i) MESSAGE(errors[i]);
    remote_test::clear_network_errors();
}
