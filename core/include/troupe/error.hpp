#pragma once
/// Errors and misuse reports.
///
///     troupe::set_misuse_handler([](std::string_view what) { log(what); });
///
/// Misuse that only checked builds detect (`-Dchecked=true`: unlocking a lock
/// you do not hold, re-locking a non-recursive lock, destroying a lock with
/// waiters, a double unpark) is reported through one handler. The default
/// handler prints the message to stderr and aborts; a test may install one
/// that records the message, after which the offending operation returns
/// without effect.
#include <stdexcept>
#include <string>
#include <string_view>

#include "troupe/config.hpp"

namespace troupe {

/// Called with a message naming the object and what went wrong.
using misuse_handler = void (*)(std::string_view message);

/// Installs `h` (nullptr restores the default) and returns the previous one.
misuse_handler set_misuse_handler(misuse_handler h) noexcept;

/// Whether this build detects misuse (`-Dchecked=true`).
#if defined(TROUPE_CHECKED)
inline constexpr bool checked_build = true;
#else
inline constexpr bool checked_build = false;
#endif

/// Thrown by `future` misuse that every build detects (a second fulfil,
/// a reset with blocked waiters).
class future_error : public std::logic_error {
public:
    using std::logic_error::logic_error;
};

namespace detail {
/// Formats "<kind> '<name>' (0x...)" or "<kind> 0x..." for messages.
std::string describe(const char* kind, const char* name, const void* address);
/// Sends `message` to the installed misuse handler.
void report_misuse(const std::string& message);
}  // namespace detail

}  // namespace troupe
