// Repeat (Parsons, "Executor"): one client scatters two messages to each of
// 100,000 servers, every server replies with the same message, and when all
// replies are in the client starts the next round; Rounds rounds. Stresses
// contention on the client's single mailbox. Prints seconds.
#include <cstdio>
#include <memory>
#include <vector>

#include "troupe_bench.hpp"

namespace {
long Servers = 100000, Rounds = 20;

struct client;
struct int_msg : troupe::message {
    client* reply_to = nullptr;
    int value = 0;
};
struct char_msg : troupe::message {
    client* reply_to = nullptr;
    char value = 0;
};
struct start_msg : troupe::message {};

struct server : troupe::actor {
    troupe::allocation receive(int_msg& m);
    troupe::allocation receive(char_msg& m);
};

struct client : troupe::actor {
    server* servers = nullptr;
    std::vector<int_msg> ints;
    std::vector<char_msg> chars;
    start_msg start;
    long results = 0, rounds = 0;

    void scatter() {
        for (long i = 0; i < Servers; ++i) {
            servers[i] | ints[static_cast<std::size_t>(i)];
            servers[i] | chars[static_cast<std::size_t>(i)];
        }
    }
    troupe::allocation gathered() {
        if (++results < 2 * Servers) return troupe::Nodelete;
        results = 0;
        if (++rounds == Rounds) {
            for (long i = 0; i < Servers; ++i) servers[i] | troupe::finished_msg;
            return troupe::Finished;
        }
        scatter();
        return troupe::Nodelete;
    }
    troupe::allocation receive(start_msg&) {
        scatter();
        return troupe::Nodelete;
    }
    troupe::allocation receive(int_msg&) { return gathered(); }
    troupe::allocation receive(char_msg&) { return gathered(); }
};

troupe::allocation server::receive(int_msg& m) {
    m.value = 7;
    *m.reply_to | m;
    return troupe::Nodelete;
}
troupe::allocation server::receive(char_msg& m) {
    m.value = 'x';
    *m.reply_to | m;
    return troupe::Nodelete;
}
}  // namespace

int main(int argc, char** argv) {
    Servers = bench::option(argc, argv, "servers", 100000);
    Rounds = bench::option(argc, argv, "rounds", 20);
    const troupe::actor_system_config cfg = bench::config(argc, argv);
    troupe::actor_system sys{cfg};
    std::unique_ptr<server[]> servers{new server[static_cast<std::size_t>(Servers)]};
    client c;
    c.servers = servers.get();
    c.ints.resize(static_cast<std::size_t>(Servers));
    c.chars.resize(static_cast<std::size_t>(Servers));
    for (auto& m : c.ints) m.reply_to = &c;
    for (auto& m : c.chars) m.reply_to = &c;
    bench::stopwatch t;
    c | c.start;
    sys.stop();
    const double s = t.seconds();
    bench::result("actor_repeat", "troupe", "seconds", s,
                  bench::params(static_cast<long>(cfg.workers)));
    std::fprintf(stderr, "troupe repeat: %.2f ns/message\n",
                 s * 1e9 / (4.0 * static_cast<double>(Servers) * static_cast<double>(Rounds)));
}
