#pragma once
/// A lockable output stream: lines written while holding it never
/// interleave with other threads' output.
///
///     { std::lock_guard g{troupe::sout}; troupe::sout << "x = " << x << '\n'; }
///     troupe::sout.println("one whole line: ", x);   // locks for you
///
/// With the mutex statement: `TROUPE_MUTEX(troupe::sout) { ... }`. The lock
/// is recursive (an `owner_lock`), so helpers that lock it themselves may be
/// called inside. Writes go to std::cout unless redirected with `attach`.
#include <ostream>
#include <sstream>
#include <utility>

#include "troupe/blocking_lock.hpp"

namespace troupe {

class locked_ostream {
public:
    explicit locked_ostream(std::ostream& os) noexcept : os_(&os) {}
    locked_ostream(const locked_ostream&) = delete;

    /// Parks until the caller holds the stream (recursive).
    void lock() { lock_.lock(); }
    bool try_lock() { return lock_.try_lock(); }
    void unlock() { lock_.unlock(); }

    /// Writes `v`; callers that need whole lines hold the lock around them.
    template <class T>
    locked_ostream& operator<<(const T& v) {
        *os_ << v;
        return *this;
    }
    locked_ostream& operator<<(std::ostream& (*manip)(std::ostream&)) {
        *os_ << manip;
        return *this;
    }

    /// Formats the arguments and writes them plus '\n' as one locked write.
    template <class... Ts>
    void println(const Ts&... vs) {
        std::ostringstream line;
        (line << ... << vs);
        line << '\n';
        lock_.lock();
        *os_ << line.str();
        os_->flush();
        lock_.unlock();
    }

    /// Redirects output (e.g. to a std::ostringstream in tests); returns the
    /// previous stream. Take the lock around it if others may be writing.
    std::ostream& attach(std::ostream& os) noexcept { return *std::exchange(os_, &os); }
    std::ostream& stream() noexcept { return *os_; }

private:
    std::ostream* os_;
    owner_lock lock_{"sout"};
};

/// The process's standard output as a locked_ostream.
extern locked_ostream sout;

}  // namespace troupe
