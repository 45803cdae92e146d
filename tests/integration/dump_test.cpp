// troupe::dump over every module: a consumer blocked on a channel (its
// occupancy and waiters), a waituntil (each clause by kind, name and
// address), and an actor system's section (workers, queued messages, live
// actors by type, asks outstanding).
#include <atomic>
#include <chrono>
#include <sstream>
#include <string>

#include "dump_text.hpp"
#include "fixture.hpp"
#include "leak_check.hpp"
#include "troupe/actors.hpp"
#include "troupe/blocking_lock.hpp"
#include "troupe/channel.hpp"
#include "troupe/dump.hpp"
#include "troupe/future.hpp"
#include "troupe/semaphore.hpp"
#include "troupe/thread.hpp"
#include "troupe/waituntil.hpp"

namespace {

using troupe_test::dump_now;
using troupe_test::has;
using troupe_test::line_of;
using troupe_test::wait_for_line;

template <class T>
std::string address(const T& object) {
    std::ostringstream os;
    os << static_cast<const void*>(&object);
    return os.str();
}

struct note : troupe::message {};
struct keeper : troupe::actor {
    using troupe::actor::actor;
    std::atomic<int> seen{0};
    troupe::allocation receive(note&) {
        seen.fetch_add(1);
        return troupe::Nodelete;
    }
};

// Keeps the question it is asked, to answer it later (from the test).
struct question : troupe::request<int> {};
struct postponer : troupe::actor {
    using troupe::actor::actor;
    std::atomic<question*> kept{nullptr};
    troupe::allocation receive(question& q) {
        q.defer();
        kept.store(&q);
        return troupe::Nodelete;
    }
};

}  // namespace

TEST_CASE("the dump shows channel waits, waituntil waits and actor systems") {
    troupe_test::on_processors(
        [](troupe::cluster& c) {
            troupe_test::leak_check no_leaks;
            troupe::channel<int> jobs{2, "jobs"};
            troupe::channel<int> left{0, "left"}, right{0, "right"};
            troupe::thread_attributes a;
            a.on = &c;
            a.name = "consumer";
            troupe::thread consumer{a, [&] { (void)jobs.remove(); }};
            a.name = "selector";
            int v = 0;
            troupe::thread selector{a, [&] {
                                        troupe::waituntil(troupe::on(left.remove_into(v)) |
                                                          troupe::on(right.remove_into(v)));
                                    }};
            std::string l = wait_for_line("consumer", "waiting for");
            CHECK(has(l, "on channel remove 'jobs'"));
            CHECK(has(l, "0/2 elements, 0 waiting producer(s), 1 waiting consumer(s)"));
            l = wait_for_line("selector", "waiting for");
            CHECK(has(l, "on waituntil"));
            // Each clause by kind, name and address, in written order.
            CHECK(has(l, "2 clause(s): channel remove 'left' (" + address(left) +
                             "), channel remove 'right' (" + address(right) + ")"));

            // Every other kind of clause, and one disabled by its guard.
            troupe::blocking_lock guard{"guard"};
            troupe::semaphore tokens{0, "tokens"};
            troupe::future<int> answer;
            guard.lock();
            int three = 3;
            a.name = "mixed-selector";
            troupe::thread mixed{
                a, [&] {
                    troupe::waituntil(troupe::on(guard) | troupe::on(tokens) | troupe::on(answer) |
                                      troupe::on(troupe::timeout(std::chrono::hours(1))) |
                                      troupe::when(false, troupe::on(jobs.insert_from(three))));
                }};
            l = wait_for_line("mixed-selector", "waiting for");
            CHECK(has(l, "5 clause(s): blocking_lock 'guard' (" + address(guard) +
                             "), semaphore 'tokens' (" + address(tokens) + "), future (" +
                             address(answer) + "), timeout (0x"));
            CHECK(has(l, "), channel insert 'jobs' (" + address(jobs) + ") (disabled)"));
            answer.fulfil(1);
            mixed.join();
            guard.unlock();

            {
                troupe::actor_system sys{2};
                keeper k{sys};
                troupe::send<note>(k);
                troupe_test::wait_until([&] { return k.seen.load() == 1; });
                // The receive ran; its batch may still be ending (a mailbox
                // in a batch is not inspected: its actors are not named
                // yet), so look until the dump names the keeper.
                std::string d;
                troupe_test::wait_until([&] {
                    d = dump_now();
                    return has(d, "keeper: 1");
                });
                CHECK(has(d, "actor system"));
                CHECK(has(d, "2 worker(s)"));
                CHECK(has(d, "1 live actor(s)"));
                CHECK(has(d, "keeper: 1"));
                CHECK(has(d, "asks outstanding: 0"));
                // An ask counts from its send until its answer.
                postponer p{sys};
                question q;
                auto& answer = troupe::ask(p, q);
                troupe_test::wait_until([&] { return p.kept.load() != nullptr; });
                CHECK(has(dump_now(), "asks outstanding: 1"));
                p.kept.load()->reply(42);
                CHECK(answer.get() == 42);
                CHECK(has(dump_now(), "asks outstanding: 0"));
                // A request asked and destroyed unanswered stops counting.
                {
                    question dropped;
                    p.kept.store(nullptr);
                    (void)troupe::ask(p, dropped);
                    troupe_test::wait_until([&] { return p.kept.load() != nullptr; });
                    CHECK(has(dump_now(), "asks outstanding: 1"));
                }
                CHECK(has(dump_now(), "asks outstanding: 0"));
                p | troupe::finished_msg;
                k | troupe::finished_msg;
                sys.stop();
            }
            CHECK_FALSE(has(dump_now(), "actor system"));  // removed with its system
            jobs << 1;
            left << 2;
        },
        {2});
}
