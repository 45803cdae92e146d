// Dynamic send (Parsons, "Message Sends"): each receive allocates a new
// actor and a new message, sends it, and returns Delete (the message is
// Delete too), N times. A long-lived actor stays alive during the run, as
// in the CAF twin. Prints ns per send (allocation + send + free).
#include "troupe_bench.hpp"

namespace {
long Times = 0;

struct chain_msg : troupe::message {
    long count;
    explicit chain_msg(long c) : message(troupe::Delete), count(c) {}
};
struct chain_actor : troupe::actor {
    troupe::allocation receive(chain_msg& m) {
        if (m.count >= Times) return troupe::Delete;
        auto* next = new chain_actor;
        auto* msg = new chain_msg{m.count + 1};
        *next | *msg;
        return troupe::Delete;
    }
};
struct keeper : troupe::actor {};
}  // namespace

int main(int argc, char** argv) {
    Times = bench::option(argc, argv, "n", 20'000'000);
    const troupe::actor_system_config cfg = bench::config(argc, argv);
    troupe::actor_system sys{cfg};
    keeper k;
    bench::stopwatch t;
    auto* first = new chain_actor;
    auto* msg = new chain_msg{1};
    *first | *msg;
    k | troupe::finished_msg;
    sys.stop();
    const double s = t.seconds();
    bench::result("actor_dynamic_send", "troupe", "ns_per_op", s * 1e9 / static_cast<double>(Times),
                  bench::params(static_cast<long>(cfg.workers)));
}
