// CAF 0.17 twin of bench/savina/banking.cpp: a teller, A accounts, N
// transfers (debit at the source, credit at the destination, an ack to
// the teller).
namespace savina_banking {

using debit_atom = caf::atom_constant<caf::atom("debit")>;
using credit_atom = caf::atom_constant<caf::atom("credit")>;
using ack_atom = caf::atom_constant<caf::atom("ack")>;
using start_atom = caf::atom_constant<caf::atom("start")>;

struct account_state {
    long balance = 1'000'000;
};

caf::behavior account(caf::stateful_actor<account_state>* self, caf::actor bank, long index,
                      std::vector<long>* balances) {
    return {[=](debit_atom, const caf::actor& to, long amount) {
                self->state.balance -= amount;
                self->send(to, credit_atom::value, amount);
            },
            [=](credit_atom, long amount) {
                self->state.balance += amount;
                self->send(bank, ack_atom::value);
            },
            [=](savina::stop_atom) {
                (*balances)[static_cast<std::size_t>(index)] = self->state.balance;
                self->quit();
            }};
}

struct teller_state {
    std::vector<caf::actor> accounts;
    long done = 0;
};

caf::behavior teller(caf::stateful_actor<teller_state>* self, long n_accounts, long transfers,
                     std::vector<long>* balances, long* done) {
    for (long i = 0; i < n_accounts; ++i)
        self->state.accounts.push_back(
            self->spawn(account, caf::actor_cast<caf::actor>(self), i, balances));
    return {[=](start_atom) {
                savina::lcg rng{42};
                auto& accs = self->state.accounts;
                const long a = static_cast<long>(accs.size());
                for (long i = 0; i < transfers; ++i) {
                    const long src = rng.below(a);
                    long dst = rng.below(a - 1);
                    if (dst >= src) ++dst;
                    const long amount = rng.below(1000) + 1;
                    self->send(accs[static_cast<std::size_t>(src)], debit_atom::value,
                               accs[static_cast<std::size_t>(dst)], amount);
                }
            },
            [=](ack_atom) {
                if (++self->state.done < transfers) return;
                *done = self->state.done;
                for (auto& acc : self->state.accounts) self->send(acc, savina::stop_atom::value);
                self->state.accounts.clear();
                self->quit();
            }};
}

SAVINA_BENCH(banking) {
    const long accounts = info.size("accounts", 1'000, 100);
    const long n = info.size("n", 200'000, 20'000);
    caf::actor_system_config cfg;
    savina::configure(cfg, info);
    caf::actor_system system{cfg};
    std::vector<long> balances(static_cast<std::size_t>(accounts));
    long done = 0;
    bench::stopwatch t;
    caf::anon_send(system.spawn(teller, accounts, n, &balances, &done), start_atom::value);
    system.await_all_actors_done();
    const double s = t.seconds();
    std::uint64_t h = static_cast<std::uint64_t>(done);
    for (long b : balances) h = savina::mix(h, static_cast<std::uint64_t>(b));
    return {s, h};
}

}  // namespace savina_banking
