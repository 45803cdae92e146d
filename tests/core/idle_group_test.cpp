// The idle group (troupe/detail/idle_group.hpp), the one parking primitive
// of processors and actor workers: published work is never left with every
// member asleep, wake_one wakes exactly one sleeper when none spins, a
// member woken as a spinner hands the duty on, watchers, wake races, and
// the counts balance. Members are plain kernel threads.
#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "fixture.hpp"
#include "troupe/detail/futex.hpp"
#include "troupe/detail/idle_group.hpp"

using troupe::detail::idle_group;
using troupe_test::wait_until;

namespace {

// ---------------------------------------------------------------- stress

// Members follow the processors' protocol (spin, announce, re-check,
// sleep, withdraw) over one counter of published work; publishers publish
// with a seq_cst RMW and run the rule.
struct work_pool {
    idle_group g;
    std::vector<std::unique_ptr<idle_group::member>> members;
    std::atomic<long> work{0};  // published, not yet taken
    std::atomic<long> taken{0};
    // A member that takes an item holds it until `taken` reaches this (the
    // end of the burst): a burst of k <= n items needs k members awake at
    // once, so a spinner that takes one must pass the duty on (like a
    // processor that keeps computing with its thread).
    std::atomic<long> hold_until{0};
    std::atomic<int> holding{0};  // members holding an item now
    std::atomic<bool> stop{false};
    unsigned spin_polls;

    work_pool(std::size_t n, unsigned polls)
        : g(n, idle_group::spinner_duty::finds_work), spin_polls(polls) {
        for (std::size_t i = 0; i < n; ++i) {
            members.push_back(std::make_unique<idle_group::member>());
            g.add_member(*members.back());
        }
    }

    // seq_cst: a re-check after announce_idle must not read a stale count.
    bool take() noexcept {
        long w = work.load(std::memory_order_seq_cst);
        while (w > 0)
            if (work.compare_exchange_weak(w, w - 1, std::memory_order_seq_cst)) return true;
        return false;
    }

    void publish() noexcept {
        work.fetch_add(1, std::memory_order_seq_cst);  // the publication RMW
        g.wake_one();
    }

    void hold() noexcept {
        holding.fetch_add(1, std::memory_order_seq_cst);
        taken.fetch_add(1, std::memory_order_seq_cst);
        while (taken.load(std::memory_order_seq_cst) < hold_until.load(std::memory_order_seq_cst) &&
               !stop.load(std::memory_order_relaxed))
            std::this_thread::yield();
        holding.fetch_sub(1, std::memory_order_seq_cst);
    }

    void run_member(idle_group::member& m) noexcept {
        for (;;) {
            if (take()) {
                g.stop_spinning(m);  // woken as a spinner and found work at once
                hold();
                continue;
            }
            if (stop.load(std::memory_order_seq_cst)) break;
            g.start_spinning(m);
            bool got = false;
            if (spin_polls == 0) {
                // A lazy spinner: counted for a while without polling, so
                // publishers rely on it and its re-check alone must find
                // (and pass on) what they published meanwhile.
                for (int i = 0; i < 256; ++i) troupe::detail::cpu_relax();
            }
            for (unsigned i = 0; i < spin_polls && !got; ++i) {
                got = take();
                troupe::detail::cpu_relax();
            }
            if (!got) {
                g.announce_idle(m);
                got = take();  // the re-check
                if (!got && !stop.load(std::memory_order_seq_cst)) g.sleep(m);
                g.withdraw(m);
            }
            if (got) {
                g.stop_spinning(m);
                hold();
            }
        }
        g.stop_spinning(m);  // leaving: pass any inherited duty on
    }
};

// Publishers race members going to sleep: each round publishes a burst of
// 1..n items after a varying delay (landing anywhere in the members' spin,
// announce, re-check and sleep), then waits until all of it was taken. A
// stranded item (every member asleep, or holding, with work published)
// hangs the wait and the watchdog fails the test.
void stress(std::size_t members, std::size_t publishers, unsigned polls, int rounds) {
    CAPTURE(members);
    CAPTURE(publishers);
    CAPTURE(polls);
    work_pool pool(members, polls);
    std::vector<std::thread> ms;
    for (auto& m : pool.members) ms.emplace_back([&pool, &m] { pool.run_member(*m); });
    long published = 0;
    for (int r = 0; r < rounds; ++r) {
        const unsigned delay = (static_cast<unsigned>(r) * 2654435761u >> 20) % 4096;
        for (unsigned i = 0; i < delay; ++i) troupe::detail::cpu_relax();
        const long burst = 1 + r % static_cast<long>(members);
        published += burst;
        pool.hold_until.store(published, std::memory_order_seq_cst);
        // Publisher p publishes items p, p + publishers, ... of the burst.
        std::vector<std::thread> ps;
        for (std::size_t p = 1; p < publishers; ++p)
            ps.emplace_back([&pool, burst, p, publishers] {
                for (long k = static_cast<long>(p); k < burst; k += static_cast<long>(publishers))
                    pool.publish();
            });
        for (long k = 0; k < burst; k += static_cast<long>(publishers)) pool.publish();
        for (auto& t : ps) t.join();
        // Every item taken, and every holder back (a round's holders must
        // not still hold when the next round raises hold_until).
        wait_until([&] {
            return pool.taken.load(std::memory_order_seq_cst) == published &&
                   pool.holding.load(std::memory_order_seq_cst) == 0;
        });
    }
    // Stop: `stop` (seq_cst) before each wake's seq_cst load of the word;
    // a member stores its word before loading `stop`: one of us sees the other.
    pool.stop.store(true, std::memory_order_seq_cst);
    for (auto& m : pool.members) pool.g.wake(*m, idle_group::wake_as::plain);
    for (auto& t : ms) t.join();
    CHECK(pool.taken.load() == published);
    CHECK(pool.work.load() == 0);
    // Every count came back: nobody is left counted as asleep or spinning.
    CHECK(pool.g.sleepers() == 0);
    CHECK(pool.g.spinners() == 0);
    CHECK(pool.g.members_asleep() == 0);
}

// ---------------------------------------------------------------- scripted members

// A member thread that does one step at a time when told to.
struct scripted {
    enum : int { none = 0, sleep = 1, watch = 2, stop_spinning = 3, exit = 4 };
    idle_group& g;
    idle_group::member m;
    std::atomic<int> cmd{none};
    std::atomic<int> steps{0};            // steps completed
    std::atomic<bool> as_spinner{false};  // the last sleep ended woken as a spinner
    std::atomic<bool> in_sleep{false};    // between a sleep/watch command and its withdraw
    std::thread t;

    explicit scripted(idle_group& group) : g(group) {
        g.add_member(m);
        t = std::thread([this] { run(); });
    }
    ~scripted() {
        post(exit);
        t.join();
    }

    void post(int c) {
        if (c == sleep || c == watch) in_sleep.store(true, std::memory_order_release);
        cmd.store(c, std::memory_order_release);
        cmd.notify_one();
    }
    // Posts `c` and waits until it completed (for sleeps: until woken).
    void step(int c) {
        const int before = steps.load(std::memory_order_acquire);
        post(c);
        wait_until([&] { return steps.load(std::memory_order_acquire) > before; });
    }
    // Waits until the first sleep has ended (its first step) and tells
    // whether it was woken as a spinner.
    bool woke_as_spinner() {
        wait_until([&] { return steps.load() == 1; });
        return as_spinner.load();
    }

    void run() {
        for (;;) {
            cmd.wait(none, std::memory_order_acquire);
            const int c = cmd.exchange(none, std::memory_order_acq_rel);
            switch (c) {
            case sleep:
            case watch:
                g.announce_idle(m);
                // (no work to re-check for)
                if (c == sleep) g.sleep(m);
                else
                    g.sleep_until(m, std::chrono::steady_clock::now() + std::chrono::hours(1),
                                  idle_group::sleep_kind::watching);
                as_spinner.store(g.withdraw(m), std::memory_order_release);
                in_sleep.store(false, std::memory_order_release);
                break;
            case stop_spinning: g.stop_spinning(m); break;
            case exit: g.stop_spinning(m); return;
            default: continue;
            }
            steps.fetch_add(1, std::memory_order_acq_rel);
        }
    }
};

// Puts every member to sleep and waits until all have announced.
void all_sleep(idle_group& g, std::vector<std::unique_ptr<scripted>>& ms) {
    for (auto& s : ms) s->post(scripted::sleep);
    wait_until([&] { return g.members_asleep() == ms.size(); });
}

std::vector<std::unique_ptr<scripted>> make_members(idle_group& g, std::size_t n) {
    std::vector<std::unique_ptr<scripted>> ms;
    for (std::size_t i = 0; i < n; ++i) ms.push_back(std::make_unique<scripted>(g));
    return ms;
}

// The member woken since `all_sleep`, or nullptr if none or several.
scripted* the_awake_one(idle_group& g, std::vector<std::unique_ptr<scripted>>& ms) {
    scripted* found = nullptr;
    for (auto& s : ms) {
        if (g.asleep(s->m)) continue;
        if (found) return nullptr;
        found = s.get();
    }
    return found;
}

// Wakes every member still asleep (plain) and waits until every member
// has withdrawn.
void wake_all(idle_group& g, std::vector<std::unique_ptr<scripted>>& ms) {
    for (auto& s : ms) {
        g.wake(s->m, idle_group::wake_as::plain);
        wait_until([&] { return !s->in_sleep.load(std::memory_order_acquire); });
    }
}

}  // namespace

TEST_CASE("idle group: published work is never left with every member asleep") {
    troupe_test::watchdog w{"idle group stress"};
    for (std::size_t members = 1; members <= 4; ++members)
        for (std::size_t publishers = 1; publishers <= 2; ++publishers)
            for (unsigned polls : {0u, 8u}) stress(members, publishers, polls, 400);
}

TEST_CASE("idle group: wake_one wakes exactly one sleeper when none spins") {
    troupe_test::watchdog w{"idle group wake_one"};
    for (std::size_t n = 1; n <= 4; ++n) {
        CAPTURE(n);
        idle_group g(n, idle_group::spinner_duty::finds_work);
        auto ms = make_members(g, n);
        all_sleep(g, ms);
        CHECK(g.sleepers() == static_cast<int>(n));
        CHECK(g.spinners() == 0);
        g.wake_one();
        // The wake happened inside wake_one: exactly one word changed, and
        // the woken member holds the spinner count the waker added for it.
        CHECK(g.members_asleep() == n - 1);
        CHECK(g.spinners() == 1);
        scripted* woken = the_awake_one(g, ms);
        REQUIRE(woken != nullptr);
        CHECK(woken->woke_as_spinner());
        // A spinner exists: the rule wakes nobody more.
        g.wake_one();
        g.wake_one_unless_watched();
        CHECK(g.members_asleep() == n - 1);
        CHECK(g.spinners() == 1);
        wake_all(g, ms);
        woken->step(scripted::stop_spinning);  // last spinner; nobody sleeps, so nobody is woken
        CHECK(g.sleepers() == 0);
        CHECK(g.spinners() == 0);
    }
}

TEST_CASE("idle group: a member woken as a spinner hands the duty on") {
    troupe_test::watchdog w{"idle group duty"};
    idle_group g(3, idle_group::spinner_duty::finds_work);
    auto ms = make_members(g, 3);
    all_sleep(g, ms);
    g.wake_one();
    scripted* first = the_awake_one(g, ms);
    REQUIRE(first != nullptr);
    REQUIRE(first->woke_as_spinner());
    // The first stops spinning (found work): it was the last spinner, so it
    // runs the rule, which wakes exactly one more member as a spinner.
    first->step(scripted::stop_spinning);
    CHECK(g.members_asleep() == 1);
    CHECK(g.spinners() == 1);
    scripted* second = nullptr;
    for (auto& s : ms)
        if (s.get() != first && !g.asleep(s->m)) second = s.get();
    REQUIRE(second != nullptr);
    CHECK(second->woke_as_spinner());
    // A spinner that finds nothing and announces itself idle drops its
    // count without waking anyone (its own re-check follows).
    second->post(scripted::sleep);
    // The drop is announce_idle's last step: once it shows, it is done.
    wait_until([&] { return g.members_asleep() == 2 && g.spinners() == 0; });
    CHECK(g.members_asleep() == 2);
    CHECK(g.asleep(second->m));
    wake_all(g, ms);
    CHECK(g.sleepers() == 0);
    CHECK(g.spinners() == 0);
}

TEST_CASE("idle group: with hint-only spinners the last spinner wakes nobody") {
    troupe_test::watchdog w{"idle group hint"};
    idle_group g(2, idle_group::spinner_duty::hint);
    auto ms = make_members(g, 2);
    all_sleep(g, ms);
    CHECK(g.wake(ms[0]->m, idle_group::wake_as::spinner));
    CHECK(ms[0]->woke_as_spinner());
    ms[0]->step(scripted::stop_spinning);
    CHECK(g.spinners() == 0);
    CHECK(g.asleep(ms[1]->m));  // not woken: the count was only a hint
    wake_all(g, ms);
}

TEST_CASE("idle group: a sleeping watcher suffices for watched work only") {
    troupe_test::watchdog w{"idle group watchers"};
    idle_group g(1, idle_group::spinner_duty::finds_work);
    auto ms = make_members(g, 1);
    ms[0]->post(scripted::watch);
    wait_until([&] { return g.watchers() == 1; });
    g.wake_one_unless_watched();
    CHECK(g.asleep(ms[0]->m));
    g.wake_one();
    CHECK_FALSE(g.asleep(ms[0]->m));
    CHECK(ms[0]->woke_as_spinner());
    CHECK(g.watchers() == 0);
    ms[0]->step(scripted::stop_spinning);
    CHECK(g.spinners() == 0);
}

TEST_CASE("idle group: concurrent wakes of one sleeper, exactly one succeeds") {
    troupe_test::watchdog w{"idle group wake race"};
    idle_group g(1, idle_group::spinner_duty::hint);
    auto ms = make_members(g, 1);
    scripted& s = *ms[0];
    for (int round = 0; round < 200; ++round) {
        CAPTURE(round);
        const int before = s.steps.load();
        all_sleep(g, ms);
        std::atomic<int> go{0}, wins{0};
        auto waker = [&](idle_group::wake_as how) {
            go.fetch_add(1);
            while (go.load() < 2) {}
            if (g.wake(s.m, how)) wins.fetch_add(1);
        };
        const auto how = round % 2 ? idle_group::wake_as::spinner : idle_group::wake_as::plain;
        std::thread a(waker, how), b(waker, how);
        a.join();
        b.join();
        CHECK(wins.load() == 1);
        wait_until([&] { return s.steps.load() == before + 1; });
        CHECK(s.as_spinner.load() == (how == idle_group::wake_as::spinner));
        // A failed spinner wake undid its transient count: only the winner's remains.
        CHECK(g.spinners() == (how == idle_group::wake_as::spinner ? 1 : 0));
        if (how == idle_group::wake_as::spinner) s.step(scripted::stop_spinning);
        CHECK_FALSE(g.wake(s.m, idle_group::wake_as::plain));  // awake: nothing to wake
    }
    CHECK(g.sleepers() == 0);
    CHECK(g.spinners() == 0);
}

TEST_CASE("idle group: wake_another skips the caller") {
    troupe_test::watchdog w{"idle group wake_another"};
    idle_group g(3, idle_group::spinner_duty::hint);
    auto ms = make_members(g, 3);
    all_sleep(g, ms);
    // Member 1 asks: the scan starts after it (member 2).
    CHECK(g.wake_another(ms[1]->m));
    CHECK(g.asleep(ms[1]->m));
    CHECK_FALSE(g.asleep(ms[2]->m));
    CHECK(g.wake_another(ms[1]->m));
    CHECK_FALSE(g.asleep(ms[0]->m));
    // Only the caller is left asleep: nothing to wake.
    CHECK_FALSE(g.wake_another(ms[1]->m));
    CHECK(g.asleep(ms[1]->m));
    wake_all(g, ms);
    CHECK(g.sleepers() == 0);
    CHECK(g.spinners() == 0);
}

TEST_CASE("idle group: a dormant member's slot is lent, held, retaken and given back") {
    troupe_test::watchdog w{"idle group lending"};
    idle_group g{2, idle_group::spinner_duty::finds_work};
    auto ms = make_members(g, 1);
    scripted& s = *ms[0];
    // Not takeable while awake.
    CHECK_FALSE(g.take(s.m));
    s.post(scripted::sleep);
    wait_until([&] { return g.dormant(s.m); });
    CHECK(g.sleepers() == 1);
    REQUIRE(g.take(s.m));
    // Lent: busy for the rule (not a sleeper), and no waker can wake it.
    CHECK(g.lent(s.m));
    CHECK_FALSE(g.asleep(s.m));
    CHECK(g.sleepers() == 0);
    CHECK_FALSE(g.take(s.m));
    CHECK_FALSE(g.wake(s.m, idle_group::wake_as::spinner));
    CHECK(g.spinners() == 0);  // the failed spinner wake left no count
    g.wake_one();              // the rule finds no sleeper: returns, wakes nobody
    CHECK(g.lent(s.m));
    CHECK(s.in_sleep.load());
    // Held between the lender's waits; retake fails while lent, and resume
    // fails once retaken.
    CHECK_FALSE(g.retake(s.m));
    g.hold(s.m);
    CHECK(g.lent(s.m));
    REQUIRE(g.resume(s.m));
    g.give_back(s.m);
    // Dormant again, counted a sleeper, still asleep: an ordinary wake
    // ends its sleep (the member withdraws with the count the give-back
    // restored).
    CHECK(g.dormant(s.m));
    CHECK(g.sleepers() == 1);
    CHECK(s.in_sleep.load());
    REQUIRE(g.take(s.m));
    g.hold(s.m);
    // Retake: the member's own thread wakes out of the held slot.
    REQUIRE(g.retake(s.m));
    CHECK_FALSE(g.resume(s.m));
    wait_until([&] { return !s.in_sleep.load(std::memory_order_acquire); });
    CHECK(g.sleepers() == 0);
    CHECK_FALSE(g.lent(s.m));
}
