// A program mixing modules: user threads pass numbers through a local
// channel; consumers wait in one waituntil for either the next number or the
// reply to their outstanding remote ask (with a timeout clause as a guard).
#include "remote_fixture.hpp"
#include "troupe/channel.hpp"
#include "troupe/cluster.hpp"
#include "troupe/thread.hpp"
#include "troupe/timeout.hpp"
#include "troupe/waituntil.hpp"

using namespace std::chrono_literals;
namespace remote = troupe::remote;

struct cube : troupe::request<long> {
    long x = 0;
};
TROUPE_REMOTE_MESSAGE(cube, "test.mixed.cube", &cube::x);

struct calculator : troupe::actor {
    long served = 0;
    troupe::allocation receive(cube& q) {
        ++served;
        q.reply(q.x * q.x * q.x);
        return troupe::Nodelete;
    }
};

TEST_CASE("channels and waituntil with remote asks") {
    auto& w = remote_test::world();
    troupe::actor_system sys{1};
    calculator calc;
    w.publish("mixed.calc", calc);
    w.barrier();
    auto far = w.lookup<calculator>((w.rank() + 1) % w.size(), "mixed.calc");
    constexpr int consumers = 3, numbers = 300;
    std::atomic<long> total{0};
    std::atomic<int> timeouts{0};
    {
        troupe::cluster c{2};
        troupe::channel<long> ch{4, "numbers"};
        troupe::thread producer{c, [&] {
                                    for (long n = 1; n <= numbers; ++n) ch.insert(n);
                                    for (int i = 0; i < consumers; ++i)
                                        ch.insert(-1);  // one end mark per consumer
                                }};
        std::vector<troupe::thread> ts;
        for (int i = 0; i < consumers; ++i)
            ts.emplace_back(c, [&] {
                cube q;
                bool asking = false, ended = false;
                long v = 0, sum = 0;
                while (!ended || asking) {
                    troupe::waituntil(troupe::when(!asking && !ended, troupe::on(ch.remove_into(v),
                                                                                 [&] {
                                                                                     if (v < 0) {
                                                                                         ended =
                                                                                             true;
                                                                                         return;
                                                                                     }
                                                                                     q.reset();
                                                                                     q.x = v;
                                                                                     far.ask(q);
                                                                                     asking = true;
                                                                                 })) |
                                      troupe::when(asking, troupe::on(q.result(),
                                                                      [&] {
                                                                          sum += q.result().get();
                                                                          asking = false;
                                                                      })) |
                                      troupe::on(troupe::timeout(30s), [&] { ++timeouts; }));
                }
                total += sum;
            });
        producer.join();
        for (auto& t : ts) t.join();
    }
    long want = 0;
    for (long n = 1; n <= numbers; ++n) want += n * n * n;
    CHECK(total == want);
    CHECK(timeouts == 0);
    w.barrier();  // every rank's asks are answered
    calc | troupe::finished_msg;
    w.stop(sys);
    CHECK(remote_test::sum_over_ranks(calc.served) == long{w.size()} * numbers);
}
