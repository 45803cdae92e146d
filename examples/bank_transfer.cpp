// Transfers among bank accounts, each guarded by its own std::mutex, with
// the mutex statement: two accounts for a transfer, a run-time set for a
// payment split among several, every account for an audit. Threads name the
// accounts in whatever order the transfer has, yet never deadlock: the
// statement always locks in address order. Needs only the mutexstmt headers
// (std::mutex, std::thread); with troupe core, TROUPE_MUTEX(troupe::sout)
// keeps printed lines whole the way `out` does here.
#include <array>
#include <cstdio>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include <troupe/mutex.hpp>

namespace {

struct account {
    std::mutex m;
    long balance = 1000;
};

constexpr int accounts = 8;
constexpr int tellers = 4;
constexpr int operations = 20000;

std::array<account, accounts> bank;
std::mutex out;  // keeps printed lines whole

// Moves `amount` from `from` to `to` if `from` can pay. `from` may be `to`:
// a lock named twice is taken once.
bool transfer(account& from, account& to, long amount) {
    TROUPE_MUTEX(from.m, to.m) {
        if (from.balance < amount) return false;  // unlocks on the way out
        from.balance -= amount;
        to.balance += amount;
    }
    return true;
}

// `payer` pays `amount` to each of `payees`, all or nothing: a set of
// accounts known only at run time, locked as one.
bool split_payment(account& payer, const std::vector<account*>& payees, long amount) {
    std::vector<std::mutex*> locks{&payer.m};
    for (account* a : payees) locks.push_back(&a->m);
    TROUPE_MUTEX(locks) {  // sorts `locks` in place; duplicates taken once
        if (payer.balance < amount * long(payees.size())) return false;
        for (account* a : payees) {
            payer.balance -= amount;
            a->balance += amount;
        }
    }
    return true;
}

// The total over all accounts, read while holding every account at once.
long audit() {
    std::vector<std::mutex*> all;
    for (account& a : bank) all.push_back(&a.m);
    return troupe::mutex(all)([] {
        long sum = 0;
        for (const account& a : bank) sum += a.balance;
        return sum;
    });
}

void teller(int id) {
    std::mt19937 rng{unsigned(id)};
    int done = 0, refused = 0;
    for (int i = 0; i < operations; ++i) {
        account& from = bank[rng() % accounts];
        const long amount = 1 + long(rng() % 50);
        bool ok = true;
        if (i % 10 == 0) {
            std::vector<account*> payees;
            for (unsigned k = 0; k < 1 + rng() % 4; ++k) payees.push_back(&bank[rng() % accounts]);
            ok = split_payment(from, payees, amount / 4 + 1);
        } else {
            ok = transfer(from, bank[rng() % accounts], amount);
        }
        (ok ? done : refused) += 1;
        if (i % 10000 == 9999) {
            const long total = audit();
            TROUPE_MUTEX(out) {
                std::printf("teller %d: %5d operations, audit total %ld\n", id, i + 1, total);
            }
        }
    }
    TROUPE_MUTEX(out) {
        std::printf("teller %d finished: %d done, %d refused\n", id, done, refused);
    }
}

}  // namespace

int main() {
    const long before = audit();
    {
        std::vector<std::jthread> ts;
        for (int id = 0; id < tellers; ++id) ts.emplace_back(teller, id);
    }
    const long after = audit();
    for (int i = 0; i < accounts; ++i)
        std::printf("account %d: %ld\n", i, bank[std::size_t(i)].balance);
    std::printf("total before %ld, after %ld: %s\n", before, after,
                before == after ? "money conserved" : "MONEY LOST");
    return before == after ? 0 : 1;
}
