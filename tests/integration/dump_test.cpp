// troupe::dump over every module: a consumer blocked on a channel (its
// occupancy and waiters), a waituntil (its clauses), and an actor system's
// section (workers, queued messages, live actors by type).
#include <atomic>
#include <sstream>
#include <string>

#include "fixture.hpp"
#include "leak_check.hpp"
#include "troupe/actors.hpp"
#include "troupe/channel.hpp"
#include "troupe/dump.hpp"
#include "troupe/thread.hpp"
#include "troupe/waituntil.hpp"

namespace {

std::string dump_now() {
    std::ostringstream os;
    troupe::dump(os);
    return os.str();
}

bool has(const std::string& text, const std::string& what) {
    return text.find(what) != std::string::npos;
}

std::string line_of(const std::string& dump, const std::string& name) {
    std::istringstream in(dump);
    for (std::string l; std::getline(in, l);)
        if (has(l, "'" + name + "'") && has(l, ": ")) return l;
    return "";
}

std::string wait_for_line(const std::string& name, const std::string& what) {
    std::string l;
    troupe_test::wait_until([&] {
        l = line_of(dump_now(), name);
        return has(l, what);
    });
    return l;
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
            CHECK(has(l, "2 clause(s)"));

            {
                troupe::actor_system sys{2};
                keeper k{sys};
                troupe::send<note>(k);
                troupe_test::wait_until([&] { return k.seen.load() == 1; });
                const std::string d = dump_now();
                CHECK(has(d, "actor system"));
                CHECK(has(d, "2 worker(s)"));
                CHECK(has(d, "1 live actor(s)"));
                CHECK(has(d, "keeper: 1"));
                k | troupe::finished_msg;
                sys.stop();
            }
            CHECK_FALSE(has(dump_now(), "actor system"));  // removed with its system
            jobs << 1;
            left << 2;
        },
        {2});
}
