#pragma once
/// What the executor does with an actor or a message after a behaviour.
///
///     troupe::allocation receive(work_msg& m) {
///         m.set_allocation(troupe::Delete);   // free the message after this receive
///         return troupe::Nodelete;            // keep the actor alive
///     }
#include <cstdint>

namespace troupe {

/// For an actor, the value its `receive` returns; for a message, the value
/// set on it (`message::set_allocation`, default `Nodelete`), examined after
/// each receive of it.
enum allocation : std::uint8_t {
    Nodelete,  ///< nothing happens: the actor keeps receiving / the message may be reused
    Delete,    ///< run the (virtual) destructor and free the object (it came from `new`)
    Destroy,   ///< run the destructor only (you own and reuse the storage)
    Finished,  ///< only mark it finished (stack or global objects, manual management)
};

/// A printable name for `a`.
constexpr const char* to_string(allocation a) noexcept {
    switch (a) {
    case Nodelete: return "Nodelete";
    case Delete: return "Delete";
    case Destroy: return "Destroy";
    case Finished: return "Finished";
    }
    return "?";
}

}  // namespace troupe
