// The everyone-asleep check with the I/O engine running: a thread parked on
// a socket is wakeable from outside (no report), and a real deadlock is
// still reported although the engine's threads exist.
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <sstream>
#include <string>

#include "fixture.hpp"
#include "troupe/dump.hpp"
#include "troupe/future.hpp"
#include "troupe/io.hpp"
#include "troupe/thread.hpp"

namespace io = troupe::io;

namespace {
std::atomic<int> reports{0};
std::string last_report;
troupe::future<int>* to_fulfil = nullptr;
int unblock_fd = -1;

void on_report(std::string_view text) {
    last_report = std::string(text);
    reports.fetch_add(1);
    if (to_fulfil) to_fulfil->fulfil(1);
    if (unblock_fd >= 0) (void)::write(unblock_fd, "!", 1);
}
}  // namespace

TEST_CASE("a thread parked on a socket is not reported asleep; the I/O wait is in the dump") {
    io::engine_name();
    troupe::cluster c{2};
    int s[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s) == 0);
    reports = 0;
    unblock_fd = s[1];
    auto previous = troupe::set_deadlock_handler(&on_report);
    // The only writer is another process, after the check has had time to
    // look (two looks 100 ms apart, run when the processors go to sleep).
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        ::usleep(600'000);
        (void)::write(s[1], "x", 1);
        ::_exit(0);
    }
    char b = 0;
    troupe::thread reader{c, [&] { CHECK(io::read(s[0], &b, 1) == 1); }};
    // The dump names the wait: its descriptor and operation.
    troupe_test::wait_until([&] {
        std::ostringstream os;
        troupe::dump(os);
        return os.str().find("fd " + std::to_string(s[0]) + ", read, 1 bytes") != std::string::npos;
    });
    reader.join();  // main parks too: every troupe thread is asleep
    int status = 0;
    ::waitpid(child, &status, 0);
    troupe::set_deadlock_handler(previous);
    unblock_fd = -1;
    CHECK(b == 'x');
    CHECK_MESSAGE(reports.load() == 0, last_report);
    io::close(s[0]);
    ::close(s[1]);
}

#if !defined(__SANITIZE_THREAD__)
// (TSan runs a thread of its own in every process: the check then sees a
// thread outside troupe and, rightly, reports nothing.)
TEST_CASE("a real deadlock is still reported while the engine's threads run") {
    io::engine_name();
    (void)io::blocking([] { return 0; });  // a helper thread exists too
    troupe::cluster c{2};
    troupe::future<int> never;
    reports = 0;
    to_fulfil = &never;
    auto previous = troupe::set_deadlock_handler(&on_report);
    troupe::thread waiter{c, [&] { CHECK(never.get() == 1); }};
    waiter.join();  // returns only when the report fulfilled the future
    troupe::set_deadlock_handler(previous);
    to_fulfil = nullptr;
    CHECK(reports.load() >= 1);
    CHECK(last_report.find("all threads are asleep") != std::string::npos);
}
#endif
