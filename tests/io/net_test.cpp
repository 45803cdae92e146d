// Listeners and connections: echo over TCP and Unix sockets, serve(), peer
// reset mid-read and mid-write, half-close, a connect to a closed port, a
// listener closed under accept, and many descriptors at once.
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fixture.hpp"
#include "leak_check.hpp"
#include "troupe/dump.hpp"
#include "troupe/io.hpp"
#include "troupe/thread.hpp"

namespace io = troupe::io;
using namespace std::chrono_literals;
using troupe_test::on_processors;
using troupe_test::run_in;
using troupe_test::wait_until;

namespace {

io::listener local_listener() { return io::listener::listen(io::address::parse("127.0.0.1:0")); }

bool io_waiter_on(int fd) {
    std::ostringstream os;
    troupe::dump(os);
    return os.str().find("fd " + std::to_string(fd) + ", ") != std::string::npos;
}

// Makes the next close of `fd` send a reset (RST) instead of a FIN.
void linger_zero(int fd) {
    ::linger l{1, 0};
    REQUIRE(::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l) == 0);
}

}  // namespace

TEST_CASE("address parsing and printing") {
    CHECK(io::address::parse("127.0.0.1:80").to_string() == "127.0.0.1:80");
    CHECK(io::address::parse("[::1]:8080").to_string() == "[::1]:8080");
    CHECK(io::address::parse("[::1]:8080").port() == 8080);
    CHECK(io::address::parse("unix:/tmp/x.sock").to_string() == "unix:/tmp/x.sock");
    CHECK(io::address::parse("localhost:7").port() == 7);
    CHECK_THROWS_AS(io::address::parse("127.0.0.1"), std::invalid_argument);
    CHECK_THROWS_AS(io::address::parse("127.0.0.1:99999"), std::invalid_argument);
    CHECK_THROWS_AS(io::address::parse("no.such.host.invalid:1"), std::invalid_argument);
    CHECK_THROWS_AS(io::address::unix_path(std::string(200, 'a')), std::invalid_argument);
}

TEST_CASE("TCP echo: many connections served by user threads on few processors") {
    io::engine_name();
    on_processors(
        [](troupe::cluster& c) {
            troupe_test::leak_check no_leaks;
            auto ln = local_listener();
            const auto at = ln.local();
            const int clients = troupe_test::scaled(64, 4);
            const int rounds = troupe_test::scaled(50, 5);
            troupe::thread server{c, [&] {
                                      io::serve(ln, [](io::connection& conn) {
                                          char buf[512];
                                          while (std::size_t n = conn.read_some(buf))
                                              conn.write_all(buf, n);
                                      });
                                  }};
            std::vector<troupe::thread> cs;
            std::atomic<int> ok{0};
            for (int i = 0; i < clients; ++i) {
                cs.emplace_back(c, [&, i] {
                    io::connection conn = io::connection::connect(at);
                    CHECK(conn.peer().port() == at.port());
                    for (int r = 0; r < rounds; ++r) {
                        const std::string msg =
                            "client " + std::to_string(i) + " round " + std::to_string(r);
                        conn.write_all(msg);
                        std::string back(msg.size(), '\0');
                        CHECK(conn.read_exact(std::as_writable_bytes(std::span(back))));
                        CHECK(back == msg);
                    }
                    conn.shutdown();
                    char b;
                    CHECK(std::size_t(conn.read_some(&b, 1)) == 0);  // the server closed after EOF
                    ok.fetch_add(1);
                });
            }
            for (auto& t : cs) t.join();
            ln.close();  // ends serve
            server.join();
            CHECK(ok.load() == clients);
        },
        {1, 2, 4});
}

TEST_CASE("Unix-domain listener and connection") {
    troupe::cluster c{2};
    const std::string path = "/tmp/troupe_io_test_" + std::to_string(::getpid()) + ".sock";
    auto ln = io::listener::listen(io::address::unix_path(path));
    CHECK(ln.local().to_string() == "unix:" + path);
    troupe::thread server{c, [&] {
                              io::connection conn = ln.accept();
                              char buf[16];
                              std::size_t n = conn.read_some(buf);
                              conn.write_all(buf, n);
                          }};
    run_in(c, [&] {
        auto conn = io::connection::connect(io::address::parse("unix:" + path));
        conn.write_all("ping");
        char buf[8];
        std::size_t n = conn.read_some(buf);
        CHECK(std::string(buf, n) == "ping");
    });
    server.join();
    ln.close();
    CHECK(::access(path.c_str(), F_OK) != 0);  // the socket file is gone
}

TEST_CASE("connect to a closed port fails with ECONNREFUSED") {
    // Find a free port, then close its listener.
    std::uint16_t port;
    {
        auto ln = local_listener();
        port = ln.local().port();
    }
    troupe::cluster c{1};
    run_in(c, [&] {
        try {
            (void)io::connection::connect(io::address::ip("127.0.0.1", port), 5s);
            FAIL("connected to a closed port");
        } catch (const io::error& e) {
            CHECK(e.code() == std::errc::connection_refused);
        }
    });
}

TEST_CASE("peer reset mid-read: the blocked reader gets ECONNRESET") {
    on_processors(
        [](troupe::cluster& c) {
            auto ln = local_listener();
            run_in(c, [&] {
                auto client = io::connection::connect(ln.local());
                io::connection server = ln.accept();
                troupe::thread reader{[&] {
                    char buf[64];
                    // First some data, then the reset while waiting for more.
                    CHECK(std::size_t(client.read_some(buf)) == 3);
                    try {
                        (void)std::size_t(client.read_some(buf));
                        FAIL("no error after a reset");
                    } catch (const io::error& e) {
                        CHECK(e.code() == std::errc::connection_reset);
                    }
                }};
                server.write_all("abc");
                wait_until([&] { return io_waiter_on(client.fd()); });
                linger_zero(server.fd());
                server.close();
                reader.join();
            });
        },
        {1, 2});
}

TEST_CASE("peer reset mid-write: a writer blocked on a full buffer gets EPIPE or ECONNRESET") {
    on_processors(
        [](troupe::cluster& c) {
            auto ln = local_listener();
            run_in(c, [&] {
                auto client = io::connection::connect(ln.local());
                io::connection server = ln.accept();
                std::atomic<bool> failed{false};
                troupe::thread writer{[&] {
                    std::vector<char> big(1 << 20, 'x');
                    try {
                        for (;;) client.write_all(big.data(), big.size());
                    } catch (const io::error& e) {
                        CHECK((e.code() == std::errc::broken_pipe ||
                               e.code() == std::errc::connection_reset));
                        CHECK(std::string(e.what()).find("after") != std::string::npos);
                        failed = true;
                    }
                }};
                // The writer fills both buffers and waits; then the peer resets.
                wait_until([&] { return io_waiter_on(client.fd()); });
                linger_zero(server.fd());
                server.close();
                writer.join();
                CHECK(failed.load());
            });
        },
        {1, 2});
}

TEST_CASE("half-close: the peer reads end of file and can still write back") {
    troupe::cluster c{2};
    auto ln = local_listener();
    run_in(c, [&] {
        auto client = io::connection::connect(ln.local());
        io::connection server = ln.accept();
        client.write_all("request");
        client.shutdown(SHUT_WR);
        std::string got;
        char buf[4];
        while (std::size_t n = server.read_some(buf)) got.append(buf, n);
        CHECK(got == "request");
        server.write_all("reply");
        server.close();
        std::string back;
        while (std::size_t n = client.read_some(buf)) back.append(buf, n);
        CHECK(back == "reply");
    });
}

TEST_CASE("closing a listener wakes a thread blocked in accept with closed_error") {
    on_processors(
        [](troupe::cluster& c) {
            auto ln = local_listener();
            const int fd = ln.fd();
            bool closed = false;
            troupe::thread acceptor{c, [&] {
                                        try {
                                            io::connection conn = ln.accept();
                                        } catch (const io::closed_error&) {
                                            closed = true;
                                        }
                                    }};
            wait_until([&] { return io_waiter_on(fd); });
            ln.close();
            acceptor.join();
            CHECK(closed);
        },
        {1, 2});
}

TEST_CASE("accept with a deadline times out") {
    auto ln = local_listener();
    CHECK_THROWS_AS(io::connection(ln.accept(20ms)), io::timeout_error);
}

TEST_CASE("many descriptors at once, or a clear RLIMIT_NOFILE error") {
    ::rlimit lim{};
    REQUIRE(::getrlimit(RLIMIT_NOFILE, &lim) == 0);
    troupe::cluster c{2};
    auto ln = local_listener();
    const auto at = ln.local();
    const std::size_t want = troupe_test::sanitized ? 2'000 : 10'000;
    const std::size_t pairs = want / 2;
    run_in(c, [&] {
        std::vector<io::connection> mine, theirs;
        mine.reserve(pairs);
        theirs.reserve(pairs);
        bool limited = false;
        try {
            for (std::size_t i = 0; i < pairs; ++i) {
                mine.push_back(io::connection::connect(at));
                theirs.push_back(ln.accept());
            }
        } catch (const io::error& e) {
            // Only the descriptor limit may stop us, and it is named.
            CHECK(e.code() == std::errc::too_many_files_open);
            CHECK(std::string(e.what()).find("RLIMIT_NOFILE") != std::string::npos);
            limited = true;
        }
        if (!limited) CHECK(mine.size() == pairs);
        if (lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur < want) CHECK(limited);
        // Every connection works: one byte each way over a sample of them.
        for (std::size_t i = 0; i < theirs.size(); i += 97) {
            mine[i].write_all("x");
            char b;
            CHECK(std::size_t(theirs[i].read_some(&b, 1)) == 1);
        }
    });
}

TEST_CASE("a lowered RLIMIT_NOFILE gives an error naming it") {
    ::rlimit old{};
    REQUIRE(::getrlimit(RLIMIT_NOFILE, &old) == 0);
    auto ln = local_listener();
    // Leave room for what is open now plus a few.
    int probe = ::dup(0);
    REQUIRE(probe >= 0);
    ::close(probe);
    ::rlimit low{rlim_t(probe + 4), old.rlim_max};
    REQUIRE(::setrlimit(RLIMIT_NOFILE, &low) == 0);
    std::vector<io::connection> conns;
    bool named = false;
    try {
        for (int i = 0; i < 16; ++i) conns.push_back(io::connection::connect(ln.local()));
    } catch (const io::error& e) {
        named = std::string(e.what()).find("RLIMIT_NOFILE") != std::string::npos;
    }
    conns.clear();
    ::setrlimit(RLIMIT_NOFILE, &old);
    CHECK(named);
}
