#pragma once
/// The error a request fails with when no answer can ever come.
///
///     try {
///         long t = troupe::ask(c, q).get();
///     } catch (const troupe::request_error& e) {
///         if (e.why() == troupe::request_error::reason::unanswered) ...;  // a receive forgot to
///         reply std::puts(e.what());   // names the actor type and the request type
///     }
///
/// Thrown by the requester's `get()` (it is delivered through the request's
/// future) in every build; nothing else throws it.
#include <cstdint>
#include <stdexcept>
#include <string>

namespace troupe {

class request_error : public std::logic_error {
public:
    enum class reason : std::uint8_t {
        /// The receive returned without replying, forwarding the request
        /// (`other | q`) or calling `q.defer()`: nobody else could answer.
        unanswered,
        /// The request was sent to (or still queued for) an actor that had
        /// finished: it was dropped.
        receiver_finished,
        /// The ask's deadline passed before the reply (troupe::ask with a
        /// deadline); a reply that comes later is dropped and counted.
        timeout,
    };
    request_error(reason why, const std::string& what) : std::logic_error(what), why_(why) {}
    /// Why the request failed.
    reason why() const noexcept { return why_; }

private:
    reason why_;
};

}  // namespace troupe
