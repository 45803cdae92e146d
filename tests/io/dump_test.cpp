// What the dump shows of I/O waits (descriptor, operation, bytes, peer, for
// how long), and the everyone-asleep check with every kind of I/O wait
// parked at once (none of them is reported: each ends from outside).
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fixture.hpp"
#include "troupe/dump.hpp"
#include "troupe/io.hpp"
#include "troupe/stop_token.hpp"
#include "troupe/thread.hpp"

namespace io = troupe::io;
using namespace std::chrono_literals;

namespace {

std::string dump_text() {
    std::ostringstream os;
    troupe::dump(os);
    return os.str();
}

// The dump line of the wait on "fd N, <op>", or "" if none.
std::string wait_line(const std::string& dump, int fd, const std::string& op) {
    const std::string key = "fd " + std::to_string(fd) + ", " + op;
    const std::size_t at = dump.find(key);
    if (at == std::string::npos) return "";
    const std::size_t begin = dump.rfind('\n', at) + 1;
    return dump.substr(begin, dump.find('\n', at) - begin);
}

// The seconds of "waiting for X s" in a dump line (-1 if absent).
double waited_seconds(const std::string& line) {
    const std::string key = "waiting for ";
    const std::size_t at = line.find(key);
    if (at == std::string::npos) return -1;
    return std::strtod(line.c_str() + at + key.size(), nullptr);
}

}  // namespace

TEST_CASE(
    "the dump names an I/O wait's descriptor, operation, bytes, peer, and how long it has "
    "lasted while its processor is busy") {
    troupe_test::watchdog w{"io dump"};
    // One processor that never sleeps: a busy thread runs on it for the
    // whole test, so nothing but the wait itself can time the wait (the
    // watch thread times waits when processors go to sleep).
    troupe::cluster c{1};
    auto ln = io::listener::listen(io::address::parse("127.0.0.1:0"));
    io::connection client =
        io::connection::connect(io::address::ip("127.0.0.1", ln.local().port()), 5s);
    io::connection server = ln.accept(5s);
    const std::string client_addr = client.local().to_string();
    std::atomic<bool> stop{false}, busy_running{false}, entering{false};
    troupe::thread busy{c, [&] {
                            busy_running = true;
                            while (!stop.load()) troupe::this_thread::yield();
                        }};
    troupe_test::wait_until([&] { return busy_running.load(); });  // from now on it never sleeps
    troupe::thread reader{c, [&] {
                              char buf[4096];
                              entering = true;
                              CHECK(std::size_t(server.read_some(buf, sizeof buf)) == 2);
                          }};
    // No dump until time has passed: the first look at the wait must still
    // tell how long it has lasted. Nothing may sleep meanwhile (a sleeping
    // processor or OS thread makes the watch thread look, which times the
    // waits it sees): main spins on the clock. No synchronisation rests on
    // the time; the wait began after `entering`.
    troupe_test::wait_until([&] { return entering.load(); });
    const auto t0 = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - t0 < 300ms) std::this_thread::yield();
    std::string line;
    troupe_test::wait_until([&] {
        line = wait_line(dump_text(), server.fd(), "recv");
        return !line.empty();
    });
    CAPTURE(line);
    CHECK(line.find("io wait (read)") != std::string::npos);
    CHECK(line.find("4096 bytes") != std::string::npos);
    CHECK(line.find("peer " + client_addr) != std::string::npos);
    // At least most of the 300 ms (the reader parked a moment after its
    // flag); a wait first seen by this dump read 0.000 s.
    CHECK(waited_seconds(line) >= 0.1);
    client.write_all("hi");
    reader.join();
    stop = true;
    busy.join();
}

TEST_CASE("with every kind of I/O wait parked, nobody is reported asleep; each is in the dump") {
    io::engine_name();
    troupe::cluster c{2};
    int s[2], p[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s) == 0);
    REQUIRE(::pipe2(p, O_CLOEXEC) == 0);  // blocking: read by io::blocking's helper
    auto ln = io::listener::listen(io::address::parse("127.0.0.1:0"));
    const io::address at = io::address::ip("127.0.0.1", ln.local().port());
    static std::atomic<int> reports{0};
    static std::string last;
    reports = 0;
    auto previous = troupe::set_deadlock_handler([](std::string_view text) {
        last = std::string(text);
        reports.fetch_add(1);
    });
    // The outside world: another process writes the socket and the pipe and
    // connects, after the check has had time to look (it looks when the
    // processors go to sleep, twice, 100 ms apart).
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        ::usleep(600'000);
        (void)::write(s[1], "x", 1);
        (void)::write(p[1], "y", 1);
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        (void)::connect(fd, at.data(), at.size());
        ::_exit(0);
    }
    troupe::stop_source never;  // a token nobody stops
    char b = 0, d = 0;
    troupe::thread reader{c, [&] { CHECK(io::read(s[0], &b, 1, {}, never.get_token()) == 1); }};
    troupe::thread helper_user{
        c, [&] { CHECK(io::blocking([&] { return ::read(p[0], &d, 1); }) == 1); }};
    troupe::thread acceptor{c, [&] {
                                io::connection x = ln.accept({}, never.get_token());
                                CHECK(x.is_open());
                            }};
    troupe_test::wait_until([&] {
        const std::string t = dump_text();
        return !wait_line(t, s[0], "read").empty() && !wait_line(t, ln.fd(), "accept").empty() &&
               t.find("a blocking call on a helper thread") != std::string::npos;
    });
    reader.join();  // main parks too: every troupe thread is asleep
    helper_user.join();
    acceptor.join();
    int status = 0;
    ::waitpid(child, &status, 0);
    troupe::set_deadlock_handler(previous);
    CHECK(b == 'x');
    CHECK(d == 'y');
    CHECK_MESSAGE(reports.load() == 0, last);
    io::close(s[0]);
    ::close(s[1]);
    ::close(p[0]);
    ::close(p[1]);
}
