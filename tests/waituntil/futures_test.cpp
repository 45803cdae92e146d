// waituntil over futures (Cforall's waituntil/futures), with a server
// fulfilling them concurrently: or / and-or loops until every body ran, the
// guarded shapes for every guard combination, a run-time-length clause over
// a span of futures, and the fair rotation against a starving priority.
#include <array>
#include <atomic>
#include <span>
#include <vector>

#include "fixture.hpp"
#include "troupe/future.hpp"
#include "troupe/thread.hpp"
#include "troupe/timeout.hpp"
#include "troupe/waituntil.hpp"

using troupe::future;
using troupe::on;
using troupe::on_any;
using troupe::waituntil;
using troupe::when;
using troupe_test::on_processors;
using troupe_test::run_in;

constexpr int rounds = troupe_test::scaled(1'500, 5);

TEST_CASE("or and and-or loops over futures fulfilled by a server (Cforall futures)") {
    on_processors([](troupe::cluster& c) {
        for (int round = 0; round < rounds / 10; ++round) {
            future<int> A, B, C;
            troupe::thread server{c, [&] {
                                      B.fulfil(2);
                                      A.fulfil(1);
                                      C.fulfil(3);
                                  }};
            int a = 0, b = 0, cc = 0;
            run_in(c, [&] {
                // A | B | C until all three bodies ran (each at most once: a
                // future's body is not run again once it ran).
                while (a + b + cc < 3) {
                    waituntil(when(!a, on(A, [&] { a += A.get(); })) |
                              when(!b, on(B, [&] { b += B.get() / 2; })) |
                              when(!cc, on(C, [&] { cc += C.get() / 3; })));
                }
            });
            server.join();
            CHECK(a + b + cc == 3);
            A.reset(), B.reset(), C.reset();
            troupe::thread server2{c, [&] {
                                       C.fulfil(3);
                                       B.fulfil(2);
                                       A.fulfil(1);
                                   }};
            a = b = cc = 0;
            run_in(c, [&] {
                while (a + b + cc < 3) {
                    waituntil(
                        when(!a, on(A, [&] { a = 1; })) |
                        (when(!b, on(B, [&] { b = 1; })) & when(!cc, on(C, [&] { cc = 1; }))));
                }
            });
            server2.join();
            CHECK(a + b + cc == 3);
        }
    });
}

TEST_CASE("guarded a | b & c and (a | b) & c for every guard combination") {
    on_processors(
        [](troupe::cluster& c) {
            for (unsigned g = 0; g < 8; ++g) {
                CAPTURE(g);
                const bool ga = g & 1, gb = g & 2, gc = g & 4;
                for (int shape = 0; shape < 2; ++shape) {
                    future<int> A, B, C;
                    troupe::thread server{c, [&] {
                                              B.fulfil(2);
                                              A.fulfil(1);
                                              C.fulfil(3);
                                          }};
                    bool ra = false, rb = false, rc = false;
                    troupe::waituntil_result<3> r;
                    run_in(c, [&] {
                        if (shape == 0)
                            r = waituntil(when(ga, on(A, [&] { ra = true; })) |
                                          (when(gb, on(B, [&] { rb = true; })) &
                                           when(gc, on(C, [&] { rc = true; }))));
                        else
                            r = waituntil((when(ga, on(A, [&] { ra = true; })) |
                                           when(gb, on(B, [&] { rb = true; }))) &
                                          when(gc, on(C, [&] { rc = true; })));
                    });
                    server.join();
                    // The predicate (with disabled clauses dropped) holds.
                    const bool a = !ga ? false : ra, b = rb, cc = rc;
                    if (shape == 0) {
                        const bool bc_present = gb || gc;
                        const bool bc = (!gb || b) && (!gc || cc);
                        CHECK((g == 0 || (ga && a) || (bc_present && bc)));
                    } else {
                        const bool ab_present = ga || gb;
                        const bool ab = (ga && a) || (gb && b);
                        CHECK((g == 0 || ((!ab_present || ab) && (!gc || cc))));
                    }
                    // Disabled clauses never ran; all guards false is a no-op.
                    CHECK((ga || !ra));
                    CHECK((gb || !rb));
                    CHECK((gc || !rc));
                    if (g == 0) CHECK(r.none());
                    CHECK(A.waiters() + B.waiters() + C.waiters() == 0);
                }
            }
        },
        {1, 2});
}

TEST_CASE("run-time-length clause over a span of futures: the ready index reaches the body") {
    on_processors([](troupe::cluster& c) {
        for (int round = 0; round < rounds / 10; ++round) {
            std::array<future<int>, 5> fs;
            const std::size_t which = std::size_t(round) % fs.size();
            troupe::thread server{c, [&] { fs[which].fulfil(int(which) * 10); }};
            std::size_t got = 99;
            int value = -1;
            run_in(c, [&] {
                auto r = waituntil(on_any(std::span{fs},
                                          [&](std::size_t i) {
                                              got = i;
                                              value = fs[i].get();
                                          }) |
                                   on(troupe::timeout(std::chrono::hours(1))));
                CHECK(r.index() == 0);
            });
            server.join();
            CHECK(got == which);
            CHECK(value == int(which) * 10);
            for (auto& f : fs) CHECK(f.waiters() == 0);
        }
    });
    // An empty range is a disabled clause; a range inside an and waits for
    // one of its elements (and the others' completion is not required).
    std::vector<future<int>> none;
    future<int> ready;
    ready.fulfil(1);
    CHECK(waituntil(on_any(none) | on(ready)).index() == 1);
    std::vector<future<int>> many(20);  // beyond the in-place slots
    many[17].fulfil(1);
    std::size_t got = 0;
    auto r = waituntil(on_any(many, [&](std::size_t i) { got = i; }) & on(ready));
    CHECK(r.count() == 2);
    CHECK(got == 17);
}

TEST_CASE("fair rotation serves every ready clause; written order starves the last") {
    std::array<future<int>, 4> fs;
    for (auto& f : fs) f.fulfil(1);
    std::array<int, 4> plain{}, fair{};
    troupe::rotation rot;
    for (int i = 0; i < 400; ++i) {
        ++plain[waituntil(on(fs[0]) | on(fs[1]) | on(fs[2]) | on(fs[3])).index()];
        ++fair[waituntil(rot, on(fs[0]) | on(fs[1]) | on(fs[2]) | on(fs[3])).index()];
    }
    CHECK(plain == std::array<int, 4>{400, 0, 0, 0});
    CHECK(fair == std::array<int, 4>{100, 100, 100, 100});
    // Inside a run-time-length clause the elements rotate as well.
    std::array<int, 4> elems{};
    for (int i = 0; i < 400; ++i) waituntil(rot, on_any(fs, [&](std::size_t k) { ++elems[k]; }));
    CHECK(elems == std::array<int, 4>{100, 100, 100, 100});
}

TEST_CASE("general-mode statements never outlive a resource's wake (stress)") {
    // Many short and-statements whose clauses are completed by other threads
    // right as the statement finishes: ASan/TSan catch a wake() that touches
    // a statement's nodes after it returned.
    on_processors([](troupe::cluster& c) {
        for (int i = 0; i < rounds; ++i) {
            future<int> A, B, C;
            troupe::thread t1{c, [&] { A.fulfil(1); }};
            troupe::thread t2{c, [&] { B.fulfil(2); }};
            troupe::thread t3{c, [&] { C.fulfil(3); }};
            int sum = 0;
            run_in(c, [&] {
                waituntil((on(A, [&] { sum += 1; }) | on(B, [&] { sum += 10; })) &
                          on(C, [&] { sum += 100; }));
            });
            t1.join(), t2.join(), t3.join();
            CHECK((sum == 101 || sum == 110 || sum == 111));
        }
    });
}
