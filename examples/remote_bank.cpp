// Remote actors: bank accounts spread over MPI ranks, transfers as
// request/reply across ranks. Run with: mpirun -np 2 remote_bank
//
// Every rank owns a few account actors and publishes them by name. Each
// rank's teller (its main thread) then moves money between random accounts
// anywhere in the job: a withdraw request to the source (the reply says
// whether the funds were there), then a deposit request to the destination.
// Money is only moved, never made, so the audit at the end must find the
// total the bank started with. A bad request shows how a behaviour's
// exception reaches the asker on another rank.
#include <cstdio>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "troupe/actors.hpp"
#include "troupe/remote.hpp"

struct withdraw : troupe::request<bool> {
    long cents = 0;
};
struct deposit : troupe::request<> {
    long cents = 0;
};
struct balance : troupe::request<long> {};

// Registered once, with names every rank agrees on, and the members to send.
TROUPE_REMOTE_MESSAGE(withdraw, "bank.withdraw", &withdraw::cents);
TROUPE_REMOTE_MESSAGE(deposit, "bank.deposit", &deposit::cents);
TROUPE_REMOTE_MESSAGE(balance, "bank.balance");

struct account : troupe::actor {
    long cents = 10'000;
    troupe::allocation receive(withdraw& w) {
        if (w.cents <= 0)
            throw std::invalid_argument("withdrawal of " + std::to_string(w.cents) + " cents");
        const bool ok = w.cents <= cents;
        if (ok) cents -= w.cents;
        w.reply(ok);
        return troupe::Nodelete;
    }
    troupe::allocation receive(deposit& d) {
        cents += d.cents;
        d.reply();
        return troupe::Nodelete;
    }
    troupe::allocation receive(balance& b) {
        b.reply(cents);
        return troupe::Nodelete;
    }
};

constexpr int accounts_per_rank = 4;
constexpr int transfers_per_teller = 200;

static std::string name_of(int rank, int i) {
    return "account." + std::to_string(rank) + "." + std::to_string(i);
}

int main(int argc, char** argv) {
    troupe::remote::world world{argc, argv};
    troupe::actor_system sys{2};

    std::vector<std::unique_ptr<account>> mine;
    for (int i = 0; i < accounts_per_rank; ++i) {
        mine.push_back(std::make_unique<account>());
        world.publish(name_of(world.rank(), i), *mine.back());
    }
    world.barrier();  // every rank has published before anyone looks up

    std::vector<troupe::remote::remote_ref<account>> all;
    for (int r = 0; r < world.size(); ++r)
        for (int i = 0; i < accounts_per_rank; ++i)
            all.push_back(world.lookup<account>(r, name_of(r, i)));

    // The teller: transfers between random accounts of any rank.
    std::mt19937 rng(unsigned(world.rank()) + 1);
    int done = 0, refused = 0;
    for (int t = 0; t < transfers_per_teller; ++t) {
        auto& from = all[rng() % all.size()];
        auto& to = all[rng() % all.size()];
        withdraw w;
        w.cents = long(rng() % 3000) + 1;
        if (!from.ask(w).get()) {  // parks until the owner's rank replies
            ++refused;
            continue;
        }
        deposit d;
        d.cents = w.cents;
        to.ask(d).get();
        ++done;
    }
    // A behaviour's exception crosses ranks to the asker.
    withdraw bad;
    bad.cents = -5;
    try {
        all.back().ask(bad).get();
    } catch (const troupe::remote::remote_exception& e) {
        if (world.rank() == 0)
            std::printf("rank 0: a bad request failed on rank %d with %s: %s\n", e.rank(),
                        e.type_name().c_str(), e.message().c_str());
    }
    std::printf("rank %d: teller made %d transfers (%d refused for lack of funds)\n", world.rank(),
                done, refused);
    world.barrier();  // every teller is done

    if (world.rank() == 0) {  // the audit: money moved, none made or lost
        long total = 0;
        for (auto& a : all) {
            balance b;
            total += a.ask(b).get();
        }
        const long expected = 10'000L * accounts_per_rank * world.size();
        std::printf("rank 0: audit over %zu accounts on %d ranks: %ld cents (%s)\n", all.size(),
                    world.size(), total, total == expected ? "balanced" : "UNBALANCED");
        if (total != expected) return 1;
    }
    world.barrier();  // the audit is over
    for (auto& a : mine) *a | troupe::finished_msg;
    world.stop(sys);  // collective: every rank's accounts finished, nothing in flight
    return 0;
}
