// The POSIX-shaped calls on pipes and socket pairs: a waiting user thread
// parks (its processor runs others), an OS thread blocks; deadlines;
// EAGAIN storms; zero-length buffers; EINTR; a descriptor closed while
// waited on (from a user thread and from an OS thread).
#include <fcntl.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "troupe/dump.hpp"

#include "fixture.hpp"
#include "leak_check.hpp"
#include "socket_pair.hpp"
#include "troupe/future.hpp"
#include "troupe/io.hpp"
#include "troupe/thread.hpp"

namespace io = troupe::io;
using namespace std::chrono_literals;
using troupe_test::on_processors;
using troupe_test::run_in;
using troupe_test::wait_until;

namespace {

struct pipe_pair {
    int r = -1, w = -1;
    pipe_pair() {
        int p[2];
        REQUIRE(::pipe2(p, O_CLOEXEC) == 0);
        r = p[0];
        w = p[1];
    }
    ~pipe_pair() {
        if (r >= 0) io::close(r);
        if (w >= 0) io::close(w);
    }
};

using troupe_test::socket_pair;

// True while some thread is parked in an io wait on `fd` (the dump's
// description of the wait: "fd N, <op>").
bool io_waiter_on(int fd) {
    std::ostringstream os;
    troupe::dump(os);
    return os.str().find("fd " + std::to_string(fd) + ", ") != std::string::npos;
}

}  // namespace

TEST_CASE("the engine starts and names itself") {
    const std::string name = io::engine_name();
    const char* want = std::getenv("TROUPE_IO");
    if (want && std::string(want) == "epoll") CHECK(name == "epoll");
    else if (io::io_uring_built()) CHECK(name == "io_uring");
    else CHECK(name == "epoll");
}

TEST_CASE("a reader parks until a writer on the same single processor writes") {
    io::engine_name();
    on_processors(
        [](troupe::cluster& c) {
            troupe_test::leak_check no_leaks;
            pipe_pair p;
            char got[6] = {};
            std::size_t n = 0;
            // On one processor the writer can only run if the reader parked.
            troupe::thread reader{c, [&] { n = io::read(p.r, got, sizeof got); }};
            troupe::thread writer{c, [&] { CHECK(io::write(p.w, "hello", 5) == 5); }};
            reader.join();
            writer.join();
            CHECK(n == 5);
            CHECK(std::string(got, n) == "hello");
        },
        {1, 2});
}

TEST_CASE("an OS thread blocks in read until data arrives; end of file reads 0") {
    pipe_pair p;
    std::thread w{[&] {
        io::write(p.w, "abc", 3);
        io::close(p.w);
    }};
    char buf[8];
    std::size_t total = 0;
    while (std::size_t n = io::read(p.r, buf + total, sizeof buf - total)) total += n;
    w.join();
    p.w = -1;
    CHECK(total == 3);
    CHECK(std::string(buf, 3) == "abc");
}

TEST_CASE("zero-length reads and writes return 0 without waiting") {
    on_processors(
        [](troupe::cluster& c) {
            socket_pair s;
            run_in(c, [&] {
                char b;
                CHECK(io::write(s.a, &b, 0) == 0);
                CHECK(io::send(s.a, &b, 0) == 0);
                CHECK(io::read(s.b, &b, 0) == 0);  // nothing buffered, yet no wait
                CHECK(io::recv(s.b, &b, 0, 0) == 0);
            });
        },
        {1});
}

TEST_CASE("a deadline on a read that never completes throws timeout_error") {
    on_processors(
        [](troupe::cluster& c) {
            troupe_test::leak_check no_leaks;
            pipe_pair p;
            run_in(c, [&] {
                char b;
                bool timed_out = false;
                try {
                    (void)io::read(p.r, &b, 1, 20ms);
                } catch (const io::timeout_error& e) {
                    timed_out = true;
                    CHECK(e.code() == std::errc::timed_out);
                    CHECK(e.fd() == p.r);
                    CHECK(std::string(e.operation()) == "read");
                }
                CHECK(timed_out);
                // The descriptor is still usable after a timeout.
                io::write(p.w, "x", 1);
                CHECK(io::read(p.r, &b, 1, 5s) == 1);
                CHECK(b == 'x');
            });
        },
        {1, 2});
}

TEST_CASE("a passed deadline fails at once only if the call would wait") {
    pipe_pair p;
    io::write(p.w, "y", 1);
    char b;
    CHECK(io::read(p.r, &b, 1, -1ms) == 1);  // ready: completes
    CHECK_THROWS_AS((void)io::read(p.r, &b, 1, -1ms), io::timeout_error);
}

TEST_CASE("EAGAIN storm: many small writes against a slow reader lose and duplicate nothing") {
    on_processors(
        [](troupe::cluster& c) {
            socket_pair s;
            // Small buffers: the writer hits EAGAIN over and over.
            int small = 4096;
            ::setsockopt(s.a, SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
            ::setsockopt(s.b, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
            const std::size_t total = troupe_test::scaled(std::size_t(4) << 20, 8);
            std::uint64_t sum_out = 0, sum_in = 0;
            troupe::thread writer{c, [&] {
                                      std::vector<unsigned char> buf(1500);
                                      std::size_t sent = 0;
                                      std::uint32_t x = 1;
                                      while (sent < total) {
                                          const std::size_t k = std::min(buf.size(), total - sent);
                                          for (std::size_t i = 0; i < k; ++i) {
                                              x = x * 1103515245u + 12345u;
                                              buf[i] = static_cast<unsigned char>(x >> 16);
                                              sum_out += buf[i] * (sent + i + 1);
                                          }
                                          std::size_t off = 0;
                                          while (off < k)
                                              off += io::write(s.a, buf.data() + off, k - off);
                                          sent += k;
                                      }
                                  }};
            troupe::thread reader{c, [&] {
                                      std::vector<unsigned char> buf(700);
                                      std::size_t got = 0;
                                      while (got < total) {
                                          const std::size_t n =
                                              io::read(s.b, buf.data(), buf.size());
                                          REQUIRE(n > 0);
                                          for (std::size_t i = 0; i < n; ++i)
                                              sum_in += buf[i] * (got + i + 1);
                                          got += n;
                                          if (got % 7 == 0) troupe::this_thread::yield();
                                      }
                                  }};
            writer.join();
            reader.join();
            CHECK(sum_in == sum_out);
        },
        {1, 2, 4});
}

TEST_CASE("close from another user thread wakes a waiting reader at once with closed_error") {
    on_processors(
        [](troupe::cluster& c) {
            troupe_test::leak_check no_leaks;
            for (int round = 0; round < troupe_test::scaled(50, 5); ++round) {
                pipe_pair p;
                std::atomic<int> stage{0};
                bool closed = false;
                troupe::thread reader{c, [&] {
                                          char b;
                                          stage = 1;
                                          try {
                                              (void)io::read(p.r, &b, 1);
                                          } catch (const io::closed_error& e) {
                                              closed = true;
                                              CHECK(e.fd() == p.r);
                                              CHECK(e.code() == std::errc::bad_file_descriptor);
                                          }
                                      }};
                troupe::thread closer{
                    c, [&] {
                        wait_until([&] { return stage.load() == 1 && io_waiter_on(p.r); });
                        io::close(p.r);
                    }};
                closer.join();
                reader.join();
                CHECK(closed);
                p.r = -1;
            }
        },
        {1, 2});
}

TEST_CASE("close from an OS thread wakes a user thread waiting in recv") {
    troupe::cluster c{2};
    socket_pair s;
    std::atomic<int> stage{0};
    bool closed = false;
    troupe::thread reader{c, [&] {
                              char b[4];
                              stage = 1;
                              try {
                                  (void)io::recv(s.a, b, sizeof b, 0);
                              } catch (const io::closed_error&) {
                                  closed = true;
                              }
                          }};
    wait_until([&] { return stage.load() == 1 && io_waiter_on(s.a); });
    io::close(s.a);
    reader.join();
    s.a = -1;
    CHECK(closed);
}

TEST_CASE("a user thread closing a descriptor an OS thread waits on wakes the OS thread") {
    troupe::cluster c{1};
    pipe_pair p;
    std::atomic<int> stage{0};
    bool closed = false;
    std::thread os{[&] {
        char b;
        stage = 1;
        try {
            (void)io::read(p.r, &b, 1);
        } catch (const io::closed_error&) {
            closed = true;
        }
    }};
    wait_until([&] { return stage.load() == 1 && io_waiter_on(p.r); });
    run_in(c, [&] { io::close(p.r); });
    os.join();
    p.r = -1;
    CHECK(closed);
}

TEST_CASE("the number of a closed descriptor is not reused while a call still holds it") {
    // A waiter holds the descriptor: close wakes it, and the number is
    // closed only when the waiter has left, so a new descriptor made right
    // after close() never gets that number while the old call runs.
    troupe::cluster c{2};
    for (int round = 0; round < troupe_test::scaled(100, 10); ++round) {
        pipe_pair p;
        std::atomic<int> stage{0};
        troupe::thread reader{c, [&] {
                                  char b;
                                  stage = 1;
                                  CHECK_THROWS_AS((void)io::read(p.r, &b, 1), io::closed_error);
                              }};
        wait_until([&] { return stage.load() == 1 && io_waiter_on(p.r); });
        const int old = p.r;
        io::close(p.r);
        p.r = -1;
        reader.join();
        // After the waiter left the number is free again: a call on the old
        // number now is the caller's misuse, and fails cleanly.
        char b;
        CHECK_THROWS((void)io::read(old, &b, 1, 10ms));
    }
}

TEST_CASE("a second close of the same descriptor is an error, not a close of a reused number") {
    int p[2];
    REQUIRE(::pipe(p) == 0);
    char b;
    io::write(p[1], "z", 1);
    CHECK(io::read(p[0], &b, 1) == 1);  // registered
    io::close(p[0]);
    CHECK_THROWS_AS(io::close(p[0]), io::error);
    io::close(p[1]);
}

#if !defined(__SANITIZE_THREAD__)
// (Not under TSan: it runs a signal handler only when the thread next
// enters an intercepted call, and a thread asleep in the raw futex system
// call of park() may not, so the wait for the handler below can hang.)
namespace {
std::atomic<int> signals_seen{0};
void on_usr1(int) { signals_seen.fetch_add(1); }
}  // namespace

TEST_CASE("EINTR: signals hitting a blocked OS thread do not end its read") {
    struct sigaction sa {
    }, old{};
    sa.sa_handler = &on_usr1;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: system calls return EINTR
    sigaction(SIGUSR1, &sa, &old);
    pipe_pair p;
    std::atomic<bool> started{false};
    std::size_t n = 0;
    char b = 0;
    std::thread os{[&] {
        started = true;
        n = io::read(p.r, &b, 1);
    }};
    wait_until([&] { return started.load() && io_waiter_on(p.r); });
    const int kicks = 20;
    for (int i = 0; i < kicks; ++i) {
        pthread_kill(os.native_handle(), SIGUSR1);
        wait_until([&] { return signals_seen.load() > i; });
    }
    io::write(p.w, "q", 1);
    os.join();
    sigaction(SIGUSR1, &old, nullptr);
    CHECK(n == 1);
    CHECK(b == 'q');
    CHECK(signals_seen.load() >= kicks);
}
#endif

TEST_CASE("readv and writev move scattered buffers") {
    socket_pair s;
    char a[] = "ab", b2[] = "cde";
    ::iovec out[2] = {{a, 2}, {b2, 3}};
    CHECK(io::writev(s.a, out, 2) == 5);
    char x[3] = {}, y[2] = {};
    ::iovec in[2] = {{x, 3}, {y, 2}};
    std::size_t got = 0;
    while (got < 5) got += io::readv(s.b, in, 2);  // one call suffices on a local socket
    CHECK(std::string(x, 3) == "abc");
    CHECK(std::string(y, 2) == "de");
}

TEST_CASE("wait_readable and wait_writable") {
    on_processors(
        [](troupe::cluster& c) {
            socket_pair s;
            run_in(c, [&] {
                io::wait_writable(s.a, 1s);
                CHECK_THROWS_AS(io::wait_readable(s.b, 10ms), io::timeout_error);
                troupe::thread t{[&] { io::write(s.a, "k", 1); }};
                io::wait_readable(s.b, 5s);
                t.join();
                char k;
                CHECK(io::read(s.b, &k, 1) == 1);
            });
        },
        {1, 2});
}

TEST_CASE("bad descriptors give io::error naming the call") {
    char b;
    try {
        (void)io::read(-1, &b, 1);
        FAIL("no throw");
    } catch (const io::error& e) {
        CHECK(e.code() == std::errc::bad_file_descriptor);
    }
    CHECK_THROWS_AS(io::close(1'000'000), io::error);
}
