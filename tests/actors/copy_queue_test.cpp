// The copy queue: FIFO, amortised growth, index reset, and the reclamation
// rule (shrink only when less than half was used over a window of gulps).
#include "troupe/detail/copy_queue.hpp"
#include "actor_fixture.hpp"

using troupe::detail::copy_queue;
using troupe::detail::envelope;

namespace {
envelope env(std::uintptr_t i) {
    envelope e{};
    e.receiver = reinterpret_cast<troupe::actor*>(i);
    return e;
}
std::uintptr_t id(const envelope* e) { return reinterpret_cast<std::uintptr_t>(e->receiver); }
constexpr std::uint32_t window = troupe::defaults::actors::copy_queue_reclaim_window;
}  // namespace

TEST_CASE("push/pop keep FIFO order; draining resets the indexes") {
    copy_queue q{4};
    for (std::uintptr_t i = 1; i <= 100; ++i) q.push(env(i));
    CHECK(q.size() == 100);
    CHECK(q.capacity() >= 100);
    for (std::uintptr_t i = 1; i <= 100; ++i) {
        envelope* e = q.pop();
        REQUIRE(e);
        CHECK(id(e) == i);
    }
    CHECK(q.pop() == nullptr);
    CHECK(q.empty());
    // After draining, pushes start at the front again (no growth).
    const auto cap = q.capacity();
    for (int round = 0; round < 1000; ++round) {
        q.push(env(7));
        CHECK(id(q.pop()) == 7);
        CHECK(q.pop() == nullptr);
    }
    CHECK(q.capacity() == cap);
}

TEST_CASE("appending while draining (a behaviour messaging itself) reuses the front") {
    copy_queue q{4};
    q.push(env(1));
    for (std::uintptr_t i = 2; i < 10000; ++i) {
        envelope* e = q.pop();
        REQUIRE(e);
        CHECK(id(e) == i - 1);
        q.push(env(i));  // the queue was just drained: index 0 again
    }
    CHECK(q.capacity() == 4);
}

TEST_CASE("append copies a block in order after what is queued") {
    copy_queue q{2};
    envelope block[5] = {env(3), env(4), env(5), env(6), env(7)};
    q.push(env(1));
    q.push(env(2));
    q.append(block, 5);
    for (std::uintptr_t i = 1; i <= 7; ++i) CHECK(id(q.pop()) == i);
}

TEST_CASE("a burst grows the queue; it is halved only after a window of under-half use") {
    copy_queue q{16};
    for (int i = 0; i < 1000; ++i) q.push(env(1));
    const auto big = q.capacity();
    CHECK(big >= 1000);
    while (q.pop()) {}
    q.reclaim(1000);
    // A steady load above half the capacity never shrinks it.
    for (std::uint32_t g = 0; g < 3 * window; ++g) q.reclaim(big / 2 + 1);
    CHECK(q.capacity() == big);
    // Low use for a whole window halves it (the first window may still hold
    // the last high gulp), repeatedly, down to the minimum.
    for (std::uint32_t g = 0; g < 2 * window; ++g) q.reclaim(10);
    CHECK(q.capacity() == big / 2);
    for (int k = 0; k < 20; ++k)
        for (std::uint32_t g = 0; g < window; ++g) q.reclaim(0);
    CHECK(q.capacity() == troupe::defaults::actors::copy_queue_min_capacity);
    // One large gulp in every window keeps the capacity.
    for (int i = 0; i < 100; ++i) q.push(env(1));
    while (q.pop()) {}
    const auto mid = q.capacity();
    for (std::uint32_t g = 0; g < 4 * window; ++g) q.reclaim(g % (window / 2) == 0 ? 100 : 1);
    CHECK(q.capacity() == mid);
}
