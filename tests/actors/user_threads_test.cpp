// User-thread workers (actor_system_config::threads = user, experimental): a
// behaviour that blocks on a troupe primitive parks its worker's user
// thread, so its processor runs the other workers. With fewer processors
// than blocked behaviours, every scenario below would deadlock if blocking
// held a processor (as a kernel-thread worker holds its kernel thread).
#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "actor_fixture.hpp"
#include "troupe/blocking_lock.hpp"
#include "troupe/channel.hpp"
#include "troupe/future.hpp"
#include "troupe/semaphore.hpp"
#include "troupe/thread.hpp"

namespace {

troupe::actor_system_config user_workers(std::size_t workers, std::size_t processors) {
    troupe::actor_system_config c;
    c.threads = troupe::worker_threads::user;
    c.workers = workers;
    c.processors = processors;
    return c;
}

// What a waiter blocks on.
enum class wait_on { future, lock, channel };

struct shared_state {
    troupe::semaphore arrived{0};      // one release per waiter, just before it blocks
    troupe::future<long> value;        // the future waiters wait for
    troupe::blocking_lock lock;        // held by the test's main thread
    troupe::channel<long> handoff{0};  // rendezvous: the releaser's inserts wait for removers
    std::atomic<long> lock_holders{0};
};

struct go : troupe::request<long> {};

struct waiter : troupe::actor {
    shared_state* s = nullptr;
    wait_on what = wait_on::future;
    bool in_user_thread = false;
    troupe::allocation receive(go& q) {
        in_user_thread = troupe::this_thread::in_user_thread();
        s->arrived.release();
        switch (what) {
        case wait_on::future: q.reply(s->value.get()); break;
        case wait_on::lock:
            s->lock.lock();  // main holds it until the others have run
            s->lock_holders.fetch_add(1, std::memory_order_relaxed);
            s->lock.unlock();
            q.reply(7);
            break;
        case wait_on::channel: q.reply(s->handoff.remove()); break;
        }
        return troupe::Nodelete;
    }
};

struct release_all : troupe::request<long> {
    long waiters = 0, channel_waiters = 0;
};

// Blocks (on the semaphore) until every waiter is about to block, then
// fulfils the future and feeds every channel waiter, each insert waiting
// until a blocked waiter has run and taken it.
struct releaser : troupe::actor {
    shared_state* s = nullptr;
    troupe::allocation receive(release_all& r) {
        for (long i = 0; i < r.waiters; ++i) s->arrived.acquire();
        s->value.fulfil(42);
        for (long i = 0; i < r.channel_waiters; ++i) s->handoff.insert(43);
        r.reply(r.channel_waiters);
        return troupe::Nodelete;
    }
};

struct filler : troupe::actor {};

// `workers` workers on `processors` processors; workers - 1 waiters (future,
// lock, channel in turn) and a releaser, which blocks too until all waiters
// arrived. `together`: every actor's mailbox is in worker 0's range (so the
// other workers must steal them from a worker blocked in a behaviour);
// otherwise each sits in a different worker's range.
void blocked_waiters(std::size_t workers, std::size_t processors, troupe::victim_policy policy,
                     bool together) {
    troupe::actor_system_config cfg = user_workers(workers, processors);
    cfg.victims = policy;
    cfg.placement = troupe::external_placement::spread;  // tickets 0, 1, 2, ... in order
    troupe::actor_system sys{cfg};
    REQUIRE(sys.config().threads == troupe::worker_threads::user);
    REQUIRE(sys.config().processors == processors);
    const std::size_t per = sys.mailboxes() / workers;
    shared_state s;
    std::vector<std::unique_ptr<troupe::actor>> all;
    std::vector<waiter*> waiters;
    releaser* rel = nullptr;
    // Actor k (k = 0 .. workers - 1; the last is the releaser) takes ticket
    // k (together) or k * per (one per worker); fillers take the rest.
    for (std::size_t t = 0, k = 0; k < workers; ++t) {
        if (together ? t == k : t == k * per) {
            if (k + 1 == workers) {
                auto r = std::make_unique<releaser>();
                rel = r.get();
                all.push_back(std::move(r));
            } else {
                auto w = std::make_unique<waiter>();
                w->what = static_cast<wait_on>(k % 3);
                waiters.push_back(w.get());
                all.push_back(std::move(w));
            }
            ++k;
        } else {
            all.push_back(std::make_unique<filler>());
        }
    }
    long channel_waiters = 0, lock_waiters = 0;
    for (waiter* w : waiters) {
        w->s = &s;
        channel_waiters += w->what == wait_on::channel;
        lock_waiters += w->what == wait_on::lock;
    }
    rel->s = &s;

    s.lock.lock();  // lock waiters block until the rest has finished
    std::vector<std::unique_ptr<go>> asks;
    std::vector<troupe::future<long>*> answers;
    for (waiter* w : waiters) {
        asks.push_back(std::make_unique<go>());
        answers.push_back(&troupe::ask(*w, *asks.back()));
    }
    release_all r;
    r.waiters = static_cast<long>(waiters.size());
    r.channel_waiters = channel_waiters;
    // The releaser's reply needs every channel waiter to have run while the
    // lock waiters still block on the lock we hold.
    CHECK(troupe::ask(*rel, r).get() == channel_waiters);
    for (std::size_t i = 0; i < waiters.size(); ++i)
        if (waiters[i]->what != wait_on::lock)
            CHECK(answers[i]->get() == (waiters[i]->what == wait_on::future ? 42 : 43));
    CHECK(s.lock_holders.load() == 0);
    s.lock.unlock();
    for (std::size_t i = 0; i < waiters.size(); ++i)
        if (waiters[i]->what == wait_on::lock) CHECK(answers[i]->get() == 7);
    CHECK(s.lock_holders.load() == lock_waiters);
    for (waiter* w : waiters) CHECK(w->in_user_thread);
    for (auto& a : all) *a | troupe::finished_msg;
    sys.stop();
}

}  // namespace

TEST_CASE(
    "user-thread workers: behaviours blocked on a future, a lock and a channel leave the processor "
    "to others") {
    for (auto policy : {troupe::victim_policy::random, troupe::victim_policy::longest,
                        troupe::victim_policy::locality}) {
        // Fewer processors than behaviours blocked at once.
        const std::pair<std::size_t, std::size_t> shapes[] = {{2, 1}, {3, 1}, {4, 1}, {4, 2}};
        for (auto [workers, processors] : shapes) {
            for (bool together : {false, true}) {
                CAPTURE(troupe::to_string(policy));
                CAPTURE(workers);
                CAPTURE(processors);
                CAPTURE(together);
                troupe_test::watchdog wd{
                    "user-thread workers, " + std::string{troupe::to_string(policy)} + ", " +
                    std::to_string(workers) + " workers on " + std::to_string(processors) +
                    " processor(s)" + (together ? ", together" : "")};
                for (int round = 0; round < 3; ++round)
                    blocked_waiters(workers, processors, policy, together);
            }
        }
    }
}

namespace {
// A chain of asks: actor i's behaviour asks actor i + 1 and waits, so every
// actor but the last is blocked at once; one processor runs them all.
struct link_ask : troupe::request<long> {};
struct chain_link : troupe::actor {
    chain_link* next = nullptr;
    troupe::allocation receive(link_ask& q) {
        if (!next) {
            q.reply(1);
        } else {
            link_ask mine;
            q.reply(troupe::ask(*next, mine).get() + 1);
        }
        return troupe::Nodelete;
    }
};
}  // namespace

TEST_CASE("user-thread workers: a chain of behaviours each waiting for the next one's reply") {
    for (std::size_t workers : {2u, 4u}) {
        CAPTURE(workers);
        troupe_test::watchdog wd{"ask chain at " + std::to_string(workers) +
                                 " user-thread workers"};
        troupe::actor_system sys{user_workers(workers, 1)};
        // workers blocked-and-free alternating: a chain as long as the
        // workers, so all but one worker end up blocked in a behaviour.
        const std::size_t n = workers;
        std::vector<chain_link> chain(n);
        for (std::size_t i = 0; i + 1 < n; ++i) chain[i].next = &chain[i + 1];
        for (int round = 0; round < 20; ++round) {
            link_ask q;
            CHECK(troupe::ask(chain[0], q).get() == static_cast<long>(n));
        }
        for (auto& l : chain) l | troupe::finished_msg;
        sys.stop();
    }
}

TEST_CASE("user-thread workers: the configuration resolves processors and workers") {
    troupe::actor_system_config c;
    c.threads = troupe::worker_threads::user;
    c.workers = 4;
    c.processors = 2;
    troupe::actor_system sys{c};
    CHECK(sys.workers() == 4);
    CHECK(sys.config().processors == 2);
    CHECK(std::string{troupe::to_string(sys.config().threads)} == "user");
    sys.stop();
    troupe::actor_system_config k;
    k.threads = troupe::worker_threads::kernel;
    k.workers = 2;
    troupe::actor_system ks{k};
    CHECK(ks.config().processors == 0);
    ks.stop();
}
