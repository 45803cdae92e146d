#pragma once
// Shared by the C++ servers of bench/io (troupe's and the std / Boost.Asio
// twins; no troupe dependency): the server side of the io_loadgen protocol
// (bench/io/loadgen.cpp). A server listens on 127.0.0.1 at a port the
// kernel picks, prints "port=<n>" on stdout, and exits with status 0 when
// its stdin reaches EOF (the load generator closes it after the run, or
// dies), so no server outlives its run.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <thread>

namespace io_bench {

[[noreturn]] inline void die(const char* what) {
    std::fprintf(stderr, "io server: %s: %s\n", what, std::strerror(errno));
    std::exit(1);
}

/// A listening TCP socket on 127.0.0.1:0 (blocking), backlog 4096.
inline int listen_loopback() {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) die("socket");
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) die("bind");
    if (listen(fd, 4096) != 0) die("listen");
    return fd;
}

/// The port a bound socket listens on.
inline int port_of(int fd) {
    sockaddr_in a{};
    socklen_t len = sizeof a;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) die("getsockname");
    return ntohs(a.sin_port);
}

/// Go's net package sets TCP_NODELAY on every TCP connection; every C++
/// server does the same so that all sides write alike.
inline void no_delay(int fd) {
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/// Prints the port line (the load generator waits for it), ignores SIGPIPE
/// (a client gone mid-write is an error return, not a signal), and starts a
/// detached OS thread that ends the process with status 0 at EOF of stdin.
inline void announce(int port) {
    signal(SIGPIPE, SIG_IGN);
    std::printf("port=%d\n", port);
    std::fflush(stdout);
    std::thread([] {
        char c;
        while (read(0, &c, 1) > 0) {}
        std::_Exit(0);
    }).detach();
}

// ---------------------------------------------------------------------------
// The minimal HTTP/1.1 server of bench=io_http (the same rules as the Go
// raw-net twin, bench/peers/go/io_http_raw.go): requests are header blocks
// ending in "\r\n\r\n" (no bodies: wrk sends GET), pipelined requests are
// answered in order, every answer is the same keep-alive "hello".

inline constexpr std::string_view http_hello =
    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello";

/// Number of complete requests at the start of buf[0, len) and the bytes
/// they take (`used`); what follows is the start of an incomplete request.
inline std::size_t http_complete_requests(const char* buf, std::size_t len, std::size_t& used) {
    std::size_t n = 0;
    used = 0;
    for (;;) {
        std::string_view rest(buf + used, len - used);
        const std::size_t end = rest.find("\r\n\r\n");
        if (end == std::string_view::npos) return n;
        used += end + 4;
        ++n;
    }
}

}  // namespace io_bench
