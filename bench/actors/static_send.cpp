// Static send (Parsons, "Message Sends"): one actor and one message are
// allocated once; the behaviour re-sends the message to its own actor
// N times. Prints ns per send.
#include "troupe_bench.hpp"

namespace {
struct ping_msg : troupe::message {};
struct self_sender : troupe::actor {
    long count = 0, times = 0;
    troupe::allocation receive(ping_msg& m) {
        if (++count == times) return troupe::Finished;
        *this | m;
        return troupe::Nodelete;
    }
};
}  // namespace

int main(int argc, char** argv) {
    const long n = bench::option(argc, argv, "n", 100'000'000);
    const troupe::actor_system_config cfg = bench::config(argc, argv);
    troupe::actor_system sys{cfg};
    ping_msg m;
    self_sender a;
    a.times = n;
    bench::stopwatch t;
    a | m;
    sys.stop();
    const double s = t.seconds();
    bench::result("actor_static_send", "troupe", "ns_per_op", s * 1e9 / static_cast<double>(n),
                  bench::params(static_cast<long>(cfg.workers)));
}
