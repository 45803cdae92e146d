// The shop (examples/shop.cpp) as a checked program, at 1, 2 and 4
// processors: customers (user threads) post orders on two channels, regular
// and express; cashiers (user threads) take them with a waituntil that
// prefers express orders and ends when both channels are closed and
// drained; each sale updates two records under one TROUPE_MUTEX (named in
// either order) and is posted to a ledger actor; main (an OS thread) closes
// the channels, asks the ledger for its books and checks them exactly:
//  - every order is served exactly once, and a cashier sees each customer's
//    orders in the order they were placed (channel FIFO);
//  - stock and money are conserved: ledger + shelf = initial stock per
//    item, the till holds exactly the ledger's revenue, sales + refusals =
//    orders;
//  - the ledger received each cashier's sales in the order they were sent
//    (per-sender FIFO of a mailbox);
//  - no deadlock (watchdog) and no heap block left behind (leak_check).
#include <atomic>
#include <cstddef>
#include <vector>

#include "fixture.hpp"
#include "leak_check.hpp"
#include "troupe/actors.hpp"
#include "troupe/blocking_lock.hpp"
#include "troupe/channel.hpp"
#include "troupe/mutex.hpp"
#include "troupe/thread.hpp"
#include "troupe/waituntil.hpp"

using troupe::channel_status;
using troupe_test::scaled;

namespace {

constexpr int items = 4;
constexpr long price[items] = {3, 5, 7, 11};
constexpr int customers = 6;
constexpr int cashiers = 3;

struct order {
    int customer = 0;
    int seq = 0;  // the customer's own numbering, from 0
    int item = 0;
    long quantity = 0;
};

int item_of(int customer, int k) { return (customer + k) % items; }
long quantity_of(int k) { return 1 + k % 3; }

struct stock_t {
    troupe::blocking_lock lock{"stock"};
    long on_hand[items] = {};
};
struct till_t {
    troupe::blocking_lock lock{"till"};
    long cash = 0;
    long refused = 0;  // orders the stock could not serve
};

// One per sale, from the heap: the executor deletes it after the receive.
struct sale : troupe::message {
    int cashier;
    long seq;  // the cashier's own numbering of its sales, from 0
    int item;
    long quantity;
    sale(int c, long s, int i, long q)
        : troupe::message(troupe::Delete), cashier(c), seq(s), item(i), quantity(q) {}
};

struct books {
    std::vector<long> sold;  // units per item
    long sales = 0;
    long out_of_order = 0;  // sales received out of their cashier's order
};
struct books_query : troupe::request<books> {};

struct ledger : troupe::actor {
    explicit ledger(troupe::actor_system& s) : troupe::actor(s) {}
    books b{std::vector<long>(items, 0)};
    std::vector<long> next_seq = std::vector<long>(cashiers, 0);
    troupe::allocation receive(sale& s) {
        if (s.seq != next_seq[s.cashier]) ++b.out_of_order;
        next_seq[s.cashier] = s.seq + 1;
        b.sold[s.item] += s.quantity;
        ++b.sales;
        return troupe::Nodelete;
    }
    troupe::allocation receive(books_query& q) {
        q.reply(b);
        return troupe::Nodelete;
    }
};

// One day of trading on cluster `c`; `capacity` sizes both channels.
void trade(troupe::cluster& c, std::size_t workers, std::size_t capacity) {
    troupe_test::leak_check no_leaks;
    const int per_customer = scaled(300, 5);
    const int total = customers * per_customer;

    // Stock for two thirds of the demand, so some orders are refused.
    stock_t stock;
    long initial[items] = {};
    for (int cu = 0; cu < customers; ++cu)
        for (int k = 0; k < per_customer; ++k) initial[item_of(cu, k)] += quantity_of(k);
    for (int i = 0; i < items; ++i) stock.on_hand[i] = initial[i] = initial[i] * 2 / 3;
    till_t till;

    troupe::actor_system sys{workers};
    ledger book_keeper{sys};
    troupe::channel<order> regular{capacity, "regular orders"};
    troupe::channel<order> express{capacity, "express orders"};
    std::vector<std::atomic<int>> served(static_cast<std::size_t>(total));
    std::atomic<int> fifo_violations{0};

    std::vector<troupe::thread> threads;
    for (int cu = 0; cu < customers; ++cu)
        threads.emplace_back(c, [&, cu] {
            auto& ch = cu % 3 == 0 ? express : regular;  // every third customer is express
            for (int k = 0; k < per_customer; ++k)
                ch << order{cu, k, item_of(cu, k), quantity_of(k)};
        });
    for (int ca = 0; ca < cashiers; ++ca)
        threads.emplace_back(c, [&, ca] {
            std::vector<int> last(customers, -1);  // per customer: FIFO check
            long sales = 0;
            bool regular_open = true, express_open = true;
            while (regular_open || express_open) {
                order o;
                bool got = false;
                auto take = [&](bool& open) {
                    return [&](channel_status s) {
                        if (s == channel_status::closed)
                            open = false;  // closed and drained: stop selecting it
                        else got = true;
                    };
                };
                // Express first: written order is the priority.
                troupe::waituntil(
                    troupe::when(express_open,
                                 troupe::on(express.remove_into(o, troupe::report_close),
                                            take(express_open))) |
                    troupe::when(regular_open,
                                 troupe::on(regular.remove_into(o, troupe::report_close),
                                            take(regular_open))));
                if (!got) continue;
                served[static_cast<std::size_t>(o.customer * per_customer + o.seq)].fetch_add(1);
                if (o.seq <= last[o.customer]) fifo_violations.fetch_add(1);
                last[o.customer] = o.seq;
                bool sold = false;
                // Named in a different order by different cashiers: the
                // statement orders them itself, so no deadlock.
                auto sell = [&] {
                    if (stock.on_hand[o.item] >= o.quantity) {
                        stock.on_hand[o.item] -= o.quantity;
                        till.cash += o.quantity * price[o.item];
                        sold = true;
                    } else {
                        ++till.refused;
                    }
                };
                if (ca % 2 == 0) {
                    TROUPE_MUTEX(stock.lock, till.lock) { sell(); }
                } else {
                    TROUPE_MUTEX(till.lock, stock.lock) { sell(); }
                }
                if (sold) book_keeper | *new sale{ca, sales++, o.item, o.quantity};
            }
        });
    for (int cu = 0; cu < customers; ++cu) threads[static_cast<std::size_t>(cu)].join();
    regular.close();  // no more customers: cashiers drain both channels and leave
    express.close();
    for (auto& t : threads)
        if (t.joinable()) t.join();  // the customers are joined already

    books_query q;
    const books b = troupe::ask(book_keeper, q).get();  // main parks on the reply
    for (int i = 0; i < total; ++i) CHECK(served[static_cast<std::size_t>(i)].load() == 1);
    CHECK(fifo_violations.load() == 0);
    CHECK(b.out_of_order == 0);
    long revenue = 0;
    for (int i = 0; i < items; ++i) {
        CAPTURE(i);
        CHECK(stock.on_hand[i] >= 0);
        CHECK(b.sold[static_cast<std::size_t>(i)] + stock.on_hand[i] == initial[i]);
        revenue += b.sold[static_cast<std::size_t>(i)] * price[i];
    }
    CHECK(till.cash == revenue);
    CHECK(b.sales + till.refused == total);
    CHECK(till.refused > 0);  // the stock really ran short

    book_keeper | troupe::finished_msg;
    sys.stop();
    CHECK(sys.live_actors() == 0);
}

}  // namespace

TEST_CASE("shop: buffered channels, conservation of stock, money and orders") {
    troupe_test::on_processors([](troupe::cluster& c) { trade(c, c.processor_count(), 16); });
}

TEST_CASE("shop: rendezvous channels, one and two bookkeeping workers") {
    troupe_test::on_processors([](troupe::cluster& c) {
        trade(c, 1, 0);
        trade(c, 2, 0);
    });
}
