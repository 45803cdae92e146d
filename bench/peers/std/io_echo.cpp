// bench=io_echo, system=std: the thread-per-connection echo server. The
// main thread accepts; each connection gets its own detached std::thread
// that reads up to 4 KiB and writes it all back, with blocking calls, until
// the client closes. Driven by io_loadgen (bench/io/loadgen.cpp); exits at
// EOF of its stdin (bench/io/io_server.hpp).
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

#include "io_server.hpp"

namespace {
void serve(int fd) {
    char buf[4096];
    for (;;) {
        const ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0) {
            if (n < 0 && errno == EINTR) continue;
            break;
        }
        ssize_t off = 0;
        while (off < n) {
            const ssize_t w = write(fd, buf + off, static_cast<std::size_t>(n - off));
            if (w < 0) {
                if (errno == EINTR) continue;
                close(fd);
                return;
            }
            off += w;
        }
    }
    close(fd);
}
}  // namespace

int main() {
    const int lfd = io_bench::listen_loopback();
    io_bench::announce(io_bench::port_of(lfd));
    for (;;) {
        const int fd = accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            io_bench::die("accept");
        }
        io_bench::no_delay(fd);
        std::thread(serve, fd).detach();
    }
}
