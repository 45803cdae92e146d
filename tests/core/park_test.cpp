// park/unpark: one mechanism for user threads and OS threads; early wakes.
#include <atomic>
#include <thread>
#include <vector>

#include "fixture.hpp"
#include "troupe/context.hpp"
#include "troupe/detail/block_hook.hpp"
#include "troupe/thread.hpp"

using troupe_test::on_processors;

constexpr int rounds = troupe_test::scaled(50'000);

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

TEST_CASE("an OS thread about to sleep in park() runs its block hook first, once per sleep") {
    // The waker waits for the hook itself before unparking, so the waiter
    // must have reached the sleeping step (past its permit poll): if the
    // hook were not called the test would hang (watchdog), if it were called
    // twice per sleep the count would show it.
    troupe_test::watchdog wd{"block hook"};
    struct record {
        std::atomic<int> calls{0};
        troupe::context* self = nullptr;
    } rec;
    std::atomic<troupe::context*> waiter{nullptr};
    constexpr int sleeps = 50;
    std::thread os{[&] {
        rec.self = &troupe::this_context();
        troupe::detail::set_block_hook(
            [](void* arg) noexcept {
                auto* r = static_cast<record*>(arg);
                CHECK(&troupe::this_context() == r->self);  // runs on the blocking thread
                r->calls.fetch_add(1, std::memory_order_release);
            },
            &rec);
        waiter.store(rec.self, std::memory_order_release);
        for (int i = 0; i < sleeps; ++i) troupe::park();
        troupe::detail::set_block_hook(nullptr, nullptr);
        troupe::unpark(troupe::this_context());  // banked: no sleep, no hook
        troupe::park();
    }};
    troupe::context* w;
    while (!(w = waiter.load(std::memory_order_acquire))) std::this_thread::yield();
    for (int i = 1; i <= sleeps; ++i) {
        while (rec.calls.load(std::memory_order_acquire) < i) std::this_thread::yield();
        troupe::unpark(*w);
    }
    os.join();
    CHECK(rec.calls.load() == sleeps);
}
