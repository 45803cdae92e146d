// io_loadgen: the one client of every I/O benchmark (bench/run io), so that
// troupe's servers and their twins (Go, Boost.Asio, std threads) are driven
// by the same code. It starts the server it measures, reads the port the
// server prints, drives it, reads the server's CPU time and resident size
// from /proc, prints RESULT lines, then closes the server's stdin (every
// server exits on EOF of its stdin, so none outlives the run, even when
// this program dies) and reaps it.
//
//   io_loadgen --mode=echo --system=S --conns=N --size=B --ms=M [--warmup-ms=W] [--threads=T]
//              -- SERVER ARGS...
//       N connections, each a closed loop: send B bytes, wait for all B to
//       come back (checked byte for byte), send again. T client threads
//       (epoll, level-triggered), connections spread round robin.
//       bench=io_echo        metric=ops_per_s   (echoes per second)
//       bench=io_echo_p50/99 metric=ns_per_op   (round-trip latency)
//       bench=io_echo_cpu    metric=cpu_percent (server CPU, 100 = one core)
//       bench=io_echo_switches metric=switches_per_op (server context
//                            switches per echo, every thread summed)
//       The warm-up starts once every connection has had one echo.
//   io_loadgen --mode=http --system=S --conns=N --ms=M [--threads=T] -- SERVER ARGS...
//       runs wrk -tT -cN against the server (GET /, keep-alive).
//       bench=io_http metric=ops_per_s, io_http_p50/99 metric=ns_per_op
//   io_loadgen --mode=idle --system=S --conns=N --ms=M -- SERVER ARGS...
//       N connections, one 64-byte echo on each (so the server holds a
//       reader parked on every one), then nothing for M ms.
//       bench=io_idle_cpu metric=cpu_percent, io_idle_rss metric=bytes_per_conn
//       (server resident size after minus before the connections, / N)
//
// A server prints "port=<n>\n" on stdout once it listens on 127.0.0.1:<n>,
// and exits (status 0) when its stdin reaches EOF.
//
// --perf=FILE: runs the server under `perf record -g -o FILE` (its whole
// life, the measured window being most of it), for the profiles quoted in
// bench/RESULTS.md; CPU and RSS are still read from the server itself.
// (Not `perf record -p` over the window: perf cannot attach to the io_uring
// worker threads a server may hold, fails with ESRCH and records nothing.) (for the profiles of
// bench/RESULTS.md).
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bench_util.hpp"

namespace {

[[noreturn]] void die(const std::string& what) {
    std::fprintf(stderr, "io_loadgen: %s\n", what.c_str());
    std::exit(1);
}

[[noreturn]] void die_errno(const std::string& what) { die(what + ": " + std::strerror(errno)); }

// A server that stops answering: if TROUPE_DUMP_SIGNAL (which the server
// inherits) names USR1, USR2 or QUIT, send it that signal so a troupe
// server writes its dump (every thread and what it waits on) to stderr,
// then fail.
// Unread bytes on the established TCP sockets of the server's port
// (/proc/net/tcp rx_queue): `server_*` on the server's side of each
// connection (local port == port), `client_*` on ours (remote port ==
// port). On a stall, bytes that stay unread at a server waiting to read
// mean a lost wake-up; bytes unread at the client mean the client starved.
struct unread {
    long server_socks = 0, server_bytes = 0, client_socks = 0, client_bytes = 0;
};
unread unread_at(int port) {
    unread u;
    std::FILE* f = std::fopen("/proc/net/tcp", "r");
    if (!f) return u;
    char line[512];
    std::fgets(line, sizeof line, f);  // header
    while (std::fgets(line, sizeof line, f)) {
        unsigned lport = 0, rport = 0, st = 0;
        unsigned long txq = 0, rxq = 0;
        if (std::sscanf(line, " %*d: %*x:%x %*x:%x %x %lx:%lx", &lport, &rport, &st, &txq, &rxq) !=
                5 ||
            st != 1 || rxq == 0)
            continue;
        if (static_cast<int>(lport) == port) {
            ++u.server_socks;
            u.server_bytes += static_cast<long>(rxq);
        } else if (static_cast<int>(rport) == port) {
            ++u.client_socks;
            u.client_bytes += static_cast<long>(rxq);
        }
    }
    std::fclose(f);
    return u;
}

void print_unread(const char* when, int port) {
    const unread u = unread_at(port);
    std::fprintf(stderr,
                 "io_loadgen: %s: %ld server-side sockets hold %ld unread bytes, %ld client-side "
                 "sockets %ld\n",
                 when, u.server_socks, u.server_bytes, u.client_socks, u.client_bytes);
}

[[noreturn]] void die_stalled(pid_t server, int port, const std::string& what) {
    std::fprintf(stderr, "io_loadgen: %s\n", what.c_str());
    print_unread("at the stall", port);
    const char* sig = std::getenv("TROUPE_DUMP_SIGNAL");
    int signo = 0;
    if (sig && std::strcmp(sig, "USR1") == 0) signo = SIGUSR1;
    if (sig && std::strcmp(sig, "USR2") == 0) signo = SIGUSR2;
    if (sig && std::strcmp(sig, "QUIT") == 0) signo = SIGQUIT;
    if (signo != 0) {
        std::fprintf(stderr, "io_loadgen: %s; asking the server for its dump (SIG%s)\n",
                     what.c_str(), sig);
        kill(server, signo);
    }
    std::this_thread::sleep_for(std::chrono::seconds(2));
    print_unread("2 s later", port);
    die(what);
}

// ---------------------------------------------------------------------------
// The server process

struct server {
    pid_t pid = -1;     // the server (perf's child when profiled)
    pid_t waited = -1;  // what we started and reap (the server, or perf)
    int stdin_fd = -1;  // our end of its stdin: closing it stops the server
    int port = 0;
};

// Starts argv[0] with a pipe on stdin and one on stdout, and waits (at most
// 20 s) for its "port=<n>" line.
server start_server(char** argv, const std::string& perf) {
    std::vector<char*> args;
    if (!perf.empty()) {
        for (const char* a : {"perf", "record", "-q", "-F", "1999", "-g", "-o"})
            args.push_back(const_cast<char*>(a));
        args.push_back(const_cast<char*>(perf.c_str()));
        args.push_back(const_cast<char*>("--"));
    }
    for (char** a = argv; *a; ++a) args.push_back(*a);
    args.push_back(nullptr);
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) die_errno("pipe");
    const pid_t pid = fork();
    if (pid < 0) die_errno("fork");
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        execvp(args[0], args.data());
        std::fprintf(stderr, "io_loadgen: cannot run %s: %s\n", args[0], std::strerror(errno));
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    server s;
    s.pid = s.waited = pid;
    s.stdin_fd = in[1];
    std::string line;
    const auto t0 = bench::clock::now();
    while (line.find('\n') == std::string::npos) {
        pollfd p{out[0], POLLIN, 0};
        const double left = 20.0 - bench::seconds(t0, bench::clock::now());
        if (left <= 0) die(std::string("server ") + argv[0] + " printed no port within 20 s");
        if (poll(&p, 1, static_cast<int>(left * 1000)) <= 0) continue;
        char buf[128];
        const ssize_t n = read(out[0], buf, sizeof buf);
        if (n <= 0) die(std::string("server ") + argv[0] + " exited before printing its port");
        line.append(buf, static_cast<std::size_t>(n));
    }
    close(out[0]);  // a server prints nothing else on stdout
    if (std::sscanf(line.c_str(), "port=%d", &s.port) != 1 || s.port <= 0)
        die("server printed '" + line.substr(0, line.find('\n')) + "', not port=<n>");
    if (!perf.empty()) {
        // The server printed its port, so perf has started it: its child.
        const std::string kids =
            "/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children";
        std::FILE* f = std::fopen(kids.c_str(), "r");
        if (!f || std::fscanf(f, "%d", &s.pid) != 1) die("cannot find the server under perf");
        std::fclose(f);
    }
    return s;
}

// Closes the server's stdin and reaps it (SIGKILL after 10 s); fails if it
// did not exit with status 0.
void stop_server(server& s) {
    close(s.stdin_fd);
    int status = 0;
    for (int i = 0; i < 1000; ++i) {
        const pid_t r = waitpid(s.waited, &status, WNOHANG);
        if (r == s.waited) {
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                die("server exited with status " + std::to_string(status));
            return;
        }
        usleep(10000);
    }
    kill(s.waited, SIGKILL);
    waitpid(s.waited, &status, 0);
    die("server did not exit within 10 s of its stdin closing (killed)");
}

// User + system CPU seconds of every thread of `pid` (/proc/pid/stat).
double cpu_seconds_of(pid_t pid) {
    const std::string path = "/proc/" + std::to_string(pid) + "/stat";
    std::FILE* f = std::fopen(path.c_str(), "r");
    if (!f) die_errno("open " + path);
    char buf[1024];
    const std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    buf[n] = 0;
    // Fields after the command name (which may hold spaces) start past ')'.
    const char* p = std::strrchr(buf, ')');
    if (!p) die("cannot parse " + path);
    unsigned long utime = 0, stime = 0;
    // state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
    if (std::sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) !=
        2)
        die("cannot parse " + path);
    return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// Context switches (voluntary and not) of every thread of `pid`, summed
// over /proc/pid/task/*/status: a thread that sleeps and is woken costs
// one, so per echo this counts the kernel-thread hops of a server's wake path.
long switches_of(pid_t pid) {
    const std::string dir = "/proc/" + std::to_string(pid) + "/task";
    DIR* d = opendir(dir.c_str());
    if (!d) die_errno("open " + dir);
    long total = 0;
    while (dirent* e = readdir(d)) {
        if (e->d_name[0] == '.') continue;
        std::FILE* f = std::fopen((dir + "/" + e->d_name + "/status").c_str(), "r");
        if (!f) continue;  // the thread ended meanwhile
        char line[256];
        long v = 0;
        while (std::fgets(line, sizeof line, f))
            if (std::sscanf(line, "voluntary_ctxt_switches: %ld", &v) == 1 ||
                std::sscanf(line, "nonvoluntary_ctxt_switches: %ld", &v) == 1)
                total += v;
        std::fclose(f);
    }
    closedir(d);
    return total;
}

// Resident set of `pid` in KiB (VmRSS of /proc/pid/status).
long rss_kb_of(pid_t pid) {
    const std::string path = "/proc/" + std::to_string(pid) + "/status";
    std::FILE* f = std::fopen(path.c_str(), "r");
    if (!f) die_errno("open " + path);
    char line[256];
    long kb = -1;
    while (std::fgets(line, sizeof line, f))
        if (std::sscanf(line, "VmRSS: %ld kB", &kb) == 1) break;
    std::fclose(f);
    if (kb < 0) die("no VmRSS in " + path);
    return kb;
}

// Raises the soft RLIMIT_NOFILE to what `need` descriptors take (the server
// inherits it); fails naming the limit when the hard limit is lower.
void ensure_descriptors(long need) {
    rlimit r{};
    getrlimit(RLIMIT_NOFILE, &r);
    const rlim_t want = static_cast<rlim_t>(need + 64);
    if (r.rlim_cur >= want) return;
    if (r.rlim_max != RLIM_INFINITY && r.rlim_max < want)
        die("RLIMIT_NOFILE hard limit " + std::to_string(r.rlim_max) + " is below the " +
            std::to_string(want) + " descriptors this run needs (raise it: ulimit -Hn)");
    r.rlim_cur = want;
    if (setrlimit(RLIMIT_NOFILE, &r) != 0) die_errno("setrlimit(RLIMIT_NOFILE)");
}

int connect_to(int port) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) die_errno("socket");
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) die_errno("connect");
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

// Writes all of buf (blocking or not: waits with poll on EAGAIN).
void write_all(int fd, const char* buf, std::size_t len) {
    while (len > 0) {
        const ssize_t n = write(fd, buf, len);
        if (n > 0) {
            buf += n;
            len -= static_cast<std::size_t>(n);
        } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
            pollfd p{fd, POLLOUT, 0};
            poll(&p, 1, 1000);
        } else {
            die_errno("write to server");
        }
    }
}

// ---------------------------------------------------------------------------
// echo

struct echo_conn {
    int fd = -1;
    std::vector<char> sent, got;
    std::size_t have = 0;  // bytes of the reply received so far
    std::uint64_t seq = 0;
    bench::clock::time_point sent_at;
    bool counted = false;   // sent inside the measured window
    bool answered = false;  // one echo came back (the server serves it)
};

enum phase : int { warmup, measure, done };

struct echo_worker {
    std::vector<echo_conn*> conns;
    std::vector<std::uint32_t> lat_ns;  // round trips sent and completed in the window
    std::atomic<long> ops{0};           // completed in the window (read by main on a stall)
};

void send_next(echo_conn& c, const std::atomic<int>& ph) {
    ++c.seq;
    std::memcpy(c.sent.data(), &c.seq, std::min(sizeof c.seq, c.sent.size()));
    c.have = 0;
    c.counted = ph.load(std::memory_order_relaxed) == measure;
    c.sent_at = bench::clock::now();
    write_all(c.fd, c.sent.data(), c.sent.size());
}

void echo_loop(echo_worker& w, const std::atomic<int>& ph, std::atomic<long>& answered) {
    const int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0) die_errno("epoll_create1");
    for (echo_conn* c : w.conns) {
        epoll_event e{};
        e.events = EPOLLIN;
        e.data.ptr = c;
        if (epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &e) != 0) die_errno("epoll_ctl");
    }
    for (echo_conn* c : w.conns) send_next(*c, ph);
    std::vector<epoll_event> evs(256);
    while (ph.load(std::memory_order_relaxed) != done) {
        const int n = epoll_wait(ep, evs.data(), static_cast<int>(evs.size()), 100);
        if (n < 0 && errno != EINTR) die_errno("epoll_wait");
        for (int i = 0; i < n; ++i) {
            auto& c = *static_cast<echo_conn*>(evs[static_cast<std::size_t>(i)].data.ptr);
            const ssize_t r = read(c.fd, c.got.data() + c.have, c.got.size() - c.have);
            if (r == 0) die("server closed a connection");
            if (r < 0) {
                if (errno == EAGAIN || errno == EINTR) continue;
                die_errno("read from server");
            }
            c.have += static_cast<std::size_t>(r);
            if (c.have < c.got.size()) continue;
            const auto now = bench::clock::now();
            if (std::memcmp(c.got.data(), c.sent.data(), c.got.size()) != 0)
                die("an echo differs from what was sent");
            if (!c.answered) {
                c.answered = true;
                answered.fetch_add(1, std::memory_order_relaxed);
            }
            if (c.counted && ph.load(std::memory_order_relaxed) == measure) {
                w.ops.store(w.ops.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
                w.lat_ns.push_back(static_cast<std::uint32_t>(std::min<long long>(
                    std::chrono::nanoseconds(now - c.sent_at).count(), 0xffffffffLL)));
            }
            send_next(c, ph);
        }
    }
    close(ep);
}

double percentile(std::vector<std::uint32_t>& v, double q) {
    if (v.empty()) return 0;
    const auto i = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
    std::nth_element(v.begin(), v.begin() + static_cast<long>(i), v.end());
    return v[i];
}

void run_echo(const server& s, const char* system, long conns, long size, long ms, long warmup_ms,
              long threads) {
    std::vector<echo_conn> cs(static_cast<std::size_t>(conns));
    for (long i = 0; i < conns; ++i) {
        auto& c = cs[static_cast<std::size_t>(i)];
        c.fd = connect_to(s.port);
        fcntl(c.fd, F_SETFL, fcntl(c.fd, F_GETFL) | O_NONBLOCK);
        c.sent.resize(static_cast<std::size_t>(size));
        c.got.resize(static_cast<std::size_t>(size));
        for (long b = 0; b < size; ++b)
            c.sent[static_cast<std::size_t>(b)] = static_cast<char>('a' + (i + b) % 26);
    }
    threads = std::max(1L, std::min(threads, conns));
    std::vector<echo_worker> ws(static_cast<std::size_t>(threads));
    for (long i = 0; i < conns; ++i)
        ws[static_cast<std::size_t>(i % threads)].conns.push_back(&cs[static_cast<std::size_t>(i)]);
    for (auto& w : ws) w.lat_ns.reserve(1 << 20);
    std::atomic<int> ph{warmup};
    std::atomic<long> answered{0};
    std::vector<std::thread> ts;
    for (auto& w : ws) ts.emplace_back([&w, &ph, &answered] { echo_loop(w, ph, answered); });
    // The warm-up starts once every connection has had one echo: the
    // server has accepted and started serving all of them (a thread per
    // connection takes a while at 1,000), none of which is measured.
    const auto setup = bench::clock::now();
    while (answered.load(std::memory_order_relaxed) < conns) {
        if (bench::seconds(setup, bench::clock::now()) > 60)
            die_stalled(s.pid, s.port,
                        "the server answered " + std::to_string(answered.load()) + " of " +
                            std::to_string(conns) + " connections within 60 s");
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(warmup_ms));
    const long cs0 = switches_of(s.pid);
    const double cpu0 = cpu_seconds_of(s.pid);
    const auto t0 = bench::clock::now();
    ph.store(measure, std::memory_order_relaxed);
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    ph.store(done, std::memory_order_relaxed);
    const auto t1 = bench::clock::now();
    const double cpu1 = cpu_seconds_of(s.pid);
    const long cs1 = switches_of(s.pid);
    long ops = 0;
    for (auto& w : ws) ops += w.ops.load(std::memory_order_relaxed);
    if (ops == 0)  // workers still running: the dump shows the server as it is
        die_stalled(s.pid, s.port,
                    "no echo completed in the measured window (" + std::to_string(ms) + " ms, " +
                        std::to_string(conns) + " connections)");
    for (auto& t : ts) t.join();
    for (auto& c : cs) close(c.fd);

    std::vector<std::uint32_t> lat;
    for (auto& w : ws) lat.insert(lat.end(), w.lat_ns.begin(), w.lat_ns.end());
    const double secs = bench::seconds(t0, t1);
    const std::string p = "conns=" + std::to_string(conns) + " size=" + std::to_string(size);
    bench::result("io_echo", system, "ops_per_s", static_cast<double>(ops) / secs, p);
    bench::result("io_echo_p50", system, "ns_per_op", percentile(lat, 0.50), p);
    bench::result("io_echo_p99", system, "ns_per_op", percentile(lat, 0.99), p);
    bench::result("io_echo_cpu", system, "cpu_percent", (cpu1 - cpu0) / secs * 100.0, p);
    bench::result("io_echo_switches", system, "switches_per_op",
                  static_cast<double>(cs1 - cs0) / static_cast<double>(ops), p);
}

// ---------------------------------------------------------------------------
// http (wrk)

// "1.23ms" -> nanoseconds
double wrk_time_ns(const char* s) {
    char unit[8] = {};
    double v = 0;
    if (std::sscanf(s, "%lf%7s", &v, unit) != 2) return -1;
    const std::string u = unit;
    if (u == "us") return v * 1e3;
    if (u == "ms") return v * 1e6;
    if (u == "s") return v * 1e9;
    if (u == "m") return v * 60e9;
    return -1;
}

void run_http(const server& s, const char* system, long conns, long ms, long threads) {
    const std::string url = "http://127.0.0.1:" + std::to_string(s.port) + "/";
    const std::string cmd = "wrk --latency -t" + std::to_string(threads) + " -c" +
                            std::to_string(conns) + " -d" + std::to_string((ms + 999) / 1000) +
                            "s --timeout 10s " + url + " 2>&1";
    std::FILE* f = popen(cmd.c_str(), "r");
    if (!f) die_errno("popen wrk");
    double rps = -1, p50 = -1, p99 = -1;
    long errors = 0, non2xx = 0;
    std::string all;
    char line[512];
    while (std::fgets(line, sizeof line, f)) {
        all += line;
        char pct[16], val[32];
        double d = 0;
        long a = 0, b = 0, c = 0, e = 0;
        if (std::sscanf(line, " Requests/sec: %lf", &d) == 1) rps = d;
        if (std::sscanf(line, " %15s %31s", pct, val) == 2) {
            if (std::strcmp(pct, "50%") == 0) p50 = wrk_time_ns(val);
            if (std::strcmp(pct, "99%") == 0) p99 = wrk_time_ns(val);
        }
        if (std::sscanf(line, " Socket errors: connect %ld, read %ld, write %ld, timeout %ld", &a,
                        &b, &c, &e) == 4)
            errors = a + b + c + e;
        if (std::sscanf(line, " Non-2xx or 3xx responses: %ld", &a) == 1) non2xx = a;
    }
    const int rc = pclose(f);
    if (rc != 0 || rps < 0 || p50 < 0 || p99 < 0) die("wrk failed or printed no rates:\n" + all);
    if (errors != 0 || non2xx != 0)
        die("wrk saw " + std::to_string(errors) + " socket errors and " + std::to_string(non2xx) +
            " non-2xx responses:\n" + all);
    const std::string p = "conns=" + std::to_string(conns);
    bench::result("io_http", system, "ops_per_s", rps, p);
    bench::result("io_http_p50", system, "ns_per_op", p50, p);
    bench::result("io_http_p99", system, "ns_per_op", p99, p);
}

// ---------------------------------------------------------------------------
// idle

void run_idle(const server& s, const char* system, long conns, long ms) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const long rss0 = rss_kb_of(s.pid);
    std::vector<int> fds;
    fds.reserve(static_cast<std::size_t>(conns));
    char msg[64], back[64];
    std::memset(msg, 'i', sizeof msg);
    for (long i = 0; i < conns; ++i) {
        const int fd = connect_to(s.port);
        fds.push_back(fd);
        // One round trip: the server has accepted this connection and holds
        // a reader on it (parked again after the echo).
        write_all(fd, msg, sizeof msg);
        std::size_t have = 0;
        while (have < sizeof back) {
            const ssize_t r = read(fd, back + have, sizeof back - have);
            if (r <= 0) die("server closed an idle connection");
            have += static_cast<std::size_t>(r);
        }
        if (std::memcmp(msg, back, sizeof msg) != 0) die("an echo differs from what was sent");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // settle
    const double cpu0 = cpu_seconds_of(s.pid);
    const auto t0 = bench::clock::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    const double cpu1 = cpu_seconds_of(s.pid);
    const double secs = bench::seconds(t0, bench::clock::now());
    const long rss1 = rss_kb_of(s.pid);
    for (int fd : fds) close(fd);
    const std::string p = "conns=" + std::to_string(conns);
    bench::result("io_idle_cpu", system, "cpu_percent", (cpu1 - cpu0) / secs * 100.0, p);
    bench::result("io_idle_rss", system, "bytes_per_conn",
                  static_cast<double>(rss1 - rss0) * 1024.0 / static_cast<double>(conns), p);
}

}  // namespace

int main(int argc, char** argv) {
    int sep = 1;
    while (sep < argc && std::strcmp(argv[sep], "--") != 0) ++sep;
    if (sep + 1 >= argc)
        die("usage: io_loadgen --mode=echo|http|idle --system=S ... -- SERVER ARGS...");
    const int nopt = sep;  // options are argv[1 .. sep)
    const std::string mode = bench::option_text(nopt, argv, "mode", "echo");
    const std::string system = bench::option_text(nopt, argv, "system", "");
    const long conns = bench::option(nopt, argv, "conns", 64);
    const long size = bench::option(nopt, argv, "size", 64);
    const long ms = bench::option(nopt, argv, "ms", 3000);
    const long warmup_ms = bench::option(nopt, argv, "warmup-ms", 500);
    const long threads = bench::option(nopt, argv, "threads", 1);
    const std::string perf = bench::option_text(nopt, argv, "perf", "");
    if (system.empty()) die("--system=NAME is required");
    if (conns < 1 || size < 1 || ms < 1 || threads < 1)
        die("--conns, --size, --ms, --threads must be >= 1");
    ensure_descriptors(conns + 16);
    signal(SIGPIPE, SIG_IGN);

    server s = start_server(argv + sep + 1, perf);
    if (mode == "echo") run_echo(s, system.c_str(), conns, size, ms, warmup_ms, threads);
    else if (mode == "http") run_http(s, system.c_str(), conns, ms, threads);
    else if (mode == "idle") run_idle(s, system.c_str(), conns, ms);
    else die("unknown --mode=" + mode + " (echo, http or idle)");
    stop_server(s);
}
