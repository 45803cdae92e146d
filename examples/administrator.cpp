// The administrator pattern with waituntil.
//
// 1. A server thread waits, in one statement, for a request on a channel, a
//    shutdown future, or a timeout (it does housekeeping when idle).
// 2. The thesis' bounded buffer: an administrator owns the buffer and
//    accepts inserts only while it has room and removes only while it has
//    elements. Go's select has no guards, so Go writes three selects for
//    the three cases:
//
//        if count < Size && count > 0 {
//            select { case i := <-insert: ...; case remove <- front: ...; case <-done: ... }
//        } else if count < Size {
//            select { case i := <-insert: ...; case <-done: ... }
//        } else {
//            select { case remove <- front: ...; case <-done: ... }
//        }
//
//    waituntil says it once, with `when` guards (one statement, linear in the
//    number of guards).
//
// Without the channels module, part 1 runs with a semaphore counting
// requests instead of a request channel, and part 2 is skipped.
#include <chrono>
#include <cstdio>
#include <deque>
#include <vector>

#include "troupe/future.hpp"
#include "troupe/semaphore.hpp"
#include "troupe/thread.hpp"
#include "troupe/timeout.hpp"
#include "troupe/waituntil.hpp"

#if __has_include(<troupe/channel.hpp>)
#include "troupe/channel.hpp"
#define HAVE_CHANNELS 1
#endif

using namespace std::chrono_literals;
using troupe::on;
using troupe::waituntil;
using troupe::when;

#if HAVE_CHANNELS

struct request {
    int client;
    int amount;
};

static void server_with_shutdown() {
    troupe::channel<request> requests{16, "requests"};
    troupe::future<> shutdown;
    long total = 0;
    int served = 0, housekeeping = 0;

    troupe::thread server{[&] {
        request r{};
        for (bool running = true; running;) {
            waituntil(on(shutdown, [&] { running = false; })  // first: shutdown has priority
                      | on(requests.remove_into(r), [&] { total += r.amount, ++served; }) |
                      on(troupe::timeout(20ms), [&] { ++housekeeping; }));
        }
        // Shutdown: serve what was already queued, then stop.
        while (requests.try_remove(r) == troupe::channel_status::success)
            total += r.amount, ++served;
    }};
    std::vector<troupe::thread> clients;
    for (int c = 0; c < 4; ++c)
        clients.emplace_back([&, c] {
            for (int i = 1; i <= 25; ++i) requests << request{c, i};
        });
    for (auto& c : clients) c.join();
    shutdown.fulfil();
    server.join();
    std::printf("server: %d requests served, total %ld\n", served, total);
}

static void bounded_buffer() {
    constexpr std::size_t size = 4;
    troupe::channel<int> insert{0, "insert"}, remove{0, "remove"};
    troupe::future<> done;
    std::deque<int> buffer;  // owned by the administrator alone

    troupe::thread administrator{[&] {
        int in = 0;
        for (bool running = true; running;) {
            // The target of a disabled clause is still evaluated: give the
            // remove clause a valid element to offer even when empty.
            int front = buffer.empty() ? 0 : buffer.front();
            waituntil(
                when(buffer.size() < size,
                     on(insert.remove_into(in), [&] { buffer.push_back(in); })) |
                when(!buffer.empty(), on(remove.insert_from(front), [&] { buffer.pop_front(); })) |
                on(done, [&] { running = false; }));
        }
    }};
    long produced = 0, consumed = 0;
    troupe::thread producer{[&] {
        for (int i = 1; i <= 1000; ++i) insert << i, produced += i;
    }};
    troupe::thread consumer{[&] {
        for (int i = 1; i <= 1000; ++i) consumed += remove.remove();
    }};
    producer.join();
    consumer.join();
    done.fulfil();
    administrator.join();
    std::printf("bounded buffer: produced %ld, consumed %ld, left %zu\n", produced, consumed,
                buffer.size());
}

#else

static void server_with_shutdown() {
    troupe::semaphore requests{0, "requests"};
    troupe::future<> shutdown;
    int served = 0, housekeeping = 0;
    troupe::thread server{[&] {
        for (bool running = true; running;) {
            waituntil(on(shutdown, [&] { running = false; })  // first: shutdown has priority
                      | on(requests, [&] { ++served; }) |
                      on(troupe::timeout(20ms), [&] { ++housekeeping; }));
        }
        while (requests.try_acquire()) ++served;
    }};
    for (int i = 0; i < 100; ++i) requests.release();
    shutdown.fulfil();
    server.join();
    std::printf("server: %d requests served\n", served);
}

static void bounded_buffer() { std::printf("bounded buffer: needs the channels module\n"); }

#endif

int main() {
    server_with_shutdown();
    bounded_buffer();
}
