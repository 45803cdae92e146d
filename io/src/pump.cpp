// io::reader and io::writer: I/O on user threads of their own, for actors.
#include <sys/socket.h>

#include "engine.hpp"

namespace troupe::io {

reader::reader(connection& c, std::function<void(std::span<const std::byte>)> on_data,
               std::function<void(std::exception_ptr)> on_end, std::size_t chunk)
    : c_(&c) {
    if (chunk == 0) chunk = 1;
    t_ = troupe::thread([this, on_data = std::move(on_data), on_end = std::move(on_end), chunk] {
        std::exception_ptr failure;
        try {
            std::string buf(chunk, '\0');
            for (;;) {
                const std::size_t n = c_->read_some(buf.data(), buf.size());
                if (n == 0) break;
                on_data(std::as_bytes(std::span<const char>(buf.data(), n)));
            }
        } catch (...) {
            failure = std::current_exception();
        }
        if (on_end) on_end(failure);
    });
}

reader::~reader() {
    stop();
    t_.join();
}

void reader::stop() noexcept {
    // Linux wakes a pending read on SHUT_RD with end of file.
    if (c_->is_open()) ::shutdown(c_->fd(), SHUT_RD);
}

writer::writer(connection& c, std::function<void(std::exception_ptr)> on_error)
    : c_(&c), on_error_(std::move(on_error)) {
    t_ = troupe::thread([this] { run(); });
}

writer::~writer() {
    close();
    t_.join();
}

void writer::post(std::string bytes) {
    const std::size_t n = bytes.size();
    lock_.lock();
    if (closed_) {
        lock_.unlock();
        return;
    }
    try {
        q_.push_back(std::move(bytes));
    } catch (...) {
        lock_.unlock();
        throw;
    }
    queued_.fetch_add(n, std::memory_order_relaxed);
    lock_.unlock();
    items_.release();
}

void writer::close() noexcept {
    lock_.lock();
    const bool was = ended_;
    ended_ = closed_ = true;
    lock_.unlock();
    if (!was) items_.release();  // the end marker: an empty queue after close
}

void writer::run() {
    bool failed = false;
    for (;;) {
        items_.acquire();
        lock_.lock();
        if (q_.empty()) {  // only close() releases without queueing
            lock_.unlock();
            return;
        }
        std::string s = std::move(q_.front());
        q_.pop_front();
        lock_.unlock();
        if (!failed) {
            try {
                c_->write_all(s);
            } catch (...) {
                failed = true;
                lock_.lock();
                closed_ = true;  // later posts are dropped
                lock_.unlock();
                if (on_error_) on_error_(std::current_exception());
            }
        }
        queued_.fetch_sub(s.size(), std::memory_order_relaxed);
    }
}

}  // namespace troupe::io
