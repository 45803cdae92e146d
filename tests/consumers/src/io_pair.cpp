// A consumer of troupe-io: a user thread echoes what another writes over a
// socket pair, each parking on its socket.
#include <sys/socket.h>

#include <cstdio>
#include <string>

#include <troupe/io.hpp>
#include <troupe/thread.hpp>

int main() {
    int s[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s) != 0) return 1;
    troupe::io::connection a{s[0]}, b{s[1]};
    troupe::thread echo{[&] {
        char buf[64];
        while (std::size_t n = b.read_some(buf)) b.write_all(buf, n);
        b.shutdown();  // the reader below reads until end of file
    }};
    a.write_all("ping");
    a.shutdown();
    std::string back;
    char buf[64];
    while (std::size_t n = a.read_some(buf)) back.append(buf, n);
    echo.join();
    std::printf("io consumer: %s (%s)\n", back.c_str(), troupe::io::engine_name());
    return back == "ping" ? 0 : 1;
}
