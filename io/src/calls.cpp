// The POSIX-shaped calls: try the system call, wait for readiness on
// EAGAIN, try again (docs/io.md "A call").
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>

#include "engine.hpp"
#include "troupe/thread.hpp"

namespace troupe::io {

namespace detail {
namespace {

// Throws what ended a wait, unless it is readiness.
void end_wait(wake_reason why, const char* op, int fd) {
    switch (why) {
    case wake_reason::timeout: throw timeout_error(op, fd);
    case wake_reason::closed: throw closed_error(op, fd);
    case wake_reason::cancelled: throw_cancelled(op, fd);
    default: break;
    }
}

// A deadline passed or a stop requested before an operation that cannot
// be abandoned once started (a helper thread's system call).
void check_before(const deadline& d, const stop_token& tok, const char* op, int fd) {
    if (tok.stop_requested()) throw_cancelled(op, fd);
    if (d.is_set() && d.at() <= deadline::clock::now()) throw timeout_error(op, fd);
}

// Runs `sys` (a non-blocking system call returning ssize_t) until it
// succeeds, waiting for direction `write` on EAGAIN.
template <class Sys>
std::size_t io_call(int fd, bool write, const char* op, std::size_t bytes, const deadline& d,
                    const stop_token& tok, Sys&& sys) {
    // A stop requested before the call: nothing is tried (the call may not
    // have to wait at all, but a cancelled call must not transfer).
    if (tok.stop_requested()) throw_cancelled(op, fd);
    auto [pd, gen] = attach(fd);
    op_ref ref(*pd, gen, op);
    std::atomic<std::uint32_t>& seq = write ? pd->wseq : pd->rseq;
    const wait_info info{fd, op, bytes};
    for (;;) {
        // acquire: paired with the poller's bump under the descriptor lock;
        // read before the call, so an edge after the call is seen by
        // wait_ready (it compares under that lock).
        const std::uint32_t seen = seq.load(std::memory_order_acquire);
        const ::ssize_t r = sys();
        if (r >= 0) return std::size_t(r);
        const int e = errno;
        if (e == EINTR) continue;
        if (e != EAGAIN && e != EWOULDBLOCK) throw_errno(e, op, fd);
        if (pd->always_ready) {
            // Refused a wait (epoll: EPERM) yet not ready: poll by yielding.
            if (d.is_set() && d.at() <= deadline::clock::now()) throw timeout_error(op, fd);
            if (tok.stop_requested()) throw_cancelled(op, fd);
            troupe::this_thread::yield();
            continue;
        }
        end_wait(wait_ready(*pd, gen, write, seen, d, tok, info), op, fd);
    }
}

bool is_regular(poll_desc& pd) noexcept {
    if (!pd.always_ready) return false;
    struct stat st {};
    return ::fstat(pd.fd, &st) == 0 && S_ISREG(st.st_mode);
}

// A regular file: submitted (io_uring) or run on a helper thread (epoll),
// never a processor blocked on the disk. offset -1: the file position.
std::size_t file_call(int fd, bool write, void* buf, std::size_t n, ::off_t offset, const char* op,
                      const deadline& d, const stop_token& tok) {
    check_before(d, tok, op, fd);
    engine& e = the_engine();
    long r;
    if (e.async_files() && n <= 0x7ffff000u) {
        wake_reason ended = wake_reason::none;
        r = e.file_op(write, fd, buf, n, offset, d, tok, ended);
        // Cancelled by the deadline or the stop before the kernel did it:
        // nothing transferred. Done anyway: the result stands.
        if (ended != wake_reason::none && (r == -ECANCELED || r == -EINTR)) end_wait(ended, op, fd);
    } else {
        r = blocking([&]() -> long {
            ::ssize_t k;
            do {
                if (offset < 0) k = write ? ::write(fd, buf, n) : ::read(fd, buf, n);
                else k = write ? ::pwrite(fd, buf, n, offset) : ::pread(fd, buf, n, offset);
            } while (k < 0 && errno == EINTR);
            return k < 0 ? -errno : long(k);
        });
    }
    if (r < 0) throw_errno(int(-r), op, fd);
    return std::size_t(r);
}

std::size_t check_zero(int fd, const char* op, const stop_token& tok) {
    if (tok.stop_requested()) throw_cancelled(op, fd);
    auto [pd, gen] = attach(fd);
    op_ref ref(*pd, gen, op);  // closed_error after io::close
    return 0;
}

}  // namespace
}  // namespace detail

using namespace detail;

// A zero-length transfer returns 0 at once (after checking the descriptor):
// a socket would answer EAGAIN to it and the call would wait for nothing.
std::size_t read(int fd, void* buf, std::size_t n, deadline d, const stop_token& tok) {
    if (n == 0) return check_zero(fd, "read", tok);
    auto [pd, gen] = attach(fd);
    if (is_regular(*pd)) return file_call(fd, false, buf, n, -1, "read", d, tok);
    return io_call(fd, false, "read", n, d, tok, [&] { return ::read(fd, buf, n); });
}

std::size_t write(int fd, const void* buf, std::size_t n, deadline d, const stop_token& tok) {
    if (n == 0) return check_zero(fd, "write", tok);
    auto [pd, gen] = attach(fd);
    if (is_regular(*pd)) return file_call(fd, true, const_cast<void*>(buf), n, -1, "write", d, tok);
    return io_call(fd, true, "write", n, d, tok, [&] { return ::write(fd, buf, n); });
}

std::size_t readv(int fd, const ::iovec* iov, int count, deadline d, const stop_token& tok) {
    std::size_t bytes = 0;
    for (int i = 0; i < count; ++i) bytes += iov[i].iov_len;
    if (bytes == 0) return check_zero(fd, "readv", tok);
    auto [pd, gen] = attach(fd);
    if (is_regular(*pd)) {
        check_before(d, tok, "readv", fd);
        return blocking([&] {
            ::ssize_t k;
            do k = ::readv(fd, iov, count);
            while (k < 0 && errno == EINTR);
            if (k < 0) throw_errno(errno, "readv", fd);
            return std::size_t(k);
        });
    }
    return io_call(fd, false, "readv", bytes, d, tok, [&] { return ::readv(fd, iov, count); });
}

std::size_t writev(int fd, const ::iovec* iov, int count, deadline d, const stop_token& tok) {
    std::size_t bytes = 0;
    for (int i = 0; i < count; ++i) bytes += iov[i].iov_len;
    if (bytes == 0) return check_zero(fd, "writev", tok);
    auto [pd, gen] = attach(fd);
    if (is_regular(*pd)) {
        check_before(d, tok, "writev", fd);
        return blocking([&] {
            ::ssize_t k;
            do k = ::writev(fd, iov, count);
            while (k < 0 && errno == EINTR);
            if (k < 0) throw_errno(errno, "writev", fd);
            return std::size_t(k);
        });
    }
    return io_call(fd, true, "writev", bytes, d, tok, [&] { return ::writev(fd, iov, count); });
}

std::size_t pread(int fd, void* buf, std::size_t n, ::off_t offset, deadline d,
                  const stop_token& tok) {
    if (n == 0) return check_zero(fd, "pread", tok);
    if (offset < 0) throw error(EINVAL, "pread", fd);
    auto [pd, gen] = attach(fd);
    if (is_regular(*pd)) return file_call(fd, false, buf, n, offset, "pread", d, tok);
    return io_call(fd, false, "pread", n, d, tok, [&] { return ::pread(fd, buf, n, offset); });
}

std::size_t pwrite(int fd, const void* buf, std::size_t n, ::off_t offset, deadline d,
                   const stop_token& tok) {
    if (n == 0) return check_zero(fd, "pwrite", tok);
    if (offset < 0) throw error(EINVAL, "pwrite", fd);
    auto [pd, gen] = attach(fd);
    if (is_regular(*pd))
        return file_call(fd, true, const_cast<void*>(buf), n, offset, "pwrite", d, tok);
    return io_call(fd, true, "pwrite", n, d, tok, [&] { return ::pwrite(fd, buf, n, offset); });
}

std::size_t recv(int fd, void* buf, std::size_t n, int flags, deadline d, const stop_token& tok) {
    if (n == 0) return check_zero(fd, "recv", tok);
    return io_call(fd, false, "recv", n, d, tok, [&] { return ::recv(fd, buf, n, flags); });
}

std::size_t send(int fd, const void* buf, std::size_t n, int flags, deadline d,
                 const stop_token& tok) {
    if (n == 0) return check_zero(fd, "send", tok);
    return io_call(fd, true, "send", n, d, tok,
                   [&] { return ::send(fd, buf, n, flags | MSG_NOSIGNAL); });
}

int accept(int fd, ::sockaddr* addr, ::socklen_t* len, deadline d, const stop_token& tok) {
    const int c = int(io_call(fd, false, "accept", 0, d, tok, [&] {
        return ::ssize_t(::accept4(fd, addr, len, SOCK_NONBLOCK | SOCK_CLOEXEC));
    }));
    try {
        attach(c);
    } catch (...) {
        ::close(c);
        throw;
    }
    return c;
}

void connect(int fd, const ::sockaddr* addr, ::socklen_t len, deadline d, const stop_token& tok) {
    if (tok.stop_requested()) throw_cancelled("connect", fd);
    auto [pd, gen] = attach(fd);
    op_ref ref(*pd, gen, "connect");
    for (;;) {
        const std::uint32_t seen = pd->wseq.load(std::memory_order_acquire);
        if (::connect(fd, addr, len) == 0) return;
        int e = errno;
        if (e == EINTR) continue;  // the connection goes on; wait for it as for EINPROGRESS
        if (e != EINPROGRESS && e != EAGAIN && e != EALREADY) throw_errno(e, "connect", fd);
        for (std::uint32_t s = seen;;) {
            const wait_info info{fd, "connect", 0};
            end_wait(wait_ready(*pd, gen, true, s, d, tok, info), "connect", fd);
            s = pd->wseq.load(std::memory_order_acquire);
            int err = 0;
            ::socklen_t l = sizeof err;
            if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &l) != 0)
                throw_errno(errno, "connect", fd);
            if (err != 0) throw_errno(err, "connect", fd);
            // Writable with no error: connected (a peer address proves it).
            ::sockaddr_storage ss{};
            ::socklen_t sl = sizeof ss;
            if (::getpeername(fd, reinterpret_cast<::sockaddr*>(&ss), &sl) == 0) return;
            if (errno != ENOTCONN) throw_errno(errno, "connect", fd);
        }
    }
}

void close(int fd) {
    if (poll_desc* pd = find_desc(fd)) {
        node_queue wake;
        pd->lock.lock();
        const std::uint64_t s = pd->state.load(std::memory_order_relaxed);
        if (s & poll_desc::open_bit) {
            if (s & poll_desc::closing_bit) {
                pd->lock.unlock();
                throw closed_error("close", fd);  // a second close of the same registration
            }
            // Closing, plus our own reference: the number stays open until
            // every call inside has left (the last reference closes it).
            pd->state.fetch_add(poll_desc::closing_bit + 1, std::memory_order_acq_rel);
            for (node_queue* q : {&pd->readers, &pd->writers}) {
                while (select_node* n = q->pop_front()) {
                    if (!n->try_claim()) continue;
                    n->record<io_record>().reason = wake_reason::closed;
                    wake.defer_wake(*n);
                }
            }
            pd->lock.unlock();
            wake.unpark_all();
            const std::uint64_t r = pd->state.fetch_sub(1, std::memory_order_acq_rel) - 1;
            if ((r & poll_desc::ref_mask) == 0) finish_close(*pd);
            return;
        }
        pd->lock.unlock();
    }
    if (::close(fd) != 0 && errno != EINTR) throw_errno(errno, "close", fd);
}

void wait_readable(int fd, deadline d, const stop_token& tok) {
    if (tok.stop_requested()) throw_cancelled("wait_readable", fd);
    auto [pd, gen] = attach(fd);
    if (pd->always_ready) return;
    op_ref ref(*pd, gen, "wait_readable");
    for (;;) {
        const std::uint32_t seen = pd->rseq.load(std::memory_order_acquire);
        ::pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 0) > 0) return;
        const wait_info info{fd, "wait_readable", 0};
        end_wait(wait_ready(*pd, gen, false, seen, d, tok, info), "wait_readable", fd);
    }
}

void wait_writable(int fd, deadline d, const stop_token& tok) {
    if (tok.stop_requested()) throw_cancelled("wait_writable", fd);
    auto [pd, gen] = attach(fd);
    if (pd->always_ready) return;
    op_ref ref(*pd, gen, "wait_writable");
    for (;;) {
        const std::uint32_t seen = pd->wseq.load(std::memory_order_acquire);
        ::pollfd p{fd, POLLOUT, 0};
        if (::poll(&p, 1, 0) > 0) return;
        const wait_info info{fd, "wait_writable", 0};
        end_wait(wait_ready(*pd, gen, true, seen, d, tok, info), "wait_writable", fd);
    }
}

}  // namespace troupe::io
