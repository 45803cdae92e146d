// bench=io_echo, system=troupe: the echo server on troupe's io module, one
// user thread per connection (io::serve), each reading up to 4 KiB and
// writing it all back until the client closes; a waiting thread parks and
// its processor runs the others. The twins: bench/peers/go/io_echo.go (a
// goroutine per connection), bench/peers/asio/io_echo.cpp (C++20
// coroutines, one io_context per core), bench/peers/std/io_echo.cpp (a
// kernel thread per connection). Driven by io_loadgen (loadgen.cpp); exits
// at EOF of its stdin (io_server.hpp). --processors=N: the cluster's size
// (default: the CPUs this process may use, as Go's GOMAXPROCS).
//
// --buffer=stack (default, the shape of every twin): the 4 KiB buffer lives
// on the connection's stack, so a parked connection holds it.
// --buffer=pool (the troupe_pooled rows of io_idle): the thread waits with
// io::wait_readable and takes a buffer from a shared pool only once data
// is there, so an idle connection holds no buffer (what a server with many
// idle connections can do; Go's net has no wait-without-reading call).
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <troupe/cluster.hpp>
#include <troupe/io.hpp>
#include <troupe/spinlock.hpp>
#include <troupe/thread.hpp>

#include "bench_util.hpp"
#include "io_server.hpp"

namespace io = troupe::io;

namespace {

constexpr std::size_t buffer_size = 4096;

void serve_stack(io::connection& c) {
    char buf[buffer_size];
    while (std::size_t n = c.read_some(buf)) c.write_all(buf, n);
}

/// Buffers handed out while data is being echoed, kept for reuse.
class buffer_pool {
public:
    std::unique_ptr<char[]> take() {
        {
            std::lock_guard g{lock_};
            if (!free_.empty()) {
                auto b = std::move(free_.back());
                free_.pop_back();
                return b;
            }
        }
        return std::make_unique<char[]>(buffer_size);
    }
    void give(std::unique_ptr<char[]> b) {
        std::lock_guard g{lock_};
        free_.push_back(std::move(b));
    }

private:
    troupe::spinlock lock_{"buffer pool"};
    std::vector<std::unique_ptr<char[]>> free_;
};

void serve_pooled(io::connection& c, buffer_pool& pool) {
    for (;;) {
        io::wait_readable(c.fd());
        auto buf = pool.take();
        const std::size_t n = c.read_some(buf.get(), buffer_size);
        if (n == 0) {
            pool.give(std::move(buf));
            return;
        }
        c.write_all(buf.get(), n);
        pool.give(std::move(buf));
    }
}

}  // namespace

int main(int argc, char** argv) {
    const long procs = bench::option(argc, argv, "processors", 0);
    const std::string buffer = bench::option_text(argc, argv, "buffer", "stack");
    if (buffer != "stack" && buffer != "pool") {
        std::fprintf(stderr, "io_echo: --buffer=stack or --buffer=pool, not '%s'\n",
                     buffer.c_str());
        return 2;
    }
    troupe::cluster pool{static_cast<std::size_t>(procs)};
    auto ln = io::listener::listen(io::address::ip("127.0.0.1", 0), 4096);
    io_bench::announce(ln.local().port());
    buffer_pool buffers;
    troupe::thread server(pool, [&] {
        if (buffer == "pool")
            io::serve(ln, [&buffers](io::connection& c) { serve_pooled(c, buffers); });
        else io::serve(ln, serve_stack);
    });
    server.join();
}
