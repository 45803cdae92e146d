// bench=io_echo, system=asio: the Boost.Asio echo server with C++20
// coroutines, one io_context per core (each run by its own thread, the
// layout Asio's documentation recommends for scaling). The acceptor lives on
// context 0 and hands each new socket to the contexts round robin; each
// connection is one coroutine that reads up to 4 KiB and writes it all back.
// Driven by io_loadgen (bench/io/loadgen.cpp); exits at EOF of its stdin
// (bench/io/io_server.hpp). --threads=N sets the context count (default:
// the CPUs this process may use).
#include <sched.h>

// Boost 1.74's awaitable.hpp uses std::exchange without including <utility>.
#include <utility>

#include <boost/asio.hpp>
#include <memory>
#include <thread>
#include <vector>

#include "bench_util.hpp"
#include "io_server.hpp"

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

asio::awaitable<void> echo(tcp::socket s) {
    char buf[4096];
    try {
        for (;;) {
            const std::size_t n =
                co_await s.async_read_some(asio::buffer(buf), asio::use_awaitable);
            co_await asio::async_write(s, asio::buffer(buf, n), asio::use_awaitable);
        }
    } catch (const std::exception&) {
        // the client closed or reset: the coroutine ends, the socket closes
    }
}

asio::awaitable<void> accept_loop(tcp::acceptor& acc,
                                  std::vector<std::unique_ptr<asio::io_context>>& ctxs) {
    std::size_t next = 0;
    for (;;) {
        asio::io_context& target = *ctxs[next];
        next = (next + 1) % ctxs.size();
        tcp::socket s = co_await acc.async_accept(target, asio::use_awaitable);
        s.set_option(tcp::no_delay(true));
        asio::co_spawn(target, echo(std::move(s)), asio::detached);
    }
}

long cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
    return CPU_COUNT(&set);
}

}  // namespace

int main(int argc, char** argv) {
    const long n = std::max(1L, bench::option(argc, argv, "threads", cpus()));
    std::vector<std::unique_ptr<asio::io_context>> ctxs;
    for (long i = 0; i < n; ++i) ctxs.push_back(std::make_unique<asio::io_context>(1));
    tcp::acceptor acc(*ctxs[0], tcp::endpoint(asio::ip::address_v4::loopback(), 0));
    acc.listen(4096);
    io_bench::announce(acc.local_endpoint().port());
    asio::co_spawn(*ctxs[0], accept_loop(acc, ctxs), asio::detached);
    std::vector<std::thread> ts;
    for (long i = 1; i < n; ++i) {
        auto& c = *ctxs[static_cast<std::size_t>(i)];
        ts.emplace_back([&c] {
            auto guard = asio::make_work_guard(c);
            c.run();
        });
    }
    ctxs[0]->run();
}
