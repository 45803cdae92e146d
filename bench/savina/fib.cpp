// Savina "Fibonacci": fib(n) with one actor per call: an actor for n > 2
// creates two children, sends each its request and adds their replies;
// each answers its parent and ends. Actors and messages are heap-allocated
// and freed by the runtime. Check: fib(n).
#include "savina.hpp"

namespace savina_fib {

struct fib_actor;
struct request : troupe::message {
    long n;
    explicit request(long v) : n(v) {}
};
struct response : troupe::message {
    long value;
    explicit response(long v) : value(v) {}
};

struct fib_actor : troupe::actor {
    fib_actor* parent;
    long* root_result;  // where the root answers (parent is null)
    long sum = 0;
    int replies = 0;
    fib_actor(fib_actor* p, long* r) : parent(p), root_result(r) {}

    troupe::allocation answer(long value) {
        if (parent == nullptr) {
            *root_result = value;
            return troupe::Finished;  // the root lives on main's stack
        }
        troupe::send<response>(*parent, value);
        return troupe::Delete;
    }
    troupe::allocation receive(request& r) {
        if (r.n <= 2) return answer(1);
        troupe::send<request>(*new fib_actor{this, nullptr}, r.n - 1);
        troupe::send<request>(*new fib_actor{this, nullptr}, r.n - 2);
        return troupe::Nodelete;
    }
    troupe::allocation receive(response& r) {
        sum += r.value;
        if (++replies < 2) return troupe::Nodelete;
        return answer(sum);
    }
};

SAVINA_BENCH(fib) {
    const long n = info.size("n", 27, 18);
    troupe::actor_system sys{savina::config(info)};
    long result = 0;
    bench::stopwatch t;
    fib_actor root{nullptr, &result};
    troupe::send<request>(root, n);
    sys.stop();
    return {t.seconds(), static_cast<std::uint64_t>(result)};
}

}  // namespace savina_fib
