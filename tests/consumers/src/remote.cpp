// A consumer of troupe-remote (every route): each rank publishes a counter,
// sends the next rank's counter a message and asks it for its count, then
// the job stops. Run under mpirun, or alone (a job of one rank). Exits 0
// iff every count is right.
#include <cstdio>

#include <troupe/actors.hpp>
#include <troupe/remote.hpp>

struct bump : troupe::message {
    long by = 0;
};
TROUPE_REMOTE_MESSAGE(bump, "consumer.bump", &bump::by);
struct count : troupe::request<long> {};
TROUPE_REMOTE_MESSAGE(count, "consumer.count");

struct counter : troupe::actor {
    long n = 0;
    troupe::allocation receive(bump& b) {
        n += b.by;
        return troupe::Nodelete;
    }
    troupe::allocation receive(count& q) {
        q.reply(n);
        return troupe::Nodelete;
    }
};

int main(int argc, char** argv) {
    troupe::remote::world w{argc, argv};
    troupe::actor_system sys{2};
    counter mine;
    w.publish("counter", mine);
    w.barrier();
    auto next = w.lookup<counter>((w.rank() + 1) % w.size(), "counter");
    bump b;
    b.by = 3;
    next | b;
    count q;
    const long seen = next.ask(q).get();
    w.barrier();
    mine | troupe::finished_msg;
    w.stop(sys);
    std::printf("rank %d of %d: remote consumer %s\n", w.rank(), w.size(),
                seen == 3 && mine.n == 3 ? "OK" : "WRONG");
    return seen == 3 && mine.n == 3 ? 0 : 1;
}
