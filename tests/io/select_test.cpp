// I/O in waituntil: readiness clauses and operation clauses (read_some,
// accept) mixed with channels, futures, timeouts, guards and otherwise; a
// losing clause consumes nothing.
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <sstream>
#include <string>
#include <thread>

#include "fixture.hpp"
#include "leak_check.hpp"
#include "socket_pair.hpp"
#include "troupe/channel.hpp"
#include "troupe/dump.hpp"
#include "troupe/future.hpp"
#include "troupe/io.hpp"
#include "troupe/semaphore.hpp"
#include "troupe/thread.hpp"
#include "troupe/waituntil.hpp"

namespace io = troupe::io;
using namespace std::chrono_literals;
using troupe::on;
using troupe::waituntil;
using troupe_test::on_processors;
using troupe_test::run_in;

namespace {
using troupe_test::socket_pair;
struct tcp_pair {
    io::listener ln = io::listener::listen(io::address::parse("127.0.0.1:0"));
    io::connection client = io::connection::connect(ln.local());
    io::connection server = ln.accept();
};
}  // namespace

TEST_CASE("readable: ready at once, or after a write from another thread") {
    io::engine_name();
    on_processors(
        [](troupe::cluster& c) {
            troupe_test::leak_check no_leaks;
            socket_pair s;
            run_in(c, [&] {
                io::write(s.a, "1", 1);
                bool ran = false;
                waituntil(on(io::readable(s.b), [&] { ran = true; }));
                CHECK(ran);
                char b;
                CHECK(io::read(s.b, &b, 1) == 1);
                troupe::thread w{[&] { io::write(s.a, "2", 1); }};
                int which = 0;
                waituntil(on(io::readable(s.b), [&] { which = 1; }) |
                          on(troupe::timeout(10s), [&] { which = 2; }));
                w.join();
                CHECK(which == 1);
                CHECK(io::read(s.b, &b, 1) == 1);
                CHECK(b == '2');
            });
        },
        {1, 2});
}

TEST_CASE("a timeout beats a silent descriptor; otherwise runs when nothing is ready") {
    troupe::cluster c{1};
    socket_pair s;
    run_in(c, [&] {
        int which = 0;
        waituntil(on(io::readable(s.b), [&] { which = 1; }) |
                  on(troupe::timeout(20ms), [&] { which = 2; }));
        CHECK(which == 2);
        waituntil(on(io::readable(s.b), [&] { which = 1; }), troupe::otherwise([&] { which = 3; }));
        CHECK(which == 3);
        waituntil(on(io::writable(s.a), [&] { which = 4; }));
        CHECK(which == 4);
    });
}

TEST_CASE("read_some clause: the body gets the byte count; a losing read clause reads nothing") {
    on_processors(
        [](troupe::cluster& c) {
            troupe_test::leak_check no_leaks;
            tcp_pair p;
            troupe::channel<int> ch{1};
            run_in(c, [&] {
                char buf[16];
                std::size_t got = 0;
                int from_channel = 0;
                // Both ready: the first in written order (the channel) wins, and
                // the socket's data stays in the kernel.
                p.server.write_all("hello");
                ch.insert(7);
                io::wait_readable(p.client.fd(), 5s);
                waituntil(on(ch.remove_into(from_channel)) |
                          on(p.client.read_some(buf), [&](std::size_t n) { got = n; }));
                CHECK(from_channel == 7);
                CHECK(got == 0);
                // Now only the socket is ready: its clause reads all of it.
                waituntil(on(ch.remove_into(from_channel)) |
                          on(p.client.read_some(buf), [&](std::size_t n) { got = n; }));
                CHECK(got == 5);
                CHECK(std::string(buf, got) == "hello");
            });
        },
        {1, 2});
}

TEST_CASE("read_some clause wakes on data written later; end of file gives 0") {
    on_processors(
        [](troupe::cluster& c) {
            tcp_pair p;
            troupe::channel<int> ch{1};
            run_in(c, [&] {
                troupe::thread w{[&] {
                    p.server.write_all("late");
                    p.server.shutdown();
                }};
                char buf[16];
                std::string got;
                bool eof = false;
                while (!eof) {
                    int v;
                    waituntil(on(ch.remove_into(v)) |
                              on(p.client.read_some(buf),
                                 [&](std::size_t n) {
                                     if (n == 0) eof = true;
                                     got.append(buf, n);
                                 }) |
                              on(troupe::timeout(10s), [&] { FAIL("timed out"); }));
                }
                w.join();
                CHECK(got == "late");
            });
        },
        {1, 2});
}

TEST_CASE(
    "accept clause: a connection arriving beside a channel; a losing accept leaves it queued") {
    troupe::cluster c{2};
    auto ln = io::listener::listen(io::address::parse("127.0.0.1:0"));
    run_in(c, [&] {
        troupe::channel<int> stop{1};
        io::connection got;
        int v = 0;
        // A connection is queued and the channel is ready: the channel
        // (first) wins, the connection stays in the backlog.
        auto client = io::connection::connect(ln.local());
        io::wait_readable(ln.fd(), 5s);
        stop.insert(1);
        waituntil(on(stop.remove_into(v)) |
                  on(ln.accept(), [&](io::connection conn) { got = std::move(conn); }));
        CHECK(v == 1);
        CHECK(!got.is_open());
        waituntil(on(stop.remove_into(v)) |
                  on(ln.accept(), [&](io::connection conn) { got = std::move(conn); }));
        CHECK(got.is_open());
        client.write_all("x");
        char b;
        CHECK(std::size_t(got.read_some(&b, 1)) == 1);
    });
}

TEST_CASE("readiness with a guard, a future and &") {
    troupe::cluster c{2};
    socket_pair s;
    run_in(c, [&] {
        troupe::future<int> f;
        bool sock = false, fut = false;
        troupe::thread t{[&] {
            io::write(s.a, "z", 1);
            f.fulfil(3);
        }};
        waituntil(on(io::readable(s.b), [&] { sock = true; }) & on(f, [&] { fut = true; }));
        t.join();
        CHECK(sock);
        CHECK(fut);
        bool disabled_ran = false;
        waituntil(troupe::when(false, on(io::readable(s.b), [&] { disabled_ran = true; })) |
                  on(f, [] {}));
        CHECK_FALSE(disabled_ran);
    });
}

TEST_CASE("a descriptor closed while a waituntil waits on it: the clause throws closed_error") {
    on_processors(
        [](troupe::cluster& c) {
            socket_pair s;
            std::atomic<bool> waiting{false};
            bool closed = false;
            troupe::thread t{c, [&] {
                                 try {
                                     waiting = true;
                                     waituntil(on(io::readable(s.b)) | on(troupe::timeout(30s)));
                                 } catch (const io::closed_error&) {
                                     closed = true;
                                 }
                             }};
            troupe_test::wait_until([&] { return waiting.load(); });
            // Close only once the clause is queued (the dump shows the waituntil).
            troupe_test::wait_until([&] {
                std::ostringstream os;
                troupe::dump(os);
                // The clause names its descriptor.
                return os.str().find("io readable 'fd " + std::to_string(s.b) + "'") !=
                       std::string::npos;
            });
            io::close(s.b);
            s.b = -1;
            t.join();
            CHECK(closed);
        },
        {1, 2});
}

TEST_CASE("stress: two sockets and a channel in one statement lose and duplicate nothing") {
    on_processors(
        [](troupe::cluster& c) {
            tcp_pair p1, p2;
            troupe::channel<int> ch{4};
            const int per = troupe_test::scaled(2000, 10);
            troupe::thread w1{c, [&] {
                                  for (int i = 0; i < per; ++i) p1.server.write_all("a");
                              }};
            troupe::thread w2{c, [&] {
                                  for (int i = 0; i < per; ++i) p2.server.write_all("b");
                              }};
            troupe::thread w3{c, [&] {
                                  for (int i = 0; i < per; ++i) ch.insert(i);
                              }};
            int as = 0, bs = 0, cs = 0;
            run_in(c, [&] {
                char buf[64];
                int v;
                while (as < per || bs < per || cs < per) {
                    waituntil(troupe::when(as < per, on(
                                                         p1.client.read_some(buf),
                                                         [&](std::size_t n) {
                                                             for (std::size_t i = 0; i < n; ++i)
                                                                 as += buf[i] == 'a';
                                                         })) |
                              troupe::when(bs < per, on(
                                                         p2.client.read_some(buf),
                                                         [&](std::size_t n) {
                                                             for (std::size_t i = 0; i < n; ++i)
                                                                 bs += buf[i] == 'b';
                                                         })) |
                              troupe::when(cs < per, on(
                                                         ch.remove_into(v), [&] { ++cs; })));
                }
            });
            w1.join();
            w2.join();
            w3.join();
            CHECK(as == per);
            CHECK(bs == per);
            CHECK(cs == per);
        },
        {1, 2, 4});
}

TEST_CASE("a readiness event left over from data already read does not choose a read clause") {
    // The waiter reads each byte as soon as it is there (often before the
    // poller saw its edge); the edge that comes later must not make the next
    // statement's read clause win with nothing to read: the peer then waits
    // for the channel clause, which a read stuck in the kernel would never
    // reach (the read's deadline turns that into a failure).
    on_processors(
        [](troupe::cluster& c) {
            tcp_pair p;
            troupe::channel<int> ch{1};
            troupe::semaphore ack;
            const int rounds = troupe_test::scaled(2000, 10);
            troupe::thread peer{c, [&] {
                                    for (int i = 0; i < rounds; ++i) {
                                        p.server.write_all("x");
                                        ack.acquire();  // the byte was read
                                        // Let the waiter queue its next statement (a stale edge
                                        // must find its read clause queued to do harm).
                                        for (int k = 0; k < 20; ++k) troupe::this_thread::yield();
                                        ch.insert(i);
                                        ack.acquire();  // the element was taken
                                    }
                                }};
            int bytes = 0, elements = 0;
            run_in(c, [&] {
                char buf[8];
                int v;
                while (elements < rounds) {
                    waituntil(on(p.client.read_some(buf, 5s),
                                 [&](std::size_t n) {
                                     bytes += int(n);
                                     ack.release();
                                 }) |
                              on(ch.remove_into(v), [&] {
                                  ++elements;
                                  ack.release();
                              }));
                }
            });
            peer.join();
            CHECK(bytes == rounds);
            CHECK(elements == rounds);
        },
        {1, 2});
}

TEST_CASE(
    "the first readiness event of a new connection, after its data was read, chooses nothing") {
    // A client writes at once; the server accepts (registering the socket:
    // the engine reports its readiness once) and reads the data through the
    // clause before that report arrives; the report must not choose the
    // next statement's read clause, which would wait in the kernel.
    on_processors(
        [](troupe::cluster& c) {
            auto ln = io::listener::listen(io::address::parse("127.0.0.1:0"));
            const int rounds = troupe_test::scaled(300, 10);
            run_in(c, [&] {
                for (int i = 0; i < rounds; ++i) {
                    auto client = io::connection::connect(ln.local());
                    client.write_all("x");
                    io::connection server = ln.accept();
                    troupe::channel<int> ch{1};
                    troupe::thread later{[&] {
                        for (int k = 0; k < 20; ++k) troupe::this_thread::yield();
                        ch.insert(i);
                    }};
                    char buf[8];
                    int v = -1;
                    std::size_t got = 0;
                    // Two statements: the first reads the byte, the second must
                    // take the channel's element.
                    for (int s = 0; s < 2; ++s)
                        waituntil(on(server.read_some(buf, 5s), [&](std::size_t n) { got += n; }) |
                                  on(ch.remove_into(v)));
                    later.join();
                    CHECK(got == 1);
                    CHECK(v == i);
                }
            });
        },
        {1, 2});
}

TEST_CASE("I/O clauses name their descriptor (and a read its size) for the dump") {
    tcp_pair p;
    char buf[16];
    auto r = p.client.read_some(buf);
    CHECK(std::string(r.select_kind()) == "io read");
    CHECK(std::string(r.select_name()) == "fd " + std::to_string(p.client.fd()) + ", 16 bytes");
    auto moved = std::move(r);
    CHECK(std::string(moved.select_name()) == "fd " + std::to_string(p.client.fd()) + ", 16 bytes");
    CHECK(std::string(io::writable(p.server.fd()).select_name()) ==
          "fd " + std::to_string(p.server.fd()));
}

TEST_CASE(
    "a statement waiting on I/O tells in the dump how long it has waited while its "
    "processor is busy") {
    // The processor never sleeps (a busy thread yields on it throughout), so
    // only the statement itself can time its wait: the watch thread times
    // waits when processors go to sleep, and a dump's first look reads
    // 0.000 s. No synchronisation rests on time: the wait began after
    // `entering`, and main spins on the clock without sleeping.
    troupe_test::watchdog w{"waituntil I/O wait timed"};
    troupe::cluster c{1};
    socket_pair s;
    std::atomic<bool> stop{false}, busy_running{false}, entering{false};
    troupe::thread busy{c, [&] {
                            busy_running = true;
                            while (!stop.load()) troupe::this_thread::yield();
                        }};
    troupe_test::wait_until([&] { return busy_running.load(); });
    troupe::thread waiter{c, [&] {
                              entering = true;
                              bool ran = false;
                              waituntil(on(io::readable(s.b), [&] { ran = true; }));
                              CHECK(ran);
                          }};
    troupe_test::wait_until([&] { return entering.load(); });
    const auto t0 = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - t0 < 300ms) std::this_thread::yield();
    const std::string clause = "fd " + std::to_string(s.b);
    std::string line;
    troupe_test::wait_until([&] {
        std::ostringstream os;
        troupe::dump(os);
        const std::string t = os.str();
        const std::size_t at = t.find("waituntil");
        if (at == std::string::npos || t.find(clause, at) == std::string::npos) return false;
        const std::size_t begin = t.rfind('\n', at) + 1;
        line = t.substr(begin, t.find('\n', at) - begin);
        return true;
    });
    CAPTURE(line);
    const std::size_t at = line.find("waiting for ");
    REQUIRE(at != std::string::npos);
    // At least most of the 300 ms; a wait first timed by this dump reads 0.000 s.
    CHECK(std::strtod(line.c_str() + at + 12, nullptr) >= 0.1);
    io::write(s.a, "x", 1);
    waiter.join();
    stop = true;
    busy.join();
}
