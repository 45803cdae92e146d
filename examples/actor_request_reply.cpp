// Request/reply: plain threads (main, a std::thread, a troupe user thread)
// wait for an actor's answers through futures; an exception thrown by the
// behaviour reaches the thread that asked.
#include <cstdio>
#include <stdexcept>
#include <thread>

#include "troupe/actors.hpp"
#include "troupe/thread.hpp"

struct deposit : troupe::message {
    long amount;
    explicit deposit(long a) : amount(a) {}
};
struct balance : troupe::request<long> {};
struct withdraw : troupe::request<long> {
    long amount;
    explicit withdraw(long a) : amount(a) {}
};

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
    troupe::allocation receive(withdraw& w) {
        if (w.amount > total) throw std::runtime_error("insufficient funds");
        total -= w.amount;
        w.reply(total);
        return troupe::Nodelete;
    }
};

int main() {
    troupe::actor_system sys{2};
    account acct;
    deposit hundred{100};

    // An OS thread deposits, then asks for the balance (FIFO: after its deposits).
    std::thread depositor{[&] {
        acct | hundred | hundred;
        balance q;
        std::printf("std::thread sees balance %ld\n", troupe::ask(acct, q).get());
    }};
    depositor.join();

    // A troupe user thread parks on the future; its processor runs others.
    troupe::thread user{[&] {
        withdraw w{50};
        std::printf("user thread withdrew 50, balance %ld\n", troupe::ask(acct, w).get());
    }};
    user.join();

    // The behaviour throws: the exception comes back through the future.
    withdraw too_much{1000};
    try {
        troupe::ask(acct, too_much).get();
    } catch (const std::exception& e) {
        std::printf("main caught: %s\n", e.what());
    }

    balance last;
    std::printf("final balance %ld\n", troupe::ask(acct, last).get());
    acct | troupe::finished_msg;
    sys.stop();
}
