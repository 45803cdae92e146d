// Destruction and shutdown order, at 1, 2 and 4 processors: the actor
// system is stopped and destroyed while user threads still block on
// channels (in remove, in insert, and in a waituntil over a request's
// future that will never be answered); main closes the channels only
// afterwards. Nothing hangs (watchdog), every blocked thread ends the way
// the channel promises (consumers: channel_closed; producers: their element
// back; the waituntil: its closed clause), nothing is lost and no heap block
// is left behind (leak_check; LSan at exit in the asan build).
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "fixture.hpp"
#include "leak_check.hpp"
#include "troupe/actors.hpp"
#include "troupe/channel.hpp"
#include "troupe/thread.hpp"
#include "troupe/waituntil.hpp"

using troupe::channel;
using troupe_test::leak_check;
using troupe_test::on_processors;
using troupe_test::wait_until;

namespace {

using boxed = std::unique_ptr<int>;

struct fill : troupe::message {
    int count;
    explicit fill(int n) : count(n) {}
};
// Held without an answer: the actor defers it and then finishes.
struct hold : troupe::request<int> {};

// Hands `count` elements to the consumers blocked on `out` (a rendezvous),
// and holds requests without answering them.
struct source : troupe::actor {
    explicit source(channel<boxed>& out) : out(out) {}
    explicit source(troupe::actor_system& s, channel<boxed>& out) : troupe::actor(s), out(out) {}
    channel<boxed>& out;
    hold* held = nullptr;
    troupe::allocation receive(fill& m) {
        for (int k = 0; k < m.count; ++k) out << std::make_unique<int>(k);
        return troupe::Nodelete;
    }
    troupe::allocation receive(hold& q) {
        q.defer();  // the duty goes with the request; nobody will answer
        held = &q;
        return troupe::Nodelete;
    }
};

// The threads of one shutdown scenario and what they saw.
struct blocked_threads {
    static constexpr int consumers = 3;
    static constexpr int producers = 2;
    channel<boxed> jobs{0, "jobs"};        // consumers block in remove
    channel<boxed> out{2, "out"};          // producers block in insert once full
    channel<boxed> control{0, "control"};  // the asker's other clause
    std::atomic<int> consumed{0}, consumers_closed{0}, elements_back{0};
    std::atomic<int> asker_closed{0}, asker_answered{0};
    std::vector<troupe::thread> threads;

    void start(troupe::cluster& c, source& src) {
        for (int k = 0; k < consumers; ++k)
            threads.emplace_back(c, [this] {
                try {
                    for (;;) {
                        boxed b = jobs.remove();
                        consumed.fetch_add(1);
                    }
                } catch (const troupe::channel_closed&) {
                    consumers_closed.fetch_add(1);
                }
            });
        for (int k = 0; k < producers; ++k)
            threads.emplace_back(c, [this, k] {
                try {
                    for (int i = 0;; ++i) out << std::make_unique<int>(k * 1000 + i);
                } catch (troupe::channel_closed_with<boxed>& e) {
                    if (e.value()) elements_back.fetch_add(1);
                }
            });
        threads.emplace_back(c, [this, &src] {
            hold q;
            boxed b;
            troupe::ask(src, q);
            troupe::waituntil(troupe::on(q.result(), [&] { asker_answered.fetch_add(1); }) |
                              troupe::on(control.remove_into(b, troupe::report_close),
                                         [&](troupe::channel_status s) {
                                             if (s == troupe::channel_status::closed)
                                                 asker_closed.fetch_add(1);
                                         }));
        });
    }

    // Every thread is blocked where the scenario wants it.
    void wait_blocked() {
        wait_until([&] {
            return jobs.waiting_consumers() == consumers && out.waiting_producers() == producers &&
                   control.waiting_consumers() == 1;
        });
    }

    void close_and_check(int handed) {
        CHECK(consumed.load() == handed);
        jobs.close();
        out.close();
        control.close();
        for (auto& t : threads) t.join();
        CHECK(consumed.load() == handed);
        CHECK(consumers_closed.load() == consumers);
        CHECK(elements_back.load() == producers);  // each blocked producer's element
        CHECK(asker_closed.load() == 1);
        CHECK(asker_answered.load() == 0);
        int drained = 0;
        for (boxed& b : out) drained += b != nullptr;
        CHECK(drained == 2);  // the buffer: nothing lost
    }
};

}  // namespace

TEST_CASE("actor system stopped and destroyed while user threads block; main closes afterwards") {
    on_processors([](troupe::cluster& c) {
        leak_check no_leaks;
        blocked_threads bt;
        const int handed = 2 * blocked_threads::consumers;
        {
            troupe::actor_system sys{2};
            source src{sys, bt.jobs};
            bt.start(c, src);
            troupe::send<fill>(src, handed);
            // The source finishes once it handed everything over and holds
            // the asker's request; stop() then returns with the user
            // threads still blocked.
            bt.wait_blocked();
            src | troupe::finished_msg;
            sys.stop();
            CHECK(sys.live_actors() == 0);
        }                   // the actor, then the system, are destroyed
        bt.wait_blocked();  // still blocked, with no actor system left
        bt.close_and_check(handed);
    });
}

TEST_CASE("the default actor system stopped by stop_actor_system while user threads block") {
    on_processors([](troupe::cluster& c) {
        leak_check no_leaks;
        blocked_threads bt;
        const int handed = blocked_threads::consumers;
        troupe::start_actor_system(2);
        {
            source src{bt.jobs};  // joins the default system
            bt.start(c, src);
            troupe::send<fill>(src, handed);
            bt.wait_blocked();
            src | troupe::finished_msg;
            troupe::stop_actor_system();  // waits for src to finish
        }
        CHECK(troupe::default_actor_system() == nullptr);
        bt.wait_blocked();
        bt.close_and_check(handed);
    });
}

TEST_CASE("user threads blocked on channels and timeouts end on close; then their cluster goes") {
    using namespace std::chrono_literals;
    leak_check no_leaks;
    for (std::size_t n : {1, 2, 4}) {
        CAPTURE(n);
        troupe_test::watchdog w{"cluster shutdown at " + std::to_string(n)};
        channel<boxed> a{0, "a"}, b{1, "b"};
        std::atomic<int> ended{0}, ticks{0};
        {
            troupe::cluster c{n};
            std::vector<troupe::thread> ts;
            for (int k = 0; k < 4; ++k)
                ts.emplace_back(c, [&] {
                    boxed va, vb;
                    bool a_open = true, b_open = true;
                    auto note = [](bool& open) {
                        return [&open](troupe::channel_status s) {
                            open = s != troupe::channel_status::closed;
                        };
                    };
                    while (a_open || b_open)
                        troupe::waituntil(
                            troupe::when(a_open, troupe::on(a.remove_into(va, troupe::report_close),
                                                            note(a_open))) |
                            troupe::when(b_open, troupe::on(b.remove_into(vb, troupe::report_close),
                                                            note(b_open))) |
                            troupe::on(troupe::timeout(5ms), [&] { ticks.fetch_add(1); }));
                    ended.fetch_add(1);
                });
            wait_until([&] { return a.waiting_consumers() == 4 || ticks.load() > 0; });
            a.close();
            b.close();
            for (auto& t : ts) t.join();
        }  // the cluster goes after its threads
        CHECK(ended.load() == 4);
    }
}
