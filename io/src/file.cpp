// io::file: regular files through the engine's file operations (io_uring)
// or helper threads (io::blocking).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "engine.hpp"

namespace troupe::io {

using detail::throw_errno;

file file::open(const std::string& path, int flags, ::mode_t mode) {
    const int fd = blocking([&] {
        int r;
        do r = ::open(path.c_str(), flags | O_CLOEXEC, mode);
        while (r < 0 && errno == EINTR);
        if (r < 0) {
            const int e = errno;
            if (e == EMFILE || e == ENFILE) throw_errno(e, "open", -1);
            throw error(std::error_code(e, std::generic_category()), "open", -1,
                        "troupe::io: open '" + path + "': " + std::strerror(e));
        }
        return r;
    });
    file f;
    f.fd_ = fd;
    f.append_ = (flags & O_APPEND) != 0;
    // A FIFO or a device has no offset (pread answers ESPIPE): read and
    // write it at its stream position.
    f.seekable_ = ::lseek(fd, 0, SEEK_CUR) >= 0;
    try {
        detail::attach(fd);
    } catch (...) {
        ::close(fd);
        f.fd_ = -1;
        throw;
    }
    return f;
}

file& file::operator=(file&& o) noexcept {
    if (this != &o) {
        try {
            close();
        } catch (...) {}
        fd_ = std::exchange(o.fd_, -1);
        pos_ = o.pos_;
        written_ = o.written_;
        append_ = o.append_;
        seekable_ = o.seekable_;
    }
    return *this;
}

file::~file() {
    try {
        close();
    } catch (...) {}
}

std::size_t file::read_some(std::span<std::byte> buf, deadline d, const stop_token& tok) {
    if (fd_ < 0) throw closed_error("read_some", fd_);
    if (!seekable_) return io::read(fd_, buf.data(), buf.size(), d, tok);
    const std::size_t n = io::pread(fd_, buf.data(), buf.size(), pos_, d, tok);
    pos_ += ::off_t(n);
    return n;
}

void file::write_all(std::span<const std::byte> data, deadline d, const stop_token& tok) {
    if (fd_ < 0) throw closed_error("write_all", fd_);
    written_ = 0;
    while (written_ < data.size()) {
        const std::byte* p = data.data() + written_;
        const std::size_t left = data.size() - written_;
        std::size_t n;
        if (append_ || !seekable_) {
            n = io::write(fd_, p, left, d, tok);
        } else {
            n = io::pwrite(fd_, p, left, pos_, d, tok);
            pos_ += ::off_t(n);
        }
        written_ += n;
    }
}

std::size_t file::read_at(std::span<std::byte> buf, ::off_t offset, deadline d,
                          const stop_token& tok) {
    if (fd_ < 0) throw closed_error("read_at", fd_);
    return io::pread(fd_, buf.data(), buf.size(), offset, d, tok);
}

std::size_t file::write_at(std::span<const std::byte> data, ::off_t offset, deadline d,
                           const stop_token& tok) {
    if (fd_ < 0) throw closed_error("write_at", fd_);
    return io::pwrite(fd_, data.data(), data.size(), offset, d, tok);
}

std::string file::read_all(deadline d, const stop_token& tok) {
    std::string out;
    char buf[16384];
    for (;;) {
        const std::size_t n = read_some(std::as_writable_bytes(std::span<char>(buf)), d, tok);
        if (n == 0) return out;
        out.append(buf, n);
    }
}

void file::sync() {
    if (fd_ < 0) throw closed_error("sync", fd_);
    const int fd = fd_;
    const int r = blocking([fd] { return ::fsync(fd) == 0 ? 0 : errno; });
    if (r != 0) throw_errno(r, "sync", fd);
}

std::uint64_t file::size() const {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) throw_errno(errno, "size", fd_);
    return std::uint64_t(st.st_size);
}

void file::close() {
    if (fd_ < 0) return;
    io::close(std::exchange(fd_, -1));
}

}  // namespace troupe::io
