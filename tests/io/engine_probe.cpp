// Prints the engine io chose (tests/io/engine_choice.sh runs it under
// different environments). With --deny-io-uring it first makes the kernel
// refuse io_uring_setup (a seccomp filter returning ENOSYS, as a container
// profile does), so the fallback to epoll and its notice can be checked.
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>

#include "troupe/io.hpp"
#include "troupe/thread.hpp"

namespace {
bool deny_io_uring() {
    sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog prog{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
    return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
           ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}
}  // namespace

int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], "--deny-io-uring") == 0 && !deny_io_uring()) {
        std::perror("seccomp");
        return 2;
    }
    std::printf("engine=%s built=%d\n", troupe::io::engine_name(),
                troupe::io::io_uring_built() ? 1 : 0);
    // The engine works: a round trip through a socket pair on a user thread.
    int s[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, s) != 0) return 2;
    troupe::io::connection a{s[0]}, b{s[1]};
    char got = 0;
    troupe::thread t{[&] { got = b.read_some(&got, 1) == 1 ? got : 0; }};
    a.write_all("k");
    t.join();
    return got == 'k' ? 0 : 1;
}
