// Savina "Counting Actor": a producer sends N increments to a counter,
// then asks for the total and checks it. The increment carries nothing, so
// the producer sends one message object N times (messages go by reference
// and stay the sender's). Check: the total the counter reports.
#include "savina.hpp"

namespace savina_count {

struct producer;
struct increment : troupe::message {};
struct retrieve : troupe::message {
    producer* from = nullptr;
};
struct total : troupe::message {
    long value = 0;
};

struct counter : troupe::actor {
    long count = 0;
    total reply;
    troupe::allocation receive(increment&) {
        ++count;
        return troupe::Nodelete;
    }
    troupe::allocation receive(retrieve& r);
};

struct start : troupe::message {};

struct producer : troupe::actor {
    counter* target = nullptr;
    long n = 0, result = 0;
    increment inc;
    retrieve get;
    troupe::allocation receive(start&) {
        for (long i = 0; i < n; ++i) *target | inc;
        get.from = this;
        *target | get;
        return troupe::Nodelete;
    }
    troupe::allocation receive(total& t) {
        result = t.value;
        return troupe::Finished;
    }
};

troupe::allocation counter::receive(retrieve& r) {
    reply.value = count;
    *r.from | reply;
    return troupe::Finished;
}

SAVINA_BENCH(count) {
    const long n = info.size("n", 2'500'000, 100'000);
    troupe::actor_system sys{savina::config(info)};
    bench::stopwatch t;
    counter c;
    producer p;
    p.target = &c;
    p.n = n;
    start go;
    p | go;
    sys.stop();
    return {t.seconds(), static_cast<std::uint64_t>(p.result)};
}

}  // namespace savina_count
