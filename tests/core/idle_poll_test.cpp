// Idle pollers (troupe/detail/idle_poll.hpp): idle processors call a
// registered poller while they spin and tell it before they sleep; work a
// poller finds (a thread it unparks) runs; after remove_idle_poller returns
// no call runs or starts; misuse is reported.
#include <atomic>
#include <stdexcept>

#include "fixture.hpp"
#include "leak_check.hpp"
#include "troupe/context.hpp"
#include "troupe/detail/idle_poll.hpp"
#include "troupe/thread.hpp"

using troupe::detail::idle_poller;
using troupe_test::on_processors;
using troupe_test::wait_until;

namespace {

// An event source only the poller looks at: a parked thread's context,
// unparked by the first poll that finds it.
struct source {
    std::atomic<troupe::context*> waiting{nullptr};
    std::atomic<long> polls{0}, found{0}, sleeps{0};
    std::atomic<int> inside{0};  // calls in progress

    static bool poll(void* self) noexcept {
        auto* s = static_cast<source*>(self);
        s->inside.fetch_add(1);
        s->polls.fetch_add(1);
        bool did = false;
        if (troupe::context* c = s->waiting.exchange(nullptr)) {
            troupe::unpark(*c);
            s->found.fetch_add(1);
            did = true;
        }
        s->inside.fetch_sub(1);
        return did;
    }
    static void sleeping(void* self) noexcept {
        auto* s = static_cast<source*>(self);
        s->inside.fetch_add(1);
        s->sleeps.fetch_add(1);
        s->inside.fetch_sub(1);
    }
    idle_poller poller() { return idle_poller{&poll, &sleeping, this}; }
};

constexpr int rounds = troupe_test::scaled(2000);

}  // namespace

TEST_CASE("idle processors poll a registered poller; a thread it unparks runs") {
    on_processors([](troupe::cluster& c) {
        troupe_test::leak_check no_leaks;
        source s;
        troupe::detail::add_idle_poller(s.poller());
        // The waiter's own processor goes idle when it parks and polls: the
        // only way the waiter is ever unparked is a poll.
        troupe_test::run_in(c, [&] {
            for (int i = 0; i < rounds; ++i) {
                s.waiting.store(&troupe::this_context());
                troupe::park();
            }
        });
        CHECK(s.found.load() == rounds);
        // Idle processors tell the poller before they sleep.
        wait_until([&] { return s.sleeps.load() > 0; });
        troupe::detail::remove_idle_poller(s.poller());
        CHECK(s.inside.load() == 0);
    });
}

TEST_CASE("an unregistered poller is not called any more") {
    on_processors([](troupe::cluster& c) {
        source s;
        troupe::detail::add_idle_poller(s.poller());
        troupe_test::run_in(c, [] {});
        wait_until([&] { return s.polls.load() > 0; });
        troupe::detail::remove_idle_poller(s.poller());
        // Returned: no call is in progress, and none starts.
        CHECK(s.inside.load() == 0);
        const long polls = s.polls.load(), sleeps = s.sleeps.load();
        // Keep the processors going idle and back: with the poller still
        // registered each of these idle spins would poll it.
        for (int i = 0; i < 50; ++i) troupe_test::run_in(c, [] { troupe::this_thread::yield(); });
        source other;  // a registered poller sees these idle spins
        troupe::detail::add_idle_poller(other.poller());
        troupe_test::run_in(c, [] {});
        wait_until([&] { return other.polls.load() > 0; });
        troupe::detail::remove_idle_poller(other.poller());
        CHECK(s.polls.load() == polls);
        CHECK(s.sleeps.load() == sleeps);
    });
}

TEST_CASE("idle pollers: registration errors and misuse") {
    troupe_test::watchdog w{"idle poller registration"};
    idle_poller none{};
    CHECK_THROWS_AS(troupe::detail::add_idle_poller(none), std::invalid_argument);
    source s[troupe::detail::max_idle_pollers + 1];
    for (std::size_t i = 0; i < troupe::detail::max_idle_pollers; ++i)
        troupe::detail::add_idle_poller(s[i].poller());
    CHECK_THROWS_AS(troupe::detail::add_idle_poller(s[troupe::detail::max_idle_pollers].poller()),
                    std::length_error);
    for (std::size_t i = 0; i < troupe::detail::max_idle_pollers; ++i)
        troupe::detail::remove_idle_poller(s[i].poller());
    // Removing one that is not registered is a no-op; a freed slot is reused.
    troupe::detail::remove_idle_poller(s[0].poller());
    troupe::detail::add_idle_poller(s[troupe::detail::max_idle_pollers].poller());
    troupe::detail::remove_idle_poller(s[troupe::detail::max_idle_pollers].poller());

    // A poller that removes itself would wait for its own call: reported.
    struct self_remover {
        std::atomic<bool> done{false};
        idle_poller p{};
        static bool poll(void* self) noexcept {
            auto* r = static_cast<self_remover*>(self);
            if (!r->done.exchange(true)) troupe::detail::remove_idle_poller(r->p);
            return false;
        }
    } r;
    r.p = idle_poller{&self_remover::poll, nullptr, &r};
    troupe_test::misuse_recorder rec;
    troupe::detail::add_idle_poller(r.p);
    troupe::cluster c{1};
    troupe_test::run_in(c, [] {});
    wait_until([&] { return r.done.load(); });
    troupe::detail::remove_idle_poller(r.p);
    CHECK(rec.last().find("from inside an idle poller") != std::string::npos);
}
