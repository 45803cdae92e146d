// Everything in one process: a shop.
//
//   customers (user threads) --orders channel--> cashiers (user threads)
//   cashiers: TROUPE_MUTEX(stock, till) to sell, then `ledger | sale` (actor)
//   main (an OS thread): closes the channel, asks the ledger actor for its
//   totals and checks them against the stock and the till.
//
// Each module does what it is good at: the channel carries work and ends it
// with close(); the mutex statement keeps two shared records consistent
// without a lock-order convention; the actor serialises the bookkeeping
// without any lock; request/reply lets a plain thread wait for its answer.
#include <cstdio>
#include <vector>

#include <troupe/actors.hpp>
#include <troupe/blocking_lock.hpp>
#include <troupe/channel.hpp>
#include <troupe/cluster.hpp>
#include <troupe/mutex.hpp>
#include <troupe/sout.hpp>
#include <troupe/thread.hpp>

namespace {

struct order {
    int customer;
    int item;
    int quantity;
};

constexpr int items = 4;
constexpr long price[items] = {3, 5, 7, 11};

struct stock_t {
    troupe::blocking_lock lock{"stock"};
    long on_hand[items] = {250, 250, 250, 250};
};
struct till_t {
    troupe::blocking_lock lock{"till"};
    long cash = 0;
};

// One message per sale, sent from the heap: the executor deletes it after
// the ledger's receive (the cashier does not wait for the bookkeeping).
struct sale : troupe::message {
    int item;
    long quantity;
    sale(int i, long q) : troupe::message(troupe::Delete), item(i), quantity(q) {}
};
struct totals_query : troupe::request<std::vector<long>> {};

struct ledger : troupe::actor {
    std::vector<long> sold = std::vector<long>(items, 0);
    troupe::allocation receive(sale& s) {
        sold[s.item] += s.quantity;  // only this actor touches `sold`: no lock
        return troupe::Nodelete;
    }
    troupe::allocation receive(totals_query& q) {
        q.reply(sold);
        return troupe::Nodelete;
    }
};

}  // namespace

int main() {
    troupe::cluster shop_floor{2};
    troupe::actor_system bookkeeping{1};
    ledger books;
    stock_t stock;
    till_t till;
    troupe::channel<order> orders{16, "orders"};

    std::vector<troupe::thread> customers;
    for (int c = 0; c < 6; ++c)
        customers.emplace_back(shop_floor, [&, c] {
            for (int k = 0; k < 100; ++k) orders << order{c, (c + k) % items, 1 + k % 3};
        });

    long refused = 0;  // written only inside TROUPE_MUTEX(stock, till)
    std::vector<troupe::thread> cashiers;
    for (int k = 0; k < 3; ++k)
        cashiers.emplace_back(shop_floor, [&] {
            for (order o : orders) {  // ends when closed and drained
                bool sold = false;
                // Two records, one scope: locked in address order whatever
                // order a cashier names them in, so no deadlock.
                TROUPE_MUTEX(till.lock, stock.lock) {
                    if (stock.on_hand[o.item] >= o.quantity) {
                        stock.on_hand[o.item] -= o.quantity;
                        till.cash += o.quantity * price[o.item];
                        sold = true;
                    } else {
                        ++refused;
                    }
                }
                if (sold) books | *new sale{o.item, o.quantity};
            }
        });

    for (auto& c : customers) c.join();
    orders.close();  // no more customers: cashiers finish the queue and leave
    for (auto& c : cashiers) c.join();

    totals_query q;
    std::vector<long> sold = troupe::ask(books, q).get();  // main parks on the reply
    long revenue = 0, left = 0;
    for (int i = 0; i < items; ++i) {
        revenue += sold[i] * price[i];
        left += stock.on_hand[i];
        troupe::sout.println("item ", i, ": sold ", sold[i], ", ", stock.on_hand[i], " left");
    }
    troupe::sout.println(
        "till ", till.cash, ", ledger says ", revenue, ", orders refused ", refused,
        till.cash == revenue && left + sold[0] + sold[1] + sold[2] + sold[3] == 1000
            ? " (consistent)"
            : " (INCONSISTENT)");
    books | troupe::finished_msg;
    bookkeeping.stop();
    return till.cash == revenue ? 0 : 1;
}
