// bench=io_http, system=troupe: the HTTP/1.1 "hello" server on troupe's io
// module with the minimal parser of io_server.hpp (a request is a header
// block ending in "\r\n\r\n", pipelined requests answered in order, every
// answer the same keep-alive "hello"), one user thread per connection, a
// 4 KiB read buffer. The twins: bench/peers/go/io_http_raw.go (the same
// parser on raw package net) and bench/peers/go/io_http_nethttp.go
// (net/http). Driven by io_loadgen --mode=http (wrk); exits at EOF of its
// stdin. --processors=N as in echo.cpp.
#include <cstring>
#include <string>

#include <troupe/cluster.hpp>
#include <troupe/io.hpp>
#include <troupe/thread.hpp>

#include "bench_util.hpp"
#include "io_server.hpp"

namespace io = troupe::io;

namespace {
void serve_http(io::connection& c) {
    char buf[4096];
    std::string out;
    out.reserve(4096);
    std::size_t have = 0;
    for (;;) {
        const std::size_t n = c.read_some(buf + have, sizeof buf - have);
        if (n == 0) return;
        have += n;
        std::size_t used = 0;
        const std::size_t reqs = io_bench::http_complete_requests(buf, have, used);
        if (reqs > 0) {
            out.clear();
            for (std::size_t i = 0; i < reqs; ++i) out += io_bench::http_hello;
            c.write_all(out);
        }
        std::memmove(buf, buf + used, have - used);
        have -= used;
        if (have == sizeof buf) return;  // a request larger than the buffer: not this benchmark's
    }
}
}  // namespace

int main(int argc, char** argv) {
    const long procs = bench::option(argc, argv, "processors", 0);
    troupe::cluster pool{static_cast<std::size_t>(procs)};
    auto ln = io::listener::listen(io::address::ip("127.0.0.1", 0), 4096);
    io_bench::announce(ln.local().port());
    troupe::thread server(pool, [&] { io::serve(ln, serve_http); });
    server.join();
}
