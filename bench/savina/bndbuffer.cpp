// Savina "Bounded Buffer": P producers each make K items, C consumers
// take them, through a manager holding a buffer of B items. A producer
// sends an item and waits for the manager's go-ahead (held back while the
// buffer is full); a consumer says it is free and gets the next item. Items
// are value sends (the manager keeps their values and forwards new ones);
// the go-ahead and "free" carry nothing and are one object each. Check:
// the sum of the consumed items.
#include <atomic>
#include <deque>
#include <vector>

#include "savina.hpp"

namespace savina_bndbuffer {

struct producer;
struct consumer;
struct item : troupe::message {
    long value;
    producer* from;
    item(long v, producer* p) : value(v), from(p) {}
};
struct produce : troupe::message {};
struct consumer_free : troupe::message {
    consumer* from = nullptr;
};
struct producer_exit : troupe::message {};
struct data : troupe::message {
    long value;
    explicit data(long v) : value(v) {}
};

struct manager : troupe::actor {
    std::size_t capacity = 0;
    long producers_left = 0;
    std::deque<long> pending;               // buffered item values
    std::vector<producer*> held_producers;  // waiting for room
    std::vector<consumer*> free_consumers;
    std::size_t consumers = 0;
    produce go;
    void try_exit();
    troupe::allocation receive(item& m);
    troupe::allocation receive(consumer_free& m);
    troupe::allocation receive(producer_exit&) {
        --producers_left;
        try_exit();
        return producers_left == 0 && free_consumers.size() == consumers ? troupe::Finished
                                                                         : troupe::Nodelete;
    }
};

struct producer : troupe::actor {
    manager* mgr = nullptr;
    long id = 0, made = 0, items = 0;
    producer_exit bye;
    troupe::allocation receive(produce&) {
        if (made == items) {
            *mgr | bye;
            return troupe::Finished;
        }
        troupe::send<item>(*mgr, id * items + made, this);
        ++made;
        return troupe::Nodelete;
    }
};

struct consumer : troupe::actor {
    manager* mgr = nullptr;
    long sum = 0;
    std::atomic<long>* total = nullptr;
    consumer_free ready;
    troupe::allocation receive(data& d) {
        sum += d.value;
        *mgr | ready;
        return troupe::Nodelete;
    }
    troupe::allocation receive(troupe::finished_msg_t&) {
        total->fetch_add(sum);
        return troupe::Finished;
    }
};

void manager::try_exit() {
    if (producers_left == 0 && free_consumers.size() == consumers)
        for (consumer* c : free_consumers) *c | troupe::finished_msg;
}

troupe::allocation manager::receive(item& m) {
    if (free_consumers.empty()) {
        pending.push_back(m.value);
    } else {
        troupe::send<data>(*free_consumers.back(), m.value);
        free_consumers.pop_back();
    }
    if (pending.size() >= capacity) held_producers.push_back(m.from);
    else *m.from | go;
    return troupe::Nodelete;
}

troupe::allocation manager::receive(consumer_free& m) {
    if (pending.empty()) {
        free_consumers.push_back(m.from);
        try_exit();
        return producers_left == 0 && free_consumers.size() == consumers ? troupe::Finished
                                                                         : troupe::Nodelete;
    }
    troupe::send<data>(*m.from, pending.front());
    pending.pop_front();
    if (!held_producers.empty()) {
        *held_producers.back() | go;
        held_producers.pop_back();
    }
    return troupe::Nodelete;
}

SAVINA_BENCH(bndbuffer) {
    const long producers = info.size("producers", 40, 10);
    const long consumers = info.size("consumers", 40, 10);
    const long items = info.size("items", 5'000, 1'000);
    const long capacity = info.size("capacity", 50, 50);
    troupe::actor_system sys{savina::config(info)};
    std::atomic<long> total{0};
    bench::stopwatch t;
    manager mgr;
    mgr.capacity = static_cast<std::size_t>(capacity);
    mgr.producers_left = producers;
    mgr.consumers = static_cast<std::size_t>(consumers);
    std::vector<consumer> cs(static_cast<std::size_t>(consumers));
    for (auto& c : cs) {
        c.mgr = &mgr;
        c.total = &total;
        c.ready.from = &c;
        mgr.free_consumers.push_back(&c);
    }
    std::vector<producer> ps(static_cast<std::size_t>(producers));
    for (long i = 0; i < producers; ++i) {
        auto& p = ps[static_cast<std::size_t>(i)];
        p.mgr = &mgr;
        p.id = i;
        p.items = items;
        p | mgr.go;
    }
    sys.stop();
    return {t.seconds(), static_cast<std::uint64_t>(total.load())};
}

}  // namespace savina_bndbuffer
