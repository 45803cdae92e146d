// park/unpark: one mechanism for user threads and OS threads; early wakes.
#include <atomic>
#include <thread>
#include <vector>

#include "fixture.hpp"
#include "troupe/context.hpp"
#include "troupe/thread.hpp"

using troupe_test::on_processors;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr int rounds = 5'000;
#else
constexpr int rounds = 50'000;
#endif

namespace {
// A handshake where every wake may come before or after the park: the
// waiter publishes its context, then the two race.
template <class Spawn>
void race(Spawn spawn) {
    std::atomic<troupe::context*> target{nullptr};
    std::atomic<int> woken{0};
    auto waiter = [&] {
        for (int i = 0; i < rounds; ++i) {
            target.store(&troupe::this_context());
            troupe::park();  // may return at once: the unpark was banked
            woken.fetch_add(1);
        }
    };
    auto waker = [&] {
        for (int i = 0; i < rounds; ++i) {
            troupe::context* t;
            while ((t = target.exchange(nullptr)) == nullptr) troupe::this_thread::yield();
            troupe::unpark(*t);
        }
    };
    spawn(waiter, waker);
    CHECK(woken.load() == rounds);
}
}  // namespace

TEST_CASE("park/unpark race between two user threads: no wake is lost") {
    on_processors([](troupe::cluster& c) {
        race([&](auto w, auto k) {
            troupe::thread a{c, w};
            troupe::thread b{c, k};
        });
    });
}

TEST_CASE("park/unpark race: user thread waiter, OS thread waker") {
    on_processors([](troupe::cluster& c) {
        race([&](auto w, auto k) {
            troupe::thread a{c, w};
            std::thread b{k};
            b.join();
        });
    });
}

TEST_CASE("park/unpark race: OS thread waiter, user thread waker") {
    on_processors([](troupe::cluster& c) {
        race([&](auto w, auto k) {
            std::thread a{w};
            troupe::thread b{c, k};
            a.join();
        });
    });
}

TEST_CASE("an unpark before the park is banked: park returns at once") {
    troupe::context& me = troupe::this_context();
    troupe::unpark(me);
    troupe::park();  // would hang (watchdog) if the permit were lost
    CHECK_FALSE(me.is_user_thread());
    troupe::cluster c{1};
    troupe::thread t{c, [] {
        troupe::unpark(troupe::this_context());
        troupe::park();
        CHECK(troupe::this_context().is_user_thread());
    }};
    t.join();
}
