// A one-for-one supervisor: it links to its workers and traps exits, so a
// worker that fails (its behaviour throws) reaches it as an exit_msg, and it
// starts a fresh worker in that one's place; the other workers keep running.
// It gives up after too many restarts (ending with an error, which its links
// pass on to the remaining workers: the whole tree stops). A monitor tells
// main how the supervisor ended, and an ask with a deadline shows what a
// caller sees from a worker that does not answer in time.
#include <chrono>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "troupe/actors.hpp"

using namespace std::chrono_literals;

struct job : troupe::message {
    int n;
    explicit job(int n) : n(n) {}
};
// For the supervisor: a job for the worker in slot `slot`.
struct work : troupe::message {
    std::size_t slot;
    int n;
    work(std::size_t slot, int n) : slot(slot), n(n) {}
};
struct status : troupe::request<std::string> {
    std::size_t slot = 0;
};
// Answered once the supervisor has restarted `count` workers.
struct restarted : troupe::request<int> {
    int count = 0;
};

// Squares numbers; fails on negative ones.
struct worker : troupe::actor {
    int id;
    explicit worker(int id) : id(id) {}
    void receive(job& j) {
        if (j.n < 0) throw std::runtime_error("negative input " + std::to_string(j.n));
        std::printf("worker %d: %d squared is %d\n", id, j.n, j.n * j.n);
    }
    void receive(status& q) { q.reply("worker " + std::to_string(id) + " ok"); }
};

struct supervisor : troupe::actor {
    std::vector<std::unique_ptr<worker>> slots;    // one per position
    std::vector<std::unique_ptr<worker>> retired;  // ended workers (their storage is ours)
    int next_id = 0, restarts = 0;
    static constexpr int max_restarts = 2;
    restarted* waiting = nullptr;  // deferred until enough restarts

    explicit supervisor(std::size_t n) {
        troupe::trap_exits(*this);  // failures come as messages, not as our end
        for (std::size_t i = 0; i < n; ++i) slots.push_back(spawn());
    }
    std::unique_ptr<worker> spawn() {
        auto w = std::make_unique<worker>(next_id++);
        troupe::link(*this, *w);
        return w;
    }
    void receive(work& w) { troupe::send<job>(*slots[w.slot], w.n); }
    void receive(status& q) { *slots[q.slot] | q; }  // forwarded: the worker replies
    void receive(restarted& q) {
        q.defer();  // answered from receive(exit_msg&) once it is true
        waiting = &q;
        answer_waiting();
    }
    void answer_waiting() {
        if (waiting && restarts >= waiting->count) std::exchange(waiting, nullptr)->reply(restarts);
    }
    void receive(troupe::exit_msg& e) {
        if (!e.reason.failure()) return;  // a worker that ended normally
        for (auto& s : slots) {
            if (s.get() != e.who) continue;
            std::printf("supervisor: worker %d failed (%s)\n", s->id, e.reason.to_string().c_str());
            if (++restarts > max_restarts) throw std::runtime_error("too many restarts; giving up");
            retired.push_back(std::move(s));
            s = spawn();
            std::printf("supervisor: restarted it as worker %d\n", s->id);
        }
        answer_waiting();
    }
};

// Hears how the supervisor ended.
struct observer : troupe::actor {
    troupe::future<std::string> verdict;
    troupe::allocation receive(troupe::down& d) {
        verdict.fulfil(d.reason.to_string());
        return troupe::Finished;
    }
};

int main() {
    troupe::actor_system_config cfg;
    cfg.workers = 1;  // one worker: the printed order is the order of events
    // The supervisor handles failures; keep the default report off stderr.
    cfg.on_behaviour_exception = [](const troupe::behaviour_exception&) {
        return troupe::Finished;
    };
    troupe::actor_system sys{cfg};

    supervisor sup{2};
    observer obs;
    troupe::monitor(obs, sup);

    troupe::send<work>(sup, 0, 3);
    troupe::send<work>(sup, 1, 4);

    // An ask with a deadline never waits longer than that for its answer.
    status q;
    q.slot = 1;
    try {
        std::printf("status: %s\n", troupe::ask(sup, q, 1s).get().c_str());
    } catch (const troupe::request_error& e) {
        std::printf("status unknown: %s\n", e.what());
    }

    troupe::send<work>(sup, 0, -1);  // worker 0 fails and is replaced
    troupe::send<work>(sup, 1, -2);  // worker 1 too

    restarted r;
    r.count = 2;
    std::printf("restarts so far: %d\n", troupe::ask(sup, r, 5s).get());

    troupe::send<work>(sup, 0, 5);
    troupe::send<work>(sup, 0, -3);  // the third failure: the supervisor gives up,
                                     // and its links end the other worker
    std::printf("supervisor ended: %s\n", obs.verdict.get().c_str());
    sys.stop();  // every actor has ended
}
