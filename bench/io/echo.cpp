// bench=io_echo, system=troupe: the echo server on troupe's io module, one
// user thread per connection (io::serve), each reading up to 4 KiB and
// writing it all back until the client closes; a waiting thread parks and
// its processor runs the others. The twins: bench/peers/go/io_echo.go (a
// goroutine per connection), bench/peers/asio/io_echo.cpp (C++20
// coroutines, one io_context per core), bench/peers/std/io_echo.cpp (a
// kernel thread per connection). Driven by io_loadgen (loadgen.cpp); exits
// at EOF of its stdin (io_server.hpp). --processors=N: the cluster's size
// (default: the CPUs this process may use, as Go's GOMAXPROCS).
#include <troupe/cluster.hpp>
#include <troupe/io.hpp>
#include <troupe/thread.hpp>

#include "bench_util.hpp"
#include "io_server.hpp"

namespace io = troupe::io;

int main(int argc, char** argv) {
    const long procs = bench::option(argc, argv, "processors", 0);
    troupe::cluster pool{static_cast<std::size_t>(procs)};
    auto ln = io::listener::listen(io::address::ip("127.0.0.1", 0), 4096);
    io_bench::announce(ln.local().port());
    troupe::thread server(pool, [&] {
        io::serve(ln, [](io::connection& c) {
            char buf[4096];
            while (std::size_t n = c.read_some(buf)) c.write_all(buf, n);
        });
    });
    server.join();
}
