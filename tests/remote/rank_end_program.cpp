// A rank that ends (returns from main) while others still need it: every
// ask, lookup and collective that needs it fails at once with rank_lost
// naming it, and nothing hangs. Run by rank_end.sh under mpirun; prints one
// line per outcome, which the script checks.
//
//   rank_end_program before   the last rank returns at once, before the
//                             first barrier; the others' barrier, lookup,
//                             ask and send to it fail
//   rank_end_program after    the last rank returns after the barrier and
//                             a lookup, while another rank's ask to it
//                             waits for a reply it never gives
//   rank_end_program hang     rank 0 waits forever, the others end: for
//                             the signal test (rank_end_signal.sh)
//   rank_end_program monitor  the others monitor an actor of the last rank,
//                             whose world then ends while the actor lives:
//                             each monitor fires once, "rank N lost"; one
//                             placed afterwards fires at once
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "troupe/actors.hpp"
#include "troupe/remote.hpp"

namespace remote = troupe::remote;

struct hold : troupe::request<long> {};
TROUPE_REMOTE_MESSAGE(hold, "test.rank_end.hold");
struct note : troupe::message {};
TROUPE_REMOTE_MESSAGE(note, "test.rank_end.note");

namespace {

// Never answers a hold (defers it); counts the ones it got.
struct holder : troupe::actor {
    troupe::future<> got;  // `expected` holds came
    int expected = 0, held = 0;
    troupe::allocation receive(hold& q) {
        q.defer();
        if (++held == expected) got.fulfil();
        return troupe::Nodelete;
    }
    troupe::allocation receive(note&) { return troupe::Nodelete; }
};

int rank_of;

// Waits for one down.
struct watcher : troupe::actor {
    troupe::future<void> got;
    const troupe::actor* who = nullptr;
    troupe::exit_reason why;
    int downs = 0;
    void receive(troupe::down& d) {
        if (++downs == 1) {
            who = d.who;
            why = d.reason;
            got.fulfil();
        }
    }
};

// Monitors `ref` with watcher `m` and prints the down it gets, once it
// came, as "rank R: LABEL: REASON" (and whether `who` is the expected one).
template <class A>
const troupe::actor* print_down(watcher& m, const char* label, const remote::remote_ref<A>& ref,
                                const troupe::actor* expect) {
    const troupe::actor* who = remote::monitor(m, ref);
    m.got.get();
    std::printf("rank %d: %s: %s%s\n", rank_of, label, m.why.to_string().c_str(),
                who == m.who && (!expect || who == expect) ? "" : " (who is wrong)");
    std::fflush(stdout);
    return who;
}

template <class F>
void expect_lost(const char* what, int lost, F&& f) {
    try {
        f();
        std::printf("rank %d: %s: no error\n", rank_of, what);
    } catch (const remote::rank_lost& e) {
        // lost < 0: any ended rank will do (a barrier fails for whichever
        // ended rank it finds first; with 3 ranks the other may have ended too).
        if (lost < 0) lost = e.rank();
        const bool named = std::string{e.what()}.find("rank " + std::to_string(lost) +
                                                      ", which has ended") != std::string::npos;
        std::printf("rank %d: %s: rank_lost %d%s\n", rank_of, what, e.rank(),
                    named ? " named" : " (what() does not name it)");
        if (!named) std::printf("  %s\n", e.what());
    } catch (const std::exception& e) {
        std::printf("rank %d: %s: other error: %s\n", rank_of, what, e.what());
    }
    std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
    const bool early = argc > 1 && std::strcmp(argv[1], "before") == 0;
    const bool hang = argc > 1 && std::strcmp(argv[1], "hang") == 0;
    const bool monitor = argc > 1 && std::strcmp(argv[1], "monitor") == 0;
    auto world = std::make_unique<remote::world>(argc, argv);
    remote::world& w = *world;
    if (hang) {
        // Rank 0 waits forever (a program's own deadlock); the others end
        // and wait for it in their world's last barrier. The test then
        // signals mpirun, which must end the job.
        if (w.rank() == 0) {
            std::printf("rank 0: hangs\n");
            std::fflush(stdout);
            troupe::future<> never;
            never.get();
        }
        // Said right before the world's last barrier (in its destructor),
        // so the test signals only once every other rank waits there.
        std::printf("rank %d: ends\n", w.rank());
        std::fflush(stdout);
        return 0;
    }
    rank_of = w.rank();
    const int last = w.size() - 1;
    troupe::actor_system sys{2};
    holder h;
    h.expected = last;  // one hold from each other rank
    w.publish("rank_end.holder", h);
    if (monitor) {
        w.barrier();  // published
        if (w.rank() == last) {
            w.barrier();  // the others' monitors are placed (their watches may be in flight)
            std::printf("rank %d: world ends early\n", w.rank());
            std::fflush(stdout);
            world.reset();  // goodbye while the holder lives; waits for the others' ends
            h | troupe::finished_msg;
            sys.stop();
            return 0;
        }
        auto ref = w.lookup<holder>(last, "rank_end.holder");
        watcher first, late, fresh;
        const troupe::actor* who = remote::monitor(first, ref);
        w.barrier();
        first.got.get();
        std::printf("rank %d: down: %s%s\n", rank_of, first.why.to_string().c_str(),
                    who == first.who ? "" : " (who is wrong)");
        // After the rank's end: at once, for a stand-in that heard of it and
        // for a new one (its watch is never sent).
        print_down(late, "late down", ref, who);
        print_down(fresh, "new down", remote::remote_ref<holder>{w.engine(), last, ref.id() + 1000},
                   nullptr);
        std::printf("rank %d: downs: %d\n", rank_of, first.downs + late.downs + fresh.downs);
        first | troupe::finished_msg;
        late | troupe::finished_msg;
        fresh | troupe::finished_msg;
        h | troupe::finished_msg;
        sys.stop();
        std::printf("rank %d: ends\n", w.rank());
        std::fflush(stdout);
        return 0;
    }
    if (early && w.rank() == last) {
        h | troupe::finished_msg;
        sys.stop();
        std::printf("rank %d: returns early\n", w.rank());
        std::fflush(stdout);
        return 0;  // before the barrier the others are in
    }
    if (early) {
        expect_lost("barrier", last, [&] { w.barrier(); });
        expect_lost("lookup", last, [&] { w.lookup<holder>(last, "rank_end.holder"); });
        expect_lost("second barrier", -1, [&] { w.barrier(); });
    } else {
        w.barrier();
        auto ref = w.lookup<holder>(last, "rank_end.holder");
        if (w.rank() == last) {
            // Ends once every other rank's hold waits here.
            h.got.get();
            h | troupe::finished_msg;
            sys.stop();
            std::printf("rank %d: returns after the barrier\n", w.rank());
            std::fflush(stdout);
            return 0;
        }
        hold q;
        auto& f = ref.ask(q);
        expect_lost("waiting ask", last, [&] { f.get(); });
        expect_lost("lookup", last, [&] { w.lookup<holder>(last, "rank_end.holder"); });
        expect_lost("new ask", last, [&] {
            hold q2;
            ref.ask(q2).get();
        });
        expect_lost("send", last, [&] { ref | note{}; });
        expect_lost("barrier", -1, [&] { w.barrier(); });
    }
    h | troupe::finished_msg;
    sys.stop();
    std::printf("rank %d: ends\n", w.rank());
    std::fflush(stdout);
    return 0;
}
