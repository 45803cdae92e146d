#pragma once
/// Errors and misuse reports.
///
///     troupe::set_misuse_action(troupe::misuse_kind::lost_message, troupe::misuse_action::abort);
///     troupe::set_misuse_handler([](std::string_view what) { log(what); });
///
/// Misuse is reported through one handler: in every build where the check
/// is one compare on the path (unlocking a blocking_lock, owner_lock or
/// barging_lock you do not hold, re-locking a non-recursive one), and in
/// checked builds (`-Dchecked=true`) for the rest (destroying a lock with
/// waiters, a double unpark, a message never received, ...). Each report has a kind, named after
/// what the library does once the report returns:
///
/// | kind               | examples                                              | default  |
/// |--------------------|-------------------------------------------------------|----------|
/// | `error`            | a lock destroyed with waiters, unlocked by a non-owner | abort    |
/// | `released_waiters` | a channel destroyed with blocked threads (they are     | continue |
/// |                    | released with an error)                               |          |
/// | `lost_message`     | a message destroyed unsent, sent to a finished actor  | continue |
/// |                    | (dropped), still queued at shutdown                   |          |
/// | `repaired`         | a configuration or call that was corrected or ignored | continue |
///
/// The default handler prints one line to stderr ("troupe: misuse: ...;
/// continuing" or "...; aborting") and then applies the kind's action,
/// settable per kind with `set_misuse_action`. A custom handler (e.g. a test
/// that records reports) replaces both: when it returns, the program
/// continues and the offending operation has the effect the report states
/// (for `error` reports: none, it returns without effect). Release builds
/// pay nothing for the checked-only checks.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "troupe/config.hpp"

namespace troupe {

/// Called with a message naming the object and what went wrong.
using misuse_handler = void (*)(std::string_view message);

/// Installs `h` (nullptr restores the default) and returns the previous one.
/// Nothrow.
misuse_handler set_misuse_handler(misuse_handler h) noexcept;

/// What a misuse report is about, by what happens after it (see above).
enum class misuse_kind : std::uint8_t {
    error,             ///< continuing is undefined or the operation was refused: abort by default
    released_waiters,  ///< blocked threads were released with an error: continue by default
    lost_message,  ///< a message was never delivered (dropped or destroyed): continue by default
    repaired,      ///< a configuration or call was corrected or ignored: continue by default
};

/// What the default handler does after printing a report.
enum class misuse_action : std::uint8_t {
    abort,      ///< std::abort()
    continue_,  ///< return; the program goes on
};

/// Sets the default handler's action for reports of `kind`; returns the
/// previous one. Nothrow; may be called from any thread at any time.
misuse_action set_misuse_action(misuse_kind kind, misuse_action action) noexcept;
/// The default handler's action for reports of `kind`.
misuse_action get_misuse_action(misuse_kind kind) noexcept;
/// A printable name for `kind` ("error", "lost_message", ...).
const char* to_string(misuse_kind kind) noexcept;

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
/// Sends `message` to the installed misuse handler, as a report of `kind`.
void report_misuse(const std::string& message, misuse_kind kind = misuse_kind::error);
}  // namespace detail

}  // namespace troupe
