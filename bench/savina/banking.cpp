// Savina "Banking": a teller makes N transfers of random amounts between
// random pairs of A accounts (a deterministic generator): the source
// account debits and passes the transfer on, the destination credits and
// tells the teller; once all N are done the teller closes every account.
// Transfers carry data and many are in flight: value sends (the runtime
// frees them). Check: a checksum of the final balances, in account order,
// and the transfers completed.
#include <vector>

#include "savina.hpp"

namespace savina_banking {

struct account;
struct teller;
struct debit : troupe::message {
    account* to;
    long amount;
    debit(account* t, long a) : to(t), amount(a) {}
};
struct credit : troupe::message {
    long amount;
    explicit credit(long a) : amount(a) {}
};
struct completed : troupe::message {};
struct start : troupe::message {};

struct account : troupe::actor {
    teller* bank = nullptr;
    long balance = 0;
    troupe::allocation receive(debit& d);
    troupe::allocation receive(credit& c);
};

struct teller : troupe::actor {
    std::vector<account>* accounts = nullptr;
    long transfers = 0, done = 0;
    completed ack;  // carries nothing: every account answers with it
    troupe::allocation receive(start&) {
        savina::lcg rng{42};
        const long a = static_cast<long>(accounts->size());
        for (long i = 0; i < transfers; ++i) {
            const long src = rng.below(a);
            long dst = rng.below(a - 1);
            if (dst >= src) ++dst;
            const long amount = rng.below(1000) + 1;
            troupe::send<debit>((*accounts)[static_cast<std::size_t>(src)],
                                &(*accounts)[static_cast<std::size_t>(dst)], amount);
        }
        return troupe::Nodelete;
    }
    troupe::allocation receive(completed&) {
        if (++done < transfers) return troupe::Nodelete;
        for (auto& acc : *accounts) acc | troupe::finished_msg;
        return troupe::Finished;
    }
};

troupe::allocation account::receive(debit& d) {
    balance -= d.amount;
    troupe::send<credit>(*d.to, d.amount);
    return troupe::Nodelete;
}

troupe::allocation account::receive(credit& c) {
    balance += c.amount;
    *bank | bank->ack;
    return troupe::Nodelete;
}

SAVINA_BENCH(banking) {
    const long accounts = info.size("accounts", 1'000, 100);
    const long n = info.size("n", 200'000, 20'000);
    troupe::actor_system sys{savina::config(info)};
    bench::stopwatch t;
    std::vector<account> all(static_cast<std::size_t>(accounts));
    teller bank;
    bank.accounts = &all;
    bank.transfers = n;
    for (auto& acc : all) {
        acc.bank = &bank;
        acc.balance = 1'000'000;
    }
    start go;
    bank | go;
    sys.stop();
    const double s = t.seconds();
    std::uint64_t h = static_cast<std::uint64_t>(bank.done);
    for (auto& acc : all) h = savina::mix(h, static_cast<std::uint64_t>(acc.balance));
    return {s, h};
}

}  // namespace savina_banking
