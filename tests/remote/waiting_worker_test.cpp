// Remote messages received while an actor worker's behaviour waits: the
// waiting thread's park spin runs the progress pass, and what that pass
// delivers goes straight to the receivers' mailboxes, not into the waiting
// worker's batch stage (where the sender's later messages, delivered by the
// engine thread, would overtake it, and from where a message the waiting
// behaviour itself needs would not go out until it stopped waiting).
// Every rank streams numbered tells to the next rank's checker while that
// rank's waiter is inside a behaviour asking a third actor again and again.
#include <atomic>

#include "remote_fixture.hpp"
#include "troupe/timeout.hpp"
#include "troupe/waituntil.hpp"

using namespace std::chrono_literals;
namespace remote = troupe::remote;

struct numbered : troupe::message {
    long seq = 0;
};
TROUPE_REMOTE_MESSAGE(numbered, "test.waiting.numbered", &numbered::seq);
struct echo : troupe::request<long> {
    long x = 0;
};
TROUPE_REMOTE_MESSAGE(echo, "test.waiting.echo", &echo::x);
struct start : troupe::message {};

namespace {

constexpr long tells = 6000;

struct checker : troupe::actor {
    long next = 0, received = 0, out_of_order = 0;
    std::atomic<bool> all_in{false};
    troupe::future<> done;
    troupe::allocation receive(numbered& m) {
        if (m.seq != next) ++out_of_order;
        next = m.seq + 1;
        if (++received == tells) {
            all_in.store(true, std::memory_order_release);
            done.fulfil();
        }
        return troupe::Nodelete;
    }
};

struct server : troupe::actor {
    troupe::allocation receive(echo& q) {
        q.reply(q.x + 1);
        return troupe::Nodelete;
    }
};

// Asks the next rank's server until this rank's checker has every tell (or
// a bound): each get() parks this worker's kernel thread, whose park spin
// runs progress passes that deliver the tells arriving meanwhile.
struct waiter : troupe::actor {
    remote::remote_ref<server> to;
    checker* mine = nullptr;
    long asks = 0, wrong = 0;
    troupe::allocation receive(start&) {
        for (long i = 0; i < 200000 && !mine->all_in.load(std::memory_order_acquire); ++i) {
            echo q;
            q.x = i;
            if (to.ask(q).get() != i + 1) ++wrong;
            ++asks;
        }
        return troupe::Nodelete;
    }
};

}  // namespace

TEST_CASE("tells received while a behaviour waits keep their order and reach their actor") {
    remote::world& w = remote_test::world();
    remote_test::clear_network_errors();
    bool arrived = false;
    long received = 0, out_of_order = 0;
    {
        troupe::actor_system_config cfg;
        cfg.workers = 2;
        cfg.threads = troupe::worker_threads::kernel;  // the park spin of an OS thread
        troupe::actor_system sys{cfg};
        checker c;
        server s;
        waiter wt;
        wt.mine = &c;
        w.publish("waiting.checker." + std::to_string(w.rank()), c);
        w.publish("waiting.server." + std::to_string(w.rank()), s);
        w.barrier();
        const int n = (w.rank() + 1) % w.size();
        auto next_checker = w.lookup<checker>(n, "waiting.checker." + std::to_string(n));
        wt.to = w.lookup<server>(n, "waiting.server." + std::to_string(n));
        start go;
        wt | go;
        w.barrier();  // every waiter is asking
        // In bursts, paced by a round trip each, so that they arrive over
        // many passes while the next rank's waiter waits.
        auto pace = w.lookup<server>(n, "waiting.server." + std::to_string(n));
        numbered m;
        for (long i = 0; i < tells; ++i) {
            m.seq = i;
            next_checker | m;
            if (i % 100 == 99) {
                echo e;
                CHECK(pace.ask(e).get() == 1);
            }
        }
        // Bounded: with the tells held in the waiting worker's stage the
        // checker would wait as long as the waiter keeps asking.
        troupe::waituntil(troupe::on(c.done, [&] { arrived = true; }) |
                          troupe::on(troupe::timeout(20s), [] {}));
        CHECK(arrived);
        w.barrier();  // every rank's waiter has stopped asking
        c | troupe::finished_msg;
        s | troupe::finished_msg;
        wt | troupe::finished_msg;
        w.stop(sys);
        CHECK(wt.wrong == 0);
        MESSAGE("rank " << w.rank() << ": the waiter asked " << wt.asks << " times");
        received = c.received;
        out_of_order = c.out_of_order;
    }
    CHECK(received == tells);
    CHECK(out_of_order == 0);
    for (auto& e : remote_test::network_errors()) FAIL_CHECK(e);
}
