#pragma once
// (Over 450 lines: the module's call surface with its doc comments, the
// one header users include for io.)
/// troupe io: sockets, pipes and files for user threads. A user thread that
/// waits on a descriptor parks (its processor runs other threads); an OS
/// thread blocks as it would in the kernel. I/O joins `waituntil`.
///
///     namespace io = troupe::io;
///     auto ln = io::listener::listen(io::address::parse("127.0.0.1:8080"));
///     io::serve(ln, [](io::connection& c) {            // a user thread each
///         char buf[4096];
///         while (std::size_t n = c.read_some(buf)) c.write_all(buf, n);
///     });                                               // until ln.close()
///
/// One I/O engine per process (io_uring through liburing, or epoll; chosen
/// at build with -Dio_uring=auto|enabled|disabled and at run time with
/// TROUPE_IO=uring|epoll), started on first use; a poller kernel thread
/// sleeps in the kernel until a descriptor is ready or a file operation
/// completes, so idle I/O costs no CPU. docs/io.md describes the design.
///
/// Errors: every call throws io::error (a std::system_error carrying errno,
/// the operation and the descriptor) instead of returning -1; end of file
/// is a read of 0 bytes; a deadline that passes throws io::timeout_error; a
/// descriptor closed (through io::close or an object's close) while a
/// thread waits on it wakes that thread at once with io::closed_error. A
/// call that throws has transferred nothing unless it says otherwise
/// (write_all reports how much it wrote).
///
/// Descriptors: the calls register a descriptor with the engine on first use
/// and make it non-blocking (O_NONBLOCK is a property of the open file
/// description: a descriptor shared with another program, e.g. a terminal,
/// changes for it too). A registered descriptor must be closed with
/// io::close (or the owning object), never ::close: that is how a waiter is
/// told, and how a descriptor number is never reused under a waiting call.
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <atomic>
#include <charconv>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>

#include "troupe/config.hpp"
#include "troupe/context.hpp"
#include "troupe/select.hpp"
#include "troupe/semaphore.hpp"
#include "troupe/spinlock.hpp"
#include "troupe/stop_token.hpp"
#include "troupe/thread.hpp"

namespace troupe::io {

// ---------------------------------------------------------------------------
// Errors

/// What failed: the operation's name ("read", "accept", ...), the
/// descriptor (-1 if none), and errno as the error code.
class error : public std::system_error {
public:
    error(int errno_value, const char* operation, int fd);
    error(std::error_code code, const char* operation, int fd, const std::string& what);
    /// The operation that failed ("read", "connect", ...).
    const char* operation() const noexcept { return operation_; }
    /// The descriptor it was called on, or -1.
    int fd() const noexcept { return fd_; }

private:
    const char* operation_;
    int fd_;
};

/// The call's deadline passed before it could complete (code
/// std::errc::timed_out). Nothing was transferred.
class timeout_error : public error {
public:
    timeout_error(const char* operation, int fd);
};

/// The descriptor was closed (io::close, or its object's close) before or
/// while the call waited on it (code EBADF). Nothing was transferred.
class closed_error : public error {
public:
    closed_error(const char* operation, int fd);
};

// ---------------------------------------------------------------------------
// Deadlines

/// When a call gives up (Go's SetDeadline, per call). Default: never.
/// A duration is relative to the moment the deadline is made.
class deadline {
public:
    using clock = std::chrono::steady_clock;
    /// No deadline.
    constexpr deadline() noexcept = default;
    /// `d` from now (d <= 0: already passed: a call that would wait throws
    /// timeout_error at once, one that can complete at once does).
    template <class Rep, class Period>
    deadline(std::chrono::duration<Rep, Period> d) noexcept  // NOLINT: implicit by design
        : at_(clock::now() + std::chrono::duration_cast<clock::duration>(d)), set_(true) {}
    /// At `t`.
    deadline(clock::time_point t) noexcept : at_(t), set_(true) {}  // NOLINT

    bool is_set() const noexcept { return set_; }
    clock::time_point at() const noexcept { return at_; }
    /// The earliest of the two (for nested operations).
    friend deadline earliest(deadline a, deadline b) noexcept {
        if (!a.set_) return b;
        if (!b.set_) return a;
        return a.at_ < b.at_ ? a : b;
    }

private:
    clock::time_point at_{};
    bool set_ = false;
};

// ---------------------------------------------------------------------------
// The engine

/// The engine this process uses: "io_uring" or "epoll" (starts it).
const char* engine_name();

/// Whether this build can use io_uring (-Dio_uring and liburing found).
bool io_uring_built() noexcept;

// ---------------------------------------------------------------------------
// POSIX-shaped calls. Each parks the calling user thread (or blocks the
// calling OS thread, lending it if a lend_while_blocked scope is active)
// until the descriptor is ready, then performs the call. Each retries on
// EINTR and EAGAIN, throws io::error for any other errno, timeout_error at
// the deadline, closed_error if the descriptor is closed meanwhile.
//
// Cancellation: each call takes an optional troupe::stop_token. A stop
// requested before the call, or while it waits, makes it throw
// troupe::cancelled (naming the operation and the descriptor), and the call
// then transferred nothing: a socket or pipe call waits for readiness and
// makes its system call only after the wait, so a cancelled read, recv or
// accept consumed nothing (the bytes or the pending connection stay in the
// kernel for the next call) and a cancelled write or send wrote nothing. A
// stop that comes while the system call itself runs (it never waits: the
// descriptor is non-blocking) does not undo it: the call returns what it
// transferred. Regular files: see pread.

/// read(2): at most `n` bytes; 0 only at end of file (or n == 0).
std::size_t read(int fd, void* buf, std::size_t n, deadline d = {}, const stop_token& tok = {});
/// write(2): at least one byte unless n == 0 (it may write fewer than n).
/// On a socket whose peer is gone this raises SIGPIPE as write(2) does; use
/// send (MSG_NOSIGNAL is added) or connection::write_all to get EPIPE.
std::size_t write(int fd, const void* buf, std::size_t n, deadline d = {},
                  const stop_token& tok = {});
std::size_t readv(int fd, const ::iovec* iov, int count, deadline d = {},
                  const stop_token& tok = {});
std::size_t writev(int fd, const ::iovec* iov, int count, deadline d = {},
                   const stop_token& tok = {});
/// pread(2)/pwrite(2): at `offset`, the file position unchanged. On a
/// regular file the io_uring engine submits the operation and parks; the
/// epoll engine runs it through io::blocking (a kernel file read cannot be
/// waited on by readiness). read, write, readv and writev of a regular file
/// go the same way. Deadline and stop on a regular file: checked before the
/// operation starts (timeout_error / cancelled, nothing done); with
/// io_uring, one that passes while the operation is in flight cancels it
/// (IORING_OP_ASYNC_CANCEL) and the call waits for the kernel to give the
/// buffer back: if the cancel took, it throws (nothing transferred), if
/// the kernel had already done the operation it returns its result (the
/// operation happened; exactly one of the two). An operation the kernel
/// already runs (a disk read on io_uring's workers, every operation on a
/// helper thread with epoll) is not interrupted: it completes first.
std::size_t pread(int fd, void* buf, std::size_t n, ::off_t offset, deadline d = {},
                  const stop_token& tok = {});
std::size_t pwrite(int fd, const void* buf, std::size_t n, ::off_t offset, deadline d = {},
                   const stop_token& tok = {});
/// recv(2)/send(2); send adds MSG_NOSIGNAL (EPIPE instead of SIGPIPE).
std::size_t recv(int fd, void* buf, std::size_t n, int flags = 0, deadline d = {},
                 const stop_token& tok = {});
std::size_t send(int fd, const void* buf, std::size_t n, int flags = 0, deadline d = {},
                 const stop_token& tok = {});
/// accept4(2): a new descriptor, non-blocking and close-on-exec, already
/// registered with the engine. `addr`/`len` as for accept(2) (may be null).
int accept(int fd, ::sockaddr* addr = nullptr, ::socklen_t* len = nullptr, deadline d = {},
           const stop_token& tok = {});
/// connect(2) on a (made non-blocking) socket: returns once connected;
/// throws io::error with ECONNREFUSED, ETIMEDOUT, ... as the kernel says.
void connect(int fd, const ::sockaddr* addr, ::socklen_t len, deadline d = {},
             const stop_token& tok = {});
/// Closes `fd`: every thread waiting on it wakes at once with closed_error,
/// calls still inside the kernel on it finish first, then the descriptor is
/// closed (so its number cannot be reused under a call that still uses it).
/// Closing a descriptor not registered with the engine just closes it.
/// Throws io::error(EBADF) if `fd` is not open.
void close(int fd);
/// Waits until `fd` is readable (or has an error or hang-up pending).
void wait_readable(int fd, deadline d = {}, const stop_token& tok = {});
/// Waits until `fd` is writable (or has an error pending).
void wait_writable(int fd, deadline d = {}, const stop_token& tok = {});

// ---------------------------------------------------------------------------
// Blocking calls

namespace detail {
void run_blocking(void (*call)(void*), void* arg);
}

/// Runs `fn()` where it may block the kernel thread without costing the
/// cluster a processor (getaddrinfo, fsync, a C library's blocking call):
/// from a user thread, `fn` runs on a helper kernel thread of a pool (grown
/// on demand, idle ones sleep) while the caller parks and its processor runs
/// other threads; from an OS thread it runs inline. Returns what `fn`
/// returns and rethrows what it throws. `fn` sees the helper thread's
/// thread_locals (errno included: read it inside `fn`). Throws
/// std::system_error if no helper thread can be started (fn not run).
template <class F>
std::invoke_result_t<F&> blocking(F&& fn) {
    using R = std::invoke_result_t<F&>;
    struct call {
        F* f;
        std::conditional_t<std::is_void_v<R>, char, std::optional<R>> result;
        std::exception_ptr error;
        static void run(void* p) noexcept {
            auto* self = static_cast<call*>(p);
            try {
                if constexpr (std::is_void_v<R>) (*self->f)();
                else self->result.emplace((*self->f)());
            } catch (...) {
                self->error = std::current_exception();
            }
        }
    } c{&fn, {}, {}};
    detail::run_blocking(&call::run, &c);
    if (c.error) std::rethrow_exception(c.error);
    if constexpr (!std::is_void_v<R>) return std::move(*c.result);
}

// ---------------------------------------------------------------------------
// Addresses

/// An IPv4, IPv6 or Unix-domain socket address.
class address {
public:
    address() noexcept = default;
    /// "127.0.0.1:80", "[::1]:80", "unix:/path/sock" (or a path starting
    /// with '/'), "localhost:80" (resolved through io::blocking). Throws
    /// std::invalid_argument naming the text if it is not one of these.
    static address parse(std::string_view text);
    /// An IPv4/IPv6 literal and a port. Throws std::invalid_argument.
    static address ip(std::string_view host, std::uint16_t port);
    /// A Unix-domain socket path (at most 107 bytes; std::invalid_argument).
    static address unix_path(std::string_view path);
    /// From a sockaddr (copied; std::invalid_argument if len is too big).
    static address from(const ::sockaddr* sa, ::socklen_t len);

    int family() const noexcept;
    /// The port (0 for Unix addresses).
    std::uint16_t port() const noexcept;
    /// "127.0.0.1:80", "[::1]:80", "unix:/path".
    std::string to_string() const;
    const ::sockaddr* data() const noexcept { return reinterpret_cast<const ::sockaddr*>(&raw_); }
    ::sockaddr* data() noexcept { return reinterpret_cast<::sockaddr*>(&raw_); }
    ::socklen_t size() const noexcept { return len_; }
    ::socklen_t& size_ref() noexcept { return len_; }

private:
    ::sockaddr_storage raw_{};
    ::socklen_t len_ = 0;
};

// ---------------------------------------------------------------------------
// Readiness clauses for waituntil

namespace detail {
struct poll_desc;
/// How a queued wait ended; written by the claimer before it wakes.
enum class wake_reason : std::uint8_t { none, ready, timeout, closed, cancelled };
/// The record beside every node queued on a descriptor.
struct io_record : troupe::wait_record {
    wake_reason reason = wake_reason::none;
    /// A waituntil clause (its operation runs once chosen): the poller
    /// claims it only if the descriptor is ready now. A call's own wait
    /// (false) retries its system call, so any event may wake it.
    bool clause = false;
};
/// Registers `fd` with the engine (making it non-blocking); returns its
/// record and the registration's generation. Throws io::error.
std::pair<poll_desc*, std::uint32_t> attach(int fd);

/// Shared implementation of every I/O select clause: readiness of one
/// direction of one descriptor.
class ready_clause {
public:
    ready_clause(int fd, bool write, std::size_t bytes = 0) noexcept : fd_(fd), write_(write) {
        rec_.clause = true;
        set_name(bytes);
    }
    ready_clause(ready_clause&& o) noexcept : fd_(o.fd_), write_(o.write_) {
        rec_.clause = true;
        std::memcpy(name_, o.name_, sizeof name_);
    }
    ready_clause& operator=(ready_clause&&) = delete;
    ~ready_clause() = default;

    bool register_select(select_node& n);
    bool unregister_select(select_node& n) noexcept;
    /// Throws closed_error if the descriptor was closed while waited on.
    bool on_selected(select_node& n);
    const char* select_kind() const noexcept { return write_ ? "io writable" : "io readable"; }
    /// A statement waiting on a descriptor times its wait at once (an I/O
    /// wait is often long while the processor stays busy).
    static constexpr bool select_times_waits = true;
    /// How a dump of the statement names the clause: "fd 7" (a read: "fd 7,
    /// 4096 bytes"). Made at construction: the dump reads it from another
    /// thread while the statement waits.
    const char* select_name() const noexcept { return name_; }
    int fd() const noexcept { return fd_; }

protected:
    void set_name(std::size_t bytes) noexcept {
        char* p = name_;
        char* const end = name_ + sizeof name_ - 1;
        std::memcpy(p, "fd ", 3);
        p = std::to_chars(p + 3, end, fd_).ptr;
        if (bytes != 0 && end - p > 8) {
            std::memcpy(p, ", ", 2);
            p = std::to_chars(p + 2, end - 6, bytes).ptr;
            std::memcpy(p, " bytes", 6);
            p += 6;
        }
        *p = '\0';
    }
    int fd_;
    bool write_;
    char name_[48];
    poll_desc* pd_ = nullptr;
    std::uint32_t gen_ = 0;
    io_record rec_;
};
}  // namespace detail

/// A waituntil clause: ready when `fd` is readable (data, end of file, a
/// pending connection, an error or hang-up). Consumes nothing: whatever
/// made it ready stays in the kernel for the body to read.
///     waituntil(on(io::readable(fd), [&] { n = io::read(fd, buf, sizeof buf); }) | ...);
/// on_selected throws closed_error if `fd` was closed while waited on.
class readable : public detail::ready_clause {
public:
    explicit readable(int fd) noexcept : ready_clause(fd, false) {}
};
/// A waituntil clause: ready when `fd` is writable (or has an error).
class writable : public detail::ready_clause {
public:
    explicit writable(int fd) noexcept : ready_clause(fd, true) {}
};

// ---------------------------------------------------------------------------
// Connections and listeners

class connection;

/// A stream socket (TCP or Unix), owning its descriptor. Movable, not
/// copyable. Concurrent use: one reader and one writer at a time (as with
/// any socket; two concurrent readers get bytes in an unspecified split).
class connection {
public:
    /// A closed connection.
    connection() noexcept = default;
    /// Adopts a connected stream socket (made non-blocking, registered).
    explicit connection(int fd);
    connection(connection&& o) noexcept;
    connection& operator=(connection&& o) noexcept;
    connection(const connection&) = delete;
    connection& operator=(const connection&) = delete;
    /// Closes (as close(), errors ignored).
    ~connection();

    /// Connects to `to` (TCP for IP addresses, with TCP_NODELAY; Unix for
    /// Unix paths). Throws io::error (ECONNREFUSED, ...), timeout_error or
    /// troupe::cancelled (the socket is closed then: no connection made).
    static connection connect(const address& to, deadline d = {}, const stop_token& tok = {});

    /// What `read_some(buf)` returns: the call when converted to a size
    /// (`std::size_t n = c.read_some(buf);`), or a waituntil clause when
    /// given to `on` (`on(c.read_some(buf), [&](std::size_t n) {...})`).
    /// The clause reads only if it wins: a losing clause leaves the data in
    /// the socket. Holding the object (`auto r = c.read_some(buf)`) does not
    /// convert (the conversion is for temporaries only), so a read is never
    /// performed twice by accident.
    class read_op : public detail::ready_clause {
    public:
        read_op(connection& c, std::span<std::byte> buf, deadline d, stop_token tok) noexcept
            : ready_clause(c.fd_, false, buf.size()),
              c_(&c),
              buf_(buf),
              d_(d),
              tok_(std::move(tok)) {}
        read_op(read_op&& o) noexcept
            : ready_clause(std::move(o)),
              c_(o.c_),
              buf_(o.buf_),
              d_(o.d_),
              tok_(std::move(o.tok_)) {}
        /// Performs the read (parks until data, end of file, the deadline,
        /// the stop).
        [[nodiscard]] operator std::size_t() && { return c_->read_some_now(buf_, d_, tok_); }
        /// Reads once the clause is chosen (parks again if another thread
        /// drained the socket first); the body then takes the byte count.
        bool on_selected(select_node& n);
        std::size_t select_outcome() const noexcept { return got_; }
        const char* select_kind() const noexcept { return "io read"; }

    private:
        connection* c_;
        std::span<std::byte> buf_;
        deadline d_;
        stop_token tok_;
        std::size_t got_ = 0;
    };

    /// Reads at most buf.size() bytes (see read_op); 0 means the peer
    /// closed its side (or buf is empty). Throws io::error (ECONNRESET, ...),
    /// timeout_error, closed_error, troupe::cancelled (`tok` stopped before
    /// data came); nothing read then: the bytes stay in the socket.
    [[nodiscard]] read_op read_some(std::span<std::byte> buf, deadline d = {},
                                    const stop_token& tok = {}) noexcept {
        return read_op(*this, buf, d, tok);
    }
    [[nodiscard]] read_op read_some(std::span<char> buf, deadline d = {},
                                    const stop_token& tok = {}) noexcept {
        return read_op(*this, std::as_writable_bytes(buf), d, tok);
    }
    [[nodiscard]] read_op read_some(void* buf, std::size_t n, deadline d = {},
                                    const stop_token& tok = {}) noexcept {
        return read_op(*this, {static_cast<std::byte*>(buf), n}, d, tok);
    }
    /// Reads exactly buf.size() bytes. Returns false if the peer closed
    /// before the first byte; throws io::error(ECONNRESET-like "unexpected
    /// end of stream", code std::errc::connection_aborted) if it closed in
    /// the middle (the bytes read stay in buf), and as read_some otherwise
    /// (a timeout or a stop in the middle: the bytes read so far stay in
    /// buf and are lost to the stream; read_exact is for whole messages).
    bool read_exact(std::span<std::byte> buf, deadline d = {}, const stop_token& tok = {});

    /// Writes at least one byte of `data` (unless empty); returns how many.
    /// Throws as write_all; nothing written then.
    std::size_t write_some(std::span<const std::byte> data, deadline d = {},
                           const stop_token& tok = {});
    /// Writes all of `data`. On an error, a timeout or a stop (io::error,
    /// timeout_error, closed_error, troupe::cancelled) part may have been
    /// written: written() on the connection returns how much (the bytes
    /// written went out whole, in order; io::error's message says it too).
    void write_all(std::span<const std::byte> data, deadline d = {}, const stop_token& tok = {});
    void write_all(std::string_view data, deadline d = {}, const stop_token& tok = {}) {
        write_all(std::as_bytes(std::span<const char>(data.data(), data.size())), d, tok);
    }
    void write_all(const void* data, std::size_t n, deadline d = {}, const stop_token& tok = {}) {
        write_all(std::span<const std::byte>(static_cast<const std::byte*>(data), n), d, tok);
    }
    /// Bytes written by the last write_all before it threw.
    std::size_t written() const noexcept { return written_; }

    /// Half-closes: SHUT_WR (default: the peer reads end of file, this side
    /// can still read), SHUT_RD or SHUT_RDWR. Throws io::error.
    void shutdown(int how = SHUT_WR);
    /// The peer's and the local address. Throws io::error (e.g. ENOTCONN).
    address peer() const;
    address local() const;
    /// TCP_NODELAY on or off (connect and accept turn it on for TCP).
    void set_nodelay(bool on);

    /// Closes the descriptor (see io::close: waiters wake with
    /// closed_error). No-op on a closed connection. Throws io::error.
    void close();
    bool is_open() const noexcept { return fd_ >= 0; }
    int fd() const noexcept { return fd_; }
    /// Gives up ownership: the caller must io::close the descriptor.
    int release() noexcept { return std::exchange(fd_, -1); }

    /// Waituntil clauses on this connection's readiness.
    readable when_readable() const noexcept { return readable(fd_); }
    writable when_writable() const noexcept { return writable(fd_); }

private:
    friend class listener;
    std::size_t read_some_now(std::span<std::byte> buf, deadline d, const stop_token& tok);
    int fd_ = -1;
    std::size_t written_ = 0;
};

/// A listening stream socket (TCP or Unix), owning its descriptor.
class listener {
public:
    listener() noexcept = default;
    listener(listener&& o) noexcept
        : fd_(o.fd_.exchange(-1, std::memory_order_acq_rel)), unix_path_(std::move(o.unix_path_)) {}
    listener& operator=(listener&& o) noexcept;
    listener(const listener&) = delete;
    listener& operator=(const listener&) = delete;
    /// Closes; a Unix listener also removes its socket file.
    ~listener();

    /// Binds and listens (SO_REUSEADDR for TCP; port 0 picks a free one,
    /// see local()). A Unix path that exists as a socket is replaced.
    /// Throws io::error (EADDRINUSE, EACCES, ...).
    static listener listen(const address& at, int backlog = 1024);

    /// What `accept()` returns: the call when converted to a connection
    /// (`io::connection c = ln.accept();`), or a waituntil clause when given
    /// to `on` (`on(ln.accept(), [&](io::connection c) {...})`). A losing
    /// clause accepts nothing: the pending connection stays queued.
    class accept_op : public detail::ready_clause {
    public:
        accept_op(listener& l, deadline d, stop_token tok) noexcept
            : ready_clause(l.fd(), false), l_(&l), d_(d), tok_(std::move(tok)) {}
        accept_op(accept_op&& o) noexcept
            : ready_clause(std::move(o)),
              l_(o.l_),
              d_(o.d_),
              tok_(std::move(o.tok_)),
              got_(std::move(o.got_)) {}
        [[nodiscard]] operator connection() && { return l_->accept_now(d_, tok_); }
        bool on_selected(select_node& n);
        /// The accepted connection (moved out to the body).
        connection select_outcome() const noexcept { return std::move(got_); }
        const char* select_kind() const noexcept { return "io accept"; }

    private:
        listener* l_;
        deadline d_;
        stop_token tok_;
        mutable connection got_;
    };

    /// Accepts one connection (parks until one arrives). Throws io::error,
    /// timeout_error, closed_error (listener closed meanwhile),
    /// troupe::cancelled (`tok` stopped first: nothing accepted, a pending
    /// connection stays in the backlog for the next accept).
    [[nodiscard]] accept_op accept(deadline d = {}, const stop_token& tok = {}) noexcept {
        return accept_op(*this, d, tok);
    }

    address local() const;
    void close();
    bool is_open() const noexcept { return fd() >= 0; }
    int fd() const noexcept { return fd_.load(std::memory_order_acquire); }

private:
    connection accept_now(deadline d, const stop_token& tok);
    // Atomic: close() may run on another thread while serve() is between
    // two accepts and reads it for the next one (the documented way to stop
    // serving); a plain int was a data race there (TSan, io/net-epoll).
    std::atomic<int> fd_{-1};
    std::string unix_path_;
};

/// Accepts connections on `ln` until it is closed (by another thread:
/// ln.close() wakes the accept), running `handler(connection&)` on a new
/// user thread of this_cluster() for each (Go's `go handle(c)`); the
/// connection is closed when the handler returns. Finished handlers are
/// joined as new connections arrive, the rest before serve returns. An
/// io::error escaping a handler ends that connection only (it is the
/// peer's doing); any other exception is reported on stderr naming the
/// peer. Throws io::error if accept fails for another reason than the
/// close (EMFILE: the error names RLIMIT_NOFILE), after joining every
/// handler.
void serve(listener& ln, std::function<void(connection&)> handler);

// ---------------------------------------------------------------------------
// I/O for actors: a behaviour must never wait on a socket (it would hold its
// worker). A reader turns what a connection receives into calls of a
// function on a user thread of its own (send the actor a message there);
// a writer takes bytes from anyone without blocking (post them from a
// behaviour) and writes them in order on a user thread of its own.
// docs/io.md ("Actors and I/O") shows the pattern.

/// Reads `c` on a user thread of `this_cluster()`, calling `on_data(bytes)`
/// for each chunk read (the bytes are valid during the call), then
/// `on_end(nullptr)` at end of file or after stop(), or `on_end(error)` if
/// a read failed (the connection's io::error). Each runs on the reader's
/// thread, never concurrently. An exception escaping `on_data` ends the
/// reader and goes to `on_end`. The connection must outlive the reader.
class reader {
public:
    reader(connection& c, std::function<void(std::span<const std::byte>)> on_data,
           std::function<void(std::exception_ptr)> on_end, std::size_t chunk = 16384);
    /// stop(), then waits for the thread (on_end has run when it returns).
    ~reader();
    reader(const reader&) = delete;
    reader& operator=(const reader&) = delete;
    /// Ends the reading: shuts the connection's read side, so the pending
    /// read returns end of file. Never blocks. nothrow.
    void stop() noexcept;

private:
    connection* c_;
    troupe::thread t_;
};

/// Writes what is posted to `c`, in order, on a user thread of
/// `this_cluster()`. post() never blocks (a behaviour may call it); the
/// queue is unbounded, so a slow peer costs memory: queued() says how much
/// waits. After a failed write, posts are dropped and `on_error` (if given)
/// runs once on the writer's thread.
class writer {
public:
    explicit writer(connection& c, std::function<void(std::exception_ptr)> on_error = {});
    /// close(): writes what was posted, then waits for the thread.
    ~writer();
    writer(const writer&) = delete;
    writer& operator=(const writer&) = delete;
    /// Queues `bytes`. Throws std::bad_alloc (nothing queued). Never blocks.
    void post(std::string bytes);
    /// Bytes posted and not yet written.
    std::size_t queued() const noexcept { return queued_.load(std::memory_order_relaxed); }
    /// Ends the writer once everything posted so far is written (or a write
    /// failed); later posts are dropped. Never blocks. nothrow.
    void close() noexcept;

private:
    void run();
    connection* c_;
    std::function<void(std::exception_ptr)> on_error_;
    troupe::spinlock lock_{"io writer"};
    std::deque<std::string> q_;  // under lock_
    bool closed_ = false;        // under lock_: posts are dropped
    bool ended_ = false;         // under lock_: close() ran (its marker released)
    std::atomic<std::size_t> queued_{0};
    troupe::semaphore items_;
    troupe::thread t_;
};

// ---------------------------------------------------------------------------
// Files

/// A file, owning its descriptor. Reads and writes of a regular file go
/// through the io_uring engine (submitted; the caller parks) or through
/// io::blocking (epoll engine): never a processor blocked on the disk. A
/// FIFO or a character device opened as a file is read and written at its
/// stream position (as io::read / io::write: it waits by readiness).
class file {
public:
    file() noexcept = default;
    /// open(2) with `flags` (O_RDONLY, O_WRONLY | O_CREAT | O_TRUNC, ...)
    /// and `mode` for created files, through io::blocking. Throws io::error
    /// naming the path. No deadline: open(2) cannot be abandoned once it
    /// runs. A FIFO's open waits for its other end as open(2) does: open
    /// one with O_RDWR (or O_RDONLY | O_NONBLOCK) to not wait.
    static file open(const std::string& path, int flags, ::mode_t mode = 0644);
    file(file&& o) noexcept
        : fd_(std::exchange(o.fd_, -1)),
          pos_(o.pos_),
          written_(o.written_),
          append_(o.append_),
          seekable_(o.seekable_) {}
    file& operator=(file&& o) noexcept;
    file(const file&) = delete;
    file& operator=(const file&) = delete;
    ~file();

    // Every read and write takes a deadline and a stop token, with the
    // meaning io::pread gives them on a regular file (on a pipe or device
    // opened as a file: the socket calls'). timeout_error / cancelled: this
    // call transferred nothing (write_all: see written()).

    /// At the file position (advanced by what was read); 0 at end of file.
    std::size_t read_some(std::span<std::byte> buf, deadline d = {}, const stop_token& tok = {});
    /// Writes all of `data` at the file position (O_APPEND: at the end).
    /// On an exception the bytes written before it stay written and the
    /// position is past them: written() says how many.
    void write_all(std::span<const std::byte> data, deadline d = {}, const stop_token& tok = {});
    void write_all(std::string_view data, deadline d = {}, const stop_token& tok = {}) {
        write_all(std::as_bytes(std::span<const char>(data.data(), data.size())), d, tok);
    }
    /// Bytes written by the last write_all (all of them if it returned).
    std::size_t written() const noexcept { return written_; }
    /// At `offset`; the file position unchanged.
    std::size_t read_at(std::span<std::byte> buf, ::off_t offset, deadline d = {},
                        const stop_token& tok = {});
    std::size_t write_at(std::span<const std::byte> data, ::off_t offset, deadline d = {},
                         const stop_token& tok = {});
    /// Reads the whole rest of the file (`d` bounds the whole read). On an
    /// exception what was read is lost and the position is past it.
    std::string read_all(deadline d = {}, const stop_token& tok = {});
    /// fsync(2), through io::blocking. No deadline: the kernel cannot
    /// abandon a flush it started, and the caller's thread is parked
    /// meanwhile (its processor runs others).
    void sync();
    /// The size (fstat). Throws io::error.
    std::uint64_t size() const;
    void close();
    bool is_open() const noexcept { return fd_ >= 0; }
    int fd() const noexcept { return fd_; }

private:
    int fd_ = -1;
    ::off_t pos_ = 0;
    std::size_t written_ = 0;
    bool append_ = false;
    bool seekable_ = true;  // false: a FIFO or a device (read/write, no offset)
};

}  // namespace troupe::io
