// Savina "Concurrent Sorted Linked List": W workers each make M requests
// (1% size, 10% inserts, the rest lookups; values from a deterministic
// generator per worker) to one actor holding a sorted singly linked list,
// waiting for each reply before the next. A worker's request is a message
// object it owns (one in flight); replies are value sends. Check: replies
// received, and the final list length (the set of inserts is fixed).
#include <memory>
#include <vector>

#include "savina.hpp"

namespace savina_concsll {

struct node {
    long value;
    std::unique_ptr<node> next;
};

/// The sorted list (duplicates kept, as in Savina).
struct sorted_list {
    std::unique_ptr<node> head;
    long length = 0;
    void insert(long v) {
        std::unique_ptr<node>* at = &head;
        while (*at && (*at)->value < v) at = &(*at)->next;
        *at = std::unique_ptr<node>(new node{v, std::move(*at)});
        ++length;
    }
    bool contains(long v) const {
        for (const node* n = head.get(); n != nullptr && n->value <= v; n = n->next.get())
            if (n->value == v) return true;
        return false;
    }
    ~sorted_list() {  // iterative: a long list must not recurse
        while (head) head = std::move(head->next);
    }
};

enum class kind { size, write, contains };

struct worker;
struct op : troupe::message {
    worker* from = nullptr;
    kind what = kind::contains;
    long value = 0;
};
struct reply : troupe::message {
    long value;
    explicit reply(long v) : value(v) {}
};

struct list_actor : troupe::actor {
    sorted_list list;
    long workers_left = 0;
    long* final_length = nullptr;
    troupe::allocation receive(op& m);
    troupe::allocation receive(troupe::finished_msg_t&) {
        if (--workers_left > 0) return troupe::Nodelete;
        *final_length = list.length;
        return troupe::Finished;
    }
};

struct worker : troupe::actor {
    list_actor* target = nullptr;
    savina::lcg rng{0};
    long left = 0, replies = 0;
    op request;
    void next() {
        const long r = rng.below(100);
        request.what = r < 1 ? kind::size : r < 11 ? kind::write : kind::contains;
        request.value = rng.below(100'000);
        *target | request;
    }
    troupe::allocation receive(reply&) {
        ++replies;
        if (--left > 0) {
            next();
            return troupe::Nodelete;
        }
        *target | troupe::finished_msg;
        return troupe::Finished;
    }
};

troupe::allocation list_actor::receive(op& m) {
    long v = 0;
    switch (m.what) {
    case kind::size: v = list.length; break;
    case kind::write:
        list.insert(m.value);
        v = m.value;
        break;
    case kind::contains: v = list.contains(m.value) ? 1 : 0; break;
    }
    troupe::send<reply>(*m.from, v);
    return troupe::Nodelete;
}

SAVINA_BENCH(concsll) {
    const long workers = info.size("workers_n", 20, 20);
    const long m = info.size("m", 1'500, 200);
    troupe::actor_system sys{savina::config(info)};
    long final_length = 0;
    bench::stopwatch t;
    list_actor list;
    list.workers_left = workers;
    list.final_length = &final_length;
    std::vector<worker> all(static_cast<std::size_t>(workers));
    for (long i = 0; i < workers; ++i) {
        auto& w = all[static_cast<std::size_t>(i)];
        w.target = &list;
        w.rng = savina::lcg{static_cast<std::uint64_t>(i + 7)};
        w.left = m;
        w.request.from = &w;
        w.next();
    }
    sys.stop();
    const double s = t.seconds();
    long replies = 0;
    for (auto& w : all) replies += w.replies;
    return {s, static_cast<std::uint64_t>(replies) * 1'000'003 +
                   static_cast<std::uint64_t>(final_length)};
}

}  // namespace savina_concsll
