// stop_source / stop_token: sharing, the select protocol, waking waiters.
#include <atomic>
#include <thread>

#include "fixture.hpp"
#include "troupe/select.hpp"
#include "troupe/stop_token.hpp"
#include "troupe/thread.hpp"

TEST_CASE("stop_token: copies share the state; a request happens once") {
    troupe::stop_source s;
    troupe::stop_token a = s.get_token(), b = a;
    CHECK(a.stop_possible());
    CHECK_FALSE(a.stop_requested());
    CHECK(s.request_stop());
    CHECK_FALSE(s.request_stop());
    CHECK(a.stop_requested());
    CHECK(b.stop_requested());
    CHECK(a == b);
    troupe::stop_token none;
    CHECK_FALSE(none.stop_possible());
    CHECK_FALSE(none.stop_requested());
    troupe::stop_source empty{troupe::stop_source::no_state_t{}};
    CHECK_FALSE(empty.request_stop());
}

TEST_CASE("stop_token: stop_possible is false once every source is gone unstopped") {
    troupe::stop_token t;
    {
        troupe::stop_source s;
        t = s.get_token();
        CHECK(t.stop_possible());
    }
    CHECK_FALSE(t.stop_possible());
}

TEST_CASE("stop_token: a selecting waiter is woken by request_stop, from any thread") {
    troupe_test::on_processors([](troupe::cluster& c) {
        for (int i = 0; i < troupe_test::scaled(200); ++i) {
            troupe::stop_source s;
            troupe::stop_token t = s.get_token();
            std::atomic<bool> woke{false};
            troupe::thread w{c, [&] {
                                 troupe::select_node n{troupe::this_context()};
                                 if (!t.register_select(n))
                                     while (!n.released()) troupe::park();
                                 t.unregister_select(n);
                                 woke = t.stop_requested();
                             }};
            std::thread requester{[&] { s.request_stop(); }};
            requester.join();
            w.join();
            CHECK(woke.load());
        }
    });
}
