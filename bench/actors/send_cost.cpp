// The workload of the send-path instruction-count guard (send_cost.py runs
// it under callgrind): n messages through one kind of send, on one worker,
// so that the instructions counted inside the worker's batches divided by
// n are the cost of one send plus its delivery. Not a timing benchmark.
//
//     actors_send_cost --case=static|dynamic|pair --n=N
//
// static:  one actor re-sends one message to itself (the send joins the
//          batch in process);
// dynamic: each receive creates an actor and a message (Delete), sends it
//          and ends with Delete (creation, staging, flush, end, free);
// pair:    two actors send one message back and forth (a staged send per
//          batch, flushed to the partner's mailbox, gulped next).
#include <cstdio>
#include <string>

#include "troupe_bench.hpp"

namespace {
long Times = 0;

struct ping_msg : troupe::message {};
struct self_sender : troupe::actor {
    long count = 0;
    troupe::allocation receive(ping_msg& m) {
        if (++count == Times) return troupe::Finished;
        *this | m;
        return troupe::Nodelete;
    }
};

struct chain_msg : troupe::message {
    long count;
    explicit chain_msg(long c) : message(troupe::Delete), count(c) {}
};
struct chain_actor : troupe::actor {
    troupe::allocation receive(chain_msg& m) {
        if (m.count < Times) *new chain_actor | *new chain_msg{m.count + 1};
        return troupe::Delete;
    }
};

struct ball_msg : troupe::message {
    long count = 0;
};
struct player : troupe::actor {
    player* partner = nullptr;
    troupe::allocation receive(ball_msg& b) {
        if (++b.count >= Times) {
            *partner | troupe::finished_msg;
            return troupe::Finished;
        }
        *partner | b;
        return troupe::Nodelete;
    }
};
}  // namespace

int main(int argc, char** argv) {
    Times = bench::option(argc, argv, "n", 100'000);
    const std::string which = bench::option_text(argc, argv, "case", "static");
    troupe::actor_system_config cfg;
    cfg.workers = 1;
    troupe::actor_system sys{cfg};
    if (which == "static") {
        ping_msg m;
        self_sender a;
        a | m;
        sys.stop();
    } else if (which == "dynamic") {
        *new chain_actor | *new chain_msg{1};
        sys.stop();
    } else if (which == "pair") {
        player a, b;
        a.partner = &b;
        b.partner = &a;
        ball_msg ball;
        a | ball;
        sys.stop();
    } else {
        std::fprintf(stderr, "actors_send_cost: unknown --case=%s (static, dynamic, pair)\n",
                     which.c_str());
        return 2;
    }
    return 0;
}
