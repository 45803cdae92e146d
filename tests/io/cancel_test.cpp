// Cancellation of io calls with a troupe::stop_token, and the deadlines of
// file operations: a stop (or a deadline) during a wait ends the call with
// troupe::cancelled (timeout_error) and the call transferred nothing; a
// stop racing completion lets exactly one side win; io_uring file
// operations in flight are cancelled and their completions reaped.
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "engine.hpp"  // io/src: the io_uring file operation on a pipe
#include "fixture.hpp"
#include "leak_check.hpp"
#include "socket_pair.hpp"
#include "troupe/dump.hpp"
#include "troupe/io.hpp"
#include "troupe/stop_token.hpp"
#include "troupe/thread.hpp"

namespace io = troupe::io;
using namespace std::chrono_literals;
using troupe_test::on_processors;
using troupe_test::run_in;
using troupe_test::wait_until;

namespace {

using troupe_test::socket_pair;

// True while some thread is in an io wait on `fd` (the dump's "fd N, op").
bool io_waiter_on(int fd, const char* op) {
    std::ostringstream os;
    troupe::dump(os);
    return os.str().find("fd " + std::to_string(fd) + ", " + op) != std::string::npos;
}

// Reads what `fd` holds now (it must hold `n` bytes: a deadline bounds it).
std::string drain(int fd, std::size_t n) {
    std::string out(n, '\0');
    std::size_t got = 0;
    while (got < n) {
        const std::size_t k = io::read(fd, out.data() + got, n - got, 5s);
        REQUIRE(k > 0);
        got += k;
    }
    return out;
}

// Whether `fd` has nothing to read now.
bool empty_now(int fd) {
    char b;
    try {
        (void)io::read(fd, &b, 1, -1ms);
    } catch (const io::timeout_error&) {
        return true;
    }
    return false;
}

std::string temp_path(const char* what) {
    return "/tmp/troupe_io_cancel_" + std::to_string(::getpid()) + "_" + what;
}

}  // namespace

TEST_CASE("a stop wakes a user thread waiting in recv: cancelled, and the bytes sent later stay") {
    on_processors(
        [](troupe::cluster& c) {
            troupe_test::leak_check no_leaks;
            socket_pair s;
            troupe::stop_source stop;
            bool cancelled = false;
            std::string what;
            troupe::thread reader{c, [&] {
                                      char b[8];
                                      try {
                                          (void)io::recv(s.b, b, sizeof b, 0, {}, stop.get_token());
                                      } catch (const troupe::cancelled& e) {
                                          cancelled = true;
                                          what = e.what();
                                      }
                                  }};
            run_in(c, [&] {
                wait_until([&] { return io_waiter_on(s.b, "recv"); });
                CHECK(stop.request_stop());
            });
            reader.join();
            CHECK(cancelled);
            CHECK(what.find("recv on fd " + std::to_string(s.b)) != std::string::npos);
            CHECK(what.find("cancelled") != std::string::npos);
            // The descriptor is as before: data sent now is read whole.
            run_in(c, [&] {
                io::send(s.a, "abc", 3);
                CHECK(drain(s.b, 3) == "abc");
            });
        },
        {1, 2});
}

TEST_CASE(
    "a stop wakes an OS thread waiting in read, and one requested before the call "
    "consumes nothing") {
    socket_pair s;
    troupe::stop_source stop;
    std::atomic<bool> cancelled{false};
    std::thread reader{[&] {
        char b[4];
        try {
            (void)io::read(s.b, b, sizeof b, {}, stop.get_token());
        } catch (const troupe::cancelled&) {
            cancelled = true;
        }
    }};
    wait_until([&] { return io_waiter_on(s.b, "read"); });
    stop.request_stop();
    reader.join();
    CHECK(cancelled.load());
    // Already stopped: the call throws at once, even with data ready, and
    // the data stays for the next read.
    io::write(s.a, "xyz", 3);
    char b[4];
    CHECK_THROWS_AS((void)io::read(s.b, b, sizeof b, {}, stop.get_token()), troupe::cancelled);
    CHECK_THROWS_AS((void)io::recv(s.b, b, sizeof b, 0, {}, stop.get_token()), troupe::cancelled);
    CHECK(drain(s.b, 3) == "xyz");
    CHECK_THROWS_AS((void)io::write(s.a, "q", 1, {}, stop.get_token()), troupe::cancelled);
    CHECK_THROWS_AS(io::wait_readable(s.b, {}, stop.get_token()), troupe::cancelled);
    CHECK_THROWS_AS((void)io::read(s.b, b, 0, {}, stop.get_token()), troupe::cancelled);
    CHECK(empty_now(s.b));  // the cancelled write wrote nothing
}

TEST_CASE(
    "connection read_some and listener accept take a token; a cancelled accept leaves the "
    "pending connection") {
    on_processors(
        [](troupe::cluster& c) {
            troupe_test::leak_check no_leaks;
            auto ln = io::listener::listen(io::address::parse("127.0.0.1:0"));
            const io::address at = io::address::ip("127.0.0.1", ln.local().port());
            troupe::stop_source stop_accept;
            bool accept_cancelled = false;
            troupe::thread acceptor{c, [&] {
                                        try {
                                            io::connection x =
                                                ln.accept({}, stop_accept.get_token());
                                        } catch (const troupe::cancelled&) {
                                            accept_cancelled = true;
                                        }
                                    }};
            run_in(c, [&] {
                wait_until([&] { return io_waiter_on(ln.fd(), "accept"); });
                stop_accept.request_stop();
            });
            acceptor.join();
            CHECK(accept_cancelled);
            run_in(c, [&] {
                io::connection client = io::connection::connect(at, 5s);
                io::connection server = ln.accept(5s);  // the connection was not lost
                troupe::stop_source stop_read;
                bool read_cancelled = false;
                troupe::thread r{c, [&] {
                                     char b[16];
                                     try {
                                         std::size_t n = server.read_some(b, sizeof b, {},
                                                                          stop_read.get_token());
                                         (void)n;
                                     } catch (const troupe::cancelled&) {
                                         read_cancelled = true;
                                     }
                                 }};
                wait_until([&] { return io_waiter_on(server.fd(), "recv"); });
                stop_read.request_stop();
                r.join();
                CHECK(read_cancelled);
                client.write_all("hello");
                char b[16];
                CHECK(server.read_exact(std::as_writable_bytes(std::span<char>(b, 5)), 5s));
                CHECK(std::string(b, 5) == "hello");
                // Stopped before: connect makes no connection.
                CHECK_THROWS_AS((void)io::connection::connect(at, {}, stop_read.get_token()),
                                troupe::cancelled);
                CHECK_THROWS_AS((void)io::connection(ln.accept(-1ms)), io::timeout_error);
            });
        },
        {1, 2});
}

TEST_CASE("a write_all cancelled mid-way reports exactly what reached the peer") {
    on_processors(
        [](troupe::cluster& c) {
            socket_pair s;
            int small = 4096;
            ::setsockopt(s.a, SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
            ::setsockopt(s.b, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
            io::connection conn(s.a);
            s.a = -1;
            const std::string data(1 << 20, 'w');
            troupe::stop_source stop;
            bool cancelled = false;
            troupe::thread w{c, [&] {
                                 try {
                                     conn.write_all(data, {}, stop.get_token());
                                 } catch (const troupe::cancelled&) {
                                     cancelled = true;
                                 }
                             }};
            run_in(c, [&] {
                wait_until([&] { return io_waiter_on(conn.fd(), "send"); });
                stop.request_stop();
            });
            w.join();
            REQUIRE(cancelled);
            const std::size_t sent = conn.written();
            CHECK(sent > 0);
            CHECK(sent < data.size());
            // The peer holds exactly `sent` bytes, nothing more.
            run_in(c, [&] {
                CHECK(drain(s.b, sent) == data.substr(0, sent));
                CHECK(empty_now(s.b));
            });
        },
        {1, 2});
}

TEST_CASE("a stop racing the data: the byte reaches exactly one side") {
    on_processors(
        [](troupe::cluster& c) {
            troupe_test::leak_check no_leaks;
            socket_pair s;
            const int rounds = troupe_test::scaled(300, 10);
            int got = 0, cancelled = 0;
            for (int round = 0; round < rounds; ++round) {
                troupe::stop_source stop;
                std::atomic<bool> waiting{false};
                troupe::thread reader{c, [&] {
                                          char b;
                                          waiting = true;
                                          try {
                                              if (io::read(s.b, &b, 1, {}, stop.get_token()) == 1) {
                                                  CHECK(b == char('a' + round % 26));
                                                  ++got;
                                              }
                                          } catch (const troupe::cancelled&) {
                                              ++cancelled;
                                              // The byte was not consumed: read it now.
                                              CHECK(drain(s.b, 1)[0] == char('a' + round % 26));
                                          }
                                      }};
                troupe::thread racer{c, [&] {
                                         wait_until([&] { return waiting.load(); });
                                         const char b = char('a' + round % 26);
                                         if (round % 2) {
                                             io::write(s.a, &b, 1);
                                             stop.request_stop();
                                         } else {
                                             stop.request_stop();
                                             io::write(s.a, &b, 1);
                                         }
                                     }};
                racer.join();
                reader.join();
            }
            CHECK(got + cancelled == rounds);
            CHECK(empty_now(s.b));  // nothing left over: no byte read twice or lost
        },
        {1, 2, 4});
}

TEST_CASE("file operations: a stop or a passed deadline before the call transfers nothing") {
    troupe::cluster c{2};
    const std::string path = temp_path("file");
    run_in(c, [&] {
        troupe::stop_source stop;
        stop.request_stop();
        io::file f = io::file::open(path, O_RDWR | O_CREAT | O_TRUNC);
        f.write_all("0123456789");
        const auto buf = [](char* b, std::size_t n) {
            return std::as_writable_bytes(std::span<char>(b, n));
        };
        const auto data = std::as_bytes(std::span<const char>("abc", 3));
        char b[16];
        CHECK_THROWS_AS((void)f.read_at(buf(b, 4), 0, {}, stop.get_token()), troupe::cancelled);
        CHECK_THROWS_AS((void)f.read_at(buf(b, 4), 0, -1ms), io::timeout_error);
        CHECK_THROWS_AS((void)f.write_at(data, 0, {}, stop.get_token()), troupe::cancelled);
        CHECK_THROWS_AS((void)f.write_at(data, 0, -1ms), io::timeout_error);
        CHECK_THROWS_AS(f.write_all(data, {}, stop.get_token()), troupe::cancelled);
        CHECK(f.written() == 0);
        CHECK_THROWS_AS(f.write_all(data, -1ms), io::timeout_error);
        CHECK_THROWS_AS((void)f.read_all({}, stop.get_token()), troupe::cancelled);
        CHECK_THROWS_AS((void)f.read_all(-1ms), io::timeout_error);
        CHECK(f.size() == 10);  // nothing was written
        io::file g = io::file::open(path, O_RDONLY);
        CHECK_THROWS_AS((void)g.read_some(buf(b, 4), {}, stop.get_token()), troupe::cancelled);
        CHECK(g.read_all(5s) == "0123456789");  // the position did not move
        const int fd = f.fd();
        const ::iovec iov{b, 4};
        CHECK_THROWS_AS((void)io::readv(fd, &iov, 1, {}, stop.get_token()), troupe::cancelled);
        CHECK_THROWS_AS((void)io::writev(fd, &iov, 1, -1ms), io::timeout_error);
        CHECK_THROWS_AS((void)io::pread(fd, b, 4, 0, {}, stop.get_token()), troupe::cancelled);
        CHECK_THROWS_AS((void)io::pwrite(fd, b, 4, 0, {}, stop.get_token()), troupe::cancelled);
    });
    ::unlink(path.c_str());
}

TEST_CASE("a FIFO opened as a file waits by readiness: its deadline and its stop end the wait") {
    troupe::cluster c{2};
    const std::string path = temp_path("fifo");
    ::unlink(path.c_str());
    REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
    run_in(c, [&] {
        // O_RDWR: the open does not wait for a writer (Linux).
        io::file f = io::file::open(path, O_RDWR);
        char b[8];
        const auto buf = std::as_writable_bytes(std::span<char>(b));
        CHECK_THROWS_AS((void)f.read_some(buf, 20ms), io::timeout_error);
        troupe::stop_source stop;
        bool cancelled = false;
        troupe::thread r{[&] {
            try {
                (void)f.read_some(buf, {}, stop.get_token());
            } catch (const troupe::cancelled&) {
                cancelled = true;
            }
        }};
        wait_until([&] { return io_waiter_on(f.fd(), "read"); });
        stop.request_stop();
        r.join();
        CHECK(cancelled);
        f.write_all("fifo");  // a FIFO has no offset: written at its stream position
        CHECK(f.read_some(buf, 5s) == 4);
        CHECK(std::string(b, 4) == "fifo");
    });
    ::unlink(path.c_str());
}

TEST_CASE(
    "io_uring: a file operation in flight is cancelled by a stop or its deadline and its "
    "completion reaped; nothing is consumed") {
    if (std::string(io::engine_name()) != "io_uring") {
        MESSAGE("engine is " << io::engine_name() << ": no submitted file operations");
        return;
    }
    // A blocking pipe never registered with the engine: an IORING_OP_READ
    // on it stays in flight until data comes (a disk read completes too
    // fast to be caught in flight).
    int p[2];
    REQUIRE(::pipe2(p, O_CLOEXEC) == 0);
    io::detail::engine& e = io::detail::the_engine();
    on_processors(
        [&](troupe::cluster& c) {
            for (int kind = 0; kind < 2; ++kind) {  // 0: a stop, 1: the deadline
                CAPTURE(kind);
                troupe::stop_source stop;
                long res = 0;
                io::detail::wake_reason ended = io::detail::wake_reason::none;
                char b[8];
                troupe::thread t{c, [&] {
                                     res = e.file_op(false, p[0], b, sizeof b, 0,
                                                     kind ? io::deadline(20ms) : io::deadline(),
                                                     stop.get_token(), ended);
                                 }};
                if (kind == 0) {
                    run_in(c, [&] {
                        wait_until([&] { return io_waiter_on(p[0], "file read"); });
                        stop.request_stop();
                    });
                }
                t.join();
                CHECK(res == -ECANCELED);
                CHECK(ended == (kind ? io::detail::wake_reason::timeout
                                     : io::detail::wake_reason::cancelled));
                // The cancelled read took nothing: a byte written now is
                // there for the next read.
                REQUIRE(::write(p[1], "z", 1) == 1);
                char z = 0;
                REQUIRE(::read(p[0], &z, 1) == 1);
                CHECK(z == 'z');
            }
            // Not cancelled: the result stands, the deadline unused.
            REQUIRE(::write(p[1], "ok", 2) == 2);
            long res = 0;
            io::detail::wake_reason ended = io::detail::wake_reason::cancelled;
            char b[8];
            run_in(c, [&] {
                troupe::stop_source stop;
                res = e.file_op(false, p[0], b, sizeof b, 0, io::deadline(5s), stop.get_token(),
                                ended);
            });
            CHECK(res == 2);
            CHECK(ended == io::detail::wake_reason::none);
        },
        {1, 2});
    ::close(p[0]);
    ::close(p[1]);
}

TEST_CASE("io_uring: an OS thread's file operation in flight is cancelled by a stop") {
    if (std::string(io::engine_name()) != "io_uring") return;
    int p[2];
    REQUIRE(::pipe2(p, O_CLOEXEC) == 0);
    troupe::stop_source stop;
    long res = 0;
    io::detail::wake_reason ended = io::detail::wake_reason::none;
    std::thread t{[&] {
        char b[8];
        res = io::detail::the_engine().file_op(false, p[0], b, sizeof b, 0, {}, stop.get_token(),
                                               ended);
    }};
    wait_until([&] { return io_waiter_on(p[0], "file read"); });
    stop.request_stop();
    t.join();
    CHECK(res == -ECANCELED);
    CHECK(ended == io::detail::wake_reason::cancelled);
    ::close(p[0]);
    ::close(p[1]);
}

TEST_CASE(
    "io_uring: a stop racing a file operation's completion: the byte reaches exactly one "
    "side") {
    if (std::string(io::engine_name()) != "io_uring") return;
    int p[2];
    REQUIRE(::pipe2(p, O_CLOEXEC) == 0);
    io::detail::engine& e = io::detail::the_engine();
    on_processors(
        [&](troupe::cluster& c) {
            const int rounds = troupe_test::scaled(200, 10);
            int done = 0, cancelled = 0;
            for (int round = 0; round < rounds; ++round) {
                troupe::stop_source stop;
                std::atomic<bool> submitted{false};
                long res = 0;
                io::detail::wake_reason ended = io::detail::wake_reason::none;
                char b = 0;
                troupe::thread op{c, [&] {
                                      submitted = true;
                                      res = e.file_op(false, p[0], &b, 1, 0, {}, stop.get_token(),
                                                      ended);
                                  }};
                troupe::thread racer{c, [&] {
                                         wait_until([&] { return submitted.load(); });
                                         const char x = char('a' + round % 26);
                                         if (round % 2) {
                                             REQUIRE(::write(p[1], &x, 1) == 1);
                                             stop.request_stop();
                                         } else {
                                             stop.request_stop();
                                             REQUIRE(::write(p[1], &x, 1) == 1);
                                         }
                                     }};
                racer.join();
                op.join();
                if (res == 1) {
                    CHECK(b == char('a' + round % 26));
                    ++done;
                } else {
                    CHECK(res == -ECANCELED);
                    CHECK(ended == io::detail::wake_reason::cancelled);
                    char z = 0;  // the byte is still in the pipe
                    REQUIRE(::read(p[0], &z, 1) == 1);
                    CHECK(z == char('a' + round % 26));
                    ++cancelled;
                }
            }
            CHECK(done + cancelled == rounds);
        },
        {1, 2});
    ::fcntl(p[0], F_SETFL, O_NONBLOCK);
    char z;
    CHECK(::read(p[0], &z, 1) == -1);  // nothing left over
    ::close(p[0]);
    ::close(p[1]);
}
