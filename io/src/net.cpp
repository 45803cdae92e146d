// Addresses, connections, listeners and serve().
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <list>
#include <stdexcept>

#include "engine.hpp"
#include "troupe/thread.hpp"

namespace troupe::io {

using detail::throw_errno;

// ---------------------------------------------------------------------------
// address

address address::ip(std::string_view host, std::uint16_t port) {
    address a;
    const std::string h(host);
    auto* v4 = reinterpret_cast<::sockaddr_in*>(&a.raw_);
    if (::inet_pton(AF_INET, h.c_str(), &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(port);
        a.len_ = sizeof(::sockaddr_in);
        return a;
    }
    a.raw_ = {};
    auto* v6 = reinterpret_cast<::sockaddr_in6*>(&a.raw_);
    if (::inet_pton(AF_INET6, h.c_str(), &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(port);
        a.len_ = sizeof(::sockaddr_in6);
        return a;
    }
    throw std::invalid_argument("troupe::io::address::ip: '" + h +
                                "' is not an IPv4 or IPv6 address literal");
}

address address::unix_path(std::string_view path) {
    address a;
    auto* un = reinterpret_cast<::sockaddr_un*>(&a.raw_);
    if (path.empty() || path.size() >= sizeof un->sun_path)
        throw std::invalid_argument("troupe::io::address::unix_path: '" + std::string(path) +
                                    "' is empty or longer than " +
                                    std::to_string(sizeof un->sun_path - 1) + " bytes");
    un->sun_family = AF_UNIX;
    std::memcpy(un->sun_path, path.data(), path.size());
    a.len_ = ::socklen_t(offsetof(::sockaddr_un, sun_path) + path.size() + 1);
    return a;
}

address address::from(const ::sockaddr* sa, ::socklen_t len) {
    address a;
    if (len > sizeof a.raw_ || !sa)
        throw std::invalid_argument("troupe::io::address::from: the sockaddr is too long");
    std::memcpy(&a.raw_, sa, len);
    a.len_ = len;
    return a;
}

address address::parse(std::string_view text) {
    const auto bad = [&](const char* why) {
        return std::invalid_argument("troupe::io::address::parse: '" + std::string(text) + "': " +
                                     why + " (expected host:port, [v6]:port or unix:/path)");
    };
    if (text.substr(0, 5) == "unix:") return unix_path(text.substr(5));
    if (!text.empty() && text.front() == '/') return unix_path(text);
    std::string_view host, port;
    if (!text.empty() && text.front() == '[') {
        const auto close = text.find(']');
        if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':')
            throw bad("no ']:' after the IPv6 address");
        host = text.substr(1, close - 1);
        port = text.substr(close + 2);
    } else {
        const auto colon = text.rfind(':');
        if (colon == std::string_view::npos) throw bad("no port");
        host = text.substr(0, colon);
        port = text.substr(colon + 1);
    }
    unsigned long p = 0;
    if (port.empty() || port.size() > 5) throw bad("the port is not a number 0-65535");
    for (char c : port) {
        if (c < '0' || c > '9') throw bad("the port is not a number 0-65535");
        p = p * 10 + unsigned(c - '0');
    }
    if (p > 65535) throw bad("the port is not a number 0-65535");
    if (host.empty()) host = "0.0.0.0";
    try {
        return ip(host, std::uint16_t(p));
    } catch (const std::invalid_argument&) {}
    // A name: resolve it off the processor (getaddrinfo blocks).
    const std::string h(host);
    const std::string ps = std::to_string(p);
    ::addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    ::addrinfo* res = nullptr;
    const int rc = blocking([&] { return ::getaddrinfo(h.c_str(), ps.c_str(), &hints, &res); });
    if (rc != 0 || !res) {
        throw std::invalid_argument("troupe::io::address::parse: '" + std::string(text) +
                                    "': cannot resolve '" + h + "': " + ::gai_strerror(rc));
    }
    address a = from(res->ai_addr, res->ai_addrlen);
    ::freeaddrinfo(res);
    return a;
}

int address::family() const noexcept { return raw_.ss_family; }

std::uint16_t address::port() const noexcept {
    if (raw_.ss_family == AF_INET)
        return ntohs(reinterpret_cast<const ::sockaddr_in*>(&raw_)->sin_port);
    if (raw_.ss_family == AF_INET6)
        return ntohs(reinterpret_cast<const ::sockaddr_in6*>(&raw_)->sin6_port);
    return 0;
}

std::string address::to_string() const {
    char buf[INET6_ADDRSTRLEN] = {};
    if (raw_.ss_family == AF_INET) {
        ::inet_ntop(AF_INET, &reinterpret_cast<const ::sockaddr_in*>(&raw_)->sin_addr, buf,
                    sizeof buf);
        return std::string(buf) + ":" + std::to_string(port());
    }
    if (raw_.ss_family == AF_INET6) {
        ::inet_ntop(AF_INET6, &reinterpret_cast<const ::sockaddr_in6*>(&raw_)->sin6_addr, buf,
                    sizeof buf);
        std::string s = "[";
        s.append(buf);
        s.append("]:");
        s.append(std::to_string(port()));
        return s;
    }
    if (raw_.ss_family == AF_UNIX) {
        const auto* un = reinterpret_cast<const ::sockaddr_un*>(&raw_);
        const std::size_t n =
            len_ > offsetof(::sockaddr_un, sun_path) ? len_ - offsetof(::sockaddr_un, sun_path) : 0;
        return "unix:" + std::string(un->sun_path, ::strnlen(un->sun_path, n));
    }
    return "(no address)";
}

// ---------------------------------------------------------------------------
// connection

connection::connection(int fd) : fd_(fd) {
    if (fd < 0) throw error(EBADF, "connection", fd);
    detail::attach(fd);
}

connection::connection(connection&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}

connection& connection::operator=(connection&& o) noexcept {
    if (this != &o) {
        if (fd_ >= 0) {
            try {
                io::close(fd_);
            } catch (...) {}
        }
        fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
}

connection::~connection() {
    if (fd_ >= 0) {
        try {
            io::close(fd_);
        } catch (...) {}
    }
}

namespace {
int new_socket(int family, const char* op) {
    const int fd = ::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) throw_errno(errno, op, -1);
    return fd;
}
void nodelay(int fd, bool on) {
    const int v = on ? 1 : 0;
    if (::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, sizeof v) != 0)
        throw_errno(errno, "set_nodelay", fd);
}
}  // namespace

connection connection::connect(const address& to, deadline d, const stop_token& tok) {
    if (to.size() == 0) throw std::invalid_argument("troupe::io::connection::connect: no address");
    connection c(new_socket(to.family(), "connect (socket)"));
    if (to.family() != AF_UNIX) nodelay(c.fd_, true);
    io::connect(c.fd_, to.data(), to.size(), d, tok);  // on a throw, ~connection closes
    return c;
}

std::size_t connection::read_some_now(std::span<std::byte> buf, deadline d, const stop_token& tok) {
    if (fd_ < 0) throw closed_error("read_some", fd_);
    return io::recv(fd_, buf.data(), buf.size(), 0, d, tok);
}

bool connection::read_op::on_selected(select_node& n) {
    if (!ready_clause::on_selected(n)) return false;
    got_ = c_->read_some_now(buf_, d_, tok_);
    return true;
}

bool connection::read_exact(std::span<std::byte> buf, deadline d, const stop_token& tok) {
    std::size_t got = 0;
    while (got < buf.size()) {
        const std::size_t n = read_some_now(buf.subspan(got), d, tok);
        if (n == 0) {
            if (got == 0) return false;
            throw error(std::make_error_code(std::errc::connection_aborted), "read_exact", fd_,
                        "troupe::io: read_exact on fd " + std::to_string(fd_) +
                            ": the peer closed after " + std::to_string(got) + " of " +
                            std::to_string(buf.size()) + " bytes");
        }
        got += n;
    }
    return true;
}

std::size_t connection::write_some(std::span<const std::byte> data, deadline d,
                                   const stop_token& tok) {
    if (fd_ < 0) throw closed_error("write_some", fd_);
    return io::send(fd_, data.data(), data.size(), 0, d, tok);
}

void connection::write_all(std::span<const std::byte> data, deadline d, const stop_token& tok) {
    if (fd_ < 0) throw closed_error("write_all", fd_);
    std::size_t done = 0;
    written_ = 0;
    try {
        while (done < data.size())
            done += io::send(fd_, data.data() + done, data.size() - done, 0, d, tok);
    } catch (const troupe::cancelled&) {
        written_ = done;
        throw;
    } catch (const timeout_error&) {
        written_ = done;
        throw;
    } catch (const closed_error&) {
        written_ = done;
        throw;
    } catch (const error& e) {
        written_ = done;
        throw error(e.code(), "write_all", fd_,
                    std::string(e.what()) + " (after " + std::to_string(done) + " of " +
                        std::to_string(data.size()) + " bytes)");
    }
    written_ = done;
}

void connection::shutdown(int how) {
    if (fd_ < 0) throw closed_error("shutdown", fd_);
    if (::shutdown(fd_, how) != 0) throw_errno(errno, "shutdown", fd_);
}

address connection::peer() const {
    address a;
    a.size_ref() = sizeof(::sockaddr_storage);
    if (::getpeername(fd_, a.data(), &a.size_ref()) != 0) throw_errno(errno, "peer", fd_);
    return a;
}

address connection::local() const {
    address a;
    a.size_ref() = sizeof(::sockaddr_storage);
    if (::getsockname(fd_, a.data(), &a.size_ref()) != 0) throw_errno(errno, "local", fd_);
    return a;
}

void connection::set_nodelay(bool on) { nodelay(fd_, on); }

void connection::close() {
    if (fd_ < 0) return;
    io::close(std::exchange(fd_, -1));
}

// ---------------------------------------------------------------------------
// listener

listener& listener::operator=(listener&& o) noexcept {
    if (this != &o) {
        try {
            close();
        } catch (...) {}
        fd_.store(o.fd_.exchange(-1, std::memory_order_acq_rel), std::memory_order_release);
        unix_path_ = std::move(o.unix_path_);
    }
    return *this;
}

listener::~listener() {
    try {
        close();
    } catch (...) {}
}

listener listener::listen(const address& at, int backlog) {
    if (at.size() == 0) throw std::invalid_argument("troupe::io::listener::listen: no address");
    listener l;
    const int fd = new_socket(at.family(), "listen (socket)");
    l.fd_.store(fd, std::memory_order_release);
    try {
        if (at.family() == AF_UNIX) {
            const auto* un = reinterpret_cast<const ::sockaddr_un*>(at.data());
            struct stat st {};
            if (un->sun_path[0] != 0 && ::stat(un->sun_path, &st) == 0 && S_ISSOCK(st.st_mode))
                ::unlink(un->sun_path);
        } else {
            const int one = 1;
            ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        }
        if (::bind(fd, at.data(), at.size()) != 0) throw_errno(errno, "listen (bind)", fd);
        if (at.family() == AF_UNIX) {
            const auto* un = reinterpret_cast<const ::sockaddr_un*>(at.data());
            l.unix_path_ = un->sun_path;
        }
        if (::listen(fd, backlog) != 0) throw_errno(errno, "listen", fd);
        detail::attach(fd);
    } catch (...) {
        l.close();
        throw;
    }
    return l;
}

connection listener::accept_now(deadline d, const stop_token& tok) {
    const int fd = this->fd();
    if (fd < 0) throw closed_error("accept", fd);
    connection c;
    c.fd_ = io::accept(fd, nullptr, nullptr, d, tok);
    // TCP: no Nagle delay for request/response traffic (Go's default).
    const int one = 1;
    ::setsockopt(c.fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return c;
}

bool listener::accept_op::on_selected(select_node& n) {
    if (!ready_clause::on_selected(n)) return false;
    got_ = l_->accept_now(d_, tok_);
    return true;
}

address listener::local() const {
    address a;
    a.size_ref() = sizeof(::sockaddr_storage);
    const int fd = this->fd();
    if (::getsockname(fd, a.data(), &a.size_ref()) != 0) throw_errno(errno, "local", fd);
    return a;
}

void listener::close() {
    // One closer takes the descriptor (an exchange: close() may race with
    // another close(), or with serve() reading it for its next accept).
    const int fd = fd_.exchange(-1, std::memory_order_acq_rel);
    if (fd < 0) return;
    if (!unix_path_.empty()) {
        ::unlink(unix_path_.c_str());
        unix_path_.clear();
    }
    io::close(fd);
}

// ---------------------------------------------------------------------------
// serve

namespace {
struct handler_slot {
    troupe::thread t;
    std::atomic<bool> done{false};
};
}  // namespace

void serve(listener& ln, std::function<void(connection&)> handler) {
    std::list<handler_slot> running;
    const auto reap = [&](bool all) {
        for (auto it = running.begin(); it != running.end();) {
            if (all || it->done.load(std::memory_order_acquire)) {
                it->t.join();
                it = running.erase(it);
            } else {
                ++it;
            }
        }
    };
    for (;;) {
        connection c;
        try {
            c = ln.accept();
        } catch (const closed_error&) {
            break;  // the listener was closed: the way to stop serving
        } catch (...) {
            reap(true);
            throw;
        }
        reap(false);
        handler_slot& slot = running.emplace_back();
        try {
            slot.t = troupe::thread([&handler, &slot, c = std::move(c)]() mutable {
                try {
                    handler(c);
                } catch (const error&) {
                    // The connection failed (reset, timeout): its own end.
                } catch (const std::exception& x) {
                    std::string peer;
                    try {
                        peer = c.peer().to_string();
                    } catch (...) {
                        peer = "(gone)";
                    }
                    std::fprintf(stderr, "troupe::io::serve: a handler for %s threw: %s\n",
                                 peer.c_str(), x.what());
                } catch (...) {
                    std::fprintf(stderr, "troupe::io::serve: a handler threw a non-exception\n");
                }
                try {
                    c.close();
                } catch (...) {}
                slot.done.store(true, std::memory_order_release);
            });
        } catch (...) {
            running.pop_back();
            reap(true);
            throw;
        }
    }
    reap(true);
}

}  // namespace troupe::io
