// Idle pollers (troupe/detail/idle_poll.hpp) seen from the actor executor:
// idle workers call a registered poller between batches, a message the
// poller sends from there is delivered, workers tell the poller before they
// park, and an unregistered poller is not called any more.
#include <atomic>

#include "actor_fixture.hpp"
#include "leak_check.hpp"
#include "troupe/detail/idle_poll.hpp"

using troupe_test::on_workers;
using troupe_test::wait_until;

namespace {

struct kick : troupe::message {};
struct note : troupe::message {};

struct target;

// An event source only the poller looks at: `armed` notes to send.
struct source {
    target* to = nullptr;
    note n;
    std::atomic<long> armed{0}, polls{0}, sleeps{0};
    static bool poll(void* self) noexcept;
    static void sleeping(void* self) noexcept { static_cast<source*>(self)->sleeps.fetch_add(1); }
    troupe::detail::idle_poller poller() { return {&poll, &sleeping, this}; }
};

struct target : troupe::actor {
    source* s = nullptr;
    troupe::future<>* done = nullptr;
    long notes = 0, want = 0;
    troupe::allocation receive(kick&) {
        s->armed.fetch_add(1);  // only an idle worker's poll turns this into a note
        return troupe::Nodelete;
    }
    troupe::allocation receive(note&) {
        if (++notes == want) done->fulfil();
        return troupe::Nodelete;
    }
};

bool source::poll(void* self) noexcept {
    auto* s = static_cast<source*>(self);
    s->polls.fetch_add(1);
    long a = s->armed.load();
    while (a > 0)
        if (s->armed.compare_exchange_weak(a, a - 1)) {
            *s->to | s->n;  // from the idle worker: the executor's external path
            return true;
        }
    return false;
}

constexpr long rounds = troupe_test::scaled(2000);

}  // namespace

TEST_CASE("idle workers poll a registered poller; what it sends is delivered") {
    on_workers([](std::size_t n) {
        troupe_test::leak_check no_leaks;
        troupe::actor_system sys{troupe_test::workers(n)};
        source s;
        troupe::future<> done;
        target t;
        t.s = &s;
        t.done = &done;
        t.want = rounds;
        s.to = &t;
        troupe::detail::add_idle_poller(s.poller());
        kick k;
        for (long i = 0; i < rounds; ++i) t | k;
        done.get();  // every note came from a poll
        CHECK(t.notes == rounds);
        wait_until([&] { return s.sleeps.load() > 0; });  // a worker parked after its spin
        troupe::detail::remove_idle_poller(s.poller());
        const long polls = s.polls.load();
        // Unregistered: idle workers no longer call it (each kick below is
        // followed by an idle spin that would have polled).
        for (long i = 0; i < 100; ++i) {
            t | k;
            troupe::this_thread::yield();
        }
        t | troupe::finished_msg;
        sys.stop();
        CHECK(s.polls.load() == polls);
        CHECK(s.armed.load() == 100);  // nothing turned the last kicks into notes
    });
}
