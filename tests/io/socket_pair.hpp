#pragma once
// A connected pair of Unix stream sockets for the io tests, closed through
// troupe::io::close (so a waiter on either end is told, never left on a
// reused descriptor number).
#include <sys/socket.h>

#include <doctest/doctest.h>
#include "troupe/io.hpp"

namespace troupe_test {

struct socket_pair {
    int a = -1, b = -1;
    socket_pair() {
        int s[2];
        REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s) == 0);
        a = s[0];
        b = s[1];
    }
    socket_pair(const socket_pair&) = delete;
    socket_pair& operator=(const socket_pair&) = delete;
    ~socket_pair() {
        if (a >= 0) troupe::io::close(a);
        if (b >= 0) troupe::io::close(b);
    }
};

}  // namespace troupe_test
