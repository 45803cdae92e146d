// The remote-actor program of docs/guide.md ("Remote actors"), complete:
// every rank deposits into the next rank's account, reads the balance back
// with a synchronous ask, then the job stops. Run with: mpirun -np 2 remote_hello
// (tests/remote/meson.build runs it and checks that the guide shows this text).
// --- guide snippet begins
#include <cstdio>
#include <troupe/actors.hpp>
#include <troupe/remote.hpp>

struct deposit : troupe::message {
    long amount = 0;
    deposit() = default;  // the receiving rank default-constructs, then decodes
    explicit deposit(long a) : amount(a) {}
};
TROUPE_REMOTE_MESSAGE(deposit, "bank.deposit", &deposit::amount);
struct balance : troupe::request<long> {};
TROUPE_REMOTE_MESSAGE(balance, "bank.balance");

struct account : troupe::actor {
    long total = 0;
    troupe::allocation receive(deposit& d) {
        total += d.amount;
        return troupe::Nodelete;
    }
    troupe::allocation receive(balance& q) {
        q.reply(total);
        return troupe::Nodelete;
    }
};

int main(int argc, char** argv) {
    troupe::remote::world w{argc, argv};  // MPI_Init_thread, or adopt MPI
    troupe::actor_system sys{2};
    account acc;
    w.publish("account", acc);  // reachable from every rank
    w.barrier();                // every rank has published (nothing about messages)
    auto other = w.lookup<account>((w.rank() + 1) % w.size(), "account");
    other | deposit{10};  // typed like a local send
    balance q;
    long seen = other.ask(q).get();  // sync ask: same sender, same actor, so after the deposit
    w.barrier();                     // every rank has its answer: nobody sends to acc any more
    acc | troupe::finished_msg;      // the poison pill stop waits for
    w.stop(sys);                     // collective: every actor finished, nothing in flight
    std::printf("rank %d: next account held %ld, mine holds %ld\n", w.rank(), seen, acc.total);
    return seen == 10 && acc.total == 10 ? 0 : 1;  // acc is safe to read after stop
}
