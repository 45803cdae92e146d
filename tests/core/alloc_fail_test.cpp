// The test support's allocation-failure injector (tests/support/alloc_fail.hpp).
#include <atomic>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "alloc_fail.hpp"
#include "fixture.hpp"
#include "troupe/thread.hpp"

namespace {
// Keeps the optimiser from eliding a new/delete pair.
void escape(void* p) { asm volatile("" : : "g"(p) : "memory"); }

int* allocate_int(int v) {
    int* p = new int(v);
    escape(p);
    return p;
}

// Makes three allocations or more, releasing each one it got.
void three_allocations() {
    auto a = std::unique_ptr<int>(allocate_int(1));
    auto b = std::make_unique<std::string>(64, 'x');
    escape(b.get());
    auto c = std::make_unique<std::vector<int>>(100);
    escape(c->data());
}
}  // namespace

TEST_CASE("the injector fails each allocation point in turn and counts them") {
    std::vector<std::size_t> failed_at;
    std::size_t points = troupe_test::for_each_allocation_failure([&](std::size_t n) {
        try {
            three_allocations();
        } catch (const std::bad_alloc&) {
            failed_at.push_back(n);
            throw;
        }
    });
    CHECK(points >= 3);  // make_unique<string>(64) allocates twice
    CHECK(failed_at.size() == points);
}

TEST_CASE("nothrow new returns nullptr at the injected point") {
    troupe_test::fail_allocation guard{2};
    int* first = new (std::nothrow) int(1);
    escape(first);
    int* second = new (std::nothrow) int(2);
    escape(second);
    CHECK(first != nullptr);
    CHECK(second == nullptr);
    CHECK(guard.fired());
    CHECK(guard.seen() == 2);
    delete first;
}

TEST_CASE("only the armed context's allocations fail") {
    troupe_test::on_processors([](troupe::cluster& c) {
        std::atomic<int> phase{0};
        bool user_ok = false, os_ok = false;
        // Both started before the guard is armed, both allocate while it is.
        troupe::thread user{c, [&] {
                                while (phase.load() == 0) troupe::this_thread::yield();
                                delete allocate_int(7);
                                user_ok = true;
                            }};
        std::thread os{[&] {
            while (phase.load() == 0) std::this_thread::yield();
            delete allocate_int(8);
            os_ok = true;
        }};
        {
            troupe_test::fail_allocation guard{1};
            phase.store(1);
            user.join();
            os.join();
            CHECK_FALSE(guard.fired());
            CHECK_THROWS_AS(delete allocate_int(1), std::bad_alloc);
            CHECK(guard.fired());
        }
        CHECK(user_ok);
        CHECK(os_ok);
    });
}

TEST_CASE("a user thread's failure point follows it across processors") {
    troupe_test::on_processors(
        [](troupe::cluster& c) {
            bool threw = false;
            troupe::thread t{c, [&] {
                                 troupe_test::fail_allocation guard{3};
                                 delete allocate_int(1);
                                 troupe::this_thread::yield();
                                 delete allocate_int(2);
                                 troupe::this_thread::yield();
                                 try {
                                     delete allocate_int(3);
                                 } catch (const std::bad_alloc&) {
                                     threw = true;
                                 }
                             }};
            t.join();
            CHECK(threw);
        },
        {1, 2, 4});
}
