// A TCP echo server: one user thread per connection (io::serve), each
// parking on its socket, so a few processors serve any number of clients.
//
//     echo_server              a demo: serves, runs 8 clients, stops
//     echo_server 7000         serves 0.0.0.0:7000 until killed
//
// Output (demo):
//   echo server on 127.0.0.1:<port>
//   8 clients got their 100 echoes back
//   served; the listener is closed
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "troupe/core.hpp"
#include "troupe/io.hpp"

namespace io = troupe::io;

// What every connection runs: read what arrives, write it back, until the
// client closes its side.
void echo(io::connection& c) {
    char buf[4096];
    while (std::size_t n = c.read_some(buf)) c.write_all(buf, n);
}

int main(int argc, char** argv) {
    if (argc > 1) {
        auto ln =
            io::listener::listen(io::address::ip("0.0.0.0", std::uint16_t(std::atoi(argv[1]))));
        std::printf("echo server on %s (%s)\n", ln.local().to_string().c_str(), io::engine_name());
        io::serve(ln, echo);
        return 0;
    }
    auto ln = io::listener::listen(io::address::parse("127.0.0.1:0"));
    std::printf("echo server on 127.0.0.1:<port>\n");
    troupe::thread server{[&] { io::serve(ln, echo); }};

    const int clients = 8, rounds = 100;
    std::vector<troupe::thread> cs;
    std::vector<int> ok(clients, 0);
    for (int i = 0; i < clients; ++i)
        cs.emplace_back([&, i] {
            auto c = io::connection::connect(ln.local());
            for (int r = 0; r < rounds; ++r) {
                const std::string msg =
                    "hello " + std::to_string(i) + "/" + std::to_string(r) + "\n";
                c.write_all(msg);
                std::string back(msg.size(), '\0');
                if (c.read_exact(std::as_writable_bytes(std::span(back))) && back == msg) ++ok[i];
            }
        });
    for (auto& t : cs) t.join();
    int all = 0;
    for (int v : ok) all += v == rounds;
    std::printf("%d clients got their %d echoes back\n", all, rounds);
    ln.close();  // serve returns once its handlers are done
    server.join();
    std::printf("served; the listener is closed\n");
    return all == clients ? 0 : 1;
}
