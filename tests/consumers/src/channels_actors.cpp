// A consumer of troupe channels and actors (the pkg-config and CMake
// routes): a user thread feeds a channel, main forwards each value to an
// actor, then asks the actor for its total. Exits 0 iff the total is right.
#include <cstdio>

#include <troupe/actors.hpp>
#include <troupe/channels.hpp>
#include <troupe/core.hpp>

struct add : troupe::message {
    long n = 0;
};
struct total : troupe::request<long> {};

struct summer : troupe::actor {
    long sum = 0;
    troupe::allocation receive(add& m) {
        sum += m.n;
        return troupe::Nodelete;
    }
    troupe::allocation receive(total& q) {
        q.reply(sum);
        return troupe::Nodelete;
    }
};

int main() {
    troupe::actor_system sys{2};
    summer s;
    troupe::channel<int> ch{4};
    troupe::thread producer{[&] {
        for (int i = 1; i <= 100; ++i) ch << i;
        ch.close();
    }};
    add msgs[100];
    int k = 0;
    for (int v : ch) {
        msgs[k].n = v;
        s | msgs[k++];
    }
    producer.join();
    total q;
    long got = troupe::ask(s, q).get();  // FIFO: after every add
    s | troupe::finished_msg;
    sys.stop();
    std::printf("channels+actors consumer: total %ld\n", got);
    return got == 5050 ? 0 : 1;
}
