// Remote asks given up and destroyed before their reply: a
// request abandoned through waituntil(... | timeout) and then destroyed is
// forgotten by the engine, and its late reply is dropped quietly instead of
// being written into the memory the request occupied. Every rank asks the
// next one.
#include <cstddef>
#include <cstring>
#include <new>
#include <sstream>
#include <string>

#include "remote_fixture.hpp"
#include "troupe/dump.hpp"
#include "troupe/timeout.hpp"
#include "troupe/waituntil.hpp"

using namespace std::chrono_literals;
namespace remote = troupe::remote;

// A request its server answers only once released.
struct slow : troupe::request<long> {
    long x = 0;
};
TROUPE_REMOTE_MESSAGE(slow, "test.abandon.slow", &slow::x);
struct let_go : troupe::message {};
TROUPE_REMOTE_MESSAGE(let_go, "test.abandon.let_go");
struct ping : troupe::request<long> {};
TROUPE_REMOTE_MESSAGE(ping, "test.abandon.ping");

namespace {

struct holder : troupe::actor {
    slow* held = nullptr;
    troupe::allocation receive(slow& q) {
        q.defer();  // replied when let go
        held = &q;
        return troupe::Nodelete;
    }
    troupe::allocation receive(let_go&) {
        if (held) held->reply(held->x * 2);
        held = nullptr;
        return troupe::Nodelete;
    }
    troupe::allocation receive(ping& q) {
        q.reply(held ? -1 : 1);
        return troupe::Nodelete;
    }
};

bool all_zero(const unsigned char* p, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i)
        if (p[i] != 0) return false;
    return true;
}

}  // namespace

TEST_CASE("an ask abandoned in waituntil and destroyed: the late reply is dropped quietly") {
    remote::world& w = remote_test::world();
    remote_test::clear_network_errors();
    // The request lives in storage the test owns, so that a reply written
    // after its destruction is seen (the storage is zeroed after the
    // destructor, and must stay zero).
    alignas(slow) unsigned char store[sizeof(slow)];
    {
        troupe::actor_system sys{2};
        holder h;
        w.publish("abandon.h." + std::to_string(w.rank()), h);
        w.barrier();
        const int n = (w.rank() + 1) % w.size();
        auto next = w.lookup<holder>(n, "abandon.h." + std::to_string(n));

        auto* q = new (store) slow{};
        q->x = 21;
        bool timed_out = false, replied = false;
        // The server answers only after let_go: the timeout always wins.
        troupe::waituntil(troupe::on(next.ask(*q), [&] { replied = true; }) |
                          troupe::on(troupe::timeout(1ms), [&] { timed_out = true; }));
        CHECK(timed_out);
        CHECK_FALSE(replied);
        q->~slow();  // given up: the engine must forget it
        std::memset(store, 0, sizeof store);
        // Nothing awaits that reply any more: the engine does not keep
        // polling closely for it (a reply that never came kept it spinning).
        std::ostringstream dump;
        troupe::dump(dump);
        CHECK(dump.str().find("replies awaited (asks and lookups not given up): 0\n") !=
              std::string::npos);

        next | let_go{};  // the server replies to the abandoned ask now
        ping p;           // same sender, same actor: after let_go (per-pair FIFO)
        CHECK(next.ask(p).get() == 1);
        w.barrier();  // every rank has its answers
        h | troupe::finished_msg;
        w.stop(sys);  // every batch sent was received: the late reply was handled
    }
    CHECK(all_zero(store, sizeof store));
    for (auto& e : remote_test::network_errors()) FAIL_CHECK(e);
}

TEST_CASE("an ask answered, then its request destroyed and its slot reused: nothing is dropped") {
    remote::world& w = remote_test::world();
    remote_test::clear_network_errors();
    {
        troupe::actor_system sys{2};
        holder h;
        w.publish("abandon.r." + std::to_string(w.rank()), h);
        w.barrier();
        const int n = (w.rank() + 1) % w.size();
        auto next = w.lookup<holder>(n, "abandon.r." + std::to_string(n));
        for (int i = 0; i < 50; ++i) {  // answered asks: destroying them later cancels nothing
            ping p;
            CHECK(next.ask(p).get() == 1);
        }
        w.barrier();
        h | troupe::finished_msg;
        w.stop(sys);
    }
    for (auto& e : remote_test::network_errors()) FAIL_CHECK(e);
}

TEST_CASE("asks given up while their replies are being written: no race with the destructor") {
    // Timeouts about as long as a round trip, so that some asks are given
    // up just as the engine writes their replies: the destructor must wait
    // for the write and see it whole (TSan reports the race otherwise).
    remote::world& w = remote_test::world();
    remote_test::clear_network_errors();
    long answered = 0, given_up = 0;
    {
        troupe::actor_system sys{2};
        holder h;
        w.publish("abandon.race." + std::to_string(w.rank()), h);
        w.barrier();
        const int n = (w.rank() + 1) % w.size();
        auto next = w.lookup<holder>(n, "abandon.race." + std::to_string(n));
        for (int i = 0; i < 2000; ++i) {
            ping p;
            bool gave_up = false;
            troupe::waituntil(troupe::on(next.ask(p), [&] { ++answered; }) |
                              troupe::on(troupe::timeout(std::chrono::microseconds(i % 40)), [&] {
                                  ++given_up;
                                  gave_up = true;
                              }));
            if (gave_up) {
                // Widens the window in which the reply is written after the
                // waituntil let go of the future and before `p` is destroyed
                // (the destructor must then synchronise with that write).
                const auto until =
                    std::chrono::steady_clock::now() + std::chrono::microseconds(i % 200);
                while (std::chrono::steady_clock::now() < until) {}
            }
        }           // each `p` is destroyed here, answered or not
        ping last;  // same sender, same actor: after every earlier ask
        CHECK(next.ask(last).get() == 1);
        w.barrier();
        h | troupe::finished_msg;
        w.stop(sys);
    }
    CHECK(answered + given_up == 2000);
    for (auto& e : remote_test::network_errors()) FAIL_CHECK(e);
}
