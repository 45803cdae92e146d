// Naming without MPI: publishing, the answers lookups get (found, gone,
// or what is published instead), ids never reused, ~actor forgetting its
// publication through the hook, and lookups ended exactly once when their
// answers race their rank's end from OS threads.
#include <doctest/doctest.h>

#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "leak_check.hpp"
#include "names.hpp"
#include "scale.hpp"
#include "troupe/actor_system.hpp"
#include "troupe/poison_pill.hpp"

namespace rd = troupe::remote::detail;

namespace {

struct teller : troupe::actor {};

rd::name_table* the_table = nullptr;
void forget(troupe::actor& a) noexcept { the_table->unpublish(a); }

}  // namespace

TEST_CASE("names: published actors are found, gone ones say so, ids are never reused") {
    rd::name_table t{3};
    the_table = &t;
    troupe::detail::unpublish_hook = &forget;
    troupe::actor_system sys{1};
    {
        auto a = std::make_unique<teller>();  // destroyed after the system stops
        teller b;
        t.publish("bank.alice", *a, "teller");
        t.publish("bank.bob", b, "teller");
        try {
            t.publish("bank.alice", b, "teller");
            FAIL("a second publication under one name");
        } catch (const std::invalid_argument& e) {
            CHECK(std::string{e.what()} ==
                  "troupe::remote: rank 3 already publishes an actor as \"bank.alice\"");
        }
        rd::lookup_answer found = t.answer("bank.alice");
        CHECK(found.found);
        CHECK(found.id == 1);
        CHECK(found.type == "teller");
        {
            auto held = t.hold();
            REQUIRE(t.find(1) != nullptr);
            CHECK(t.find(1)->a == a.get());
            CHECK(t.find(0) == nullptr);
            CHECK(t.find(3) == nullptr);
        }
        // ~actor forgets the publication through the hook (called here as
        // ~actor calls it: the actor is destroyed only after the system
        // stops): the name is free, the entry stays (a late frame for id 1
        // finds it gone).
        troupe::detail::unpublish_hook(*a);
        rd::lookup_answer gone = t.answer("bank.alice");
        CHECK_FALSE(gone.found);
        CHECK(gone.gone);
        CHECK(gone.type == "teller");
        {
            auto held = t.hold();
            REQUIRE(t.find(1) != nullptr);
            CHECK(t.find(1)->a == nullptr);
            CHECK(t.find(1)->name == "bank.alice");
        }
        // Published anew under the freed name: a new id.
        teller c;
        t.publish("bank.alice", c, "teller");
        CHECK(t.answer("bank.alice").id == 3);
        rd::lookup_answer none = t.answer("bank.carol");
        CHECK_FALSE(none.found);
        CHECK_FALSE(none.gone);
        CHECK(none.published == std::vector<std::string>{"bank.alice", "bank.bob"});
        std::size_t live = 0;
        CHECK(t.try_count_live(live));
        CHECK(live == 2);
        *a | troupe::finished_msg;
        b | troupe::finished_msg;
        c | troupe::finished_msg;
        sys.stop();
    }
    troupe::detail::unpublish_hook = nullptr;
    the_table = nullptr;
}

TEST_CASE("names: a lookup ends exactly once when its answer races its rank's end") {
    troupe_test::leak_check no_leaks;
    const int n = troupe_test::scaled(4000);
    std::atomic<int> awaited{0};
    rd::lookup_table t{awaited};
    std::unique_ptr<std::atomic<int>[]> ends {
        new std::atomic<int>[ static_cast<std::size_t>(n) ]
    };
    std::vector<std::uint64_t> ids;
    ids.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
        ends[i].store(0);
        ids.push_back(t.add(1 + i % 2, "test.name", [&ends, i](const rd::lookup_answer& a) {
            (void)a;
            ends[i].fetch_add(1, std::memory_order_relaxed);
        }));
    }
    CHECK(awaited == n);
    std::atomic<bool> go{false};
    std::thread answers([&] {
        while (!go.load()) std::this_thread::yield();
        for (int i = n - 1; i >= 0; --i)
            if (auto f = t.take(ids[static_cast<std::size_t>(i)])) f(rd::lookup_answer{});
    });
    std::thread goodbye([&] {
        while (!go.load()) std::this_thread::yield();
        for (int k = 0; k < 4; ++k)
            for (rd::lookup_table::pending& p : t.take_to(1)) {
                rd::lookup_answer a;
                a.lost = "rank 1 ended";
                p.done(a);
            }
    });
    go = true;
    answers.join();
    goodbye.join();
    int wrong = 0;
    for (int i = 0; i < n; ++i)
        if (ends[i].load() != 1) ++wrong;
    CHECK(wrong == 0);
    CHECK(awaited == 0);
    CHECK_FALSE(t.take(ids[0]));  // ended already: nothing to run
    CHECK(t.take_to(2).empty());
}
