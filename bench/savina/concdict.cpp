// Savina "Concurrent Dictionary": W workers each make M requests (10%
// writes, the rest reads, keys from a deterministic generator per worker)
// to one dictionary actor and wait for each reply before the next. A
// worker's request is a message object it owns (one in flight); replies
// carry data and are value sends. Check: replies received, and the final
// dictionary size (the set of written keys is fixed).
#include <unordered_map>
#include <vector>

#include "savina.hpp"

namespace savina_concdict {

struct worker;
struct op : troupe::message {
    worker* from = nullptr;
    long key = 0, value = 0;
    bool write = false;
};
struct reply : troupe::message {
    long value;
    explicit reply(long v) : value(v) {}
};
struct size_query : troupe::message {
    long* out = nullptr;
};

struct dictionary : troupe::actor {
    std::unordered_map<long, long> map;
    long workers_left = 0;
    long* final_size = nullptr;
    troupe::allocation receive(op& m);
    troupe::allocation receive(troupe::finished_msg_t&) {
        if (--workers_left > 0) return troupe::Nodelete;
        *final_size = static_cast<long>(map.size());
        return troupe::Finished;
    }
};

struct worker : troupe::actor {
    dictionary* dict = nullptr;
    savina::lcg rng{0};
    long left = 0, replies = 0;
    op request;
    void next() {
        request.write = rng.below(100) < 10;
        request.key = rng.below(10'000);
        request.value = request.key * 3;
        *dict | request;
    }
    troupe::allocation receive(reply&) {
        ++replies;
        if (--left > 0) {
            next();
            return troupe::Nodelete;
        }
        *dict | troupe::finished_msg;  // this worker is done
        return troupe::Finished;
    }
};

troupe::allocation dictionary::receive(op& m) {
    long v = 0;
    if (m.write) {
        map[m.key] = m.value;
        v = m.value;
    } else if (auto it = map.find(m.key); it != map.end()) {
        v = it->second;
    }
    troupe::send<reply>(*m.from, v);
    return troupe::Nodelete;
}

SAVINA_BENCH(concdict) {
    const long workers = info.size("workers_n", 20, 20);
    const long m = info.size("m", 20'000, 1'000);
    troupe::actor_system sys{savina::config(info)};
    long final_size = 0;
    bench::stopwatch t;
    dictionary dict;
    dict.workers_left = workers;
    dict.final_size = &final_size;
    std::vector<worker> all(static_cast<std::size_t>(workers));
    for (long i = 0; i < workers; ++i) {
        auto& w = all[static_cast<std::size_t>(i)];
        w.dict = &dict;
        w.rng = savina::lcg{static_cast<std::uint64_t>(i + 1)};
        w.left = m;
        w.request.from = &w;
        w.next();
    }
    sys.stop();
    const double s = t.seconds();
    long replies = 0;
    for (auto& w : all) replies += w.replies;
    return {s, static_cast<std::uint64_t>(replies) * 1'000'003 +
                   static_cast<std::uint64_t>(final_size)};
}

}  // namespace savina_concdict
