// The execution trace's I/O slices (docs/trace.md, docs/io.md): run by
// tests/integration/check_trace.py with TROUPE_TRACE set, which checks the
// file written at exit against the "TRACE-EXPECT" lines printed here: an
// I/O wait of a user thread and of an OS thread each show as a slice naming
// the operation and the descriptor, and the user thread's run slice ends
// with the wait's park reason.
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <thread>

#include "fixture.hpp"
#include "troupe/context.hpp"
#include "troupe/detail/trace.hpp"
#include "troupe/dump.hpp"
#include "troupe/io.hpp"
#include "troupe/thread.hpp"

namespace io = troupe::io;
using namespace std::chrono_literals;

namespace {
// The dump shows a thread waiting on `op` of `fd` and parked (not "about
// to park"): only a park that went to sleep leaves the trace's park slice,
// and a wake in between (slow under TSan) ended the wait without one.
bool io_waiter_on(int fd, const char* op) {
    std::ostringstream os;
    troupe::dump(os);
    const std::string all = os.str();
    const std::size_t at = all.find("fd " + std::to_string(fd) + ", " + op);
    if (at == std::string::npos) return false;
    const std::size_t end = all.find('\n', at);
    return all.substr(at, end == std::string::npos ? end : end - at).find("(not parked") ==
           std::string::npos;
}
}  // namespace

TEST_CASE("trace: I/O waits of a user thread and of an OS thread") {
    troupe_test::watchdog w{"io trace"};
    std::printf("TRACE-EXPECT recording %d\nTRACE-EXPECT partial\n",
                troupe::detail::trace::on() ? 1 : 0);
    int s[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s) == 0);
    {
        troupe::cluster c{1};
        char b[4] = {};
        troupe::thread reader{c, [&] { CHECK(io::recv(s[0], b, sizeof b, 0) == 2); }};
        troupe_test::wait_until([&] { return io_waiter_on(s[0], "recv"); });
        io::send(s[1], "ok", 2);
        reader.join();
        CHECK(std::string(b, 2) == "ok");
    }
    std::printf("TRACE-EXPECT io-wait recv %d io wait (read)\n", s[0]);
    {
        // An OS thread: it must sleep in park() (no spin) for its park slice.
        const troupe::park_spin_policy before = troupe::get_park_spin_policy();
        troupe::set_park_spin_policy({0, false});
        char b = 0;
        std::thread os_reader{[&] { CHECK(io::read(s[1], &b, 1) == 1); }};
        troupe_test::wait_until([&] { return io_waiter_on(s[1], "read"); });
        io::write(s[0], "x", 1);
        os_reader.join();
        troupe::set_park_spin_policy(before);
        CHECK(b == 'x');
    }
    std::printf("TRACE-EXPECT io-os-wait read %d\n", s[1]);
    std::fflush(stdout);
    io::close(s[0]);
    io::close(s[1]);
}
