// Balance-one / balance-multi (Parsons, "Work Stealing"): the executor
// workload (groups of actors messaging each other round-robin) placed
// adversarially: every loaded actor's mailbox belongs to worker 0 (one) or
// to the even-numbered workers (multi). Dummy actors fill the other
// workers' tickets and are finished at the end. Compares stealing off and
// the three victim heuristics. Prints seconds.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "troupe_bench.hpp"

namespace {
long Set = 100, Rounds = 10;

struct shared_msg_t : troupe::message {};
shared_msg_t shared_msg;

struct d_actor : troupe::actor {
    d_actor** group = nullptr;
    long recs = 0, sends = 0, rounds = 0;
    troupe::allocation receive(shared_msg_t& m) {
        if (recs == rounds) return troupe::Finished;
        *group[sends % Set] | m;
        ++sends;
        ++recs;
        return troupe::Nodelete;
    }
};
struct dummy : troupe::actor {};
}  // namespace

int main(int argc, char** argv) {
    const bool multi = bench::option_text(argc, argv, "mode", "one") == "multi";
    const long groups = bench::option(argc, argv, "groups", 80);
    Set = bench::option(argc, argv, "set", 100);
    Rounds = bench::option(argc, argv, "rounds", 10);
    troupe::actor_system_config cfg = bench::config(argc, argv);
    // The adversarial layout below relies on the spread placement's order.
    cfg.placement = troupe::external_placement::spread;
    const std::string steal = bench::option_text(argc, argv, "steal", "longest");
    troupe::actor_system sys{cfg};
    const std::size_t workers = sys.workers(), m = sys.mailboxes(), per = m / workers;
    // Spread placement hands out tickets round-robin over the mailboxes, and
    // worker w owns mailboxes [w*per, (w+1)*per): create each actor when the
    // next ticket lands in a loaded worker's range, a dummy otherwise.
    auto loaded = [&](std::size_t ticket) {
        const std::size_t w = ticket / per;
        return multi ? w % 2 == 0 : w == 0;
    };
    const auto total = static_cast<std::size_t>(groups * Set);
    std::vector<std::unique_ptr<d_actor>> actors;
    std::vector<std::unique_ptr<dummy>> dummies;
    std::vector<d_actor*> table;
    actors.reserve(total);
    table.reserve(total);
    for (std::size_t ticket = 0; actors.size() < total; ticket = (ticket + 1) % m) {
        if (loaded(ticket)) {
            actors.push_back(std::make_unique<d_actor>());
            table.push_back(actors.back().get());
        } else {
            dummies.push_back(std::make_unique<dummy>());
        }
    }
    for (std::size_t i = 0; i < total; ++i) {
        actors[i]->group = &table[i - i % static_cast<std::size_t>(Set)];
        actors[i]->rounds = Set * Rounds;
    }
    bench::stopwatch t;
    for (auto& a : actors) *a | shared_msg;
    for (auto& d : dummies) *d | troupe::finished_msg;
    sys.stop();
    const double s = t.seconds();
    bench::result(multi ? "actor_balance_multi" : "actor_balance_one", "troupe", "seconds", s,
                  bench::params(static_cast<long>(workers), "steal=" + steal));
}
