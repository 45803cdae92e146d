#pragma once
// CAF 0.17 twins of bench/remote: two processes on one host talking through
// CAF's middleman (libcaf_io, TCP over loopback). The program forks: the
// child publishes an actor on a free port and tells the parent the port
// through a pipe; the parent connects with remote_actor and measures.
#include <sys/wait.h>
#include <unistd.h>
#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>

#include "../../common/bench_util.hpp"

namespace caf_remote {

/// Runs `serve(sys)` (which returns the actor to publish) in a child
/// process and returns the parent's connection to it through `connect`.
/// The child lives until the parent's `client` returns.
inline int run(int argc, char** argv, const std::function<caf::actor(caf::actor_system&)>& serve,
               const std::function<void(caf::actor_system&, caf::actor)>& client) {
    int port_pipe[2], quit_pipe[2];
    if (pipe(port_pipe) != 0 || pipe(quit_pipe) != 0) bench::fail("pipe");
    const long workers = bench::option(argc, argv, "workers", 2);
    pid_t pid = fork();
    if (pid < 0) bench::fail("fork");
    if (pid == 0) {  // the server process
        close(port_pipe[0]);
        close(quit_pipe[1]);
        caf::actor_system_config cfg;
        cfg.load<caf::io::middleman>();
        cfg.set("scheduler.max-threads", static_cast<int64_t>(workers));
        caf::actor_system sys{cfg};
        auto a = serve(sys);
        auto port = sys.middleman().publish(a, 0, "127.0.0.1");
        if (!port) bench::fail("caf publish failed");
        uint16_t p = *port;
        if (write(port_pipe[1], &p, sizeof p) != sizeof p) bench::fail("write");
        char c;
        (void)!read(quit_pipe[0], &c, 1);  // until the parent is done
        std::_Exit(0);
    }
    close(port_pipe[1]);
    close(quit_pipe[0]);
    uint16_t p = 0;
    if (read(port_pipe[0], &p, sizeof p) != sizeof p) bench::fail("read");
    {
        caf::actor_system_config cfg;
        cfg.load<caf::io::middleman>();
        cfg.set("scheduler.max-threads", static_cast<int64_t>(workers));
        caf::actor_system sys{cfg};
        auto remote = sys.middleman().remote_actor("127.0.0.1", p);
        if (!remote) bench::fail("caf remote_actor failed");
        client(sys, *remote);
        close(quit_pipe[1]);
        int st = 0;
        waitpid(pid, &st, 0);
        std::fflush(stdout);
        std::_Exit(0);  // skip CAF's teardown of the dead connection
    }
}

}  // namespace caf_remote
