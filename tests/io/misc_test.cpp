// io::blocking, io::file, io::reader and io::writer.
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

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

TEST_CASE("io::blocking frees the processor: on one processor another thread runs meanwhile") {
    troupe::cluster c{1};
    std::atomic<bool> other_ran{false};
    std::atomic<bool> in_call{false};
    int result = 0;
    troupe::thread caller{c, [&] {
                              result = io::blocking([&] {
                                  in_call = true;
                                  // A kernel-blocking wait for something only the other user
                                  // thread of this one-processor cluster can do.
                                  while (!other_ran.load()) std::this_thread::yield();
                                  return 42;
                              });
                          }};
    troupe::thread other{c, [&] {
                             while (!in_call.load()) troupe::this_thread::yield();
                             other_ran = true;
                         }};
    caller.join();
    other.join();
    CHECK(result == 42);
}

TEST_CASE("io::blocking returns values, runs void calls, rethrows, and shows in the dump") {
    troupe::cluster c{2};
    run_in(c, [&] {
        CHECK(io::blocking([] { return std::string("x"); }) == "x");
        int n = 0;
        io::blocking([&] { n = 5; });
        CHECK(n == 5);
        CHECK_THROWS_AS(io::blocking([]() -> int { throw std::runtime_error("boom"); }),
                        std::runtime_error);
    });
    std::atomic<bool> release{false};
    troupe::thread t{c, [&] {
                         io::blocking([&] {
                             while (!release.load()) std::this_thread::yield();
                         });
                     }};
    wait_until([&] {
        std::ostringstream os;
        troupe::dump(os);
        return os.str().find("io::blocking") != std::string::npos;
    });
    release = true;
    t.join();
    // From an OS thread it runs inline.
    const auto me = std::this_thread::get_id();
    CHECK(io::blocking([&] { return std::this_thread::get_id() == me; }));
}

TEST_CASE("file: write, read back, positional reads and writes, size, sync") {
    on_processors(
        [](troupe::cluster& c) {
            const std::string path = "/tmp/troupe_io_file_" + std::to_string(::getpid()) + ".txt";
            run_in(c, [&] {
                {
                    auto f = io::file::open(path, O_WRONLY | O_CREAT | O_TRUNC);
                    f.write_all("hello, ");
                    f.write_all(std::string(10000, 'z'));
                    f.sync();
                    CHECK(f.size() == 10007);
                    const char w[] = "HE";
                    CHECK(f.write_at(std::as_bytes(std::span(w, 2)), 0) == 2);
                }
                auto f = io::file::open(path, O_RDONLY);
                const std::string all = f.read_all();
                CHECK(all.size() == 10007);
                CHECK(all.substr(0, 7) == "HEllo, ");
                char b[3];
                CHECK(f.read_at(std::as_writable_bytes(std::span(b)), 4) == 3);
                CHECK(std::string(b, 3) == "o, ");
                // POSIX-shaped calls on a regular file work too.
                char r[5];
                CHECK(io::pread(f.fd(), r, 5, 0) == 5);
                CHECK(std::string(r, 5) == "HEllo");
            });
            ::unlink(path.c_str());
        },
        {1, 2});
}

TEST_CASE("file: opening a missing file names the path") {
    try {
        (void)io::file::open("/nonexistent/troupe/file", O_RDONLY);
        FAIL("opened");
    } catch (const io::error& e) {
        CHECK(e.code() == std::errc::no_such_file_or_directory);
        CHECK(std::string(e.what()).find("/nonexistent/troupe/file") != std::string::npos);
    }
}

TEST_CASE("reader and writer: a connection's bytes as calls, posts written in order") {
    on_processors(
        [](troupe::cluster& c) {
            auto ln = io::listener::listen(io::address::parse("127.0.0.1:0"));
            run_in(c, [&] {
                auto a = io::connection::connect(ln.local());
                io::connection b = ln.accept();
                std::string got;
                std::atomic<bool> ended{false};
                bool clean_end = false;
                {
                    io::reader r{b,
                                 [&](std::span<const std::byte> d) {
                                     got.append(reinterpret_cast<const char*>(d.data()), d.size());
                                 },
                                 [&](std::exception_ptr e) {
                                     clean_end = !e;
                                     ended = true;
                                 },
                                 7};
                    {
                        io::writer w{a};
                        for (int i = 0; i < 100; ++i) w.post(std::to_string(i) + ",");
                    }  // flushed and joined
                    a.shutdown();
                    wait_until([&] { return ended.load(); });
                }
                std::string want;
                for (int i = 0; i < 100; ++i) want += std::to_string(i) + ",";
                CHECK(got == want);
                CHECK(clean_end);
            });
        },
        {1, 2});
}

TEST_CASE("reader: stop() ends a reader waiting on a silent connection") {
    troupe::cluster c{1};
    auto ln = io::listener::listen(io::address::parse("127.0.0.1:0"));
    run_in(c, [&] {
        auto a = io::connection::connect(ln.local());
        io::connection b = ln.accept();
        bool ended = false;
        {
            io::reader r{b, [](std::span<const std::byte>) {},
                         [&](std::exception_ptr) { ended = true; }};
            troupe::this_thread::yield();
        }  // the destructor stops and joins
        CHECK(ended);
    });
}

TEST_CASE("writer: a failed write calls on_error once and drops later posts") {
    troupe::cluster c{1};
    auto ln = io::listener::listen(io::address::parse("127.0.0.1:0"));
    run_in(c, [&] {
        auto a = io::connection::connect(ln.local());
        io::connection b = ln.accept();
        ::linger l{1, 0};
        ::setsockopt(b.fd(), SOL_SOCKET, SO_LINGER, &l, sizeof l);
        b.close();  // reset
        std::atomic<int> errors{0};
        {
            io::writer w{a, [&](std::exception_ptr e) {
                             CHECK(e);
                             errors.fetch_add(1);
                         }};
            for (int i = 0; i < 50; ++i) w.post(std::string(100000, 'q'));
        }
        CHECK(errors.load() == 1);
    });
}
